//! Mistakes a user makes on the command line, and what tokentime says about each: the message
//! (on stderr, one line) and the exit status docs/bad-input.md gives.

use crate::common::{run, testdata};
use std::process::Output;

fn litellm() -> String {
    testdata()
        .join("samples/litellm.jsonl")
        .to_str()
        .unwrap()
        .to_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs tokentime and returns (exit status, stdout, stderr).
fn outcome(args: &[&str], stdin: &[u8]) -> (Option<i32>, String, String) {
    let out = run(args, stdin);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr(&out),
    )
}

/// `--by modle`: every request went to `modle=unknown`, silently. Now stderr says that no
/// request had the path and names the keys requests have that are close to it; the exit
/// status stays 0 (a warning: the summary is right, only not what was meant).
#[test]
fn by_path_no_request_has() {
    let log = litellm();
    let (code, _, err) = outcome(&["summary", "--by", "modle", &log], b"");
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains(
            "tokentime: --by modle: no request had this path (all 5 requests are in modle=unknown); \
             close matches among the requests' keys: model"
        ),
        "{err}"
    );
    // A `$` name tokentime does not give a request: the names it gives are close matches.
    let (code, _, err) = outcome(&["summary", "--by", "$modle", &log], b"");
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("tokentime: --by $modle: no request had this path")
            && err.contains("close matches among the requests' keys: $model"),
        "{err}"
    );
    // Nothing close: some of the keys requests have are listed.
    let (_, _, err) = outcome(&["summary", "--by", "zzzzzz", "-o", "json", &log], b"");
    assert!(
        err.contains("tokentime: --by zzzzzz: no request had this path (all 5 requests are in zzzzzz=unknown); requests have keys such as: "),
        "{err}"
    );
    // A path some requests have: no word.
    let (_, _, err) = outcome(&["summary", "--by", "model", &log], b"");
    assert!(!err.contains("--by"), "{err}");
}

/// `--quantiles 0.99` printed `p0.99`: a fraction where a percentile is expected is refused,
/// with the percentiles meant.
#[test]
fn quantiles_given_as_fractions() {
    let log = litellm();
    let (code, out, err) = outcome(&["summary", "--quantiles", "0.99", &log], b"");
    assert_eq!((code, out.as_str()), (Some(2), ""));
    assert_eq!(
        err,
        "tokentime: --quantiles \"0.99\": --quantiles takes percentiles (0 to 100), not fractions: \
         write 99 (or p0.99 for the 0.99th percentile)\n"
    );
    let (code, _, err) = outcome(&["summary", "--quantiles", "0.5,0.9,0.999", &log], b"");
    assert_eq!(code, Some(2));
    assert!(err.contains("write 50,90,99.9 (or p0.5"), "{err}");
    // The same in diff.
    let (code, _, err) = outcome(&["diff", "--quantiles", "0.99", &log, &log], b"");
    assert_eq!(code, Some(2));
    assert!(err.contains("write 99"), "{err}");
    // Asked for with a `p`, or beside percentiles, a percentile under 1 is taken as it is.
    for q in ["p0.5", "0.1,50", "1", "0,100"] {
        let (code, _, err) = outcome(&["summary", "--quantiles", q, &log], b"");
        assert_eq!(code, Some(0), "{q}: {err}");
    }
}

/// A gate on `p0.99` (a fraction written where the percentile goes) would hold the 0.99th
/// percentile, which almost any log meets: `--slo` and `diff --fail-if` refuse it (exit 2)
/// and say to write `p99`; `p0` (the fastest) and `p1` upwards are percentiles as written.
#[test]
fn a_gate_on_a_fraction_of_a_percentile_is_refused() {
    let log = litellm();
    let (code, _, err) = outcome(&["summary", "--slo", "ttft:p0.99<=800ms", &log], b"");
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("p0.99 would be the 0.99th percentile, next to the fastest request: write p99 for the 99th"),
        "{err}"
    );
    let (code, _, err) = outcome(&["diff", "--fail-if", "ttft.p0.5>+10%", &log, &log], b"");
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("write p50 for the 50th"), "{err}");
    for ok in ["ttft:p0<=1h", "ttft:p1<=1h", "ttft:p99.9<=1h"] {
        let (code, _, err) = outcome(&["summary", "--slo", ok, &log], b"");
        assert_eq!(code, Some(0), "{ok}: {err}");
    }
}

