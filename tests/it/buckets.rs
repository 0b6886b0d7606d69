//! `--bucket` read as one stream: windows are written as they complete (so memory holds only
//! the windows within `--bucket-grace` of the latest end), late requests are written again,
//! never dropped, and the output is the same on one thread and on several.

use crate::common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

/// A LiteLLM line that ended at `end` (epoch s), TTFT 200 ms, E2E 1 s.
fn line(id: usize, end: f64) -> String {
    format!(
        r#"{{"id":"r{id}","call_type":"acompletion","stream":true,"status":"success","startTime":{},"completionStartTime":{},"endTime":{end},"prompt_tokens":10,"completion_tokens":11}}"#,
        end - 1.0,
        end - 0.8
    ) + "\n"
}

const T0: f64 = 1_767_225_600.0; // 2026-01-01T00:00:00Z

fn overall(out: &[u8]) -> Vec<Value> {
    out.split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice::<Value>(l).unwrap())
        .filter(|v| v["key"].as_object().unwrap().is_empty())
        .collect()
}

/// `summary -o json --bucket 1m --bucket-grace 2m` and `extra`, reading a pipe the test writes
/// to, its stdout and stderr piped.
fn live_minutes(extra: &[&std::ffi::OsStr]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_tokentime"))
        .args([
            "summary",
            "-o",
            "json",
            "--bucket",
            "1m",
            "--bucket-grace",
            "2m",
        ])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn a_window_is_written_once_the_log_is_past_it_by_the_grace_while_input_keeps_coming() {
    let mut child = live_minutes(&[]);
    let mut sin = child.stdin.take().unwrap();
    // Minute 0, then a request at 00:03:30: minute 0 ended 3.5 min before it (> 2 min grace).
    sin.write_all(line(0, T0 + 10.0).as_bytes()).unwrap();
    sin.write_all(line(1, T0 + 20.0).as_bytes()).unwrap();
    sin.write_all(line(2, T0 + 210.0).as_bytes()).unwrap();
    sin.flush().unwrap();
    // Read while stdin stays open: the window of minute 0 comes out before the end of input.
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    let v: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(v["start"], "2026-01-01T00:00:00.000Z");
    assert_eq!(v["requests"], 2);
    drop(sin);
    let mut rest = Vec::new();
    std::io::Read::read_to_end(&mut out, &mut rest).unwrap();
    assert!(child.wait().unwrap().success());
    let rest = overall(&rest);
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0]["start"], "2026-01-01T00:03:00.000Z");
}

/// With `--save-digest FILE`, one input's windows are still written as they complete, and
/// the file holds every window, a window written again (its late requests) as one.
#[test]
fn with_a_digest_file_windows_are_written_as_they_complete_and_the_file_holds_them_all() {
    let dir = tempfile::tempdir().unwrap();
    let digest = dir.path().join("d.json");
    let mut child = live_minutes(&["--save-digest".as_ref(), digest.as_os_str()]);
    let mut sin = child.stdin.take().unwrap();
    for (id, end) in [(0, 10.0), (1, 20.0), (2, 210.0)] {
        sin.write_all(line(id, T0 + end).as_bytes()).unwrap();
    }
    sin.flush().unwrap();
    // Minute 0 comes out while stdin stays open.
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    let v: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(
        (v["start"].as_str(), v["requests"].as_u64()),
        (Some("2026-01-01T00:00:00.000Z"), Some(2))
    );
    // A late request of minute 0, then one on time.
    sin.write_all(line(3, T0 + 30.0).as_bytes()).unwrap();
    sin.write_all(line(4, T0 + 215.0).as_bytes()).unwrap();
    drop(sin);
    let mut rest = Vec::new();
    std::io::Read::read_to_end(&mut out, &mut rest).unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(
        window_rows(&rest),
        [
            ("00:00".to_owned(), 1, true),
            ("00:03".to_owned(), 2, false)
        ]
    );
    // The digest file: minute 0 with its three requests, minute 3 with its two.
    let doc: Value = serde_json::from_slice(&std::fs::read(&digest).unwrap()).unwrap();
    let windows: Vec<(i64, u64)> = doc["windows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            let all = w["groups"]
                .as_array()
                .unwrap()
                .iter()
                .find(|g| g["key"].as_object().unwrap().is_empty())
                .unwrap();
            (
                w["start_ns"].as_i64().unwrap(),
                all["requests"].as_u64().unwrap(),
            )
        })
        .collect();
    let t0 = T0 as i64 * 1_000_000_000;
    assert_eq!(windows, [(t0, 3), (t0 + 180_000_000_000, 2)]);
}

