//! The `vllm` format.

use crate::format::units::Unit;
use crate::format::{Cond, Field, FormatSpec, p, rule};
use crate::metrics::Origin;

/// vLLM `--enable-per-request-metrics` responses (FORMATS.md 2b).
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "vllm".into(),
        about: "vLLM response or final usage chunk with the per-request `metrics` object".into(),
        markers: vec![Cond::Present(p("metrics.time_to_first_token_ms"))],
        error_markers: vec![Cond::Equals(p("object"), "\"error\"".into()), Cond::Present(p("message"))],
        error_when: vec![Cond::Equals(p("object"), "\"error\"".into())],
        cancelled_when: vec![],
        response_cache_when: vec![],
        streamed_when: None,
        arrival_origin: Origin::Arrival,
        ttft_doc: "arrival (engine queue entry): queue_time_ms + time_to_first_token_ms; scheduled when queue_time_ms is null".into(),
        cache_doc: "usage.prompt_tokens_details.cached_tokens (needs --enable-prompt-tokens-details)".into(),
        fields: vec![
            rule(Field::Queue, Unit::Ms, &["metrics.queue_time_ms"]),
            rule(Field::Prefill, Unit::Ms, &["metrics.time_to_first_token_ms"]),
            rule(Field::Decode, Unit::Ms, &["metrics.generation_time_ms"]),
            // Not read: `output_token_metrics.content.time_to_first_token_ms` (with
            // --enable-per-request-output-token-metrics), whose origin vLLM's docs do not state
            // (the scheduler, as the TTFT's, or the first token): a time to first output token
            // made from it would be a guess.
            rule(Field::InputTokens, Unit::Count, &["usage.prompt_tokens"]),
            rule(Field::OutputTokens, Unit::Count, &["usage.completion_tokens"]),
            rule(Field::CachedTokens, Unit::Count, &["usage.prompt_tokens_details.cached_tokens"]),
            // vLLM sets `created` when it takes the request (whole seconds): the start, not the end.
            rule(Field::Arrival, Unit::EpochS, &["created"]),
        ],
        id_paths: vec![p("id")],
        model_paths: vec![p("model")],
        reason_paths: vec![crate::format::p("type"), crate::format::p("code"), crate::format::p("message")],
        ..FormatSpec::default()
    }
}
