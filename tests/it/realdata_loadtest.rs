//! Load testers' and vLLM's per-request records: llm-load-test (a real 2023 output document of
//! its own repository, testdata/realdata/llmloadtest2023-caikit-c20), the current output of
//! SGLang's `bench_serving` and of llm-load-test from runs of their own code against a local
//! mock server (testdata/realdata/sglang0523-mock, llmloadtest-mock-*), and samples built from
//! the producers' source where no public file exists (testdata/loadtest, see its README):
//! llm-load-test's current output with its `summary`, SGLang `bench_serving --output-details`,
//! vLLM v1 `FinishedRequestStats`/`RequestStateStats` and v0 `RequestMetrics` dumps.

use crate::common::*;
use serde_json::Value;

fn summary_of(file: &std::path::Path, extra: &[&str]) -> Value {
    let mut args = vec!["summary", "-o", "json"];
    args.extend_from_slice(extra);
    args.push(file.to_str().unwrap());
    serde_json::from_slice(&run_ok(&args, b"")).unwrap()
}

fn read(file: &std::path::Path) -> Value {
    serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap()
}

/// llm-load-test's summary statistics (pandas `describe` names) and ours.
const LLM_LOAD_TEST_STATS: [(&str, &str); 8] = [
    ("min", "min"),
    ("max", "max"),
    ("mean", "mean"),
    ("p50", "median"),
    ("p80", "percentile_80"),
    ("p90", "percentile_90"),
    ("p95", "percentile_95"),
    ("p99", "percentile_99"),
];

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The enriched `tokentime` objects of a file's request lines.
fn enriched(file: &std::path::Path) -> Vec<Value> {
    let out = run_ok(&["--only-requests", file.to_str().unwrap()], b"");
    enriched_objects(&out)
        .into_iter()
        .map(|o| o.expect("an enriched line"))
        .collect()
}

/// llm-load-test's own 2023 output: TTFT in ms, `response_time` in seconds. Its mean TTFT and
/// mean response time (what that version printed) and every linear quantile of both are
/// reproduced; its TPOT, from the ack rather than the first token, is larger than tokentime's.
#[test]
fn llm_load_test_2023_reproduces_ttft_and_response_time() {
    let file = testdata().join("realdata/llmloadtest2023-caikit-c20/output.json");
    let doc = read(&file);
    let results = doc["results"].as_array().unwrap();
    let col = |k: &str, scale: f64| -> Vec<f64> {
        results
            .iter()
            .map(|r| r[k].as_f64().unwrap() * scale)
            .collect()
    };
    let (ttft, resp, their_tpot) = (
        col("TTFT", 1.0),
        col("response_time", 1000.0),
        col("TPOT", 1.0),
    );
    let s = summary_of(&file, &["--quantiles", "50,80,90,95,99"]);
    assert_eq!(s["coverage"]["formats"]["llm-load-test-2023"], 107);
    assert_eq!(s["coverage"]["errors"], 0);
    let g = &s["groups"][0]["metrics"];
    for (ours, theirs) in [(&g["ttft_ms"], &ttft), (&g["e2e_ms"], &resp)] {
        assert_eq!(ours["count"], 107);
        let quantiles = [
            ("p50", 0.5),
            ("p80", 0.8),
            ("p90", 0.9),
            ("p95", 0.95),
            ("p99", 0.99),
        ]
        .map(|(k, q)| (k, quantile7(theirs, q)));
        close_stats(
            ours,
            [("mean", mean(theirs))].into_iter().chain(quantiles),
            "",
        );
    }
    let ours_tpot = g["tpot_ms"]["mean"].as_f64().unwrap();
    assert!(
        ours_tpot < mean(&their_tpot) - 5.0,
        "its TPOT counts the ack-to-first-token wait: {ours_tpot} vs {}",
        mean(&their_tpot)
    );
}

