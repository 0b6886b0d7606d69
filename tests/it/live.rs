//! Live use: output appears as requests complete (not at EOF), `--every` prints summaries
//! while input keeps coming, `--window` slides, and SIGINT/SIGTERM print the final summary.
//! Each test drives the binary through pipes it keeps open, as `tail -F` would.

use crate::common::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

/// The lines of `r` (a child's stdout or stderr), read by a thread of their own, as they come.
fn lines_of(r: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, lines) = channel();
    std::thread::spawn(move || {
        for l in BufReader::new(r).lines() {
            let Ok(l) = l else { break };
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    lines
}

/// A running tokentime whose stdout lines arrive on a channel.
struct Live {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Live {
    fn start(args: &[&str]) -> Live {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_tokentime"));
        cmd.args(args);
        Live::spawn(cmd)
    }

    /// Starts `cmd` with its standard streams piped.
    fn spawn(mut cmd: Command) -> Live {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let lines = lines_of(child.stdout.take().unwrap());
        Live {
            child,
            stdin,
            lines,
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        let w = self.stdin.as_mut().unwrap();
        w.write_all(bytes).unwrap();
        w.flush().unwrap();
    }

    /// The next stdout line, failing the test after 10 s.
    fn next_line(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(10))
            .expect("no output line within 10 s: output is not live")
    }

    /// Reads lines until one satisfies `pred`; returns it.
    fn until(&self, pred: impl Fn(&str) -> bool) -> String {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let l = self.next_line();
            if pred(&l) {
                return l;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no matching line within 30 s (last: {l})"
            );
        }
    }

    fn signal(&self, sig: &str) {
        let st = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
    }

    /// Waits for the exit (10 s at most); returns the code, the rest of stdout and stderr.
    fn finish(mut self) -> (Option<i32>, String, String) {
        for _ in 0..200 {
            if self.child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let Some(st) = self.child.try_wait().unwrap() else {
            let _ = self.child.kill();
            panic!("tokentime did not exit within 10 s");
        };
        let mut rest = String::new();
        while let Ok(l) = self.lines.recv_timeout(Duration::from_secs(2)) {
            rest.push_str(&l);
            rest.push('\n');
        }
        let mut err = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        (st.code(), rest, err)
    }
}

fn sample_lines() -> Vec<Vec<u8>> {
    let data = std::fs::read(testdata().join("samples/vllm_response_metrics.jsonl")).unwrap();
    lines_with_endings(&data)
        .into_iter()
        .map(<[u8]>::to_vec)
        .collect()
}

#[test]
fn each_enriched_line_comes_back_before_the_next_is_written() {
    let lines = sample_lines();
    let want = run_ok(&[], &lines.concat());
    let want: Vec<&[u8]> = lines_with_endings(&want);
    // stdout is a pipe: no line buffering, only the flush before a blocking read.
    let mut live = Live::start(&[]);
    for (i, line) in lines.iter().enumerate() {
        std::thread::sleep(Duration::from_millis(50));
        live.write(line);
        let got = live.next_line();
        assert_eq!(
            format!("{got}\n").as_bytes(),
            want[i],
            "line {} differs",
            i + 1
        );
    }
    drop(live.stdin.take());
    let (code, rest, _) = live.finish();
    assert_eq!((code, rest.as_str()), (Some(0), ""));
}

/// The size of the pipe whose end is `fd`.
#[cfg(target_os = "linux")]
fn pipe_size(fd: &impl std::os::fd::AsRawFd) -> i32 {
    // SAFETY: F_GETPIPE_SZ takes no argument and returns an integer.
    unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETPIPE_SZ) }
}

/// 8 MB of the sample lines, written at once: a pipe's writer ahead of its reader.
#[cfg(target_os = "linux")]
fn many_lines() -> Vec<u8> {
    let lines = sample_lines().concat();
    lines.repeat(8_000_000 / lines.len() + 1)
}

/// A pipe on standard input that trickles (a live `tail -F`) keeps its size, and each line
/// comes back at once; one that fills (its writer ahead, a `cat` of a file) is made to hold
/// 1 MiB, and everything written is read.
#[cfg(target_os = "linux")]
#[test]
fn the_stdin_pipe_is_widened_when_it_fills_and_left_when_it_trickles() {
    let lines = sample_lines();
    let mut live = Live::start(&[]);
    for line in &lines[..2] {
        live.write(line);
        assert!(live.next_line().contains("\"tokentime\""));
    }
    assert_eq!(pipe_size(live.stdin.as_ref().unwrap()), 64 * 1024);
    let many = many_lines();
    live.write(&many);
    for _ in 0..lines_with_endings(&many).len() {
        live.next_line();
    }
    assert_eq!(pipe_size(live.stdin.as_ref().unwrap()), 1 << 20);
    drop(live.stdin.take());
}

/// A pipe its writer made larger is left as large.
#[cfg(target_os = "linux")]
#[test]
fn a_larger_stdin_pipe_is_not_made_smaller() {
    use std::os::fd::AsRawFd;
    let (reader, mut writer) = std::io::pipe().unwrap();
    let fd = writer.as_raw_fd();
    // SAFETY: F_SETPIPE_SZ takes an integer.
    let set = unsafe { libc::fcntl(fd, libc::F_SETPIPE_SZ, 4 << 20) };
    if set < 0 {
        // A limit below 4 MiB here (`/proc/sys/fs/pipe-max-size`): nothing to check.
        return;
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_tokentime"))
        .stdin(reader)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = lines_of(child.stdout.take().unwrap());
    let many = many_lines();
    writer.write_all(&many).unwrap();
    assert_eq!(pipe_size(&writer), 4 << 20);
    drop(writer);
    assert_eq!(out.iter().count(), lines_with_endings(&many).len());
    assert!(child.wait().unwrap().success());
}

/// Standard input left non-blocking by the parent (the flag is on the pipe, shared): a read
/// with nothing yet to read waits, as on a blocking pipe, for enrich, `--format inferred` (its
/// sample) and summary alike.
#[cfg(target_os = "linux")]
#[test]
fn a_non_blocking_stdin_is_waited_on_not_failed() {
    use std::os::fd::AsRawFd;
    let lines = sample_lines().concat();
    for args in [
        &[][..],
        &["--format", "inferred"],
        &["summary", "-o", "csv"],
    ] {
        let want = run_ok(args, &lines);
        let (reader, mut writer) = std::io::pipe().unwrap();
        let fd = reader.as_raw_fd();
        // SAFETY: F_GETFL and F_SETFL take and return integers.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            assert_eq!(libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK), 0);
        }
        let child = Command::new(env!("CARGO_BIN_EXE_tokentime"))
            .args(args)
            .stdin(reader)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Nothing to read for a while, then the lines in two writes.
        std::thread::sleep(Duration::from_millis(200));
        let (head, tail) = lines.split_at(lines.len() / 2);
        writer.write_all(head).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        writer.write_all(tail).unwrap();
        drop(writer);
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert_eq!(out.stdout, want, "{args:?}");
    }
}

/// The context switches of all of process `pid`'s threads so far (each a wake-up).
#[cfg(target_os = "linux")]
fn wakeups(pid: u32) -> u64 {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("status")).ok())
        .flat_map(|status| {
            status
                .lines()
                .filter(|l| l.starts_with("voluntary_ctxt_switches:"))
                .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .collect::<Vec<_>>()
        })
        .sum()
}

