//! The compact summary, the table's default: a report that fits one screen (its width, and
//! about 40 lines for one set of groups). A headline (time span, request rate, output tokens/s,
//! errors, the chat and agent lines), then per group one table of the latency metrics with the
//! cache classes side by side where they differ, the token counts on one line and at most three
//! findings. `--explain` prints the full report instead ([`crate::output::summary::write_table`]).
//!
//! Also the text table of `--bucket` windows (one row per window and group). Writes only to
//! the writer it is given.

use crate::analysis::{
    AnalysisConfig, Decomposition, GroupReport, Headline, MultimodalFinding, Report,
};
use crate::classify::Coverage;
use crate::metrics::Metric;
use crate::number::fmt_cell;
use crate::summary::window::{format_duration, rfc3339_ms};
use crate::summary::{GroupKey, GroupStats, Summary, group_label, quantile_name};
use std::io::{self, Write};

/// The width a table is fitted to when `$COLUMNS` does not say (and stdout is no terminal).
pub(crate) const DEFAULT_WIDTH: usize = 100;

/// The narrowest width a report is fitted to.
const MIN_WIDTH: usize = 40;

/// How the text table is written: compact or in full, which metrics, how wide.
#[derive(Debug, Clone, PartialEq)]
pub struct TableStyle {
    /// `--explain`: the full report (every table and finding).
    pub explain: bool,
    /// `--metrics`: the metric rows, in this order; `None` for the default rows.
    pub metrics: Option<Vec<Metric>>,
    /// `--quantiles` was given: the compact table shows every quantile asked for (else p50,
    /// p90, p99, and p99.9 from 1,000 values).
    pub quantiles_given: bool,
    /// The width lines are fitted to (`$COLUMNS`, the terminal's, else [`DEFAULT_WIDTH`]).
    pub width: usize,
}

impl Default for TableStyle {
    fn default() -> Self {
        TableStyle {
            explain: false,
            metrics: None,
            quantiles_given: false,
            width: DEFAULT_WIDTH,
        }
    }
}

/// The width to fit: `$COLUMNS` when set to a number, else the terminal's when stdout is one,
/// else [`DEFAULT_WIDTH`]; at least [`MIN_WIDTH`].
pub(crate) fn output_width(stdout_is_terminal: bool) -> usize {
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&w| w > 0);
    let terminal = || {
        stdout_is_terminal
            .then(|| terminal_size::terminal_size().map(|(w, _)| usize::from(w.0)))
            .flatten()
    };
    columns
        .or_else(terminal)
        .unwrap_or(DEFAULT_WIDTH)
        .max(MIN_WIDTH)
}

/// `text` wrapped to `width` at spaces (existing line breaks kept), continuations indented
/// by 2; the first line leaves room for `first_taken` characters before it (a `tokentime: `
/// prefix). A word longer than the width stays whole.
pub(crate) fn wrap(text: &str, width: usize, first_taken: usize) -> String {
    let mut out: Vec<String> = vec![];
    for (k, para) in text.split('\n').enumerate() {
        let mut l = Lines {
            width: width.max(MIN_WIDTH),
            lines: vec![],
            estimates: false,
        };
        let pad = if k == 0 { first_taken } else { 0 };
        l.prose(&format!("{}{para}", "\u{1}".repeat(pad)));
        if k == 0 && pad > 0 {
            l.lines[0] = l.lines[0].trim_start_matches('\u{1}').to_owned();
        }
        out.extend(l.lines);
    }
    out.join("\n")
}

/// Each line of `text` longer than `width` wrapped at spaces, its continuations indented
/// under its last column (a row `  name  unit  paths`: under the paths), else 2 more than
/// the line. Lines that fit are kept as they are; a word longer than the width stays whole.
pub(crate) fn wrap_lines(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        if body.chars().count() <= width {
            out.push_str(line);
            continue;
        }
        let lead = body.len() - body.trim_start().len();
        // Words; a `|` between alternatives goes with the one after it.
        let mut words: Vec<String> = vec![];
        let mut bar = false;
        for w in body[lead..].split(' ') {
            match (w, bar) {
                ("|", _) => bar = true,
                (w, true) => {
                    words.push(format!("| {w}"));
                    bar = false;
                }
                (w, false) => words.push(w.to_owned()),
            }
        }
        let longest = words.iter().map(|w| w.chars().count()).max().unwrap_or(0);
        // The last run of two spaces or more starts the last column: continuations go under
        // it where the longest word fits there.
        let hang = body[lead..]
            .rfind("  ")
            .map(|i| lead + i + body[lead + i..].len() - body[lead + i..].trim_start().len())
            .filter(|&h| h <= width * 2 / 3 && h + longest <= width)
            .unwrap_or(lead + 2);
        let mut cur = String::new();
        for word in &words {
            let len = cur.chars().count();
            if len == 0 {
                cur = format!("{}{word}", " ".repeat(lead));
            } else if len + 1 + word.chars().count() > width && !cur.trim().is_empty() {
                out.push_str(cur.trim_end());
                out.push('\n');
                cur = format!("{}{word}", " ".repeat(hang));
            } else {
                cur.push(' ');
                cur.push_str(word);
            }
        }
        out.push_str(cur.trim_end());
        out.push_str(end);
    }
    out
}

/// The terminal's height in lines (`$LINES`, else the terminal's, else 24).
pub(crate) fn output_height() -> usize {
    std::env::var("LINES")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&h| h > 0)
        .or_else(|| terminal_size::terminal_size().map(|(_, h)| usize::from(h.0)))
        .unwrap_or(24)
        .max(5)
}

/// The width of a `--bucket` table's column of metric `m`: its values' (8), or its header's
/// (`prefill p50`).
fn metric_width(m: Metric) -> usize {
    (short_name(m).len() + 4).max(8)
}

/// A metric's name in `--metrics`: its JSON name without `_ms` (`ttft`, `input_tokens`).
fn short_name(m: Metric) -> &'static str {
    let n = m.json_name();
    n.strip_suffix("_ms").unwrap_or(n)
}

/// Parses a `--metrics` list: short names (`ttft,tpot`) or JSON names (`ttft_ms`).
///
/// # Errors
/// A message naming an unknown metric and listing the known ones.
pub(crate) fn parse_metrics(s: &str) -> Result<Vec<Metric>, String> {
    let mut out: Vec<Metric> = vec![];
    for name in s.split(',') {
        let name = name.trim();
        let m = Metric::ALL
            .into_iter()
            .find(|&m| short_name(m) == name || m.json_name() == name)
            .ok_or_else(|| {
                let known: Vec<&str> = Metric::ALL.into_iter().map(short_name).collect();
                format!(
                    "--metrics: unknown metric {name:?} (known: {})",
                    known.join(", ")
                )
            })?;
        if !out.contains(&m) {
            out.push(m);
        }
    }
    Ok(out)
}

/// The latency metrics the compact table shows by default, where they have values.
const DEFAULT_ROWS: [Metric; 6] = [
    Metric::Ttft,
    Metric::Tpot,
    Metric::E2e,
    Metric::Queue,
    Metric::Prefill,
    Metric::Decode,
];

/// The metrics the `--bucket` table shows by default.
const DEFAULT_WINDOW_METRICS: [Metric; 3] = [Metric::Ttft, Metric::Tpot, Metric::E2e];

/// A duration in ms as the compact forms print it: from 10 s up in seconds (`26.4s`), below
/// in ms ([`fmt_cell`]).
pub(crate) fn duration_cell(ms: f64) -> String {
    let s = ms / 1000.0;
    if s.abs() >= 1000.0 {
        format!("{s:.0}s")
    } else if s.abs() >= 10.0 {
        format!("{s:.1}s")
    } else {
        fmt_cell(ms)
    }
}

/// A duration in ms in a line of prose: [`duration_cell`] with its unit, `26.4s` or
/// `3251.7ms`, so that every value of a line says its unit.
pub(crate) fn duration_text(ms: f64) -> String {
    let cell = duration_cell(ms);
    if cell.ends_with('s') {
        cell
    } else {
        format!("{cell}ms")
    }
}