/// The current output document (sample built from result.py and utils.py): its `summary` of
/// `response_time` (every successful request) is reproduced stat by stat; TTFT and ITL (which
/// is tokentime's TPOT) are summarized by the producer over the requests that finished before
/// the deadline only, so tokentime's counts are larger by those.
#[test]
fn llm_load_test_reproduces_its_response_time_summary() {
    let file = testdata().join("loadtest/llm-load-test.json");
    let doc = read(&file);
    let theirs = &doc["summary"];
    let s = summary_of(&file, &["--quantiles", "50,80,90,95,99"]);
    assert_eq!(
        s["coverage"]["formats"]["llm-load-test"],
        theirs["total_requests"]
    );
    assert_eq!(s["coverage"]["errors"], theirs["total_failures"]);
    let e2e = &s["groups"][0]["metrics"]["e2e_ms"];
    let rt = &theirs["response_time"];
    close_stats(
        e2e,
        LLM_LOAD_TEST_STATS.map(|(ours, k)| (ours, rt[k].as_f64().unwrap())),
        "e2e",
    );
    let ok =
        theirs["total_requests"].as_u64().unwrap() - theirs["total_failures"].as_u64().unwrap();
    let late = ok
        - theirs["req_completed_within_test_duration"]
            .as_u64()
            .unwrap();
    assert_eq!(late, 1);
    let g = &s["groups"][0]["metrics"];
    assert_eq!(g["ttft_ms"]["count"].as_u64().unwrap(), ok);
    // The one-token request has no ITL (producer) and no TPOT (tokentime).
    assert_eq!(g["tpot_ms"]["count"].as_u64().unwrap(), ok - 1);
    assert_eq!(g["tpot_ms"]["nulls"]["one_token"], 1);
}

/// SGLang `bench_serving --output-details`: its own key tells it from vLLM's result (the same
/// arrays); TTFT and ITL aggregates are reproduced exactly; its TPOT and E2E use the latency
/// measured at the last chunk, which the file does not keep, so tokentime's (from the token
/// gaps) are a little smaller.
#[test]
fn sglang_bench_reproduces_ttft_and_itl_and_is_told_from_vllm_bench() {
    let file = testdata().join("loadtest/sglang-bench.jsonl");
    // Python writes `"request_rate": Infinity` (rate inf): not JSON, and not read by tokentime.
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("Infinity", "null");
    let theirs: Value = serde_json::from_str(&text).unwrap();
    let s = summary_of(&file, &["--quantiles", "50,95,99"]);
    assert_eq!(s["coverage"]["formats"]["sglang-bench"], 12);
    assert_eq!(s["coverage"]["errors"], 1);
    let g = &s["groups"][0]["metrics"];
    assert_eq!(g["ttft_ms"]["count"], theirs["completed"]);
    for (m, keys) in [
        (
            "ttft",
            &[("mean", "mean"), ("p50", "median"), ("p99", "p99")][..],
        ),
        (
            "itl",
            &[
                ("mean", "mean"),
                ("p50", "median"),
                ("p95", "p95"),
                ("p99", "p99"),
            ][..],
        ),
    ] {
        close_stats(
            &g[format!("{m}_ms")],
            keys.iter()
                .map(|&(o, t)| (o, theirs[format!("{t}_{m}_ms")].as_f64().unwrap())),
            m,
        );
    }
    for m in ["tpot", "e2e"] {
        let key = if m == "e2e" {
            "mean_e2e_latency_ms"
        } else {
            "mean_tpot_ms"
        };
        let ours = g[format!("{m}_ms")]["mean"].as_f64().unwrap();
        let t = theirs[key].as_f64().unwrap();
        assert!(
            ours < t && ours > t * 0.97,
            "{m}: ours {ours} vs theirs {t}"
        );
    }
    // A vLLM result and an SGLang line in one stream: each keeps its own format, whichever
    // comes first (the format that matched last is tried first).
    let vllm = std::fs::read(testdata().join("samples/vllm_bench_serve.jsonl")).unwrap();
    let sglang = std::fs::read(&file).unwrap();
    for both in [
        [&vllm[..], &sglang[..]].concat(),
        [&sglang[..], &vllm[..]].concat(),
    ] {
        let s: Value =
            serde_json::from_slice(&run_ok(&["summary", "-o", "json", "-"], &both)).unwrap();
        assert_eq!(s["coverage"]["formats"]["sglang-bench"], 12);
        assert!(s["coverage"]["formats"]["vllm-bench"].as_u64().unwrap() > 0);
    }
}

