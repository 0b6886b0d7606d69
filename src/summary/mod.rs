//! Summary: per-group digests of every metric, the analysis accumulators beside them, the
//! coverage block, windows of time, SLOs and goodput, and digest files.
//!
//! Owns grouping (overall, by `cache`, by each `--by` key, and by the `--by` keys with
//! `cache`), the bound on the number of groups, and the null-reason counts. Receives derived
//! [`Metrics`]; must not render a report (`crate::output` does) or read input.

pub(crate) mod accumulators;
pub(crate) mod compare;
pub(crate) mod digest;
pub(crate) mod digest_file;
pub(crate) mod genai;
mod log_bins;
pub(crate) mod slo;
pub(crate) mod top;
pub(crate) mod window;

use crate::classify::{ByValues, Coverage, Request};
use crate::metrics::{CacheClass, Metric, Metrics, NullReason, Origin, Outcome, Sample};
use crate::number::round3;
use crate::summary::digest::Digest;
use crate::summary::slo::Targets;
use serde_json::{Map, Value as Json, json};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// The version of the JSON summary schema.
pub(crate) const SCHEMA: &str = "tokentime.summary/v1";

/// The value standing for all groups past `--max-groups`.
pub(crate) const OTHER: &str = "(other)";

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

impl MetricStats {
    /// True when some request of the group logged the metric: a value, or a null other than
    /// `not_logged`. Outputs leave out a [`Metric::only_where_logged`] metric without it.
    pub fn logged(&self) -> bool {
        self.digest.count() > 0 || self.nulls.iter().any(|(r, _)| r != NullReason::NotLogged)
    }

    /// False for a [`Metric::only_where_logged`] metric that no request logged: outputs
    /// leave it out (so a log without it renders as before the metric existed).
    pub fn shown(&self, metric: Metric) -> bool {
        !metric.only_where_logged() || self.logged()
    }
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

    /// The reasons with a nonzero count, in order, with their counts.
    pub fn iter(&self) -> impl Iterator<Item = (NullReason, u64)> + '_ {
        NullReason::ALL
            .iter()
            .zip(self.0)
            .filter(|&(_, n)| n > 0)
            .map(|(&r, n)| (r, n))
    }
}

/// TTFT samples by origin: a map from the origins' names to counts, as an array (a request
/// adds one to a slot, where a map searched its names).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OriginCounts {
    /// By [`Origin::ALL`] index.
    counts: [u64; 3],
    /// The origins entered (with a count of 0 too, from a digest file), a bit each.
    present: u8,
}

/// [`Origin::ALL`]'s indices with their names in name order, as the map iterated them.
const ORIGINS_BY_NAME: [usize; 3] = {
    assert!(matches!(
        Origin::ALL,
        [Origin::Arrival, Origin::Scheduled, Origin::Gateway]
    ));
    [0, 2, 1]
};

impl OriginCounts {
    /// Adds `n` samples of origin `o`.
    #[inline]
    pub fn add(&mut self, o: Origin, n: u64) {
        self.counts[o as usize] += n;
        self.present |= 1 << o as u8;
    }

    /// Sets the count of the origin named `name` (false when no origin has that name).
    pub fn set(&mut self, name: &str, n: u64) -> bool {
        let Some(i) = Origin::ALL.iter().position(|o| o.as_str() == name) else {
            return false;
        };
        self.counts[i] = n;
        self.present |= 1 << i;
        true
    }

    /// How many origins were entered.
    pub fn len(&self) -> usize {
        self.present.count_ones() as usize
    }

    /// Whether none was.
    pub fn is_empty(&self) -> bool {
        self.present == 0
    }

    /// Whether `o` was entered.
    pub fn contains(&self, o: Origin) -> bool {
        self.present & 1 << o as u8 != 0
    }

    /// The origins entered, by name, with their counts.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        ORIGINS_BY_NAME
            .iter()
            .filter(|&&i| self.present & 1 << i != 0)
            .map(|&i| (Origin::ALL[i].as_str(), self.counts[i]))
    }

    /// Adds the counts of `other`.
    pub fn merge(&mut self, other: &OriginCounts) {
        for i in 0..3 {
            self.counts[i] += other.counts[i];
        }
        self.present |= other.present;
    }

    /// As a JSON object, names to counts.
    pub fn to_json(self) -> Json {
        Json::Object(
            self.iter()
                .map(|(o, n)| (o.to_owned(), Json::from(n)))
                .collect(),
        )
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
    /// One entry per metric, in [`Metric::ALL`] order.
    pub metrics: [MetricStats; Metric::COUNT],
    /// TTFT samples by origin (`arrival`, `scheduled`, `gateway`).
    pub ttft_origins: OriginCounts,
    /// Requests judged against `--goodput` targets (all zero without targets).
    pub goodput: Goodput,
    /// The earliest start and latest end (epoch ns) of the group's requests, where logged.
    pub span: Option<(i64, i64)>,
    /// The earliest end (epoch ns) of the group's requests, where logged: a live `--window`'s
    /// rates run over its ends at least (not kept in digest files).
    pub(crate) first_end: Option<i64>,
    /// The requests of formats that log no instant (a benchmark's result file of durations,
    /// read beside a timed log, [`crate::classify::Request::timeless`]): in no span, so left
    /// out of the rates over it.
    pub untimed: Untimed,
    /// The benchmark runs whose durations its requests without times came with
    /// ([`crate::classify::Request::run`]): their rates run over the runs' time.
    pub runs: Runs,
    /// The analysis accumulators ([`crate::analysis`]).
    pub(crate) extra: crate::summary::accumulators::Extra,
    /// The wall time (ns) a live `--window` summary covers ([`Summary::set_rate_window`]): its
    /// rates run over that, not over its requests' span (whose starts reach back as far as the
    /// longest request).
    pub(crate) rate_window: Option<i64>,
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

/// What a group holds of requests whose format logs no time ([`GroupStats::untimed`]):
/// counted in its totals and distributions, but not in a rate over the span of the others.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Untimed {
    /// Requests of formats that log no instant.
    pub requests: u64,
    /// Their output tokens, as the group's `output_tokens` digest counted them (errors' and
    /// response-cache answers' left out).
    pub output_tokens: u64,
    /// Those of them that met every `--goodput` target.
    pub met: u64,
    /// The output tokens of those.
    pub met_output_tokens: u64,
    /// Those that failed or were cancelled (so that the completed requests with times are
    /// known).
    pub failed: u64,
    /// True when `failed` is not known: a digest file saved before it was kept had some
    /// requests without times, and their outcome is not in it.
    pub failed_unknown: bool,
}

