//! The Prometheus and OpenMetrics renderings' OpenTelemetry GenAI histograms: the exposition
//! rules, the conventions' names and bucket boundaries, histograms of partial runs adding up
//! to those of one run (summed, and merged from digest files), and `--out FILE` replaced whole (never seen half-written).

use crate::common::{run, run_ok, testdata};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The conventions' explicit bucket boundaries (semantic conventions v1.41.0,
/// docs/gen-ai/gen-ai-metrics.md), as `le` label values. `gen_ai.server.request.duration`,
/// `gen_ai.client.operation.duration` and `gen_ai.client.operation.time_to_first_chunk` have
/// the same ones.
const TTFT_LE: &[&str] = &[
    "0.001", "0.005", "0.01", "0.02", "0.04", "0.06", "0.08", "0.1", "0.25", "0.5", "0.75", "1",
    "2.5", "5", "7.5", "10", "+Inf",
];
const TPOT_LE: &[&str] = &[
    "0.01", "0.025", "0.05", "0.075", "0.1", "0.15", "0.2", "0.3", "0.4", "0.5", "0.75", "1",
    "2.5", "+Inf",
];
const DURATION_LE: &[&str] = &[
    "0.01", "0.02", "0.04", "0.08", "0.16", "0.32", "0.64", "1.28", "2.56", "5.12", "10.24",
    "20.48", "40.96", "81.92", "+Inf",
];
const TOKEN_LE: &[&str] = &[
    "1", "4", "16", "64", "256", "1024", "4096", "16384", "65536", "262144", "1048576", "4194304",
    "16777216", "67108864", "+Inf",
];

const FAMILIES: [(&str, &[&str]); 6] = [
    ("gen_ai_server_time_to_first_token_seconds", TTFT_LE),
    ("gen_ai_server_time_per_output_token_seconds", TPOT_LE),
    ("gen_ai_server_request_duration_seconds", DURATION_LE),
    ("gen_ai_client_operation_duration_seconds", DURATION_LE),
    (
        "gen_ai_client_operation_time_to_first_chunk_seconds",
        DURATION_LE,
    ),
    ("gen_ai_client_token_usage", TOKEN_LE),
];

/// One sample line: its name, its labels in order, its value.
fn sample(line: &str) -> (String, Vec<(String, String)>, f64) {
    let (head, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("{line}"));
    let value = match value {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        v => v.parse().unwrap_or_else(|_| panic!("value of {line}")),
    };
    let (name, labels) = match head.split_once('{') {
        None => (head, vec![]),
        Some((name, rest)) => {
            let inner = rest.strip_suffix('}').unwrap_or_else(|| panic!("{line}"));
            let mut labels = vec![];
            let mut s = inner;
            while !s.is_empty() {
                let (k, v) = s.split_once("=\"").unwrap_or_else(|| panic!("{line}"));
                // The value runs to the first unescaped quote.
                let mut end = 0;
                let b = v.as_bytes();
                while b[end] != b'"' {
                    end += if b[end] == b'\\' { 2 } else { 1 };
                }
                labels.push((k.to_owned(), v[..end].to_owned()));
                s = v[end + 1..].strip_prefix(',').unwrap_or(&v[end + 1..]);
            }
            (name, labels)
        }
    };
    let ok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    assert!(
        name.chars().all(ok) && !name.starts_with(|c: char| c.is_ascii_digit()),
        "metric name {name:?}"
    );
    (name.to_owned(), labels, value)
}

