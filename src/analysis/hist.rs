//! Histograms people can look at: a metric's values in log-scaled bins, drawn as unicode bars
//! for the summary table (`summary --hist`) and listed as bins in the JSON.
//!
//! Takes `(value, weight)` points (a digest's exact values or its centroids) and writes only
//! to the writer it is given.
//!
//! Bins are equal on a log scale, `k` per decade with edges at `10^(j/k)`; `k` is the largest
//! of 2, 4, 5, 10 and 20 that keeps the bins between the smallest and largest value to at most
//! [`MAX_BINS`], so a latency spread over three decades gets 5 bins per decade. Values `<= 0`
//! (a zero cached-token count) get a row of their own. Bar length is proportional to the
//! bin's count; with equal log widths, two humps of bars are two modes.

use std::io::{self, Write};

/// Most bins a histogram has between its smallest and largest positive value.
pub(crate) const MAX_BINS: usize = 24;

/// Characters of the longest bar.
pub(crate) const BAR_WIDTH: usize = 40;

/// One bin: values in `[lo, hi)` and their weight (count).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Bin {
    /// Lower edge (inclusive).
    pub lo: f64,
    /// Upper edge (exclusive).
    pub hi: f64,
    /// Number of values (summed centroid weights beyond the exact limit).
    pub count: f64,
}

/// A log-scaled histogram.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Histogram {
    /// Bins per decade.
    pub per_decade: u32,
    /// The bins from the smallest to the largest positive value, empty ones included.
    pub bins: Vec<Bin>,
    /// Values `<= 0`.
    pub nonpositive: f64,
    /// All values.
    pub total: f64,
}

/// The histogram of `points`; `None` when there are none.
///
/// ```text
/// use tokentime::hist::build;
/// let h = build(&[(1.0, 1.0), (2.0, 1.0), (150.0, 2.0), (0.0, 1.0)]).unwrap();
/// assert_eq!(h.per_decade, 10);
/// assert_eq!(h.nonpositive, 1.0);
/// assert_eq!(h.bins.iter().map(|b| b.count).sum::<f64>(), 4.0);
/// ```
pub(crate) fn build(points: &[(f64, f64)]) -> Option<Histogram> {
    let total: f64 = points.iter().map(|p| p.1).sum();
    if total <= 0.0 {
        return None;
    }
    let pos = || points.iter().filter(|p| p.0 > 0.0 && p.0.is_finite());
    let nonpositive = points
        .iter()
        .filter(|p| p.0 <= 0.0)
        .map(|p| p.1)
        .sum::<f64>();
    let (lo, hi) = pos().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
        (a.min(p.0.log10()), b.max(p.0.log10()))
    });
    if !lo.is_finite() {
        return Some(Histogram {
            per_decade: 1,
            bins: vec![],
            nonpositive,
            total,
        });
    }
    let span = |k: u32| ((hi * k as f64).floor() - (lo * k as f64).floor()) as usize + 1;
    let k = [20u32, 10, 5, 4, 2]
        .into_iter()
        .find(|&k| span(k) <= MAX_BINS)
        .unwrap_or(1);
    let first = (lo * k as f64).floor() as i64;
    let mut bins: Vec<Bin> = (0..span(k))
        .map(|j| {
            let e = first + j as i64;
            Bin {
                lo: 10f64.powf(e as f64 / k as f64),
                hi: 10f64.powf((e + 1) as f64 / k as f64),
                count: 0.0,
            }
        })
        .collect();
    for p in pos() {
        let j = ((p.0.log10() * k as f64).floor() as i64 - first).clamp(0, bins.len() as i64 - 1);
        bins[j as usize].count += p.1;
    }
    Some(Histogram {
        per_decade: k,
        bins,
        nonpositive,
        total,
    })
}

/// A bar of `len` eighths of a character, in block elements.
fn bar(eighths: usize) -> String {
    const PARTS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    let mut s = "█".repeat(eighths / 8);
    if !eighths.is_multiple_of(8) {
        s.push(PARTS[eighths % 8]);
    }
    s
}

