//! Compressed and many inputs: gzip (multi-member, zero padding at the end) and zstd
//! (skippable frames too), on files and stdin, give exactly what the plain input gives; xz,
//! bzip2 and lz4 are refused; several files summarized in parallel give what one stream of
//! them gives; a progress line on stderr.

use crate::common::*;

fn gzip_multi_member(data: &[u8]) -> Vec<u8> {
    // Two gzip members back to back, as `cat a.gz b.gz` or pigz make.
    let mid = data.len() / 2;
    let mut out = Vec::new();
    for part in [&data[..mid], &data[mid..]] {
        out.extend(gzip(part));
    }
    out
}

#[test]
fn gz_and_zst_on_files_and_stdin_give_byte_identical_results() {
    let dir = tempfile::tempdir().unwrap();
    let plain = std::fs::read(testdata().join("lab/litellm.jsonl")).unwrap();
    let gz = gzip_multi_member(&plain);
    let zst = zstd::encode_all(&plain[..], 3).unwrap();
    let paths: Vec<String> = [
        ("log.jsonl", &plain),
        ("log.jsonl.gz", &gz),
        ("log.jsonl.zst", &zst),
    ]
    .iter()
    .map(|(name, bytes)| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p.display().to_string()
    })
    .collect();
    for mode in [
        &[][..],
        &["summary"],
        &["summary", "-o", "json"],
        &["-o", "csv"],
    ] {
        let want = run_ok(mode, &plain);
        assert!(!want.is_empty());
        for (i, bytes) in [&plain, &gz, &zst].into_iter().enumerate() {
            assert_eq!(run_ok(mode, bytes), want, "stdin #{i} {mode:?}");
            let mut a = mode.to_vec();
            a.push(&paths[i]);
            assert_eq!(run_ok(&a, b""), want, "file {} {mode:?}", paths[i]);
        }
    }
}

#[test]
fn several_files_summarized_in_parallel_equal_one_stream_of_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = vec![];
    let mut all = Vec::new();
    for name in [
        "lab/litellm.jsonl",
        "samples/litellm.jsonl",
        "samples/vllm_response_metrics.jsonl",
        "samples/llamacpp.jsonl",
    ] {
        let bytes = std::fs::read(testdata().join(name)).unwrap();
        all.extend_from_slice(&bytes);
        if all.last() != Some(&b'\n') {
            all.push(b'\n');
        }
        let p = dir.path().join(name.replace('/', "_") + ".zst");
        std::fs::write(&p, zstd::encode_all(&bytes[..], 1).unwrap()).unwrap();
        files.push(p.display().to_string());
    }
    let mut a = vec!["summary", "-o", "json", "--by", "model"];
    a.extend(files.iter().map(String::as_str));
    let parallel = run_ok(&a, b"");
    let one = run_ok(&["summary", "-o", "json", "--by", "model"], &all);
    // Requests in flight are rebuilt from each input's own start and end times (one input is
    // one server's log): the one stream is one log, the files are four. Everything else is
    // the same.
    let without_in_flight = |out: Vec<u8>| {
        let mut doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
        for g in doc["groups"].as_array_mut().unwrap() {
            g["analysis"]
                .as_object_mut()
                .unwrap()
                .remove("tpot_by_in_flight");
            let findings = g["findings"].as_array_mut().unwrap();
            findings.retain(|f| f["kind"] != "tpot_under_load");
            // TTFT's and TPOT's split by requests in flight, and the words that name it where
            // it is best.
            for f in findings
                .iter_mut()
                .filter(|f| f["metric"] == "ttft_ms" || f["metric"] == "tpot_ms")
            {
                let f = f.as_object_mut().unwrap();
                for k in ["inflight_split", "explained_by", "text"] {
                    f.remove(k);
                }
            }
        }
        doc
    };
    assert_eq!(without_in_flight(parallel), without_in_flight(one));
    // A missing file among several is still an I/O error.
    a.push("/nonexistent.jsonl");
    assert_eq!(run(&a, b"").status.code(), Some(2));
}

