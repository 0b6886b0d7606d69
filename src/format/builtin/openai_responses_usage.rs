//! The `openai-responses-usage` format.

use super::{USAGE_TTFT, eq, paths, present, rule};
use crate::format::units::Unit;
use crate::format::{Field, FormatSpec};

/// OpenAI Responses API response object (FORMATS.md 8a).
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "openai-responses-usage".into(),
        about: "OpenAI Responses API response object (object \"response\") usage; tokens and cache only".into(),
        markers: vec![eq("object", "\"response\""), present("usage.input_tokens")],
        error_markers: vec![eq("object", "\"response\""), eq("status", "\"failed\"")],
        error_when: vec![eq("status", "\"failed\"")],
        cancelled_when: vec![eq("status", "\"cancelled\"")],
        fallback: true,
        ttft_doc: USAGE_TTFT.into(),
        cache_doc: "usage.input_tokens_details.cached_tokens of usage.input_tokens (which includes them)".into(),
        fields: vec![
            rule(Field::InputTokens, Unit::Count, &["usage.input_tokens"]),
            rule(Field::CachedTokens, Unit::Count, &["usage.input_tokens_details.cached_tokens"]),
            rule(Field::OutputTokens, Unit::Count, &["usage.output_tokens"]),
            rule(Field::LoggedAt, Unit::EpochS, &["created_at"]),
        ],
        id_paths: paths(&["id"]),
        model_paths: paths(&["model"]),
        reason_paths: vec![crate::format::p("error.code"), crate::format::p("error.message")],
        ..FormatSpec::default()
    }
}
