//! One rule set applied to every format: each test states one rule and checks it on every
//! format where the case can occur, with a hand-made line per format built from that format's
//! testdata sample (`testdata/formats/`, `testdata/samples/`, `testdata/loadtest/`).

use crate::common::*;
use serde_json::Value;

/// The spliced metrics of the request(s) in `input` read as `format`: one object per request.
fn requests(format: &str, input: &str) -> Vec<Value> {
    let out = run_ok(&["--format", format, "--threads", "1"], input.as_bytes());
    let mut all = vec![];
    for l in lines_with_endings(&out) {
        let Some((_, o)) = unsplice(l, "tokentime") else {
            continue;
        };
        match serde_json::from_str(&o).unwrap() {
            Value::Array(v) => all.extend(v),
            v => all.push(v),
        }
    }
    all
}

/// The one request in `input`.
fn one(format: &str, input: &str) -> Value {
    let mut v = requests(format, input);
    assert_eq!(v.len(), 1, "{format}: one request expected in {input}");
    v.remove(0)
}

/// The summary's JSON coverage of `input` read as `format`.
fn coverage(format: &str, input: &str) -> Value {
    let out = run_ok(
        &["summary", "--format", format, "-o", "json"],
        input.as_bytes(),
    );
    let v: Value = serde_json::from_slice(&out).unwrap();
    v["coverage"].clone()
}

/// Collects every failure of a rule across formats, then fails once with all of them.
#[derive(Default)]
struct Failures(Vec<String>);

impl Failures {
    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            self.0.push(what());
        }
    }

    fn done(self) {
        assert!(self.0.is_empty(), "\n{}", self.0.join("\n"));
    }
}

/// Rule: a duration the producer logged wins over the one its instants give (E2E, TTFT); when
/// both exist and differ by more than 1 ms the logged one is used and the request is counted
/// under `anomalies.duration_mismatch`. Every line logs instants 1000 ms apart (first token at
/// 200 ms) and an E2E of 1100 ms (and, where logged, a TTFT of 300 ms).
#[test]
fn a_logged_duration_wins_over_its_instants() {
    let cases: &[(&str, &str, Option<f64>)] = &[
        (
            "helicone",
            r#"{"request_id":"h1","request_created_at":"2025-03-14T10:05:00.000Z","response_created_at":"2025-03-14T10:05:01.000Z","response_status":200,"delay_ms":1100,"time_to_first_token":300,"total_tokens":68,"prompt_tokens":57,"completion_tokens":11,"prompt_cache_read_tokens":0,"cache_reference_id":"00000000-0000-0000-0000-000000000000","model":"m"}"#,
            Some(300.0),
        ),
        (
            "langfuse",
            r#"{"id":"o1","traceId":"t1","type":"GENERATION","startTime":"2025-03-14T10:05:00.000Z","completionStartTime":"2025-03-14T10:05:00.200Z","endTime":"2025-03-14T10:05:01.000Z","model":"m","usage":{"input":57,"output":11,"total":68},"level":"DEFAULT","latency":1.1,"timeToFirstToken":0.3}"#,
            Some(300.0),
        ),
        (
            "llm-load-test",
            r#"{"results":[{"user_id":0,"input_tokens":10,"output_tokens":11,"start_time":1735900000.0,"first_token_time":1735900000.2,"end_time":1735900001.0,"response_time":1100.0,"ttft":300.0,"error_code":null,"error_text":null}],"config":{},"summary":{}}"#,
            Some(300.0),
        ),
        (
            "llm-load-test-2023",
            r#"{"results":[{"worker_id":0,"input_tokens":10,"output_tokens":11,"start":1735900000.0,"end":1735900001.0,"TTFT":300.0,"response_time":1.1}],"config":{},"summary":{}}"#,
            Some(300.0),
        ),
        (
            "sglang",
            r#"{"request_parameters":"{}","id":"s1","finish_reason":{"type":"stop"},"prompt_tokens":10,"completion_tokens":11,"cached_tokens":0,"e2e_latency":1.1,"request_received_ts":1741946580.0,"request_finished_ts":1741946581.0}"#,
            None,
        ),
        (
            "sglang-log",
            concat!(
                r#"{"timestamp":"2025-03-14T10:02:11.000Z","event":"request.received","rid":"r1","obj":{"text":"p"}}"#,
                "\n",
                r#"{"timestamp":"2025-03-14T10:02:12.000Z","event":"request.finished","rid":"r1","obj":{"text":"p"},"out":{"text":"c","meta_info":{"id":"r1","prompt_tokens":57,"completion_tokens":11,"cached_tokens":0,"e2e_latency":1.1,"finish_reason":{"type":"stop"}}}}"#
            ),
            None,
        ),
        (
            "vllm-otlp",
            r#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","name":"llm_request","kind":2,"startTimeUnixNano":"1741946600000000000","endTimeUnixNano":"1741946601000000000","attributes":[{"key":"gen_ai.latency.time_to_first_token","value":{"doubleValue":0.3}},{"key":"gen_ai.latency.e2e","value":{"doubleValue":1.1}},{"key":"gen_ai.usage.prompt_tokens","value":{"intValue":"10"}},{"key":"gen_ai.usage.completion_tokens","value":{"intValue":"11"}},{"key":"gen_ai.request.id","value":{"stringValue":"c1"}}],"status":{"code":0}}]}]}]}"#,
            Some(300.0),
        ),
    ];
    let mut f = Failures::default();
    for &(format, line, ttft) in cases {
        let input = format!("{line}\n");
        let m = one(format, &input);
        f.check(m["e2e_ms"] == 1100.0, || {
            format!(
                "{format}: e2e_ms {} (the logged 1100 expected)",
                m["e2e_ms"]
            )
        });
        if let Some(ttft) = ttft {
            f.check(m["ttft_ms"] == ttft, || {
                format!(
                    "{format}: ttft_ms {} (the logged {ttft} expected)",
                    m["ttft_ms"]
                )
            });
        }
        let c = coverage(format, &input);
        f.check(c["anomalies"]["duration_mismatch"] == 1, || {
            format!(
                "{format}: anomalies {} (duration_mismatch 1 expected)",
                c["anomalies"]
            )
        });
        // Within a millisecond the two agree: no anomaly.
        let close = input
            .replace("1100", "1000.4")
            .replace("1.1,", "1.0004,")
            .replace("1.1}", "1.0004}");
        let close = close
            .replace("\"time_to_first_token\":300", "\"time_to_first_token\":200")
            .replace("0.3,", "0.2,")
            .replace("0.3}", "0.2}")
            .replace("300.0", "200.0");
        let c = coverage(format, &close);
        f.check(
            c["anomalies"]["duration_mismatch"].as_u64().unwrap_or(0) == 0,
            || {
                format!(
                    "{format}: within 1 ms counted as a mismatch: {}",
                    c["anomalies"]
                )
            },
        );
    }
    f.done();
}

