//! Two summaries compared (`tokentime diff A B`): per group, latency metric and quantile, both
//! runs' values, the change, and whether the change is beyond the noise of that many samples;
//! and the `--fail-if` gates judged on that.
//!
//! The noise test is distribution-free and deterministic (no resampling, no seed): each side's
//! quantile gets a confidence interval from its order statistics (the number of values below
//! the true quantile is binomial), and a change is beyond noise when the two intervals do not
//! overlap. The level is Bonferroni-corrected over every comparison of the report, so two
//! samples of one distribution flag anything at all with probability at most [`ALPHA`].
//! t-digest estimates widen each interval by the rank a centroid can span there. Owns the
//! `--fail-if` syntax. No I/O.

use crate::metrics::Metric;
use crate::summary::digest::{COMPRESSION, Digest};
use crate::summary::{GroupKey, GroupStats, OTHER, Summary, quantile_name};

/// The report's family-wise false-alarm rate: the chance that two samples of one
/// distribution get any verdict other than `same` or `n/a`.
pub(crate) const ALPHA: f64 = 0.05;

/// Largest count whose binomial tail is summed exactly; a normal approximation beyond.
const EXACT_BINOMIAL: u64 = 20_000;

/// How one quantile changed from A to B.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// B is higher beyond noise (slower).
    Worse,
    /// B is lower beyond noise (faster).
    Better,
    /// The intervals overlap: within noise.
    Same,
    /// An interval is open on the side that matters: too few values for that quantile.
    NotEnoughSamples,
    /// One side has no values of the metric in that group.
    NoValues,
}

impl Verdict {
    /// The word in the table and JSON.
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            Verdict::Worse => "worse",
            Verdict::Better => "better",
            Verdict::Same => "same",
            Verdict::NotEnoughSamples => "not enough samples",
            Verdict::NoValues => "no values",
        }
    }
}

/// One side's quantile: its value, count, whether exact, and its confidence interval (`None`
/// at an open end).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Side {
    /// The quantile (ms), `None` when there are no values.
    pub value: Option<f64>,
    /// Values it was taken over.
    pub count: u64,
    /// Independent draws its interval counts: `count`, or for ITL the requests with gaps.
    pub draws: u64,
    /// Exact quantile (every value, or every distinct value, held).
    pub exact: bool,
    /// Lower end of the interval.
    pub low: Option<f64>,
    /// Upper end of the interval.
    pub high: Option<f64>,
}

/// One row: a group, metric and quantile.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    /// The group (`[]`: all requests).
    pub group: GroupKey,
    /// The metric.
    pub metric: Metric,
    /// The quantile as a fraction.
    pub quantile: f64,
    /// Run A.
    pub a: Side,
    /// Run B.
    pub b: Side,
    /// `b - a` in ms.
    pub change_ms: Option<f64>,
    /// `(b - a) / a` in percent (`None` when `a` is 0).
    pub change_pct: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
}

/// The comparison of two summaries.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Comparison {
    /// Rows in group, metric, quantile order (groups in A's order, then those only in B).
    pub rows: Vec<Row>,
    /// Comparisons with values on both sides: the Bonferroni divisor.
    pub comparisons: usize,
    /// The two-sided level of each side's interval (`1 - ALPHA / (2 comparisons)`).
    pub level: f64,
    /// Groups of A that B does not have, and the other way round.
    pub only_in_a: Vec<GroupKey>,
    /// Groups of B that A does not have.
    pub only_in_b: Vec<GroupKey>,
    /// Groups holding every request of both runs (`cache=unknown` in a log with no cache
    /// signal, a `--by model` key of a one-model run): their rows would repeat those of all
    /// requests, so they are not compared again (nor counted in the Bonferroni divisor); a
    /// gate on one is judged on all requests' row.
    pub same_as_all: Vec<GroupKey>,
    /// Groups holding the same requests as a group of fewer keys in both runs, each with that
    /// group (`model=m cache=hit` and `cache=hit` in a one-model run): not compared again
    /// either, and a gate on one is judged on the other's row.
    pub same_as: Vec<(GroupKey, GroupKey)>,
}

