//! Bad input never crashes the tool or loses a line, and exit codes are as documented.

use crate::common::*;

/// A small deterministic generator (xorshift), so the test needs no crate.
fn bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[test]
fn random_bytes_exit_0_and_pass_through() {
    for seed in 1..20 {
        let input = bytes(seed, 20_000);
        let out = run(&[], &input);
        assert_eq!(out.status.code(), Some(0), "seed {seed}");
        assert_eq!(out.stdout, input, "random bytes pass through unchanged");
        let out = run(&["summary", "-o", "json"], &input);
        assert_eq!(out.status.code(), Some(0));
        let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let lines = input.split(|&b| b == b'\n').filter(|_| true).count() as u64
            - u64::from(input.last() == Some(&b'\n'));
        assert_eq!(s["coverage"]["lines"].as_u64().unwrap(), lines);
    }
}

#[test]
fn truncated_json_is_counted_and_reported_with_its_line() {
    let full = std::fs::read(testdata().join("samples/llamacpp.jsonl")).unwrap();
    let first_line_len = full.iter().position(|&b| b == b'\n').unwrap();
    for cut in [1, 10, first_line_len / 2, first_line_len - 1] {
        let mut input = b"not json\n".to_vec();
        input.extend_from_slice(&full[..cut]);
        input.push(b'\n');
        let out = run(&["summary", "-o", "json"], &input);
        assert_eq!(out.status.code(), Some(0));
        let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(s["coverage"]["invalid"], 1, "cut at {cut}");
        assert_eq!(s["coverage"]["non_json"], 1);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("<stdin>:2: invalid JSON"), "{err}");
        let strict = run(&["--strict"], &input);
        assert_eq!(strict.status.code(), Some(1), "--strict with a bad line");
        assert_eq!(
            strict.stdout, input,
            "lines still pass through under --strict"
        );
    }
}

#[test]
fn large_input_into_head_exits_0_quietly() {
    let line = std::fs::read(testdata().join("samples/llamacpp.jsonl")).unwrap();
    let path = std::env::temp_dir().join(format!("tokentime-head-{}.jsonl", std::process::id()));
    {
        let mut f = std::fs::File::create(&path).unwrap();
        for _ in 0..20_000 {
            std::io::Write::write_all(&mut f, &line).unwrap();
        }
    }
    let cmd = format!(
        "'{}' '{}' | head -1 >/dev/null",
        env!("CARGO_BIN_EXE_tokentime"),
        path.display()
    );
    let out = std::process::Command::new("bash")
        .args(["-o", "pipefail", "-c", &cmd])
        .output()
        .unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn long_lines_are_passed_through_and_counted() {
    let mut input = b"{\"a\":\"".to_vec();
    input.extend(std::iter::repeat_n(b'x', 5000));
    input.extend_from_slice(
        b"\"}\n{\"timings\":{\"prompt_ms\":5.0,\"predicted_n\":3,\"predicted_ms\":10.0}}\n",
    );
    let out = run(&["--max-line-bytes", "1000"], &input);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(&out.stdout[..5008], &input[..5008]);
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("<stdin>:1: line longer than --max-line-bytes 1000")
    );
    let s: serde_json::Value = serde_json::from_slice(&run_ok(
        &["summary", "-o", "json", "--max-line-bytes", "1000"],
        &input,
    ))
    .unwrap();
    assert_eq!(s["coverage"]["too_long"], 1);
    assert_eq!(s["coverage"]["requests"], 1);
}

#[test]
fn python_nan_in_an_unread_field_keeps_the_metrics() {
    let input = b"{\"x\":NaN,\"y\":-Infinity,\"timings\":{\"prompt_ms\":5.0,\"predicted_n\":3,\"predicted_ms\":10.0}}\n";
    let out = run_ok(&[], input);
    let objs = enriched_objects(&out);
    assert_eq!(objs[0].as_ref().unwrap()["tpot_ms"], 5.0);
    assert!(out.starts_with(b"{\"x\":NaN,"), "original bytes kept");
}

