//! The `helicone` format.

use super::{combined, path, paths, present, rule};
use crate::format::units::Unit;
use crate::format::{Combine, Cond, Field, FormatSpec};
use crate::metrics::Origin;

/// Helicone request rows (FORMATS.md 7b).
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "helicone".into(),
        about: "Helicone request row (npx @helicone/export --format jsonl, REST API)".into(),
        markers: vec![present("delay_ms"), present("request_created_at")],
        error_when: vec![Cond::AtLeast(path("response_status"), 400)],
        // 499: the client closed the request.
        cancelled_when: vec![Cond::Equals(path("response_status"), "499".into())],
        response_cache_when: vec![Cond::Differs(
            path("cache_reference_id"),
            "\"00000000-0000-0000-0000-000000000000\"".into(),
        )],
        arrival_origin: Origin::Gateway,
        ttft_doc: "gateway: time_to_first_token (ms; 0 is Helicone's \"none\" sentinel, null); decode = (response_created_at - request_created_at) - TTFT".into(),
        cache_doc: "prompt_cache_read_tokens (writes are not hits); cache_reference_id other than the all-zero UUID is Helicone's response cache; input = total_tokens - completion_tokens (prompt_tokens excludes cache writes for Anthropic)".into(),
        fields: vec![
            rule(Field::Arrival, Unit::Rfc3339, &["request_created_at"]),
            rule(Field::End, Unit::Rfc3339, &["response_created_at"]),
            rule(Field::E2e, Unit::Ms, &["delay_ms"]),
            rule(Field::Ttft, Unit::Ms, &["time_to_first_token"]),
            combined(Field::InputTokens, Unit::Count, Combine::Difference, &["total_tokens", "completion_tokens"]),
            rule(Field::InputTokens, Unit::Count, &["prompt_tokens"]),
            rule(Field::CachedTokens, Unit::Count, &["prompt_cache_read_tokens"]),
            rule(Field::OutputTokens, Unit::Count, &["completion_tokens"]),
        ],
        id_paths: paths(&["request_id"]),
        // The model asked for first: a failed request has no response model, and grouped by the
        // dated one it answered with, it would sit apart from its model's answered requests.
        model_paths: paths(&["request_model", "model", "response_model"]),
        reason_paths: vec![crate::format::p("response_status")],
        ..FormatSpec::default()
    }
}
