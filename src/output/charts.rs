//! The HTML report's charts, drawn as SVG by `plotters` from the numbers of the summary's JSON
//! document and its `--bucket` windows: they plot what those documents hold (histogram bins,
//! quantiles of the in-flight buckets, window quantiles) and compute nothing.
//!
//! Each chart is one `<svg>` element with an `id` (the report's tests and screenshot check
//! them), no namespace URL (inline SVG in HTML needs none) and text as `<text>` elements (no
//! font is read).

use plotters::coord::Shift;
use plotters::prelude::*;
use serde_json::Value as Json;

/// Width and height of a chart in SVG pixels (two side by side on a 1280-pixel page).
const SIZE: (u32, u32) = (600, 340);

type Plot<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type Drawn = Result<(), Box<dyn std::error::Error>>;

/// One series of histogram bins: its label and `(lo, hi, count)` per bin.
pub(crate) struct Bins {
    pub label: String,
    pub bins: Vec<(f64, f64, f64)>,
}

/// One line over time: its label and `(x, y)` points, `None` breaking the line.
pub(crate) struct Line {
    pub label: String,
    pub points: Vec<(f64, Option<f64>)>,
}

/// One quantile across categories (the in-flight buckets): its label and a value per category.
pub(crate) struct Bars {
    pub label: String,
    pub values: Vec<Option<f64>>,
}

/// The colours of the series, in order: blue, orange, green, red, purple, brown, grey.
const PALETTE: [RGBColor; 7] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(127, 127, 127),
];

/// The colour of a cache class, the same in every chart: hit green, partial orange, miss red,
/// response purple, unknown blue; other labels by their place.
pub(crate) fn colour(label: &str, i: usize) -> RGBColor {
    let class = label.rsplit("cache=").next().unwrap_or(label);
    if !label.contains("cache=") {
        return PALETTE[i % PALETTE.len()];
    }
    match class.split_whitespace().next().unwrap_or("") {
        "hit" => PALETTE[2],
        "partial" => PALETTE[1],
        "miss" => PALETTE[3],
        "response" => PALETTE[4],
        "unknown" => PALETTE[0],
        _ => PALETTE[i % PALETTE.len()],
    }
}

/// A number for an axis: `0.5`, `20`, `1.5k`, `30k`.
fn tick(v: f64) -> String {
    let a = v.abs();
    let (x, suffix) = if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let s = format!("{x:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}{suffix}")
}

/// The ticks of a log axis over `lo..hi`, each one labelled: its 1-2-5 values (`10`, `20`,
/// `50`, `100`, ...), or its powers of ten alone where there would be more than seven, so that
/// they never crowd; where fewer than two of those fall in the range, at least three evenly
/// spaced round values (`12`, `14`, `16`), so that a short span is read as well.
fn log_keys(lo: f64, hi: f64) -> Vec<f64> {
    let within = |mantissas: &[f64]| {
        let mut keys = vec![];
        let mut e = lo.log10().floor() as i32;
        while 10f64.powi(e) <= hi {
            for &m in mantissas {
                let v = m * 10f64.powi(e);
                if v >= lo && v <= hi {
                    keys.push(v);
                }
            }
            e += 1;
        }
        keys
    };
    let mut keys = within(&[1.0, 2.0, 5.0]);
    if keys.len() > 7 {
        keys = within(&[1.0]);
    }
    if keys.len() >= 2 {
        return keys;
    }
    let mut e = hi.log10().floor() as i32;
    while e > -12 {
        for m in [5.0, 2.0, 1.0] {
            let step = m * 10f64.powi(e);
            let (first, last) = ((lo / step).ceil(), (hi / step).floor());
            if last - first >= 2.0 {
                return (first as i64..=last as i64)
                    .map(|i| i as f64 * step)
                    .collect();
            }
        }
        e -= 1;
    }
    keys
}

/// Steps of a time axis, in seconds, as a clock reads them: 1 s to 30 s, 1 min to 30 min, 1 h to
/// 12 h, days, weeks, months (of 30 days) and years (of 365).
const TIME_STEPS: [f64; 25] = [
    1.0,
    2.0,
    5.0,
    10.0,
    15.0,
    30.0,
    60.0,
    120.0,
    300.0,
    600.0,
    900.0,
    1800.0,
    3600.0,
    7200.0,
    10_800.0,
    21_600.0,
    43_200.0,
    86_400.0,
    172_800.0,
    604_800.0,
    1_209_600.0,
    2_592_000.0,
    7_776_000.0,
    15_552_000.0,
    31_536_000.0,
];

