//! `--since` and `--until`: a summary of the requests that ended in a span of log time, the
//! others counted as outside (with those that have no end), the windows the span's ends cut
//! marked partial.

use crate::common::*;
use serde_json::Value;

const T0: f64 = 1_767_225_600.0; // 2026-01-01T00:00:00Z

/// A LiteLLM line that ended at `end` (epoch s): E2E 1 s, TTFT `ttft_ms`.
fn line(id: usize, end: f64, ttft_ms: f64) -> String {
    request(id, end, ttft_ms, true)
}

/// The same, failed unless `ok`.
fn request(id: usize, end: f64, ttft_ms: f64, ok: bool) -> String {
    let start = end - 1.0;
    let status = if ok {
        r#""status":"success""#
    } else {
        r#""status":"failure","error_str":"Timeout""#
    };
    format!(
        r#"{{"id":"r{id}","call_type":"acompletion","stream":true,{status},"startTime":{start},"completionStartTime":{},"endTime":{end},"prompt_tokens":10,"completion_tokens":11}}"#,
        start + ttft_ms / 1000.0
    ) + "\n"
}

/// Six requests: ends at 10 s, 59.999 s, 60 s, 90 s, 119.999 s and 120 s after `T0`, TTFT
/// 100-600 ms in that order.
fn log() -> String {
    let ends = [10.0, 59.999, 60.0, 90.0, 119.999, 120.0];
    ends.iter()
        .enumerate()
        .map(|(i, e)| line(i, T0 + e, 100.0 * (i + 1) as f64))
        .collect()
}

fn summary(args: &[&str], input: &str) -> Value {
    let mut all = vec!["summary", "-o", "json"];
    all.extend_from_slice(args);
    serde_json::from_slice(&run_ok(&all, input.as_bytes())).unwrap()
}

/// The all-requests group of a JSON summary.
fn all_requests(doc: &Value) -> &Value {
    doc["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["key"].as_object().unwrap().is_empty())
        .unwrap()
}

fn ttft(doc: &Value) -> &Value {
    &all_requests(doc)["metrics"]["ttft_ms"]
}

#[test]
fn since_is_inclusive_and_until_exclusive() {
    let since = format!("{}", T0 + 60.0);
    let doc = summary(&["--since", &since, "--until", "2026-01-01T00:02Z"], &log());
    assert_eq!(
        doc["range"],
        serde_json::json!({"since": "2026-01-01T00:01:00.000Z", "until": "2026-01-01T00:02:00.000Z"})
    );
    let cov = &doc["coverage"];
    // Ends at 60, 90 and 119.999 s are in [60 s, 120 s).
    assert_eq!(cov["requests"], 3);
    assert_eq!(cov["outside_range"], 3);
    assert_eq!(cov["lines"], 6);
    let t = ttft(&doc);
    assert_eq!(t["count"], 3);
    assert_eq!(t["min"], 300.0);
    assert_eq!(t["max"], 500.0);
    // The same span given as a date and a time with an offset.
    let doc = summary(
        &["--since", "2026-01-01T01:01+01:00", "--until", "1767225720"],
        &log(),
    );
    assert_eq!(doc["coverage"]["requests"], 3);
    // One end only: everything from 60 s on (60, 90, 119.999, 120).
    let doc = summary(&["--since", &since], &log());
    assert_eq!(doc["coverage"]["requests"], 4);
    assert_eq!(doc["coverage"]["outside_range"], 2);
    // Without either, every request, and no outside count.
    let doc = summary(&[], &log());
    assert!(doc.get("range").is_none());
    assert_eq!(doc["coverage"]["requests"], 6);
    assert!(doc["coverage"].get("outside_range").is_none());
}

#[test]
fn a_failure_outside_the_span_is_not_counted_as_an_error() {
    let mut input = log();
    input.push_str(&request(20, T0 + 200.0, 100.0, false));
    input.push_str(&request(21, T0 + 70.0, 100.0, false));
    let doc = summary(
        &[
            "--since",
            "2026-01-01T00:01Z",
            "--until",
            "2026-01-01T00:02Z",
        ],
        &input,
    );
    assert_eq!(doc["coverage"]["requests"], 4);
    assert_eq!(doc["coverage"]["errors"], 1);
    assert_eq!(doc["coverage"]["outside_range"], 4);
}

#[test]
fn the_table_says_how_many_were_outside() {
    let out = run_ok(
        &["summary", "--until", "2026-01-01T00:01Z"],
        log().as_bytes(),
    );
    let text = String::from_utf8(out).unwrap();
    let second = text.lines().nth(1).unwrap();
    assert!(second.ends_with("outside --since/--until 4"), "{second}");
    assert!(
        text.starts_with("2 requests from 2026-01-01T00:00:09Z"),
        "{text}"
    );
}

/// The all-requests lines of `summary -o json --bucket 1m` over [`log`] from `since` until
/// `until`.
fn minute_windows(since: &str, until: &str) -> Vec<Value> {
    let args = [
        "summary", "-o", "json", "--bucket", "1m", "--since", since, "--until", until,
    ];
    run_ok(&args, log().as_bytes())
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice::<Value>(l).unwrap())
        .filter(|v| v["key"].as_object().unwrap().is_empty())
        .collect()
}

