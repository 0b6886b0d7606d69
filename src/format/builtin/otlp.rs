//! The `otlp` format.

use super::{attr_present, attr_rule, spans};
use crate::format::units::Unit;
use crate::format::{Cond, Field, FormatSpec, p, rule};
use crate::metrics::Origin;

/// OpenTelemetry GenAI inference spans (semantic conventions, with the OpenLIT, OpenLLMetry
/// and Sentry aliases of FORMATS.md section 6).
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "otlp".into(),
        about: "OpenTelemetry GenAI spans in OTLP/JSON trace lines (semconv, OpenLIT, OpenLLMetry aliases)".into(),
        markers: vec![Cond::Present(p("resourceSpans"))],
        records: Some(spans()),
        record_markers: vec![attr_present("gen_ai.request.model")],
        arrival_origin: Origin::Gateway,
        ttft_doc: "gateway (client span): gen_ai.response.time_to_first_chunk, gen_ai.server.time_to_first_token".into(),
        cache_doc: "gen_ai.usage.cache_read.input_tokens and aliases (included in input_tokens)".into(),
        fields: vec![
            rule(Field::Arrival, Unit::EpochNs, &["startTimeUnixNano"]),
            rule(Field::End, Unit::EpochNs, &["endTimeUnixNano"]),
            attr_rule(
                Field::Ttft,
                Unit::S,
                &[
                    "gen_ai.response.time_to_first_chunk",
                    "gen_ai.server.time_to_first_token",
                    "gen_ai.server.ttft",
                    "gen_ai.latency.time_to_first_token",
                ],
            ),
            attr_rule(
                Field::InputTokens,
                Unit::Count,
                &["gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt"],
            ),
            attr_rule(
                Field::OutputTokens,
                Unit::Count,
                &["gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion"],
            ),
            attr_rule(
                Field::CachedTokens,
                Unit::Count,
                &[
                    "gen_ai.usage.cache_read.input_tokens",
                    "gen_ai.usage.cache_read_input_tokens",
                    "llm.usage.cache_read_input_tokens",
                    "gen_ai.usage.input_tokens_details.cached",
                    "gen_ai.usage.input_tokens.cached",
                    "gen_ai.usage.cached_tokens",
                ],
            ),
        ],
        error_when: vec![Cond::Equals(p("status.code"), "2".into())],
        id_paths: vec![vec!["attributes".into(), "gen_ai.response.id".into()], p("spanId")],
        // The model asked for first, as a failed request has no response model.
        model_paths: vec![
            vec!["attributes".into(), "gen_ai.request.model".into()],
            vec!["attributes".into(), "gen_ai.response.model".into()],
        ],
        reason_paths: vec![vec!["attributes".into(), "error.type".into()], crate::format::p("status.message")],
        ..FormatSpec::default()
    }
}