/// The ticks of a time axis over `x0..x1` (seconds since the epoch, UTC): the multiples of the
/// shortest clock step, from `min_step` on, that puts at most six in the range; and their labels, as precise as the
/// step, so that no two read the same: `14:05:30` below a minute, `14:05` below a day
/// (`12-03 14:05` when the range crosses a day), `12-03` from a day on.
fn time_keys(x0: f64, x1: f64, min_step: f64) -> (Vec<f64>, impl Fn(&f64) -> String) {
    let step = TIME_STEPS
        .into_iter()
        .find(|&s| s >= min_step && (x1 / s).floor() - (x0 / s).ceil() < 6.0)
        .unwrap_or(TIME_STEPS[TIME_STEPS.len() - 1]);
    let keys: Vec<f64> = ((x0 / step).ceil() as i64..=(x1 / step).floor() as i64)
        .map(|i| i as f64 * step)
        .collect();
    let day = |x: f64| (x / 86_400.0).floor();
    let one_day = day(x0) == day(x1);
    let label = move |x: &f64| {
        let t = crate::summary::window::rfc3339_ms((x * 1e9) as i64);
        let part = if step < 60.0 {
            t.get(11..19)
        } else if step < 86_400.0 && one_day {
            t.get(11..16)
        } else if step < 86_400.0 {
            t.get(5..16)
        } else {
            t.get(5..10)
        };
        part.unwrap_or("").replace('T', " ")
    };
    (keys, label)
}

/// A linear axis with the ticks given (plotters' own `with_key_points` gives one no labels).
struct Ticked {
    linear: plotters::coord::types::RangedCoordf64,
    keys: Vec<f64>,
}

impl Ranged for Ticked {
    type ValueType = f64;
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.linear.map(value, limit)
    }

    fn key_points<Hint: plotters::coord::ranged1d::KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            vec![]
        } else {
            self.keys.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.linear.range()
    }
}

/// Draws with `f` on a fresh SVG canvas; returns the `<svg>` element with `id`, without its
/// namespace attribute, or `None` when `f` fails.
fn svg(id: &str, title: &str, f: impl FnOnce(&Plot) -> Drawn) -> Option<String> {
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, SIZE).into_drawing_area();
        root.fill(&WHITE).ok()?;
        f(&root).ok()?;
        root.present().ok()?;
    }
    let buf = buf.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1);
    let title = crate::output::html::escape(title);
    Some(buf.replacen(
        "<svg ",
        &format!("<svg id=\"{id}\" role=\"img\" aria-label=\"{title}\" "),
        1,
    ))
}

/// Stacked histogram bars on a logarithmic x axis, a series per label (`chart-ttft-hist`:
/// TTFT by cache class; `chart-queue-prefill`: queue and prefill, side by side per bin).
pub(crate) fn histogram(
    id: &str,
    title: &str,
    x_desc: &str,
    series: &[Bins],
    stacked: bool,
) -> Option<String> {
    let all = || series.iter().flat_map(|s| s.bins.iter());
    let lo = all().map(|b| b.0).fold(f64::INFINITY, f64::min);
    let hi = all().map(|b| b.1).fold(0.0, f64::max);
    if !(lo.is_finite() && lo > 0.0 && hi > lo) {
        return None;
    }
    // The bins of every series sit on one grid (`per_decade` edges from 1): stacked by `lo`.
    let mut tops: Vec<(f64, f64)> = vec![];
    let mut rects = vec![];
    for (i, s) in series.iter().enumerate() {
        let c = colour(&s.label, i);
        for &(blo, bhi, n) in &s.bins {
            if n <= 0.0 {
                continue;
            }
            let (x0, x1) = if stacked {
                (blo, bhi)
            } else {
                // Side by side: the bin cut in as many slices as series (in log space).
                let (l, h) = (blo.ln(), bhi.ln());
                let w = (h - l) / series.len() as f64;
                ((l + w * i as f64).exp(), (l + w * (i + 1) as f64).exp())
            };
            let base = if stacked {
                match tops.iter_mut().find(|t| t.0 == blo) {
                    Some(t) => {
                        t.1 += n;
                        t.1 - n
                    }
                    None => {
                        tops.push((blo, n));
                        0.0
                    }
                }
            } else {
                0.0
            };
            rects.push((i, [(x0, base), (x1, base + n)], c));
        }
    }
    let ymax = rects.iter().map(|r| r.1[1].1).fold(1.0, f64::max) * 1.12;
    svg(id, title, |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(48)
            .build_cartesian_2d(
                (lo..hi).log_scale().with_key_points(log_keys(lo, hi)),
                0.0..ymax,
            )?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc("requests")
            .x_label_formatter(&|v| tick(*v))
            .y_label_formatter(&|v| tick(*v))
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 13))
            .light_line_style(WHITE)
            .draw()?;
        for (i, s) in series.iter().enumerate() {
            let c = colour(&s.label, i);
            chart
                .draw_series(
                    rects
                        .iter()
                        .filter(|r| r.0 == i)
                        .map(|r| Rectangle::new(r.1, r.2.mix(0.85).filled())),
                )?
                .label(s.label.clone())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], c.filled()));
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)
    })
}