#[test]
fn windows_the_span_cuts_are_partial() {
    let windows = minute_windows("2026-01-01T00:00:30Z", "2026-01-01T00:01:30Z");
    assert_eq!(windows.len(), 2);
    assert_eq!(windows[0]["start"], "2026-01-01T00:00:00.000Z");
    assert_eq!(windows[0]["requests"], 1);
    assert_eq!(windows[0]["partial"], "cut by --since 2026-01-01T00:00:30Z");
    assert_eq!(windows[1]["start"], "2026-01-01T00:01:00.000Z");
    assert_eq!(windows[1]["requests"], 1);
    assert_eq!(windows[1]["partial"], "cut by --until 2026-01-01T00:01:30Z");
    // A span on the windows' edges cuts none.
    let windows = minute_windows("2026-01-01T00:01Z", "2026-01-01T00:02Z");
    assert_eq!(windows.len(), 1);
    assert_eq!(windows[0]["requests"], 3);
    assert!(windows[0].get("partial").is_none());
}

#[test]
fn several_threads_and_files_keep_the_same_requests_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let body: String = (0..3000)
        .map(|i| request(i, T0 + i as f64 * 0.1, 100.0 + (i % 97) as f64, i % 50 != 7))
        .collect();
    let path = dir.path().join("log.jsonl");
    std::fs::write(&path, &body).unwrap();
    let p = path.to_str().unwrap();
    let span = [
        "--since",
        "2026-01-01T00:00:50Z",
        "--until",
        "2026-01-01T00:04Z",
    ];
    let one = run_ok(
        &[
            &["summary", "-o", "json", "--threads", "1", p][..],
            &span[..],
        ]
        .concat(),
        b"",
    );
    let many = run_ok(
        &[
            &[
                "summary",
                "-o",
                "json",
                "--threads",
                "3",
                "--chunk-bytes",
                "4096",
                p,
            ][..],
            &span[..],
        ]
        .concat(),
        b"",
    );
    assert_eq!(one, many);
    // Chunk workers that hand every request on (--bucket), or tell no copies.
    for extra in [&["--bucket", "1m"][..], &["--keep-duplicates"][..]] {
        let run_with = |threads: &[&str]| {
            run_ok(
                &[&["summary", "-o", "json", p][..], threads, &span[..], extra].concat(),
                b"",
            )
        };
        assert_eq!(
            run_with(&["--threads", "1"]),
            run_with(&["--threads", "3", "--chunk-bytes", "4096"]),
            "{extra:?}"
        );
    }
    let doc: Value = serde_json::from_slice(&one).unwrap();
    // Ends 0.1 s apart from T0: 50 s to 240 s (exclusive) is requests 500 to 2399.
    assert_eq!(doc["coverage"]["requests"], 1900);
    assert_eq!(doc["coverage"]["outside_range"], 1100);
}

