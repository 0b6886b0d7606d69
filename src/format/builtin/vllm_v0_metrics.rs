//! The `vllm-v0-metrics` format.

use crate::format::units::Unit;
use crate::format::{Cond, Field, FormatSpec, p, rule};
use crate::metrics::Origin;

/// vLLM v0 `RequestMetrics` (`vllm/sequence.py`) dumped as JSON: every instant is the
/// engine's `time.time()` (epoch s, one clock); `time_in_queue` is in seconds,
/// `model_forward_time` in ms (neither is needed: the instants give queue and prefill).
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "vllm-v0-metrics".into(),
        about: "vLLM v0 RequestMetrics as JSON (arrival_time, first_scheduled_time, first_token_time, last_token_time)".into(),
        markers: vec![
            Cond::Present(p("arrival_time")),
            Cond::Present(p("first_scheduled_time")),
            Cond::Present(p("last_token_time")),
        ],
        arrival_origin: Origin::Arrival,
        ttft_doc: "arrival (engine wall clock): first_token_time - arrival_time; end = last_token_time (finished_time, when the engine retired the request, is not the last token)".into(),
        cache_doc: "none".into(),
        fields: vec![
            rule(Field::Arrival, Unit::EpochS, &["arrival_time"]),
            rule(Field::Scheduled, Unit::EpochS, &["first_scheduled_time"]),
            rule(Field::FirstToken, Unit::EpochS, &["first_token_time"]),
            rule(Field::End, Unit::EpochS, &["last_token_time"]),
            rule(Field::InputTokens, Unit::Count, &["num_prompt_tokens", "prompt_tokens"]),
            rule(Field::OutputTokens, Unit::Count, &["num_generation_tokens", "completion_tokens"]),
        ],
        id_paths: vec![p("request_id")],
        ..FormatSpec::default()
    }
}
