//! Summary: per-group digests of every metric, the coverage block, and their renderings (an
//! aligned table, and the versioned JSON of SPEC section 4).
//!
//! Owns grouping (overall, by `cache`, by each `--by` key, and by the `--by` keys with
//! `cache`), the bound on the number of groups, and the null-reason counts. Receives derived
//! [`Metrics`]; writes only to the writer it is given.

use crate::analysis::AnalysisConfig;
use crate::digest::Digest;
use crate::enrich::round3;
use crate::metrics::{CacheClass, Metrics, NullReason, Outcome};
use crate::pipeline::{Coverage, Request};
use crate::slo::Targets;
use serde_json::{Map, Value as Json, json};
use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasherDefault;
use std::io::{self, Write};

/// The version of the JSON summary schema.
pub const SCHEMA: &str = "tokentime.summary/v1";

/// Metric names of the summary, in output order (the enrich names).
pub const METRICS: [&str; 10] = [
    "ttft_ms",
    "tpot_ms",
    "itl_ms",
    "e2e_ms",
    "queue_ms",
    "prefill_ms",
    "decode_ms",
    "input_tokens",
    "cached_tokens",
    "output_tokens",
];

/// One request's value of metric `i` of [`METRICS`]: ms for durations, a count for tokens.
/// `itl_ms` has no single per-request value (it is every gap): it is `NotLogged` here.
pub fn request_value(m: &Metrics, i: usize) -> Result<f64, NullReason> {
    let count = |v: Option<u64>| v.map(|n| n as f64).ok_or(NullReason::NotLogged);
    match METRICS[i] {
        "ttft_ms" => m.ttft.map(|ns| ns / 1e6),
        "tpot_ms" => m.tpot.map(|ns| ns / 1e6),
        "e2e_ms" => m.e2e.map(|ns| ns / 1e6),
        "queue_ms" => m.queue.map(|ns| ns / 1e6),
        "prefill_ms" => m.prefill.map(|ns| ns / 1e6),
        "decode_ms" => m.decode.map(|ns| ns / 1e6),
        "input_tokens" => count(m.input_tokens),
        "cached_tokens" => count(m.cached_tokens),
        "output_tokens" => count(m.output_tokens),
        _ => Err(NullReason::NotLogged),
    }
}

/// The value standing for all groups past `--max-groups`.
pub const OTHER: &str = "(other)";

/// The grouping of everything (no dimension) in [`Summary`]'s subsets.
const OVERALL: usize = 0;
/// The grouping by cache class alone.
const BY_CACHE: usize = 1;

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
pub struct NullCounts([u64; NullReason::ALL.len()]);

impl NullCounts {
    /// The reason's slot: its discriminant, its place in [`NullReason::ALL`].
    fn slot(r: NullReason) -> usize {
        r as usize
    }

    /// Counts `n` more nulls for reason `r`.
    pub fn add(&mut self, r: NullReason, n: u64) {
        self.0[Self::slot(r)] += n;
    }

    /// Sets the count for reason `r`.
    pub fn insert(&mut self, r: NullReason, n: u64) {
        self.0[Self::slot(r)] = n;
    }

    /// The count for reason `r`.
    pub fn get(&self, r: NullReason) -> u64 {
        self.0[Self::slot(r)]
    }

    /// The reasons with a nonzero count, in order, with their counts.
    pub fn iter(&self) -> impl Iterator<Item = (NullReason, u64)> + '_ {
        NullReason::ALL
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
    pub metrics: [MetricStats; 10],
    /// TTFT samples by origin (`arrival`, `scheduled`, `gateway`).
    pub ttft_origins: BTreeMap<&'static str, u64>,
    /// Requests judged against `--goodput` targets (all zero without targets).
    pub goodput: Goodput,
    /// The earliest start and latest end (epoch ns) of the group's requests, where logged.
    pub span: Option<(i64, i64)>,
    /// The analysis accumulators ([`crate::analysis`]).
    pub extra: crate::analysis::Extra,
}

/// Goodput counts of a group (`--goodput`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Goodput {
    /// Requests that met every target.
    pub met: u64,
    /// Requests for which some target's metric is unknown (not logged, not streamed).
    pub unknown: u64,
    /// Output tokens of the requests that met every target.
    pub met_output_tokens: u64,
}

impl GroupStats {
    /// An empty group whose digests stay exact up to `exact_limit` values.
    pub fn new(exact_limit: usize) -> Self {
        let mut g = GroupStats::default();
        for m in &mut g.metrics {
            m.digest = Digest::with_limit(exact_limit);
        }
        g.extra = crate::analysis::Extra::new(exact_limit);
        g
    }

    /// Adds everything of `other` to this group.
    pub fn merge(&mut self, other: &GroupStats) {
        self.requests += other.requests;
        self.errors += other.errors;
        self.cancelled += other.cancelled;
        self.response_cache += other.response_cache;
        for (o, n) in &other.ttft_origins {
            *self.ttft_origins.entry(o).or_default() += n;
        }
        self.goodput.met += other.goodput.met;
        self.goodput.unknown += other.goodput.unknown;
        self.goodput.met_output_tokens += other.goodput.met_output_tokens;
        self.span = merge_span(self.span, other.span);
        self.extra.merge(&other.extra);
        for (a, b) in self.metrics.iter_mut().zip(&other.metrics) {
            a.digest.merge(&b.digest);
            for (r, n) in b.nulls.iter() {
                a.nulls.add(r, n);
            }
        }
    }

