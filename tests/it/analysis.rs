//! Acceptance of the analysis ("Reading the report" in the README): modes found where the
//! generator put them and nowhere else, the TTFT decomposition's reading, TPOT by requests in
//! flight against the lab's client-measured truth, histograms, the consumer headline, and
//! token- against request-weighted quantiles. Generated logs come from the repository's own
//! generator (the `genlog` crate); every expected value is computed here, from the
//! generator's parameters or the truth file, never from tokentime's output.

use crate::common::*;
use genlog::{Growth, Scenario, generate_scenario};
use serde_json::Value;

fn genlog(format: &str, seed: u64, lines: u64, scenario: &Scenario) -> Vec<u8> {
    let mut out = Vec::new();
    generate_scenario(format, seed, Some(lines), None, scenario, &mut out)
        .expect("known format")
        .unwrap();
    out
}

fn summary_json(args: &[&str], stdin: &[u8]) -> Value {
    let mut a = vec!["summary", "-o", "json"];
    a.extend_from_slice(args);
    serde_json::from_slice(&run_ok(&a, stdin)).unwrap()
}

/// The group with exactly this key (`{}` is all requests).
fn group<'a>(doc: &'a Value, key: &Value) -> &'a Value {
    doc["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| &g["key"] == key)
        .unwrap_or_else(|| panic!("no group {key}"))
}

fn finding<'a>(g: &'a Value, kind: &str, metric: &str) -> Option<&'a Value> {
    g["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == kind && (metric.is_empty() || f["metric"] == metric))
}

fn modes_scenario(modes: &[(f64, f64)]) -> Scenario {
    Scenario {
        ttft_modes: modes.to_vec(),
        ..Scenario::default()
    }
}

#[test]
fn testdata_analysis_files_are_the_generators_output() {
    // testdata/analysis/README.md gives the commands.
    use std::io::Read;
    let cases = [
        (
            "bimodal",
            "litellm",
            11,
            1500,
            modes_scenario(&[(120.0, 0.55), (2400.0, 0.45)]),
        ),
        (
            "queue-growth",
            "vllm",
            12,
            1000,
            Scenario {
                growth: Growth::Queue,
                ..Scenario::default()
            },
        ),
        (
            "prompt-growth",
            "vllm",
            13,
            1000,
            Scenario {
                growth: Growth::Prompt,
                ..Scenario::default()
            },
        ),
    ];
    for (name, format, seed, lines, sc) in cases {
        let gz = std::fs::read(testdata().join(format!("analysis/{name}.jsonl.gz"))).unwrap();
        let mut bytes = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut bytes)
            .unwrap();
        assert!(bytes == genlog(format, seed, lines, &sc), "{name}");
    }
}

#[test]
fn generated_bimodal_ttft_is_found_at_its_centres_with_its_shares() {
    for (seed, modes) in [
        (1, [(80.0, 0.6), (1500.0, 0.4)]),
        (2, [(200.0, 0.3), (3000.0, 0.7)]),
        (3, [(50.0, 0.85), (900.0, 0.15)]),
    ] {
        let log = genlog("litellm", seed, 8_000, &modes_scenario(&modes));
        let doc = summary_json(&[], &log);
        let all = group(&doc, &serde_json::json!({}));
        let f = finding(all, "multimodal", "ttft_ms")
            .unwrap_or_else(|| panic!("{modes:?}: no modes found"));
        let found = f["modes"].as_array().unwrap();
        assert_eq!(found.len(), 2, "{modes:?}: {f}");
        for (m, &(center, share)) in found.iter().zip(&modes) {
            let c = m["center"].as_f64().unwrap();
            let s = m["share"].as_f64().unwrap();
            assert!(
                (c / center - 1.0).abs() <= 0.10,
                "{modes:?}: centre {c} for {center}"
            );
            assert!(
                (s - share).abs() <= 0.02,
                "{modes:?}: share {s} for {share}"
            );
        }
        // The mean lies between the modes, where few requests are; the first mode's requests
        // are the cache hits, so splitting by cache explains the modes.
        assert_eq!(f["mean_between_modes"], true);
        let near_mean = f["share_within_25pct_of_mean"].as_f64().unwrap();
        let busiest = found
            .iter()
            .map(|m| m["share_within_25pct"].as_f64().unwrap())
            .fold(0.0, f64::max);
        assert!(near_mean < 0.75 * busiest, "{near_mean} {busiest}");
        if seed == 1 {
            // 80 ms (60%) and 1500 ms (40%): the mean, about 660 ms, is in the valley.
            assert!(near_mean < 0.05, "{near_mean}");
        }
        assert_eq!(f["explained_by"], serde_json::json!(["cache"]), "{f}");
        assert!(
            f["text"]
                .as_str()
                .unwrap()
                .contains("split by cache explains it"),
            "{f}"
        );
    }
}

