//! The `tgi` format.

use super::{combined, eq, present, rule};
use crate::format::units::Unit;
use crate::format::{Combine, Field, FormatSpec};
use crate::metrics::Origin;

/// TGI router `--json-output` "Success" events (FORMATS.md 1).
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "tgi".into(),
        about: "Hugging Face TGI router --json-output \"Success\" events (one per finished request)".into(),
        markers: vec![eq("message", "\"Success\""), present("span.time_per_token")],
        // A request's failure is one ERROR event of the router's infer module inside the
        // request span (validation, overload, incomplete generation); no Success follows.
        // Other ERROR lines (launcher, shards, startup) are not requests.
        error_markers: vec![
            eq("level", "\"ERROR\""),
            eq("target", "\"text_generation_router::infer\""),
            present("span.name"),
        ],
        arrival_origin: Origin::Arrival,
        ttft_doc: "not logged: TGI folds prefill into inference_time, so TTFT, prefill, decode and TPOT are null (not_logged); time_per_token includes the prefill and only recovers the generated tokens".into(),
        cache_doc: "none (TGI logs no prompt or cache counts)".into(),
        fields: vec![
            rule(Field::E2e, Unit::DurationStr, &["span.total_time"]),
            rule(Field::Queue, Unit::DurationStr, &["span.queue_time"]),
            combined(
                Field::OutputTokens,
                Unit::DurationStr,
                Combine::FloorRatio,
                &["span.inference_time", "span.time_per_token"],
            ),
            rule(Field::LoggedAt, Unit::Rfc3339, &["timestamp"]),
        ],
        reason_paths: vec![crate::format::p("message"), crate::format::p("fields.message")],
        ..FormatSpec::default()
    }
}
