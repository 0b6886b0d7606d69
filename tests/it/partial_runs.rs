//! Partial runs: a summary ended by a signal (or with an input not read to its end) marks its
//! digest file `partial`, and `merge` of such a file warns and exits 2 unless
//! `--allow-partial`; a digest path that is also an input (stdin included) is refused before
//! anything is read; a first SIGTERM ends a run blocked writing its digest. Every wait is
//! bounded: a test that would hang fails instead.

use crate::common::*;
use serde_json::Value;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn tokentime(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_tokentime"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tokentime")
}

fn sigterm(child: &Child) {
    let st = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
}

/// Waits at most `secs` for the exit (killing the child and failing the test past that);
/// returns the exit code and stderr. Stdout is read on a thread (a report larger than a pipe
/// must not block the child).
fn finish_within(mut child: Child, secs: u64, what: &str) -> (Option<i32>, String) {
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = stdout.read_to_end(&mut b);
    });
    let deadline = Instant::now() + Duration::from_secs(secs);
    let st = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: tokentime did not exit within {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(child.stdin.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let _ = reader.join();
    (st.code(), err)
}

fn samples() -> Vec<u8> {
    std::fs::read(testdata().join("samples/vllm_response_metrics.jsonl")).unwrap()
}

/// A summary reading a pipe kept open, saving its digest to `digest`, ended by SIGTERM.
fn interrupted_run(digest: &str) {
    let mut child = tokentime(&["summary", "--save-digest", digest]);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&samples()).unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    sigterm(&child);
    child.stdin = Some(stdin);
    let (code, err) = finish_within(child, 20, "summary ended by SIGTERM");
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("interrupted"), "{err}");
}

fn read_json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// A partial run passed for a whole one: its digest had no mark and `merge` exited 0.
#[test]
fn partial_run_is_marked_and_merge_exits_2_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let part = dir.path().join("part.digest.json");
    let whole = dir.path().join("whole.digest.json");
    let (part_s, whole_s) = (part.to_str().unwrap(), whole.to_str().unwrap());
    interrupted_run(part_s);
    let d = read_json(&part);
    assert_eq!(d["partial"]["interrupted"], true, "{d}");
    assert_eq!(d["partial"]["read_errors"], 0, "{d}");
    // A complete run's digest has no mark (its file is as it always was).
    run_ok(&["summary", "--save-digest", whole_s], &samples());
    assert!(read_json(&whole).get("partial").is_none());
    let whole_merge = run(&["merge", "-o", "json", whole_s], b"");
    assert_eq!(whole_merge.status.code(), Some(0));
    let j: Value = serde_json::from_slice(&whole_merge.stdout).unwrap();
    assert!(j.get("partial").is_none(), "{j}");

    let out = run(&["merge", "-o", "json", whole_s, part_s], b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "tokentime: {part_s}: saved by a partial run (interrupted"
        )),
        "{err}"
    );
    assert!(!err.contains(&format!("{whole_s}:")), "{err}");
    assert!(err.contains("--allow-partial"), "{err}");
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["partial"]["interrupted"], true, "{j}");

    let out = run(
        &["merge", "--allow-partial", "-o", "json", whole_s, part_s],
        b"",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains(part_s) && err.contains("partial run"), "{err}");
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["partial"]["interrupted"], true, "{j}");

    // A merge of a partial digest saved again stays partial.
    let again = dir.path().join("again.json");
    let again_s = again.to_str().unwrap();
    let out = run(
        &["merge", "--allow-partial", "--save-digest", again_s, part_s],
        b"",
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(read_json(&again)["partial"]["interrupted"], true);
    assert_eq!(run(&["merge", again_s], b"").status.code(), Some(2));
}

