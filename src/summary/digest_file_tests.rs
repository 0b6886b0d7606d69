//! Unit tests of digest files (`tokentime.digest/v1`, and v2 with `--bucket` windows): save then load, merge, and the files
//! that are refused.
//!
//! Summaries are built from vLLM lines through the [`crate::classify::Processor`], whose TTFT
//! is `queue_time_ms + time_to_first_token_ms` (1 + i ms below); expected quantiles are
//! worked out by hand or by a naive type-7 quantile of the values sorted.

use super::*;
use crate::classify::{Kind, Processor};
use crate::format::builtins;
use crate::summary::digest::{EXACT_LIMIT, quantile_sorted};
use serde_json::Value as Json;

/// Index of `ttft_ms` in [`METRICS`].
const TTFT: usize = 0;

/// A vLLM response of `model` with a TTFT of 1 + `i` ms (queue 1 ms, from scheduling `i` ms)
/// and a generation of 100 ms for 11 tokens.
fn vllm(i: u64, model: &str) -> String {
    format!(
        r#"{{"id":"r{i}","created":{},"model":"{model}","usage":{{"prompt_tokens":100,"completion_tokens":11,"prompt_tokens_details":{{"cached_tokens":{}}}}},"metrics":{{"time_to_first_token_ms":{i},"generation_time_ms":100.0,"queue_time_ms":1.0}}}}"#,
        1_741_946_531 + i,
        // Every third prompt from the cache: groups of two cache classes.
        if i.is_multiple_of(3) { 90 } else { 0 }
    )
}

/// The coverage and summary (by model, digests exact up to `limit` values) of `lines`.
fn summarize(lines: &[String], limit: usize) -> (Coverage, Summary) {
    let mut p = Processor::new(builtins(), &[], None, &[vec!["model".into()]], 0.5);
    let mut s = Summary::new(vec!["model".into()], 100, limit).with_hit_ratio(Some(0.5));
    let mut cov = Coverage::default();
    for line in lines {
        let k = p.process(line.as_bytes());
        p.count(&k, &mut cov);
        if let Kind::Requests = k {
            for (i, r) in p.requests().iter().enumerate() {
                let gaps = &p.gaps()[r.itl.0 as usize..(r.itl.0 + r.itl.1) as usize];
                s.add_request(r, gaps, p.by_values(i));
            }
        }
    }
    p.finish(&mut cov);
    (cov, s)
}

/// The digest file document of a summary, as a JSON value.
fn doc(cov: &Coverage, s: &mut Summary) -> Json {
    serde_json::to_value(to_json(cov, s, None)).unwrap()
}

/// The overall group's TTFT quantile `q` (ms).
fn overall_ttft(s: &mut Summary, q: f64) -> f64 {
    let groups = s.groups();
    let (key, g) = groups.into_iter().next().unwrap();
    assert!(key.is_empty(), "the overall group comes first: {key:?}");
    g.metrics[TTFT].digest.quantile(q).unwrap()
}

/// Saves to a file in `dir` and loads it back.
fn save_load(dir: &Path, name: &str, cov: &Coverage, s: &mut Summary) -> Loaded {
    let path = dir.join(name);
    save(&path, cov, s).unwrap();
    load(&path).unwrap()
}

fn lines(range: std::ops::RangeInclusive<u64>) -> Vec<String> {
    range
        .map(|i| vllm(i, if i % 2 == 0 { "a" } else { "b" }))
        .collect()
}

#[test]
fn save_then_load_is_the_same_document_while_exact() {
    let dir = tempfile::tempdir().unwrap();
    let mut input = lines(1..=5);
    input.push("not json".into());
    let (cov, mut s) = summarize(&input, EXACT_LIMIT);
    let mut l = save_load(dir.path(), "d.json", &cov, &mut s);
    assert_eq!(l.coverage, cov);
    // 6 lines: 5 requests, 1 non-JSON.
    assert_eq!(
        (l.coverage.lines, l.coverage.requests, l.coverage.non_json),
        (6, 5, 1)
    );
    assert_eq!(doc(&l.coverage, &mut l.summary), doc(&cov, &mut s));
    // TTFTs 1 + (1..=5) = 2, 3, 4, 5, 6 ms: median 4, p90 = 5 + 0.6 x (6 - 5) = 5.6 (type
    // 7: h = 4 x 0.9 = 3.6).
    assert_eq!(overall_ttft(&mut l.summary, 0.5), 4.0);
    assert!((overall_ttft(&mut l.summary, 0.9) - 5.6).abs() < 1e-12);
    let text = std::fs::read_to_string(dir.path().join("d.json")).unwrap();
    assert!(
        text.ends_with("}\n") && text.lines().count() == 1,
        "one line"
    );
    assert!(
        !dir.path().join("d.json.tmp").exists(),
        "the temporary file was renamed"
    );
}

