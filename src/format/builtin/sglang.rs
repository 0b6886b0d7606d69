//! The `sglang` format.

use super::{eq, paths, present, rule};
use crate::format::units::Unit;
use crate::format::{Field, FormatSpec};
use crate::metrics::Origin;

/// SGLang `--export-metrics-to-file-dir` request records (FORMATS.md 8c).
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "sglang".into(),
        about: "SGLang request metrics exporter record (--export-metrics-to-file-dir)".into(),
        markers: vec![present("e2e_latency"), present("request_parameters")],
        cancelled_when: vec![eq("finish_reason.type", "\"abort\"")],
        arrival_origin: Origin::Arrival,
        ttft_doc: "not logged: the exporter has no first-token time, and decode_throughput's formula differs between versions (n or n - 1 tokens over the decode time), so TTFT and TPOT are null rather than guessed".into(),
        cache_doc: "cached_tokens (prefix-cache hit tokens) of prompt_tokens".into(),
        fields: vec![
            rule(Field::Arrival, Unit::EpochS, &["request_received_ts"]),
            rule(Field::End, Unit::EpochS, &["request_finished_ts"]),
            rule(Field::E2e, Unit::S, &["e2e_latency"]),
            rule(Field::Queue, Unit::S, &["queue_time"]),
            rule(Field::InputTokens, Unit::Count, &["prompt_tokens"]),
            rule(Field::CachedTokens, Unit::Count, &["cached_tokens"]),
            rule(Field::OutputTokens, Unit::Count, &["completion_tokens"]),
        ],
        id_paths: paths(&["id"]),
        // Why an aborted request that never got a token (an error, per the rule) ended:
        // `Abort in waiting queue`, a client's disconnect.
        reason_paths: paths(&["finish_reason.message"]),
        ..FormatSpec::default()
    }
}
