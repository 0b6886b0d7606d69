//! `tokentime diff`: the comparison of two runs as a table and as JSON
//! (`tokentime.diff/v1`), and the `--fail-if` verdict lines. Computes nothing: the
//! comparison is [`crate::summary::compare`]'s.

use crate::number::{fmt_cell, round3};
use crate::summary::compare::{ALPHA, Comparison, GateResult, Row, Side};
use crate::summary::{GroupKey, group_label, quantile_name};
use serde_json::{Value as Json, json};
use std::io::{self, Write};

/// The version of the diff JSON document.
pub(crate) const SCHEMA: &str = "tokentime.diff/v1";

/// One side as the report names it: its input and how many requests it held.
#[derive(Debug, Clone)]
pub(crate) struct Run {
    /// The input's name.
    pub name: String,
    /// Whether it was a digest file.
    pub digest_file: bool,
    /// Requests read (or saved in the digest file).
    pub requests: u64,
}

/// The method, in one sentence (table footer and JSON).
pub(crate) fn method(c: &Comparison) -> String {
    if c.comparisons == 0 {
        return "nothing compared: no group has values of a metric in both runs".to_owned();
    }
    // Said only where some quantile is a t-digest estimate: every value exact has no rank error.
    let estimated = c
        .rows
        .iter()
        .any(|r| [&r.a, &r.b].iter().any(|s| s.value.is_some() && !s.exact));
    format!(
        "beyond noise: the two runs' order-statistic confidence intervals of the quantile do not overlap; \
         {}% family-wise over {} comparisons (each interval {}%){}",
        round3((1.0 - ALPHA) * 100.0),
        c.comparisons,
        pct_level(c.level),
        if estimated {
            ", t-digest estimates widened by their rank error"
        } else {
            ""
        }
    )
}

/// The interval level as a percentage with enough digits to tell it from 100.
fn pct_level(level: f64) -> String {
    let p = level * 100.0;
    let mut digits = 1;
    while digits < 8 && format!("{p:.digits$}").parse::<f64>().unwrap_or(100.0) >= 100.0 {
        digits += 1;
    }
    let s = format!("{:.*}", digits + 1, p);
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

fn signed(v: Option<f64>, unit: &str) -> String {
    match v {
        Some(x) if x >= 0.0 => format!("+{}{unit}", fmt_cell(x)),
        Some(x) => format!("-{}{unit}", fmt_cell(-x)),
        None => "-".to_owned(),
    }
}

fn cell(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), fmt_cell)
}

/// The aligned table: a block per group, a row per metric and quantile.
///
/// # Errors
/// Output that cannot be written.
/// The lines under the table about the groups not compared: those only one run has, and those
/// that hold the same requests as another group.
fn write_unpaired(out: &mut impl Write, c: &Comparison) -> io::Result<()> {
    let width =
        crate::output::compact::output_width(std::io::IsTerminal::is_terminal(&std::io::stdout()));
    let label = |k: &GroupKey| group_label(k, "all requests");
    let mut notes: Vec<String> = Vec::new();
    for (side, keys) in [("A", &c.only_in_a), ("B", &c.only_in_b)] {
        if !keys.is_empty() {
            let names: Vec<String> = keys.iter().map(label).collect();
            notes.push(format!("only in {side}: {}", names.join("; ")));
        }
    }
    if !c.same_as_all.is_empty() {
        let names: Vec<String> = c.same_as_all.iter().map(label).collect();
        notes.push(format!(
            "same requests as all requests in both runs (not compared again): {}",
            names.join("; ")
        ));
    }
    if !c.same_as.is_empty() {
        let names: Vec<String> = c
            .same_as
            .iter()
            .map(|(k, equal)| format!("{} (as {})", label(k), label(equal)))
            .collect();
        notes.push(format!(
            "same requests as a group of fewer keys in both runs (not compared again): {}",
            names.join("; ")
        ));
    }
    for text in notes {
        writeln!(out, "\n{}", crate::output::compact::wrap(&text, width, 0))?;
    }
    Ok(())
}