/// One benchmark run's requests in a group ([`GroupStats::runs`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunTally {
    /// The run ([`crate::classify::Run::id`]).
    pub id: u64,
    /// Its duration, ns.
    pub ns: i64,
    /// Its requests in the group.
    pub requests: u64,
    /// Those that completed (neither failed nor cancelled).
    pub completed: u64,
    /// Their output tokens.
    pub output_tokens: u64,
    /// Those of them that met every `--goodput` target.
    pub met: u64,
    /// The output tokens of those.
    pub met_output_tokens: u64,
}

/// The benchmark runs of a group's requests that log no time of their own, each with its
/// duration ([`GroupStats::runs`]); a run counts once however many of its requests came.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Runs(pub Vec<RunTally>);

impl Runs {
    /// The tally of run `run`, made when new (requests come run by run: the last is tried
    /// first).
    fn tally(&mut self, run: crate::classify::Run) -> &mut RunTally {
        let i = match self.0.iter().rposition(|t| t.id == run.id) {
            Some(i) => i,
            None => {
                self.0.push(RunTally {
                    id: run.id,
                    ns: run.ns,
                    ..RunTally::default()
                });
                self.0.len() - 1
            }
        };
        &mut self.0[i]
    }

    fn merge(&mut self, other: &Runs) {
        for o in &other.0 {
            let t = self.tally(crate::classify::Run { id: o.id, ns: o.ns });
            t.requests += o.requests;
            t.completed += o.completed;
            t.output_tokens += o.output_tokens;
            t.met += o.met;
            t.met_output_tokens += o.met_output_tokens;
        }
    }

    /// The sum over the runs: requests, completed, output tokens, requests that met every
    /// `--goodput` target and their output tokens, and the runs' time in s.
    pub fn total(&self) -> (RunTally, f64) {
        let mut t = RunTally::default();
        let mut ns = 0i64;
        for r in &self.0 {
            t.requests += r.requests;
            t.completed += r.completed;
            t.output_tokens += r.output_tokens;
            t.met += r.met;
            t.met_output_tokens += r.met_output_tokens;
            ns = ns.saturating_add(r.ns);
        }
        t.ns = ns;
        (t, ns as f64 / 1e9)
    }
}

impl Untimed {
    fn merge(&mut self, o: &Untimed) {
        self.requests += o.requests;
        self.output_tokens += o.output_tokens;
        self.met += o.met;
        self.met_output_tokens += o.met_output_tokens;
        self.failed += o.failed;
        self.failed_unknown |= o.failed_unknown;
    }
}

impl GroupStats {
    /// The seconds the group's rates run over: a live `--window` summary's wall time, else its
    /// span when two requests or more with times make one longer than 0.
    pub(crate) fn rate_secs(&self) -> Option<f64> {
        if let Some(w) = self.rate_window {
            return window_secs(w, self.span, self.first_end, self.timed_requests());
        }
        let (a, b) = self.span?;
        let secs = (b - a) as f64 / 1e9;
        (secs > 0.0 && self.timed_requests() >= 2).then_some(secs)
    }

    /// The requests with times (inside the span).
    pub(crate) fn timed_requests(&self) -> u64 {
        self.requests.saturating_sub(self.untimed.requests)
    }

    /// The requests with times (inside the span) that completed: neither failed (nor were
    /// cancelled before their first token) nor were cancelled after it. `None` when a digest
    /// file read back does not say how the requests without times ended.
    pub(crate) fn timed_completed(&self) -> Option<u64> {
        if self.untimed.failed_unknown {
            return None;
        }
        let ended_badly = (self.errors + self.cancelled).saturating_sub(self.untimed.failed);
        Some(self.timed_requests().saturating_sub(ended_badly))
    }

    /// The requests with times (inside the span) and their output tokens, as the group's
    /// rates count them.
    pub(crate) fn timed(&mut self) -> (u64, f64) {
        let tokens =
            self.metric(Metric::OutputTokens).digest.sum() - self.untimed.output_tokens as f64;
        (
            self.timed_requests(),
            // Never below 0, nor -0.0 (an empty digest's sum: `-0.00 output tokens/s`).
            if tokens > 0.0 { tokens } else { 0.0 },
        )
    }

