//! Modes: whether a distribution of positive values (a latency, a token count) has more than
//! one mode, where the modes are, and what share of the values each holds.
//!
//! Pure arithmetic on `(value, weight)` points: a digest's exact values (weight 1 each) or its
//! t-digest centroids (mean, weight), so it works in constant memory on any group. No I/O.
//!
//! # Method
//!
//! Latencies are products of factors (tokens x time per token, queue x service time), so their
//! modes are compared on a log scale, where a log-normal distribution (the usual single-mode
//! latency) is a normal one.
//!
//! 1. Values `<= 0` are set aside (a log has no place for them); at least [`MIN_VALUES`]
//!    positive values are needed.
//! 2. The logs of the values are binned into [`BINS`] equal bins between their minimum and
//!    maximum (points at bin centres, weights summed), which bounds the cost whatever the
//!    count.
//! 3. One normal, and mixtures of two and of three normals (EM from several starts: splits at
//!    weighted quantiles), are fitted to the binned logs; each component's standard deviation
//!    is at least [`MIN_SIGMA`] or one bin width.
//! 4. The mixture with `k` components replaces the one with `k - 1` when all of these hold:
//!    - BIC (`-2 ln L + p ln n`, `p = 3k - 1` free parameters, `n` the number of values)
//!      drops by more than [`MIN_DELTA_BIC`] ("very strong" evidence on Kass and Raftery's
//!      scale);
//!    - every component holds at least [`MIN_SHARE`] of the values;
//!    - neighbouring components are separated: Ashman's D = `sqrt(2) |mu1 - mu2| /
//!      sqrt(s1^2 + s2^2)` is above [`MIN_ASHMAN_D`] (a clean separation; two equal normals
//!      only make two peaks past D = 2);
//!    - the fitted density of the logs really has `k` peaks, and each valley between two
//!      peaks is at most [`MAX_VALLEY`] of the lower one (no shoulders), and the values
//!      themselves dip there, beyond chance: [`MAX_DATA_VALLEY`], [`MIN_DIP_Z`] (a flat
//!      spread is one mode).
//!
//! A mode's centre is its component's `exp(mu)`: the geometric mean (the median) of the values
//! in it, where the density of the logs peaks; its share is the component's weight. Antimodes
//! (the valleys) separate the modes. A single log-normal sample never passes the BIC and D
//! tests together (`tests/it/analysis.rs` checks 20 seeds).

/// Fewest positive values a distribution needs before modes are looked for.
pub(crate) const MIN_VALUES: f64 = 30.0;
/// Bins of the log values the mixtures are fitted to.
pub(crate) const BINS: usize = 128;
/// Smallest share a mode may hold.
pub(crate) const MIN_SHARE: f64 = 0.05;
/// Smallest Ashman's D between neighbouring modes.
pub(crate) const MIN_ASHMAN_D: f64 = 2.0;
/// Smallest drop of BIC for one more mode.
pub(crate) const MIN_DELTA_BIC: f64 = 10.0;
/// Smallest standard deviation of a component, in natural-log units (2 % of the value).
pub(crate) const MIN_SIGMA: f64 = 0.02;
/// Deepest a valley may be relative to the lower of its two peaks (density ratio).
pub(crate) const MAX_VALLEY: f64 = 0.8;
/// Deepest the data's own valley may be: the values within a sixth of the distance between two
/// neighbouring modes of the valley, against as near each mode (the fewer of the two). A flat
/// stretch of values (a uniform spread, which mixtures of normals fit well) has none.
pub(crate) const MAX_DATA_VALLEY: f64 = 0.85;
/// Fewest standard deviations the dip must be deep by (counts near the lower mode against near
/// the valley, as Poisson counts): a dip so few values make could be chance.
pub(crate) const MIN_DIP_Z: f64 = 2.5;
/// EM iterations at most per start.
const MAX_ITER: usize = 150;
/// EM stops when the log-likelihood per value improves by less than this.
const TOLERANCE: f64 = 1e-7;

/// One mode of a multimodal distribution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Mode {
    /// Its centre: the geometric mean (median) of its values, in the values' unit.
    pub center: f64,
    /// Share of the positive values it holds (0..1).
    pub share: f64,
    /// Its spread: the standard deviation of the logs of its values.
    pub sigma_log: f64,
}