#[test]
fn gzip_and_zstd_inputs_give_the_same_output() {
    let plain = std::fs::read(testdata().join("samples/litellm.jsonl")).unwrap();
    let gz = gzip(&plain);
    let zst = zstd::encode_all(&plain[..], 3).unwrap();
    let want = run_ok(&[], &plain);
    assert_eq!(run_ok(&[], &gz), want);
    assert_eq!(run_ok(&[], &zst), want);
}

#[test]
fn a_truncated_gzip_among_inputs_is_reported_and_the_rest_summarized() {
    let plain = std::fs::read(testdata().join("samples/llamacpp.jsonl")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.jsonl.gz");
    write_cut_gzip(&bad, &plain);
    let good = testdata().join("samples/vllm_response_metrics.jsonl");
    let out = run(
        &[
            "summary",
            "-o",
            "json",
            bad.to_str().unwrap(),
            good.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unreadable input is an I/O error"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.jsonl.gz"));
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        s["coverage"]["formats"]["vllm"].as_u64().unwrap() >= 4,
        "the good file was still read"
    );
}

#[test]
fn a_value_unreadable_in_its_unit_is_null_with_its_own_reason_and_reported() {
    let input = b"{\"req\":{\"t0\":\"2025-03-14T10:02:11Z\",\"t2\":1741946533.5}}\n";
    let out = run(
        &[
            "--map",
            "arrival=req.t0:epoch_s",
            "--map",
            "end=req.t2:epoch_s",
        ],
        input,
    );
    assert_eq!(out.status.code(), Some(0));
    let m = enriched_objects(&out.stdout)[0].clone().unwrap();
    assert_eq!(m["nulls"]["e2e_ms"], "unparseable");
    // The diagnostic says where the value was read and in which unit.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "<stdin>:1: arrival \"2025-03-14T10:02:11Z\": present but not readable as custom \
             reads it (req.t0 as epoch_s; \
             a timestamp written as a date is read with :rfc3339 (:epoch reads either)): the \
             metrics that need it are null"
        ),
        "{err}"
    );
    assert!(err.contains("the metrics that need it are null"), "{err}");
    // The time a line was logged enters no metric: the durations stand.
    let bedrock = br#"{"schemaType":"ModelInvocationLog","timestamp":"xxxxxxxxxxxx","requestId":"r1","output":{"outputBodyJson":{"metrics":{"latencyMs":864}},"outputTokenCount":11}}"#;
    let out = run(&[], bedrock);
    let m = enriched_objects(&out.stdout)[0].clone().unwrap();
    assert_eq!(m["e2e_ms"], 864.0);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("<stdin>:1: logged_at \"xxxxxxxxxxxx\": present but not readable as bedrock reads it (timestamp as rfc3339): no time of the request is read from it (its metrics stand)"),
        "{err}"
    );
}

#[test]
fn llamacpp_intermediate_stream_chunks_are_not_requests() {
    // timings_per_token: every chunk repeats the timings so far; only the last (with usage)
    // is the request.
    let chunk = |n: u32, usage: bool| {
        let usage = if usage {
            r#","usage":{"completion_tokens":3,"prompt_tokens":10,"total_tokens":13}"#
        } else {
            ""
        };
        format!(
            r#"{{"choices":[{{"index":0,"delta":{{"content":"x"}}}}],"object":"chat.completion.chunk"{usage},"timings":{{"prompt_n":10,"prompt_ms":50.0,"predicted_n":{n},"predicted_ms":{}}}}}"#,
            (n - 1) * 20
        ) + "\n"
    };
    let input = [chunk(1, false), chunk(2, false), chunk(3, true)].concat();
    let s: serde_json::Value =
        serde_json::from_slice(&run_ok(&["summary", "-o", "json"], input.as_bytes())).unwrap();
    assert_eq!(s["coverage"]["requests"], 1);
    assert_eq!(
        s["groups"][0]["metrics"]["tpot_ms"]["mean"], 20.0,
        "40 ms over 3 - 1 gaps"
    );
}