/// `--bucket` on a live log that falls silent sleeps: it looks for windows complete every
/// 2 ms while they come, and backs off to 100 ms while none do (it woke about 470 times a
/// second before). Its window is still written when the input ends.
#[cfg(target_os = "linux")]
#[test]
fn an_idle_bucket_summary_does_not_keep_waking_up() {
    let mut live = Live::start(&["summary", "--bucket", "1m"]);
    for l in sample_lines() {
        live.write(&l);
    }
    std::thread::sleep(Duration::from_millis(500));
    let before = wakeups(live.child.id());
    std::thread::sleep(Duration::from_secs(1));
    let idle = wakeups(live.child.id()) - before;
    assert!(idle < 100, "{idle} wake-ups in a second of silence");
    drop(live.stdin.take());
    let (code, out, err) = live.finish();
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("window"), "{out}");
}

#[test]
fn csv_rows_are_live_too_and_line_buffered_is_accepted() {
    let lines = sample_lines();
    let mut live = Live::start(&["-o", "csv", "--fields", "id,ttft_ms", "--line-buffered"]);
    live.write(&lines[0]);
    assert_eq!(live.next_line(), "id,ttft_ms");
    assert_eq!(
        live.next_line(),
        "chatcmpl-7f3c2a9e1b0d4e56a8c1f2e3d4b5a6c7,22.1"
    );
    live.write(&lines[1]);
    assert!(live.next_line().ends_with(",499.1"));
    drop(live.stdin.take());
    assert_eq!(live.finish().0, Some(0));
}