/// The metrics compared: the durations (token counts describe the workload, not its speed).
pub(crate) fn compared_metrics() -> impl Iterator<Item = Metric> {
    Metric::ALL.into_iter().filter(|m| m.is_duration())
}

/// Compares every group both summaries have, at quantiles `qs`.
pub(crate) fn compare(a: &mut Summary, b: &mut Summary, qs: &[f64]) -> Comparison {
    let mut ga = a.groups();
    let mut gb = b.groups();
    let keys_b: Vec<GroupKey> = gb.iter().map(|(k, _)| sorted(k)).collect();
    let keys_a: Vec<GroupKey> = ga.iter().map(|(k, _)| sorted(k)).collect();
    let only_in_a = ga
        .iter()
        .filter(|(k, _)| !keys_b.contains(&sorted(k)))
        .map(|(k, _)| k.clone())
        .collect();
    let only_in_b = gb
        .iter()
        .filter(|(k, _)| !keys_a.contains(&sorted(k)))
        .map(|(k, _)| k.clone())
        .collect();
    // The groups both have, as (index in A, index in B).
    let mut pairs: Vec<(usize, usize)> = ga
        .iter()
        .enumerate()
        .filter_map(|(i, (k, _))| Some((i, keys_b.iter().position(|kb| *kb == sorted(k))?)))
        .collect();
    // Every group is a subset of all requests: one as large as all, in both runs, is all.
    let all_a = ga
        .iter()
        .find(|(k, _)| k.is_empty())
        .map(|(_, g)| g.requests);
    let all_b = gb
        .iter()
        .find(|(k, _)| k.is_empty())
        .map(|(_, g)| g.requests);
    let mut same_as_all = vec![];
    pairs.retain(|&(i, j)| {
        let same = !ga[i].0.is_empty()
            && Some(ga[i].1.requests) == all_a
            && Some(gb[j].1.requests) == all_b;
        if same {
            same_as_all.push(ga[i].0.clone());
        }
        !same
    });
    // A group whose keys include another's holds a subset of its requests: as many, in both
    // runs, it holds the same ones. (A key of `(other)`, past --max-groups, is no such subset.)
    let other = |k: &GroupKey| k.iter().any(|(_, v)| v.as_deref() == Some(OTHER));
    let within = |small: &GroupKey, big: &GroupKey| {
        small.len() < big.len() && small.iter().all(|kv| big.contains(kv))
    };
    let mut by_size = pairs.clone();
    by_size.sort_by_key(|&(i, _)| ga[i].0.len());
    let mut same_as: Vec<(GroupKey, GroupKey)> = vec![];
    let mut kept: Vec<(usize, usize)> = vec![];
    for (i, j) in by_size {
        let equal = (!other(&ga[i].0))
            .then(|| {
                kept.iter().find(|&&(ki, kj)| {
                    !other(&ga[ki].0)
                        && within(&ga[ki].0, &ga[i].0)
                        && ga[ki].1.requests == ga[i].1.requests
                        && gb[kj].1.requests == gb[j].1.requests
                })
            })
            .flatten();
        match equal {
            Some(&(ki, _)) => same_as.push((ga[i].0.clone(), ga[ki].0.clone())),
            None => kept.push((i, j)),
        }
    }
    pairs.retain(|p| kept.contains(p));
    let comparisons: usize = pairs
        .iter()
        .map(|&(i, j)| {
            let both = compared_metrics()
                .filter(|m| {
                    ga[i].1.metrics[m.index()].digest.count() > 0
                        && gb[j].1.metrics[m.index()].digest.count() > 0
                })
                .count();
            both * qs.len()
        })
        .sum();
    let gamma = ALPHA / (2.0 * comparisons.max(1) as f64);
    let mut rows = vec![];
    for &(i, j) in &pairs {
        for m in compared_metrics() {
            for &q in qs {
                let a = side(ga[i].1, m, q, gamma);
                let b = side(gb[j].1, m, q, gamma);
                // A metric neither run has (queue time of a gateway log): no row.
                if a.count == 0 && b.count == 0 {
                    continue;
                }
                rows.push(row(ga[i].0.clone(), m, q, a, b));
            }
        }
    }
    Comparison {
        rows,
        comparisons,
        level: 1.0 - gamma,
        only_in_a,
        only_in_b,
        same_as_all,
        same_as,
    }
}