#[test]
fn invalid_utf8_anywhere_makes_the_line_invalid_and_it_passes_through() {
    for line in [
        &b"{\"x\":\"\xff\xfe\",\"timings\":{\"prompt_ms\":5.0,\"predicted_n\":3,\"predicted_ms\":10.0}}\n"[..],
        b"{\"model\":\"\xff\",\"timings\":{\"prompt_ms\":5.0,\"predicted_n\":3,\"predicted_ms\":10.0}}\n",
    ] {
        let s: serde_json::Value =
            serde_json::from_slice(&run_ok(&["summary", "-o", "json"], line)).unwrap();
        assert_eq!(s["coverage"]["invalid"], 1);
        assert_eq!(run_ok(&[], line), line, "an invalid line passes through unchanged");
    }
}

#[test]
fn duplicate_keys_last_one_wins() {
    let input = b"{\"timings\":{\"prompt_ms\":1.0,\"prompt_ms\":5.0,\"predicted_n\":3,\"predicted_ms\":10.0}}\n";
    let m = enriched_objects(&run_ok(&[], input))[0].clone().unwrap();
    assert_eq!(m["ttft_ms"], 5.0);
}

/// Found by review while writing the fuzz targets: instants 570 years apart (epoch seconds
/// -9e9 and 9e9) overflowed the i64 subtraction: a panic in debug builds, a wrapped
/// "negative_interval" in release. Both lie outside the plausible window of wall-clock
/// instants (2000 to 2200) now: unknown, no interval at all (the wide subtraction itself is
/// checked in `derive`'s unit tests).
#[test]
fn far_apart_instants_give_their_interval_not_an_overflow() {
    let line = b"{\"startTime\":-9000000000,\"endTime\":9000000000,\"call_type\":\"x\"}\n";
    let objs = enriched_objects(&run_ok(&[], line));
    let m = objs[0].as_ref().unwrap();
    assert_eq!(m["e2e_ms"], serde_json::Value::Null);
    assert_eq!(m["nulls"]["e2e_ms"], "implausible_instant");
}

/// The start instant of a vLLM line is its `created`, its end the start plus its E2E; 9e12 ms
/// (285 years) after the year 2191 is past any i64 instant: unknown, not an overflow.
#[test]
fn end_past_the_i64_epoch_range_is_unknown() {
    use tokentime::{Kind, Processor};
    let line = br#"{"metrics":{"time_to_first_token_ms":1.0,"queue_time_ms":9e12,"generation_time_ms":1.0},"created":7000000000}"#;
    let mut p = Processor::new(tokentime::builtins(), &[], Some("tokentime"), &[], 0.5);
    assert!(matches!(p.process(line), Kind::Requests));
    let r = p.requests()[0];
    assert!(r.metrics.e2e.is_ok());
    assert_eq!(r.start_ns, Some(7_000_000_000_000_000_000));
    assert_eq!(r.end_ns, None);
}

/// `{"error": "..."}` is how Ollama fails, and how countless other programs log: in
/// auto-detection it is no request; with `--format ollama` it is Ollama's failure.
#[test]
fn a_bare_error_object_is_ollamas_failure_only_when_forced() {
    let lines = b"{\"error\":\"model \\\"llama9:70b\\\" not found, try pulling it first\"}\n{\"level\":\"error\",\"error\":\"connection refused\"}\n";
    let auto: serde_json::Value =
        serde_json::from_slice(&run_ok(&["summary", "-o", "json"], lines)).unwrap();
    assert_eq!(auto["coverage"]["requests"], 0);
    let forced: serde_json::Value = serde_json::from_slice(&run_ok(
        &["summary", "-o", "json", "--format", "ollama"],
        &lines[..lines.iter().position(|&b| b == b'\n').unwrap() + 1],
    ))
    .unwrap();
    assert_eq!(forced["coverage"]["errors"], 1);
}

