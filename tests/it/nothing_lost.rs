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

/// The vLLM result file with its `ttfts` array edited by `edit`, summarised as JSON, and what
/// it said on stderr.
fn vllm_result_edited(edit: impl Fn(&mut serde_json::Value)) -> (serde_json::Value, String) {
    let doc =
        std::fs::read(testdata().join("realdata/vllm083-llama70b-tp8-qps1/result.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&doc).unwrap();
    edit(&mut v);
    let input = serde_json::to_vec(&v).unwrap();
    let out = run(&["summary", "-o", "json", "-"], &input);
    assert_eq!(out.status.code(), Some(0));
    (
        serde_json::from_slice(&out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn a_null_in_a_result_files_arrays_is_an_unknown_value_not_a_lost_request() {
    // 200 requests in the file; the first one's TTFT written null.
    let (s, err) = vllm_result_edited(|v| v["ttfts"][0] = serde_json::Value::Null);
    assert_eq!(s["coverage"]["requests"], 200, "{err}");
    let all = &s["groups"][0];
    assert_eq!(all["metrics"]["ttft_ms"]["count"], 199);
    assert_eq!(all["metrics"]["ttft_ms"]["nulls"]["not_logged"], 1);
    assert_eq!(all["metrics"]["e2e_ms"]["count"], 199);
    assert_eq!(all["metrics"]["output_tokens"]["count"], 200);
    assert!(err.is_empty(), "{err}");
}

#[test]
fn result_file_arrays_of_different_lengths_are_named_and_no_request_is_lost() {
    // `ttfts` one element short: the last request has no TTFT, and the lengths are named.
    let (s, err) = vllm_result_edited(|v| {
        v["ttfts"].as_array_mut().unwrap().pop();
    });
    assert_eq!(s["coverage"]["requests"], 200, "{err}");
    assert_eq!(s["groups"][0]["metrics"]["ttft_ms"]["count"], 199);
    assert!(
        err.contains(
            "<stdin>:1: the per-request arrays differ in length (ttfts 199, itls 200, output_lens 200, \
             input_lens 200, errors 200): 200 requests read"
        ),
        "{err}"
    );
}

/// A request's token gaps with an element that is no number: the request is named by its index
/// in the arrays, and the element by its index in its list, and the metrics that need the gaps
/// (ITL, the decode their sum gives, TPOT, E2E) are null for that request, `unparseable`, not
/// `not_logged`.
#[test]
fn a_result_files_unreadable_token_gaps_are_named_and_unparseable() {
    let (s, err) = vllm_result_edited(|v| v["itls"][3][5] = serde_json::json!("x"));
    assert_eq!(s["coverage"]["requests"], 200, "{err}");
    assert!(
        err.starts_with(
            "<stdin>:1: record 3 (from 0): itl [0.02175716600004307,0.0223089380001511,… \
             (element 5: \"x\"): present but not readable as vllm-bench reads it (itls as s): \
             the metrics that need it are null, reason unparseable"
        ),
        "{err}"
    );
    let m = &s["groups"][0]["metrics"];
    for metric in ["itl_ms", "decode_ms", "tpot_ms", "e2e_ms"] {
        assert_eq!(m[metric]["nulls"]["unparseable"], 1, "{metric}: {m}");
        assert!(
            m[metric]["nulls"].get("not_logged").is_none(),
            "{metric}: {m}"
        );
    }
    assert_eq!(m["ttft_ms"]["count"], 200);
}

/// A `null` among a request's token gaps is a gap the producer did not know, as a `null` TTFT
/// is: that request's ITL, and the decode, TPOT and E2E its gaps give, are null `not_logged`
/// (no anomaly, nothing on stderr), and its other gaps are no ITL samples.
#[test]
fn a_null_token_gap_is_not_logged_not_unreadable() {
    let (s, err) = vllm_result_edited(|v| v["itls"][3][2] = serde_json::Value::Null);
    assert_eq!(err, "");
    assert_eq!(s["coverage"]["requests"], 200);
    assert_eq!(s["coverage"]["anomalies"]["unparseable"], 0);
    let m = &s["groups"][0]["metrics"];
    for metric in ["itl_ms", "decode_ms", "tpot_ms", "e2e_ms"] {
        assert_eq!(m[metric]["nulls"]["not_logged"], 1, "{metric}: {m}");
        assert!(
            m[metric]["nulls"].get("unparseable").is_none(),
            "{metric}: {m}"
        );
    }
    let (whole, _) = vllm_result_edited(|_| {});
    let doc =
        std::fs::read(testdata().join("realdata/vllm083-llama70b-tp8-qps1/result.json")).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&doc).unwrap();
    let gaps = v["itls"][3].as_array().unwrap().len() as u64;
    let count = |s: &serde_json::Value| {
        s["groups"][0]["metrics"]["itl_ms"]["count"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(count(&s), count(&whole) - gaps);
}

/// A result file with several faults (one line, the whole document): each record with a value
/// not readable is named by its index, in order, then the arrays of different lengths and the
/// run length that is no number, a message each, within `--max-diagnostics`; past it they are
/// counted.
#[test]
fn every_fault_of_a_result_file_is_named_not_only_the_first() {
    let doc =
        std::fs::read(testdata().join("realdata/vllm083-llama70b-tp8-qps1/result.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&doc).unwrap();
    v["ttfts"][3] = serde_json::json!("x");
    v["ttfts"][9] = serde_json::json!("y");
    v["output_lens"][7] = serde_json::json!(-1);
    v["itls"].as_array_mut().unwrap().truncate(190);
    v["duration"] = serde_json::json!("fast");
    let input = serde_json::to_vec(&v).unwrap();
    let out = run(&["summary", "--max-diagnostics", "10", "-"], &input);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8(out.stderr).unwrap();
    let lines: Vec<&str> = err.lines().collect();
    let starts = [
        "<stdin>:1: record 3 (from 0): ttft \"x\": present but not readable",
        "<stdin>:1: record 7 (from 0): output_tokens -1: present but not readable",
        "<stdin>:1: record 9 (from 0): ttft \"y\": present but not readable",
        "<stdin>:1: the per-request arrays differ in length (ttfts 200, itls 190,",
        "<stdin>:1: duration \"fast\": not readable as the run's length in seconds",
    ];
    assert_eq!(lines.len(), starts.len(), "{err}");
    for (line, start) in lines.iter().zip(starts) {
        assert!(line.starts_with(start), "{line}\nnot: {start}");
    }
    // Past `--max-diagnostics`, counted.
    let out = run(&["summary", "--max-diagnostics", "1", "-"], &input);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.lines().next().unwrap().contains("record 3 (from 0)"),
        "{err}"
    );
    assert!(
        err.contains("tokentime: 4 more messages on bad input not shown (--max-diagnostics)"),
        "{err}"
    );
}

/// A run length that is no number of seconds (a string, a negative number) is named on
/// stderr: the run has no rates, and the line says why, not only that no time was logged.
#[test]
fn a_result_files_unreadable_run_length_is_named() {
    for (duration, text) in [
        (serde_json::json!("fast"), "duration \"fast\""),
        (serde_json::json!(-5), "duration -5"),
    ] {
        let (s, err) = vllm_result_edited(|v| v["duration"] = duration.clone());
        assert_eq!(s["coverage"]["requests"], 200, "{err}");
        assert_eq!(
            s["groups"][0]["throughput"]["requests_per_s"],
            serde_json::Value::Null
        );
        assert!(
            err.contains(&format!(
                "<stdin>:1: {text}: not readable as the run's length in seconds (a number above \
                 0): the run's rates are not given"
            )),
            "{err}"
        );
    }
}

/// A request whose times disagree (instants out of order, a negative interval: clock skew, a
/// unit mixed up) is counted as an anomaly and named on stderr with the times its format read,
/// as logged, so that the line can be found; the others of the input are not.
#[test]
fn a_request_whose_times_disagree_is_named_with_them() {
    // The first token after the end; then a duration logged negative (vLLM's request stats).
    let late = R.replace("1741946531.2", "1741946533.5");
    let input = format!("{R}\n{late}\n{R}\n");
    let out = run(&["summary", "-"], input.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "<stdin>:2: instants out of order: startTime 1741946531.0 (arrival), completionStartTime \
         1741946533.5 (first_token), endTime 1741946532.2 (end), as litellm reads them: which is \
         wrong is unknown: the metrics that need them are null, reason out_of_order\n"
    );
    let stats = std::fs::read(testdata().join("loadtest/vllm-stats.jsonl")).unwrap();
    let out = run(&["summary", "-"], &stats);
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "<stdin>:4: a negative interval: queued_time -51237.502 (queue), prefill_time 0.0 \
         (prefill), decode_time 0.0 (decode), e2e_latency 0.35 (e2e), as vllm-stats reads them: \
         the metrics that come out negative are null, reason negative_interval\n"
    );
}

/// An instant no plausible time (an OTLP span's end in the year 2286 or later) is named with
/// its value as logged, each span of the export by its index, not only the first.
#[test]
fn each_span_with_no_plausible_time_is_named_with_its_value() {
    let line = std::fs::read_to_string(testdata().join("formats/vllm-otlp.jsonl")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&line).unwrap();
    let spans = &mut v["resourceSpans"][0]["scopeSpans"][0]["spans"];
    let mut second = spans[0].clone();
    second["spanId"] = "b7ad6b7169203332".into();
    second["traceId"] = "0af7651916cd43dd8448eb211c80319d".into();
    second["endTimeUnixNano"] = "9999999999999999999".into();
    spans[0]["startTimeUnixNano"] = "0".into();
    spans.as_array_mut().unwrap().push(second);
    let out = run(&["summary", "-o", "json"], format!("{v}\n").as_bytes());
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["coverage"]["anomalies"]["implausible_instant"], 2);
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "<stdin>:1: record 0 (from 0): arrival: \"0\" is not a plausible time as vllm-otlp reads \
         it (startTimeUnixNano as epoch_ns: before 2000 or after 2200): the metrics that need it \
         are null, reason implausible_instant\n\
         <stdin>:1: record 1 (from 0): end: \"9999999999999999999\" is not a plausible time as \
         vllm-otlp reads it (endTimeUnixNano as epoch_ns: before 2000 or after 2200): the \
         metrics that need it are null, reason implausible_instant\n"
    );
}

/// A token gap logged negative (a result file's `itls[4][1]`): no gap of that request is an
/// ITL sample (none below 0 enters the quantiles), its ITL, and the decode and TPOT the gaps
/// give and the E2E made of that decode, are null with reason `negative_interval`, the request
/// is counted as that anomaly, and stderr names the element. A TTFT logged negative leaves
/// the E2E made of it null for that reason too.
#[test]
fn a_negative_token_gap_is_no_sample_and_is_named() {
    let (s, err) = vllm_result_edited(|v| v["itls"][4][1] = serde_json::json!(-0.02));
    assert_eq!(s["coverage"]["requests"], 200, "{err}");
    assert_eq!(s["coverage"]["anomalies"]["negative_interval"], 1);
    let m = &s["groups"][0]["metrics"];
    assert!(m["itl_ms"]["min"].as_f64().unwrap() > 0.0, "{m}");
    // The E2E is the TTFT and that decode: null for the same reason, not `not_logged`.
    for metric in ["itl_ms", "decode_ms", "tpot_ms", "e2e_ms"] {
        assert_eq!(m[metric]["nulls"]["negative_interval"], 1, "{metric}: {m}");
    }
    assert!(
        err.starts_with(
            "<stdin>:1: record 4 (from 0): a negative interval: ttfts 0.058860330000243266 \
             (ttft), itls element 1: -0.02 (itl), as vllm-bench reads them: the metrics that \
             come out negative are null, reason negative_interval"
        ),
        "{err}"
    );
}

#[test]
fn an_e2e_made_of_a_negative_ttft_is_null_for_that_reason() {
    let (s, err) = vllm_result_edited(|v| v["ttfts"][3] = serde_json::json!(-0.05));
    let m = &s["groups"][0]["metrics"];
    for metric in ["ttft_ms", "e2e_ms"] {
        assert_eq!(m[metric]["nulls"]["negative_interval"], 1, "{metric}: {m}");
        assert!(
            m[metric]["nulls"].get("not_logged").is_none(),
            "{metric}: {m}"
        );
    }
    assert!(
        err.starts_with("<stdin>:1: record 3 (from 0): a negative interval"),
        "{err}"
    );
}
