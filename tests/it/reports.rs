//! Summaries as reports: `--bucket` windows of log time, SLOs and goodput with their exit
//! status, CSV/TSV/Prometheus renderings, and digest files merged across runs.

use crate::common::*;
use serde_json::Value;
use std::fmt::Write as _;

/// The `--map` flags of the synthetic in-house format the tests write.
const MAP: [&str; 8] = [
    "--map",
    "arrival=t0:epoch_ms",
    "--map",
    "first_token=t1:epoch_ms",
    "--map",
    "end=t2:epoch_ms",
    "--map",
    "output_tokens=n",
];

/// A request that ended at `end_ms` (epoch ms) with this TTFT, 11 output tokens and a decode
/// of `10 * tpot_ms`.
fn request(end_ms: u64, ttft_ms: f64, tpot_ms: f64) -> String {
    let decode = 10.0 * tpot_ms;
    let t0 = end_ms as f64 - decode - ttft_ms;
    format!(
        "{{\"t0\":{t0},\"t1\":{},\"t2\":{end_ms},\"n\":11}}\n",
        t0 + ttft_ms
    )
}

fn args<'a>(head: &[&'a str]) -> Vec<&'a str> {
    head.iter().copied().chain(MAP).collect()
}

fn json_lines(out: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// 2026-01-01T00:00:00Z in epoch ms.
const T: u64 = 1_767_225_600_000;

#[test]
fn bucket_percentiles_come_from_each_windows_digest_not_from_averaging() {
    // The averaging trap: minute 0 holds 99 requests with TTFT 100 ms, minute 1 one request
    // with 900 ms. The window p50s are 100 and 900; their mean, 500, is nobody's TTFT: the
    // true p50 over both minutes is 100.
    let mut log = String::new();
    for i in 0..99 {
        log.push_str(&request(T + 1_000 + i * 500, 100.0, 20.0));
    }
    log.push_str(&request(T + 60_000 + 30_000, 900.0, 20.0));
    let out = run_ok(
        &args(&["summary", "-o", "json", "--bucket", "1m"]),
        log.as_bytes(),
    );
    let all: Vec<Value> = json_lines(&out)
        .into_iter()
        .filter(|l| l["key"] == serde_json::json!({}))
        .collect();
    assert_eq!(
        all.len(),
        2,
        "one line per window for the all-requests group"
    );
    assert_eq!(all[0]["schema"], "tokentime.bucket/v1");
    assert_eq!(all[0]["start"], "2026-01-01T00:00:00.000Z");
    assert_eq!(all[0]["end"], "2026-01-01T00:01:00.000Z");
    assert_eq!(all[1]["start"], "2026-01-01T00:01:00.000Z");
    assert_eq!(all[0]["requests"], 99);
    assert_eq!(all[1]["requests"], 1);
    let p50 = |v: &Value| {
        v["metrics"]["ttft_ms"]["quantiles"]["p50"]
            .as_f64()
            .unwrap()
    };
    assert_eq!((p50(&all[0]), p50(&all[1])), (100.0, 900.0));
    assert_eq!((p50(&all[0]) + p50(&all[1])) / 2.0, 500.0, "the trap");
    let whole: Value =
        serde_json::from_slice(&run_ok(&args(&["summary", "-o", "json"]), log.as_bytes())).unwrap();
    assert_eq!(
        whole["groups"][0]["metrics"]["ttft_ms"]["quantiles"]["p50"],
        100.0
    );
    // p99 of minute 0 is 100 too, and the windows carry every group, in time order.
    assert_eq!(
        all[0]["metrics"]["ttft_ms"]["quantiles"]["p99"].as_f64(),
        Some(100.0)
    );
    let starts: Vec<String> = json_lines(&out)
        .iter()
        .map(|l| l["start"].as_str().unwrap().to_owned())
        .collect();
    let mut sorted = starts.clone();
    sorted.sort();
    assert_eq!(starts, sorted);
}

fn slo_log() -> String {
    // TTFTs 100, 200, ..., 1000 ms; TPOT 10 ms for all but the last (60 ms).
    let mut log = String::new();
    for i in 1..=10u64 {
        let tpot = if i == 10 { 60.0 } else { 10.0 };
        log.push_str(&request(T + i * 10_000, i as f64 * 100.0, tpot));
    }
    log
}

#[test]
fn slo_met_exits_0_and_broken_exits_3_with_a_verdict_per_slo() {
    let log = slo_log();
    // p90 of 100..1000 (type 7) = 100 + 0.9 * 9 * 100 = 910 ms.
    let ok = run(
        &args(&[
            "summary",
            "--slo",
            "ttft:p90<=910ms",
            "--slo",
            "tpot:p50<=10ms",
        ]),
        log.as_bytes(),
    );
    let err = String::from_utf8_lossy(&ok.stderr);
    assert_eq!(ok.status.code(), Some(0), "{err}");
    assert_eq!(err.lines().count(), 2, "{err}");
    assert!(err.contains("SLO ttft:p90<=910ms met: p90 910.0 ms <= 910 ms (10 values)"));
    let bad = run(
        &args(&[
            "summary",
            "--slo",
            "ttft:p90<=909ms",
            "--slo",
            "tpot:p50<=10ms",
        ]),
        log.as_bytes(),
    );
    let err = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(3), "{err}");
    assert!(err.contains("SLO ttft:p90<=909ms BROKEN: p90 910.0 ms > 909 ms"));
    assert!(err.contains("SLO tpot:p50<=10ms met"));
    // A group no request was in: the SLO is not judged (exit 2), as for a group the summary
    // does not build (tests/it/mistakes.rs has a group with requests but no values: broken).
    let none = run(
        &args(&["summary", "--slo", "ttft:p99<=1s@cache=miss"]),
        log.as_bytes(),
    );
    assert_eq!(none.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&none.stderr)
            .contains("not judged: no request was in group cache=miss")
    );
    // An SLO on a group the summary does not build is a usage error.
    assert_eq!(
        run(&args(&["summary", "--slo", "ttft:p99<=1s@model=x"]), b"")
            .status
            .code(),
        Some(2)
    );
    // The JSON summary carries the verdicts.
    let j: Value = serde_json::from_slice(
        &run(
            &args(&["summary", "-o", "json", "--slo", "ttft:p90<=909ms"]),
            log.as_bytes(),
        )
        .stdout,
    )
    .unwrap();
    assert_eq!(j["slos"][0]["met"], false);
    assert_eq!(j["slos"][0]["value"], 910.0);
    assert_eq!(j["slos"][0]["exact"], true);
}