#[test]
fn save_then_load_beyond_the_exact_limit_keeps_centroids_close() {
    let dir = tempfile::tempdir().unwrap();
    // 1000 distinct TTFTs (past 256 distinct values: no atoms), held exactly up to 50.
    let (cov, mut s) = summarize(&lines(1..=1000), 50);
    let mut l = save_load(dir.path(), "d.json", &cov, &mut s);
    let d = doc(&l.coverage, &mut l.summary);
    let ttft = &d["groups"][0]["metrics"]["ttft_ms"];
    assert!(
        ttft["centroids"].is_array() && ttft["exact"].is_null(),
        "{ttft}"
    );
    // Count, sum, min, max stay exact: TTFT 2..=1001 ms, sum = 1000 x (2 + 1001) / 2 = 501500.
    assert_eq!(ttft["count"], 1000);
    assert_eq!(ttft["sum"], 501_500.0);
    assert_eq!(
        (&ttft["min"], &ttft["max"]),
        (&Json::from(2.0), &Json::from(1001.0))
    );
    // Quantiles against a naive type-7 over the values sorted (p50: h = 999 x 0.5 = 499.5,
    // between 501 and 502 = 501.5), within 1%.
    let values: Vec<f64> = (1..=1000).map(|i| 1.0 + i as f64).collect();
    for q in [0.5, 0.9, 0.99] {
        let want = quantile_sorted(&values, q);
        let got = overall_ttft(&mut l.summary, q);
        assert!((got - want).abs() <= 0.01 * want, "p{q}: {got} vs {want}");
        // The loaded digest answers as the saved one did.
        let before = overall_ttft(&mut s, q);
        assert!(
            (got - before).abs() <= 1e-9 * before,
            "p{q}: {got} vs {before}"
        );
    }
    assert_eq!(quantile_sorted(&values, 0.5), 501.5);
}

#[test]
fn merging_two_files_is_one_summary_of_both_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (lines(1..=40), lines(41..=70));
    let (cov1, mut s1) = summarize(&first, EXACT_LIMIT);
    let (cov2, mut s2) = summarize(&second, EXACT_LIMIT);
    let (p1, p2) = (dir.path().join("1.json"), dir.path().join("2.json"));
    save(&p1, &cov1, &mut s1).unwrap();
    save(&p2, &cov2, &mut s2).unwrap();
    let m = merge_files(&[p1, p2], |_, _| {}).unwrap();
    let (cov, mut merged) = (m.coverage, m.summary);
    let all: Vec<String> = first.into_iter().chain(second).collect();
    let (cov_all, mut one) = summarize(&all, EXACT_LIMIT);
    assert_eq!(cov, cov_all);
    // 40 + 30 requests.
    assert_eq!(cov.requests, 70);
    assert_eq!(doc(&cov, &mut merged), doc(&cov_all, &mut one));
    // TTFT 2..=71 ms: median h = 69 x 0.5 = 34.5, between 36 and 37 = 36.5.
    assert_eq!(overall_ttft(&mut merged, 0.5), 36.5);
}

#[test]
fn merging_beyond_the_exact_limit_stays_close_to_the_values() {
    let dir = tempfile::tempdir().unwrap();
    let (cov1, mut s1) = summarize(&lines(1..=600), 50);
    let (cov2, mut s2) = summarize(&lines(601..=1500), 50);
    let (p1, p2) = (dir.path().join("1.json"), dir.path().join("2.json"));
    save(&p1, &cov1, &mut s1).unwrap();
    save(&p2, &cov2, &mut s2).unwrap();
    let m = merge_files(&[p1, p2], |_, _| {}).unwrap();
    let (cov, mut merged) = (m.coverage, m.summary);
    assert_eq!(cov.requests, 1500);
    let values: Vec<f64> = (1..=1500).map(|i| 1.0 + i as f64).collect();
    for q in [0.5, 0.9, 0.99] {
        let want = quantile_sorted(&values, q);
        let got = overall_ttft(&mut merged, q);
        assert!((got - want).abs() <= 0.01 * want, "p{q}: {got} vs {want}");
    }
}

