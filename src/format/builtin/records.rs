//! Built-in formats whose one line (or document) holds many requests: OTLP trace exports and
//! benchmark result files (FORMATS.md sections 2c, 2d, 6; realdata/README.md). Each is data:
//! line markers, where the records are, and the fields of one record.

use crate::format::units::Unit;
use crate::format::{
    Combine, Cond, Field, FormatSpec, JoinSpec, RecordSource, RecordWindow, p, rule,
};
use crate::metrics::Origin;

/// The formats of this module, in detection order.
pub(crate) fn tables() -> Vec<FormatSpec> {
    vec![
        vllm_otlp(),
        otlp(),
        vllm_bench(),
        llmperf(),
        guidellm(),
        ollama(),
        llamacpp_log(),
        sglang_log(),
    ]
}

/// Ollama `/api/chat` and `/api/generate` responses: one final object (`done: true`) or an
/// NDJSON stream of chunks ending in one (FORMATS.md section 4). Durations are integer ns.
/// A stream's chunks carry no id: they are joined by model, in order.
fn ollama() -> FormatSpec {
    let mut decode = rule(Field::Decode, Unit::Ns, &["eval_duration"]);
    decode.combine = Combine::FirstOrZero;
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
        }),
        arrival_origin: Origin::Arrival,
        ttft_doc: "arrival: first chunk created_at - (final created_at - total_duration); a single response: load_duration + prompt_eval_duration".into(),
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
        ..FormatSpec::default()
    }
}

