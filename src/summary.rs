//! Summary: per-group digests of every metric, the coverage block, and their renderings (an
//! aligned table, and the versioned JSON of SPEC section 4).
//!
//! Owns grouping (overall, by `cache`, by each `--by` key, and by the `--by` keys with
//! `cache`), the bound on the number of groups, and the null-reason counts. Receives derived
//! [`Metrics`]; writes only to the writer it is given.

use crate::digest::Digest;
use crate::enrich::round3;
use crate::metrics::{Metrics, NullReason, Outcome};
use crate::pipeline::Coverage;
use serde_json::{Map, Value as Json, json};
use std::collections::HashMap;
use std::io::{self, Write};

/// The version of the JSON summary schema.
pub const SCHEMA: &str = "tokentime.summary/v1";

/// Metric names of the summary, in output order (the enrich names).
pub const METRICS: [&str; 9] = [
    "ttft_ms",
    "tpot_ms",
    "e2e_ms",
    "queue_ms",
    "prefill_ms",
    "decode_ms",
    "input_tokens",
    "cached_tokens",
    "output_tokens",
];

/// The value standing for all groups past `--max-groups`.
pub const OTHER: &str = "(other)";

/// One metric's distribution and the reasons it was null.
#[derive(Debug, Clone, Default)]
pub struct MetricStats {
    /// The values (ms for durations, tokens for counts).
    pub digest: Digest,
    /// Null values by reason.
    pub nulls: NullCounts,
}

/// Null counts by reason. A fixed array rather than a map: counting is on every request's
/// path (a `BTreeMap` entry per null was a measurable share of `summary`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NullCounts([u64; 8]);

impl NullCounts {
    /// Every reason, in [`NullReason`]'s order (its `Ord`).
    const REASONS: [NullReason; 8] = [
        NullReason::NotLogged,
        NullReason::NotStreamed,
        NullReason::OneToken,
        NullReason::Sentinel,
        NullReason::NegativeInterval,
        NullReason::Error,
        NullReason::Cancelled,
        NullReason::ResponseCache,
    ];

    fn slot(r: NullReason) -> usize {
        match r {
            NullReason::NotLogged => 0,
            NullReason::NotStreamed => 1,
            NullReason::OneToken => 2,
            NullReason::Sentinel => 3,
            NullReason::NegativeInterval => 4,
            NullReason::Error => 5,
            NullReason::Cancelled => 6,
            NullReason::ResponseCache => 7,
        }
    }

    /// Counts `n` more nulls for reason `r`.
    pub fn add(&mut self, r: NullReason, n: u64) {
        self.0[Self::slot(r)] += n;
    }

    /// The count for reason `r`.
    pub fn get(&self, r: NullReason) -> u64 {
        self.0[Self::slot(r)]
    }

    /// The reasons with a nonzero count, in order, with their counts.
    pub fn iter(&self) -> impl Iterator<Item = (NullReason, u64)> + '_ {
        Self::REASONS
            .iter()
            .zip(self.0)
            .filter(|&(_, n)| n > 0)
            .map(|(&r, n)| (r, n))
    }
}

/// Everything known about one group.
#[derive(Debug, Clone, Default)]
pub struct GroupStats {
    /// Requests in the group.
    pub requests: u64,
    /// Failed requests (or cancelled before the first token).
    pub errors: u64,
    /// Requests cancelled after the first token.
    pub cancelled: u64,
    /// Response-cache answers.
    pub response_cache: u64,
    /// One entry per [`METRICS`] name.
    pub metrics: [MetricStats; 9],
}

impl GroupStats {
    /// Adds everything of `other` to this group.
    pub fn merge(&mut self, other: &GroupStats) {
        self.requests += other.requests;
        self.errors += other.errors;
        self.cancelled += other.cancelled;
        self.response_cache += other.response_cache;
        for (a, b) in self.metrics.iter_mut().zip(&other.metrics) {
            a.digest.merge(&b.digest);
            for (r, n) in b.nulls.iter() {
                a.nulls.add(r, n);
            }
        }
    }

