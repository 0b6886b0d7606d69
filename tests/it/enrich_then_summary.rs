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

/// Every group's metrics without what rows do not keep: where TTFT was measured from and why
/// a value is null.
fn metrics_of(summary: &Value) -> Vec<(Value, Value)> {
    summary["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            let mut m = g["metrics"].clone();
            for v in m.as_object_mut().unwrap().values_mut() {
                let v = v.as_object_mut().unwrap();
                v.remove("origins");
                v.remove("nulls");
            }
            (g["key"].clone(), m)
        })
        .collect()
}

/// tokentime's own rows (`-o jsonl`) read back: a summary of them is the summary of the log
/// they were written from (the lab's LiteLLM log: 293 requests, 9 errors and their reasons; llama.cpp's
/// responses, whose TTFT leaves the queue out), every quantile of every group; with the default columns (no decode, no start or end), TPOT is read
/// through `tpot_ms * (output_tokens - 1)`, within the rows' rounding.
#[test]
fn rows_read_back_give_the_summary_of_their_log() {
    let log = testdata().join("lab/litellm.jsonl");
    let log = log.to_str().unwrap();
    let direct = summary_json(&[log], b"");
    let all = "line,file,id,model,format,start,end,ttft_ms,tpot_ms,e2e_ms,queue_ms,prefill_ms,\
               decode_ms,input_tokens,cached_tokens,output_tokens,ttfot_ms,cache,ttft_origin,outcome,\
               error_reason";
    let rows = run_ok(&["-o", "jsonl", "--fields", all, log], b"");
    let back = summary_json(&[], &rows);
    assert_eq!(
        back["coverage"]["formats"],
        serde_json::json!({"tokentime-rows": 293})
    );
    assert_eq!(back["coverage"]["requests"], direct["coverage"]["requests"]);
    assert_eq!(back["groups"][0]["errors"], 9);
    assert_eq!(metrics_of(&back), metrics_of(&direct));
    assert_eq!(back["headline"]["span"], direct["headline"]["span"]);
    // With the error_reason column, why requests failed.
    assert_eq!(back["errors"], direct["errors"]);
    // With the ttft_origin column, where TTFT was measured from too.
    assert_eq!(
        back["groups"][0]["metrics"]["ttft_ms"]["origins"],
        serde_json::json!({"gateway": 177})
    );
    // llama.cpp's TTFT is from `scheduled`: its rows make no E2E of TTFT + decode either.
    let llama = testdata().join("samples/llamacpp.jsonl");
    let llama = llama.to_str().unwrap();
    let rows = run_ok(&["-o", "jsonl", "--fields", all, llama], b"");
    let (lb, ld) = (summary_json(&[], &rows), summary_json(&[llama], b""));
    assert_eq!(metrics_of(&lb), metrics_of(&ld));
    assert_eq!(lb["groups"][0]["metrics"]["e2e_ms"]["count"], 0);
    // Nor its rows with the default columns (no `ttft_origin`): their `e2e_ms` is null, and a
    // row's E2E is the one it writes.
    let rows = run_ok(&["-o", "jsonl", llama], b"");
    let lb = summary_json(&[], &rows);
    assert_eq!(lb["groups"][0]["metrics"]["e2e_ms"]["count"], 0);
    assert_eq!(
        lb["groups"][0]["metrics"]["ttft_ms"]["count"],
        ld["groups"][0]["metrics"]["ttft_ms"]["count"]
    );

    let rows = run_ok(&["-o", "jsonl", log], b"");
    let back = summary_json(&[], &rows);
    assert_eq!(back["groups"][0]["errors"], 9);
    for ((key, b), (_, d)) in metrics_of(&back).into_iter().zip(metrics_of(&direct)) {
        for m in [
            "ttft_ms",
            "e2e_ms",
            "input_tokens",
            "output_tokens",
            "cached_tokens",
        ] {
            assert_eq!(b[m], d[m], "{key} {m}");
        }
        assert_eq!(b["tpot_ms"]["count"], d["tpot_ms"]["count"], "{key}");
        for (q, v) in d["tpot_ms"]["quantiles"].as_object().unwrap() {
            let (got, want) = (b["tpot_ms"]["quantiles"][q].as_f64(), v.as_f64());
            if let (Some(got), Some(want)) = (got, want) {
                assert!((got - want).abs() <= 0.1, "{key} tpot {q}: {got} {want}");
            } else {
                assert_eq!(got, want, "{key} tpot {q}");
            }
        }
    }
}

/// A client's own records with an `outcome` column and token counts but no time column of
/// tokentime's rows (the lab's truth file) are not taken for rows.
#[test]
fn an_outcome_column_alone_is_not_a_row() {
    let truth = testdata().join("lab/truth.jsonl");
    let s = summary_json(&[truth.to_str().unwrap()], b"");
    assert!(
        s["coverage"]["formats"].get("tokentime-rows").is_none(),
        "{}",
        s["coverage"]
    );
}