/// The legend, in the corner given (upper right, or upper left where the bars grow to the right).
fn legend<'a, 'b: 'a, X: Ranged, Y: Ranged>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, Y>>,
    at: SeriesLabelPosition,
) -> Drawn {
    chart
        .configure_series_labels()
        .position(at)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .label_font(("sans-serif", 13))
        .draw()?;
    Ok(())
}

/// Bars per category, a bar per quantile side by side (`chart-tpot-inflight`).
pub(crate) fn bars(
    id: &str,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    categories: &[String],
    series: &[Bars],
) -> Option<String> {
    let n = categories.len();
    let ymax = series
        .iter()
        .flat_map(|s| s.values.iter().flatten())
        .fold(0.0, |a: f64, &b| a.max(b));
    if n == 0 || series.is_empty() || ymax <= 0.0 {
        return None;
    }
    let ymax = ymax * 1.12;
    let width = 0.8 / series.len() as f64;
    svg(id, title, |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(-0.5..n as f64 - 0.5, 0.0..ymax)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .x_labels(n)
            .disable_x_mesh()
            .x_label_formatter(&|v| {
                let i = v.round();
                if (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < n {
                    categories[i as usize].clone()
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&|v| tick(*v))
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 13))
            .light_line_style(WHITE)
            .draw()?;
        for (j, s) in series.iter().enumerate() {
            let c = PALETTE[j % PALETTE.len()];
            let left = |i: usize| i as f64 - 0.4 + width * j as f64;
            chart
                .draw_series(s.values.iter().enumerate().filter_map(|(i, v)| {
                    v.map(|v| Rectangle::new([(left(i), 0.0), (left(i) + width, v)], c.filled()))
                }))?
                .label(s.label.clone())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], c.filled()));
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)
    })
}

/// Lines over log time (x: a window's start in seconds since the epoch; ticks `width` seconds
/// apart at least, a window's width) on a logarithmic y axis (`chart-ttft-time`,
/// `chart-tpot-time`).
pub(crate) fn lines(
    id: &str,
    title: &str,
    y_desc: &str,
    series: &[Line],
    width: f64,
) -> Option<String> {
    let xs = || series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = || {
        series
            .iter()
            .flat_map(|s| s.points.iter().filter_map(|p| p.1))
    };
    let (x0, x1) = (
        xs().fold(f64::INFINITY, f64::min),
        xs().fold(f64::NEG_INFINITY, f64::max),
    );
    let (y0, y1) = (
        ys().filter(|y| *y > 0.0).fold(f64::INFINITY, f64::min),
        ys().fold(0.0, f64::max),
    );
    if !(x0.is_finite() && y0.is_finite() && y1 >= y0) {
        return None;
    }
    // One window alone still gets an axis of some width.
    let (x0, x1) = if x1 > x0 {
        (x0, x1)
    } else {
        (x0 - 30.0, x1 + 30.0)
    };
    let (ylo, yhi) = (y0 / 1.5, y1 * 1.5);
    let (times, label) = time_keys(x0, x1, width);
    svg(id, title, |root| {
        // Room on the right for half the label of a tick at the last window.
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .margin_right(32)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(
                Ticked {
                    linear: (x0..x1).into(),
                    keys: times,
                },
                (ylo..yhi).log_scale().with_key_points(log_keys(ylo, yhi)),
            )?;
        chart
            .configure_mesh()
            .x_desc("log time (UTC, window start)")
            .y_desc(y_desc)
            .x_label_formatter(&label)
            .y_label_formatter(&|v| tick(*v))
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 13))
            .light_line_style(WHITE)
            .draw()?;
        for (i, s) in series.iter().enumerate() {
            let c = PALETTE[i % PALETTE.len()];
            let style = c.stroke_width(2);
            for run in s.points.split(|p| p.1.is_none_or(|y| y <= 0.0)) {
                chart.draw_series(LineSeries::new(
                    run.iter().filter_map(|p| p.1.map(|y| (p.0, y))),
                    style,
                ))?;
            }
            chart
                .draw_series(s.points.iter().filter_map(|p| {
                    p.1.filter(|y| *y > 0.0)
                        .map(|y| Circle::new((p.0, y), 2, c.filled()))
                }))?
                .label(s.label.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 14, y)], c.stroke_width(2))
                });
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)
    })
}