    fn add(&mut self, m: &Metrics) {
        self.requests += 1;
        match m.outcome {
            Outcome::Error => self.errors += 1,
            Outcome::Cancelled => self.cancelled += 1,
            Outcome::Ok => {}
        }
        if m.cache == Some(crate::metrics::CacheClass::Response) {
            self.response_cache += 1;
        }
        let excluded = match (m.outcome, m.cache) {
            (Outcome::Error, _) => Some(NullReason::Error),
            (_, Some(crate::metrics::CacheClass::Response)) => Some(NullReason::ResponseCache),
            _ => None,
        };
        let durations = [m.ttft, m.tpot, m.e2e, m.queue, m.prefill, m.decode];
        for (stats, v) in self.metrics.iter_mut().zip(durations) {
            match v {
                Ok(ns) => stats.digest.add(ns / 1e6),
                Err(r) => stats.nulls.add(r, 1),
            }
        }
        let counts = [m.input_tokens, m.cached_tokens, m.output_tokens];
        for (stats, v) in self.metrics[6..].iter_mut().zip(counts) {
            match (excluded, v) {
                (Some(r), _) => stats.nulls.add(r, 1),
                (None, Some(n)) => stats.digest.add(n as f64),
                (None, None) => stats.nulls.add(NullReason::NotLogged, 1),
            }
        }
    }
}

/// A group's key: dimension names and values (`None` when the log does not say).
pub type GroupKey = Vec<(String, Option<String>)>;

/// The `--by` values of one request, as strings (`None` when absent). Reused from request to
/// request, so reading them allocates nothing once the strings have grown to size.
#[derive(Debug, Default, Clone)]
pub struct ByValues {
    text: Vec<String>,
    present: Vec<bool>,
}

impl ByValues {
    /// Makes room for `n` values, all absent.
    pub fn reset(&mut self, n: usize) {
        self.text.resize_with(n, String::new);
        self.present.clear();
        self.present.resize(n, false);
    }

    /// Sets value `i` (`i` below the `n` of [`ByValues::reset`]).
    pub fn set(&mut self, i: usize, v: Option<&str>) {
        self.present[i] = v.is_some();
        self.text[i].clear();
        self.text[i].push_str(v.unwrap_or(""));
    }

    /// Value `i`, `None` when absent (or out of range).
    pub fn get(&self, i: usize) -> Option<&str> {
        (*self.present.get(i)?).then(|| self.text[i].as_str())
    }
}

/// One group: which subset of dimensions it is keyed by, its values, its statistics.
#[derive(Debug)]
struct Group {
    subset: usize,
    key: Vec<Option<String>>,
    stats: GroupStats,
    /// The next group whose key has the same hash.
    next: Option<usize>,
}

/// A hasher for keys that are already hashes (see [`key_hash`]).
#[derive(Default)]
struct PreHashed(u64);

impl std::hash::Hasher for PreHashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | b as u64;
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// FNV-1a over a group's subset and values, finished with a multiply-xorshift so that every
/// bit depends on every byte. Cheap for the short strings group keys are.
fn key_hash<'a>(subset: usize, values: impl Iterator<Item = Option<&'a str>>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ subset as u64;
    let mut eat = |b: u8| h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
    for v in values {
        match v {
            None => eat(0),
            Some(s) => {
                eat(1);
                s.bytes().for_each(&mut eat);
                eat(0xff);
            }
        }
    }
    h ^= h >> 29;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^ (h >> 32)
}

/// The summary being built.
#[derive(Debug)]
pub struct Summary {
    by: Vec<String>,
    subsets: Vec<Vec<usize>>,
    groups: Vec<Group>,
    /// First group of each key hash (the others chain through [`Group::next`]).
    index: HashMap<u64, usize, std::hash::BuildHasherDefault<PreHashed>>,
    max_groups: usize,
}

