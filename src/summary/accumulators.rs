//! Accumulators of the analysis: per-group sums kept beside the digests while requests are
//! added (TTFT by prompt length and by cache class, TPOT by requests in flight, token-weighted
//! latencies), merged and saved with the group. [`crate::analysis`] reads them into a report.
//! No I/O; one request costs a few additions.

use crate::metrics::sweep::bucket;
use crate::metrics::{Metrics, NullReason, Origin};
use crate::summary::digest::{Digest, EXACT_LIMIT};
use crate::summary::log_bins::LogBins;
use serde_json::{Value as Json, json};
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// Bins per decade of the TTFT decomposition.
pub(crate) const DECOMPOSITION_BINS_PER_DECADE: f64 = 20.0;

/// Relative width of the token-weighted sketch's bins (1 %: quantiles within 1 %).
pub(crate) const WEIGHTED_GAMMA: f64 = 1.01;

/// The bin of a value of [`Weighted`]: `floor(ln v / ln γ)`, through a table of the edges.
static WEIGHTED_BINS: LazyLock<LogBins> = LazyLock::new(|| {
    LogBins::new(1.0 / WEIGHTED_GAMMA.ln(), |v| {
        crate::number::floor(v.ln() / WEIGHTED_GAMMA.ln()) as i32
    })
});

/// The bin of a TTFT in the decomposition: `floor(log10 t * bins per decade)`, the same way.
static DECOMPOSITION_BINS: LazyLock<LogBins> = LazyLock::new(|| {
    LogBins::new(
        DECOMPOSITION_BINS_PER_DECADE / std::f64::consts::LN_10,
        |t| crate::number::floor(t.log10() * DECOMPOSITION_BINS_PER_DECADE) as i32,
    )
});

/// Sums over the requests of one TTFT bin (ms, tokens).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Parts {
    pub(crate) n: f64,
    pub(crate) ttft: f64,
    pub(crate) queue: f64,
    pub(crate) prefill: f64,
    pub(crate) with_tokens: f64,
    pub(crate) tokens: f64,
}

impl Parts {
    pub(crate) fn add(&mut self, o: &Parts) {
        self.n += o.n;
        self.ttft += o.ttft;
        self.queue += o.queue;
        self.prefill += o.prefill;
        self.with_tokens += o.with_tokens;
        self.tokens += o.tokens;
    }
}

/// TPOT of the requests whose decode saw one bucket of in-flight counts, and the TTFT of
/// those of them with one (a candidate split of a multimodal TTFT: load).
#[derive(Debug, Clone, Default)]
pub(crate) struct InflightBucket {
    pub(crate) tpot: Digest,
    pub(crate) ttft: Digest,
    pub(crate) sum_inflight: f64,
}

/// Weighted quantiles in constant memory: weights (and weighted sums of the values) in bins
/// of relative width 1% (values `<= 0` in one bin of their own).
///
/// A bin is `(weight, weighted sum)`, created at `(0, 0)` by the first value it gets. The bins
/// of the common range sit in a dense vector (one bounds check per value, no hashing, the
/// neighbouring bins of the mode in the same cache lines); the others in an ordered map.
/// Where a bin sits changes no sum: each bin adds its values in the order they come.
#[derive(Debug, Clone, Default)]
pub(crate) struct Weighted {
    /// The index of the first bin of `dense`.
    pub(crate) lo: i32,
    /// Bins `lo..lo + dense.len()`; [`EMPTY_BIN`] where no value came yet.
    pub(crate) dense: Vec<(f64, f64)>,
    /// Bins of `dense` that are not [`EMPTY_BIN`].
    pub(crate) dense_bins: usize,
    /// The bins outside the dense range: bin index -> (weight, weighted sum).
    pub(crate) sparse: BTreeMap<i32, (f64, f64)>,
    /// Bins in `sparse` after the last [`Weighted::recentre`].
    pub(crate) sparse_recentred: usize,
    pub(crate) zero: f64,
    pub(crate) total: f64,
}