#[test]
fn merge_refuses_files_that_do_not_line_up() {
    let dir = tempfile::tempdir().unwrap();
    let input = lines(1..=3);
    let (cov, mut by_model) = summarize(&input, EXACT_LIMIT);
    let mut by_nothing = Summary::new(vec![], 100, EXACT_LIMIT);
    let mut other_limit = Summary::new(vec!["model".into()], 100, 20);
    let mut other_ratio =
        Summary::new(vec!["model".into()], 100, EXACT_LIMIT).with_hit_ratio(Some(0.8));
    let paths: Vec<_> = ["model.json", "none.json", "limit.json", "ratio.json"]
        .iter()
        .map(|n| dir.path().join(n))
        .collect();
    save(&paths[0], &cov, &mut by_model).unwrap();
    save(&paths[1], &cov, &mut by_nothing).unwrap();
    save(&paths[2], &cov, &mut other_limit).unwrap();
    save(&paths[3], &cov, &mut other_ratio).unwrap();
    let err = merge_files(&paths[..2], |_, _| {}).unwrap_err();
    assert!(
        err.contains("grouped by []") && err.contains("[model]"),
        "{err}"
    );
    let err = merge_files(&[paths[0].clone(), paths[2].clone()], |_, _| {}).unwrap_err();
    assert!(err.contains("--exact-limit 20"), "{err}");
    let err = merge_files(&[paths[0].clone(), paths[3].clone()], |_, _| {}).unwrap_err();
    assert!(err.contains("--cache-hit-ratio 0.8"), "{err}");
    let err = merge_files(&[], |_, _| {}).unwrap_err();
    assert!(err.contains("at least one"), "{err}");
}

/// The document of a small summary, to be edited.
fn small_doc() -> Json {
    let (cov, mut s) = summarize(&lines(1..=3), EXACT_LIMIT);
    doc(&cov, &mut s)
}

#[test]
fn other_schemas_are_refused_with_a_clear_error() {
    let mut d = small_doc();
    d["schema"] = "tokentime.digest/v3".into();
    let err = from_json(&d).unwrap_err();
    assert_eq!(
        err,
        r#"schema "tokentime.digest/v3" is not "tokentime.digest/v1" or "tokentime.digest/v2""#
    );
    // A JSON summary is no digest file.
    d["schema"] = "tokentime.summary/v1".into();
    assert!(from_json(&d).unwrap_err().contains("tokentime.summary/v1"));
    d.as_object_mut().unwrap().remove("schema");
    let err = from_json(&d).unwrap_err();
    assert!(err.starts_with("not a digest file"), "{err}");
    assert!(
        from_json(&Json::from(3))
            .unwrap_err()
            .starts_with("not a digest file")
    );
}

