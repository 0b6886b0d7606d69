//! The `llmperf` format.

use crate::format::units::Unit;
use crate::format::{Cond, Field, FormatSpec, p, rule};
use crate::metrics::Origin;

/// Ray LLMPerf `*_individual_responses.json`: a JSON array of per-request objects, read element
/// by element.
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "llmperf".into(),
        about: "LLMPerf individual_responses.json (a JSON array, streamed element by element)"
            .into(),
        markers: vec![
            Cond::Present(p("end_to_end_latency_s")),
            Cond::Present(p("inter_token_latency_s")),
        ],
        arrival_origin: Origin::Gateway,
        ttft_doc: "gateway (benchmark client): ttft_s".into(),
        // What a reader comparing tables needs: LLMPerf's own per-token figure is neither.
        itl_doc: "none read: LLMPerf's inter_token_latency_s is its chunk gaps, TTFT included, over the output tokens (about E2E / output tokens), neither ITL nor TPOT; tpot_ms is (E2E - TTFT) / (output tokens - 1)".into(),
        cache_doc: "none".into(),
        fields: vec![
            rule(Field::Ttft, Unit::S, &["ttft_s"]),
            rule(Field::E2e, Unit::S, &["end_to_end_latency_s"]),
            rule(Field::OutputTokens, Unit::Count, &["number_output_tokens"]),
            rule(Field::InputTokens, Unit::Count, &["number_input_tokens"]),
        ],
        error_when: vec![Cond::Present(p("error_code"))],
        // error_code is the HTTP status: 499 is the client closing the request.
        cancelled_when: vec![Cond::Equals(p("error_code"), "499".into())],
        reason_paths: vec![
            crate::format::p("error_code"),
            crate::format::p("error_msg"),
        ],
        ..FormatSpec::default()
    }
}