/// A dense slot no value came to: a weight no bin has (a signalling NaN, which no arithmetic
/// yields and a digest file, JSON, cannot hold), told apart by its bits ([`is_empty_bin`]).
pub(crate) const EMPTY_BIN: (f64, f64) = (f64::from_bits(0x7FF0_0000_0000_0001), 0.0);

/// Whether a dense slot is [`EMPTY_BIN`].
pub(crate) fn is_empty_bin(b: &(f64, f64)) -> bool {
    b.0.to_bits() == EMPTY_BIN.0.to_bits()
}

/// The dense range of a [`Weighted`] may span this many bins whatever it holds (16 bytes
/// each: 1 KiB)...
pub(crate) const DENSE_MIN_SPAN: i64 = 64;

/// ... or this many bins per bin in use (so a group with a few far-apart values keeps them in
/// the map, not in a long, mostly empty vector).
pub(crate) const DENSE_SPAN_PER_BIN: i64 = 4;

impl Weighted {
    /// Adds `v` with weight `w` (ignored unless both are finite and `w > 0`).
    pub(crate) fn add(&mut self, v: f64, w: f64) {
        if !(v.is_finite() && w.is_finite() && w > 0.0) {
            return;
        }
        self.total += w;
        if v <= 0.0 {
            self.zero += w;
        } else {
            let b = self.bin(WEIGHTED_BINS.bin(v));
            b.0 += w;
            b.1 += w * v;
        }
    }

    /// Bin `i`, created at `(0, 0)` if new.
    #[inline]
    pub(crate) fn bin(&mut self, i: i32) -> &mut (f64, f64) {
        // Below `lo` wraps to a huge offset: out of range, as above the end.
        let k = (i64::from(i) - i64::from(self.lo)) as usize;
        if k < self.dense.len() && !is_empty_bin(&self.dense[k]) {
            return &mut self.dense[k];
        }
        self.new_bin(i)
    }

    /// [`Weighted::bin`] for a bin not in the dense vector yet: placed there (growing the
    /// vector when the span it would cover allows it, [`DENSE_MIN_SPAN`] and
    /// [`DENSE_SPAN_PER_BIN`]), else in the map (which, grown to twice what it held after
    /// the last [`Weighted::recentre`], recentres the vector on the bins).
    #[cold]
    pub(crate) fn new_bin(&mut self, i: i32) -> &mut (f64, f64) {
        if !self.covers(i) && !self.grow_to(i) {
            let n = self.sparse.len();
            self.sparse.entry(i).or_default();
            let limit = DENSE_MIN_SPAN.max(2 * self.sparse_recentred as i64);
            if self.sparse.len() > n && self.sparse.len() as i64 >= limit {
                self.recentre();
            }
            if !self.covers(i) {
                return self.sparse.entry(i).or_default();
            }
        }
        let k = (i64::from(i) - i64::from(self.lo)) as usize;
        if is_empty_bin(&self.dense[k]) {
            self.dense[k] = (0.0, 0.0);
            self.dense_bins += 1;
        }
        &mut self.dense[k]
    }

    /// Whether bin `i` is in the dense range.
    pub(crate) fn covers(&self, i: i32) -> bool {
        let k = (i64::from(i) - i64::from(self.lo)) as usize;
        k < self.dense.len()
    }

    /// Grows the dense range to cover bin `i`, if the span allows it; false if not.
    pub(crate) fn grow_to(&mut self, i: i32) -> bool {
        let (i, lo) = (i64::from(i), i64::from(self.lo));
        let hi = lo + self.dense.len() as i64;
        let (need_lo, need_hi) = if self.dense.is_empty() {
            (i, i + 1)
        } else {
            (lo.min(i), hi.max(i + 1))
        };
        let bins = (self.dense_bins + self.sparse.len() + 1) as i64;
        if need_hi - need_lo > DENSE_MIN_SPAN.max(DENSE_SPAN_PER_BIN * bins) {
            return false;
        }
        // At least double the range (toward `i`), so that values coming in ascending or
        // descending order grow it a logarithmic number of times.
        let len = (need_hi - need_lo).max(2 * self.dense.len() as i64);
        let range = if self.dense.is_empty() || i >= hi {
            (need_lo, need_lo + len)
        } else {
            (need_hi - len, need_hi)
        };
        self.place(range);
        true
    }