/// A verdict judged on a t-digest estimate (past `--exact-limit` values) says so: its value
/// marked `~`, the limit that makes it exact, and `exact: false` in JSON.
#[test]
fn an_slo_judged_on_an_estimate_says_so() {
    // 3000 TTFTs: past a limit of 100 values, more than a t-digest's centroids.
    let log: String = (1..=3000u64)
        .map(|i| request(T + i * 10_000, (i % 1000) as f64 + 1.0, 10.0))
        .collect();
    let run_slo = |extra: &[&str]| {
        let mut a = vec!["summary", "--slo", "ttft:p90<=2s", "--exact-limit", "100"];
        a.extend_from_slice(extra);
        run(&args(&a), log.as_bytes())
    };
    let out = run_slo(&[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("SLO ttft:p90<=2s met: p90 ~")
            && err.contains(" ms <= 2000 ms (3000 values; ~: a t-digest estimate, exact with --exact-limit 3000)"),
        "{err}"
    );
    let j: Value = serde_json::from_slice(&run_slo(&["-o", "json"]).stdout).unwrap();
    assert_eq!(j["slos"][0]["exact"], false);
}

/// The goodput share prints with 5 decimals as written (93 of 293 lab requests met the target:
/// 0.31741), not as the nearest double of a percentage divided by 100 (0.31740999999999997).
#[test]
fn goodput_share_prints_as_rounded() {
    let lab = testdata().join("lab/litellm.jsonl");
    let out = run_ok(
        &[
            "summary",
            "-o",
            "json",
            "--goodput",
            "ttft=5s",
            lab.to_str().unwrap(),
        ],
        b"",
    );
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("0.31741,"), "{text}");
    assert!(!text.contains("0.3174099"), "{text}");
}

#[test]
fn goodput_counts_requests_meeting_every_target_over_the_log_span() {
    let log = slo_log();
    // ttft <= 500ms: requests 1..5; tpot <= 50ms: all but the 10th. Both: 5 of 10.
    let j: Value = serde_json::from_slice(&run_ok(
        &args(&["summary", "-o", "json", "--goodput", "ttft=500ms,tpot=50ms"]),
        log.as_bytes(),
    ))
    .unwrap();
    let g = &j["groups"][0]["goodput"];
    assert_eq!(g["met"], 5);
    assert_eq!(g["missed"], 5);
    assert_eq!(g["share"], 0.5);
    // Span: first start (end 10 s - 100 ms TTFT - 100 ms decode = 9.8 s) to last end (100 s).
    assert_eq!(g["span_s"], 90.2);
    // To 6 significant digits: 5 / 90.2 = 0.05543237..., 55 / 90.2 = 0.60975609...
    assert_eq!(g["requests_per_s"], 0.0554324);
    assert_eq!(g["output_tokens_per_s"], 0.609756);
    assert_eq!(g["targets"]["ttft_ms"], 500.0);
    let table = String::from_utf8(run_ok(
        &args(&["summary", "--explain", "--goodput", "tpot=50ms,ttft=500ms"]),
        log.as_bytes(),
    ))
    .unwrap();
    assert!(
        table.contains("goodput ttft=500ms,tpot=50ms: 5 of 10 requests (50.0%); 0.055 requests/s, 0.61 output tokens/s over 90.2 s"),
        "{table}"
    );
}

#[test]
fn goodput_rates_of_a_long_span_are_per_day_not_zero() {
    // Three good requests a day apart: 3 over 172800.2 s is 1.74e-5 a second (0 to 3
    // decimals), 1.50 a day; 33 output tokens, 16.5 a day.
    let day_ms = 86_400_000;
    let log = [0, 1, 2]
        .map(|d| request(1_767_225_600_000 + d * day_ms, 100.0, 10.0))
        .concat();
    let table = String::from_utf8(run_ok(
        &args(&["summary", "--explain", "--goodput", "ttft=500ms"]),
        log.as_bytes(),
    ))
    .unwrap();
    assert!(
        table.contains("goodput ttft=500ms: 3 of 3 requests (100.0%); 1.50 requests/day, 16.5 output tokens/day over 172800.2 s"),
        "{table}"
    );
}

#[test]
fn prometheus_output_is_accepted_by_an_exposition_format_parser() {
    let input = std::fs::read(testdata().join("samples/vllm_response_metrics.jsonl")).unwrap();
    let out = run_ok(
        &[
            "summary",
            "-o",
            "prometheus",
            "--by",
            "model",
            "--goodput",
            "ttft=1s",
            "--slo",
            "ttft:p99<=1s",
        ],
        &input,
    );
    let text = String::from_utf8(out).unwrap();
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).unwrap();
    let ttft: Vec<_> = scrape
        .samples
        .iter()
        .filter(|s| s.metric == "tokentime_ttft_seconds" && s.labels.is_empty())
        .collect();
    assert_eq!(ttft.len(), 1, "quantiles of one summary are one sample");
    match &ttft[0].value {
        prometheus_parse::Value::Summary(qs) => {
            let p50 = qs.iter().find(|q| q.quantile == 0.5).unwrap();
            assert_eq!(p50.count, 0.0221, "22.1 ms in seconds");
        }
        other => panic!("not a summary: {other:?}"),
    }
    let hit = scrape
        .samples
        .iter()
        .find(|s| s.metric == "tokentime_requests" && s.labels.get("cache") == Some("hit"))
        .unwrap();
    assert!(matches!(hit.value, prometheus_parse::Value::Gauge(v) if v == 2.0));
    assert!(scrape.docs.contains_key("tokentime_ttft_seconds"));
    assert!(text.contains("tokentime_slo_met{slo=\"ttft:p99<=1s\"} 1"));
    // Every sample line is NAME{LABELS} VALUE with a valid name, and each family's samples
    // are contiguous (the exposition format's rules the textfile collector enforces).
    let mut seen = std::collections::HashSet::new();
    let mut current = String::new();
    for l in text.lines().filter(|l| !l.starts_with('#')) {
        let name: String = l
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let family = name
            .trim_end_matches("_sum")
            .trim_end_matches("_count")
            .trim_end_matches("_bucket")
            .to_owned();
        if family != current {
            assert!(seen.insert(family.clone()), "{family} is split");
            current = family;
        }
        let value = l.rsplit(' ').next().unwrap();
        assert!(value.parse::<f64>().is_ok() || value == "NaN", "{l}");
    }
    // promtool, when installed, is the reference linter.
    if let Ok(mut child) = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
    {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let msg = String::from_utf8_lossy(&out.stderr).to_string()
            + &String::from_utf8_lossy(&out.stdout);
        assert!(
            !msg.contains("error") && !msg.contains("parsing"),
            "promtool: {msg}"
        );
    }
}

