//! Digests: the distribution of one metric in one group, exact while small, a t-digest beyond.
//!
//! Owns quantile arithmetic. Holds every value while there are at most [`EXACT_LIMIT`] of them
//! and answers exact quantiles by linear interpolation between order statistics (Hyndman-Fan
//! type 7, numpy's default, the definition vLLM's and LLMPerf's benchmarks report); past that
//! it moves to a t-digest (the `tdigest` crate) of [`COMPRESSION`] centroids. No I/O.
//!
//! In t-digest mode values are collected [`PENDING`] at a time, sorted by their bit patterns
//! (as integers, by a radix sort: `radsort`, ~20% faster a value added than `sort_unstable`
//! of the integers, itself twice as fast as comparing floats; on their top 32 bits, the rare
//! ties then put in order by insertion, half the passes of a sort on all 64) and folded into
//! the digest in one merge. Pushing them one by one into the crate's own buffer cost ~80 ns a value, the
//! largest single cost of `tokentime summary` after the JSON reading.

use tdigest::{Centroid, TDigest};

/// A digest's contents, as saved in a digest file.
#[derive(Debug, Clone, PartialEq)]
pub struct Exported {
    /// Number of values.
    pub count: u64,
    /// Sum of the values.
    pub sum: f64,
    /// Smallest value (0 when empty).
    pub min: f64,
    /// Largest value (0 when empty).
    pub max: f64,
    /// The values themselves or their centroids.
    pub values: Values,
    /// With centroids: every distinct value and how many times it came, while there were at
    /// most [`ATOM_LIMIT`] distinct values (see [`Digest`]); `None` beyond, or when exact.
    pub atoms: Option<Vec<(f64, u64)>>,
}

/// The values of an [`Exported`] digest.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// Every value, sorted (at most [`EXACT_LIMIT`]).
    Exact(Vec<f64>),
    /// t-digest centroids as `(mean, weight)`, sorted by mean.
    Centroids(Vec<(f64, f64)>),
}

/// Values held exactly before switching to a t-digest (SPEC section 4).
pub const EXACT_LIMIT: usize = 10_000;

/// t-digest compression (maximum centroids).
pub(crate) const COMPRESSION: usize = 1000;

/// Values collected before they are folded into the t-digest.
pub(crate) const PENDING: usize = 4096;

/// Distinct values counted past the exact limit (see [`Digest`]).
pub(crate) const ATOM_LIMIT: usize = 256;

/// The distribution of one metric.
///
/// Past the exact limit, while the values seen are at most [`ATOM_LIMIT`] distinct ones
/// (token counts of a synthetic benchmark, a cache size in blocks, a clock in whole ms), the
/// digest also counts each distinct value: its quantiles stay exact (type 7 over the counted
/// values, where a t-digest would interpolate between them and call 256 tokens 254.3). The
/// counts are kept from fold to fold (merged like the t-digest) and dropped for good at the
/// 257th distinct value.
#[derive(Debug, Clone)]
pub struct Digest {
    /// Every value while exact; in t-digest mode, the values not yet folded into `td`.
    exact: Vec<f64>,
    sorted: bool,
    td: Option<TDigest>,
    count: u64,
    sum: f64,
    min: f64,
    max: f64,
    limit: usize,
    /// In t-digest mode: each distinct value folded in so far and its count, sorted, while
    /// there are at most [`ATOM_LIMIT`] of them; `None` after.
    atoms: Option<Vec<(f64, u64)>>,
}

impl Default for Digest {
    fn default() -> Self {
        Digest::with_limit(EXACT_LIMIT)
    }
}

impl Digest {
    /// A digest that stays exact up to `limit` values (`--exact-limit`; [`EXACT_LIMIT`] by
    /// default).
    pub fn with_limit(limit: usize) -> Self {
        Digest {
            limit,
            exact: Vec::new(),
            sorted: true,
            td: None,
            count: 0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            atoms: Some(Vec::new()),
        }
    }