#[test]
fn progress_line_on_stderr_for_file_input() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("log.jsonl");
    std::fs::write(
        &p,
        std::fs::read(testdata().join("lab/litellm.jsonl")).unwrap(),
    )
    .unwrap();
    let p = p.display().to_string();
    let out = run(&["summary", "--progress", "always", &p], b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success());
    assert!(
        err.contains("tokentime: read ") && err.contains("(100%)"),
        "{err:?}"
    );
    assert!(
        err.ends_with("\r\x1b[2K"),
        "the line is cleared at the end: {err:?}"
    );
    // Not on a pipe by default (stderr here is a pipe).
    assert!(run(&["summary", &p], b"").stderr.is_empty());
}

/// A pretty-printed object document: each object is one line for `summary`, numbered by the
/// line of its `{`; a too-long object is counted and skipped, never held. Input that does not
/// parse as objects to its end is no document: it is read as lines. Enrich leaves it
/// out under `--only-requests` and writes a row for each of its requests in the row outputs.
#[test]
fn pretty_printed_objects_are_read_one_by_one_and_trailing_junk_is_reported() {
    let obj = |ms: f64| {
        serde_json::to_string_pretty(&serde_json::json!(
            {"timings": {"prompt_ms": ms, "predicted_n": 3, "predicted_ms": 10.0}}
        ))
        .unwrap()
    };
    let coverage = |args: &[&str], input: &[u8]| {
        let out = run(args, input);
        assert!(out.status.success(), "{args:?}");
        let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (
            s["coverage"].clone(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // Two objects, with CRLF endings, a BOM before each (two files joined with `cat`) and a
    // blank line between; then too-long ones.
    let two = format!(
        "\u{feff}{}\r\n\r\n\u{feff}{}",
        obj(5.0).replace('\n', "\r\n"),
        obj(7.0)
    );
    let (cov, err) = coverage(&["summary", "-o", "json"], two.as_bytes());
    assert_eq!(
        (cov["lines"].as_u64(), cov["requests"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(cov["invalid"], 0);
    assert!(err.is_empty(), "{err}");
    let (cov, err) = coverage(
        &["summary", "-o", "json", "--max-line-bytes", "60"],
        format!("{}\n{{\n}}\n{}\n", obj(5.0), obj(7.0)).as_bytes(),
    );
    assert_eq!(cov["too_long"], 2, "{cov}");
    assert_eq!(cov["lines"], 3);
    assert!(
        err.contains("<stdin>:1: line longer than --max-line-bytes 60"),
        "{err}"
    );
    assert!(err.contains("<stdin>:10: line longer"), "{err}");
    // Junk after the object: the input is no document, so it is read as lines, every one of
    // them, by summary as by enrich (the pretty object's lines are no requests).
    for junk in ["\nnot json\n{\"timings\":{}}\n", "]", "\n\n\u{1}"] {
        let input = format!("{}{junk}", obj(5.0));
        let (cov, err) = coverage(&["summary", "-o", "json"], input.as_bytes());
        assert_eq!(cov["requests"], 0, "{junk:?}");
        assert_eq!(
            cov["lines"].as_u64(),
            Some(input.trim_end_matches('\n').lines().count() as u64),
            "{junk:?}"
        );
        assert!(!err.contains("invalid JSON document"), "{junk:?}: {err}");
        // Enrich passes it all through.
        assert_eq!(run_ok(&[], input.as_bytes()), input.as_bytes());
    }
    // A cut-short object is no document either: its lines are read, none is a request.
    let (cov, err) = coverage(&["summary", "-o", "json"], &obj(5.0).as_bytes()[..40]);
    assert_eq!(
        (cov["lines"].as_u64(), cov["requests"].as_u64()),
        (Some(3), Some(0)),
        "{cov}"
    );
    assert!(err.contains("<stdin>:1: "), "{err}");
    // Left out under --only-requests; a row for each request in the row outputs.
    let doc = obj(5.0);
    assert_eq!(run_ok(&["--only-requests"], doc.as_bytes()), b"");
    assert_eq!(
        run_ok(&["--output", "csv", "--fields", "ttft_ms"], doc.as_bytes()),
        b"ttft_ms\n5.0\n"
    );
    let out = run(
        &["--output", "jsonl", "--fields", "ttft_ms"],
        doc.as_bytes(),
    );
    assert_eq!(out.stdout, b"{\"ttft_ms\":5.0}\n");
    // Enrich reads it as lines: JSON lines after a pretty object (a server's log after a
    // pretty-printed banner) are enriched.
    let line = "{\"timings\":{\"prompt_ms\":5.0,\"predicted_n\":3,\"predicted_ms\":10.0}}\n";
    let input = format!("{{\n  \"banner\": \"server 1.0\"\n}}\n{line}{line}");
    let out = run_ok(&[], input.as_bytes());
    let objs = enriched_objects(&out);
    assert_eq!(objs.len(), 5);
    assert!(objs[..3].iter().all(Option::is_none));
    assert!(
        objs[3..]
            .iter()
            .all(|o| o.as_ref().is_some_and(|m| m["tpot_ms"] == 5.0))
    );
}

/// A zstd skippable frame: magic 0x184D2A5N (little-endian), payload length, payload.
fn skippable_frame(n: u8, payload: &[u8]) -> Vec<u8> {
    assert!(n <= 0xf);
    let mut out = vec![0x50 | n, 0x2a, 0x4d, 0x18];
    out.extend((payload.len() as u32).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// Reading `compressed` (as a file and on stdin) gives what reading `plain` gives, in enrich
/// and in summary, with exit status 0.
fn assert_reads_as(compressed: &[u8], plain: &[u8], what: &str) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("in");
    std::fs::write(&p, compressed).unwrap();
    let p = p.display().to_string();
    for mode in [&[][..], &["summary", "-o", "json"]] {
        let want = run_ok(mode, plain);
        assert!(!want.is_empty());
        assert_eq!(run_ok(mode, compressed), want, "{what}: stdin {mode:?}");
        let mut a = mode.to_vec();
        a.push(&p);
        assert_eq!(run_ok(&a, b""), want, "{what}: file {mode:?}");
    }
}

/// `pzstd` starts its output with a skippable frame (the size of the frame that follows);
/// `zstd -dc` skips it, and so does tokentime, wherever skippable frames are.
#[test]
fn zstd_starting_with_a_skippable_frame_reads_as_the_plain_file() {
    let plain = std::fs::read(testdata().join("samples/litellm.jsonl")).unwrap();
    let pzstd = std::fs::read(testdata().join("compressed/litellm.jsonl.pzstd.zst")).unwrap();
    assert_eq!(pzstd[..4], [0x50, 0x2a, 0x4d, 0x18], "made by pzstd");
    assert_reads_as(&pzstd, &plain, "pzstd");
    // Built here: the first, a middle and the last of the 16 magic numbers, an empty payload
    // and one that looks like a line (skipped, not read), and zstd frames between them.
    let mid = plain.len() / 2;
    for n in [0x0, 0x7, 0xf] {
        let mut zst = skippable_frame(n, b"{\"not\":\"a line\"}\n");
        zst.extend(zstd::encode_all(&plain[..mid], 3).unwrap());
        zst.extend(skippable_frame(0xf - n, b""));
        zst.extend(zstd::encode_all(&plain[mid..], 3).unwrap());
        assert_reads_as(&zst, &plain, &format!("skippable 0x184D2A5{n:X}"));
    }
}

/// xz, bzip2 and lz4 are not decoded: the input is refused with a message that names it and
/// says how to decompress it, like any input that cannot be read (reported and skipped, the
/// other inputs still read, exit 2). Only the very first bytes count.
#[test]
fn xz_bzip2_and_lz4_inputs_are_refused_with_the_way_to_decompress_them() {
    let dir = tempfile::tempdir().unwrap();
    let good = testdata().join("samples/vllm_response_metrics.jsonl");
    let good = good.to_str().unwrap();
    let enriched_good = run_ok(&[good], b"");
    for (name, tool, head) in [
        ("xz", "xz -dc", &b"\xfd7zXZ\x00\x00\x04\xe6\xd6\xb4\x46"[..]),
        ("bzip2", "bzip2 -dc", b"BZh91AY&SY\x12\x34"),
        ("bzip2", "bzip2 -dc", b"BZh1\x17\x72\x45\x38\x50\x90"),
        ("lz4", "lz4 -dc", b"\x04\x22\x4d\x18\x64\x40\xa7"),
    ] {
        let mut bytes = head.to_vec();
        bytes.extend(b"\x00\x01{\"a\":1}\n\xff\xfe\n");
        let file = dir.path().join(format!("log.jsonl.{name}"));
        std::fs::write(&file, &bytes).unwrap();
        let file = file.to_str().unwrap();
        let message = format!(
            "{name}-compressed input is not supported: decompress it first, e.g. {tool} FILE \
             | tokentime ..."
        );
        // A file, first among others: skipped, the others read.
        let out = run(&["summary", "-o", "json", file, good], b"");
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("tokentime: {file}: {message}")),
            "{err}"
        );
        let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            s["coverage"]["non_json"], 0,
            "{name}: nothing of it read: {s}"
        );
        assert!(s["coverage"]["requests"].as_u64().unwrap() > 0, "{name}");
        // Enrich: nothing of it passed through, the other file enriched.
        let out = run(&[file, good], b"");
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert_eq!(out.stdout, enriched_good, "{name}");
        // Standard input: the summary of nothing.
        for args in [&[][..], &["summary", "--explain"]] {
            let out = run(args, &bytes);
            assert_eq!(out.status.code(), Some(2), "{name} {args:?}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains(&format!("tokentime: <stdin>: {message}")),
                "{err}"
            );
            let stdout = String::from_utf8_lossy(&out.stdout);
            if args.is_empty() {
                assert_eq!(stdout, "", "{name}");
            } else {
                assert!(stdout.starts_with("lines 0  requests 0 "), "{stdout}");
            }
        }
        // The magic bytes further in are text like any other.
        let mut later = b"{\"a\":1}\n".to_vec();
        later.extend(&bytes);
        let out = run(&["summary", "-o", "json"], &later);
        assert_eq!(out.status.code(), Some(0), "{name}");
    }
    // Text that starts like bzip2's magic but is not it.
    for text in ["BZh is not bzip2\n", "BZh0\n", "BZh"] {
        let out = run(&["summary", "-o", "json"], text.as_bytes());
        assert_eq!(out.status.code(), Some(0), "{text:?}");
        let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(s["coverage"]["non_json"], 1, "{text:?}");
    }
}

/// Zero bytes after the last gzip member (tape or block padding) are ignored, as gzip ignores
/// them; anything else after a member, and a truncated member, are still an I/O error.
#[test]
fn zero_padding_after_the_last_gzip_member_is_ignored() {
    let plain = std::fs::read(testdata().join("samples/litellm.jsonl")).unwrap();
    let gz = gzip_multi_member(&plain);
    // Less than a read, and more than the 32 KiB read-ahead.
    for zeros in [1, 512, 100_000] {
        let mut padded = gz.clone();
        padded.extend(vec![0; zeros]);
        assert_reads_as(&padded, &plain, &format!("{zeros} zeros"));
    }
    let want = run_ok(&["summary", "-o", "json"], &plain);
    let member = gzip_multi_member(&plain[..plain.len() / 2])[..].to_vec();
    let mut cases: Vec<(&str, Vec<u8>, &str)> = vec![];
    let mut garbage = gz.clone();
    garbage.extend(b"this is not a gzip member\n");
    cases.push((
        "garbage",
        garbage,
        "start no other member (trailing garbage",
    ));
    // Shorter than a member's header: the same words, not "unexpected end of file".
    let mut short = gz.clone();
    short.extend(b"garbage\n");
    cases.push((
        "short garbage",
        short,
        "start no other member (trailing garbage",
    ));
    let mut zeros_then_garbage = gz.clone();
    zeros_then_garbage.extend(vec![0; 40_000]);
    zeros_then_garbage.extend(b"garbage");
    cases.push((
        "zeros then garbage",
        zeros_then_garbage,
        "bytes other than zeros after the zero padding",
    ));
    let mut zeros_then_member = gz.clone();
    zeros_then_member.extend([0; 512]);
    zeros_then_member.extend(&member);
    cases.push((
        "zeros then a member",
        zeros_then_member,
        "bytes other than zeros after the zero padding",
    ));
    let mut truncated = gz[..gz.len() - 20].to_vec();
    truncated.extend([0; 512]);
    cases.push(("truncated, then zeros", truncated, ""));
    for (what, bytes, message) in cases {
        let out = run(&["summary", "-o", "json"], &bytes);
        assert_eq!(out.status.code(), Some(2), "{what}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("tokentime: <stdin>: ") && err.contains(message),
            "{what}: {err}"
        );
        if what != "truncated, then zeros" {
            // Every line was read before the error (which the coverage counts).
            let mut got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(got["coverage"]["read_errors"], 1, "{what}");
            got["coverage"]["read_errors"] = 0.into();
            // And marks the summary partial (digests.md, "Partial runs").
            let partial = got.as_object_mut().unwrap().remove("partial");
            assert_eq!(
                partial,
                Some(serde_json::json!({"interrupted": false, "read_errors": 1})),
                "{what}"
            );
            let want: serde_json::Value = serde_json::from_slice(&want).unwrap();
            assert_eq!(got, want, "{what}");
        }
    }
}

/// Bytes after the last zstd frame that start no other frame are named as gzip's are (trailing
/// garbage, every line before them read, exit 2), not by the library's `Unknown frame
/// descriptor`.
#[test]
fn trailing_garbage_after_the_last_zstd_frame_is_named() {
    let plain = std::fs::read(testdata().join("samples/litellm.jsonl")).unwrap();
    let mut zst = zstd::encode_all(&plain[..], 3).unwrap();
    zst.extend(b"GARBAGEGARBAGE\n");
    let out = run(&["summary", "-o", "json"], &zst);
    assert_eq!(out.status.code(), Some(2));
    let lines = plain.iter().filter(|&&b| b == b'\n').count();
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "tokentime: <stdin>: after line {lines}: bytes after the last zstd frame that start \
             no other frame (trailing garbage; the lines before them were read)\n"
        )
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let want: serde_json::Value =
        serde_json::from_slice(&run_ok(&["summary", "-o", "json"], &plain)).unwrap();
    assert_eq!(got["coverage"]["requests"], want["coverage"]["requests"]);
}

/// A FILE argument that is a named pipe (as `<(cmd)` is, or `mkfifo`) is read once from its
/// start: all of it, plain or compressed, under auto detection and under `--format inferred`
/// (which reads a sample first), and it never waits for a writer that is gone.
#[cfg(unix)]
#[test]
fn a_named_pipe_argument_is_read_whole_once() {
    let plain = std::fs::read(testdata().join("lab/litellm.jsonl")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("log.jsonl");
    std::fs::write(&file, &plain).unwrap();
    for (args, bytes) in [
        (&["summary", "-o", "json"][..], plain.clone()),
        (&["summary", "-o", "json"][..], gzip(&plain)),
        (
            &["summary", "--format", "inferred", "-o", "json"][..],
            plain.clone(),
        ),
        (&[][..], plain.clone()),
    ] {
        let fifo = dir.path().join("fifo");
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                use std::io::Write;
                // Ignore EPIPE: the failure this test looks for would show in the output.
                let _ = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&fifo)
                    .and_then(|mut f| f.write_all(&bytes));
            })
        };
        let mut all: Vec<&str> = args.to_vec();
        let fifo_arg = fifo.display().to_string();
        all.push(&fifo_arg);
        let from_pipe = run(&all, b"");
        writer.join().unwrap();
        let mut all: Vec<&str> = args.to_vec();
        let file_arg = file.display().to_string();
        all.push(&file_arg);
        let from_file = run(&all, b"");
        assert_eq!(
            String::from_utf8_lossy(&from_pipe.stdout),
            String::from_utf8_lossy(&from_file.stdout),
            "{args:?}"
        );
    }
}