fn sorted(k: &GroupKey) -> GroupKey {
    let mut k = k.clone();
    k.sort();
    k
}

/// A row from both sides' quantiles and intervals.
pub(crate) fn row(group: GroupKey, metric: Metric, quantile: f64, a: Side, b: Side) -> Row {
    let (change_ms, change_pct) = match (a.value, b.value) {
        (Some(x), Some(y)) => (Some(y - x), (x != 0.0).then(|| (y - x) / x.abs() * 100.0)),
        _ => (None, None),
    };
    let verdict = if a.count == 0 || b.count == 0 {
        Verdict::NoValues
    } else {
        verdict(&a, &b)
    };
    Row {
        group,
        metric,
        quantile,
        a,
        b,
        change_ms,
        change_pct,
        verdict,
    }
}

/// Worse when B's interval lies wholly above A's, better when wholly below, same when they
/// overlap, not enough samples when an open end leaves it undecided.
fn verdict(a: &Side, b: &Side) -> Verdict {
    if let (Some(hi_a), Some(lo_b)) = (a.high, b.low)
        && lo_b > hi_a
    {
        return Verdict::Worse;
    }
    if let (Some(lo_a), Some(hi_b)) = (a.low, b.high)
        && lo_a > hi_b
    {
        return Verdict::Better;
    }
    if a.low.is_some() && a.high.is_some() && b.low.is_some() && b.high.is_some() {
        Verdict::Same
    } else {
        Verdict::NotEnoughSamples
    }
}

/// One side: the quantile of metric `m` in group `g` and its interval at two-sided level `1 -
/// gamma`. The interval counts the group's independent draws: a value a request (ITL: the
/// requests with gaps, since the gaps of one request move together, each request one draw;
/// the ranks found for them are read at the same share of all the gaps).
fn side(g: &mut GroupStats, m: Metric, q: f64, gamma: f64) -> Side {
    let stats = &mut g.metrics[m.index()];
    let n = stats.digest.count();
    if n == 0 {
        return Side::default();
    }
    let draws = if m == Metric::Itl {
        let without: u64 = stats.nulls.iter().map(|(_, c)| c).sum();
        g.requests.saturating_sub(without).clamp(1, n)
    } else {
        n
    };
    let d = &mut stats.digest;
    let exact = d.is_exact();
    let value = d.quantile(q);
    let (lo, hi) = order_statistic_ranks(draws, q, gamma);
    let slack = if exact { 0.0 } else { rank_error(q) };
    let share = |k: u64| {
        if draws <= 1 {
            0.0
        } else {
            (k - 1) as f64 / (draws - 1) as f64
        }
    };
    Side {
        value,
        count: n,
        draws,
        exact,
        low: lo.and_then(|k| value_at(d, share(k) - slack)),
        high: hi.and_then(|k| value_at(d, share(k) + slack)),
    }
}

/// The value at rank share `r` of `d`'s values (0 the smallest, 1 the largest, moved by a
/// t-digest's rank error); `None` when that leaves `0..=1`.
fn value_at(d: &mut Digest, r: f64) -> Option<f64> {
    if d.count() <= 1 {
        return d.quantile(0.0);
    }
    if !(0.0..=1.0).contains(&r) {
        return None;
    }
    d.quantile(r)
}

/// The share of all values one t-digest centroid can hold at quantile `q`: the scale function
/// of the `tdigest` crate (`q = 2 (k/d)^2` below the median) allows `2 sqrt(2 q) / d` per unit
/// of k; doubled for digests merged from several (merged centroids may be up to twice that).
pub(crate) fn rank_error(q: f64) -> f64 {
    let t = q.min(1.0 - q).max(0.0);
    2.0 * 2.0 * (2.0 * t).sqrt() / COMPRESSION as f64 + 1e-9
}