/// Rule: an absent field is unknown (null, `not_logged`), never 0. Each line is a format's
/// response with its decode duration left out (one output token, and eleven): the decode and
/// the TPOT are null, `not_logged`, never a 0 ms decode.
#[test]
fn an_absent_duration_is_unknown_never_zero() {
    let cases: &[(&str, &str)] = &[
        (
            "ollama",
            r#"{"model":"gemma3:12b","created_at":"2025-03-14T10:06:00.5Z","message":{"role":"assistant","content":"c"},"done":true,"done_reason":"stop","total_duration":1500000000,"load_duration":10000000,"prompt_eval_count":2048,"prompt_eval_duration":490000000,"eval_count":N}"#,
        ),
        (
            "llamacpp",
            r#"{"choices":[{"finish_reason":"stop","index":0,"message":{"role":"assistant","content":"c"}}],"created":1741946600,"model":"m","object":"chat.completion","usage":{"completion_tokens":N,"prompt_tokens":68,"total_tokens":93},"id":"c1","timings":{"cache_n":60,"prompt_n":8,"prompt_ms":43.237,"predicted_n":N}}"#,
        ),
        (
            "vllm",
            r#"{"id":"c1","object":"chat.completion","created":1741946531,"model":"m","choices":[{"index":0,"finish_reason":"stop"}],"usage":{"prompt_tokens":1843,"total_tokens":1971,"completion_tokens":N},"metrics":{"time_to_first_token_ms":21.7,"queue_time_ms":0.4}}"#,
        ),
        (
            "llamacpp-log",
            concat!(
                r#"{"tid":"1","timestamp":1714489700,"level":"INFO","function":"print_timings","msg":"prompt","id_slot":1,"id_task":9,"t_prompt_processing":50.0,"n_prompt_tokens_processed":10}"#,
                "\n",
                r#"{"tid":"1","timestamp":1714489700,"level":"INFO","function":"print_timings","msg":"generation","id_slot":1,"id_task":9,"n_decoded":N}"#,
                "\n",
                r#"{"tid":"1","timestamp":1714489700,"level":"INFO","function":"print_timings","msg":"total","id_slot":1,"id_task":9,"t_prompt_processing":50.0,"t_total":200.0}"#
            ),
        ),
        (
            "nim",
            r#"{"id":"c1","object":"chat.completion","created":1741946531,"model":"m","usage":{"prompt_tokens":10,"completion_tokens":N},"stats":{"type":"NIM LLM Model Stats","time_in_queue_in_ms":1.0,"llm_input_token_length":10,"llm_output_token_length":N,"response_tokens":{"time_to_first_token_in_ms":30.0}}}"#,
        ),
    ];
    let mut f = Failures::default();
    for &(format, line) in cases {
        for n in ["1", "11"] {
            let input = format!("{}\n", line.replace(":N", &format!(":{n}")));
            let m = one(format, &input);
            for metric in ["decode_ms", "tpot_ms"] {
                f.check(m[metric] != 0.0, || {
                    format!("{format} ({n} tokens): {metric} 0 from an absent field: {m}")
                });
            }
            // Derived from other logged durations (E2E - TTFT) it may be a number; null, it
            // is null for want of the field.
            f.check(
                m["decode_ms"].is_number() || m["nulls"]["decode_ms"] == "not_logged",
                || {
                    format!(
                        "{format} ({n} tokens): decode_ms {} ({}), not_logged expected",
                        m["decode_ms"], m["nulls"]["decode_ms"]
                    )
                },
            );
        }
    }
    // Ollama's TTFT of a single response is load + prompt eval: a part left out is no 0.
    let line = r#"{"model":"gemma3:12b","created_at":"2025-03-14T10:06:00.5Z","message":{"role":"assistant","content":"c"},"done":true,"done_reason":"stop","total_duration":1500000000,"load_duration":10000000,"prompt_eval_count":2048,"eval_count":51,"eval_duration":1000000000}"#;
    let m = one("ollama", &format!("{line}\n"));
    f.check(m["nulls"]["ttft_ms"] == "not_logged", || {
        format!(
            "ollama: ttft_ms {} without prompt_eval_duration",
            m["ttft_ms"]
        )
    });
    f.done();
}