/// A run of late requests (a file read after a later one) is written once per window, when a
/// request on time follows (or at the end of input), not once per request.
/// The all-requests lines of `--bucket -o json` output: each window's start (`HH:MM`), its
/// requests, and whether it is marked late.
fn window_rows(out: &[u8]) -> Vec<(String, u64, bool)> {
    overall(out)
        .iter()
        .map(|w| {
            (
                w["start"].as_str().unwrap()[11..16].to_owned(),
                w["requests"].as_u64().unwrap(),
                w["late"] == true,
            )
        })
        .collect()
}

/// `summary --bucket 1m -o json` over requests ending these seconds after `T0`, in this
/// order: [`window_rows`] and stderr.
fn minute_windows(ends: &[f64]) -> (Vec<(String, u64, bool)>, String) {
    let input: String = ends
        .iter()
        .enumerate()
        .map(|(i, e)| line(i, T0 + e))
        .collect();
    let out = run(
        &["summary", "-o", "json", "--bucket", "1m"],
        input.as_bytes(),
    );
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (window_rows(&out.stdout), err)
}

#[test]
fn late_requests_in_a_row_make_one_line_per_window() {
    let (lines, _) = minute_windows(&[5.0, 1200.0, 30.0, 40.0, 70.0, 1210.0, 50.0]);
    let want = [
        ("00:00", 1, false),
        ("00:00", 2, true),
        ("00:01", 1, true),
        ("00:00", 1, true),
        ("00:20", 2, false),
    ];
    assert_eq!(lines, want.map(|(s, n, l)| (s.to_owned(), n, l)));
}

#[test]
fn a_request_later_than_the_grace_is_written_again_in_its_window_marked_late() {
    // Minute 0 twice; a request ending at 00:20 closes it (grace 10 min); then one more request
    // in minute 0: late.
    let input = [line(0, T0 + 5.0), line(1, T0 + 1200.0), line(2, T0 + 30.0)].concat();
    let out = run(
        &["summary", "-o", "json", "--bucket", "1m"],
        input.as_bytes(),
    );
    assert!(out.status.success());
    let windows = overall(&out.stdout);
    let starts: Vec<(&str, u64, bool)> = windows
        .iter()
        .map(|w| {
            (
                w["start"].as_str().unwrap(),
                w["requests"].as_u64().unwrap(),
                w["late"] == true,
            )
        })
        .collect();
    assert_eq!(
        starts,
        [
            ("2026-01-01T00:00:00.000Z", 1, false),
            ("2026-01-01T00:00:00.000Z", 1, true),
            ("2026-01-01T00:20:00.000Z", 1, false),
        ]
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "1 request ended in --bucket windows already complete (over --bucket-grace 10m"
        ),
        "{err}"
    );
    // A longer grace holds the window: one line for it, both requests.
    let out = run_ok(
        &[
            "summary",
            "-o",
            "json",
            "--bucket",
            "1m",
            "--bucket-grace",
            "30m",
        ],
        input.as_bytes(),
    );
    let windows = overall(&out);
    assert_eq!(windows.len(), 2);
    assert_eq!(windows[0]["requests"], 2);
    assert!(windows.iter().all(|w| w.get("late").is_none()));
}

/// A log read after a later one (`(tail day2; head day1) |`): the first request of a window
/// that was complete before any of its requests came is late too, not a one-request line
/// that looks complete before a late line for the same window.
#[test]
fn the_first_request_of_a_window_already_complete_is_late_too() {
    let (windows, err) = minute_windows(&[1800.0, 1810.0, 5.0, 10.0, 65.0]);
    let want = [("00:00", 2, true), ("00:01", 1, true), ("00:30", 2, false)];
    assert_eq!(windows, want.map(|(s, n, l)| (s.to_owned(), n, l)));
    assert!(
        err.contains("3 requests ended in --bucket windows already complete"),
        "{err}"
    );
}

