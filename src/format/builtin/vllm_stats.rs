//! The `vllm-stats` format.

use crate::format::units::Unit;
use crate::format::{Cond, Field, FormatSpec, p, rule};
use crate::metrics::Origin;

/// vLLM v1 per-request stats dumped as JSON: a `FinishedRequestStats` (`vllm/v1/metrics/
/// stats.py`), alone or merged with its `RequestStateStats` (FORMATS.md 2a). Durations are in
/// seconds. `arrival_time` is the frontend's wall clock; `queued_ts`, `scheduled_ts`,
/// `first_token_ts` and `last_token_ts` are engine-core monotonic seconds: they are never read
/// (as instants they would be subtracted from the wall-clock arrival), the durations vLLM
/// derived from them within their own clock are.
pub(crate) fn spec() -> FormatSpec {
    let finish = |v: &str| Cond::Equals(p("finish_reason"), v.into());
    FormatSpec {
        name: "vllm-stats".into(),
        about: "vLLM v1 FinishedRequestStats (optionally merged with RequestStateStats) as JSON".into(),
        markers: vec![
            Cond::Present(p("e2e_latency")),
            Cond::Present(p("decode_time")),
            Cond::Present(p("num_generation_tokens")),
        ],
        // FinishReason is an IntEnum (STOP 0, LENGTH 1, ABORT 2, ERROR 3) whose str() is its
        // lower-case name: a dump holds either.
        error_when: vec![finish("\"error\""), finish("3")],
        cancelled_when: vec![finish("\"abort\""), finish("2")],
        arrival_origin: Origin::Arrival,
        ttft_doc: "arrival (frontend wall clock): first_token_latency of RequestStateStats when merged in; E2E = e2e_latency; queue, prefill, decode = queued_time, prefill_time, decode_time (engine-core monotonic differences)".into(),
        cache_doc: "none".into(),
        fields: vec![
            rule(Field::Arrival, Unit::EpochS, &["arrival_time"]),
            rule(Field::Ttft, Unit::S, &["first_token_latency"]),
            rule(Field::E2e, Unit::S, &["e2e_latency"]),
            rule(Field::Queue, Unit::S, &["queued_time"]),
            rule(Field::Prefill, Unit::S, &["prefill_time"]),
            rule(Field::Decode, Unit::S, &["decode_time"]),
            rule(Field::InputTokens, Unit::Count, &["num_prompt_tokens"]),
            rule(Field::OutputTokens, Unit::Count, &["num_generation_tokens"]),
        ],
        id_paths: vec![p("request_id")],
        ..FormatSpec::default()
    }
}
