//! Nothing lost, nothing invented: every request of an input is counted by `summary` and
//! carries metrics in enrich's output, whatever sits around it (document-looking first lines,
//! startup banners, tracebacks), with one and two threads, from files and pipes.

use crate::common::*;

/// One LiteLLM request: TTFT 200 ms, E2E 1200 ms.
const R: &str = r#"{"id":"a","call_type":"acompletion","stream":true,"status":"success","startTime":1741946531.0,"completionStartTime":1741946531.2,"endTime":1741946532.2,"prompt_tokens":1,"completion_tokens":11}"#;

/// Requests `summary` counts in `input`, checked equal from a file and from a pipe, with one and
/// two threads, and equal to the metrics objects enrich splices (`differential`'s check, which
/// also compares the summary of the enriched output with the input's).
fn requests(input: &[u8]) -> u64 {
    crate::differential::check_every_way(input, &[], "input").0
}

fn log_after(first: &str) -> Vec<u8> {
    format!("{first}\n{R}\n{R}\n{R}\n").into_bytes()
}

#[test]
fn an_array_first_line_does_not_make_the_input_a_document() {
    for first in ["[]", "[", r#"[{"x":1}]"#] {
        assert_eq!(requests(&log_after(first)), 3, "{first}");
    }
    // The lab log behind a `[]` line: all 293 requests.
    let lab = std::fs::read(testdata().join("lab/litellm.jsonl")).unwrap();
    let input = [&b"[]\n"[..], &lab].concat();
    assert_eq!(requests(&input), requests(&lab));
}

#[test]
fn a_pretty_banner_and_a_traceback_do_not_stop_reading() {
    let input = format!(
        "{{\n \"event\": \"startup\"\n}}\n{R}\nTraceback (most recent call last):\n{R}\n{R}\n"
    );
    assert_eq!(requests(input.as_bytes()), 3);
    // The lab log with a banner first and a traceback at line 105.
    let lab = std::fs::read_to_string(testdata().join("lab/litellm.jsonl")).unwrap();
    let mut lines: Vec<&str> = lab.lines().collect();
    lines.insert(100, "Traceback (most recent call last):");
    let input = format!("{{\n \"event\": \"startup\"\n}}\n{}\n", lines.join("\n"));
    assert_eq!(requests(input.as_bytes()), requests(lab.as_bytes()));
}

#[test]
fn whole_documents_are_still_read_as_documents() {
    // A pretty-printed vLLM benchmark result: one document, its 200 records.
    let doc =
        std::fs::read(testdata().join("realdata/vllm083-llama70b-tp8-qps1/result.json")).unwrap();
    let out = run_ok(&["summary", "-o", "json"], &doc);
    let s: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert!(s["coverage"]["requests"].as_u64().unwrap() > 50);
}