/// vLLM v1 stats: `arrival_time` is wall clock, the `*_ts` are monotonic; TTFT is vLLM's
/// `first_token_latency`, never `first_token_ts - arrival_time`. A 0.0
/// `mean_time_per_output_token` of a one-token request is no TPOT sample; an abort after the
/// first token is a cancellation, one while queued an error; all-zero stats are sentinels,
/// their token counts of 0 included.
#[test]
fn vllm_stats_keep_clock_domains_apart_and_sentinels_out() {
    let file = testdata().join("loadtest/vllm-stats.jsonl");
    let rows = enriched(&file);
    assert_eq!(rows.len(), 5);
    let r = &rows[0];
    assert_eq!(r["format"], "vllm-stats");
    assert_eq!(r["ttft_ms"], 99.0);
    assert_eq!(r["ttft_origin"], "arrival");
    assert_eq!(
        (
            r["queue_ms"].clone(),
            r["prefill_ms"].clone(),
            r["decode_ms"].clone()
        ),
        (8.0.into(), 85.0.into(), 819.0.into())
    );
    assert_eq!(r["tpot_ms"], 21.0);
    assert_eq!(r["e2e_ms"], 918.0);
    let one = &rows[1];
    assert_eq!(one["tpot_ms"], Value::Null);
    assert_eq!(one["nulls"]["tpot_ms"], "one_token");
    assert_eq!(rows[2]["outcome"], "cancelled");
    assert_eq!(rows[2]["ttft_ms"], 241.1);
    assert_eq!(
        rows[3]["outcome"], "error",
        "aborted while queued: no first token"
    );
    let zero = &rows[4];
    for m in [
        "ttft_ms",
        "e2e_ms",
        "queue_ms",
        "prefill_ms",
        "decode_ms",
        "tpot_ms",
    ] {
        assert_eq!(zero[m], Value::Null, "{m}");
        assert_eq!(zero["nulls"][m], "sentinel", "{m}");
    }
    // Its token counts of 0 are vLLM's defaults too, not counts: null, with the reason.
    for m in ["input_tokens", "output_tokens"] {
        assert_eq!(zero[m], Value::Null, "{m}");
        assert_eq!(zero["nulls"][m], "sentinel", "{m}");
    }
    let s = summary_of(&file, &[]);
    for m in ["input_tokens", "output_tokens"] {
        let t = &s["groups"][0]["metrics"][m];
        // Five requests: one failed (an error), one never ran.
        assert_eq!(
            t["count"], 3,
            "{m}: the request that never ran is no sample"
        );
        assert_eq!(t["nulls"]["sentinel"], 1, "{m}");
    }
    // The abort while queued: vLLM subtracts its unset `scheduled_ts` (0.0) from `queued_ts`,
    // a negative `queued_time`, which is counted, not clamped.
    assert_eq!(s["coverage"]["anomalies"]["negative_interval"], 1);
    assert_eq!(s["groups"][0]["metrics"]["tpot_ms"]["count"], 1);
}

/// vLLM v0 `RequestMetrics`: one wall clock, so the instants give TTFT, queue and prefill; a
/// request without a first token has no TTFT.
#[test]
fn vllm_v0_metrics_read_their_instants() {
    let rows = enriched(&testdata().join("loadtest/vllm-v0-metrics.jsonl"));
    assert_eq!(rows[0]["format"], "vllm-v0-metrics");
    assert_eq!(rows[0]["ttft_ms"], 110.0);
    assert_eq!(rows[0]["queue_ms"], 20.0);
    assert_eq!(rows[0]["prefill_ms"], 90.0);
    assert_eq!(rows[0]["e2e_ms"], 1400.0);
    assert_eq!(rows[1]["ttft_ms"], Value::Null);
    assert_eq!(rows[1]["nulls"]["ttft_ms"], "not_logged");
}

/// The numbers of `summary -o json` on `input` (a file, or `-` with `stdin`).
fn summary_on(input: &str, stdin: &[u8], quantiles: &str) -> Value {
    serde_json::from_slice(&run_ok(
        &["summary", "-o", "json", "--quantiles", quantiles, input],
        stdin,
    ))
    .unwrap()
}

