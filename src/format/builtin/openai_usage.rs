//! The `openai-usage` format.

use super::{USAGE_TTFT, paths, present, rule};
use crate::format::units::Unit;
use crate::format::{Field, FormatSpec};

/// OpenAI Chat Completions / Completions response or final usage chunk (FORMATS.md 8a).
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "openai-usage".into(),
        about: "OpenAI-compatible chat/completions response or final usage chunk (usage.prompt_tokens) that no server format claims; tokens and cache only".into(),
        markers: vec![present("usage.prompt_tokens"), present("usage.completion_tokens")],
        error_markers: vec![present("error.message"), present("error.type")],
        fallback: true,
        ttft_doc: USAGE_TTFT.into(),
        cache_doc: "usage.prompt_tokens_details.cached_tokens of usage.prompt_tokens (which includes them; 0 is a miss, absent or null unknown)".into(),
        fields: vec![
            rule(Field::InputTokens, Unit::Count, &["usage.prompt_tokens"]),
            rule(Field::CachedTokens, Unit::Count, &["usage.prompt_tokens_details.cached_tokens"]),
            rule(Field::OutputTokens, Unit::Count, &["usage.completion_tokens"]),
            rule(Field::LoggedAt, Unit::EpochS, &["created"]),
        ],
        id_paths: paths(&["id"]),
        model_paths: paths(&["model"]),
        reason_paths: vec![crate::format::p("error.type"), crate::format::p("error.code"), crate::format::p("error.message")],
        ..FormatSpec::default()
    }
}
