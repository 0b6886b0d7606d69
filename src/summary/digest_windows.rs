//! The `--bucket` windows of a digest file (`tokentime.digest/v2`): saved beside the whole
//! run's groups, read back, and checked to line up when files are merged.
//!
//! ```text
//! "bucket": {"width_ns": 60000000000, "unplaced": 0},
//! "windows": [{"start_ns": 1767225600000000000, "groups": [...]}, ...]
//! ```
//!
//! A window is keyed by its start in log time (epoch ns, a multiple of the width, as
//! [`Buckets`] aligns it); its groups are saved as the file's own are. Windows of the same
//! start in several files are one window split across inputs: merged, they are the window one
//! run over all the inputs would have made.

use super::{RunIds, SavedGroups, Totals, add_groups};
use crate::summary::window::{Buckets, format_duration};
use crate::summary::{MakeGroups, Summary};
use serde_json::{Map, Value as Json, json};

/// Adds the `"bucket"` and `"windows"` members of `b` to a digest file's `head`.
pub(super) fn save(head: &mut Map<String, Json>, b: &mut Buckets) {
    head.insert(
        "bucket".into(),
        json!({"width_ns": b.width, "unplaced": b.unplaced}),
    );
    let windows: Vec<Json> = b
        .windows
        .iter_mut()
        .map(|(start, summary)| {
            let mut groups = SavedGroups(summary.raw_groups());
            let groups: Vec<Json> = (0..groups.count()).map(|i| groups.group(i)).collect();
            let mut w = json!({"start_ns": start, "groups": groups});
            // Why the window misses requests (an input not read to its end, a run
            // interrupted): a merge marks it as the summary did.
            if let Some(reasons) = b.partial.get(start) {
                w["partial"] = json!(reasons);
            }
            w
        })
        .collect();
    head.insert("windows".into(), Json::Array(windows));
}

/// Reads the windows of a digest file document, each a summary made from `template` (an empty
/// one of the file's keys, bound and targets), adding their counts to `totals`.
///
/// # Errors
/// A message naming what is missing or inconsistent.
pub(super) fn load(
    doc: &Json,
    template: &Summary,
    totals: &mut Totals,
    runs: &mut RunIds,
) -> Result<Buckets, String> {
    let width = doc["bucket"]["width_ns"]
        .as_i64()
        .filter(|&w| w > 0)
        .ok_or("\"bucket.width_ns\" must be a width above zero, in ns")?;
    let mut b = Buckets::new(width);
    b.unplaced = doc["bucket"]["unplaced"]
        .as_u64()
        .ok_or("\"bucket.unplaced\" must be a count")?;
    for (i, w) in doc["windows"]
        .as_array()
        .ok_or("\"windows\" must be an array")?
        .iter()
        .enumerate()
    {
        let start = w["start_ns"]
            .as_i64()
            .filter(|&s| crate::summary::window::window_start(s, width) == s)
            .ok_or_else(|| {
                format!(
                    "window {i}: \"start_ns\" must be a window's start: a multiple of \
                     bucket.width_ns (from the first Monday, 1970-01-05, for whole weeks)"
                )
            })?;
        if let Some(reasons) = w["partial"].as_array() {
            for r in reasons {
                let r = r.as_str().ok_or_else(|| {
                    format!("window {i}: \"partial\" must be a list of reasons (strings)")
                })?;
                b.mark(start, r);
            }
        }
        let groups = w["groups"]
            .as_array()
            .ok_or_else(|| format!("window {i}: \"groups\" must be an array"))?;
        let mut summary = template.clone();
        add_groups(groups, &mut summary, totals, runs).map_err(|e| format!("window {i}: {e}"))?;
        if b.windows.insert(start, summary).is_some() {
            return Err(format!("window {i}: a second window starting at {start}"));
        }
    }
    Ok(b)
}

/// Refuses to merge a document's windows `next` (named `at`) with those of the documents
/// before it, `first`, when one has windows and the other none, or their widths differ: one
/// run has one `--bucket`.
///
/// # Errors
/// The message, naming both widths.
pub(super) fn check_same(
    at: &str,
    first: Option<&Buckets>,
    next: Option<&Buckets>,
) -> Result<(), String> {
    let said = |b: Option<&Buckets>| match b {
        Some(b) => format!("with --bucket {}", format_duration(b.width)),
        None => "without --bucket".to_owned(),
    };
    if first.map(|b| b.width) == next.map(|b| b.width) {
        return Ok(());
    }
    Err(format!(
        "{at}: saved {}, the first file {}: one run has one --bucket",
        said(next),
        said(first)
    ))
}