    /// Whether the group's format logs output tokens ([`MetricStats::logged`]): else a rate of
    /// them would read 0, as if none were made.
    /// A failure's or a response-cache answer's null is no sign that the format logs them.
    pub(crate) fn output_tokens_logged(&self) -> bool {
        let m = &self.metrics[Metric::OutputTokens.index()];
        m.digest.count() > 0
            || m.nulls.iter().any(|(r, _)| {
                !matches!(
                    r,
                    NullReason::NotLogged | NullReason::Error | NullReason::ResponseCache
                )
            })
    }

    /// `; rates of the N with times (M without):`, the words a rate over the span takes when
    /// `timed` of `all` requests are in it; empty when all are.
    pub(crate) fn rates_of(timed: u64, all: u64) -> String {
        if timed < all {
            format!(
                "; rates of the {timed} with times ({} without):",
                all - timed
            )
        } else {
            String::new()
        }
    }

    /// The requests with times that met every `--goodput` target, and their output tokens.
    pub(crate) fn timed_goodput(&self) -> (u64, u64) {
        (
            self.goodput.met.saturating_sub(self.untimed.met),
            self.goodput
                .met_output_tokens
                .saturating_sub(self.untimed.met_output_tokens),
        )
    }

    /// The stats of one metric.
    pub(crate) fn metric(&mut self, m: Metric) -> &mut MetricStats {
        &mut self.metrics[m.index()]
    }

    /// An empty group whose digests stay exact up to `exact_limit` values.
    pub fn new(exact_limit: usize) -> Self {
        let mut g = GroupStats::default();
        for m in &mut g.metrics {
            m.digest = Digest::with_limit(exact_limit);
        }
        g.extra = crate::summary::accumulators::Extra::new(exact_limit);
        g
    }

    /// Adds everything of `other` to this group.
    pub fn merge(&mut self, other: &GroupStats) {
        self.requests += other.requests;
        self.errors += other.errors;
        self.cancelled += other.cancelled;
        self.response_cache += other.response_cache;
        self.ttft_origins.merge(&other.ttft_origins);
        self.goodput.met += other.goodput.met;
        self.goodput.unknown += other.goodput.unknown;
        self.goodput.met_output_tokens += other.goodput.met_output_tokens;
        self.span = merge_span(self.span, other.span);
        self.first_end = min_some(self.first_end, other.first_end);
        self.untimed.merge(&other.untimed);
        self.runs.merge(&other.runs);
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
        self.ttft_origins.len() == 1 && self.ttft_origins.contains(Origin::Scheduled)
    }

    fn add_extra(
        &mut self,
        judged: Option<Option<bool>>,
        tokens: u64,
        span: Option<(i64, i64)>,
        timeless: bool,
    ) {
        match judged {
            Some(Some(true)) => {
                self.goodput.met += 1;
                self.goodput.met_output_tokens += tokens;
                if timeless {
                    self.untimed.met += 1;
                    self.untimed.met_output_tokens += tokens;
                }
            }
            Some(None) => self.goodput.unknown += 1,
            _ => {}
        }
        self.span = merge_span(self.span, span);
        self.first_end = min_some(self.first_end, span.map(|s| s.1));
    }

    /// Counts a request without times of its own in its benchmark run.
    #[cold]
    fn add_run(&mut self, run: crate::classify::Run, m: &Metrics, judged: Option<Option<bool>>) {
        let t = self.runs.tally(run);
        t.requests += 1;
        if m.outcome == Outcome::Ok {
            let tokens = m.output_tokens.unwrap_or(0);
            t.completed += 1;
            t.output_tokens += tokens;
            if judged == Some(Some(true)) {
                t.met += 1;
                t.met_output_tokens += tokens;
            }
        }
    }

    fn add(&mut self, m: &Metrics, gaps: &[i64], timeless: bool) {
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
        if timeless {
            self.untimed.requests += 1;
            if m.outcome != Outcome::Ok {
                self.untimed.failed += 1;
            }
            if excluded.is_none() {
                self.untimed.output_tokens += m.output_tokens.unwrap_or(0);
            }
        }
        if let (Ok(_), Some(o)) = (m.ttft, m.ttft_origin) {
            self.ttft_origins.add(o, 1);
        }
        self.extra.add(m);
        // One call per metric, each with its metric known when compiled: a loop over the
        // metrics jumped on the metric for every one of them, a jump its predictor missed
        // about one time in two.
        const _: () = assert!(Metric::COUNT == 11, "one add_metric call per metric");
        self.add_metric::<0>(m, gaps, excluded);
        self.add_metric::<1>(m, gaps, excluded);
        self.add_metric::<2>(m, gaps, excluded);
        self.add_metric::<3>(m, gaps, excluded);
        self.add_metric::<4>(m, gaps, excluded);
        self.add_metric::<5>(m, gaps, excluded);
        self.add_metric::<6>(m, gaps, excluded);
        self.add_metric::<7>(m, gaps, excluded);
        self.add_metric::<8>(m, gaps, excluded);
        self.add_metric::<9>(m, gaps, excluded);
        self.add_metric::<10>(m, gaps, excluded);
    }

