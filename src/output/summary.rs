//! The summary rendered: the aligned table people read and the versioned JSON of SPEC section 4
//! (`tokentime.summary/v1`), with the analysis report under each group. Writes only to the
//! writer it is given.

use crate::analysis::{AnalysisConfig, GroupReport, Report};
use crate::classify::Coverage;
use crate::metrics::Metric;
use crate::number::{fmt_cell, round3};
use crate::summary::slo::{Targets, Verdict};
use crate::summary::{
    GroupKey, GroupStats, GroupsDoc, MakeGroups, SCHEMA, Summary, coverage_json, group_label,
    log_span, quantile_name,
};
use serde_json::{Map, Value as Json, json};
use std::io::{self, Write};

fn num(v: Option<f64>) -> Json {
    v.map(|x| json!(round3(x))).unwrap_or(Json::Null)
}

/// The summary as the JSON document of SPEC section 4 (`tokentime.summary/v1`), with its
/// analysis `report` ([`crate::analysis::analyze`]): a `headline`, and per group its `findings`,
/// `analysis` and, with `--hist`, a `histogram` per metric. The callers add members to
/// [`JsonDoc::head`]; serializing it writes the members in key order (as a
/// `serde_json::Value` would) with `groups` made one group at a time, so a report of many
/// groups (`--by user`) never holds all of them as JSON values at once.
pub fn to_json<'a>(
    cov: &Coverage,
    summary: &'a mut Summary,
    quantiles: &[f64],
    report: Report,
) -> JsonDoc<'a> {
    let span = log_span(summary);
    let targets = summary.targets().cloned();
    let mut head = Map::new();
    head.insert("schema".into(), json!(SCHEMA));
    head.insert("coverage".into(), coverage_json(cov));
    head.insert("span".into(), span_json(summary));
    if let Some(r) = summary.range_json() {
        head.insert("range".into(), r);
    }
    if let Some(p) = crate::summary::partial_json(cov) {
        head.insert("partial".into(), p);
    }
    if let Some(h) = &report.headline {
        head.insert("headline".into(), crate::output::findings::headline_json(h));
    }
    let top = summary.top().clone();
    head.insert("slowest".into(), top.slowest_json());
    let groups = summary.groups();
    let (errors, requests) = groups
        .iter()
        .find(|(k, _)| k.is_empty())
        .map_or((0, 0), |(_, g)| (g.errors, g.requests));
    head.insert(
        "errors".into(),
        crate::output::top::errors_json(&top, errors, requests),
    );
    GroupsDoc::new(
        head,
        LazyGroups {
            groups,
            reports: report.groups,
            quantiles: quantiles.to_vec(),
            targets,
            span,
        },
    )
}

/// The log's time span as JSON: from the first request's start to the last one's end (RFC 3339,
/// to the millisecond) and its length in seconds; null when no request has a time.
fn span_json(summary: &Summary) -> Json {
    match summary.overall_span() {
        Some((a, b)) => json!({
            "from": crate::summary::window::rfc3339_ms(a),
            "to": crate::summary::window::rfc3339_ms(b),
            "s": round3((b - a) as f64 / 1e9),
        }),
        None => Json::Null,
    }
}

/// The summary document of [`to_json`]: its members but `groups`, and the groups, made as they
/// are written.
pub(crate) type JsonDoc<'a> = GroupsDoc<LazyGroups<'a>>;

/// The groups of a summary report ([`to_json`]).
pub struct LazyGroups<'a> {
    groups: Vec<(GroupKey, &'a mut GroupStats)>,
    reports: Vec<crate::analysis::GroupReport>,
    quantiles: Vec<f64>,
    targets: Option<Targets>,
    span: Option<f64>,
}

impl MakeGroups for LazyGroups<'_> {
    fn count(&self) -> usize {
        self.groups.len()
    }

    fn group(&mut self, i: usize) -> Json {
        let (key, g) = &mut self.groups[i];
        let r = &self.reports[i];
        let mut doc = group_json(key, g, &self.quantiles, self.targets.as_ref(), self.span);
        let (findings, analysis) = crate::output::findings::group_json(r);
        doc["findings"] = findings;
        doc["analysis"] = analysis;
        for (metric, h) in Metric::ALL.into_iter().zip(&r.hist) {
            if let Some(h) = h
                && !doc["metrics"][metric.json_name()].is_null()
            {
                doc["metrics"][metric.json_name()]["histogram"] =
                    crate::output::findings::hist_json(h);
            }
        }
        doc
    }
}