/// The 1-based ranks `(l, u)` of the order statistics that bracket the `q`-quantile of `n`
/// values with probability at least `1 - gamma` (`gamma / 2` each side): `l` the largest with
/// `P(Bin(n, q) <= l - 1) <= gamma / 2`, `u` the smallest with `P(Bin(n, q) <= u - 1) >= 1 -
/// gamma / 2`. `None` at an end no order statistic reaches (too few values).
pub(crate) fn order_statistic_ranks(n: u64, q: f64, gamma: f64) -> (Option<u64>, Option<u64>) {
    let half = gamma / 2.0;
    if n == 0 {
        return (None, None);
    }
    if n > EXACT_BINOMIAL {
        let z = inverse_normal(1.0 - half);
        let (mean, sd) = (n as f64 * q, (n as f64 * q * (1.0 - q)).sqrt());
        let l = (mean - z * sd).floor();
        let u = (mean + z * sd).ceil() + 1.0;
        let l = (l >= 1.0).then_some(l as u64);
        let u = (u <= n as f64).then_some(u as u64);
        return (l, u);
    }
    let cdf = binomial_cdf(n, q);
    // cdf[j] = P(Bin <= j), j = 0..=n.
    let l = (1..=n).rev().find(|&k| cdf[(k - 1) as usize] <= half);
    let u = (1..=n).find(|&k| cdf[(k - 1) as usize] >= 1.0 - half);
    (l, u)
}

/// `P(Bin(n, q) <= j)` for `j = 0..=n`, summed in log space (no underflow at large n).
fn binomial_cdf(n: u64, q: f64) -> Vec<f64> {
    let n_us = n as usize;
    if q <= 0.0 {
        return vec![1.0; n_us + 1];
    }
    if q >= 1.0 {
        let mut v = vec![0.0; n_us + 1];
        v[n_us] = 1.0;
        return v;
    }
    let (lq, lp) = (q.ln(), (1.0 - q).ln());
    let mut logs = Vec::with_capacity(n_us + 1);
    let mut lpmf = n as f64 * lp;
    for k in 0..=n {
        logs.push(lpmf);
        if k < n {
            lpmf += ((n - k) as f64 / (k + 1) as f64).ln() + lq - lp;
        }
    }
    let max = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let total: f64 = logs.iter().map(|l| (l - max).exp()).sum();
    let mut acc = 0.0;
    logs.iter()
        .map(|l| {
            acc += (l - max).exp();
            (acc / total).min(1.0)
        })
        .collect()
}

/// The standard normal quantile (Acklam's rational approximation, relative error < 1.2e-9).
pub(crate) fn inverse_normal(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let p = p.clamp(1e-300, 1.0 - 1e-16);
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// One `--fail-if` gate: `METRIC.pQ>+X%`, `>+Xms`, `<-X%`, `<-Xms`, optionally `@KEY=VALUE,...`.
#[derive(Debug, Clone, PartialEq)]
pub struct FailIf {
    /// As written.
    pub text: String,
    /// The metric.
    pub metric: Metric,
    /// Quantile as a fraction.
    pub quantile: f64,
    /// True for `>` (B slower), false for `<` (B faster).
    pub up: bool,
    /// The threshold: a change in percent, or in ms.
    pub amount: Amount,
    /// The group (`[]`: all requests).
    pub group: GroupKey,
}

/// A `--fail-if` threshold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Amount {
    /// Percent of A's value (signed).
    Pct(f64),
    /// Milliseconds (signed).
    Ms(f64),
}

