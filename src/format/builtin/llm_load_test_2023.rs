//! The `llm-load-test-2023` format.

use crate::format::units::Unit;
use crate::format::{Cond, Field, FormatSpec, RecordSource, p, rule};
use crate::metrics::Origin;

/// llm-load-test's first v2 output (December 2023 to February 2024): the same `results`
/// document, whose records have `start`/`end` (epoch s), `TTFT`/`ttft` and `TT_ack` in ms but
/// `response_time` in seconds, and `worker_id` where later versions have `user_id`.
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "llm-load-test-2023".into(),
        about: "llm-load-test 2023 output document: each element of results (start, end; TTFT in ms, response_time in s)".into(),
        markers: vec![Cond::Present(p("results")), Cond::Present(p("config"))],
        records: Some(RecordSource::Each(vec![p("results.*")])),
        record_markers: vec![Cond::Present(p("worker_id")), Cond::Present(p("start"))],
        arrival_origin: Origin::Gateway,
        ttft_doc: "gateway (benchmark client): TTFT (ms from start); its TPOT runs from the ack, not the first token, over the streamed chunks".into(),
        cache_doc: "none".into(),
        fields: vec![
            rule(Field::Arrival, Unit::EpochS, &["start"]),
            rule(Field::End, Unit::EpochS, &["end"]),
            rule(Field::Ttft, Unit::Ms, &["TTFT", "ttft"]),
            rule(Field::E2e, Unit::S, &["response_time"]),
            rule(Field::OutputTokens, Unit::Count, &["output_tokens"]),
            rule(Field::InputTokens, Unit::Count, &["input_tokens"]),
        ],
        ..FormatSpec::default()
    }
}