/// Daily files, one of them a `.gz` cut short: the window where its requests stop misses
/// those after them, and says so (`"partial"`, `(partial)`); the other days do not.
#[test]
fn the_window_where_an_input_stopped_early_is_marked_partial() {
    let dir = tempfile::tempdir().unwrap();
    let day = |d: usize| -> String {
        (0..40)
            .map(|i| line(d * 100 + i, T0 + 86_400.0 * d as f64 + 600.0 * i as f64))
            .collect()
    };
    let (d0, d1, d2) = (
        dir.path().join("d0.jsonl"),
        dir.path().join("d1.jsonl.gz"),
        dir.path().join("d2.jsonl"),
    );
    std::fs::write(&d0, day(0)).unwrap();
    crate::common::write_cut_gzip(&d1, day(1).as_bytes());
    std::fs::write(&d2, day(2)).unwrap();
    let args = |o: &'static str| {
        ["summary", "-o", o, "--bucket", "1d"]
            .into_iter()
            .map(str::to_owned)
            .chain([&d0, &d1, &d2].map(|p| p.to_str().unwrap().to_owned()))
            .collect::<Vec<String>>()
    };
    let json = args("json");
    let out = run(&json.iter().map(String::as_str).collect::<Vec<_>>(), b"");
    assert_eq!(out.status.code(), Some(2), "a read error");
    let windows: Vec<(u64, Option<String>)> = overall(&out.stdout)
        .iter()
        .map(|w| {
            (
                w["requests"].as_u64().unwrap(),
                w["partial"].as_str().map(str::to_owned),
            )
        })
        .collect();
    assert_eq!(windows.len(), 3, "{windows:?}");
    assert_eq!(windows[0], (40, None));
    assert!(windows[1].0 < 40, "{windows:?}");
    assert_eq!(
        windows[1].1.as_deref(),
        Some(format!("{} not read to its end", d1.display()).as_str())
    );
    assert_eq!(windows[2], (40, None));
    let table = args("table");
    let out = run(&table.iter().map(String::as_str).collect::<Vec<_>>(), b"");
    let text = String::from_utf8_lossy(&out.stdout);
    let marked: Vec<&str> = text.lines().filter(|l| l.ends_with("(partial)")).collect();
    assert_eq!(marked.len(), 1, "{text}");
    assert!(marked[0].starts_with("2026-01-02T00:00:00Z"), "{text}");
    // Hourly digests of each day, merged into days: the same lines, the mark kept.
    let mut digests = vec![];
    for p in [&d0, &d1, &d2] {
        let d = p.with_extension("digest");
        let (p, d_shown) = (p.to_str().unwrap(), d.to_str().unwrap());
        run(
            &["summary", "--bucket", "1h", "--save-digest", d_shown, p],
            b"",
        );
        digests.push(d_shown.to_owned());
    }
    let mut merge = vec!["merge", "--allow-partial", "--bucket", "1d"];
    merge.extend(digests.iter().map(String::as_str));
    let merged = run(&merge, b"");
    assert_eq!(String::from_utf8_lossy(&merged.stdout), text);
}

/// Weeks start on Monday (2026-01-01 is a Thursday: its week from 2025-12-29), in a digest
/// file too: saved and merged back, the same line.
#[test]
fn weekly_windows_start_on_monday_and_go_through_a_digest_file() {
    let dir = tempfile::tempdir().unwrap();
    let input: String = (0..10).map(|i| line(i, T0 + 86_400.0 * i as f64)).collect();
    let log = dir.path().join("log.jsonl");
    std::fs::write(&log, &input).unwrap();
    let (log, d) = (log.to_str().unwrap(), dir.path().join("w.digest"));
    let direct = run_ok(&["summary", "--bucket", "1w", "-o", "json", log], b"");
    let weeks = window_rows(&direct);
    let all = overall(&direct);
    assert_eq!(all.len(), 2);
    assert_eq!(all[0]["start"], "2025-12-29T00:00:00.000Z");
    assert_eq!(all[1]["start"], "2026-01-05T00:00:00.000Z");
    // Thursday to Sunday, then Monday to Saturday.
    assert_eq!((weeks[0].1, weeks[1].1), (4, 6));
    run_ok(
        &[
            "summary",
            "--bucket",
            "1w",
            "--save-digest",
            d.to_str().unwrap(),
            log,
        ],
        b"",
    );
    let merged = run_ok(&["merge", "-o", "json", d.to_str().unwrap()], b"");
    assert_eq!(merged, direct);
}