    /// Makes `lo..hi` (clamped to the `i32` bins) the dense range, with every bin in it,
    /// and the others in the map.
    pub(crate) fn place(&mut self, (lo, hi): (i64, i64)) {
        let (lo, hi) = (lo.max(i64::from(i32::MIN)), hi.min(i64::from(i32::MAX) + 1));
        let old_lo = i64::from(self.lo);
        let old = std::mem::replace(&mut self.dense, vec![EMPTY_BIN; (hi - lo) as usize]);
        let old = (old_lo..).zip(old).filter(|(_, b)| !is_empty_bin(b));
        let sparse = std::mem::take(&mut self.sparse);
        self.lo = lo as i32;
        self.dense_bins = 0;
        for (j, b) in old.chain(sparse.into_iter().map(|(j, b)| (i64::from(j), b))) {
            if (lo..hi).contains(&j) {
                self.dense[(j - lo) as usize] = b;
                self.dense_bins += 1;
            } else {
                self.sparse.insert(j as i32, b);
            }
        }
    }

    /// Moves the dense range onto the bins: the middle 80 % of them (in index order) with
    /// half its span again on either side, at most what [`DENSE_SPAN_PER_BIN`] allows around
    /// the median bin. The range a first, outlying value set thus follows the values.
    pub(crate) fn recentre(&mut self) {
        let all = self.sorted_bins();
        let n = all.len();
        let at = |q: usize| i64::from(all[q].0);
        let (a, b) = (at(n / 10), at(n - 1 - n / 10));
        let half = (b - a) / 2 + 1;
        let (mut lo, mut hi) = (a - half, b + half + 1);
        let cap = DENSE_MIN_SPAN.max(DENSE_SPAN_PER_BIN * n as i64);
        if hi - lo > cap {
            lo = at(n / 2) - cap / 2;
            hi = lo + cap;
        }
        self.place((lo, hi));
        self.sparse_recentred = self.sparse.len();
    }

    /// The bins in no particular order: (index, (weight, weighted sum)).
    pub(crate) fn bins(&self) -> impl Iterator<Item = (i32, (f64, f64))> + '_ {
        let dense = (i64::from(self.lo)..).zip(&self.dense);
        let dense = dense.filter(|(_, b)| !is_empty_bin(b));
        let dense = dense.map(|(i, &b)| (i as i32, b));
        dense.chain(self.sparse.iter().map(|(&i, &b)| (i, b)))
    }

    /// The bins in value order: (index, (weight, weighted sum)).
    pub(crate) fn sorted_bins(&self) -> Vec<(i32, (f64, f64))> {
        let mut v: Vec<(i32, (f64, f64))> = self.bins().collect();
        v.sort_unstable_by_key(|&(i, _)| i);
        v
    }

    /// Adds `o`'s bins to these, bin by bin (the order they come in changes no sum).
    pub(crate) fn merge(&mut self, o: &Weighted) {
        self.total += o.total;
        self.zero += o.zero;
        for (i, (w, s)) in o.bins() {
            let b = self.bin(i);
            b.0 += w;
            b.1 += s;
        }
    }

    /// The weighted q-quantile: the weighted mean of the values in the bin where the
    /// cumulative weight reaches `q` of the total (within 1 % of the value, exact when the
    /// bin holds one value); `None` when empty.
    ///
    /// ```text
    /// use tokentime::analysis::Weighted;
    /// let mut w = Weighted::default();
    /// w.add(10.0, 1.0);
    /// w.add(100.0, 9.0);
    /// assert_eq!(w.quantile(0.5), Some(100.0));
    /// assert_eq!(w.quantile(0.05), Some(10.0));
    /// ```
    pub(crate) fn quantile(&self, q: f64) -> Option<f64> {
        if self.total <= 0.0 {
            return None;
        }
        let target = q.clamp(0.0, 1.0) * self.total;
        let mut acc = self.zero;
        if acc >= target && self.zero > 0.0 {
            return Some(0.0);
        }
        let mut last = None;
        for (_, (w, s)) in self.sorted_bins() {
            acc += w;
            last = Some(s / w);
            if acc >= target {
                break;
            }
        }
        last
    }
}