/// A number as a histogram edge: three significant digits, no exponent.
pub(crate) fn edge(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else if x >= 1.0 {
        format!("{x:.2}")
    } else {
        let digits = (2 - x.log10().floor() as i32).clamp(3, 9) as usize;
        format!("{x:.digits$}")
    }
}

/// Writes `h` as rows of bars under a table whose first column is `indent` characters wide:
/// the bin's range in that column, then the bar, the count and the share. `marks` are
/// `(value, label)` pairs printed after the bin that holds the value (modes, the mean).
///
/// # Errors
/// The writer's.
pub(crate) fn write(
    out: &mut impl Write,
    name: &str,
    h: &Histogram,
    indent: usize,
    marks: &[(f64, String)],
) -> io::Result<()> {
    let max = h
        .bins
        .iter()
        .map(|b| b.count)
        .fold(h.nonpositive, f64::max)
        .max(1e-12);
    writeln!(
        out,
        "{name} histogram ({} bins per decade, log scale):",
        h.per_decade
    )?;
    let labels: Vec<String> = h
        .bins
        .iter()
        .map(|b| format!("{}-{}", edge(b.lo), edge(b.hi)))
        .collect();
    let width = labels
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0)
        .max(indent);
    let row = |out: &mut dyn Write, label: &str, count: f64, notes: &str| -> io::Result<()> {
        let eighths = (count / max * (BAR_WIDTH * 8) as f64).round() as usize;
        let eighths = if count > 0.0 { eighths.max(1) } else { 0 };
        let line = format!(
            "{label:>width$}  {:<BAR_WIDTH$}  {:>6}  {:>5.1}%{notes}",
            bar(eighths),
            count.round() as u64,
            count / h.total * 100.0
        );
        writeln!(out, "{}", line.trim_end())
    };
    if h.nonpositive > 0.0 {
        row(out, "<=0", h.nonpositive, "")?;
    }
    for (b, label) in h.bins.iter().zip(&labels) {
        let notes: Vec<&str> = marks
            .iter()
            .filter(|(v, _)| *v >= b.lo && *v < b.hi)
            .map(|(_, l)| l.as_str())
            .collect();
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!("  <- {}", notes.join(", "))
        };
        row(out, label, b.count, &notes)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_humps_show_as_two_groups_of_bars() {
        let mut pts = vec![];
        for i in 0..60 {
            pts.push((80.0 + i as f64, 1.0));
        }
        for i in 0..40 {
            pts.push((1500.0 + 10.0 * i as f64, 1.0));
        }
        let h = build(&pts).unwrap();
        let mut out = vec![];
        write(&mut out, "ttft_ms", &h, 10, &[(100.0, "mode 1".into())]).unwrap();
        let text = String::from_utf8(out).unwrap();
        let rows: Vec<&str> = text.lines().skip(1).collect();
        let full: Vec<bool> = rows.iter().map(|r| r.contains('█')).collect();
        // Bars, then empty bins, then bars again.
        let first_gap = full.iter().position(|&f| !f).unwrap();
        assert!(full[first_gap..].iter().any(|&f| f), "{text}");
        assert!(text.contains("<- mode 1"), "{text}");
        assert_eq!(h.bins.iter().map(|b| b.count).sum::<f64>(), 100.0);
    }

    #[test]
    fn edges_read_well() {
        assert_eq!(edge(1584.89), "1585");
        assert_eq!(edge(15.8489), "15.8");
        assert_eq!(edge(1.58489), "1.58");
        assert_eq!(edge(0.0158489), "0.0158");
    }
}

/// The examples in this file's docs, run.
#[cfg(test)]
mod doc_examples {
    use super::*;

    #[test]
    fn example_of_build() {
        let h = build(&[(1.0, 1.0), (2.0, 1.0), (150.0, 2.0), (0.0, 1.0)]).unwrap();
        assert_eq!(h.per_decade, 10);
        assert_eq!(h.nonpositive, 1.0);
        assert_eq!(h.bins.iter().map(|b| b.count).sum::<f64>(), 4.0);
    }
}