/// A non-streamed Ollama answer between the chunks of a stream of the same model is a whole
/// response: it keeps its own TTFT, and the stream its own.
#[test]
fn an_ollama_answer_inside_a_stream_of_the_same_model_stands_alone() {
    let stream = std::fs::read_to_string(testdata().join("samples/ollama_stream.jsonl")).unwrap();
    let single = std::fs::read_to_string(testdata().join("samples/ollama.jsonl")).unwrap();
    let single = single.lines().next().unwrap();
    let mut lines: Vec<&str> = stream.lines().collect();
    lines.insert(2, single);
    let input = lines.join("\n") + "\n";
    let objs = enriched_objects(&run_ok(&[], input.as_bytes()));
    // The answer: load 2718.395583 + prompt_eval 191.458 ms; the stream: 56.132 ms as alone.
    assert_eq!(objs[2].as_ref().unwrap()["ttft_ms"], 2909.854);
    assert_eq!(objs[6].as_ref().unwrap()["ttft_ms"], 56.132);
}

/// A text banner whose first line starts with a bracket (`[INFO] ...`, a `[timestamp]`
/// prefix) or is a lone `{`, is one non-JSON line: the JSON lines after it are read, in
/// `summary`, enrich and the row outputs, from a file and from standard input. (They were taken
/// for a JSON array or a pretty-printed object document, and lost.)
#[test]
fn a_bracket_or_brace_banner_is_a_line_not_a_document() {
    let lab = std::fs::read(testdata().join("lab/litellm.jsonl")).unwrap();
    let first20: Vec<u8> = lab
        .split_inclusive(|&b| b == b'\n')
        .take(20)
        .flatten()
        .copied()
        .collect();
    let dir = tempfile::tempdir().unwrap();
    for banner in [
        "[INFO] proxy up\n",
        "[2026-11-29 10:00:01] starting\n",
        "  [ 1.0 ] boot\n",
        "{\njunk\n",
    ] {
        let input = [banner.as_bytes(), &first20].concat();
        let banner_lines = banner.lines().count() as u64;
        let path = dir.path().join("log.jsonl");
        std::fs::write(&path, &input).unwrap();
        for stdin in [true, false] {
            let file = path.to_str().unwrap();
            let (args, data): (Vec<&str>, &[u8]) = if stdin {
                (vec!["summary", "-o", "json"], &input)
            } else {
                (vec!["summary", "-o", "json", file], b"")
            };
            let s: serde_json::Value = serde_json::from_slice(&run(&args, data).stdout).unwrap();
            assert_eq!(s["coverage"]["requests"], 20, "{banner:?} stdin {stdin}");
            assert_eq!(
                s["coverage"]["lines"],
                20 + banner_lines,
                "{banner:?} stdin {stdin}"
            );
            let (args, data): (Vec<&str>, &[u8]) = if stdin {
                (vec![], &input)
            } else {
                (vec![file], b"")
            };
            let out = run(&args, data);
            let enriched = out
                .stdout
                .split(|&b| b == b'\n')
                .filter(|l| l.windows(11).any(|w| w == b"\"tokentime\""))
                .count();
            assert_eq!(enriched, 20, "{banner:?} stdin {stdin}");
            assert!(out.stdout.starts_with(banner.as_bytes()), "{banner:?}");
        }
        let csv = run(&["--output", "csv", path.to_str().unwrap()], b"").stdout;
        assert_eq!(
            csv.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count(),
            21
        );
    }
    // A real array document and a real pretty object still are documents.
    let array = b"[\n  {\"ttft_s\": 0.5, \"end_to_end_latency_s\": 2.0, \"inter_token_latency_s\": 0.01, \"number_output_tokens\": 10, \"number_input_tokens\": 5}\n]\n";
    let s: serde_json::Value =
        serde_json::from_slice(&run(&["summary", "-o", "json"], array).stdout).unwrap();
    assert_eq!(s["coverage"]["formats"]["llmperf"], 1);
}