/// Bins of the per-request decode share (0.5 % wide).
pub(crate) const SHARE_BINS: usize = 200;

/// Counts of a share (0..=1) in [`SHARE_BINS`] equal bins: its median to 0.25 points.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ShareHist {
    pub(crate) bins: Vec<u64>,
    pub(crate) n: u64,
}

impl ShareHist {
    pub(crate) fn add(&mut self, share: f64) {
        if self.bins.is_empty() {
            self.bins = vec![0; SHARE_BINS];
        }
        let i = ((share.clamp(0.0, 1.0) * SHARE_BINS as f64) as usize).min(SHARE_BINS - 1);
        self.bins[i] += 1;
        self.n += 1;
    }

    pub(crate) fn merge(&mut self, o: &ShareHist) {
        if o.n == 0 {
            return;
        }
        if self.bins.is_empty() {
            self.bins = vec![0; SHARE_BINS];
        }
        for (a, b) in self.bins.iter_mut().zip(&o.bins) {
            *a += b;
        }
        self.n += o.n;
    }

    /// Appends the count of the next bin (reading a saved histogram in order).
    pub(crate) fn add_count(&mut self, c: u64) {
        if self.bins.len() < SHARE_BINS {
            self.bins.push(c);
            self.n += c;
        }
    }

    /// The median share: the middle of the bin holding the middle value.
    pub(crate) fn median(&self) -> Option<f64> {
        let target = self.n.div_ceil(2).max(1);
        let mut acc = 0;
        for (i, &c) in self.bins.iter().enumerate() {
            acc += c;
            if acc >= target {
                return Some((i as f64 + 0.5) / SHARE_BINS as f64);
            }
        }
        None
    }
}

/// The analysis accumulators of one group, fed with every request the group gets.
#[derive(Debug, Clone)]
pub(crate) struct Extra {
    pub(crate) limit: usize,
    pub(crate) decomposition: BTreeMap<i32, Parts>,
    /// TTFT (ms) by input-token bucket ([`input_bucket`]), indexed by the bucket: `None` where
    /// no request came. A direct index, not a map: one lookup per request and group.
    pub(crate) ttft_by_input: Vec<Option<Digest>>,
    /// Buckets past [`INPUT_BUCKETS`], which only a digest file can hold: kept as read.
    pub(crate) ttft_by_input_beyond: BTreeMap<u32, Digest>,
    pub(crate) inflight: BTreeMap<u32, InflightBucket>,
    /// Requests whose in-flight events came after the sweep had passed them (per input).
    pub late: u64,
    /// Events the sweep placed early because its buffer was full.
    pub forced: u64,
    pub(crate) weighted_tpot: Weighted,
    pub(crate) weighted_e2e: Weighted,
    pub(crate) decode_share: ShareHist,
    pub(crate) decode_ms: f64,
    pub(crate) e2e_ms: f64,
}

impl Default for Extra {
    fn default() -> Self {
        Extra::new(EXACT_LIMIT)
    }
}

/// The input-token bucket of a prompt: 0 for fewer than 128 tokens, then one per power of
/// two (`128-255` is 1, `256-511` is 2, ...).
pub(crate) fn input_bucket(tokens: u64) -> u32 {
    (64 - tokens.leading_zeros()).saturating_sub(7)
}

/// Input-token buckets a prompt can fall in: [`input_bucket`] of `u64::MAX` is 57.
pub(crate) const INPUT_BUCKETS: usize = 58;

pub(crate) fn input_bucket_range(b: u32) -> (u64, Option<u64>) {
    match b {
        0 => (0, Some(127)),
        _ => (1 << (b + 6), Some((1 << (b + 7)) - 1)),
    }
}