    /// Adds one value. Non-finite values are ignored (they never reach here from the metrics).
    pub fn add(&mut self, v: f64) {
        if !v.is_finite() {
            return;
        }
        self.count += 1;
        self.sum += v;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.reserve_one();
        self.exact.push(v);
        self.sorted = false;
        self.fold_if_full();
    }

    /// Folds the collected values into the t-digest once there are more than the exact limit
    /// (exact mode) or [`PENDING`] of them (t-digest mode).
    #[inline(always)]
    fn fold_if_full(&mut self) {
        let full = match self.td {
            None => self.exact.len() > self.limit,
            Some(_) => self.exact.len() >= PENDING,
        };
        if full {
            self.fold();
        }
    }

    /// Makes room for one more value. Near the exact limit it grows the buffer to just the
    /// limit (plus the one value that triggers the fold) instead of doubling past it: an exact
    /// digest of 10 000 values holds 80 KB, not the 128 KB a doubled buffer would.
    #[inline(always)]
    fn reserve_one(&mut self) {
        let (len, cap) = (self.exact.len(), self.exact.capacity());
        if len == cap && self.td.is_none() && cap.saturating_mul(2) > self.limit + 1 {
            self.exact
                .reserve_exact((self.limit + 1).saturating_sub(len).max(1));
        }
    }