    /// Adds the value (or null) of metric `Metric::ALL[I]` of one request.
    #[inline(always)]
    fn add_metric<const I: usize>(
        &mut self,
        m: &Metrics,
        gaps: &[i64],
        excluded: Option<NullReason>,
    ) {
        let stats = &mut self.metrics[I];
        match Metric::ALL[I].sample(m) {
            Sample::Ns(Ok(ns)) => stats.digest.add(ns / 1e6),
            Sample::Ns(Err(r)) => stats.nulls.add(r, 1),
            // ITL: every gap is a sample (token-weighted, as vLLM's benchmark reports
            // it); a request without gaps counts one null: one token has none.
            Sample::None => match (excluded, gaps.is_empty()) {
                (Some(r), _) => stats.nulls.add(r, 1),
                (None, true) if m.tpot == Err(NullReason::OneToken) => {
                    stats.nulls.add(NullReason::OneToken, 1);
                }
                (None, true) if m.itl_unreadable => stats.nulls.add(NullReason::Unparseable, 1),
                (None, true) if m.itl_negative => {
                    stats.nulls.add(NullReason::NegativeInterval, 1);
                }
                (None, true) => stats.nulls.add(NullReason::NotLogged, 1),
                (None, false) => gaps.iter().for_each(|&g| stats.digest.add(g as f64 / 1e6)),
            },
            Sample::Tokens(v) => match (excluded, v) {
                (Some(r), _) => stats.nulls.add(r, 1),
                (None, Some(n)) => stats.digest.add(n as f64),
                (None, None) => stats.nulls.add(NullReason::NotLogged, 1),
            },
        }
    }
}

/// The `n` `--by` values as group keys hold them ([`bounded_key`]), when one of them is longer
/// than [`MAX_KEY_BYTES`]; `None` (nothing allocated) when all are kept whole.
fn bounded_values(n: usize, by: ByValues<'_>) -> Option<Vec<Option<String>>> {
    (0..n)
        .any(|i| by.get(i).is_some_and(|v| v.len() > MAX_KEY_BYTES))
        .then(|| {
            (0..n)
                .map(|i| by.get(i).map(|v| bounded_key(v).into_owned()))
                .collect()
        })
}

/// The smaller of two optional instants.
fn min_some(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The seconds a live `--window` summary's rates run over: the wall time it covers (`ns`), or
/// the log time its `n` requests' ends cover when that is longer (a file read in a moment with
/// `--window`: its rates are then the log's, over log time); `None` when both are 0. `n` ends
/// over a span have `n - 1` gaps between them, and each end stands for the gap before it: the
/// ends cover their span and one mean gap more (13 requests a second apart cover 13 s, not 12:
/// a rate of 1 a second, not 13/12).
fn window_secs(ns: i64, span: Option<(i64, i64)>, first_end: Option<i64>, n: u64) -> Option<f64> {
    let ends = match (span, first_end) {
        (Some((_, last)), Some(first)) if n >= 2 => {
            (last - first) as f64 * n as f64 / (n - 1) as f64
        }
        _ => 0.0,
    };
    let t = (ns as f64).max(ends);
    (t > 0.0).then(|| t / 1e9)
}

fn merge_span(a: Option<(i64, i64)>, b: Option<(i64, i64)>) -> Option<(i64, i64)> {
    match (a, b) {
        (Some(a), Some(b)) => Some((a.0.min(b.0), a.1.max(b.1))),
        (a, None) => a,
        (None, b) => b,
    }
}

/// The longest `--by` value kept whole in a group's key, in bytes. A longer one (a whole
/// prompt logged as the model, say) is kept as its first [`KEY_HEAD_BYTES`] bytes and a marker
/// with its length and a hash of it: groups stay apart, and memory does not grow with the
/// values' size.
pub(crate) const MAX_KEY_BYTES: usize = 256;

/// The bytes a cut `--by` value keeps of its start.
const KEY_HEAD_BYTES: usize = 200;

/// A `--by` value as a group's key holds it: itself up to [`MAX_KEY_BYTES`] bytes, else its
/// first [`KEY_HEAD_BYTES`] bytes (fewer, to end on a character) and `…[N bytes #HASH]`.
pub(crate) fn bounded_key(v: &str) -> std::borrow::Cow<'_, str> {
    if v.len() <= MAX_KEY_BYTES {
        return v.into();
    }
    let mut cut = KEY_HEAD_BYTES;
    while !v.is_char_boundary(cut) {
        cut -= 1;
    }
    let h = key_hash(0, std::iter::once(Some(v)));
    format!("{}…[{} bytes #{h:016x}]", &v[..cut], v.len()).into()
}

/// A group's key: dimension names and values (`None` when the log does not say).
pub(crate) type GroupKey = Vec<(String, Option<String>)>;

/// A group key as text: its `key=value` pairs joined by a space (`model=x cache=hit`; a value
/// the log does not give is `unknown`). A control character in a name or value (a newline in
/// a model name) is written escaped, `\n`, so that a label stays on its line.
pub(crate) fn key_text<'a>(pairs: impl IntoIterator<Item = (&'a str, Option<&'a str>)>) -> String {
    let shown = |s: &str| -> String {
        if s.chars().any(char::is_control) {
            s.chars()
                .map(|c| {
                    if c.is_control() {
                        c.escape_default().to_string()
                    } else {
                        c.to_string()
                    }
                })
                .collect()
        } else {
            s.to_owned()
        }
    };
    pairs
        .into_iter()
        .map(|(k, v)| format!("{}={}", shown(k), shown(v.unwrap_or("unknown"))))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A group's label: [`key_text`], or `all` for the group of all requests (empty key).
pub(crate) fn group_label(key: &[(String, Option<String>)], all: &str) -> String {
    if key.is_empty() {
        return all.to_owned();
    }
    key_text(key.iter().map(|(k, v)| (k.as_str(), v.as_deref())))
}