pub(crate) fn input_bucket_label(b: u32) -> String {
    match input_bucket_range(b) {
        (0, _) => "<128".into(),
        (lo, Some(hi)) => format!("{lo}-{hi}"),
        (lo, None) => format!("{lo}+"),
    }
}

impl Extra {
    /// Empty accumulators whose digests stay exact up to `limit` values.
    pub(crate) fn new(limit: usize) -> Self {
        Extra {
            limit,
            decomposition: BTreeMap::new(),
            ttft_by_input: Vec::new(),
            ttft_by_input_beyond: BTreeMap::new(),
            inflight: BTreeMap::new(),
            late: 0,
            forced: 0,
            weighted_tpot: Weighted::default(),
            weighted_e2e: Weighted::default(),
            decode_share: ShareHist::default(),
            decode_ms: 0.0,
            e2e_ms: 0.0,
        }
    }

    /// Adds one request's metrics (errors and response-cache answers carry no latency and add
    /// nothing).
    pub(crate) fn add(&mut self, m: &Metrics) {
        let ms = |v: Result<f64, NullReason>| v.ok().map(|ns| ns / 1e6);
        let (ttft, queue, prefill) = (ms(m.ttft), ms(m.queue), ms(m.prefill));
        if let (Some(t), Some(q), Some(p)) = (ttft, queue, prefill)
            && t > 0.0
            && m.ttft_origin != Some(Origin::Scheduled)
        {
            let bin = DECOMPOSITION_BINS.bin(t);
            let tok = m.input_tokens.map(|n| n as f64);
            self.decomposition.entry(bin).or_default().add(&Parts {
                n: 1.0,
                ttft: t,
                queue: q,
                prefill: p,
                with_tokens: tok.map_or(0.0, |_| 1.0),
                tokens: tok.unwrap_or(0.0),
            });
        }
        if let (Some(t), Some(n)) = (ttft, m.input_tokens) {
            self.ttft_digest(input_bucket(n)).add(t);
        }
        let tpot = ms(m.tpot);
        if let (Some(t), Some(n)) = (tpot, m.output_tokens) {
            self.weighted_tpot.add(t, n.saturating_sub(1) as f64);
        }
        let e2e = ms(m.e2e);
        if let (Some(e), Some(n)) = (e2e, m.output_tokens) {
            self.weighted_e2e.add(e, n as f64);
            // Decode, TPOT x (output tokens - 1) (SPEC: TPOT is decode over the tokens after
            // the first); one token (no TPOT) is no decode at all.
            let decode = match m.tpot {
                Ok(_) => tpot.map(|t| t * n.saturating_sub(1) as f64),
                Err(NullReason::OneToken) => Some(0.0),
                Err(_) => None,
            };
            if let Some(d) = decode
                && e > 0.0
            {
                self.decode_share.add((d / e).min(1.0));
                self.decode_ms += d.min(e);
                self.e2e_ms += e;
            }
        }
    }

    /// The TTFT digest of input-token bucket `b`, created if new.
    #[inline]
    pub(crate) fn ttft_digest(&mut self, b: u32) -> &mut Digest {
        let limit = self.limit;
        let new = || Digest::with_limit(limit);
        let i = b as usize;
        if i >= INPUT_BUCKETS {
            return self.ttft_by_input_beyond.entry(b).or_insert_with(new);
        }
        if i >= self.ttft_by_input.len() {
            self.ttft_by_input.resize_with(i + 1, || None);
        }
        self.ttft_by_input[i].get_or_insert_with(new)
    }

    /// The TTFT digests by input-token bucket, in bucket order.
    pub(crate) fn ttft_by_input_mut(&mut self) -> impl Iterator<Item = (u32, &mut Digest)> {
        let dense = self.ttft_by_input.iter_mut().enumerate();
        let dense = dense.filter_map(|(b, d)| Some((b as u32, d.as_mut()?)));
        dense.chain(self.ttft_by_input_beyond.iter_mut().map(|(&b, d)| (b, d)))
    }