#[test]
fn csv_and_tsv_summaries_have_a_record_per_group_and_metric() {
    let input = std::fs::read(testdata().join("samples/vllm_response_metrics.jsonl")).unwrap();
    let csv = String::from_utf8(run_ok(&["summary", "-o", "csv"], &input)).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(
        rows[0],
        "group,cache,requests,errors,metric,count,exact,min,p50,p90,p95,p99,p99.9,max,mean,nulls"
    );
    // 4 groups (all, hit, miss, unknown) x 10 metrics.
    assert_eq!(rows.len(), 1 + 4 * 10);
    assert_eq!(
        rows[1],
        // The n=2 completion (metrics null, usage kept) is an openai-usage request: 5.
        "all,,5,1,ttft_ms,3,true,14.5,22.1,403.7,451.4,489.56,498.146,499.1,178.567,not_logged 1;error 1"
    );
    let caches: std::collections::BTreeSet<&str> = rows[1..]
        .iter()
        .map(|r| r.split(',').nth(1).unwrap())
        .collect();
    assert_eq!(
        caches.into_iter().collect::<Vec<_>>(),
        ["", "hit", "miss", "unknown"]
    );
    let tsv = String::from_utf8(run_ok(&["summary", "-o", "tsv"], &input)).unwrap();
    assert_eq!(tsv.replace('\t', ","), csv);
    // With --by, a column per key before `cache`, empty where the group is not split by it; the
    // same columns when no request was read (a live interval's document).
    let by = String::from_utf8(run_ok(
        &["summary", "-o", "csv", "--by", "model", "--quantiles", "50"],
        &input,
    ))
    .unwrap();
    // (The sample's model names hold no comma or quote: a plain split reads the cells.)
    let mut rows = by.lines().map(|l| l.split(',').collect::<Vec<_>>());
    let header = rows.next().unwrap();
    assert_eq!(
        header[..5],
        ["group", "model", "cache", "requests", "errors"]
    );
    for r in rows {
        let group = r[0];
        let want_model = group
            .split(' ')
            .find_map(|kv| kv.strip_prefix("model="))
            .unwrap_or("");
        let want_cache = group
            .split(' ')
            .find_map(|kv| kv.strip_prefix("cache="))
            .unwrap_or("");
        assert_eq!((r[1], r[2]), (want_model, want_cache), "{group}");
    }
    let empty = String::from_utf8(run_ok(&["summary", "-o", "csv", "--by", "model"], b"")).unwrap();
    assert!(empty.starts_with("group,model,cache,requests,"), "{empty}");
}

#[test]
fn per_request_rows_in_csv_tsv_and_jsonl() {
    let input = std::fs::read(testdata().join("samples/litellm.jsonl")).unwrap();
    let csv = String::from_utf8(run_ok(
        &["--output", "csv", "--fields", "id,model,ttft_ms,tpot_ms"],
        &input,
    ))
    .unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("id,model,ttft_ms,tpot_ms"));
    assert_eq!(
        lines.next(),
        Some("0c9e8d7f-6a5b-4c3d-9e2f-1a0b9c8d7e6f,gpt-4o-mini,465.102,17.81")
    );
    // Same values as the enriched lines.
    let objs: Vec<Value> = enriched_objects(&run_ok(&[], &input))
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(csv.lines().count() - 1, objs.len());
    let jsonl = json_lines(&run_ok(
        &["-o", "jsonl", "--fields", "ttft_ms,cache,outcome"],
        &input,
    ));
    for (j, o) in jsonl.iter().zip(&objs) {
        assert_eq!(j["ttft_ms"], o["ttft_ms"]);
        assert_eq!(j["cache"], o["cache"]);
        assert_eq!(j["outcome"], o["outcome"]);
    }
    assert_eq!(run(&["--fields", "id"], b"").status.code(), Some(2));
    assert_eq!(
        run(&["-o", "csv", "--fields", "nope"], b"").status.code(),
        Some(2)
    );
}

fn split3(data: &[u8], dir: &std::path::Path) -> Vec<String> {
    let lines = lines_with_endings(data);
    let n = lines.len();
    let cuts = [0, n / 3, 2 * n / 3 + 1, n];
    (0..3)
        .map(|i| {
            let p = dir.join(format!("part{i}.jsonl"));
            std::fs::write(&p, lines[cuts[i]..cuts[i + 1]].concat()).unwrap();
            p.display().to_string()
        })
        .collect()
}

fn save_parts(parts: &[String], extra: &[&str], dir: &std::path::Path) -> Vec<String> {
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let d = dir
                .join(format!("part{i}.digest.json"))
                .display()
                .to_string();
            let mut a = vec!["summary", "--save-digest", &d];
            a.extend_from_slice(extra);
            a.push(p);
            run_ok(&a, b"");
            d
        })
        .collect()
}