    /// True when every TTFT of the group runs from `scheduled` (llama.cpp's timings: no
    /// arrival time, so no queue time in it).
    pub fn ttft_from_scheduled_only(&self) -> bool {
        self.ttft_origins.len() == 1
            && self
                .ttft_origins
                .contains_key(crate::metrics::Origin::Scheduled.as_str())
    }

    fn add_extra(&mut self, judged: Option<Option<bool>>, tokens: u64, span: Option<(i64, i64)>) {
        match judged {
            Some(Some(true)) => {
                self.goodput.met += 1;
                self.goodput.met_output_tokens += tokens;
            }
            Some(None) => self.goodput.unknown += 1,
            _ => {}
        }
        self.span = merge_span(self.span, span);
    }

    fn add(&mut self, m: &Metrics, gaps: &[i64]) {
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
        if let (Ok(_), Some(o)) = (m.ttft, m.ttft_origin) {
            *self.ttft_origins.entry(o.as_str()).or_default() += 1;
        }
        self.extra.add(m);
        let durations = [m.ttft, m.tpot, m.e2e, m.queue, m.prefill, m.decode];
        for (i, v) in [0, 1, 3, 4, 5, 6].into_iter().zip(durations) {
            let stats = &mut self.metrics[i];
            match v {
                Ok(ns) => stats.digest.add(ns / 1e6),
                Err(r) => stats.nulls.add(r, 1),
            }
        }
        // ITL: every gap is a sample (token-weighted, as vLLM's benchmark reports it); a
        // request without gaps counts one null.
        let itl = &mut self.metrics[2];
        match (excluded, gaps.is_empty()) {
            (Some(r), _) => itl.nulls.add(r, 1),
            (None, true) => itl.nulls.add(NullReason::NotLogged, 1),
            (None, false) => gaps.iter().for_each(|&g| itl.digest.add(g as f64 / 1e6)),
        }
        let counts = [m.input_tokens, m.cached_tokens, m.output_tokens];
        for (stats, v) in self.metrics[7..].iter_mut().zip(counts) {
            match (excluded, v) {
                (Some(r), _) => stats.nulls.add(r, 1),
                (None, Some(n)) => stats.digest.add(n as f64),
                (None, None) => stats.nulls.add(NullReason::NotLogged, 1),
            }
        }
    }
}

fn merge_span(a: Option<(i64, i64)>, b: Option<(i64, i64)>) -> Option<(i64, i64)> {
    match (a, b) {
        (Some(a), Some(b)) => Some((a.0.min(b.0), a.1.max(b.1))),
        (a, None) => a,
        (None, b) => b,
    }
}

/// A group's key: dimension names and values (`None` when the log does not say).
pub type GroupKey = Vec<(String, Option<String>)>;

/// A group as saved: its dimension names, their values, its stats.
pub type RawGroup<'a> = (Vec<String>, Vec<Option<String>>, &'a mut GroupStats);

/// The groups one request was added to: per grouping, its index in the summary's groups
/// (`u32::MAX` past the groupings there are).
pub type GroupIds = [u32; 4];

/// The `--by` values of one request (`None` where the log does not say): borrowed from
/// buffers that are reused from line to line, so reading them allocates nothing in steady
/// state.
#[derive(Debug, Clone, Copy)]
pub struct ByValues<'a>(ByRepr<'a>);

#[derive(Debug, Clone, Copy)]
enum ByRepr<'a> {
    Split(&'a [String], &'a [bool]),
    Options(&'a [Option<String>]),
}

impl Default for ByValues<'_> {
    fn default() -> Self {
        ByValues(ByRepr::Options(&[]))
    }
}

impl<'a> ByValues<'a> {
    /// Value `i` is `text[i]` where `present[i]`, absent elsewhere (and past the end).
    pub fn new(text: &'a [String], present: &'a [bool]) -> Self {
        ByValues(ByRepr::Split(text, present))
    }

    /// The values of a slice.
    pub fn options(values: &'a [Option<String>]) -> Self {
        ByValues(ByRepr::Options(values))
    }

    /// Value `i`, `None` when absent (or out of range).
    pub fn get(&self, i: usize) -> Option<&'a str> {
        match self.0 {
            ByRepr::Split(text, present) => match present.get(i) {
                Some(true) => text.get(i).map(String::as_str),
                _ => None,
            },
            ByRepr::Options(v) => v.get(i)?.as_deref(),
        }
    }

    /// The values, owned.
    pub fn to_vec(&self) -> Vec<Option<String>> {
        let n = match self.0 {
            ByRepr::Split(_, present) => present.len(),
            ByRepr::Options(v) => v.len(),
        };
        (0..n).map(|i| self.get(i).map(str::to_owned)).collect()
    }
}

