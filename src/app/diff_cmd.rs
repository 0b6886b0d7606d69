//! `tokentime diff A B`: two runs, each a log (read into a summary by the one driver, as
//! `summary` reads it) or a digest file (`summary --save-digest`, read as `merge` reads it),
//! compared group by group ([`crate::summary::compare`]), rendered
//! ([`crate::output::diff`]), and the `--fail-if` gates judged.

use crate::app::error::{Error, ExitCode};
use crate::classify::Coverage;
use crate::cli::config::{Config, DiffConfig, DiffOutput};
use crate::input::source::Source;
use crate::output::diff::{Run, gate_line, to_json, write_table};
use crate::summary::Summary;
use crate::summary::compare::{compare, judge};
use crate::summary::digest_file;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;

/// One side, read.
pub(crate) struct Side {
    pub(crate) run: Run,
    pub(crate) cov: Coverage,
    pub(crate) summary: Summary,
}

/// The comparison of `baseline` (side A, a log or a digest file) with `b`, as `tokentime diff
/// A B -o json` writes it (`tokentime report --baseline`). A side not read to its end is said
/// on stderr.
///
/// # Errors
/// As [`run_diff`]'s reading of A; sides whose groups do not line up.
pub(crate) fn baseline_json(
    config: &Config,
    dc: &DiffConfig,
    baseline: &Source,
    mut b: Side,
) -> Result<serde_json::Value, Error> {
    let mut a = read_side(config, dc, baseline)?;
    check_line_up(&a, &b)?;
    if let Some(note) = origin_note(&a, &b, ["the baseline", "the report"]) {
        crate::diag!("tokentime: {note}");
    }
    for (label, s) in [("baseline", &a), ("report", &b)] {
        if s.cov.partial() {
            crate::diag!(
                "tokentime: {label} ({}) was not read to its end: the comparison covers only what was read",
                s.run.name
            );
        }
    }
    let runs = [a.run.clone(), b.run.clone()];
    let c = compare(&mut a.summary, &mut b.summary, &dc.summary.report.quantiles);
    let gates = judge(&dc.fail_if, &c, &mut a.summary, &mut b.summary);
    Ok(to_json(&runs, &c, &gates))
}