/// Parses one `--fail-if` condition (the flag's value may hold several, comma-separated, but
/// a group's own commas belong to it: split with [`split_fail_if`]).
///
/// # Errors
/// A message naming what is wrong.
pub(crate) fn parse_fail_if(text: &str) -> Result<FailIf, String> {
    let err = |why: &str| {
        format!(
            "--fail-if {text:?}: {why} (want METRIC.pQ>+N% or >+Nms (or s), or <-N% or <-Nms, optionally @KEY=VALUE)"
        )
    };
    let (body, group) = match text.split_once('@') {
        Some((b, g)) => (b, crate::summary::slo::parse_group(g).map_err(|e| err(&e))?),
        None => (text, vec![]),
    };
    let (up, at) = match (body.find('>'), body.find('<')) {
        (Some(i), None) => (true, i),
        (None, Some(i)) => (false, i),
        _ => return Err(err("one '>' or '<'")),
    };
    if body[at + 1..].starts_with('=') {
        return Err(err(&format!(
            "'{}=' is no comparison here: '{}' alone fires on a change beyond noise larger than the amount",
            &body[at..=at],
            &body[at..=at]
        )));
    }
    let (name, amount) = (&body[..at], body[at + 1..].trim());
    let (metric, q) = name
        .trim()
        // At the first '.': no metric name holds one, a quantile may (`p99.9`).
        .split_once('.')
        .ok_or_else(|| err("no '.pQ' after the metric"))?;
    let known = Metric::from_name(metric).ok_or_else(|| {
        err(&format!(
            "unknown metric {} (known: ttft, tpot, itl, e2e, queue, prefill, decode, ttfot, each also with _ms)",
            metric.trim(),
        ))
    })?;
    let metric = Some(known).filter(|m| m.is_duration()).ok_or_else(|| {
        err("not a latency metric (ttft, tpot, itl, e2e, queue, prefill, decode, ttfot)")
    })?;
    let pct = crate::summary::slo::gate_percentile(q).map_err(|e| err(&e))?;
    // The unit: % of A's value, or a duration in ms or s (read as ms).
    let (num, pct_unit, scale) = match amount.strip_suffix('%') {
        Some(n) => (n, true, 1.0),
        None => match amount.strip_suffix("ms") {
            Some(n) => (n, false, 1.0),
            None => (
                amount
                    .strip_suffix('s')
                    .ok_or_else(|| err("the change needs a unit, %, ms or s"))?,
                false,
                1000.0,
            ),
        },
    };
    let num = num.trim();
    let mut v: f64 = num
        .parse::<f64>()
        .ok()
        .map(|v| v * scale)
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| err("the change is not a number"))?;
    // An unsigned amount takes the comparison's direction: `<10%` is `<-10%`, as `>10%` is
    // `>+10%`.
    let unsigned_fall = !up && !num.starts_with(['+', '-']);
    if unsigned_fall {
        v = -v;
    }
    if (up && v < 0.0) || (!up && v > 0.0) {
        return Err(err(
            "'>' takes a rise (+N), '<' a fall (-N): a gate fires on a change beyond noise in its direction",
        ));
    }
    // Echoed as read: an unsigned fall gets its sign (`ttft.p50<10%` is `ttft.p50<-10%`).
    // (`body` starts `text`: the '<' is at `at` in both.)
    let text = if unsigned_fall {
        let num_at = text.len() - text[at + 1..].trim_start().len();
        format!("{}-{}", &text[..num_at], &text[num_at..])
    } else {
        text.to_owned()
    };
    Ok(FailIf {
        text,
        metric,
        quantile: pct / 100.0,
        up,
        amount: if pct_unit {
            Amount::Pct(v)
        } else {
            Amount::Ms(v)
        },
        group,
    })
}

/// Splits a `--fail-if` value into conditions at the commas that start a new one (a comma
/// inside a group, `@model=a,cache=hit`, is followed by `KEY=` and stays).
pub(crate) fn split_fail_if(s: &str) -> Vec<&str> {
    let mut out = vec![];
    let mut start = 0;
    for (i, _) in s.match_indices(',') {
        let rest = &s[i + 1..];
        let next = rest.split(',').next().unwrap_or("");
        // A new condition has a comparison; a group's next pair has none.
        if next.contains('>') || next.contains('<') {
            out.push(&s[start..i]);
            start = i + 1;
        }
    }
    out.push(&s[start..]);
    out
}

/// How a gate came out.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GateResult {
    /// The gate.
    pub gate: FailIf,
    /// Its row, `None` when the group or quantile is not in the report.
    pub row: Option<Row>,
    /// True when the change passes the threshold and is beyond noise in its direction.
    pub holds: bool,
    /// True when its row tells whether it holds: an interval on both sides, or a change that
    /// does not pass the threshold at all (no interval can make it hold: a run against itself,
    /// a change the other way), whatever the samples.
    pub judged: bool,
    /// When its row has too few values to judge: how many a side would do, at the report's
    /// interval level (ITL: requests with gaps).
    pub needed: Option<u64>,
    /// The comparisons its row's interval is corrected for: the gates' distinct rows.
    pub comparisons: usize,
    /// Without a row: what of it the runs lack (its group, or its metric in that group).
    pub missing: Option<String>,
}

