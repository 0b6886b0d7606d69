//! Enrich never loses, reorders or alters a byte: over every testdata file (and the lab files
//! with `--root response`), the output has as many lines as the input, and cutting the spliced
//! object out of each line gives the input line back byte for byte.

use crate::common::*;

fn jsonl_files() -> Vec<std::path::PathBuf> {
    testdata_files(&["jsonl", "log"])
}

fn check_roundtrip(args: &[&str], input: &[u8], what: &str) -> usize {
    let out = run_ok(args, input);
    let a = lines_with_endings(input);
    let b = lines_with_endings(&out);
    assert_eq!(a.len(), b.len(), "{what}: line count");
    let mut spliced = 0;
    for (i, (inp, outp)) in a.iter().zip(&b).enumerate() {
        match unsplice(outp, "tokentime") {
            Some((restored, _)) if inp != outp => {
                assert_eq!(
                    &restored[..],
                    *inp,
                    "{what}:{}: restored line differs",
                    i + 1
                );
                spliced += 1;
            }
            _ => assert_eq!(outp, inp, "{what}:{}: pass-through line altered", i + 1),
        }
    }
    spliced
}

#[test]
fn every_testdata_file_round_trips() {
    let files = jsonl_files();
    assert!(files.len() >= 20);
    let mut total = 0;
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        total += check_roundtrip(&["-"], &bytes, &f.display().to_string());
        total += check_roundtrip(&["--root", "response"], &bytes, &f.display().to_string());
    }
    assert!(total > 500, "spliced lines: {total}");
}

#[test]
fn all_files_concatenated_round_trip() {
    let mut all = vec![];
    for f in jsonl_files() {
        all.extend(std::fs::read(f).unwrap());
        if all.last() != Some(&b'\n') {
            all.push(b'\n');
        }
    }
    check_roundtrip(&[], &all, "concatenation");
}

#[test]
fn crlf_bom_and_missing_final_newline_are_kept() {
    let input = b"\xEF\xBB\xBF{\"timings\":{\"prompt_ms\":5.0,\"predicted_n\":3,\"predicted_ms\":10.0}}\r\nplain text\r\n{\"timings\":{\"prompt_ms\":5.0,\"predicted_n\":3,\"predicted_ms\":10.0}}";
    assert_eq!(check_roundtrip(&[], input, "crlf"), 2);
    let out = run_ok(&[], input);
    assert!(out.starts_with(b"\xEF\xBB\xBF{"));
    assert!(!out.ends_with(b"\n"));
    // tpot = 10 ms / (3 - 1) = 5 ms
    assert!(String::from_utf8_lossy(&out).contains("\"tpot_ms\":5.0,"));
}

/// `cat a.jsonl b.jsonl` of two files that each start with a byte-order mark: the second
/// mark starts a line mid-stream. It is that line's prefix, kept as it is; the request is read
/// (it was counted non-JSON, silently), with one thread or several.
#[test]
fn a_byte_order_mark_mid_stream_is_kept_and_its_line_read() {
    let line = "{\"timings\":{\"prompt_ms\":5.0,\"predicted_n\":3,\"predicted_ms\":10.0}}\n";
    let file = format!("\u{feff}{line}{line}");
    let input = format!("{file}{file}").repeat(2_000);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("boms.jsonl");
    std::fs::write(&path, &input).unwrap();
    let path = path.to_str().unwrap();
    for threads in ["1", "3"] {
        let args = ["--threads", threads, "--chunk-bytes", "4096"];
        let out = run_ok(&[&args[..], &[path]].concat(), b"");
        let (a, b) = (
            lines_with_endings(input.as_bytes()),
            lines_with_endings(&out),
        );
        assert_eq!(a.len(), b.len());
        for (inp, outp) in a.iter().zip(&b) {
            let (restored, _) = unsplice(outp, "tokentime").expect("every line enriched");
            assert_eq!(&restored[..], *inp, "--threads {threads}");
        }
        let s: serde_json::Value = serde_json::from_slice(&run_ok(
            &[&["summary", "-o", "json"][..], &args, &[path]].concat(),
            b"",
        ))
        .unwrap();
        assert_eq!(s["coverage"]["requests"], 8_000, "--threads {threads}");
        assert_eq!(s["coverage"]["non_json"], 0, "--threads {threads}");
    }
}

#[test]
fn a_line_enriched_twice_is_left_alone() {
    let line = b"{\"timings\":{\"prompt_ms\":5.0,\"predicted_n\":3,\"predicted_ms\":10.0}}\n";
    let once = run_ok(&[], line);
    let twice = run_ok(&[], &once);
    assert_eq!(once, twice);
    // A summary of enriched lines is the summary of the original lines.
    let summary = |input: &[u8]| -> serde_json::Value {
        serde_json::from_slice(&run_ok(&["summary", "-o", "json"], input)).unwrap()
    };
    assert_eq!(summary(&once), summary(line));
    assert_eq!(summary(&once)["coverage"]["requests"], 1);
}