/// One group: which subset of dimensions it is keyed by, its values, its statistics.
#[derive(Debug, Clone)]
struct Group {
    subset: usize,
    key: Vec<Option<String>>,
    /// Boxed: a `--bucket` window holds a few groups, and a Vec of them grows by doubling.
    stats: Box<GroupStats>,
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
#[derive(Debug, Clone)]
pub struct Summary {
    by: Vec<String>,
    subsets: Vec<Vec<usize>>,
    /// The groups in the order they were created.
    groups: Vec<Group>,
    /// First group of each key hash (the others chain through [`Group::next`]): a request
    /// finds its groups by its borrowed values, without building a key.
    index: HashMap<u64, usize, BuildHasherDefault<PreHashed>>,
    max_groups: usize,
    exact_limit: usize,
    targets: Option<Targets>,
    /// The `--cache-hit-ratio` its cache classes were made with (saved in digest files, so
    /// that `merge` refuses files whose hit and partial groups mean different things).
    hit_ratio: Option<f64>,
    /// The overall group as reported ([`Summary::groups`], [`Summary::raw_groups`]), made
    /// afresh for each report: see [`Summary::overall`].
    view: Box<GroupStats>,
    /// The groups every request goes to, by [`cache_slot`]: the overall one and the one of
    /// each cache class, once found (`u32::MAX` before). Groups are never removed or moved,
    /// so a request finds them without hashing its key.
    cache_groups: [u32; CACHE_SLOTS],
}

/// Slots of [`Summary`]'s `cache_groups`: the overall group, then one per cache class and
/// one for requests without one.
const CACHE_SLOTS: usize = 6;

/// The slot in `cache_groups` of grouping `subset` for a request of cache class `cache`, when
/// that grouping is the overall one or the one by cache alone.
fn cache_slot(subset: usize, cache: Option<CacheClass>) -> Option<usize> {
    match subset {
        OVERALL => Some(0),
        BY_CACHE => Some(match cache {
            Some(CacheClass::Hit) => 1,
            Some(CacheClass::Partial) => 2,
            Some(CacheClass::Miss) => 3,
            Some(CacheClass::Response) => 4,
            None => 5,
        }),
        _ => None,
    }
}

impl Summary {
    /// A summary grouped overall, by `cache`, and, when `by` names keys, by those keys alone
    /// and by those keys with `cache`. At most `max_groups` groups; later keys go to `(other)`.
    /// Digests stay exact up to `exact_limit` values each.
    pub fn new(by: Vec<String>, max_groups: usize, exact_limit: usize) -> Self {
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
            exact_limit,
            targets: None,
            hit_ratio: None,
            view: Box::default(),
            cache_groups: [u32::MAX; CACHE_SLOTS],
        }
    }

    /// The same summary judging each request against `--goodput` targets.
    pub fn with_goodput(mut self, targets: Option<Targets>) -> Self {
        self.targets = targets;
        self
    }

    /// Records the `--cache-hit-ratio` the cache classes are made with.
    pub fn with_hit_ratio(mut self, ratio: Option<f64>) -> Self {
        self.hit_ratio = ratio;
        self
    }

    /// Sets the `--cache-hit-ratio` recorded (a merge of files some of which predate it).
    pub fn set_hit_ratio(&mut self, ratio: Option<f64>) {
        self.hit_ratio = ratio;
    }

    /// The `--cache-hit-ratio` recorded ([`Summary::with_hit_ratio`]); `None` when unknown
    /// (a digest file from before it was saved).
    pub fn hit_ratio(&self) -> Option<f64> {
        self.hit_ratio
    }

    /// The `--by` keys.
    pub fn by(&self) -> &[String] {
        &self.by
    }

    /// The number of values each digest holds exactly (`--exact-limit`).
    pub fn exact_limit(&self) -> usize {
        self.exact_limit
    }

    /// The bound on the number of groups.
    pub fn max_groups(&self) -> usize {
        self.max_groups
    }

    /// The `--goodput` targets.
    pub fn targets(&self) -> Option<&Targets> {
        self.targets.as_ref()
    }

    /// An empty summary with the same keys, bound, targets and hit ratio.
    pub fn empty_like(&self) -> Summary {
        Summary {
            by: self.by.clone(),
            subsets: self.subsets.clone(),
            groups: Vec::new(),
            index: HashMap::default(),
            max_groups: self.max_groups,
            exact_limit: self.exact_limit,
            targets: self.targets.clone(),
            hit_ratio: self.hit_ratio,
            view: Box::default(),
            cache_groups: [u32::MAX; CACHE_SLOTS],
        }
    }