/// On a pipe, `--every` prints the compact report each interval: its header, then the
/// headline first.
#[test]
fn every_prints_the_compact_report_on_a_pipe() {
    let lines = sample_lines();
    let mut live = Live::start(&["summary", "--every", "200ms"]);
    live.write(&lines[..2].concat());
    live.until(|l| l.starts_with("tokentime summary #") && l.ends_with("everything so far"));
    let first = live.next_line();
    assert!(first.starts_with("2 requests"), "{first}");
    live.write(&lines[2..].concat());
    drop(live.stdin.take());
    let (code, rest, _) = live.finish();
    assert_eq!(code, Some(0));
    assert!(rest.contains("tokentime summary final at"), "{rest}");
    assert!(rest.contains("\n5 requests"), "{rest}");
    assert!(rest.contains("--explain: the full report"), "{rest}");
}

#[test]
fn every_prints_a_table_before_end_of_input() {
    let lines = sample_lines();
    let mut live = Live::start(&["summary", "--explain", "--every", "200ms"]);
    live.write(&lines[..2].concat());
    // The input stays open: this table can only come from the interval timer.
    live.until(|l| l.starts_with("tokentime summary #") && l.ends_with("everything so far"));
    let cov = live.until(|l| l.starts_with("lines "));
    assert!(cov.starts_with("lines 2  requests 2"), "{cov}");
    live.write(&lines[2..].concat());
    live.until(|l| l.starts_with("lines 5  requests 5"));
    drop(live.stdin.take());
    let (code, rest, _) = live.finish();
    assert_eq!(code, Some(0));
    assert!(rest.contains("all requests: 5 requests, 1 error"), "{rest}");
    // The final table is headed like the others.
    let head = rest
        .lines()
        .rfind(|l| l.starts_with("tokentime summary "))
        .unwrap_or_default();
    assert!(
        head.starts_with("tokentime summary final at ") && head.ends_with("): everything"),
        "{rest}"
    );
}

#[test]
fn every_with_json_writes_one_document_per_interval_and_window_slides() {
    let lines = sample_lines();
    let mut live = Live::start(&[
        "summary", "--every", "300ms", "--window", "300ms", "-o", "json",
    ]);
    live.write(&lines.concat());
    let doc = |l: String| -> serde_json::Value { serde_json::from_str(&l).unwrap() };
    // An interval that saw the 5 requests, then one that saw none: the window slid past them.
    let mut seen = doc(live.next_line());
    while seen["coverage"]["requests"] != 5 {
        seen = doc(live.next_line());
    }
    assert_eq!(seen["schema"], "tokentime.summary/v1");
    assert_eq!(seen["interval"]["window_s"], 0.3);
    let n = seen["interval"]["n"].as_u64().unwrap();
    let next = doc(live.next_line());
    assert_eq!(next["interval"]["n"].as_u64().unwrap(), n + 1);
    assert_eq!(next["coverage"]["requests"], 0);
    assert_eq!(next["final"], false);
    drop(live.stdin.take());
    let (code, rest, _) = live.finish();
    assert_eq!(code, Some(0));
    // The final document covers everything, on one line like the others, and says so.
    let last = doc(rest.lines().last().unwrap().to_owned());
    assert_eq!(last["coverage"]["requests"], 5);
    assert!(last["interval"].is_null(), "{last}");
    assert_eq!(last["final"], true);
}

/// Each interval judges the SLOs on what it covers: a window with requests meets it, one the
/// window slid past has nothing to judge; the exit status is the final summary's.
#[test]
fn every_interval_carries_its_slo_verdicts() {
    let lines = sample_lines();
    let mut live = Live::start(&[
        "summary",
        "--every",
        "300ms",
        "--window",
        "250ms",
        "-o",
        "json",
        "--slo",
        "e2e:p50<=100s",
    ]);
    live.write(&lines.concat());
    let doc = |l: String| -> serde_json::Value { serde_json::from_str(&l).unwrap() };
    let mut seen = doc(live.next_line());
    while seen["coverage"]["requests"] != 5 {
        seen = doc(live.next_line());
    }
    // A window of 250ms is rounded up to one whole interval of 300ms.
    assert_eq!(seen["interval"]["window_s"], 0.3);
    let slo = &seen["slos"][0];
    assert_eq!(slo["slo"], "e2e:p50<=100s");
    assert_eq!(slo["met"], true);
    assert_eq!(slo["count"], 3, "the 3 requests with an E2E");
    let next = doc(live.next_line());
    assert_eq!(next["coverage"]["requests"], 0);
    assert!(next["slos"][0]["met"].is_null(), "{next}");
    assert_eq!(
        next["slos"][0]["not_judged"],
        "no request in the last 300ms"
    );
    drop(live.stdin.take());
    let (code, rest, err) = live.finish();
    assert_eq!(code, Some(0), "{err}");
    let last = doc(rest.lines().last().unwrap().to_owned());
    assert_eq!(last["final"], true);
    assert_eq!(last["slos"][0]["met"], true);
    // Said on stderr once, for the final summary.
    assert_eq!(err.matches("SLO e2e:p50<=100s").count(), 1, "{err}");
}

