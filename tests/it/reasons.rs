//! Why requests failed and which were slowest: each format's reason field read from its own
//! error payloads (the samples and format files: real producer shapes, see their SOURCE notes),
//! normalized; and the summary's `errors` and `slowest` over the lab LiteLLM log, whose values
//! were counted from the raw file (`status == "failure"` by `error_information.error_class`;
//! `endTime - startTime`, largest first), the same with threads and through digest files.

use crate::common::*;
use serde_json::Value;

/// (input, format, the reason of its one failed request).
const REASONS: [(&str, &str, &str); 17] = [
    (
        "formats/anthropic-usage.jsonl",
        "anthropic-usage",
        "overloaded_error",
    ),
    ("formats/bedrock.jsonl", "bedrock", "ThrottlingException"),
    ("formats/kong.jsonl", "kong", "429"),
    (
        "formats/openai-responses-usage.jsonl",
        "openai-responses-usage",
        "server_error",
    ),
    ("formats/openai-usage.jsonl", "openai-usage", "server_error"),
    ("formats/tgi.jsonl", "tgi", "Model is overloaded"),
    (
        "formats/vllm-otlp.jsonl",
        "vllm-otlp",
        "request aborted: context length exceeded",
    ),
    ("samples/helicone.jsonl", "helicone", "429"),
    (
        "samples/langfuse.jsonl",
        "langfuse",
        "Error code: 429 - rate limit reached",
    ),
    ("samples/litellm.jsonl", "litellm", "RateLimitError"),
    (
        "samples/llamacpp.jsonl",
        "llamacpp",
        "exceed_context_size_error",
    ),
    ("samples/otel_genai_otlp.jsonl", "otlp", "RateLimitError"),
    // The message's numbers masked: the same failure with other sizes groups together.
    (
        "samples/tgi.jsonl",
        "tgi",
        "`inputs` tokens + `max_new_tokens` must be <= # Given: #…",
    ),
    (
        "samples/vllm_bench_serve.jsonl",
        "vllm-bench",
        "Internal Server Error",
    ),
    (
        "samples/vllm_response_metrics.jsonl",
        "vllm",
        "BadRequestError",
    ),
    ("formats/nim.jsonl", "vllm", "BadRequestError"),
    // An abort before the first token (an error by the rule), with its message.
    ("samples/sglang.jsonl", "sglang", "Abort in waiting queue"),
];

/// The `(format, error_reason)` of every failed request of `input`, enriched.
fn failed(input: &str) -> Vec<(String, Option<String>)> {
    let path = testdata().join(input);
    let out = run_ok(&["--only-requests", path.to_str().unwrap()], b"");
    let mut v = vec![];
    for o in enriched_objects(&out).into_iter().flatten() {
        let all = match o {
            Value::Array(a) => a,
            o => vec![o],
        };
        for r in all {
            assert!(r.get("error_reason").is_some(), "{input}: {r}");
            if r["outcome"] == "error" {
                let reason = r["error_reason"].as_str().map(str::to_owned);
                v.push((r["format"].as_str().unwrap().to_owned(), reason));
            } else {
                assert!(r["error_reason"].is_null(), "{input}: {r}");
            }
        }
    }
    v
}

#[test]
fn each_format_reads_its_reason() {
    for (input, format, reason) in REASONS {
        let want = (!reason.is_empty()).then(|| reason.to_owned());
        assert_eq!(failed(input), [(format.to_owned(), want)], "{input}");
    }
}

fn summary(args: &[&str]) -> Value {
    let lab = testdata().join("lab/litellm.jsonl");
    let mut a = vec!["summary", "-o", "json"];
    a.extend_from_slice(args);
    a.push(lab.to_str().unwrap());
    serde_json::from_slice(&run_ok(&a, b"")).unwrap()
}

/// The lab log's failures by reason and its five slowest requests, counted from the file.
fn check_lab(doc: &Value, what: &str) {
    assert_eq!(
        doc["errors"],
        serde_json::json!({"count": 9, "rate": 0.031, "reasons": [
            {"reason": "InternalServerError", "count": 4},
            {"reason": "Timeout", "count": 4},
            {"reason": "ContextWindowExceededError", "count": 1},
        ]}),
        "{what}"
    );
    let slowest: Vec<(&str, f64)> = doc["slowest"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["id"].as_str().unwrap(), s["e2e_ms"].as_f64().unwrap()))
        .collect();
    let want = [
        ("lab-67a229e3ac12b7ba6c69", 224850.5),
        ("lab-e9297c935758651b42e3", 211344.9),
        ("lab-77947c9be417e2aef741", 187544.9),
        ("lab-a8659e4f778385f5b5a4", 176549.8),
        ("lab-acf4a0f878e2ab60923e", 175734.2),
    ];
    assert_eq!(slowest.len(), want.len(), "{what}");
    for ((id, ms), (wid, wms)) in slowest.iter().zip(want) {
        assert_eq!(*id, wid, "{what}");
        assert!((ms - wms).abs() < 0.1, "{what}: {id} {ms} vs {wms}");
    }
}

