//! Analysis: the judgement a latency expert makes from the same log as the percentile table.
//! Which metrics are multimodal and whether a grouping explains it, whether TTFT grows with
//! queueing (capacity) or prefill (prompts), how TPOT grows with the requests in flight,
//! token- against request-weighted percentiles, and the headline for a chat or an agent
//! consumer.
//!
//! Owns the [`Report`] built from a finished [`Summary`] ([`analyze`]) and its per-group
//! accumulators (`crate::summary::accumulators`); `crate::output` renders it. Pure, no I/O.
//! The methods and their parameters are documented in `docs/reading-the-report.md` and on
//! each item here.

pub(crate) mod hist;
pub(crate) mod modes;

use crate::metrics::sweep::bucket_label;
use crate::metrics::{Metric, NullReason};
use crate::summary::accumulators::{
    Extra, InflightBucket, Parts, input_bucket_label, input_bucket_range,
};
use crate::summary::digest::{Digest, Values};
use crate::summary::{GroupKey, GroupStats, Summary};
use hist::Histogram;
use modes::Modality;
use std::collections::BTreeMap;

/// Default reading speed, tokens per second: 238 words per minute, the mean silent reading
/// rate of English non-fiction by adults (Brysbaert 2019, "How many words do we read per
/// minute? A review and meta-analysis of reading rate", Journal of Memory and Language 109),
/// at 0.75 words per token (OpenAI's rule of thumb for English text):
/// 238 / 60 / 0.75 = 5.3.
pub(crate) const DEFAULT_READING_SPEED: f64 = 5.3;

/// Token- and request-weighted quantiles "differ" when they are this far apart (relative).
pub(crate) const WEIGHTED_DIFFERENCE: f64 = 0.10;

/// A split by a grouping "explains" modes when this share of the values sits in the mode
/// most of its group's values sit in.
pub(crate) const EXPLAINED_PURITY: f64 = 0.9;

/// The TTFT growth from p50 to p99 must be this much queueing (or prefill) to be read as a
/// capacity (or prompt) problem.
pub(crate) const READING_SHARE: f64 = 0.6;

/// The fewest requests a row of the TTFT decomposition needs for its reading (as a bucket of
/// the TPOT trend): one or two slow requests, whose prompt or queue may be anything, say
/// nothing of where the TTFT of slow requests goes.
pub(crate) const MIN_REGION: f64 = 5.0;

/// The quantiles of the headline and of the analysis tables in text (all in JSON).
const HEADLINE_QUANTILES: [f64; 3] = [0.5, 0.9, 0.99];

/// Fewest requests a bucket of the TPOT-by-in-flight table needs to count in the slope.
pub(crate) const MIN_BUCKET: u64 = 5;

/// Who reads the headline (`--for`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consumer {
    /// A person reading a streamed answer: TTFT leads, decode speed against reading speed.
    Chat,
    /// A program waiting for the whole answer: E2E leads, with its decode share.
    Agent,
    /// Both, labelled.
    Both,
}

impl Consumer {
    /// `"chat"`, `"agent"` or `"both"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Consumer::Chat => "chat",
            Consumer::Agent => "agent",
            Consumer::Both => "both",
        }
    }
}

/// What the report adds to the percentiles.
#[derive(Debug, Clone, PartialEq)]
pub struct AnalysisConfig {
    /// `--hist`: draw a histogram per metric.
    pub hist: bool,
    /// `--for`: the headline's consumer.
    pub consumer: Consumer,
    /// `--reading-speed`, tokens per second.
    pub reading_speed: f64,
    /// Threads the groups' findings are worked out on (`--threads`).
    pub threads: usize,
    /// Only what the compact table shows (`-o table` without `--explain` or `--hist`): the
    /// findings of the groups without a cache class (all requests, the `--by` groups), and of
    /// those only the modes of latency metrics. The groups of a cache class are its columns,
    /// with no findings of their own; the modes of token counts are in the full report only.
    /// The mixture fits are most of a report's time: fitting every group and metric made a
    /// summary of a 20 MB log half as long again (0.06 s against 0.04 s).
    pub compact: bool,
}

impl Default for AnalysisConfig {
    fn default() -> Self {
        AnalysisConfig {
            hist: false,
            consumer: Consumer::Both,
            reading_speed: DEFAULT_READING_SPEED,
            threads: 1,
            compact: false,
        }
    }
}

/// A digest's values as `(value, weight)` points: every value while exact, the centroids
/// beyond.
pub(crate) fn points(d: &mut Digest) -> Vec<(f64, f64)> {
    let e = d.export();
    match (e.values, e.atoms) {
        (Values::Exact(v), _) => v.into_iter().map(|x| (x, 1.0)).collect(),
        // Few distinct values: each with its count, exactly.
        (Values::Centroids(_), Some(a)) => a.into_iter().map(|(v, n)| (v, n as f64)).collect(),
        (Values::Centroids(c), None) => c,
    }
}

/// Share of the points' weight above `x`.
fn share_above(points: &[(f64, f64)], x: f64) -> f64 {
    let total: f64 = points.iter().map(|p| p.1).sum();
    if total <= 0.0 {
        return 0.0;
    }
    points.iter().filter(|p| p.0 > x).map(|p| p.1).sum::<f64>() / total
}

/// How well one grouping separates the modes of a metric.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Split {
    /// The dimensions the groups add (e.g. `["cache"]`).
    pub dims: Vec<String>,
    /// Share of the values that sit in their group's dominant mode.
    pub purity: f64,
    /// Whether the split explains the modes (purity at least [`EXPLAINED_PURITY`] and at least
    /// two groups dominated by different modes).
    pub explains: bool,
    /// Each group: its values of the dimensions, its count, its dominant mode (index), and the
    /// share of its values in that mode.
    pub groups: Vec<(Vec<Option<String>>, f64, usize, f64)>,
}

