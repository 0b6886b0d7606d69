//! `tokentime diff A B`: the acceptance checks on the lab log (its concurrency-1 phase against
//! its concurrency-8 phase is worse beyond noise in TTFT and TPOT; two halves of one shuffle of
//! a phase differ in nothing), hand-computed intervals, the `--fail-if` exit codes, and digest
//! files read as the logs they were saved from.

use crate::common::{run, testdata};
use regex::Regex;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The lab log's requests of phase `p` (1-4), by LiteLLM's `startTime` within the phase's
/// window in `phases.json` (testdata/lab/README.md).
fn phase_lines(p: u64) -> Vec<String> {
    let phases: Value =
        serde_json::from_slice(&std::fs::read(testdata().join("lab/phases.json")).unwrap())
            .unwrap();
    let ph = phases["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["phase"] == p)
        .unwrap();
    let (t0, t1) = (
        ph["t_start"].as_f64().unwrap(),
        ph["t_end"].as_f64().unwrap(),
    );
    std::fs::read_to_string(testdata().join("lab/litellm.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let t = v["startTime"].as_f64().unwrap();
            (t0..=t1).contains(&t)
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

fn write(dir: &Path, name: &str, lines: &[String]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, lines.concat()).unwrap();
    p
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `diff -o json` of two files, its exit status and document.
fn diff_json(a: &Path, b: &Path, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["diff", "-o", "json", s(a), s(b)];
    args.extend_from_slice(extra);
    let out = run(&args, b"");
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap(), doc)
}

/// The verdicts of `metric` in the group of all requests.
fn verdicts(doc: &Value, metric: &str) -> Vec<String> {
    doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["metric"] == metric && r["group"] == serde_json::json!({}))
        .map(|r| r["verdict"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn concurrency_8_is_worse_than_concurrency_1_in_ttft_and_tpot() {
    let dir = tempfile::tempdir().unwrap();
    let (one, eight) = (phase_lines(1), phase_lines(4));
    assert_eq!((one.len(), eight.len()), (59, 88));
    let a = write(dir.path(), "c1.jsonl", &one);
    let b = write(dir.path(), "c8.jsonl", &eight);
    let (code, doc) = diff_json(&a, &b, &[]);
    assert_eq!(code, 0);
    for m in ["ttft_ms", "tpot_ms"] {
        let v = verdicts(&doc, m);
        assert!(v.iter().any(|v| v == "worse"), "{m}: {v:?}");
        assert!(!v.iter().any(|v| v == "better"), "{m}: {v:?}");
    }
    // The other way round: better.
    let (_, doc) = diff_json(&b, &a, &[]);
    assert!(verdicts(&doc, "ttft_ms").iter().any(|v| v == "better"));
    // A gate's JSON carries what it was read as, for a script: no parsing of its text.
    let (code, doc) = diff_json(&a, &b, &["--fail-if", "tpot.p50>+5ms"]);
    assert_eq!(code, 3);
    let g = &doc["fail_if"][0];
    let row = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "tpot_ms" && r["quantile"] == "p50")
        .unwrap();
    assert_eq!(
        (
            &g["metric"],
            &g["quantile"],
            &g["threshold_ms"],
            &g["threshold_pct"]
        ),
        (&"tpot_ms".into(), &"p50".into(), &5.0.into(), &Value::Null)
    );
    assert_eq!((&g["a"], &g["b"]), (&row["a"]["value"], &row["b"]["value"]));
    assert_eq!(g["judged_on"], serde_json::json!({}));
    assert_eq!(g["holds"], true);
}

#[test]
fn two_halves_of_a_shuffled_phase_differ_in_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for p in 1..=4 {
        let mut lines = phase_lines(p);
        // Fisher-Yates with a fixed LCG: one random shuffle, the same on every run.
        let mut x: u64 = 0x2545_f491_4f6c_dd1d ^ p;
        for i in (1..lines.len()).rev() {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            lines.swap(i, ((x >> 33) % (i as u64 + 1)) as usize);
        }
        let half = lines.len() / 2;
        let a = write(dir.path(), "h1.jsonl", &lines[..half]);
        let b = write(dir.path(), "h2.jsonl", &lines[half..]);
        let (code, doc) = diff_json(&a, &b, &["--fail-if", "ttft.p50>+0%,tpot.p50>+0%"]);
        assert_eq!(code, 0, "phase {p}");
        let flagged: Vec<&Value> = doc["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["verdict"] == "worse" || r["verdict"] == "better")
            .collect();
        assert!(flagged.is_empty(), "phase {p}: {flagged:?}");
        assert!(
            doc["rows"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["verdict"] == "same"),
            "phase {p}: something was compared"
        );
    }
}

const MAP: [&str; 6] = [
    "--map",
    "arrival=t0:epoch_ms",
    "--map",
    "first_token=t1:epoch_ms",
    "--map",
    "end=t2:epoch_ms",
];

/// Ten requests whose TTFT is `ttft0 + i` ms and decode 100 ms.
fn ten(dir: &Path, name: &str, ttft0: u64) -> PathBuf {
    let t: u64 = 1_795_964_927_000;
    let lines: Vec<String> = (0..10)
        .map(|i| {
            format!(
                "{{\"t0\":{t},\"t1\":{},\"t2\":{}}}\n",
                t + ttft0 + i,
                t + ttft0 + i + 100
            )
        })
        .collect();
    write(dir, name, &lines)
}

fn row<'a>(doc: &'a Value, metric: &str) -> &'a Value {
    doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == metric && r["group"] == serde_json::json!({}))
        .unwrap()
}

#[test]
fn hand_computed_intervals() {
    let dir = tempfile::tempdir().unwrap();
    let a = ten(dir.path(), "a.jsonl", 100);
    let b = ten(dir.path(), "b.jsonl", 200);
    let c = ten(dir.path(), "c.jsonl", 105);
    let args: Vec<&str> = MAP.iter().copied().chain(["--quantiles", "50"]).collect();
    // Groups: all requests (cache=unknown holds the same requests: not compared again);
    // metrics with values: ttft, e2e, decode. So 3 comparisons; each interval at
    // 1 - 0.05 / 6, 0.833% per tail. For p50 of 10 values, P(Bin(10, 0.5) <= 0) = 1/1024 =
    // 0.098% <= 0.833% < P(<= 1) = 11/1024: the lower end is the 1st value;
    // P(<= 8) = 1013/1024 = 98.93% < 99.17% <= P(<= 9) = 1023/1024: the upper end is the 10th. A: 100..109 ms, p50 104.5; B: 200..209, p50 204.5.
    let (code, doc) = diff_json(&a, &b, &args);
    assert_eq!(code, 0);
    assert_eq!(doc["method"]["comparisons"], 3);
    let r = row(&doc, "ttft_ms");
    assert_eq!(r["a"]["value"], 104.5);
    assert_eq!(r["b"]["value"], 204.5);
    assert_eq!(
        (r["a"]["low"].as_f64(), r["a"]["high"].as_f64()),
        (Some(100.0), Some(109.0))
    );
    assert_eq!(
        (r["b"]["low"].as_f64(), r["b"]["high"].as_f64()),
        (Some(200.0), Some(209.0))
    );
    assert_eq!(r["change_ms"], 100.0);
    assert_eq!(r["change_pct"], 95.694); // 100 / 104.5
    assert_eq!(r["verdict"], "worse");
    assert_eq!(row(&doc, "decode_ms")["verdict"], "same");
    // C: 105..114 overlaps A's 100..109: within noise, though its p50 is 5 ms higher.
    let (_, doc) = diff_json(&a, &c, &args);
    assert_eq!(row(&doc, "ttft_ms")["change_ms"], 5.0);
    assert_eq!(row(&doc, "ttft_ms")["verdict"], "same");
    // p90 of 10 values: no order statistic above it at that level.
    let args: Vec<&str> = MAP.iter().copied().chain(["--quantiles", "90"]).collect();
    let (_, doc) = diff_json(&a, &b, &args);
    assert_eq!(row(&doc, "ttft_ms")["verdict"], "not enough samples");
}

/// `diff X Y --quantiles 50,90` with these `--fail-if` gates (and flags, `--...`): its exit
/// status and stderr.
fn gate_code(x: &Path, y: &Path, gates: &[&str]) -> (i32, String) {
    let mut args: Vec<&str> = vec!["diff", s(x), s(y), "--quantiles", "50,90"];
    args.extend(MAP);
    for g in gates {
        if g.starts_with("--") {
            args.push(g);
        } else {
            args.extend(["--fail-if", g]);
        }
    }
    let out = run(&args, b"");
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn fail_if_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let a = ten(dir.path(), "a.jsonl", 100);
    let b = ten(dir.path(), "b.jsonl", 200);
    let c = ten(dir.path(), "c.jsonl", 105);
    let code = gate_code;
    // +95.7% and +100 ms, beyond noise.
    let (c3, err) = code(&a, &b, &["ttft_ms.p50>+10%"]);
    assert_eq!(c3, 3, "{err}");
    assert!(
        err.contains("--fail-if ttft_ms.p50>+10% HOLDS: +95.694% (+100.0 ms), worse beyond noise"),
        "{err}"
    );
    assert_eq!(code(&a, &b, &["ttft.p50>+50ms"]).0, 3);
    assert_eq!(code(&a, &b, &["ttft.p50>10%"]).0, 3);
    assert_eq!(code(&a, &b, &["ttft.p50>+50ms@cache=unknown"]).0, 3);
    // Past the threshold in one of two gates (comma-separated or repeated).
    assert_eq!(code(&a, &b, &["decode.p50>+1%,ttft.p50>+10%"]).0, 3);
    assert_eq!(code(&a, &b, &["decode.p50>+1%", "ttft.p50>+10%"]).0, 3);
    // Not past the threshold.
    assert_eq!(code(&a, &b, &["ttft.p50>+100%"]).0, 0);
    assert_eq!(code(&a, &b, &["ttft.p50>+100ms"]).0, 0);
    // Past it but within noise: no flaky gate.
    let (c0, err) = code(&a, &c, &["ttft.p50>+1%"]);
    assert_eq!(c0, 0);
    assert!(
        err.contains("does not hold: +4.785% (+5.0 ms), within noise: these samples cannot tell it from no change at the level of one gate (more requests narrow the intervals)"),
        "{err}"
    );
    // A run against itself: no change, said as such.
    let (c0, err) = code(&a, &a, &["ttft.p50>+1%"]);
    assert_eq!(c0, 0);
    assert!(
        err.contains("--fail-if ttft.p50>+1% does not hold: +0.0% (+0.0 ms), no change"),
        "{err}"
    );
    // Too few values: not judged, exit 0.
    let (c0, err) = code(&a, &b, &["ttft.p90>+1%"]);
    assert_eq!(c0, 0);
    assert!(err.contains("not judged"), "{err}");
    assert!(
        Regex::new(r"not enough samples \(its p90 needs \d+ values a side at this level, A has 10, B 10; --fail-unjudged fails a gate not judged\)")
            .unwrap()
            .is_match(&err),
        "{err}"
    );
    // ... unless --fail-unjudged: exit 2, said on stderr; a gate that holds still wins (3).
    let (c2, err) = code(&a, &b, &["ttft.p90>+1%", "--fail-unjudged"]);
    assert_eq!(c2, 2, "{err}");
    assert!(
        err.contains("1 --fail-if gate(s) not judged: failing (--fail-unjudged)"),
        "{err}"
    );
    assert_eq!(
        code(
            &a,
            &b,
            &["ttft.p90>+1%", "ttft.p50>+10%", "--fail-unjudged"]
        )
        .0,
        3
    );
    assert_eq!(code(&a, &b, &["ttft.p50>+100%", "--fail-unjudged"]).0, 0);
    // Faster: `<`.
    assert_eq!(code(&b, &a, &["ttft.p50<-20%"]).0, 3);
    assert_eq!(code(&b, &a, &["ttft.p50>+1%"]).0, 0);
    // Usage errors: 2, with the reason.
    for (gate, why) in [
        ("ttft.p50>+x%", "the change is not a number"),
        ("ttft.p50>+10", "unit"),
        ("ttft.p50>-10%", "'>' takes a rise"),
        (
            "ttft.p75>+10%",
            "p75 is not compared: add it to --quantiles",
        ),
        ("input_tokens.p50>+1%", "not a latency metric"),
        (
            "ttft.p50>+1%@model=x",
            "--fail-if \"ttft.p50>+1%@model=x\": there is no group by [model]",
        ),
        // A group neither run has (a typo, or a class the logs never show): never judged, so
        // a usage error rather than a gate that passes for ever.
        (
            "ttft.p50>+1%@cache=miss",
            "--fail-if ttft.p50>+1%@cache=miss: cannot be judged: no request of either run is \
             in group cache=miss",
        ),
        // A metric neither run logged.
        (
            "queue.p50>+1%",
            "cannot be judged: neither run has queue_ms values in group all requests",
        ),
    ] {
        let (c2, err) = code(&a, &b, &[gate]);
        assert_eq!(c2, 2, "{gate}");
        assert!(err.contains(why), "{gate}: {err}");
    }
    // A run with no request: said so, not as a group only the other has.
    let empty = a.with_file_name("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let (c2, err) = code(&empty, &b, &["ttft.p50>+1%"]);
    assert_eq!(c2, 2);
    assert!(
        err.contains("--fail-if ttft.p50>+1%: cannot be judged: run A has no request"),
        "{err}"
    );
    let out = run(&["diff", s(&a)], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("diff takes two inputs"));
}

/// A group that holds every request of both runs (`cache=unknown` when the logs carry no cache
/// signal) repeats all requests' rows: compared once, and not counted twice in the Bonferroni
/// divisor.
#[test]
fn a_group_as_large_as_all_requests_is_not_compared_again() {
    let dir = tempfile::tempdir().unwrap();
    let a = ten(dir.path(), "a.jsonl", 100);
    let b = ten(dir.path(), "b.jsonl", 200);
    let mut args = vec!["--quantiles", "50"];
    args.extend(MAP);
    let (_, doc) = diff_json(&a, &b, &args);
    assert_eq!(
        doc["same_as_all"],
        serde_json::json!([{"cache": null}]),
        "{doc}"
    );
    let groups: Vec<&Value> = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["group"])
        .collect();
    assert!(
        groups
            .iter()
            .all(|g| g.as_object().is_some_and(|o| o.is_empty())),
        "{groups:?}"
    );
    let metrics = doc["rows"].as_array().unwrap().len();
    assert_eq!(doc["method"]["comparisons"], metrics, "{doc}");
}

#[test]
fn digest_files_compare_as_their_logs() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "c1.jsonl", &phase_lines(1));
    let b = write(dir.path(), "c8.jsonl", &phase_lines(4));
    let (da, db) = (
        dir.path().join("c1.digest.json"),
        dir.path().join("c8.digest.json"),
    );
    for (log, d) in [(&a, &da), (&b, &db)] {
        let out = run(&["summary", "--save-digest", s(d), s(log)], b"");
        assert!(out.status.success());
    }
    let strip = |mut doc: Value| {
        for side in ["a", "b"] {
            doc[side]["input"] = Value::Null;
            doc[side]["digest_file"] = Value::Null;
        }
        doc
    };
    let (_, logs) = diff_json(&a, &b, &[]);
    let (_, digests) = diff_json(&da, &db, &[]);
    let (_, mixed) = diff_json(&da, &b, &[]);
    assert_eq!(digests["a"]["digest_file"], true);
    assert_eq!(mixed["b"]["digest_file"], false);
    let logs = strip(logs);
    assert_eq!(strip(digests), logs);
    assert_eq!(strip(mixed), logs);
    // A log and a digest file saved with other --by keys do not line up.
    let dm = dir.path().join("by-model.digest.json");
    assert!(
        run(
            &["summary", "--by", "model", "--save-digest", s(&dm), s(&a)],
            b""
        )
        .status
        .success()
    );
    let out = run(&["diff", s(&dm), s(&b)], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("do not line up"));
}

