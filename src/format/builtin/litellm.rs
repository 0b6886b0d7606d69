//! The `litellm` format.

use crate::format::units::Unit;
use crate::format::{Cond, Field, FormatSpec, p, rule};
use crate::metrics::Origin;

/// LiteLLM `StandardLoggingPayload` (FORMATS.md 3a).
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "litellm".into(),
        about: "LiteLLM StandardLoggingPayload (proxy callbacks, SDK custom loggers)".into(),
        markers: vec![Cond::Present(p("startTime")), Cond::Present(p("endTime")), Cond::Present(p("call_type"))],
        // A failure logged without its times (a null startTime or endTime) is still one.
        error_markers: vec![Cond::Present(p("call_type")), Cond::Equals(p("status"), "\"failure\"".into())],
        error_when: vec![Cond::Equals(p("status"), "\"failure\"".into())],
        // A client that disconnects mid-stream is logged as a success whose error_str says so
        // ("Client disconnected the request"); a timeout is a failure.
        cancelled_when: vec![Cond::Contains(p("error_str"), "client disconnected".into())],
        response_cache_when: vec![Cond::Equals(p("cache_hit"), "true".into())],
        streamed_when: Some(Cond::Equals(p("stream"), "true".into())),
        arrival_origin: Origin::Gateway,
        ttft_doc: "gateway: completionStartTime - startTime, streamed calls only".into(),
        cache_doc: "cached tokens from the provider usage object (or upstream llama.cpp timings); cache_hit:true is LiteLLM's response cache".into(),
        fields: vec![
            rule(Field::Arrival, Unit::EpochAuto, &["startTime"]),
            rule(Field::FirstToken, Unit::EpochAuto, &["completionStartTime"]),
            rule(Field::End, Unit::EpochAuto, &["endTime"]),
            rule(Field::InputTokens, Unit::Count, &["prompt_tokens"]),
            rule(Field::OutputTokens, Unit::Count, &["completion_tokens"]),
            rule(
                Field::CachedTokens,
                Unit::Count,
                &[
                    "metadata.usage_object.prompt_tokens_details.cached_tokens",
                    "hidden_params.usage_object.prompt_tokens_details.cached_tokens",
                    "response.usage.prompt_tokens_details.cached_tokens",
                    "response.timings.cache_n",
                ],
            ),
            rule(Field::EvaluatedTokens, Unit::Count, &["response.timings.prompt_n"]),
            // llama.cpp's own timings, kept by LiteLLM in non-streamed responses.
            rule(Field::Prefill, Unit::Ms, &["response.timings.prompt_ms"]),
            rule(Field::Decode, Unit::Ms, &["response.timings.predicted_ms"]),
        ],
        id_paths: vec![p("litellm_call_id"), p("id")],
        model_paths: vec![p("model")],
        reason_paths: vec![crate::format::p("error_information.error_class"), crate::format::p("error_information.error_code"), crate::format::p("error_str")],
        ..FormatSpec::default()
    }
}