/// NUL bytes before a line (what a `copytruncate` log rotation leaves: the file is cut and the
/// writer goes on at its old offset) are the line's prefix, like a byte-order mark: the
/// request after them is read, and enrich passes them through unchanged, on one thread and
/// in parallel chunks.
#[test]
fn nul_bytes_before_a_line_are_its_prefix() {
    let lab = std::fs::read(testdata().join("lab/litellm.jsonl")).unwrap();
    let lines: Vec<&[u8]> = lab.split_inclusive(|&b| b == b'\n').take(6).collect();
    let input = [&lines[..3].concat()[..], &[0u8; 4096], &lines[3..].concat()].concat();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rotated.jsonl");
    std::fs::write(&path, &input).unwrap();
    let file = path.to_str().unwrap();
    for threads in ["1", "2"] {
        let s: serde_json::Value = serde_json::from_slice(&run_ok(
            &[
                "summary",
                "-o",
                "json",
                "--threads",
                threads,
                "--chunk-bytes",
                "4096",
                file,
            ],
            b"",
        ))
        .unwrap();
        assert_eq!(s["coverage"]["requests"], 6, "threads {threads}");
        assert_eq!(s["coverage"]["non_json"], 0, "threads {threads}");
        let out = run_ok(&["--threads", threads, "--chunk-bytes", "4096", file], b"");
        let enriched: Vec<&[u8]> = out.split_inclusive(|&b| b == b'\n').collect();
        assert_eq!(enriched.len(), 6);
        assert!(enriched[3].starts_with(&[0u8; 4096]), "threads {threads}");
        assert!(enriched[3][4096..].starts_with(b"{"));
        assert!(
            enriched
                .iter()
                .all(|l| l.windows(11).any(|w| w == b"\"tokentime\""))
        );
    }
}

/// A closed stderr (`2>&1 | head`) loses the diagnostics, nothing else: the output is
/// complete and the exit status is the run's (it was 0 when a thread died printing that an
/// input failed).
#[test]
fn a_closed_stderr_changes_neither_output_nor_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let lab = std::fs::read(testdata().join("lab/litellm.jsonl")).unwrap();
    let trunc = dir.path().join("cut.jsonl.gz");
    write_cut_gzip(&trunc, &lab);
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(
        &bad,
        [&lab[..], b"{\"bad\n".repeat(3000).as_slice()].concat(),
    )
    .unwrap();
    let (trunc, bad) = (trunc.to_str().unwrap(), bad.to_str().unwrap());
    let closed = |args: &[&str]| {
        let out = run_stderr(args, b"", false);
        (out.status.code(), out.stdout)
    };
    for args in [
        vec!["summary", "-o", "json", trunc, bad],
        vec!["summary", "-o", "json", "--threads", "1", trunc],
        vec![trunc],
    ] {
        let (code, _) = closed(&args);
        assert_eq!(code, Some(2), "{args:?}");
    }
    let (code, stdout) = closed(&["summary", "-o", "json", bad]);
    assert_eq!(code, Some(0));
    assert_eq!(stdout, run(&["summary", "-o", "json", bad], b"").stdout);
    let (code, stdout) = closed(&[bad]);
    assert_eq!(code, Some(0));
    assert_eq!(stdout, run(&[bad], b"").stdout);
}

