//! Digests on standard output and streams of them: `summary --save-digest -` writes the digest
//! document (and nothing else) to stdout, and `merge` reads any number of concatenated digest
//! documents from standard input or a file, as a map step per partition (Spark's `rdd.pipe`,
//! `xargs`) and one reduce would.

use crate::common::*;
use serde_json::Value;

/// The lab log cut into `n` parts at line boundaries, each written to `dir`.
fn parts(dir: &std::path::Path, n: usize) -> Vec<String> {
    crate::common::lab_parts(dir, n)
}

fn s(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `--save-digest -`: stdout holds exactly the digest document, on one line, the same bytes
/// `--save-digest FILE` writes, whatever `--output`; no table. SLO verdicts still go to stderr
/// and set the exit status.
#[test]
fn save_digest_dash_writes_only_the_digest() {
    let dir = tempfile::tempdir().unwrap();
    let log = testdata().join("lab/litellm.jsonl").display().to_string();
    let file = dir.path().join("d.json").display().to_string();
    // One thread: a file read in chunks adds its sums in another order than standard input
    // (the last digits of a float sum differ).
    run_ok(
        &[
            "summary",
            "--threads",
            "1",
            "--by",
            "model",
            "--save-digest",
            &file,
            &log,
        ],
        b"",
    );
    let saved = std::fs::read(&file).unwrap();
    for output in ["table", "json", "csv"] {
        let out = run_ok(
            &[
                "summary",
                "--threads",
                "1",
                "--by",
                "model",
                "-o",
                output,
                "--save-digest",
                "-",
                &log,
            ],
            b"",
        );
        assert_eq!(s(&out), s(&saved), "-o {output}");
    }
    // From standard input too (a partition piped in).
    let text = std::fs::read(testdata().join("lab/litellm.jsonl")).unwrap();
    let out = run_ok(&["summary", "--by", "model", "--save-digest", "-"], &text);
    assert_eq!(s(&out), s(&saved));
    assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
    let doc: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(doc["schema"], "tokentime.digest/v1");
    // An SLO broken: the verdict on stderr, exit 3, stdout still only the digest.
    let out = run(
        &[
            "summary",
            "--slo",
            "ttft:p50<=1ms",
            "--save-digest",
            "-",
            &log,
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(3), "{}", s(&out.stderr));
    assert!(s(&out.stderr).contains("ttft"), "{}", s(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "tokentime.digest/v1");
}

/// `--every` writes its own output to stdout: not with `--save-digest -` (`--bucket`'s
/// windows are in the digest: see digest_windows.rs).
#[test]
fn save_digest_dash_refuses_every() {
    let out = run(&["summary", "--every", "1s", "--save-digest", "-"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        s(&out.stderr).contains(
            "--save-digest - writes the digest to standard output in place of the report: not with --every"
        ),
        "{}",
        s(&out.stderr)
    );
}

/// Concatenated digests on standard input (`merge`, `merge -`) or in one file merge as the
/// same digests in files of their own do, and as one summary over all the parts; a digest
/// dropped changes the result.
#[test]
fn merge_reads_concatenated_digests_from_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let parts = parts(dir.path(), 3);
    let mut stream = Vec::new();
    let mut files = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        let text = std::fs::read(p).unwrap();
        stream.extend(run_ok(
            &["summary", "--by", "model", "--save-digest", "-"],
            &text,
        ));
        let f = dir.path().join(format!("d{i}.json")).display().to_string();
        run_ok(&["summary", "--by", "model", "--save-digest", &f, p], b"");
        files.push(f);
    }
    let all = dir.path().join("all.json");
    std::fs::write(&all, &stream).unwrap();
    let all = all.display().to_string();
    for output in ["table", "json"] {
        let mut from_files = vec!["merge", "-o", output];
        from_files.extend(files.iter().map(String::as_str));
        let want = run_ok(&from_files, b"");
        assert_eq!(s(&run_ok(&["merge", "-o", output], &stream)), s(&want));
        assert_eq!(s(&run_ok(&["merge", "-o", output, "-"], &stream)), s(&want));
        assert_eq!(s(&run_ok(&["merge", "-o", output, &all], b"")), s(&want));
        let mut one = vec!["summary", "--by", "model", "-o", output];
        one.extend(parts.iter().map(String::as_str));
        assert_eq!(s(&run_ok(&one, b"")), s(&want), "-o {output}");
    }
    // Blank lines between the documents are fine; a dropped digest is not the same summary.
    let spaced: Vec<u8> = s(&stream).replace('\n', "\n\n").into_bytes();
    let want = run_ok(&["merge", "-o", "json"], &stream);
    assert_eq!(run_ok(&["merge", "-o", "json"], &spaced), want);
    let two: String = s(&stream).lines().take(2).collect::<Vec<_>>().join("\n");
    let dropped = run_ok(&["merge", "-o", "json"], two.as_bytes());
    assert_ne!(dropped, want);
    // A merge of the stream written as a digest again (`merge --save-digest -`) merges again.
    let again = run_ok(&["merge", "--save-digest", "-"], &stream);
    assert_eq!(run_ok(&["merge", "-o", "json"], &again), want);
}

/// What `merge` refuses of a stream: nothing in it, a document that is no digest (named by
/// its place), standard input named twice.
#[test]
fn merge_stream_refusals() {
    let out = run(&["merge"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        s(&out.stderr).contains("<stdin>: no digest in it"),
        "{}",
        s(&out.stderr)
    );
    let log = testdata().join("lab/litellm.jsonl").display().to_string();
    let one = run_ok(&["summary", "--save-digest", "-", &log], b"");
    let mut bad = one.clone();
    bad.extend_from_slice(b"{\"schema\":\"tokentime.digest/v1\",");
    let out = run(&["merge"], &bad);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        s(&out.stderr).contains("<stdin>, digest 2: not a digest file"),
        "{}",
        s(&out.stderr)
    );
    let out = run(&["merge", "-", "-"], &one);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        s(&out.stderr).contains("standard input named twice"),
        "{}",
        s(&out.stderr)
    );
}