    /// The index of the group of `subset` keyed by `values`, if there is one.
    fn find<'a>(
        &self,
        subset: usize,
        values: impl Iterator<Item = Option<&'a str>> + Clone,
    ) -> Option<usize> {
        let mut at = self.index.get(&key_hash(subset, values.clone())).copied();
        while let Some(g) = at {
            let grp = &self.groups[g];
            if grp.subset == subset
                && grp.key.len() == values.clone().count()
                && grp
                    .key
                    .iter()
                    .zip(values.clone())
                    .all(|(a, b)| a.as_deref() == b)
            {
                return Some(g);
            }
            at = grp.next;
        }
        None
    }

    /// The group of `subset` keyed by `values`, created when new. Past `--max-groups`, a new
    /// key of a `--by` grouping (subset 2 and up) goes to the `(other)` group instead; the
    /// overall and per-cache groups (at most six) never do. Allocates only when it creates a
    /// group.
    fn group<'a>(
        &mut self,
        subset: usize,
        values: impl Iterator<Item = Option<&'a str>> + Clone,
    ) -> &mut GroupStats {
        let g = self.group_index(subset, values);
        &mut self.groups[g].stats
    }

    /// [`Summary::group`]'s index in `groups`.
    fn group_index<'a>(
        &mut self,
        subset: usize,
        values: impl Iterator<Item = Option<&'a str>> + Clone,
    ) -> usize {
        if let Some(g) = self.find(subset, values.clone()) {
            return g;
        }
        if subset >= 2 && self.groups.len() >= self.max_groups {
            let n = values.count();
            let other = std::iter::repeat_n(Some(OTHER), n);
            if let Some(g) = self.find(subset, other.clone()) {
                return g;
            }
            return self.create(subset, other);
        }
        self.create(subset, values)
    }

    fn create<'a>(
        &mut self,
        subset: usize,
        values: impl Iterator<Item = Option<&'a str>> + Clone,
    ) -> usize {
        let h = key_hash(subset, values.clone());
        let g = self.groups.len();
        self.groups.push(Group {
            subset,
            key: values.map(|v| v.map(str::to_owned)).collect(),
            stats: Box::new(GroupStats::new(self.exact_limit)),
            next: self.index.insert(h, g),
        });
        g
    }

    /// Adds one request (its metrics, its start and end for the time span, and its goodput
    /// verdict when there are targets) with the values of its `--by` keys. Returns the groups
    /// it was added to (for [`Summary::add_inflight`]).
    pub fn add_request(&mut self, r: &Request, gaps: &[i64], by_values: ByValues<'_>) -> GroupIds {
        let judged = self.targets.as_ref().map(|t| t.judge(&r.metrics));
        let span = match (r.start_ns, r.end_ns) {
            (Some(s), Some(e)) => Some((s.min(e), e)),
            (Some(t), None) | (None, Some(t)) => Some((t, t)),
            (None, None) => None,
        };
        let tokens = r.metrics.output_tokens.unwrap_or(0);
        self.each_group(r.metrics.cache, by_values, |g| {
            g.add(&r.metrics, gaps);
            g.add_extra(judged, tokens, span);
        })
    }

    /// Adds one request with the values of its `--by` keys; returns the groups it was added
    /// to.
    pub fn add(&mut self, m: &Metrics, gaps: &[i64], by_values: ByValues<'_>) -> GroupIds {
        self.each_group(m.cache, by_values, |g| g.add(m, gaps))
    }

    /// The groups of a request of cache class `cache` with these `--by` values, created as
    /// needed (as [`Summary::add`] would), without adding anything.
    pub fn group_ids(&mut self, cache: Option<CacheClass>, by_values: ByValues<'_>) -> GroupIds {
        self.each_group(cache, by_values, |_| {})
    }

    /// The groups that exist for a request of cache class `cache` with these `--by` values:
    /// its own, else `(other)`, else none (`u32::MAX`).
    pub fn existing_group_ids(&self, cache: Option<CacheClass>, by: ByValues<'_>) -> GroupIds {
        let mut ids = [u32::MAX; 4];
        for (si, dims) in self.subsets.iter().enumerate() {
            let values = dims.iter().map(|&d| {
                if d == 0 {
                    cache.map(|c| c.as_str())
                } else {
                    by.get(d - 1)
                }
            });
            let other = std::iter::repeat_n(Some(OTHER), dims.len());
            if let Some(g) = self.find(si, values).or_else(|| self.find(si, other)) {
                ids[si] = g as u32;
            }
        }
        ids
    }

    /// Calls `f` on each group a request of cache class `cache` with these `--by` values
    /// belongs to, except the overall one (made at report time, [`Summary::overall`]),
    /// creating them as needed; returns the indices of all of them.
    fn each_group(
        &mut self,
        cache: Option<CacheClass>,
        by: ByValues<'_>,
        mut f: impl FnMut(&mut GroupStats),
    ) -> GroupIds {
        let mut ids = [u32::MAX; 4];
        for (si, id) in ids.iter_mut().enumerate().take(self.subsets.len()) {
            let slot = cache_slot(si, cache);
            let g = match slot.map(|c| self.cache_groups[c]) {
                Some(g) if g != u32::MAX => g as usize,
                _ => {
                    let dims = std::mem::take(&mut self.subsets[si]);
                    let values = dims.iter().map(|&d| {
                        if d == 0 {
                            cache.map(|c| c.as_str())
                        } else {
                            by.get(d - 1)
                        }
                    });
                    let g = self.group_index(si, values);
                    self.subsets[si] = dims;
                    if let Some(c) = slot {
                        self.cache_groups[c] = g as u32;
                    }
                    g
                }
            };
            // Stored before `f` adds to the group: read back as a whole for the return right
            // after the last `f`, a narrow store still in flight stalls the load.
            *id = g as u32;
            // The overall group is the sum of the per-cache groups (every request is in
            // exactly one): made at report time, not added to here.
            if si != OVERALL {
                f(&mut self.groups[g].stats);
            }
        }
        ids
    }

    /// Adds one request's TPOT (ms) with the mean number of requests in flight during its
    /// decode, to the groups the request was added to (`ids`, as [`Summary::add_request`]
    /// returned them).
    pub fn add_inflight(&mut self, ids: &GroupIds, inflight: f64, tpot_ms: f64) {
        for &g in ids {
            if let Some(g) = self.groups.get_mut(g as usize)
                && g.subset != OVERALL
            {
                g.stats.extra.add_inflight(inflight, tpot_ms);
            }
        }
    }

    /// Counts the in-flight sweep's late and early-swept events of one input in the
    /// all-requests group.
    pub fn add_sweep_counts(&mut self, late: u64, forced: u64) {
        if late + forced == 0 {
            return;
        }
        let g = self.group_index(0, std::iter::empty());
        let extra = &mut self.groups[g].stats.extra;
        extra.late += late;
        extra.forced += forced;
    }

    /// Every group as (dimension names, values, stats), for saving.
    pub fn raw_groups(&mut self) -> Vec<RawGroup<'_>> {
        let names = self.subset_names();
        let mut out: Vec<_> = self
            .reported()
            .into_iter()
            .map(|(subset, key, stats)| (names[subset].clone(), key.clone(), stats))
            .collect();
        out.sort_by(|a, b| {
            a.0.len()
                .cmp(&b.0.len())
                .then_with(|| cmp_key(&a.1, &b.1))
                .then_with(|| a.0.cmp(&b.0))
                .then_with(|| a.1.cmp(&b.1))
        });
        out
    }

    /// Adds a saved group (dimension names as [`Summary::raw_groups`] gives them, in any
    /// order) to this summary.
    ///
    /// # Errors
    /// A message when the names are not one of this summary's groupings.
    pub fn insert_group(
        &mut self,
        key: &[(String, Option<String>)],
        stats: &GroupStats,
    ) -> Result<(), String> {
        let si = (0..self.subsets.len())
            .find(|&si| {
                let dims = &self.subsets[si];
                dims.len() == key.len()
                    && dims
                        .iter()
                        .all(|&d| key.iter().any(|(n, _)| n == self.dim_name(d)))
            })
            .ok_or_else(|| {
                let names: Vec<&str> = key.iter().map(|(n, _)| n.as_str()).collect();
                format!("no grouping by [{}] here", names.join(", "))
            })?;
        if si == OVERALL {
            // A saved overall group holds everything of the per-cache groups saved with it,
            // which are inserted too: only what was added to it alone is kept.
            let g = self.group(OVERALL, std::iter::empty());
            g.extra.late += stats.extra.late;
            g.extra.forced += stats.extra.forced;
            return Ok(());
        }
        let values: Vec<Option<String>> = self.subsets[si]
            .iter()
            .map(|&d| {
                let name = self.dim_name(d);
                key.iter()
                    .find(|(n, _)| n == name)
                    .and_then(|(_, v)| v.clone())
            })
            .collect();
        self.group(si, values.iter().map(Option::as_deref))
            .merge(stats);
        Ok(())
    }

    /// Adds every group of `other` (built with the same `--by` keys) to this summary, as if
    /// its requests had been added here.
    pub fn merge(&mut self, other: &Summary) {
        for g in &other.groups {
            self.group(g.subset, g.key.iter().map(Option::as_deref))
                .merge(&g.stats);
        }
    }

    /// The overall group: what was added to it alone (in-flight sweep counts, and those of
    /// merged summaries) with every per-cache group merged in. Every request is added to
    /// exactly one per-cache group and to no overall group ([`Summary::add_request`]): this
    /// halves the per-request work of a summary, and gives the same counts, the same exact
    /// quantiles, and t-digest estimates within the digest's error (partial digests merged,
    /// as with `--threads`).
    fn overall(&self) -> GroupStats {
        let mut all = self
            .groups
            .iter()
            .find(|g| g.subset == OVERALL)
            .map_or_else(|| GroupStats::new(self.exact_limit), |g| (*g.stats).clone());
        for g in self.groups.iter().filter(|g| g.subset == BY_CACHE) {
            all.merge(&g.stats);
        }
        all
    }

    /// Each grouping's dimension names, by subset.
    /// The key dimensions groups are split by (the `--by` keys, then `cache`), whether or not
    /// any group has been seen yet: stable columns for CSV and TSV.
    pub fn dimensions(&self) -> Vec<String> {
        let mut dims: Vec<String> = Vec::new();
        for names in self.subset_names() {
            for n in names {
                if !dims.contains(&n) {
                    dims.push(n);
                }
            }
        }
        if let Some(i) = dims.iter().position(|d| d == "cache") {
            let cache = dims.remove(i);
            dims.push(cache);
        }
        dims
    }

    fn subset_names(&self) -> Vec<Vec<String>> {
        self.subsets
            .iter()
            .map(|s| s.iter().map(|&d| self.dim_name(d).to_owned()).collect())
            .collect()
    }

    /// Every group as (subset, values, stats) in creation order, the overall group's stats
    /// being [`Summary::overall`]'s, made afresh here.
    fn reported(&mut self) -> Vec<(usize, &Vec<Option<String>>, &mut GroupStats)> {
        *self.view = self.overall();
        let mut view = Some(&mut *self.view);
        self.groups
            .iter_mut()
            .map(|g| {
                let stats = match g.subset {
                    OVERALL => view.take().unwrap_or(&mut g.stats),
                    _ => &mut g.stats,
                };
                (g.subset, &g.key, stats)
            })
            .collect()
    }

    fn dim_name(&self, d: usize) -> &str {
        if d == 0 { "cache" } else { &self.by[d - 1] }
    }

    /// The groups in output order: overall first, then by subset and key.
    pub fn groups(&mut self) -> Vec<(GroupKey, &mut GroupStats)> {
        let names = self.subset_names();
        let mut out = self.reported();
        out.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| cmp_key(a.1, b.1))
                .then_with(|| a.1.cmp(b.1))
        });
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