/// A multimodal metric of a group.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MultimodalFinding {
    /// The metric.
    pub metric: Metric,
    /// The modes.
    pub modality: Modality,
    /// The metric's mean.
    pub mean: f64,
    /// Whether the mean lies between the lowest and the highest mode's centres.
    pub mean_between: bool,
    /// Share of the values within 25 % of the mean (`[mean / 1.25, mean * 1.25]`).
    pub share_near_mean: f64,
    /// Share of the values within 25 % of each mode's centre.
    pub share_near_modes: Vec<f64>,
    /// The groupings tried, best first.
    pub splits: Vec<Split>,
    /// For TTFT and TPOT: the split by requests in flight during each decode (the buckets of
    /// the TPOT-under-load table, requests with a TPOT only), apart from `splits`: the table
    /// reports weigh it with them ([`MultimodalFinding::best_split`]), JSON lists `splits`
    /// alone.
    pub inflight_split: Option<Split>,
}

impl MultimodalFinding {
    /// The split the reports name: the first of `splits` that explains the modes (else the
    /// first), or the split by requests in flight where it does better.
    pub(crate) fn best_split(&self) -> Option<&Split> {
        let first = self
            .splits
            .iter()
            .find(|s| s.explains)
            .or(self.splits.first());
        match (first, &self.inflight_split) {
            (Some(a), Some(b)) if (a.explains, a.purity) >= (b.explains, b.purity) => Some(a),
            (_, Some(b)) => Some(b),
            (a, None) => a,
        }
    }
}

impl Split {
    /// What the split is by, in prose: `cache`, `model, cache`, `requests in flight`.
    pub(crate) fn by(&self) -> String {
        if self.dims == ["in_flight"] {
            "requests in flight".to_owned()
        } else {
            self.dims.join(", ")
        }
    }
}

/// One region of the TTFT distribution in the decomposition.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Region {
    /// `"p50"` (requests ranked between the 40th and 60th percentile) or `"p99"` (the
    /// slowest 1 %), by TTFT bins of 1/20 decade.
    pub at: &'static str,
    /// Requests in the region.
    pub count: f64,
    /// Mean TTFT, queue time and prefill (ms).
    pub ttft_ms: f64,
    /// Mean queue time (ms).
    pub queue_ms: f64,
    /// Mean prefill (ms).
    pub prefill_ms: f64,
    /// Mean input tokens, where logged.
    pub input_tokens: Option<f64>,
    /// Queue time over TTFT, summed over the region.
    pub queue_share: f64,
}

/// The TTFT decomposition of a group: where its TTFT goes, at p50 and p99.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Decomposition {
    /// Requests with TTFT, queue and prefill.
    pub count: f64,
    /// The p50 and p99 regions.
    pub regions: [Region; 2],
    /// `"capacity"`, `"prompt"`, `"mixed"`, `"flat"`, or `"few"` (a row of fewer than
    /// [`MIN_REGION`] requests: no reading).
    pub reading: &'static str,
    /// Share of the TTFT growth from p50 to p99 that is queueing, and that is prefill.
    pub growth_shares: (f64, f64),
}

/// One bucket of a table keyed by a count (in-flight requests, input tokens).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BucketRow {
    /// Its label (`3-4`, `1024-2047`).
    pub label: String,
    /// Its bounds (inclusive; no upper bound for an open one).
    pub range: (u64, Option<u64>),
    /// Values in it.
    pub count: u64,
    /// Mean of the key over the bucket (the mean in-flight count), where there is one.
    pub mean_key: Option<f64>,
    /// Quantiles, as `(q, value)`.
    pub quantiles: Vec<(f64, f64)>,
    /// The median, whatever quantiles were asked for (the findings read it).
    pub p50: Option<f64>,
    /// Whether they are exact.
    pub exact: bool,
}

/// TPOT per bucket of requests in flight.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Inflight {
    /// The buckets, fewest in flight first.
    pub rows: Vec<BucketRow>,
    /// Median TPOT of each bucket, for the slope.
    pub medians: Vec<f64>,
    /// ms of TPOT per extra request in flight (weighted least squares of the buckets' median
    /// TPOT on their mean in-flight count, weights their counts, over the buckets with at
    /// least [`MIN_BUCKET`] requests); `None` with fewer than two such buckets.
    pub slope_ms: Option<f64>,
    /// TPOT requests the sweep could not place (no start or end time in the log).
    pub unplaced: u64,
    /// Late and forced events of the sweep (overall group only).
    pub late: u64,
    /// Events swept early.
    pub forced: u64,
}

impl Inflight {
    /// The fewest- and most-in-flight buckets the slope was fitted over (those with at least
    /// [`MIN_BUCKET`] requests), their rows' indices; `None` with fewer than two. What a
    /// finding compares the slope with: a bucket of one request at either end could have
    /// the p50 fall while the slope over the others grows.
    pub(crate) fn ends(&self) -> Option<(usize, usize)> {
        held_ends(&self.rows)
    }
}

/// The first and last of `rows` that hold at least [`MIN_BUCKET`] requests, their indices;
/// `None` with fewer than two such rows. The ends a trend over buckets is read between: one
/// request at an end is no trend.
pub(crate) fn held_ends(rows: &[BucketRow]) -> Option<(usize, usize)> {
    let mut held = (0..rows.len()).filter(|&i| rows[i].count >= MIN_BUCKET);
    let first = held.next()?;
    let last = held.next_back()?;
    Some((first, last))
}