/// Checks the exposition rules: every family has `# HELP` and `# TYPE` before its samples,
/// which are contiguous; a histogram's series have their buckets in ascending `le`, cumulative,
/// the last `+Inf` and equal to `_count`, then `_sum` and `_count`. With `openmetrics`: no
/// blank line, a `# UNIT` for every family in seconds, and `# EOF` last.
fn check_exposition(text: &str, openmetrics: bool) {
    let mut lines: Vec<&str> = text.lines().collect();
    if openmetrics {
        assert_eq!(lines.pop(), Some("# EOF"), "OpenMetrics ends with # EOF");
        assert!(text.ends_with("# EOF\n"));
        assert!(!lines.contains(&"# EOF"));
        assert!(!lines.iter().any(|l| l.is_empty()), "no blank line");
    }
    let mut seen: Vec<String> = vec![];
    let mut family: Option<(String, String)> = None;
    let mut helped: Vec<String> = vec![];
    let mut units: Vec<String> = vec![];
    // Per histogram series: the `le` values and counts so far.
    let mut buckets: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for line in lines.into_iter().filter(|l| !l.is_empty()) {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            helped.push(rest.split(' ').next().unwrap().to_owned());
            continue;
        }
        if let Some(rest) = line.strip_prefix("# UNIT ") {
            let (name, unit) = rest.split_once(' ').unwrap();
            assert!(name.ends_with(&format!("_{unit}")), "{line}");
            units.push(name.to_owned());
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            assert!(
                helped.last().map(String::as_str) == Some(name),
                "HELP before TYPE: {line}"
            );
            assert!(!seen.contains(&name.to_owned()), "family {name} twice");
            seen.push(name.to_owned());
            family = Some((name.to_owned(), kind.to_owned()));
            continue;
        }
        assert!(!line.starts_with('#'), "unknown comment {line}");
        let (name, labels, value) = sample(line);
        let (fam, kind) = family.clone().expect("a sample before any TYPE");
        let suffixes: &[&str] = match kind.as_str() {
            "histogram" => &["_bucket", "_sum", "_count"],
            "summary" => &["", "_sum", "_count"],
            _ => &[""],
        };
        assert!(
            suffixes.iter().any(|s| name == format!("{fam}{s}")),
            "{name} is not of family {fam} (samples of a family are contiguous)"
        );
        if kind == "histogram" {
            let key: Vec<String> = labels
                .iter()
                .filter(|(k, _)| k != "le")
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            let key = format!("{fam}{{{}}}", key.join(","));
            if name.ends_with("_bucket") {
                let le = &labels.iter().find(|(k, _)| k == "le").expect("le").1;
                let le: f64 = if le == "+Inf" {
                    f64::INFINITY
                } else {
                    le.parse().unwrap()
                };
                let b = buckets.entry(key).or_default();
                if let Some(&(ple, pn)) = b.last() {
                    assert!(le > ple, "le ascending: {line}");
                    assert!(value >= pn, "cumulative: {line}");
                }
                b.push((le, value));
            } else if name.ends_with("_count") {
                let b = &buckets[&key];
                assert_eq!(b.last().unwrap().0, f64::INFINITY, "+Inf bucket: {key}");
                assert_eq!(b.last().unwrap().1, value, "+Inf bucket is _count: {key}");
            }
        }
    }
    if openmetrics {
        for name in seen.iter().filter(|n| n.ends_with("_seconds")) {
            assert!(units.contains(name), "# UNIT of {name}");
        }
    }
    // The lenient parser the tests use elsewhere reads it too.
    prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).unwrap();
}

/// A histogram series: the cumulative counts by `le`, the sum, the count.
#[derive(Debug, Default, Clone, PartialEq)]
struct Series {
    buckets: Vec<(String, f64)>,
    sum: f64,
    count: f64,
}

/// The GenAI histogram series of a rendering, by family and labels (`le` aside).
fn histograms(text: &str) -> BTreeMap<String, Series> {
    let mut out: BTreeMap<String, Series> = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("gen_ai_")) {
        let (name, labels, value) = sample(line);
        let (fam, part) = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| name.strip_suffix(s).map(|f| (f.to_owned(), *s)))
            .unwrap();
        let key: Vec<String> = labels
            .iter()
            .filter(|(k, _)| k != "le")
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let s = out
            .entry(format!("{fam}{{{}}}", key.join(",")))
            .or_default();
        match part {
            "_bucket" => {
                let le = labels.iter().find(|(k, _)| k == "le").unwrap().1.clone();
                s.buckets.push((le, value));
            }
            "_sum" => s.sum = value,
            _ => s.count = value,
        }
    }
    out
}

fn summary(args: &[&str]) -> String {
    String::from_utf8(run_ok(args, b"")).unwrap()
}

fn sample_file(name: &str) -> String {
    testdata().join("samples").join(name).display().to_string()
}