/// Enrich of several FILEs whose first ends without a line end (a writer that never wrote its
/// last `\n`, a .gz cut short): the next file's first line starts a line of its own in the
/// output, so that the enriched output reads back as every request; the last FILE's last line
/// is written as it came.
#[test]
fn a_file_without_a_last_line_end_is_not_joined_to_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let lab = std::fs::read_to_string(testdata().join("lab/litellm.jsonl")).unwrap();
    let lines: Vec<&str> = lab.lines().take(6).collect();
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    std::fs::write(&a, lines[..3].join("\n")).unwrap();
    std::fs::write(&b, lines[3..].join("\n")).unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    for threads in ["1", "2"] {
        let out = run_ok(&["--threads", threads, a, b], b"");
        let text = String::from_utf8(out.clone()).unwrap();
        assert_eq!(text.lines().count(), 6, "{text}");
        assert!(!text.ends_with('\n'));
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            assert!(v["tokentime"]["e2e_ms"].is_number(), "{line}");
        }
        let s: serde_json::Value =
            serde_json::from_slice(&run_ok(&["summary", "-o", "json"], &out)).unwrap();
        assert_eq!(s["coverage"]["requests"], 6);
    }
}

/// The first 20 lines of the lab's LiteLLM log, line 11 cut to its first 40 bytes and followed
/// by `after` (no newline between them), then `tail`.
fn lab_with_line_11_cut(after: &[u8], tail: &[u8]) -> (Vec<String>, Vec<u8>) {
    let lab = std::fs::read_to_string(testdata().join("lab/litellm.jsonl")).unwrap();
    let lines: Vec<String> = lab.lines().take(20).map(str::to_owned).collect();
    let mut input = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if i == 10 {
            input.extend_from_slice(&l.as_bytes()[..40]);
            input.extend_from_slice(after);
            continue;
        }
        input.extend_from_slice(l.as_bytes());
        input.push(b'\n');
    }
    input.extend_from_slice(tail);
    (lines, input)
}

