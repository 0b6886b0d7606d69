//! tokentime: per-request TTFT, TPOT, E2E latency, queue time, prefill and decode from the
//! JSON-lines logs of LLM inference servers and gateways.
//!
//! One pass, one direction: [`input`] (files, stdin, gzip, zstd) -> [`lines`] (framing) ->
//! [`record`] (borrowed parse of the needed fields) -> [`format`] (attribute to a format, map
//! to a [`metrics::Timeline`]) -> [`metrics`] (pure formulas) -> a sink: [`enrich`] (splice
//! into the original bytes) or [`summary`] (digests per group). [`worker`] holds one thread's
//! share of that work; [`parallel`] spreads a file over several; [`run`] wires them.

pub mod cli;
pub mod config;
pub mod digest;
pub mod enrich;
pub mod error;
pub mod format;
pub mod input;
pub mod lines;
pub mod metrics;
pub mod parallel;
pub mod pipeline;
pub mod record;
pub mod summary;
pub mod units;
pub mod worker;

use config::{Command, Config, SummaryOutput};
use error::{Error, ExitCode};
use lines::{Line, LineReader};
use std::cell::RefCell;
use std::io::{self, BufWriter, Write};
use worker::Worker;

/// Reports bad lines on stderr: the first `max` as `FILE:LINE: reason`, then a count.
struct Diagnostics {
    max: usize,
    shown: usize,
    hidden: u64,
}

impl Diagnostics {
    fn report(&mut self, file: &str, line: u64, reason: &str) {
        if self.shown < self.max {
            self.shown += 1;
            eprintln!("{file}:{line}: {reason}");
        } else {
            self.hidden += 1;
        }
    }

    fn finish(&self) {
        if self.hidden > 0 {
            eprintln!(
                "tokentime: {} more bad lines not shown (--max-diagnostics)",
                self.hidden
            );
        }
    }
}

/// The stdout sink: buffered on a pipe, flushed before the input may block.
struct Out<W: Write> {
    w: BufWriter<W>,
    line_buffered: bool,
}

/// Runs the configured command, reading the inputs and writing to `stdout`.
///
/// Returns the exit code: [`ExitCode::Ok`], or [`ExitCode::BadLines`] under `--strict`.
/// A closed stdout (`| head`) ends the run quietly with [`ExitCode::Ok`].
///
/// # Errors
/// [`Error::Input`] when an input cannot be opened or read, [`Error::Output`] when stdout
/// fails other than by a closed pipe.
pub fn run(config: &Config, stdout: impl Write) -> Result<ExitCode, Error> {
    match run_inner(config, stdout) {
        Err(Error::Output(e)) if e.kind() == io::ErrorKind::BrokenPipe => Ok(ExitCode::Ok),
        other => other,
    }
}

fn run_inner(config: &Config, stdout: impl Write) -> Result<ExitCode, Error> {
    let mut out = Out {
        w: BufWriter::with_capacity(256 * 1024, stdout),
        line_buffered: config.stdout_is_terminal,
    };
    if let Command::Formats = config.command {
        write_formats(&mut out.w, config).map_err(Error::Output)?;
        out.w.flush().map_err(Error::Output)?;
        return Ok(ExitCode::Ok);
    }
    let mut worker = Worker::new(config);
    let mut diags = Diagnostics {
        max: config.max_diagnostics,
        shown: 0,
        hidden: 0,
    };
    let pass_long = worker.passes_long_lines();
    for source in &config.inputs {
        let name = source.name();
        if parallel::applies(config, source) {
            let mut report = |line: u64, why: Option<&str>| match why {
                Some(why) => diags.report(&name, line, why),
                None => diags.hidden += 1,
            };
            let others =
                parallel::run_file(config, source, &mut out.w, out.line_buffered, &mut report)?;
            for other in others {
                worker.merge(other);
            }
            continue;
        }
        let reader = source.open().map_err(|e| Error::Input {
            name: name.clone(),
            source: e,
        })?;
        let mut lines = LineReader::new(reader, config.max_line_bytes);
        let mut line_no = 0u64;
        loop {
            // The two callbacks share the writer: a too-long line is passed on piece by piece,
            // never held whole.
            let w = RefCell::new(&mut out.w);
            let next = lines.next_line(&mut || w.borrow_mut().flush(), &mut |b: &[u8]| {
                if pass_long {
                    w.borrow_mut().write_all(b)
                } else {
                    Ok(())
                }
            });
            let w = w.into_inner();
            let line = match next {
                Ok(Some(l)) => {
                    line_no += 1;
                    l
                }
                Ok(None) => break,
                Err(e) => {
                    if e.kind() == io::ErrorKind::BrokenPipe {
                        return Err(Error::Output(e));
                    }
                    return Err(Error::Input { name, source: e });
                }
            };
            let bad = match line {
                Line::TooLong => Some(worker.too_long(config.max_line_bytes)),
                Line::Text {
                    prefix,
                    content,
                    ending,
                } => worker
                    .line(prefix, content, ending, w)
                    .map_err(Error::Output)?,
            };
            if let Some(why) = bad {
                diags.report(&name, line_no, &why);
            }
            if out.line_buffered {
                out.w.flush().map_err(Error::Output)?;
            }
        }
    }
    let cov = &worker.cov;
    if let (Some(s), Command::Summary(sc)) = (worker.summary.as_mut(), &config.command) {
        match sc.output {
            SummaryOutput::Json => {
                let doc = summary::to_json(cov, s, &sc.quantiles);
                serde_json::to_writer_pretty(&mut out.w, &doc)
                    .map_err(|e| Error::Output(e.into()))?;
                out.w.write_all(b"\n").map_err(Error::Output)?;
            }
            SummaryOutput::Table => {
                summary::write_table(&mut out.w, cov, s, &sc.quantiles).map_err(Error::Output)?
            }
        }
    }
    out.w.flush().map_err(Error::Output)?;
    diags.finish();
    if config.strict && (cov.invalid > 0 || cov.too_long > 0) {
        eprintln!(
            "tokentime: --strict: {} invalid and {} too-long lines",
            cov.invalid, cov.too_long
        );
        return Ok(ExitCode::BadLines);
    }
    Ok(ExitCode::Ok)
}

fn write_formats(w: &mut impl Write, config: &Config) -> io::Result<()> {
    let _ = config;
    for f in format::builtin() {
        writeln!(w, "{}: {}", f.name, f.about)?;
        writeln!(w, "  TTFT origin: {}", f.ttft_doc)?;
        writeln!(w, "  cache: {}", f.cache_doc)?;
        let markers: Vec<String> = f.markers.iter().map(cond_str).collect();
        writeln!(w, "  detected by: {}", markers.join(" and "))?;
        for r in &f.fields {
            let paths: Vec<String> = r.paths.iter().map(|p| p.join(".")).collect();
            writeln!(
                w,
                "  {:<16} {:<8} {}",
                r.field.name(),
                r.unit.name(),
                paths.join(" | ")
            )?;
        }
        writeln!(w)?;
    }
    Ok(())
}

fn cond_str(c: &format::Cond) -> String {
    match c {
        format::Cond::Present(p) => p.join("."),
        format::Cond::Equals(p, v) => format!("{} == {v}", p.join(".")),
    }
}