#[test]
fn gen_ai_histograms_are_named_and_bucketed_as_the_conventions_say() {
    let vllm = sample_file("vllm_response_metrics.jsonl");
    let usage = sample_file("provider_usage.jsonl");
    let litellm = sample_file("litellm.jsonl");
    let text = summary(&["summary", "-o", "prometheus", &vllm, &usage, &litellm]);
    check_exposition(&text, false);
    for (name, les) in FAMILIES {
        assert!(
            text.contains(&format!("# TYPE {name} histogram\n")),
            "{name}"
        );
        let h = histograms(&text);
        let series: Vec<_> = h
            .iter()
            .filter(|(k, _)| k.starts_with(&format!("{name}{{")))
            .collect();
        assert!(!series.is_empty(), "{name} has series");
        for (k, s) in series {
            let got: Vec<&str> = s.buckets.iter().map(|(le, _)| le.as_str()).collect();
            assert_eq!(got, les, "{k}");
            assert!(k.contains("cache="), "{k}");
        }
    }
    let h = histograms(&text);
    // vLLM's own log: the model it logs, provider vllm; the prompt tokens by token type.
    assert!(h.keys().any(|k| k.starts_with(
        "gen_ai_server_time_to_first_token_seconds{gen_ai_request_model=meta-llama/Llama-3.1-8B-Instruct,gen_ai_provider_name=vllm,cache=hit"
    )));
    assert!(
        h.keys()
            .any(|k| k.starts_with("gen_ai_client_token_usage{gen_ai_token_type=input,"))
    );
    assert!(
        h.keys()
            .any(|k| k.starts_with("gen_ai_client_token_usage{gen_ai_token_type=output,"))
    );
    // A gateway's requests (LiteLLM: any provider) have no provider label.
    assert!(
        h.keys()
            .any(|k| k.contains("gen_ai_request_model=gpt-4o-mini")
                && !k.contains("gen_ai_provider_name"))
    );
    // Every TTFT and E2E the summary counts is in exactly one series, of the server's family
    // or of the client's (none of these logs has a TTFT from the scheduling); every TPOT but
    // the gateway's (LiteLLM) is in the server's.
    let count = |text: &str, families: &[&str]| -> f64 {
        histograms(text)
            .iter()
            .filter(|(k, _)| families.iter().any(|f| k.starts_with(&format!("{f}{{"))))
            .map(|(_, s)| s.count)
            .sum()
    };
    let overall = |text: &str, metric: &str| -> f64 {
        let prefix = format!("tokentime_{metric}_seconds_count ");
        text.lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .unwrap()
            .parse()
            .unwrap()
    };
    let ttft = [
        "gen_ai_server_time_to_first_token_seconds",
        "gen_ai_client_operation_time_to_first_chunk_seconds",
    ];
    let e2e = [
        "gen_ai_server_request_duration_seconds",
        "gen_ai_client_operation_duration_seconds",
    ];
    assert_eq!(count(&text, &ttft), overall(&text, "ttft"));
    assert_eq!(count(&text, &e2e), overall(&text, "e2e"));
    let gateway = summary(&["summary", "-o", "prometheus", &litellm]);
    assert!(overall(&gateway, "tpot") > 0.0);
    assert_eq!(
        count(&text, &["gen_ai_server_time_per_output_token_seconds"]),
        overall(&text, "tpot") - overall(&gateway, "tpot")
    );
}

/// The series of `family` in `h` with `labels` (as `histograms` writes them): its cumulative
/// bucket counts, `+Inf` last, its sum and count.
fn series<'a>(h: &'a BTreeMap<String, Series>, family: &str, labels: &str) -> &'a Series {
    h.get(&format!("{family}{{{labels}}}"))
        .unwrap_or_else(|| panic!("{family}{{{labels}}} in {:?}", h.keys()))
}

fn counts(s: &Series) -> Vec<f64> {
    s.buckets.iter().map(|(_, n)| *n).collect()
}

/// The Prometheus exposition of a log of `lines` (checked) and its histograms.
fn exposition_of(lines: &[String]) -> (String, BTreeMap<String, Series>) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let text = summary(&["summary", "-o", "prometheus", &log.display().to_string()]);
    check_exposition(&text, false);
    let h = histograms(&text);
    (text, h)
}