/// Rule: cancellations and client disconnects, in every form producers log them, make the
/// outcome `cancelled`; the TTFT stays when the first token came; decode, TPOT and E2E are
/// null (`cancelled`). Timeouts are errors.
#[test]
fn cancellations_in_every_spelling() {
    // (format, line, whether the format logs a TTFT)
    let cases: &[(&str, &str, bool)] = &[
        // An abort finish reason.
        (
            "sglang",
            r#"{"request_parameters":"{}","id":"s1","finish_reason":{"type":"abort","message":"Abort request"},"prompt_tokens":900,"completion_tokens":40,"cached_tokens":768,"e2e_latency":0.6123,"request_received_ts":1741946580.0001,"request_finished_ts":1741946580.6124}"#,
            false,
        ),
        (
            "vllm-stats",
            r#"{"request_id":"c1","finish_reason":"abort","e2e_latency":0.918,"num_prompt_tokens":512,"num_generation_tokens":40,"queued_time":0.008,"prefill_time":0.085,"decode_time":0.819,"arrival_time":1735900100.0,"first_token_latency":0.099}"#,
            true,
        ),
        // A cancelled status or flag.
        (
            "aiperf",
            r#"{"metadata":{"x_request_id":"a1","request_start_ns":1759813207000000000,"record_processor_id":"rp","benchmark_phase":"profiling","was_cancelled":true,"cancellation_time_ns":1759813207900000000},"metrics":{"input_sequence_length":{"value":550,"unit":"tokens"},"time_to_first_token":{"value":255.9,"unit":"ms"},"request_latency":{"value":900.0,"unit":"ms"},"output_sequence_length":{"value":20,"unit":"tokens"}},"error":null}"#,
            true,
        ),
        (
            "openai-responses-usage",
            r#"{"id":"resp_1","object":"response","created_at":1741946600,"status":"cancelled","model":"m","usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":0},"output_tokens":5}}"#,
            false,
        ),
        // A cancellation time alone (AIPerf's metadata.cancellation_time_ns).
        (
            "aiperf",
            r#"{"metadata":{"x_request_id":"a2","request_start_ns":1759813207000000000,"record_processor_id":"rp","benchmark_phase":"profiling","cancellation_time_ns":1759813207900000000},"metrics":{"input_sequence_length":{"value":550,"unit":"tokens"},"time_to_first_token":{"value":255.9,"unit":"ms"},"request_latency":{"value":900.0,"unit":"ms"},"output_sequence_length":{"value":20,"unit":"tokens"}},"error":null}"#,
            true,
        ),
        // HTTP 499 (the client closed the request).
        (
            "kong",
            r#"{"started_at":1741946600100,"request":{"id":"k1"},"response":{"status":499},"latencies":{"request":1210,"kong":8,"proxy":1198},"ai":{"proxy":{"usage":{"prompt_tokens":812,"completion_tokens":64,"time_to_first_token":250},"meta":{"request_model":"m","llm_latency":1198,"request_mode":"stream"}}}}"#,
            true,
        ),
        (
            "helicone",
            r#"{"request_id":"h1","request_created_at":"2025-03-14T10:05:00.000Z","response_created_at":"2025-03-14T10:05:01.000Z","response_status":499,"delay_ms":1000,"time_to_first_token":200,"total_tokens":68,"prompt_tokens":57,"completion_tokens":11,"prompt_cache_read_tokens":0,"cache_reference_id":"00000000-0000-0000-0000-000000000000","model":"m"}"#,
            true,
        ),
        (
            "llm-load-test",
            r#"{"results":[{"user_id":0,"input_tokens":10,"output_tokens":11,"start_time":1735900000.0,"first_token_time":1735900000.2,"end_time":1735900001.0,"response_time":1000.0,"ttft":200.0,"error_code":499,"error_text":"client closed request"}],"config":{},"summary":{}}"#,
            true,
        ),
        (
            "llmperf",
            r#"{"error_code":499,"error_msg":"client closed request","inter_token_latency_s":0.02,"ttft_s":0.2,"end_to_end_latency_s":1.0,"number_input_tokens":10,"number_output_tokens":11}"#,
            true,
        ),
        // A success status whose error text says the client disconnected (LiteLLM).
        (
            "litellm",
            r#"{"id":"l1","call_type":"anthropic_messages","stream":true,"status":"success","error_str":"Client disconnected the request","startTime":1741946531.0,"completionStartTime":1741946531.2,"endTime":1741946532.2,"prompt_tokens":45,"completion_tokens":35}"#,
            true,
        ),
        // An incomplete request of a benchmark run.
        (
            "guidellm",
            r#"{"benchmarks":[{"requests":{"successful":[],"errored":[],"incomplete":[{"request_id":"g1","prompt_tokens":10,"output_tokens":5,"info":{"timings":{"request_start":1741946531.0,"first_token_iteration":1741946531.2,"last_token_iteration":1741946531.5,"request_end":1741946531.5}}}]}}]}"#,
            true,
        ),
    ];
    let mut f = Failures::default();
    for &(format, line, logs_ttft) in cases {
        let m = one(format, &format!("{line}\n"));
        f.check(m["outcome"] == "cancelled", || {
            format!(
                "{format}: outcome {} (cancelled expected): {line}",
                m["outcome"]
            )
        });
        if logs_ttft {
            f.check(m["ttft_ms"].is_number(), || {
                format!("{format}: the TTFT of a cancelled request is kept: {m}")
            });
        }
        for metric in ["decode_ms", "tpot_ms", "e2e_ms"] {
            f.check(m["nulls"][metric] == "cancelled", || {
                format!(
                    "{format}: {metric} {} (null, cancelled expected)",
                    m[metric]
                )
            });
        }
    }
    f.done();
}