impl Summary {
    /// A summary grouped overall, by `cache`, and, when `by` names keys, by those keys alone
    /// and by those keys with `cache`. At most `max_groups` groups; later keys go to `(other)`.
    pub fn new(by: Vec<String>, max_groups: usize) -> Self {
        // Dimension 0 is cache, 1.. are the --by keys.
        let mut subsets = vec![vec![], vec![0]];
        if !by.is_empty() {
            subsets.push((1..=by.len()).collect());
            subsets.push((1..=by.len()).chain([0]).collect());
        }
        Summary {
            by,
            subsets,
            groups: Vec::new(),
            index: HashMap::default(),
            max_groups: max_groups.max(1),
        }
    }

    /// The group of `subset` keyed by `values`, created when new: past `--max-groups` (when
    /// `bounded`), the `(other)` group instead. Allocates only when it creates a group.
    fn group<'a>(
        &mut self,
        subset: usize,
        values: impl Iterator<Item = Option<&'a str>> + Clone,
        bounded: bool,
    ) -> &mut GroupStats {
        let h = key_hash(subset, values.clone());
        let mut at = self.index.get(&h).copied();
        while let Some(g) = at {
            let grp = &self.groups[g];
            let same = grp.key.len() == values.clone().count()
                && grp
                    .key
                    .iter()
                    .zip(values.clone())
                    .all(|(a, b)| a.as_deref() == b);
            if grp.subset == subset && same {
                return &mut self.groups[g].stats;
            }
            at = grp.next;
        }
        if bounded && self.groups.len() >= self.max_groups {
            let n = values.count();
            return self.group(subset, std::iter::repeat_n(Some(OTHER), n), false);
        }
        let g = self.groups.len();
        self.groups.push(Group {
            subset,
            key: values.map(|v| v.map(str::to_owned)).collect(),
            stats: GroupStats::default(),
            next: self.index.insert(h, g),
        });
        &mut self.groups[g].stats
    }

    /// Adds one request with the values of its `--by` keys.
    pub fn add(&mut self, m: &Metrics, by_values: &ByValues) {
        for si in 0..self.subsets.len() {
            let dims = std::mem::take(&mut self.subsets[si]);
            let values = dims.iter().map(|&d| {
                if d == 0 {
                    m.cache.map(|c| c.as_str())
                } else {
                    by_values.get(d - 1)
                }
            });
            self.group(si, values, true).add(m);
            self.subsets[si] = dims;
        }
    }

    /// Adds every group of `other` (built with the same `--by` keys) to this summary, as if
    /// its requests had been added here.
    pub fn merge(&mut self, other: &Summary) {
        for g in &other.groups {
            self.group(g.subset, g.key.iter().map(Option::as_deref), true)
                .merge(&g.stats);
        }
    }

    fn dim_name(&self, d: usize) -> &str {
        if d == 0 { "cache" } else { &self.by[d - 1] }
    }

    /// The groups in output order: overall first, then by subset and key.
    pub fn groups(&mut self) -> Vec<(GroupKey, &mut GroupStats)> {
        let names: Vec<Vec<String>> = self
            .subsets
            .iter()
            .map(|s| s.iter().map(|&d| self.dim_name(d).to_owned()).collect())
            .collect();
        let mut out: Vec<(usize, &Vec<Option<String>>, &mut GroupStats)> = self
            .groups
            .iter_mut()
            .map(|g| (g.subset, &g.key, &mut g.stats))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| cmp_key(a.1, b.1)));
        out.into_iter()
            .map(|(subset, key, stats)| {
                let key = names[subset]
                    .iter()
                    .cloned()
                    .zip(key.iter().cloned())
                    .collect();
                (key, stats)
            })
            .collect()
    }
}

fn cmp_key(a: &[Option<String>], b: &[Option<String>]) -> std::cmp::Ordering {
    fn rank(v: &Option<String>) -> (i32, &str) {
        match v.as_deref() {
            Some("hit") => (0, ""),
            Some("partial") => (1, ""),
            Some("miss") => (2, ""),
            Some("response") => (3, ""),
            Some(OTHER) => (6, ""),
            Some(s) => (4, s),
            None => (5, ""),
        }
    }
    a.iter().map(rank).cmp(b.iter().map(rank))
}