/// A file with `--bucket` windows: saved and read back the same; windows that cannot be
/// (a width of 0, a start off the width, two of one start, a bad group) are refused, naming
/// what is wrong.
#[test]
fn windows_read_back_and_bad_ones_are_refused() {
    let width = 60_000_000_000;
    let (cov, mut s) = summarize(&lines(1..=4), EXACT_LIMIT);
    let mut b = Buckets::new(width);
    for (i, line) in lines(1..=4).iter().enumerate() {
        let (_, one) = summarize(std::slice::from_ref(line), EXACT_LIMIT);
        b.windows
            .entry(i as i64 % 2 * width)
            .or_insert_with(|| one.empty_like())
            .merge(&one);
    }
    b.unplaced = 2;
    let d = serde_json::to_value(to_json(&cov, &mut s, Some(&mut b))).unwrap();
    assert_eq!(d["schema"], SCHEMA_WINDOWS);
    assert_eq!(
        d["bucket"],
        serde_json::json!({"width_ns": width, "unplaced": 2})
    );
    let mut l = from_json(&d).unwrap();
    let mut back = l.buckets.take().unwrap();
    assert_eq!(
        (back.width, back.unplaced, back.windows.len()),
        (width, 2, 2)
    );
    let again = serde_json::to_value(to_json(&l.coverage, &mut l.summary, Some(&mut back)));
    assert_eq!(again.unwrap(), d);
    for (path, value, says) in [
        ("/bucket/width_ns", serde_json::json!(0), "bucket.width_ns"),
        (
            "/windows/1/start_ns",
            serde_json::json!(7),
            "window 1: \"start_ns\"",
        ),
        (
            "/windows/1/start_ns",
            serde_json::json!(0),
            "window 1: a second window",
        ),
        (
            "/windows/0/groups",
            serde_json::json!({}),
            "window 0: \"groups\"",
        ),
        (
            "/windows/0/groups/0/requests",
            serde_json::json!(-1),
            "window 0: group 0",
        ),
    ] {
        let mut bad = d.clone();
        *bad.pointer_mut(path).unwrap() = value;
        let err = from_json(&bad).unwrap_err();
        assert!(err.contains(says), "{path}: {err}");
    }
    // Windows in a v1 file: refused, not left out.
    let mut v1 = d.clone();
    v1["schema"] = SCHEMA.into();
    assert!(from_json(&v1).unwrap_err().contains("\"windows\" in a"));
}

#[test]
fn malformed_or_missing_files_are_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"schema\":\"tokentime.digest/v1\",").unwrap();
    let err = load(&bad).unwrap_err();
    assert!(
        err.starts_with(&format!("{}: not a digest file", bad.display())),
        "{err}"
    );
    let missing = dir.path().join("missing.json");
    let err = load(&missing).unwrap_err();
    assert!(err.starts_with(&missing.display().to_string()), "{err}");
    let err = merge_files(&[missing], |_, _| {}).unwrap_err();
    assert!(err.contains("missing.json"), "{err}");
}

#[test]
fn inconsistent_contents_are_refused_naming_what_is_wrong() {
    let mut d = small_doc();
    // Three exact TTFTs (2, 3, 4 ms) for a count of 4.
    d["groups"][0]["metrics"]["ttft_ms"]["count"] = 4.into();
    let err = from_json(&d).unwrap_err();
    assert_eq!(err, "group 0: ttft_ms: 3 exact values for a count of 4");
    let mut d = small_doc();
    d["groups"][0]["metrics"]
        .as_object_mut()
        .unwrap()
        .remove("tpot_ms");
    assert_eq!(
        from_json(&d).unwrap_err(),
        "group 0: metric tpot_ms missing"
    );
    let mut d = small_doc();
    d["groups"][0]["metrics"]["ttft_ms"]["nulls"] = serde_json::json!({"bored": 1});
    let err = from_json(&d).unwrap_err();
    assert!(err.contains("unknown null reason \"bored\""), "{err}");
    let mut d = small_doc();
    d["groups"][0]["key"] = serde_json::json!({"weather": "rain"});
    let err = from_json(&d).unwrap_err();
    assert!(err.contains("no grouping by [weather]"), "{err}");
}

/// docs/digests.md: "Members are only ever added, never renamed": a reader of v1 must take a
/// later v1 file with members it does not know.
#[test]
fn unknown_members_are_ignored() {
    let (cov, mut s) = summarize(&lines(1..=3), EXACT_LIMIT);
    let want = doc(&cov, &mut s);
    let mut d = want.clone();
    d["written_by"] = "tokentime 9.9".into();
    d["coverage"]["new_counter"] = 7.into();
    d["groups"][0]["new_member"] = serde_json::json!([1, 2]);
    d["groups"][0]["metrics"]["ttft_ms"]["p50_hint"] = 3.into();
    d["groups"][0]["metrics"]["new_metric_ms"] = serde_json::json!({"count": 0});
    let mut l = from_json(&d).unwrap();
    assert_eq!(doc(&l.coverage, &mut l.summary), want);
}

