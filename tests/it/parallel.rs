//! Reading a file with several threads changes nothing a user sees: the same output bytes in
//! the same order, the same diagnostics with the same line numbers, the same summary (exact
//! quantiles), whatever the chunk size, including chunks smaller than a line. And the fast
//! scanner gives byte for byte what the serde_json reference parser gives.

use crate::common::*;
use std::io::Write;
use std::process::Output;

fn file(bytes: &[u8]) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(bytes).unwrap();
    f.flush().unwrap();
    f
}

fn all_testdata() -> Vec<u8> {
    let mut all = vec![];
    for f in testdata_files(&["jsonl", "log"]) {
        all.extend(std::fs::read(f).unwrap());
        if all.last() != Some(&b'\n') {
            all.push(b'\n');
        }
    }
    all
}

fn generated(lines: u64) -> Vec<u8> {
    let mut out = vec![];
    for (i, f) in ["litellm", "llamacpp", "vllm", "otlp"]
        .into_iter()
        .enumerate()
    {
        genlog::generate(f, 3 + i as u64, Some(lines), None, &mut out)
            .unwrap()
            .unwrap();
    }
    out
}

fn assert_same(a: &Output, b: &Output, what: &str) {
    assert_eq!(a.status.code(), b.status.code(), "{what}: exit status");
    assert!(a.stdout == b.stdout, "{what}: stdout differs");
    assert_eq!(
        String::from_utf8_lossy(&a.stderr),
        String::from_utf8_lossy(&b.stderr),
        "{what}: stderr"
    );
}

/// Runs tokentime with `args` and standard input redirected from the file at `path` (a regular
/// file, which is read in parallel like a FILE argument).
fn run_stdin_file(args: &[&str], path: &std::path::Path) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_tokentime"))
        .args(args)
        .stdin(std::fs::File::open(path).unwrap())
        .output()
        .unwrap()
}

/// Runs `args` + FILE on one thread and on several with various chunk sizes, and with the file
/// as standard input; all must agree.
fn check(args: &[&str], input: &[u8], what: &str) {
    let f = file(input);
    let path = f.path().to_str().unwrap();
    let one = run(&[args, &["--threads", "1", path]].concat(), b"");
    for chunk in ["64", "1000", "65536"] {
        let many = run(
            &[args, &["--threads", "3", "--chunk-bytes", chunk, path]].concat(),
            b"",
        );
        assert_same(&one, &many, &format!("{what} {args:?} chunk {chunk}"));
    }
    let stdin = run_stdin_file(
        &[args, &["--threads", "3", "--chunk-bytes", "1000"]].concat(),
        f.path(),
    );
    let mut expected = one.clone();
    expected.stderr = String::from_utf8_lossy(&one.stderr)
        .replace(path, "<stdin>")
        .into_bytes();
    assert_same(&expected, &stdin, &format!("{what} {args:?} stdin"));
}

#[test]
fn threads_change_nothing_on_testdata_and_generated_logs() {
    let mut input = all_testdata();
    input.extend(generated(300));
    check(&[], &input, "enrich");
    check(&["--only-requests"], &input, "enrich");
    // Exact quantiles: a t-digest estimate past --exact-limit may differ with the threads
    // (docs/performance.md), and AIPerf's chunk gaps are 21,537 values in 100 lines.
    check(
        &["summary", "-o", "json", "--exact-limit", "1000000"],
        &input,
        "summary",
    );
    check(
        &["summary", "--by", "model", "--exact-limit", "1000000"],
        &input,
        "summary",
    );
    check(&["--root", "response"], &input, "enrich");
}

/// Every testdata file on its own (JSON lines, logs, one-line JSON documents, pretty-printed
/// array documents): enrich and summary give the same on one thread and on several, with
/// chunks small enough to cut every file; with a forced format that joins lines too (such a
/// file is read by one thread).
#[test]
fn threads_change_nothing_on_each_testdata_file() {
    let files: Vec<_> = testdata_files(&["jsonl", "log", "json", "gz"])
        .into_iter()
        .filter(|p| !p.to_string_lossy().ends_with(".formats.json"))
        .collect();
    assert!(files.len() > 50, "{}", files.len());
    let formats = testdata().join("custom/gateway.formats.toml");
    let formats = formats.to_str().unwrap();
    for f in &files {
        let path = f.to_str().unwrap();
        let mut runs: Vec<Vec<&str>> = vec![
            vec![],
            // Exact quantiles, as above.
            vec![
                "summary",
                "-o",
                "json",
                "--by",
                "model",
                "--exact-limit",
                "1000000",
            ],
            vec!["--formats", formats],
            vec![
                "-o",
                "csv",
                "--fields",
                "line,id,model,format,ttft_ms,e2e_ms",
            ],
        ];
        if path.contains("ollama") {
            runs.push(vec!["-f", "ollama"]);
            runs.push(vec!["summary", "-o", "json", "-f", "ollama"]);
        }
        for args in runs {
            let one = run(&[&args[..], &["--threads", "1", path]].concat(), b"");
            let many = run(
                &[&args[..], &["--threads", "4", "--chunk-bytes", "300", path]].concat(),
                b"",
            );
            assert_same(&one, &many, &format!("{path} {args:?}"));
        }
    }
}