/// SGLang 0.5.23's `bench_serving` run for real over loopback against a mock server
/// (testdata/realdata/sglang0523-mock, see its SOURCE.md): two `--output-details` lines, a
/// completions run and a chat run, with HTTP 503 failures. Line by line, TTFT, TPOT and ITL
/// (mean, median, p90, p95, p99) are SGLang's to 0.01 ms; its E2E ends at the `[DONE]` line,
/// which the file does not keep, so tokentime's (the last token) is never larger and within
/// half a millisecond.
#[test]
fn sglang_bench_real_run_reproduces_its_aggregates_line_by_line() {
    let file = testdata().join("realdata/sglang0523-mock/sglang-bench.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    for line in lines {
        // `"request_rate": Infinity` (rate inf) is Python's, not JSON: serde reads it as null.
        let theirs: Value = serde_json::from_str(&line.replace("Infinity", "null")).unwrap();
        let n = theirs["ttfts"].as_array().unwrap().len();
        let failed = theirs["errors"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e != &"")
            .count();
        let s = summary_on("-", format!("{line}\n").as_bytes(), "50,90,95,99");
        let what = theirs["backend"].as_str().unwrap();
        assert_eq!(s["coverage"]["formats"]["sglang-bench"], n, "{what}");
        assert!(failed > 0, "{what}: the mock's 503s");
        assert_eq!(s["coverage"]["errors"], failed, "{what}");
        let g = &s["groups"][0]["metrics"];
        assert_eq!(g["ttft_ms"]["count"], theirs["completed"], "{what}");
        let gaps: usize = theirs["itls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_array().unwrap().len())
            .sum();
        assert_eq!(g["itl_ms"]["count"], gaps, "{what}");
        let keys = [
            ("mean", "mean"),
            ("p50", "median"),
            ("p90", "p90"),
            ("p95", "p95"),
            ("p99", "p99"),
        ];
        for m in ["ttft", "tpot", "itl"] {
            close_stats(
                &g[format!("{m}_ms")],
                keys.map(|(o, t)| (o, theirs[format!("{t}_{m}_ms")].as_f64().unwrap())),
                &format!("{what} {m}"),
            );
        }
        for (o, t) in keys {
            let ours = stat(&g["e2e_ms"], o).as_f64().unwrap();
            let t = theirs[format!("{t}_e2e_latency_ms")].as_f64().unwrap();
            assert!(
                ours <= t + 0.001 && ours > t - 0.5,
                "{what} e2e {o}: ours {ours} vs theirs {t}"
            );
        }
        close(
            &g["output_tokens"]["mean"],
            theirs["total_output_tokens"].as_f64().unwrap() / theirs["completed"].as_f64().unwrap(),
            &format!("{what} output tokens"),
        );
    }
}

/// llm-load-test (main, b27aad1) run for real over loopback against a mock server
/// (testdata/realdata/llmloadtest-mock-*, see their SOURCE.md), one run on
/// /v1/chat/completions with HTTP 503 failures and one on /v1/completions: every statistic of
/// its `summary` for TTFT, ITL (tokentime's TPOT), response time and token counts is
/// reproduced to 0.01 ms. No request of these runs ended past the deadline, so the producer's
/// TTFT and ITL counts are tokentime's.
#[test]
fn llm_load_test_real_runs_reproduce_their_summary() {
    for (dir, failures) in [
        ("llmloadtest-mock-chat-c4", 6),
        ("llmloadtest-mock-completions-c4", 0),
    ] {
        let file = testdata()
            .join("realdata")
            .join(dir)
            .join("output-004.json");
        let doc = read(&file);
        let theirs = &doc["summary"];
        let total = theirs["total_requests"].as_u64().unwrap();
        assert_eq!(theirs["total_failures"], failures, "{dir}");
        let s = summary_on(file.to_str().unwrap(), b"", "50,80,90,95,99");
        assert_eq!(s["coverage"]["formats"]["llm-load-test"], total, "{dir}");
        assert_eq!(s["coverage"]["errors"], failures, "{dir}");
        let ok = total - failures;
        assert_eq!(theirs["req_completed_within_test_duration"], ok, "{dir}");
        let g = &s["groups"][0]["metrics"];
        for (ours, t) in [
            ("ttft_ms", "ttft"),
            ("tpot_ms", "itl"),
            ("e2e_ms", "response_time"),
            ("output_tokens", "output_tokens"),
            ("input_tokens", "input_tokens"),
        ] {
            assert_eq!(g[ours]["count"], ok, "{dir} {ours}");
            close_stats(
                &g[ours],
                LLM_LOAD_TEST_STATS.map(|(o, k)| (o, theirs[t][k].as_f64().unwrap())),
                &format!("{dir} {ours}"),
            );
        }
        // A 503 record: `error_code` and `error_text` set, no instants but start and end. The
        // producer writes the document with `indent=2`, which enrich reads as lines: compacted
        // to one line, enrich splices one object per record.
        if failures > 0 {
            let out = run_ok(
                &["--only-requests", "-"],
                &serde_json::to_vec(&doc).unwrap(),
            );
            let rows = enriched_objects(&out).remove(0).expect("an enriched line");
            let rows = rows.as_array().unwrap();
            assert_eq!(rows.len() as u64, total, "{dir}");
            let bad: Vec<_> = rows.iter().filter(|r| r["outcome"] == "error").collect();
            assert_eq!(bad.len(), failures as usize, "{dir}");
            assert_eq!(bad[0]["ttft_ms"], Value::Null);
            assert_eq!(bad[0]["nulls"]["ttft_ms"], "error");
        }
    }
}

/// A real vLLM v0 `RequestMetrics` (a Ray Data LLM output row, `realdata/raydata-vllm-v0-viggo/`): the
/// generic reader maps it, and the queue its instants give is vLLM's own `time_in_queue`.
#[test]
fn real_vllm_v0_request_metrics_from_ray_data() {
    let file = testdata().join("realdata/raydata-vllm-v0-viggo/ray-data-llm-viggo.jsonl");
    let f = file.to_str().unwrap();
    let row: Value =
        serde_json::from_str(std::fs::read_to_string(&file).unwrap().trim_end()).unwrap();
    let logged_queue_ms = row["metrics"]["time_in_queue"].as_f64().unwrap() * 1e3;
    let read = |args: &[&str]| -> Value {
        let out = run_ok(&[args, &["--only-requests", f]].concat(), b"");
        let (_, o) = unsplice(lines_with_endings(&out)[0], "tokentime").unwrap();
        serde_json::from_str(&o).unwrap()
    };
    let r = read(&["--format", "inferred"]);
    assert_eq!(r["format"], "inferred");
    assert!(
        (r["queue_ms"].as_f64().unwrap() - logged_queue_ms).abs() < 1e-3,
        "{} vs vLLM's time_in_queue {logged_queue_ms}",
        r["queue_ms"]
    );
    assert_eq!(r["ttft_ms"], 5559.742);
    assert_eq!(r["prefill_ms"], 3578.466);
    assert_eq!(
        r["e2e_ms"], 5940.191,
        "to last_token_time, not finished_time"
    );
    assert_eq!(
        (r["input_tokens"].clone(), r["output_tokens"].clone()),
        (164.into(), 5.into())
    );
    let v0 = read(&["--format", "vllm-v0-metrics", "--root", "metrics"]);
    for m in ["ttft_ms", "queue_ms", "prefill_ms", "decode_ms", "e2e_ms"] {
        assert_eq!(v0[m], r[m], "{m}");
    }
    // Without options: the Ray Data row is its own format, with the tokens beside the
    // metrics (decode 380.449 ms over 5 - 1 tokens: TPOT 95.112 ms).
    let auto = read(&[]);
    assert_eq!(auto["format"], "ray-data-vllm");
    for m in ["ttft_ms", "queue_ms", "prefill_ms", "decode_ms", "e2e_ms"] {
        assert_eq!(auto[m], r[m], "{m}");
    }
    assert_eq!(auto["tpot_ms"], 95.112);
    assert_eq!(auto["output_tokens"], 5);
}