/// A group's throughput as JSON: its requests with times and their output tokens, a second,
/// over `span_s` (the log's time span, as the table's first line gives the rates of all
/// requests; in a `--bucket` line, the window's width), to 6 significant digits. The rates are
/// null without a span (no times, or one request's), and the tokens' when the format logs no
/// output tokens.
fn throughput_json(g: &mut GroupStats, span_s: Option<f64>) -> Json {
    let (timed, tokens) = g.timed();
    let rate = |x: f64| match span_s {
        Some(s) if s > 0.0 => json!(crate::number::round_rate(x / s)),
        _ => Json::Null,
    };
    let completed = g.timed_completed();
    let mut doc = json!({
        "span_s": span_s.map(round3),
        "requests": timed,
        "requests_per_s": rate(timed as f64),
        "completed": completed,
        "completed_per_s": completed.map_or(Json::Null, |c| rate(c as f64)),
        "output_tokens_per_s": if g.output_tokens_logged() { rate(tokens) } else { Json::Null },
    });
    // Only when some request's format logged no time: the rates leave it out.
    if timed < g.requests {
        doc["requests_without_times"] = json!(g.requests - timed);
    }
    doc
}

/// A group's goodput as JSON: targets, counts, share, and rates over `span_s`.
fn goodput_json(g: &GroupStats, targets: &Targets, span_s: Option<f64>) -> Json {
    let t: Map<String, Json> = targets
        .0
        .iter()
        .map(|&(m, ms)| (m.json_name().to_owned(), json!(round3(ms))))
        .collect();
    // To 6 significant digits, as the group's throughput (3 decimals made 0.0097/s 0.01).
    let rate = |n: u64| match span_s {
        Some(s) if s > 0.0 => json!(crate::number::round_rate(n as f64 / s)),
        _ => Json::Null,
    };
    // Rates of the requests inside the span: one of a format that logs no time is in none.
    let (met_timed, met_timed_tokens) = g.timed_goodput();
    let mut doc = json!({
        "targets": t,
        "met": g.goodput.met,
        "unknown": g.goodput.unknown,
        "missed": g.requests - g.goodput.met - g.goodput.unknown,
        // A share to 5 decimals (a percentage to 3), divided once so that it prints as such
        // (0.31741, not 0.31740999999999997).
        "share": if g.requests > 0 { json!((g.goodput.met as f64 / g.requests as f64 * 1e5).round() / 1e5) } else { Json::Null },
        "span_s": span_s.map(round3),
        "requests_per_s": rate(met_timed),
        "output_tokens_per_s": if g.output_tokens_logged() { rate(met_timed_tokens) } else { Json::Null },
    });
    // Only when some good request's format logged no time: the rates leave it out.
    if met_timed < g.goodput.met {
        doc["met_without_times"] = json!(g.goodput.met - met_timed);
    }
    doc
}

/// One group as the JSON of a `groups` entry: key, counts, metrics, and goodput when there
/// are targets (rates over `span_s`, the log's time span).
pub(crate) fn group_json(
    key: &GroupKey,
    g: &mut GroupStats,
    quantiles: &[f64],
    targets: Option<&Targets>,
    span_s: Option<f64>,
) -> Json {
    {
        let mut k = Map::new();
        for (name, v) in key {
            k.insert(
                name.clone(),
                v.clone().map(Json::String).unwrap_or(Json::Null),
            );
        }
        let mut metrics = Map::new();
        let origins: Map<String, Json> = g
            .ttft_origins
            .iter()
            .map(|(o, n)| (o.to_owned(), json!(n)))
            .collect();
        for (metric, st) in Metric::ALL.into_iter().zip(g.metrics.iter_mut()) {
            if !st.shown(metric) {
                continue;
            }
            let mut qs = Map::new();
            for &q in quantiles {
                qs.insert(quantile_name(q), num(st.digest.quantile(q)));
            }
            let nulls: Map<String, Json> = st
                .nulls
                .iter()
                .map(|(r, n)| (r.as_str().to_owned(), json!(n)))
                .collect();
            let mut entry = json!({
                "count": st.digest.count(),
                "nulls": nulls,
                "exact": st.digest.is_exact(),
                "min": num(st.digest.min()),
                "max": num(st.digest.max()),
                "mean": num(st.digest.mean()),
                "quantiles": qs,
            });
            if metric == Metric::Ttft {
                entry["origins"] = Json::Object(origins.clone());
            }
            metrics.insert(metric.json_name().to_owned(), entry);
        }
        let mut doc = json!({
            "key": k,
            "requests": g.requests,
            "errors": g.errors,
            "cancelled": g.cancelled,
            "response_cache": g.response_cache,
            "metrics": metrics,
        });
        doc["throughput"] = throughput_json(g, span_s);
        if let Some(t) = targets {
            doc["goodput"] = goodput_json(g, t, span_s);
        }
        if !g.runs.0.is_empty() {
            doc["runs"] = runs_json(g, targets.is_some());
        }
        doc
    }
}