/// Parses a quantile list (`50,90,99,99.9` or `p50,p99`) into fractions.
///
/// # Errors
/// A message when an entry is not a number in 0..=100.
pub fn parse_quantiles(s: &str) -> Result<Vec<f64>, String> {
    s.split(',')
        .map(|q| {
            let t = q.trim().trim_start_matches('p');
            match t.parse::<f64>() {
                Ok(v) if (0.0..=100.0).contains(&v) => Ok(v / 100.0),
                _ => Err(format!("--quantiles: {q:?} is not a percentile in 0..100")),
            }
        })
        .collect()
}

/// The output key of a quantile: `p` plus the percentile (`p50`, `p99.9`).
pub fn quantile_name(q: f64) -> String {
    let pct = round3(q * 100.0);
    if pct.fract() == 0.0 {
        format!("p{}", pct as i64)
    } else {
        format!("p{pct}")
    }
}

fn num(v: Option<f64>) -> Json {
    v.map(|x| json!(round3(x))).unwrap_or(Json::Null)
}

/// The summary as the JSON document of SPEC section 4 (`tokentime.summary/v1`).
pub fn to_json(cov: &Coverage, summary: &mut Summary, quantiles: &[f64]) -> Json {
    let mut groups = Vec::new();
    for (key, g) in summary.groups() {
        let mut k = Map::new();
        for (name, v) in key {
            k.insert(name, v.map(Json::String).unwrap_or(Json::Null));
        }
        let mut metrics = Map::new();
        for (name, st) in METRICS.iter().zip(g.metrics.iter_mut()) {
            let mut qs = Map::new();
            for &q in quantiles {
                qs.insert(quantile_name(q), num(st.digest.quantile(q)));
            }
            let nulls: Map<String, Json> = st
                .nulls
                .iter()
                .map(|(r, n)| (r.as_str().to_owned(), json!(n)))
                .collect();
            metrics.insert(
                (*name).to_owned(),
                json!({
                    "count": st.digest.count(),
                    "nulls": nulls,
                    "exact": st.digest.is_exact(),
                    "min": num(st.digest.min()),
                    "max": num(st.digest.max()),
                    "mean": num(st.digest.mean()),
                    "quantiles": qs,
                }),
            );
        }
        groups.push(json!({
            "key": k,
            "requests": g.requests,
            "errors": g.errors,
            "cancelled": g.cancelled,
            "response_cache": g.response_cache,
            "metrics": metrics,
        }));
    }
    json!({
        "schema": SCHEMA,
        "coverage": coverage_json(cov),
        "groups": groups,
    })
}

fn coverage_json(cov: &Coverage) -> Json {
    json!({
        "lines": cov.lines,
        "requests": cov.requests,
        "non_json": cov.non_json,
        "no_timing": cov.no_timing,
        "invalid": cov.invalid,
        "too_long": cov.too_long,
        "already_enriched": cov.already_enriched,
        "errors": cov.errors,
        "cancelled": cov.cancelled,
        "response_cache": cov.response_cache,
        "anomalies": {"negative_interval": cov.negative_interval},
        "formats": cov.formats,
    })
}