/// A read error mid-way (a .gz cut short) loses nothing that was read: the part of a line
/// decompressed before it is passed on as a last line without an ending, and the message says
/// after which line the input broke off; the same on one thread and read in parallel chunks.
#[test]
fn a_gzip_cut_mid_line_passes_on_what_was_read_and_says_after_which_line() {
    use std::io::Read;
    let mut plain = Vec::new();
    for i in 0..4000u64 {
        let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        plain.extend(format!("line {i} of a text log, {x:x} {:x}\n", x >> 7).as_bytes());
    }
    let gz = gzip(&plain);
    let cut = &gz[..gz.len() / 2];
    // What a gzip reader gets out of the cut file before its error.
    let mut read = Vec::new();
    let mut d = flate2::read::GzDecoder::new(cut);
    let mut buf = [0u8; 997];
    loop {
        match d.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => read.extend_from_slice(&buf[..n]),
        }
    }
    assert!(!read.is_empty() && !read.ends_with(b"\n"), "cut mid-line");
    let lines = read.split(|&b| b == b'\n').count();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.log.gz");
    std::fs::write(&path, cut).unwrap();
    let path = path.to_str().unwrap();
    for args in [
        vec!["--threads", "1", path],
        vec!["--threads", "2", "--chunk-bytes", "4096", path],
    ] {
        let out = run(&args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout == read, "{args:?}: every byte read is passed on");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("cut.log.gz: line {lines} was cut short: ")),
            "{args:?}: {err}"
        );
    }
    // Chunks numbered as they are read (per-request rows) and numbered once handled (summary):
    // the same line.
    for args in [
        vec!["-o", "csv", "--threads", "2", "--chunk-bytes", "4096", path],
        vec!["summary", "--threads", "2", "--chunk-bytes", "4096", path],
    ] {
        let out = run(&args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("cut.log.gz: line {lines} was cut short: ")),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_gzip_cut_in_its_header_or_trailer_says_where_and_of_what() {
    let plain = b"{\"a\":1}\n{\"a\":2}\n";
    let gz = gzip(plain);
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes, says) in [
        (
            "head.gz",
            &gz[..6],
            "head.gz: before line 1: the gzip data ends early (unexpected end of file)",
        ),
        (
            "tail.gz",
            &gz[..gz.len() - 4],
            "tail.gz: after line 2: the gzip data ends early (unexpected end of file)",
        ),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let out = run(&[path.to_str().unwrap()], b"");
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{name}: {err}");
    }
}

#[test]
fn an_unreadable_value_is_quoted_every_such_field_named_and_the_unit_hint_fits_the_text() {
    let map = [
        "--map",
        "arrival=t0:rfc3339",
        "--map",
        "ttft=ttft",
        "--map",
        "e2e=e2e",
        "--map",
        "output_tokens=n",
    ];
    // Two fields unreadable on one line: both named, each with what the line holds.
    let out = run(
        &map,
        b"{\"t0\":\"2026-01-01T00:00:00Z\",\"ttft\":\"abc\",\"e2e\":\"oops\",\"n\":3}\n",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "<stdin>:1: ttft \"abc\", e2e \"oops\": present but not readable as custom reads \
             them (ttft as ms; e2e as ms): the metrics that need them are null, reason \
             unparseable"
        ),
        "{err}"
    );
    // Text that is no number with a unit gets no :duration hint.
    let out = run(
        &map,
        b"{\"t0\":\"2026-01-01T00:00:00Z\",\"ttft\":\"n/a\",\"e2e\":812,\"n\":3}\n",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "<stdin>:1: ttft \"n/a\": present but not readable as custom reads it (ttft as \
             ms): the metrics that need it are null"
        ),
        "{err}"
    );
    // Python's NaN is shown (as the string of its text), with no :duration hint either; a
    // string that holds NaN is left as it is.
    let out = run(
        &map,
        b"{\"t0\":\"2026-01-01T00:00:00Z\",\"note\":\"NaN\",\"ttft\":NaN,\"e2e\":812,\"n\":3}\n",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "<stdin>:1: ttft \"NaN\": present but not readable as custom reads it (ttft as \
             ms): the metrics that need it are null"
        ),
        "{err}"
    );
    // A number with its unit does.
    let out = run(
        &map,
        b"{\"t0\":\"2026-01-01T00:00:00Z\",\"ttft\":\"1.5s\",\"e2e\":2812,\"n\":3}\n",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "<stdin>:1: ttft \"1.5s\": present but not readable as custom reads it (ttft as \
             ms; a duration written with its unit, \"127.5ms\", is read with :duration)"
        ),
        "{err}"
    );
    // A number past the longest duration held (2^63 ns) says so, whatever the format; the
    // number as the line writes it.
    let out = run(
        &map,
        b"{\"t0\":\"2026-01-01T00:00:00Z\",\"ttft\":1e13,\"e2e\":812,\"n\":3}\n",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "<stdin>:1: ttft 1e13: present but not readable as custom reads it (ttft as ms; \
             past 2^63 ns (about 292 years), the longest duration tokentime holds)"
        ),
        "{err}"
    );
    // So does one beyond f64 (which serde_json, reading the line for the message, refuses),
    // as written.
    let out = run(
        &map,
        b"{\"t0\":\"2026-01-01T00:00:00Z\",\"ttft\":1e400,\"e2e\":812,\"n\":3}\n",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "<stdin>:1: ttft 1e400: present but not readable as custom reads it (ttft as ms; \
             past 2^63 ns (about 292 years), the longest duration tokentime holds)"
        ),
        "{err}"
    );
    // A long value is cut.
    let long = format!(
        "{{\"t0\":\"2026-01-01T00:00:00Z\",\"ttft\":\"{}\",\"e2e\":812,\"n\":3}}\n",
        "x".repeat(200)
    );
    let out = run(&map, long.as_bytes());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("<stdin>:1: ttft \"{}…: present", "x".repeat(39))),
        "{err}"
    );
}

