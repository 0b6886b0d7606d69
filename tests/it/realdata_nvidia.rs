//! NVIDIA's benchmark clients, AIPerf and GenAI-Perf (testdata/realdata, public files with the
//! producers' own aggregates, see its README): `summary` reproduces each producer's numbers
//! where the definitions agree.

use crate::common::*;
use serde_json::Value;

fn summary(args: &[&str]) -> Value {
    serde_json::from_slice(&run_ok(args, b"")).unwrap()
}

fn read(rel: &str) -> Value {
    serde_json::from_slice(&std::fs::read(testdata().join(rel)).unwrap()).unwrap()
}

fn close(ours: &Value, theirs: &Value, what: &str) {
    let ours = ours.as_f64().unwrap_or_else(|| panic!("{what}: no value"));
    let theirs = theirs
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: not theirs"));
    assert!(
        (ours - theirs).abs() <= 0.01,
        "{what}: ours {ours} vs theirs {theirs}"
    );
}

/// Every statistic of a producer's aggregate (`avg`, `min`, `max`, `p*`) against ours.
fn compare(ours: &Value, theirs: &Value, quantiles: &[&str], what: &str) {
    close(&ours["mean"], &theirs["avg"], &format!("{what} avg"));
    close(&ours["min"], &theirs["min"], &format!("{what} min"));
    close(&ours["max"], &theirs["max"], &format!("{what} max"));
    for q in quantiles {
        close(&ours["quantiles"][q], &theirs[q], &format!("{what} {q}"));
    }
    assert_eq!(ours["exact"], true, "{what}");
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
    for (ours, tag) in [
        ("ttft_ms", "ttft"),
        ("tpot_ms", "inter_token_latency"),
        ("itl_ms", "inter_chunk_latency"),
        ("e2e_ms", "request_latency"),
        ("output_tokens", "output_sequence_length"),
        ("input_tokens", "input_sequence_length"),
    ] {
        assert_eq!(g[ours]["count"], theirs[tag]["count"], "{ours} count");
        compare(
            &g[ours],
            &theirs[tag],
            &qs,
            &format!("aiperf {ours} ~ {tag}"),
        );
    }
    assert_eq!(g["ttft_ms"]["nulls"]["error"], 11);
}

#[test]
fn genai_perf_reproduces_its_request_latency_statistics() {
    let dir = "realdata/genai-perf-chat-c50";
    let file = testdata().join(dir).join("simple_medium_response_c50.json");
    let theirs = read(&format!("{dir}/simple_medium_response_c50_genai_perf.json"));
    let s = summary(&[
        "summary",
        "-o",
        "json",
        "--quantiles",
        "1,5,10,25,50,75,90,95,99",
        file.to_str().unwrap(),
    ]);
    assert_eq!(s["coverage"]["formats"]["genai-perf"], 138);
    assert_eq!(s["coverage"]["lines"], 1);
    let g = &s["groups"][0]["metrics"];
    assert_eq!(
        g["e2e_ms"]["count"].as_f64(),
        theirs["request_count"]["avg"].as_f64()
    );
    let qs = ["p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"];
    compare(
        &g["e2e_ms"],
        &theirs["request_latency"],
        &qs,
        "genai-perf e2e",
    );
    // A run without streaming: one response a request, no first token to time. GenAI-Perf
    // reports its request latency as the TTFT; tokentime has none.
    assert_eq!(g["ttft_ms"]["nulls"]["not_streamed"], 138);
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
