//! The `llm-load-test` format.

use crate::format::units::Unit;
use crate::format::{Cond, Field, FormatSpec, RecordSource, p, rule};
use crate::metrics::Origin;

/// openshift-psap llm-load-test output (`output/output-NNN.json`, 2024 on): one JSON document
/// `{"results": [...], "config": {...}, "summary": {...}}`; each element of `results` is one
/// request with its client instants (`time.time()`, epoch s) and durations in ms.
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "llm-load-test".into(),
        about: "llm-load-test output document: each element of results (start_time, first_token_time, end_time; ms durations)".into(),
        markers: vec![Cond::Present(p("results")), Cond::Present(p("config"))],
        records: Some(RecordSource::Each(vec![p("results.*")])),
        record_markers: vec![Cond::Present(p("user_id")), Cond::Present(p("start_time"))],
        arrival_origin: Origin::Gateway,
        ttft_doc: "gateway (benchmark client): first_token_time - start_time (its ttft); its itl is tokentime's TPOT, its tpot (response_time / n) is not".into(),
        cache_doc: "none".into(),
        fields: vec![
            rule(Field::Arrival, Unit::EpochS, &["start_time"]),
            rule(Field::FirstToken, Unit::EpochS, &["first_token_time"]),
            rule(Field::End, Unit::EpochS, &["end_time"]),
            rule(Field::Ttft, Unit::Ms, &["ttft"]),
            rule(Field::E2e, Unit::Ms, &["response_time"]),
            rule(Field::OutputTokens, Unit::Count, &["output_tokens"]),
            rule(Field::InputTokens, Unit::Count, &["input_tokens"]),
        ],
        error_when: vec![Cond::Present(p("error_text")), Cond::Present(p("error_code"))],
        // error_code is the HTTP status: 499 is the client closing the request.
        cancelled_when: vec![Cond::Equals(p("error_code"), "499".into())],
        reason_paths: vec![crate::format::p("error_code"), crate::format::p("error_text")],
        ..FormatSpec::default()
    }
}