/// On a pipe, the compact report of each interval has its SLO verdicts under its header.
#[test]
fn every_prints_the_slo_verdicts_in_each_compact_report() {
    let lines = sample_lines();
    let mut live = Live::start(&["summary", "--every", "200ms", "--slo", "e2e:p50<=1s"]);
    live.write(&lines.concat());
    live.until(|l| l.starts_with("tokentime summary #"));
    let verdict = live.next_line();
    assert!(
        verdict.starts_with("SLO e2e:p50<=1s BROKEN: p50 1209.4 ms > 1000 ms"),
        "{verdict}"
    );
    drop(live.stdin.take());
    let (code, _, err) = live.finish();
    assert_eq!(code, Some(3), "{err}");
}

/// `--every --save-digest FILE`: the digest of everything so far is written at each interval,
/// marked as a checkpoint (a partial run's), so that a live run killed outright leaves what it
/// had read; `merge` says so and exits 2 unless `--allow-partial`. A run that ends writes the
/// whole one, unmarked.
#[test]
fn every_checkpoints_its_digest_file_each_interval() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("d.json");
    // A symbolic link to a regular file: its target is replaced at each interval, the link
    // kept. The target holds an earlier run's whole file, which the run replaces at once.
    let link = dir.path().join("link.json");
    let target = dir.path().join("target.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let lines = sample_lines();
    let saved = |p: &std::path::Path| -> Option<serde_json::Value> {
        serde_json::from_slice(&std::fs::read(p).ok()?).ok()
    };
    for kill in [true, false] {
        let path = if kill { link.as_path() } else { d.as_path() };
        let ds = path.to_str().unwrap();
        let _ = std::fs::remove_file(&d);
        run_ok(
            &["summary", "--save-digest", target.to_str().unwrap()],
            &lines.concat(),
        );
        let mut live = Live::start(&["summary", "--every", "100ms", "--save-digest", ds]);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while saved(path).is_none_or(|j| j["partial"].is_null()) {
            assert!(std::time::Instant::now() < deadline, "no first checkpoint");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(saved(path).unwrap()["coverage"]["requests"], 0);
        live.write(&lines.concat());
        while saved(path).is_none_or(|j| j["coverage"]["requests"] != 5) {
            assert!(std::time::Instant::now() < deadline, "no checkpoint");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(saved(path).unwrap()["partial"]["checkpoint"], true);
        if kill {
            assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
            live.signal("-KILL");
            let _ = live.finish();
            let out = run(&["merge", ds], b"");
            assert_eq!(out.status.code(), Some(2));
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("saved by a partial run (written at an interval of a live run"),
                "{err}"
            );
            let out = run(&["merge", "--allow-partial", "-o", "json", ds], b"");
            assert_eq!(out.status.code(), Some(0));
            let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(j["coverage"]["requests"], 5);
        } else {
            drop(live.stdin.take());
            let (code, _, err) = live.finish();
            assert_eq!(code, Some(0), "{err}");
            assert!(
                saved(path).unwrap()["partial"].is_null(),
                "the whole run's file"
            );
        }
    }
}

#[test]
fn every_with_csv_separates_whole_documents_by_a_blank_line() {
    let lines = sample_lines();
    let mut live = Live::start(&["summary", "--every", "300ms", "-o", "csv"]);
    live.write(&lines.concat());
    // A first interval document, then the final one.
    live.until(|l| l.is_empty());
    drop(live.stdin.take());
    let (code, rest, _) = live.finish();
    assert_eq!(code, Some(0));
    let docs: Vec<&str> = rest
        .split("\n\n")
        .filter(|d| !d.trim().is_empty())
        .collect();
    assert!(!docs.is_empty());
    for d in docs {
        assert!(d.trim_start().starts_with("group,cache,requests,"), "{d}");
        assert_eq!(d.matches("group,cache,requests,").count(), 1, "{d}");
    }
}

#[test]
fn sigint_during_a_live_summary_prints_the_final_summary_and_exits_0() {
    let lines = sample_lines();
    let mut live = Live::start(&["summary", "--every", "100ms", "-o", "json"]);
    live.write(&lines.concat());
    live.until(|l| l.contains("\"requests\":5"));
    // stdin stays open, as under `tail -F`: only the signal can end the run.
    live.signal("-INT");
    let (code, rest, err) = live.finish();
    assert_eq!(code, Some(0), "{err}");
    let last: serde_json::Value = serde_json::from_str(rest.lines().last().unwrap()).unwrap();
    assert_eq!(last["coverage"]["requests"], 5);
    assert!(
        last["interval"].is_null() && last["final"] == true,
        "the final summary, not a tick: {last}"
    );
    assert!(err.contains("interrupted"), "{err}");
}

/// Interrupted, a `--bucket` run writes the windows it still held, each marked: none of them
/// was complete.
#[test]
fn sigint_marks_the_windows_still_held_partial() {
    let lines = sample_lines();
    let mut live = Live::start(&["summary", "--bucket", "1m", "-o", "json"]);
    live.write(&lines.concat());
    std::thread::sleep(Duration::from_millis(500));
    live.signal("-INT");
    let (code, rest, err) = live.finish();
    assert_eq!(code, Some(0), "{err}");
    let windows: Vec<serde_json::Value> = rest
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|w: &serde_json::Value| w["schema"] == "tokentime.bucket/v1")
        .collect();
    assert!(!windows.is_empty(), "{rest}");
    assert!(
        windows.iter().all(|w| w["partial"] == "interrupted"),
        "{rest}"
    );
}