/// Writes the summary as an aligned text table.
///
/// # Errors
/// The writer's.
pub fn write_table(
    out: &mut impl Write,
    cov: &Coverage,
    summary: &mut Summary,
    quantiles: &[f64],
) -> io::Result<()> {
    let formats: Vec<String> = cov
        .formats
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    writeln!(
        out,
        "lines {}  requests {}  errors {}  non-JSON {}  no timing {}  invalid {}{}{}{}",
        cov.lines,
        cov.requests,
        cov.errors,
        cov.non_json,
        cov.no_timing,
        cov.invalid,
        if cov.too_long > 0 {
            format!("  too long {}", cov.too_long)
        } else {
            String::new()
        },
        if cov.negative_interval > 0 {
            format!("  negative intervals {}", cov.negative_interval)
        } else {
            String::new()
        },
        if formats.is_empty() {
            String::new()
        } else {
            format!("  formats: {}", formats.join(", "))
        },
    )?;
    let mut header = vec!["metric".to_owned(), "count".to_owned(), "min".to_owned()];
    header.extend(quantiles.iter().map(|&q| quantile_name(q)));
    header.extend(["max".to_owned(), "mean".to_owned(), "nulls".to_owned()]);
    for (key, g) in summary.groups() {
        let label = if key.is_empty() {
            "all requests".to_owned()
        } else {
            key.iter()
                .map(|(k, v)| format!("{k}={}", v.as_deref().unwrap_or("unknown")))
                .collect::<Vec<_>>()
                .join(" ")
        };
        writeln!(out)?;
        let mut extra = String::new();
        if g.cancelled > 0 {
            extra.push_str(&format!(", cancelled {}", g.cancelled));
        }
        if g.response_cache > 0 {
            extra.push_str(&format!(", response cache {}", g.response_cache));
        }
        writeln!(
            out,
            "{label}: {} requests, {} errors{extra}",
            g.requests, g.errors
        )?;
        let mut rows = vec![header.clone()];
        let mut absent = vec![];
        for (name, st) in METRICS.iter().zip(g.metrics.iter_mut()) {
            if st.digest.count() == 0 {
                absent.push(*name);
                continue;
            }
            let cell = |v: Option<f64>| v.map(fmt_cell).unwrap_or_else(|| "-".to_owned());
            let mut row = vec![
                (*name).to_owned(),
                st.digest.count().to_string(),
                cell(st.digest.min()),
            ];
            for &q in quantiles {
                row.push(cell(st.digest.quantile(q)));
            }
            row.push(cell(st.digest.max()));
            row.push(cell(st.digest.mean()));
            let nulls: Vec<String> = st
                .nulls
                .iter()
                .map(|(r, n)| format!("{} {n}", r.as_str()))
                .collect();
            row.push(nulls.join(", "));
            if !st.digest.is_exact() {
                row[0].push('~');
            }
            rows.push(row);
        }
        let ncols = header.len();
        let widths: Vec<usize> = (0..ncols)
            .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
            .collect();
        for r in &rows {
            let mut line = String::new();
            for (c, cell) in r.iter().enumerate() {
                let w = widths[c];
                if c == 0 || c == ncols - 1 {
                    line.push_str(&format!("{cell:<w$}"));
                } else {
                    line.push_str(&format!("{cell:>w$}"));
                }
                if c + 1 < ncols {
                    line.push_str("  ");
                }
            }
            writeln!(out, "{}", line.trim_end())?;
        }
        if !absent.is_empty() {
            writeln!(out, "no values: {}", absent.join(", "))?;
        }
    }
    writeln!(out)?;
    writeln!(
        out,
        "durations in ms; quantiles exact (linear interpolation, numpy's default) up to 10000 values, t-digest estimates past that (marked ~)"
    )?;
    Ok(())
}

fn fmt_cell(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.1}")
    } else {
        let mut b = Vec::new();
        let _ = crate::enrich::write_fixed3(&mut b, x);
        String::from_utf8_lossy(&b).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_reasons_in_order_and_each_in_its_own_slot() {
        let r = NullCounts::REASONS;
        assert!(r.windows(2).all(|w| w[0] < w[1]));
        for (i, &x) in r.iter().enumerate() {
            assert_eq!(NullCounts::slot(x), i);
        }
    }

    #[test]
    fn quantile_names() {
        assert_eq!(quantile_name(0.5), "p50");
        assert_eq!(quantile_name(0.999), "p99.9");
        let q = parse_quantiles("p50, 99.9").unwrap();
        assert_eq!(q.len(), 2);
        assert!((q[0] - 0.5).abs() < 1e-12 && (q[1] - 0.999).abs() < 1e-12);
        assert!(parse_quantiles("101").is_err());
    }
}
