//! The `guidellm` format.

use crate::format::units::Unit;
use crate::format::{Cond, Field, FormatSpec, RecordSource, RecordWindow, p, rule};
use crate::metrics::Origin;

/// guidellm benchmark reports (`benchmarks.json`): per-request records under
/// `benchmarks[].requests.{successful,errored,incomplete}[]`, only those overlapping the
/// benchmark's measurement window.
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "guidellm".into(),
        about: "guidellm benchmark report: requests.successful/errored/incomplete records in the measurement window".into(),
        markers: vec![Cond::Present(p("benchmarks"))],
        records: Some(RecordSource::Each(vec![
            p("benchmarks.*.requests.successful.*"),
            p("benchmarks.*.requests.errored.*"),
            p("benchmarks.*.requests.incomplete.*"),
        ])),
        // A record has its prompt's token count and the time its request was sent (0.5 under
        // `info.timings`, 0.3 at the top): a list of other objects that log `prompt_tokens`,
        // found under `--root`, is not taken for guidellm's.
        record_markers: vec![
            Cond::Present(p("prompt_tokens")),
            Cond::Any(vec![
                Cond::Present(p("info.timings.request_start")),
                Cond::Present(p("start_time")),
            ]),
        ],
        record_window: Some(RecordWindow {
            start: p("scheduler_metrics.measure_start_time"),
            end: p("scheduler_metrics.measure_end_time"),
            record_start: p("info.timings.request_start"),
            record_end: p("info.timings.request_end"),
        }),
        arrival_origin: Origin::Gateway,
        ttft_doc: "gateway (benchmark client): first_token_iteration - request_start".into(),
        itl_doc: "none read: guidellm's inter_token_latency_ms is tokentime's tpot_ms; its time_per_output_token_ms counts the first token (from the request start in guidellm 0.5) over the output tokens, not TPOT; guidellm weights both by tokens and takes the smallest value whose cumulative weight reaches the quantile, so its percentiles differ from tokentime's per-request ones (the token-weighted view is in --explain)".into(),
        cache_doc: "none".into(),
        fields: vec![
            rule(Field::Arrival, Unit::EpochS, &["info.timings.request_start", "start_time"]),
            rule(Field::FirstToken, Unit::EpochS, &["info.timings.first_token_iteration", "first_token_time"]),
            rule(Field::End, Unit::EpochS, &["info.timings.last_token_iteration", "last_token_time"]),
            rule(Field::OutputTokens, Unit::Count, &["output_tokens", "output_metrics.text_tokens"]),
            rule(Field::InputTokens, Unit::Count, &["prompt_tokens", "input_metrics.text_tokens"]),
        ],
        error_when: vec![Cond::Equals(p("$parent"), "\"errored\"".into())],
        cancelled_when: vec![Cond::Equals(p("$parent"), "\"incomplete\"".into())],
        id_paths: vec![p("request_id")],
        // guidellm 0.5 writes the run's arguments at the top (the model of every request) and
        // each benchmark's `config` (its strategy: `--by config.strategy.type_`); 0.3 writes
        // each benchmark's `args` (its strategy and rate) and `worker` (the model) in the
        // benchmark.
        record_carry: vec!["args".into(), "config".into(), "worker".into()],
        model_paths: vec![p("args.model"), p("worker.backend_model")],
        reason_paths: vec![crate::format::p("error"), crate::format::p("info.error"), crate::format::p("response.error")],
        ..FormatSpec::default()
    }
}