/// `merge --slo` on a key the digests were not grouped by is not judged (exit 2), and says
/// which keys their groups have (summary refuses it before reading, as a usage error).
#[test]
fn merge_slo_on_a_key_the_digests_lack_names_their_keys() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("d.json");
    let d = d.to_str().unwrap();
    run(
        &["summary", "--by", "model", "--save-digest", d, &litellm()],
        b"",
    );
    let (code, _, err) = outcome(&["merge", "--slo", "tpot:p99<=2s@region=x", d], b"");
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(
            "not judged: no request was in group region=x (no group is keyed by region: the \
             groups' keys are cache, model)"
        ),
        "{err}"
    );
}

/// An SLO on a group no request was in was broken (exit 3, "no values"): it is not judged,
/// stderr says the group matched no request and lists the values seen, exit status 2.
#[test]
fn slo_group_no_request_was_in() {
    let log = litellm();
    let (code, _, err) = outcome(
        &[
            "summary",
            "--by",
            "model",
            "--slo",
            "ttft:p99<=800ms@model=gpt-4o",
            &log,
        ],
        b"",
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(
            "tokentime: SLO ttft:p99<=800ms@model=gpt-4o not judged: no request was in group \
             model=gpt-4o (model values: claude-3-7-sonnet-20250219, gpt-4o-mini)"
        ),
        "{err}"
    );
    assert!(!err.contains("BROKEN"), "{err}");
    // A group that exists but has no values of the metric is still broken (exit 3).
    let (code, _, err) = outcome(
        &["summary", "--slo", "ttft:p99<=800ms@cache=response", &log],
        b"",
    );
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("BROKEN: no ttft_ms values"), "{err}");
    // A metric the log records for none of the group's requests (LiteLLM has no queue time)
    // cannot be judged: exit 2, not 3.
    let (code, _, err) = outcome(&["summary", "--slo", "queue:p99<=1s", &log], b"");
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(
            "SLO queue:p99<=1s not judged: the log shows queue_ms for no request in group all \
             requests (not_logged 3, error 1, response_cache 1)"
        ),
        "{err}"
    );
    let out = run(
        &["summary", "-o", "json", "--slo", "queue:p99<=1s", &log],
        b"",
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Neither met nor broken: null, with the reason beside it.
    assert_eq!(doc["slos"][0]["met"], serde_json::Value::Null);
    assert!(
        doc["slos"][0]["not_judged"]
            .as_str()
            .is_some_and(|w| w.contains("the log shows queue_ms for no request")),
        "{doc}"
    );
}