#[test]
fn streamed_windows_are_the_same_on_one_thread_and_on_two_and_from_a_pipe() {
    // 4,000 requests over ~3 days, out of order by up to 15 min (some beyond the grace).
    let mut x: u64 = 7;
    let mut input = String::new();
    for i in 0..4000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let jitter = (x >> 33) % 900;
        input += &line(i, T0 + 60.0 * i as f64 - jitter as f64);
    }
    let dir = std::env::temp_dir().join(format!("tt-buckets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("log.jsonl");
    std::fs::write(&file, &input).unwrap();
    let f = file.to_str().unwrap();
    let args = |t: &'static str| {
        vec![
            "summary",
            "-o",
            "json",
            "--bucket",
            "5m",
            "--bucket-grace",
            "7m",
            "--threads",
            t,
            "--chunk-bytes",
            "4096",
        ]
    };
    let one = run(&[args("1"), vec![f]].concat(), b"");
    let two = run(&[args("2"), vec![f]].concat(), b"");
    let pipe = run(&args("2"), input.as_bytes());
    assert!(one.status.success());
    assert_eq!(one.stdout, two.stdout);
    assert_eq!(one.stdout, pipe.stdout);
    assert_eq!(one.stderr, two.stderr);
    let windows = overall(&one.stdout);
    let total: u64 = windows
        .iter()
        .map(|w| w["requests"].as_u64().unwrap())
        .sum();
    assert_eq!(total, 4000, "every request in some window's line");
    assert!(windows.iter().any(|w| w["late"] == true));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn several_inputs_add_up_in_each_window_whatever_their_order() {
    // Two hosts' logs over the same minutes: each window holds both, once.
    let dir = std::env::temp_dir().join(format!("tt-buckets-hosts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    let host = |k: usize| -> String {
        (0..60)
            .map(|i| line(k * 100 + i, T0 + 60.0 * i as f64 + 5.0))
            .collect()
    };
    std::fs::write(&a, host(0)).unwrap();
    std::fs::write(&b, host(1)).unwrap();
    let out = run_ok(
        &[
            "summary",
            "-o",
            "json",
            "--bucket",
            "1m",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
        ],
        b"",
    );
    let windows = overall(&out);
    assert_eq!(windows.len(), 60);
    assert!(
        windows
            .iter()
            .all(|w| w["requests"] == 2 && w.get("late").is_none())
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Requests without an end time are in no window, and stderr says how many, and how many of
/// them failed (a failure logged with no time is in no window's errors column): the analysis
/// log's 29 errors are vLLM error bodies with no time.
#[test]
fn failures_in_no_window_are_said() {
    let log = testdata().join("analysis/queue-growth.jsonl.gz");
    let out = run(&["summary", "--bucket", "1m", log.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "tokentime: 29 requests without an end time are in no --bucket window (all failed: in \
             no window's errors column)"
        ),
        "{err}"
    );
}

/// A `--by` group that holds every request of its window is not a second, identical row: the
/// `all` row names it (the plain summary says `the same as all requests`); a window of two
/// models has its `all` row and one row each. JSON lines keep every group.
#[test]
fn a_group_that_is_all_of_its_window_is_named_on_the_all_row() {
    let model = |id: usize, end: f64, m: &str| {
        line(id, end).replacen('{', &format!("{{\"model\":\"{m}\","), 1)
    };
    let mut log = String::new();
    for i in 0..3 {
        log.push_str(&model(i, T0 + 10.0 + i as f64, "a"));
    }
    for i in 3..5 {
        log.push_str(&model(i, T0 + 70.0 + i as f64, "a"));
    }
    log.push_str(&model(5, T0 + 80.0, "b"));
    let out = run(
        &["summary", "--bucket", "1m", "--by", "model"],
        log.as_bytes(),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let groups: Vec<(&str, &str)> = text
        .lines()
        .skip(1)
        .map(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            (cells[1], l.rsplit("  ").next().unwrap())
        })
        .collect();
    assert_eq!(
        groups,
        [
            ("3", "all (model=a)"),
            ("3", "all"),
            ("2", "model=a"),
            ("1", "model=b"),
        ],
        "{text}"
    );
    let out = run(
        &["summary", "--bucket", "1m", "--by", "model", "-o", "json"],
        log.as_bytes(),
    );
    let model_a = out
        .stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice::<Value>(l).unwrap())
        .filter(|v| v["key"] == serde_json::json!({"model": "a"}))
        .count();
    assert_eq!(model_a, 2, "a JSON line for model=a in each window");
}