/// Rule (the other side of cancellations): a timeout is an error, not a cancellation, in the
/// formats that also log cancellations.
#[test]
fn timeouts_are_errors() {
    let mut f = Failures::default();
    let timeouts: &[(&str, &str)] = &[
        (
            "aiperf",
            r#"{"metadata":{"x_request_id":"a3","request_start_ns":1759813207000000000,"record_processor_id":"rp","benchmark_phase":"profiling"},"metrics":{"error_isl":{"value":550,"unit":"tokens"}},"error":{"code":408,"type":"TimeoutError","message":"Request timed out"}}"#,
        ),
        (
            "kong",
            r#"{"started_at":1741946600100,"request":{"id":"k2"},"response":{"status":504},"latencies":{"request":60000,"kong":8,"proxy":60000},"ai":{"proxy":{"usage":{},"meta":{"request_model":"m","llm_latency":60000}}}}"#,
        ),
        (
            "litellm",
            r#"{"id":"l2","call_type":"acompletion","stream":true,"status":"failure","error_str":"litellm.Timeout: Request timed out","startTime":1741946531.0,"completionStartTime":null,"endTime":1741946591.0,"prompt_tokens":45,"completion_tokens":0}"#,
        ),
    ];
    for &(format, line) in timeouts {
        let m = one(format, &format!("{line}\n"));
        f.check(m["outcome"] == "error", || {
            format!(
                "{format}: a timeout's outcome {} (error expected)",
                m["outcome"]
            )
        });
    }
    f.done();
}

/// Rule: where a log separates them, the time to the first token of any kind (TTFT, a reasoning
/// model's first reasoning token) and the time to the first answer token (`ttfot_ms`, time to
/// first output token) are both reported: per request and in the summary. Where a log does not
/// separate them, `ttfot_ms` is absent from every output (no member, no row), so such output
/// is as it was. Each line logs a TTFT of 120 ms and an answer 900 ms after arrival.
#[test]
fn reasoning_ttft_and_time_to_first_output_token() {
    let mut f = Failures::default();
    for (format, line) in [
        (
            "aiperf",
            r#"{"metadata":{"x_request_id":"a1","request_start_ns":1759813207000000000,"record_processor_id":"rp","benchmark_phase":"profiling"},"metrics":{"input_sequence_length":{"value":550,"unit":"tokens"},"time_to_first_token":{"value":120.0,"unit":"ms"},"time_to_first_output_token":{"value":900.0,"unit":"ms"},"request_latency":{"value":2000.0,"unit":"ms"},"output_sequence_length":{"value":200,"unit":"tokens"}},"error":null}"#,
        ),
        // AIPerf's earlier tag of the same metric.
        (
            "aiperf",
            r#"{"metadata":{"x_request_id":"a2","request_start_ns":1759813207000000000,"record_processor_id":"rp","benchmark_phase":"profiling"},"metrics":{"input_sequence_length":{"value":550,"unit":"tokens"},"time_to_first_token":{"value":120.0,"unit":"ms"},"time_to_first_output":{"value":900.0,"unit":"ms"},"request_latency":{"value":2000.0,"unit":"ms"},"output_sequence_length":{"value":200,"unit":"tokens"}},"error":null}"#,
        ),
    ] {
        let r = one(format, line);
        f.check(r["ttft_ms"] == 120.0 && r["ttfot_ms"] == 900.0, || {
            format!("{format}: ttft_ms 120 and ttfot_ms 900 expected: {r}")
        });
        let out = run_ok(
            &["summary", "--format", format, "-o", "json"],
            line.as_bytes(),
        );
        let s: Value = serde_json::from_slice(&out).unwrap();
        let m = &s["groups"][0]["metrics"];
        f.check(
            m["ttfot_ms"]["count"] == 1 && m["ttft_ms"]["count"] == 1,
            || format!("{format}: summary ttfot_ms and ttft_ms expected: {m}"),
        );
        // Without it: no member anywhere.
        let without = line
            .replace("time_to_first_output", "x")
            .replace("\"content\":", "\"x\":");
        let r = one(format, &without);
        f.check(r.get("ttfot_ms").is_none(), || {
            format!("{format}: no ttfot_ms member expected without it: {r}")
        });
        let out = run_ok(
            &["summary", "--format", format, "-o", "json"],
            without.as_bytes(),
        );
        let s: Value = serde_json::from_slice(&out).unwrap();
        f.check(s["groups"][0]["metrics"].get("ttfot_ms").is_none(), || {
            format!("{format}: no summary ttfot_ms expected without it")
        });
    }
    // vLLM's per-type split: the content TTFT's origin is not documented, so no time to first
    // output token is made from it (never a guess).
    let vllm = r#"{"id":"c1","object":"chat.completion","created":1741946531,"model":"m","choices":[{"index":0,"finish_reason":"stop"}],"usage":{"prompt_tokens":1843,"total_tokens":2043,"completion_tokens":200},"metrics":{"time_to_first_token_ms":100.0,"queue_time_ms":20.0,"generation_time_ms":1880.0,"output_token_metrics":{"reasoning":{"token_count":150,"time_to_first_token_ms":100.0},"content":{"token_count":50,"time_to_first_token_ms":880.0}}}}"#;
    let r = one("vllm", vllm);
    f.check(r["ttft_ms"] == 120.0 && r.get("ttfot_ms").is_none(), || {
        format!("vllm: ttft_ms 120 and no ttfot_ms expected: {r}")
    });
    f.done();
}