#[test]
fn older_files_without_later_members_load_with_defaults() {
    let mut d = small_doc();
    let o = d.as_object_mut().unwrap();
    o.remove("exact_limit");
    o.remove("cache_hit_ratio");
    let c = d["coverage"].as_object_mut().unwrap();
    c.remove("joins");
    c.remove("read_errors");
    for g in d["groups"].as_array_mut().unwrap() {
        g.as_object_mut().unwrap().remove("analysis");
    }
    let l = from_json(&d).unwrap();
    assert_eq!(l.summary.exact_limit(), EXACT_LIMIT);
    assert_eq!(l.summary.hit_ratio(), None);
    // 3 lines, 3 requests; the counters added later are 0.
    assert_eq!((l.coverage.lines, l.coverage.requests), (3, 3));
    assert_eq!(l.coverage.joined_lines + l.coverage.read_errors, 0);
}

#[cfg(unix)]
#[test]
fn save_writes_through_a_symbolic_link_and_check_writable_refuses_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let (cov, mut s) = summarize(&lines(1..=3), EXACT_LIMIT);
    let target = dir.path().join("target.json");
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    check_writable(&link).unwrap();
    save(&link, &cov, &mut s).unwrap();
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let l = load(&target).unwrap();
    assert_eq!(l.coverage.requests, 3);
    assert!(check_writable(dir.path()).is_err());
}

/// Writes each document to a file of its own in `dir` and merges them.
fn merge_docs(dir: &Path, docs: &[Json]) -> Result<(Coverage, Summary), String> {
    let paths: Vec<_> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let p = dir.join(format!("d{i}.json"));
            std::fs::write(&p, serde_json::to_vec(d).unwrap()).unwrap();
            p
        })
        .collect();
    merge_files(&paths, |_, _| {}).map(|m| (m.coverage, m.summary))
}

/// `d` as another input's digest with the same counts would be: a member the reader ignores
/// set, so it is no copy of `d` ([`merge_names_a_copy_of_a_digest`]).
fn another_host(d: &Json) -> Json {
    let mut d = d.clone();
    d["host"] = "another".into();
    d
}

/// A digest merged with its own copy (`cp`, or saved twice and both kept) counts its requests
/// twice, as one run over two copies of a log does: said, naming both. Two digests of no
/// request are no copy of anything.
#[test]
fn merge_names_a_copy_of_a_digest() {
    let dir = tempfile::tempdir().unwrap();
    let d = small_doc();
    let paths: Vec<std::path::PathBuf> = [d.clone(), another_host(&d), d.clone()]
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let p = dir.path().join(format!("d{i}.json"));
            std::fs::write(&p, serde_json::to_vec(d).unwrap()).unwrap();
            p
        })
        .collect();
    let m = merge_files(&paths, |_, _| {}).unwrap();
    let at = |f: &str| dir.path().join(f).display().to_string();
    assert_eq!(
        m.copies,
        [format!(
            "{}: the same digest as {} (the same 3 requests: a copy, or a map step saved \
             twice?); both are counted, as one run over two copies of a log counts both",
            at("d2.json"),
            at("d0.json")
        )]
    );
    assert_eq!(m.coverage.requests, 9);
    let (cov, mut s) = summarize(&[], EXACT_LIMIT);
    let empty = doc(&cov, &mut s);
    assert!(merge_docs(dir.path(), &[empty.clone(), empty]).is_ok());
}

/// Merge validation: counts of `u64::MAX` wrapped around when added up (a merge of them
/// reported a handful of requests); now any sum that does not fit refuses the file that
/// makes it.
#[test]
fn merge_validation_refuses_counts_whose_sum_wraps() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = small_doc();
    for g in d["groups"].as_array_mut().unwrap() {
        g["requests"] = u64::MAX.into();
    }
    let err = merge_docs(dir.path(), &[d]).unwrap_err();
    assert!(
        err.contains("d0.json: group 1: the groups' requests add up past 18446744073709551615"),
        "{err}"
    );
    // Each file alone fits, the two do not.
    let mut d = small_doc();
    d["groups"][0]["requests"] = (u64::MAX / 2).into();
    let err = merge_docs(dir.path(), &[d.clone(), another_host(&d)]).unwrap_err();
    assert!(
        err.contains("d1.json: the requests of the groups of the files up to this one add up past"),
        "{err}"
    );
    let mut d = small_doc();
    d["coverage"]["lines"] = u64::MAX.into();
    let err = merge_docs(dir.path(), &[d.clone(), another_host(&d)]).unwrap_err();
    assert!(
        err.contains("d1.json: coverage.lines of the files up to this one adds up past"),
        "{err}"
    );
    // A metric's counts too (its digests' counts are added when merged).
    let mut d = small_doc();
    d["groups"][0]["metrics"]["e2e_ms"] = serde_json::json!({"count": u64::MAX, "sum": 1.0, "min": 1.0, "max": 1.0,
                           "nulls": {}, "centroids": [[1.0, 18446744073709551615.0]]});
    let err = merge_docs(dir.path(), &[d]).unwrap_err();
    assert!(err.contains("metric counts add up past"), "{err}");
}