/// The table marks a t-digest estimate with `~` after it, as the summary does (vLLM's result
/// files hold 42,000+ ITL samples each, past the exact limit; their 200 TTFTs are exact), and
/// its footer says what the mark means.
#[test]
fn estimates_are_marked_in_the_table() {
    let r = testdata().join("realdata");
    let (a, b) = (
        r.join("vllm083-llama70b-tp8-qps1/result.json"),
        r.join("vllm083-llama70b-tp8-qpsinf/result.json"),
    );
    let out = run(&["diff", s(&a), s(&b)], b"");
    let table = String::from_utf8(out.stdout).unwrap();
    let row = |prefix: &str| {
        table
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("{prefix}: {table}"))
            .split_whitespace()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let itl = row("itl_ms     p99 ");
    assert_eq!(itl[2..4], ["43.028~", "43.609~"], "{table}");
    let ttft = row("ttft_ms    p50 ");
    assert_eq!(ttft[2..4], ["56.372", "349.8"], "{table}");
    assert!(
        table.contains("~ marks t-digest estimates; beyond noise"),
        "{table}"
    );
    assert!(
        table
            .replace("\n  ", " ")
            .contains("t-digest estimates widened by their rank error"),
        "{table}"
    );
    // With every value exact there is no rank error to speak of.
    let lab = testdata().join("lab/litellm.jsonl");
    let out = run(&["diff", s(&lab), s(&lab)], b"");
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("family-wise over"), "{table}");
    assert!(!table.contains("rank error"), "{table}");
    assert!(!table.contains('~'), "{table}");
}

