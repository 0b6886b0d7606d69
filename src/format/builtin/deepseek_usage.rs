//! The `deepseek-usage` format.

use super::{USAGE_TTFT, combined, paths, present, rule};
use crate::format::units::Unit;
use crate::format::{Combine, Field, FormatSpec};

/// DeepSeek chat completion with `prompt_cache_hit_tokens` (FORMATS.md 8a).
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "deepseek-usage".into(),
        about: "DeepSeek response usage (prompt_cache_hit_tokens + prompt_cache_miss_tokens = prompt_tokens); tokens and cache only".into(),
        markers: vec![present("usage.prompt_cache_hit_tokens")],
        fallback: true,
        ttft_doc: USAGE_TTFT.into(),
        cache_doc: "usage.prompt_cache_hit_tokens of usage.prompt_tokens".into(),
        fields: vec![
            rule(Field::InputTokens, Unit::Count, &["usage.prompt_tokens"]),
            combined(Field::InputTokens, Unit::Count, Combine::Sum, &["usage.prompt_cache_hit_tokens", "usage.prompt_cache_miss_tokens"]),
            rule(Field::CachedTokens, Unit::Count, &["usage.prompt_cache_hit_tokens"]),
            rule(Field::OutputTokens, Unit::Count, &["usage.completion_tokens"]),
            rule(Field::LoggedAt, Unit::EpochS, &["created"]),
        ],
        id_paths: paths(&["id"]),
        model_paths: paths(&["model"]),
        ..FormatSpec::default()
    }
}