/// The benchmark runs of a group's requests without times of their own: how many, their
/// time, and the rates over it (completed requests and their output tokens, as the
/// benchmarks give their throughput; with `--goodput` targets, those that met them).
fn runs_json(g: &mut GroupStats, goodput: bool) -> Json {
    let (t, secs) = g.runs.total();
    let tokens_logged = g.output_tokens_logged();
    let rate = |n: u64| json!(crate::number::round_rate(n as f64 / secs));
    let mut doc = json!({
        "count": g.runs.0.len(),
        "duration_s": round3(secs),
        "requests": t.requests,
        "completed": t.completed,
        "output_tokens": if tokens_logged { json!(t.output_tokens) } else { Json::Null },
        "completed_per_s": rate(t.completed),
        "output_tokens_per_s": if tokens_logged { rate(t.output_tokens) } else { Json::Null },
    });
    if goodput {
        // Completed requests that met every `--goodput` target (vLLM's `request_goodput`).
        doc["met"] = json!(t.met);
        doc["met_per_s"] = rate(t.met);
        doc["met_output_tokens_per_s"] = if tokens_logged {
            rate(t.met_output_tokens)
        } else {
            Json::Null
        };
    }
    doc
}

/// Writes the summary as an aligned text table, with its analysis `report` under each group
/// (and the histograms where `cfg` asks for them).
///
/// # Errors
/// The writer's.
pub(crate) fn write_table(
    out: &mut impl Write,
    cov: &Coverage,
    summary: &mut Summary,
    quantiles: &[f64],
    cfg: &AnalysisConfig,
    report: &Report,
    style: &crate::output::compact::TableStyle,
) -> io::Result<()> {
    writeln!(out, "{}", coverage_line(cov))?;
    if cov.requests == 0 && cov.lines > 0 {
        writeln!(out, "{}", summary.no_requests(cov))?;
    }
    // What the compact report's headline says, from the groups made once (the overall
    // group is merged afresh for each call of `groups`).
    let top_lines = if cov.requests > 0 {
        crate::output::top::explain_lines(summary.top())
    } else {
        Vec::new()
    };
    let table = TableContext {
        span: log_span(summary),
        targets: summary.targets().cloned(),
        quantiles,
        cfg,
        metrics: style.metrics.as_deref(),
    };
    let mut groups = summary.groups();
    if cov.requests > 0 {
        // The span and rates of the compact report's first line, and the output tokens.
        if let Some((_, all)) = groups.iter_mut().find(|(k, _)| k.is_empty()) {
            let tokens = all
                .metric(crate::metrics::Metric::OutputTokens)
                .digest
                .sum();
            let mut line = crate::output::compact::span_line(all);
            if let Some(completed) = crate::output::compact::completed_rate(all) {
                line.push_str(&format!("; {completed}"));
            }
            if tokens > 0.0 {
                line.push_str(&format!("; {tokens:.0} output tokens"));
            }
            writeln!(out, "{line}")?;
        }
        if let Some(h) = &report.headline {
            crate::output::findings::write_headline(out, h)?;
        }
        for line in top_lines {
            writeln!(out, "{line}")?;
        }
    }
    // A group that holds every request of a group one key shorter (one cache class for all,
    // a `--by` key every request shares, one cache class for all of a model's requests) is
    // that group's table again: one line says so.
    let counts = |g: &GroupStats| (g.requests, g.errors, g.cancelled, g.response_cache);
    let all: Vec<_> = groups.iter().map(|(k, g)| (k.clone(), counts(g))).collect();
    for ((key, g), r) in groups.into_iter().zip(&report.groups) {
        // All requests first, then the group without its last key (a model's block for
        // `model=a cache=hit`), then the others.
        let same = (0..=key.len()).rev().find_map(|i| {
            if i == key.len() {
                let whole = all.iter().any(|(k, c)| k.is_empty() && *c == counts(g));
                return (whole && !key.is_empty()).then(|| "all requests".to_owned());
            }
            let mut parent = key.clone();
            parent.remove(i);
            all.iter()
                .any(|(k, c)| *k == parent && *c == counts(g))
                .then(|| group_label(&parent, "all requests"))
        });
        if let Some(parent) = same.filter(|_| g.requests > 0) {
            writeln!(
                out,
                "\n{}: all {} (the same as {parent})",
                group_label(&key, "all requests"),
                plural(g.requests, "request")
            )?;
            continue;
        }
        table.write_group(out, &key, g, r)?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "durations in ms; quantiles exact (linear interpolation, numpy's default) up to {} values, t-digest estimates past that (marked ~)",
        summary.exact_limit()
    )?;
    Ok(())
}