/// A `--by` key that splits nothing (one model in both runs) makes groups with the same
/// requests as the cache groups: they are listed as such and not compared again, so the
/// comparisons and a gate's verdict are those of the run without `--by`.
#[test]
fn a_group_as_large_as_a_group_of_fewer_keys_is_not_compared_again() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "c1.jsonl", &phase_lines(1));
    let b = write(dir.path(), "c8.jsonl", &phase_lines(4));
    let gate = ["--fail-if", "decode.p50>+10%@cache=unknown"];
    let (code, plain) = diff_json(&a, &b, &gate);
    let mut by = vec!["--by", "model"];
    by.extend(gate);
    let (code_by, doc) = diff_json(&a, &b, &by);
    assert_eq!((code, code_by), (3, 3));
    assert_eq!(
        doc["method"]["comparisons"], plain["method"]["comparisons"],
        "{doc}"
    );
    assert_eq!(doc["fail_if"], plain["fail_if"]);
    assert_eq!(doc["rows"], plain["rows"]);
    let model = "smollm2-135m-instruct-q4_1";
    assert_eq!(doc["same_as_all"], serde_json::json!([{ "model": model }]));
    assert!(
        doc["same_as"].as_array().unwrap().contains(
            &serde_json::json!({"group": {"model": model, "cache": null}, "as": {"cache": null}})
        ),
        "{}",
        doc["same_as"]
    );
}

