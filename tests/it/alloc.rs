//! No allocation per line in steady state: a counting global allocator around whole runs of
//! `tokentime::run` (one thread, as on standard input) on N and on 2N generated lines
//! (enrich), and around lines N+1..2N read by a summary worker. The extra N lines must cost no
//! allocation in enrich mode, and, in summary mode, only amortized growth: an exact buffer
//! doubling now and then, past 10,000 values one fold into the t-digest per 8,192 values, a
//! new log-scaled bin of the analysis, a buffer per second of log time in the in-flight sweep.
//! Lines that hold several requests as records (an OTLP export) are the exception: they
//! allocate a few times a line (about 4 for a generated OTLP line in enrich). Each test counts
//! in a process of its own (see
//! [`in_own_process`]): the test binary holds the other integration tests too.

use clap::Parser;
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

/// Whether allocations are counted: only in a test's own process (see [`in_own_process`]), so
/// the other tests of the binary do not all contend for the counter.
static COUNTING: AtomicBool = AtomicBool::new(false);

fn count() {
    if COUNTING.load(Ordering::Relaxed) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: forwards to the system allocator, only counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Tests in this file run one at a time: the counter is global.
static SERIAL: Mutex<()> = Mutex::new(());

/// Set in the environment of this test binary run again by [`in_own_process`].
const OWN_PROCESS: &str = "TOKENTIME_ALLOC_OWN_PROCESS";

/// The counter counts the allocations of every thread, and this test binary runs every
/// integration test: a test of this file measures in a process of its own, the binary run again
/// with that one test (`--exact`, one thread). Returns true in that process (measure there),
/// false in the one that started it, after checking that the test ran there and passed.
fn in_own_process(test: &str) -> bool {
    if std::env::var_os(OWN_PROCESS).is_some() {
        COUNTING.store(true, Ordering::Relaxed);
        return true;
    }
    // `it::alloc` -> `alloc::TEST`, the test's name in the harness.
    let name = format!("{}::{test}", module_path!().split_once("::").unwrap().1);
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([&name, "--exact", "--test-threads", "1", "--nocapture"])
        .env(OWN_PROCESS, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{name} in its own process:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    false
}

/// Allocations made by one run of `tokentime ARGS FILE` (output discarded).
fn allocations(args: &[&str], input: &[u8]) -> u64 {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(input).unwrap();
    f.flush().unwrap();
    let mut argv = vec!["tokentime"];
    argv.extend_from_slice(args);
    argv.extend(["--threads", "1", f.path().to_str().unwrap()]);
    let config = tokentime::Cli::try_parse_from(argv)
        .unwrap()
        .resolve()
        .unwrap();
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    tokentime::run(&config, std::io::sink()).unwrap();
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

fn lines(format: &str, n: u64) -> Vec<u8> {
    let mut out = Vec::new();
    genlog::generate(format, 5, Some(n), None, &mut out)
        .unwrap()
        .unwrap();
    out
}

/// Allocations of the second N lines: runs on N and 2N lines, the difference.
fn extra(args: &[&str], format: &str, n: u64) -> u64 {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let small = allocations(args, &lines(format, n));
    let large = allocations(args, &lines(format, 2 * n));
    large.saturating_sub(small)
}

#[test]
fn enrich_allocates_nothing_per_line() {
    if !in_own_process("enrich_allocates_nothing_per_line") {
        return;
    }
    // Not OTLP: an export line holds records (spans), written out of the line and read, which
    // allocates a few times a line (see `src/classify/records.rs`).
    for format in ["litellm", "llamacpp", "vllm"] {
        assert_eq!(extra(&[], format, 3000), 0, "{format}");
    }
    assert_eq!(extra(&["--only-requests"], "litellm", 3000), 0);
}

/// Allocations while a summary worker reads lines `n + 1..=2n` of a generated log, after
/// lines `1..=n` (the report at the end, which grows with what was read, left out).
fn summary_extra(args: &[&str], n: u64) -> u64 {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let input = lines("litellm", 2 * n);
    let mut argv = vec!["tokentime"];
    argv.extend_from_slice(args);
    argv.extend(["--threads", "1"]);
    let config = tokentime::Cli::try_parse_from(argv)
        .unwrap()
        .resolve()
        .unwrap();
    let mut worker = tokentime::Worker::new(&config);
    let mut before = 0;
    for (i, line) in input.split(|&b| b == b'\n').enumerate() {
        if i as u64 == n {
            before = ALLOCATIONS.load(Ordering::Relaxed);
        }
        worker
            .line(i as u64 + 1, b"", line, b"\n", &mut std::io::sink())
            .unwrap();
    }
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

#[test]
fn summary_allocates_only_for_digest_growth() {
    if !in_own_process("summary_allocates_only_for_digest_growth") {
        return;
    }
    for args in [&["summary"][..], &["summary", "--by", "model"]] {
        // 3000 more requests into 9 metrics of 7 (25 with --by model) groups: an exact buffer
        // doubles now and then (at most ~2 doublings per buffer here); the analysis adds a
        // log-scaled bin now and then, and the in-flight sweep a buffer per second of log
        // time it sweeps. Nothing per line: that would be 3000 or more.
        let n = summary_extra(args, 3000);
        eprintln!("{args:?}: {n} allocations for 3000 more lines");
        assert!(n < 3000 / 4, "{args:?}: {n} allocations for 3000 lines");
    }
}