/// A token count: whole when it is whole or from 10 up, else [`fmt_cell`].
fn count_cell(v: f64) -> String {
    // A whole count reads as one (`5`, not `5.0`); a quantile between two counts keeps its
    // decimals below 10 (`4.5`).
    if v.abs() >= 10.0 || v.fract() == 0.0 {
        let v = v + 0.0;
        format!("{v:.0}")
    } else {
        fmt_cell(v)
    }
}

fn value_cell(m: Metric, v: f64) -> String {
    if m.is_duration() {
        duration_cell(v)
    } else {
        count_cell(v)
    }
}

/// A share as a whole percentage, with the decimals (up to 3) it takes not to read 100% short
/// of all or 0% above none (`99.9%`, `0.3%`).
fn pct(x: f64) -> String {
    let p = x * 100.0 + 0.0;
    let mut digits = 0;
    while digits < 3 {
        let shown: f64 = format!("{p:.digits$}").parse().unwrap_or(p);
        if !(p < 100.0 && shown >= 100.0 || p > 0.0 && shown <= 0.0) {
            break;
        }
        digits += 1;
    }
    format!("{p:.digits$}%")
}

/// A rate of `what` per second, in the unit of time that puts it at 0.1 or more: `12.3
/// requests/s`, `0.96 requests/min` (2 requests over 2 minutes), `58 requests/h`, `0.95 output
/// tokens/day`; a month of archives is not `0.00 requests/s`.
fn per_time(per_s: f64, what: &str) -> String {
    let (k, unit) = time_unit(per_s);
    format!("{} {what}/{unit}", rate(per_s * k))
}

/// The unit of time [`per_time`] writes a rate in: seconds in it, and its name.
pub(crate) fn time_unit(per_s: f64) -> (f64, &'static str) {
    [(1.0, "s"), (60.0, "min"), (3600.0, "h"), (86_400.0, "day")]
        .into_iter()
        .find(|&(k, _)| {
            let x = per_s * k;
            x >= 0.1 || x <= 0.0 || !x.is_finite()
        })
        .unwrap_or((86_400.0, "day"))
}

/// When some requests with times failed or were cancelled: how many of them completed, and
/// their rate over the span in the unit of the first line's request rate (`284 completed
/// (0.10 requests/s)`, `(6.2 requests/min)`): a server's load counts every request, a
/// benchmark's throughput the completed ones. `None` when all completed or no rate is given.
pub(crate) fn completed_rate(g: &GroupStats) -> Option<String> {
    let secs = g.rate_secs()?;
    let timed = g.timed_requests();
    let completed = g.timed_completed().filter(|&c| c < timed)?;
    let (k, unit) = time_unit(timed as f64 / secs);
    let with_times = if timed < g.requests {
        " with times"
    } else {
        ""
    };
    Some(format!(
        "{completed} completed{with_times} ({} requests/{unit})",
        rate(completed as f64 / secs * k)
    ))
}

/// A rate: 3 significant digits or so (two below 0.1).
pub(crate) fn rate(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else if x >= 0.1 || x <= 0.0 || !x.is_finite() {
        format!("{x:.2}")
    } else {
        // Two significant digits: a month of 8,000 requests is 0.0033 requests/s, not 0.00.
        let digits = ((-x.log10()).ceil() as usize + 1).min(9);
        format!("{x:.digits$}")
    }
}

/// A large count shortened (`17.6k`, `2.1M`).
fn short_count(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.1}M", x / 1e6)
    } else if x >= 1e4 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

/// Lines fitted to `width`: prose wrapped at spaces (continuations indented by 2), tables
/// cut.
struct Lines {
    width: usize,
    lines: Vec<String>,
    /// Some line shows a t-digest estimate (`~`): the footer then says what `~` means.
    estimates: bool,
}

impl Lines {
    fn prose(&mut self, text: &str) {
        let mut line = String::new();
        for word in text.split(' ') {
            let len = line.chars().count();
            if len > 0 && len + 1 + word.chars().count() > self.width {
                self.lines.push(std::mem::take(&mut line));
                line.push_str("  ");
            } else if len > 0 {
                line.push(' ');
            }
            line.push_str(word);
        }
        self.lines.push(line);
    }

    fn table(&mut self, text: String) {
        if text.chars().count() > self.width {
            let mut cut: String = text.chars().take(self.width.saturating_sub(1)).collect();
            cut.push('…');
            self.lines.push(cut);
        } else {
            self.lines.push(text);
        }
    }
}