    /// Adds one request's TPOT and TTFT (ms; TTFT NaN where it has none) with the mean number
    /// of requests in flight during its decode ([`crate::metrics::sweep`]).
    pub(crate) fn add_inflight(&mut self, inflight: f64, tpot_ms: f64, ttft_ms: f64) {
        let limit = self.limit;
        let b = self
            .inflight
            .entry(bucket(inflight))
            .or_insert_with(|| InflightBucket {
                tpot: Digest::with_limit(limit),
                ttft: Digest::with_limit(limit),
                sum_inflight: 0.0,
            });
        b.tpot.add(tpot_ms);
        if !ttft_ms.is_nan() {
            b.ttft.add(ttft_ms);
        }
        b.sum_inflight += inflight;
    }

    /// The accumulators as saved in a digest file (the group's `analysis` member,
    /// docs/digests.md).
    pub(crate) fn save_json(&mut self) -> Json {
        use crate::summary::digest_file::digest_json;
        let weighted = |w: &Weighted| {
            json!({
                "total": w.total,
                "zero": w.zero,
                "bins": w.sorted_bins().iter().map(|(i, (x, s))| json!([i, x, s])).collect::<Vec<_>>(),
            })
        };
        json!({
            "ttft_decomposition": self.decomposition.iter().map(|(b, p)| json!(
                [b, p.n, p.ttft, p.queue, p.prefill, p.with_tokens, p.tokens]
            )).collect::<Vec<_>>(),
            "ttft_by_input_tokens": self.ttft_by_input_mut()
                .map(|(b, d)| json!([b, digest_json(d)])).collect::<Vec<_>>(),
            "tpot_by_in_flight": self.inflight.iter_mut()
                .map(|(b, x)| json!([b, x.sum_inflight, digest_json(&mut x.tpot)])).collect::<Vec<_>>(),
            "ttft_by_in_flight": self.inflight.iter_mut().filter(|(_, x)| x.ttft.count() > 0)
                .map(|(b, x)| json!([b, digest_json(&mut x.ttft)])).collect::<Vec<_>>(),
            "late": self.late,
            "forced": self.forced,
            "weighted_tpot": weighted(&self.weighted_tpot),
            "weighted_e2e": weighted(&self.weighted_e2e),
            "decode_share": self.decode_share.bins,
            "decode_ms": self.decode_ms,
            "e2e_ms": self.e2e_ms,
        })
    }