/// Token- against request-weighted quantiles of one metric.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WeightedFinding {
    /// The metric.
    pub metric: Metric,
    /// What each value is weighted by.
    pub weight: &'static str,
    /// `(q, request-weighted, token-weighted)`.
    pub quantiles: Vec<(f64, f64, f64)>,
    /// Whether some quantile differs by more than [`WEIGHTED_DIFFERENCE`].
    pub differs: bool,
}

/// The analysis of one group.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct GroupReport {
    /// Multimodal metrics.
    pub multimodal: Vec<MultimodalFinding>,
    /// A histogram per metric (with `--hist`).
    pub hist: Vec<Option<Histogram>>,
    /// The TTFT decomposition, where queue and prefill are logged.
    pub decomposition: Option<Decomposition>,
    /// TTFT by input-token bucket.
    pub ttft_by_input: Vec<BucketRow>,
    /// TTFT p50 per cache class of the group: (class, count, p50).
    pub ttft_by_cache: Vec<(String, u64, f64)>,
    /// TPOT by requests in flight.
    pub inflight: Option<Inflight>,
    /// In the all-requests group, its requests with a TPOT when none of them was placed in
    /// time ([`GroupReport::inflight`] is `None`: no request with a decode had both a start and
    /// an end time); 0 otherwise, and in every other group.
    pub tpot_unplaced: u64,
    /// Token- against request-weighted quantiles.
    pub weighted: Vec<WeightedFinding>,
}

/// The headline for a chat consumer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChatHeadline {
    /// TTFT values.
    pub ttft_count: u64,
    /// TTFT quantiles `(q, ms)`.
    pub ttft: Vec<(f64, f64)>,
    /// TTFT nulls for values the log had that are none ([`logged_nulls`]).
    pub ttft_nulls: Vec<(NullReason, u64)>,
    /// Reading speed, tokens/s.
    pub reading_speed: f64,
    /// TPOT above which decode is slower than reading (`1000 / reading speed` ms).
    pub tpot_threshold_ms: f64,
    /// Requests with a TPOT.
    pub tpot_count: u64,
    /// Share of them decoding slower than the reading speed.
    pub slower_than_reading: f64,
    /// Every TTFT runs from `scheduled` (llama.cpp's timings): the queue before it is not in
    /// the log, so TTFT is prefill only.
    pub ttft_from_scheduled: bool,
    /// The TTFT quantiles are exact (not t-digest estimates, marked `~`).
    pub ttft_exact: bool,
    /// The share slower than reading is exact (not read from a t-digest of TPOT, marked `~`).
    pub slower_exact: bool,
}

/// The headline for an agent consumer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AgentHeadline {
    /// E2E values.
    pub e2e_count: u64,
    /// E2E quantiles `(q, ms)`.
    pub e2e: Vec<(f64, f64)>,
    /// E2E nulls for values the log had that are none ([`logged_nulls`]).
    pub e2e_nulls: Vec<(NullReason, u64)>,
    /// The E2E quantiles are exact (not t-digest estimates, marked `~`).
    pub e2e_exact: bool,
    /// Requests with E2E and decode known.
    pub decode_count: u64,
    /// Decode (TPOT x (output tokens - 1)) over E2E, summed over all those requests.
    pub decode_share_total: Option<f64>,
    /// The median request's decode share.
    pub decode_share_median: Option<f64>,
}

/// The headline of the report (from the all-requests group).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Headline {
    /// For whom.
    pub consumer: Consumer,
    /// The chat headline (for `chat` and `both`).
    pub chat: Option<ChatHeadline>,
    /// The agent headline (for `agent` and `both`).
    pub agent: Option<AgentHeadline>,
}

/// The analysis of a summary: a headline and one report per group, in the order of
/// [`Summary::groups`].
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The headline.
    pub(crate) headline: Option<Headline>,
    /// Per group.
    pub(crate) groups: Vec<GroupReport>,
}

impl Report {
    /// The report with only the findings about `metrics` (`--metrics`, which chooses what a
    /// table speaks of; `None`: all): their modes, weighted quantiles and histograms; TTFT's
    /// decomposition (also kept for queue or prefill), by prompt length and by cache class;
    /// TPOT's under load. The headline stays whole.
    pub(crate) fn only(&self, metrics: Option<&[Metric]>) -> Report {
        let Some(chosen) = metrics else {
            return self.clone();
        };
        let has = |m: Metric| chosen.contains(&m);
        let groups = self
            .groups
            .iter()
            .map(|g| GroupReport {
                multimodal: g
                    .multimodal
                    .iter()
                    .filter(|f| has(f.metric))
                    .cloned()
                    .collect(),
                hist: (g.hist.iter().zip(Metric::ALL))
                    .map(|(h, m)| h.clone().filter(|_| has(m)))
                    .collect(),
                decomposition: (g.decomposition.clone())
                    .filter(|_| has(Metric::Ttft) || has(Metric::Queue) || has(Metric::Prefill)),
                ttft_by_input: if has(Metric::Ttft) {
                    g.ttft_by_input.clone()
                } else {
                    Vec::new()
                },
                ttft_by_cache: if has(Metric::Ttft) {
                    g.ttft_by_cache.clone()
                } else {
                    Vec::new()
                },
                inflight: g.inflight.clone().filter(|_| has(Metric::Tpot)),
                tpot_unplaced: if has(Metric::Tpot) {
                    g.tpot_unplaced
                } else {
                    0
                },
                weighted: (g.weighted.iter())
                    .filter(|w| has(w.metric))
                    .cloned()
                    .collect(),
            })
            .collect();
        Report {
            headline: self.headline.clone(),
            groups,
        }
    }
}

fn quantiles_of(d: &mut Digest, qs: &[f64]) -> Vec<(f64, f64)> {
    qs.iter()
        .filter_map(|&q| d.quantile(q).map(|v| (q, v)))
        .collect()
}