#[test]
fn lab_errors_by_reason_and_slowest() {
    check_lab(&summary(&["--threads", "1"]), "one thread");
    check_lab(&summary(&["--threads", "2"]), "two threads");
}

/// Every 10th line repeated: the repeats are dropped as duplicates, and the slowest keep their
/// ids (a repeat among the slowest once pushed out the fifth one's id on one thread).
#[test]
fn duplicate_records_keep_the_slowest_ids() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(testdata().join("lab/litellm.jsonl")).unwrap();
    let mut doubled = String::new();
    for (i, line) in text.lines().enumerate() {
        doubled.push_str(line);
        doubled.push('\n');
        if i % 10 == 0 {
            doubled.push_str(line);
            doubled.push('\n');
        }
    }
    let log = dir.path().join("dup10.jsonl");
    std::fs::write(&log, doubled).unwrap();
    for threads in ["1", "2"] {
        let args = ["summary", "-o", "json", "--threads", threads];
        let mut a = args.to_vec();
        a.push(log.to_str().unwrap());
        let doc: Value = serde_json::from_slice(&run_ok(&a, b"")).unwrap();
        check_lab(&doc, &format!("{threads} threads, every 10th line twice"));
    }
}

#[test]
fn digests_keep_reasons_and_slowest_through_merge() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(testdata().join("lab/litellm.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut digests = vec![];
    for (i, part) in lines.chunks(lines.len() / 2 + 1).enumerate() {
        let log = dir.path().join(format!("part{i}.jsonl"));
        std::fs::write(&log, part.join("\n") + "\n").unwrap();
        let digest = dir.path().join(format!("part{i}.json"));
        run_ok(
            &[
                "summary",
                "--save-digest",
                digest.to_str().unwrap(),
                log.to_str().unwrap(),
            ],
            b"",
        );
        digests.push(digest);
    }
    let mut args = vec!["merge", "-o", "json"];
    args.extend(digests.iter().map(|d| d.to_str().unwrap()));
    let merged: Value = serde_json::from_slice(&run_ok(&args, b"")).unwrap();
    check_lab(&merged, "merged digests");
}

#[test]
fn the_headline_names_the_top_reasons_and_the_slowest() {
    let lab = testdata().join("lab/litellm.jsonl");
    let out = String::from_utf8(run_ok(&["summary", lab.to_str().unwrap()], b"")).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.contains(
        &"errors by reason: InternalServerError 4, Timeout 4, ContextWindowExceededError 1"
    ));
    let slowest = lines.iter().find(|l| l.starts_with("slowest: ")).unwrap();
    assert!(
        slowest.starts_with("slowest: lab-67…ba6c69 (224.9s), lab-e9…1b42e3 (211.3s)"),
        "{slowest}"
    );
    assert!(slowest.chars().count() <= 100, "{slowest}");
}

/// LLMPerf writes an HTTP status as `error_code` (Perplexity's two 429s) or a negative code of
/// its own beside a message (Bedrock's 49 `-100`, `Output too few tokens N`, N from 53 to
/// 149, counted in the file): the message is the reason there, its count masked so that the
/// 49 group as one.
#[test]
fn llmperf_negative_codes_give_way_to_their_message() {
    let reasons = |dir: &str| {
        let path = testdata().join(format!("realdata/{dir}/individual_responses.json"));
        let out = run_ok(&["summary", "-o", "json", path.to_str().unwrap()], b"");
        let doc: Value = serde_json::from_slice(&out).unwrap();
        doc["errors"]["reasons"].clone()
    };
    assert_eq!(
        reasons("llmperf-bedrock-70b"),
        serde_json::json!([{"reason": "Output too few tokens #", "count": 49}])
    );
    assert_eq!(
        reasons("llmperf-perplexity-70b"),
        serde_json::json!([{"reason": "429", "count": 2}])
    );
}