#[test]
fn merge_of_three_parts_prints_what_one_run_prints_while_exact() {
    let dir = tempfile::tempdir().unwrap();
    let data = std::fs::read(testdata().join("lab/litellm.jsonl")).unwrap();
    let parts = split3(&data, dir.path());
    let extra = ["--by", "model", "--goodput", "ttft=5s,tpot=200ms"];
    let digests = save_parts(&parts, &extra, dir.path());
    let d: Vec<&str> = digests.iter().map(String::as_str).collect();
    // One run over the same three inputs: requests in flight are rebuilt per input, so a run
    // over the uncut stream differs from it where a request spans a cut.
    let p: Vec<&str> = parts.iter().map(String::as_str).collect();
    for output in [
        &["-o", "table"][..],
        &["-o", "json"],
        &["-o", "csv"],
        &["-o", "prometheus"],
    ] {
        let mut one = vec!["summary"];
        one.extend_from_slice(&extra);
        one.extend_from_slice(output);
        one.extend_from_slice(&p);
        // (The GenAI histograms of `-o prometheus` included: digest files hold their bucket
        // counts.)
        let want = String::from_utf8(run_ok(&one, b"")).unwrap();
        let mut m = vec!["merge"];
        m.extend_from_slice(output);
        m.extend_from_slice(&d);
        assert_eq!(
            String::from_utf8(run_ok(&m, b"")).unwrap(),
            want,
            "merge {output:?}"
        );
    }
    // The digest file is versioned and documented JSON.
    let doc: Value = serde_json::from_slice(&std::fs::read(&digests[0]).unwrap()).unwrap();
    assert_eq!(doc["schema"], "tokentime.digest/v1");
    assert_eq!(doc["by"], serde_json::json!(["model"]));
    assert!(doc["groups"][0]["metrics"]["ttft_ms"]["exact"].is_array());
    // A merge can be saved and merged again (tree reductions), and SLOs apply to it.
    let ab = dir.path().join("ab.json").display().to_string();
    run_ok(&["merge", "--save-digest", &ab, d[0], d[1]], b"");
    let tree = run(&["merge", "--slo", "e2e:p50<=1s", &ab, d[2]], b"");
    assert_eq!(tree.status.code(), Some(3));
    let mut one = vec!["summary"];
    one.extend_from_slice(&extra);
    one.extend_from_slice(&p);
    assert_eq!(tree.stdout, run_ok(&one, b""));
    let _ = data;
}

#[test]
fn merge_beyond_the_exact_limit_stays_within_the_digest_error() {
    // 36,000 log-normal-ish TTFTs: each part holds 12,000 values, past the exact limit.
    let dir = tempfile::tempdir().unwrap();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut ttfts = Vec::new();
    let mut log = String::new();
    for i in 0..36_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let u = (x >> 11) as f64 / (1u64 << 53) as f64;
        let ttft = round3((u * 4.0).exp() * 50.0);
        ttfts.push(ttft);
        log.push_str(&request(T + i * 100, ttft, 10.0));
    }
    let parts = split3(log.as_bytes(), dir.path());
    let digests = save_parts(&parts, &MAP, dir.path());
    let mut m = vec!["merge", "-o", "json"];
    m.extend(digests.iter().map(String::as_str));
    let merged: Value = serde_json::from_slice(&run_ok(&m, b"")).unwrap();
    let single: Value =
        serde_json::from_slice(&run_ok(&args(&["summary", "-o", "json"]), log.as_bytes())).unwrap();
    let mt = &merged["groups"][0]["metrics"]["ttft_ms"];
    assert_eq!(mt["exact"], false);
    assert_eq!(mt["count"], 36_000);
    assert_eq!(mt["min"], single["groups"][0]["metrics"]["ttft_ms"]["min"]);
    assert_eq!(mt["max"], single["groups"][0]["metrics"]["ttft_ms"]["max"]);
    let mut report = String::new();
    for (q, tol) in [
        ("p50", 0.005),
        ("p90", 0.005),
        ("p99", 0.005),
        ("p99.9", 0.01),
    ] {
        let frac: f64 = q[1..].parse::<f64>().unwrap() / 100.0;
        let exact = quantile7(&ttfts, frac);
        let got = mt["quantiles"][q].as_f64().unwrap();
        let one = single["groups"][0]["metrics"]["ttft_ms"]["quantiles"][q]
            .as_f64()
            .unwrap();
        writeln!(report, "{q}: exact {exact} merged {got} single {one}").unwrap();
        assert!((got - exact).abs() / exact <= tol, "{report}");
        assert!((one - exact).abs() / exact <= tol, "{report}");
    }
    let mean: f64 = ttfts.iter().sum::<f64>() / ttfts.len() as f64;
    assert!((mt["mean"].as_f64().unwrap() - mean).abs() < 0.01);
}

#[test]
fn a_digest_file_cut_short_is_named_as_one_by_merge_and_diff() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.json");
    let cut = dir.path().join("cut.json");
    let log = testdata().join("samples/litellm.jsonl");
    let log = log.to_str().unwrap();
    run_ok(
        &["summary", "--save-digest", whole.to_str().unwrap(), log],
        b"",
    );
    let bytes = std::fs::read(&whole).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let cut = cut.to_str().unwrap();
    for args in [vec!["merge", cut], vec!["diff", cut, log]] {
        let out = run(&args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!(
                "{cut}: a digest file cut short (EOF while parsing"
            )),
            "{args:?}: {err}"
        );
        assert!(err.contains("save it again"), "{err}");
    }
    // A log cut short is no digest file.
    let text = dir.path().join("cut.jsonl");
    std::fs::write(&text, b"{\"model\":\"m\",\"startTime\":").unwrap();
    let out = run(&["merge", text.to_str().unwrap()], b"");
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a digest file"));
}

#[test]
fn merge_refuses_files_that_do_not_line_up() {
    let dir = tempfile::tempdir().unwrap();
    let data = std::fs::read(testdata().join("samples/litellm.jsonl")).unwrap();
    let a = dir.path().join("a.json").display().to_string();
    let b = dir.path().join("b.json").display().to_string();
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, &data).unwrap();
    let input = input.display().to_string();
    run_ok(&["summary", "--save-digest", &a, &input], b"");
    run_ok(
        &["summary", "--by", "model", "--save-digest", &b, &input],
        b"",
    );
    let out = run(&["merge", &a, &b], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("grouped by [model]"));
    std::fs::write(&b, "{\"schema\":\"tokentime.digest/v999\"}").unwrap();
    assert_eq!(run(&["merge", &a, &b], b"").status.code(), Some(2));
    // Different --cache-hit-ratio: hit and partial mean different things.
    let c = dir.path().join("c.json").display().to_string();
    run_ok(
        &[
            "summary",
            "--cache-hit-ratio",
            "0.9",
            "--save-digest",
            &c,
            &input,
        ],
        b"",
    );
    let out = run(&["merge", &a, &c], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--cache-hit-ratio 0.9"));
    // A file from before the ratio was recorded does not switch the check off.
    let old = dir.path().join("old.json").display().to_string();
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&a).unwrap()).unwrap();
    doc.as_object_mut().unwrap().remove("cache_hit_ratio");
    std::fs::write(&old, doc.to_string()).unwrap();
    assert_eq!(run(&["merge", &old, &a, &c], b"").status.code(), Some(2));
    run_ok(&["merge", &old, &a], b"");
    // A log given to merge by mistake is named as not a digest file.
    let out = run(&["merge", &a, &input], b"");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("in.jsonl: not a digest file"), "{err}");
}