#[test]
fn threads_change_nothing_at_the_edges() {
    let req = "{\"timings\":{\"prompt_ms\":5.0,\"predicted_n\":3,\"predicted_ms\":10.0}}";
    let mut input = format!("\u{feff}{req}\r\nplain\n{{bad\n\n{req}\r\n").into_bytes();
    // Lines around --max-line-bytes 200, long ones split over many chunks.
    for len in [150, 199, 200, 201, 202, 450, 5000] {
        input.extend_from_slice(b"{\"pad\":\"");
        input.extend(std::iter::repeat_n(b'x', len));
        input.extend_from_slice(b"\"}\n");
        input.extend_from_slice(req.as_bytes());
        input.push(b'\n');
    }
    input.extend_from_slice(req.as_bytes()); // no final newline
    for args in [
        &["--max-line-bytes", "200"][..],
        &["--max-line-bytes", "200", "--only-requests"],
        &["summary", "-o", "json", "--max-line-bytes", "200"],
        &["--max-diagnostics", "2", "--max-line-bytes", "200"],
        &["--strict"],
    ] {
        check(args, &input, "edges");
    }
    // A file that starts with a too-long line keeps its BOM bytes.
    let mut long_first = "\u{feff}".as_bytes().to_vec();
    long_first.extend(std::iter::repeat_n(b'y', 3000));
    long_first.extend_from_slice(b"\n");
    long_first.extend_from_slice(req.as_bytes());
    check(&["--max-line-bytes", "100"], &long_first, "long first line");
    check(&[], b"", "empty file");
    // A final line of exactly --max-line-bytes bytes (no newline) fits; one more does not.
    check(
        &["--max-line-bytes", "10"],
        b"x\nabcdefghij",
        "final line at the limit",
    );
    check(
        &["--max-line-bytes", "10"],
        b"x\nabcdefghijk",
        "final line past the limit",
    );
}

/// Lines of formats that join lines (an Ollama stream, a llama.cpp legacy log) among others,
/// bad lines and too-long lines: handed in order to one worker while chunks are read in
/// parallel, they come out in place, with their diagnostics in line order.
#[test]
fn threads_change_nothing_around_joined_lines() {
    let ollama = std::fs::read(testdata().join("samples/ollama_stream.jsonl")).unwrap();
    let llamacpp = std::fs::read(testdata().join("formats/llamacpp-log.jsonl")).unwrap();
    let litellm = std::fs::read(testdata().join("samples/litellm.jsonl")).unwrap();
    let mut input = vec![];
    for i in 0..12 {
        let ollama_lines = lines_with_endings(&ollama);
        for (k, l) in ollama_lines.iter().enumerate() {
            input.extend_from_slice(l);
            // Other lines between the parts of one stream.
            if k % 2 == i % 2 {
                input.extend_from_slice(lines_with_endings(&litellm)[(i + k) % 5]);
                input.extend_from_slice(b"{bad json\n");
            }
        }
        input.extend_from_slice(&llamacpp);
        input.extend_from_slice(format!("{{\"pad\":\"{}\"}}\n", "x".repeat(300 + i)).as_bytes());
    }
    for args in [
        &["--max-line-bytes", "305"][..],
        &["--only-requests"],
        &["--max-diagnostics", "7", "--max-line-bytes", "305"],
        &["--max-diagnostics", "1000"],
        &[
            "summary",
            "-o",
            "json",
            "--by",
            "model",
            "--max-line-bytes",
            "305",
        ],
        &["-o", "jsonl", "--fields", "line,id,model,format,ttft_ms"],
    ] {
        check(args, &input, "joined lines");
    }
}