/// A not-judged SLO is no broken one to a scraper either: `tokentime_slo_met` (which an alert
/// on `== 0` watches) has only the SLOs judged, and `tokentime_slo_judged` says which were; the
/// HTML report marks it apart from a broken one.
#[test]
fn a_not_judged_slo_is_no_broken_gauge() {
    let log = litellm();
    let args = |o: &'static str| {
        vec![
            "summary",
            "-o",
            o,
            "--slo",
            "ttft:p99<=1ms",
            "--slo",
            "queue:p99<=1s",
            "--slo",
            "e2e:p50<=1h",
            "--slo",
            "ttft:p50<=1s@model=nope",
            "--by",
            "model",
        ]
    };
    for o in ["prometheus", "openmetrics"] {
        let mut a = args(o);
        a.push(&log);
        let (code, out, err) = outcome(&a, b"");
        assert_eq!(code, Some(2), "{err}");
        let slo: Vec<&str> = out
            .lines()
            .filter(|l| l.contains("tokentime_slo"))
            .collect();
        let want = [
            "tokentime_slo_judged{slo=\"ttft:p99<=1ms\"} 1",
            "tokentime_slo_judged{slo=\"queue:p99<=1s\"} 0",
            "tokentime_slo_judged{slo=\"e2e:p50<=1h\"} 1",
            "tokentime_slo_judged{slo=\"ttft:p50<=1s@model=nope\"} 0",
            "tokentime_slo_met{slo=\"ttft:p99<=1ms\"} 0",
            "tokentime_slo_met{slo=\"e2e:p50<=1h\"} 1",
        ];
        let samples: Vec<&str> = slo
            .iter()
            .copied()
            .filter(|l| !l.starts_with('#'))
            .collect();
        assert_eq!(samples, want, "{o}: {out}");
    }
    // No SLO judged: no tokentime_slo_met family at all.
    let (code, out, _) = outcome(
        &[
            "summary",
            "-o",
            "prometheus",
            "--slo",
            "queue:p99<=1s",
            &log,
        ],
        b"",
    );
    assert_eq!(code, Some(2));
    assert!(!out.contains("tokentime_slo_met"), "{out}");
    assert!(
        out.contains("tokentime_slo_judged{slo=\"queue:p99<=1s\"} 0"),
        "{out}"
    );
    let mut a = args("json");
    a[0] = "report";
    a.splice(1..3, ["-o", "-"]);
    a.push(&log);
    let (_, html, err) = outcome(&a, b"");
    assert!(
        html.contains("<td class=\"unjudged\">not judged</td>"),
        "{err}"
    );
    assert_eq!(html.matches("<td class=\"broken\">BROKEN</td>").count(), 1);
}

/// A run that read no request (an empty file, a log of another format, `--format` naming the
/// wrong one) judges no SLO: not broken (exit 3, a latency breach a CI gate pages for), but not
/// judged (exit 2), as a group no request was in, and the line says why.
#[test]
fn slo_of_a_run_without_requests_is_not_judged() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, b"").unwrap();
    let empty = empty.to_str().unwrap().to_owned();
    let log = litellm();
    let runs: [(&[&str], &[u8]); 3] = [
        (&[&empty], b""),
        (&[], b"{\"a\":1}\n"),
        (&["--format", "vllm", &log], b""),
    ];
    for (args, stdin) in runs {
        let mut all = vec!["summary", "--slo", "ttft:p99<=1s"];
        all.extend_from_slice(args);
        let (code, _, err) = outcome(&all, stdin);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(
            err.contains("tokentime: SLO ttft:p99<=1s not judged: no request was read"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("BROKEN"), "{args:?}: {err}");
    }
}

/// A bound copied from a producer's report (vLLM's own `p99_ttft_ms`, 143.80068917976584) is
/// met by the same p99, printed 143.801: compared to the microsecond, as printed. A bound under
/// it says by how much it is missed.
#[test]
fn an_slo_is_judged_as_printed() {
    let file = testdata().join("realdata/vllm083-llama70b-tp8-qps1/result.json");
    let file = file.to_str().unwrap();
    let (code, _, err) = outcome(
        &["summary", "--slo", "ttft:p99<=143.80068917976584ms", file],
        b"",
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("met: p99 143.801 ms <= 143.801 ms"), "{err}");
    let (code, _, err) = outcome(&["summary", "--slo", "ttft:p99<=100ms", file], b"");
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("BROKEN: p99 143.801 ms > 100 ms, over by 43.801 ms, +43.8% (200 values)"),
        "{err}"
    );
}

/// An unknown metric in `--slo` or `--fail-if` lists the known ones.
#[test]
fn unknown_metric_lists_the_known() {
    let log = litellm();
    let (code, _, err) = outcome(&["summary", "--slo", "ttfx:p99<=800ms", &log], b"");
    assert_eq!(code, Some(2));
    assert_eq!(
        err,
        "tokentime: --slo \"ttfx:p99<=800ms\": unknown metric ttfx (known: ttft, tpot, itl, e2e, \
         queue, prefill, decode, ttfot, each also with _ms, input_tokens, cached_tokens, \
         output_tokens) (want METRIC:pQ<=VALUE[@KEY=VALUE])\n"
    );
    let (code, _, err) = outcome(&["diff", "--fail-if", "ttfx.p99>+10%", &log, &log], b"");
    assert_eq!(code, Some(2));
    assert!(
        err.contains(
            "unknown metric ttfx (known: ttft, tpot, itl, e2e, queue, prefill, decode, ttfot"
        ),
        "{err}"
    );
}

