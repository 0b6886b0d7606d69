//! SPEC "Targets", accuracy: t-digest quantiles against exact quantiles of the same data,
//! within 0.5 % relative value error at p50-p99 and 1 % at p99.9 on 10^6 log-normal samples,
//! and monotone in q.

use tokentime::{Digest, quantile_sorted};

// The log generator's SplitMix64 (`Rng::lognormal`).
use genlog::Rng;

/// Feeds `n` log-normal values (median `median`, shape `sigma`) to a digest with the default
/// exact limit and compares its quantiles with the exact ones; returns the worst relative
/// errors (p50-p99, p99.9).
fn worst_errors(seed: u64, n: usize, median: f64, sigma: f64) -> (f64, f64) {
    let mut rng = Rng(seed);
    let mut d = Digest::default();
    let mut xs = Vec::with_capacity(n);
    for _ in 0..n {
        let v = rng.lognormal(median, sigma);
        d.add(v);
        xs.push(v);
    }
    errors(&mut d, xs)
}

/// The worst relative errors (p50-p99, p99.9) of `d`'s quantiles against the exact ones of
/// `xs` (the same values); checks that `d` is past the exact limit and monotone in q.
fn errors(d: &mut Digest, mut xs: Vec<f64>) -> (f64, f64) {
    assert!(!d.is_exact(), "10^6 values are past the exact limit");
    xs.sort_by(f64::total_cmp);
    let mut body: f64 = 0.0;
    for q in [0.5, 0.75, 0.9, 0.95, 0.99] {
        let exact = quantile_sorted(&xs, q);
        let est = d.quantile(q).expect("values");
        body = body.max((est - exact).abs() / exact);
    }
    let exact = quantile_sorted(&xs, 0.999);
    let est = d.quantile(0.999).expect("values");
    // Monotone in q over a fine grid.
    let mut last = f64::NEG_INFINITY;
    for i in 0..=1000 {
        let v = d.quantile(i as f64 / 1000.0).expect("values");
        assert!(
            v >= last,
            "quantile not monotone at q = {}",
            i as f64 / 1000.0
        );
        last = v;
    }
    (body, (est - exact).abs() / exact)
}

#[test]
fn t_digest_quantiles_are_within_half_a_percent_to_p99_and_one_percent_at_p999() {
    // TTFT-like (median 200 ms, heavy tail) and TPOT-like (median 30 ms, narrow) shapes.
    for (seed, median, sigma) in [(1, 200.0, 1.0), (2, 30.0, 0.4), (3, 500.0, 1.5)] {
        let (body, tail) = worst_errors(seed, 1_000_000, median, sigma);
        eprintln!("seed {seed} sigma {sigma}: p50-p99 worst {body:.5}, p99.9 {tail:.5}");
        assert!(body <= 0.005, "p50-p99 off by {body} (seed {seed})");
        assert!(tail <= 0.01, "p99.9 off by {tail} (seed {seed})");
    }
}

#[test]
fn the_overall_digest_merged_from_per_cache_digests_is_as_accurate() {
    // `summary`'s overall group is its per-cache groups merged at report time: a bimodal
    // TTFT (prefix-cache hits fast, misses slow, a few partial hits between), each class in
    // its own digest, merged in as `Summary` does (into an empty one, class by class).
    let mut rng = Rng(4);
    let mut by_class = [Digest::default(), Digest::default(), Digest::default()];
    let mut xs = Vec::with_capacity(1_000_000);
    for i in 0..1_000_000u32 {
        let (class, v) = match i % 10 {
            0..=2 => (0, rng.lognormal(40.0, 0.5)),
            3 => (1, rng.lognormal(150.0, 0.6)),
            _ => (2, rng.lognormal(400.0, 0.8)),
        };
        by_class[class].add(v);
        xs.push(v);
    }
    let mut overall = Digest::default();
    for d in &by_class {
        overall.merge(d);
    }
    let (body, tail) = errors(&mut overall, xs);
    eprintln!("merged: p50-p99 worst {body:.5}, p99.9 {tail:.5}");
    assert!(body <= 0.005, "p50-p99 off by {body}");
    assert!(tail <= 0.01, "p99.9 off by {tail}");
}

/// The docs' example of a t-digest's error of rank where values are lumpy: the ITL p99.9 of a
/// real vLLM result (42,522 gaps, most near 25 ms and a thin tail above) against the exact one.
#[test]
fn the_docs_example_of_a_lumpy_tail_estimate_holds() {
    let f = crate::common::testdata().join("realdata/vllm083-llama70b-tp8-qps1/result.json");
    let p999 = |extra: &[&str]| {
        let mut args = vec!["summary", "-o", "json", "--quantiles", "99.9"];
        args.extend_from_slice(extra);
        args.push(f.to_str().unwrap());
        let doc: serde_json::Value =
            serde_json::from_slice(&crate::common::run_ok(&args, b"")).unwrap();
        let itl = &doc["groups"][0]["metrics"]["itl_ms"];
        assert_eq!(itl["count"], 42522);
        (
            itl["quantiles"]["p99.9"].as_f64().unwrap(),
            itl["exact"].clone(),
        )
    };
    assert_eq!(p999(&[]), (110.763, serde_json::json!(false)));
    assert_eq!(
        p999(&["--exact-limit", "42522"]),
        (112.325, serde_json::json!(true))
    );
}