fn multimodal(metric: Metric, d: &mut Digest) -> Option<MultimodalFinding> {
    if (d.count() as f64) < modes::MIN_VALUES {
        return None;
    }
    let pts = points(d);
    let modality = modes::detect(&pts)?;
    let mean = d.mean()?;
    let near = |c: f64| modes::share_within(&pts, c / 1.25, c * 1.25);
    let lo = modality.modes.first()?.center;
    let hi = modality.modes.last()?.center;
    Some(MultimodalFinding {
        metric,
        share_near_mean: near(mean),
        share_near_modes: modality.modes.iter().map(|m| near(m.center)).collect(),
        mean_between: mean > lo && mean < hi,
        mean,
        modality,
        splits: vec![],
        inflight_split: None,
    })
}

fn decomposition(e: &Extra) -> Option<Decomposition> {
    let total: f64 = e.decomposition.values().map(|p| p.n).sum();
    if total < 1.0 {
        return None;
    }
    let region = |at: &'static str, a: f64, b: f64| -> Region {
        let mut sum = Parts::default();
        let mut before = 0.0;
        for p in e.decomposition.values() {
            let (c0, c1) = (before / total, (before + p.n) / total);
            if c0 < b && c1 > a {
                sum.add(p);
            }
            before += p.n;
        }
        Region {
            at,
            count: sum.n,
            ttft_ms: sum.ttft / sum.n,
            queue_ms: sum.queue / sum.n,
            prefill_ms: sum.prefill / sum.n,
            input_tokens: (sum.with_tokens > 0.0).then(|| sum.tokens / sum.with_tokens),
            queue_share: if sum.ttft > 0.0 {
                sum.queue / sum.ttft
            } else {
                0.0
            },
        }
    };
    let typical = region("p50", 0.4, 0.6);
    let slow = region("p99", 0.99, 1.0);
    let growth = slow.ttft_ms - typical.ttft_ms;
    let dq = (slow.queue_ms - typical.queue_ms) / growth;
    let dp = (slow.prefill_ms - typical.prefill_ms) / growth;
    let reading = if typical.count.min(slow.count) < MIN_REGION {
        "few"
    } else if growth <= 0.1 * typical.ttft_ms {
        "flat"
    } else if dq >= READING_SHARE {
        "capacity"
    } else if dp >= READING_SHARE {
        "prompt"
    } else {
        "mixed"
    };
    Some(Decomposition {
        count: total,
        regions: [typical, slow],
        reading,
        growth_shares: if growth > 0.0 { (dq, dp) } else { (0.0, 0.0) },
    })
}

fn inflight(e: &mut Extra, tpot_count: u64, qs: &[f64]) -> Option<Inflight> {
    if e.inflight.is_empty() {
        return None;
    }
    let mut rows = vec![];
    let mut medians = vec![];
    let mut placed = 0;
    for (&b, ib) in e.inflight.iter_mut() {
        let n = ib.tpot.count();
        placed += n;
        let (lo, hi) = match b {
            0 => (1, 1),
            _ => ((1u64 << (b - 1)) + 1, 1u64 << b),
        };
        medians.push(ib.tpot.quantile(0.5).unwrap_or(f64::NAN));
        rows.push(BucketRow {
            label: bucket_label(b),
            range: (lo, Some(hi)),
            count: n,
            mean_key: Some(ib.sum_inflight / n as f64),
            quantiles: quantiles_of(&mut ib.tpot, qs),
            p50: ib.tpot.quantile(0.5),
            exact: ib.tpot.is_exact(),
        });
    }
    // Weighted least squares of median TPOT on mean in flight, over the buckets with at least
    // MIN_BUCKET requests.
    let fit: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].count >= MIN_BUCKET)
        .collect();
    let w: Vec<f64> = fit.iter().map(|&i| rows[i].count as f64).collect();
    let x: Vec<f64> = fit
        .iter()
        .map(|&i| rows[i].mean_key.unwrap_or(0.0))
        .collect();
    let y: Vec<f64> = fit.iter().map(|&i| medians[i]).collect();
    let sw: f64 = w.iter().sum();
    let mx = w.iter().zip(&x).map(|(w, x)| w * x).sum::<f64>() / sw;
    let my = w.iter().zip(&y).map(|(w, y)| w * y).sum::<f64>() / sw;
    let sxx: f64 = w.iter().zip(&x).map(|(w, x)| w * (x - mx).powi(2)).sum();
    let sxy: f64 = (0..w.len()).map(|i| w[i] * (x[i] - mx) * (y[i] - my)).sum();
    let slope_ms = (fit.len() >= 2 && sxx > 1e-12).then(|| sxy / sxx);
    Some(Inflight {
        rows,
        medians,
        slope_ms,
        unplaced: tpot_count.saturating_sub(placed),
        late: e.late,
        forced: e.forced,
    })
}

fn weighted(g: &mut GroupStats, qs: &[f64]) -> Vec<WeightedFinding> {
    let mut out = vec![];
    for (metric, weight) in [
        (Metric::Tpot, "output_tokens - 1"),
        (Metric::E2e, "output_tokens"),
    ] {
        let sketch = if metric == Metric::Tpot {
            &g.extra.weighted_tpot
        } else {
            &g.extra.weighted_e2e
        };
        if sketch.total <= 0.0 {
            continue;
        }
        let sketch = sketch.clone();
        let d = &mut g.metric(metric).digest;
        let quantiles: Vec<(f64, f64, f64)> = qs
            .iter()
            .filter_map(|&q| Some((q, d.quantile(q)?, sketch.quantile(q)?)))
            .collect();
        let differs = quantiles
            .iter()
            .any(|&(_, r, t)| r > 0.0 && ((t - r) / r).abs() > WEIGHTED_DIFFERENCE);
        out.push(WeightedFinding {
            metric,
            weight,
            quantiles,
            differs,
        });
    }
    out
}