/// A gateway's TTFT and E2E (LiteLLM's `completionStartTime - startTime`, `endTime -
/// startTime`) are the client's: they go to `gen_ai.client.operation.time_to_first_chunk`
/// and `gen_ai.client.operation.duration`, never to the server's families; its TPOT goes to
/// none. Values on a bound are in its bucket.
#[test]
fn a_gateways_durations_are_the_clients() {
    let line = |start: &str, first: &str, end: &str, out: u32| {
        format!(
            r#"{{"call_type":"acompletion","stream":true,"status":"success","model":"gpt-4o-mini","startTime":{start},"completionStartTime":{first},"endTime":{end},"prompt_tokens":100,"completion_tokens":{out}}}"#
        )
    };
    // TTFT 0.25 s, 0.08 s (a bound), 0.875 s; E2E 1.25 s, 0.64 s (a bound), 3 s.
    let lines = [
        line("1700000000.0", "1700000000.25", "1700000001.25", 11),
        line("1700000010.5", "1700000010.58", "1700000011.14", 6),
        line("1700000020.0", "1700000020.875", "1700000023.0", 3),
    ];
    let (text, h) = exposition_of(&lines);
    let labels = "gen_ai_request_model=gpt-4o-mini,cache=unknown";
    let ttfc = series(
        &h,
        "gen_ai_client_operation_time_to_first_chunk_seconds",
        labels,
    );
    // Bounds 0.01 0.02 0.04 0.08 0.16 0.32 0.64 1.28 2.56 5.12 10.24 20.48 40.96 81.92 +Inf.
    assert_eq!(
        counts(ttfc),
        [0., 0., 0., 1., 1., 2., 2., 3., 3., 3., 3., 3., 3., 3., 3.]
    );
    assert_eq!((ttfc.sum, ttfc.count), (1.205, 3.0));
    let duration = series(&h, "gen_ai_client_operation_duration_seconds", labels);
    assert_eq!(
        counts(duration),
        [0., 0., 0., 0., 0., 0., 1., 2., 2., 3., 3., 3., 3., 3., 3.]
    );
    assert_eq!((duration.sum, duration.count), (4.89, 3.0));
    // Nothing of it is the server's, though the summary has its TTFT, TPOT and E2E.
    assert!(
        !h.keys().any(|k| k.starts_with("gen_ai_server_")),
        "{:?}",
        h.keys()
    );
    assert!(text.contains("\ntokentime_tpot_seconds_count 3\n"));
    assert!(text.contains("# TYPE gen_ai_server_time_to_first_token_seconds histogram\n"));
}