/// Group order: cache classes first (hit, partial, miss, response), then numbers in numeric
/// order, then text, then unknown, then `(other)`.
fn cmp_key(a: &[Option<String>], b: &[Option<String>]) -> std::cmp::Ordering {
    fn rank(v: &Option<String>) -> (i32, f64, &str) {
        match v.as_deref() {
            Some("hit") => (0, 0.0, ""),
            Some("partial") => (1, 0.0, ""),
            Some("miss") => (2, 0.0, ""),
            Some("response") => (3, 0.0, ""),
            Some(OTHER) => (8, 0.0, ""),
            Some(s) => match s.parse::<f64>() {
                Ok(x) if x.is_finite() => (4, x, ""),
                _ => (5, 0.0, s),
            },
            None => (6, 0.0, ""),
        }
    }
    a.iter()
        .map(rank)
        .zip(b.iter().map(rank))
        .map(|(x, y)| x.0.cmp(&y.0).then(x.1.total_cmp(&y.1)).then(x.2.cmp(y.2)))
        .find(|o| o.is_ne())
        .unwrap_or(a.len().cmp(&b.len()))
}

/// Parses a quantile list (`50,90,99,99.9` or `p50,p99`) into fractions.
///
/// # Errors
/// A message when an entry is not a number in 0..=100.
pub fn parse_quantiles(s: &str) -> Result<Vec<f64>, String> {
    let mut qs: Vec<f64> = s
        .split(',')
        .map(|q| {
            let t = q.trim().trim_start_matches('p');
            match t.parse::<f64>() {
                Ok(v) if (0.0..=100.0).contains(&v) => Ok(v / 100.0),
                _ => Err(format!("--quantiles: {q:?} is not a percentile in 0..100")),
            }
        })
        .collect::<Result<_, _>>()?;
    qs.sort_by(f64::total_cmp);
    qs.dedup();
    Ok(qs)
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

/// The summary as the JSON document of SPEC section 4 (`tokentime.summary/v1`), with the
/// analysis of `cfg` ([`crate::analysis`]): a `headline`, and per group its `findings`,
/// `analysis` and, with `--hist`, a `histogram` per metric. The callers add members to
/// [`JsonDoc::head`]; serializing it writes the members in key order (as a
/// `serde_json::Value` would) with `groups` made one group at a time, so a report of many
/// groups (`--by user`) never holds all of them as JSON values at once.
pub fn to_json<'a>(
    cov: &Coverage,
    summary: &'a mut Summary,
    quantiles: &[f64],
    cfg: &AnalysisConfig,
) -> JsonDoc<'a> {
    let span = log_span(summary);
    let targets = summary.targets.clone();
    let report = crate::analysis::analyze(summary, cfg, quantiles);
    let mut head = Map::new();
    head.insert("schema".into(), json!(SCHEMA));
    head.insert("coverage".into(), coverage_json(cov));
    if let Some(h) = &report.headline {
        head.insert("headline".into(), crate::reading::headline_json(h));
    }
    GroupsDoc::new(
        head,
        LazyGroups {
            groups: summary.groups(),
            reports: report.groups,
            quantiles: quantiles.to_vec(),
            targets,
            span,
        },
    )
}