/// An in-house log no built-in format reads is read by diff as by summary: each side gets the
/// format `inferred`, learned from its own lines.
#[test]
fn diff_reads_in_house_logs_with_the_inferred_format() {
    let dir = tempfile::tempdir().unwrap();
    let log = |name: &str, ttft0: u64| {
        let lines: Vec<String> = (0..20)
            .map(|i| {
                format!(
                    "{{\"request_id\":\"r{i}\",\"ttft_ms\":{},\"e2e_ms\":{}}}\n",
                    ttft0 + i,
                    2000 + i
                )
            })
            .collect();
        write(dir.path(), name, &lines)
    };
    let (a, b) = (log("a.jsonl", 100), log("b.jsonl", 300));
    let (code, doc) = diff_json(&a, &b, &["--quantiles", "50"]);
    assert_eq!(code, 0);
    let row = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "ttft_ms")
        .unwrap_or_else(|| panic!("{doc}"));
    // Medians of 100..119 and 300..319.
    assert_eq!(
        (&row["a"]["value"], &row["b"]["value"]),
        (&109.5.into(), &309.5.into()),
        "{row}"
    );
    // What was inferred is said for each side, under its name.
    let out = run(&["diff", s(&a), s(&b)], b"");
    let stderr = String::from_utf8(out.stderr).unwrap();
    for side in ["a.jsonl", "b.jsonl"] {
        assert!(
            stderr.contains(&format!("{side}: inferred: mapped from 20 sample lines")),
            "{stderr}"
        );
    }
}

