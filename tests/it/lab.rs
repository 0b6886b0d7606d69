//! Acceptance on the real lab capture (testdata/lab, see its README): llama.cpp b4748 behind
//! the LiteLLM SDK, with client-measured ground truth in truth.jsonl. Every expected value here
//! is derived from truth.jsonl, never from tokentime's output.

use crate::common::*;
use serde_json::Value;
use std::collections::HashMap;

fn jsonl(name: &str) -> Vec<Value> {
    std::fs::read_to_string(testdata().join("lab").join(name))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn truth() -> HashMap<String, Value> {
    jsonl("truth.jsonl")
        .into_iter()
        .map(|t| (t["lab_req_id"].as_str().unwrap().to_owned(), t))
        .collect()
}

/// SPEC section 2's cache rule applied to the truth file's own counts.
fn truth_cache(t: &Value) -> &'static str {
    let cached = t["cached_tokens"].as_f64().unwrap();
    let prompt = t["prompt_tokens"].as_f64().unwrap();
    if cached == 0.0 {
        "miss"
    } else if cached / prompt >= 0.5 {
        "hit"
    } else {
        "partial"
    }
}

fn is_ok(t: &Value) -> bool {
    t["outcome"] == "ok"
}

#[test]
fn litellm_streamed_ttft_within_1ms_of_the_client() {
    let path = testdata().join("lab/litellm.jsonl");
    let out = run_ok(&[path.to_str().unwrap()], b"");
    let truth = truth();
    let input = jsonl("litellm.jsonl");
    let objects = enriched_objects(&out);
    assert_eq!(objects.len(), input.len());
    let (mut streamed, mut not_streamed) = (0, 0);
    for (line, obj) in input.iter().zip(&objects) {
        let t = &truth[line["litellm_call_id"].as_str().unwrap()];
        let m = obj.as_ref().expect("every LiteLLM line is a request");
        if t["stream"] == true && is_ok(t) {
            let got = m["ttft_ms"].as_f64().expect("streamed success has a TTFT");
            let want = t["client_ttft_ms"].as_f64().unwrap();
            assert!(
                (got - want).abs() <= 1.0,
                "{}: ttft {got} vs client {want}",
                t["lab_req_id"]
            );
            assert_eq!(m["ttft_origin"], "gateway");
            streamed += 1;
        } else if t["stream"] == false {
            assert_eq!(m["ttft_ms"], Value::Null);
            let n = t["output_tokens"].as_f64().unwrap_or(0.0);
            if is_ok(t) && n >= 2.0 {
                // TPOT from the llama.cpp timings LiteLLM kept in the response.
                let want = round3(t["server_predicted_ms"].as_f64().unwrap() / (n - 1.0));
                assert!(
                    (m["tpot_ms"].as_f64().unwrap() - want).abs() < 1e-6,
                    "{}",
                    t["lab_req_id"]
                );
            }
            let want = if is_ok(t) { "not_streamed" } else { "error" };
            assert_eq!(m["nulls"]["ttft_ms"], want, "{}", t["lab_req_id"]);
            not_streamed += 1;
        } else {
            // A streamed call that failed: no TTFT, counted as an error.
            assert_eq!(m["outcome"], "error");
            assert_eq!(m["nulls"]["ttft_ms"], "error");
        }
    }
    assert_eq!(streamed, 177);
    let logged_not_streamed = truth
        .values()
        .filter(|t| t["stream"] == false && t["litellm_log_lines"].as_u64() == Some(1))
        .count();
    assert_eq!(not_streamed, logged_not_streamed);
    assert_eq!(not_streamed, 113, "107 successes, 4 timeouts, 2 errors");
}

#[test]
fn litellm_summary_counts_equal_the_truth_file() {
    let path = testdata().join("lab/litellm.jsonl");
    let out = run_ok(
        &["summary", "--output", "json", path.to_str().unwrap()],
        b"",
    );
    let s: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(s["schema"], "tokentime.summary/v1");
    let truth: Vec<Value> = jsonl("truth.jsonl");
    let logged: Vec<&Value> = truth
        .iter()
        .filter(|t| t["litellm_log_lines"].as_u64() == Some(1))
        .collect();
    let ok: Vec<&&Value> = logged.iter().filter(|t| is_ok(t)).collect();
    let count = |f: &dyn Fn(&Value) -> bool| ok.iter().filter(|t| f(t)).count() as u64;
    let cov = &s["coverage"];
    assert_eq!(cov["lines"], 293);
    assert_eq!(cov["requests"].as_u64().unwrap(), logged.len() as u64);
    let failures = logged
        .iter()
        .filter(|t| t["litellm_log_status"] == "failure")
        .count() as u64;
    assert_eq!(cov["errors"].as_u64().unwrap(), failures);
    assert_eq!(failures, 9);
    assert_eq!(cov["invalid"], 0);
    let all = &s["groups"][0];
    assert_eq!(all["key"], serde_json::json!({}));
    let metric_count = |m: &str| all["metrics"][m]["count"].as_u64().unwrap();
    assert_eq!(metric_count("ttft_ms"), count(&|t| t["stream"] == true));
    assert_eq!(metric_count("e2e_ms"), ok.len() as u64);
    assert_eq!(
        metric_count("tpot_ms"),
        // Streamed calls from LiteLLM's own times; non-streamed ones from the llama.cpp timings
        // LiteLLM kept in the response. Both need at least 2 output tokens.
        count(&|t| t["output_tokens"].as_u64().unwrap() >= 2)
    );
    assert_eq!(metric_count("output_tokens"), ok.len() as u64);
    // Cached tokens are known only where LiteLLM kept llama.cpp's timings: non-streamed calls.
    assert_eq!(
        metric_count("cached_tokens"),
        count(&|t| t["stream"] == false)
    );
    assert_eq!(
        all["metrics"]["ttft_ms"]["nulls"]["not_streamed"]
            .as_u64()
            .unwrap(),
        count(&|t| t["stream"] == false)
    );
    assert_eq!(
        all["metrics"]["ttft_ms"]["nulls"]["error"]
            .as_u64()
            .unwrap(),
        failures
    );
    // Cache groups: streamed calls have no cached count (null), non-streamed ones by the rule.
    for g in s["groups"].as_array().unwrap()[1..].iter() {
        let key = &g["key"]["cache"];
        let want = match key.as_str() {
            None => count(&|t| t["stream"] == true) + failures,
            Some(c) => count(&|t| t["stream"] == false && truth_cache(t) == c),
        };
        assert_eq!(g["requests"].as_u64().unwrap(), want, "group {key}");
    }
}