/// A run with an input not read to its end is marked too, its count of such inputs kept.
#[test]
fn partial_run_with_read_errors_is_marked() {
    let dir = tempfile::tempdir().unwrap();
    let digest = dir.path().join("d.json");
    let cut = dir.path().join("day.jsonl.gz");
    write_cut_gzip(
        &cut,
        &std::fs::read(testdata().join("lab/litellm.jsonl")).unwrap(),
    );
    let digest_s = digest.to_str().unwrap();
    let out = run(
        &["summary", "--save-digest", digest_s, cut.to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    let d = read_json(&digest);
    assert_eq!(d["partial"]["interrupted"], false, "{d}");
    assert_eq!(d["partial"]["read_errors"], 1, "{d}");
    assert_eq!(d["coverage"]["read_errors"], 1, "{d}");
    let m = run(&["merge", digest_s], b"");
    assert_eq!(m.status.code(), Some(2));
    let err = String::from_utf8_lossy(&m.stderr);
    assert!(
        err.contains("1 input not read to the end") && err.contains(digest_s),
        "{err}"
    );
    assert_eq!(
        run(&["merge", "--allow-partial", digest_s], b"")
            .status
            .code(),
        Some(0)
    );
}

/// Hang: `cat f | tokentime summary --save-digest /dev/stdin` wrote its digest into the pipe
/// it was reading, and blocked there. A digest path that is an input, stdin included, is now
/// refused before anything is read (exit 2), compared by device and inode.
#[cfg(unix)]
#[test]
fn hang_digest_path_that_is_stdin_or_an_input_is_refused() {
    for path in ["/dev/stdin", "/dev/fd/0"] {
        if !Path::new(path).exists() {
            continue;
        }
        let mut child = tokentime(&["summary", "--save-digest", path]);
        let mut stdin = child.stdin.take().unwrap();
        // Kept open (as `cat` of a long file would): the old run blocked writing into it.
        let _ = stdin.write_all(&samples());
        child.stdin = Some(stdin);
        let (code, err) = finish_within(child, 20, path);
        assert_eq!(code, Some(2), "{path}: {err}");
        assert!(
            err.contains(&format!("--save-digest {path}: is also an input (<stdin>)")),
            "{err}"
        );
    }
    // A hard link to an input: another name, the same file.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, samples()).unwrap();
    let link = dir.path().join("link.json");
    std::fs::hard_link(&input, &link).unwrap();
    let out = run(
        &[
            "summary",
            "--save-digest",
            link.to_str().unwrap(),
            input.to_str().unwrap(),
        ],
        b"",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("is also an input"), "{err}");
    assert_eq!(
        std::fs::read(&input).unwrap(),
        samples(),
        "the input is untouched"
    );
}

/// A FIFO at `dir/name` (no reader: a write to it blocks in its open).
#[cfg(unix)]
fn fifo(dir: &Path, name: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    let st = Command::new("mkfifo").arg(&p).status().unwrap();
    assert!(st.success());
    p
}

/// Hang: a run blocked writing its digest (a FIFO nobody reads) ignored a first SIGTERM, which
/// only set a flag that the blocked write never checked. Now a watchdog ends it (status 130),
/// whether the signal came while reading or while the write was already blocked.
#[cfg(unix)]
#[test]
fn hang_first_sigterm_ends_a_run_blocked_writing_its_digest() {
    let dir = tempfile::tempdir().unwrap();
    // The signal while reading: the run stops reading, then blocks writing.
    let d = fifo(dir.path(), "while_reading");
    let mut child = tokentime(&["summary", "--save-digest", d.to_str().unwrap()]);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&samples()).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    sigterm(&child);
    child.stdin = Some(stdin);
    let (code, err) = finish_within(child, 20, "SIGTERM while reading");
    assert_eq!(code, Some(130), "{err}");
    assert!(err.contains("blocked writing"), "{err}");
    // The input at its end, the write blocked, then the signal.
    let d = fifo(dir.path(), "after_the_end");
    let mut child = tokentime(&["summary", "--save-digest", d.to_str().unwrap()]);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&samples()).unwrap();
    drop(stdin);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(child.try_wait().unwrap().is_none(), "blocked on the FIFO");
    sigterm(&child);
    let (code, err) = finish_within(child, 20, "SIGTERM after the end of input");
    assert_eq!(code, Some(130), "{err}");
}

/// A report blocked on a stdout nobody reads (a pipe into a stalled consumer): the first
/// SIGTERM ends the run within the watchdog's grace, with status 130.
#[test]
fn hang_first_sigterm_ends_a_run_blocked_writing_to_stdout() {
    let lab = std::fs::read(testdata().join("lab/litellm.jsonl")).unwrap();
    // One group per request: a report of megabytes, far more than a pipe holds.
    let mut child = tokentime(&["summary", "--by", "id", "-o", "json"]);
    let stdout = child.stdout.take().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&lab).unwrap();
    drop(stdin);
    // The input is read and the report is being written into the full pipe.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(child.try_wait().unwrap().is_none(), "blocked on stdout");
    sigterm(&child);
    let deadline = Instant::now() + Duration::from_secs(20);
    let st = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("tokentime blocked on stdout did not exit within 20 s of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(stdout);
    assert_eq!(st.code(), Some(130));
}