pub(crate) fn write_table(out: &mut impl Write, runs: &[Run; 2], c: &Comparison) -> io::Result<()> {
    for (label, r) in ["A", "B"].iter().zip(runs) {
        writeln!(
            out,
            "{label}: {}{} ({})",
            r.name,
            if r.digest_file { " (digest file)" } else { "" },
            crate::output::summary::plural(r.requests, "request")
        )?;
    }
    let header = ["metric", "q", "A", "B", "change", "change %", "verdict"];
    let mut group: Option<&[(String, Option<String>)]> = None;
    let mut block: Vec<[String; 7]> = vec![];
    let flush = |out: &mut dyn Write, block: &mut Vec<[String; 7]>| -> io::Result<()> {
        if block.is_empty() {
            return Ok(());
        }
        let mut widths = header.map(str::len);
        for r in block.iter() {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.len());
            }
        }
        let line = |out: &mut dyn Write, cells: [&str; 7]| -> io::Result<()> {
            let mut s = format!(
                "{:<w0$}  {:<w1$}",
                cells[0],
                cells[1],
                w0 = widths[0],
                w1 = widths[1]
            );
            for i in 2..6 {
                s.push_str(&format!("  {:>w$}", cells[i], w = widths[i]));
            }
            s.push_str("  ");
            s.push_str(cells[6]);
            writeln!(out, "{}", s.trim_end())
        };
        line(out, header)?;
        for r in block.iter() {
            line(
                out,
                [&r[0], &r[1], &r[2], &r[3], &r[4], &r[5], &r[6]].map(String::as_str),
            )?;
        }
        block.clear();
        Ok(())
    };
    for r in &c.rows {
        if group != Some(&r.group[..]) {
            flush(out, &mut block)?;
            group = Some(&r.group);
            writeln!(out, "\n{}:", group_label(&r.group, "all requests"))?;
        }
        block.push(row_cells(r));
    }
    flush(out, &mut block)?;
    write_unpaired(out, c)?;
    let width =
        crate::output::compact::output_width(std::io::IsTerminal::is_terminal(&std::io::stdout()));
    let estimates = c.rows.iter().any(|r| estimated(&r.a) || estimated(&r.b));
    let marks = if estimates {
        "~ marks t-digest estimates; "
    } else {
        ""
    };
    writeln!(
        out,
        "\n{}",
        crate::output::compact::wrap(&format!("{marks}{}", method(c)), width, 0)
    )
}

/// A side's value is a t-digest estimate.
fn estimated(s: &Side) -> bool {
    s.value.is_some() && !s.exact
}

/// A side's value, `~` after it when it is a t-digest estimate (as in the summary's tables).
fn side_cell(s: &Side) -> String {
    let mut c = cell(s.value);
    if estimated(s) {
        c.push('~');
    }
    c
}

fn row_cells(r: &Row) -> [String; 7] {
    let verdict = match r.verdict.as_str() {
        // Short enough for an 80-column row of five-digit values.
        "not enough samples" => "n/a (too few)".to_owned(),
        "no values" => "n/a (no values)".to_owned(),
        // Overlapping intervals: the change may be large, but the samples cannot tell it from
        // noise (not "the same").
        "same" => "within noise".to_owned(),
        v => v.to_owned(),
    };
    [
        r.metric.json_name().to_owned(),
        quantile_name(r.quantile),
        side_cell(&r.a),
        side_cell(&r.b),
        signed(r.change_ms, ""),
        signed(r.change_pct, "%"),
        verdict,
    ]
}

fn num(v: Option<f64>) -> Json {
    v.map_or(Json::Null, |x| json!(round3(x)))
}

fn side_json(s: &Side) -> Json {
    json!({
        "value": num(s.value),
        "count": s.count,
        "exact": s.exact,
        "low": num(s.low),
        "high": num(s.high),
    })
}

fn key_json(k: &[(String, Option<String>)]) -> Json {
    Json::Object(k.iter().map(|(n, v)| (n.clone(), json!(v))).collect())
}