/// Writes the compact summary ([`crate::output::compact`]).
///
/// # Errors
/// The writer's.
pub(crate) fn write_compact(
    out: &mut impl Write,
    cov: &Coverage,
    summary: &mut Summary,
    quantiles: &[f64],
    report: &Report,
    style: &TableStyle,
) -> io::Result<()> {
    for line in compact_lines(cov, summary, quantiles, report, style) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// The compact summary's lines ([`write_compact`]; `--every` clips them to the terminal).
pub(crate) fn compact_lines(
    cov: &Coverage,
    summary: &mut Summary,
    quantiles: &[f64],
    report: &Report,
    style: &TableStyle,
) -> Vec<String> {
    let report = &report.only(style.metrics.as_deref());
    let mut l = Lines {
        width: style.width.max(MIN_WIDTH),
        lines: vec![],
        estimates: false,
    };
    let targets = summary.targets().cloned();
    let span_s = crate::summary::log_span(summary);
    let top = summary.top().clone();
    let no_requests = summary.no_requests(cov);
    let mut groups = summary.groups();
    let all = groups.iter().position(|(k, _)| k.is_empty());
    headline_lines(
        &mut l,
        cov,
        all.map(|i| &mut *groups[i].1),
        report.headline.as_ref(),
        (&top, &no_requests),
    );
    let ctx = Ctx {
        quantiles,
        style,
        span_s,
        targets: targets.as_ref(),
    };
    // The blocks: all requests, then each `--by` group; the cache classes are columns.
    let tops: Vec<usize> = (0..groups.len())
        .filter(|&i| !groups[i].0.iter().any(|(k, _)| k == "cache"))
        .collect();
    let shown = shown_by_groups(&mut groups, &tops);
    let parent_counts = all.map(|i| (groups[i].1.requests, groups[i].1.errors));
    for &i in &tops {
        let top = groups[i].0.is_empty();
        if !top && !shown.contains(&i) {
            continue;
        }
        l.lines.push(String::new());
        let classes: Vec<usize> = (0..groups.len())
            .filter(|&c| cache_child_of(&groups[i].0, &groups[c].0))
            .collect();
        let counts = (groups[i].1.requests, groups[i].1.errors);
        if !top && Some(counts) == parent_counts {
            l.prose(&format!(
                "{}: all {} (the same as all requests)",
                group_label(&groups[i].0, "all requests"),
                crate::output::summary::plural(counts.0, "request")
            ));
            continue;
        }
        ctx.block(
            &mut l,
            &mut groups,
            i,
            &classes,
            &report.groups,
            if top { 3 } else { 1 },
        );
    }
    let by_groups = tops.iter().filter(|&&i| !groups[i].0.is_empty()).count();
    let hidden = by_groups - shown.len();
    if hidden > 0 {
        l.lines.push(String::new());
        l.prose(&format!(
            "{} more, with fewer requests: --explain or -o json lists every group",
            crate::output::summary::plural(hidden as u64, "group")
        ));
    }
    l.lines.push(String::new());
    l.prose(if l.estimates {
        "durations in ms, from 10 s in s; ~ marks t-digest estimates; --explain: the full report"
    } else {
        "durations in ms, from 10 s in s; --explain: the full report"
    });
    l.lines
}

/// The `--by` groups shown (at most [`MAX_BY_GROUPS`], those of most requests).
const MAX_BY_GROUPS: usize = 8;

fn shown_by_groups(groups: &mut [(GroupKey, &mut GroupStats)], tops: &[usize]) -> Vec<usize> {
    let mut by: Vec<usize> = tops
        .iter()
        .copied()
        .filter(|&i| !groups[i].0.is_empty())
        .collect();
    by.sort_by_key(|&i| std::cmp::Reverse(groups[i].1.requests));
    by.truncate(MAX_BY_GROUPS);
    by
}

/// Whether `child` is `parent` with `cache` added.
fn cache_child_of(parent: &GroupKey, child: &GroupKey) -> bool {
    child.len() == parent.len() + 1
        && child.last().is_some_and(|(k, _)| k == "cache")
        && child[..parent.len()] == parent[..]
}

/// The headline: span, rate, output tokens/s; errors and the lines read; the errors' top
/// reasons; chat; agent; the slowest requests.
fn headline_lines(
    l: &mut Lines,
    cov: &Coverage,
    all: Option<&mut GroupStats>,
    h: Option<&Headline>,
    (top, no_requests): (&crate::summary::top::Top, &str),
) {
    let Some(g) = all else {
        let issues: Vec<String> = crate::output::summary::coverage_issues(cov)
            .into_iter()
            .map(|(label, n)| format!("{label} {n}"))
            .collect();
        let issues = if issues.is_empty() {
            String::new()
        } else {
            format!(": {}", issues.join(", "))
        };
        l.prose(&format!(
            "{}, no request{issues}",
            crate::output::summary::plural(cov.lines, "line")
        ));
        if cov.lines > 0 {
            l.prose(no_requests);
        }
        return;
    };
    l.prose(&span_line(g));
    l.prose(&errors_line(cov, g));
    if let Some(line) = crate::output::top::reasons_line(top, l.width) {
        l.table(line);
    }
    if let Some(h) = h {
        if let Some(c) = &h.chat {
            let ttft = if c.ttft.is_empty() {
                crate::analysis::no_value("TTFT", &c.ttft_nulls)
            } else {
                let qs: Vec<String> = c
                    .ttft
                    .iter()
                    .map(|&(q, v)| format!("{} {}", quantile_name(q), duration_text(v)))
                    .collect();
                let from = if c.ttft_from_scheduled {
                    " (from `scheduled`)"
                } else {
                    ""
                };
                let est = if c.ttft_exact { "" } else { "~" };
                l.estimates |= !c.ttft_exact;
                format!("TTFT{est} {}{from}", qs.join(", "))
            };
            let slow = if c.tpot_count > 0 {
                l.estimates |= !c.slower_exact;
                format!(
                    "; {}{} decode slower than reading ({} tokens/s)",
                    if c.slower_exact { "" } else { "~" },
                    pct(c.slower_than_reading),
                    c.reading_speed
                )
            } else {
                String::new()
            };
            l.prose(&format!("chat:  {ttft}{slow}"));
        }
        if let Some(a) = &h.agent {
            let e2e = if a.e2e.is_empty() {
                crate::analysis::no_value("E2E", &a.e2e_nulls)
            } else {
                let qs: Vec<String> = a
                    .e2e
                    .iter()
                    .map(|&(q, v)| format!("{} {}", quantile_name(q), duration_text(v)))
                    .collect();
                let est = if a.e2e_exact { "" } else { "~" };
                l.estimates |= !a.e2e_exact;
                format!("E2E{est} {}", qs.join(", "))
            };
            // Over the requests with a decode, which some logs give for a few only: said when
            // they are under half (`--explain` says it whenever some have none).
            let from = if a.decode_count * 2 < a.e2e_count {
                format!(", {} of {} requests", a.decode_count, a.e2e_count)
            } else {
                String::new()
            };
            let decode = match (a.decode_share_total, a.decode_share_median) {
                (Some(t), Some(m)) => format!(
                    "; decode is {} of E2E time (per request: median {}{from})",
                    pct(t),
                    pct(m)
                ),
                _ => String::new(),
            };
            l.prose(&format!("agent: {e2e}{decode}"));
        }
    }
    if let Some(line) = crate::output::top::slowest_line(top, l.width) {
        l.table(line);
    }
}

/// RFC 3339 to the second (`2026-01-01T00:01:00Z`).
fn rfc3339_s(ns: i64) -> String {
    let t = rfc3339_ms(ns);
    format!("{}Z", &t[..19])
}

/// The headline's first line: the requests, the log's time span, and the rates over it; for
/// requests without times of their own, the rates over their benchmark runs' durations.
pub(crate) fn span_line(g: &mut GroupStats) -> String {
    let mut first = crate::output::summary::plural(g.requests, "request");
    let runs = runs_rates(g);
    if let Some((a, b)) = g.span {
        let (a_s, b_s) = (rfc3339_s(a), rfc3339_s(b));
        let end = if a_s[..10] == b_s[..10] {
            b_s[11..].to_owned()
        } else {
            b_s
        };
        let secs = (b - a) as f64 / 1e9;
        first.push_str(&format!(" from {a_s} to {end} ({})", span_text(b - a)));
        if g.rate_window.is_some()
            && let Some(secs) = g.rate_secs()
        {
            // A live window's rates run over its wall time (or its requests' ends), not their
            // span from the first start.
            let (timed, out_tokens) = g.timed();
            first.push_str(&format!(
                "; over the last {}: {}{}",
                span_text((secs * 1e9) as i64),
                per_time(timed as f64 / secs, "requests"),
                tokens_rate(g, out_tokens / secs)
            ));
        } else if secs > 0.0 {
            // Over the span of the requests with times: one of a format that logs none is in
            // no span (`GroupStats::untimed`).
            let (timed, out_tokens) = g.timed();
            if timed < 2 {
                // One request's 1 / E2E is no rate anything ran at.
                first.push_str(" (one request with times: no rates)");
            } else {
                let of = match GroupStats::rates_of(timed, g.requests) {
                    of if of.is_empty() => ":".to_owned(),
                    of => of,
                };
                first.push_str(&format!(
                    "{of} {}{}",
                    per_time(timed as f64 / secs, "requests"),
                    tokens_rate(g, out_tokens / secs)
                ));
            }
        }
        if let Some((n, of, rates)) = runs {
            first.push_str(&format!("; the {n} in {of}: {rates}"));
        }
    } else if let Some((n, of, rates)) = runs {
        if n == g.requests {
            first.push_str(&format!(" in {of}: {rates}"));
        } else {
            first.push_str(&format!(
                "; rates of the {n} in {of} ({} without): {rates}",
                g.requests - n
            ));
        }
    } else {
        first.push_str(" (the log gives no times: no rates)");
    }
    first
}

/// The rates of a group's requests over their benchmark runs, for the group's title (`; 0.65
/// requests/s, 139 output tokens/s over 1 run of 5m07s`): a sweep split `--by request_rate`
/// shows each run's throughput. Empty for all requests (the first line has them) and a group
/// without runs.
pub(crate) fn runs_title(key: &GroupKey, g: &mut GroupStats) -> String {
    match runs_rates(g) {
        Some((_, of, rates)) if !key.is_empty() => format!("; {rates} over {of}"),
        _ => String::new(),
    }
}

/// `, N output tokens/s`; nothing when no request logged its output tokens (a rate of 0 would
/// say none were made).
fn tokens_rate(g: &GroupStats, per_s: f64) -> String {
    if !g.output_tokens_logged() {
        String::new()
    } else {
        format!(", {}", per_time(per_s, "output tokens"))
    }
}

/// The rates of the group's requests over their benchmark runs' durations: how many requests,
/// over what (`1 run of 3m25s`, `2 runs of 21.2s in all`), and the rates (the completed
/// requests', as the benchmarks give their throughput, when some failed); `None` when no
/// request came with its run's duration.
fn runs_rates(g: &mut GroupStats) -> Option<(u64, String, String)> {
    if g.runs.0.is_empty() {
        return None;
    }
    let (t, secs) = g.runs.total();
    let of = match g.runs.0.len() {
        1 => format!("1 run of {}", span_text(t.ns)),
        n => format!("{n} runs of {} in all", span_text(t.ns)),
    };
    let requests = if t.completed < t.requests {
        per_time(t.completed as f64 / secs, "completed requests")
    } else {
        per_time(t.requests as f64 / secs, "requests")
    };
    let tokens = tokens_rate(g, t.output_tokens as f64 / secs);
    Some((t.requests, of, format!("{requests}{tokens}")))
}

/// A span as people read it, rounded to its last unit: `12m31s`, `2h05m`, `3d04h`, `15.2s`
/// (15.198 s), `850ms`.
fn span_text(ns: i64) -> String {
    const MS: i64 = 1_000_000;
    const S: i64 = 1_000_000_000;
    if ns / MS == 0 {
        // None at all, or under a millisecond (a log of whole seconds gives 0): no unit finer
        // than the log's.
        return "0s".to_owned();
    }
    // Rounded to the nearest `unit`: `None` when that reaches `limit` (a longer span's form).
    let round = |unit: i64, limit: i64| {
        let n = (ns + unit / 2) / unit;
        (n * unit < limit).then_some(n)
    };
    if let Some(ms) = round(MS, S) {
        return format_duration(ms * MS);
    }
    if let Some(tenths) = round(S / 10, 60 * S) {
        // Tenths under a minute: the rates beside it divide by it (8 requests in 7.5 s).
        return format!("{}.{}s", tenths / 10, tenths % 10);
    }
    if let Some(s) = round(S, 3600 * S) {
        return format!("{}m{:02}s", s / 60, s % 60);
    }
    if let Some(m) = round(60 * S, 86_400 * S) {
        return format!("{}h{:02}m", m / 60, m % 60);
    }
    let h = (ns + 1800 * S) / (3600 * S);
    format!("{}d{:02}h", h / 24, h % 24)
}

/// Errors (their share), cancellations, then the lines read: formats and what was not a
/// request.
fn errors_line(cov: &Coverage, g: &GroupStats) -> String {
    let mut s = format!("errors {}", g.errors);
    if g.requests > 0 {
        s.push_str(&format!(
            " ({:.1}%)",
            g.errors as f64 / g.requests as f64 * 100.0
        ));
    }
    if g.cancelled > 0 {
        s.push_str(&format!(
            ", {} cancelled after the first token",
            g.cancelled
        ));
    }
    if g.response_cache > 0 {
        s.push_str(&format!(
            ", {} answered from a response cache",
            g.response_cache
        ));
    }
    if let Some(completed) = completed_rate(g) {
        s.push_str(&format!(", {completed}"));
    }
    let formats: Vec<String> = cov
        .formats
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    s.push_str(&format!(
        "; {}",
        crate::output::summary::plural(cov.lines, "line")
    ));
    if !formats.is_empty() {
        s.push_str(&format!(" ({})", formats.join(", ")));
    }
    let issues: Vec<String> = crate::output::summary::coverage_issues(cov)
        .into_iter()
        .map(|(label, n)| format!("{label} {n}"))
        .collect();
    if !issues.is_empty() {
        s.push_str(&format!(", {}", issues.join(", ")));
    }
    s
}

/// What every group block shares.
struct Ctx<'a> {
    quantiles: &'a [f64],
    style: &'a TableStyle,
    span_s: Option<f64>,
    targets: Option<&'a crate::summary::slo::Targets>,
}

