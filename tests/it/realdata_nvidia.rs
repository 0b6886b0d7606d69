//! NVIDIA's benchmark clients, AIPerf and GenAI-Perf (testdata/realdata: a public file, and runs
//! of the producers' own code against the mock server, each with the producer's own aggregates,
//! see its README): `summary` reproduces each producer's numbers where the definitions agree.

use crate::common::*;
use serde_json::Value;

fn summary(args: &[&str]) -> Value {
    serde_json::from_slice(&run_ok(args, b"")).unwrap()
}

fn read(rel: &str) -> Value {
    serde_json::from_slice(&std::fs::read(testdata().join(rel)).unwrap()).unwrap()
}

/// Every statistic of a producer's aggregate (`avg`, `min`, `max`, `p*`) against ours.
fn compare(ours: &Value, theirs: &Value, quantiles: &[&str], what: &str) {
    let t = |k: &str| {
        theirs[k]
            .as_f64()
            .unwrap_or_else(|| panic!("{what} {k}: not theirs"))
    };
    let moments = [("mean", t("avg")), ("min", t("min")), ("max", t("max"))];
    close_stats(
        ours,
        moments
            .into_iter()
            .chain(quantiles.iter().map(|&q| (q, t(q)))),
        what,
    );
    assert_eq!(ours["exact"], true, "{what}");
}

/// Each of our metrics against AIPerf's statistics of its tag: the same count, and
/// [`compare`] on the quantiles.
fn compare_aiperf(ours: &Value, theirs: &Value, pairs: &[(&str, &str)], qs: &[&str], run: &str) {
    for (m, tag) in pairs {
        assert_eq!(ours[m]["count"], theirs[tag]["count"], "{m} count");
        compare(&ours[m], &theirs[tag], qs, &format!("{run} {m} ~ {tag}"));
    }
}

const AIPERF: &str = "realdata/aiperf011-reasoning-cancel";

#[test]
fn aiperf_reproduces_its_latency_token_and_chunk_gap_statistics() {
    let file = testdata().join(AIPERF).join("profile_export.jsonl");
    let theirs = read(&format!("{AIPERF}/profile_export_aiperf.json"));
    let theirs = &theirs["records"];
    let qs = ["p1", "p5", "p25", "p50", "p75", "p90", "p95", "p99"];
    // The chunk gaps of every request (21,537 values): exact, as AIPerf's numpy percentiles.
    let s = summary(&[
        "summary",
        "-o",
        "json",
        "--exact-limit",
        "1000000",
        "--quantiles",
        "1,5,25,50,75,90,95,99",
        file.to_str().unwrap(),
    ]);
    assert_eq!(s["coverage"]["formats"]["aiperf"], 100);
    // The 11 requests cancelled before their first token are errors (AIPerf's Error Request
    // Count), kept out of every latency.
    assert_eq!(
        s["coverage"]["errors"].as_f64(),
        theirs["error_request_count"]["avg"].as_f64()
    );
    let g = &s["groups"][0]["metrics"];
    compare_aiperf(
        g,
        theirs,
        &[
            ("ttft_ms", "ttft"),
            ("tpot_ms", "inter_token_latency"),
            ("itl_ms", "inter_chunk_latency"),
            ("e2e_ms", "request_latency"),
            ("output_tokens", "output_sequence_length"),
            ("input_tokens", "input_sequence_length"),
        ],
        &qs,
        "aiperf",
    );
    assert_eq!(g["ttft_ms"]["nulls"]["error"], 11);
    // Its Request Throughput, the completed requests over the span of them all, to the 6
    // significant digits tokentime gives (9.551622...).
    let t = &s["groups"][0]["throughput"];
    assert_eq!(
        t["completed"].as_f64(),
        theirs["request_count"]["avg"].as_f64()
    );
    assert_eq!(t["completed_per_s"], 9.55162);
    let theirs = theirs["request_throughput"]["avg"].as_f64().unwrap();
    assert_eq!(format!("{theirs:.5}"), "9.55162");
    assert_eq!(t["requests_per_s"], 10.7322);
}