#[test]
fn modes_unrelated_to_the_cache_are_not_explained_by_it() {
    let mut sc = modes_scenario(&[(80.0, 0.6), (1500.0, 0.4)]);
    sc.mode_cache_random = true;
    let doc = summary_json(&[], &genlog("litellm", 4, 3_000, &sc));
    let f = finding(group(&doc, &serde_json::json!({})), "multimodal", "ttft_ms").unwrap();
    assert_eq!(f["explained_by"], Value::Null, "{f}");
    let cache = f["splits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["by"] == serde_json::json!(["cache"]))
        .unwrap();
    assert!(cache["purity"].as_f64().unwrap() < 0.9, "{cache}");
}

#[test]
fn unimodal_log_normal_ttft_is_never_called_multimodal_over_20_seeds() {
    // Spreads from 0.4 to 1.0 (a p99/p50 of 2.5x to 10x), medians from 150 ms to 1.2 s.
    let runs: Vec<(u64, f64, f64)> = (1..=20)
        .map(|seed| {
            let sigma = [0.4, 0.6, 0.8, 1.0][seed as usize % 4];
            let median = [150.0, 400.0, 1200.0][seed as usize % 3];
            (seed, median, sigma)
        })
        .collect();
    let threads: Vec<_> = runs
        .chunks(5)
        .map(|chunk| {
            let chunk = chunk.to_vec();
            std::thread::spawn(move || {
                for (seed, median, sigma) in chunk {
                    let sc = Scenario {
                        ttft_modes: vec![(median, 1.0)],
                        ttft_sigma: sigma,
                        ..Scenario::default()
                    };
                    let doc = summary_json(&[], &genlog("litellm", seed, 3_000, &sc));
                    for g in doc["groups"].as_array().unwrap() {
                        assert!(
                            finding(g, "multimodal", "ttft_ms").is_none(),
                            "seed {seed}, median {median}, sigma {sigma}: false alarm in {}",
                            g["key"]
                        );
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn decomposition_reads_capacity_for_queue_growth_and_prompt_for_prompt_growth() {
    for format in ["vllm", "otlp"] {
        for (growth, reading) in [(Growth::Queue, "capacity"), (Growth::Prompt, "prompt")] {
            let sc = Scenario {
                growth,
                ..Scenario::default()
            };
            let log = genlog(format, 5, 2_500, &sc);
            let doc = summary_json(&[], &log);
            let all = group(&doc, &serde_json::json!({}));
            let d = &all["analysis"]["ttft_decomposition"];
            assert_eq!(d["reading"], reading, "{format} {growth:?}: {d}");
            let f = finding(all, "ttft_decomposition", "").unwrap();
            assert!(
                f["text"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("a {reading} problem")),
                "{f}"
            );
            let (p50, p99) = (&d["regions"][0], &d["regions"][1]);
            assert_eq!(
                (p50["at"].as_str(), p99["at"].as_str()),
                (Some("p50"), Some("p99"))
            );
            if reading == "prompt" {
                // The slowest requests have the longest prompts.
                let (a, b) = (
                    p50["input_tokens"].as_f64().unwrap(),
                    p99["input_tokens"].as_f64().unwrap(),
                );
                assert!(b > 3.0 * a, "{a} {b}");
                assert!(p99["queue_share"].as_f64().unwrap() < 0.05);
            } else {
                assert!(
                    p99["queue_ms"].as_f64().unwrap() > 2.0 * p50["queue_ms"].as_f64().unwrap()
                );
            }
        }
    }
    // The table says it too.
    let sc = Scenario {
        growth: Growth::Queue,
        ..Scenario::default()
    };
    let out = run_ok(&["summary", "--explain"], &genlog("vllm", 6, 1_500, &sc));
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("reading: TTFT grows with queue time, a capacity problem"),
        "{text}"
    );
}

// ---------------------------------------------------------------------------------------
// The lab: TPOT by requests in flight against the client's own times.

fn truth() -> Vec<Value> {
    std::fs::read_to_string(testdata().join("lab/truth.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The documented rule, written again here: the time-weighted mean number of requests open
/// during the decode (itself included), rounded half up, at least 1, bucketed 1, 2, 3-4,
/// 5-8, ...
fn truth_bucket(intervals: &[(f64, f64)], a: f64, b: f64) -> String {
    let overlap: f64 = intervals
        .iter()
        .map(|&(s, e)| (b.min(e) - a.max(s)).max(0.0))
        .sum();
    let mean = overlap / (b - a);
    let n = ((mean + 0.5).floor() as u64).max(1);
    match n {
        1 => "1".into(),
        2 => "2".into(),
        _ => {
            let hi = n.next_power_of_two();
            format!("{}-{hi}", hi / 2 + 1)
        }
    }
}

/// bucket label -> TPOT values (ms), from the truth file: every request the client had in
/// flight is an interval; streamed successes decode over [first token, end] at the client's
/// TPOT, and (with `non_streamed`) non-streamed successes over the server's decode time before
/// their end, at the server's TPOT.
fn truth_table(non_streamed: bool) -> std::collections::BTreeMap<String, Vec<f64>> {
    let t = truth();
    let intervals: Vec<(f64, f64)> = t
        .iter()
        .map(|r| (r["t_send"].as_f64().unwrap(), r["t_end"].as_f64().unwrap()))
        .collect();
    let mut table = std::collections::BTreeMap::<String, Vec<f64>>::new();
    for r in &t {
        let end = r["t_end"].as_f64().unwrap();
        let (start, tpot) = if let Some(tpot) = r["client_tpot_ms"].as_f64() {
            (r["t_first_token"].as_f64().unwrap(), tpot)
        } else if non_streamed
            && r["stream"] == false
            && r["outcome"] == "ok"
            && r["output_tokens"].as_u64().unwrap_or(0) >= 2
        {
            let decode_s = r["server_predicted_ms"].as_f64().unwrap() / 1e3;
            (end - decode_s, r["server_tpot_ms"].as_f64().unwrap())
        } else {
            continue;
        };
        table
            .entry(truth_bucket(&intervals, start, end))
            .or_default()
            .push(tpot);
    }
    table
}

fn check_against_truth(doc: &Value, key: Value, non_streamed: bool) {
    let g = group(doc, &key);
    let buckets = g["analysis"]["tpot_by_in_flight"]["buckets"]
        .as_array()
        .unwrap();
    let want = truth_table(non_streamed);
    let labels: Vec<&str> = buckets
        .iter()
        .map(|b| b["in_flight"].as_str().unwrap())
        .collect();
    let mut want_labels: Vec<&str> = want.keys().map(String::as_str).collect();
    want_labels.sort_by_key(|l| l.split('-').next().unwrap().parse::<u64>().unwrap());
    assert_eq!(labels, want_labels, "{key}");
    for b in buckets {
        let label = b["in_flight"].as_str().unwrap();
        let values = &want[label];
        assert_eq!(
            b["count"].as_u64().unwrap(),
            values.len() as u64,
            "{key} bucket {label}"
        );
        for (q, v) in b["quantiles"].as_object().unwrap() {
            let p: f64 = q[1..].parse::<f64>().unwrap() / 100.0;
            let truth = quantile7(values, p);
            let got = v.as_f64().unwrap();
            assert!(
                (got / truth - 1.0).abs() <= 0.05,
                "{key} bucket {label} {q}: tokentime {got}, truth {truth}"
            );
        }
    }
    let p50 = |b: &Value| b["quantiles"]["p50"].as_f64().unwrap();
    assert!(p50(&buckets[0]) < p50(&buckets[buckets.len() - 1]));
}

#[test]
fn lab_tpot_by_requests_in_flight_equals_the_table_from_the_client_truth() {
    let path = testdata().join("lab/litellm.jsonl");
    let doc = summary_json(&["--by", "stream", path.to_str().unwrap()], b"");
    // Streamed calls against the client's own first-token and end times and TPOT.
    check_against_truth(&doc, serde_json::json!({"stream": "true"}), false);
    // All calls: non-streamed ones decode over the server's decode time before their end.
    check_against_truth(&doc, serde_json::json!({}), true);
    let t = &group(&doc, &serde_json::json!({}))["analysis"]["tpot_by_in_flight"];
    assert_eq!(t["late"], 0);
    assert_eq!(t["forced"], 0);
    assert_eq!(t["unplaced"], 0);
    assert!(t["slope_ms_per_request"].as_f64().unwrap() > 0.0);
    // The README's claim: TPOT medians per phase rose from about 36 ms to about 560 ms.
    let per_phase = |phase: u64| {
        let v: Vec<f64> = truth()
            .iter()
            .filter(|r| r["phase"] == phase)
            .filter_map(|r| r["client_tpot_ms"].as_f64())
            .collect();
        quantile7(&v, 0.5)
    };
    assert!((per_phase(1) - 36.0).abs() < 1.0, "{}", per_phase(1));
    assert!(
        (per_phase(4) / 560.0 - 1.0).abs() < 0.02,
        "{}",
        per_phase(4)
    );
}

#[test]
fn in_flight_table_is_the_same_for_a_log_in_start_order() {
    let text = std::fs::read_to_string(testdata().join("lab/litellm.jsonl")).unwrap();
    let mut lines: Vec<(f64, &str)> = text
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (v["startTime"].as_f64().unwrap(), l)
        })
        .collect();
    lines.sort_by(|a, b| a.0.total_cmp(&b.0));
    let by_start: String = lines.iter().map(|(_, l)| format!("{l}\n")).collect();
    let table =
        |doc: Value| group(&doc, &serde_json::json!({}))["analysis"]["tpot_by_in_flight"].clone();
    let want = table(summary_json(&[], text.as_bytes()));
    assert_eq!(table(summary_json(&[], by_start.as_bytes())), want);
}

// ---------------------------------------------------------------------------------------
// Histograms, headline, weighting.

#[test]
fn hist_draws_two_humps_for_two_modes() {
    let log = genlog(
        "litellm",
        8,
        3_000,
        &modes_scenario(&[(80.0, 0.6), (1500.0, 0.4)]),
    );
    let text = String::from_utf8(run_ok(&["summary", "--hist"], &log)).unwrap();
    let block: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("ttft_ms histogram"))
        .skip(1)
        .take_while(|l| !l.contains("histogram"))
        .collect();
    let count = |l: &str| -> u64 {
        let cols: Vec<&str> = l.split_whitespace().collect();
        let pct = cols.iter().position(|c| c.ends_with('%')).unwrap();
        cols[pct - 1].parse().unwrap()
    };
    let marked: Vec<usize> = (0..block.len())
        .filter(|&i| block[i].contains("<- mode"))
        .collect();
    assert_eq!(marked.len(), 2, "{text}");
    let low = count(block[marked[0]]).min(count(block[marked[1]]));
    let valley = (marked[0] + 1..marked[1])
        .map(|i| count(block[i]))
        .min()
        .unwrap();
    assert!(valley * 10 < low, "valley {valley}, modes {low}: {text}");
    assert!(block[marked[0]].contains('█'));
    // Every value is in a bin; the JSON lists the same bins.
    let doc = summary_json(&["--hist"], &log);
    let m = &group(&doc, &serde_json::json!({}))["metrics"]["ttft_ms"];
    let total: f64 = m["histogram"]["bins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["count"].as_f64().unwrap())
        .sum();
    assert_eq!(total as u64, m["count"].as_u64().unwrap());
    let shown: u64 = block.iter().map(|l| count(l)).sum();
    assert_eq!(shown, m["count"].as_u64().unwrap());
}

/// `--metrics` chooses what the table speaks of: with `--metrics ttft`, `--hist` draws TTFT's
/// histogram alone and the findings are TTFT's (its modes, by prompt length), not TPOT under
/// load or E2E's modes; the headline stays. The compact report's bullets likewise.
#[test]
fn metrics_choose_the_findings_and_histograms_too() {
    let log = std::fs::read(testdata().join("lab/litellm.jsonl")).unwrap();
    let text = |args: &[&str]| {
        let mut a = vec!["summary"];
        a.extend_from_slice(args);
        String::from_utf8(run_ok(&a, &log)).unwrap()
    };
    let hist = text(&["--hist", "--metrics", "ttft"]);
    let drawn: Vec<&str> = hist.lines().filter(|l| l.contains("histogram (")).collect();
    assert!(!drawn.is_empty(), "{hist}");
    assert!(drawn.iter().all(|l| l.starts_with("ttft_ms")), "{hist}");
    assert!(hist.contains("ttft_ms has 2 modes"), "{hist}");
    assert!(hist.contains("ttft_ms by input_tokens"), "{hist}");
    for other in [
        "tpot_ms has ",
        "e2e_ms has ",
        "tpot_ms by requests in flight",
    ] {
        assert!(!hist.contains(other), "{other}: {hist}");
    }
    assert!(hist.contains("for agents (E2E first)"), "{hist}");
    let compact = text(&["--metrics", "tpot"]);
    assert!(compact.contains("* TPOT under load"), "{compact}");
    assert!(!compact.contains("* TTFT"), "{compact}");
    // Without --metrics, everything.
    let all = text(&["--hist"]);
    assert!(all.contains("e2e_ms histogram ("), "{all}");
    assert!(all.contains("tpot_ms by requests in flight"), "{all}");
}

/// TPOT values of the lab's successes (client TPOT when streamed, server TPOT otherwise).
fn truth_tpots() -> Vec<f64> {
    truth()
        .iter()
        .filter(|r| r["outcome"] == "ok" && r["output_tokens"].as_u64().unwrap_or(0) >= 2)
        .filter_map(|r| {
            r["client_tpot_ms"]
                .as_f64()
                .or(r["server_tpot_ms"].as_f64())
        })
        .collect()
}

#[test]
fn consumer_decides_the_headline() {
    let path = testdata().join("lab/litellm.jsonl");
    let p = path.to_str().unwrap();
    let lines = |args: &[&str]| -> Vec<String> {
        let mut a = vec!["summary", "--explain"];
        a.extend_from_slice(args);
        a.push(p);
        String::from_utf8(run_ok(&a, b""))
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    };
    // Under the coverage line and the span's.
    let both = lines(&[]);
    assert!(
        both[2].starts_with("for chat (TTFT first): ttft_ms p50"),
        "{}",
        both[2]
    );
    assert!(
        both[3].starts_with("for agents (E2E first): e2e_ms p50"),
        "{}",
        both[3]
    );
    let chat = lines(&["--for", "chat"]);
    assert!(chat[2].starts_with("for chat"));
    assert!(!chat.iter().any(|l| l.starts_with("for agents")));
    let agent = lines(&["--for", "agent"]);
    assert!(agent[2].starts_with("for agents"));
    assert!(!agent.iter().any(|l| l.starts_with("for chat")));
    // The share of requests decoding slower than reading speed, against the truth file.
    let tpots = truth_tpots();
    for (speed, args) in [(5.3, vec![]), (10.0, vec!["--reading-speed", "10"])] {
        let mut a = args.clone();
        a.push(p);
        let doc = summary_json(&a, b"");
        let chat = &doc["headline"]["chat"];
        let threshold = 1000.0 / speed;
        let want = tpots.iter().filter(|&&t| t > threshold).count() as f64 / tpots.len() as f64;
        let got = chat["slower_than_reading_share"].as_f64().unwrap();
        assert!((got - want).abs() < 0.01, "speed {speed}: {got} vs {want}");
        assert_eq!(chat["reading_speed_tokens_per_s"], speed);
        // The agent headline leads with the same E2E quantiles as the table.
        let agent = &doc["headline"]["agent"];
        let e2e = &group(&doc, &serde_json::json!({}))["metrics"]["e2e_ms"]["quantiles"];
        for q in ["p50", "p90", "p99"] {
            assert_eq!(agent["e2e_ms"]["quantiles"][q], e2e[q]);
        }
        let share = agent["decode_share_total"].as_f64().unwrap();
        assert!(share > 0.0 && share < 1.0);
    }
    assert_eq!(
        run(&["summary", "--reading-speed", "0", p], b"")
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn token_weighted_quantiles_stand_beside_request_weighted_ones_where_they_differ() {
    // Nine 2-token answers at 10 ms per token and one 1001-token answer at 100 ms per token:
    // per request the median TPOT is 10 ms, per token (1000 of the 1009 gaps) 100 ms.
    let mut log = String::new();
    // Epoch milliseconds (2025), integers: exact, and within the plausible window of instants.
    for i in 0..10 {
        let (n, tpot) = if i == 5 { (1001, 100) } else { (2, 10) };
        let t0 = 1_741_946_531_000i64 + i * 200_000;
        let t1 = t0 + 50;
        let t2 = t1 + tpot * (n - 1);
        log.push_str(&format!(
            "{{\"t0\":{t0},\"t1\":{t1},\"t2\":{t2},\"n\":{n}}}\n"
        ));
    }
    let map = [
        "--map",
        "arrival=t0:epoch_ms",
        "--map",
        "first_token=t1:epoch_ms",
        "--map",
        "end=t2:epoch_ms",
        "--map",
        "output_tokens=n",
    ];
    let doc = summary_json(&map, log.as_bytes());
    let all = group(&doc, &serde_json::json!({}));
    let w = &all["analysis"]["token_weighted"]["tpot_ms"];
    assert_eq!(w["weight"], "output_tokens - 1");
    assert!((w["request_weighted"]["p50"].as_f64().unwrap() - 10.0).abs() < 1e-6);
    let tw = w["token_weighted"]["p50"].as_f64().unwrap();
    assert!((tw / 100.0 - 1.0).abs() < 0.01, "{tw}");
    assert_eq!(w["differs"], true);
    assert!(finding(all, "token_weighting", "tpot_ms").is_some());
    let mut a = vec!["summary", "--explain"];
    a.extend_from_slice(&map);
    let text = String::from_utf8(run_ok(&a, log.as_bytes())).unwrap();
    assert!(
        text.contains("tpot_ms token-weighted (by output_tokens - 1): p50 100.0, p90 100.0"),
        "{text}"
    );
    // Equal TPOTs: the two agree and the table says nothing of TPOT.
    let mut flat = String::new();
    for i in 0..10 {
        let n = if i == 5 { 1001 } else { 2 };
        let t0 = 1_741_946_531_000i64 + i * 200_000;
        let t2 = t0 + 50 + 10 * (n - 1);
        flat.push_str(&format!(
            "{{\"t0\":{t0},\"t1\":{},\"t2\":{t2},\"n\":{n}}}\n",
            t0 + 50
        ));
    }
    let text = String::from_utf8(run_ok(&a, flat.as_bytes())).unwrap();
    assert!(!text.contains("tpot_ms token-weighted"), "{text}");
}

/// A log far out of time order (the newer half first, as `cat app.log*` gives after a rotation)
/// places many requests late: the in-flight table says its counts are unreliable and reads no
/// trend from them; in order, the trend is read.
#[test]
fn in_flight_counts_of_a_log_out_of_time_order_are_called_unreliable() {
    let lab = std::fs::read(testdata().join("lab/litellm.jsonl")).unwrap();
    let lines: Vec<&[u8]> = lab.split_inclusive(|&b| b == b'\n').collect();
    let half = lines.len() / 2;
    let swapped = [lines[half..].concat(), lines[..half].concat()].concat();
    let text = |input: &[u8]| String::from_utf8(run_ok(&["summary", "--explain"], input)).unwrap();
    let out = text(&swapped);
    assert!(
        out.contains("the in-flight counts are unreliable, no trend is read from them"),
        "{out}"
    );
    assert!(!out.contains("per extra request in flight"), "{out}");
    // Ten requests (3.8 %) moved to the end made a bucket of their own and a false trend.
    let moved = [lines[10..].concat(), lines[..10].concat()].concat();
    assert!(text(&moved).contains("the in-flight counts are unreliable"));
    let out = text(&lab);
    assert!(out.contains("tpot_ms grows"), "{out}");
    assert!(!out.contains("unreliable"), "{out}");
    // Every group's table, not only the all-requests one: the late counts are the input's.
    let json: Value = serde_json::from_slice(&run_ok(
        &["summary", "-o", "json", "--by", "model"],
        &swapped,
    ))
    .unwrap();
    let mut tables = 0;
    for g in json["groups"].as_array().unwrap() {
        let Some(t) = g["analysis"].get("tpot_by_in_flight") else {
            continue;
        };
        tables += 1;
        assert_eq!(
            t["late"],
            json["groups"][0]["analysis"]["tpot_by_in_flight"]["late"]
        );
        for f in g["findings"].as_array().unwrap() {
            if f["kind"] == "tpot_under_load" {
                assert_eq!(f["reliable"], false, "{}", g["key"]);
                assert_eq!(f["slope_ms_per_request"], Value::Null);
            }
        }
    }
    assert!(tables >= 4, "all, a model, its cache classes: {tables}");
    let by_model =
        String::from_utf8(run_ok(&["summary", "--explain", "--by", "model"], &swapped)).unwrap();
    assert!(
        !by_model.contains("per extra request in flight"),
        "{by_model}"
    );
}

/// A TTFT that runs from `scheduled` (llama.cpp's timings: no arrival time) is prefill only;
/// the headline says so, in text and JSON, and a gateway's TTFT does not.
#[test]
fn the_headline_says_when_ttft_leaves_the_queue_out() {
    let llama = testdata().join("lab/llamacpp_timings.jsonl");
    let litellm = testdata().join("lab/litellm.jsonl");
    let args = |f: &std::path::Path| {
        vec![
            "summary".to_owned(),
            "--explain".to_owned(),
            "--root".to_owned(),
            "response".to_owned(),
            f.to_str().unwrap().to_owned(),
        ]
    };
    let text = |a: Vec<String>| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        String::from_utf8(run_ok(&a, b"")).unwrap()
    };
    assert!(
        text(args(&llama))
            .lines()
            .nth(2)
            .unwrap()
            .contains("from `scheduled`")
    );
    let mut a = args(&llama);
    a.extend(["-o".to_owned(), "json".to_owned()]);
    let j: Value = serde_json::from_str(&text(a)).unwrap();
    assert_eq!(j["headline"]["chat"]["ttft_from_scheduled"], true);
    let j = summary_json(&[litellm.to_str().unwrap()], b"");
    assert_eq!(j["headline"]["chat"]["ttft_from_scheduled"], false);
}

#[test]
fn counts_in_findings_are_whole_numbers_in_json() {
    let lab = std::fs::read("testdata/lab/litellm.jsonl").unwrap();
    let doc = summary_json(&["--explain"], &lab);
    let all = group(&doc, &serde_json::json!({}));
    let ttft = finding(all, "multimodal", "ttft_ms").expect("TTFT modes");
    assert!(ttft["n"].is_u64(), "{}", ttft["n"]);
    assert_eq!(ttft["n"], 177);
    for g in ttft["splits"].as_array().unwrap() {
        for row in g["groups"].as_array().unwrap() {
            assert!(row["count"].is_u64(), "{row}");
        }
    }
}

/// A decomposition whose rows hold fewer than 5 requests gives no reading: NIM's three
/// requests, one in each row, are no capacity problem (the compact report says nothing).
#[test]
fn a_decomposition_of_few_requests_reads_nothing() {
    let nim = testdata().join("samples/nim.jsonl");
    let nim = nim.to_str().unwrap();
    let explained = String::from_utf8(run_ok(&["summary", "--explain", nim], b"")).unwrap();
    assert!(
        explained.contains("\nreading: none, a row holds fewer than 5 requests (queueing is 1% of TTFT at p50 and 59% at p99)\n"),
        "{explained}"
    );
    let compact = String::from_utf8(run_ok(&["summary", nim], b"")).unwrap();
    assert!(!compact.contains("TTFT grows"), "{compact}");
    let json: serde_json::Value =
        serde_json::from_slice(&run_ok(&["summary", "-o", "json", nim], b"")).unwrap();
    assert_eq!(
        json["groups"][0]["analysis"]["ttft_decomposition"]["reading"],
        "few"
    );
}
