//! Renderings beyond the table and the JSON summary: CSV and TSV summaries, the Prometheus
//! text exposition format (summary type, for the node-exporter textfile collector), and
//! per-request rows (`tokentime --output csv|tsv|jsonl --fields ...`).
//!
//! Owns cell quoting, label escaping and metric names. Writes only to the writer it is given.

use crate::classify::{Coverage, Request};
use crate::metrics::{Metric, Metrics};
use crate::number::{fixed3, round3, write_fixed3, write_json_str_body};
use crate::summary::slo::{Targets, Verdict};
use crate::summary::{GroupStats, Summary, group_label, log_span, quantile_name};
use std::io::{self, Write};

/// A delimited text rendering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delimited {
    /// RFC 4180 CSV: comma-separated, fields with `,`, `"` or a line break quoted.
    Csv,
    /// Tab-separated; tabs and line breaks inside a field become spaces.
    Tsv,
}

impl Delimited {
    fn sep(self) -> &'static str {
        match self {
            Delimited::Csv => ",",
            Delimited::Tsv => "\t",
        }
    }

    /// Writes one record: the cells, delimited, quoted as needed, and a newline.
    ///
    /// # Errors
    /// The writer's.
    pub fn record<S: AsRef<str>>(self, out: &mut impl Write, cells: &[S]) -> io::Result<()> {
        for (i, c) in cells.iter().enumerate() {
            if i > 0 {
                out.write_all(self.sep().as_bytes())?;
            }
            let c = c.as_ref();
            match self {
                Delimited::Csv if c.contains([',', '"', '\n', '\r']) => {
                    write!(out, "\"{}\"", c.replace('"', "\"\""))?
                }
                Delimited::Tsv if c.contains(['\t', '\n', '\r']) => {
                    out.write_all(c.replace(['\t', '\n', '\r'], " ").as_bytes())?
                }
                _ => out.write_all(c.as_bytes())?,
            }
        }
        out.write_all(b"\n")
    }
}

/// A cell of a number: [`fixed3`], empty for none.
fn fixed3_cell(v: Option<f64>) -> String {
    v.map_or_else(String::new, fixed3)
}

/// Writes the summary as CSV or TSV: a header, then one record per group and metric with
/// `group` (`all`, `cache=hit`, `model=x cache=miss`), one column per key (the `--by` keys and
/// `cache`: the group's value, `unknown` when the log does not give it, empty when the group
/// is not split by it), `requests`, `errors`, `metric`,
/// `count`, `exact`, `min`, the quantiles, `max`, `mean` and `nulls` (`reason count` pairs
/// joined by `;`). Durations in ms; an empty cell is a metric without values.
///
/// # Errors
/// The writer's.
pub(crate) fn write_delimited(
    out: &mut impl Write,
    d: Delimited,
    summary: &mut Summary,
    quantiles: &[f64],
) -> io::Result<()> {
    // One column per key dimension (the `--by` keys, then `cache`): a consumer filters on
    // them instead of splitting `group`.
    let dims = summary.dimensions();
    let mut groups = summary.groups();
    let mut header: Vec<String> = vec!["group".into()];
    header.extend(dims.iter().cloned());
    header.extend(
        ["requests", "errors", "metric", "count", "exact", "min"]
            .map(String::from)
            .to_vec(),
    );
    header.extend(quantiles.iter().map(|&q| quantile_name(q)));
    header.extend(["max", "mean", "nulls"].map(String::from));
    d.record(out, &header)?;
    for (key, g) in groups.iter_mut() {
        let label = group_label(key, "all");
        let cells: Vec<String> = dims
            .iter()
            .map(|dim| match key.iter().find(|(k, _)| k == dim) {
                Some((_, v)) => v.clone().unwrap_or_else(|| "unknown".into()),
                None => String::new(),
            })
            .collect();
        for (metric, st) in Metric::ALL.into_iter().zip(g.metrics.iter_mut()) {
            if !st.shown(metric) {
                continue;
            }
            let dg = &mut st.digest;
            let mut row = vec![label.clone()];
            row.extend(cells.iter().cloned());
            row.extend([
                g.requests.to_string(),
                g.errors.to_string(),
                metric.json_name().to_owned(),
                dg.count().to_string(),
                dg.is_exact().to_string(),
                fixed3_cell(dg.min()),
            ]);
            for &q in quantiles {
                row.push(fixed3_cell(dg.quantile(q)));
            }
            row.push(fixed3_cell(dg.max()));
            row.push(fixed3_cell(dg.mean()));
            let nulls: Vec<String> = st
                .nulls
                .iter()
                .map(|(r, n)| format!("{} {n}", r.as_str()))
                .collect();
            row.push(nulls.join(";"));
            d.record(out, &row)?;
        }
    }
    Ok(())
}