/// The fewest values (independent draws) whose `q`-quantile gets an interval with both ends at
/// two-sided level `1 - gamma` ([`order_statistic_ranks`]).
pub(crate) fn values_needed(q: f64, gamma: f64) -> u64 {
    let ok = |n: u64| {
        let (l, u) = order_statistic_ranks(n, q, gamma);
        l.is_some() && u.is_some()
    };
    let mut hi = 2;
    while !ok(hi) && hi < 1 << 40 {
        hi *= 2;
    }
    let mut lo = hi / 2;
    // The fewest in (lo, hi]: lo fails (or is 1), hi holds.
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if ok(mid) { hi = mid } else { lo = mid }
    }
    hi
}

/// The two-sided level of each side's interval in a family of `comparisons` gates' rows
/// (`1 - ALPHA / (2 comparisons)`, one at least).
pub(crate) fn gates_level(comparisons: usize) -> f64 {
    1.0 - ALPHA / (2.0 * comparisons.max(1) as f64)
}

/// Judges the gates on a comparison of `a` and `b`. The gates are a family of their own: each
/// gate's row is compared again with intervals Bonferroni-corrected over the gates' rows (the
/// comparisons a CI job acts on), not over every row of the report, so a gate's verdict does
/// not depend on the rows no gate looks at (every other metric, quantile and group).
pub(crate) fn judge(
    gates: &[FailIf],
    c: &Comparison,
    a: &mut Summary,
    b: &mut Summary,
) -> Vec<GateResult> {
    // Each gate's row of the report, by the group it is judged on.
    let found: Vec<(GroupKey, Option<&Row>)> = gates
        .iter()
        .map(|g| {
            let mut want = sorted(&g.group);
            if c.same_as_all.iter().any(|k| sorted(k) == want) {
                want = GroupKey::default();
            }
            if let Some((_, equal)) = c.same_as.iter().find(|(k, _)| sorted(k) == want) {
                want = sorted(equal);
            }
            let row = c.rows.iter().find(|r| {
                r.metric == g.metric
                    && quantile_name(r.quantile) == quantile_name(g.quantile)
                    && sorted(&r.group) == want
            });
            (want, row)
        })
        .collect();
    // The family: the distinct rows the gates look at with values on both sides (two gates on
    // one row test one interval).
    let mut family: Vec<(&GroupKey, Metric, String)> = vec![];
    for (g, (want, row)) in gates.iter().zip(&found) {
        let key = (want, g.metric, quantile_name(g.quantile));
        if row.is_some_and(|r| r.a.count > 0 && r.b.count > 0) && !family.contains(&key) {
            family.push(key);
        }
    }
    let comparisons = family.len();
    let gamma = 1.0 - gates_level(comparisons);
    // Only a family's rows are compared again, so only then are the groups made (making them
    // merges each run's overall digests anew): a diff without gates, or whose gates have no row
    // with values on both sides, takes none.
    let (mut ga, mut gb) = if family.is_empty() {
        (vec![], vec![])
    } else {
        (a.groups(), b.groups())
    };
    gates
        .iter()
        .zip(&found)
        .map(|(g, (want, found))| {
            // The row again, its intervals at the gates' level; one with no values on a side
            // (no interval at any level) as it is.
            let row = found.map(|r| {
                if r.a.count == 0 || r.b.count == 0 {
                    return r.clone();
                }
                let side = |groups: &mut [(GroupKey, &mut GroupStats)]| {
                    groups
                        .iter_mut()
                        .find(|(k, _)| sorted(k) == *want)
                        .map_or_else(Side::default, |(_, st)| {
                            side(st, g.metric, r.quantile, gamma)
                        })
                };
                row(
                    r.group.clone(),
                    r.metric,
                    r.quantile,
                    side(&mut ga),
                    side(&mut gb),
                )
            });
            let holds = row.as_ref().is_some_and(|r| holds(g, r));
            let judged = row.as_ref().is_some_and(|r| judged(g, r));
            let needed = row
                .as_ref()
                .filter(|r| r.verdict == Verdict::NotEnoughSamples && !judged)
                .map(|_| values_needed(g.quantile, gamma));
            let missing = row.is_none().then(|| missing(g, want, c));
            GateResult {
                gate: g.clone(),
                row,
                holds,
                judged,
                needed,
                comparisons,
                missing,
            }
        })
        .collect()
}