/// Merge validation: a group with more errors than requests (or more of any other count a
/// request has at most once) is no summary of any log.
#[test]
fn merge_validation_refuses_more_errors_than_requests() {
    let dir = tempfile::tempdir().unwrap();
    for (path, what) in [
        (&["errors"][..], "errors 4 is more than the requests 3"),
        (
            &["cancelled"][..],
            "cancelled 4 is more than the requests 3",
        ),
        (&["goodput", "met"][..], "goodput.met + goodput.unknown 4"),
        (
            &["metrics", "tpot_ms", "nulls", "error"][..],
            "tpot_ms.nulls.error 4 is more than the requests 3",
        ),
    ] {
        let mut d = small_doc();
        let mut v = &mut d["groups"][0];
        for k in path {
            v = &mut v[*k];
        }
        *v = 4.into();
        let err = merge_docs(dir.path(), &[d]).unwrap_err();
        assert!(
            err.contains("d0.json: group 0: ") && err.contains(what),
            "{err}"
        );
    }
}

/// Merge validation: exact values (and atoms) outside the digest's own min..max.
#[test]
fn merge_validation_refuses_exact_values_outside_min_max() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = small_doc();
    // The TTFTs are 2, 3 and 4 ms.
    d["groups"][0]["metrics"]["ttft_ms"]["max"] = 3.5.into();
    let err = merge_docs(dir.path(), &[d]).unwrap_err();
    assert!(
        err.contains("d0.json: group 0: ttft_ms: exact value 4 outside min..max (2..3.5)"),
        "{err}"
    );
    let mut d = small_doc();
    d["groups"][0]["metrics"]["ttft_ms"]["min"] = 2.5.into();
    let err = merge_docs(dir.path(), &[d]).unwrap_err();
    assert!(err.contains("exact value 2 outside min..max"), "{err}");
}

/// A partial run passed for a whole one: the digest file of a run that did not read all of its
/// input says so (`partial`), read back and told by `merge_files`; a complete run's file has no
/// such member.
#[test]
fn partial_run_is_marked_in_the_digest_file_and_told_by_merge() {
    let dir = tempfile::tempdir().unwrap();
    let (mut cov, mut s) = summarize(&lines(1..=3), EXACT_LIMIT);
    assert!(doc(&cov, &mut s).get("partial").is_none());
    cov.interrupted = 1;
    let d = doc(&cov, &mut s);
    assert_eq!(
        d["partial"],
        serde_json::json!({"interrupted": true, "read_errors": 0})
    );
    assert_eq!(from_json(&d).unwrap().coverage.interrupted, 1);
    let mut told = Vec::new();
    let (cov, _) = {
        let whole = small_doc();
        let paths: Vec<_> = [("whole.json", whole), ("part.json", d.clone())]
            .into_iter()
            .map(|(n, d)| {
                let p = dir.path().join(n);
                std::fs::write(&p, serde_json::to_vec(&d).unwrap()).unwrap();
                p
            })
            .collect();
        let m = merge_files(&paths, |p, c| told.push((p.to_owned(), c.interrupted))).unwrap();
        (m.coverage, m.summary)
    };
    let part = dir.path().join("part.json").display().to_string();
    assert_eq!(told, vec![(part, 1)]);
    assert!(cov.partial());
    let mut bad = d;
    bad["partial"]["read_errors"] = 2.into();
    let err = from_json(&bad).unwrap_err();
    assert!(err.starts_with("\"partial\" must be"), "{err}");
}