/// Rule: where one chunk carries several tokens, the gaps a producer logs between chunks are
/// chunk gaps, not per-token ITLs: every format whose `itl_ms` comes from such gaps says so
/// in `tokentime formats`, and the per-token figure stays `tpot_ms`.
#[test]
fn itl_of_chunk_gaps_is_labelled_chunk_gaps() {
    let mut f = Failures::default();
    for format in ["aiperf", "vllm-bench", "sglang-bench"] {
        let out = run_ok(&["formats", format], b"");
        let text = String::from_utf8_lossy(&out);
        f.check(text.contains("  itl_ms: chunk gaps ("), || {
            format!("{format}: `itl_ms: chunk gaps` expected in:\n{text}")
        });
    }
    f.done();
}

/// An OTLP export line holding an instrumented client's span (OpenLLMetry's `openai.chat`,
/// kind CLIENT, read as `otlp`) and, below it in the same trace, vLLM's `llm_request` span of
/// the same request (kind SERVER, read as `vllm-otlp`): vLLM takes the trace context from the
/// request's `traceparent` header, so its span's parent is the client's (or an HTTP span
/// between them). Made from the producers' source (vLLM's `vllm/tracing.py`, OpenLLMetry's
/// OpenAI instrumentation): `CLIENT`, `HTTP` and `SERVER` are replaced by the resource spans
/// below.
const TRACE: &str = r#"{"resourceSpans":[CLIENT,SERVER]}"#;
const CLIENT: &str = r#"{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"chat-app"}}]},"scopeSpans":[{"scope":{"name":"opentelemetry.instrumentation.openai.v1"},"spans":[{"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"a1b2c3d4e5f60718","parentSpanId":"","name":"openai.chat","kind":3,"startTimeUnixNano":"1741946531000000000","endTimeUnixNano":"1741946532300000000","attributes":[{"key":"gen_ai.system","value":{"stringValue":"openai"}},{"key":"gen_ai.request.model","value":{"stringValue":"meta-llama/Llama-3.1-8B-Instruct"}},{"key":"gen_ai.response.id","value":{"stringValue":"chatcmpl-7f3c"}},{"key":"gen_ai.usage.prompt_tokens","value":{"intValue":"1843"}},{"key":"gen_ai.usage.completion_tokens","value":{"intValue":"128"}}],"status":{}}HTTP]}]}"#;
const HTTP: &str = r#",{"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"0102030405060708","parentSpanId":"a1b2c3d4e5f60718","name":"POST","kind":3,"startTimeUnixNano":"1741946531001000000","endTimeUnixNano":"1741946532299000000","attributes":[{"key":"http.request.method","value":{"stringValue":"POST"}}],"status":{}}"#;
const SERVER: &str = r#"{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"vllm"}}]},"scopeSpans":[{"scope":{"name":"vllm.llm_engine"},"spans":[{"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"00f067aa0ba902b7","parentSpanId":"a1b2c3d4e5f60718","name":"llm_request","kind":2,"startTimeUnixNano":"1741946531018273536","endTimeUnixNano":"1741946532247388880","attributes":[{"key":"gen_ai.response.model","value":{"stringValue":"meta-llama/Llama-3.1-8B-Instruct"}},{"key":"gen_ai.latency.time_to_first_token","value":{"doubleValue":0.034}},{"key":"gen_ai.latency.e2e","value":{"doubleValue":1.229}},{"key":"gen_ai.usage.prompt_tokens","value":{"intValue":"1843"}},{"key":"gen_ai.usage.completion_tokens","value":{"intValue":"128"}},{"key":"gen_ai.request.id","value":{"stringValue":"chatcmpl-7f3c"}}],"status":{}}]}]}"#;

/// The JSON summary of `input` (auto-detected formats) with `args` added.
fn summary_json(args: &[&str], input: &str) -> Value {
    let mut a = vec!["summary", "-o", "json"];
    a.extend(args);
    serde_json::from_slice(&run_ok(&a, input.as_bytes())).unwrap()
}