/// The JSON document (`tokentime.diff/v1`, docs/diff.md).
pub(crate) fn to_json(runs: &[Run; 2], c: &Comparison, gates: &[GateResult]) -> Json {
    let run =
        |r: &Run| json!({"input": r.name, "digest_file": r.digest_file, "requests": r.requests});
    json!({
        "schema": SCHEMA,
        "a": run(&runs[0]),
        "b": run(&runs[1]),
        "method": {
            "test": "order-statistic confidence intervals, non-overlap",
            "family_alpha": ALPHA,
            "comparisons": c.comparisons,
            "interval_level": c.level,
            "text": method(c),
        },
        "rows": c.rows.iter().map(|r| json!({
            "group": key_json(&r.group),
            "metric": r.metric.json_name(),
            "quantile": quantile_name(r.quantile),
            "a": side_json(&r.a),
            "b": side_json(&r.b),
            "change_ms": num(r.change_ms),
            "change_pct": num(r.change_pct),
            "verdict": r.verdict.as_str(),
        })).collect::<Vec<_>>(),
        "only_in_a": c.only_in_a.iter().map(|k| key_json(k)).collect::<Vec<_>>(),
        "only_in_b": c.only_in_b.iter().map(|k| key_json(k)).collect::<Vec<_>>(),
        "same_as_all": c.same_as_all.iter().map(|k| key_json(k)).collect::<Vec<_>>(),
        "same_as": c.same_as.iter().map(|(k, equal)| json!({
            "group": key_json(k),
            "as": key_json(equal),
        })).collect::<Vec<_>>(),
        "fail_if": gates.iter().map(|g| json!({
            "condition": g.gate.text,
            "metric": g.gate.metric.json_name(),
            "quantile": quantile_name(g.gate.quantile),
            "group": key_json(&g.gate.group),
            "threshold_pct": match g.gate.amount {
                crate::summary::compare::Amount::Pct(v) => json!(v),
                crate::summary::compare::Amount::Ms(_) => Json::Null,
            },
            "threshold_ms": match g.gate.amount {
                crate::summary::compare::Amount::Ms(v) => json!(v),
                crate::summary::compare::Amount::Pct(_) => Json::Null,
            },
            "judged_on": g.row.as_ref().map(|r| key_json(&r.group)),
            "a": num(g.row.as_ref().and_then(|r| r.a.value)),
            "b": num(g.row.as_ref().and_then(|r| r.b.value)),
            "values_needed": g.needed,
            "comparisons": g.comparisons,
            "interval_level": crate::summary::compare::gates_level(g.comparisons),
            "missing": g.missing,
            "holds": g.holds,
            "judged": g.judged,
            "verdict": g.row.as_ref().map(|r| r.verdict.as_str()),
            "change_ms": num(g.row.as_ref().and_then(|r| r.change_ms)),
            "change_pct": num(g.row.as_ref().and_then(|r| r.change_pct)),
        })).collect::<Vec<_>>(),
    })
}

/// One line for stderr per gate: `--fail-if ttft_ms.p99>+10% HOLDS: +35.2% (+120.5 ms), worse
/// beyond noise`.
pub(crate) fn gate_line(g: &GateResult) -> String {
    let text = &g.gate.text;
    match &g.row {
        None => format!(
            "--fail-if {text}: cannot be judged: {}",
            g.missing
                .as_deref()
                .unwrap_or("no such group, metric and quantile in both runs")
        ),
        Some(r) => {
            let what = format!(
                "{} ({} ms), {}",
                signed(r.change_pct, "%"),
                signed(r.change_ms, ""),
                match r.verdict.as_str() {
                    // Beyond noise, but not the change the gate fails on: the other way,
                    // or short of its threshold.
                    v @ ("worse" | "better") if !g.holds => {
                        let other_way = (v == "worse") != g.gate.up;
                        format!(
                            "{v} beyond noise, {}",
                            if other_way {
                                "the other way"
                            } else {
                                "short of the threshold"
                            }
                        )
                    }
                    v @ ("worse" | "better") => format!("{v} beyond noise"),
                    // The same value on both sides: nothing for an interval to tell.
                    "same" if r.change_ms == Some(0.0) => "no change".to_owned(),
                    // Past the threshold, maybe, but not a change the samples can tell.
                    "same" if g.comparisons > 1 => format!(
                        "within noise: these samples cannot tell it from no change at the level of \
                         the gates' {} comparisons (more requests, or fewer gates, narrow the \
                         intervals)",
                        g.comparisons
                    ),
                    "same" => "within noise: these samples cannot tell it from no change at the \
                               level of one gate (more requests narrow the intervals)"
                        .to_owned(),
                    // Too few values for an interval, but a change that no interval could
                    // make pass the threshold: none, the other way, or short of it.
                    v if g.judged => {
                        let change = r.change_ms.unwrap_or(0.0);
                        let what = if change == 0.0 {
                            "no change"
                        } else if (change < 0.0) == g.gate.up {
                            "a change the other way"
                        } else {
                            "short of the threshold"
                        };
                        format!("{what} ({v} for an interval, none needed)")
                    }
                    v => v.to_owned(),
                }
            );
            let state = if g.holds {
                "HOLDS"
            } else if !g.judged {
                "not judged"
            } else {
                "does not hold"
            };
            let needed = g.needed.map_or_else(String::new, |n| {
                format!(
                    " (its {} needs {n} {} a side at this level, A has {}, B {}; --fail-unjudged fails a gate not judged)",
                    quantile_name(g.gate.quantile),
                    if g.gate.metric == crate::metrics::Metric::Itl {
                        "requests with token gaps"
                    } else {
                        "values"
                    },
                    r.a.draws,
                    r.b.draws
                )
            });
            format!("--fail-if {text} {state}: {what}{needed}")
        }
    }
}
