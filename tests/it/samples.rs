//! Every `testdata/**/NAME.expected.jsonl` holds, per line of `NAME.jsonl`, the metrics
//! computed by hand (the `why` member says how). Reading `NAME.jsonl` alone must give them.

use crate::common::*;
use serde_json::Value;

fn check_file(input: &std::path::Path, expected: &std::path::Path) {
    let out = run_ok(&[input.to_str().unwrap()], b"");
    let objects = enriched_objects(&out);
    for line in std::fs::read_to_string(expected).unwrap().lines() {
        let e: Value = serde_json::from_str(line).unwrap();
        let n = e["line"].as_u64().unwrap() as usize;
        let got = &objects[n - 1];
        let ctx = format!("{}:{n} ({})", input.display(), e["why"]);
        match (&e["expect"], got) {
            (Value::Null, None) => {}
            (Value::Null, Some(g)) => panic!("{ctx}: expected a pass-through line, got {g}"),
            (_, None) => panic!("{ctx}: expected metrics, got a pass-through line"),
            (Value::Array(wants), Some(Value::Array(gots))) => {
                assert_eq!(wants.len(), gots.len(), "{ctx}: requests on the line");
                for (i, (w, g)) in wants.iter().zip(gots).enumerate() {
                    check_object(
                        w.as_object().unwrap(),
                        g,
                        &format!("{ctx} request {}", i + 1),
                    );
                }
            }
            (Value::Object(want), Some(g)) => check_object(want, g, &ctx),
            (want, Some(got)) => panic!("{ctx}: expected {want}, got {got}"),
        }
    }
}

fn check_object(want: &serde_json::Map<String, Value>, g: &Value, ctx: &str) {
    for (k, v) in want {
        if k == "nulls" {
            for (m, r) in v.as_object().unwrap() {
                assert_eq!(&g["nulls"][m], r, "{ctx}: nulls.{m}");
            }
            continue;
        }
        match (v.as_f64(), g[k].as_f64()) {
            (Some(a), Some(b)) => assert!((a - b).abs() < 1e-9, "{ctx}: {k} want {a} got {b}"),
            _ => assert_eq!(&g[k], v, "{ctx}: {k}"),
        }
    }
}

#[test]
fn every_expected_file_matches() {
    let mut n = 0;
    for dir in ["samples", "formats"] {
        for entry in std::fs::read_dir(testdata().join(dir)).unwrap() {
            let p = entry.unwrap().path();
            let name = p.file_name().unwrap().to_str().unwrap().to_owned();
            if let Some(stem) = name.strip_suffix(".expected.jsonl") {
                check_file(&p.with_file_name(format!("{stem}.jsonl")), &p);
                n += 1;
            }
        }
    }
    assert!(n >= 20, "expected files found: {n}");
}

/// The cases a format cannot hold: (format, case, why).
const CANNOT: &[(&str, &str, &str)] = &[
    (
        "ollama",
        "error",
        "a bare {\"error\"} counts only under --format ollama (tests/it/robustness.rs)",
    ),
    ("tgi", "hit", "TGI logs no prompt or cache counts"),
    ("tgi", "miss", "TGI logs no prompt or cache counts"),
    ("nim", "hit", "NIM's stats have no cache count"),
    (
        "vllm-otlp",
        "hit",
        "vLLM's spans carry no cached-token count",
    ),
    (
        "vllm-otlp",
        "miss",
        "vLLM's spans carry no cached-token count",
    ),
    (
        "vllm-bench",
        "hit",
        "benchmark results have no cache counts",
    ),
    (
        "vllm-bench",
        "miss",
        "benchmark results have no cache counts",
    ),
    ("llamacpp-log", "hit", "the legacy log has no cache counts"),
    ("llamacpp-log", "miss", "the legacy log has no cache counts"),
    (
        "llamacpp-log",
        "error",
        "the legacy log writes no per-request error line",
    ),
    ("llmperf", "hit", "LLMPerf has no cache counts"),
    ("llmperf", "miss", "LLMPerf has no cache counts"),
    (
        "llmperf",
        "one_token",
        "checked on realdata (tests/it/realdata.rs), a JSON array document",
    ),
    (
        "llmperf",
        "error",
        "checked on realdata: 49 errors in llmperf-bedrock-70b (tests/it/realdata.rs)",
    ),
    ("guidellm", "hit", "guidellm has no cache counts"),
    ("guidellm", "miss", "guidellm has no cache counts"),
    (
        "guidellm",
        "one_token",
        "checked on realdata (tests/it/realdata.rs), megabyte documents",
    ),
    (
        "guidellm",
        "error",
        "checked on realdata: incomplete requests (tests/it/realdata.rs)",
    ),
    ("nim", "miss", "NIM's stats have no cache count"),
    (
        "nim",
        "error",
        "NIM's error body is vLLM's error object (formats/nim)",
    ),
    (
        "deepseek-usage",
        "error",
        "DeepSeek's error body is OpenAI's (formats/deepseek-usage)",
    ),
];