/// Rule: the same request seen twice is counted once. Two views of one request in one OTLP
/// export (`otlp` and `vllm-otlp`): the client's span (kind CLIENT) that the server's span
/// (kind SERVER) descends from, in the same trace, is the same request; the server's view
/// wins. Enrich marks the client's metrics `"duplicate":true`; summary sets it aside and counts
/// it under `coverage.duplicates`; whichever span comes first in the line. Spans of the same
/// trace that are not parent and child, or a server span whose parent is not in the line, are
/// two requests. `--keep-duplicates --by '$format'` shows both views.
#[test]
fn the_views_of_one_request_in_one_trace_are_counted_once() {
    let pair = |client: &str, server: &str| {
        TRACE
            .replace("CLIENT", client)
            .replace("SERVER", server)
            .replace("HTTP", "")
    };
    let ours = pair(CLIENT, SERVER);
    let reversed = TRACE.replace("CLIENT,SERVER", "SERVER,CLIENT");
    let reversed = reversed
        .replace("CLIENT", CLIENT)
        .replace("SERVER", SERVER)
        .replace("HTTP", "");
    // An HTTP client span between them (its own span, no GenAI attributes: no request).
    let via_http = pair(&CLIENT.replace("HTTP", HTTP), SERVER).replace(
        r#""parentSpanId":"a1b2c3d4e5f60718","name":"llm_request""#,
        r#""parentSpanId":"0102030405060708","name":"llm_request""#,
    );
    let named = ours
        .replace(r#""kind":3"#, r#""kind":"SPAN_KIND_CLIENT""#)
        .replace(r#""kind":2"#, r#""kind":"SPAN_KIND_SERVER""#);
    let mut f = Failures::default();
    for (what, line) in [
        ("client then server", &ours),
        ("server then client", &reversed),
        ("an HTTP span between", &via_http),
        ("kinds by name", &named),
    ] {
        let input = format!("{line}\n");
        let s = summary_json(&[], &input);
        let g = &s["groups"][0];
        f.check(
            g["requests"] == 1 && s["coverage"]["duplicates"] == 1,
            || {
                format!(
                    "{what}: 1 request and 1 duplicate expected: {} requests, coverage {}",
                    g["requests"], s["coverage"]
                )
            },
        );
        f.check(g["metrics"]["ttft_ms"]["max"] == 34.0, || {
            format!(
                "{what}: the server's TTFT (34 ms) expected: {}",
                g["metrics"]["ttft_ms"]
            )
        });
        // Every format detected (no --format): the client span is `otlp`'s, the server's
        // `vllm-otlp`'s.
        let out = run_ok(&["--threads", "1"], input.as_bytes());
        let (_, object) = unsplice(&out, "tokentime").unwrap();
        let views = match serde_json::from_str(&object).unwrap() {
            Value::Array(v) => v,
            v => vec![v],
        };
        let marked: Vec<_> = views
            .iter()
            .map(|v| (v["format"].clone(), v.get("duplicate").cloned()))
            .collect();
        f.check(
            views.len() == 2
                && views.iter().all(|v| {
                    (v["format"] == "otlp") == (v.get("duplicate") == Some(&Value::Bool(true)))
                }),
            || format!("{what}: enrich marks the client view only: {marked:?}"),
        );
    }
    f.done();
}

/// The views rule's other side: spans of one trace that are not parent and child, or a
/// server span whose parent is not in the line, are two requests; `--keep-duplicates --by
/// '$format'` shows both views of one.
#[test]
fn spans_not_parent_and_child_are_two_requests() {
    let ours = TRACE
        .replace("CLIENT", CLIENT)
        .replace("SERVER", SERVER)
        .replace("HTTP", "");
    let mut f = Failures::default();
    for (what, line) in [
        (
            "another trace",
            ours.replace(
                r#""traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"00f0"#,
                r#""traceId":"5bf92f3577b34da6a3ce929d0e0e4736","spanId":"00f0"#,
            ),
        ),
        (
            "a parent not in the line",
            ours.replace(
                r#""parentSpanId":"a1b2c3d4e5f60718","name":"llm_request""#,
                r#""parentSpanId":"ffffffffffffffff","name":"llm_request""#,
            ),
        ),
    ] {
        let s = summary_json(&[], &format!("{line}\n"));
        f.check(
            s["groups"][0]["requests"] == 2 && s["coverage"].get("duplicates").is_none(),
            || {
                format!(
                    "{what}: 2 requests, no duplicate expected: {}",
                    s["coverage"]
                )
            },
        );
    }
    // Both views, each in its format's group.
    let s = summary_json(
        &["--keep-duplicates", "--by", "$format"],
        &format!("{ours}\n"),
    );
    let by_format: Vec<(String, u64)> = s["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| {
            g["key"].as_object().is_some_and(|k| k.len() == 1) && g["key"]["$format"].is_string()
        })
        .map(|g| {
            (
                g["key"]["$format"].as_str().unwrap().to_owned(),
                g["requests"].as_u64().unwrap(),
            )
        })
        .collect();
    f.check(
        by_format == [("otlp".to_owned(), 1), ("vllm-otlp".to_owned(), 1)]
            && s["coverage"].get("duplicates").is_none(),
        || format!("--keep-duplicates --by '$format': both views expected: {by_format:?}"),
    );
    f.done();
}

/// The testdata inputs of every format: one file per format (`testdata/formats/`) and the
/// producers' samples.
fn inputs_of_every_format() -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = ["formats", "samples", "loadtest"]
        .iter()
        .flat_map(|d| std::fs::read_dir(testdata().join(d)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            !name.contains(".expected.") && (name.ends_with(".jsonl") || name.ends_with(".json"))
        })
        .collect();
    files.sort();
    files
}