/// vLLM's own TTFT (queue + `time_to_first_token_ms`), TPOT and E2E are the server's; a TTFT
/// from the scheduling (no queue time, no arrival) is in the summary but in no GenAI family.
#[test]
fn a_servers_durations_are_the_servers() {
    let line = |created: &str, queue: &str, prefill: u32, decode: u32, out: u32| {
        format!(
            r#"{{"object":"chat.completion",{created}"model":"m","usage":{{"prompt_tokens":100,"completion_tokens":{out},"prompt_tokens_details":{{"cached_tokens":0}}}},"metrics":{{"time_to_first_token_ms":{prefill},"generation_time_ms":{decode},"queue_time_ms":{queue}}}}}"#
        )
    };
    // TTFT 0.02 s (a bound), 0.5 s (a bound), 0.03 s from the scheduling; TPOT 0.1 s (a
    // bound), 0.5 s, 0.1 s; E2E 1.02 s, 2.5 s, none (the queue is not known).
    let lines = [
        line(r#""created":1741946531,"#, "5", 15, 1000, 11),
        line(r#""created":1741946532,"#, "100", 400, 2000, 5),
        line("", "null", 30, 300, 4),
    ];
    let (text, h) = exposition_of(&lines);
    let labels = "gen_ai_request_model=m,gen_ai_provider_name=vllm,cache=miss";
    let ttft = series(&h, "gen_ai_server_time_to_first_token_seconds", labels);
    // Bounds 0.001 0.005 0.01 0.02 0.04 0.06 0.08 0.1 0.25 0.5 0.75 1 2.5 5 7.5 10 +Inf.
    assert_eq!(
        counts(ttft),
        [
            0., 0., 0., 1., 1., 1., 1., 1., 1., 2., 2., 2., 2., 2., 2., 2., 2.
        ]
    );
    assert_eq!((ttft.sum, ttft.count), (0.52, 2.0));
    let tpot = series(&h, "gen_ai_server_time_per_output_token_seconds", labels);
    // Bounds 0.01 0.025 0.05 0.075 0.1 0.15 0.2 0.3 0.4 0.5 0.75 1 2.5 +Inf.
    assert_eq!(
        counts(tpot),
        [0., 0., 0., 0., 2., 2., 2., 2., 2., 3., 3., 3., 3., 3.]
    );
    assert_eq!((tpot.sum, tpot.count), (0.7, 3.0));
    let e2e = series(&h, "gen_ai_server_request_duration_seconds", labels);
    assert_eq!(
        counts(e2e),
        [0., 0., 0., 0., 0., 0., 0., 1., 2., 2., 2., 2., 2., 2., 2.]
    );
    assert_eq!((e2e.sum, e2e.count), (3.52, 2.0));
    assert!(
        !h.keys().any(|k| k.starts_with("gen_ai_client_operation_")),
        "{:?}",
        h.keys()
    );
    // The TTFT from the scheduling stays in the summary.
    assert!(text.contains("\ntokentime_ttft_seconds_count 3\n"));
}

#[test]
fn the_existing_families_come_first_unchanged() {
    // The histograms are added after everything the rendering wrote before them.
    let vllm = sample_file("vllm_response_metrics.jsonl");
    let text = summary(&["summary", "-o", "prometheus", "--by", "model", &vllm]);
    let first = text.find("# HELP gen_ai_").unwrap();
    assert!(!text[first..].contains("tokentime_"));
    assert!(text[..first].contains("tokentime_read_errors 0\n"));
}

/// Generated logs of four formats, one file each, and the samples of every format.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut files = vec![];
    for (i, f) in ["litellm", "llamacpp", "vllm", "otlp"]
        .into_iter()
        .enumerate()
    {
        let mut bytes = vec![];
        genlog::generate(f, 40 + i as u64, Some(4_000), None, &mut bytes)
            .unwrap()
            .unwrap();
        let p = dir.join(format!("{f}.jsonl"));
        std::fs::write(&p, bytes).unwrap();
        files.push(p);
    }
    for e in std::fs::read_dir(testdata().join("samples")).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".jsonl") && !name.ends_with(".expected.jsonl") {
            files.push(p);
        }
    }
    files.sort();
    files
}

/// Adds `b`'s series into `a`, as Prometheus's `sum` of the same series of several hosts.
fn add(a: &mut BTreeMap<String, Series>, b: BTreeMap<String, Series>) {
    for (k, s) in b {
        match a.get_mut(&k) {
            None => {
                a.insert(k, s);
            }
            Some(t) => {
                assert_eq!(t.buckets.len(), s.buckets.len());
                for (x, y) in t.buckets.iter_mut().zip(s.buckets) {
                    assert_eq!(x.0, y.0);
                    x.1 += y.1;
                }
                t.sum += s.sum;
                t.count += s.count;
            }
        }
    }
}

#[test]
fn histograms_of_partial_runs_add_up_to_one_run_over_everything() {
    let dir = tempfile::tempdir().unwrap();
    let files = inputs(dir.path());
    let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    for output in ["prometheus", "openmetrics"] {
        let mut summed = BTreeMap::new();
        for f in &names {
            let text = summary(&["summary", "-o", output, f]);
            check_exposition(&text, output == "openmetrics");
            add(&mut summed, histograms(&text));
        }
        let mut args = vec!["summary", "-o", output, "--threads", "2"];
        args.extend(names.iter().map(String::as_str));
        let whole = summary(&args);
        check_exposition(&whole, output == "openmetrics");
        let whole = histograms(&whole);
        assert_eq!(
            summed.keys().collect::<Vec<_>>(),
            whole.keys().collect::<Vec<_>>(),
            "the same series"
        );
        let mut values = 0.0;
        for (k, w) in &whole {
            let s = &summed[k];
            assert_eq!(s.buckets, w.buckets, "{k}: bucket counts");
            assert_eq!(s.count, w.count, "{k}: count");
            // Sums are exact in the output (whole nanoseconds, whole tokens); summed as floats
            // they may differ in the last bits.
            assert!(
                (s.sum - w.sum).abs() <= 1e-9 * w.sum.abs().max(1.0),
                "{k}: sum {} vs {}",
                s.sum,
                w.sum
            );
            values += w.count;
        }
        assert!(values > 30_000.0, "{values} values counted");
    }
}