/// A line longer than `--max-line-bytes` from a pipe is skipped piece by piece, not held whole:
/// not by the sample `--format auto` reads at the head of a pipe either (which keeps what it
/// read for the run). The child's own peak RSS (`VmHWM`, read while its input is still open, so
/// after its own exec: a fork's rusage would count this test process's memory) stays far below
/// the line's 128 MiB.
#[cfg(target_os = "linux")]
#[test]
fn a_long_line_on_a_pipe_is_not_held_whole() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    const LINE: usize = 128 << 20;
    for args in [
        &["summary", "--max-line-bytes", "1M"][..],
        &["--max-line-bytes", "1M"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tokentime"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut sin = child.stdin.take().unwrap();
        let chunk = vec![b'x'; 1 << 20];
        sin.write_all(b"{\"a\":\"").unwrap();
        for _ in 0..LINE >> 20 {
            sin.write_all(&chunk).unwrap();
        }
        sin.write_all(b"\"}\n{\"b\":1}\n").unwrap();
        // All but what the pipe holds has been read; a moment for the rest.
        std::thread::sleep(std::time::Duration::from_millis(300));
        let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
        drop(sin);
        assert!(child.wait().unwrap().success(), "{args:?}");
        let peak_kib: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap();
        assert!(
            peak_kib < 48 << 10,
            "{args:?}: peak RSS {} MiB",
            peak_kib >> 10
        );
    }
}

/// Standard input that is a regular file read past its end (a log cut by `copytruncate` while
/// `tokentime summary < app.log` read it; here, its offset set past its end before the run) is
/// an input not read to its end, exit status 2, as a FILE argument cut so is.
#[test]
fn standard_input_cut_while_read_is_a_read_error() {
    use std::io::{Seek, SeekFrom};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.jsonl");
    std::fs::copy(testdata().join("samples/litellm.jsonl"), &path).unwrap();
    let mut stdin = std::fs::File::open(&path).unwrap();
    stdin.seek(SeekFrom::Start(1 << 20)).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tokentime"))
        .args(["summary", "-o", "json"])
        .stdin(stdin)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("the file was cut while it was read (rotated with copytruncate?): it holds"),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["coverage"]["read_errors"], 1, "{doc}");
}
