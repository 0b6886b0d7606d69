//! Defects of a pipeline of tokentime into tokentime: what enrich writes, summary (with the
//! same settings) reads as it reads the original.

use crate::common::*;
use serde_json::Value;

/// A LiteLLM request padded to exactly `len` bytes, newline included.
fn request_line(len: usize) -> Vec<u8> {
    let head = r#"{"id":"r1","startTime":1767225600.0,"completionStartTime":1767225600.25,"endTime":1767225602.0,"model":"m","usage":{"prompt_tokens":12,"completion_tokens":40},"pad":""#;
    let tail = "\"}\n";
    let mut s = head.to_owned();
    s.push_str(&"x".repeat(len - head.len() - tail.len()));
    s.push_str(tail);
    assert_eq!(s.len(), len);
    s.into_bytes()
}

fn summary_json(args: &[&str], input: &[u8]) -> Value {
    let mut a = vec!["summary", "-o", "json"];
    a.extend_from_slice(args);
    let mut v: Value = serde_json::from_slice(&run_ok(&a, input)).unwrap();
    v.as_object_mut().unwrap().remove("inputs");
    v
}

/// `tokentime f | tokentime summary` read one request fewer than `tokentime summary f` when a
/// line was within the metrics object's size of `--max-line-bytes`: enriched, it was too long.
#[test]
fn enrich_then_summary_loses_a_request() {
    let max = 1000;
    let m = max.to_string();
    for len in [max, max - 1] {
        let line = request_line(len);
        for threads in ["1", "2"] {
            let opts = ["--max-line-bytes", &m, "--threads", threads];
            let direct = summary_json(&opts, &line);
            assert_eq!(direct["coverage"]["requests"], 1, "{len}");
            let enriched = run_ok(&opts, &line);
            assert!(enriched.len() > max, "the splice makes it longer");
            assert_eq!(
                summary_json(&opts, &enriched),
                direct,
                "line of {len} bytes, {threads} threads"
            );
            // A file, read in chunks.
            let dir = tempfile::tempdir().unwrap();
            let f = dir.path().join("enriched.jsonl");
            std::fs::write(&f, &enriched).unwrap();
            let mut a = opts.to_vec();
            a.push(f.to_str().unwrap());
            assert_eq!(summary_json(&a, b""), direct, "file, {threads} threads");
        }
        // A plain line over the limit stays too long.
        let over = request_line(max + 1);
        let s = summary_json(&["--max-line-bytes", &m], &over);
        assert_eq!(s["coverage"]["too_long"], 1);
    }
}

/// Memory that grew with what it should not: `--by` kept every key whole, so a log whose
/// model field held a megabyte (a prompt logged in the wrong field) held megabytes per group
/// and per request waiting in the in-flight sweep. A key longer than 256 bytes is kept as its
/// start and a marker with its length and a hash; distinct long values stay distinct groups.
#[test]
fn memory_grows_with_by_key_size() {
    let mut input = Vec::new();
    for i in 0..3 {
        let model = format!("m{}-{}", i % 2, "x".repeat(1 << 20));
        input.extend_from_slice(
            format!(
                r#"{{"id":"r{i}","startTime":1767225600.0,"completionStartTime":1767225600.25,"endTime":1767225602.0,"model":"{model}","usage":{{"prompt_tokens":12,"completion_tokens":40}}}}"#
            )
            .as_bytes(),
        );
        input.push(b'\n');
    }
    for threads in ["1", "2"] {
        let s = summary_json(&["--by", "model", "--threads", threads], &input);
        let groups = s["groups"].as_array().unwrap();
        let keys: Vec<&str> = groups
            .iter()
            .filter(|g| g["key"].as_object().unwrap().len() == 1)
            .filter_map(|g| g["key"]["model"].as_str())
            .collect();
        assert_eq!(keys.len(), 2, "{threads}: {keys:?}");
        for k in &keys {
            assert!(k.len() <= 256, "{} bytes", k.len());
            assert!(k.contains(&format!("[{} bytes #", (1 << 20) + 3)), "{k}");
        }
        assert_ne!(keys[0], keys[1]);
    }
}