/// A multimodal distribution, as [`detect`] finds it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Modality {
    /// The modes, lowest first (two or three).
    pub modes: Vec<Mode>,
    /// The valleys between neighbouring modes (one fewer than the modes), in the values' unit.
    pub antimodes: Vec<f64>,
    /// Ashman's D of each neighbouring pair.
    pub ashman_d: Vec<f64>,
    /// How much BIC dropped from one mode fewer.
    pub delta_bic: f64,
    /// Number (total weight) of positive values analysed.
    pub n: f64,
}

/// A component of a normal mixture (on log values).
#[derive(Debug, Clone, Copy)]
struct Comp {
    w: f64,
    mu: f64,
    sigma: f64,
}

const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

fn log_normal_pdf(x: f64, c: &Comp) -> f64 {
    let z = (x - c.mu) / c.sigma;
    -0.5 * z * z - c.sigma.ln() - LN_SQRT_2PI
}

/// Binned log values: (centre, weight), and the bin width (0 when not binned).
fn binned(points: &[(f64, f64)]) -> (Vec<(f64, f64)>, f64) {
    let logs: Vec<(f64, f64)> = points
        .iter()
        .filter(|&&(v, w)| v > 0.0 && v.is_finite() && w > 0.0)
        .map(|&(v, w)| (v.ln(), w))
        .collect();
    let (lo, hi) = logs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &(x, _)| {
            (a.min(x), b.max(x))
        });
    if logs.len() <= BINS || hi <= lo {
        return (logs, 0.0);
    }
    let width = (hi - lo) / BINS as f64;
    let mut bins = vec![0.0; BINS];
    for &(x, w) in &logs {
        let i = (((x - lo) / width) as usize).min(BINS - 1);
        bins[i] += w;
    }
    let pts = bins
        .into_iter()
        .enumerate()
        .filter(|&(_, w)| w > 0.0)
        .map(|(i, w)| (lo + (i as f64 + 0.5) * width, w))
        .collect();
    (pts, width)
}

/// Per component: `ln w - ln sigma - ln sqrt(2 pi)`, `mu`, `1 / sigma`.
fn consts(comps: &[Comp]) -> [(f64, f64, f64); 3] {
    let mut k = [(0.0, 0.0, 1.0); 3];
    for (c, k) in comps.iter().zip(k.iter_mut()) {
        *k = (c.w.ln() - c.sigma.ln() - LN_SQRT_2PI, c.mu, 1.0 / c.sigma);
    }
    k
}

/// The log of each component's weighted density at `x` (in `terms`), and the log of their
/// sum.
fn log_terms(x: f64, ks: &[(f64, f64, f64)], terms: &mut [f64; 3]) -> f64 {
    let mut max = f64::NEG_INFINITY;
    for (t, &(c, mu, inv)) in terms.iter_mut().zip(ks) {
        let z = (x - mu) * inv;
        *t = c - 0.5 * z * z;
        max = max.max(*t);
    }
    // The largest term's `exp(t - max)` is `exp(0) = 1` exactly (for a finite max), and
    // `ln 1 = 0`: neither is called for (the same bits, fewer libm calls; this runs for every
    // bin, component and EM iteration of every distribution of the report).
    let mut s = 0.0;
    for t in terms[..ks.len()].iter_mut() {
        *t = if *t == max && max.is_finite() {
            1.0
        } else {
            (*t - max).exp()
        };
        s += *t;
    }
    if s == 1.0 {
        return max + 0.0;
    }
    for t in terms[..ks.len()].iter_mut() {
        *t /= s;
    }
    max + s.ln()
}

/// Weighted log-likelihood of the points under a mixture.
fn loglik(pts: &[(f64, f64)], comps: &[Comp]) -> f64 {
    let ks = consts(comps);
    let mut terms = [0.0f64; 3];
    pts.iter()
        .map(|&(x, w)| w * log_terms(x, &ks[..comps.len()], &mut terms))
        .sum()
}