/// `--format LiteLLM`: format names are matched without regard to case.
#[test]
fn format_names_ignore_case() {
    let log = litellm();
    let (code, out, err) = outcome(&["summary", "--format", "LiteLLM", &log], b"");
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.replace("\n  ", " ").contains("5 lines (litellm 5)"),
        "{out}"
    );
    let (code, out, _) = outcome(&["formats", "LITELLM"], b"");
    assert_eq!(code, Some(0));
    assert!(out.starts_with("litellm: "), "{out}");
}

/// A `summary` option given without `summary` says whose option it is.
#[test]
fn summary_option_without_summary() {
    let log = litellm();
    let (code, out, err) = outcome(&["--every", "10s", &log], b"");
    assert_eq!((code, out.as_str()), (Some(2), ""));
    assert_eq!(
        err,
        "tokentime: --every is an option of `tokentime summary` (tokentime summary --every ... FILE...)\n"
    );
    let (_, _, err) = outcome(&["--by", "model", &log], b"");
    assert_eq!(
        err,
        "tokentime: --by is an option of `tokentime summary`, `tokentime diff` and `tokentime report` (tokentime summary --by ... FILE...)\n"
    );
    let (_, _, err) = outcome(&["summary", "--fail-if", "ttft.p99>+10%", &log], b"");
    assert!(
        err.starts_with("tokentime: --fail-if is an option of `tokentime diff`"),
        "{err}"
    );
}

/// `--percentiles`, `--group-by`: the words of other tools get tokentime's.
#[test]
fn other_tools_words_suggest_ours() {
    let log = litellm();
    for (given, ours) in [
        ("--percentiles", "--quantiles"),
        ("--percentile", "--quantiles"),
        ("--group-by", "--by"),
        ("--groupby", "--by"),
    ] {
        let (code, _, err) = outcome(&["summary", given, "x", &log], b"");
        assert_eq!(code, Some(2), "{given}");
        assert_eq!(
            err,
            format!("tokentime: unknown option {given}: did you mean {ours}?\n"),
            "{given}"
        );
    }
    // With a value after `=`, too.
    let (_, _, err) = outcome(&["summary", "--percentiles=99", &log], b"");
    assert_eq!(
        err,
        "tokentime: unknown option --percentiles: did you mean --quantiles?\n"
    );
}

/// A directory among the inputs is refused before anything is read, as a missing file is.
#[test]
fn directory_is_refused_up_front() {
    let log = litellm();
    let dir = testdata().join("samples");
    let dir = dir.to_str().unwrap();
    for args in [&[&log, dir][..], &["summary", &log, dir]] {
        let (code, out, err) = outcome(args, b"");
        assert_eq!((code, out.as_str()), (Some(2), ""), "{args:?}");
        assert_eq!(
            err,
            format!("tokentime: {dir}: is a directory (name the files in it: {dir}/*.jsonl)\n")
        );
    }
}

