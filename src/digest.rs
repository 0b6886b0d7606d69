//! Digests: the distribution of one metric in one group, exact while small, a t-digest beyond.
//!
//! Owns quantile arithmetic. Holds every value while there are at most [`EXACT_LIMIT`] of them
//! and answers exact quantiles by linear interpolation between order statistics (Hyndman-Fan
//! type 7, numpy's default, the definition vLLM's and LLMPerf's benchmarks report); past that
//! it moves to a t-digest (the `tdigest` crate) of [`COMPRESSION`] centroids. No I/O.
//!
//! In t-digest mode values are collected [`PENDING`] at a time, sorted by their bit patterns
//! (integer compares: twice as fast as comparing floats) and folded into the digest in one
//! merge. Pushing them one by one into the crate's own buffer cost ~80 ns a value, the
//! largest single cost of `tokentime summary` after the JSON reading.

use tdigest::TDigest;

/// Values held exactly before switching to a t-digest (SPEC section 4).
pub const EXACT_LIMIT: usize = 10_000;

/// t-digest compression (maximum centroids).
pub const COMPRESSION: usize = 1000;

/// Values collected before they are folded into the t-digest.
pub const PENDING: usize = 8192;

/// The distribution of one metric.
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
}

impl Default for Digest {
    fn default() -> Self {
        Digest {
            exact: Vec::new(),
            sorted: true,
            td: None,
            count: 0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        }
    }
}

impl Digest {
    /// Adds one value. Non-finite values are ignored (they never reach here from the metrics).
    pub fn add(&mut self, v: f64) {
        if !v.is_finite() {
            return;
        }
        self.count += 1;
        self.sum += v;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.exact.push(v);
        self.sorted = false;
        let full = match self.td {
            None => self.exact.len() > EXACT_LIMIT,
            Some(_) => self.exact.len() >= PENDING,
        };
        if full {
            self.fold();
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
        // Finite values order as their bit patterns do once negative ones are flipped; sorting
        // those as integers is twice as fast as sorting the floats.
        let mut keys: Vec<u64> = self
            .exact
            .iter()
            .map(|v| {
                let b = v.to_bits();
                if b >> 63 == 1 { !b } else { b | 1 << 63 }
            })
            .collect();
        keys.sort_unstable();
        for (v, k) in self.exact.iter_mut().zip(&keys) {
            *v = f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k });
        }
        let values = std::mem::replace(&mut self.exact, Vec::with_capacity(PENDING));
        self.td = Some(td.merge_sorted(values));
    }

    /// Adds every value of `other`, as if they had been added here: exact while the total
    /// stays within [`EXACT_LIMIT`]; beyond, values `other` still holds one by one are folded
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
                let full = match self.td {
                    None => self.exact.len() > EXACT_LIMIT,
                    Some(_) => self.exact.len() >= PENDING,
                };
                if full {
                    self.fold();
                }
            }
            (None, Some(_)) => {
                let mut theirs = other.clone();
                theirs.exact.extend_from_slice(&self.exact);
                theirs.fold();
                self.td = theirs.td;
                self.exact = Vec::new();
            }
            (Some(_), Some(_)) => {
                let mut mine = self.take_tdigest();
                let mut theirs = other.clone().take_tdigest();
                mine.flush();
                theirs.flush();
                self.td = Some(TDigest::merge_digests(vec![mine, theirs]));
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

    /// True while quantiles are exact.
    pub fn is_exact(&self) -> bool {
        self.td.is_none()
    }

    /// Smallest value, `None` when empty.
    pub fn min(&self) -> Option<f64> {
        (self.count > 0).then_some(self.min)
    }

    /// Largest value, `None` when empty.
    pub fn max(&self) -> Option<f64> {
        (self.count > 0).then_some(self.max)
    }

    /// Arithmetic mean, `None` when empty.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum / self.count as f64)
    }

    /// The q-quantile (`q` in 0..=1), `None` when empty. Exact (type 7) while exact.
    pub fn quantile(&mut self, q: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        if self.td.is_some() {
            self.fold();
        }
        match &mut self.td {
            Some(td) => {
                td.flush();
                td.estimate_quantile(q).map(|v| v.clamp(self.min, self.max))
            }
            None => {
                if !self.sorted {
                    self.exact.sort_unstable_by(f64::total_cmp);
                    self.sorted = true;
                }
                Some(quantile_sorted(&self.exact, q))
            }
        }
    }
}

/// Type-7 quantile of sorted, non-empty `xs`: `h = (n-1)q`, interpolate between `xs[floor h]`
/// and the next.
///
/// ```
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