/// The summary document of [`to_json`]: its members but `groups`, and the groups, made as they
/// are written.
pub type JsonDoc<'a> = GroupsDoc<LazyGroups<'a>>;

/// A JSON document whose `groups` array is made one element at a time while it is written:
/// `head` holds the other members (the callers may add theirs); serializing writes them all in
/// key order, as a `serde_json::Value` would (a report or digest file of many groups never
/// holds all of them as values at once).
pub struct GroupsDoc<G> {
    /// Every member but `groups`.
    pub head: Map<String, Json>,
    groups: std::cell::RefCell<G>,
}

/// The groups of a [`GroupsDoc`], made on demand.
pub trait MakeGroups {
    /// How many groups.
    fn count(&self) -> usize;
    /// Group `i`'s JSON object.
    fn group(&mut self, i: usize) -> Json;
}

impl<G: MakeGroups> GroupsDoc<G> {
    /// A document of `head` and the groups `groups` makes.
    pub fn new(head: Map<String, Json>, groups: G) -> Self {
        GroupsDoc {
            head,
            groups: std::cell::RefCell::new(groups),
        }
    }
}

/// The groups of a summary report ([`to_json`]).
pub struct LazyGroups<'a> {
    groups: Vec<(GroupKey, &'a mut GroupStats)>,
    reports: Vec<crate::analysis::GroupReport>,
    quantiles: Vec<f64>,
    targets: Option<Targets>,
    span: Option<f64>,
}

impl MakeGroups for LazyGroups<'_> {
    fn count(&self) -> usize {
        self.groups.len()
    }

    fn group(&mut self, i: usize) -> Json {
        let (key, g) = &mut self.groups[i];
        let r = &self.reports[i];
        let mut doc = group_json(key, g, &self.quantiles, self.targets.as_ref(), self.span);
        let (findings, analysis) = crate::reading::group_json(r);
        doc["findings"] = findings;
        doc["analysis"] = analysis;
        for (name, h) in METRICS.iter().zip(&r.hist) {
            if let Some(h) = h {
                doc["metrics"][*name]["histogram"] = crate::reading::hist_json(h);
            }
        }
        doc
    }
}