/// The table's first line: the coverage counts (the rare ones only when nonzero) and the
/// formats seen.
fn coverage_line(cov: &Coverage) -> String {
    let mut head = format!(
        "lines {}  requests {}  errors {}  non-JSON {}  no timing {}  invalid {}",
        cov.lines, cov.requests, cov.errors, cov.non_json, cov.no_timing, cov.invalid
    );
    for (label, n) in &cov.skipped {
        head.push_str(&format!("  {label} {n}"));
    }
    for (label, n) in rare_counts(cov) {
        if n > 0 {
            head.push_str(&format!("  {label} {n}"));
        }
    }
    if !cov.formats.is_empty() {
        let formats: Vec<String> = cov
            .formats
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        head.push_str(&format!("  formats: {}", formats.join(", ")));
    }
    head
}

/// What the coverage counts of lines and requests that were not read as asked: those that
/// are not zero (the compact headline).
pub(crate) fn coverage_issues(cov: &Coverage) -> Vec<(String, u64)> {
    let lines = [
        ("non-JSON", cov.non_json),
        ("no timing", cov.no_timing),
        ("invalid", cov.invalid),
    ]
    .into_iter()
    .map(|(label, n)| (label.to_owned(), n));
    let skipped = cov.skipped.iter().map(|(label, &n)| (label.clone(), n));
    lines
        .chain(skipped)
        .chain(
            rare_counts(cov)
                .into_iter()
                .filter(|&(label, _)| label != "cancelled" && label != "response cache")
                .map(|(label, n)| (label.to_owned(), n)),
        )
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// The coverage counts the table's first line shows only when nonzero.
fn rare_counts(cov: &Coverage) -> [(&'static str, u64); 16] {
    [
        ("too long", cov.too_long),
        ("cancelled", cov.cancelled),
        ("response cache", cov.response_cache),
        ("negative intervals", cov.negative_interval),
        ("unparseable", cov.unparseable),
        ("implausible instants", cov.implausible_instant),
        ("out of order", cov.out_of_order),
        ("logged vs derived durations", cov.duration_mismatch),
        ("duplicates set aside", cov.duplicates),
        ("records outside the measurement window", cov.outside_window),
        ("outside --since/--until", cov.outside_range),
        ("inputs not read to their end", cov.read_errors),
        ("multi-line requests unfinished", cov.join_unfinished),
        ("evicted", cov.join_evicted),
        ("timed out", cov.join_timed_out),
        ("orphaned", cov.join_orphaned),
    ]
}

/// What every group's table shares.
struct TableContext<'a> {
    /// The log's time span in s (goodput rates).
    span: Option<f64>,
    /// The `--goodput` targets.
    targets: Option<Targets>,
    /// The report's quantiles (columns).
    quantiles: &'a [f64],
    /// The analysis settings (`--hist`).
    cfg: &'a AnalysisConfig,
    /// `--metrics`: the rows, in this order (all by default).
    metrics: Option<&'a [Metric]>,
}

impl TableContext<'_> {
    /// Writes one group: its title line, goodput, metric table, notes and analysis.
    fn write_group(
        &self,
        out: &mut impl Write,
        key: &GroupKey,
        g: &mut GroupStats,
        r: &GroupReport,
    ) -> io::Result<()> {
        writeln!(out)?;
        let mut extra = String::new();
        if g.cancelled > 0 {
            extra.push_str(&format!(", {} cancelled", g.cancelled));
        }
        if g.response_cache > 0 {
            extra.push_str(&format!(", {} response cache", g.response_cache));
        }
        // The errors' share, as the compact report gives it.
        let share = if g.errors > 0 {
            format!(" ({:.1}%)", g.errors as f64 / g.requests as f64 * 100.0)
        } else {
            String::new()
        };
        writeln!(
            out,
            "{}: {}, {}{share}{extra}{}",
            group_label(key, "all requests"),
            plural(g.requests, "request"),
            plural(g.errors, "error"),
            crate::output::compact::runs_title(key, g)
        )?;
        if let Some(t) = &self.targets {
            writeln!(out, "{}", goodput_line(g, t, self.span))?;
        }
        let (rows, absent) = self.metric_rows(g);
        // A group with no value has no table: its header alone, over no row, says nothing.
        let name_width = if rows.len() > 1 {
            write_aligned(out, &rows)?
        } else {
            rows[0][0].len()
        };
        // The full analysis for all requests and the --by groups; the cache classes (the
        // default breakdown) only say which metrics are multimodal (JSON has everything).
        let full = !key.iter().any(|(k, _)| k == "cache");
        write_notes(out, g, full)?;
        if !absent.is_empty() {
            writeln!(out, "no values: {}", absent.join(", "))?;
        }
        crate::output::findings::write_group(out, r, name_width, full)?;
        if self.cfg.hist {
            let means: Vec<Option<f64>> = g.metrics.iter_mut().map(|m| m.digest.mean()).collect();
            crate::output::findings::write_hists(out, r, &means, name_width)?;
        }
        Ok(())
    }

    /// The header and one row per metric with values; the metrics without values as
    /// `name (null reasons)`.
    fn metric_rows(&self, g: &mut GroupStats) -> (Vec<Vec<String>>, Vec<String>) {
        let mut header = vec!["metric".to_owned(), "count".to_owned(), "min".to_owned()];
        header.extend(self.quantiles.iter().map(|&q| quantile_name(q)));
        header.extend(["max".to_owned(), "mean".to_owned(), "nulls".to_owned()]);
        let mut rows = vec![header];
        let mut absent = vec![];
        let chosen = self
            .metrics
            .map_or(Metric::ALL.to_vec(), <[Metric]>::to_vec);
        for metric in chosen {
            let st = g.metric(metric);
            if !st.shown(metric) {
                continue;
            }
            let name = metric.json_name();
            let nulls: Vec<String> = st
                .nulls
                .iter()
                .map(|(r, n)| format!("{} {n}", r.as_str()))
                .collect();
            if st.digest.count() == 0 {
                absent.push(format!("{name} ({})", nulls.join(", ")));
                continue;
            }
            let cell = |v: Option<f64>| v.map(fmt_cell).unwrap_or_else(|| "-".to_owned());
            let mut row = vec![
                name.to_owned(),
                st.digest.count().to_string(),
                cell(st.digest.min()),
            ];
            for &q in self.quantiles {
                row.push(cell(st.digest.quantile(q)));
            }
            row.push(cell(st.digest.max()));
            row.push(cell(st.digest.mean()));
            row.push(nulls.join(", "));
            if !st.digest.is_exact() {
                row[0].push('~');
            }
            rows.push(row);
        }
        (rows, absent)
    }
}