/// For each group, the groups that extend it ([`extends`]), in group order: found through
/// each group's sub-keys (one per subset of its dimensions, a handful), so thousands of groups
/// (`--by id --max-groups 100000`) cost a lookup each rather than a scan of all the others.
fn children(groups: &[(GroupKey, &mut GroupStats)]) -> Vec<Vec<usize>> {
    let sorted = |key: &[(String, Option<String>)]| {
        let mut k = key.to_vec();
        k.sort();
        k
    };
    let index: std::collections::HashMap<GroupKey, usize> = groups
        .iter()
        .enumerate()
        .map(|(i, (key, _))| (sorted(key), i))
        .collect();
    let mut kids = vec![Vec::new(); groups.len()];
    for (ci, (key, _)) in groups.iter().enumerate() {
        if key.len() > 12 {
            // Too many dimensions to list the subsets: the plain scan.
            for (pi, (parent, _)) in groups.iter().enumerate() {
                if extends(parent, key).is_some() {
                    kids[pi].push(ci);
                }
            }
            continue;
        }
        let key = sorted(key);
        let d = key.len();
        // Every proper subset of the child's dimensions (the empty one too).
        for mask in 0..(1usize << d) - 1 {
            let sub: GroupKey = key
                .iter()
                .enumerate()
                .filter(|(i, _)| mask >> i & 1 == 1)
                .map(|(_, kv)| kv.clone())
                .collect();
            if let Some(&pi) = index.get(&sub) {
                kids[pi].push(ci);
            }
        }
    }
    kids
}

/// The dimensions `child` adds to `parent` when it extends it (same values on `parent`'s
/// dimensions, more dimensions), else `None`.
fn extends(parent: &GroupKey, child: &GroupKey) -> Option<(Vec<String>, Vec<Option<String>>)> {
    if child.len() <= parent.len() || !parent.iter().all(|p| child.contains(p)) {
        return None;
    }
    let extra: Vec<&(String, Option<String>)> =
        child.iter().filter(|c| !parent.contains(c)).collect();
    Some((
        extra.iter().map(|c| c.0.clone()).collect(),
        extra.iter().map(|c| c.1.clone()).collect(),
    ))
}

fn mode_of(antimodes: &[f64], v: f64) -> usize {
    antimodes.iter().filter(|&&a| v > a).count()
}

/// A candidate group of a split: its dimensions, their values, its points.
type Child = (Vec<String>, Vec<Option<String>>, Vec<(f64, f64)>);

/// The groupings that extend group `gi` (and, for TTFT, its input-token buckets), and how
/// well each separates `f`'s modes.
fn splits(
    groups: &mut [(GroupKey, &mut GroupStats)],
    gi: usize,
    kids: &[usize],
    f: &MultimodalFinding,
) -> Vec<Split> {
    let parent = groups[gi].0.clone();
    // The children: groups that extend this one, and for TTFT its input-token buckets.
    let mut children: Vec<Child> = vec![];
    for &ci in kids {
        let (key, g) = &mut groups[ci];
        if let Some((dims, values)) = extends(&parent, key) {
            children.push((dims, values, points(&mut g.metric(f.metric).digest)));
        }
    }
    if f.metric == Metric::Ttft {
        for (b, d) in groups[gi].1.extra.ttft_by_input_mut() {
            children.push((
                vec![Metric::InputTokens.json_name().to_owned()],
                vec![Some(input_bucket_label(b))],
                points(d),
            ));
        }
    }
    score(children, f)
}

/// The split of `f`'s modes by the in-flight buckets of group `gi` (TTFT only).
fn inflight_split(g: &mut GroupStats, f: &MultimodalFinding) -> Option<Split> {
    // TPOT grows with the batch a decode shares: load splits its modes as often as the cache.
    fn digest(x: &mut InflightBucket, metric: Metric) -> Option<&mut Digest> {
        match metric {
            Metric::Ttft => Some(&mut x.ttft),
            Metric::Tpot => Some(&mut x.tpot),
            _ => None,
        }
    }
    let children: Vec<Child> = g
        .extra
        .inflight
        .iter_mut()
        .filter_map(|(&b, x)| {
            digest(x, f.metric)
                .filter(|d| d.count() > 0)
                .map(|d| (b, d))
        })
        .map(|(b, d)| {
            (
                vec!["in_flight".to_owned()],
                vec![Some(bucket_label(b))],
                points(d),
            )
        })
        .collect();
    score(children, f).into_iter().next()
}

/// How well each grouping of `children` (by their dimensions) separates `f`'s modes, best
/// first.
fn score(children: Vec<Child>, f: &MultimodalFinding) -> Vec<Split> {
    let k = f.modality.modes.len();
    let mut by_dims: BTreeMap<Vec<String>, Split> = BTreeMap::new();
    for (dims, values, pts) in children {
        let mut mass = vec![0.0; k];
        for &(v, w) in pts.iter().filter(|p| p.0 > 0.0) {
            mass[mode_of(&f.modality.antimodes, v)] += w;
        }
        let n: f64 = mass.iter().sum();
        if n <= 0.0 {
            continue;
        }
        let (dominant, top) = mass
            .iter()
            .enumerate()
            .fold((0, 0.0), |b, (i, &m)| if m > b.1 { (i, m) } else { b });
        let split = by_dims.entry(dims.clone()).or_insert_with(|| Split {
            dims,
            purity: 0.0,
            explains: false,
            groups: vec![],
        });
        split.groups.push((values, n, dominant, top / n));
    }
    let mut out: Vec<Split> = by_dims
        .into_values()
        .filter(|s| s.groups.len() >= 2)
        .map(|mut s| {
            let n: f64 = s.groups.iter().map(|g| g.1).sum();
            s.purity = s.groups.iter().map(|g| g.1 * g.3).sum::<f64>() / n;
            let mut dominant: Vec<usize> = s.groups.iter().map(|g| g.2).collect();
            dominant.sort_unstable();
            dominant.dedup();
            s.explains = dominant.len() >= 2 && s.purity >= EXPLAINED_PURITY;
            s
        })
        .collect();
    out.sort_by(|a, b| {
        b.explains
            .cmp(&a.explains)
            .then(b.purity.total_cmp(&a.purity))
            .then(a.dims.len().cmp(&b.dims.len()))
    });
    out
}