impl<G: MakeGroups> serde::Serialize for GroupsDoc<G> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.head.len() + 1))?;
        let mut groups_done = false;
        for (k, v) in &self.head {
            if !groups_done && k.as_str() > "groups" {
                map.serialize_entry("groups", &GroupsSeq(&self.groups))?;
                groups_done = true;
            }
            map.serialize_entry(k, v)?;
        }
        if !groups_done {
            map.serialize_entry("groups", &GroupsSeq(&self.groups))?;
        }
        map.end()
    }
}

struct GroupsSeq<'d, G>(&'d std::cell::RefCell<G>);

impl<G: MakeGroups> serde::Serialize for GroupsSeq<'_, G> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut groups = self.0.borrow_mut();
        let n = groups.count();
        let mut seq = s.serialize_seq(Some(n))?;
        for i in 0..n {
            seq.serialize_element(&groups.group(i))?;
        }
        seq.end()
    }
}

/// The time span of the whole log in seconds (first start to last end over all requests),
/// `None` when no request logs a time.
pub fn log_span(summary: &mut Summary) -> Option<f64> {
    let (a, b) = summary.overall().span?;
    Some((b - a) as f64 / 1e9)
}

/// A group's goodput as JSON: targets, counts, share, and rates over `span_s`.
fn goodput_json(g: &GroupStats, targets: &Targets, span_s: Option<f64>) -> Json {
    let t: Map<String, Json> = targets
        .0
        .iter()
        .map(|&(m, ms)| (METRICS[m].to_owned(), json!(round3(ms))))
        .collect();
    let rate = |n: u64| match span_s {
        Some(s) if s > 0.0 => json!(round3(n as f64 / s)),
        _ => Json::Null,
    };
    json!({
        "targets": t,
        "met": g.goodput.met,
        "unknown": g.goodput.unknown,
        "missed": g.requests - g.goodput.met - g.goodput.unknown,
        // A share to 5 decimals (a percentage to 3), divided once so that it prints as such
        // (0.31741, not 0.31740999999999997).
        "share": if g.requests > 0 { json!((g.goodput.met as f64 / g.requests as f64 * 1e5).round() / 1e5) } else { Json::Null },
        "span_s": span_s.map(round3),
        "requests_per_s": rate(g.goodput.met),
        "output_tokens_per_s": rate(g.goodput.met_output_tokens),
    })
}

/// One group as the JSON of a `groups` entry: key, counts, metrics, and goodput when there
/// are targets (rates over `span_s`, the log's time span).
pub fn group_json(
    key: &GroupKey,
    g: &mut GroupStats,
    quantiles: &[f64],
    targets: Option<&Targets>,
    span_s: Option<f64>,
) -> Json {
    {
        let mut k = Map::new();
        for (name, v) in key {
            k.insert(
                name.clone(),
                v.clone().map(Json::String).unwrap_or(Json::Null),
            );
        }
        let mut metrics = Map::new();
        let origins: Map<String, Json> = g
            .ttft_origins
            .iter()
            .map(|(o, n)| ((*o).to_owned(), json!(n)))
            .collect();
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
            let mut entry = json!({
                "count": st.digest.count(),
                "nulls": nulls,
                "exact": st.digest.is_exact(),
                "min": num(st.digest.min()),
                "max": num(st.digest.max()),
                "mean": num(st.digest.mean()),
                "quantiles": qs,
            });
            if *name == "ttft_ms" {
                entry["origins"] = Json::Object(origins.clone());
            }
            metrics.insert((*name).to_owned(), entry);
        }
        let mut doc = json!({
            "key": k,
            "requests": g.requests,
            "errors": g.errors,
            "cancelled": g.cancelled,
            "response_cache": g.response_cache,
            "metrics": metrics,
        });
        if let Some(t) = targets {
            doc["goodput"] = goodput_json(g, t, span_s);
        }
        doc
    }
}