/// Lines split by Docker (json-file records whose `log` does not end in a newline) and by the
/// kubelet (CRI `P` pieces before the `F` one), on both streams, some of them pieces of Ollama
/// stream lines (a format that joins lines): pieces cut by chunk boundaries, pieces held at
/// the end of a chunk, pieces completed by a line that must be joined in order.
#[test]
fn threads_change_nothing_on_split_lines() {
    let lab = std::fs::read(testdata().join("lab/litellm.jsonl")).unwrap();
    let ollama = std::fs::read(testdata().join("samples/ollama_stream.jsonl")).unwrap();
    let mut lines: Vec<&[u8]> = lines_with_endings(&lab).into_iter().take(40).collect();
    for (i, l) in lines_with_endings(&ollama).into_iter().enumerate() {
        lines.insert(3 + 5 * i, l);
    }
    let (mut docker, mut cri) = (Vec::new(), Vec::new());
    for (i, line) in lines.iter().enumerate() {
        let text = std::str::from_utf8(line).unwrap();
        let size = if text.contains("\"done\"") { 17 } else { 3000 };
        let pieces: Vec<String> = text
            .chars()
            .collect::<Vec<_>>()
            .chunks(size)
            .map(|c| c.iter().collect())
            .collect();
        let stream = ["stdout", "stderr"][i % 3 / 2];
        for (k, piece) in pieces.iter().enumerate() {
            let log = serde_json::to_string(piece).unwrap();
            docker.extend(
                format!(
                    "{{\"log\":{log},\"stream\":\"{stream}\",\"time\":\"2026-11-29T10:00:00Z\"}}\n"
                )
                .bytes(),
            );
            let tag = if k + 1 == pieces.len() { "F" } else { "P" };
            cri.extend(
                format!(
                    "2026-11-29T10:00:00.000000001Z {stream} {tag} {}\n",
                    piece.trim_end_matches('\n')
                )
                .bytes(),
            );
        }
    }
    for (what, input) in [("docker", &docker), ("cri", &cri)] {
        for args in [
            &[][..],
            &["summary", "-o", "json", "--by", "model"],
            &["-o", "jsonl", "--fields", "line,id,model,format,ttft_ms"],
        ] {
            check(args, input, what);
        }
    }
}

#[test]
fn the_fast_parser_gives_what_the_reference_parser_gives() {
    let mut input = all_testdata();
    input.extend(generated(500));
    let f = file(&input);
    let path = f.path().to_str().unwrap();
    for args in [
        &[][..],
        &["--root", "response"],
        &["summary", "-o", "json"],
        &["summary", "-o", "json", "--by", "model"],
    ] {
        let fast = run(&[args, &[path]].concat(), b"");
        let reference = run(&[args, &["--reference-parser", path]].concat(), b"");
        assert!(fast.status.success());
        assert_same(&fast, &reference, &format!("{args:?}"));
    }
}

/// Records read again (a log given twice, a part of it repeated further on): the chunk
/// workers add their requests only once the calling thread has told the copies in input order,
/// so the same are set aside on one thread and on several, whatever the chunks.
#[test]
fn threads_set_the_same_copies_aside() {
    let once = generated(150);
    let mut input = once.clone();
    input.extend_from_slice(&once);
    let half = once.len() / 2;
    let cut = half + once[half..].iter().position(|&b| b == b'\n').unwrap() + 1;
    input.extend_from_slice(&once[..cut]);
    let f = file(&input);
    let one = run(
        &[
            "summary",
            "-o",
            "json",
            "--threads",
            "1",
            f.path().to_str().unwrap(),
        ],
        b"",
    );
    let v: serde_json::Value = serde_json::from_slice(&one.stdout).unwrap();
    assert!(
        v["coverage"]["duplicates"].as_u64().unwrap() > 100,
        "{}",
        v["coverage"]
    );
    check(
        &["summary", "-o", "json", "--exact-limit", "1000000"],
        &input,
        "summary",
    );
}

/// Several files read at once (`summary --threads N` reads up to N): their messages on stderr
/// come out in the order the files were given, the first `--max-diagnostics` bad lines in
/// that order shown, whichever file is read first: a large file with a bad line at its end,
/// then small ones with bad lines of their own, one with no request (its hint).
#[test]
fn files_read_at_once_say_what_they_found_in_the_order_given() {
    let mut big = generated(3000);
    big.extend_from_slice(b"{\"big\": \n");
    let big = file(&big);
    let small = file(b"{\"small\": tru}\n{\"model\": \"m\", \"oops\n");
    let none = file(b"{\"hello\": \"world\"}\n");
    let paths = [big.path(), small.path(), none.path()].map(|p| p.to_str().unwrap().to_string());
    for max in ["1", "2", "5"] {
        let args = |threads: &str, order: &[usize]| {
            let mut a: Vec<String> = ["summary", "--max-diagnostics", max, "--threads", threads]
                .map(String::from)
                .to_vec();
            a.extend(order.iter().map(|&i| paths[i].clone()));
            a
        };
        for order in [[0, 1, 2], [1, 2, 0], [2, 0, 1]] {
            let one = run(&refs(&args("1", &order)), b"");
            let err = String::from_utf8_lossy(&one.stderr).into_owned();
            // Each file's bad lines before the next file's.
            let at: Vec<usize> = order
                .iter()
                .filter(|&&i| i != 2)
                .map(|&i| err.find(&format!("{}:", paths[i])).unwrap_or(usize::MAX))
                .collect();
            assert!(max == "1" || at.is_sorted(), "{max} {order:?}: {err}");
            for threads in ["2", "3"] {
                let many = run(&refs(&args(threads, &order)), b"");
                assert_same(
                    &one,
                    &many,
                    &format!("--max-diagnostics {max} {order:?} x{threads}"),
                );
            }
        }
    }
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}
