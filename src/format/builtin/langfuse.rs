//! The `langfuse` format.

use super::{combined, eq, paths, present, rule};
use crate::format::units::Unit;
use crate::format::{Combine, Field, FormatSpec};
use crate::metrics::Origin;

/// Langfuse GENERATION observations (FORMATS.md 7a).
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "langfuse".into(),
        about: "Langfuse observation of type GENERATION (public API /observations); SPAN, EVENT and other types are not requests".into(),
        markers: vec![present("traceId"), eq("type", "\"GENERATION\""), present("startTime")],
        error_when: vec![eq("level", "\"ERROR\"")],
        arrival_origin: Origin::Gateway,
        ttft_doc: "gateway (client SDK): completionStartTime - startTime, else timeToFirstToken (s); null without a completion start (non-streamed calls)".into(),
        cache_doc: "usageDetails cache-read keys (input_cached_tokens, input_cache_read, cache_read_input_tokens, ...); input = usage.input, else inputUsage (Langfuse's sum of every input* key, cached included), else the sum of usageDetails' input, input_cached_tokens, input_cache_read, input_cache_creation, input_cached, input_audio".into(),
        fields: vec![
            rule(Field::Arrival, Unit::Rfc3339, &["startTime"]),
            rule(Field::FirstToken, Unit::Rfc3339, &["completionStartTime"]),
            rule(Field::End, Unit::Rfc3339, &["endTime"]),
            rule(Field::Ttft, Unit::S, &["timeToFirstToken"]),
            rule(Field::E2e, Unit::S, &["latency"]),
            rule(Field::InputTokens, Unit::Count, &["usage.input"]),
            // Langfuse's own sum of the input* usage keys (newer API responses have no `usage`),
            // else that sum over the input keys it is known to write: `usageDetails.total -
            // output` would count output_reasoning_tokens as prompt.
            rule(Field::InputTokens, Unit::Count, &["inputUsage"]),
            combined(
                Field::InputTokens,
                Unit::Count,
                Combine::Sum,
                &[
                    "usageDetails.input",
                    "usageDetails.input_cached_tokens",
                    "usageDetails.input_cache_read",
                    "usageDetails.input_cache_creation",
                    "usageDetails.input_cached",
                    "usageDetails.input_audio",
                ],
            ),
            rule(
                Field::CachedTokens,
                Unit::Count,
                &[
                    "usageDetails.input_cached_tokens",
                    "usageDetails.input_cache_read",
                    "usageDetails.cache_read_input_tokens",
                    "usageDetails.input_cached",
                    "usageDetails.cached_tokens",
                ],
            ),
            rule(Field::OutputTokens, Unit::Count, &["usage.output", "usageDetails.output"]),
        ],
        id_paths: paths(&["id"]),
        model_paths: paths(&["model"]),
        reason_paths: vec![crate::format::p("statusMessage")],
        ..FormatSpec::default()
    }
}