/// The value of the series that starts `name` (`"tokentime_requests "`) in the textfile at
/// `prom`, when it is there.
fn gauge(prom: &std::path::Path, name: &str) -> Option<String> {
    std::fs::read_to_string(prom)
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(name).map(str::to_owned))
}

/// Waits (10 s at most, looking every 10 ms) until the textfile at `prom` says `want`
/// requests.
fn wait_for_requests(prom: &std::path::Path, want: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while gauge(prom, "tokentime_requests ").as_deref() != Some(want) {
        assert!(
            std::time::Instant::now() < deadline,
            "waiting for {want}: {:?}",
            gauge(prom, "tokentime_requests ")
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `--every --window -o prometheus --out FILE`, stopped: the file a textfile collector keeps
/// serving holds the last window, as every interval's did, not the whole run's counts.
#[test]
fn a_stopped_windowed_exporter_leaves_its_last_window_in_the_textfile() {
    let dir = tempfile::tempdir().unwrap();
    let prom = dir.path().join("t.prom");
    let lines = sample_lines();
    let mut live = Live::start(&[
        "summary",
        "--every",
        "100ms",
        "--window",
        "300ms",
        "-o",
        "prometheus",
        "--out",
        prom.to_str().unwrap(),
    ]);
    live.write(&lines.concat());
    let requests = || gauge(&prom, "tokentime_requests ");
    wait_for_requests(&prom, "5");
    // Nothing more comes: the window moves past the 5 requests.
    wait_for_requests(&prom, "0");
    live.signal("-TERM");
    let (code, _, err) = live.finish();
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        requests().as_deref(),
        Some("0"),
        "the last window, not the run's 5"
    );
    let text = std::fs::read_to_string(&prom).unwrap();
    let span: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("tokentime_window_seconds "))
        .unwrap_or_else(|| panic!("{text}"))
        .parse()
        .unwrap();
    assert!(
        (0.3..=0.4).contains(&span),
        "the span it covers, three intervals and the part of one since: {text}"
    );
}

/// Stopped just after an interval, a windowed exporter's final document still covers a whole
/// window (and the part of an interval since), not only the moment since the last interval.
#[test]
fn a_windowed_exporter_stopped_after_an_interval_leaves_a_whole_window() {
    let dir = tempfile::tempdir().unwrap();
    let prom = dir.path().join("t.prom");
    let mut live = Live::start(&[
        "summary",
        "--every",
        "1s",
        "--window",
        "1s",
        "-o",
        "prometheus",
        "--out",
        prom.to_str().unwrap(),
    ]);
    live.write(&sample_lines().concat());
    wait_for_requests(&prom, "5");
    live.signal("-TERM");
    let (code, _, err) = live.finish();
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        gauge(&prom, "tokentime_requests ").as_deref(),
        Some("5"),
        "{err}"
    );
    let span: f64 = gauge(&prom, "tokentime_window_seconds ")
        .unwrap()
        .parse()
        .unwrap();
    assert!((1.0..1.5).contains(&span), "{span}");
}