/// What the runs lack of gate `g`'s row (its group `want`, sorted, or its metric there).
fn missing(g: &FailIf, want: &GroupKey, c: &Comparison) -> String {
    let label = crate::summary::group_label(&g.group, "all requests");
    let only = |keys: &[GroupKey]| keys.iter().any(|k| sorted(k) == *want);
    // Every request of a run is in the all-requests group: a run without it has none.
    let only_in = |side: &str, other: &str| match want.is_empty() {
        true => format!("run {other} has no request"),
        false => format!("group {label} is only in {side}"),
    };
    if only(&c.only_in_a) {
        only_in("A", "B")
    } else if only(&c.only_in_b) {
        only_in("B", "A")
    } else if !c.rows.iter().any(|r| sorted(&r.group) == *want) {
        format!("no request of either run is in group {label}")
    } else {
        format!(
            "neither run has {} values in group {label}",
            g.metric.json_name()
        )
    }
}

/// Whether the change of row `r` passes gate `g`'s threshold in its direction; `None` when the
/// change is unknown (a side without a value, a percentage of an A of 0).
fn passes_threshold(g: &FailIf, r: &Row) -> Option<bool> {
    let (c, t) = match g.amount {
        Amount::Pct(p) => (r.change_pct?, p),
        Amount::Ms(ms) => (r.change_ms?, ms),
    };
    Some(if g.up { c > t } else { c < t })
}

fn passes(g: &FailIf, r: &Row) -> bool {
    passes_threshold(g, r) == Some(true)
}

/// Row `r` tells whether gate `g` holds: its intervals were built, or its change is known and
/// does not pass the threshold.
fn judged(g: &FailIf, r: &Row) -> bool {
    match r.verdict {
        Verdict::NoValues => false,
        Verdict::NotEnoughSamples => passes_threshold(g, r) == Some(false),
        _ => true,
    }
}