/// `summary -o json FILE` on one thread and in chunks of 4 KiB: each run's coverage and stderr.
fn coverage_one_thread_and_chunked(f: &str) -> Vec<(serde_json::Value, String)> {
    [
        &["--threads", "1"][..],
        &["--threads", "2", "--chunk-bytes", "4K"],
    ]
    .iter()
    .map(|threads| {
        let args: Vec<&str> = ["summary", "-o", "json"]
            .iter()
            .chain(*threads)
            .copied()
            .chain([f])
            .collect();
        let out = run(&args, b"");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (
            doc["coverage"].clone(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    })
    .collect()
}

/// A crash's zero fill mid-line (a line cut at byte 40, 4096 NULs, then the next request): the
/// cut line is one invalid line, named with where it broke off, and the request after the NULs
/// is read, on one thread and in chunks; enrich passes the cut bytes through and splices the
/// request, which reads back as every request.
#[test]
fn the_request_after_a_zero_fill_mid_line_is_read() {
    let (lines, input) = lab_with_line_11_cut(&[0u8; 4096], b"");
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("crashed.jsonl");
    std::fs::write(&f, &input).unwrap();
    let f = f.to_str().unwrap();
    for (c, err) in coverage_one_thread_and_chunked(f) {
        assert_eq!(
            (c["requests"].as_u64(), c["invalid"].as_u64()),
            (Some(19), Some(1)),
            "{c}"
        );
        assert_eq!(
            err,
            format!(
                "{f}:11: cut short at byte 40 by NUL bytes (a crash's zero fill?): its first 40 \
                 bytes are not read; the JSON after the NULs, at byte 4136, is read as a line of \
                 its own\n"
            )
        );
    }
    let enriched = run_ok(&[f], b"");
    let mut cut = lines[10].as_bytes()[..40].to_vec();
    cut.extend(vec![0u8; 4096]);
    cut.extend_from_slice(&lines[11].as_bytes()[..20]);
    assert!(
        enriched.windows(cut.len()).any(|w| w == cut),
        "the cut bytes passed through"
    );
    let s: serde_json::Value =
        serde_json::from_slice(&run_ok(&["summary", "-o", "json"], &enriched)).unwrap();
    assert_eq!(s["coverage"]["requests"], 19);
}

/// A line cut short with no NULs and no newline, then the next request (`{"id": "chatc{"id":
/// ...}`): the cut bytes are one invalid line, named, and the request after them is read, on
/// one thread and in chunks. A line merely cut short after an object inside it (`..."usage":
/// {"prompt_tokens": 5}`) is one invalid line: that object is no request.
#[test]
fn the_request_written_after_a_line_cut_short_is_read() {
    let (_, input) =
        lab_with_line_11_cut(b"", b"{\"id\": \"x\", \"usage\": {\"prompt_tokens\": 5}\n");
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("cut.jsonl");
    std::fs::write(&f, &input).unwrap();
    let f = f.to_str().unwrap();
    for (c, err) in coverage_one_thread_and_chunked(f) {
        assert_eq!(
            (
                c["requests"].as_u64(),
                c["invalid"].as_u64(),
                c["lines"].as_u64()
            ),
            (Some(19), Some(2), Some(21)),
            "{c}"
        );
        assert_eq!(
            err,
            format!(
                "{f}:11: cut short at byte 40 by a request's JSON (a line written without its end, \
                 then the next one?): its first 40 bytes are not read; the JSON at byte 40 is read \
                 as a line of its own\n{f}:20: invalid JSON: EOF while parsing an object at byte 42\n"
            )
        );
    }
}
