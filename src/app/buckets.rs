//! `--bucket` windows in a run: what a chunk worker hands on of each request so that the
//! in-order worker adds it to its window in input order, and how a window is written: JSON lines
//! (`-o json`, `tokentime.bucket/v1`) or the rows of a text table
//! ([`crate::output::compact::WindowTable`]).
//!
//! Reading one input, windows are written as they complete ([`Buckets::take_complete`]): the
//! worker that adds a request renders the windows it completes into its part's `ready` bytes,
//! which the thread that owns stdout writes out (and, for a digest file, keeps them:
//! [`Buckets::keep`]). Several inputs add to the same windows in any order, so their windows are
//! all held to the end.

use crate::classify::Request;
use crate::cli::config::ReportConfig;
use crate::output::compact::WindowTable;
use crate::output::summary::group_json;
use crate::summary::Summary;
use crate::summary::window::{Buckets, rfc3339_ms};
use serde_json::json;
use std::io::{self, Write};

/// Rendered windows a part may hold before its worker waits for them to be written.
pub(crate) const READY_LIMIT: usize = 4 << 20;

/// One request as a chunk worker hands it on for its `--bucket` window: the request, its
/// token gaps, its `--by` values, its note (why it failed, its id: a failed request and
/// a candidate for the slowest only).
pub struct BucketInput {
    pub(crate) request: Request,
    pub(crate) gaps: Vec<i64>,
    pub(crate) by: Vec<Option<String>>,
    pub(crate) note: Option<Box<crate::classify::notes::Note>>,
}

/// How windows are written: JSON lines with these quantiles, or table rows.
#[derive(Debug, Clone)]
pub(crate) struct WindowStyle {
    /// The quantiles of the JSON lines.
    pub(crate) quantiles: Vec<f64>,
    /// The table the rows are of (`-o table`); `None` for JSON lines.
    pub(crate) table: Option<WindowTable>,
}

impl WindowStyle {
    /// The style of a summary run's windows (`--bucket`, its `--output`).
    pub(crate) fn of(sc: &crate::cli::config::SummaryConfig) -> WindowStyle {
        WindowStyle::new(&sc.report, !sc.by.is_empty(), sc.bucket.unwrap_or(0))
    }

    /// The style of windows `width` ns wide reported as `rc` says (`by`: grouped by `--by`
    /// keys): a summary run's, or a merge's of digest files with windows.
    pub(crate) fn new(rc: &ReportConfig, by: bool, width: i64) -> WindowStyle {
        let table = (rc.output == crate::cli::config::SummaryOutput::Table)
            .then(|| WindowTable::new(&rc.table, by, width));
        WindowStyle {
            quantiles: rc.quantiles.clone(),
            table,
        }
    }

    fn write(
        &self,
        out: &mut impl Write,
        start: i64,
        width: i64,
        summary: &mut Summary,
        (repeat, partial): (bool, Option<&str>),
    ) -> io::Result<()> {
        match &self.table {
            Some(t) => t.write_window(out, start, summary, (repeat, partial)),
            None => write_window(
                out,
                start,
                width,
                summary,
                &self.quantiles,
                (repeat, partial),
            ),
        }
    }
}

/// Writes the windows `b` holds, earliest first (they are kept: a digest file saves them
/// after).
pub(crate) fn write_all(
    out: &mut impl Write,
    b: &mut Buckets,
    style: &WindowStyle,
) -> io::Result<()> {
    let (width, taken_before) = (b.width, b.taken_before);
    for (&start, summary) in &mut b.windows {
        let repeat = taken_before.is_some_and(|t| start < t);
        let partial = b.partial.get(&start).map(|r| r.join("; "));
        style.write(out, start, width, summary, (repeat, partial.as_deref()))?;
    }
    Ok(())
}

/// The windows of a run's end: the table's `header` first (when not written yet: also with no
/// window, so that a script reading the table finds its columns), the windows rendered
/// `ready` before, then those `b` still holds.
pub(crate) fn write_windows(
    out: &mut impl Write,
    ready: &[u8],
    b: &mut Buckets,
    style: &WindowStyle,
    header: Option<String>,
) -> io::Result<()> {
    if let Some(h) = header {
        writeln!(out, "{h}")?;
    }
    out.write_all(ready)?;
    write_all(out, b, style)
}

/// Says on stderr how many requests are in no window (no end time), if any; `windows`: whether
/// the run had a window at all.
pub(crate) fn say_unplaced(b: &Buckets, windows: bool) {
    if b.unplaced == 0 {
        return;
    }
    let mut why: Vec<String> = vec![];
    if !windows {
        why.push(
            "the log gives durations but no time of day a request ended at: its summary without \
             --bucket has them"
                .to_owned(),
        );
    }
    match b.unplaced_errors {
        0 => {}
        n if n == b.unplaced => why.push(format!(
            "{} failed: in no window's errors column",
            if n == 1 { "it" } else { "all" }
        )),
        n => why.push(format!("{n} of them failed: in no window's errors column")),
    }
    crate::diag!(
        "tokentime: {} without an end time {} in no --bucket window{}",
        crate::output::summary::plural(b.unplaced, "request"),
        if b.unplaced == 1 { "is" } else { "are" },
        if why.is_empty() {
            String::new()
        } else {
            format!(" ({})", why.join("; "))
        }
    );
}

/// Takes out the windows of `b` that are complete and renders them into `ready`.
pub(crate) fn render_complete(b: &mut Buckets, style: &WindowStyle, ready: &mut Vec<u8>) {
    let width = b.width;
    for (start, mut summary, repeat) in b.take_complete() {
        let reasons = b.partial.remove(&start);
        let partial = reasons.as_ref().map(|r| r.join("; "));
        // Writing to a Vec cannot fail.
        let _ = style.write(
            ready,
            start,
            width,
            &mut summary,
            (repeat, partial.as_deref()),
        );
        b.keep(start, summary, reasons);
    }
}

/// One JSON line per group of the window that starts at `start` (`tokentime.bucket/v1`);
/// `repeat` marks the lines of a window written before (`"late": true`: requests that ended
/// in it after it was written); `partial` says why a window misses requests its input held
/// (`"partial": "day5.jsonl.gz not read to its end"`).
fn write_window(
    out: &mut impl Write,
    start: i64,
    width: i64,
    summary: &mut Summary,
    quantiles: &[f64],
    (repeat, partial): (bool, Option<&str>),
) -> io::Result<()> {
    let targets = summary.targets().cloned();
    for (key, g) in summary.groups() {
        let mut doc = group_json(
            &key,
            g,
            quantiles,
            targets.as_ref(),
            Some(width as f64 / 1e9),
        );
        doc["schema"] = json!("tokentime.bucket/v1");
        doc["start"] = json!(rfc3339_ms(start));
        doc["end"] = json!(rfc3339_ms(start + width));
        doc["start_ns"] = json!(start);
        doc["width_s"] = json!(width as f64 / 1e9);
        if repeat {
            doc["late"] = json!(true);
        }
        if let Some(why) = partial {
            doc["partial"] = json!(why);
        }
        serde_json::to_writer(&mut *out, &doc)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}