/// The coverage block of the JSON summary.
pub fn coverage_json(cov: &Coverage) -> Json {
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
        "read_errors": cov.read_errors,
        "anomalies": {"negative_interval": cov.negative_interval, "unparseable": cov.unparseable},
        "joins": {
            "joined_lines": cov.joined_lines,
            "evicted": cov.join_evicted,
            "timed_out": cov.join_timed_out,
            "unfinished": cov.join_unfinished,
            "orphaned": cov.join_orphaned,
        },
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
    cfg: &AnalysisConfig,
) -> io::Result<()> {
    let report = crate::analysis::analyze(summary, cfg, quantiles);
    let mut head = format!(
        "lines {}  requests {}  errors {}  non-JSON {}  no timing {}  invalid {}",
        cov.lines, cov.requests, cov.errors, cov.non_json, cov.no_timing, cov.invalid
    );
    for (label, n) in [
        ("too long", cov.too_long),
        ("cancelled", cov.cancelled),
        ("response cache", cov.response_cache),
        ("negative intervals", cov.negative_interval),
        ("unparseable", cov.unparseable),
        ("inputs not read to their end", cov.read_errors),
        ("multi-line requests unfinished", cov.join_unfinished),
        ("evicted", cov.join_evicted),
        ("timed out", cov.join_timed_out),
        ("orphaned", cov.join_orphaned),
    ] {
        if n > 0 {
            head.push_str(&format!("  {label} {n}"));
        }
    }
    if !cov.formats.is_empty() {
        let formats: Vec<String> = cov
            .formats
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        head.push_str(&format!("  formats: {}", formats.join(", ")));
    }
    writeln!(out, "{head}")?;
    if cov.requests == 0 && cov.lines > 0 {
        writeln!(out, "{NO_REQUESTS}")?;
    }
    if let Some(h) = &report.headline
        && cov.requests > 0
    {
        crate::reading::write_headline(out, h)?;
    }
    let span = log_span(summary);
    let targets = summary.targets.clone();
    let mut header = vec!["metric".to_owned(), "count".to_owned(), "min".to_owned()];
    header.extend(quantiles.iter().map(|&q| quantile_name(q)));
    header.extend(["max".to_owned(), "mean".to_owned(), "nulls".to_owned()]);
    for ((key, g), r) in summary.groups().into_iter().zip(&report.groups) {
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
            extra.push_str(&format!(", {} cancelled", g.cancelled));
        }
        if g.response_cache > 0 {
            extra.push_str(&format!(", {} response cache", g.response_cache));
        }
        writeln!(
            out,
            "{label}: {}, {}{extra}",
            plural(g.requests, "request"),
            plural(g.errors, "error")
        )?;
        if let Some(t) = &targets {
            writeln!(out, "{}", goodput_line(g, t, span))?;
        }
        let mut rows = vec![header.clone()];
        let mut absent = vec![];
        for (name, st) in METRICS.iter().zip(g.metrics.iter_mut()) {
            let nulls: Vec<String> = st
                .nulls
                .iter()
                .map(|(r, n)| format!("{} {n}", r.as_str()))
                .collect();
            if st.digest.count() == 0 {
                absent.push(format!("{name} ({})", nulls.join(", ")));
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
        if g.ttft_origins.len() > 1 {
            let mixed: Vec<String> = g
                .ttft_origins
                .iter()
                .map(|(o, n)| format!("{o} {n}"))
                .collect();
            writeln!(
                out,
                "note: ttft_ms mixes origins ({}): a TTFT from `scheduled` leaves the queue out; compare like with like",
                mixed.join(", ")
            )?;
        }
        // The full analysis for all requests and the --by groups; the cache classes (the
        // default breakdown) only say which metrics are multimodal (JSON has everything).
        let full = !key.iter().any(|(k, _)| k == "cache");
        if full && g.ttft_from_scheduled_only() {
            writeln!(
                out,
                "note: ttft_ms runs from `scheduled` (the server's slot start): the log has no arrival time, so the queue before it is left out"
            )?;
        }
        if !absent.is_empty() {
            writeln!(out, "no values: {}", absent.join(", "))?;
        }
        crate::reading::write_group(out, r, widths[0], full)?;
        if cfg.hist {
            let means: Vec<Option<f64>> = g.metrics.iter_mut().map(|m| m.digest.mean()).collect();
            crate::reading::write_hists(out, r, &means, widths[0])?;
        }
    }
    writeln!(out)?;
    writeln!(
        out,
        "durations in ms; quantiles exact (linear interpolation, numpy's default) up to {} values, t-digest estimates past that (marked ~)",
        summary.exact_limit
    )?;
    Ok(())
}

pub(crate) fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn goodput_line(g: &GroupStats, t: &Targets, span_s: Option<f64>) -> String {
    let share = if g.requests > 0 {
        format!(
            " ({:.1}%)",
            g.goodput.met as f64 / g.requests as f64 * 100.0
        )
    } else {
        String::new()
    };
    let unknown = if g.goodput.unknown > 0 {
        format!(", {} unknown", g.goodput.unknown)
    } else {
        String::new()
    };
    let rates = match span_s {
        Some(s) if s > 0.0 => format!(
            "; {} requests/s, {} output tokens/s over {} s",
            round3(g.goodput.met as f64 / s),
            round3(g.goodput.met_output_tokens as f64 / s),
            round3(s)
        ),
        _ => String::new(),
    };
    format!(
        "goodput {}: {} of {} requests{share}{unknown}{rates}",
        t.text(),
        g.goodput.met,
        g.requests
    )
}

/// A number as the table prints it: one decimal from 100 up, three below.
pub(crate) fn fmt_cell(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.1}")
    } else {
        let mut b = Vec::new();
        let _ = crate::enrich::write_fixed3(&mut b, x);
        String::from_utf8_lossy(&b).into_owned()
    }
}

/// What the table says, and stderr in every other mode, when lines were read but none was a
/// request (a wrong `--format`, `--root` or `--prefix` must not pass silently for an idle
/// server in a cron job's JSON or Prometheus output).
pub(crate) const NO_REQUESTS: &str = "no line was recognised as a request: `tokentime formats` lists \
     the formats; try --format NAME, --root PATH (when the record sits inside each line), --prefix \
     REGEX (when text such as a syslog header comes before the JSON) or --map for an in-house log";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_reasons_in_order_and_each_in_its_own_slot() {
        let r = NullReason::ALL;
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