    /// Reads what [`Extra::save_json`] wrote.
    ///
    /// # Errors
    /// A message naming the first member that is missing or malformed.
    pub(crate) fn load_json(j: &Json) -> Result<Extra, String> {
        use crate::summary::digest_file::digest_from_json;
        let mut e = Extra::default();
        let arr = |k: &str| {
            j[k].as_array()
                .ok_or_else(|| format!("analysis.{k} must be an array"))
        };
        let num = |v: &Json, k: &str| {
            v.as_f64()
                .ok_or_else(|| format!("analysis.{k} holds numbers"))
        };
        for row in arr("ttft_decomposition")? {
            let f = |i: usize| num(&row[i], "ttft_decomposition");
            let bin = row[0]
                .as_i64()
                .ok_or("analysis.ttft_decomposition bins are integers")?;
            e.decomposition.insert(
                bin as i32,
                Parts {
                    n: f(1)?,
                    ttft: f(2)?,
                    queue: f(3)?,
                    prefill: f(4)?,
                    with_tokens: f(5)?,
                    tokens: f(6)?,
                },
            );
        }
        let bucket = |v: &Json, k: &str| {
            v.as_u64()
                .map(|b| b as u32)
                .ok_or_else(|| format!("analysis.{k} buckets are integers"))
        };
        for row in arr("ttft_by_input_tokens")? {
            let b = bucket(&row[0], "ttft_by_input_tokens")?;
            *e.ttft_digest(b) = digest_from_json(&row[1], "ttft_by_input_tokens")?;
        }
        for row in arr("tpot_by_in_flight")? {
            let b = bucket(&row[0], "tpot_by_in_flight")?;
            e.inflight.insert(
                b,
                InflightBucket {
                    sum_inflight: num(&row[1], "tpot_by_in_flight")?,
                    tpot: digest_from_json(&row[2], "tpot_by_in_flight")?,
                    ttft: Digest::with_limit(e.limit),
                },
            );
        }
        // Absent from files written before it: the in-flight split of TTFT is then not tried.
        if !j["ttft_by_in_flight"].is_null() {
            for row in arr("ttft_by_in_flight")? {
                let b = bucket(&row[0], "ttft_by_in_flight")?;
                let d = digest_from_json(&row[1], "ttft_by_in_flight")?;
                let x = e
                    .inflight
                    .get_mut(&b)
                    .ok_or("analysis.ttft_by_in_flight has a bucket tpot_by_in_flight lacks")?;
                x.ttft = d;
            }
        }
        let count = |k: &str| {
            j[k].as_u64()
                .ok_or_else(|| format!("analysis.{k} must be a count"))
        };
        e.late = count("late")?;
        e.forced = count("forced")?;
        for (k, w) in [
            ("weighted_tpot", &mut e.weighted_tpot),
            ("weighted_e2e", &mut e.weighted_e2e),
        ] {
            w.total = num(&j[k]["total"], k)?;
            w.zero = num(&j[k]["zero"], k)?;
            for b in j[k]["bins"]
                .as_array()
                .ok_or_else(|| format!("analysis.{k}.bins must be an array"))?
            {
                let i = b[0].as_i64().ok_or("weighted bins are integers")?;
                *w.bin(i as i32) = (num(&b[1], k)?, num(&b[2], k)?);
            }
        }
        let bins = j["decode_share"]
            .as_array()
            .ok_or("analysis.decode_share must be an array")?;
        if !bins.is_empty() {
            if bins.len() != SHARE_BINS {
                return Err(format!("analysis.decode_share must have {SHARE_BINS} bins"));
            }
            for b in bins {
                e.decode_share
                    .add_count(b.as_u64().ok_or("analysis.decode_share holds counts")?);
            }
        }
        e.decode_ms = num(&j["decode_ms"], "decode_ms")?;
        e.e2e_ms = num(&j["e2e_ms"], "e2e_ms")?;
        Ok(e)
    }

    /// Adds everything of `o`.
    pub(crate) fn merge(&mut self, o: &Extra) {
        for (k, p) in &o.decomposition {
            self.decomposition.entry(*k).or_default().add(p);
        }
        let theirs = o.ttft_by_input.iter().enumerate();
        let theirs = theirs.filter_map(|(b, d)| Some((b as u32, d.as_ref()?)));
        for (b, d) in theirs.chain(o.ttft_by_input_beyond.iter().map(|(&b, d)| (b, d))) {
            self.ttft_digest(b).merge(d);
        }
        let limit = self.limit;
        for (k, b) in &o.inflight {
            let mine = self.inflight.entry(*k).or_insert_with(|| InflightBucket {
                tpot: Digest::with_limit(limit),
                ttft: Digest::with_limit(limit),
                sum_inflight: 0.0,
            });
            mine.tpot.merge(&b.tpot);
            mine.ttft.merge(&b.ttft);
            mine.sum_inflight += b.sum_inflight;
        }
        self.late += o.late;
        self.forced += o.forced;
        self.weighted_tpot.merge(&o.weighted_tpot);
        self.weighted_e2e.merge(&o.weighted_e2e);
        self.decode_share.merge(&o.decode_share);
        self.decode_ms += o.decode_ms;
        self.e2e_ms += o.e2e_ms;
    }
}

/// The examples in this file's docs, run.
#[cfg(test)]
mod doc_examples {
    use super::*;

    #[test]
    fn example_of_quantile() {
        let mut w = Weighted::default();
        w.add(10.0, 1.0);
        w.add(100.0, 9.0);
        assert_eq!(w.quantile(0.5), Some(100.0));
        assert_eq!(w.quantile(0.05), Some(10.0));
    }
}