/// A column of the compact table: a quantile of the group, or one of a cache class.
#[derive(Clone, Copy, PartialEq)]
enum Col {
    All(f64),
    Class(usize, f64),
}

impl Ctx<'_> {
    /// The metric rows of a group: `--metrics`, or the latency metrics with values.
    fn rows(&self, g: &mut GroupStats) -> Vec<Metric> {
        match &self.style.metrics {
            Some(m) => m.clone(),
            None => DEFAULT_ROWS
                .into_iter()
                .filter(|&m| g.metric(m).digest.count() > 0)
                .collect(),
        }
    }

    /// The group's quantile columns: those asked for (by default p50, p90, p99, and p99.9 or
    /// beyond only when some row has the values to estimate it).
    fn all_quantiles(&self, g: &mut GroupStats, rows: &[Metric]) -> Vec<f64> {
        let most = rows
            .iter()
            .map(|&m| g.metric(m).digest.count())
            .max()
            .unwrap_or(0);
        self.quantiles
            .iter()
            .copied()
            .filter(|&q| self.style.quantiles_given || (q != 0.95 && !needs_more(q, most)))
            .collect()
    }

    /// The quantiles of each cache class's columns: p50 and p99, or with `--quantiles` the
    /// first and the last of the group's that some class has the values for (`most`, its
    /// largest count).
    fn class_quantiles(&self, qs: &[f64], most: u64) -> Vec<f64> {
        if !self.style.quantiles_given {
            return vec![0.5, 0.99];
        }
        let qs: Vec<f64> = qs
            .iter()
            .copied()
            .filter(|&q| !needs_more(q, most))
            .collect();
        match qs[..] {
            [] => vec![],
            [a] => vec![a],
            [a, .., b] => vec![a, b],
        }
    }

    /// Writes one group: its title, its table, tokens, goodput, notes and findings.
    fn block(
        &self,
        l: &mut Lines,
        groups: &mut [(GroupKey, &mut GroupStats)],
        i: usize,
        classes: &[usize],
        reports: &[GroupReport],
        max_findings: usize,
    ) {
        let label = group_label(&groups[i].0, "all requests");
        let (requests, errors) = (groups[i].1.requests, groups[i].1.errors);
        let mut title = format!(
            "{label}: {}, {}{}",
            crate::output::summary::plural(requests, "request"),
            crate::output::summary::plural(errors, "error"),
            if requests > 0 {
                format!(" ({:.1}%)", errors as f64 / requests as f64 * 100.0)
            } else {
                String::new()
            }
        );
        let class_names: Vec<String> = classes
            .iter()
            .map(|&c| {
                let v = groups[c].0.last().and_then(|(_, v)| v.clone());
                format!(
                    "{} {}",
                    v.as_deref().unwrap_or("unknown"),
                    groups[c].1.requests
                )
            })
            .collect();
        title.push_str(&runs_title(&groups[i].0, groups[i].1));
        if !class_names.is_empty() {
            title.push_str(&format!("; cache {}", class_names.join(", ")));
        }
        l.prose(&title);
        let rows = self.rows(groups[i].1);
        let latency = rows
            .iter()
            .any(|&m| groups[i].1.metric(m).digest.count() > 0);
        if !latency {
            l.prose("no latency values (--explain says why each metric is null)");
        } else {
            self.table(l, groups, i, classes, &rows);
        }
        if let Some(t) = tokens_line(groups[i].1, &mut l.estimates) {
            l.prose(&t);
        }
        if let Some(t) = self.targets {
            l.prose(&crate::output::summary::goodput_line(
                groups[i].1,
                t,
                self.span_s,
            ));
        }
        if let Some(n) = origin_note(groups[i].1) {
            l.prose(&n);
        }
        for f in findings(&reports[i], max_findings) {
            l.prose(&format!("* {f}"));
        }
    }

    /// The metric table of group `i`, with its cache classes side by side where they differ
    /// (those that fit the width).
    fn table(
        &self,
        l: &mut Lines,
        groups: &mut [(GroupKey, &mut GroupStats)],
        i: usize,
        classes: &[usize],
        rows: &[Metric],
    ) {
        let mut qs = self.all_quantiles(groups[i].1, rows);
        let mut side: Vec<usize> = if classes_differ(groups, classes, rows) {
            classes.to_vec()
        } else {
            vec![]
        };
        let most = side
            .iter()
            .flat_map(|&c| rows.iter().map(move |&m| (c, m)))
            .map(|(c, m)| groups[c].1.metric(m).digest.count())
            .max()
            .unwrap_or(0);
        let class_qs = self.class_quantiles(&qs, most);
        if class_qs.is_empty() {
            // No class has the values for any quantile asked for: no class columns.
            side.clear();
        }
        let (mut left_classes, mut left_qs) = (vec![], vec![]);
        loop {
            let mut cols: Vec<Col> = qs.iter().map(|&q| Col::All(q)).collect();
            for &c in &side {
                cols.extend(class_qs.iter().map(|&q| Col::Class(c, q)));
            }
            let text = render_table(groups, i, rows, &cols);
            let too_wide = text.iter().any(|t| t.chars().count() > l.width);
            if too_wide && !side.is_empty() {
                // The class of fewest values in these rows goes first (one with none, all
                // `-`, before any with some), then of fewest requests.
                let (k, _) = side
                    .iter()
                    .enumerate()
                    .map(|(k, &c)| {
                        let values: u64 = (rows.iter())
                            .map(|&m| groups[c].1.metric(m).digest.count())
                            .sum();
                        (k, (values, groups[c].1.requests))
                    })
                    .min_by_key(|&(_, order)| order)
                    .expect("a class");
                left_classes.push(class_title(&groups[side.remove(k)].0));
                continue;
            }
            if too_wide && let Some(k) = qs.iter().position(|&q| q != 0.5 && q != 0.99) {
                left_qs.push(quantile_name(qs.remove(k)));
                continue;
            }
            if self.style.quantiles_given && !side.is_empty() && class_qs.len() < qs.len() {
                let names: Vec<String> = class_qs.iter().map(|&q| quantile_name(q)).collect();
                l.prose(&format!(
                    "cache columns: {} only (--explain: every quantile of each class)",
                    names.join(" and ")
                ));
            }
            l.estimates |= rows
                .iter()
                .any(|&m| !groups[i].1.metric(m).digest.is_exact());
            for t in text {
                l.table(t);
            }
            left_qs.reverse();
            left_qs.extend(left_classes);
            if !left_qs.is_empty() {
                l.prose(&format!(
                    "left out at {} columns: {}; widen the terminal or see --explain",
                    l.width,
                    left_qs.join(", ")
                ));
            }
            return;
        }
    }
}