/// A value of a JSON document as a number.
pub(crate) fn number(v: &Json) -> Option<f64> {
    v.as_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The numeric labels of an SVG chart.
    fn numbers(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| t.split_once('>').map(|(_, r)| r))
            .filter_map(|r| r.split_once("</text>").map(|(l, _)| l.trim().to_owned()))
            .filter(|l| {
                let n = l.trim_end_matches(['k', 'M']);
                !n.is_empty() && n.parse::<f64>().is_ok()
            })
            .collect()
    }

    #[test]
    fn log_axes_label_only_one_two_five() {
        for (lo, hi) in [(12.0, 80.0), (3.0, 900.0), (0.5, 20_000.0)] {
            let points = (0..20)
                .map(|i| {
                    (
                        f64::from(i) * 60.0,
                        Some(lo + (hi - lo) * f64::from(i) / 19.0),
                    )
                })
                .collect();
            let line = Line {
                label: "p50".to_owned(),
                points,
            };
            let svg = lines("c", "t", "TPOT (ms, log scale)", &[line], 60.0).unwrap();
            let labels = numbers(&svg);
            assert!(
                !labels.is_empty() && labels.len() <= 8,
                "{lo}..{hi}: {labels:?}"
            );
            if labels.len() >= 2 {
                for l in &labels {
                    let v: f64 = l.trim_end_matches(['k', 'M']).parse().unwrap();
                    let m = v / 10f64.powf(v.log10().floor());
                    assert!(
                        [1.0, 2.0, 5.0].iter().any(|x| (m - x).abs() < 1e-9),
                        "{lo}..{hi}: {labels:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_short_log_span_still_gets_several_labels() {
        assert_eq!(
            log_keys(11.0, 24.0),
            [12.0, 14.0, 16.0, 18.0, 20.0, 22.0, 24.0]
        );
        assert_eq!(log_keys(13.0, 120.0), [20.0, 50.0, 100.0]);
        assert_eq!(
            log_keys(0.5, 20_000.0),
            [1.0, 10.0, 100.0, 1000.0, 10_000.0]
        );
    }

    #[test]
    fn time_ticks_never_read_the_same() {
        let t0 = 1_767_225_600.0; // 2026-01-01T00:00:00Z
        for (span, min_step, want) in [
            (120.0, 60.0, vec!["00:00", "00:01", "00:02"]),
            (
                120.0,
                10.0,
                vec!["00:00:00", "00:00:30", "00:01:00", "00:01:30", "00:02:00"],
            ),
            (
                3.0 * 86_400.0,
                3600.0,
                vec!["01-01", "01-02", "01-03", "01-04"],
            ),
            (
                7200.0,
                60.0,
                vec!["00:00", "00:30", "01:00", "01:30", "02:00"],
            ),
            (
                86_400.0,
                3600.0,
                vec![
                    "01-01 00:00",
                    "01-01 06:00",
                    "01-01 12:00",
                    "01-01 18:00",
                    "01-02 00:00",
                ],
            ),
        ] {
            let (keys, label) = time_keys(t0, t0 + span, min_step);
            let got: Vec<String> = keys.iter().map(&label).collect();
            assert_eq!(got, want, "{span} s from {min_step} s");
        }
    }
}