/// The histograms pass through digest files: `merge -o prometheus` (and openmetrics) of one
/// digest per input prints the very histogram lines one run over every input prints (bucket
/// counts are integers: they add up exactly), read from files (`--save-digest FILE`, default
/// table output) and from a stream of digests (`--save-digest -`, `merge -`).
#[test]
fn merged_digests_print_the_histograms_of_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = inputs(dir.path())
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let mut digests = vec![];
    let mut stream = vec![];
    for (i, f) in names.iter().enumerate() {
        let d = dir.path().join(format!("d{i}.json")).display().to_string();
        run_ok(&["summary", "--save-digest", &d, f], b"");
        stream.extend(run_ok(&["summary", "--save-digest", "-", f], b""));
        digests.push(d);
    }
    let gen_ai = |text: &str| -> String {
        let lines: Vec<&str> = text.lines().filter(|l| l.contains("gen_ai_")).collect();
        lines.join("\n")
    };
    for output in ["prometheus", "openmetrics"] {
        let mut args = vec!["summary", "-o", output];
        args.extend(names.iter().map(String::as_str));
        let one = summary(&args);
        let mut args = vec!["merge", "-o", output];
        args.extend(digests.iter().map(String::as_str));
        let merged = summary(&args);
        check_exposition(&merged, output == "openmetrics");
        let lines = gen_ai(&one);
        assert!(lines.lines().count() > 500, "{output}: {lines}");
        assert_eq!(gen_ai(&merged), lines, "{output}: merged files");
        let streamed = String::from_utf8(run_ok(&["merge", "-o", output], &stream)).unwrap();
        assert_eq!(gen_ai(&streamed), lines, "{output}: merged stream");
    }
}

/// A digest file saved before the durations were split by who measured them (one TTFT, TPOT
/// and E2E histogram each, `ttft_ms`, `tpot_ms`, `e2e_ms`, a gateway's among the server's)
/// cannot be split again: `merge -o prometheus` prints no histograms and says why; the
/// summary families are there.
#[test]
fn digests_saved_before_the_split_merge_to_no_histograms() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("d.json");
    let d = d.display().to_string();
    run_ok(
        &[
            "summary",
            "--save-digest",
            &d,
            &sample_file("litellm.jsonl"),
        ],
        b"",
    );
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&d).unwrap()).unwrap();
    let genai = &mut doc["genai"];
    for (new, old) in [
        ("server_ttft_ms", "ttft_ms"),
        ("server_tpot_ms", "tpot_ms"),
        ("server_e2e_ms", "e2e_ms"),
    ] {
        let b = genai["bounds"].as_object_mut().unwrap();
        let v = b.remove(new).unwrap();
        b.insert(old.to_owned(), v);
        for s in genai["series"].as_array_mut().unwrap() {
            let s = s.as_object_mut().unwrap();
            let v = s.remove(new).unwrap();
            s.insert(old.to_owned(), v);
        }
    }
    for client in ["client_e2e_ms", "client_ttft_ms"] {
        genai["bounds"].as_object_mut().unwrap().remove(client);
        for s in genai["series"].as_array_mut().unwrap() {
            s.as_object_mut().unwrap().remove(client);
        }
    }
    std::fs::write(&d, serde_json::to_vec(&doc).unwrap()).unwrap();
    let out = run(&["merge", "-o", "prometheus", &d], b"");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("\ntokentime_ttft_seconds_count "), "{text}");
    assert!(!text.contains("gen_ai_"), "{text}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("no gen_ai_* histograms") && stderr.contains("split"),
        "{stderr}"
    );
}