/// Fits `comps` to the points by EM (in place); returns the log-likelihood.
fn em(pts: &[(f64, f64)], comps: &mut [Comp], floor: f64) -> f64 {
    let k = comps.len();
    let total: f64 = pts.iter().map(|p| p.1).sum();
    let mut prev = f64::NEG_INFINITY;
    let mut resp = [0.0f64; 3];
    for _ in 0..MAX_ITER {
        let mut n = [0.0f64; 3];
        let mut sx = [0.0f64; 3];
        let mut sxx = [0.0f64; 3];
        let ks = consts(comps);
        let mut ll = 0.0;
        for &(x, w) in pts {
            ll += w * log_terms(x, &ks[..k], &mut resp);
            for j in 0..k {
                let r = w * resp[j];
                n[j] += r;
                sx[j] += r * x;
                sxx[j] += r * x * x;
            }
        }
        for j in 0..k {
            if n[j] <= 1e-9 * total {
                // An emptied component: leave it tiny where it is.
                comps[j].w = 1e-9;
                continue;
            }
            let mu = sx[j] / n[j];
            let var = (sxx[j] / n[j] - mu * mu).max(0.0);
            comps[j] = Comp {
                w: n[j] / total,
                mu,
                sigma: var.sqrt().max(floor),
            };
        }
        if (ll - prev).abs() <= TOLERANCE * total.max(1.0) {
            return loglik(pts, comps);
        }
        prev = ll;
    }
    loglik(pts, comps)
}

/// Weighted quantile of sorted points.
fn wquantile(sorted: &[(f64, f64)], total: f64, q: f64) -> f64 {
    let target = q * total;
    let mut acc = 0.0;
    for &(x, w) in sorted {
        acc += w;
        if acc >= target {
            return x;
        }
    }
    sorted.last().map_or(0.0, |p| p.0)
}

/// A start for EM: the points cut at `cuts` (log values), each part's weight, mean and spread.
fn start(pts: &[(f64, f64)], cuts: &[f64], floor: f64) -> Option<Vec<Comp>> {
    let total: f64 = pts.iter().map(|p| p.1).sum();
    let mut comps = Vec::new();
    let mut lo = f64::NEG_INFINITY;
    for i in 0..=cuts.len() {
        let hi = cuts.get(i).copied().unwrap_or(f64::INFINITY);
        let part: Vec<&(f64, f64)> = pts.iter().filter(|p| p.0 > lo && p.0 <= hi).collect();
        let n: f64 = part.iter().map(|p| p.1).sum();
        if n <= 0.0 {
            return None;
        }
        let mu = part.iter().map(|p| p.0 * p.1).sum::<f64>() / n;
        let var = part.iter().map(|p| p.1 * (p.0 - mu).powi(2)).sum::<f64>() / n;
        comps.push(Comp {
            w: n / total,
            mu,
            sigma: var.sqrt().max(floor),
        });
        lo = hi;
    }
    Some(comps)
}

/// The best `k`-component fit over several starts.
fn fit(pts: &[(f64, f64)], k: usize, floor: f64) -> Option<(Vec<Comp>, f64)> {
    let total: f64 = pts.iter().map(|p| p.1).sum();
    let q = |p: f64| wquantile(pts, total, p);
    let starts: Vec<Vec<f64>> = match k {
        1 => vec![vec![]],
        2 => [0.1, 0.5, 0.9].iter().map(|&p| vec![q(p)]).collect(),
        _ => [(0.1, 0.5), (0.33, 0.67), (0.5, 0.9), (0.1, 0.9)]
            .iter()
            .map(|&(a, b)| vec![q(a), q(b)])
            .collect(),
    };
    let mut best: Option<(Vec<Comp>, f64)> = None;
    for cuts in starts {
        let Some(mut comps) = start(pts, &cuts, floor) else {
            continue;
        };
        let ll = if k == 1 {
            loglik(pts, &comps)
        } else {
            em(pts, &mut comps, floor)
        };
        if ll.is_finite() && best.as_ref().is_none_or(|b| ll > b.1) {
            best = Some((comps, ll));
        }
    }
    best.map(|(mut c, ll)| {
        c.sort_by(|a, b| a.mu.total_cmp(&b.mu));
        (c, ll)
    })
}

fn ashman_d(a: &Comp, b: &Comp) -> f64 {
    std::f64::consts::SQRT_2 * (a.mu - b.mu).abs() / (a.sigma * a.sigma + b.sigma * b.sigma).sqrt()
}

/// The mixture density of log values at `x`.
fn density(comps: &[Comp], x: f64) -> f64 {
    comps.iter().map(|c| c.w * log_normal_pdf(x, c).exp()).sum()
}

