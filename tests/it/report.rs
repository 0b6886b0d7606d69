//! `tokentime report -o FILE.html`: the page of the lab log is self-contained (no URL, no
//! external script or style), embeds the documents `summary --hist -o json`, `summary --bucket
//! 1m -o json` and `diff -o json` print for the same inputs, byte for byte, and every number it
//! shows is one of theirs: each numeric cell names its number by JSON pointer and shows it as
//! the JSON writes it. The charts are there as inline SVG, by id (the screenshot script,
//! `.ci/report-screenshot`, checks that headless Chromium draws them).

use crate::common::{run, testdata};
use regex::Regex;
use serde_json::Value;
use std::path::Path;

const LAB: &str = "testdata/lab/litellm.jsonl";

/// The chart ids of a page whose log has TTFT, TPOT placed in time and prefill.
const CHARTS: [&str; 5] = [
    "chart-ttft-hist",
    "chart-tpot-inflight",
    "chart-queue-prefill",
    "chart-ttft-time",
    "chart-tpot-time",
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs tokentime in the repository root; returns its exit status, stdout and stderr.
fn tokentime(args: &[&str]) -> (i32, Vec<u8>, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tokentime"))
        .current_dir(root())
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `tokentime report ARGS -o TMP` in the repository root: its exit status and the page.
fn report(args: &[&str]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.html");
    let mut all = vec!["report", "-o", path.to_str().unwrap()];
    all.extend_from_slice(args);
    let (code, _, stderr) = tokentime(&all);
    let page = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    (code, page)
}

/// The text of the `<script>` element with `id`.
fn block<'a>(page: &'a str, id: &str) -> &'a str {
    let open = Regex::new(&format!(r#"<script type="[a-z/-]+" id="{id}">\n"#)).unwrap();
    let start = open.find(page).unwrap_or_else(|| panic!("no {id}")).end();
    let len = page[start..].find("</script>").unwrap();
    &page[start..start + len]
}

/// JSON text as the page embeds it: `<`, `>`, `&` as `\u` escapes.
fn embedded(json: &[u8]) -> String {
    String::from_utf8_lossy(json)
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// Checks every numeric cell of `page` against the documents (`summary`, `diff`): the pointer
/// names a number (or null) of its document, and the cell shows it as the JSON writes it (`-`
/// for null). Also that no other table cell holds a bare number. Returns the pointers seen,
/// by document.
fn check_cells(page: &str, docs: &[(&str, &Value)]) -> Vec<(String, String)> {
    let cell = Regex::new(
        r#"<(td|span) class="n" data-src="([a-z]+)" data-k="([^"]*)">([^<]*)</(?:td|span)>"#,
    )
    .unwrap();
    let mut seen = vec![];
    for c in cell.captures_iter(page) {
        let (src, ptr, text) = (&c[2], unescape(&c[3]), unescape(&c[4]));
        let doc = docs
            .iter()
            .find(|(n, _)| *n == src)
            .unwrap_or_else(|| panic!("cell of unknown document {src}"))
            .1;
        let v = doc
            .pointer(&ptr)
            .unwrap_or_else(|| panic!("{src}{ptr}: not in the document"));
        let want = match v {
            Value::Null => "-".to_owned(),
            Value::Number(n) => n.to_string(),
            other => panic!("{src}{ptr}: {other} is not a number"),
        };
        assert_eq!(text, want, "{src}{ptr}");
        seen.push((src.to_owned(), ptr));
    }
    // A cell without a pointer holds no number.
    let bare = Regex::new(r"<td>([^<]*)</td>").unwrap();
    for c in bare.captures_iter(page) {
        assert!(
            c[1].trim().parse::<f64>().is_err(),
            "a number with no pointer: {}",
            &c[0]
        );
    }
    seen
}

/// No URL, no external script, style or image: the page opens offline.
fn check_offline(page: &str) {
    for bad in [
        "http://",
        "https://",
        "<script src",
        "<link",
        " src=",
        "url(",
        "@import",
    ] {
        assert!(!page.contains(bad), "the page holds {bad:?}");
    }
}

#[test]
fn lab_page_is_offline_and_every_number_is_the_summarys() {
    let (code, page) = report(&[LAB]);
    assert_eq!(code, 0);
    check_offline(&page);
    for id in CHARTS {
        let svg = Regex::new(&format!(r#"<svg id="{id}"[^>]*>([\s\S]*?)</svg>"#)).unwrap();
        let body = &svg.captures(&page).unwrap_or_else(|| panic!("no {id}"))[1];
        // Drawn: bars or lines, and axis labels.
        assert!(body.contains("<rect") || body.contains("<polyline"), "{id}");
        assert!(body.contains("<text"), "{id}");
    }
    let (_, json, _) = tokentime(&["summary", "--hist", "-o", "json", LAB]);
    assert_eq!(block(&page, "tokentime-summary"), embedded(&json));
    let (_, windows, _) = tokentime(&["summary", "--bucket", "1m", "-o", "json", LAB]);
    assert!(windows.split(|&b| b == b'\n').count() > 20);
    assert_eq!(block(&page, "tokentime-windows"), embedded(&windows));
    let summary: Value = serde_json::from_slice(&json).unwrap();
    let seen = check_cells(&page, &[("summary", &summary)]);
    // The percentile table of every group, every quantile, and the coverage are on the page.
    for ptr in [
        "/coverage/requests",
        "/coverage/errors",
        "/coverage/formats/litellm",
        "/coverage/anomalies/negative_interval",
        "/groups/0/metrics/ttft_ms/quantiles/p50",
        "/groups/0/metrics/ttft_ms/quantiles/p99.9",
        "/groups/0/metrics/tpot_ms/mean",
        "/groups/0/metrics/ttft_ms/nulls/not_streamed",
        "/groups/3/metrics/e2e_ms/quantiles/p99",
        "/groups/1/metrics/prefill_ms/max",
    ] {
        assert!(
            seen.iter().any(|(s, p)| s == "summary" && p == ptr),
            "{ptr} not shown"
        );
    }
    assert!(seen.len() > 400, "{} cells", seen.len());
    assert!(!page.contains("tokentime-diff"));
    // `-o -` writes the same page to standard output.
    let (code, stdout, _) = tokentime(&["report", "-o", "-", LAB]);
    assert_eq!(code, 0);
    assert_eq!(String::from_utf8(stdout).unwrap(), page);
}

#[test]
fn slos_and_goodput_are_the_summarys() {
    let flags = [
        "--slo",
        "ttft:p99<=800ms",
        "--slo",
        "tpot:p50<=200ms@cache=hit",
        "--goodput",
        "ttft=2s,tpot=100ms",
    ];
    let mut args = flags.to_vec();
    args.push(LAB);
    let (code, page) = report(&args);
    // A broken SLO: exit status 3, as summary's.
    assert_eq!(code, 3);
    let mut sargs = vec!["summary", "--hist", "-o", "json"];
    sargs.extend_from_slice(&args);
    let (scode, json, _) = tokentime(&sargs);
    assert_eq!(scode, 3);
    assert_eq!(block(&page, "tokentime-summary"), embedded(&json));
    let summary: Value = serde_json::from_slice(&json).unwrap();
    let seen = check_cells(&page, &[("summary", &summary)]);
    for ptr in [
        "/slos/0/value",
        "/slos/1/bound",
        "/groups/0/goodput/share",
        "/groups/0/goodput/targets/ttft_ms",
        "/groups/2/goodput/output_tokens_per_s",
    ] {
        assert!(seen.iter().any(|(_, p)| p == ptr), "{ptr} not shown");
    }
    assert!(page.contains("<table id=\"slos\">") && page.contains("<table id=\"goodput\">"));
    assert!(page.contains(">BROKEN<") && page.contains(">met<"));
}

/// `--since` and `--until` cut the report's own inputs; a baseline is read whole (the span of
/// another run is a digest saved with it).
#[test]
fn a_span_is_the_reports_not_the_baselines() {
    let lab = testdata().join("lab/litellm.jsonl");
    let lab = lab.to_str().unwrap();
    let (code, page) = report(&[
        "--since",
        "2026-11-29T15:30Z",
        "--until",
        "2026-11-29T15:40Z",
        "--baseline",
        lab,
        lab,
    ]);
    assert_eq!(code, 0);
    let diff: Value = serde_json::from_str(&unescape_json(block(&page, "tokentime-diff"))).unwrap();
    assert_eq!(diff["a"]["requests"], 293);
    assert_eq!(diff["b"]["requests"], 64);
}

fn unescape_json(s: &str) -> String {
    s.replace("\\u003c", "<")
        .replace("\\u003e", ">")
        .replace("\\u0026", "&")
}

#[test]
fn baseline_comparison_is_the_diffs() {
    let dir = tempfile::tempdir().unwrap();
    // Two halves of the lab log, by line: the first the baseline.
    let text = std::fs::read_to_string(testdata().join("lab/litellm.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    std::fs::write(&a, lines[..150].join("\n") + "\n").unwrap();
    std::fs::write(&b, lines[150..].join("\n") + "\n").unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let (code, page) = report(&["--baseline", a, b]);
    assert_eq!(code, 0);
    check_offline(&page);
    let out = run(&["diff", "-o", "json", a, b], b"");
    assert_eq!(block(&page, "tokentime-diff"), embedded(&out.stdout));
    let diff: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (_, json, _) = tokentime(&["summary", "--hist", "-o", "json", b]);
    let summary: Value = serde_json::from_slice(&json).unwrap();
    let seen = check_cells(&page, &[("summary", &summary), ("diff", &diff)]);
    let rows = diff["rows"].as_array().unwrap().len();
    assert!(rows > 20);
    for i in 0..rows {
        for k in ["a/value", "b/value", "change_ms", "change_pct"] {
            let ptr = format!("/rows/{i}/{k}");
            assert!(seen.iter().any(|(s, p)| s == "diff" && *p == ptr), "{ptr}");
        }
    }
    assert!(page.contains("<table id=\"diff\">"));
    // A row whose intervals overlap is "within noise", as the text diff says (its JSON
    // verdict `same` would read as "no change" on a page).
    let same = diff["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["verdict"] == "same")
        .count();
    assert!(same > 0);
    assert_eq!(page.matches("\">within noise</td>").count(), same);
    assert!(!page.contains("\">same</td>"));
}

#[test]
fn a_log_without_requests_still_gets_a_page() {
    let (code, page) = report(&["testdata/lab/README.md"]);
    assert_eq!(code, 0);
    check_offline(&page);
    assert!(page.contains("no TTFT values"));
    // Empty states read whole: no empty brackets, no caption that starts mid-sentence.
    assert!(page.contains("queue_ms has no values;"), "{page}");
    assert!(!page.contains(" ()"));
    assert!(!page.contains("<figcaption> "));
    let (_, json, _) = tokentime(&["summary", "--hist", "-o", "json", "testdata/lab/README.md"]);
    let summary: Value = serde_json::from_slice(&json).unwrap();
    check_cells(&page, &[("summary", &summary)]);
}

/// `report -o X` where X is one of the inputs or the baseline (by canonical path, `a/../a`
/// alike) is refused with exit 2 before anything is written: the log stays as it was.
#[test]
fn report_refuses_to_overwrite_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("run.jsonl");
    let before = std::fs::read(root().join(LAB)).unwrap();
    std::fs::write(&log, &before).unwrap();
    let log_s = log.to_str().unwrap();
    let other = root().join(LAB);
    let other = other.to_str().unwrap();
    let dotted = dir
        .path()
        .join("..")
        .join(dir.path().file_name().unwrap())
        .join("run.jsonl");
    let dotted = dotted.to_str().unwrap();
    for args in [
        vec!["report", "-o", log_s, log_s],
        vec!["report", "-o", dotted, other, log_s],
        vec!["report", "-o", log_s, "--baseline", log_s, other],
    ] {
        let out = run(&args, b"");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("would overwrite it"), "{err}");
        assert_eq!(
            std::fs::read(&log).unwrap(),
            before,
            "{args:?} wrote the log"
        );
    }
}

#[test]
fn estimates_are_marked_and_no_caption_is_left_empty() {
    // vLLM's 200 requests hold more token gaps than the exact limit: ITL is estimated.
    let (code, page) = report(&["testdata/realdata/vllm083-llama70b-tp8-qps1/result.json"]);
    assert_eq!(code, 0);
    assert!(
        page.contains("<tr><td>itl_ms<span title=\"t-digest estimates\">~</span></td>"),
        "ITL row unmarked"
    );
    assert!(page.contains("<tr><td>ttft_ms</td>"), "TTFT is exact");
    assert!(page.contains("<p class=\"note\">~ marks t-digest estimates</p>"));
    assert!(page.contains("every gap between consecutive streamed chunks"));
    assert!(!page.contains("()."), "an empty parenthesis in a caption");
    assert!(
        page.contains("lines read <span"),
        "{}",
        &page[..2000.min(page.len())]
    );
}

#[test]
fn counts_of_a_log_out_of_time_order_give_no_slope_and_the_chart_says_so() {
    // The lab log newest line first: its in-flight counts are not to be read.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("reversed.jsonl");
    let text = std::fs::read_to_string(root().join(LAB)).unwrap();
    let reversed: String = text.lines().rev().map(|l| format!("{l}\n")).collect();
    std::fs::write(&log, reversed).unwrap();
    let log = log.to_str().unwrap();
    let (code, json, _) = tokentime(&["summary", "-o", "json", log]);
    assert_eq!(code, 0);
    let s: Value = serde_json::from_slice(&json).unwrap();
    let t = &s["groups"][0]["analysis"]["tpot_by_in_flight"];
    assert!(t["late"].as_u64().unwrap() > 100, "{t}");
    assert_eq!(t["slope_ms_per_request"], Value::Null);
    assert_eq!(t["slope_share_per_request"], Value::Null);
    let (_, page) = report(&[log]);
    assert!(
        page.contains("<figcaption><strong>the in-flight counts are unreliable"),
        "no warning on the chart"
    );
}

/// The texts of the chart `id` (its axes' ticks and titles, its legend).
fn chart_texts(page: &str, id: &str) -> Vec<String> {
    let start = page
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no {id}"));
    let end = start + page[start..].find("</svg>").unwrap();
    Regex::new(r"<text[^>]*>([^<]*)</text>")
        .unwrap()
        .captures_iter(&page[start..end])
        .map(|c| c[1].trim().to_owned())
        .collect()
}

/// Under `--by`, the TTFT histogram stacks the groups keyed by the cache alone, not also those
/// keyed by the cache and the `--by` keys, which hold the same requests: its bars are as high
/// as without `--by` (the same ticks), a series per cache class, not per class and model.
#[test]
fn the_ttft_histogram_counts_each_request_once_under_by() {
    let (_, plain) = report(&[LAB]);
    let (_, by) = report(&["--by", "model", LAB]);
    let ticks = |texts: Vec<String>| -> Vec<String> {
        texts
            .into_iter()
            .filter(|t| t.parse::<u32>().is_ok())
            .collect()
    };
    let by_texts = chart_texts(&by, "chart-ttft-hist");
    assert_eq!(
        ticks(by_texts.clone()),
        ticks(chart_texts(&plain, "chart-ttft-hist"))
    );
    let series: Vec<&String> = by_texts.iter().filter(|t| t.contains("cache=")).collect();
    assert_eq!(series, ["cache=unknown"], "{by_texts:?}");
}

/// An empty input is not wrong: the page is written, and nothing is said of formats.
#[test]
fn an_empty_input_gets_no_advice_about_formats() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, b"").unwrap();
    let page = dir.path().join("r.html");
    let (code, _, stderr) = tokentime(&[
        "report",
        "-o",
        page.to_str().unwrap(),
        empty.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stderr, "");
    assert!(page.exists());
}

/// The page's header counts the requests and errors the tables count: a log read twice has
/// its copies set aside as duplicates, and the header says so (Helicone's sample: 4 requests,
/// 1 error; read twice, 8 lines).
#[test]
fn report_header_counts_what_the_tables_count() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("twice.jsonl");
    let once = std::fs::read(root().join("testdata/samples/helicone.jsonl")).unwrap();
    std::fs::write(&log, [once.clone(), once].concat()).unwrap();
    let (code, page) = report(&[log.to_str().unwrap()]);
    assert_eq!(code, 0);
    let header = Regex::new(r"<p>requests .*</p>").unwrap();
    let text = Regex::new("<[^>]*>")
        .unwrap()
        .replace_all(header.find(&page).unwrap().as_str(), "")
        .into_owned();
    assert_eq!(
        text,
        "requests 4, errors 1, lines read 8, duplicates set aside 4"
    );
    // Group headings count in words that agree with their numbers.
    let tags = Regex::new("<[^>]*>").unwrap();
    let headings: Vec<String> = Regex::new("<h3>.*?</h3>")
        .unwrap()
        .find_iter(&page)
        .map(|m| tags.replace_all(m.as_str(), "").into_owned())
        .collect();
    assert!(
        headings.contains(&"all requests: 4 requests, 1 error".to_owned()),
        "{headings:?}"
    );
    assert!(
        headings.contains(&"cache=hit: 1 request, 0 errors".to_owned()),
        "{headings:?}"
    );
}

/// A benchmark's result file of durations has no time a request ended at: the charts over log
/// time say so, not that there were no TTFT values.
#[test]
fn charts_over_time_say_why_a_file_of_durations_has_no_window() {
    let (_, page) = report(&["testdata/realdata/vllm083-llama70b-tp8-qps1/result.json"]);
    assert!(
        page.contains("no window: no request has a time it ended at to place it in one"),
        "no reason for the empty chart"
    );
    assert!(!page.contains("no TTFT values in any window"));
}

/// The page says what TTFT was measured from, as the values' origins are: a gateway's call
/// start (LiteLLM), the server's arrival (vLLM), its schedule (llama.cpp's prompt time, the
/// queue left out), or a mix of them, counted; in the percentile table and under the TTFT
/// histogram alike.
#[test]
fn ttft_is_defined_from_where_it_was_measured() {
    let cases = [
        (
            &[LAB][..],
            "first token − the call's start at the gateway or client, network and the server's \
             queue included",
        ),
        (
            &["testdata/samples/vllm_response_metrics.jsonl"][..],
            "first token − arrival",
        ),
        (
            &["testdata/samples/llamacpp.jsonl"][..],
            "first token − scheduled, the server's prefill: its queue time left out",
        ),
        (
            &[
                "testdata/samples/llamacpp.jsonl",
                "testdata/samples/vllm_response_metrics.jsonl",
            ][..],
            "first token − arrival or scheduled: mixed origins (arrival 3, scheduled 4), compare \
             like with like",
        ),
    ];
    for (inputs, words) in cases {
        let (_, page) = report(inputs);
        // The table's definition, and the histogram's caption.
        assert!(
            page.contains(&format!("time to first token: {words}"))
                && page.contains(&format!("time to first token ({words})")),
            "{inputs:?}: {words}"
        );
    }
}

/// A page written to a pipe its reader closes early (`| head`) keeps the exit status of the
/// SLOs, as summary's output does: a broken one is 3, whatever happened to the page.
#[test]
fn a_broken_slo_is_exit_3_through_a_closed_pipe() {
    for command in ["report -o -", "summary --explain"] {
        let cmd = format!(
            "'{}' {command} --slo 'ttft:p99<=800ms' {LAB} | head -c 1 >/dev/null",
            env!("CARGO_BIN_EXE_tokentime")
        );
        let out = std::process::Command::new("bash")
            .current_dir(root())
            .args(["-o", "pipefail", "-c", &cmd])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{command}: {err}");
        assert!(
            err.contains("SLO ttft:p99<=800ms BROKEN"),
            "{command}: {err}"
        );
    }
}
