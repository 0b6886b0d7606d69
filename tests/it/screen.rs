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
        first.starts_with("293 requests from 2026-11-29T15:08:47Z to 15:54:57Z (46m11s)"),
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
    // The failures' reasons and the slowest requests, ids whole, as in JSON.
    assert!(
        full.contains(
            "\nerrors by reason: InternalServerError 4, Timeout 4, ContextWindowExceededError 1\n"
        ),
        "{full}"
    );
    assert!(
        full.contains(
            "\nslowest: lab-67a229e3ac12b7ba6c69 (224.9s), lab-e9297c935758651b42e3 (211.3s),"
        ),
        "{full}"
    );
    assert_eq!(full.lines().count(), 72);
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
    // With another output it is refused, and the message says so and what to do.
    let out = run(&["summary", "-o", "csv", "--metrics", "e2e"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--metrics: works only with the text table (no -o)")
            && err.contains("drop --metrics"),
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

/// The lines of the first table of a compact report: from its `metric  n` header to the line
/// before the token counts.
fn first_table(text: &str) -> Vec<&str> {
    text.lines()
        .skip_while(|l| !l.starts_with("metric "))
        .take_while(|l| !l.starts_with("tokens ") && !l.starts_with("left out"))
        .collect()
}

#[test]
fn the_compact_table_follows_the_chosen_quantiles() {
    // 1,459 requests, 1,115 with a TTFT: p99.9 can be read for the group; its cache classes
    // (771 hits, 621 misses) are under 1,000, so theirs are the first and the last chosen
    // below p99.9.
    let args = [
        "summary",
        "--quantiles",
        "25,75,99.9",
        "testdata/analysis/bimodal.jsonl.gz",
    ];
    let text = stdout_with_columns(&args, None);
    let table = first_table(&text);
    let header: Vec<&str> = table[0].split_whitespace().collect();
    assert_eq!(
        header[..5],
        ["metric", "n", "p25", "p75", "p99.9"],
        "{text}"
    );
    assert!(header.len() > 5, "no cache class shown:\n{text}");
    for pair in header[5..].chunks(2) {
        assert_eq!(pair, ["p25", "p75"], "{text}");
    }
    assert!(widest(&text) <= 100, "{text}");
    // The classes show a subset, and the line above the table says so.
    assert!(text.contains("cache columns: p25 and p75 only"), "{text}");
}

#[test]
fn findings_do_not_follow_the_chosen_quantiles() {
    let findings = |quantiles: Option<&str>| -> Vec<String> {
        let mut args = vec!["summary"];
        if let Some(q) = quantiles {
            args.extend(["--quantiles", q]);
        }
        args.push("testdata/lab/litellm.jsonl");
        let text = stdout_with_columns(&args, None);
        text.lines()
            .filter(|l| l.starts_with("* "))
            .map(str::to_owned)
            .collect()
    };
    let default = findings(None);
    // Among them, the prompt finding that reads the input-token buckets' p50.
    assert!(
        default
            .iter()
            .any(|f| f.contains("TTFT grows with the prompt")),
        "{default:?}"
    );
    for q in ["90,99", "50,90,99,99.9", "10"] {
        assert_eq!(findings(Some(q)), default, "--quantiles {q}");
    }
}

#[test]
fn columns_left_out_for_the_width_are_named() {
    // At 80 columns the lab log's cache=hit pair does not fit: a marker names it.
    let text = stdout_with_columns(&["summary", "testdata/lab/litellm.jsonl"], Some("80"));
    assert!(widest(&text) <= 80, "{text}");
    assert!(!text.contains("cache=hit "), "{text}");
    let marker: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("left out at 80 columns"))
        .take(2)
        .collect();
    let marker = marker.join(" ");
    assert!(marker.contains("cache=hit"), "{text}");
    assert!(marker.contains("--explain"), "{text}");
    // At 100 every class fits: no marker.
    let text = stdout_with_columns(&["summary", "testdata/lab/litellm.jsonl"], Some("100"));
    assert!(text.contains("cache=hit"), "{text}");
    assert!(!text.contains("left out"), "{text}");
}

/// A cache class with no values in the table (Kong's response-cache hit: one request, no
/// timing) is left out before one with values, though it has as many requests.
#[test]
fn a_class_of_dashes_goes_before_one_with_values() {
    let args = ["summary", "testdata/samples/kong.jsonl"];
    let wide = stdout_with_columns(&args, Some("100"));
    assert!(wide.contains("cache=hit    cache=response"), "{wide}");
    let text = stdout_with_columns(&args, Some("80"));
    assert!(widest(&text) <= 80, "{text}");
    assert!(text.contains("cache=hit     cache=unknown"), "{text}");
    assert!(
        text.contains("e2e_ms     3  2670.0  2833.2  2869.9    2874.0"),
        "{text}"
    );
    assert!(
        text.contains("left out at 80 columns: cache=response;"),
        "{text}"
    );
}

#[test]
fn load_is_a_candidate_split_of_a_bimodal_ttft() {
    // The lab log ran at 1, 2, 4 and 8 concurrent requests. Its TTFT has modes at 905.9 ms
    // and 33.6 s (antimode 6073.9 ms). Of the 164 requests with a TTFT and a TPOT, by requests
    // in flight during their decode (the TPOT-under-load buckets), counted by hand from the
    // enriched rows (fast, slow): 1 (32, 10), 2 (24, 10), 3-4 (28, 16), 5-8 (4, 40). So
    // 124 of 164 (76%) sit in their bucket's mode, more than the input-token split's 72%, and
    // 40 of 44 (91%) at 5-8 in flight are in the slow mode; below the 90% overall that
    // "explains" needs (long prompts are slow at any load: 10 of 42 alone).
    let text = stdout_with_columns(&["summary", "testdata/lab/litellm.jsonl"], Some("200"));
    let ttft = text
        .lines()
        .find(|l| l.starts_with("* TTFT is bimodal"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        ttft.ends_with(
            "no split explains it (best: by requests in flight, 76%; 5-8 91% in mode 2)"
        ),
        "{ttft}"
    );
    // The same from a digest file merged back.
    let dir = tempfile::tempdir().unwrap();
    let digest = dir.path().join("lab.digest");
    let digest = digest.to_str().unwrap();
    stdout_with_columns(
        &[
            "summary",
            "--save-digest",
            digest,
            "testdata/lab/litellm.jsonl",
        ],
        None,
    );
    let merged = stdout_with_columns(&["merge", digest], Some("200"));
    assert!(merged.contains(ttft), "{merged}");
}

#[test]
fn headline_durations_carry_their_units() {
    // Each quantile of the chat and agent lines says its unit: seconds from 10 s, else ms.
    let text = stdout_with_columns(&["summary", "testdata/lab/litellm.jsonl"], Some("200"));
    let chat = text.lines().find(|l| l.starts_with("chat:")).unwrap();
    assert!(
        chat.starts_with("chat:  TTFT p50 3251.7ms, p90 60.6s, p99 115.1s;"),
        "{chat}"
    );
    for line in text
        .lines()
        .filter(|l| l.starts_with("chat:") || l.starts_with("agent:"))
    {
        let words: Vec<&str> = line.split_whitespace().collect();
        for w in words.windows(2) {
            if w[0].starts_with('p') && w[0][1..].parse::<f64>().is_ok() {
                let v = w[1].trim_end_matches([',', ';']);
                assert!(v.ends_with("ms") || v.ends_with('s'), "{v} in {line}");
            }
        }
    }
}

#[test]
fn quantiles_asked_for_are_columns_even_when_few_values_fill_them() {
    // Fewer than 1,000 values: the p99.9 column is there, blank in each row.
    let text = stdout_with_columns(
        &[
            "summary",
            "--quantiles",
            "50,99.9",
            "testdata/lab/litellm.jsonl",
        ],
        None,
    );
    let header = text
        .lines()
        .find(|l| l.starts_with("metric "))
        .expect("a metric header");
    assert!(header.contains("p50") && header.contains("p99.9"), "{text}");
    // Only p99.9, which no cache class has the values for: no class columns, and no line
    // announcing them.
    let text = stdout_with_columns(
        &[
            "summary",
            "--quantiles",
            "99.9",
            "testdata/analysis/bimodal.jsonl.gz",
        ],
        None,
    );
    assert!(!text.contains("cache columns"), "{text}");
    assert!(text.contains("p99.9"), "{text}");
}

#[test]
fn a_trend_with_the_prompt_needs_more_than_one_request_at_its_end() {
    // Five requests of ~100 input tokens at 100 ms, five of ~700 at 120 ms, one of 5000 at
    // 900 ms: no trend (1.2x between the buckets that hold a few requests).
    let mut log = String::new();
    let mut add = |i: usize, tokens: u64, ttft_ms: u64| {
        log.push_str(&format!(
            "{{\"t0\":{},\"ttft\":{ttft_ms},\"e2e\":2000,\"in\":{tokens},\"out\":50}}\n",
            1_787_334_700 + 10 * i
        ));
    };
    for i in 0..5 {
        add(i, 100, 100);
        add(i + 5, 700, 120);
    }
    add(10, 5000, 900);
    std::fs::write(
        std::env::temp_dir().join("tokentime-prompt-trend.jsonl"),
        &log,
    )
    .unwrap();
    let path = std::env::temp_dir().join("tokentime-prompt-trend.jsonl");
    let text = stdout_with_columns(
        &[
            "summary",
            "--map",
            "arrival=t0:epoch_s",
            "--map",
            "ttft=ttft:ms",
            "--map",
            "e2e=e2e:ms",
            "--map",
            "input_tokens=in",
            "--map",
            "output_tokens=out",
            path.to_str().unwrap(),
        ],
        None,
    );
    assert!(!text.contains("TTFT grows with the prompt"), "{text}");
}

#[test]
fn explain_says_a_group_of_every_request_is_the_table_of_all_requests() {
    // Two requests, no cache signal: one class, cache=unknown, holds both.
    let log = "{\"t0\":1787334700,\"t2\":1787334701}\n{\"t0\":1787334702,\"t2\":1787334704}\n";
    let out = summary_t0_t2(&["--explain"], log.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("\ncache=unknown: all 2 requests (the same as all requests)\n"),
        "{text}"
    );
    assert_eq!(text.matches("\ne2e_ms ").count(), 1, "{text}");
}

#[test]
fn explain_writes_no_table_header_over_no_row() {
    // One request, failed: no metric has a value.
    let log = "{\"t0\":1787334700,\"t2\":1787334701,\"err\":\"x\"}\n";
    let out = summary_t0_t2(&["--explain", "--map", "error_when=err"], log.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("all requests: 1 request, 1 error (100.0%)\nno values: ttft_ms (error 1)"),
        "{text}"
    );
    assert!(!text.contains("\nmetric "), "{text}");
}

#[test]
fn explain_says_a_by_group_of_one_cache_class_is_the_table_of_that_class() {
    // The lab's LiteLLM log: one model, three cache classes.
    let log = testdata().join("lab/litellm.jsonl");
    let out = run_ok(
        &[
            "summary",
            "--explain",
            "--by",
            "model",
            log.to_str().unwrap(),
        ],
        b"",
    );
    let text = String::from_utf8(out).unwrap();
    for line in [
        "model=smollm2-135m-instruct-q4_1: all 293 requests (the same as all requests)",
        "model=smollm2-135m-instruct-q4_1 cache=hit: all 27 requests (the same as cache=hit)",
        "model=smollm2-135m-instruct-q4_1 cache=partial: all 80 requests (the same as cache=partial)",
    ] {
        assert!(text.contains(&format!("\n{line}\n")), "{line}\n{text}");
    }
}

/// The headline's percentiles say when they are t-digest estimates, as the tables' `~` does:
/// past `--exact-limit` values; and the last line says what `~` means only then.
#[test]
fn the_headline_marks_estimates() {
    let lab = testdata().join("lab/litellm.jsonl");
    let lab = lab.to_str().unwrap();
    let exact = String::from_utf8(run_ok(&["summary", lab], b"")).unwrap();
    assert!(exact.contains("\nchat:  TTFT p50 "), "{exact}");
    assert!(exact.contains("\nagent: E2E p50 "), "{exact}");
    assert!(
        exact.contains("; 39% decode slower than reading"),
        "{exact}"
    );
    let estimated =
        String::from_utf8(run_ok(&["summary", "--exact-limit", "10", lab], b"")).unwrap();
    // 177 TTFTs, at most 256 distinct values: still exact (counted); 284 E2Es are not.
    assert!(estimated.contains("\nchat:  TTFT p50 "), "{estimated}");
    assert!(estimated.contains("\nagent: E2E~ p50 "), "{estimated}");
    // The share of TPOTs above the reading speed is read from their t-digest too.
    assert!(
        estimated.contains("; ~39% decode slower than reading"),
        "{estimated}"
    );
    // The last line says what `~` means only when some value has it.
    let legend = "; ~ marks t-digest estimates; ";
    assert!(estimated.contains(legend), "{estimated}");
    assert!(!exact.contains(legend) && !exact.contains('~'), "{exact}");
    assert!(
        exact.ends_with("\ndurations in ms, from 10 s in s; --explain: the full report\n"),
        "{exact}"
    );
    let explained = String::from_utf8(run_ok(
        &["summary", "--explain", "--exact-limit", "10", lab],
        b"",
    ))
    .unwrap();
    assert!(
        explained.contains("for agents (E2E first): e2e_ms~ p50 "),
        "{explained}"
    );
    assert!(
        explained.contains("; ~39.4% of 264 requests decode slower than reading speed"),
        "{explained}"
    );
}

/// `diff` fits 80 columns: the lab log's first 59 lines against its last 88, whose rows hold
/// five- and six-digit values and the verdict of too few samples.
#[test]
fn diff_fits_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(testdata().join("lab/litellm.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    std::fs::write(&a, lines[..59].join("\n") + "\n").unwrap();
    std::fs::write(&b, lines[lines.len() - 88..].join("\n") + "\n").unwrap();
    let out = stdout_with_columns(
        &["diff", a.to_str().unwrap(), b.to_str().unwrap()],
        Some("80"),
    );
    assert!(out.contains("n/a (too few)"), "{out}");
    assert!(widest(&out) <= 80, "{out}");
}

/// The `--bucket` table fits an 80-column terminal: window starts without the year and the
/// zone, `reqs` and `errs`; at the default width (a pipe), the full layout.
#[test]
fn the_bucket_table_fits_80_columns() {
    let args = ["summary", "--bucket", "5m", "testdata/lab/litellm.jsonl"];
    let narrow = stdout_with_columns(&args, Some("80"));
    assert!(widest(&narrow) <= 80, "wider than 80 columns:\n{narrow}");
    let lines: Vec<&str> = narrow.lines().take(2).collect();
    assert_eq!(
        lines,
        [
            "window       reqs errs ttft p50 ttft p99 tpot p50 tpot p99  e2e p50  e2e p99",
            "11-29 15:05     4    0    17.2s    29.9s   29.758   37.505    19.1s    30.5s",
        ]
    );
    let wide = stdout_with_columns(&args, None);
    assert!(
        wide.lines()
            .nth(1)
            .unwrap()
            .starts_with("2026-11-29T15:05:00Z         4"),
        "{wide}"
    );
}

/// Token counts past `--exact-limit` distinct values are t-digest estimates too: the tokens
/// line marks them `~` after their name, and the last line then says what `~` means, even
/// when every latency is exact.
#[test]
fn the_tokens_line_marks_estimates() {
    let lines: String = (0..300u32)
        .map(|i| {
            format!(
                "{{\"id\": \"r{i}\", \"call_type\": \"acompletion\", \"status\": \"success\", \
                 \"stream\": true, \"model\": \"m\", \"startTime\": {t}.0, \
                 \"completionStartTime\": {t}.25, \"endTime\": {t}.5, \"prompt_tokens\": {p}, \
                 \"completion_tokens\": 10}}\n",
                t = 1_700_000_000 + i,
                p = 1 + i * 7,
            )
        })
        .collect();
    let text = String::from_utf8(run_ok(
        &["summary", "--exact-limit", "100"],
        lines.as_bytes(),
    ))
    .unwrap();
    let tokens = text.lines().find(|l| l.starts_with("tokens p50")).unwrap();
    assert!(tokens.starts_with("tokens p50 (p99): input~ "), "{text}");
    assert!(tokens.contains(", output 10 (10)"), "{text}");
    assert!(
        !text.contains("ttft_ms~") && !text.contains("TTFT~"),
        "{text}"
    );
    assert!(text.contains("; ~ marks t-digest estimates; "), "{text}");
}
