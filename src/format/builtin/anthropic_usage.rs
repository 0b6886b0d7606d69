//! The `anthropic-usage` format.

use super::{USAGE_TTFT, combined, eq, paths, present, rule};
use crate::format::units::Unit;
use crate::format::{Combine, Field, FormatSpec};

/// Anthropic Messages response (FORMATS.md 8a).
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "anthropic-usage".into(),
        about: "Anthropic Messages response (type \"message\") usage; tokens and cache only. Stream events (message_start, message_delta) are not requests on their own".into(),
        markers: vec![eq("type", "\"message\""), present("usage.input_tokens")],
        error_markers: vec![eq("type", "\"error\""), present("error.type")],
        fallback: true,
        ttft_doc: USAGE_TTFT.into(),
        cache_doc: "usage.cache_read_input_tokens; input = input_tokens + cache_read_input_tokens + cache_creation_input_tokens (Anthropic's input_tokens excludes both)".into(),
        fields: vec![
            combined(
                Field::InputTokens,
                Unit::Count,
                Combine::Sum,
                &["usage.input_tokens", "usage.cache_read_input_tokens", "usage.cache_creation_input_tokens"],
            ),
            rule(Field::CachedTokens, Unit::Count, &["usage.cache_read_input_tokens"]),
            rule(Field::OutputTokens, Unit::Count, &["usage.output_tokens"]),
        ],
        id_paths: paths(&["id"]),
        model_paths: paths(&["model"]),
        reason_paths: vec![crate::format::p("error.type"), crate::format::p("error.message")],
        ..FormatSpec::default()
    }
}