/// A label name from a `--by` key: characters outside `[A-Za-z0-9_]` become `_`; a name that
/// would start with a digit or `__`, or be `quantile`, gets a `by_` prefix.
pub(crate) fn label_name(key: &str) -> String {
    let mut s: String = key
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if s.is_empty()
        || s.starts_with(|c: char| c.is_ascii_digit())
        || s.starts_with("__")
        || s == "quantile"
    {
        s.insert_str(0, "by_");
    }
    s
}

fn escape_label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn labels(pairs: &[(String, String)]) -> String {
    if pairs.is_empty() {
        return String::new();
    }
    let inner: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
        .collect();
    format!("{{{}}}", inner.join(","))
}

/// A sample value as Prometheus reads it (`NaN`, `+Inf` and Go-parsable floats).
fn prom_num(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        }
    } else {
        // Durations come in ms with at most 3 decimals: 9 decimals of seconds hold them
        // exactly, without binary noise (0.4037, not 0.40370000000000006).
        let s = format!("{v:.9}");
        let s = s.trim_end_matches('0');
        s.strip_suffix('.').unwrap_or(s).to_owned()
    }
}

/// Prometheus label pairs.
type Labels = Vec<(String, String)>;

/// A group as Prometheus sees it: its key as labels, its stats.
type PromGroup<'a> = (Labels, &'a mut GroupStats);

/// Writes the summary in the Prometheus text exposition format (version 0.0.4): one `summary`
/// family per metric (durations in seconds) with a `quantile` label and the group's keys as
/// labels (`cache="hit"`, `model="..."`; the all-requests group has none, an unknown value is
/// `unknown`), `_sum` and `_count`; gauges for requests, errors, lines, goodput and SLO
/// verdicts. Valid for the node-exporter textfile collector (write to a temporary file and
/// rename it into the collector's directory).
///
/// # Errors
/// The writer's.
pub(crate) fn write_prometheus(
    out: &mut impl Write,
    cov: &Coverage,
    summary: &mut Summary,
    quantiles: &[f64],
    verdicts: &[Verdict],
) -> io::Result<()> {
    let span = log_span(summary);
    let targets = summary.targets().cloned();
    let mut groups = prom_groups(summary);
    for metric in Metric::ALL {
        // A metric only some logs have: its family only where some group logged it.
        if metric.only_where_logged() && !groups.iter_mut().any(|(_, g)| g.metric(metric).logged())
        {
            continue;
        }
        write_family(out, metric, &mut groups, quantiles)?;
    }
    write_count_gauges(out, cov, &groups)?;
    if let Some(t) = &targets {
        write_goodput_gauges(out, t, span, &groups)?;
    }
    write_slo_gauges(out, verdicts)?;
    match summary.genai() {
        Some(g) => crate::output::genai::write_histograms(out, g),
        None => Ok(()),
    }
}

/// The groups of `summary` with their keys as labels.
fn prom_groups(summary: &mut Summary) -> Vec<PromGroup<'_>> {
    summary
        .groups()
        .into_iter()
        .map(|(key, g)| {
            let l = key
                .iter()
                .map(|(k, v)| {
                    // An empty label value is no label in Prometheus: `{model=""}` would be the
                    // all-requests series again.
                    let v = match v.as_deref() {
                        None => "unknown".to_owned(),
                        Some("") => "(empty)".to_owned(),
                        Some(s) => s.to_owned(),
                    };
                    (label_name(k), v)
                })
                .collect();
            (l, g)
        })
        .collect()
}