/// Runs `tokentime diff`.
///
/// # Errors
/// An input that cannot be read, a digest file that is not one or does not line up with the
/// other side ([`Error::Config`]), output that cannot be written.
pub(crate) fn run_diff(
    config: &Config,
    dc: &DiffConfig,
    out: &mut impl Write,
) -> Result<ExitCode, Error> {
    let mut sides = config
        .inputs
        .iter()
        .map(|s| read_side(config, dc, s))
        .collect::<Result<Vec<_>, _>>()?;
    let (Some(mut b), Some(mut a)) = (sides.pop(), sides.pop()) else {
        return Err(Error::Config("diff takes two inputs, A and B".into()));
    };
    check_line_up(&a, &b)?;
    // What `--map` read wrong, said once for the two sides read as logs.
    let mut said: Vec<String> = origin_note(&a, &b, ["A", "B"]).into_iter().collect();
    for s in [&mut a, &mut b].into_iter().filter(|s| !s.run.digest_file) {
        for msg in crate::app::unmapped::after_run_warnings(&config.formats, &mut s.summary, &s.cov)
        {
            if !said.contains(&msg) {
                said.push(msg);
            }
        }
    }
    for msg in &said {
        crate::diag!("tokentime: {msg}");
    }
    let runs = [a.run.clone(), b.run.clone()];
    let c = compare(&mut a.summary, &mut b.summary, &dc.summary.report.quantiles);
    let gates = judge(&dc.fail_if, &c, &mut a.summary, &mut b.summary);
    match dc.output {
        DiffOutput::Table => write_table(out, &runs, &c).map_err(Error::Output)?,
        DiffOutput::Json => {
            serde_json::to_writer_pretty(&mut *out, &to_json(&runs, &c, &gates))
                .map_err(|e| Error::Output(e.into()))?;
            out.write_all(b"\n").map_err(Error::Output)?;
        }
    }
    out.flush().map_err(Error::Output)?;
    for g in &gates {
        crate::diag!("tokentime: {}", gate_line(g));
    }
    let mut partial = false;
    for (label, s) in [("A", &a), ("B", &b)] {
        if s.cov.partial() {
            partial = true;
            crate::diag!(
                "tokentime: {label} ({}) was not read to its end{}: the comparison covers only what was read",
                s.run.name,
                if s.run.digest_file {
                    " by the run that saved it"
                } else {
                    ""
                }
            );
        }
    }
    // A gate with no row can never be judged (its group, or its metric, is in neither run, or
    // in one only): a usage error, so a CI gate with a typo does not pass for ever.
    if partial || gates.iter().any(|g| g.row.is_none()) {
        return Ok(ExitCode::Usage);
    }
    // `--fail-unjudged`: a gate its samples cannot judge must not pass for one that held.
    let unjudged = gates
        .iter()
        .filter(|g| g.row.is_some() && !g.judged)
        .count();
    if dc.fail_unjudged && unjudged > 0 && !gates.iter().any(|g| g.holds) {
        crate::diag!(
            "tokentime: {unjudged} --fail-if gate(s) not judged: failing (--fail-unjudged)"
        );
        return Ok(ExitCode::Usage);
    }
    if gates.iter().any(|g| g.holds) {
        return Ok(ExitCode::SloViolated);
    }
    // `--strict`: a side read here (not a digest file, whose run had its own) with invalid or
    // too-long lines, as `summary --strict` says it.
    let mut bad = false;
    for (label, s) in [("A", &a), ("B", &b)] {
        if config.strict && !s.run.digest_file && (s.cov.invalid > 0 || s.cov.too_long > 0) {
            bad = true;
            crate::diag!(
                "tokentime: --strict: {label} ({}): {} invalid and {} too-long lines",
                s.run.name,
                s.cov.invalid,
                s.cov.too_long
            );
        }
    }
    Ok(if bad {
        ExitCode::BadLines
    } else {
        ExitCode::Ok
    })
}

/// Reads one side: a digest file by its schema, any other input as a log.
fn read_side(config: &Config, dc: &DiffConfig, source: &Source) -> Result<Side, Error> {
    let name = source.name();
    if let Source::Path(p) = source
        && is_digest_file(p)
    {
        let l = digest_file::load(p).map_err(Error::Config)?;
        return Ok(Side {
            run: Run {
                name: crate::input::shown_path(p),
                digest_file: true,
                requests: l.coverage.requests,
            },
            cov: l.coverage,
            summary: l.summary,
        });
    }
    let one = Config {
        inputs: vec![source.clone()],
        ..config.clone()
    };
    // The `inferred` format of this side's log, learned from it alone.
    let one = if one.infer == crate::cli::config::Infer::Off {
        one
    } else {
        crate::app::infer::prepare(&one, &format!("{name}: "))
    };
    // A digest file on standard input (`cat a.json | tokentime diff - b.json`), as `merge`
    // reads one: its first line is the whole document.
    if *source == Source::Stdin {
        let first = if config.stdin_is_file {
            is_digest_file(Path::new("/dev/stdin"))
                .then(|| std::fs::read("/dev/stdin").ok())
                .flatten()
        } else {
            crate::input::source::stdin_first_line(config.max_line_bytes)
        };
        if let Some(doc) = first
            .and_then(|l| serde_json::from_slice::<serde_json::Value>(&l).ok())
            .filter(|d| digest_file::is_schema(&d["schema"]))
        {
            let l =
                digest_file::from_json(&doc).map_err(|e| Error::Config(format!("{name}: {e}")))?;
            return Ok(Side {
                run: Run {
                    name: "<stdin>".to_owned(),
                    digest_file: true,
                    requests: l.coverage.requests,
                },
                cov: l.coverage,
                summary: l.summary,
            });
        }
    }
    let (cov, summary) = crate::app::summary_cmd::collect(&one, &dc.summary)?;
    if cov.lines == 0 && cov.read_errors == 0 {
        crate::diag!("tokentime: {name}: empty (no line)");
    } else if cov.requests == 0 {
        crate::diag!("tokentime: {name}: {}", summary.no_requests(&cov));
    }
    for msg in crate::app::unmapped::own_documents(&cov) {
        crate::diag!("tokentime: {name}: {msg}");
    }
    Ok(Side {
        run: Run {
            name: crate::input::shown_name(&name).into_owned(),
            digest_file: false,
            requests: cov.requests,
        },
        cov,
        summary,
    })
}