/// The directory's message names globs that take every file in it, by their endings (a
/// compressed one's with the extension before it), and the files below its folders.
#[test]
fn a_directory_named_as_input_gets_globs_that_take_all_its_files() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let day = root.join("2026/11/day1");
    std::fs::create_dir_all(&day).unwrap();
    for f in ["a.jsonl", "b.jsonl.gz", "c.2026-11-30.jsonl.zst", ".hidden"] {
        std::fs::write(day.join(f), "").unwrap();
    }
    std::fs::create_dir(root.join("empty")).unwrap();
    std::fs::write(root.join("top.log"), "").unwrap();
    let says = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_tokentime"))
            .args(args)
            .current_dir(root)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    assert_eq!(
        says(&["summary", "2026/11/day1"]),
        "tokentime: 2026/11/day1: is a directory (name the files in it: 2026/11/day1/*.jsonl \
         2026/11/day1/*.jsonl.gz 2026/11/day1/*.jsonl.zst)\n"
    );
    assert_eq!(
        says(&["summary", "2026"]),
        "tokentime: 2026: is a directory of folders (name the files below it: $(find 2026 -type f))\n"
    );
    assert_eq!(
        says(&["summary", "."]),
        "tokentime: .: is a directory (name the files in it: ./*.log; or all below it: $(find . \
         -type f))\n"
    );
    assert_eq!(
        says(&["diff", "empty", "top.log"]),
        "tokentime: empty: is an empty directory (name the files to read)\n"
    );
    assert_eq!(
        says(&["merge", "2026"]),
        "tokentime: 2026: is a directory of folders (name the digest files below it: $(find 2026 \
         -type f))\n"
    );
    assert_eq!(
        says(&["report", "-o", "empty", "top.log"]),
        "tokentime: -o empty: is a directory (name the page to write, e.g. -o empty/report.html)\n"
    );
}

/// An input that is not JSON lines at all is named as such: binary data, UTF-16 text, or
/// plain text. The exit status stays 0 (a server's text log with no request is not wrong).
#[test]
fn input_not_json_lines_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "hello\nworld\n").unwrap();
    let bin = dir.path().join("blob.bin");
    std::fs::write(&bin, b"\x7fELF\x02\x01\x01\x00\x00\x00\n{\xff\xfe\n").unwrap();
    let utf16 = dir.path().join("win.log");
    let mut b = vec![0xff, 0xfe];
    for c in "{\"a\": 1}\r\n".encode_utf16() {
        b.extend_from_slice(&c.to_le_bytes());
    }
    std::fs::write(&utf16, b).unwrap();
    let (text, bin, utf16) = (
        text.to_str().unwrap(),
        bin.to_str().unwrap(),
        utf16.to_str().unwrap(),
    );
    for cmd in [&["summary"][..], &[]] {
        let args: Vec<&str> = cmd.iter().copied().chain([text, bin, utf16]).collect();
        let (code, _, err) = outcome(&args, b"");
        assert_eq!(code, Some(0), "{err}");
        for want in [
            format!("tokentime: {text}: not JSON lines (plain text): none of its 2 lines is JSON"),
            format!("tokentime: {bin}: not JSON lines (binary data)"),
            format!(
                "tokentime: {utf16}: not JSON lines (UTF-16 text: convert it to UTF-8, e.g. iconv -f UTF-16 -t UTF-8)"
            ),
        ] {
            assert!(err.contains(&want), "{cmd:?}: want {want:?} in\n{err}");
        }
    }
    // Standard input, and a log with requests: only the former is named.
    let (_, _, err) = outcome(&["summary", &litellm(), "-"], b"plain text\n");
    assert!(
        err.contains("tokentime: <stdin>: not JSON lines (plain text): none of its 1 line is JSON"),
        "{err}"
    );
    assert!(!err.contains("litellm"), "{err}");
}