/// A server's TTFT (llama.cpp's `prompt_ms`, from `scheduled`) against a gateway's (LiteLLM's,
/// from `gateway`): diff says the rows compare different waits; two logs of one kind, nothing.
#[test]
fn ttfts_from_different_instants_are_named() {
    let lab = testdata().join("lab");
    let dir = tempfile::tempdir().unwrap();
    let server = dir.path().join("server.digest");
    let out = run(
        &[
            "summary",
            "--root",
            "response",
            "--save-digest",
            s(&server),
            lab.join("llamacpp_timings.jsonl").to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0));
    let gateway = lab.join("litellm.jsonl");
    let stderr = |a: &Path, b: &Path| {
        let out = run(&["diff", "--quantiles", "50", s(a), s(b)], b"");
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8(out.stderr).unwrap()
    };
    let mixed = stderr(&server, &gateway);
    assert!(
        mixed.contains("A's TTFTs run from `scheduled` (284), B's from `gateway` (177): their TTFT rows compare different waits"),
        "{mixed}"
    );
    assert!(!stderr(&gateway, &gateway).contains("different waits"));
}

/// An empty side is called empty, and a table with nothing compared says so (not "over 0
/// comparisons").
#[test]
fn an_empty_side_compares_nothing_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write(dir.path(), "empty.jsonl", &[]);
    let lab = testdata().join("lab/litellm.jsonl");
    let out = run(&["diff", s(&lab), s(&empty)], b"");
    assert_eq!(out.status.code(), Some(0));
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert!(stderr.contains("empty.jsonl: empty (no line)"), "{stderr}");
    assert!(
        stdout.contains("nothing compared: no group has values of a metric in both runs"),
        "{stdout}"
    );
    assert!(!stdout.contains("over 0 comparisons"), "{stdout}");
}

