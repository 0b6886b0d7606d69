//! Findings: the analysis of a summary ([`crate::analysis`]) as people and programs read it.
//! The headline lines, the findings and tables under each group's table, the histograms
//! (`--hist`), and the JSON members they add to `tokentime.summary/v1` (docs/reading-the-report.md,
//! "In JSON").
//!
//! Takes a finished [`Report`](crate::analysis::Report); writes only to the writer it is given.

use crate::analysis::hist::{self, Histogram};
use crate::analysis::{
    BucketRow, Decomposition, EXPLAINED_PURITY, GroupReport, Headline, Inflight, MultimodalFinding,
    Region,
};
use crate::metrics::Metric;
use crate::number::fmt_cell;
use crate::number::{count_json, round3};
use crate::summary::{key_text, quantile_name};
use serde_json::{Map, Value as Json, json};
use std::io::{self, Write};

// ---------------------------------------------------------------------------------------
// Text

// `+ 0.0` turns the -0.0 of an empty sum into 0.
fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0 + 0.0)
}

fn pct1(x: f64) -> String {
    format!("{:.1}%", x * 100.0 + 0.0)
}

fn qlist(qs: &[(f64, f64)]) -> String {
    qs.iter()
        .map(|&(q, v)| format!("{} {}", quantile_name(q), fmt_cell(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The headline lines (before the group tables).
///
/// # Errors
/// The writer's.
pub(crate) fn write_headline(out: &mut impl Write, h: &Headline) -> io::Result<()> {
    if let Some(c) = &h.chat {
        let ttft = if c.ttft.is_empty() {
            crate::analysis::no_value("TTFT", &c.ttft_nulls)
        } else {
            let from = if c.ttft_from_scheduled {
                ", from `scheduled`: queue time not in the log"
            } else {
                ""
            };
            format!(
                "ttft_ms{} {} ({}{from})",
                if c.ttft_exact { "" } else { "~" },
                qlist(&c.ttft),
                crate::output::summary::plural(c.ttft_count, "request")
            )
        };
        let reading = if c.tpot_count > 0 {
            format!(
                "; {}{} of {} decode slower than reading speed ({} tokens/s: TPOT above {} ms)",
                if c.slower_exact { "" } else { "~" },
                pct1(c.slower_than_reading),
                crate::output::summary::plural(c.tpot_count, "request"),
                c.reading_speed,
                fmt_cell(c.tpot_threshold_ms)
            )
        } else {
            String::new()
        };
        writeln!(out, "for chat (TTFT first): {ttft}{reading}")?;
    }
    if let Some(a) = &h.agent {
        let e2e = if a.e2e.is_empty() {
            crate::analysis::no_value("E2E", &a.e2e_nulls)
        } else {
            format!(
                "e2e_ms{} {} ({})",
                if a.e2e_exact { "" } else { "~" },
                qlist(&a.e2e),
                crate::output::summary::plural(a.e2e_count, "request")
            )
        };
        // Over the requests with a decode, which some logs give for a few only.
        let of = if a.decode_count < a.e2e_count {
            format!(
                "the E2E time of the {} with a decode",
                crate::output::summary::plural(a.decode_count, "request")
            )
        } else {
            "all E2E time".to_owned()
        };
        let decode = match (a.decode_share_total, a.decode_share_median) {
            (Some(t), Some(m)) => format!(
                "; decode (TPOT x (output tokens - 1)) is {} of {of}, per request: median {}",
                pct(t),
                pct(m)
            ),
            _ => String::new(),
        };
        writeln!(out, "for agents (E2E first): {e2e}{decode}")?;
    }
    Ok(())
}

/// Each mode of a finding as `centre (share)`.
fn mode_texts(f: &MultimodalFinding) -> Vec<String> {
    f.modality
        .modes
        .iter()
        .map(|m| format!("{} ({})", fmt_cell(m.center), pct(m.share)))
        .collect()
}

fn multimodal_text(f: &MultimodalFinding) -> String {
    let name = f.metric.json_name();
    let modes = mode_texts(f);
    let modes = match modes.len() {
        2 => format!("{} and {}", modes[0], modes[1]),
        _ => {
            let (last, rest) = modes.split_last().expect("modes");
            format!("{}, and {last}", rest.join(", "))
        }
    };
    let busiest = f.share_near_modes.iter().cloned().fold(0.0, f64::max);
    let near = format!(
        "{} of values within 25% of it, {} around the busiest mode",
        pct(f.share_near_mean),
        pct(busiest)
    );
    let mean = match (f.mean_between, f.share_near_mean <= 0.5 * busiest) {
        (true, true) => format!(
            "the mean {} falls between them, where few values lie ({near})",
            fmt_cell(f.mean)
        ),
        (true, false) => format!("the mean {} falls between them ({near})", fmt_cell(f.mean)),
        (false, _) => format!("the mean is {} ({near})", fmt_cell(f.mean)),
    };
    let split = match f.best_split() {
        Some(s) if s.explains => {
            let parts: Vec<String> = s
                .groups
                .iter()
                .map(|(v, _, m, share)| {
                    let group = if s.dims == ["in_flight"] {
                        format!("{} in flight", v[0].as_deref().unwrap_or("unknown"))
                    } else {
                        key_text(
                            (s.dims.iter().map(String::as_str)).zip(v.iter().map(Option::as_deref)),
                        )
                    };
                    format!("{group} in mode {} ({})", m + 1, pct(*share))
                })
                .collect();
            format!(
                "; split by {} explains it: {} ({} of values in their group's mode)",
                s.by(),
                parts.join(", "),
                pct(s.purity)
            )
        }
        Some(s) if s.purity >= EXPLAINED_PURITY => format!(
            "; no split explains it (by {}, every group's values sit mostly in the same mode)",
            s.by()
        ),
        Some(s) => format!(
            "; no split explains it (best: by {}, {} of values in their group's mode, below {})",
            s.by(),
            pct(s.purity),
            pct(EXPLAINED_PURITY)
        ),
        None => String::new(),
    };
    format!(
        "{name} has {} modes, at {modes}; {mean}{split}",
        f.modality.modes.len()
    )
}

/// One line naming a group's metrics of several modes and their modes.
fn multimodal_brief(fs: &[MultimodalFinding]) -> String {
    let parts: Vec<String> = fs
        .iter()
        .map(|f| format!("{} {}", f.metric.json_name(), mode_texts(f).join(" | ")))
        .collect();
    format!("several modes: {}", parts.join("; "))
}

fn write_rows(
    out: &mut impl Write,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    indent: usize,
) -> io::Result<()> {
    let mut all = vec![header];
    all.extend(rows);
    let n = all[0].len();
    let mut widths: Vec<usize> = (0..n)
        .map(|c| all.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    widths[0] = widths[0].max(indent);
    for r in &all {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            let w = widths[c];
            if c == 0 {
                line.push_str(&format!("{cell:<w$}"));
            } else {
                line.push_str(&format!("  {cell:>w$}"));
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

fn bucket_table(
    out: &mut impl Write,
    first: &str,
    with_mean: bool,
    rows: &[BucketRow],
    indent: usize,
) -> io::Result<()> {
    let mut header = vec![first.to_owned(), "count".to_owned()];
    if with_mean {
        header.push("mean".to_owned());
    }
    let qs: Vec<f64> = rows
        .first()
        .map(|r| r.quantiles.iter().map(|q| q.0).collect())
        .unwrap_or_default();
    header.extend(qs.iter().map(|&q| quantile_name(q)));
    let body = rows
        .iter()
        .map(|r| {
            let mut row = vec![
                if r.exact {
                    r.label.clone()
                } else {
                    format!("{}~", r.label)
                },
                r.count.to_string(),
            ];
            if with_mean {
                row.push(format!("{:.2}", r.mean_key.unwrap_or(0.0)));
            }
            row.extend(qs.iter().map(|q| {
                r.quantiles
                    .iter()
                    .find(|x| x.0 == *q)
                    .map_or("-".to_owned(), |x| fmt_cell(x.1))
            }));
            row
        })
        .collect();
    write_rows(out, header, body, indent)
}

/// The reading of the TTFT-by-prompt table (the compact report's, said under the table too):
/// how the p50 of its last bucket of 5 requests or more compares with its first's.
fn writeln_prompt_reading(
    out: &mut impl Write,
    rows: &[crate::analysis::BucketRow],
) -> io::Result<()> {
    if let Some((a, b)) = crate::analysis::held_ends(rows)
        && let (a, b) = (&rows[a], &rows[b])
        && let (Some(pa), Some(pb)) = (a.p50, b.p50)
        && pa > 0.0
    {
        let way = match pb / pa {
            x if x >= 1.5 => "grows with",
            x if x <= 1.0 / 1.5 => "falls with",
            _ => "is about flat with",
        };
        writeln!(
            out,
            "ttft_ms {way} the prompt: p50 {:.1}x from {} to {} input tokens",
            pb / pa,
            a.label,
            b.label
        )?;
    }
    Ok(())
}

/// Writes a group's findings under its table, whose first column is `indent` wide: all of
/// them (`full`), or only which metrics are multimodal.
///
/// # Errors
/// The writer's.
pub(crate) fn write_group(
    out: &mut impl Write,
    r: &GroupReport,
    indent: usize,
    full: bool,
) -> io::Result<()> {
    if !full {
        if !r.multimodal.is_empty() {
            writeln!(out, "{}", multimodal_brief(&r.multimodal))?;
        }
        return Ok(());
    }
    for f in &r.multimodal {
        writeln!(out, "{}", multimodal_text(f))?;
    }
    if !r.ttft_by_cache.is_empty() {
        let parts: Vec<String> = r
            .ttft_by_cache
            .iter()
            .map(|(c, n, p)| format!("{c} {} ({n})", fmt_cell(*p)))
            .collect();
        writeln!(out, "ttft_ms p50 by cache: {}", parts.join(", "))?;
    }
    for w in r.weighted.iter().filter(|w| w.differs) {
        let rw: Vec<(f64, f64)> = w.quantiles.iter().map(|q| (q.0, q.1)).collect();
        let tw: Vec<(f64, f64)> = w.quantiles.iter().map(|q| (q.0, q.2)).collect();
        writeln!(
            out,
            "{} token-weighted (by {}): {}; request-weighted: {}",
            w.metric.json_name(),
            w.weight,
            qlist(&tw),
            qlist(&rw)
        )?;
    }
    if let Some(d) = &r.decomposition {
        writeln!(
            out,
            "ttft_ms decomposition ({} requests with queue and prefill):",
            d.count
        )?;
        let rows = d
            .regions
            .iter()
            .map(|g| {
                vec![
                    g.at.to_owned(),
                    format!("{}", g.count),
                    fmt_cell(g.ttft_ms),
                    fmt_cell(g.queue_ms),
                    fmt_cell(g.prefill_ms),
                    g.input_tokens.map_or("-".to_owned(), |t| format!("{t:.0}")),
                    pct(g.queue_share),
                ]
            })
            .collect();
        let header = [
            "at",
            "count",
            Metric::Ttft.json_name(),
            Metric::Queue.json_name(),
            Metric::Prefill.json_name(),
            Metric::InputTokens.json_name(),
            "queueing",
        ]
        .map(String::from)
        .to_vec();
        write_rows(out, header, rows, indent)?;
        writeln!(out, "{}", reading_text(d))?;
    }
    if r.ttft_by_input.len() >= 2 {
        writeln!(out, "ttft_ms by input_tokens:")?;
        let key = Metric::InputTokens.json_name();
        bucket_table(out, key, false, &r.ttft_by_input, indent)?;
        writeln_prompt_reading(out, &r.ttft_by_input)?;
    }
    // One load level is shown too, when enough requests hold it to say what TPOT is there.
    if let Some(i) = &r.inflight
        && (i.rows.len() >= 2
            || i.rows
                .first()
                .is_some_and(|r| r.count >= crate::analysis::MIN_BUCKET))
    {
        writeln!(
            out,
            "tpot_ms by requests in flight (time-weighted mean over each decode, from the log's start and end times):"
        )?;
        bucket_table(out, "in flight", true, &i.rows, indent)?;
        writeln!(out, "{}", inflight_text(i))?;
    } else if r.inflight.is_none() && r.tpot_unplaced > 0 {
        let which = match r.tpot_unplaced {
            1 => "the one request with a TPOT lacks a start or an end time".to_owned(),
            n => format!("none of the {n} requests with a TPOT has both a start and an end time"),
        };
        writeln!(
            out,
            "no tpot_ms by requests in flight: {which} in the log, so which requests overlapped \
             is unknown"
        )?;
    }
    Ok(())
}

fn reading_text(d: &Decomposition) -> String {
    let [p50, p99] = &d.regions;
    let shares = format!(
        "queueing is {} of TTFT at p50 and {} at p99",
        pct(p50.queue_share),
        pct(p99.queue_share)
    );
    let tokens = match (p50.input_tokens, p99.input_tokens) {
        (Some(a), Some(b)) => {
            format!("; prompts average {b:.0} input tokens at p99 against {a:.0} at p50")
        }
        _ => String::new(),
    };
    match d.reading {
        "capacity" => {
            format!("reading: TTFT grows with queue time, a capacity problem ({shares}{tokens})")
        }
        "prompt" => format!(
            "reading: TTFT grows with prefill (prompt length), a prompt problem ({shares}{tokens})"
        ),
        "flat" => format!("reading: TTFT is flat from p50 to p99 ({shares})"),
        "few" => format!(
            "reading: none, a row holds fewer than {} requests ({shares})",
            crate::analysis::MIN_REGION
        ),
        _ => format!(
            "reading: TTFT grows with both queue time ({}) and prefill ({}) of its growth from p50 to p99 ({shares}{tokens})",
            pct(d.growth_shares.0),
            pct(d.growth_shares.1)
        ),
    }
}

/// Requests placed late (any request, with a TPOT or not: each one's interval counts for the
/// others), against those in the in-flight table, from which its counts are not read (one in [`UNRELIABLE_LATE`] or more: the log is out of time order; a few late
/// requests land in a bucket of their own and make a trend of it).
const UNRELIABLE_LATE: u64 = 100;

/// Whether the in-flight counts are not to be read ([`UNRELIABLE_LATE`]).
pub(crate) fn unreliable(i: &Inflight) -> bool {
    let placed: u64 = i.rows.iter().map(|r| r.count).sum();
    i.late > 0 && i.late.saturating_mul(UNRELIABLE_LATE) >= placed
}

fn inflight_text(i: &Inflight) -> String {
    let mut s = String::new();
    let cell = |v: Option<f64>| v.map_or("-".to_owned(), fmt_cell);
    let placed: u64 = i.rows.iter().map(|r| r.count).sum();
    if unreliable(i) {
        // Far out of order (files newest first, shuffled lines): requests that overlapped
        // were swept apart, so the counts, and any trend read from them, are wrong.
        return format!(
            "the in-flight counts are unreliable, no trend is read from them: {} requests of the input were placed late, against {placed} in this table (the log is out of time order: files given newest first, or shuffled lines); give files oldest first or sort the log by time",
            i.late
        );
    }
    if let [only] = i.rows.as_slice() {
        // One load level: what TPOT is there, and no trend.
        s.push_str(&format!(
            "every decode ran with {} {} in flight (mean {}), tpot_ms p50 {}: one load level, \
             no trend to read (TPOT under other loads is not in the log)",
            only.label,
            if only.label == "1" {
                "request"
            } else {
                "requests"
            },
            only.mean_key.map_or("-".to_owned(), |m| format!("{m:.2}")),
            cell(only.p50)
        ));
    } else if let (Some(slope), Some((a, b))) = (i.slope_ms, i.ends())
        && round3(slope) == 0.0
    {
        // A slope that prints as 0.0 has no direction worth a word.
        let (first, last) = (i.medians[a], i.medians[b]);
        s.push_str(&format!(
            "tpot_ms is flat with requests in flight (under 0.001 ms per extra request); p50 {:.1}x from {} to {} in flight",
            last / first,
            i.rows[a].label,
            i.rows[b].label
        ));
    } else if let (Some(slope), Some((a, b))) = (i.slope_ms, i.ends())
        && (slope < 0.0) != (i.medians[b] < i.medians[a])
    {
        // The fit over every bucket and its two ends point opposite ways (a small first
        // bucket below the rest, say): no trend is said, only that the two disagree.
        s.push_str(&format!(
            "tpot_ms moves no one way with requests in flight: the fit over the buckets {} {} ms \
             per extra request, while the p50 is {:.1}x from {} to {} in flight; read the rows",
            if slope >= 0.0 { "grows" } else { "falls" },
            fmt_cell(slope.abs()),
            i.medians[b] / i.medians[a],
            i.rows[a].label,
            i.rows[b].label
        ));
    } else if let (Some(slope), Some((a, b))) = (i.slope_ms, i.ends()) {
        let (first, last) = (i.medians[a], i.medians[b]);
        s.push_str(&format!(
            "tpot_ms {} {} ms per extra request in flight (each {} {} of the p50 at {} in flight); p50 {:.1}x from {} to {} in flight",
            if slope >= 0.0 { "grows" } else { "falls" },
            fmt_cell(slope.abs()),
            if slope >= 0.0 { "adds" } else { "takes off" },
            pct(slope.abs() / first),
            i.rows[a].label,
            last / first,
            i.rows[a].label,
            i.rows[b].label
        ));
    } else {
        // Several load levels, but fewer than two that hold enough requests to compare.
        let min = crate::analysis::MIN_BUCKET;
        let held: Vec<&crate::analysis::BucketRow> =
            i.rows.iter().filter(|r| r.count >= min).collect();
        s.push_str(&match held.as_slice() {
            [one] => format!(
                "only the bucket of {} in flight holds {min} requests or more (tpot_ms p50 {}): no \
                 trend to read",
                one.label,
                cell(one.p50)
            ),
            [] => format!("no bucket holds {min} requests or more: no trend to read"),
            _ => String::new(),
        });
    }
    let mut notes = vec![];
    if i.unplaced > 0 {
        notes.push(format!("{} without start and end times", i.unplaced));
    }
    if i.late > 0 {
        notes.push(format!("{} placed late", i.late));
    }
    if i.forced > 0 {
        notes.push(format!("{} events swept early", i.forced));
    }
    if !notes.is_empty() {
        s.push_str(&format!(" ({})", notes.join(", ")));
    }
    s
}

/// Writes the histograms of a group (`--hist`), one per metric with values.
///
/// # Errors
/// The writer's.
pub(crate) fn write_hists(
    out: &mut impl Write,
    r: &GroupReport,
    means: &[Option<f64>],
    indent: usize,
) -> io::Result<()> {
    for ((i, metric), h) in Metric::ALL.into_iter().enumerate().zip(&r.hist) {
        let Some(h) = h else { continue };
        if h.bins.is_empty() && h.nonpositive == 0.0 {
            continue;
        }
        let mut marks = vec![];
        if let Some(f) = r.multimodal.iter().find(|f| f.metric == metric) {
            for (k, m) in f.modality.modes.iter().enumerate() {
                marks.push((m.center, format!("mode {} ({})", k + 1, pct(m.share))));
            }
        }
        if let Some(Some(m)) = means.get(i) {
            marks.push((*m, "mean".to_owned()));
        }
        hist::write(out, metric.json_name(), h, indent, &marks)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// JSON

fn qmap(qs: &[(f64, f64)]) -> Json {
    Json::Object(
        qs.iter()
            .map(|&(q, v)| (quantile_name(q), json!(round3(v))))
            .collect(),
    )
}

fn rows_json(rows: &[BucketRow], key: &str) -> Json {
    rows.iter()
        .map(|r| {
            let mut o = json!({
                key: r.label,
                "min": r.range.0,
                "max": r.range.1,
                "count": r.count,
                "exact": r.exact,
                "quantiles": qmap(&r.quantiles),
            });
            if let Some(m) = r.mean_key {
                o["mean_in_flight"] = json!(round3(m));
            }
            o
        })
        .collect()
}

fn key_json(dims: &[String], values: &[Option<String>]) -> Json {
    Json::Object(
        dims.iter()
            .zip(values)
            .map(|(d, v)| (d.clone(), v.clone().map_or(Json::Null, Json::String)))
            .collect(),
    )
}

fn split_json(s: &crate::analysis::Split) -> Json {
    json!({
        "by": s.dims,
        "purity": round3(s.purity),
        "explains": s.explains,
        "groups": s.groups.iter().map(|(v, n, mode, share)| json!({
            "key": key_json(&s.dims, v),
            "count": count_json(*n),
            "mode": mode + 1,
            "share_in_mode": round3(*share),
        })).collect::<Vec<_>>(),
    })
}

fn multimodal_json(f: &MultimodalFinding) -> Json {
    let m = &f.modality;
    let mut j = json!({
        "kind": "multimodal",
        "metric": f.metric.json_name(),
        "method": "log-normal mixture (BIC, Ashman's D, peaks)",
        "modes": m.modes.iter().zip(&f.share_near_modes).map(|(x, near)| json!({
            "center": round3(x.center),
            "share": round3(x.share),
            "sigma_log": round3(x.sigma_log),
            "share_within_25pct": round3(*near),
        })).collect::<Vec<_>>(),
        "antimodes": m.antimodes.iter().map(|&a| round3(a)).collect::<Vec<_>>(),
        "ashman_d": m.ashman_d.iter().map(|&d| round3(d)).collect::<Vec<_>>(),
        "delta_bic": round3(m.delta_bic),
        "n": count_json(m.n),
        "mean": round3(f.mean),
        "mean_between_modes": f.mean_between,
        "share_within_25pct_of_mean": round3(f.share_near_mean),
        "explained_by": f.best_split().filter(|s| s.explains).map(|s| json!(s.dims)),
        "splits": f.splits.iter().map(split_json).collect::<Vec<_>>(),
        "text": multimodal_text(f),
    });
    if let Some(s) = &f.inflight_split {
        j["inflight_split"] = split_json(s);
    }
    j
}

fn region_json(r: &Region) -> Json {
    json!({
        "at": r.at,
        "count": r.count,
        "ttft_ms": round3(r.ttft_ms),
        "queue_ms": round3(r.queue_ms),
        "prefill_ms": round3(r.prefill_ms),
        "input_tokens": r.input_tokens.map(round3),
        "queue_share": round3(r.queue_share),
    })
}

/// The group's `findings` (structured, each with a `kind` and its `text`) and `analysis`
/// (the tables behind them) members.
pub(crate) fn group_json(r: &GroupReport) -> (Json, Json) {
    let mut findings: Vec<Json> = r.multimodal.iter().map(multimodal_json).collect();
    let mut analysis = Map::new();
    if let Some(d) = &r.decomposition {
        let o = json!({
            "count": d.count,
            "regions": d.regions.iter().map(region_json).collect::<Vec<_>>(),
            "growth_share_queue": round3(d.growth_shares.0),
            "growth_share_prefill": round3(d.growth_shares.1),
            "reading": d.reading,
        });
        findings.push(json!({
            "kind": "ttft_decomposition",
            "reading": d.reading,
            "queue_share_p50": round3(d.regions[0].queue_share),
            "queue_share_p99": round3(d.regions[1].queue_share),
            "text": reading_text(d),
        }));
        analysis.insert("ttft_decomposition".into(), o);
    }
    if !r.ttft_by_input.is_empty() {
        analysis.insert(
            "ttft_by_input_tokens".into(),
            rows_json(&r.ttft_by_input, "input_tokens"),
        );
    }
    if !r.ttft_by_cache.is_empty() {
        analysis.insert(
            "ttft_p50_by_cache".into(),
            r.ttft_by_cache
                .iter()
                .map(|(c, n, p)| json!({"cache": c, "count": n, "p50": round3(*p)}))
                .collect(),
        );
    }
    if let Some(i) = &r.inflight {
        // No trend is read from counts a log out of time order made (as the finding says).
        let slope = i.slope_ms.filter(|_| !unreliable(i));
        analysis.insert(
            "tpot_by_in_flight".into(),
            json!({
                "rule": "time-weighted mean of requests open during the decode, itself included, rounded (halves up); buckets 1, 2, 3-4, 5-8, ...",
                "buckets": rows_json(&i.rows, "in_flight"),
                "slope_ms_per_request": slope.map(round3),
                "slope_share_per_request": slope.zip(i.ends()).map(|(s, (a, _))| round3(s / i.medians[a])),
                "unplaced": i.unplaced,
                "late": i.late,
                "forced": i.forced,
            }),
        );
        if i.rows.len() >= 2 {
            let reliable = !unreliable(i);
            // The ends the slope was fitted between, else the table's.
            let ends = i.ends().unwrap_or((0, i.rows.len() - 1));
            findings.push(json!({
                "kind": "tpot_under_load",
                "reliable": reliable,
                "slope_ms_per_request": i.slope_ms.filter(|_| reliable).map(round3),
                "p50_lowest": round3(i.medians[ends.0]),
                "p50_highest": round3(i.medians[ends.1]),
                "text": inflight_text(i),
            }));
        }
    }
    if !r.weighted.is_empty() {
        let mut w = Map::new();
        for f in &r.weighted {
            w.insert(
                f.metric.json_name().to_owned(),
                json!({
                    "weight": f.weight,
                    "request_weighted": qmap(&f.quantiles.iter().map(|q| (q.0, q.1)).collect::<Vec<_>>()),
                    "token_weighted": qmap(&f.quantiles.iter().map(|q| (q.0, q.2)).collect::<Vec<_>>()),
                    "differs": f.differs,
                }),
            );
            if f.differs {
                findings.push(json!({
                    "kind": "token_weighting",
                    "metric": f.metric.json_name(),
                    "weight": f.weight,
                }));
            }
        }
        analysis.insert("token_weighted".into(), Json::Object(w));
    }
    (Json::Array(findings), Json::Object(analysis))
}

/// A histogram as JSON: bins per decade, the bins, and the count of values `<= 0`.
pub(crate) fn hist_json(h: &Histogram) -> Json {
    json!({
        "per_decade": h.per_decade,
        "nonpositive": count_json(h.nonpositive),
        "bins": h.bins.iter().map(|b| json!({
            "lo": round3(b.lo), "hi": round3(b.hi), "count": count_json(b.count)
        })).collect::<Vec<_>>(),
    })
}

/// The top-level `headline` member.
pub(crate) fn headline_json(h: &Headline) -> Json {
    let mut o = json!({"for": h.consumer.as_str()});
    if let Some(c) = &h.chat {
        o["chat"] = json!({
            "ttft_ms": {"count": c.ttft_count, "quantiles": qmap(&c.ttft)},
            "reading_speed_tokens_per_s": c.reading_speed,
            "tpot_threshold_ms": round3(c.tpot_threshold_ms),
            "tpot_count": c.tpot_count,
            "slower_than_reading_share": round3(c.slower_than_reading),
            "ttft_from_scheduled": c.ttft_from_scheduled,
        });
    }
    if let Some(a) = &h.agent {
        o["agent"] = json!({
            "e2e_ms": {"count": a.e2e_count, "quantiles": qmap(&a.e2e)},
            "decode_count": a.decode_count,
            "decode_share_total": a.decode_share_total.map(round3),
            "decode_share_median": a.decode_share_median.map(round3),
        });
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::BucketRow;

    fn row(label: &str, count: u64) -> BucketRow {
        BucketRow {
            label: label.into(),
            range: (1, None),
            count,
            mean_key: None,
            quantiles: vec![],
            p50: None,
            exact: true,
        }
    }

    fn inflight(slope: f64) -> Inflight {
        Inflight {
            rows: vec![row("1", 50), row("2", 50)],
            medians: vec![20.0, 20.01],
            slope_ms: Some(slope),
            unplaced: 0,
            late: 0,
            forced: 0,
        }
    }

    #[test]
    fn a_slope_that_prints_as_zero_is_flat_not_falling() {
        assert_eq!(
            inflight_text(&inflight(-0.0004)),
            "tpot_ms is flat with requests in flight (under 0.001 ms per extra request); p50 1.0x from 1 to 2 in flight"
        );
        let mut falling = inflight(-0.002);
        falling.medians.reverse();
        assert!(inflight_text(&falling).starts_with("tpot_ms falls 0.002 ms"));
        assert!(inflight_text(&inflight(0.01)).starts_with("tpot_ms grows 0.01 ms"));
        // A fit that falls while the p50 of its ends rises reads no trend.
        assert!(inflight_text(&inflight(-0.002)).starts_with(
            "tpot_ms moves no one way with requests in flight: the fit over the buckets \
                 falls 0.002 ms per extra request, while the p50 is 1.0x from 1 to 2 in flight"
        ));
    }
}