/// A UTF-16 log (PowerShell's `>`) or a binary file is named in one message, not a message a
/// line, and the summary's hint sends the user to it, on one thread and in chunks; a file
/// whose first bytes are no UTF-8 text but some of whose lines are read (NUL bytes at its
/// start, a crash's zero fill) still names its bad lines.
#[test]
fn a_utf16_or_binary_input_is_named_once_not_line_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let utf16 = dir.path().join("win.log");
    let mut b = vec![0xff, 0xfe];
    for i in 0..40 {
        let line = format!("{{\"model\": \"m\", \"response_time\": {i}.5}}\r\n");
        for c in line.encode_utf16() {
            b.extend_from_slice(&c.to_le_bytes());
        }
    }
    std::fs::write(&utf16, b).unwrap();
    let bin = dir.path().join("blob.bin");
    std::fs::write(
        &bin,
        b"\x7fELF\x02\x01\x01\x00\x00\x00\n{\xff\xfe\n{\"a\x00\n",
    )
    .unwrap();
    for (path, what) in [
        (
            &utf16,
            "UTF-16 text: convert it to UTF-8, e.g. iconv -f UTF-16 -t UTF-8",
        ),
        (&bin, "binary data"),
    ] {
        let path = path.to_str().unwrap();
        for threads in [
            &["--threads", "1"][..],
            &["--threads", "2", "--chunk-bytes", "64"],
        ] {
            let args: Vec<&str> = ["summary"]
                .iter()
                .chain(threads)
                .copied()
                .chain([path])
                .collect();
            let (code, out, err) = outcome(&args, b"");
            assert_eq!(code, Some(0), "{err}");
            assert_eq!(
                err,
                format!("tokentime: {path}: not JSON lines ({what})\n"),
                "{threads:?}"
            );
            assert!(
                out.contains(
                    "no line could be read as JSON: stderr says what the input looks like"
                ),
                "{out}"
            );
        }
    }
    let zeroed = dir.path().join("zeroed.jsonl");
    let mut b = vec![0u8; 64];
    b.extend_from_slice(b"\n{\"bad\": tru}\n");
    b.extend_from_slice(&std::fs::read(litellm()).unwrap());
    std::fs::write(&zeroed, b).unwrap();
    let zeroed = zeroed.to_str().unwrap();
    let (_, _, err) = outcome(&["summary", zeroed], b"");
    assert!(err.contains(&format!("{zeroed}:2: invalid JSON")), "{err}");
    assert!(!err.contains("not JSON lines"), "{err}");
}

/// llama-server's text log (here lines of the lab's, a slot's one request with a `{` in its
/// chat template line) is named as such, with the formats that read llama.cpp: its timings are
/// text with no request id or wall-clock time.
#[test]
fn llama_servers_text_log_is_named_with_what_reads_llama_cpp() {
    let log = b"0.10.372.337 I srv  params_from_: Chat format: Content-only
0.10.372.649 I slot launch_slot_: id  0 | task 0 | processing task
0.10.372.684 I slot update_slots: id  0 | task 0 | new prompt, n_ctx_slot = 4096, n_keep = 0, n_prompt_tokens = 56
0.12.392.422 I slot      release: id  0 | task 0 | stop processing: n_past = 119, truncated = 0
0.12.392.481 I slot print_timing: id  0 | task 0 | 
prompt eval time =     862.15 ms /    56 tokens (   15.40 ms per token,    64.95 tokens per second)
       eval time =    1157.63 ms /    64 tokens (   18.09 ms per token,    55.29 tokens per second)
      total time =    2019.78 ms /   120 tokens
0.12.394.556 I srv  log_server_r: request: POST /v1/chat/completions 127.0.0.1 200
0.00.020.000 I main: chat template, example_format: '{{ messages }}'
";
    for cmd in [&["summary"][..], &[]] {
        let (code, _, err) = outcome(cmd, log);
        assert_eq!(code, Some(0), "{err}");
        assert!(
            err.contains(
                "tokentime: <stdin>: not JSON lines (llama-server's text log: none of its 10 lines is JSON, and its timings have no request id or wall-clock time): tokentime reads llama-server's responses, whose `timings` object a client or a gateway logs (format llamacpp)"
            ),
            "{cmd:?}: {err}"
        );
    }
    // The summary's own hint points there, not to --prefix (no JSON follows a header).
    let (_, out, _) = outcome(&["summary"], log);
    assert!(
        out.contains("stderr\n  says what the input looks like") && !out.contains("--prefix"),
        "{out}"
    );
}

/// JSON never holds `-0.0`: a change that rounds to zero is `0.0`.
#[test]
fn json_has_no_negative_zero() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.jsonl");
    let b = dir.path().join("b.jsonl");
    std::fs::write(&a, "{\"e\":100.0}\n").unwrap();
    // 0.0004 ms faster: a change of -0.0004 ms, rounded to three decimals.
    std::fs::write(&b, "{\"e\":99.9996}\n").unwrap();
    let out = run(
        &[
            "diff",
            "--map",
            "e2e=e",
            "-o",
            "json",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
        ],
        b"",
    );
    let json = String::from_utf8_lossy(&out.stdout);
    assert!(
        json.contains("\"change_ms\": 0.0"),
        "{json}{}",
        stderr(&out)
    );
    assert!(!json.contains("-0.0"), "{json}");
}

