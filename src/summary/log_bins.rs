//! Logarithmic bins found without a logarithm: the bin `floor(scale * ln v)` of a positive `v`,
//! as the accumulators bin their values (1% bins of [`super::accumulators::Weighted`], the
//! TTFT decomposition's twentieths of a decade), from a table of the bins' edges.
//!
//! The table has a cell for each binade `2^e` (`e` in [`E_LO`]`..`[`E_HI`]) and each value of
//! the top [`CELL_BITS`] bits of the fraction: a cell spans at most 1/128 of its start, less
//! than the narrowest bin, so at most one edge falls inside it. A cell holds that edge (or none)
//! and the bin below it; a value's bin is the cell's bin, or the next one from the edge on.
//!
//! The result is the very number the binner's own formula gives (its `exact` function, the
//! logarithm and the floor), for every value. The formula's logarithm is within a few units in
//! the last place of the true one, so it can only differ from the true bin for a value within
//! about 1e-12 of a bin's width from an edge. A value within a billionth (relative) of the
//! cell's edge is therefore given to the formula itself, as is a value outside the table's range
//! and a cell whose start lies that close to an edge.

/// The lowest binade in the table (2^-24, about 6e-8).
const E_LO: i32 = -24;
/// One past the highest binade in the table (2^40, about 1.1e12).
const E_HI: i32 = 40;
/// Fraction bits that name a cell within its binade.
const CELL_BITS: u32 = 7;
/// Relative distance from an edge within which the formula decides.
const MARGIN: f64 = 1e-9;

/// Bins `floor(scale * ln v)`, found through a table of their edges.
pub(crate) struct LogBins {
    /// By cell: the edge inside it (`f64::MAX` when none, NaN when the formula decides the
    /// whole cell) and the bin of the values below that edge.
    cells: Box<[(f64, i32)]>,
    /// The formula: the bin of a positive, finite `v`.
    exact: fn(f64) -> i32,
}

impl LogBins {
    /// The bins of `exact`, a formula equal to `floor(scale * ln v)` but for rounding, whose
    /// bins are wider than 1/128 of their start (`scale` below 128).
    pub(crate) fn new(scale: f64, exact: fn(f64) -> i32) -> LogBins {
        assert!(scale > 0.0 && scale < 128.0, "bins narrower than a cell");
        let n = ((E_HI - E_LO) as usize) << CELL_BITS;
        let cells = (0..n)
            .map(|i| {
                let lo = cell_start(i);
                let hi = cell_start(i + 1);
                let at = lo.ln() * scale;
                if (at - at.round()).abs() < 1e-6 {
                    // The cell starts too near an edge to tell its bin from here.
                    return (f64::NAN, 0);
                }
                let below = at.floor();
                let edge = ((below + 1.0) / scale).exp();
                if (edge - hi).abs() <= hi * 1e-6 {
                    (f64::NAN, 0)
                } else if edge < hi {
                    (edge, below as i32)
                } else {
                    (f64::MAX, below as i32)
                }
            })
            .collect();
        LogBins { cells, exact }
    }

    /// The bin of `v`, positive and finite: the formula's, whatever `v`.
    #[inline]
    pub(crate) fn bin(&self, v: f64) -> i32 {
        let bits = v.to_bits();
        let e = (bits >> 52) as i32 - 1023;
        if !(E_LO..E_HI).contains(&e) {
            return (self.exact)(v);
        }
        let i = (((e - E_LO) as usize) << CELL_BITS) | ((bits >> (52 - CELL_BITS)) as usize & 127);
        let (edge, below) = self.cells[i];
        // False for NaN: the formula decides.
        if (v - edge).abs() > edge * MARGIN {
            below + i32::from(v >= edge)
        } else {
            (self.exact)(v)
        }
    }
}

/// The smallest value of cell `i` (cell `i + 1`'s for the end of a binade).
fn cell_start(i: usize) -> f64 {
    let e = (i >> CELL_BITS) as i64 + i64::from(E_LO) + 1023;
    let m = (i & 127) as u64;
    f64::from_bits(((e as u64) << 52) | (m << (52 - CELL_BITS)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weighted(v: f64) -> i32 {
        crate::number::floor(v.ln() / 1.01f64.ln()) as i32
    }

    fn decades(v: f64) -> i32 {
        crate::number::floor(v.log10() * 20.0) as i32
    }

    /// Values at and a few units in the last place around every cell start and every edge,
    /// beyond the table at both ends, and random ones over the whole positive range.
    fn probes(bins: &LogBins) -> Vec<f64> {
        let mut out = Vec::new();
        let around = |v: f64, out: &mut Vec<f64>| {
            for d in -4i64..=4 {
                let b = v.to_bits() as i64 + d;
                if b > 0 {
                    out.push(f64::from_bits(b as u64));
                }
            }
        };
        for i in 0..=bins.cells.len() {
            around(cell_start(i), &mut out);
            if let Some(&(edge, _)) = bins.cells.get(i)
                && edge.is_finite()
                && edge < f64::MAX
            {
                around(edge, &mut out);
                around(edge * (1.0 + MARGIN), &mut out);
                around(edge * (1.0 - MARGIN), &mut out);
            }
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..200_000 {
            let v = f64::from_bits(crate::number::xorshift(&mut x) >> 2);
            if v > 0.0 && v.is_finite() {
                out.push(v);
            }
            // Within the table: 1e-6 .. 1e9.
            let u = (crate::number::xorshift(&mut x) >> 11) as f64 / (1u64 << 53) as f64;
            out.push(10f64.powf(-6.0 + 15.0 * u));
        }
        out.extend([f64::MIN_POSITIVE, 5e-324, f64::MAX, 1.0, 1.01, 10.0]);
        out
    }

    #[test]
    fn a_bin_is_the_formulas_for_every_probe() {
        for (scale, exact) in [
            (1.0 / 1.01f64.ln(), weighted as fn(f64) -> i32),
            (20.0 / std::f64::consts::LN_10, decades),
        ] {
            let bins = LogBins::new(scale, exact);
            let decided = bins.cells.iter().filter(|c| c.0.is_nan()).count();
            assert!(decided < 32, "{decided} cells left to the formula");
            for v in probes(&bins) {
                assert_eq!(bins.bin(v), exact(v), "{v:e}");
            }
        }
    }
}