/// An unwritable `--save-digest` path is refused before any input is read (exit 2), not
/// after a run over hours of logs.
#[test]
fn an_unwritable_save_digest_path_is_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/dir/d.json");
    // Standard input never closes: the refusal cannot have waited for it.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tokentime"))
        .args(["summary", "--save-digest", missing.to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let _stdin = child.stdin.take();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--save-digest") && err.contains("d.json"),
        "{err}"
    );
    let out = run(
        &["summary", "--save-digest", dir.path().to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is a directory"));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing left behind"
    );
}

/// `--by cache` (a log's own `cache` field) would clash with the prefix-cache dimension: the
/// same series twice, a label repeated. It is named `by_cache`. (Two keys with one label name
/// are refused: the cases `testdata/cases/by-*.toml`.)
#[test]
fn a_by_key_named_cache_is_renamed() {
    let formats = testdata().join("custom/gateway.formats.toml");
    let input = testdata().join("custom/gateway.jsonl");
    let (formats, input) = (formats.to_str().unwrap(), input.to_str().unwrap());
    let out = run(
        &[
            "summary",
            "--formats",
            formats,
            "--by",
            "cache",
            "-o",
            "prometheus",
            input,
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("named by_cache"));
    // A log without the path names it as given, and finds the keys close to it.
    let helicone = testdata().join("samples/helicone.jsonl");
    let absent = run(
        &["summary", "--by", "cache", helicone.to_str().unwrap()],
        b"",
    );
    let err = String::from_utf8_lossy(&absent.stderr);
    assert!(
        err.contains(
            "--by cache (named by_cache): no request had this path (all 4 requests are in \
             by_cache=unknown); close matches among the requests' keys: cache_enabled"
        ),
        "{err}"
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).unwrap();
    let mut seen = std::collections::HashSet::new();
    for s in &scrape.samples {
        let mut labels: Vec<_> = s.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        labels.sort();
        assert!(
            seen.insert((s.metric.clone(), labels)),
            "a series twice: {}",
            s.metric
        );
    }
    assert!(
        text.contains("tokentime_requests{by_cache=\"HIT\",cache=\"response\"} 1"),
        "{text}"
    );
}

/// `--save-digest` never replaces what is not a regular file (a symbolic link is written
/// through, its target updated) and refuses a path that is also an input (a template typo
/// such as `--save-digest {} {}` would overwrite the log).
#[cfg(unix)]
#[test]
fn save_digest_writes_through_links_and_refuses_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::copy(testdata().join("samples/litellm.jsonl"), &input).unwrap();
    let input = input.to_str().unwrap();
    let target = dir.path().join("target.json");
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    run_ok(
        &["summary", "--save-digest", link.to_str().unwrap(), input],
        b"",
    );
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let saved: Value = serde_json::from_slice(&std::fs::read(&target).unwrap()).unwrap();
    assert_eq!(saved["schema"], "tokentime.digest/v1");
    let before = std::fs::read(input).unwrap();
    let out = run(&["summary", "--save-digest", input, input], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is also an input"));
    assert_eq!(
        std::fs::read(input).unwrap(),
        before,
        "the input is untouched"
    );
}

/// A digest file holding `unparseable` nulls is read back: the digest file's own list of
/// reasons lacked it, so `merge` refused every file of a log with one unreadable field.
#[test]
fn a_digest_with_unparseable_nulls_merges() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("d.json").display().to_string();
    let input = "{\"call_type\":\"x\",\"startTime\":\"yesterday\",\"endTime\":1795964928.5,\
                 \"completionStartTime\":1795964928.0}\n";
    let one = run_ok(
        &["summary", "-o", "json", "--save-digest", &d],
        input.as_bytes(),
    );
    let merged = run_ok(&["merge", "-o", "json", &d], b"");
    let (one, merged): (Value, Value) = (
        serde_json::from_slice(&one).unwrap(),
        serde_json::from_slice(&merged).unwrap(),
    );
    assert_eq!(one["coverage"]["anomalies"]["unparseable"], 1);
    assert_eq!(merged["groups"], one["groups"]);
}

/// An input that cannot be read to its end (a truncated .gz) is counted in the coverage
/// (`read_errors`), in the table and in a saved digest; `merge` of such a digest says so on
/// stderr and exits 2, as the run did, so a partial day never passes for a whole one.
#[test]
fn an_input_not_read_to_its_end_is_counted_and_merge_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let plain = std::fs::read(testdata().join("lab/litellm.jsonl")).unwrap();
    let trunc = dir.path().join("day.jsonl.gz");
    write_cut_gzip(&trunc, &plain);
    let whole = dir.path().join("whole.jsonl");
    std::fs::write(&whole, &plain).unwrap();
    let digest = dir.path().join("day.digest.json");
    let (trunc, whole, digest) = (
        trunc.to_str().unwrap(),
        whole.to_str().unwrap(),
        digest.to_str().unwrap(),
    );
    let out = run(
        &["summary", "-o", "json", "--save-digest", digest, trunc],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["coverage"]["read_errors"], 1);
    assert!(s["coverage"]["requests"].as_u64().unwrap() > 0);
    let table = run(&["summary", trunc], b"");
    assert!(
        String::from_utf8_lossy(&table.stdout)
            .replace("\n  ", " ")
            .contains("inputs not read to their end 1"),
        "{}",
        String::from_utf8_lossy(&table.stdout)
    );
    let merged = run(&["merge", "-o", "json", digest], b"");
    assert_eq!(merged.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&merged.stderr).contains("not read to the end"));
    let m: serde_json::Value = serde_json::from_slice(&merged.stdout).unwrap();
    assert_eq!(m["coverage"]["read_errors"], 1);
    // A whole input: 0, exit 0.
    let ok = run(&["summary", "-o", "json", whole], b"");
    assert_eq!(ok.status.code(), Some(0));
    let s: serde_json::Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(s["coverage"]["read_errors"], 0);
}