/// Per-request rows carry `outcome` by default, so that rows of failed requests are told from
/// those of requests whose metrics were not logged.
#[test]
fn rows_carry_outcome_by_default() {
    let log = litellm();
    for (o, header) in [
        (
            "csv",
            "id,model,ttft_ms,tpot_ms,e2e_ms,input_tokens,cached_tokens,output_tokens,cache,outcome",
        ),
        (
            "tsv",
            "id\tmodel\tttft_ms\ttpot_ms\te2e_ms\tinput_tokens\tcached_tokens\toutput_tokens\tcache\toutcome",
        ),
    ] {
        let (code, out, _) = outcome(&["-o", o, &log], b"");
        assert_eq!(code, Some(0));
        assert_eq!(out.lines().next(), Some(header), "{o}");
    }
    let (_, out, _) = outcome(&["-o", "jsonl", &log], b"");
    assert!(out.lines().all(|l| l.contains("\"outcome\":")), "{out}");
}

/// Runs tokentime with `COLUMNS` set, stdin closed: (exit status, stdout, stderr).
fn outcome_at(args: &[&str], columns: usize) -> (Option<i32>, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tokentime"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .env("COLUMNS", columns.to_string())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr(&out),
    )
}

/// Lines wider than `width`, but those of one word (a path longer than the width, after the
/// `| ` that joins it to the one before).
fn too_wide(text: &str, width: usize) -> Vec<&str> {
    text.lines()
        .filter(|l| {
            let word = l.trim().trim_start_matches("| ");
            l.chars().count() > width && word.contains(' ')
        })
        .collect()
}

/// `diff`'s method line, `formats NAME` and the unknown-format message fit `$COLUMNS`.
#[test]
fn long_lines_wrap_to_the_width() {
    for width in [80, 100] {
        let (code, out, err) = outcome_at(
            &[
                "diff",
                "testdata/analysis/bimodal.jsonl.gz",
                "testdata/analysis/queue-growth.jsonl.gz",
            ],
            width,
        );
        assert_eq!(code, Some(0), "{err}");
        // The method, after the table (whose rows are a table's, not wrapped).
        let method = &out[out.find("beyond noise:").expect("the method line")..];
        assert!(method.lines().count() >= 2, "{method}");
        assert_eq!(too_wide(method, width), Vec::<&str>::new(), "{out}");
        let (code, out, err) = outcome_at(&["formats", "litellm", "bedrock", "custom"], width);
        assert_eq!(code, Some(0), "{err}");
        assert!(out.contains("cached_tokens"), "{out}");
        assert_eq!(too_wide(&out, width), Vec::<&str>::new(), "{out}");
        for args in [
            &["--format", "litelm", "testdata/lab/litellm.jsonl"][..],
            &["formats", "litelm"],
        ] {
            let (code, _, err) = outcome_at(args, width);
            assert_eq!(code, Some(2), "{err}");
            assert!(err.contains("unknown format"), "{err}");
            assert_eq!(too_wide(&err, width), Vec::<&str>::new(), "{err}");
        }
    }
}

/// `--format litelm`: the message suggests the closest known names.
#[test]
fn unknown_format_suggests_the_closest() {
    let (code, _, err) = outcome(&["--format", "litelm", &litellm()], b"");
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.starts_with("tokentime: --format litelm: unknown format; did you mean litellm?"),
        "{err}"
    );
    let (code, _, err) = outcome(&["formats", "vlm"], b"");
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("did you mean vllm?"), "{err}");
    // Nothing close: no suggestion.
    let (_, _, err) = outcome(&["--format", "nope", &litellm()], b"");
    assert!(!err.contains("did you mean"), "{err}");
}