/// llama.cpp's legacy `--log-format json` (removed upstream in late 2024): three
/// `print_timings` lines per task, joined by slot and task id in either spelling.
fn llamacpp_log() -> FormatSpec {
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

fn spans() -> RecordSource {
    RecordSource::Each(vec![p("resourceSpans.*.scopeSpans.*.spans.*")])
}

/// A rule whose paths are OTLP attribute names (which contain dots).
fn attr_rule(field: Field, unit: Unit, names: &[&str]) -> crate::format::FieldRule {
    let mut r = rule(field, unit, &[]);
    r.paths = names
        .iter()
        .map(|n| vec!["attributes".to_owned(), (*n).to_owned()])
        .collect();
    r
}

fn attr_present(name: &str) -> Cond {
    Cond::Present(vec!["attributes".to_owned(), name.to_owned()])
}

/// vLLM's `llm_request` spans (`--otlp-traces-endpoint`, OTLP/JSON as a collector's file
/// exporter writes it): `gen_ai.latency.*` in seconds, TTFT from arrival.
fn vllm_otlp() -> FormatSpec {
    FormatSpec {
        name: "vllm-otlp".into(),
        about: "vLLM llm_request spans in OTLP/JSON trace lines (gen_ai.latency.* attributes)"
            .into(),
        markers: vec![Cond::Present(p("resourceSpans"))],
        records: Some(spans()),
        record_markers: vec![attr_present("gen_ai.latency.e2e")],
        arrival_origin: Origin::Arrival,
        ttft_doc: "arrival: gen_ai.latency.time_to_first_token (queue included)".into(),
        cache_doc: "none emitted by vLLM (gen_ai.usage.cached_tokens read if present)".into(),
        fields: vec![
            rule(Field::Arrival, Unit::EpochNs, &["startTimeUnixNano"]),
            rule(Field::End, Unit::EpochNs, &["endTimeUnixNano"]),
            attr_rule(
                Field::Ttft,
                Unit::S,
                &["gen_ai.latency.time_to_first_token"],
            ),
            attr_rule(Field::Queue, Unit::S, &["gen_ai.latency.time_in_queue"]),
            attr_rule(
                Field::Prefill,
                Unit::S,
                &["gen_ai.latency.time_in_model_prefill"],
            ),
            attr_rule(
                Field::Decode,
                Unit::S,
                &["gen_ai.latency.time_in_model_decode"],
            ),
            attr_rule(Field::E2e, Unit::S, &["gen_ai.latency.e2e"]),
            attr_rule(
                Field::InputTokens,
                Unit::Count,
                &["gen_ai.usage.prompt_tokens", "gen_ai.usage.input_tokens"],
            ),
            attr_rule(
                Field::OutputTokens,
                Unit::Count,
                &[
                    "gen_ai.usage.completion_tokens",
                    "gen_ai.usage.output_tokens",
                ],
            ),
            attr_rule(
                Field::CachedTokens,
                Unit::Count,
                &["gen_ai.usage.cached_tokens"],
            ),
        ],
        error_when: vec![Cond::Equals(p("status.code"), "2".into())],
        // A failed request's span need not carry the latency attributes: its name and error
        // status make it one (counted as an error, not dropped as a non-request span).
        error_markers: vec![
            Cond::Equals(p("name"), "\"llm_request\"".into()),
            Cond::Equals(p("status.code"), "2".into()),
        ],
        id_paths: vec![vec!["attributes".into(), "gen_ai.request.id".into()]],
        model_paths: vec![vec!["attributes".into(), "gen_ai.response.model".into()]],
        ..FormatSpec::default()
    }
}

/// OpenTelemetry GenAI inference spans (semantic conventions, with the OpenLIT, OpenLLMetry
/// and Sentry aliases of FORMATS.md section 6).
fn otlp() -> FormatSpec {
    FormatSpec {
        name: "otlp".into(),
        about: "OpenTelemetry GenAI spans in OTLP/JSON trace lines (semconv, OpenLIT, OpenLLMetry aliases)".into(),
        markers: vec![Cond::Present(p("resourceSpans"))],
        records: Some(spans()),
        record_markers: vec![attr_present("gen_ai.request.model")],
        arrival_origin: Origin::Gateway,
        ttft_doc: "gateway (client span): gen_ai.response.time_to_first_chunk, gen_ai.server.time_to_first_token".into(),
        cache_doc: "gen_ai.usage.cache_read.input_tokens and aliases (included in input_tokens)".into(),
        fields: vec![
            rule(Field::Arrival, Unit::EpochNs, &["startTimeUnixNano"]),
            rule(Field::End, Unit::EpochNs, &["endTimeUnixNano"]),
            attr_rule(
                Field::Ttft,
                Unit::S,
                &[
                    "gen_ai.response.time_to_first_chunk",
                    "gen_ai.server.time_to_first_token",
                    "gen_ai.server.ttft",
                    "gen_ai.latency.time_to_first_token",
                ],
            ),
            attr_rule(
                Field::InputTokens,
                Unit::Count,
                &["gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt"],
            ),
            attr_rule(
                Field::OutputTokens,
                Unit::Count,
                &["gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion"],
            ),
            attr_rule(
                Field::CachedTokens,
                Unit::Count,
                &[
                    "gen_ai.usage.cache_read.input_tokens",
                    "gen_ai.usage.cache_read_input_tokens",
                    "llm.usage.cache_read_input_tokens",
                    "gen_ai.usage.input_tokens_details.cached",
                    "gen_ai.usage.input_tokens.cached",
                    "gen_ai.usage.cached_tokens",
                ],
            ),
        ],
        error_when: vec![Cond::Equals(p("status.code"), "2".into())],
        id_paths: vec![vec!["attributes".into(), "gen_ai.response.id".into()], p("spanId")],
        model_paths: vec![
            vec!["attributes".into(), "gen_ai.response.model".into()],
            vec!["attributes".into(), "gen_ai.request.model".into()],
        ],
        ..FormatSpec::default()
    }
}

/// `vllm bench serve` / `benchmark_serving.py --save-result --save-detailed` result files: one
/// object per run with parallel per-request arrays (FORMATS.md 2d).
fn vllm_bench() -> FormatSpec {
    FormatSpec {
        name: "vllm-bench".into(),
        about: "vLLM benchmark result (ttfts/itls/output_lens arrays, one request per element)"
            .into(),
        markers: vec![Cond::Present(p("ttfts")), Cond::Present(p("itls"))],
        records: Some(RecordSource::Columns(
            ["ttfts", "itls", "output_lens", "input_lens", "errors"]
                .map(String::from)
                .to_vec(),
        )),
        record_markers: vec![Cond::Present(p("ttfts"))],
        record_carry: vec!["model_id".into()],
        model_paths: vec![p("model_id")],
        arrival_origin: Origin::Gateway,
        ttft_doc: "gateway (benchmark client): ttfts[i]; decode = sum(itls[i])".into(),
        cache_doc: "none".into(),
        fields: vec![
            rule(Field::Ttft, Unit::S, &["ttfts"]),
            rule(Field::Itl, Unit::S, &["itls"]),
            rule(Field::OutputTokens, Unit::Count, &["output_lens"]),
            rule(Field::InputTokens, Unit::Count, &["input_lens"]),
        ],
        error_when: vec![Cond::Differs(p("errors"), "\"\"".into())],
        ..FormatSpec::default()
    }
}

/// Ray LLMPerf `*_individual_responses.json`: a JSON array of per-request objects, read element
/// by element.
fn llmperf() -> FormatSpec {
    FormatSpec {
        name: "llmperf".into(),
        about: "LLMPerf individual_responses.json (a JSON array, streamed element by element)"
            .into(),
        markers: vec![
            Cond::Present(p("end_to_end_latency_s")),
            Cond::Present(p("inter_token_latency_s")),
        ],
        arrival_origin: Origin::Gateway,
        ttft_doc: "gateway (benchmark client): ttft_s".into(),
        cache_doc: "none".into(),
        fields: vec![
            rule(Field::Ttft, Unit::S, &["ttft_s"]),
            rule(Field::E2e, Unit::S, &["end_to_end_latency_s"]),
            rule(Field::OutputTokens, Unit::Count, &["number_output_tokens"]),
            rule(Field::InputTokens, Unit::Count, &["number_input_tokens"]),
        ],
        error_when: vec![Cond::Present(p("error_code"))],
        ..FormatSpec::default()
    }
}

/// guidellm benchmark reports (`benchmarks.json`): per-request records under
/// `benchmarks[].requests.{successful,errored,incomplete}[]`, only those overlapping the
/// benchmark's measurement window.
fn guidellm() -> FormatSpec {
    FormatSpec {
        name: "guidellm".into(),
        about: "guidellm benchmark report: requests.successful/errored/incomplete records in the measurement window".into(),
        markers: vec![Cond::Present(p("benchmarks"))],
        records: Some(RecordSource::Each(vec![
            p("benchmarks.*.requests.successful.*"),
            p("benchmarks.*.requests.errored.*"),
            p("benchmarks.*.requests.incomplete.*"),
        ])),
        record_markers: vec![Cond::Present(p("prompt_tokens"))],
        record_window: Some(RecordWindow {
            start: p("scheduler_metrics.measure_start_time"),
            end: p("scheduler_metrics.measure_end_time"),
            record_start: p("info.timings.request_start"),
            record_end: p("info.timings.request_end"),
        }),
        arrival_origin: Origin::Gateway,
        ttft_doc: "gateway (benchmark client): first_token_iteration - request_start".into(),
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
        ..FormatSpec::default()
    }
}

/// SGLang's request log (`--log-requests --log-requests-format json`): a `request.received`
/// and a `request.finished` event per request, joined by `rid` (FORMATS.md section 8c; the
/// envelope's time key is inferred: `timestamp`, or `time`, in any epoch or RFC 3339 form).
fn sglang_log() -> FormatSpec {
    FormatSpec {
        name: "sglang-log".into(),
        about: "SGLang --log-requests-format json: request.received and request.finished events joined by rid".into(),
        markers: vec![Cond::Present(p("rid")), Cond::Present(p("event"))],
        join: Some(JoinSpec {
            key: vec![vec![p("rid")]],
            complete_when: vec![Cond::Equals(p("event"), "\"request.finished\"".into())],
            part_fields: vec![
                rule(Field::Arrival, Unit::EpochAuto, &["timestamp", "time"]),
                rule(Field::LoggedAt, Unit::EpochAuto, &["timestamp", "time"]),
            ],
            parts_required: false,
            standalone_when: vec![],
        }),
        arrival_origin: Origin::Arrival,
        ttft_doc: "none: SGLang's request log has no first-token time (E2E from e2e_latency, or received -> finished)".into(),
        cache_doc: "out.meta_info.cached_tokens".into(),
        fields: vec![
            rule(Field::Arrival, Unit::EpochS, &["out.meta_info.request_received_ts"]),
            rule(Field::End, Unit::EpochS, &["out.meta_info.request_finished_ts"]),
            rule(Field::End, Unit::EpochAuto, &["timestamp", "time"]),
            rule(Field::E2e, Unit::S, &["out.meta_info.e2e_latency"]),
            rule(Field::InputTokens, Unit::Count, &["out.meta_info.prompt_tokens"]),
            rule(Field::CachedTokens, Unit::Count, &["out.meta_info.cached_tokens"]),
            rule(Field::OutputTokens, Unit::Count, &["out.meta_info.completion_tokens"]),
        ],
        cancelled_when: vec![Cond::Equals(p("out.meta_info.finish_reason.type"), "\"abort\"".into())],
        id_paths: vec![p("rid")],
        ..FormatSpec::default()
    }
}