/// Writes the `summary` family of one metric: per group its quantiles, `_sum` and `_count`.
fn write_family(
    out: &mut impl Write,
    metric: Metric,
    groups: &mut [PromGroup<'_>],
    quantiles: &[f64],
) -> io::Result<()> {
    let family = metric.prometheus_name();
    let scale = metric.prometheus_scale();
    writeln!(out, "# HELP {family} {}", metric.help())?;
    writeln!(out, "# TYPE {family} summary")?;
    if groups.is_empty() {
        // No request read: the all-requests series read 0 rather than going absent.
        writeln!(out, "{family}_sum 0")?;
        writeln!(out, "{family}_count 0")?;
    }
    for (l, g) in groups.iter_mut() {
        let d = &mut g.metric(metric).digest;
        if d.count() == 0 {
            // No value in this group (yet): the series reads 0 rather than going absent.
            writeln!(out, "{family}_sum{} 0", labels(l))?;
            writeln!(out, "{family}_count{} 0", labels(l))?;
            continue;
        }
        for &q in quantiles {
            let mut ql = l.clone();
            ql.push(("quantile".into(), format!("{}", round3(q * 1e5) / 1e5)));
            let v = d.quantile(q).map_or(f64::NAN, |v| round3(v) * scale);
            writeln!(out, "{family}{} {}", labels(&ql), prom_num(v))?;
        }
        writeln!(
            out,
            "{family}_sum{} {}",
            labels(l),
            prom_num(round3(d.sum()) * scale)
        )?;
        writeln!(out, "{family}_count{} {}", labels(l), d.count())?;
    }
    Ok(())
}

/// Writes the `# HELP` and `# TYPE` lines of a gauge.
fn gauge(out: &mut impl Write, name: &str, help: &str) -> io::Result<()> {
    writeln!(out, "# HELP {name} {help}")?;
    writeln!(out, "# TYPE {name} gauge")
}

/// Writes the span a `--window` summary covers (`window_ns`) as a gauge; nothing for a
/// summary of everything so far (`None`).
pub(crate) fn write_window_gauge(out: &mut impl Write, window_ns: Option<i64>) -> io::Result<()> {
    let Some(ns) = window_ns else { return Ok(()) };
    gauge(
        out,
        "tokentime_window_seconds",
        "The span this summary covers: the requests read in the last --window, in whole --every intervals (absent when it covers everything read).",
    )?;
    writeln!(out, "tokentime_window_seconds {}", ns as f64 / 1e9)
}

/// Writes the gauges of requests and errors per group, lines by kind, and read errors.
fn write_count_gauges(
    out: &mut impl Write,
    cov: &Coverage,
    groups: &[PromGroup<'_>],
) -> io::Result<()> {
    type Count = fn(&GroupStats) -> u64;
    let per_group: [(&str, &str, Count); 2] = [
        ("tokentime_requests", "Requests read, per group.", |g| {
            g.requests
        }),
        (
            "tokentime_request_errors",
            "Requests that failed or were cancelled before their first token, per group.",
            |g| g.errors,
        ),
    ];
    for (name, help, count) in per_group {
        gauge(out, name, help)?;
        for (l, g) in groups {
            writeln!(out, "{name}{} {}", labels(l), count(g))?;
        }
        if groups.is_empty() {
            // No request read: the all-requests series says 0 rather than going absent.
            writeln!(out, "{name} 0")?;
        }
    }
    gauge(
        out,
        "tokentime_lines",
        "Input lines read, by what they were.",
    )?;
    let skipped: u64 = cov.skipped.values().sum();
    for (kind, n) in [
        (
            "request",
            cov.lines
                - cov.non_json
                - cov.no_timing
                - skipped
                - cov.invalid
                - cov.too_long
                - cov.already_enriched,
        ),
        ("non_json", cov.non_json),
        ("no_timing", cov.no_timing),
        ("invalid", cov.invalid),
        ("too_long", cov.too_long),
        ("already_enriched", cov.already_enriched),
    ] {
        writeln!(out, "tokentime_lines{{kind=\"{kind}\"}} {n}")?;
    }
    // Only a log whose format sets lines aside has the series: one per what they are (an
    // AIPerf warm-up record, a stream's intermediate chunk).
    for (what, n) in &cov.skipped {
        writeln!(
            out,
            "tokentime_lines{{kind=\"skipped\",what=\"{}\"}} {n}",
            escape_label(what)
        )?;
    }
    gauge(
        out,
        "tokentime_read_errors",
        "Inputs that could not be read to their end (the other series cover what was read).",
    )?;
    writeln!(out, "tokentime_read_errors {}", cov.read_errors)?;
    if cov.outside_window > 0 {
        // Only a benchmark result file with a measurement window has the series.
        gauge(
            out,
            "tokentime_records_outside_window",
            "Records of a benchmark result file outside its measurement window (warm-up, cool-down): not requests.",
        )?;
        writeln!(
            out,
            "tokentime_records_outside_window {}",
            cov.outside_window
        )?;
    }
    if cov.outside_range > 0 {
        // Only a summary given --since or --until has the series.
        gauge(
            out,
            "tokentime_requests_outside_range",
            "Requests that ended outside --since/--until (or have no end instant): not counted.",
        )?;
        writeln!(
            out,
            "tokentime_requests_outside_range {}",
            cov.outside_range
        )?;
    }
    Ok(())
}

/// Writes the goodput gauges of `--goodput` targets: the share per group, and with a time
/// span (`span_s`) the rates.
fn write_goodput_gauges(
    out: &mut impl Write,
    targets: &Targets,
    span_s: Option<f64>,
    groups: &[PromGroup<'_>],
) -> io::Result<()> {
    let text = escape_label(&targets.text());
    let with_targets = |l: &Labels| {
        let mut gl = l.clone();
        gl.push(("targets".into(), text.clone()));
        labels(&gl)
    };
    // Beside the ratio, the unknown share: a group whose requests are mostly unknown (calls
    // not streamed have no TTFT) has a low ratio that is no missed target.
    type Share = fn(&GroupStats) -> u64;
    let shares: [(&str, &str, Share); 2] = [
        (
            "tokentime_goodput_ratio",
            "Share of requests that met every --goodput target, per group.",
            |g| g.goodput.met,
        ),
        (
            "tokentime_goodput_unknown_ratio",
            "Share of requests for which a --goodput target's metric is unknown (not streamed, \
             not logged): neither good nor missed, per group.",
            |g| g.goodput.unknown,
        ),
    ];
    for (name, help, part) in shares {
        gauge(out, name, help)?;
        for (l, g) in groups.iter().filter(|(_, g)| g.requests > 0) {
            let r = part(g) as f64 / g.requests as f64;
            writeln!(out, "{name}{} {}", with_targets(l), prom_num(r))?;
        }
    }
    let Some(s) = span_s.filter(|s| *s > 0.0) else {
        return Ok(());
    };
    type Rate = fn(&GroupStats) -> f64;
    let rates: [(&str, &str, Rate); 2] = [
        (
            "tokentime_goodput_requests_per_second",
            "Requests that met every --goodput target per second of the log's time span \
             (of those with times).",
            |g| g.timed_goodput().0 as f64,
        ),
        (
            "tokentime_goodput_output_tokens_per_second",
            "Output tokens of the requests that met every --goodput target, per second \
             of the log's time span (of those with times).",
            |g| g.timed_goodput().1 as f64,
        ),
    ];
    for (name, help, amount) in rates {
        gauge(out, name, help)?;
        for (l, g) in groups {
            writeln!(out, "{name}{} {}", with_targets(l), prom_num(amount(g) / s))?;
        }
    }
    Ok(())
}

/// Writes the `--slo` verdicts as gauges (nothing without SLOs): `tokentime_slo_judged` for
/// each, `tokentime_slo_met` for those judged only, so that an alert on a broken SLO
/// (`tokentime_slo_met == 0`) does not fire on one the log could not show (a series absent is
/// no data, as Prometheus reads it).
fn write_slo_gauges(out: &mut impl Write, verdicts: &[Verdict]) -> io::Result<()> {
    if verdicts.is_empty() {
        return Ok(());
    }
    gauge(
        out,
        "tokentime_slo_judged",
        "1 when the --slo was judged, 0 when the log could not show it (no request in its \
         group, its metric not logged, no request read).",
    )?;
    for v in verdicts {
        writeln!(
            out,
            "tokentime_slo_judged{{slo=\"{}\"}} {}",
            escape_label(&v.slo.text),
            u8::from(v.unjudged.is_none())
        )?;
    }
    let judged: Vec<&Verdict> = verdicts.iter().filter(|v| v.unjudged.is_none()).collect();
    if judged.is_empty() {
        return Ok(());
    }
    gauge(
        out,
        "tokentime_slo_met",
        "1 when the --slo was met, 0 when broken (absent when not judged).",
    )?;
    for v in judged {
        writeln!(
            out,
            "tokentime_slo_met{{slo=\"{}\"}} {}",
            escape_label(&v.slo.text),
            u8::from(v.met)
        )?;
    }
    Ok(())
}

/// A column of per-request rows (`--fields`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowField {
    /// The input line number (1-based, per file).
    Line,
    /// The input the request was read from (a FILE's name, `<stdin>` for standard input).
    File,
    /// The request id as logged.
    Id,
    /// The model as logged.
    Model,
    /// The format the line was attributed to.
    Format,
    /// The request's start, RFC 3339 UTC with milliseconds.
    Start,
    /// The request's end, RFC 3339 UTC with milliseconds.
    End,
    /// A metric with a per-request value ([`Metric::per_request`]).
    Metric(Metric),
    /// The prefix-cache class.
    Cache,
    /// Where TTFT is measured from.
    TtftOrigin,
    /// `ok`, `error` or `cancelled`.
    Outcome,
    /// Why it failed, as logged (empty or null when it did not, or the log does not say).
    ErrorReason,
}

/// Field names `--fields` accepts, in the order `--help` lists them: the request's own
/// fields, the metrics with a per-request value, its classes.
fn row_fields() -> String {
    let metrics = Metric::ALL
        .into_iter()
        .filter(|m| m.per_request())
        .map(Metric::json_name);
    ["line", "file", "id", "model", "format", "start", "end"]
        .into_iter()
        .chain(metrics)
        .chain(["cache", "ttft_origin", "outcome", "error_reason"])
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parses a `--fields` list.
///
/// # Errors
/// A message naming an unknown field.
pub(crate) fn parse_fields(s: &str) -> Result<Vec<RowField>, String> {
    s.split(',')
        .map(|f| {
            let f = f.trim();
            Ok(match f {
                "line" => RowField::Line,
                "file" => RowField::File,
                "id" => RowField::Id,
                "model" => RowField::Model,
                "format" => RowField::Format,
                "start" => RowField::Start,
                "end" => RowField::End,
                "cache" => RowField::Cache,
                "ttft_origin" => RowField::TtftOrigin,
                "outcome" => RowField::Outcome,
                "error_reason" => RowField::ErrorReason,
                // ITL is every gap of a request, not one value: it has no column.
                _ => match Metric::from_json_name(f).filter(|m| m.per_request()) {
                    Some(m) => RowField::Metric(m),
                    None => {
                        return Err(format!(
                            "--fields: unknown field \"{f}\" (known: {})",
                            row_fields()
                        ));
                    }
                },
            })
        })
        .collect()
}

impl RowField {
    fn name(self) -> &'static str {
        match self {
            RowField::Line => "line",
            RowField::File => "file",
            RowField::Id => "id",
            RowField::Model => "model",
            RowField::Format => "format",
            RowField::Start => "start",
            RowField::End => "end",
            RowField::Metric(m) => m.json_name(),
            RowField::Cache => "cache",
            RowField::TtftOrigin => "ttft_origin",
            RowField::Outcome => "outcome",
            RowField::ErrorReason => "error_reason",
        }
    }
}

/// How per-request rows are written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rows {
    /// The columns.
    pub fields: Vec<RowField>,
    /// CSV or TSV; `None` for JSON lines.
    pub delimited: Option<Delimited>,
    /// The name of the input being read (the `file` column): set per input by the caller.
    pub input: String,
}

/// What a row shows of one request besides its metrics.
pub struct RowContext<'a> {
    /// Input line number.
    pub line: u64,
    /// The request id, if logged.
    pub id: Option<&'a str>,
    /// The model, if logged.
    pub model: Option<&'a str>,
    /// Format name.
    pub format: &'a str,
    /// Why it failed, as logged.
    pub error_reason: Option<&'a str>,
}