/// A cache class's title over its columns (`cache=hit`).
fn class_title(key: &GroupKey) -> String {
    let v = key.last().and_then(|(_, v)| v.as_deref());
    format!("cache={}", v.unwrap_or("unknown"))
}

/// Whether a quantile needs more values than `n` to be more than the maximum (p99.9 from
/// 1,000 values; p99 and below always shown).
fn needs_more(q: f64, n: u64) -> bool {
    q > 0.99 && (n as f64) < (1.0 / (1.0 - q)).round()
}

/// Whether the cache classes differ enough to be shown side by side: two or more with values,
/// and some metric whose p50 differs by a quarter between them.
fn classes_differ(
    groups: &mut [(GroupKey, &mut GroupStats)],
    classes: &[usize],
    rows: &[Metric],
) -> bool {
    if classes.len() < 2 {
        return false;
    }
    rows.iter().any(|&m| {
        let p50s: Vec<f64> = classes
            .iter()
            .filter_map(|&c| groups[c].1.metric(m).digest.quantile(0.5))
            .collect();
        let lo = p50s.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = p50s.iter().copied().fold(0.0, f64::max);
        p50s.len() >= 2 && lo > 0.0 && hi / lo >= 1.25
    })
}

/// The table's lines: a header (two lines with class columns), then a row per metric.
fn render_table(
    groups: &mut [(GroupKey, &mut GroupStats)],
    i: usize,
    rows: &[Metric],
    cols: &[Col],
) -> Vec<String> {
    let mut header = vec!["metric".to_owned(), "n".to_owned()];
    header.extend(cols.iter().map(|c| match *c {
        Col::All(q) | Col::Class(_, q) => quantile_name(q),
    }));
    let mut table = vec![header];
    for &m in rows {
        let st = groups[i].1.metric(m);
        let n = st.digest.count();
        let mut name = m.json_name().to_owned();
        if !st.digest.is_exact() {
            name.push('~');
        }
        let mut row = vec![name, n.to_string()];
        for c in cols {
            let cell = match *c {
                Col::All(q) if needs_more(q, n) => Some(String::new()),
                Col::All(q) => groups[i]
                    .1
                    .metric(m)
                    .digest
                    .quantile(q)
                    .map(|v| value_cell(m, v)),
                Col::Class(c, q) if needs_more(q, groups[c].1.metric(m).digest.count()) => {
                    Some(String::new())
                }
                Col::Class(c, q) => groups[c]
                    .1
                    .metric(m)
                    .digest
                    .quantile(q)
                    .map(|v| value_cell(m, v)),
            }
            .unwrap_or_else(|| "-".to_owned());
            row.push(cell);
        }
        table.push(row);
    }
    let ncols = table[0].len();
    let widths: Vec<usize> = (0..ncols)
        .map(|c| {
            table
                .iter()
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
                .max(if c >= 2 { 6 } else { 0 })
        })
        .collect();
    // Between the group's columns and each class's pair, a wider gap.
    let gap = |c: usize| -> usize {
        match (cols.get(c.wrapping_sub(3)), cols.get(c.wrapping_sub(2))) {
            (Some(Col::All(_)), Some(Col::Class(..))) => 4,
            (Some(Col::Class(a, _)), Some(Col::Class(b, _))) if a != b => 4,
            _ => 2,
        }
    };
    // The right edge of each column.
    let mut edges = vec![];
    let mut at = 0;
    for (c, w) in widths.iter().enumerate() {
        at += w + if c > 0 { gap(c) } else { 0 };
        edges.push(at);
    }
    let mut lines = vec![];
    if cols.iter().any(|c| matches!(c, Col::Class(..))) {
        // The titles over the columns: `all` over the group's, each class over its pair.
        let mut titles: Vec<(usize, String)> = vec![];
        if let Some(last) = cols.iter().rposition(|c| matches!(c, Col::All(_))) {
            titles.push((edges[last + 2], "all".to_owned()));
        }
        for (k, c) in cols.iter().enumerate() {
            // Over each class's last column.
            if let Col::Class(g, _) = *c
                && !matches!(cols.get(k + 1), Some(Col::Class(h, _)) if *h == g)
            {
                titles.push((edges[k + 2], class_title(&groups[g].0)));
            }
        }
        let mut top = String::new();
        for (edge, title) in titles {
            let len = top.chars().count();
            let pad = edge
                .saturating_sub(len + title.chars().count())
                .max(usize::from(len > 0));
            top.push_str(&" ".repeat(pad));
            top.push_str(&title);
        }
        lines.push(top);
    }
    for r in &table {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            let w = widths[c];
            if c == 0 {
                line.push_str(&format!("{cell:<w$}"));
            } else {
                line.push_str(&" ".repeat(gap(c)));
                line.push_str(&format!("{cell:>w$}"));
            }
        }
        lines.push(line.trim_end().to_owned());
    }
    lines
}

/// The token counts on one line: p50 (p99) of input, cached and output tokens, and the output
/// tokens in all; sets `estimates` when one of them is a t-digest estimate.
fn tokens_line(g: &mut GroupStats, estimates: &mut bool) -> Option<String> {
    let mut parts = vec![];
    for m in [
        Metric::InputTokens,
        Metric::CachedTokens,
        Metric::OutputTokens,
    ] {
        let d = &mut g.metric(m).digest;
        if d.count() == 0 {
            continue;
        }
        let (Some(p50), Some(p99)) = (d.quantile(0.5), d.quantile(0.99)) else {
            continue;
        };
        let name = short_name(m).trim_end_matches("_tokens");
        // `~` after the name for t-digest estimates, as on a table's row.
        let est = if d.is_exact() { "" } else { "~" };
        *estimates |= !d.is_exact();
        parts.push(format!(
            "{name}{est} {} ({})",
            count_cell(p50),
            count_cell(p99)
        ));
    }
    if parts.is_empty() {
        return None;
    }
    let total = g.metric(Metric::OutputTokens).digest.sum();
    let mut s = format!("tokens p50 (p99): {}", parts.join(", "));
    if total > 0.0 {
        s.push_str(&format!("; {} output tokens", short_count(total)));
    }
    Some(s)
}

/// The note on TTFT's origin, when it is not the arrival for every request.
fn origin_note(g: &GroupStats) -> Option<String> {
    if g.ttft_origins.len() > 1 {
        let mixed: Vec<String> = g
            .ttft_origins
            .iter()
            .map(|(o, n)| format!("{o} {n}"))
            .collect();
        return Some(format!(
            "note: ttft_ms mixes origins ({}): compare like with like",
            mixed.join(", ")
        ));
    }
    g.ttft_from_scheduled_only().then(|| {
        "note: ttft_ms runs from `scheduled`: the queue before it is not in the log".to_owned()
    })
}