/// A live exporter whose `--out` cannot be written for a while (its directory removed, a full
/// disk) says so once and goes on; the file is written again once it can be, and the final
/// summary and digest file are the whole run's.
#[test]
fn an_exporter_outlives_an_out_file_it_cannot_write_for_a_while() {
    let dir = tempfile::tempdir().unwrap();
    let textfile = dir.path().join("textfile");
    std::fs::create_dir(&textfile).unwrap();
    let prom = textfile.join("t.prom");
    let digest = dir.path().join("d.json");
    let mut live = Live::start(&[
        "summary",
        "--every",
        "50ms",
        "-o",
        "prometheus",
        "--out",
        prom.to_str().unwrap(),
        "--save-digest",
        digest.to_str().unwrap(),
    ]);
    let lines = sample_lines();
    let requests = || gauge(&prom, "tokentime_requests ");
    live.write(&lines[0]);
    wait_for_requests(&prom, "1");
    std::fs::remove_dir_all(&textfile).unwrap();
    live.write(&lines[1]);
    // Several intervals fail.
    std::thread::sleep(Duration::from_millis(300));
    std::fs::create_dir(&textfile).unwrap();
    wait_for_requests(&prom, "2");
    live.write(&lines[2..].concat());
    drop(live.stdin.take());
    let (code, _, err) = live.finish();
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(requests().as_deref(), Some("5"), "{err}");
    let said: Vec<_> = err.lines().filter(|l| l.contains("--out")).collect();
    assert_eq!(said.len(), 2, "once failing, once written again: {err}");
    assert!(
        said[0].ends_with("this summary is not written, the next interval tries again"),
        "{err}"
    );
    assert!(said[1].ends_with("written again"), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&digest).unwrap()).unwrap();
    assert_eq!(doc["coverage"]["requests"], 5);
}

#[test]
fn sigterm_without_every_prints_the_final_table_and_judges_slos() {
    let lines = sample_lines();
    let mut live = Live::start(&["summary", "--explain", "--slo", "ttft:p99<=100ms"]);
    live.write(&lines.concat());
    std::thread::sleep(Duration::from_millis(500));
    live.signal("-TERM");
    let (code, rest, err) = live.finish();
    assert_eq!(code, Some(3), "a broken SLO decides the status: {err}");
    assert!(rest.starts_with("lines 5  requests 5"), "{rest}");
    assert!(err.contains("SLO ttft:p99<=100ms BROKEN"), "{err}");
}