/// Peaks and valleys of the mixture density between its outermost component means:
/// `Some(valleys)` (log values) when there is one peak per component and every valley is at
/// most [`MAX_VALLEY`] of its lower neighbour peak.
fn peaks_and_valleys(comps: &[Comp]) -> Option<Vec<f64>> {
    let lo = comps.first()?.mu - 1e-9;
    let hi = comps.last()?.mu + 1e-9;
    const GRID: usize = 2000;
    let xs: Vec<f64> = (0..=GRID)
        .map(|i| lo + (hi - lo) * i as f64 / GRID as f64)
        .collect();
    let d: Vec<f64> = xs.iter().map(|&x| density(comps, x)).collect();
    // Local maxima and minima along the grid (ends count as maxima when they fall away).
    let mut peaks = vec![];
    let mut valleys = vec![];
    for i in 0..=GRID {
        let left = if i == 0 { f64::NEG_INFINITY } else { d[i - 1] };
        let right = if i == GRID {
            f64::NEG_INFINITY
        } else {
            d[i + 1]
        };
        if d[i] >= left && d[i] > right {
            peaks.push(i);
        } else if i > 0 && i < GRID && d[i] <= left && d[i] < right {
            valleys.push(i);
        }
    }
    if peaks.len() != comps.len() || valleys.len() != comps.len() - 1 {
        return None;
    }
    for (j, &v) in valleys.iter().enumerate() {
        let lower = d[peaks[j]].min(d[peaks[j + 1]]);
        if d[v] > MAX_VALLEY * lower {
            return None;
        }
    }
    Some(valleys.into_iter().map(|i| xs[i]).collect())
}

/// Whether the log values `pts` (value, weight) dip at each valley between neighbouring
/// components: [`MAX_DATA_VALLEY`] deep at least, and by [`MIN_DIP_Z`] standard deviations.
fn data_dips(pts: &[(f64, f64)], comps: &[Comp], valleys: &[f64]) -> bool {
    let near = |x: f64, h: f64| -> f64 {
        pts.iter()
            .filter(|p| (p.0 - x).abs() <= h)
            .map(|p| p.1)
            .sum()
    };
    comps.windows(2).zip(valleys).all(|(pair, &v)| {
        let h = (pair[1].mu - pair[0].mu) / 6.0;
        let lower = near(pair[0].mu, h).min(near(pair[1].mu, h));
        let valley = near(v, h);
        valley <= MAX_DATA_VALLEY * lower && lower - valley >= MIN_DIP_Z * (lower + valley).sqrt()
    })
}

/// Whether `comps` pass the tests of the module's method against the fit with one fewer.
fn accept(comps: &[Comp], delta_bic: f64) -> Option<Vec<f64>> {
    if delta_bic <= MIN_DELTA_BIC || comps.iter().any(|c| c.w < MIN_SHARE) {
        return None;
    }
    if comps
        .windows(2)
        .any(|p| ashman_d(&p[0], &p[1]) <= MIN_ASHMAN_D)
    {
        return None;
    }
    peaks_and_valleys(comps)
}

