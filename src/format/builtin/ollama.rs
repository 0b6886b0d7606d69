//! The `ollama` format.

use crate::format::units::Unit;
use crate::format::{Combine, Cond, Field, FormatSpec, JoinSpec, p, rule};
use crate::metrics::Origin;

/// Ollama `/api/chat` and `/api/generate` responses: one final object (`done: true`) or an
/// NDJSON stream of chunks ending in one (FORMATS.md section 4). Durations are integer ns.
/// A stream's chunks carry no id: they are joined by model, in order.
pub(crate) fn spec() -> FormatSpec {
    // An absent eval_duration is unknown, not a decode of 0 ms.
    let decode = rule(Field::Decode, Unit::Ns, &["eval_duration"]);
    let mut ttft = rule(
        Field::Ttft,
        Unit::Ns,
        &["load_duration", "prompt_eval_duration"],
    );
    ttft.combine = Combine::Sum;
    FormatSpec {
        name: "ollama".into(),
        about: "Ollama final responses (done: true) and NDJSON streams joined into one request".into(),
        markers: vec![Cond::Present(p("model")), Cond::Present(p("created_at")), Cond::Present(p("done"))],
        // Ollama's error is a bare `{"error":"model not found"}`: too generic to claim a line in
        // auto-detection (any log line with an `error` string would be an Ollama failure), so
        // it counts only under `--format ollama`.
        error_markers: vec![Cond::Present(p("error")), Cond::Not(Box::new(Cond::Present(p("error.message"))))],
        errors_only_when_forced: true,
        join: Some(JoinSpec {
            key: vec![vec![p("model")]],
            complete_when: vec![Cond::Equals(p("done"), "true".into())],
            part_fields: vec![
                rule(Field::FirstToken, Unit::Rfc3339, &["created_at"]),
                rule(Field::LoggedAt, Unit::Rfc3339, &["created_at"]),
            ],
            parts_required: false,
            // A non-streamed answer carries its whole text in its one object.
            standalone_when: vec![
                Cond::Differs(p("message.content"), "\"\"".into()),
                Cond::Differs(p("response"), "\"\"".into()),
            ],
            // TTFT runs to the first chunk with output of any kind: answer text, a reasoning
            // model's `thinking` (its first token is the first token), a tool call. Ollama's
            // opening chunk can carry none (`{"response":"","done":false}`).
            output_when: vec![
                Cond::Differs(p("message.content"), "\"\"".into()),
                Cond::Differs(p("message.thinking"), "\"\"".into()),
                Cond::Present(p("message.tool_calls")),
                Cond::Differs(p("response"), "\"\"".into()),
                Cond::Differs(p("thinking"), "\"\"".into()),
            ],
        }),
        arrival_origin: Origin::Arrival,
        ttft_doc: "arrival: created_at of the first chunk that carries output (text, thinking or a tool call; not an empty opening chunk) - (final created_at - total_duration); a single response: load_duration + prompt_eval_duration".into(),
        cache_doc: "prompt_eval_cached_count (newest Ollama); prompt_eval_count includes cached tokens".into(),
        fields: vec![
            rule(Field::End, Unit::Rfc3339, &["created_at"]),
            rule(Field::E2e, Unit::Ns, &["total_duration"]),
            ttft,
            decode,
            rule(Field::InputTokens, Unit::Count, &["prompt_eval_count"]),
            rule(Field::CachedTokens, Unit::Count, &["prompt_eval_cached_count"]),
            rule(Field::OutputTokens, Unit::Count, &["eval_count"]),
        ],
        model_paths: vec![p("model")],
        reason_paths: vec![crate::format::p("error")],
        ..FormatSpec::default()
    }
}
