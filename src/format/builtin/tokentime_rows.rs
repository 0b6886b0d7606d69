//! The `tokentime-rows` format: tokentime's own rows (`-o jsonl`) read back.

use super::{combined, eq, paths, present, rule};
use crate::format::units::Unit;
use crate::format::{Combine, Cond, Field, FormatSpec};
use crate::metrics::Origin;

/// The rows `tokentime -o jsonl` writes, one request a line, with their `outcome` column: each
/// metric is read as written (TPOT through the decode time it was made of), so a summary of
/// the rows is the summary of the log they were written from, but for what rows do not hold
/// (ITL, the error reasons without `error_reason`, the in-flight sweep's TPOT under load
/// without `start` and `end`).
pub(crate) fn spec() -> FormatSpec {
    let outcome = |o: &str| eq("outcome", &format!("\"{o}\""));
    FormatSpec {
        name: "tokentime-rows".into(),
        about: "tokentime's own rows (-o jsonl, with the outcome column), read back as written".into(),
        // An `outcome` column is common in logs (a client's own records have one, with token
        // counts): a row is one with a time column set too, or, failed, with its id, model or
        // line.
        markers: vec![
            Cond::Any(vec![outcome("ok"), outcome("error"), outcome("cancelled")]),
            Cond::Any(
                [
                    "ttft_ms", "e2e_ms", "tpot_ms", "queue_ms", "prefill_ms", "decode_ms", "ttfot_ms",
                    "start", "end",
                ]
                .into_iter()
                .map(present)
                .collect(),
            ),
        ],
        error_markers: vec![
            outcome("error"),
            Cond::Any(["id", "model", "line"].into_iter().map(present).collect()),
        ],
        error_when: vec![outcome("error")],
        cancelled_when: vec![outcome("cancelled")],
        response_cache_when: vec![eq("cache", "\"response\"")],
        fallback: true,
        // A row's E2E is its `e2e_ms`: null there, the log it came from had none (a TTFT from
        // `scheduled`, whose origin rows written without `ttft_origin` do not say).
        e2e_as_written: true,
        // The origin the row's TTFT had (a `scheduled` one leaves the queue out: no E2E is
        // made of TTFT + decode).
        origin_when: vec![
            (Origin::Scheduled, eq("ttft_origin", "\"scheduled\"")),
            (Origin::Gateway, eq("ttft_origin", "\"gateway\"")),
        ],
        ttft_doc: "as written, from the row's ttft_origin column (arrival when it has none)".into(),
        cache_doc: "cached_tokens of input_tokens, as when the rows were written; cache \"response\" is a response-cache hit".into(),
        fields: vec![
            rule(Field::Arrival, Unit::Rfc3339, &["start"]),
            rule(Field::End, Unit::Rfc3339, &["end"]),
            rule(Field::Ttft, Unit::Ms, &["ttft_ms"]),
            rule(Field::E2e, Unit::Ms, &["e2e_ms"]),
            rule(Field::Queue, Unit::Ms, &["queue_ms"]),
            rule(Field::Prefill, Unit::Ms, &["prefill_ms"]),
            rule(Field::Decode, Unit::Ms, &["decode_ms"]),
            combined(Field::Decode, Unit::Ms, Combine::PerTokenAfterFirst, &["tpot_ms", "output_tokens"]),
            rule(Field::Ttfot, Unit::Ms, &["ttfot_ms"]),
            rule(Field::InputTokens, Unit::Count, &["input_tokens"]),
            rule(Field::CachedTokens, Unit::Count, &["cached_tokens"]),
            rule(Field::OutputTokens, Unit::Count, &["output_tokens"]),
        ],
        id_paths: paths(&["id"]),
        model_paths: paths(&["model"]),
        reason_paths: paths(&["error_reason"]),
        ..FormatSpec::default()
    }
}