    /// Moves the collected values into the t-digest (creating it when exact).
    fn fold(&mut self) {
        let td = self
            .td
            .take()
            .unwrap_or_else(|| TDigest::new_with_size(COMPRESSION));
        if self.exact.is_empty() {
            self.td = Some(td);
            return;
        }
        // Finite values order as their bit patterns do once negative ones are flipped; those are
        // sorted as integers, by radix (equal keys are equal values: the order is the one any
        // sort gives). Both conversions collect in place, reusing the buffer; the radix sort
        // takes a scratch buffer of the batch's size.
        let steady = td.count() > 0.0;
        let mut keys: Vec<u64> = std::mem::take(&mut self.exact)
            .into_iter()
            .map(|v| {
                let b = v.to_bits();
                if b >> 63 == 1 { !b } else { b | 1 << 63 }
            })
            .collect();
        sort_keys(&mut keys);
        let mut values: Vec<f64> = keys
            .into_iter()
            .map(|k| f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k }))
            .collect();
        self.atoms = self
            .atoms
            .take()
            .and_then(|a| merge_atoms(&a, &runs(&values)));
        self.td = Some(merge_sorted(&td, &values));
        // A digest that folded before keeps its batch's buffer for the next batch (no growing
        // it again, a copy each doubling); one that just left exact mode starts a new one,
        // grown as values come (a window of `--bucket` that got a few more holds a few, not
        // a batch's 32 KB).
        if steady && values.capacity() <= PENDING {
            values.clear();
            self.exact = values;
        } else {
            self.exact = Vec::new();
        }
    }

    /// Adds every value of `other`, as if they had been added here: exact while the total
    /// stays within this digest's limit; beyond, values `other` still holds one by one are folded
    /// in as values (which keeps merged estimates as close as if one digest had seen them
    /// all), and two t-digests are merged.
    pub fn merge(&mut self, other: &Digest) {
        if other.count == 0 {
            return;
        }
        match (&self.td, &other.td) {
            (_, None) => {
                self.exact.extend_from_slice(&other.exact);
                self.sorted = false;
                self.fold_if_full();
            }
            (None, Some(_)) => {
                let mut theirs = other.clone();
                theirs.exact.extend_from_slice(&self.exact);
                theirs.fold();
                self.td = theirs.td;
                self.atoms = theirs.atoms;
                self.exact = Vec::new();
            }
            (Some(_), Some(_)) => {
                let mut mine = self.take_tdigest();
                let mut other = other.clone();
                let mut theirs = other.take_tdigest();
                mine.flush();
                theirs.flush();
                self.td = Some(TDigest::merge_digests(vec![mine, theirs]));
                self.atoms = match (&self.atoms, &other.atoms) {
                    (Some(a), Some(b)) => merge_atoms(a, b),
                    _ => None,
                };
            }
        }
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// This digest's values as a t-digest (moving exact or collected values into one).
    fn take_tdigest(&mut self) -> TDigest {
        self.fold();
        self.exact = Vec::new();
        self.td
            .take()
            .unwrap_or_else(|| TDigest::new_with_size(COMPRESSION))
    }

    /// Number of values.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// True while quantiles are exact: every value is held, or, past the exact limit, every
    /// distinct value is counted.
    pub fn is_exact(&mut self) -> bool {
        if self.td.is_some() && self.atoms.is_some() && !self.exact.is_empty() {
            // Whether the values not yet folded in are few distinct ones too.
            self.fold();
        }
        self.td.is_none() || self.atoms.is_some()
    }

    /// Smallest value, `None` when empty.
    pub fn min(&self) -> Option<f64> {
        (self.count > 0).then_some(self.min)
    }

    /// Largest value, `None` when empty.
    pub fn max(&self) -> Option<f64> {
        (self.count > 0).then_some(self.max)
    }

    /// Arithmetic mean, `None` when empty. While exact it is summed over the sorted values, so
    /// the same values give the same mean to the last bit whatever order they came in (a
    /// merge of digests prints what one run over all inputs prints).
    pub fn mean(&mut self) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        if self.td.is_none() {
            self.sort_exact();
            return Some(self.exact.iter().sum::<f64>() / self.count as f64);
        }
        Some(self.sum / self.count as f64)
    }

    /// Sum of the values (0 when empty), summed in sorted order while exact.
    pub fn sum(&mut self) -> f64 {
        if self.td.is_none() {
            self.sort_exact();
            return self.exact.iter().sum();
        }
        self.sum
    }

    fn sort_exact(&mut self) {
        if !self.sorted {
            self.exact.sort_unstable_by(f64::total_cmp);
            self.sorted = true;
        }
    }

    /// The digest's contents for saving ([`crate::summary::digest_file`]): count, sum, min, max and
    /// either every value (sorted, while exact) or the t-digest's centroids as
    /// `(mean, weight)` pairs.
    pub fn export(&mut self) -> Exported {
        if self.td.is_some() {
            self.fold();
        }
        let values = match &mut self.td {
            Some(td) => {
                td.flush();
                Values::Centroids(
                    td.centroids()
                        .iter()
                        .map(|c| (c.mean(), c.weight()))
                        .collect(),
                )
            }
            None => {
                self.sort_exact();
                Values::Exact(self.exact.clone())
            }
        };
        Exported {
            count: self.count,
            sum: self.sum,
            min: self.min().unwrap_or(0.0),
            max: self.max().unwrap_or(0.0),
            atoms: self.td.as_ref().and(self.atoms.clone()),
            values,
        }
    }

    /// Rebuilds a digest from [`Digest::export`]'s contents (the t-digest with
    /// `TDigest::new`, never through the `tdigest` crate's serde support).
    ///
    /// # Errors
    /// A message when the parts disagree: exact values whose number is not `count`,
    /// non-finite numbers, centroid weights that do not add up to `count`, atoms that do not.
    pub fn import(e: Exported) -> Result<Digest, String> {
        if e.count == 0 {
            return Ok(Digest::default());
        }
        if !(e.sum.is_finite() && e.min.is_finite() && e.max.is_finite() && e.min <= e.max) {
            return Err("sum, min and max must be finite numbers with min <= max".into());
        }
        let mut d = Digest {
            count: e.count,
            sum: e.sum,
            min: e.min,
            max: e.max,
            ..Digest::default()
        };
        match e.values {
            Values::Exact(v) => {
                if v.len() as u64 != e.count {
                    return Err(format!(
                        "{} exact values for a count of {}",
                        v.len(),
                        e.count
                    ));
                }
                // Saved by a run with a higher `--exact-limit`: it stays exact here too (the
                // summary it is merged into keeps that run's limit).
                d.limit = d.limit.max(v.len());
                if v.iter().any(|x| !x.is_finite()) {
                    return Err("exact values must be finite".into());
                }
                if let Some(x) = v.iter().find(|&&x| x < e.min || x > e.max) {
                    return Err(format!(
                        "exact value {x} outside min..max ({}..{})",
                        e.min, e.max
                    ));
                }
                d.exact = v;
                d.sorted = false;
            }
            Values::Centroids(c) => {
                let weight: f64 = c.iter().map(|&(_, w)| w).sum();
                if c.iter()
                    .any(|&(m, w)| !m.is_finite() || w.is_nan() || w <= 0.0)
                    || (weight - e.count as f64).abs() > 1e-6 * e.count as f64
                {
                    return Err(format!(
                        "centroid weights add up to {weight}, not the count {}",
                        e.count
                    ));
                }
                d.atoms = match e.atoms {
                    Some(a) => {
                        let n = a.iter().try_fold(0u64, |s, &(_, n)| s.checked_add(n));
                        if n != Some(e.count)
                            || a.len() > ATOM_LIMIT
                            || a.iter().any(|&(v, n)| !v.is_finite() || n == 0)
                            || a.windows(2).any(|w| w[0].0 >= w[1].0)
                            || a.iter().any(|&(v, _)| v < e.min || v > e.max)
                        {
                            return Err(format!(
                                "atoms must be at most {ATOM_LIMIT} increasing finite values within min..max whose counts add up to the count {}",
                                e.count
                            ));
                        }
                        Some(a)
                    }
                    None => None,
                };
                let centroids = c.into_iter().map(|(m, w)| Centroid::new(m, w)).collect();
                d.td = Some(TDigest::new(
                    centroids,
                    e.sum,
                    e.count as f64,
                    Some(e.max),
                    Some(e.min),
                    COMPRESSION,
                ));
            }
        }
        Ok(d)
    }

    /// The q-quantile (`q` in 0..=1), `None` when empty. Exact (type 7) while exact.
    pub fn quantile(&mut self, q: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        if self.td.is_some() {
            self.fold();
        }
        if let (Some(_), Some(atoms)) = (&self.td, &self.atoms) {
            return Some(quantile_counted(atoms, q));
        }
        match &mut self.td {
            Some(td) => {
                td.flush();
                td.estimate_quantile(q).map(|v| v.clamp(self.min, self.max))
            }
            None => {
                self.sort_exact();
                Some(quantile_sorted(&self.exact, q))
            }
        }
    }
}