/// Each group's own findings ([`group_report`]), in the order of `groups`, on up to
/// `cfg.threads` threads: first every metric's modes and histogram (the mixture fits of the
/// multimodality check are most of a report's time, and each metric's are its own: the metrics
/// of all groups are dealt out in turn, so that a report of one group uses every thread too),
/// then the rest of each group's (the groups dealt out in turn).
fn group_reports(
    groups: &mut [(GroupKey, &mut GroupStats)],
    cfg: &AnalysisConfig,
    quantiles: &[f64],
    sweep_counts: (u64, u64),
) -> Vec<GroupReport> {
    let mut reports: Vec<GroupReport> = Vec::new();
    reports.resize_with(groups.len(), GroupReport::default);
    // The groups whose findings the report shows.
    let mut shown: Vec<(usize, &mut GroupStats)> = groups
        .iter_mut()
        .enumerate()
        .filter(|(_, (key, _))| !cfg.compact || !key.iter().any(|(k, _)| k == "cache"))
        .map(|(i, (_, g))| (i, &mut **g))
        .collect();
    let metrics: Vec<(usize, Metric, &mut Digest)> = shown
        .iter_mut()
        .flat_map(|(i, g)| {
            let i = *i;
            Metric::ALL
                .into_iter()
                .zip(g.metrics.iter_mut())
                .filter(|(metric, _)| !cfg.compact || metric.is_duration())
                .map(move |(metric, st)| (i, metric, &mut st.digest))
        })
        .collect();
    let found = deal(metrics, cfg.threads, |(i, metric, d)| {
        let modes = multimodal(metric, d);
        let hist = cfg.hist.then(|| hist::build(&points(d)));
        (i, modes, hist)
    });
    let rest = deal(shown, cfg.threads, |(i, g)| {
        (i, group_report(g, quantiles, sweep_counts))
    });
    for (i, r) in rest {
        reports[i] = r;
    }
    for (i, modes, hist) in found {
        reports[i].multimodal.extend(modes);
        reports[i].hist.extend(hist);
    }
    reports
}