/// With no request read, the all-requests `tokentime_requests` and `tokentime_request_errors`
/// series say 0 rather than going absent, every family has its own help text, and
/// `tokentime_read_errors` counts an input not read to its end.
#[test]
fn prometheus_says_zero_requests_and_counts_read_errors() {
    let text = String::from_utf8(run_ok(&["summary", "-o", "prometheus"], b"")).unwrap();
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).unwrap();
    for name in [
        "tokentime_requests",
        "tokentime_request_errors",
        "tokentime_read_errors",
    ] {
        // (And the metric families' all-requests _count and _sum, checked below.)
        let s = scrape
            .samples
            .iter()
            .find(|s| s.metric == name && s.labels.is_empty())
            .unwrap_or_else(|| panic!("{name} absent:\n{text}"));
        assert!(
            matches!(s.value, prometheus_parse::Value::Gauge(v) if v == 0.0),
            "{name}"
        );
    }
    let helps: Vec<&str> = text.lines().filter(|l| l.starts_with("# HELP")).collect();
    let unique: std::collections::HashSet<&str> = helps
        .iter()
        .map(|l| l.split_once(' ').unwrap().1.split_once(' ').unwrap().1)
        .map(|h| h.split_once(' ').unwrap().1)
        .collect();
    assert_eq!(unique.len(), helps.len(), "a help text used twice:\n{text}");
    for family in ["tokentime_ttft_seconds", "tokentime_output_tokens"] {
        assert!(text.contains(&format!("\n{family}_count 0\n")), "{text}");
        assert!(text.contains(&format!("\n{family}_sum 0\n")), "{text}");
    }
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.gz");
    std::fs::write(&cut, [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3]).unwrap();
    let out = run(&["summary", "-o", "prometheus", cut.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stdout).contains("\ntokentime_read_errors 1\n"));
}

/// A metric without values in a group still has its `_count` and `_sum` series, at 0 (a series
/// that goes absent reads as "no data" on a dashboard, not as "none"), and goodput in output
/// tokens per second is there as in the JSON.
#[test]
fn prometheus_keeps_empty_series_at_zero_and_has_goodput_tokens() {
    let lab = testdata().join("lab/litellm.jsonl");
    let args = [
        "summary",
        "-o",
        "prometheus",
        "--goodput",
        "ttft=5s,tpot=200ms",
        lab.to_str().unwrap(),
    ];
    let text = String::from_utf8(run_ok(&args, b"")).unwrap();
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).unwrap();
    let value = |name: &str, cache: Option<&str>| -> f64 {
        let s = scrape
            .samples
            .iter()
            .find(|s| {
                s.metric == name
                    && s.labels.get("cache") == cache
                    && s.labels.get("quantile").is_none()
            })
            .unwrap_or_else(|| panic!("{name} {cache:?} absent:\n{text}"));
        match s.value {
            prometheus_parse::Value::Gauge(v) | prometheus_parse::Value::Untyped(v) => v,
            prometheus_parse::Value::Summary(ref s) => s.iter().map(|q| q.count).sum(),
            ref other => panic!("{name}: {other:?}"),
        }
    };
    // The lab's streamed calls have no cached-token count: no TTFT with cache="hit".
    assert!(
        text.contains("\ntokentime_ttft_seconds_count{cache=\"hit\"} 0\n"),
        "{text}"
    );
    assert!(text.contains("\ntokentime_ttft_seconds_sum{cache=\"hit\"} 0\n"));
    assert!(text.contains("\ntokentime_queue_seconds_count 0\n"));
    let json: serde_json::Value = serde_json::from_slice(&run_ok(
        &[
            "summary",
            "-o",
            "json",
            "--goodput",
            "ttft=5s,tpot=200ms",
            lab.to_str().unwrap(),
        ],
        b"",
    ))
    .unwrap();
    let want = json["groups"][0]["goodput"]["output_tokens_per_s"]
        .as_f64()
        .unwrap();
    let got = value("tokentime_goodput_output_tokens_per_second", None);
    assert!((got - want).abs() < 1e-3, "{got} vs {want}");
}

/// An empty `--by` value is the label `(empty)`: `{model=""}` would be read as no label, the
/// all-requests series a second time.
#[test]
fn prometheus_labels_an_empty_key_value() {
    let line = |model: &str| {
        format!(
            "{{\"id\":\"a\",\"call_type\":\"acompletion\",\"model\":\"{model}\",\"startTime\":1.0,\"endTime\":2.0,\"completionStartTime\":1.5,\"status\":\"success\",\"prompt_tokens\":3,\"completion_tokens\":4}}\n"
        )
    };
    let input = line("") + &line("m");
    let text = String::from_utf8(run_ok(
        &["summary", "-o", "prometheus", "--by", "model"],
        input.as_bytes(),
    ))
    .unwrap();
    assert!(
        text.contains("tokentime_requests{model=\"(empty)\"} 1"),
        "{text}"
    );
    assert!(!text.contains("model=\"\""), "{text}");
}

/// Rows from several inputs say which input each came from (`--fields file`), with line
/// numbers per input, on one thread, in parallel chunks, and from standard input.
#[test]
fn rows_name_their_input_file() {
    let lab = std::fs::read(testdata().join("lab/litellm.jsonl")).unwrap();
    let lines: Vec<&[u8]> = lab.split_inclusive(|&b| b == b'\n').collect();
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.jsonl");
    let b = dir.path().join("b.jsonl");
    std::fs::write(&a, lines[..3].concat()).unwrap();
    std::fs::write(&b, lines[3..].concat()).unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    for threads in ["1", "2"] {
        let args = [
            "--output",
            "csv",
            "--fields",
            "file,line",
            "--threads",
            threads,
            "--chunk-bytes",
            "4096",
            a,
            b,
        ];
        let csv = String::from_utf8(run_ok(&args, b"")).unwrap();
        let rows: Vec<&str> = csv.lines().skip(1).collect();
        assert_eq!(rows.len(), lines.len(), "threads {threads}");
        assert_eq!(rows[0], format!("{a},1"));
        assert_eq!(rows[2], format!("{a},3"));
        assert_eq!(rows[3], format!("{b},1"));
        assert_eq!(rows.last().unwrap(), &format!("{b},{}", lines.len() - 3));
    }
    let out = run_ok(&["--output", "jsonl", "--fields", "file,line"], lines[0]);
    assert_eq!(out, b"{\"file\":\"<stdin>\",\"line\":1}\n");
}