/// Digests saved with `--bucket` windows also hold the whole run: `merge -o prometheus` of
/// them prints the whole run's histograms (one save serves both the windows and a scrape).
#[test]
fn windowed_digests_merge_to_the_histograms_of_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = inputs(dir.path())
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let mut stream = vec![];
    for f in &names {
        stream.extend(run_ok(
            &["summary", "--bucket", "10m", "--save-digest", "-", f],
            b"",
        ));
    }
    let mut args = vec!["summary", "-o", "prometheus"];
    args.extend(names.iter().map(String::as_str));
    let one = summary(&args);
    let merged = String::from_utf8(run_ok(&["merge", "-o", "prometheus"], &stream)).unwrap();
    check_exposition(&merged, false);
    let gen_ai = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.contains("gen_ai_"))
            .map(str::to_owned)
            .collect()
    };
    assert!(gen_ai(&one).len() > 500);
    assert_eq!(gen_ai(&merged), gen_ai(&one));
    // The windows are still there for a table.
    let windows = String::from_utf8(run_ok(&["merge", "-o", "json"], &stream)).unwrap();
    assert!(windows.lines().count() > 1, "{windows}");
}

#[test]
fn openmetrics_is_the_prometheus_rendering_with_units_and_eof() {
    let vllm = sample_file("vllm_response_metrics.jsonl");
    let om = summary(&[
        "summary",
        "-o",
        "openmetrics",
        "--goodput",
        "ttft=1s",
        &vllm,
    ]);
    check_exposition(&om, true);
    assert!(om.contains(
        "# TYPE gen_ai_server_time_to_first_token_seconds histogram\n# UNIT gen_ai_server_time_to_first_token_seconds seconds\n"
    ));
    let prom = summary(&["summary", "-o", "prometheus", "--goodput", "ttft=1s", &vllm]);
    let stripped: String = om
        .lines()
        .filter(|l| !l.starts_with("# UNIT ") && *l != "# EOF")
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(stripped, prom);
}

#[test]
fn out_without_every_writes_the_report_once_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokentime.prom");
    let vllm = sample_file("vllm_response_metrics.jsonl");
    let out = run(
        &[
            "summary",
            "-o",
            "prometheus",
            "--out",
            path.to_str().unwrap(),
            &vllm,
        ],
        b"",
    );
    assert!(out.status.success());
    assert!(
        out.stdout.is_empty(),
        "the report goes to the file, not stdout"
    );
    let expected = summary(&["summary", "-o", "prometheus", &vllm]);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["tokentime.prom"], "no temporary file left");
    // A directory, or a file in none, is refused before anything is read.
    let bad = run(
        &["summary", "--out", dir.path().to_str().unwrap(), &vllm],
        b"",
    );
    assert_eq!(bad.status.code(), Some(2));
    let missing = dir.path().join("no/such/dir/m.prom");
    let bad = run(&["summary", "--out", missing.to_str().unwrap(), &vllm], b"");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--out"));
}

#[test]
fn every_with_out_replaces_the_file_whole_while_input_grows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokentime.prom");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tokentime"))
        // The same lines again and again: --keep-duplicates counts every copy.
        .args([
            "summary",
            "--keep-duplicates",
            "--every",
            "50ms",
            "-o",
            "openmetrics",
            "--out",
        ])
        .arg(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let lines: Vec<String> = std::fs::read_to_string(sample_file("vllm_response_metrics.jsonl"))
        .unwrap()
        .lines()
        .map(|l| format!("{l}\n"))
        .collect();
    let rounds = 40;
    // A slow writer, as `tail -F` of a server's log: a line every 10 ms or so.
    let writer = std::thread::spawn(move || {
        for _ in 0..rounds {
            for l in &lines {
                stdin.write_all(l.as_bytes()).unwrap();
                stdin.flush().unwrap();
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    });
    // Read the file as fast as we can while it is being replaced: every read is whole.
    let mut reads = 0;
    let mut counts = vec![];
    let deadline = Instant::now() + Duration::from_secs(60);
    while !writer.is_finished() && Instant::now() < deadline {
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                check_exposition(&text, true);
                let n = text
                    .lines()
                    .find_map(|l| l.strip_prefix("tokentime_requests "))
                    .map(|v| v.parse::<u64>().unwrap());
                counts.extend(n);
                reads += 1;
            }
            Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::NotFound, "{e}"),
        }
    }
    writer.join().unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    // How many reads fall during the run depends on the machine's load: two at least.
    assert!(reads >= 2, "{reads} reads");
    assert!(
        counts.windows(2).all(|w| w[0] <= w[1]),
        "requests only grow: {counts:?}"
    );
    assert!(
        counts.len() >= 2 && counts[0] < counts[counts.len() - 1],
        "{counts:?}"
    );
    let fin = std::fs::read_to_string(&path).unwrap();
    check_exposition(&fin, true);
    assert!(fin.contains(&format!("\ntokentime_requests {}\n", 5 * rounds)));
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["tokentime.prom"], "no temporary file left");
}