/// tokentime's own outputs are no logs. A digest file piped into `diff -` is read as one (as
/// `merge` reads stdin), giving the comparison the file itself gives; a digest file or a
/// summary's JSON given to `summary` gives no request (not requests made up from its groups
/// or its list of the slowest), and stderr names it and what reads it.
#[test]
fn tokentimes_own_outputs_are_no_logs() {
    let dir = tempfile::tempdir().unwrap();
    let a = ten(dir.path(), "a.jsonl", 100);
    let b = ten(dir.path(), "b.jsonl", 200);
    let digest = dir.path().join("a.digest.json");
    let mut args = vec!["summary", "--save-digest", s(&digest), s(&a)];
    args.extend(MAP);
    assert!(run(&args, b"").status.success());
    let mut args = vec!["diff", "-o", "json", "-", s(&b)];
    args.extend(MAP);
    let piped = run(&args, &std::fs::read(&digest).unwrap());
    args[3] = s(&digest);
    let named = run(&args, b"");
    assert!(named.status.success());
    let (mut piped, named): (Value, Value) = (
        serde_json::from_slice(&piped.stdout).unwrap(),
        serde_json::from_slice(&named.stdout).unwrap(),
    );
    assert_eq!(piped["a"]["input"], "<stdin>");
    piped["a"]["input"] = named["a"]["input"].clone();
    assert_eq!(piped, named);
    assert_eq!(named["a"]["digest_file"], true);
    assert_eq!(named["a"]["requests"], 10);
    // A log on standard input is still a log (its first line read twice, once to look).
    let mut args = vec!["diff", "-o", "json", "-", s(&b)];
    args.extend(MAP);
    let log = run(&args, &std::fs::read(&a).unwrap());
    let log: Value = serde_json::from_slice(&log.stdout).unwrap();
    assert_eq!(log["a"]["requests"], 10);
    assert_eq!(log["rows"], named["rows"]);

    let json = dir.path().join("a.summary.json");
    let mut args = vec!["summary", "-o", "json", s(&a)];
    args.extend(MAP);
    std::fs::write(&json, run(&args, b"").stdout).unwrap();
    for (file, what) in [
        (
            &digest,
            "(tokentime.digest/v1), left unread: a digest file, no log: `tokentime merge FILE...` reports digest files",
        ),
        (
            &json,
            "(tokentime.summary/v1), left unread: a summary's JSON (-o json): percentiles of requests, not requests",
        ),
    ] {
        let out = run(&["summary", s(file)], b"");
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(stdout.starts_with("1 line, no request: no timing 1\nno line was a request: the input is tokentime's own output"), "{stdout}");
        assert!(
            stderr.contains(&format!(
                "tokentime: 1 JSON object is tokentime's own output {what}"
            )),
            "{stderr}"
        );
        assert!(!stderr.contains("inferred"), "{stderr}");
        // Enrich (no subcommand) passes it through and says what it is (once).
        let out = run(&[s(file)], b"");
        assert_eq!(out.stdout, std::fs::read(file).unwrap());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!(
                "tokentime: 1 JSON object is tokentime's own output {what}"
            )),
            "{stderr}"
        );
        assert!(!stderr.contains("no line was a request"), "{stderr}");
        // diff says it of a side read as a log too (a digest file named is read as one).
        if *file == digest {
            continue;
        }
        let mut args = vec!["diff", s(file), s(&b)];
        args.extend(MAP);
        let err = String::from_utf8_lossy(&run(&args, b"").stderr).into_owned();
        assert!(
            err.contains(&format!(
                "tokentime: {}: 1 JSON object is tokentime's own output {what}",
                s(file)
            )),
            "{err}"
        );
    }
}

