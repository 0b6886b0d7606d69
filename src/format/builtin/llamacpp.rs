//! The `llamacpp` format.

use crate::format::units::Unit;
use crate::format::{Cond, Field, FormatSpec, p, rule};
use crate::metrics::Origin;

/// llama.cpp `llama-server` responses with a `timings` object (FORMATS.md 5).
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "llamacpp".into(),
        about: "llama.cpp llama-server response or last stream chunk with `timings` (the one with `usage`, else the one with a `finish_reason`; earlier timings_per_token chunks are skipped), OpenAI-style and native /completion".into(),
        markers: vec![Cond::Present(p("timings.prompt_ms")), Cond::Present(p("timings.predicted_n"))],
        // llama.cpp's error code is the HTTP status (a number); OpenAI-style bodies carry a
        // string code and belong to the provider usage formats.
        error_markers: vec![Cond::Present(p("error.message")), Cond::AtLeast(p("error.code"), 400)],
        // With `timings_per_token` every chunk carries the timings so far: only the final one
        // is the request. llama-server puts the final timings on its last chunk: the one with
        // `usage` when the client asked for it (`stream_options.include_usage`), else the one
        // with a `finish_reason`; `stop: true` on /completion.
        skip_when: vec![
            vec![
                Cond::Equals(p("object"), "\"chat.completion.chunk\"".into()),
                Cond::Not(Box::new(Cond::Present(p("usage")))),
                Cond::Not(Box::new(Cond::Present(finish_reason()))),
            ],
            vec![
                Cond::Equals(p("object"), "\"text_completion\"".into()),
                Cond::Not(Box::new(Cond::Present(p("usage")))),
            ],
            vec![Cond::Equals(p("stop"), "false".into())],
        ],
        skip_label: "stream chunks before the last".into(),
        error_when: vec![Cond::Present(p("error"))],
        cancelled_when: vec![],
        response_cache_when: vec![],
        streamed_when: None,
        arrival_origin: Origin::Arrival,
        ttft_doc: "scheduled: timings.prompt_ms (slot start of prompt processing -> first token; slot wait excluded)".into(),
        cache_doc: "timings.cache_n, usage.prompt_tokens_details.cached_tokens, else usage.prompt_tokens - timings.prompt_n; input = usage.prompt_tokens, else cache_n + prompt_n".into(),
        fields: vec![
            rule(Field::Prefill, Unit::Ms, &["timings.prompt_ms"]),
            rule(Field::Decode, Unit::Ms, &["timings.predicted_ms"]),
            rule(Field::OutputTokens, Unit::Count, &["timings.predicted_n", "usage.completion_tokens", "tokens_predicted"]),
            rule(Field::InputTokens, Unit::Count, &["usage.prompt_tokens", "tokens_evaluated"]),
            rule(Field::CachedTokens, Unit::Count, &["timings.cache_n", "usage.prompt_tokens_details.cached_tokens"]),
            rule(Field::EvaluatedTokens, Unit::Count, &["timings.prompt_n"]),
            rule(Field::LoggedAt, Unit::EpochS, &["created"]),
        ],
        id_paths: vec![p("id")],
        model_paths: vec![p("model")],
        reason_paths: vec![crate::format::p("error.type"), crate::format::p("error.code"), crate::format::p("error.message"), crate::format::p("error")],
        ..FormatSpec::default()
    }
}

/// `choices[0].finish_reason`: set on a stream's last chunk with a choice.
fn finish_reason() -> Vec<String> {
    vec!["choices".into(), "[0]".into(), "finish_reason".into()]
}