#[test]
fn a_digest_file_keeps_the_count_and_merge_adds_it_up() {
    let dir = tempfile::tempdir().unwrap();
    let save = |name: &str, span: [&str; 2]| -> String {
        let d = dir.path().join(name).to_str().unwrap().to_owned();
        run_ok(
            &["summary", span[0], span[1], "--save-digest", &d],
            log().as_bytes(),
        );
        d
    };
    // Before and from the minute: 2 requests and 4 outside, 4 and 2.
    let a = save("a.digest.json", ["--until", "2026-01-01T00:01Z"]);
    let b = save("b.digest.json", ["--since", "2026-01-01T00:01Z"]);
    let doc: Value =
        serde_json::from_slice(&run_ok(&["merge", "-o", "json", &a, &b], b"")).unwrap();
    assert_eq!(doc["coverage"]["requests"], 6);
    assert_eq!(doc["coverage"]["outside_range"], 6);
    // Their spans differ, one after the other: merged in silence, the merge of no span.
    let out = run(&["merge", "-o", "json", &a, &b], b"");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc.get("range").is_none());
    // Spans that overlap: said.
    let c = save("c.digest.json", ["--since", "2026-01-01T00:00:30Z"]);
    let out = run(&["merge", "-o", "json", &a, &c], b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "{c}: saved with --since 2026-01-01T00:00:30Z, an earlier file with --until 2026-01-01T00:01:00Z: the spans overlap; merged"
        )),
        "{err}"
    );
    // One span, kept.
    let doc: Value = serde_json::from_slice(&run_ok(&["merge", "-o", "json", &a], b"")).unwrap();
    assert_eq!(
        doc["range"],
        serde_json::json!({"since": null, "until": "2026-01-01T00:01:00.000Z"})
    );
}

#[test]
fn requests_without_an_end_instant_are_outside_and_a_run_of_none_says_why() {
    // A benchmark's result file of durations only: no request has an end instant.
    let f = testdata().join("realdata/vllm083-llama70b-tp8-qps1/result.json");
    let out = run(
        &["summary", "--since", "2020-01-01", f.to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("1 line, no request: outside --since/--until 200"),
        "{text}"
    );
    assert!(
        text.contains("no request ended between --since and --until"),
        "{text}"
    );
}

#[test]
fn a_span_that_leaves_out_every_request_gives_no_hint_of_another_reading() {
    // The lab's LiteLLM log, all of it before --since: its lines were read as requests, so
    // nothing on stderr says none was (nor suggests another --root).
    let f = testdata().join("lab/litellm.jsonl");
    let out = run(
        &["summary", "--since", "2030-01-01", f.to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("293 lines, no request: outside --since/--until 293"),
        "{text}"
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!err.contains("no line was read as a request"), "{err}");
    assert!(!err.contains("--root"), "{err}");
}

#[test]
fn a_failure_with_a_start_only_is_placed_by_it() {
    // guidellm's errored requests log when they started, not when they ended: a span over the
    // run keeps its 10 timeouts.
    let f = testdata().join("realdata/guidellm03-qwen3-0.6b-llmd-sim/benchmarks.json");
    let f = f.to_str().unwrap();
    let whole = summary(&[f], "");
    let span = summary(&["--since", "2025-09-23", "--until", "2025-09-24", f], "");
    assert_eq!(whole["coverage"]["errors"], 10);
    assert_eq!(span["coverage"]["errors"], 10);
    assert_eq!(span["coverage"]["requests"], whole["coverage"]["requests"]);
    assert!(span["coverage"].get("outside_range").is_none());
}

#[test]
fn an_slo_over_an_empty_span_is_not_judged() {
    let out = run(
        &["summary", "--slo", "ttft:p99<=60s", "--since", "2026-02-01"],
        log().as_bytes(),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("SLO ttft:p99<=60s not judged: no request ended between --since and --until"),
        "{err}"
    );
}

#[test]
fn requests_outside_the_span_still_count_in_flight() {
    // Three requests open from 0 to 59 s end before --since (1 min); the one kept decodes
    // from 50.2 s to 60 s: time-weighted, 1 + 3 * 8.8 / 9.8 requests in flight.
    let mut input = String::new();
    for i in 0..3 {
        input.push_str(&request_at(i, T0, 200.0, T0 + 59.0));
    }
    input.push_str(&request_at(9, T0 + 50.0, 200.0, T0 + 60.0));
    let doc = summary(&["--since", "2026-01-01T00:01Z"], &input);
    assert_eq!(doc["coverage"]["requests"], 1);
    let b = &all_requests(&doc)["analysis"]["tpot_by_in_flight"]["buckets"][0];
    assert_eq!(b["mean_in_flight"], 3.694);
    assert_eq!(b["count"], 1);
}

/// A LiteLLM line of a request from `start` to `end` (epoch s), TTFT `ttft_ms`.
fn request_at(id: usize, start: f64, ttft_ms: f64, end: f64) -> String {
    format!(
        r#"{{"id":"r{id}","call_type":"acompletion","stream":true,"status":"success","startTime":{start},"completionStartTime":{},"endTime":{end},"prompt_tokens":10,"completion_tokens":11}}"#,
        start + ttft_ms / 1000.0
    ) + "\n"
}