/// Under `--every`, a wrong format must not wait for the end of a `tail -F` that never ends:
/// the machine-readable outputs say on stderr, once, that no line was a request, while the
/// input is still open.
#[test]
fn every_says_no_request_was_recognised_while_input_is_open() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tokentime"))
        .args(["summary", "--every", "200ms", "-o", "json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let rx = lines_of(child.stderr.take().unwrap());
    stdin
        .write_all(b"{\"event\": \"startup\", \"no\": \"request here\"}\n")
        .unwrap();
    stdin.flush().unwrap();
    let line = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the notice before the input ends");
    assert!(
        line.contains("no line was recognised as a request"),
        "{line}"
    );
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
    // Once: not again at the end.
    let rest: Vec<String> = rx.iter().collect();
    assert!(
        rest.iter().all(|l| !l.contains("no line was recognised")),
        "{rest:?}"
    );
}

/// A `--window` summary has the window's own failures' reasons and slowest requests, each
/// with its id, also when they are not among the run's slowest so far.
#[test]
fn a_window_has_its_own_reasons_and_slowest_with_ids() {
    let data = std::fs::read(testdata().join("lab/litellm.jsonl")).unwrap();
    let lines = lines_with_endings(&data);
    let mut live = Live::start(&[
        "summary", "--every", "300ms", "--window", "300ms", "-o", "json",
    ]);
    let doc = |l: String| -> serde_json::Value { serde_json::from_str(&l).unwrap() };
    for batch in [&lines[..100], &lines[100..200]] {
        live.write(&batch.concat());
        let mut seen = doc(live.next_line());
        while seen["coverage"]["lines"] != 100 {
            seen = doc(live.next_line());
        }
        let slowest = seen["slowest"].as_array().unwrap();
        assert_eq!(slowest.len(), 5, "{seen}");
        for s in slowest {
            assert!(
                s["id"].as_str().is_some_and(|id| id.starts_with("lab-")),
                "{seen}"
            );
        }
        let errors = seen["errors"]["count"].as_u64().unwrap();
        let reasons: u64 = seen["errors"]["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["count"].as_u64().unwrap())
            .sum();
        assert_eq!(reasons, errors, "{seen}");
        // The window slides past the batch before the next one.
        while seen["coverage"]["lines"] != 0 {
            seen = doc(live.next_line());
        }
    }
    drop(live.stdin.take());
    let (code, _, _) = live.finish();
    assert_eq!(code, Some(0));
}

/// `--format inferred` on a pipe that stays open (a `tail -F` that wrote a few lines): the
/// sample ends once the pipe is silent for a moment, and the lines come out enriched without
/// waiting for the sample to fill (they were held, and lost on Ctrl-C).
#[test]
fn inferred_on_a_live_pipe_enriches_the_lines_written_so_far() {
    let log = "{\"ts\":\"2026-11-30T10:00:01.200Z\",\"request_id\":\"a1\",\"ttfb_ms\":180,\"duration_ms\":1200}\n\
               {\"ts\":\"2026-11-30T10:00:02.900Z\",\"request_id\":\"a2\",\"ttfb_ms\":250,\"duration_ms\":2100}\n\
               {\"ts\":\"2026-11-30T10:00:03.000Z\",\"request_id\":\"a3\",\"ttfb_ms\":150,\"duration_ms\":900}\n";
    let mut live = Live::start(&["--format", "inferred"]);
    live.write(log.as_bytes());
    for id in ["a1", "a2", "a3"] {
        let got = live.next_line();
        assert!(
            got.contains(&format!("\"request_id\":\"{id}\"")) && got.contains("\"ttft_ms\":"),
            "{got}"
        );
    }
    drop(live.stdin.take());
    let (code, rest, _) = live.finish();
    assert_eq!((code, rest.as_str()), (Some(0), ""));
}

/// SIGHUP (the ssh session or terminal of a `tail -F | tokentime summary` closed) ends a summary
/// as SIGTERM does: the final table, the SLO verdicts. Under `nohup` (SIGHUP ignored when the
/// run started) it is still ignored.
#[test]
fn sighup_ends_a_summary_as_sigterm_does_unless_ignored() {
    let lines = sample_lines();
    // SIGHUP at its default disposition, also where the tests run under `nohup` (which a child
    // inherits, and a shell cannot undo).
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tokentime"));
    cmd.args(["summary", "--explain", "--slo", "ttft:p99<=100ms"]);
    // SAFETY: the closure runs in the child between fork and exec and only calls `signal`,
    // which is async-signal-safe.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            libc::signal(libc::SIGHUP, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut live = Live::spawn(cmd);
    live.write(&lines.concat());
    std::thread::sleep(Duration::from_millis(500));
    live.signal("-HUP");
    let (code, rest, err) = live.finish();
    assert_eq!(code, Some(3), "a broken SLO decides the status: {err}");
    assert!(rest.starts_with("lines 5  requests 5"), "{rest}");

    // `trap '' HUP` as nohup does: the shell starts tokentime (by exec, the same process) with
    // SIGHUP ignored.
    let mut cmd = Command::new("bash");
    cmd.args([
        "-c",
        &format!(
            "trap '' HUP; exec {} summary",
            env!("CARGO_BIN_EXE_tokentime")
        ),
    ]);
    let mut live = Live::spawn(cmd);
    live.write(&lines.concat());
    std::thread::sleep(Duration::from_millis(500));
    live.signal("-HUP");
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        live.child.try_wait().unwrap().is_none(),
        "an ignored SIGHUP ended the run"
    );
    drop(live.stdin.take());
    let (code, rest, err) = live.finish();
    assert_eq!(code, Some(0), "{err}");
    assert!(rest.contains("5 requests"), "{rest}");
}

/// A reader that closes the output early (`| head`) still gets the SLOs' exit status: of the
/// whole input in a batch run whose report overflows the pipe, and in a live run (`--every`),
/// which stops reading when it finds its output closed and saves its digest as partial.
#[test]
fn a_closed_output_keeps_the_slo_verdict() {
    let lab = testdata().join("lab/litellm.jsonl");
    let slo = "ttft:p99<=1s";
    // Batch: a report of MBs (a group per request), of which 100 bytes are read.
    let mut child = Command::new(env!("CARGO_BIN_EXE_tokentime"))
        .args(["summary", "--by", "id", "-o", "json", "--slo", slo])
        .arg(&lab)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0u8; 100];
    child.stdout.take().unwrap().read_exact(&mut head).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("SLO {slo} BROKEN")), "{err}");

    // Live: the input stays open; the first interval is read, then the output closed.
    let dir = tempfile::tempdir().unwrap();
    let digest = dir.path().join("d.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tokentime"))
        .args(["summary", "--every", "1s", "--slo", slo, "--save-digest"])
        .arg(&digest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let head: Vec<u8> = std::fs::read(&lab)
        .unwrap()
        .split_inclusive(|&b| b == b'\n')
        .take(20)
        .flatten()
        .copied()
        .collect();
    stdin.write_all(&head).unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("tokentime summary #1 at "), "{first}");
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tokentime: standard output closed; stopped reading (SLOs judged, digest saved, on the input read so far)"),
        "{err}"
    );
    assert!(err.contains(&format!("SLO {slo} BROKEN")), "{err}");
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&digest).unwrap()).unwrap();
    assert_eq!(saved["partial"]["interrupted"], true);
    assert_eq!(saved["coverage"]["requests"], 20, "{saved}");
}