/// A digest saved with a higher `--exact-limit` (the README's advice for vLLM's ITL, ~42,000
/// gaps) merges, and the merge prints what the run printed; files saved with different limits
/// are refused. (merge refused its own file: "42198 exact values ... (at most 10000)".)
#[test]
fn merge_keeps_the_runs_exact_limit() {
    let dir = tempfile::tempdir().unwrap();
    let result = testdata().join("realdata/vllm083-llama70b-tp8-qpsinf/result.json");
    let result = result.to_str().unwrap();
    let high = dir.path().join("high.json");
    let low = dir.path().join("low.json");
    let (high, low) = (high.to_str().unwrap(), low.to_str().unwrap());
    let single = run_ok(
        &[
            "summary",
            "--explain",
            "--exact-limit",
            "1000000",
            "--save-digest",
            high,
            result,
        ],
        b"",
    );
    assert!(String::from_utf8_lossy(&single).contains("up to 1000000 values"));
    assert_eq!(run_ok(&["merge", "--explain", high], b""), single);
    run_ok(&["summary", "--save-digest", low, result], b"");
    let out = run(&["merge", high, low], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("saved with --exact-limit 10000"));
}

/// A benchmark file whose requests have no times (vLLM's `result.json` keeps durations only)
/// read beside a timed log: its requests count in the totals but not in the rates over the
/// timed log's span, which stay those of the timed log alone (293 LiteLLM requests over
/// 46m11s: 293 / 2770.8 s = 0.106 requests/s), in the table, the goodput JSON, Prometheus and a
/// merge of saved digests.
#[test]
fn requests_without_times_are_left_out_of_rates_over_the_span() {
    let lab = testdata().join("lab/litellm.jsonl");
    let vllm = testdata().join("realdata/vllm083-llama70b-tp8-qps1/result.json");
    let (lab, vllm) = (lab.to_str().unwrap(), vllm.to_str().unwrap());
    let head = |args: &[&str]| {
        let out = String::from_utf8(run_ok(args, b"")).unwrap();
        out.split("\nerrors").next().unwrap().replace("\n  ", " ")
    };
    let alone = head(&["summary", lab]);
    assert!(
        alone.starts_with(
            "293 requests from 2026-11-29T15:08:47Z to 15:54:57Z (46m11s): 0.11 requests/s, 6.36 output tokens/s"
        ),
        "{alone}"
    );
    let both = head(&["summary", lab, vllm]);
    assert!(
        both.starts_with(
            "493 requests from 2026-11-29T15:08:47Z to 15:54:57Z (46m11s); rates of the 293 with times (200 without): 0.11 requests/s, 6.36 output tokens/s"
        ),
        "{both}"
    );

    let goodput = |files: &[&str], o: &str| {
        let mut args = vec!["summary", "--goodput", "ttft=5s", "-o", o];
        args.extend(files);
        String::from_utf8(run_ok(&args, b"")).unwrap()
    };
    let group0 = |files: &[&str]| {
        let j: Value = serde_json::from_str(&goodput(files, "json")).unwrap();
        j["groups"][0]["goodput"].clone()
    };
    let (a, b) = (group0(&[lab]), group0(&[lab, vllm]));
    // 93 good requests over the lab log's 2770.803 s, to 6 significant digits.
    assert_eq!(a["requests_per_s"], 0.0335643);
    assert_eq!(b["met"], 293, "the 200 without times meet the target too");
    assert_eq!(b["met_without_times"], 200);
    assert!(a.get("met_without_times").is_none(), "{a}");
    assert_eq!(a["requests_per_s"], b["requests_per_s"]);
    assert_eq!(a["output_tokens_per_s"], b["output_tokens_per_s"]);
    let rate = |files: &[&str]| {
        goodput(files, "prometheus")
            .lines()
            .find(|l| l.starts_with("tokentime_goodput_requests_per_second{"))
            .map(|l| l.rsplit(' ').next().unwrap().to_owned())
    };
    assert_eq!(rate(&[lab]), rate(&[lab, vllm]));

    let dir = tempfile::tempdir().unwrap();
    let (d1, d2) = (dir.path().join("lab.json"), dir.path().join("vllm.json"));
    let (d1, d2) = (d1.to_str().unwrap(), d2.to_str().unwrap());
    run_ok(&["summary", "--save-digest", d1, lab], b"");
    run_ok(&["summary", "--save-digest", d2, vllm], b"");
    assert_eq!(head(&["merge", d1, d2]), both);
}

/// The completed requests' rate beside the errors: the lab log's 284 of 293 over its 46m11s
/// (0.1025 requests/s); read beside a benchmark file whose requests have no times (SGLang's
/// bench, 7 of its 180 failed), it counts the lab log's alone, in the table, the JSON and a
/// merge of saved digests. A digest file that does not say how its requests without times
/// ended (saved before it was kept) gives no completed count rather than a guess.
#[test]
fn the_completed_requests_rate_counts_the_requests_with_times() {
    let lab = testdata().join("lab/litellm.jsonl");
    let bench = testdata().join("realdata/sglang0523-mock/sglang-bench.jsonl");
    let (lab, bench) = (lab.to_str().unwrap(), bench.to_str().unwrap());
    let errors = |args: &[&str]| {
        let out = String::from_utf8(run_ok(args, b""))
            .unwrap()
            .replace("\n  ", " ");
        out.lines()
            .find(|l| l.starts_with("errors"))
            .unwrap()
            .to_owned()
    };
    let alone = errors(&["summary", lab]);
    assert!(
        alone.starts_with("errors 9 (3.1%), 284 completed (0.10 requests/s); 293 lines"),
        "{alone}"
    );
    let both = errors(&["summary", lab, bench]);
    assert!(
        both.starts_with("errors 16 (3.4%), 284 completed with times (0.10 requests/s); "),
        "{both}"
    );
    let throughput = |args: &[&str]| {
        let mut args = args.to_vec();
        args.extend(["-o", "json"]);
        let j: Value = serde_json::from_slice(&run_ok(&args, b"")).unwrap();
        j["groups"][0]["throughput"].clone()
    };
    let t = throughput(&["summary", lab, bench]);
    assert_eq!(t["requests"], 293);
    assert_eq!(t["completed"], 284);
    // 284 / 2770.803 s, to 6 significant digits.
    assert_eq!(t["completed_per_s"], 0.102497);

    let dir = tempfile::tempdir().unwrap();
    let (d1, d2) = (dir.path().join("lab.json"), dir.path().join("bench.json"));
    let (d1, d2) = (d1.to_str().unwrap(), d2.to_str().unwrap());
    run_ok(&["summary", "--save-digest", d1, lab], b"");
    run_ok(&["summary", "--save-digest", d2, bench], b"");
    assert_eq!(errors(&["merge", d1, d2]), both);
    assert_eq!(throughput(&["merge", d1, d2]), t);
    // The bench's digest as an older tokentime saved it: no `untimed.failed`.
    let mut doc: Value = serde_json::from_slice(&std::fs::read(d2).unwrap()).unwrap();
    for g in doc["groups"].as_array_mut().unwrap() {
        g["untimed"].as_object_mut().unwrap().remove("failed");
    }
    std::fs::write(d2, serde_json::to_vec(&doc).unwrap()).unwrap();
    let older = errors(&["merge", d1, d2]);
    assert!(older.starts_with("errors 16 (3.4%); 295 lines"), "{older}");
    let t = throughput(&["merge", d1, d2]);
    assert_eq!(t["completed"], Value::Null);
    assert_eq!(t["completed_per_s"], Value::Null);
}

