//! The `vllm-otlp` format.

use super::{attr_present, attr_rule, spans};
use crate::format::units::Unit;
use crate::format::{Cond, Field, FormatSpec, p, rule};
use crate::metrics::Origin;

/// vLLM's `llm_request` spans (`--otlp-traces-endpoint`, OTLP/JSON as a collector's file
/// exporter writes it): `gen_ai.latency.*` in seconds, TTFT from arrival.
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "vllm-otlp".into(),
        about: "vLLM llm_request spans in OTLP/JSON trace lines (gen_ai.latency.* attributes)"
            .into(),
        markers: vec![Cond::Present(p("resourceSpans"))],
        records: Some(spans()),
        record_markers: vec![attr_present("gen_ai.latency.e2e")],
        arrival_origin: Origin::Arrival,
        ttft_doc: "arrival: gen_ai.latency.time_to_first_token (queue included)".into(),
        cache_doc: "none emitted by vLLM (gen_ai.usage.cached_tokens read if present)".into(),
        fields: vec![
            rule(Field::Arrival, Unit::EpochNs, &["startTimeUnixNano"]),
            rule(Field::End, Unit::EpochNs, &["endTimeUnixNano"]),
            attr_rule(
                Field::Ttft,
                Unit::S,
                &["gen_ai.latency.time_to_first_token"],
            ),
            attr_rule(Field::Queue, Unit::S, &["gen_ai.latency.time_in_queue"]),
            attr_rule(
                Field::Prefill,
                Unit::S,
                &["gen_ai.latency.time_in_model_prefill"],
            ),
            attr_rule(
                Field::Decode,
                Unit::S,
                &["gen_ai.latency.time_in_model_decode"],
            ),
            attr_rule(Field::E2e, Unit::S, &["gen_ai.latency.e2e"]),
            attr_rule(
                Field::InputTokens,
                Unit::Count,
                &["gen_ai.usage.prompt_tokens", "gen_ai.usage.input_tokens"],
            ),
            attr_rule(
                Field::OutputTokens,
                Unit::Count,
                &[
                    "gen_ai.usage.completion_tokens",
                    "gen_ai.usage.output_tokens",
                ],
            ),
            attr_rule(
                Field::CachedTokens,
                Unit::Count,
                &["gen_ai.usage.cached_tokens"],
            ),
        ],
        error_when: vec![Cond::Equals(p("status.code"), "2".into())],
        // A failed request's span need not carry the latency attributes: its name and error
        // status make it one (counted as an error, not dropped as a non-request span).
        error_markers: vec![
            Cond::Equals(p("name"), "\"llm_request\"".into()),
            Cond::Equals(p("status.code"), "2".into()),
        ],
        id_paths: vec![vec!["attributes".into(), "gen_ai.request.id".into()]],
        model_paths: vec![vec!["attributes".into(), "gen_ai.response.model".into()]],
        reason_paths: vec![
            vec!["attributes".into(), "error.type".into()],
            crate::format::p("status.message"),
        ],
        ..FormatSpec::default()
    }
}