/// A group of calls not streamed (the lab gateway's cache hits: no TTFT) has a goodput ratio of
/// 0 under a TTFT target, which is no missed target: `tokentime_goodput_unknown_ratio` says what
/// share of each group's requests had a target's metric unknown (16 of the 27 hits, 54 of the
/// 80 partial ones, as JSON's `unknown` counts; none of the streamed ones).
#[test]
fn goodput_unknown_share_is_a_gauge_beside_the_ratio() {
    let lab = testdata().join("lab/litellm.jsonl");
    let prom = summary(&[
        "summary",
        "-o",
        "prometheus",
        "--goodput",
        "ttft=5s,tpot=200ms",
        lab.to_str().unwrap(),
    ]);
    check_exposition(&prom, false);
    let json = summary(&[
        "summary",
        "-o",
        "json",
        "--goodput",
        "ttft=5s,tpot=200ms",
        lab.to_str().unwrap(),
    ]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    for g in doc["groups"].as_array().unwrap() {
        // A cache class the log does not give is `null` in JSON, `unknown` as a label.
        let label = match g["key"].get("cache") {
            Some(c) => format!(
                "{{cache=\"{}\",targets=\"ttft=5s,tpot=200ms\"}}",
                c.as_str().unwrap_or("unknown")
            ),
            None => "{targets=\"ttft=5s,tpot=200ms\"}".to_owned(),
        };
        let share = g["goodput"]["unknown"].as_f64().unwrap() / g["requests"].as_f64().unwrap();
        let line = prom
            .lines()
            .find(|l| l.starts_with(&format!("tokentime_goodput_unknown_ratio{label} ")))
            .unwrap_or_else(|| panic!("{label}: {prom}"));
        let v: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
        assert!((v - share).abs() < 1e-9, "{line} against {share}");
    }
    assert!(prom.contains(
        "tokentime_goodput_unknown_ratio{cache=\"hit\",targets=\"ttft=5s,tpot=200ms\"} 0.592592593"
    ));
}

/// A summary of the last `--window` says its span in a gauge; one of everything read has none.
#[test]
fn a_windowed_summary_says_its_span() {
    let log = "testdata/samples/litellm.jsonl";
    let args = |window: Option<&str>, output: &str| {
        let mut a = vec!["summary", "--every", "10s", "-o", output];
        if let Some(w) = window {
            a.extend(["--window", w]);
        }
        a.push(log);
        String::from_utf8(run_ok(&a, b"")).unwrap()
    };
    // The final summary's span: the window in whole intervals, and the part of an interval
    // since the last (the few milliseconds this run took).
    let span = |text: &str, head: &str| -> f64 {
        let at = text.find(head).unwrap_or_else(|| panic!("{head}: {text}")) + head.len();
        text[at..].lines().next().unwrap().parse().unwrap()
    };
    let prom = args(Some("25s"), "prometheus");
    let head = "# TYPE tokentime_window_seconds gauge\ntokentime_window_seconds ";
    let s = span(&prom, head);
    assert!(
        (30.0..31.0).contains(&s),
        "rounded up to whole intervals: {prom}"
    );
    let om = args(Some("1m"), "openmetrics");
    let head = "# UNIT tokentime_window_seconds seconds\ntokentime_window_seconds ";
    let s = span(&om, head);
    assert!((60.0..61.0).contains(&s), "{om}");
    assert!(!args(None, "prometheus").contains("tokentime_window_seconds"));
}