/// Type-7 quantile of sorted, non-empty `xs`: `h = (n-1)q`, interpolate between `xs[floor h]`
/// and the next.
///
/// ```text
/// use tokentime::digest::quantile_sorted;
/// assert_eq!(quantile_sorted(&[1.0, 2.0, 3.0, 4.0], 0.5), 2.5);
/// assert_eq!(quantile_sorted(&[1.0, 2.0, 3.0, 4.0], 0.9), 3.7);
/// ```
///
/// # Panics
/// When `xs` is empty.
pub fn quantile_sorted(xs: &[f64], q: f64) -> f64 {
    let h = (xs.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(xs.len() - 1);
    xs[lo] + (h - lo as f64) * (xs[hi] - xs[lo])
}

/// Type-7 quantile of the values `atoms` counts (sorted distinct values and their counts,
/// not empty): [`quantile_sorted`] of the values written out.
fn quantile_counted(atoms: &[(f64, u64)], q: f64) -> f64 {
    let n: u64 = atoms.iter().map(|&(_, c)| c).sum();
    let h = n.saturating_sub(1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as u64;
    // The value of rank `r` (0-based).
    let at = |r: u64| {
        let mut seen = 0;
        for &(v, c) in atoms {
            seen += c;
            if r < seen {
                return v;
            }
        }
        atoms[atoms.len() - 1].0
    };
    let (a, b) = (at(lo), at((lo + 1).min(n.saturating_sub(1))));
    a + (h - lo as f64) * (b - a)
}

/// The runs of equal values in sorted `values`, as (value, count).
fn runs(values: &[f64]) -> Vec<(f64, u64)> {
    let mut out: Vec<(f64, u64)> = Vec::new();
    for &v in values {
        match out.last_mut() {
            Some((last, n)) if *last == v => *n += 1,
            _ => out.push((v, 1)),
        }
    }
    out
}

/// `td` with the sorted finite `values` folded in: the `tdigest` crate's `merge_sorted`, to the
/// bit (the same merge of centroids and values, the same limits and arithmetic), over a slice
/// (the caller keeps its buffer) and without the crate's iterator adapters, which cost about a
/// third of the merge.
fn merge_sorted(td: &TDigest, values: &[f64]) -> TDigest {
    let (Some(&first), Some(&last)) = (values.first(), values.last()) else {
        return td.clone();
    };
    let (min, max) = match (td.min(), td.max()) {
        (Some(lo), Some(hi)) if td.count() > 0.0 => (lo.min(first), hi.max(last)),
        _ => (first, last),
    };
    let count = td.count() + values.len() as f64;
    let sum = td.sum() + values.iter().sum::<f64>();
    let max_size = td.max_size();
    let limit = |k: f64| {
        if k >= max_size as f64 {
            f64::INFINITY
        } else {
            let d = max_size as f64;
            let k_div_d = k / d;
            let q = if k_div_d >= 0.5 {
                let base = 1.0 - k_div_d;
                1.0 - 2.0 * base * base
            } else {
                2.0 * k_div_d * k_div_d
            };
            q * count
        }
    };
    let centroids = td.centroids();
    let mut out: Vec<Centroid> =
        Vec::with_capacity(max_size.min(centroids.len().saturating_add(values.len())));
    let mut k_limit = 1.0;
    let mut q_limit = limit(k_limit);
    k_limit += 1.0;
    // The merged sequence: a centroid goes first only when its mean is below the value.
    let (mut i, mut j) = (0, 0);
    let mut next = || -> Option<(f64, f64)> {
        match (centroids.get(i), values.get(j)) {
            (Some(c), v) if v.is_none_or(|&v| c.mean() < v) => {
                i += 1;
                Some((c.mean(), c.weight()))
            }
            (_, Some(&v)) => {
                j += 1;
                Some((v, 1.0))
            }
            _ => None,
        }
    };
    let Some((mut mean, mut weight)) = next() else {
        return td.clone();
    };
    let mut weight_so_far = weight;
    while let Some((m, w)) = next() {
        weight_so_far += w;
        if weight_so_far <= q_limit {
            (mean, weight) = merge_centroid(mean, weight, m, w);
        } else {
            out.push(Centroid::new(mean, weight));
            q_limit = limit(k_limit);
            k_limit += 1.0;
            (mean, weight) = (m, w);
        }
    }
    out.push(Centroid::new(mean, weight));
    // `TDigest::new` sorts the centroids, as the crate's merge does.
    TDigest::new(out, sum, count, Some(max), Some(min), max_size)
}

/// The `tdigest` crate's merge of a centroid `(mean, weight)` with another: the weighted mean,
/// or, when rounding puts that outside the two means, their interpolation.
#[inline(always)]
fn merge_centroid(mean: f64, weight: f64, m: f64, w: f64) -> (f64, f64) {
    let new_weight = weight + w;
    if mean == m {
        return (mean, new_weight);
    }
    let added = w / new_weight;
    let combined = mean * (1.0 - added) + m * added;
    let merged = if !combined.is_finite()
        || (combined < mean && combined < m)
        || (combined > mean && combined > m)
    {
        if mean.is_sign_negative() == m.is_sign_negative() {
            mean + (m - mean) * added
        } else {
            mean * (1.0 - added) + m * added
        }
    } else {
        combined
    };
    (merged, new_weight)
}

/// Sorts `keys` (the order-preserving integers of [`Digest::fold`]): by radix on their top 32
/// bits (sign, exponent and the first 20 bits of the fraction: 4 passes of a byte, not 8),
/// then by insertion, which moves only keys equal in their top 32 bits (rare but for equal
/// values); past as many moves as keys, by a full sort. The result is the one any sort gives.
fn sort_keys(keys: &mut [u64]) {
    radsort::sort_by_key(keys, |&k| (k >> 32) as u32);
    let mut moves = 0;
    for i in 1..keys.len() {
        let x = keys[i];
        if keys[i - 1] > x {
            let mut j = i;
            while j > 0 && keys[j - 1] > x {
                keys[j] = keys[j - 1];
                j -= 1;
            }
            keys[j] = x;
            moves += i - j;
            if moves > keys.len() {
                keys.sort_unstable();
                return;
            }
        }
    }
}

/// Two sorted (value, count) lists merged, counts of equal values added; `None` past
/// [`ATOM_LIMIT`] distinct values.
fn merge_atoms(a: &[(f64, u64)], b: &[(f64, u64)]) -> Option<Vec<(f64, u64)>> {
    if b.len() > ATOM_LIMIT {
        return None;
    }
    let mut out = Vec::with_capacity((a.len() + b.len()).min(ATOM_LIMIT + 1));
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let next = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) if x.0 == y.0 => {
                i += 1;
                j += 1;
                (x.0, x.1 + y.1)
            }
            (Some(&x), Some(&y)) if x.0 < y.0 => {
                i += 1;
                x
            }
            (Some(&x), None) => {
                i += 1;
                x
            }
            (_, Some(&y)) => {
                j += 1;
                y
            }
            (None, None) => break,
        };
        out.push(next);
        if out.len() > ATOM_LIMIT {
            return None;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The radix sort on the top 32 bits with its runs fixed up sorts as a full sort does:
    /// keys far apart, keys equal in their top 32 bits in every order, equal keys.
    #[test]
    fn keys_sort_as_a_full_sort_does() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for tops in [1u64, 3, 50, 1 << 20, u64::MAX] {
            let mut keys: Vec<u64> = (0..5000)
                .map(|i| {
                    let r = next();
                    let top = if tops == u64::MAX { r >> 32 } else { r % tops };
                    top << 32 | if i % 7 == 0 { 5 } else { r & 0xffff_ffff }
                })
                .collect();
            let mut want = keys.clone();
            want.sort_unstable();
            sort_keys(&mut keys);
            assert_eq!(keys, want, "{tops} distinct tops");
        }
    }

    /// The merge of a sorted batch into a t-digest is the `tdigest` crate's `merge_sorted`
    /// to the bit: every centroid, the count, sum, min and max, batch after batch, on
    /// latency-like values, on values of few distinct levels (ties between a centroid's mean
    /// and a value), on negative and mixed-sign values and on huge ones.
    #[test]
    fn the_batch_merge_is_the_crates_to_the_bit() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let shapes: [&dyn Fn(f64) -> f64; 5] = [
            &|u| (u * 6.0).exp() * 3.7,
            &|u| (u * 8.0).floor() * 25.0,
            &|u| (u - 0.5) * 1e3,
            &|u| -(u * 4.0).exp(),
            &|u| f64::MAX * (0.25 + u / 2.0),
        ];
        for (s, shape) in shapes.iter().enumerate() {
            let (mut ours, mut theirs) = (
                TDigest::new_with_size(COMPRESSION),
                TDigest::new_with_size(COMPRESSION),
            );
            for batch in [1, 7, 4096, 4096, 333, 4096, 1, 4096] {
                let mut values: Vec<f64> = (0..batch).map(|_| shape(next())).collect();
                values.sort_by(f64::total_cmp);
                ours = merge_sorted(&ours, &values);
                theirs = theirs.merge_sorted(values);
                let bits = |t: &TDigest| {
                    let c: Vec<(u64, u64)> = t
                        .centroids()
                        .iter()
                        .map(|c| (c.mean().to_bits(), c.weight().to_bits()))
                        .collect();
                    let f = |v: Option<f64>| v.map(f64::to_bits);
                    (
                        c,
                        t.count().to_bits(),
                        t.sum().to_bits(),
                        f(t.min()),
                        f(t.max()),
                    )
                };
                assert_eq!(bits(&ours), bits(&theirs), "shape {s}, batch of {batch}");
            }
        }
    }

    /// Token counts past the exact limit: few distinct values, exact quantiles (type 7 over
    /// the values written out), through folds, merges and a save; the 257th distinct value
    /// ends it.
    #[test]
    fn few_distinct_values_stay_exact_past_the_limit() {
        // 30 % at the max_tokens cap (256), the rest spread over 100 lengths.
        let value = |i: u64| {
            if i % 10 < 3 {
                256.0
            } else {
                (i * 7 % 100) as f64
            }
        };
        let mut d = Digest::with_limit(50);
        let mut all = Vec::new();
        for i in 0..20_000u64 {
            d.add(value(i));
            all.push(value(i));
        }
        all.sort_by(f64::total_cmp);
        assert!(d.is_exact(), "past the limit, counted");
        for q in [0.0, 0.1, 0.5, 0.69, 0.7, 0.71, 0.9, 0.95, 0.999, 1.0] {
            assert_eq!(d.quantile(q), Some(quantile_sorted(&all, q)), "q {q}");
        }
        // Merged with another counted digest, and with an exact one.
        let mut other = Digest::with_limit(50);
        let mut small = Digest::with_limit(50);
        for i in 0..5_000u64 {
            other.add(value(i + 3));
            all.push(value(i + 3));
        }
        for i in 0..20u64 {
            small.add(value(i + 1));
            all.push(value(i + 1));
        }
        d.merge(&other);
        d.merge(&small);
        let mut mirrored = small.clone();
        mirrored.merge(&other);
        all.sort_by(f64::total_cmp);
        for q in [0.05, 0.5, 0.9, 0.99] {
            assert_eq!(
                d.quantile(q),
                Some(quantile_sorted(&all, q)),
                "merged q {q}"
            );
        }
        assert!(mirrored.is_exact());
        // Saved and read back.
        let mut back = Digest::import(d.export()).unwrap();
        assert!(back.is_exact());
        assert_eq!(back.quantile(0.9), d.quantile(0.9));
        // The 257th distinct value: a t-digest estimate from then on.
        for i in 0..300u64 {
            d.add(1000.0 + i as f64);
        }
        assert!(!d.is_exact());
        assert!(d.export().atoms.is_none());
    }

    #[test]
    fn atoms_that_do_not_add_up_are_refused() {
        let mut d = Digest::with_limit(5);
        for i in 0..100 {
            d.add((i % 3) as f64);
        }
        let mut e = d.export();
        e.atoms = Some(vec![(0.0, 34), (1.0, 33), (2.0, 32)]);
        assert!(Digest::import(e.clone()).is_err());
        // Counts past u64 are refused, not wrapped.
        e.atoms = Some(vec![(0.0, u64::MAX), (1.0, 101)]);
        assert!(Digest::import(e).is_err());
    }

    #[test]
    fn exact_matches_numpy_linear() {
        // numpy.percentile([10, 20, 30, 40, 50], [50, 90, 99]) = [30, 46, 49.6]
        let mut d = Digest::default();
        for v in [50.0, 10.0, 40.0, 20.0, 30.0] {
            d.add(v);
        }
        assert_eq!(d.quantile(0.5), Some(30.0));
        assert!((d.quantile(0.9).unwrap() - 46.0).abs() < 1e-12);
        assert!((d.quantile(0.99).unwrap() - 49.6).abs() < 1e-12);
        assert_eq!(d.mean(), Some(30.0));
        assert!(d.is_exact());
    }

    #[test]
    fn merge_is_exact_while_small_and_close_beyond() {
        let (mut a, mut b, mut all) = (Digest::default(), Digest::default(), Digest::default());
        for i in 0..3000 {
            let v = ((i * 37) % 1000) as f64;
            if i % 3 == 0 {
                a.add(v)
            } else {
                b.add(v)
            }
            all.add(v);
        }
        a.merge(&b);
        assert!(a.is_exact());
        for q in [0.1, 0.5, 0.99] {
            assert_eq!(a.quantile(q), all.quantile(q));
        }
        let mut big = Digest::default();
        for i in 0..20_000 {
            big.add((i % 1000) as f64);
        }
        a.merge(&big);
        assert!(!a.is_exact());
        assert_eq!(a.count(), 23_000);
        let p50 = a.quantile(0.5).unwrap();
        assert!((p50 - 500.0).abs() < 10.0, "{p50}");
    }

    #[test]
    fn switches_to_tdigest_past_the_limit_and_stays_close() {
        let mut d = Digest::default();
        let n = 100_000;
        for i in 0..n {
            // a deterministic permutation of 0..n
            d.add(((i * 7919) % n) as f64);
        }
        assert!(!d.is_exact());
        for q in [0.5, 0.9, 0.99] {
            let exact = q * (n - 1) as f64;
            let got = d.quantile(q).unwrap();
            assert!(
                (got - exact).abs() / exact < 0.005,
                "q={q} got {got} want {exact}"
            );
        }
        assert_eq!(d.min(), Some(0.0));
        assert_eq!(d.max(), Some((n - 1) as f64));
    }

    #[test]
    fn export_import_round_trips_exact_and_tdigest() {
        let mut small = Digest::default();
        for v in [3.0, 1.0, 2.0] {
            small.add(v);
        }
        let mut back = Digest::import(small.export()).unwrap();
        assert_eq!(back.export(), small.export());
        assert_eq!(back.quantile(0.5), Some(2.0));
        let mut big = Digest::default();
        for i in 0..50_000 {
            big.add(((i * 7919) % 50_000) as f64);
        }
        // Values collected since the last fold are exported too (the weights add up).
        big.add(7.0);
        let mut back = Digest::import(big.export()).unwrap();
        assert!(!back.is_exact());
        assert_eq!(back.count(), 50_001);
        for q in [0.5, 0.99] {
            assert_eq!(back.quantile(q), big.quantile(q));
        }
        assert_eq!(back.mean(), big.mean());
        let mut bad = small.export();
        bad.count = 4;
        assert!(Digest::import(bad).is_err());
    }

    #[test]
    fn mean_does_not_depend_on_the_order_of_values() {
        // 0.1 + 0.2 + 0.3 differs from 0.3 + 0.2 + 0.1 in the last bit; sorted summation
        // makes both digests agree.
        let (mut a, mut b) = (Digest::default(), Digest::default());
        for v in [0.1, 0.2, 0.3] {
            a.add(v);
        }
        for v in [0.3, 0.2, 0.1] {
            b.add(v);
        }
        assert_eq!(a.mean(), b.mean());
    }
}

/// The examples in this file's docs, run.
#[cfg(test)]
mod doc_examples {
    use super::*;

    #[test]
    fn example_of_quantile_sorted() {
        assert_eq!(quantile_sorted(&[1.0, 2.0, 3.0, 4.0], 0.5), 2.5);
        assert_eq!(quantile_sorted(&[1.0, 2.0, 3.0, 4.0], 0.9), 3.7);
    }
}