/// `--fail-if 'ttft_ms.p99>+0.5s'`: seconds are a unit of the threshold, as ms are.
#[test]
fn fail_if_takes_seconds() {
    let (a, b) = (
        "testdata/analysis/bimodal.jsonl.gz",
        "testdata/analysis/queue-growth.jsonl.gz",
    );
    let run_gate = |gate: &str| outcome_at(&["diff", "--fail-if", gate, a, b], 100);
    // A's p50 TTFT 158.3 ms, B's 1322.1 ms: more than 0.5 s slower, beyond noise (exit 3);
    // not more than 5 s.
    let (code, _, err) = run_gate("ttft_ms.p50>+0.5s");
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("HOLDS"), "{err}");
    let (code, _, err) = run_gate("ttft.p50>+5s");
    assert_eq!(code, Some(0), "{err}");
    // The same threshold in ms reads the same.
    let (code, _, err) = run_gate("ttft.p50>+500ms");
    assert_eq!(code, Some(3), "{err}");
}

/// `tokentime summary` with no FILE at a terminal: a line on stderr says it reads standard
/// input, rather than a silent wait. Run under `script` (a pseudo-terminal), where there is
/// one; piped or redirected stdin gets no such line.
#[test]
fn stdin_at_a_terminal_gets_a_hint() {
    let (_, _, err) = outcome(&["summary"], b"");
    assert!(!err.contains("reading standard input"), "{err}");
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("no `script` here: the terminal case is not run");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let err_file = dir.path().join("stderr");
    let cmd = format!(
        "{} summary 2>{}",
        env!("CARGO_BIN_EXE_tokentime"),
        err_file.display()
    );
    let mut child = std::process::Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut text = String::new();
    for _ in 0..100 {
        text = std::fs::read_to_string(&err_file).unwrap_or_default();
        if !text.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        text.starts_with(
            "tokentime: reading standard input (a terminal); give FILEs or pipe a log"
        ),
        "{text:?}"
    );
}

/// A misspelt subcommand is read as a FILE that does not exist: the message names the
/// subcommand it is close to (exit 2, before any output).
#[test]
fn misspelt_subcommand() {
    let log = litellm();
    let (code, out, err) = outcome(&["sumary", &log], b"");
    assert_eq!(code, Some(2), "{err}");
    assert!(out.is_empty());
    assert_eq!(
        err.trim_end(),
        "tokentime: sumary: no such file (did you mean the subcommand summary? tokentime summary FILE...)"
    );
    // A path is a path: no subcommand guessed.
    let (_, _, err) = outcome(&["./sumary", &log], b"");
    assert!(!err.contains("did you mean"), "{err}");
}

/// A `--fail-if` gate on a quantile with a decimal point, one of diff's default quantiles.
#[test]
fn fail_if_on_p99_9() {
    let log = litellm();
    let (code, _, err) = outcome(&["diff", "--fail-if", "ttft.p99.9>+10%", &log, &log], b"");
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("unknown metric"), "{err}");
}

/// A LiteLLM failure logged without its times (a null `endTime`, or `startTime` too) is still a
/// failed request, not a no-timing line: the error count keeps it, its reason named.
#[test]
fn a_litellm_failure_without_its_times_is_still_an_error() {
    let log = std::fs::read_to_string(testdata().join("lab/litellm.jsonl")).unwrap();
    let mut input = String::new();
    let mut failures = 0;
    for line in log.lines() {
        let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["status"] == "failure" {
            failures += 1;
            v["endTime"] = serde_json::Value::Null;
            if failures % 2 == 0 {
                v["startTime"] = serde_json::Value::Null;
            }
        }
        input.push_str(&v.to_string());
        input.push('\n');
    }
    assert_eq!(failures, 9);
    for format in ["auto", "litellm"] {
        let out = run(
            &["summary", "-o", "json", "--format", format],
            input.as_bytes(),
        );
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let cov = &doc["coverage"];
        assert_eq!(
            (&cov["requests"], &cov["errors"], &cov["no_timing"]),
            (&293.into(), &9.into(), &0.into()),
            "{format}: {cov}"
        );
    }
}