/// `f` of each of `items` on up to `threads` threads, the items dealt out in turn; the results
/// in the items' order.
fn deal<T: Send, R: Send>(items: Vec<T>, threads: usize, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.into_iter().map(f).collect();
    }
    let n = items.len();
    let mut parts: Vec<Vec<(usize, T)>> = (0..threads).map(|_| Vec::new()).collect();
    for (k, item) in items.into_iter().enumerate() {
        parts[k % threads].push((k, item));
    }
    let mut out: Vec<Option<R>> = (0..n).map(|_| None).collect();
    let f = &f;
    std::thread::scope(|scope| {
        let running: Vec<_> = parts
            .into_iter()
            .map(|part| {
                scope.spawn(move || {
                    part.into_iter()
                        .map(|(k, item)| (k, f(item)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for r in running {
            for (k, v) in r.join().expect("an analysis thread panicked") {
                out[k] = Some(v);
            }
        }
    });
    out.into_iter()
        .map(|v| v.expect("every item is dealt to a thread"))
        .collect()
}

/// One group's own findings but its metrics' modes and histograms ([`group_reports`]): the
/// TTFT decomposition and by input tokens, TPOT by requests in flight (with the input's late
/// and early-swept counts, `sweep_counts`), the weighted views.
fn group_report(g: &mut GroupStats, quantiles: &[f64], sweep_counts: (u64, u64)) -> GroupReport {
    let mut r = GroupReport {
        decomposition: decomposition(&g.extra),
        ..GroupReport::default()
    };
    for (b, d) in g.extra.ttft_by_input_mut() {
        r.ttft_by_input.push(BucketRow {
            label: input_bucket_label(b),
            range: input_bucket_range(b),
            count: d.count(),
            mean_key: None,
            quantiles: quantiles_of(d, quantiles),
            p50: d.quantile(0.5),
            exact: d.is_exact(),
        });
    }
    let tpot_count = g.metric(Metric::Tpot).digest.count();
    r.inflight = inflight(&mut g.extra, tpot_count, quantiles);
    if r.inflight.is_none() {
        r.tpot_unplaced = tpot_count;
    }
    if let Some(i) = r.inflight.as_mut() {
        (i.late, i.forced) = sweep_counts;
    }
    r.weighted = weighted(g, quantiles);
    r
}

/// Analyzes every group of `summary`: modes, decomposition, TTFT by input tokens and cache,
/// TPOT by requests in flight, token weighting, histograms (with `cfg.hist`), and the headline
/// from the all-requests group. `quantiles` are the report's.
pub fn analyze(summary: &mut Summary, cfg: &AnalysisConfig, quantiles: &[f64]) -> Report {
    let mut groups = summary.groups();
    // The sweep's late and early-swept counts are the inputs', kept in the all-requests group:
    // a log out of time order makes every group's in-flight counts unreliable, not only that
    // group's.
    let sweep_counts = groups
        .iter()
        .find(|(k, _)| k.is_empty())
        .map_or((0, 0), |(_, g)| (g.extra.late, g.extra.forced));
    let mut reports = group_reports(&mut groups, cfg, quantiles, sweep_counts);
    // Why no group has TPOT by requests in flight is said once, under all requests.
    for (r, (k, _)) in reports.iter_mut().zip(&groups) {
        if !k.is_empty() {
            r.tpot_unplaced = 0;
        }
    }
    let kids = children(&groups);
    for gi in 0..groups.len() {
        let parent = groups[gi].0.clone();
        for fi in 0..reports[gi].multimodal.len() {
            let f = reports[gi].multimodal[fi].clone();
            reports[gi].multimodal[fi].splits = splits(&mut groups, gi, &kids[gi], &f);
            reports[gi].multimodal[fi].inflight_split = inflight_split(groups[gi].1, &f);
        }
        // TTFT by cache class: the groups that add only `cache` to this one.
        let mut by_cache = vec![];
        for &ci in &kids[gi] {
            let (key, g) = &mut groups[ci];
            if let Some((dims, values)) = extends(&parent, key)
                && dims == ["cache"]
                && let Some(class) = values[0].clone()
                && let Some(p50) = g.metric(Metric::Ttft).digest.quantile(0.5)
            {
                by_cache.push((class, g.metric(Metric::Ttft).digest.count(), p50));
            }
        }
        if by_cache.len() >= 2 {
            reports[gi].ttft_by_cache = by_cache;
        }
    }
    let headline = groups
        .iter_mut()
        .find(|(k, _)| k.is_empty())
        .map(|(_, g)| headline(g, cfg));
    Report {
        headline,
        groups: reports,
    }
}

/// A metric's nulls for a value the log had but that is none: unreadable, a sentinel, a
/// negative interval, instants implausible or out of order, a first token of a response not
/// streamed (not those of a metric not logged, a failure or a response-cache answer).
/// When every request of the metric failed or was cancelled (its nulls are only `error` and
/// `cancelled`), those: no request completed, which the headline says rather than that the log
/// has no such field.
fn logged_nulls(m: &crate::summary::MetricStats) -> Vec<(NullReason, u64)> {
    if m.digest.count() == 0
        && m.nulls.iter().next().is_some()
        && m.nulls
            .iter()
            .all(|(r, _)| matches!(r, NullReason::Error | NullReason::Cancelled))
    {
        return m.nulls.iter().collect();
    }
    m.nulls
        .iter()
        .filter(|&(r, _)| {
            matches!(
                r,
                NullReason::Unparseable
                    | NullReason::Sentinel
                    | NullReason::NegativeInterval
                    | NullReason::ImplausibleInstant
                    | NullReason::OutOfOrder
                    | NullReason::NotStreamed
            )
        })
        .collect()
}

/// The headline's words for a metric with no value: none in the log, or the nulls of the
/// values it had that are none (`no TTFT value (unparseable 3)`).
pub(crate) fn no_value(name: &str, nulls: &[(NullReason, u64)]) -> String {
    if nulls.is_empty() {
        return format!("no {name} in the log");
    }
    let each: Vec<String> = nulls
        .iter()
        .map(|(r, n)| format!("{} {n}", r.as_str()))
        .collect();
    if nulls
        .iter()
        .all(|(r, _)| matches!(r, NullReason::Error | NullReason::Cancelled))
    {
        return format!("no {name}: no request completed ({})", each.join(", "));
    }
    format!("no {name} value ({})", each.join(", "))
}

fn headline(g: &mut GroupStats, cfg: &AnalysisConfig) -> Headline {
    let chat = matches!(cfg.consumer, Consumer::Chat | Consumer::Both).then(|| {
        let threshold = 1000.0 / cfg.reading_speed;
        let tpot = &mut g.metric(Metric::Tpot).digest;
        let slower = share_above(&points(tpot), threshold);
        ChatHeadline {
            ttft_count: g.metric(Metric::Ttft).digest.count(),
            ttft: quantiles_of(&mut g.metric(Metric::Ttft).digest, &HEADLINE_QUANTILES),
            ttft_nulls: logged_nulls(g.metric(Metric::Ttft)),
            reading_speed: cfg.reading_speed,
            tpot_threshold_ms: threshold,
            tpot_count: g.metric(Metric::Tpot).digest.count(),
            slower_than_reading: slower,
            ttft_from_scheduled: g.ttft_from_scheduled_only(),
            ttft_exact: g.metric(Metric::Ttft).digest.is_exact(),
            slower_exact: g.metric(Metric::Tpot).digest.is_exact(),
        }
    });
    let agent = matches!(cfg.consumer, Consumer::Agent | Consumer::Both).then(|| {
        let e2e_nulls = logged_nulls(&g.metrics[Metric::E2e.index()]);
        let e2e = &mut g.metrics[Metric::E2e.index()].digest;
        let e = &mut g.extra;
        AgentHeadline {
            e2e_exact: e2e.is_exact(),
            e2e_count: e2e.count(),
            e2e: quantiles_of(e2e, &HEADLINE_QUANTILES),
            e2e_nulls,
            decode_count: e.decode_share.n,
            decode_share_total: (e.e2e_ms > 0.0).then(|| e.decode_ms / e.e2e_ms),
            decode_share_median: e.decode_share.median(),
        }
    });
    Headline {
        consumer: cfg.consumer,
        chat,
        agent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::accumulators::{WEIGHTED_GAMMA, Weighted};

    #[test]
    fn the_ends_of_tpot_under_load_are_the_buckets_the_slope_is_fitted_over() {
        let row = |label: &str, count: u64| BucketRow {
            label: label.to_owned(),
            range: (1, Some(1)),
            count,
            mean_key: None,
            quantiles: vec![],
            p50: None,
            exact: true,
        };
        let mut i = Inflight {
            rows: vec![row("1", 1), row("2", 10), row("3-4", 10), row("5-8", 1)],
            medians: vec![100.0, 10.0, 20.0, 5.0],
            slope_ms: Some(6.0),
            unplaced: 0,
            late: 0,
            forced: 0,
        };
        // A bucket of one request at either end is left out: the p50 doubles from 2 to 3-4
        // in flight, as the slope says, where 1 to 5-8 would read 0.05x.
        assert_eq!(i.ends(), Some((1, 2)));
        i.rows[2].count = 4;
        assert_eq!(i.ends(), None);
    }

    /// Bins as a plain ordered map, added to as [`Weighted`] adds.
    fn reference(values: &[(f64, f64)]) -> BTreeMap<i32, (f64, f64)> {
        let mut bins: BTreeMap<i32, (f64, f64)> = BTreeMap::new();
        for &(v, w) in values {
            if v.is_finite() && w.is_finite() && w > 0.0 && v > 0.0 {
                let b = bins
                    .entry((v.ln() / WEIGHTED_GAMMA.ln()).floor() as i32)
                    .or_default();
                b.0 += w;
                b.1 += w * v;
            }
        }
        bins
    }

    fn bits(bins: &[(i32, (f64, f64))]) -> Vec<(i32, u64, u64)> {
        bins.iter()
            .map(|&(i, (w, s))| (i, w.to_bits(), s.to_bits()))
            .collect()
    }

    /// Values clustered around a mode, with far outliers, in random, ascending and
    /// descending runs: whatever lands in the dense vector or the map, the bins are the map's.
    fn values(seed: u64) -> Vec<(f64, f64)> {
        let mut x = seed;
        let mut next = move || (crate::number::xorshift(&mut x) >> 11) as f64 / (1u64 << 53) as f64;
        let mut out = vec![];
        for k in 0..3000 {
            let v = match k % 10 {
                0 => 10f64.powf(next() * 600.0 - 300.0),
                1 => 1e-3 * (1.0 + k as f64),
                2 => 1e6 / (1.0 + k as f64),
                3 => [0.0, -1.0, f64::MIN_POSITIVE / 4.0, f64::MAX, f64::NAN][k / 10 % 5],
                _ => 30.0 * (next() * 3.0).exp(),
            };
            out.push((v, (next() * 200.0).floor()));
        }
        out
    }

    #[test]
    fn weighted_bins_match_a_map() {
        for seed in 1..20 {
            let vs = values(seed);
            let mut w = Weighted::default();
            vs.iter().for_each(|&(v, x)| w.add(v, x));
            let want: Vec<_> = reference(&vs).into_iter().collect();
            assert_eq!(bits(&w.sorted_bins()), bits(&want));
            // Both places hold bins: the outliers in the map, the mode in the vector.
            assert!(!w.sparse.is_empty() && w.dense_bins > 300);
            // Merged halves: each bin adds the second half's sum to the first's.
            let (a, b) = vs.split_at(vs.len() / 3);
            let (mut wa, mut wb) = (Weighted::default(), Weighted::default());
            a.iter().for_each(|&(v, x)| wa.add(v, x));
            b.iter().for_each(|&(v, x)| wb.add(v, x));
            wa.merge(&wb);
            let mut ra = reference(a);
            for (i, (x, s)) in reference(b) {
                let e = ra.entry(i).or_default();
                e.0 += x;
                e.1 += s;
            }
            let want: Vec<_> = ra.into_iter().collect();
            assert_eq!(bits(&wa.sorted_bins()), bits(&want));
        }
    }

    #[test]
    fn weighted_bins_move_from_the_map_when_the_range_grows_over_them() {
        let mut w = Weighted::default();
        let at = |i: i32| WEIGHTED_GAMMA.powf(f64::from(i) + 0.5);
        w.add(at(0), 1.0);
        w.add(at(100), 2.0);
        assert_eq!(w.sparse.len(), 1);
        for i in 1..=40 {
            w.add(at(i), 1.0);
        }
        w.add(at(70), 1.0);
        assert!(w.sparse.is_empty());
        assert_eq!(w.dense_bins, 43);
        let vs: Vec<(f64, f64)> = [0, 100]
            .into_iter()
            .chain(1..=40)
            .chain([70])
            .map(|i| (at(i), if i == 100 { 2.0 } else { 1.0 }))
            .collect();
        let want: Vec<_> = reference(&vs).into_iter().collect();
        assert_eq!(bits(&w.sorted_bins()), bits(&want));
    }

    #[test]
    fn input_buckets_keep_their_order_past_those_a_prompt_can_fall_in() {
        let mut e = Extra::default();
        for (b, v) in [(70, 1.0), (3, 2.0), (0, 3.0), (57, 4.0)] {
            e.ttft_digest(b).add(v);
        }
        let mut loaded = Extra::load_json(&e.save_json()).unwrap();
        loaded.merge(&e);
        let got: Vec<(u32, u64)> = loaded
            .ttft_by_input_mut()
            .map(|(b, d)| (b, d.count()))
            .collect();
        assert_eq!(got, [(0, 2), (3, 2), (57, 2), (70, 2)]);
    }

    #[test]
    fn weighted_bins_set_from_a_file_are_kept_as_given() {
        let mut w = Weighted::default();
        for (i, b) in [
            (5, (0.0, 0.0)),
            (-3, (-0.0, 1.0)),
            (90000, (2.0, 3.0)),
            (5, (1.0, 7.0)),
        ] {
            *w.bin(i) = b;
        }
        let want = [(-3, (-0.0, 1.0)), (5, (1.0, 7.0)), (90000, (2.0, 3.0))];
        assert_eq!(bits(&w.sorted_bins()), bits(&want));
    }
}