const AIPERF13: &str = "realdata/aiperf013-mock-chat-cancel";

/// AIPerf 0.13 (the current schema: `request_start_ns`, `time_to_first_token`, `was_cancelled`,
/// `error_isl`, warm-up records in the same file), run here against the mock server: 150
/// profiling requests, 11 HTTP 503s, 12 cancelled by AIPerf, 5 warm-up requests.
#[test]
fn aiperf_current_reproduces_its_statistics_errors_and_cancellations() {
    let file = testdata().join(AIPERF13).join("profile_export.jsonl");
    let theirs = read(&format!("{AIPERF13}/profile_export_aiperf.json"));
    assert_eq!(theirs["aiperf_version"], "0.13.0");
    let qs = ["p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"];
    let s = summary(&[
        "summary",
        "-o",
        "json",
        "--exact-limit",
        "1000000",
        "--quantiles",
        "1,5,10,25,50,75,90,95,99",
        file.to_str().unwrap(),
    ]);
    let cov = &s["coverage"];
    // 155 lines: the 5 warm-up records (`--warmup-request-count 5`) are no requests, and are
    // counted as what they are, not as lines of no timing.
    assert_eq!(cov["lines"], 155);
    assert_eq!(cov["skipped"]["warm-up records"], 5);
    assert_eq!(cov["no_timing"], 0);
    assert_eq!(cov["formats"]["aiperf"], 150);
    assert_eq!(
        cov["requests"].as_f64(),
        theirs["completed_request_count"]["avg"].as_f64()
    );
    // AIPerf's error count holds its cancellations: a cancelled record carries no metric but
    // `error_isl` (no TTFT even when tokens had come), so each is a cancellation before the
    // first token, an error to tokentime.
    assert_eq!(
        cov["errors"].as_f64(),
        theirs["error_request_count"]["avg"].as_f64()
    );
    let g = &s["groups"][0]["metrics"];
    compare_aiperf(
        g,
        &theirs,
        &[
            ("ttft_ms", "time_to_first_token"),
            ("tpot_ms", "inter_token_latency"),
            ("itl_ms", "inter_chunk_latency"),
            ("e2e_ms", "request_latency"),
            ("decode_ms", "decode_duration"),
            ("output_tokens", "output_sequence_length"),
            ("input_tokens", "input_sequence_length"),
        ],
        &qs,
        "aiperf 0.13",
    );
    assert_eq!(g["ttft_ms"]["nulls"]["error"], 23);
    // Its Request Throughput counts the completed requests (127, `request_count`) over the
    // profiling phase, which AIPerf 0.13 times on its own clock: 15.2036 s against the 15.1982
    // s from the first request's start to the last one's end, so the rates agree within 0.04%.
    let t = &s["groups"][0]["throughput"];
    assert_eq!(
        t["completed"].as_f64(),
        theirs["request_count"]["avg"].as_f64()
    );
    let (ours, theirs) = (
        t["completed_per_s"].as_f64().unwrap(),
        theirs["request_throughput"]["avg"].as_f64().unwrap(),
    );
    assert!(
        (ours / theirs - 1.0).abs() < 0.0005,
        "{ours} against {theirs}"
    );
}

const GENAI_PERF: &str = "realdata/genai-perf016-mock-chat-stream";

/// GenAI-Perf 0.0.16 (Perf Analyzer 2.51.0), a streamed chat run against the mock server: each
/// request's responses are the role chunk, the content chunks and `[DONE]`; TTFT and request
/// latency run from the start to the first and last response that carries content.
#[test]
fn genai_perf_reproduces_its_ttft_and_request_latency_statistics() {
    let file = testdata().join(GENAI_PERF).join("profile_export.json");
    let theirs = read(&format!("{GENAI_PERF}/profile_export_genai_perf.json"));
    let s = summary(&[
        "summary",
        "-o",
        "json",
        "--quantiles",
        "1,5,10,25,50,75,90,95,99",
        file.to_str().unwrap(),
    ]);
    assert_eq!(s["coverage"]["formats"]["genai-perf"], 100);
    assert_eq!(s["coverage"]["lines"], 1);
    let g = &s["groups"][0]["metrics"];
    let qs = ["p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"];
    for (ours, tag) in [
        ("ttft_ms", "time_to_first_token"),
        ("e2e_ms", "request_latency"),
    ] {
        assert_eq!(
            g[ours]["count"].as_f64(),
            theirs["request_count"]["avg"].as_f64(),
            "{ours} count"
        );
        compare(
            &g[ours],
            &theirs[tag],
            &qs,
            &format!("genai-perf {ours} ~ {tag}"),
        );
    }
    // Token counts come from GenAI-Perf's tokenizer over the text: not in the export.
    assert_eq!(g["output_tokens"]["nulls"]["not_logged"], 100);
}

