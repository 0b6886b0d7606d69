//! The `llamacpp-log` format.

use crate::format::units::Unit;
use crate::format::{Cond, Field, FormatSpec, JoinSpec, p, rule};
use crate::metrics::Origin;

/// llama.cpp's legacy `--log-format json` (removed upstream in late 2024): three
/// `print_timings` lines per task, joined by slot and task id in either spelling.
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "llamacpp-log".into(),
        about: "llama.cpp legacy --log-format json: print_timings lines joined by slot and task"
            .into(),
        markers: vec![Cond::Equals(p("function"), "\"print_timings\"".into())],
        join: Some(JoinSpec {
            key: vec![
                vec![p("id_slot"), p("slot_id")],
                vec![p("id_task"), p("task_id")],
            ],
            complete_when: vec![Cond::Present(p("t_total"))],
            part_fields: vec![
                rule(Field::OutputTokens, Unit::Count, &["n_decoded"]),
                rule(
                    Field::EvaluatedTokens,
                    Unit::Count,
                    &["n_prompt_tokens_processed", "num_prompt_tokens_processed"],
                ),
                rule(Field::LoggedAt, Unit::EpochS, &["timestamp"]),
            ],
            parts_required: true,
            standalone_when: vec![],
            output_when: vec![],
        }),
        arrival_origin: Origin::Arrival,
        ttft_doc: "scheduled: t_prompt_processing (slot wait excluded)".into(),
        cache_doc: "none".into(),
        fields: vec![
            rule(Field::Prefill, Unit::Ms, &["t_prompt_processing"]),
            rule(Field::Decode, Unit::Ms, &["t_token_generation"]),
            rule(Field::LoggedAt, Unit::EpochS, &["timestamp"]),
        ],
        ..FormatSpec::default()
    }
}