enum Cell {
    Null,
    Num(f64),
    Int(u64),
    Str(String),
}

fn metric_cell(m: &Metrics, metric: Metric) -> Cell {
    match metric.request_value(m) {
        Ok(v) if metric.is_duration() => Cell::Num(v),
        Ok(v) => Cell::Int(v as u64),
        Err(_) => Cell::Null,
    }
}

impl Rows {
    /// Writes the header record (CSV and TSV only).
    ///
    /// # Errors
    /// The writer's.
    pub fn header(&self, out: &mut impl Write) -> io::Result<()> {
        if let Some(d) = self.delimited {
            let names: Vec<&str> = self.fields.iter().map(|f| f.name()).collect();
            d.record(out, &names)?;
        }
        Ok(())
    }

    /// Writes one request's row.
    ///
    /// # Errors
    /// The writer's.
    pub fn row(&self, out: &mut impl Write, r: &Request, ctx: &RowContext) -> io::Result<()> {
        let m = &r.metrics;
        let cells: Vec<Cell> = self
            .fields
            .iter()
            .map(|f| match *f {
                RowField::Line => Cell::Int(ctx.line),
                RowField::File => Cell::Str(self.input.clone()),
                RowField::Id => ctx.id.map_or(Cell::Null, |s| Cell::Str(s.to_owned())),
                RowField::Model => ctx.model.map_or(Cell::Null, |s| Cell::Str(s.to_owned())),
                RowField::Format => Cell::Str(ctx.format.to_owned()),
                RowField::Start => r.start_ns.map_or(Cell::Null, |t| {
                    Cell::Str(crate::summary::window::rfc3339_ms(t))
                }),
                RowField::End => r.end_ns.map_or(Cell::Null, |t| {
                    Cell::Str(crate::summary::window::rfc3339_ms(t))
                }),
                RowField::Metric(metric) => metric_cell(m, metric),
                RowField::Cache => m
                    .cache
                    .map_or(Cell::Null, |c| Cell::Str(c.as_str().to_owned())),
                RowField::TtftOrigin => m
                    .ttft_origin
                    .map_or(Cell::Null, |o| Cell::Str(o.as_str().to_owned())),
                RowField::Outcome => Cell::Str(m.outcome.as_str().to_owned()),
                RowField::ErrorReason => ctx
                    .error_reason
                    .map_or(Cell::Null, |s| Cell::Str(s.to_owned())),
            })
            .collect();
        match self.delimited {
            Some(d) => {
                let text: Vec<String> = cells
                    .into_iter()
                    .map(|c| match c {
                        Cell::Null => String::new(),
                        Cell::Num(v) => fixed3(v),
                        Cell::Int(n) => n.to_string(),
                        Cell::Str(s) => s,
                    })
                    .collect();
                d.record(out, &text)
            }
            None => {
                let mut b = Vec::with_capacity(128);
                b.push(b'{');
                for (i, (f, c)) in self.fields.iter().zip(cells).enumerate() {
                    if i > 0 {
                        b.push(b',');
                    }
                    write!(b, "\"{}\":", f.name())?;
                    match c {
                        Cell::Null => b.extend_from_slice(b"null"),
                        Cell::Num(v) => write_fixed3(&mut b, v)?,
                        Cell::Int(n) => write!(b, "{n}")?,
                        Cell::Str(s) => {
                            b.push(b'"');
                            write_json_str_body(&mut b, &s);
                            b.push(b'"');
                        }
                    }
                }
                b.extend_from_slice(b"}\n");
                out.write_all(&b)
            }
        }
    }
}