/// Too few values for an interval, but a change short of the threshold, or the other way (a
/// run against itself, B faster): no interval could make the gate hold, so it is judged, and
/// does not hold, also under --fail-unjudged.
#[test]
fn a_gate_short_of_its_threshold_is_judged_however_few_the_values() {
    let dir = tempfile::tempdir().unwrap();
    let a = ten(dir.path(), "a.jsonl", 100);
    let b = ten(dir.path(), "b.jsonl", 200);
    for (x, y, gate, what) in [
        (&a, &a, "ttft.p90>+1%", "no change"),
        (&b, &a, "ttft.p90>+1%", "a change the other way"),
        (&a, &b, "ttft.p90<-1%", "a change the other way"),
        (&a, &b, "ttft.p90>+500%", "short of the threshold"),
    ] {
        let (c0, err) = gate_code(x, y, &[gate, "--fail-unjudged"]);
        assert_eq!(c0, 0, "{err}");
        assert!(
            err.contains(&format!("--fail-if {gate} does not hold: "))
                && err.contains(&format!(
                    "{what} (not enough samples for an interval, none needed)"
                )),
            "{err}"
        );
    }
    // Past it: not judged (exit 2 under --fail-unjudged).
    assert_eq!(gate_code(&a, &b, &["ttft.p90>+1%", "--fail-unjudged"]).0, 2);
}

/// An ITL gate's interval counts requests with token gaps, not gaps (the gaps of one request
/// move together): the line of a gate not judged says how many requests each side has.
#[test]
fn an_itl_gate_counts_requests_with_gaps() {
    let dir = testdata().join("realdata");
    let a = dir.join("vllm083-llama70b-tp8-qps1/result.json");
    let b = dir.join("vllm083-llama70b-tp8-qpsinf/result.json");
    let out = run(&["diff", "--fail-if", "itl.p99>+1%", s(&a), s(&b)], b"");
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    // 200 requests a run, 14 of them with no gap (one output token or none). One gate: its
    // p99's upper rank exists once 0.99^n <= 0.025 / 2, n >= 437.
    assert!(
        err.contains(
            "not judged: +1.35% (+0.581 ms), not enough samples (its p99 needs 437 requests \
             with token gaps a side at this level, A has 186, B 186;"
        ),
        "{err}"
    );
}

