//! One test per crash the fuzz targets (`fuzz/`) found, named after the case; each comment
//! names the target and the minimized input.

use crate::common::*;
use serde_json::Value;

/// lines_and_formats: `{"event":"startu\xFAp","version":"1.2.3"}` was a JSON object without
/// timing, not an invalid line. serde_json does not check UTF-8 in the strings it skips, so a
/// line's kind depended on which fields were read: `--by user` turned the request below from a
/// request into an invalid line.
#[test]
fn invalid_utf8_in_a_field_not_read_is_an_invalid_line() {
    let input = b"{\"event\":\"startu\xFAp\",\"version\":\"1.2.3\"}\n{\"user\":\"\xFA\",\"timings\":{\"prompt_ms\":5.0,\"predicted_n\":3,\"predicted_ms\":10.0}}\n";
    for args in [
        &["summary", "-o", "json"][..],
        &["summary", "-o", "json", "--by", "user"],
    ] {
        let s: Value = serde_json::from_slice(&run_ok(args, input)).unwrap();
        assert_eq!(s["coverage"]["invalid"], 2, "{args:?}");
        assert_eq!(s["coverage"]["requests"], 0, "{args:?}");
    }
    let out = run(&[], input);
    assert_eq!(out.stdout, input, "passed through unchanged");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("<stdin>:1: invalid JSON: invalid UTF-8 at byte 17\n"),
        "{err}"
    );
}

/// units: `1.92e-2050` decoded as the count 0. decode_count checked integrality on an f64,
/// where the fraction had underflowed; so did `9007199254740993.5` (past 2^53). A llama.cpp
/// line with such a `predicted_n` got `output_tokens` 0 or a made-up TPOT.
#[test]
fn count_with_a_fraction_too_small_for_f64_is_no_count() {
    for n in ["1.92e-2050", "9007199254740993.5", "3.00000000000000000001"] {
        let line = format!(
            "{{\"timings\":{{\"prompt_ms\":5.0,\"predicted_n\":{n},\"predicted_ms\":10.0}}}}\n"
        );
        let objs = enriched_objects(&run_ok(&[], line.as_bytes()));
        let m = objs[0].as_ref().expect("still a request");
        assert_eq!(m["output_tokens"], Value::Null, "{n}");
        assert_eq!(m["tpot_ms"], Value::Null, "{n}");
        assert_eq!(
            m["nulls"]["tpot_ms"], "unparseable",
            "{n}: present but no count"
        );
    }
}

/// lines_and_formats: a final line without newline of exactly `--max-line-bytes` bytes (`o`
/// with a limit of 1) was reported too long: the reader gave up on reaching the limit before
/// it knew that no newline would follow, so the verdict depended on the read chunking.
#[test]
fn final_line_of_exactly_max_line_bytes_is_not_too_long() {
    let input = b"x\n{\"timings\":{\"prompt_ms\":5.0,\"predicted_n\":3,\"predicted_ms\":10.0}}";
    let max = (input.len() - 2).to_string();
    let out = run(&["--max-line-bytes", &max], input);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        enriched_objects(&out.stdout)[1].is_some(),
        "enriched, not passed through"
    );
    let s: Value = serde_json::from_slice(&run_ok(
        &["summary", "-o", "json", "--max-line-bytes", &max],
        input,
    ))
    .unwrap();
    assert_eq!(s["coverage"]["too_long"], 0);
    assert_eq!(s["coverage"]["requests"], 1);
    let one_less = (input.len() - 3).to_string();
    let s: Value = serde_json::from_slice(&run_ok(
        &["summary", "-o", "json", "--max-line-bytes", &one_less],
        input,
    ))
    .unwrap();
    assert_eq!(s["coverage"]["too_long"], 1, "one byte over is too long");
}