/// A group as saved: its dimension names, their values, its stats.
pub(crate) type RawGroup<'a> = (Vec<String>, Vec<Option<String>>, &'a mut GroupStats);

/// The groups one request was added to: per grouping, its index in the summary's groups
/// (`u32::MAX` past the groupings there are).
pub(crate) type GroupIds = [u32; 4];

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
    /// The `--since`/`--until` span its requests ended in (written in its JSON and digest
    /// files).
    range: crate::metrics::TimeRange,
    /// The overall group as reported ([`Summary::groups`], [`Summary::raw_groups`]), made
    /// afresh for each report: see [`Summary::overall`].
    /// `None` until the first report: a `--bucket` window is a summary of its own, and most
    /// never need one before theirs.
    view: Option<Box<GroupStats>>,
    /// The groups every request goes to, by [`cache_slot`]: the overall one and the one of
    /// each cache class, once found (`u32::MAX` before). Groups are never removed or moved,
    /// so a request finds them without hashing its key.
    cache_groups: [u32; CACHE_SLOTS],
    /// The OpenTelemetry GenAI histograms (`-o prometheus`), when kept: each request's model
    /// and format name follow its `--by` values ([`Summary::with_genai`]).
    genai: Option<Box<genai::GenAi>>,
    /// The failures' reasons and the slowest requests ([`top`]).
    top: top::Top,
    /// The wall time (ns) a live `--window` summary covers, its rates' time
    /// ([`Summary::set_rate_window`]).
    rate_window: Option<i64>,
    /// How the formats the log is read with were chosen (what a report of no request says).
    choice: FormatChoice,
    /// Whether a formats file defines some of them (its paths are checked against the log's).
    formats_file: bool,
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
            range: crate::metrics::TimeRange::default(),
            view: None,
            cache_groups: [u32::MAX; CACHE_SLOTS],
            genai: None,
            top: top::Top::default(),
            rate_window: None,
            choice: FormatChoice::Auto,
            formats_file: false,
        }
    }

    /// The same summary keeping the OpenTelemetry GenAI histograms ([`genai`]) when `yes`:
    /// each request's `--by` values are then followed by its model and its format's name
    /// (the processor reads `$model` and `$format` after the `--by` keys).
    pub fn with_genai(mut self, yes: bool) -> Self {
        self.genai = yes.then(|| Box::new(genai::GenAi::new(self.max_groups)));
        self
    }

    /// The OpenTelemetry GenAI histograms, when kept ([`Summary::with_genai`]).
    pub fn genai(&self) -> Option<&genai::GenAi> {
        self.genai.as_deref()
    }

    /// Replaces the OpenTelemetry GenAI histograms (read from a digest file, or dropped when
    /// a file merged has none).
    pub(crate) fn set_genai(&mut self, g: Option<genai::GenAi>) {
        self.genai = g.map(Box::new);
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

    /// Records the `--since`/`--until` span its requests ended in.
    #[must_use]
    pub fn with_range(mut self, range: crate::metrics::TimeRange) -> Self {
        self.range = range;
        self
    }

    /// The span recorded ([`Summary::with_range`]).
    pub fn range(&self) -> crate::metrics::TimeRange {
        self.range
    }

    /// Sets the span recorded (a merge of files of different spans: none).
    pub fn set_range(&mut self, range: crate::metrics::TimeRange) {
        self.range = range;
    }

    /// The span as JSON, `{"since": ..., "until": ...}` (RFC 3339, `null` for an end not
    /// given); `None` without one.
    pub(crate) fn range_json(&self) -> Option<Json> {
        let at = |t: Option<i64>| t.map(crate::summary::window::rfc3339_ms);
        self.range
            .is_set()
            .then(|| json!({"since": at(self.range.since), "until": at(self.range.until)}))
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
            range: self.range,
            view: None,
            cache_groups: [u32::MAX; CACHE_SLOTS],
            genai: self.genai.as_ref().map(|g| Box::new(g.empty_like())),
            top: top::Top::default(),
            rate_window: None,
            choice: self.choice.clone(),
            formats_file: self.formats_file,
        }
    }

    /// The same summary, its log read with the formats chosen as `choice` says.
    #[must_use]
    pub fn with_format_choice(mut self, choice: FormatChoice) -> Self {
        self.choice = choice;
        self
    }

    /// The same summary, `formats_file` saying whether a formats file defines some of the
    /// formats its log is read with.
    #[must_use]
    pub fn with_formats_file(mut self, formats_file: bool) -> Self {
        self.formats_file = formats_file;
        self
    }

    /// Whether a formats file defines some of the formats the log is read with.
    pub fn formats_file(&self) -> bool {
        self.formats_file
    }

    /// True when the log is read with the format `--map` defines.
    pub fn mapped(&self) -> bool {
        self.choice == FormatChoice::Mapped
    }

    /// What a report says when no line of `cov` was a request ([`no_requests`]).
    pub fn no_requests(&self, cov: &Coverage) -> String {
        no_requests(cov, &self.choice)
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
        if let Some(g) = &mut self.genai {
            let n = self.by.len();
            g.add(
                &r.metrics,
                by_values.get(n),
                by_values.get(n + 1).unwrap_or(""),
            );
        }
        self.each_group(r.metrics.cache, by_values, |g| {
            g.add(&r.metrics, gaps, r.timeless);
            g.add_extra(judged, tokens, span, r.timeless);
            if let Some(run) = r.run.filter(|_| r.timeless) {
                g.add_run(run, &r.metrics, judged);
            }
        })
    }

    /// The groups of a request of cache class `cache` with these `--by` values, created as
    /// needed (as [`Summary::add_request`] would), without adding anything.
    pub fn group_ids(&mut self, cache: Option<CacheClass>, by_values: ByValues<'_>) -> GroupIds {
        self.each_group(cache, by_values, |_| {})
    }

    /// The groups that exist for a request of cache class `cache` with these `--by` values:
    /// its own, else `(other)`, else none (`u32::MAX`).
    pub fn existing_group_ids(&self, cache: Option<CacheClass>, by: ByValues<'_>) -> GroupIds {
        let bounded = bounded_values(self.by.len(), by);
        let by_at = |i: usize| match &bounded {
            Some(b) => b[i].as_deref(),
            None => by.get(i),
        };
        let mut ids = [u32::MAX; 4];
        for (si, dims) in self.subsets.iter().enumerate() {
            let values = dims.iter().map(|&d| {
                if d == 0 {
                    cache.map(|c| c.as_str())
                } else {
                    by_at(d - 1)
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
        let bounded = bounded_values(self.by.len(), by);
        let by_at = |i: usize| match &bounded {
            Some(b) => b[i].as_deref(),
            None => by.get(i),
        };
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
                            by_at(d - 1)
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

    /// Adds one request's TPOT and TTFT (ms, TTFT NaN where it has none) with the mean number
    /// of requests in flight during its decode, to the groups the request was added to (`ids`,
    /// as [`Summary::add_request`] returned them).
    pub fn add_inflight(&mut self, ids: &GroupIds, inflight: f64, (tpot_ms, ttft_ms): (f64, f64)) {
        for &g in ids {
            if let Some(g) = self.groups.get_mut(g as usize)
                && g.subset != OVERALL
            {
                g.stats.extra.add_inflight(inflight, tpot_ms, ttft_ms);
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
        if let (Some(a), Some(b)) = (&mut self.genai, &other.genai) {
            a.merge(b);
        }
        self.top.merge(&other.top);
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

    /// The TTFT origins of all requests (the overall group's, without merging its digests).
    pub(crate) fn ttft_origins(&self) -> OriginCounts {
        let mut all = OriginCounts::default();
        for g in self.all_parts() {
            all.merge(&g.ttft_origins);
        }
        all
    }

    /// The overall group's time span ([`Summary::overall`]'s), without merging the groups'
    /// digests: a report asks for it apart from the groups.
    /// The requests with times of the whole log (the all-requests group, or its cache groups
    /// where it is made from them at the end).
    fn timed_requests(&self) -> u64 {
        let of = |subset| {
            self.groups
                .iter()
                .filter(|g| g.subset == subset)
                .map(|g| g.stats.timed_requests())
                .sum::<u64>()
        };
        of(OVERALL).max(of(BY_CACHE))
    }

    /// Makes this a live `--window` summary covering `ns` of wall time (the window, or the
    /// time since the start while shorter): its rates, requests and output tokens a second,
    /// run over that, as Prometheus' `rate()` over the window would (a request ends, and is
    /// logged, within the window; it may have started long before).
    pub(crate) fn set_rate_window(&mut self, ns: Option<i64>) {
        self.rate_window = ns;
    }

    pub(crate) fn overall_span(&self) -> Option<(i64, i64)> {
        self.all_parts()
            .fold(None, |span, g| merge_span(span, g.span))
    }

    /// The groups all requests are made of without merging them: the overall group's requests
    /// and the cache groups' (see [`Summary::overall`]).
    fn all_parts(&self) -> impl Iterator<Item = &GroupStats> {
        self.groups
            .iter()
            .filter(|g| g.subset == OVERALL || g.subset == BY_CACHE)
            .map(|g| &*g.stats)
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
        let view = self.view.insert(Box::new(self.overall()));
        let mut view = Some(&mut **view);
        let window = self.rate_window;
        self.groups
            .iter_mut()
            .map(|g| {
                let stats = match g.subset {
                    OVERALL => view.take().unwrap_or(&mut g.stats),
                    _ => &mut g.stats,
                };
                stats.rate_window = window;
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
pub(crate) fn parse_quantiles(s: &str) -> Result<Vec<f64>, String> {
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
    refuse_fractions(s)?;
    qs.sort_by(f64::total_cmp);
    qs.dedup();
    Ok(qs)
}

/// A `--quantiles` list that reads as fractions (`0.99`, `0.5,0.9`): every value at most 1 and
/// one of them, written without a `p`, strictly between 0 and 1. Refused with the percentiles
/// meant; `p0.99`, or a list that also holds a percentile above 1, is taken as written.
fn refuse_fractions(s: &str) -> Result<(), String> {
    let values: Vec<(bool, f64)> = s
        .split(',')
        .filter_map(|q| {
            let t = q.trim();
            let bare = t.strip_prefix('p').is_none();
            t.trim_start_matches('p').parse().ok().map(|v| (bare, v))
        })
        .collect();
    let fraction = |&(bare, v): &(bool, f64)| bare && v > 0.0 && v < 1.0;
    if !values.iter().any(fraction) || values.iter().any(|&(_, v)| v > 1.0) {
        return Ok(());
    }
    let meant: Vec<String> = values
        .iter()
        .map(|&(_, v)| crate::number::round3(v * 100.0).to_string())
        .collect();
    let first = values.iter().find(|v| fraction(v)).map_or(0.0, |v| v.1);
    Err(format!(
        "--quantiles {s:?}: --quantiles takes percentiles (0 to 100), not fractions: write {} \
         (or p{first} for the {first}th percentile)",
        meant.join(",")
    ))
}

/// The output key of a quantile: `p` plus the percentile (`p50`, `p99.9`).
pub(crate) fn quantile_name(q: f64) -> String {
    let pct = round3(q * 100.0);
    if pct.fract() == 0.0 {
        format!("p{}", pct as i64)
    } else {
        format!("p{pct}")
    }
}

/// The time span of the whole log in seconds (first start to last end over all requests),
/// `None` when no request logs a time, or only one does.
pub(crate) fn log_span(summary: &Summary) -> Option<f64> {
    if let Some(w) = summary.rate_window {
        let first_end = summary
            .all_parts()
            .fold(None, |f, g| min_some(f, g.first_end));
        return window_secs(
            w,
            summary.overall_span(),
            first_end,
            summary.timed_requests(),
        );
    }
    let (a, b) = summary.overall_span()?;
    // One request's span is its own E2E: no rate anything ran at (the headline says so).
    (summary.timed_requests() >= 2).then(|| (b - a) as f64 / 1e9)
}

/// What the table says, and stderr in every other mode, when lines were read but none was a
/// request (a wrong `--format`, `--root` or `--prefix` must not pass silently for an idle
/// server in a cron job's JSON or Prometheus output).
pub(crate) const NO_REQUESTS: &str = "no line was recognised as a request: `tokentime formats` lists \
     the formats; try --format NAME, --root PATH (when the record sits inside each line), --prefix \
     REGEX (when text such as a syslog header comes before the JSON); for an in-house log, \
     `tokentime formats --guess FILE` proposes a mapping to edit and keep (--format inferred \
     reads with it), or --map names the fields";

/// How the formats a log is read with were chosen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum FormatChoice {
    /// `--format auto`: every format is tried.
    #[default]
    Auto,
    /// `--map`.
    Mapped,
    /// `--format NAME`.
    Forced(String),
}

/// Why a log of `cov`'s lines gave no request, and what to try: by what its lines were (none
/// a JSON object; every JSON line too long, or malformed), else by how its formats were
/// chosen ([`NO_REQUESTS`], [`NO_REQUESTS_MAPPED`], or what `--format NAME` says).
pub(crate) fn no_requests(cov: &Coverage, choice: &FormatChoice) -> String {
    let json = cov.lines - cov.non_json;
    if json == 0 && cov.inputs_named > 0 {
        return "no line was a JSON object: tokentime reads JSON lines (an object a line) and JSON \
                documents; stderr says what the input looks like"
            .into();
    }
    if json == 0 {
        return "no line was a JSON object: tokentime reads JSON lines (an object a line) and JSON \
                documents; --prefix REGEX skips text such as a syslog header before each object"
            .into();
    }
    if cov.too_long > 0 && cov.too_long == json {
        return "no line could be read: the lines were longer than --max-line-bytes (text lines aside); \
                raise it (--max-line-bytes 256M)"
            .into();
    }
    if cov.invalid > 0 && cov.invalid + cov.too_long == json && cov.inputs_named > 0 {
        return "no line could be read as JSON: stderr says what the input looks like".into();
    }
    if cov.invalid > 0 && cov.invalid + cov.too_long == json {
        return "no line could be read: the lines were malformed JSON (text lines aside), or too long; \
                stderr names the first, with where each went wrong (a file cut short? a line split \
                in two?)"
            .into();
    }
    let own: u64 = cov.own_documents.values().sum();
    if own > 0 && own == cov.no_timing {
        return "no line was a request: the input is tokentime's own output (stderr says which, \
                and what reads it)"
            .into();
    }
    if cov.aggregate_lines > 0 && cov.aggregate_lines == json {
        return "no line was a request: the input holds a benchmark's aggregates, not its \
                requests (stderr says where they are)"
            .into();
    }
    let skipped: u64 = cov.skipped.values().sum();
    if skipped > 0 && skipped == json {
        let what: Vec<String> = cov
            .skipped
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        return format!(
            "no line was a request: every JSON line was one its format leaves out ({}; \
             `tokentime formats` says when each format does)",
            what.join(", ")
        );
    }
    if cov.outside_range > 0 {
        return format!(
            "no request ended between --since and --until: the {} request{} read ended outside \
             them, or log no end instant (a benchmark's result file without times)",
            cov.outside_range,
            if cov.outside_range == 1 { "" } else { "s" }
        );
    }
    match choice {
        FormatChoice::Auto => NO_REQUESTS.into(),
        FormatChoice::Mapped => NO_REQUESTS_MAPPED.into(),
        FormatChoice::Forced(name) => format!(
            "no line was recognised as a request by --format {name} (`tokentime formats {name}` \
             says what it reads; --format auto, the default, tries every format); try --root \
             PATH (when the record sits inside each line), --prefix REGEX (when text such as a \
             syslog header comes before the JSON)"
        ),
    }
}

/// [`NO_REQUESTS`] when the log was read with `--map`.
pub(crate) const NO_REQUESTS_MAPPED: &str = "no line was recognised as a request: a line is one when it has \
     a value at the path of a time field --map names (any --map that is not a token count, \
     logged_at only when it is the one); try --root PATH (when the record sits inside each \
     line), --prefix REGEX (when text such as a syslog header comes before the JSON)";

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

/// The `partial` member of a digest file and of a JSON summary, for a run that did not read
/// all of its input ([`Coverage::partial`]); `None` for one that did (no member: the files of
/// complete runs are as they always were).
pub(crate) fn partial_json(cov: &Coverage) -> Option<Json> {
    cov.partial().then(|| {
        let mut p = json!({
            "interrupted": cov.interrupted > 0,
            "read_errors": cov.read_errors,
        });
        // Added later: present only for a checkpoint (or a merge of one).
        if cov.checkpoints > 0 {
            p["checkpoint"] = json!(true);
        }
        p
    })
}

/// The coverage block of the JSON summary.
pub(crate) fn coverage_json(cov: &Coverage) -> Json {
    let mut c = json!({
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
        "anomalies": {
            "negative_interval": cov.negative_interval,
            "unparseable": cov.unparseable,
            "implausible_instant": cov.implausible_instant,
            "out_of_order": cov.out_of_order,
        },
        "joins": {
            "joined_lines": cov.joined_lines,
            "evicted": cov.join_evicted,
            "timed_out": cov.join_timed_out,
            "unfinished": cov.join_unfinished,
            "orphaned": cov.join_orphaned,
        },
        "formats": cov.formats,
    });
    // Added after the schema's first release: present when nonzero, so that a report of logs
    // without it reads as before (absent means 0, as in a digest file).
    if cov.duration_mismatch > 0 {
        c["anomalies"]["duration_mismatch"] = json!(cov.duration_mismatch);
    }
    if cov.duplicates > 0 {
        c["duplicates"] = json!(cov.duplicates);
    }
    if cov.outside_window > 0 {
        c["outside_window"] = json!(cov.outside_window);
    }
    if cov.outside_range > 0 {
        c["outside_range"] = json!(cov.outside_range);
    }
    if !cov.skipped.is_empty() {
        c["skipped"] = json!(cov.skipped);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A live window's rates run over the wall time it covers, or over its requests' ends
    /// when they span more (a file read at once with `--window`), never over their starts.
    #[test]
    fn a_window_rates_over_its_time_or_its_ends() {
        let s = 1_000_000_000;
        // Requests of a minute that ended within 0.3 s, read in a window of 1 s: 1 s.
        assert_eq!(
            window_secs(s, Some((0, 60_300_000_000)), Some(60 * s), 4),
            Some(1.0)
        );
        // Four ends 1.5 s apart in all (three gaps of 0.5 s), read in 10 ms: they cover 2 s.
        assert_eq!(
            window_secs(10_000_000, Some((0, 61_500_000_000)), Some(60 * s), 4),
            Some(2.0)
        );
        // Thirteen requests a second apart, read at once: 13 s, a rate of 1 a second.
        assert_eq!(
            window_secs(10_000_000, Some((0, 72 * s)), Some(60 * s), 13),
            Some(13.0)
        );
        // One request: its end spans nothing; the wall time.
        assert_eq!(
            window_secs(10_000_000, Some((0, 60 * s)), Some(60 * s), 1),
            Some(0.01)
        );
        // Nothing read in a window that covered no time yet.
        assert_eq!(window_secs(0, None, None, 0), None);
    }

    /// A control character in a group's name or value is escaped in its label.
    #[test]
    fn labels_stay_on_one_line() {
        assert_eq!(
            key_text([("model", Some("a\nb\tc")), ("cache", None)]),
            "model=a\\nb\\tc cache=unknown"
        );
        assert_eq!(key_text([("model", Some("é x"))]), "model=é x");
    }

    /// What a run of no request advises follows what its lines were, then how its formats were
    /// chosen.
    #[test]
    fn no_request_advice_by_cause() {
        let cov = |lines, non_json, invalid, too_long| Coverage {
            lines,
            non_json,
            invalid,
            too_long,
            no_timing: lines - non_json - invalid - too_long,
            ..Coverage::default()
        };
        let auto = FormatChoice::Auto;
        let says = |c: &Coverage, choice: &FormatChoice, start: &str| {
            let s = no_requests(c, choice);
            assert!(s.starts_with(start), "{s}");
        };
        says(&cov(3, 3, 0, 0), &auto, "no line was a JSON object");
        // Every JSON line one its format leaves out, and not when one was malformed too.
        let warmup = |c: Coverage, n| Coverage {
            skipped: [("warm-up records".to_owned(), n)].into(),
            no_timing: 0,
            ..c
        };
        says(
            &warmup(cov(3, 1, 0, 0), 2),
            &auto,
            "no line was a request: every JSON line was one its format leaves out (warm-up records 2;",
        );
        assert!(!no_requests(&warmup(cov(3, 0, 1, 0), 2), &auto).contains("every JSON line"));
        says(
            &cov(3, 1, 0, 2),
            &auto,
            "no line could be read: the lines were longer",
        );
        says(
            &cov(3, 1, 1, 1),
            &auto,
            "no line could be read: the lines were malformed",
        );
        says(&cov(3, 1, 1, 0), &FormatChoice::Mapped, NO_REQUESTS_MAPPED);
        says(&cov(3, 0, 0, 0), &auto, NO_REQUESTS);
        says(
            &cov(3, 0, 0, 0),
            &FormatChoice::Forced("vllm".into()),
            "no line was recognised as a request by --format vllm (`tokentime formats vllm`",
        );
    }

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