/// At most `max` findings of a group, one line each, by what a latency expert acts on first:
/// a multimodal TTFT and the split that explains it, TPOT under load, TTFT growing with queue
/// time or with prompts, then the other multimodal latency metrics.
pub(crate) fn findings(r: &GroupReport, max: usize) -> Vec<String> {
    let mut out = vec![];
    let latency = |f: &&MultimodalFinding| f.metric.is_duration();
    if let Some(f) = r.multimodal.iter().find(|f| f.metric == Metric::Ttft) {
        out.push(modes_text(f));
    }
    if let Some(i) = r
        .inflight
        .as_ref()
        .filter(|i| crate::output::findings::unreliable(i))
    {
        // Said, not left out: a reader would take its absence for a TPOT flat under load.
        out.push(format!(
            "TPOT under load: not read, the log is out of time order ({} requests placed late: \
             files newest first, or shuffled lines); sort it by time",
            i.late
        ));
    } else if let Some(i) = &r.inflight
        && i.rows.len() >= 2
        && let (Some(slope), Some((a, b))) = (i.slope_ms, i.ends())
        && let (first, last) = (i.medians[a], i.medians[b])
        && slope > 0.0
        && first > 0.0
        && last / first >= 1.5
    {
        out.push(format!(
            "TPOT under load: p50 {} at {} in flight, {} at {} ({:.1}x; +{} per request)",
            duration_text(first),
            i.rows[a].label,
            duration_text(last),
            i.rows[b].label,
            last / first,
            duration_text(slope)
        ));
    }
    match &r.decomposition {
        Some(d) if !matches!(d.reading, "flat" | "few") => out.push(decomposition_text(d)),
        Some(_) => {}
        None => {
            if let Some((a, b)) = crate::analysis::held_ends(&r.ttft_by_input)
                && let (a, b) = (&r.ttft_by_input[a], &r.ttft_by_input[b])
                && let (Some(pa), Some(pb)) = (p50_of(a), p50_of(b))
                && pa > 0.0
                && pb / pa >= 2.0
            {
                out.push(format!(
                    "TTFT grows with the prompt: p50 {} at {} input tokens, {} at {} ({:.1}x)",
                    duration_text(pa),
                    a.label,
                    duration_text(pb),
                    b.label,
                    pb / pa
                ));
            }
        }
    }
    for f in r.multimodal.iter().filter(latency) {
        if f.metric != Metric::Ttft {
            out.push(modes_text(f));
        }
    }
    out.truncate(max);
    out
}

/// A bucket's median, at a fixed probability: the findings do not follow `--quantiles`.
fn p50_of(r: &crate::analysis::BucketRow) -> Option<f64> {
    r.p50
}

/// A multimodal metric in one line: its modes and the split that explains it.
fn modes_text(f: &MultimodalFinding) -> String {
    let name = match f.metric {
        Metric::Queue => "Queue time".to_owned(),
        Metric::Prefill => "Prefill".to_owned(),
        Metric::Decode => "Decode".to_owned(),
        m => short_name(m).to_uppercase(),
    };
    let modes: Vec<String> = f
        .modality
        .modes
        .iter()
        .map(|m| format!("{} ({})", duration_text(m.center), pct(m.share)))
        .collect();
    // "Multimodal" would read as image or audio input in this field: a count of modes.
    let kind = if modes.len() == 2 {
        "is bimodal".to_owned()
    } else {
        format!("has {} modes", modes.len())
    };
    let modes = match modes.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => modes.join(""),
    };
    // The splits of the full report, and the load's (requests in flight) where it does better.
    let best = f.best_split();
    let by = crate::analysis::Split::by;
    let split = match best.filter(|s| s.explains) {
        Some(s) => {
            let shown = shown_groups(s);
            let parts: Vec<String> = shown
                .iter()
                .map(|&i| &s.groups[i])
                .map(|(v, _, m, _)| {
                    let values: Vec<&str> = v
                        .iter()
                        .map(|x| x.as_deref().unwrap_or("unknown"))
                        .collect();
                    format!("{} mode {}", values.join("/"), m + 1)
                })
                .collect();
            let more = match s.groups.len() - shown.len() {
                0 => String::new(),
                n => format!(" (+{n} more)"),
            };
            format!(
                "; split by {} explains it: {}{more}",
                by(s),
                parts.join(", ")
            )
        }
        None => match best {
            Some(s) => {
                // Its purest group of a tenth of the values or more, where one sits in a mode
                // as a split that explains would.
                let n: f64 = s.groups.iter().map(|g| g.1).sum();
                let purest = s
                    .groups
                    .iter()
                    .filter(|g| g.3 >= crate::analysis::EXPLAINED_PURITY && g.1 >= 0.1 * n)
                    .max_by(|a, b| a.3.total_cmp(&b.3).then(a.1.total_cmp(&b.1)))
                    .map(|(v, _, m, share)| {
                        let v: Vec<&str> = v
                            .iter()
                            .map(|x| x.as_deref().unwrap_or("unknown"))
                            .collect();
                        format!("; {} {} in mode {}", v.join("/"), pct(*share), m + 1)
                    })
                    .unwrap_or_default();
                format!(
                    "; no split explains it (best: by {}, {}{purest})",
                    by(s),
                    pct(s.purity)
                )
            }
            None => String::new(),
        },
    };
    format!("{name} {kind}: {modes}{split}")
}

/// Which groups of an explaining split the compact line names (their indexes, in order).
fn shown_groups(s: &crate::analysis::Split) -> Vec<usize> {
    // The first three groups, unless a mode is missing from them: then the largest
    // group of each mode comes first (a minority mode's groups are what explains it),
    // the others after, at most three, in their order.
    let mut shown: Vec<usize> = Vec::new();
    let mut modes: Vec<usize> = s.groups.iter().map(|g| g.2).collect();
    modes.sort_unstable();
    modes.dedup();
    let first_three = &s.groups[..s.groups.len().min(3)];
    if !modes.iter().all(|m| first_three.iter().any(|g| g.2 == *m)) {
        for mode in modes {
            let largest = (0..s.groups.len())
                .filter(|&i| s.groups[i].2 == mode)
                .max_by(|&a, &b| s.groups[a].1.total_cmp(&s.groups[b].1).then(b.cmp(&a)));
            shown.extend(largest);
        }
    }
    shown.truncate(3);
    for i in 0..s.groups.len() {
        if shown.len() >= 3 {
            break;
        }
        if !shown.contains(&i) {
            shown.push(i);
        }
    }
    shown.sort_unstable();
    shown
}

fn decomposition_text(d: &Decomposition) -> String {
    let [p50, p99] = &d.regions;
    let shares = format!(
        "queueing is {} of TTFT at p50, {} at p99",
        pct(p50.queue_share),
        pct(p99.queue_share)
    );
    match d.reading {
        "capacity" => format!("TTFT grows with queue time, a capacity problem: {shares}"),
        "prompt" => {
            let tokens = match (p50.input_tokens, p99.input_tokens) {
                (Some(a), Some(b)) => {
                    format!("; prompts of {a:.0} input tokens at p50, {b:.0} at p99")
                }
                _ => String::new(),
            };
            format!("TTFT grows with prefill (prompt length), a prompt problem: {shares}{tokens}")
        }
        _ => format!(
            "TTFT grows with queue time ({}) and prefill ({}): {shares}",
            pct(d.growth_shares.0),
            pct(d.growth_shares.1)
        ),
    }
}

// ---------------------------------------------------------------------------------------
// `--bucket` windows as a table

/// The `--bucket` table's rows: its metrics (`--metrics`, else TTFT, TPOT, E2E), and whether
/// rows carry a group column (`--by`).
#[derive(Debug, Clone)]
pub(crate) struct WindowTable {
    metrics: Vec<Metric>,
    by: bool,
    /// Window starts to the millisecond (a width that is no whole number of seconds).
    ms: bool,
    /// Window starts to the minute (a width of whole minutes).
    minutes: bool,
    /// Fitted to a narrow terminal: window starts without the year and the zone (`11-29
    /// 15:05`), `reqs` and `errs`, one space between columns.
    narrow: bool,
}

impl WindowTable {
    pub(crate) fn new(style: &TableStyle, by: bool, width_ns: i64) -> Self {
        let metrics = style
            .metrics
            .clone()
            .unwrap_or_else(|| DEFAULT_WINDOW_METRICS.to_vec());
        let ms = width_ns % 1_000_000_000 != 0;
        // The line without a group: the start, requests, errors, a p50 and a p99 a metric (as
        // wide as its name: `prefill p50`).
        let full = if ms { 24 } else { 20 }
            + 10
            + 8
            + metrics
                .iter()
                .map(|&m| 2 * (2 + metric_width(m)))
                .sum::<usize>();
        WindowTable {
            narrow: full > style.width,
            metrics,
            by,
            ms,
            minutes: width_ns % 60_000_000_000 == 0,
        }
    }

