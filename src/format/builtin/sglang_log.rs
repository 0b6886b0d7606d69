//! The `sglang-log` format.

use crate::format::units::Unit;
use crate::format::{Cond, Field, FormatSpec, JoinSpec, p, rule};
use crate::metrics::Origin;

/// SGLang's request log (`--log-requests --log-requests-format json`): a `request.received`
/// and a `request.finished` event per request, joined by `rid` (FORMATS.md section 8c; the
/// envelope's time key is inferred: `timestamp`, or `time`, in any epoch or RFC 3339 form).
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "sglang-log".into(),
        about: "SGLang --log-requests-format json: request.received and request.finished events joined by rid".into(),
        markers: vec![Cond::Present(p("rid")), Cond::Present(p("event"))],
        join: Some(JoinSpec {
            key: vec![vec![p("rid")]],
            complete_when: vec![Cond::Equals(p("event"), "\"request.finished\"".into())],
            part_fields: vec![
                rule(Field::Arrival, Unit::EpochAuto, &["timestamp", "time"]),
                rule(Field::LoggedAt, Unit::EpochAuto, &["timestamp", "time"]),
            ],
            parts_required: false,
            standalone_when: vec![],
            output_when: vec![],
        }),
        arrival_origin: Origin::Arrival,
        ttft_doc: "none: SGLang's request log has no first-token time (E2E from e2e_latency, or received -> finished)".into(),
        cache_doc: "out.meta_info.cached_tokens".into(),
        fields: vec![
            rule(Field::Arrival, Unit::EpochS, &["out.meta_info.request_received_ts"]),
            rule(Field::End, Unit::EpochS, &["out.meta_info.request_finished_ts"]),
            rule(Field::End, Unit::EpochAuto, &["timestamp", "time"]),
            rule(Field::E2e, Unit::S, &["out.meta_info.e2e_latency"]),
            rule(Field::InputTokens, Unit::Count, &["out.meta_info.prompt_tokens"]),
            rule(Field::CachedTokens, Unit::Count, &["out.meta_info.cached_tokens"]),
            rule(Field::OutputTokens, Unit::Count, &["out.meta_info.completion_tokens"]),
        ],
        cancelled_when: vec![Cond::Equals(p("out.meta_info.finish_reason.type"), "\"abort\"".into())],
        id_paths: vec![p("rid")],
        reason_paths: vec![p("out.meta_info.finish_reason.message")],
        ..FormatSpec::default()
    }
}