/// Rule: the same request seen twice is counted once. A record read again (a log re-read after
/// rotation, a file given twice): every format whose requests log an id (`--fields id`) is
/// read twice in one input, and each request with an id is counted once (the copy under
/// `coverage.duplicates`); the summary's groups are those of one copy but for the requests
/// without an id, counted twice. The same in one thread, in chunks across two, and from a
/// pipe.
#[test]
fn a_record_read_again_is_counted_once() {
    let dir = std::env::temp_dir().join(format!("tokentime-reread-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut f = Failures::default();
    let mut deduped = std::collections::BTreeSet::new();
    for path in inputs_of_every_format() {
        let p = path.to_str().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        if bytes.trim_ascii_start().first() != Some(&b'{') {
            continue; // a JSON document, not lines
        }
        let rows = run_ok(&["-o", "jsonl", "--fields", "id", p], b"");
        let ids: Vec<Value> = lines_with_endings(&rows)
            .iter()
            .map(|l| serde_json::from_slice::<Value>(l).unwrap()["id"].clone())
            .collect();
        let with_id = ids.iter().filter(|v| !v.is_null()).count() as u64;
        let one = summary_json(&[p], "");
        let n = one["groups"][0]["requests"].as_u64().unwrap_or(0);
        let mut twice = bytes.clone();
        if !twice.ends_with(b"\n") {
            twice.push(b'\n');
        }
        twice.extend_from_slice(&bytes);
        let copy = dir.join("twice.jsonl");
        std::fs::write(&copy, &twice).unwrap();
        let c = copy.to_str().unwrap();
        let results = [
            summary_json(&["--threads", "1", c], ""),
            summary_json(&["--threads", "2", "--chunk-bytes", "1K", c], ""),
            summary_json(&[], std::str::from_utf8(&twice).unwrap()),
        ];
        for s in &results {
            f.check(s == &results[0], || {
                format!("{p}: one thread, two and a pipe differ")
            });
        }
        let s = &results[0];
        let dups = s["coverage"]["duplicates"].as_u64().unwrap_or(0);
        let counted = s["groups"][0]["requests"].as_u64().unwrap_or(0);
        f.check(dups == with_id && counted == 2 * n - with_id, || {
            format!(
                "{p}: {n} requests ({with_id} with an id) read twice: {counted} counted, {dups} duplicates"
            )
        });
        if with_id == n && n > 0 {
            // Every request has an id: the groups are one copy's.
            f.check(s["groups"] == one["groups"], || {
                format!("{p}: read twice, groups differ from one copy's")
            });
            let formats = one["coverage"]["formats"].as_object().unwrap();
            deduped.extend(formats.keys().cloned());
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    f.check(deduped.len() >= 15, || {
        format!("formats read twice and counted once: {deduped:?}")
    });
    f.done();
}

/// Rule: two records with one id are one request only when all their timings and counts are
/// the same: a retry that reuses the id (another end, other tokens) is another attempt and
/// counted; so is a copy read after the horizon (`--join-timeout` of log time past the
/// latest end read), which `--join-timeout` widens.
#[test]
fn one_id_with_other_timings_is_another_request() {
    let line = |end: &str, tokens: u32| {
        format!(
            r#"{{"id":"l1","call_type":"acompletion","stream":true,"status":"success","startTime":1741946531.0,"completionStartTime":1741946531.2,"endTime":{end},"prompt_tokens":45,"completion_tokens":{tokens}}}"#
        )
    };
    let mut f = Failures::default();
    for (what, input, counted) in [
        (
            "the same record",
            format!("{}\n{}\n", line("1741946532.0", 9), line("1741946532.0", 9)),
            1,
        ),
        (
            "a retry ending later",
            format!("{}\n{}\n", line("1741946532.0", 9), line("1741946533.0", 9)),
            2,
        ),
        (
            "other tokens",
            format!("{}\n{}\n", line("1741946532.0", 9), line("1741946532.0", 8)),
            2,
        ),
        (
            "a copy after 20 minutes of log",
            format!(
                "{}\n{}\n{}\n",
                line("1741946532.0", 9),
                line("1741947732.0", 9).replace("\"l1\"", "\"l2\""),
                line("1741946532.0", 9)
            ),
            3,
        ),
    ] {
        let s = summary_json(&["--format", "litellm"], &input);
        let n = &s["groups"][0]["requests"];
        f.check(*n == counted, || {
            format!("{what}: {counted} requests expected, {n} counted")
        });
    }
    let late = format!(
        "{}\n{}\n{}\n",
        line("1741946532.0", 9),
        line("1741947732.0", 9).replace("\"l1\"", "\"l2\""),
        line("1741946532.0", 9)
    );
    let s = summary_json(&["--format", "litellm", "--join-timeout", "30m"], &late);
    f.check(s["groups"][0]["requests"] == 2, || {
        format!(
            "--join-timeout 30m: the copy 20 minutes later set aside: {}",
            s["coverage"]
        )
    });
    // Copies set aside, and a request too far back to be told from one: stderr says both.
    let both = format!(
        "{late}{}\n",
        line("1741947732.0", 9).replace("\"l1\"", "\"l2\"")
    );
    let out = run(&["summary", "--format", "litellm"], both.as_bytes());
    let err = String::from_utf8_lossy(&out.stderr);
    f.check(
        err.contains(
            "1 request set aside as copies, but 1 request ended more than --join-timeout \
             before the latest end read before it: too far back to be told from a copy",
        ),
        || format!("no note of the horizon: {err}"),
    );
    f.done();
}

/// An Ollama stream: `chunks` (each a line's members besides `model`, `created_at` and `done`)
/// 100 ms apart from 10:05:01.000, then the final line at 01.300 (`done_msg` its message) with
/// a `total_duration` of 400 ms: the request arrived at 00.900.
fn ollama_stream(chunks: &[&str], done_msg: &str) -> String {
    let mut s = String::new();
    for (i, c) in chunks.iter().enumerate() {
        s.push_str(&format!(
            r#"{{"model":"m","created_at":"2025-03-14T10:05:01.{i}00Z",{c},"done":false}}"#
        ));
        s.push('\n');
    }
    s.push_str(&format!(
        r#"{{"model":"m","created_at":"2025-03-14T10:05:01.300Z",{done_msg},"done":true,"done_reason":"stop","total_duration":400000000,"load_duration":1000000,"prompt_eval_count":26,"prompt_eval_duration":50000000,"eval_count":2,"eval_duration":200000000}}"#
    ));
    s
}

/// A GenAI-Perf export of one chat stream whose first response (100 ms after the request) is
/// the role-only chunk and the first with text comes at 200 ms.
fn genai_perf_role_chunk_first() -> String {
    let sse = |delta: &str| {
        serde_json::json!({
            "response": format!("data: {{\"choices\":[{{\"delta\":{delta}}}]}}\n\n")
        })
    };
    serde_json::json!({
        "service_kind": "openai",
        "experiments": [{"requests": [{
            "timestamp": 1741946700000000000_u64,
            "response_timestamps": [1741946700100000000_u64, 1741946700200000000_u64,
                                    1741946700300000000_u64, 1741946700310000000_u64],
            "response_outputs": [
                sse(r#"{"role":"assistant","content":""}"#),
                sse(r#"{"content":"Hi"}"#),
                sse(r#"{"content":" there"}"#),
                {"response": "data: [DONE]\n\n"},
            ],
        }]}],
    })
    .to_string()
}

/// The benchmark clients that log their own TTFT (50 ms in each line), with the chunk it runs
/// to by the producer's rule (docs/metrics.md).
const LOGGED_TTFT: &[(&str, &str, &str)] = &[
    (
        "vllm-bench",
        "ttfts (first chunk with choices)",
        r#"{"model_id":"m","ttfts":[0.05],"itls":[[0.02,0.03]],"output_lens":[3],"input_lens":[10],"errors":[""]}"#,
    ),
    (
        "sglang-bench",
        "ttfts (first chunk with text)",
        r#"{"backend":"sglang-oai-chat","total_output_tokens_retokenized":3,"ttfts":[0.05],"itls":[[0.02,0.03]],"output_lens":[3],"input_lens":[10],"errors":[""]}"#,
    ),
    (
        "llmperf",
        "ttft_s (first chunk with delta.content)",
        r#"{"error_code":null,"error_msg":"","inter_token_latency_s":0.02,"ttft_s":0.05,"end_to_end_latency_s":1.0,"number_input_tokens":10,"number_output_tokens":11}"#,
    ),
    (
        "aiperf",
        "time_to_first_token (first content response)",
        r#"{"metadata":{"x_request_id":"a1","request_start_ns":1759813207000000000,"record_processor_id":"rp","benchmark_phase":"profiling"},"metrics":{"input_sequence_length":{"value":550,"unit":"tokens"},"time_to_first_token":{"value":50.0,"unit":"ms"},"request_latency":{"value":900.0,"unit":"ms"},"output_sequence_length":{"value":20,"unit":"tokens"}},"error":null}"#,
    ),
    (
        "guidellm",
        "first_token_iteration (first line with text)",
        r#"{"benchmarks":[{"requests":{"successful":[{"request_id":"g1","prompt_tokens":10,"output_tokens":5,"info":{"timings":{"request_start":1741946531.0,"first_token_iteration":1741946531.05,"last_token_iteration":1741946531.5,"request_end":1741946531.5}}}],"errored":[],"incomplete":[]}}]}"#,
    ),
    (
        "llm-load-test",
        "ttft and first_token_time (first non-empty token; ack_time is any first line)",
        r#"{"results":[{"user_id":0,"input_tokens":10,"output_tokens":11,"start_time":1735900000.0,"ack_time":1735900000.01,"first_token_time":1735900000.05,"end_time":1735900001.0,"response_time":1000.0,"ttft":50.0,"error_code":null,"error_text":null}],"config":{},"summary":{}}"#,
    ),
];

/// Rule: TTFT runs to the first chunk that carries output, not to an empty one (a chat
/// stream's role-only first chunk, Ollama's opening `{"response":"","done":false}`). Output of
/// any kind counts: answer text, a reasoning model's reasoning, a tool call. Where tokentime
/// reads the chunks itself (Ollama's streamed lines, GenAI-Perf's response timestamps), it
/// skips the empty ones; where the producer logged its TTFT (the benchmark clients), the
/// logged number is the TTFT, by the producer's own rule (docs/metrics.md lists each). Every
/// stream has its first chunk with output 200 ms after arrival (an empty one at 100 ms); every
/// logged TTFT is 50 ms.
#[test]
fn ttft_runs_to_the_first_chunk_with_output() {
    let chat = r#""message":{"role":"assistant","content":""}"#;
    let mut cases: Vec<(&str, &str, String, f64)> = vec![
        (
            "ollama",
            "/api/generate: an empty opening chunk",
            ollama_stream(
                &[
                    r#""response":"""#,
                    r#""response":"The""#,
                    r#""response":" sky""#,
                ],
                r#""response":"""#,
            ),
            200.0,
        ),
        (
            "ollama",
            "/api/chat: an empty opening chunk",
            ollama_stream(
                &[
                    chat,
                    r#""message":{"role":"assistant","content":"The"}"#,
                    r#""message":{"role":"assistant","content":" sky"}"#,
                ],
                chat,
            ),
            200.0,
        ),
        (
            "ollama",
            "/api/chat: reasoning is output (the first token of any kind)",
            ollama_stream(
                &[
                    chat,
                    r#""message":{"role":"assistant","content":"","thinking":"Hmm"}"#,
                    r#""message":{"role":"assistant","content":"Hi"}"#,
                ],
                chat,
            ),
            200.0,
        ),
        (
            "ollama",
            "/api/chat: a tool call is output",
            ollama_stream(
                &[
                    chat,
                    r#""message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":{}}}]}"#,
                    chat,
                ],
                chat,
            ),
            200.0,
        ),
        (
            "genai-perf",
            "a role-only first response",
            genai_perf_role_chunk_first(),
            200.0,
        ),
    ];
    cases.extend(
        LOGGED_TTFT
            .iter()
            .map(|&(format, what, line)| (format, what, line.to_owned(), 50.0)),
    );
    let mut f = Failures::default();
    for (format, what, input, ttft) in &cases {
        let m = one(format, &format!("{input}\n"));
        f.check(m["ttft_ms"] == *ttft, || {
            format!(
                "{format} ({what}): ttft_ms {} ({ttft} expected): {m}",
                m["ttft_ms"]
            )
        });
    }
    f.done();
}