/// lines_and_formats: `{"error":4E556}` was invalid while `{"x":4E556}` was not. The values at
/// paths with children of their own (`error`, `usage`, `timings`, `metrics`) and the keys in
/// them were decoded by serde_json, which refuses a number past f64 or an unpaired surrogate
/// escape that the JSON grammar allows, so whether a line was valid depended on which fields
/// the formats in use read: `--format vllm` (which reads no `error`) kept the request below,
/// auto detection called it invalid. A field read as a value that holds such a thing is an
/// unparseable value of that field.
#[test]
fn number_past_f64_or_lone_surrogate_in_a_field_read_is_still_valid_json() {
    let input = concat!(
        "{\"error\":4E556}\n",
        "{\"error\":4E556,\"metrics\":{\"time_to_first_token_ms\":5.0}}\n",
        "{\"timings\":\"\\ud800\",\"metrics\":{\"time_to_first_token_ms\":5.0}}\n",
        "{\"usage\":{\"\\ud800\":1,\"prompt_tokens\":7},\"metrics\":{\"time_to_first_token_ms\":5.0}}\n",
        "{\"usage\":4E556,\"metrics\":{\"time_to_first_token_ms\":5.0}}\n",
        "{\"metrics\":4E556}\n",
        "{\"metrics\":{\"time_to_first_token_ms\":4E556}}\n",
        "{\"metrics\":{\"time_to_first_token_ms\":\"\\ud800\"}}\n",
    );
    for args in [
        &["summary", "-o", "json"][..],
        &["summary", "-o", "json", "--format", "vllm"],
        &["summary", "-o", "json", "--reference-parser"],
    ] {
        let s: Value = serde_json::from_slice(&run_ok(args, input.as_bytes())).unwrap();
        assert_eq!(s["coverage"]["invalid"], 0, "{args:?}");
        assert_eq!(s["coverage"]["no_timing"], 2, "{args:?}");
        assert_eq!(s["coverage"]["requests"], 6, "{args:?}");
        assert_eq!(s["coverage"]["anomalies"]["unparseable"], 2, "{args:?}");
    }
    let out = run(&[], input.as_bytes());
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("invalid JSON"), "{err}");
    // Every line passes through, as it came.
    for (line, got) in lines_with_endings(input.as_bytes())
        .iter()
        .zip(lines_with_endings(&out.stdout))
    {
        let line = line.strip_suffix(b"}\n").unwrap();
        assert!(got.starts_with(line), "{}", String::from_utf8_lossy(got));
    }
    let objs = enriched_objects(&out.stdout);
    assert_eq!(objs.len(), 8);
    assert!(objs[0].is_none() && objs[5].is_none(), "no timing");
    assert_eq!(objs[1].as_ref().unwrap()["ttft_ms"], 5.0);
    assert_eq!(objs[3].as_ref().unwrap()["input_tokens"], 7);
    assert_eq!(objs[4].as_ref().unwrap()["input_tokens"], Value::Null);
    for m in [&objs[6], &objs[7]] {
        let m = m.as_ref().expect("a request");
        assert_eq!(m["ttft_ms"], Value::Null);
        assert_eq!(m["nulls"]["ttft_ms"], "unparseable");
    }
}