/// True when `path` holds a digest file: its first JSON value is an object whose `schema` is
/// `tokentime.digest/v1` or `v2` (the check `merge` makes). A compressed file, a JSON array or text
/// is a log; so is anything but a regular file, and a file that cannot be opened (the
/// reading reports it).
fn is_digest_file(path: &Path) -> bool {
    // A pipe (`<(zcat day.gz)`) is not looked into: what is read from it would be lost.
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let mut r = BufReader::new(f);
    let starts_with_object = loop {
        let Ok(buf) = r.fill_buf() else { break false };
        if buf.is_empty() {
            break false;
        }
        match buf.iter().position(|b| !b.is_ascii_whitespace()) {
            Some(i) => {
                let brace = buf[i] == b'{';
                r.consume(i);
                break brace;
            }
            None => {
                let n = buf.len();
                r.consume(n);
            }
        }
    };
    // One cut short (no `schema`, which comes late) is one too, for its reading to say so.
    let head = r.fill_buf().map(<[u8]>::to_vec).unwrap_or_default();
    starts_with_object
        && (digest_file::starts_like_digest(&head)
            || serde_json::Deserializer::from_reader(r)
                .into_iter::<serde_json::Value>()
                .next()
                .and_then(Result::ok)
                .is_some_and(|v| digest_file::is_schema(&v["schema"])))
}

/// When the TTFTs of sides `a` and `b` (called `names`: `A` and `B`) run from different
/// instants (a server's `scheduled` against a gateway's start), a line saying so: their TTFT
/// rows compare different waits.
fn origin_note(a: &Side, b: &Side, names: [&str; 2]) -> Option<String> {
    let origins = |s: &Side| {
        s.summary
            .ttft_origins()
            .iter()
            .filter(|&(_, n)| n > 0)
            .collect::<Vec<_>>()
    };
    let (x, y) = (origins(a), origins(b));
    let said = |v: &[(&str, u64)]| {
        v.iter()
            .map(|(o, n)| format!("`{o}` ({n})"))
            .collect::<Vec<_>>()
            .join(" and ")
    };
    let differ = !x.iter().map(|p| p.0).eq(y.iter().map(|p| p.0));
    (!x.is_empty() && !y.is_empty() && differ).then(|| {
        format!(
            "{}'s TTFTs run from {}, {}'s from {}: their TTFT rows compare different waits (one from `scheduled` leaves the queue out, one from `gateway` adds the gateway and the network)",
            names[0],
            said(&x),
            names[1],
            said(&y)
        )
    })
}

/// The two sides' groups must mean the same: the same `--by` keys and cache-hit ratio.
fn check_line_up(a: &Side, b: &Side) -> Result<(), Error> {
    if a.summary.by() != b.summary.by() {
        return Err(Error::Config(format!(
            "A ({}) is grouped by [{}], B ({}) by [{}]: their groups do not line up (a digest file keeps the --by keys it was saved with)",
            a.run.name,
            a.summary.by().join(", "),
            b.run.name,
            b.summary.by().join(", ")
        )));
    }
    if let (Some(x), Some(y)) = (a.summary.hit_ratio(), b.summary.hit_ratio())
        && x != y
    {
        return Err(Error::Config(format!(
            "A ({}) has --cache-hit-ratio {x}, B ({}) {y}: their hit and partial groups differ",
            a.run.name, b.run.name
        )));
    }
    Ok(())
}