/// A request that was not streamed has one response: no first token to time. GenAI-Perf
/// reports its request latency as the TTFT; tokentime has none. The role chunk and `[DONE]` of
/// a stream carry no content and neither start nor end it.
#[test]
fn genai_perf_times_the_responses_that_carry_content() {
    let chunk = |content: &str| {
        format!(
            r#"{{"response":"data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{{content}}}}}]}}\n\n"}}"#
        )
    };
    let streamed = format!(
        r#"{{"timestamp":1700000000000000000,"request_inputs":{{"payload":"{{}}"}},"response_timestamps":[1700000000001000000,1700000000100000000,1700000000150000000,1700000000151000000],"response_outputs":[{},{},{},{{"response":"data: [DONE]\n\n"}}]}}"#,
        chunk(r#"\"role\":\"assistant\",\"content\":\"\""#),
        chunk(r#"\"content\":\" Hello\""#),
        chunk(r#"\"content\":\" world\""#),
    );
    let whole = r#"{"timestamp":1700000000000000000,"request_inputs":{"payload":"{}"},"response_timestamps":[1700000000300000000],"response_outputs":[{"response":"{\"object\":\"chat.completion\",\"choices\":[{\"message\":{\"content\":\"Hi\"}}]}"}]}"#;
    let doc = format!(
        r#"{{"experiments":[{{"experiment":{{"mode":"concurrency","value":1}},"requests":[{streamed},{whole}]}}],"version":"2.51.0","service_kind":"openai","endpoint":"v1/chat/completions"}}"#
    );
    let input = doc + "\n";
    let rows = run_ok(
        &["-o", "jsonl", "--fields", "format,ttft_ms,e2e_ms"],
        input.as_bytes(),
    );
    let rows: Vec<Value> = String::from_utf8(rows)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["format"], "genai-perf");
    assert_eq!(rows[0]["ttft_ms"], 100.0);
    assert_eq!(rows[0]["e2e_ms"], 150.0);
    assert_eq!(rows[1]["ttft_ms"], Value::Null);
    assert_eq!(rows[1]["e2e_ms"], 300.0);
    let s: Value =
        serde_json::from_slice(&run_ok(&["summary", "-o", "json"], input.as_bytes())).unwrap();
    assert_eq!(
        s["groups"][0]["metrics"]["ttft_ms"]["nulls"]["not_streamed"],
        1
    );
}

/// The current AIPerf record (`request_start_ns`, `time_to_first_token`, `was_cancelled`,
/// `error_isl`), as its documentation shows it: a request, a failure, a cancellation after the
/// first token and a warm-up record.
#[test]
fn aiperf_current_records_ok_error_cancelled_and_warmup() {
    let md = |extra: &str| {
        format!(
            r#""metadata":{{"session_num":1,"x_request_id":"r","request_start_ns":1759813207532900363,"request_end_ns":1759813207838764604,"worker_id":"w","record_processor_id":"p","benchmark_phase":"profiling"{extra}}}"#
        )
    };
    let ok = format!(
        r#"{{{},"metrics":{{"input_sequence_length":{{"value":550,"unit":"tokens"}},"time_to_first_token":{{"value":255.886568,"unit":"ms"}},"request_latency":{{"value":297.525228,"unit":"ms"}},"inter_chunk_latency":{{"value":[4.898437,5.316006],"unit":"ms"}},"output_sequence_length":{{"value":9,"unit":"tokens"}},"inter_token_latency":{{"value":5.2048325,"unit":"ms"}}}},"error":null}}"#,
        md("")
    );
    let failed = format!(
        r#"{{{},"metrics":{{"error_isl":{{"value":550,"unit":"tokens"}}}},"error":{{"code":500,"type":"ServerError","message":"boom"}}}}"#,
        md("")
    );
    let cancelled = format!(
        r#"{{{},"metrics":{{"error_isl":{{"value":550,"unit":"tokens"}},"time_to_first_token":{{"value":40.0,"unit":"ms"}}}},"error":{{"code":499,"type":"RequestCancellationError","message":"Request was cancelled after 0.050 seconds"}}}}"#,
        md(r#","was_cancelled":true,"cancellation_time_ns":1759813207582900363"#)
    );
    let warmup = ok.replace(r#""profiling""#, r#""warmup""#);
    let input = [ok, failed, cancelled, warmup].join("\n") + "\n";
    let rows = run_ok(&["--only-requests"], input.as_bytes());
    let rows: Vec<Value> = String::from_utf8(rows)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 3, "the warm-up record is no request");
    let m = |i: usize| &rows[i]["tokentime"];
    assert_eq!(m(0)["format"], "aiperf");
    assert_eq!(m(0)["outcome"], "ok");
    assert_eq!(m(0)["ttft_ms"], 255.887);
    assert_eq!(m(0)["e2e_ms"], 297.525);
    // AIPerf's inter_token_latency: (E2E - TTFT) / (OSL - 1).
    assert_eq!(m(0)["tpot_ms"], 5.205);
    assert_eq!(m(1)["outcome"], "error");
    assert_eq!(m(1)["input_tokens"], 550);
    assert_eq!(m(2)["outcome"], "cancelled");
    assert_eq!(m(2)["ttft_ms"], 40.0);
}

/// AIPerf's warm-up records are counted as what they are, apart from the lines of no timing:
/// in the headline, the JSON coverage, the Prometheus line counts and a digest file merged; an
/// input of warm-up records alone is said to be one, and is no log to infer a format from.
#[test]
fn aiperf_warmup_records_are_counted_as_such() {
    let file = testdata().join(AIPERF13).join("profile_export.jsonl");
    let file = file.to_str().unwrap();
    let text = String::from_utf8(run_ok(&["summary", file], b"")).unwrap();
    assert!(
        text.contains("155 lines (aiperf 150), warm-up records 5\n"),
        "{text}"
    );
    assert!(!text.contains("no timing"), "{text}");
    let prom = String::from_utf8(run_ok(&["summary", "-o", "prometheus", file], b"")).unwrap();
    assert!(
        prom.contains("\ntokentime_lines{kind=\"skipped\",what=\"warm-up records\"} 5\n"),
        "{prom}"
    );
    assert!(
        prom.contains("\ntokentime_lines{kind=\"no_timing\"} 0\n"),
        "{prom}"
    );
    let dir = tempfile::tempdir().unwrap();
    let digest = dir.path().join("d.json");
    run_ok(
        &["summary", "--save-digest", digest.to_str().unwrap(), file],
        b"",
    );
    let copy = dir.path().join("copy.json");
    std::fs::copy(&digest, &copy).unwrap();
    let merged = summary(&[
        "merge",
        "-o",
        "json",
        digest.to_str().unwrap(),
        copy.to_str().unwrap(),
    ]);
    assert_eq!(merged["coverage"]["skipped"]["warm-up records"], 10);
    // The warm-up records alone.
    let warmup: String = std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .filter(|l| l.contains(r#""benchmark_phase":"warmup""#))
        .map(|l| format!("{l}\n"))
        .collect();
    let out = run_stderr(&["summary"], warmup.as_bytes(), true);
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert!(
        stdout.starts_with("5 lines, no request: warm-up records 5\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("no line was a request: every JSON line was one its format leaves out (warm-up records 5;"),
        "{stdout}"
    );
    assert!(!stderr.contains("inferred"), "{stderr}");
}