/// lines_and_formats: the coverage counts did not add up to the lines read when a line was
/// split by the kubelet (CRI `P` pieces) or Docker (records whose `log` does not end a line):
/// a held piece was counted in no category. It is a joined line now, and a piece never
/// completed is an unfinished join; the same with `--threads` (chunks whose pieces are held
/// across a chunk boundary).
#[test]
fn pieces_of_a_split_line_are_counted_as_joined_lines() {
    let p = "2025-03-14T10:00:00.000000000Z stdout P {\"timings\":{\"prompt_ms\":5.0,\n";
    let f = "2025-03-14T10:00:00.000000000Z stdout F \"predicted_n\":3,\"predicted_ms\":10.0}}\n";
    let d = |log: &str| format!("{{\"log\":{},\"stream\":\"stderr\"}}\n", Value::from(log));
    let dp = d("{\"timings\":{\"prompt_ms\":5.0,");
    let df = d("\"predicted_n\":3,\"predicted_ms\":10.0}}\n");
    let small = format!("{p}{f}{p}{dp}{df}{dp}");
    // Past a few chunks, so that pieces straddle chunk boundaries.
    let mut big = String::new();
    for _ in 0..3000 {
        big.push_str(&format!("{p}{dp}{f}{df}"));
    }
    big.push_str(&format!("{p}{dp}"));
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), &big).unwrap();
    let path = file.path().to_str().unwrap();
    for (input, args, lines, requests, joined) in [
        (small.as_bytes(), &["summary", "-o", "json"][..], 6, 2, 4),
        (
            b"",
            &["summary", "-o", "json", "--threads", "1", path],
            12002,
            6000,
            6002,
        ),
        (
            b"",
            &[
                "summary",
                "-o",
                "json",
                "--threads",
                "3",
                "--chunk-bytes",
                "4096",
                path,
            ],
            12002,
            6000,
            6002,
        ),
    ] {
        let s: Value = serde_json::from_slice(&run_ok(args, input)).unwrap();
        let c = &s["coverage"];
        assert_eq!(c["lines"], lines, "{args:?}");
        assert_eq!(c["requests"], requests, "{args:?}");
        assert_eq!(c["joins"]["joined_lines"], joined, "{args:?}");
        assert_eq!(
            c["joins"]["unfinished"], 2,
            "{args:?}: the last pieces, one per stream, never completed"
        );
    }
}

/// lines_and_formats: a `vllm bench serve` result line (requests as records) with a number
/// beyond f64 in a field tokentime does not read (`"median_ttft_ms": 84.12e61348`) was
/// `invalid` ("not readable as records"): serde_json will not hold it as a value, though the
/// line is valid JSON. Such values are made unusable and the records read; one in a field
/// read (a TTFT) makes that request's metric null.
#[test]
fn a_records_line_with_a_number_past_f64_or_a_lone_surrogate_is_still_read() {
    let line = |extra: &str, ttft2: &str| {
        format!(
            "{{\"input_lens\": [512, 512], \"output_lens\": [3, 3], \"ttfts\": [0.1, {ttft2}], \
             \"itls\": [[0.01, 0.02], [0.01, 0.02]], \"errors\": [\"\", \"\"], \
             \"generated_texts\": [\"a\", \"b\"]{extra}}}\n"
        )
    };
    let input = [
        line(", \"median_ttft_ms\": 84.12e61348", "0.2"),
        line(
            ", \"note\": \"\\ud800 and \\udc00 alone, \\ud83d\\ude00 paired\"",
            "0.2",
        ),
        line("", "1e400"),
    ]
    .concat();
    for args in [
        &["summary", "-o", "json"][..],
        &["summary", "-o", "json", "--reference-parser"],
    ] {
        let s: Value = serde_json::from_slice(&run_ok(args, input.as_bytes())).unwrap();
        assert_eq!(s["coverage"]["invalid"], 0, "{args:?}");
        assert_eq!(s["coverage"]["requests"], 6, "{args:?}");
    }
    let out = run_ok(&[], input.as_bytes());
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3);
    for l in &lines[..2] {
        assert!(l.contains("\"ttft_ms\":200.0"), "{l}");
    }
    assert!(lines[2].contains("\"ttft_ms\":100.0"), "{}", lines[2]);
    assert!(lines[2].contains("\"ttft_ms\":null"), "{}", lines[2]);
}

/// A LiteLLM request as an array document's record.
const ARRAY_RECORD: &str = r#"{"id":"a","call_type":"acompletion","stream":true,"status":"success","startTime":1741946531.0,"completionStartTime":1741946531.2,"endTime":1741946532.2,"prompt_tokens":1,"completion_tokens":11}"#;