/// Looks for two or three modes among `points` (value, weight); `None` when the
/// distribution is unimodal by the module's method, or has too few positive values.
///
/// ```text
/// use tokentime::modes::detect;
/// // 300 values spread around 80 and 200 around 1500 (a logistic spread of 0.25 in logs).
/// let spread = |i: usize, n: usize| {
///     let p = (i as f64 + 0.5) / n as f64;
///     (0.25 * (p / (1.0 - p)).ln() * 3f64.sqrt() / std::f64::consts::PI).exp()
/// };
/// let mut pts: Vec<(f64, f64)> = (0..300).map(|i| (80.0 * spread(i, 300), 1.0)).collect();
/// pts.extend((0..200).map(|i| (1500.0 * spread(i, 200), 1.0)));
/// let m = detect(&pts).unwrap();
/// assert_eq!(m.modes.len(), 2);
/// assert!((m.modes[0].center / 80.0 - 1.0).abs() < 0.05);
/// assert!((m.modes[0].share - 0.6).abs() < 0.01);
/// assert!(m.antimodes[0] > 100.0 && m.antimodes[0] < 1200.0);
/// ```
pub(crate) fn detect(points: &[(f64, f64)]) -> Option<Modality> {
    let (pts, width) = binned(points);
    let n: f64 = pts.iter().map(|p| p.1).sum();
    if n < MIN_VALUES {
        return None;
    }
    let floor = MIN_SIGMA.max(width);
    let (_, ll1) = fit(&pts, 1, floor)?;
    let bic = |ll: f64, k: usize| -2.0 * ll + (3 * k - 1) as f64 * n.ln();
    let (c2, ll2) = fit(&pts, 2, floor)?;
    let d2 = bic(ll1, 1) - bic(ll2, 2);
    let valleys2 = accept(&c2, d2)?;
    let in_data = |c: &[Comp], v: &[f64]| data_dips(&pts, c, v);
    // Three modes where they pass every test; else two, where the values dip between them
    // (two components over three groups of values can sit on an empty stretch).
    let three = fit(&pts, 3, floor).and_then(|(c3, ll3)| {
        let d3 = bic(ll2, 2) - bic(ll3, 3);
        let v3 = accept(&c3, d3).filter(|v| in_data(&c3, v))?;
        Some((c3, v3, d3))
    });
    let (comps, valleys, delta_bic) = match three {
        Some(best) => best,
        None if in_data(&c2, &valleys2) => (c2, valleys2, d2),
        None => return None,
    };
    Some(Modality {
        modes: comps
            .iter()
            .map(|c| Mode {
                center: c.mu.exp(),
                share: c.w,
                sigma_log: c.sigma,
            })
            .collect(),
        antimodes: valleys.iter().map(|v| v.exp()).collect(),
        ashman_d: comps.windows(2).map(|p| ashman_d(&p[0], &p[1])).collect(),
        delta_bic,
        n,
    })
}

