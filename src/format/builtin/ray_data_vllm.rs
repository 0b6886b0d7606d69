//! The `ray-data-vllm` format.

use crate::format::units::Unit;
use crate::format::{Cond, Field, FormatSpec, p, rule};
use crate::metrics::Origin;

/// A row of Ray Data LLM's vLLM engine stage (`ray.data.llm`, `vLLMEngineProcessorConfig`):
/// the request's vLLM v0 `RequestMetrics` under `metrics` (the engine's `time.time()`, epoch
/// s, one clock), its token counts beside it (`num_input_tokens`, `num_generated_tokens`) and
/// Ray's own `time_taken_llm` (s, the stage's time for the row, not read: it is not the
/// request's E2E in the engine).
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "ray-data-vllm".into(),
        about: "Ray Data LLM rows from its vLLM engine stage (vLLM v0 RequestMetrics under `metrics`)".into(),
        markers: vec![
            Cond::Present(p("metrics.arrival_time")),
            Cond::Present(p("metrics.first_scheduled_time")),
            Cond::Present(p("num_generated_tokens")),
        ],
        arrival_origin: Origin::Arrival,
        ttft_doc: "arrival (engine wall clock): metrics.first_token_time - metrics.arrival_time; end = metrics.last_token_time".into(),
        cache_doc: "none".into(),
        fields: vec![
            rule(Field::Arrival, Unit::EpochS, &["metrics.arrival_time"]),
            rule(Field::Scheduled, Unit::EpochS, &["metrics.first_scheduled_time"]),
            rule(Field::FirstToken, Unit::EpochS, &["metrics.first_token_time"]),
            rule(Field::End, Unit::EpochS, &["metrics.last_token_time"]),
            rule(Field::InputTokens, Unit::Count, &["num_input_tokens"]),
            rule(Field::OutputTokens, Unit::Count, &["num_generated_tokens"]),
        ],
        id_paths: vec![p("request_id")],
        model_paths: vec![p("model")],
        ..FormatSpec::default()
    }
}
