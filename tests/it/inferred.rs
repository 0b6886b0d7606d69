//! The `inferred` format (the generic reader): run alone (`--format inferred`) on each
//! built-in format's testdata whose field names say what they are, it finds the same requests
//! and the same TTFT and E2E as the named format; `formats --guess` writes a formats file that
//! reproduces the run; auto mode uses it only when no format recognises a line of the sample.

use crate::common::{run, run_ok, testdata};
use serde_json::Value;

/// Files read the same by `--format inferred` as by their format, and why they qualify.
const SAME: &[(&str, &str)] = &[
    (
        "realdata/llmperf-groq-70b/individual_responses.json",
        "ttft_s, end_to_end_latency_s, number_*_tokens; error_code/error_msg",
    ),
    (
        "realdata/llmperf-bedrock-70b/individual_responses.json",
        "as above, 49 failed requests (error_code set)",
    ),
    (
        "realdata/llmperf-perplexity-70b/individual_responses.json",
        "as above",
    ),
    (
        "realdata/aiperf011-reasoning-cancel/profile_export.jsonl",
        "{value, unit} metrics ttft and request_latency; its failed records carry no latency",
    ),
    (
        "loadtest/vllm-v0-metrics.jsonl",
        "wall-clock arrival_time, first_token_time, last_token_time; time_in_queue pinned to s by scheduled - arrival",
    ),
    (
        "realdata/raydata-vllm-v0-viggo/ray-data-llm-viggo.jsonl",
        "metrics.*_time epoch-second instants, num_*_tokens",
    ),
];

/// Built-in formats' testdata the generic reader is not expected to match, and why.
const OUT: &[(&str, &str)] = &[
    (
        "samples/litellm.jsonl",
        "TTFT is completionStartTime - startTime on streamed calls only: a stream flag decides",
    ),
    ("lab/litellm.jsonl", "as samples/litellm.jsonl"),
    (
        "samples/langfuse.jsonl",
        "completionStartTime, non-streamed calls: as LiteLLM",
    ),
    ("formats/langfuse.jsonl", "as samples/langfuse.jsonl"),
    (
        "formats/langfuse-reasoning.jsonl",
        "as samples/langfuse.jsonl",
    ),
    (
        "samples/llamacpp.jsonl",
        "timings.prompt_ms / predicted_ms name no field of the vocabulary",
    ),
    ("lab/llamacpp_timings.jsonl", "as samples/llamacpp.jsonl"),
    ("formats/llamacpp-stream.jsonl", "as samples/llamacpp.jsonl"),
    (
        "samples/llamacpp_legacy_jsonlog.jsonl",
        "one request spans three lines",
    ),
    (
        "formats/llamacpp-log.jsonl",
        "one request spans three lines",
    ),
    (
        "samples/vllm_response_metrics.jsonl",
        "time_to_first_token_ms runs from scheduling; vllm adds queue_time_ms",
    ),
    (
        "samples/nim.jsonl",
        "time_to_first_token_in_ms runs from processing start; nim adds the queue",
    ),
    ("formats/nim.jsonl", "as samples/nim.jsonl"),
    (
        "samples/tgi.jsonl",
        "failures are separate ERROR events of a request span",
    ),
    ("formats/tgi.jsonl", "as samples/tgi.jsonl"),
    (
        "samples/kong.jsonl",
        "meta.llm_latency, usage.time_to_first_token: no unit in name or value, no instants",
    ),
    ("formats/kong.jsonl", "as samples/kong.jsonl"),
    (
        "samples/helicone.jsonl",
        "delay_ms is no vocabulary name; time_to_first_token 0 is a sentinel",
    ),
    ("formats/helicone.jsonl", "as samples/helicone.jsonl"),
    (
        "samples/bedrock.jsonl",
        "TTFT only on the last stream chunk (firstByteLatency), errors by errorCode",
    ),
    ("formats/bedrock.jsonl", "as samples/bedrock.jsonl"),
    (
        "samples/sglang.jsonl",
        "an abort finish_reason is a cancellation (E2E kept out), a field the reader does not interpret",
    ),
    ("formats/sglang.jsonl", "as samples/sglang.jsonl"),
    (
        "samples/ollama.jsonl",
        "durations in ns without a unit in name or value, and no wall-clock start",
    ),
    (
        "samples/ollama_stream.jsonl",
        "a stream of chunks joined into one request",
    ),
    ("formats/ollama.jsonl", "as samples/ollama.jsonl"),
    (
        "samples/otel_genai_otlp.jsonl",
        "spans are array elements (resourceSpans[].scopeSpans[].spans[])",
    ),
    ("samples/vllm_otlp_traces.jsonl", "as otel_genai_otlp"),
    ("formats/otlp.jsonl", "as otel_genai_otlp"),
    ("formats/vllm-otlp.jsonl", "as otel_genai_otlp"),
    (
        "samples/vllm_bench_serve.jsonl",
        "requests are columns of parallel arrays",
    ),
    ("loadtest/sglang-bench.jsonl", "parallel arrays"),
    (
        "realdata/vllm083-dsv25-tp8pp2-qps04/result.json",
        "parallel arrays",
    ),
    (
        "realdata/vllm083-llama70b-tp4pp2-qps16/result.json",
        "parallel arrays",
    ),
    (
        "realdata/vllm083-llama70b-tp8-qps1/result.json",
        "parallel arrays",
    ),
    (
        "realdata/vllm083-llama70b-tp8-qpsinf/result.json",
        "parallel arrays",
    ),
    ("samples/provider_usage.jsonl", "a usage object has no time"),
    ("formats/openai-usage.jsonl", "no time"),
    ("formats/openai-responses-usage.jsonl", "no time"),
    ("formats/anthropic-usage.jsonl", "no time"),
    ("formats/deepseek-usage.jsonl", "no time"),
    ("formats/sglang-log.jsonl", "one request spans two lines"),
    (
        "loadtest/vllm-stats.jsonl",
        "durations in s without a unit anywhere, and only monotonic *_ts to check them against",
    ),
    (
        "loadtest/llm-load-test.json",
        "requests are elements of a results array",
    ),
    (
        "realdata/llmloadtest2023-caikit-c20/output.json",
        "requests are elements of a results array",
    ),
    (
        "realdata/guidellm03-qwen3-0.6b-llmd-sim/benchmarks.json",
        "requests are elements of nested arrays",
    ),
    (
        "realdata/guidellm050-gptoss20b-xpu/benchmarks.json",
        "as above",
    ),
    (
        "realdata/guidellm050-qwen3-30b-xpu/benchmarks.json",
        "as above",
    ),
    (
        "realdata/genai-perf016-mock-chat-stream/profile_export.json",
        "requests are elements of experiments[].requests[], timed by response_timestamps lists",
    ),
    (
        "realdata/aiperf013-mock-chat-cancel/profile_export.jsonl",
        "its warm-up records (metadata.benchmark_phase) are requests to the generic reader: 155, not AIPerf's 150",
    ),
    (
        "realdata/sglang0523-mock/sglang-bench.jsonl",
        "parallel arrays",
    ),
    (
        "realdata/llmloadtest-mock-chat-c4/output-004.json",
        "requests are elements of results[]",
    ),
    (
        "realdata/llmloadtest-mock-completions-c4/output-004.json",
        "requests are elements of results[]",
    ),
];

