//! Renderings beyond the table and the JSON summary: CSV and TSV summaries, the Prometheus
//! text exposition format (summary type, for the node-exporter textfile collector), and
//! per-request rows (`tokentime --output csv|tsv|jsonl --fields ...`).
//!
//! Owns cell quoting, label escaping and metric names. Writes only to the writer it is given.

use crate::classify::{Coverage, Request};
use crate::metrics::Metrics;
use crate::output::enrich::{round3, write_fixed3, write_json_str_body};
use crate::summary::slo::Verdict;
use crate::summary::{GroupStats, METRICS, Summary, log_span, quantile_name};
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

fn fixed3(v: Option<f64>) -> String {
    match v {
        Some(x) => {
            let mut b = Vec::new();
            let _ = write_fixed3(&mut b, x);
            String::from_utf8_lossy(&b).into_owned()
        }
        None => String::new(),
    }
}

fn group_label(key: &[(String, Option<String>)]) -> String {
    if key.is_empty() {
        "all".into()
    } else {
        crate::summary::slo::group_label(key)
    }
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
        let label = group_label(key);
        let cells: Vec<String> = dims
            .iter()
            .map(|dim| match key.iter().find(|(k, _)| k == dim) {
                Some((_, v)) => v.clone().unwrap_or_else(|| "unknown".into()),
                None => String::new(),
            })
            .collect();
        for (name, st) in METRICS.iter().zip(g.metrics.iter_mut()) {
            let dg = &mut st.digest;
            let mut row = vec![label.clone()];
            row.extend(cells.iter().cloned());
            row.extend([
                g.requests.to_string(),
                g.errors.to_string(),
                (*name).to_owned(),
                dg.count().to_string(),
                dg.is_exact().to_string(),
                fixed3(dg.min()),
            ]);
            for &q in quantiles {
                row.push(fixed3(dg.quantile(q)));
            }
            row.push(fixed3(dg.max()));
            row.push(fixed3(dg.mean()));
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

/// The Prometheus family name of a summary metric: durations in seconds
/// (`tokentime_ttft_seconds`), token counts as they are (`tokentime_input_tokens`).
pub(crate) fn prometheus_name(metric: &str) -> String {
    match metric.strip_suffix("_ms") {
        Some(base) => format!("tokentime_{base}_seconds"),
        None => format!("tokentime_{metric}"),
    }
}

fn prom_help(metric: &str) -> &'static str {
    match metric {
        "ttft_ms" => "Time to first token (TTFT) of the logged requests, in seconds.",
        "tpot_ms" => "Time per output token (TPOT, decode / (output tokens - 1)), in seconds.",
        "e2e_ms" => "End-to-end latency (E2E) of the logged requests, in seconds.",
        "queue_ms" => "Queue time (scheduled - arrival), in seconds.",
        "prefill_ms" => "Prefill time (first token - scheduled), in seconds.",
        "decode_ms" => "Decode time (end - first token), in seconds.",
        "input_tokens" => "Prompt tokens per request, cached ones included.",
        "cached_tokens" => "Prompt tokens served from the prefix cache per request.",
        "output_tokens" => "Generated tokens per request.",
        "itl_ms" => "Inter-token latency (ITL): every gap between consecutive tokens, in seconds.",
        _ => "A tokentime metric.",
    }
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
    let mut groups: Vec<(Vec<(String, String)>, &mut GroupStats)> = summary
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
        .collect();
    for (i, name) in METRICS.iter().enumerate() {
        let family = prometheus_name(name);
        let scale = if name.ends_with("_ms") { 1e-3 } else { 1.0 };
        writeln!(out, "# HELP {family} {}", prom_help(name))?;
        writeln!(out, "# TYPE {family} summary")?;
        if groups.is_empty() {
            // No request read: the all-requests series read 0 rather than going absent.
            writeln!(out, "{family}_sum 0")?;
            writeln!(out, "{family}_count 0")?;
        }
        for (l, g) in groups.iter_mut() {
            let d = &mut g.metrics[i].digest;
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
    }
    let gauge = |out: &mut dyn Write, name: &str, help: &str| -> io::Result<()> {
        writeln!(out, "# HELP {name} {help}")?;
        writeln!(out, "# TYPE {name} gauge")
    };
    gauge(out, "tokentime_requests", "Requests read, per group.")?;
    for (l, g) in &groups {
        writeln!(out, "tokentime_requests{} {}", labels(l), g.requests)?;
    }
    if groups.is_empty() {
        // No request read: the all-requests series says 0 rather than going absent.
        writeln!(out, "tokentime_requests 0")?;
    }
    gauge(
        out,
        "tokentime_request_errors",
        "Requests that failed or were cancelled before their first token, per group.",
    )?;
    for (l, g) in &groups {
        writeln!(out, "tokentime_request_errors{} {}", labels(l), g.errors)?;
    }
    if groups.is_empty() {
        writeln!(out, "tokentime_request_errors 0")?;
    }
    gauge(
        out,
        "tokentime_lines",
        "Input lines read, by what they were.",
    )?;
    for (kind, n) in [
        (
            "request",
            cov.lines
                - cov.non_json
                - cov.no_timing
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
    gauge(
        out,
        "tokentime_read_errors",
        "Inputs that could not be read to their end (the other series cover what was read).",
    )?;
    writeln!(out, "tokentime_read_errors {}", cov.read_errors)?;
    if let Some(t) = &targets {
        let text = escape_label(&t.text());
        gauge(
            out,
            "tokentime_goodput_ratio",
            "Share of requests that met every --goodput target, per group.",
        )?;
        for (l, g) in &groups {
            if g.requests > 0 {
                let mut gl = l.clone();
                gl.push(("targets".into(), text.clone()));
                let r = g.goodput.met as f64 / g.requests as f64;
                writeln!(
                    out,
                    "tokentime_goodput_ratio{} {}",
                    labels(&gl),
                    prom_num(r)
                )?;
            }
        }
        if let Some(s) = span.filter(|s| *s > 0.0) {
            type Rate = fn(&GroupStats) -> f64;
            let rates: [(&str, &str, Rate); 2] = [
                (
                    "tokentime_goodput_requests_per_second",
                    "Requests that met every --goodput target per second of the log's time span.",
                    |g| g.goodput.met as f64,
                ),
                (
                    "tokentime_goodput_output_tokens_per_second",
                    "Output tokens of the requests that met every --goodput target, per second \
                     of the log's time span.",
                    |g| g.goodput.met_output_tokens as f64,
                ),
            ];
            for (name, help, amount) in rates {
                gauge(out, name, help)?;
                for (l, g) in &groups {
                    let mut gl = l.clone();
                    gl.push(("targets".into(), text.clone()));
                    writeln!(out, "{name}{} {}", labels(&gl), prom_num(amount(g) / s))?;
                }
            }
        }
    }
    if !verdicts.is_empty() {
        gauge(
            out,
            "tokentime_slo_met",
            "1 when the --slo was met, 0 when broken.",
        )?;
        for v in verdicts {
            writeln!(
                out,
                "tokentime_slo_met{{slo=\"{}\"}} {}",
                escape_label(&v.slo.text),
                u8::from(v.met)
            )?;
        }
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
    /// One of the [`METRICS`] (index).
    Metric(usize),
    /// The prefix-cache class.
    Cache,
    /// Where TTFT is measured from.
    TtftOrigin,
    /// `ok`, `error` or `cancelled`.
    Outcome,
}

/// Field names `--fields` accepts, in the order `--help` lists them.
pub(crate) const ROW_FIELDS: &str = "line, file, id, model, format, start, end, ttft_ms, tpot_ms, e2e_ms, queue_ms, prefill_ms, decode_ms, input_tokens, cached_tokens, output_tokens, cache, ttft_origin, outcome";

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
                // ITL is every gap of a request, not one value: it has no column.
                _ => match METRICS.iter().position(|m| *m == f && *m != "itl_ms") {
                    Some(i) => RowField::Metric(i),
                    None => {
                        return Err(format!(
                            "--fields: unknown field {f:?} (known: {ROW_FIELDS})"
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
            RowField::Metric(i) => METRICS[i],
            RowField::Cache => "cache",
            RowField::TtftOrigin => "ttft_origin",
            RowField::Outcome => "outcome",
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
}

enum Cell {
    Null,
    Num(f64),
    Int(u64),
    Str(String),
}

fn metric_cell(m: &Metrics, i: usize) -> Cell {
    match crate::summary::request_value(m, i) {
        Ok(v) if METRICS[i].ends_with("_ms") => Cell::Num(v),
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
                RowField::Metric(i) => metric_cell(m, i),
                RowField::Cache => m
                    .cache
                    .map_or(Cell::Null, |c| Cell::Str(c.as_str().to_owned())),
                RowField::TtftOrigin => m
                    .ttft_origin
                    .map_or(Cell::Null, |o| Cell::Str(o.as_str().to_owned())),
                RowField::Outcome => Cell::Str(m.outcome.as_str().to_owned()),
            })
            .collect();
        match self.delimited {
            Some(d) => {
                let text: Vec<String> = cells
                    .into_iter()
                    .map(|c| match c {
                        Cell::Null => String::new(),
                        Cell::Num(v) => fixed3(Some(v)),
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
        assert_eq!(prometheus_name("ttft_ms"), "tokentime_ttft_seconds");
        assert_eq!(prometheus_name("output_tokens"), "tokentime_output_tokens");
    }
}