    fn start(&self, ns: i64) -> String {
        match (self.narrow, self.ms) {
            (false, true) => rfc3339_ms(ns),
            (false, false) => rfc3339_s(ns),
            (true, _) => {
                let t = rfc3339_ms(ns).replace('T', " ");
                let end = match (self.ms, self.minutes) {
                    (true, _) => 23,
                    (false, true) => 16,
                    (false, false) => 19,
                };
                t[5..end].to_owned()
            }
        }
    }

    fn line(&self, cells: &[String], group: &str, mark: &str) -> String {
        let w0 = match (self.narrow, self.ms, self.minutes) {
            (false, true, _) => 24,
            (false, false, _) => 20,
            (true, true, _) => 18,
            (true, false, true) => 11,
            (true, false, false) => 14,
        };
        let mut line = format!("{:<w0$}", cells[0]);
        let sep = if self.narrow { " " } else { "  " };
        for (k, c) in cells[1..].iter().enumerate() {
            let w = match (self.narrow, k) {
                (true, 0) => 5,
                (true, 1) => 4,
                (false, 0) => 8,
                (false, 1) => 6,
                (_, k) => metric_width(self.metrics[(k - 2) / 2]),
            };
            line.push_str(&format!("{sep}{c:>w$}"));
        }
        if self.by {
            line.push_str("  ");
            line.push_str(group);
        }
        if !mark.is_empty() {
            line.push_str("  ");
            line.push_str(mark);
        }
        line.trim_end().to_owned()
    }

    /// The header line.
    pub(crate) fn header(&self) -> String {
        let (requests, errors) = if self.narrow {
            ("reqs", "errs")
        } else {
            ("requests", "errors")
        };
        let mut cells = vec!["window".to_owned(), requests.to_owned(), errors.to_owned()];
        for &m in &self.metrics {
            for q in ["p50", "p99"] {
                cells.push(format!("{} {q}", short_name(m)));
            }
        }
        self.line(&cells, "group", "")
    }

    /// Writes the rows of the window that starts at `start`: all requests and each `--by`
    /// group but those that are all requests again (the cache classes are in `-o json`);
    /// `late` marks a window written before, `partial` one that misses requests its input held.
    ///
    /// # Errors
    /// The writer's.
    pub(crate) fn write_window(
        &self,
        out: &mut impl Write,
        start: i64,
        summary: &mut Summary,
        (late, partial): (bool, Option<&str>),
    ) -> io::Result<()> {
        let mark = match (late, partial.is_some()) {
            (false, false) => "",
            (true, false) => "(late)",
            (false, true) => "(partial)",
            (true, true) => "(late, partial)",
        };
        let mut groups = summary.groups();
        groups.retain(|(key, _)| !key.iter().any(|(k, _)| k == "cache"));
        // A `--by` group that holds every request of the window is the `all` row again: it is
        // named on that row (`all (model=a)`), not repeated.
        let all = groups
            .iter()
            .find(|(key, _)| key.is_empty())
            .map_or(0, |(_, g)| g.requests);
        let same: Vec<String> = groups
            .iter()
            .filter(|(key, g)| !key.is_empty() && g.requests == all)
            .map(|(key, _)| group_label(key, "all"))
            .collect();
        groups.retain(|(key, g)| key.is_empty() || g.requests != all);
        for (key, g) in groups {
            let label = if key.is_empty() && !same.is_empty() {
                format!("all ({})", same.join(", "))
            } else {
                group_label(&key, "all")
            };
            let mut cells = vec![
                self.start(start),
                g.requests.to_string(),
                g.errors.to_string(),
            ];
            for &m in &self.metrics {
                for q in [0.5, 0.99] {
                    let v = g.metric(m).digest.quantile(q);
                    cells.push(v.map_or_else(|| "-".to_owned(), |v| value_cell(m, v)));
                }
            }
            writeln!(out, "{}", self.line(&cells, &label, mark))?;
        }
        Ok(())
    }
}