/// Share of the points' weight (positive or not) with a value in `[lo, hi]`.
pub(crate) fn share_within(points: &[(f64, f64)], lo: f64, hi: f64) -> f64 {
    let total: f64 = points.iter().map(|p| p.1).sum();
    if total <= 0.0 {
        return 0.0;
    }
    points
        .iter()
        .filter(|p| p.0 >= lo && p.0 <= hi)
        .map(|p| p.1)
        .sum::<f64>()
        / total
        + 0.0 // an empty sum is -0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic standard normal sample (inverse CDF of a stratified grid, shuffled by
    /// a fixed stride), so tests need no RNG.
    fn normals(n: usize) -> Vec<f64> {
        // Acklam's rational approximation is overkill here: a logistic quantile scaled to
        // unit variance is close enough in the body for a unimodal test.
        (0..n)
            .map(|i| {
                let p = (((i * 7919) % n) as f64 + 0.5) / n as f64;
                (p / (1.0 - p)).ln() * 3f64.sqrt() / std::f64::consts::PI
            })
            .collect()
    }

    #[test]
    fn log_normal_is_one_mode() {
        let pts: Vec<(f64, f64)> = normals(5000)
            .into_iter()
            .map(|z| (300.0 * (0.8 * z).exp(), 1.0))
            .collect();
        assert_eq!(detect(&pts), None);
    }

    #[test]
    fn two_log_normals_far_apart_are_two_modes() {
        // 70 % around 80 ms, 30 % around 1500 ms, sigma 0.3 each: D = sqrt(2) * ln(18.75) /
        // sqrt(0.18) = 9.8, far past 2.
        let z = normals(1000);
        let mut pts = vec![];
        for (i, &z) in z.iter().enumerate() {
            let center = if i % 10 < 7 { 80.0 } else { 1500.0 };
            pts.push((center * (0.3 * z).exp(), 1.0));
        }
        let m = detect(&pts).expect("two modes");
        assert_eq!(m.modes.len(), 2);
        assert!((m.modes[0].center / 80.0 - 1.0).abs() < 0.05, "{m:?}");
        assert!((m.modes[1].center / 1500.0 - 1.0).abs() < 0.05, "{m:?}");
        assert!((m.modes[0].share - 0.7).abs() < 0.02, "{m:?}");
        assert!(m.antimodes[0] > 150.0 && m.antimodes[0] < 800.0, "{m:?}");
    }

    #[test]
    fn three_separate_groups_are_three_modes() {
        let z = normals(1500);
        let pts: Vec<(f64, f64)> = z
            .iter()
            .enumerate()
            .map(|(i, &z)| ([20.0, 400.0, 8000.0][i % 3] * (0.25 * z).exp(), 1.0))
            .collect();
        let m = detect(&pts).expect("modes");
        assert_eq!(m.modes.len(), 3, "{m:?}");
    }

    #[test]
    fn a_shoulder_or_a_tiny_group_is_not_a_mode() {
        let z = normals(2000);
        // 2 % far away: below the smallest share.
        let pts: Vec<(f64, f64)> = z
            .iter()
            .enumerate()
            .map(|(i, &z)| {
                (
                    if i % 50 == 0 { 5000.0 } else { 100.0 } * (0.3 * z).exp(),
                    1.0,
                )
            })
            .collect();
        assert_eq!(detect(&pts), None);
        // Two groups 1.5 sigma apart: one hump with a shoulder.
        let pts: Vec<(f64, f64)> = z
            .iter()
            .enumerate()
            .map(|(i, &z)| {
                (
                    if i % 2 == 0 { 100.0 } else { 156.8 } * (0.3 * z).exp(),
                    1.0,
                )
            })
            .collect();
        assert_eq!(detect(&pts), None);
    }

    /// A flat spread (TTFT uniform from 200 to 400 ms, TPOT from 10 to 50 ms), which mixtures of
    /// two or three normals fit better than one, has no valley in its values: no modes.
    #[test]
    fn a_flat_spread_is_not_several_modes() {
        for (lo, hi) in [(200.0, 400.0), (10.0, 50.0), (100.0, 1000.0)] {
            for n in [200usize, 2000, 20_000] {
                let pts: Vec<(f64, f64)> = (0..n)
                    .map(|i| (lo + (hi - lo) * (i as f64 + 0.5) / n as f64, 1.0))
                    .collect();
                assert_eq!(detect(&pts), None, "uniform {lo}-{hi}, {n} values");
                // Pseudo-random draws too.
                let mut x: u64 = 0x9E37_79B9_7F4A_7C15 ^ n as u64;
                let pts: Vec<(f64, f64)> = (0..n)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        (lo + (hi - lo) * (x >> 11) as f64 / (1u64 << 53) as f64, 1.0)
                    })
                    .collect();
                assert_eq!(detect(&pts), None, "random uniform {lo}-{hi}, {n} values");
            }
        }
    }

    #[test]
    fn too_few_values_say_nothing() {
        let pts: Vec<(f64, f64)> = (0..20).map(|i| ((1 + i % 2 * 100) as f64, 1.0)).collect();
        assert_eq!(detect(&pts), None);
    }

    #[test]
    fn centroid_weights_count_like_values() {
        let z = normals(400);
        let mut pts = vec![];
        for (i, &z) in z.iter().enumerate() {
            let center = if i % 2 == 0 { 50.0 } else { 2000.0 };
            pts.push((center * (0.2 * z).exp(), 25.0));
        }
        let m = detect(&pts).expect("two modes");
        assert!((m.n - 10_000.0).abs() < 1e-6);
        assert!((m.modes[0].share - 0.5).abs() < 0.01);
    }
}

/// The examples in this file's docs, run.
#[cfg(test)]
mod doc_examples {
    use super::*;

    #[test]
    fn example_of_detect() {
        // 300 values spread around 80 and 200 around 1500 (a logistic spread of 0.25 in logs).
        let spread = |i: usize, n: usize| {
            let p = (i as f64 + 0.5) / n as f64;
            (0.25 * (p / (1.0 - p)).ln() * 3f64.sqrt() / std::f64::consts::PI).exp()
        };
        let mut pts: Vec<(f64, f64)> = (0..300).map(|i| (80.0 * spread(i, 300), 1.0)).collect();
        pts.extend((0..200).map(|i| (1500.0 * spread(i, 200), 1.0)));
        let m = detect(&pts).unwrap();
        assert_eq!(m.modes.len(), 2);
        assert!((m.modes[0].center / 80.0 - 1.0).abs() < 0.05);
        assert!((m.modes[0].share - 0.6).abs() < 0.01);
        assert!(m.antimodes[0] > 100.0 && m.antimodes[0] < 1200.0);
    }
}