/// Requests that did not fail, and TTFT and E2E (count, min, max, quantiles), of `summary -o json`.
fn figures(args: &[&str], file: &str) -> Value {
    let mut a = vec!["summary", "--exact-limit", "1000000", "-o", "json"];
    a.extend_from_slice(args);
    a.push(file);
    let out: Value = serde_json::from_slice(&run_ok(&a, b"")).unwrap();
    let all = out["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["key"] == serde_json::json!({}))
        .cloned()
        .unwrap_or_default();
    let cov = &out["coverage"];
    let ok = cov["requests"].as_u64().unwrap() - cov["errors"].as_u64().unwrap_or(0);
    let pick = |m: &str| {
        let x = &all["metrics"][m];
        serde_json::json!([x["count"], x["min"], x["max"], x["quantiles"]])
    };
    serde_json::json!({"ok": ok, "ttft": pick("ttft_ms"), "e2e": pick("e2e_ms")})
}

#[test]
fn same_requests_ttft_and_e2e_as_the_named_format() {
    for (rel, why) in SAME {
        let f = testdata().join(rel);
        let f = f.to_str().unwrap();
        let named = figures(&[], f);
        assert!(named["ok"].as_u64().unwrap() > 0, "{rel}");
        assert_eq!(
            figures(&["--format", "inferred"], f),
            named,
            "{rel} ({why})"
        );
    }
}

#[test]
fn every_builtin_testdata_file_is_listed() {
    let listed: Vec<&str> = SAME.iter().chain(OUT).map(|(f, _)| *f).collect();
    for dir in ["samples", "formats", "loadtest", "realdata", "lab"] {
        for e in std::fs::read_dir(testdata().join(dir)).unwrap() {
            let p = e.unwrap().path();
            let files: Vec<std::path::PathBuf> = if p.is_dir() {
                std::fs::read_dir(&p)
                    .unwrap()
                    .map(|e| e.unwrap().path())
                    .collect()
            } else {
                vec![p]
            };
            for p in files {
                let rel = p
                    .strip_prefix(testdata())
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_owned();
                let name = p.file_name().unwrap().to_str().unwrap();
                // Inputs only: not expectations, aggregates, notes or the lab's ground truth.
                let input = (name.ends_with(".jsonl") || name.ends_with(".json"))
                    && !name.contains(".expected.")
                    && !["summary.json", "truth.jsonl", "phases.json"].contains(&name)
                    && !name.contains("_aiperf")
                    && !name.contains("_genai_perf");
                if input {
                    assert!(listed.contains(&rel.as_str()), "{rel} is not listed");
                }
            }
        }
    }
}

#[test]
fn guess_writes_a_formats_file_that_reproduces_the_run() {
    let f = testdata().join(SAME[0].0);
    let f = f.to_str().unwrap();
    let toml = run_ok(&["formats", "--guess", f], b"");
    let text = String::from_utf8(toml).unwrap();
    assert!(text.contains("[[format]]"), "{text}");
    assert!(
        text.contains(r#"{ field = "ttft", path = "ttft_s", unit = "s" }"#),
        "{text}"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("guessed.toml");
    std::fs::write(&file, &text).unwrap();
    let file = file.to_str().unwrap();
    let args = ["summary", "-o", "json"];
    let inferred = run_ok(&[&args[..], &["--format", "inferred", f]].concat(), b"");
    // The entry is a fallback like the generic reader: `--format inferred` picks it.
    let forced = run_ok(
        &[&args[..], &["--formats", file, "--format", "inferred", f]].concat(),
        b"",
    );
    assert_eq!(forced, inferred);
}

/// A client's own log (the lab's truth: `t_send`, `t_first_token`, `t_end` in epoch seconds,
/// an `http_status` of 200 on every answer and an `outcome` in words): `formats --guess` maps
/// the three instants, measures TTFT from the client's send (a gateway's or client's origin),
/// and reads the outcome: 6 requests cancelled mid-stream (their HTTP status 200) keep their
/// TTFT and leave E2E, 4 timeouts and 5 errors and 1 error in the stream fail. The E2E of the
/// 284 answers is the client's own, p50 26421.081 ms (numpy's, over `t_end - t_send`).
#[test]
fn guess_reads_a_clients_send_time_and_outcome_words() {
    let f = testdata().join("lab/truth.jsonl");
    let f = f.to_str().unwrap();
    let text = String::from_utf8(run_ok(&["formats", "--guess", f], b"")).unwrap();
    for mapped in [
        r#"{ field = "arrival", path = "t_send", unit = "epoch" }"#,
        r#"{ field = "first_token", path = "t_first_token", unit = "epoch" }"#,
        r#"{ field = "end", path = "t_end", unit = "epoch" }"#,
        r#"arrival_origin = "gateway""#,
        r#"{ path = "outcome", contains = "cancel" }"#,
        r#"{ path = "outcome", contains = "timeout" }"#,
        r#"streamed_when = { path = "stream", equals = true }"#,
    ] {
        assert!(text.contains(mapped), "{mapped}: {text}");
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("truth.toml");
    std::fs::write(&file, &text).unwrap();
    let out = run_ok(
        &[
            "summary",
            "-o",
            "json",
            "--formats",
            file.to_str().unwrap(),
            "--format",
            "inferred",
            f,
        ],
        b"",
    );
    let doc: Value = serde_json::from_slice(&out).unwrap();
    let cov = &doc["coverage"];
    assert_eq!(
        (cov["requests"].as_u64(), cov["errors"].as_u64()),
        (Some(300), Some(10))
    );
    assert_eq!(cov["cancelled"], 6);
    let m = &doc["groups"][0]["metrics"];
    assert_eq!(m["ttft_ms"]["count"], 183);
    assert_eq!(m["ttft_ms"]["origins"]["gateway"], 183);
    // Its `stream` flag: the 107 calls not streamed have no TTFT because of it.
    assert_eq!(m["ttft_ms"]["nulls"]["not_streamed"], 107);
    assert!(m["ttft_ms"]["nulls"].get("not_logged").is_none(), "{m}");
    assert_eq!(m["e2e_ms"]["count"], 284);
    assert_eq!(m["e2e_ms"]["quantiles"]["p50"], 26421.081);
    // Its ids (`lab_req_id`) name the slowest requests.
    assert!(text.contains(r#"id = "lab_req_id""#), "{text}");
    // A failure its outcome alone tells, beside an HTTP 200 (an error in the stream), without
    // an error text: still one of the 10, its E2E left out.
    let bare: String = std::fs::read_to_string(f)
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v["error"] = Value::Null;
            format!("{v}\n")
        })
        .collect();
    let out = run_ok(
        &["summary", "-o", "json", "--format", "inferred"],
        bare.as_bytes(),
    );
    let doc: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(doc["coverage"]["errors"], 10);
    assert_eq!(doc["groups"][0]["metrics"]["e2e_ms"]["count"], 284);
}

/// `summary -o json` of a file holding `lines`, and its stderr. A file: on a pipe, auto
/// detection reads no sample ahead (the output stays live).
fn gateway_summary(lines: &str) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("gateway.jsonl");
    std::fs::write(&log, lines).unwrap();
    let out = run(&["summary", "-o", "json", log.to_str().unwrap()], b"");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    (doc, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// A gateway's own log with an OpenAI `usage` object and its timing under names of its own: the
/// usage fallback reads no duration from it, so the inferred reader goes first (before, every
/// latency was `not_logged`, silently).
#[test]
fn a_usage_object_does_not_hide_the_timing_beside_it() {
    let lines: String = (0..30)
        .map(|i| {
            format!(
                "{{\"req_id\":\"r{i}\",\"start_time\":{}.5,\"usage\":{{\"prompt_tokens\":100,\"completion_tokens\":{}}},\"ttft_ms\":{},\"e2e_ms\":{}}}\n",
                1_796_000_000 + i,
                20 + i,
                400 + i,
                3000 + 10 * i
            )
        })
        .collect();
    let (doc, err) = gateway_summary(&lines);
    assert_eq!(
        doc["coverage"]["formats"],
        serde_json::json!({"inferred": 30}),
        "{err}"
    );
    assert!(err.contains("read no duration from them"), "{err}");
    let all = &doc["groups"][0]["metrics"];
    // TTFT 400 .. 429 ms, E2E 3000 .. 3290 ms.
    assert_eq!(all["ttft_ms"]["quantiles"]["p50"], 414.5);
    assert_eq!(all["e2e_ms"]["quantiles"]["p50"], 3145.0);
    assert_eq!(all["output_tokens"]["count"], 30);
}

/// A gateway's log with an OpenAI `usage` object and only a start and an end instant (no TTFT
/// to check an E2E against): the usage fallback claims the lines without a duration, and two
/// clock readings need no unit check, so the E2E is read from them (before, "no E2E in the
/// log").
#[test]
fn a_usage_object_does_not_hide_a_start_and_an_end() {
    let lines: String = (0..4)
        .map(|i| {
            format!(
                "{{\"request_id\":\"a{i}\",\"started_at\":\"2026-11-01T10:00:0{i}.000Z\",\"finished_at\":\"2026-11-01T10:00:0{}.500Z\",\"usage\":{{\"prompt_tokens\":100,\"completion_tokens\":50}}}}\n",
                i + 2
            )
        })
        .collect();
    let (doc, err) = gateway_summary(&lines);
    assert_eq!(
        doc["coverage"]["formats"],
        serde_json::json!({"inferred": 4}),
        "{err}"
    );
    assert!(err.contains("read no duration from them"), "{err}");
    // Every request ends 2.5 s after it arrives.
    let all = &doc["groups"][0]["metrics"];
    assert_eq!(all["e2e_ms"]["count"], 4);
    assert_eq!(all["e2e_ms"]["quantiles"]["p50"], 2500.0);
    assert_eq!(all["ttft_ms"]["count"], 0);
    // An end before the arrival on every line is no E2E to trust: the fallback keeps them.
    let swapped: String = lines
        .replace("started_at", "x")
        .replace("finished_at", "started_at")
        .replace("\"x\"", "\"finished_at\"");
    let (doc, _) = gateway_summary(&swapped);
    assert_eq!(
        doc["coverage"]["formats"],
        serde_json::json!({"openai-usage": 4})
    );
}

/// A log that writes seconds in fields named `_ms`, with no instants to check them against:
/// the inferred format reads them as the names say, and after the run stderr says the medians
/// are shorter than any LLM request, and how to read them in seconds. `--map` with its fields
/// in one comma-separated value reads them so.
#[test]
fn seconds_under_a_name_in_ms_are_called_out() {
    let lines: String = (0..40)
        .map(|i| {
            format!(
                "{{\"req_id\":\"r{i}\",\"ttft_ms\":0.{},\"latency_ms\":{}.5,\"prompt_tokens\":100,\"completion_tokens\":50}}\n",
                300 + i,
                2 + i % 9
            )
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    std::fs::write(&log, lines).unwrap();
    let log = log.to_str().unwrap();
    let out = run(&["summary", log], b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "the format `inferred` reads ttft from ttft_ms as ms, the median TTFT is 319.5us, \
             shorter than any LLM request waits; if the log writes seconds, give ttft unit = \"s\""
        ),
        "{err}"
    );
    assert!(
        err.contains("the format `inferred` reads e2e from latency_ms as ms"),
        "{err}"
    );
    let out = run_ok(
        &[
            "summary",
            "-o",
            "json",
            "--map",
            "ttft=ttft_ms:s,e2e=latency_ms:s,output_tokens=completion_tokens",
            log,
        ],
        b"",
    );
    let doc: Value = serde_json::from_slice(&out).unwrap();
    let all = &doc["groups"][0]["metrics"];
    // TTFT 300 .. 339 ms.
    assert_eq!(all["ttft_ms"]["quantiles"]["p50"], 319.5);
    assert_eq!(all["output_tokens"]["count"], 40);
}

/// Durations with no unit in their names and no instants to check them against: nothing is
/// mapped, the summary points at `formats --guess`, and the guess is a commented template naming
/// the fields, which loads once the user gives each its unit.
#[test]
fn guess_leaves_units_it_cannot_pin_to_the_user() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let lines: String = (0..40)
        .map(|i| {
            format!(
                "{{\"req_id\":\"r{i}\",\"ttft\":0.{},\"latency\":{}.5,\"prompt_tokens\":100,\"completion_tokens\":{}}}\n",
                300 + i,
                2 + i % 9,
                20 + i
            )
        })
        .collect();
    std::fs::write(&log, lines).unwrap();
    let log = log.to_str().unwrap();
    let out = run(&["summary", log], b"");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("`tokentime formats --guess FILE` proposes"),
        "{table}"
    );
    let text = String::from_utf8(run_ok(&["formats", "--guess", log], b"")).unwrap();
    assert!(text.contains("# no time field could be mapped"), "{text}");
    assert!(
        text.contains(r#"#   { field = "ttft", path = "ttft", unit = "?" },"#),
        "{text}"
    );
    assert!(
        text.contains(r#"#   { field = "input_tokens", path = "prompt_tokens" },"#),
        "{text}"
    );
    let filled: String = text
        .lines()
        .skip_while(|l| !l.starts_with("# [[format]]"))
        .map(|l| format!("{}\n", l.trim_start_matches("# ").replace("\"?\"", "\"s\"")))
        .collect();
    let file = dir.path().join("mine.toml");
    std::fs::write(&file, filled).unwrap();
    let doc: Value = serde_json::from_slice(&run_ok(
        &[
            "summary",
            "-o",
            "json",
            "--formats",
            file.to_str().unwrap(),
            log,
        ],
        b"",
    ))
    .unwrap();
    assert_eq!(doc["coverage"]["requests"], 40, "{doc}");
    // TTFT 0.300 .. 0.339 s: the median 319.5 ms.
    assert_eq!(
        doc["groups"][0]["metrics"]["ttft_ms"]["quantiles"]["p50"],
        319.5
    );
}

/// A log no format knows, with self-describing names: epoch-second instants and an E2E in ms
/// without a unit (pinned by end - start), a TTFT with its unit in the name.
fn unknown_log(n: usize) -> String {
    let mut s = String::from("server starting\n{\"event\":\"ready\"}\n");
    for i in 0..n {
        let start = 1_750_000_000.0 + i as f64;
        let ttft = 100 + i % 7 * 10;
        let e2e = 900 + i % 5 * 100;
        s.push_str(&format!(
            "{{\"req\":{{\"id\":\"r{i}\",\"start_time\":{start},\"end_time\":{}}},\"timing\":{{\"ttftMs\":{ttft},\"latency\":{e2e}}},\"usage\":{{\"num_prompt_tokens\":{},\"completion_tokens\":{}}}}}\n",
            start + e2e as f64 / 1000.0,
            100 + i,
            20 + i % 3
        ));
    }
    s
}

#[test]
fn auto_uses_it_when_no_format_recognises_a_line_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("unknown.jsonl");
    std::fs::write(&file, unknown_log(40)).unwrap();
    let f = file.to_str().unwrap();
    let out = run(&["--only-requests", "--threads", "1", f], b"");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no format recognised any of the first 41 JSON objects"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "e2e = timing.latency (ms, ms by e2e = end - arrival within 1 ms on 40 of 40 lines)"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("ttft = timing.ttftMs (ms, unit from the name)"),
        "{stderr}"
    );
    let first: Value =
        serde_json::from_slice(out.stdout.split(|&b| b == b'\n').next().unwrap()).unwrap();
    let t = &first["tokentime"];
    assert_eq!(t["format"], "inferred");
    assert_eq!(t["ttft_ms"], 100.0);
    assert_eq!(t["e2e_ms"], 900.0);
    assert_eq!(t["input_tokens"], 100);
    assert_eq!(t["tpot_ms"], 42.105, "(900 - 100) / (20 - 1)");
    // The same on 2 threads in small chunks, and piped (stdin is not sampled in auto: a pipe
    // is never held back), where --format inferred reads it.
    let two = run_ok(
        &[
            "--only-requests",
            "--threads",
            "2",
            "--chunk-bytes",
            "300",
            f,
        ],
        b"",
    );
    assert_eq!(two, out.stdout);
    let piped = run_ok(
        &["--only-requests", "--format", "inferred"],
        unknown_log(40).as_bytes(),
    );
    assert_eq!(piped, out.stdout);
    let s1 = run_ok(&["summary", "-o", "json", "--threads", "1", f], b"");
    let s2 = run_ok(
        &[
            "summary",
            "-o",
            "json",
            "--threads",
            "2",
            "--chunk-bytes",
            "300",
            f,
        ],
        b"",
    );
    assert_eq!(s1, s2);
}

#[test]
fn auto_leaves_a_log_a_format_recognises_alone() {
    let f = testdata().join("samples/litellm.jsonl");
    let out = run(&["summary", f.to_str().unwrap()], b"");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("inferred"));
}

#[test]
fn hostile_samples_map_nothing_they_cannot_pin() {
    let dir = tempfile::tempdir().unwrap();
    let deep = format!(
        "{}{{\"ttft_ms\":5}}{}",
        "{\"a\":".repeat(100),
        "}".repeat(100)
    );
    let cases = [
        // Conflicting units: the name says ms, the object says s.
        "{\"ttft_ms\":{\"value\":1,\"unit\":\"s\"},\"e2e_ms\":10}\n",
        // Strings that are no durations, and a unit that changes between lines.
        "{\"ttft\":\"fast\",\"e2e\":{\"value\":1,\"unit\":\"s\"}}\n{\"ttft\":\"x\",\"e2e\":{\"value\":1,\"unit\":\"ms\"}}\n",
        // No unit and nothing to check it against.
        "{\"latency\":12.5}\n",
        &deep,
    ];
    for (i, text) in cases.iter().enumerate() {
        let file = dir.path().join(format!("h{i}.jsonl"));
        std::fs::write(&file, text).unwrap();
        let out = run(
            &[
                "summary",
                "-o",
                "json",
                "--format",
                "inferred",
                file.to_str().unwrap(),
            ],
            b"",
        );
        assert!(out.status.success(), "{i}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("tokentime: inferred:"), "{i}: {stderr}");
        if i < 3 {
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            let e2e = &v["groups"][0]["metrics"]["e2e_ms"]["count"];
            assert!(e2e.is_null() || e2e == 0 || i == 0, "{i}: {v}");
        }
    }
    let conflict = run(
        &[
            "formats",
            "--guess",
            dir.path().join("h0.jsonl").to_str().unwrap(),
        ],
        b"",
    );
    let text = String::from_utf8_lossy(&conflict.stdout);
    assert!(text.contains("# not mapped: ttft_ms.value as ttft: conflicting units: ms by its name, s by its {value, unit} object"), "{text}");
}

/// A gateway's access log: the line's own time (`ts`), an HTTP status, a time to first byte
/// and a duration in ms, token counts as `tokens_in`/`tokens_out`/`tokens_cached`.
const GATEWAY: &str = r#"{"ts":"2026-11-30T10:00:01.200Z","request_id":"a1","model":"m1","status":200,"ttfb_ms":180,"duration_ms":1200,"tokens_in":100,"tokens_out":20,"tokens_cached":40}
{"ts":"2026-11-30T10:00:02.900Z","request_id":"a2","model":"m1","status":200,"ttfb_ms":250,"duration_ms":2100,"tokens_in":300,"tokens_out":60,"tokens_cached":0}
{"ts":"2026-11-30T10:00:03.000Z","request_id":"a3","model":"m1","status":500,"ttfb_ms":null,"duration_ms":90,"tokens_in":300,"tokens_out":0,"tokens_cached":0}
{"ts":"2026-11-30T10:00:04.500Z","request_id":"a4","model":"m1","status":499,"ttfb_ms":300,"duration_ms":800,"tokens_in":50,"tokens_out":5,"tokens_cached":0}
{"ts":"2026-11-30T10:00:06.000Z","request_id":"a5","model":"m1","status":200,"ttfb_ms":150,"duration_ms":1000,"tokens_in":120,"tokens_out":30,"tokens_cached":100}
"#;

#[test]
fn a_gateway_log_gives_its_span_its_failures_and_its_cancellations() {
    let doc: Value = serde_json::from_slice(&run_ok(
        &["summary", "-o", "json", "--format", "inferred"],
        GATEWAY.as_bytes(),
    ))
    .unwrap();
    let g = &doc["groups"][0];
    assert_eq!(g["requests"], 5);
    // status 500 is a failure, 499 (the client closed the request) a cancellation.
    assert_eq!(g["errors"], 1, "{g}");
    assert_eq!(g["cancelled"], 1, "{g}");
    // E2E of the three that completed: 1000, 1200, 2100 ms.
    assert_eq!(g["metrics"]["e2e_ms"]["quantiles"]["p50"], 1200.0);
    // tokens_cached: a5's 100 of 120 is a prefix-cache hit.
    assert_eq!(g["metrics"]["cached_tokens"]["max"], 100.0, "{g}");
    // The span runs from a1's start (10:00:01.2 - 1.2 s) to a5's line (10:00:06): 6 s, five
    // requests: 0.83 requests/s; 115 output tokens: 19.2 a second.
    let text = String::from_utf8(run_ok(
        &["summary", "--format", "inferred"],
        GATEWAY.as_bytes(),
    ))
    .unwrap();
    assert!(
        text.starts_with("5 requests from 2026-11-30T10:00:00Z to 10:00:06Z (6.0s): 0.83 requests/s, 19.2 output tokens/s"),
        "{text}"
    );
    let guess =
        String::from_utf8(run_ok(&["formats", "--guess", "-"], GATEWAY.as_bytes())).unwrap();
    for want in [
        // The error members the sample lacks fail a request that has them set.
        r#"error_when = [{ set = "error_message" }, { set = "error_msg" }, { set = "error" }, { set = "error_code" }, { path = "status", at_least = 400 }]"#,
        r#"cancelled_when = [{ path = "status", equals = 499 }]"#,
        r#"{ field = "logged_at", path = "ts", unit = "epoch" }"#,
        // The line's time is on every line: it marks no request.
        r#"markers = [{ any = [{ present = "ttfb_ms" }, { present = "duration_ms" }] }]"#,
    ] {
        assert!(guess.contains(want), "{want} in\n{guess}");
    }
    // Status words, in any case; a failure's reason is read from the status.
    let words = GATEWAY
        .replace(r#""status":200"#, r#""status":"OK""#)
        .replace(r#""status":500"#, r#""status":"FAILED""#)
        .replace(r#""status":499"#, r#""status":"cancelled""#);
    let guess = String::from_utf8(run_ok(&["formats", "--guess", "-"], words.as_bytes())).unwrap();
    for want in [
        r#"error_when = [{ set = "error_message" }, { set = "error_msg" }, { set = "error" }, { set = "error_code" }, { path = "status", contains = "error" }, { path = "status", contains = "fail" }, { path = "status", contains = "timeout" }, { path = "status", contains = "timed_out" }]"#,
        r#"cancelled_when = [{ path = "status", contains = "cancel" }]"#,
        r#"reason = ["error_message", "error_msg", "error", "error_code", "status"]"#,
    ] {
        assert!(guess.contains(want), "{want} in\n{guess}");
    }
    let doc: Value = serde_json::from_slice(&run_ok(
        &["summary", "-o", "json", "--format", "inferred"],
        words.as_bytes(),
    ))
    .unwrap();
    assert_eq!(doc["errors"]["reasons"][0]["reason"], "FAILED", "{doc}");
    assert_eq!(doc["coverage"]["cancelled"], 1, "{doc}");
}

#[test]
fn a_zero_error_code_is_a_success_and_the_lines_time_pins_a_unit() {
    // `error_code: 0` on the lines that succeeded: a code that is not 0 fails the request,
    // and it is the reason.
    let log = r#"{"request_id":"a","ttft_ms":100,"latency_ms":900,"error_code":0}
{"request_id":"b","ttft_ms":120,"latency_ms":950,"error_code":0}
{"request_id":"c","ttft_ms":110,"latency_ms":40,"error_code":503}
"#;
    let out = String::from_utf8(run_ok(
        &[
            "--format",
            "inferred",
            "--output",
            "csv",
            "--fields",
            "id,outcome",
        ],
        log.as_bytes(),
    ))
    .unwrap();
    assert_eq!(out, "id,outcome\na,ok\nb,ok\nc,error\n");
    // A duration without a unit in its name, equal to the line's own time (`@timestamp`,
    // the end) minus the start, in seconds.
    let log = r#"{"@timestamp":"2025-06-01T10:00:01.500Z","start_time":"2025-06-01T10:00:00.000Z","latency":1.5,"ttft_ms":200}
{"@timestamp":"2025-06-01T10:00:03.250Z","start_time":"2025-06-01T10:00:01.000Z","latency":2.25,"ttft_ms":300}
"#;
    let doc: Value = serde_json::from_slice(&run_ok(
        &["summary", "-o", "json", "--format", "inferred"],
        log.as_bytes(),
    ))
    .unwrap();
    assert_eq!(
        doc["groups"][0]["metrics"]["e2e_ms"]["max"], 2250.0,
        "{doc}"
    );
}

#[test]
fn a_ttft_plausible_in_two_units_is_left_to_the_user() {
    // Long answers after a fast TTFT: 20-40 (ms) of a 100 s E2E. In s (20-40 s) it fits
    // the E2E as well, and is a TTFT a server gives: no check tells ms from s.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let lines: String = (0..30)
        .map(|i| {
            format!(
                "{{\"request_id\":\"r{i}\",\"start_time\":\"2026-01-01T00:{i:02}:00Z\",\
                 \"end_time\":\"2026-01-01T00:{:02}:40Z\",\"ttft\":{}.5,\"output_tokens\":1800}}\n",
                i + 1,
                20 + i % 20
            )
        })
        .collect();
    std::fs::write(&log, lines).unwrap();
    let log = log.to_str().unwrap();
    let out = run(&["summary", log], b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "the format `inferred` could not read their timing: ttft as ttft (unit_unknown: \
             ttft <= e2e holds in s and in ms, and both give a plausible TTFT (median 27.5 s or \
             27.5 ms)"
        ),
        "{err}"
    );
    let text = String::from_utf8(run_ok(&["formats", "--guess", log], b"")).unwrap();
    assert!(
        text.contains(
            r#"  # { field = "ttft", path = "ttft", unit = "?" },  # its unit: see above"#
        ),
        "{text}"
    );
}

/// Under `--format auto`, a pipe is sampled for the inferred format as a file is: what the pipe
/// holds at its start, read again by the run, so `cat FILE | tokentime` reads FILE as
/// `tokentime FILE` does (both lines a format claims without a duration, and lines no format
/// claims); enriched lines come back whole and in order.
#[test]
fn a_pipe_is_sampled_as_a_file_is() {
    for name in ["gateway-errors.jsonl", "fastapi-middleware.jsonl"] {
        let path = testdata().join("cases/files").join(name);
        let bytes = std::fs::read(&path).unwrap();
        let from_file = run_ok(&["summary", "-o", "json", path.to_str().unwrap()], b"");
        let from_pipe = run_ok(&["summary", "-o", "json"], &bytes);
        assert_eq!(
            String::from_utf8(from_pipe).unwrap(),
            String::from_utf8(from_file).unwrap(),
            "{name}"
        );
        let enriched = run_ok(&[], &bytes);
        let enriched_file = run_ok(&[path.to_str().unwrap()], b"");
        assert_eq!(enriched, enriched_file, "{name}");
        assert!(
            String::from_utf8(enriched)
                .unwrap()
                .contains("\"format\":\"inferred\"")
        );
    }
}

/// `GATEWAY`'s records held in lists: two lines of `{"batch":N,"requests":[...]}`, and one
/// pretty-printed document with the list deeper (`{"export":{"requests":[...]}}`).
fn gateway_in_lists() -> (String, String) {
    let records: Vec<&str> = GATEWAY.lines().collect();
    let lines = format!(
        "{{\"batch\":1,\"requests\":[{}]}}\n{{\"batch\":2,\"requests\":[{}]}}\n",
        records[..2].join(","),
        records[2..].join(",")
    );
    let requests: Vec<Value> = records
        .iter()
        .map(|r| serde_json::from_str(r).unwrap())
        .collect();
    let doc = serde_json::json!({"export": {"host": "gw-1", "requests": requests}});
    (lines, serde_json::to_string_pretty(&doc).unwrap())
}

/// A summary's groups (every metric of every group) and its error and cancellation counts.
fn groups_and_outcomes(args: &[&str], input: &[u8]) -> Value {
    let mut a = vec!["summary", "-o", "json"];
    a.extend_from_slice(args);
    let doc: Value = serde_json::from_slice(&run_ok(&a, input)).unwrap();
    serde_json::json!({
        "groups": doc["groups"],
        "errors": doc["coverage"]["errors"],
        "cancelled": doc["coverage"]["cancelled"],
    })
}

/// Lines (or a document) that hold their requests in a list are sampled by their lists'
/// objects: under `--format auto` and `--format inferred`, with `--root` naming the list or not,
/// they give the flat log's summary, and `formats --guess` maps them too.
#[test]
fn requests_held_in_lists_are_inferred_from_the_lists() {
    let flat = groups_and_outcomes(&["--format", "inferred"], GATEWAY.as_bytes());
    assert_eq!(flat["groups"][0]["requests"], 5, "{flat}");
    let (lines, doc) = gateway_in_lists();
    let dir = tempfile::tempdir().unwrap();
    let doc_path = dir.path().join("export.json");
    std::fs::write(&doc_path, &doc).unwrap();
    let doc_path = doc_path.to_str().unwrap();
    for (args, input) in [
        (vec![], lines.as_bytes()),
        (vec!["--format", "inferred"], lines.as_bytes()),
        (vec!["--root", "requests[*]"], lines.as_bytes()),
        (vec![doc_path], b"".as_slice()),
        (
            vec!["--root", "export.requests[*]", doc_path],
            b"".as_slice(),
        ),
    ] {
        assert_eq!(groups_and_outcomes(&args, input), flat, "{args:?}");
    }
    let out = run(&["summary"], lines.as_bytes());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success());
    assert!(
        err.contains("no format recognised any of the first 2 JSON objects: read the 5 objects in their lists with the format `inferred`"),
        "{err}"
    );
    for args in [
        vec!["formats", "--guess", "-"],
        vec!["formats", "--guess", "-", "--root", "requests[*]"],
        // The FILE after the other options.
        vec!["formats", "--guess", "--root", "requests[*]", "-"],
    ] {
        let guess = String::from_utf8(run_ok(&args, lines.as_bytes())).unwrap();
        assert!(
            guess.contains(r#"{ field = "e2e", path = "duration_ms", unit = "ms" }"#),
            "{args:?}: {guess}"
        );
    }
}

/// A gateway's time to first byte (`ttfb_ms`) is measured from the gateway's arrival: in
/// Prometheus its TTFT and E2E are the client families', none the server's.
#[test]
fn a_time_to_first_byte_is_exported_as_the_clients() {
    let text = String::from_utf8(run_ok(
        &["summary", "--format", "inferred", "-o", "prometheus"],
        GATEWAY.as_bytes(),
    ))
    .unwrap();
    assert!(
        text.contains("gen_ai_client_operation_time_to_first_chunk_seconds_count{gen_ai_request_model=\"m1\",cache=\"miss\"} 2"),
        "{text}"
    );
    assert!(
        !text.lines().any(|l| {
            l.starts_with("gen_ai_server_time_to_first_token_seconds_count{")
                || l.starts_with("gen_ai_server_request_duration_seconds_count{")
        }),
        "{text}"
    );
}

/// A `--root` that finds nothing is named where it stops in the first JSON line, with the keys
/// there, in a summary, in enrich and in `formats --guess`.
#[test]
fn a_root_that_finds_nothing_says_where_it_stops() {
    let (lines, _) = gateway_in_lists();
    let stops = "--root export.requests[*] stops in the first JSON line: the line has no `export`; its keys: batch, requests";
    for args in [
        vec!["summary", "--root", "export.requests[*]"],
        vec!["--root", "export.requests[*]"],
    ] {
        let out = run(&args, lines.as_bytes());
        assert!(out.status.success(), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains(&format!(
                "tokentime: <stdin>: no line was read as a request, and {stops}"
            )),
            "{args:?}: {err}"
        );
    }
    let guess = String::from_utf8(run_ok(
        &["formats", "--guess", "--root", "export.requests[*]", "-"],
        lines.as_bytes(),
    ))
    .unwrap();
    assert!(
        guess.contains(&format!("# <stdin>: no record to sample: {stops}")),
        "{guess}"
    );
}

/// Without `--root`, an input whose lines hold a request one member down (the lab capture wraps
/// each llama.cpp response under `"response"`; a key with a dot wrapping a LiteLLM payload) is
/// named with the `--root` that reads it, in a summary, in enrich and in `formats --guess`; the
/// same input read with it gives its requests.
#[test]
fn a_request_one_member_down_is_named_with_its_root() {
    let lab = testdata().join("lab/llamacpp_timings.jsonl");
    let lab = lab.to_str().unwrap();
    let hint = "no line was read as a request; `response` holds a llamacpp request in the first JSON line: try --root response";
    for args in [vec!["summary", lab], vec![lab]] {
        let out = run(&args, b"");
        assert!(out.status.success(), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains(&format!("tokentime: {lab}: {hint}")),
            "{args:?}: {err}"
        );
    }
    let guess = String::from_utf8(run_ok(&["formats", "--guess", lab], b"")).unwrap();
    assert!(
        guess.contains(&format!("# {lab}: `response` holds a llamacpp")),
        "{guess}"
    );
    let read = String::from_utf8(run_ok(&["summary", "--root", "response", lab], b"")).unwrap();
    assert!(read.starts_with("289 requests from "), "{read}");

    let wrapped = r#"{"log.payload":{"call_type":"acompletion","stream":true,"status":"success","startTime":1741946531.5,"completionStartTime":1741946531.75,"endTime":1741946533.75,"prompt_tokens":100,"completion_tokens":9,"model":"m"},"at":1}"#;
    let out = run(&["summary"], wrapped.as_bytes());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(r"`log.payload` holds a litellm request in the first JSON line: try --root 'log\.payload'"),
        "{err}"
    );
    let read = run_ok(&["summary", "--root", r"log\.payload"], wrapped.as_bytes());
    assert!(String::from_utf8(read).unwrap().starts_with("1 request "));
    // A line that is a request itself gets no such word.
    let plain = testdata().join("lab/litellm.jsonl");
    let out = run(&["summary", plain.to_str().unwrap()], b"");
    assert!(
        !String::from_utf8(out.stderr)
            .unwrap()
            .contains("try --root")
    );
}

/// A list of objects that log `prompt_tokens` but no time a guidellm record has is not taken
/// for guidellm's records under `--root`: with no time to read, nothing is a request.
#[test]
fn a_list_under_root_is_not_guidellms_without_its_times() {
    let line = r#"{"rows":[{"prompt_tokens":10,"latency":"slow"},{"prompt_tokens":12}]}"#;
    let out = run(&["summary", "--root", "rows[*]"], line.as_bytes());
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("1 line, no request: no timing 1"),
        "{text}"
    );
}

/// The JSON summary gives the table's first line: the log's span and, per group, the rates
/// over it (`GATEWAY`: 5 requests, 115 output tokens from 10:00:00 to 10:00:06).
#[test]
fn the_json_summary_has_the_span_and_each_groups_rates() {
    let doc: Value = serde_json::from_slice(&run_ok(
        &["summary", "-o", "json", "--format", "inferred"],
        GATEWAY.as_bytes(),
    ))
    .unwrap();
    assert_eq!(
        doc["span"],
        serde_json::json!({"from": "2026-11-30T10:00:00.000Z", "to": "2026-11-30T10:00:06.000Z", "s": 6.0})
    );
    // 5 / 6 s and 115 / 6 s, to 6 significant digits; the 3 completed (a3's 500 failed,
    // a4's 499 was cancelled), 3 / 6 s.
    assert_eq!(
        doc["groups"][0]["throughput"],
        serde_json::json!({"span_s": 6.0, "requests": 5, "requests_per_s": 0.833333, "completed": 3, "completed_per_s": 0.5, "output_tokens_per_s": 19.1667})
    );
    // The cache-hit group (a5: 100 of 120 cached) over the same span: 1 / 6 s, 30 / 6 s.
    let hit = doc["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["key"]["cache"] == "hit")
        .unwrap();
    assert_eq!(hit["throughput"]["requests_per_s"], 0.166667);
    assert_eq!(hit["throughput"]["output_tokens_per_s"], 5.0);
    // One request: its own E2E is no span anything ran at.
    let one = GATEWAY.lines().next().unwrap();
    let doc: Value = serde_json::from_slice(&run_ok(
        &["summary", "-o", "json", "--format", "inferred"],
        one.as_bytes(),
    ))
    .unwrap();
    assert_eq!(
        doc["groups"][0]["throughput"]["requests_per_s"],
        Value::Null
    );
    assert_eq!(doc["span"]["s"], 1.2);
}

/// A failure after the sample is still one: the error members and HTTP statuses the
/// sample's lines do not have are read on every line (a log that writes `error` and `status`
/// on its failures only, the first one past the 1,000 lines sampled).
#[test]
fn failures_past_the_sample_are_failures() {
    let mut log = String::new();
    for i in 0..1200 {
        let fail = match i {
            1100 => r#","error":"upstream connect error""#,
            1150 => r#","status":503"#,
            1160 => r#","status_code":"499""#,
            _ => "",
        };
        log.push_str(&format!(
            "{{\"req\":\"r{i}\",\"ttft_ms\":{},\"e2e_ms\":{}{fail}}}\n",
            100 + i % 7,
            900 + i % 11
        ));
    }
    let doc: Value =
        serde_json::from_slice(&run_ok(&["summary", "-o", "json"], log.as_bytes())).unwrap();
    assert_eq!(doc["coverage"]["requests"], 1200, "{}", doc["coverage"]);
    assert_eq!(doc["errors"]["count"], 2, "{}", doc["errors"]);
    assert_eq!(doc["coverage"]["cancelled"], 1, "{}", doc["coverage"]);
    // The reasons: the status, and the error member's text.
    assert_eq!(
        doc["errors"]["reasons"],
        serde_json::json!([{"count": 1, "reason": "503"}, {"count": 1, "reason": "upstream connect error"}])
    );
}

/// A log's own unreadable values (`"n/a"`, Python's `Infinity`, an impossible `-5`) do not
/// cost the mapping: at most one in 50 of the sample's values may not read, each null on its
/// own line (`unparseable`, or a negative interval).
#[test]
fn a_few_unreadable_values_cost_only_their_requests() {
    let mut log = String::new();
    for i in 0..100 {
        let e2e = match i {
            6 => "\"n/a\"".to_owned(),
            40 => "Infinity".to_owned(),
            _ => format!("{}", 900 + i),
        };
        log.push_str(&format!(
            "{{\"req\":\"r{i}\",\"ttft_ms\":{},\"e2e_ms\":{e2e}}}\n",
            100 + i
        ));
    }
    let doc: Value =
        serde_json::from_slice(&run_ok(&["summary", "-o", "json"], log.as_bytes())).unwrap();
    assert_eq!(doc["coverage"]["requests"], 100, "{}", doc["coverage"]);
    assert_eq!(doc["coverage"]["anomalies"]["unparseable"], 2);
    let e2e = &doc["groups"][0]["metrics"]["e2e_ms"];
    assert_eq!(e2e["count"], 98, "{e2e}");
    assert_eq!(e2e["nulls"]["unparseable"], 2, "{e2e}");
    assert_eq!(doc["groups"][0]["metrics"]["ttft_ms"]["count"], 100);
    // Three in 100 is more than a log's odd value: the field is not mapped.
    let three = log.replace("\"e2e_ms\":920}", "\"e2e_ms\":\"?\"}");
    let out = run(&["summary", "--format", "inferred"], three.as_bytes());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("e2e_ms as e2e (values that are not non-negative durations)"),
        "{err}"
    );
}

/// A sample of one line (a file of one request, a pipe's first read) cannot check a TTFT
/// against an E2E: auto leaves the inferred format out and says why, and `--format inferred`
/// reads with it.
#[test]
fn a_one_line_sample_says_why_auto_leaves_it() {
    let line = GATEWAY.lines().next().unwrap();
    let out = run(&["summary"], line.as_bytes());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no format recognised the first JSON object, and the format `inferred` is used unasked only when two sample lines or more have both a TTFT and an E2E to check (1 here)"),
        "{err}"
    );
    let text = String::from_utf8(run_ok(
        &["summary", "--format", "inferred"],
        line.as_bytes(),
    ))
    .unwrap();
    assert!(text.starts_with("1 request from"), "{text}");
}