#[test]
fn llamacpp_timings_match_the_truth_file() {
    let path = testdata().join("lab/llamacpp_timings.jsonl");
    let out = run_ok(&["--root", "response", path.to_str().unwrap()], b"");
    let truth = truth();
    let input = jsonl("llamacpp_timings.jsonl");
    let objects = enriched_objects(&out);
    let mut checked = 0;
    let mut one_token = 0;
    for (line, obj) in input.iter().zip(&objects) {
        let t = &truth[line["lab_req_id"].as_str().unwrap()];
        if !is_ok(t) {
            continue;
        }
        let m = obj.as_ref().unwrap();
        let prompt_ms = t["server_prompt_ms"].as_f64().unwrap();
        let predicted_ms = t["server_predicted_ms"].as_f64().unwrap();
        let n = t["server_predicted_n"].as_f64().unwrap();
        assert!((m["ttft_ms"].as_f64().unwrap() - round3(prompt_ms)).abs() < 1e-6);
        assert_eq!(m["ttft_origin"], "scheduled");
        if n >= 2.0 {
            let want = round3(predicted_ms / (n - 1.0));
            assert!(
                (m["tpot_ms"].as_f64().unwrap() - want).abs() < 1e-6,
                "{}: tpot",
                t["lab_req_id"]
            );
        } else {
            assert_eq!(m["tpot_ms"], Value::Null);
            assert_eq!(m["nulls"]["tpot_ms"], "one_token");
            one_token += 1;
        }
        assert_eq!(m["cache"], truth_cache(t), "{}", t["lab_req_id"]);
        assert_eq!(m["cached_tokens"], t["cached_tokens"]);
        checked += 1;
    }
    assert_eq!(checked, 284);
    assert!(one_token > 0, "the capture has one-token responses");
}

#[test]
fn llamacpp_summary_quantiles_equal_exact_quantiles_of_the_truth_file() {
    let path = testdata().join("lab/llamacpp_timings.jsonl");
    let out = run_ok(
        &[
            "summary",
            "--output",
            "json",
            "--root",
            "response",
            path.to_str().unwrap(),
        ],
        b"",
    );
    let s: Value = serde_json::from_slice(&out).unwrap();
    let truth: Vec<Value> = jsonl("truth.jsonl");
    let ok: Vec<&Value> = truth.iter().filter(|t| is_ok(t)).collect();
    assert_eq!(
        s["coverage"]["errors"], 5,
        "4 x n=2 and 1 context error bodies"
    );
    let qs = [
        ("p50", 0.5),
        ("p90", 0.9),
        ("p95", 0.95),
        ("p99", 0.99),
        ("p99.9", 0.999),
    ];
    let mut groups_checked = 0;
    for g in s["groups"].as_array().unwrap() {
        let class = g["key"]["cache"].as_str();
        if g["key"].as_object().unwrap().is_empty() || class.is_some() {
            let rows: Vec<&&Value> = ok
                .iter()
                .filter(|t| class.is_none_or(|c| truth_cache(t) == c))
                .collect();
            let ttft: Vec<f64> = rows
                .iter()
                .map(|t| t["server_prompt_ms"].as_f64().unwrap())
                .collect();
            let tpot: Vec<f64> = rows
                .iter()
                .filter(|t| t["server_predicted_n"].as_f64().unwrap() >= 2.0)
                .map(|t| {
                    t["server_predicted_ms"].as_f64().unwrap()
                        / (t["server_predicted_n"].as_f64().unwrap() - 1.0)
                })
                .collect();
            for (metric, values) in [("ttft_ms", &ttft), ("tpot_ms", &tpot)] {
                let m = &g["metrics"][metric];
                assert_eq!(
                    m["count"].as_u64().unwrap(),
                    values.len() as u64,
                    "{class:?} {metric}"
                );
                assert_eq!(m["exact"], true);
                for (name, q) in qs {
                    let want = round3(quantile7(values, q));
                    let got = m["quantiles"][name].as_f64().unwrap();
                    assert!(
                        (got - want).abs() <= 1.0001e-3,
                        "{class:?} {metric} {name}: {got} vs {want}"
                    );
                }
            }
            groups_checked += 1;
        }
    }
    assert_eq!(groups_checked, 4, "overall, hit, partial, miss");
}