/// Writes `rows` (the first the header) as aligned columns: the first and the last to the
/// left, the others to the right. Returns the first column's width.
fn write_aligned(out: &mut impl Write, rows: &[Vec<String>]) -> io::Result<usize> {
    let ncols = rows[0].len();
    let widths: Vec<usize> = (0..ncols)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for r in rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            let w = widths[c];
            if c == 0 || c == ncols - 1 {
                line.push_str(&format!("{cell:<w$}"));
            } else {
                line.push_str(&format!("{cell:>w$}"));
            }
            if c + 1 < ncols {
                line.push_str("  ");
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(widths[0])
}

/// The notes under a group's table: TTFT of mixed origins, or (in a `full` group) from
/// `scheduled` only.
fn write_notes(out: &mut impl Write, g: &GroupStats, full: bool) -> io::Result<()> {
    if g.ttft_origins.len() > 1 {
        let mixed: Vec<String> = g
            .ttft_origins
            .iter()
            .map(|(o, n)| format!("{o} {n}"))
            .collect();
        writeln!(
            out,
            "note: ttft_ms mixes origins ({}): a TTFT from `scheduled` leaves the queue out; compare like with like",
            mixed.join(", ")
        )?;
    }
    if full && g.ttft_from_scheduled_only() {
        writeln!(
            out,
            "note: ttft_ms runs from `scheduled` (the server's slot start): the log has no arrival time, so the queue before it is left out"
        )?;
    }
    Ok(())
}

pub(crate) fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

pub(crate) fn goodput_line(g: &GroupStats, t: &Targets, span_s: Option<f64>) -> String {
    let share = if g.requests > 0 {
        format!(
            " ({:.1}%)",
            g.goodput.met as f64 / g.requests as f64 * 100.0
        )
    } else {
        String::new()
    };
    let unknown = if g.goodput.unknown > 0 {
        format!(", {} unknown", g.goodput.unknown)
    } else {
        String::new()
    };
    let (met_timed, met_timed_tokens) = g.timed_goodput();
    // Rates per second, as 3 decimals give them; a rate those would show as 0 when it is not
    // (a month of archives) per minute, hour or day instead: the output tokens' in the
    // requests' unit when theirs changed, else in their own. No rate of output tokens where
    // none was logged (it would read 0).
    let unit_of =
        |x: f64| (round3(x) == 0.0 && x > 0.0).then(|| crate::output::compact::time_unit(x));
    let per = |x: f64, unit: Option<(f64, &str)>, what: &str| match unit {
        None => format!("{} {what}/s", round3(x)),
        Some((k, unit)) => format!("{} {what}/{unit}", crate::output::compact::rate(x * k)),
    };
    let rates_over = |requests: u64, tokens: u64, s: f64| {
        let (r, t) = (requests as f64 / s, tokens as f64 / s);
        let unit = unit_of(r);
        let tokens = if g.output_tokens_logged() {
            format!(", {}", per(t, unit.or_else(|| unit_of(t)), "output tokens"))
        } else {
            String::new()
        };
        format!("{}{tokens} over {} s", per(r, unit, "requests"), round3(s))
    };
    let rates = match span_s {
        Some(s) if s > 0.0 => {
            let of = match GroupStats::rates_of(met_timed, g.goodput.met) {
                of if of.is_empty() => ";".to_owned(),
                of => of,
            };
            format!("{of} {}", rates_over(met_timed, met_timed_tokens, s))
        }
        _ => String::new(),
    };
    // Requests without times of their own, over their benchmark runs' durations (vLLM's
    // `request_goodput`: good completed requests / duration).
    let runs = if g.runs.0.is_empty() {
        String::new()
    } else {
        let (r, secs) = g.runs.total();
        format!(
            "; the {} of {}: {}",
            r.met,
            plural(g.runs.0.len() as u64, "run"),
            rates_over(r.met, r.met_output_tokens, secs)
        )
    };
    format!(
        "goodput {}: {} of {}{share}{unknown}{rates}{runs}",
        t.text(),
        g.goodput.met,
        plural(g.requests, "request")
    )
}

/// The `slos` member of the JSON summary: each SLO's text, metric, quantile, bound, group, the
/// value found (ms, 3 decimals), whether it was met, and why it was not judged (null when it
/// was).
pub(crate) fn slos_json(verdicts: &[Verdict]) -> Json {
    verdicts
        .iter()
        .map(|v| {
            let group: Map<String, Json> = v
                .slo
                .group
                .iter()
                .map(|(k, v)| (k.clone(), json!(v)))
                .collect();
            json!({
                "slo": v.slo.text,
                "metric": v.slo.metric.json_name(),
                "quantile": quantile_name(v.slo.quantile),
                "bound": v.slo.bound,
                "group": group,
                "value": v.value.map(round3),
                "count": v.count,
                "exact": v.exact,
                // Neither met nor broken when the log could not show it.
                "met": v.unjudged.is_none().then_some(v.met),
                "not_judged": v.unjudged,
            })
        })
        .collect()
}
