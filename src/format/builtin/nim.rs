//! The `nim` format.

use super::{combined, eq, paths, rule};
use crate::format::units::Unit;
use crate::format::{Combine, Field, FormatSpec};
use crate::metrics::Origin;

/// NVIDIA NIM responses with per-request `stats` (FORMATS.md 8d).
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "nim".into(),
        about: "NVIDIA NIM response or final chunk with the per-request stats object (NIM_PER_REQ_METRICS_ENABLE=1)".into(),
        markers: vec![eq("stats.type", "\"NIM LLM Model Stats\"")],
        arrival_origin: Origin::Arrival,
        ttft_doc: "arrival (queue entry): time_in_queue_in_ms + time_to_first_token_in_ms (which runs from processing start); scheduled when the queue time is not logged (non-vLLM backends). Decode = generation_time_in_ms - time_to_first_token_in_ms, both from processing start".into(),
        cache_doc: "none in stats; usage.prompt_tokens_details.cached_tokens when the response has it".into(),
        fields: vec![
            rule(Field::Queue, Unit::Ms, &["stats.time_in_queue_in_ms"]),
            rule(Field::Prefill, Unit::Ms, &["stats.response_tokens.time_to_first_token_in_ms"]),
            combined(
                Field::Decode,
                Unit::Ms,
                Combine::Difference,
                &[
                    "stats.generation_time_in_ms",
                    "stats.response_tokens.time_to_first_token_in_ms",
                ],
            ),
            rule(Field::InputTokens, Unit::Count, &["stats.llm_input_token_length", "usage.prompt_tokens"]),
            rule(
                Field::OutputTokens,
                Unit::Count,
                &["stats.llm_output_token_length", "stats.response_tokens.response_token_length", "usage.completion_tokens"],
            ),
            rule(Field::CachedTokens, Unit::Count, &["usage.prompt_tokens_details.cached_tokens"]),
            rule(Field::LoggedAt, Unit::EpochS, &["created"]),
        ],
        id_paths: paths(&["id"]),
        model_paths: paths(&["model"]),
        ..FormatSpec::default()
    }
}