/// Writes the summary in full or compact as `style` says (the `--hist` histograms are in the
/// full report only).
///
/// # Errors
/// The writer's.
pub(crate) fn write_text(
    out: &mut impl Write,
    cov: &Coverage,
    summary: &mut Summary,
    quantiles: &[f64],
    cfg: &AnalysisConfig,
    report: &Report,
    style: &TableStyle,
) -> io::Result<()> {
    if style.explain || cfg.hist {
        debug_assert!(!cfg.compact, "the full report needs every group's findings");
        let report = &report.only(style.metrics.as_deref());
        crate::output::summary::write_table(out, cov, summary, quantiles, cfg, report, style)
    } else {
        write_compact(out, cov, summary, quantiles, report, style)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{AnalysisConfig, GroupReport, analyze};

    /// A share reads 100% only when it is all, 0% only when it is none.
    #[test]
    fn a_share_short_of_all_or_above_none_keeps_its_decimals() {
        assert_eq!(pct(1.0), "100%");
        assert_eq!(pct(0.0), "0%");
        assert_eq!(pct(0.394), "39%");
        assert_eq!(pct(0.9985), "99.9%");
        assert_eq!(pct(0.99996), "99.996%");
        assert_eq!(pct(0.003), "0.3%");
        assert_eq!(pct(0.000_01), "0.001%");
    }

    /// A split whose minority mode's group comes fourth (vLLM 0.8.3, Llama-3.3-70B at 4
    /// requests/s: TTFT's slow mode is the 512-1023 input-token bin) names that group, not only
    /// the first three of the fast mode.
    #[test]
    fn a_split_shows_a_group_of_each_mode() {
        use crate::analysis::modes::{Modality, Mode};
        let mode = |center, share| Mode {
            center,
            share,
            sigma_log: 0.1,
        };
        let group = |v: &str, n: f64, m: usize, share: f64| (vec![Some(v.to_owned())], n, m, share);
        let split = crate::analysis::Split {
            dims: vec!["input_tokens".into()],
            purity: 0.9,
            explains: true,
            groups: vec![
                group("<128", 40.0, 0, 0.97),
                group("128-255", 70.0, 0, 0.9),
                group("256-511", 60.0, 0, 0.85),
                group("512-1023", 27.0, 1, 0.7),
            ],
        };
        let mut f = MultimodalFinding {
            metric: Metric::Ttft,
            modality: Modality {
                modes: vec![mode(97.865, 0.85), mode(198.8, 0.15)],
                antimodes: vec![150.0],
                ashman_d: vec![2.5],
                delta_bic: 50.0,
                n: 197.0,
            },
            mean: 114.9,
            mean_between: true,
            share_near_mean: 0.54,
            share_near_modes: vec![0.62, 0.1],
            splits: vec![split],
            inflight_split: None,
        };
        assert_eq!(
            modes_text(&f),
            "TTFT is bimodal: 97.865ms (85%) and 198.8ms (15%); split by input_tokens explains \
             it: <128 mode 1, 128-255 mode 1, 512-1023 mode 2 (+1 more)"
        );
        // Both modes among the first three: those three, as they come.
        f.splits[0].groups.swap(0, 3);
        assert_eq!(
            modes_text(&f),
            "TTFT is bimodal: 97.865ms (85%) and 198.8ms (15%); split by input_tokens explains \
             it: 512-1023 mode 2, 128-255 mode 1, 256-511 mode 1 (+1 more)"
        );
    }

    /// LiteLLM lines of two models: prefix-cache hits with a short TTFT and misses with a long
    /// one (TTFT bimodal overall, and in each model), prompts short or long (input tokens
    /// bimodal too).
    fn bimodal_summary() -> (crate::classify::Coverage, Summary) {
        use crate::classify::{Kind, Processor};
        let mut p = Processor::new(
            crate::format::builtins(),
            &[],
            None,
            &[vec!["model".into()]],
            0.5,
        );
        let mut s = Summary::new(vec!["model".into()], 100, 10_000).with_hit_ratio(Some(0.5));
        let mut cov = crate::classify::Coverage::default();
        let mut x = 7u64;
        let mut next = move || (crate::number::xorshift(&mut x) >> 11) as f64 / (1u64 << 53) as f64;
        for i in 0..800 {
            let hit = i % 3 != 0;
            let prompt = if next() < 0.5 { 200.0 } else { 8000.0 } * (0.8 + 0.4 * next());
            let ttft = if hit { 0.05 } else { 0.8 } * (0.8 + 0.4 * next());
            let start = 1_787_334_732.0 + f64::from(i) * 0.5;
            let line = serde_json::json!({
                "id": format!("chatcmpl-{i}"),
                "litellm_call_id": format!("call-{i}"),
                "call_type": "acompletion",
                "stream": true,
                "startTime": start,
                "completionStartTime": start + ttft,
                "endTime": start + ttft + 2.0 + next(),
                "model": if i % 2 == 0 { "a" } else { "b" },
                "prompt_tokens": prompt.round(),
                "completion_tokens": 100 + i % 200,
                "metadata": {"usage_object": {"prompt_tokens_details": {
                    "cached_tokens": if hit { (prompt * 0.9).round() } else { 0.0 }
                }}},
            })
            .to_string();
            let k = p.process(line.as_bytes());
            p.count(&k, &mut cov);
            if let Kind::Requests = k {
                for (j, r) in p.requests().iter().enumerate() {
                    let gaps = &p.gaps()[r.itl.0 as usize..(r.itl.0 + r.itl.1) as usize];
                    s.add_request(r, gaps, p.by_values(j));
                }
            }
        }
        p.finish(&mut cov);
        (cov, s)
    }

    /// The compact scope leaves out the findings the compact table does not show (those of the
    /// cache-class groups, the modes of token counts), and the table is the same.
    #[test]
    fn the_compact_scope_leaves_out_only_what_the_compact_table_does_not_show() {
        let q = [0.5, 0.9, 0.99];
        let (cov, mut s) = bimodal_summary();
        let full = analyze(&mut s, &AnalysisConfig::default(), &q);
        let compact_cfg = AnalysisConfig {
            compact: true,
            ..AnalysisConfig::default()
        };
        let compact = analyze(&mut s, &compact_cfg, &q);
        let keys: Vec<GroupKey> = s.groups().into_iter().map(|(k, _)| k).collect();
        let is_cache = |k: &GroupKey| k.iter().any(|(d, _)| d == "cache");
        let metrics = |r: &GroupReport| r.multimodal.iter().map(|f| f.metric).collect::<Vec<_>>();
        // The full report has what the compact one leaves out.
        assert!(
            keys.iter()
                .zip(&full.groups)
                .any(|(k, r)| is_cache(k) && !r.multimodal.is_empty())
        );
        assert!(
            full.groups[0]
                .multimodal
                .iter()
                .any(|f| f.metric == Metric::InputTokens)
        );
        for ((k, f), c) in keys.iter().zip(&full.groups).zip(&compact.groups) {
            if is_cache(k) {
                assert_eq!(c, &GroupReport::default(), "{k:?}");
            } else {
                let durations: Vec<Metric> =
                    metrics(f).into_iter().filter(|m| m.is_duration()).collect();
                assert!(durations.contains(&Metric::Ttft), "{k:?}");
                assert_eq!(metrics(c), durations, "{k:?}");
                assert_eq!(c.inflight, f.inflight);
                assert_eq!(c.ttft_by_input, f.ttft_by_input);
            }
        }
        assert_eq!(compact.headline, full.headline);
        let style = TableStyle::default();
        let table = |r: &Report, s: &mut Summary| compact_lines(&cov, s, &q, r, &style);
        let want = table(&full, &mut s);
        assert!(
            want.iter().any(|l| l.contains("* TTFT is bimodal")),
            "{want:#?}"
        );
        assert_eq!(table(&compact, &mut s), want);
    }

    #[test]
    fn durations_from_ten_seconds_read_in_seconds() {
        assert_eq!(duration_cell(9999.94), "9999.9");
        assert_eq!(duration_cell(26426.8), "26.4s");
        assert_eq!(duration_cell(1_234_567.0), "1235s");
        assert_eq!(duration_cell(49.703), "49.703");
        assert_eq!(duration_text(3251.7), "3251.7ms");
        assert_eq!(duration_text(60_600.0), "60.6s");
    }

    #[test]
    fn a_low_rate_is_read_per_minute_hour_or_day() {
        assert_eq!(per_time(0.19, "requests"), "0.19 requests/s");
        assert_eq!(per_time(2.0 / 126.0, "requests"), "0.95 requests/min");
        assert_eq!(
            per_time(8_000.0 / (28.0 * 86_400.0), "requests"),
            "0.20 requests/min"
        );
        assert_eq!(
            per_time(300.0 / (28.0 * 86_400.0), "requests"),
            "0.45 requests/h"
        );
        assert_eq!(
            per_time(220.0 / (239.0 * 86_400.0), "output tokens"),
            "0.92 output tokens/day"
        );
        assert_eq!(per_time(0.0, "requests"), "0.00 requests/s");
        assert_eq!(rate(0.0033), "0.0033");
        assert_eq!(rate(0.05), "0.050");
        assert_eq!(rate(0.19), "0.19");
        assert_eq!(rate(0.0), "0.00");
        assert_eq!(rate(12.34), "12.3");
    }

    #[test]
    fn token_counts_read_whole_and_keep_the_decimals_of_a_quantile_between_two() {
        assert_eq!(count_cell(5.0), "5");
        assert_eq!(count_cell(0.0), "0");
        assert_eq!(count_cell(-0.0), "0");
        assert_eq!(count_cell(4.5), "4.5");
        assert_eq!(count_cell(1.25), "1.25");
        assert_eq!(count_cell(123.4), "123");
    }

    #[test]
    fn metrics_parse_by_short_or_json_name() {
        assert_eq!(
            parse_metrics("ttft,tpot_ms,ttft").unwrap(),
            [Metric::Ttft, Metric::Tpot]
        );
        let e = parse_metrics("ttft,latency").unwrap_err();
        assert!(e.contains("\"latency\""), "{e}");
        assert!(e.contains("known: ttft, tpot, itl, e2e, queue"), "{e}");
    }

    #[test]
    fn p999_needs_a_thousand_values() {
        assert!(needs_more(0.999, 999));
        assert!(!needs_more(0.999, 1000));
        assert!(!needs_more(0.99, 3));
    }

    #[test]
    fn long_rows_wrap_under_their_last_column() {
        let row = "  cached_tokens    count    a.b.c | d.e.f | g.h.i | j.k.l\nshort\n";
        assert_eq!(
            wrap_lines(row, 50),
            "  cached_tokens    count    a.b.c | d.e.f | g.h.i\n                            | j.k.l\nshort\n"
        );
    }

    #[test]
    fn wrap_leaves_room_for_a_prefix() {
        let w = wrap(
            "aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk",
            40,
            11,
        );
        let lines: Vec<&str> = w.lines().collect();
        assert_eq!(lines[0], "aaaa bbbb cccc dddd eeee ffff");
        assert!(
            lines[1..]
                .iter()
                .all(|l| l.starts_with("  ") && l.len() <= 40)
        );
    }

    /// A span is rounded to its last unit, not cut: AIPerf's 15.198 s run is 15.2 s, as its
    /// JSON `span.s` and the rates beside it have it; a rounding up to the next form takes it.
    #[test]
    fn spans_round_to_their_last_unit() {
        let ms = 1_000_000;
        for (ns, text) in [
            (0, "0s"),
            (400_000, "0s"),
            (850 * ms, "850ms"),
            (999_600_000, "1.0s"),
            (15_198 * ms, "15.2s"),
            (15_149 * ms, "15.1s"),
            (9_970 * ms, "10.0s"),
            (59_970 * ms, "1m00s"),
            (751_400 * ms, "12m31s"),
            (3_599_600 * ms, "1h00m"),
            (7_529_000 * ms, "2h05m"),
            (86_399_000 * ms, "1d00h"),
            (275_000_000 * ms, "3d04h"),
        ] {
            assert_eq!(span_text(ns), text, "{ns}");
        }
    }

    #[test]
    fn prose_wraps_at_the_width() {
        let mut l = Lines {
            width: 40,
            lines: vec![],
            estimates: false,
        };
        l.prose("one two three four five six seven eight nine ten eleven twelve");
        assert!(
            l.lines.iter().all(|x| x.chars().count() <= 40),
            "{:?}",
            l.lines
        );
        assert_eq!(l.lines.len(), 2);
        assert!(l.lines[1].starts_with("  "));
    }
}