fn holds(g: &FailIf, r: &Row) -> bool {
    let beyond = match r.verdict {
        Verdict::Worse => g.up,
        Verdict::Better => !g.up,
        _ => false,
    };
    beyond && passes(g, r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1000 token gaps from 10 requests (100 each) are 10 draws: the p50's 95% interval is
    /// order statistics 2 and 9 of 10 (P(Bin(10, 0.5) <= 1) = 0.0107, P(<= 8) = 0.989), read at
    /// the same shares (1/9 and 8/9) of the gaps 1..=1000: 112 and 889. TPOT's 1000 values
    /// from 1000 requests keep their own ranks (469 and 532).
    #[test]
    fn token_gaps_count_one_draw_a_request() {
        let mut g = GroupStats::default();
        for v in 1..=1000 {
            g.metrics[Metric::Itl.index()].digest.add(f64::from(v));
            g.metrics[Metric::Tpot.index()].digest.add(f64::from(v));
        }
        g.requests = 10;
        let itl = side(&mut g, Metric::Itl, 0.5, 0.05);
        assert_eq!(
            (itl.low, itl.high, itl.count),
            (Some(112.0), Some(889.0), 1000)
        );
        g.requests = 1000;
        let tpot = side(&mut g, Metric::Tpot, 0.5, 0.05);
        assert_eq!((tpot.low, tpot.high), (Some(469.0), Some(532.0)));
    }

    /// A p99 gets an upper end once 0.99^n <= gamma / 2: n >= ln(0.0005) / ln(0.99) = 756.3
    /// at gamma 0.001 (25 comparisons); a p50 at 95% once 0.5^n <= 0.025: n >= 5.3.
    #[test]
    fn values_needed_by_hand() {
        assert_eq!(values_needed(0.99, 0.001), 757);
        assert_eq!(values_needed(0.5, 0.05), 6);
    }

    #[test]
    fn order_statistic_ranks_by_hand() {
        // n = 10, q = 0.5, 1 - gamma = 0.9: P(Bin(10, .5) <= 1) = 11/1024 = 0.0107 <= 0.05,
        // P(<= 2) = 56/1024 = 0.0547 > 0.05: l = 2 (P(Bin <= l-1=1)). Upper: P(<= 7) =
        // 968/1024 = 0.945 < 0.95, P(<= 8) = 1013/1024 = 0.989: u - 1 = 8, u = 9.
        assert_eq!(order_statistic_ranks(10, 0.5, 0.1), (Some(2), Some(9)));
        // p99 of 60 values: no order statistic above it at 95%.
        assert_eq!(order_statistic_ranks(60, 0.99, 0.05).1, None);
        // Too few for anything: 3 values at 99%.
        assert_eq!(order_statistic_ranks(3, 0.5, 0.01), (None, None));
    }

    #[test]
    fn normal_quantiles() {
        assert!((inverse_normal(0.975) - 1.959_964).abs() < 1e-5);
        assert!((inverse_normal(0.5)).abs() < 1e-12);
        assert!((inverse_normal(1e-4) + 3.719_016).abs() < 1e-5);
    }

    #[test]
    fn normal_approximation_agrees_with_the_exact_sum() {
        let exact = order_statistic_ranks(20_000, 0.9, 0.001);
        let z = inverse_normal(1.0 - 0.0005);
        let sd = (20_000.0f64 * 0.9 * 0.1).sqrt();
        let (l, u) = (exact.0.unwrap() as f64, exact.1.unwrap() as f64);
        assert!((l - (18_000.0 - z * sd)).abs() <= 2.0, "{l}");
        assert!((u - (18_000.0 + z * sd)).abs() <= 3.0, "{u}");
    }

    #[test]
    fn gates_parse() {
        let g = parse_fail_if("ttft_ms.p99>+10%").unwrap();
        assert_eq!((g.metric, g.quantile, g.up), (Metric::Ttft, 0.99, true));
        assert_eq!(g.amount, Amount::Pct(10.0));
        let g = parse_fail_if("tpot.p50<-5ms@cache=miss").unwrap();
        assert_eq!((g.up, g.amount), (false, Amount::Ms(-5.0)));
        assert_eq!(g.group, vec![("cache".to_owned(), Some("miss".to_owned()))]);
        let g = parse_fail_if("ttft_ms.p99>+0.5s").unwrap();
        assert_eq!(g.amount, Amount::Ms(500.0));
        let g = parse_fail_if("e2e.p50<-2s").unwrap();
        assert_eq!(g.amount, Amount::Ms(-2000.0));
        // An unsigned amount takes the comparison's direction, both ways.
        let g = parse_fail_if("e2e.p50<2s@cache=hit").unwrap();
        assert_eq!(g.amount, Amount::Ms(-2000.0));
        assert_eq!(g.text, "e2e.p50<-2s@cache=hit");
        assert_eq!(parse_fail_if("e2e.p50 < 2s").unwrap().text, "e2e.p50 < -2s");
        assert_eq!(
            parse_fail_if("ttft.p50>10%").unwrap().amount,
            Amount::Pct(10.0)
        );
        // A quantile with a decimal point (p99.9 is among diff's default quantiles).
        let g = parse_fail_if("ttft.p99.9>+1%").unwrap();
        assert!(g.metric == Metric::Ttft && (g.quantile - 0.999).abs() < 1e-12);
        for bad in [
            "ttft.p99",
            "ttft.p99>10",
            "ttft.p99>+1h",
            "ttft.p99>+s",
            "ttft.p99>-10%",
            "ttft.p99<+1ms",
            "input_tokens.p50>+1%",
            "ttft.q99>+1%",
            "bogus.p99>+1%",
        ] {
            assert!(parse_fail_if(bad).is_err(), "{bad}");
        }
        let e = parse_fail_if("ttft.p50>=+10%").unwrap_err();
        assert!(e.contains("'>=' is no comparison here: '>' alone"), "{e}");
        assert_eq!(
            split_fail_if("ttft.p99>+10%@model=a,cache=hit,tpot.p50>+5ms"),
            vec!["ttft.p99>+10%@model=a,cache=hit", "tpot.p50>+5ms"]
        );
    }
}