/// The requests `summary` reads in `input`, fed whole and one byte per read (a pipe that
/// trickles), with the records it could not read (`invalid` lines).
fn array_requests(input: &[u8]) -> Vec<(u64, u64)> {
    let mut got = vec![];
    for step in [usize::MAX, 1] {
        let reader = std::io::BufReader::with_capacity(64, Trickle { data: input, step });
        let (kind, mut replay) = tokentime::sniff_document(reader, usize::MAX).unwrap();
        assert_eq!(kind, Some(tokentime::Document::Array), "step {step}");
        let mut n = 0;
        tokentime::for_each_element(&mut replay, &mut |_| {
            n += 1;
            Ok(())
        })
        .unwrap_or_else(|e| panic!("step {step}: {e}"));
        got.push((n, 0));
    }
    let s: Value = serde_json::from_slice(&run_ok(&["summary", "-o", "json"], input)).unwrap();
    let c = &s["coverage"];
    got.push((
        c["requests"].as_u64().unwrap(),
        c["invalid"].as_u64().unwrap(),
    ));
    got
}

/// At most `step` bytes per read.
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.data.len().min(self.step).min(out.len());
        out[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// document_detection: `[\r]\n \x0C` (an array, then a form feed) and `[...]\n\xEF\xBB\xBF[...]`
/// (two array files joined with `cat`, the second with a BOM) were taken for array documents,
/// and the array reader then failed at the form feed or the BOM (`invalid JSON document:
/// expected value at line 2 column 1`): the second file's records were lost. The detection
/// skipped any ASCII whitespace and BOMs between arrays, the reader only JSON's blanks and a
/// BOM before the first. Now both skip JSON blanks and BOMs, and a form feed makes the input
/// JSON lines, every line read.
#[test]
fn a_bom_between_arrays_or_a_form_feed_after_one() {
    let two = format!("[{ARRAY_RECORD}]\n\u{FEFF}[{ARRAY_RECORD},{ARRAY_RECORD}]\n\u{FEFF}");
    assert_eq!(array_requests(two.as_bytes()), [(3, 0), (3, 0), (3, 0)]);
    let out = run_ok(&["summary", "-o", "json"], b"[\r]\n \x0C");
    let s: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(s["coverage"]["lines"], 2, "read as lines");
}

/// document_detection: `[\r]\xEF\xBB\xBF\n` handed over one byte per read was taken for JSON
/// lines (the read-ahead parsed the BOM's first byte as a value), and whole for an array
/// document: a pipe's read sizes changed the decision. A BOM that the bytes read so far end
/// inside now waits for the next read.
#[test]
fn a_bom_cut_by_a_read_after_an_array() {
    let input = format!("[{ARRAY_RECORD}]\u{FEFF}\n\r\r\r\n\n");
    assert_eq!(array_requests(input.as_bytes()), [(1, 0), (1, 0), (1, 0)]);
}

/// document_detection: `[][] \r\n\r\r[2.0]\n \n[8\n\r\r] \n[\r\n\r\r] \r\n` read 7 bytes at a
/// time was taken for JSON lines: the read-ahead parsed what it had so far, `...[2.`, and
/// serde_json calls a number cut after its `.` invalid, not short. An LLMPerf array read from a
/// pipe whose 64 KiB reads happened to end inside a number lost every record. A parse error at
/// the last bytes read now waits for the next read.
#[test]
fn a_read_ending_inside_a_number_of_an_array() {
    let input = b"[][] \r\n\r\r[2.0]\n \n[8\n\r\r] \n[\r\n\r\r] \r\n";
    for step in 1..=input.len() {
        let reader = std::io::BufReader::with_capacity(1, Trickle { data: input, step });
        let (kind, _) = tokentime::sniff_document(reader, usize::MAX).unwrap();
        assert_eq!(kind, Some(tokentime::Document::Array), "reads of {step}");
    }
    // A record whose number every read size cuts somewhere.
    let doc = format!("[{ARRAY_RECORD},\n{ARRAY_RECORD}]\n");
    for step in 1..=doc.len() {
        let reader = std::io::BufReader::with_capacity(
            64,
            Trickle {
                data: doc.as_bytes(),
                step,
            },
        );
        let (kind, _) = tokentime::sniff_document(reader, usize::MAX).unwrap();
        assert_eq!(kind, Some(tokentime::Document::Array), "reads of {step}");
    }
}