/// A `--window` summary's rates run over the wall time it covers, not over its requests' span:
/// four requests of about a minute each that end within 0.3 s, read within one window of 1 s,
/// are 4 requests a second (Prometheus' `rate()` over the window), not 4 over the 60.3 s from
/// the first start.
#[test]
fn a_window_rates_its_requests_over_its_own_time() {
    let line = |i: u32| {
        format!(
            "{{\"id\": \"r{i}\", \"call_type\": \"acompletion\", \"status\": \"success\", \
             \"stream\": true, \"model\": \"m\", \"startTime\": {}.0, \
             \"completionStartTime\": {}.5, \"endTime\": 1700000060.{i}, \"prompt_tokens\": 5, \
             \"completion_tokens\": 10}}\n",
            1_700_000_000 + 15 * i,
            1_700_000_000 + 15 * i,
        )
    };
    let lines: String = (0..4).map(line).collect();
    let mut live = Live::start(&[
        "summary", "--every", "500ms", "--window", "1s", "-o", "json",
    ]);
    // Past one window since the start: the window covers all of its second.
    std::thread::sleep(Duration::from_millis(1200));
    live.write(lines.as_bytes());
    let doc = |l: &str| -> serde_json::Value { serde_json::from_str(l).unwrap() };
    let mut seen = doc(&live.next_line());
    while seen["coverage"]["requests"] != 4 {
        seen = doc(&live.next_line());
    }
    let t = &seen["groups"][0]["throughput"];
    assert_eq!(t["span_s"], 1.0, "{t}");
    assert_eq!(t["requests_per_s"], 4.0, "{t}");
    assert_eq!(t["output_tokens_per_s"], 40.0, "{t}");
    // The log's span is still the requests' own.
    assert_eq!(seen["span"]["s"], 60.3);
    drop(live.stdin.take());
    let (code, rest, _) = live.finish();
    assert_eq!(code, Some(0));
    // The final summary covers everything read: its rates run over the log's span again.
    let last = doc(rest.lines().last().unwrap());
    assert_eq!(last["groups"][0]["throughput"]["span_s"], 60.3);
}

/// A log read faster than it was written (a replay) spreads its window's requests over more
/// log time than the window's wall time: the rates run over the log time their ends cover,
/// their span and one mean gap more. 13 requests a second apart, written at once, are 1 a
/// second over 13 s (not 13 over the 12 s between the first end and the last); the first
/// interval, before a whole window has passed, says it covers everything so far.
#[test]
fn a_replayed_window_rates_its_requests_over_the_time_their_ends_cover() {
    let line = |i: u32| {
        format!(
            "{{\"id\": \"r{i}\", \"call_type\": \"acompletion\", \"status\": \"success\", \
             \"stream\": true, \"model\": \"m\", \"startTime\": {t}.0, \
             \"completionStartTime\": {t}.2, \"endTime\": {t}.5, \"prompt_tokens\": 5, \
             \"completion_tokens\": 10}}\n",
            t = 1_700_000_000 + i,
        )
    };
    let lines: String = (0..13).map(line).collect();
    let mut live = Live::start(&["summary", "--every", "500ms", "--window", "20s"]);
    live.write(lines.as_bytes());
    let mut header = live.next_line();
    let mut rate = live.next_line();
    while !rate.starts_with("13 requests") {
        header = rate;
        rate = live.next_line();
    }
    assert!(
        header.ends_with("elapsed): everything so far (the 20s window not yet full)"),
        "{header}"
    );
    // Wrapped at 100 columns.
    assert!(
        rate.ends_with("(12.5s); over the last 13.0s: 1.00 requests/s,"),
        "{rate}"
    );
    let tokens = live.next_line();
    assert_eq!(tokens.trim(), "10.0 output tokens/s");
    drop(live.stdin.take());
    let (code, _, _) = live.finish();
    assert_eq!(code, Some(0));
}