/// The gates are a family of their own: a gate's row is judged at the level of the gates'
/// comparisons, not of every row of the report. By hand: 200 TTFTs a side, A's the k-th at
/// 1000 + 1000 (k - 0.5) / 200 ms, B's 1.15 times A's (+15%). The p50's order-statistic ranks
/// (Bin(200, 0.5)) are 84 and 117 at the level of one comparison (γ = 0.025), 77 and 124 at the
/// report's 20 (4 metrics, 5 quantiles; γ = 0.00125). One gate: B's low end, 1.15 x 1417.5 =
/// 1630.1, is above A's high end, 1582.5: worse, the gate holds. The report's row: 1.15 x 1382.5
/// = 1589.9 is below 1617.5: within noise.
#[test]
fn a_gate_is_judged_at_the_level_of_the_gates_alone() {
    let dir = tempfile::tempdir().unwrap();
    let side = |name: &str, k: f64| {
        let lines: Vec<String> = (1..=200)
            .map(|i| {
                let ttft = k * (1000.0 + 1000.0 * (f64::from(i) - 0.5) / 200.0) / 1000.0;
                let st = 1_700_000_000.0 + 2.0 * f64::from(i);
                format!(
                    "{{\"id\": \"r{i}\", \"call_type\": \"acompletion\", \"status\": \"success\", \
                     \"stream\": true, \"model\": \"m\", \"startTime\": {st}, \
                     \"completionStartTime\": {}, \"endTime\": {}, \"prompt_tokens\": 5, \
                     \"completion_tokens\": 20}}\n",
                    st + ttft,
                    st + ttft + 1.0
                )
            })
            .collect();
        write(dir.path(), name, &lines)
    };
    let (a, b) = (side("a.jsonl", 1.0), side("b.jsonl", 1.15));
    let (code, doc) = diff_json(&a, &b, &["--fail-if", "ttft.p50>+10%"]);
    assert_eq!(code, 3, "{doc}");
    assert_eq!(doc["method"]["comparisons"], 20);
    let p50 = |side: &str, end: &str| {
        let r = doc["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| {
                r["metric"] == "ttft_ms"
                    && r["quantile"] == "p50"
                    && r["group"] == serde_json::json!({})
            })
            .unwrap();
        r[side][end].as_f64().unwrap()
    };
    assert_eq!((p50("a", "high"), p50("b", "low")), (1617.5, 1589.875));
    assert_eq!(verdicts(&doc, "ttft_ms")[0], "same");
    let gate = &doc["fail_if"][0];
    assert_eq!(
        (&gate["verdict"], &gate["holds"]),
        (&Value::from("worse"), &Value::from(true))
    );
    // A second gate on another row makes a family of two: ranks 82 and 119, B's low end
    // 1.15 x 1407.5 = 1618.6 above A's high end 1592.5: still worse.
    let (code, doc) = diff_json(
        &a,
        &b,
        &["--fail-if", "ttft.p50>+10%", "--fail-if", "e2e.p90>+50%"],
    );
    assert_eq!(code, 3, "{doc}");
    assert_eq!(doc["fail_if"][0]["verdict"], "worse");
}

/// `--strict` in `diff` as in `summary`: a side with an invalid line (a run's file cut
/// mid-line) exits 1, naming the side; a gate that holds still gives 3 (3 wins over 1).
#[test]
fn strict_fails_a_diff_whose_side_has_bad_lines() {
    let dir = tempfile::tempdir().unwrap();
    let a = ten(dir.path(), "a.jsonl", 100);
    let b = ten(dir.path(), "b.jsonl", 200);
    let mut text = std::fs::read(&b).unwrap();
    text.extend_from_slice(b"{\"t0\":1795964927000,\"t1\":17959");
    std::fs::write(&b, text).unwrap();
    assert_eq!(gate_code(&a, &b, &[]).0, 0);
    let (code, err) = gate_code(&a, &b, &["--strict"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&format!(
            "tokentime: --strict: B ({}): 1 invalid and 0 too-long lines",
            b.display()
        )),
        "{err}"
    );
    assert_eq!(gate_code(&a, &b, &["--strict", "ttft.p50>+10%"]).0, 3);
    assert_eq!(gate_code(&a, &b, &["--strict", "ttft.p50>+1000%"]).0, 1);
}

/// A gate judged beyond noise that does not hold says why: its change is short of the
/// threshold, or the other way (real vLLM runs: TTFT p50 +520.6% from QPS 1 to QPS inf).
#[test]
fn a_gate_beyond_noise_that_does_not_hold_says_why() {
    let dir = testdata().join("realdata");
    let a = dir.join("vllm083-llama70b-tp8-qps1/result.json");
    let b = dir.join("vllm083-llama70b-tp8-qpsinf/result.json");
    let out = run(
        &[
            "diff",
            "--fail-if",
            "ttft.p50>+600%",
            "--fail-if",
            "ttft.p50<-10%",
            s(&a),
            s(&b),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    for line in [
        "--fail-if ttft.p50>+600% does not hold: +520.6% (+293.5 ms), worse beyond noise, short of the threshold\n",
        "--fail-if ttft.p50<-10% does not hold: +520.6% (+293.5 ms), worse beyond noise, the other way\n",
    ] {
        assert!(err.contains(line), "{line}\n{err}");
    }
}