/// Each single-line format's expected files hold a prefix-cache hit, a miss, a one-token
/// output and an error, except where the format cannot say it (listed with the reason).
#[test]
fn every_format_has_hit_miss_one_token_and_error_cases() {
    let seen = cases_in_expected_files();
    for format in [
        "litellm",
        "llamacpp",
        "vllm",
        "vllm-otlp",
        "otlp",
        "vllm-bench",
        "llmperf",
        "guidellm",
        "ollama",
        "llamacpp-log",
        "sglang-log",
        "tgi",
        "nim",
        "kong",
        "helicone",
        "langfuse",
        "bedrock",
        "sglang",
        "openai-usage",
        "openai-responses-usage",
        "anthropic-usage",
        "deepseek-usage",
    ] {
        for case in ["hit", "miss", "one_token", "error"] {
            let exempt = CANNOT.iter().any(|(f, c, _)| *f == format && *c == case);
            let has = seen.get(format).is_some_and(|s| s.contains(case));
            assert!(has || exempt, "{format}: no {case} case in testdata");
            assert!(
                !(has && exempt),
                "{format}: {case} is listed as impossible but is there"
            );
        }
    }
}

/// Per format, which of `hit`, `miss`, `one_token` and `error` the expected files hold.
fn cases_in_expected_files()
-> std::collections::HashMap<String, std::collections::HashSet<&'static str>> {
    let mut seen: std::collections::HashMap<String, std::collections::HashSet<&str>> =
        Default::default();
    for dir in ["samples", "formats"] {
        for entry in std::fs::read_dir(testdata().join(dir)).unwrap() {
            let p = entry.unwrap().path();
            if !p.to_str().unwrap().ends_with(".expected.jsonl") {
                continue;
            }
            for line in std::fs::read_to_string(&p).unwrap().lines() {
                let e: Value = serde_json::from_str(line).unwrap();
                let expects = match &e["expect"] {
                    Value::Array(a) => a.clone(),
                    v => vec![v.clone()],
                };
                for x in expects {
                    let Some(format) = x["format"].as_str() else {
                        continue;
                    };
                    let s = seen.entry(format.to_owned()).or_default();
                    match x["cache"].as_str() {
                        Some("hit") => {
                            s.insert("hit");
                        }
                        Some("miss") => {
                            s.insert("miss");
                        }
                        _ => {}
                    }
                    if x["output_tokens"] == 1 {
                        s.insert("one_token");
                    }
                    if x["outcome"] == "error" {
                        s.insert("error");
                    }
                }
            }
        }
    }
    seen
}

/// Ollama's bare `{"error": ...}` is too generic to claim a line under auto: it stays no
/// timing, and stderr says that `--format ollama` counts it as a failed request (which it
/// does).
#[test]
fn an_ollama_error_under_auto_is_named_not_counted() {
    let log = testdata().join("samples/ollama.jsonl");
    let log = log.to_str().unwrap();
    let out = run(&["summary", "-o", "json", log], b"");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["coverage"]["no_timing"], 1);
    assert_eq!(doc["coverage"]["errors"], 0);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "tokentime: 1 no-timing line is shaped as an error record of ollama, whose requests \
             this input holds: too generic to count as a failure under --format auto; --format \
             ollama counts it as a failed request"
        ),
        "{err}"
    );
    let forced = run_ok(&["summary", "-o", "json", "-f", "ollama", log], b"");
    let doc: Value = serde_json::from_slice(&forced).unwrap();
    assert_eq!(doc["coverage"]["errors"], 1);
    // Without an Ollama request in the input, nothing is said.
    let out = run(&["summary"], b"{\"error\":\"boom\"}\n");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("shaped as"));
}