/// `--by` reaches an OTLP span's resource: a path whose first member the span lacks is read in
/// the `resourceSpans` entry that holds it, its attribute list read as an object as the span's
/// are. The GenAI sample's five spans come from three services (`chat-app` 1, `support-agent`
/// 2, `rag-service` 2 with the 429); vLLM's three from one; a resource attribute no service
/// sets leaves every span in the group of `null`.
#[test]
fn by_reaches_the_resource_of_an_otlp_span() {
    let groups = |file: &str, by: &str| -> Vec<(Value, u64, u64)> {
        let path = testdata().join(file);
        let out = run_ok(
            &["summary", "--by", by, "-o", "json", path.to_str().unwrap()],
            b"",
        );
        let doc: Value = serde_json::from_slice(&out).unwrap();
        let mut v: Vec<(Value, u64, u64)> = doc["groups"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|g| g["key"].get("cache").is_none() && g["key"] != serde_json::json!({}))
            .map(|g| {
                (
                    g["key"][by].clone(),
                    g["requests"].as_u64().unwrap(),
                    g["errors"].as_u64().unwrap(),
                )
            })
            .collect();
        v.sort_by_key(|(k, _, _)| k.to_string());
        v
    };
    let service = r"resource.attributes.service\.name";
    assert_eq!(
        groups("samples/otel_genai_otlp.jsonl", service),
        [
            ("chat-app".into(), 1, 0),
            ("rag-service".into(), 2, 1),
            ("support-agent".into(), 2, 0)
        ]
    );
    assert_eq!(
        groups("samples/vllm_otlp_traces.jsonl", service),
        [("vllm-llama-8b".into(), 3, 0)]
    );
    assert_eq!(
        groups(
            "samples/otel_genai_otlp.jsonl",
            r"resource.attributes.host\.name"
        ),
        [(Value::Null, 5, 1)]
    );
    // The dot of `service.name` left unescaped: the spans' keys, as `--by` writes them, name
    // the path meant; a path close to none lists some of a span's keys, not the line's.
    let sample = testdata().join("samples/otel_genai_otlp.jsonl");
    let stderr = |by: &str| {
        let out = run(&["summary", "--by", by, sample.to_str().unwrap()], b"");
        String::from_utf8(out.stderr).unwrap()
    };
    let err = stderr("resource.attributes.service.name");
    assert!(
        err.contains(r"close matches among the requests' keys: resource.attributes.service\.name"),
        "{err}"
    );
    let err = stderr("nosuchthing");
    assert!(
        err.contains("requests have keys such as: $parent, attributes, endTimeUnixNano"),
        "{err}"
    );
}

/// `--by model` reads the `model` member and, on a line without one, the model where the
/// format logs it: Bedrock's `modelId` (the sample's three records, three models), a vLLM
/// result's run-level `model_id`; the headline of one request gives no rates.
#[test]
fn by_model_falls_back_to_the_formats_model_and_one_request_has_no_rates() {
    let keys = |file: &str| -> Vec<String> {
        let path = testdata().join(file);
        let out = run_ok(
            &[
                "summary",
                "--by",
                "model",
                "-o",
                "json",
                path.to_str().unwrap(),
            ],
            b"",
        );
        let doc: Value = serde_json::from_slice(&out).unwrap();
        let mut v: Vec<String> = doc["groups"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|g| g["key"].get("model").map(|m| m.to_string()))
            .collect();
        v.sort();
        v.dedup();
        v
    };
    assert_eq!(
        keys("samples/bedrock.jsonl"),
        [
            r#""anthropic.claude-3-5-haiku-20241022-v1:0""#,
            r#""meta.llama3-70b-instruct-v1:0""#,
            r#""us.anthropic.claude-3-7-sonnet-20250219-v1:0""#,
        ]
    );
    assert_eq!(
        keys("realdata/vllm083-llama70b-tp8-qps1/result.json"),
        [r#""meta-llama/Llama-3.3-70B-Instruct""#]
    );
    assert_eq!(
        keys("realdata/guidellm050-qwen3-30b-xpu/benchmarks.json"),
        [r#""Qwen/Qwen3-30B-A3B""#]
    );
    // guidellm 0.3: the benchmark's worker names the model; its args the strategy.
    assert_eq!(
        keys("realdata/guidellm03-qwen3-0.6b-llmd-sim/benchmarks.json"),
        [r#""Qwen/Qwen3-0.6B""#]
    );
    let g03 = testdata().join("realdata/guidellm03-qwen3-0.6b-llmd-sim/benchmarks.json");
    let out = String::from_utf8(run_ok(
        &[
            "summary",
            "--by",
            "args.strategy.rate",
            g03.to_str().unwrap(),
        ],
        b"",
    ))
    .unwrap();
    assert!(
        out.contains("args.strategy.rate=10.0: all 609 requests"),
        "{out}"
    );
    let one = testdata().join("formats/langfuse-reasoning.jsonl");
    let out = String::from_utf8(run_ok(&["summary", one.to_str().unwrap()], b"")).unwrap();
    assert!(
        out.starts_with("1 request from 2026-04-04T06:21:09Z to 06:21:17Z (7.9s) (one request with times: no rates)\n"),
        "{out}"
    );
}
