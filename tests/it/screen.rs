//! The compact report fits one screen: the default `summary` table of the bundled lab log is
//! at most 45 lines of at most 100 columns (`$COLUMNS` unset), `$COLUMNS` narrows it,
//! `--explain` is the full report, `--metrics` chooses the rows, `--by '$file'` groups by input
//! and `--bucket` prints a table of windows.

use crate::common::*;
use std::process::{Command, Stdio};

/// Runs tokentime with `COLUMNS` set to `columns` (or unset), stdin closed; returns stdout.
fn stdout_with_columns(args: &[&str], columns: Option<&str>) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tokentime"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .stdin(Stdio::null());
    match columns {
        Some(c) => cmd.env("COLUMNS", c),
        None => cmd.env_remove("COLUMNS"),
    };
    let out = cmd.output().expect("spawn tokentime");
    assert!(
        out.status.success(),
        "tokentime {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

#[test]
fn the_lab_logs_default_summary_fits_one_screen() {
    let text = stdout_with_columns(&["summary", "testdata/lab/litellm.jsonl"], None);
    let lines = text.lines().count();
    assert!(lines <= 45, "{lines} lines:\n{text}");
    assert!(widest(&text) <= 100, "wider than 100 columns:\n{text}");
    // What an SRE looks for first: the span, the rate, output tokens/s, errors.
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("293 requests from 2026-11-29T15:08:47Z to 15:54:57Z (46m10s)"),
        "{first}"
    );
    assert!(
        first.contains("requests/s") && first.contains("output tokens/s"),
        "{first}"
    );
    assert!(text.contains("errors 9 (3.1%)"), "{text}");
    // Seconds from 10 s, and at most three findings, none about token counts.
    assert!(text.contains("26.4s"), "{text}");
    let findings: Vec<&str> = text.lines().filter(|l| l.starts_with("* ")).collect();
    assert!((1..=3).contains(&findings.len()), "{findings:?}");
    assert!(
        findings.iter().all(|f| !f.contains("tokens is")),
        "{findings:?}"
    );
    // Under 1,000 values: no p99.9.
    assert!(!text.contains("p99.9"), "{text}");
}

#[test]
fn the_width_follows_columns() {
    for columns in ["60", "80", "120"] {
        let text = stdout_with_columns(&["summary", "testdata/lab/litellm.jsonl"], Some(columns));
        let w: usize = columns.parse().unwrap();
        assert!(widest(&text) <= w, "COLUMNS={columns}:\n{text}");
    }
    // The --by view of a generated log with three models fits too.
    let text = stdout_with_columns(
        &[
            "summary",
            "--by",
            "model",
            "testdata/analysis/bimodal.jsonl.gz",
        ],
        Some("80"),
    );
    assert!(widest(&text) <= 80, "{text}");
}

#[test]
fn explain_is_the_full_report() {
    let full = stdout_with_columns(
        &["summary", "--explain", "testdata/lab/litellm.jsonl"],
        None,
    );
    assert!(
        full.starts_with("lines 293  requests 293  errors 9"),
        "{full}"
    );
    assert!(full.contains("tpot_ms by requests in flight"), "{full}");
    assert_eq!(full.lines().count(), 71);
}

#[test]
fn metrics_choose_the_rows_of_both_tables() {
    let compact = stdout_with_columns(
        &[
            "summary",
            "--metrics",
            "ttft,e2e",
            "testdata/lab/litellm.jsonl",
        ],
        None,
    );
    let rows: Vec<&str> = compact
        .lines()
        .filter_map(|l| l.split(' ').next())
        .filter(|w| w.ends_with("_ms"))
        .collect();
    assert_eq!(rows, ["ttft_ms", "e2e_ms"], "{compact}");
    let full = stdout_with_columns(
        &[
            "summary",
            "--explain",
            "--metrics",
            "tpot",
            "testdata/lab/litellm.jsonl",
        ],
        None,
    );
    assert!(full.contains("\ntpot_ms "), "{full}");
    assert!(!full.contains("\nttft_ms  "), "{full}");
    let out = run(&["summary", "--metrics", "ttft,latency"], b"");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--metrics: unknown metric \"latency\" (known: ttft, tpot, itl, e2e, queue, prefill, decode, input_tokens, cached_tokens, output_tokens, ttfot)"),
        "{err}"
    );
}

#[test]
fn by_file_groups_by_the_inputs_name() {
    let text = stdout_with_columns(
        &[
            "summary",
            "--by",
            "$file",
            "-o",
            "json",
            "testdata/samples/litellm.jsonl",
            "testdata/samples/vllm_bench_serve.jsonl",
        ],
        None,
    );
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let files: Vec<&str> = doc["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|g| g["key"]["$file"].as_str())
        .collect();
    assert!(
        files.contains(&"testdata/samples/litellm.jsonl"),
        "{files:?}"
    );
    assert!(
        files.contains(&"testdata/samples/vllm_bench_serve.jsonl"),
        "{files:?}"
    );
    // And the same read in chunks by two threads.
    let two = stdout_with_columns(
        &[
            "summary",
            "--threads",
            "2",
            "--by",
            "$file",
            "-o",
            "json",
            "testdata/lab/litellm.jsonl",
        ],
        None,
    );
    let doc: serde_json::Value = serde_json::from_str(&two).unwrap();
    assert_eq!(
        doc["groups"].as_array().unwrap().last().unwrap()["key"]["$file"],
        "testdata/lab/litellm.jsonl"
    );
}

#[test]
fn bucket_prints_a_table_of_windows() {
    let text = stdout_with_columns(
        &[
            "summary",
            "--bucket",
            "1m",
            "--map",
            "end=t:epoch_s",
            "--map",
            "ttft=ttft_ms:ms",
            "--metrics",
            "ttft",
            "testdata/windows/trap.jsonl",
        ],
        None,
    );
    assert_eq!(
        text,
        "window                requests  errors  ttft p50  ttft p99\n\
         2026-01-01T00:00:00Z        99       0     100.0     100.0\n\
         2026-01-01T00:01:00Z         1       0     900.0     900.0\n"
    );
}
