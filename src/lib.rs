//! tokentime: per-request TTFT, TPOT, E2E latency, queue time, prefill and decode from the
//! JSON-lines logs of LLM inference servers and gateways.
//!
//! One pass, one direction: [`input`] (files, stdin, gzip, zstd) -> [`lines`] (framing) ->
//! [`record`] (borrowed parse of the needed fields) -> [`format`] (attribute to a format, map
//! to a [`metrics::Timeline`]) -> [`metrics`] (pure formulas) -> a sink: [`enrich`] (splice
//! into the original bytes) or [`summary`] (digests per group). [`run`] wires them.

pub mod cli;
pub mod config;
pub mod digest;
pub mod enrich;
pub mod error;
pub mod format;
pub mod input;
pub mod lines;
pub mod metrics;
pub mod pipeline;
pub mod record;
pub mod summary;
pub mod units;

use config::{Command, Config, SummaryOutput};
use error::{Error, ExitCode};
use lines::{Line, LineReader};
use pipeline::{Coverage, Kind, Processor};
use std::io::{self, BufWriter, Write};

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
    let (key, by_paths) = match &config.command {
        Command::Enrich(e) => (e.key.as_str(), vec![]),
        Command::Summary(s) => ("tokentime", s.by.iter().map(|(_, p)| p.clone()).collect()),
        Command::Formats => unreachable!("handled above"),
    };
    let mut proc = Processor::new(
        config.formats.clone(),
        &config.root,
        key,
        &by_paths,
        config.cache_hit_ratio,
    );
    let mut cov = Coverage::default();
    let mut diags = Diagnostics {
        max: config.max_diagnostics,
        shown: 0,
        hidden: 0,
    };
    let mut summary = match &config.command {
        Command::Summary(s) => Some(summary::Summary::new(
            s.by.iter().map(|(n, _)| n.clone()).collect(),
            s.max_groups,
        )),
        _ => None,
    };
    let enrich = match &config.command {
        Command::Enrich(e) => Some(e),
        _ => None,
    };
    let mut object = Vec::with_capacity(512);
    let mut by_values = summary::ByValues::default();
    for source in &config.inputs {
        let name = source.name();
        let reader = source.open().map_err(|e| Error::Input {
            name: name.clone(),
            source: e,
        })?;
        let mut lines = LineReader::new(reader, config.max_line_bytes);
        let mut line_no = 0u64;
        loop {
            let w = &mut out.w;
            let pass_long = enrich.is_some_and(|e| !e.only_requests);
            let mut before_read = || w.flush();
            let mut long_bytes: Vec<u8> = Vec::new();
            let mut overflow = |b: &[u8]| -> io::Result<()> {
                if pass_long {
                    long_bytes.extend_from_slice(b);
                }
                Ok(())
            };
            let next = lines.next_line(&mut before_read, &mut overflow);
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
            let (prefix, content, ending) = match line {
                Line::TooLong => {
                    cov.lines += 1;
                    cov.too_long += 1;
                    diags.report(
                        &name,
                        line_no,
                        &format!(
                            "line longer than --max-line-bytes {}",
                            config.max_line_bytes
                        ),
                    );
                    if pass_long {
                        out.w.write_all(&long_bytes).map_err(Error::Output)?;
                    }
                    continue;
                }
                Line::Text {
                    prefix,
                    content,
                    ending,
                } => (prefix, content, ending),
            };
            let kind = proc.process(content);
            proc.count(&kind, &mut cov);
            if let Kind::Invalid(msg) = &kind {
                diags.report(&name, line_no, &format!("invalid JSON: {msg}"));
            }
            if let Some(s) = summary.as_mut()
                && let Kind::Requests = kind
            {
                proc.by_values(content, &mut by_values);
                for r in proc.requests() {
                    s.add(&r.metrics, &by_values);
                }
            }
            if let Some(e) = enrich {
                let w = &mut out.w;
                let written = match &kind {
                    Kind::Requests => {
                        object.clear();
                        enrich::render_all(&mut object, &e.key, proc.requests(), |f| {
                            &proc.format_spec(f).name
                        })
                        .map_err(Error::Output)?;
                        w.write_all(prefix).map_err(Error::Output)?;
                        enrich::splice(w, content, &object).map_err(Error::Output)?
                    }
                    _ if e.only_requests => continue,
                    _ => false,
                };
                if !written {
                    w.write_all(prefix).map_err(Error::Output)?;
                    w.write_all(content).map_err(Error::Output)?;
                }
                w.write_all(ending).map_err(Error::Output)?;
                if out.line_buffered {
                    w.flush().map_err(Error::Output)?;
                }
            }
        }
    }
    if let (Some(mut s), Command::Summary(sc)) = (summary, &config.command) {
        match sc.output {
            SummaryOutput::Json => {
                let doc = summary::to_json(&cov, &mut s, &sc.quantiles);
                serde_json::to_writer_pretty(&mut out.w, &doc)
                    .map_err(|e| Error::Output(e.into()))?;
                out.w.write_all(b"\n").map_err(Error::Output)?;
            }
            SummaryOutput::Table => summary::write_table(&mut out.w, &cov, &mut s, &sc.quantiles)
                .map_err(Error::Output)?,
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