/// Writes a row for every request the line last processed by `proc` completed.
///
/// # Errors
/// The writer's.
pub(crate) fn write_request_rows(
    out: &mut impl Write,
    rows: &Rows,
    proc: &crate::classify::Processor,
    content: &[u8],
    line: u64,
) -> io::Result<()> {
    let _ = content;
    for (i, r) in proc.requests().iter().enumerate() {
        let (id, model) = proc.id_model(i);
        let ctx = RowContext {
            line,
            id,
            model,
            format: &proc.format_spec(r.format).name,
            error_reason: proc.note(i).and_then(|n| n.reason.as_deref()),
        };
        rows.row(out, r, &ctx)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_only_what_needs_it() {
        let mut o = Vec::new();
        Delimited::Csv
            .record(&mut o, &["a", "b,c", "say \"hi\"", ""])
            .unwrap();
        assert_eq!(o, b"a,\"b,c\",\"say \"\"hi\"\"\",\n");
        o.clear();
        Delimited::Tsv.record(&mut o, &["a\tb", "c"]).unwrap();
        assert_eq!(o, b"a b\tc\n");
    }

    #[test]
    fn label_names_are_valid() {
        assert_eq!(label_name("model"), "model");
        assert_eq!(label_name("metadata.user-id"), "metadata_user_id");
        assert_eq!(label_name("quantile"), "by_quantile");
        assert_eq!(label_name("9x"), "by_9x");
        assert_eq!(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }

    #[test]
    fn row_fields_are_the_old_list() {
        assert_eq!(
            row_fields(),
            "line, file, id, model, format, start, end, ttft_ms, tpot_ms, e2e_ms, queue_ms, \
             prefill_ms, decode_ms, input_tokens, cached_tokens, output_tokens, ttfot_ms, \
             cache, ttft_origin, outcome, error_reason"
        );
        assert!(parse_fields("itl_ms").is_err());
        assert_eq!(
            parse_fields("ttft_ms,output_tokens").unwrap(),
            [
                RowField::Metric(Metric::Ttft),
                RowField::Metric(Metric::OutputTokens)
            ]
        );
    }
}
