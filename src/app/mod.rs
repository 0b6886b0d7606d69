//! The application: the commands on top of the reading pipeline, the threads that run them,
//! and the diagnostics a run prints on stderr.

pub(crate) mod error;
pub(crate) mod parallel;
pub(crate) mod summarize;
pub(crate) mod worker;

use crate::cli::config::{Command, Config};
use crate::input::document;
use crate::input::lines::{Line, LineReader};
use crate::{format, summary};
use error::{Error, ExitCode};
use std::cell::RefCell;
use std::io::{self, BufWriter, Write};
use worker::{Handled, Worker};

/// Reports bad lines on stderr: the first `max` as `FILE:LINE: reason`, then a count.
pub(crate) struct Diagnostics {
    max: usize,
    shown: usize,
    hidden: u64,
}

impl Diagnostics {
    pub(crate) fn new(max: usize) -> Self {
        Diagnostics {
            max,
            shown: 0,
            hidden: 0,
        }
    }

    pub(crate) fn report(&mut self, file: &str, line: u64, reason: &str) {
        if self.shown < self.max {
            self.shown += 1;
            crate::diag!("{file}:{line}: {reason}");
        } else {
            self.hidden += 1;
        }
    }

    /// Counts a bad line past `--max-diagnostics` (not shown).
    pub(crate) fn hide(&mut self) {
        self.hidden += 1;
    }

    pub(crate) fn finish(&self) {
        if self.hidden > 0 {
            crate::diag!(
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
        line_buffered: config.line_buffered,
    };
    let e = match &config.command {
        Command::Formats(names) => {
            write_formats(&mut out.w, config, names).map_err(Error::Output)?;
            out.w.flush().map_err(Error::Output)?;
            return Ok(ExitCode::Ok);
        }
        Command::Summary(s) => return summarize::run_summary(config, s, &mut out.w),
        Command::Merge(m) => return summarize::run_merge(m, &mut out.w),
        Command::Enrich(e) => e,
    };
    let mut worker = Worker::new(config);
    let mut diags = Diagnostics::new(config.max_diagnostics);
    if let Some(rows) = &e.rows {
        rows.header(&mut out.w).map_err(Error::Output)?;
    }
    // An input that cannot be read is reported and skipped: the others are still read, and
    // the exit status says that something was missing (2).
    let mut input_failed = false;
    let mut input_error = |name: &str, e: io::Error| {
        crate::diag!(
            "tokentime: {}",
            Error::Input {
                name: name.to_owned(),
                source: e
            }
        );
        input_failed = true;
    };
    let pass_long = worker.passes_long_lines();
    for source in &config.inputs {
        let name = source.name();
        worker.set_input(&name);
        let reader = match source.open() {
            Ok(r) => r,
            Err(e) => {
                input_error(&name, e);
                continue;
            }
        };
        let mut reader = io::BufReader::with_capacity(64 * 1024, reader);
        let doc = match document::detect(&mut reader) {
            Ok(d) => d,
            Err(e) => {
                input_error(&name, e);
                continue;
            }
        };
        // A pretty-printed object document is read as lines here: they pass through unchanged
        // (counted non-JSON or invalid), and JSON lines after it (a server's log after a
        // pretty banner, a live `tail -F`) are still enriched.
        if doc == Some(document::Document::Array) {
            // Enrich keeps every byte: a document is not JSON lines, so it passes through
            // (`tokentime summary` reads its records). It holds no request line, so
            // --only-requests and the row outputs (CSV, TSV, JSONL rows) leave it out, as
            // they leave out the other lines that are not requests.
            let keep = !e.only_requests && e.rows.is_none();
            if keep {
                io::copy(&mut reader, &mut out.w).map_err(Error::Output)?;
            }
            crate::diag!(
                "tokentime: {name}: a JSON array document, {} (tokentime summary reads its records)",
                if keep {
                    "passed through unchanged"
                } else {
                    "left out"
                }
            );
            continue;
        }
        if parallel::applies(config, source) {
            let mut report = |line: u64, why: Option<&str>| match why {
                Some(why) => diags.report(&name, line, why),
                None => diags.hide(),
            };
            let proto = worker.fork();
            let done = parallel::run_file(
                config,
                Box::new(reader),
                &|| proto.fork(),
                &mut worker,
                &mut out.w,
                out.line_buffered,
                &mut report,
                None,
            )
            .map_err(Error::Output)?;
            for other in done.workers {
                worker.merge(other);
            }
            if let Some(e) = done.input_error {
                input_error(&name, e);
            }
            continue;
        }
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
                    input_error(&name, e);
                    break;
                }
            };
            let bad = match line {
                Line::TooLong => Some(worker.too_long(config.max_line_bytes)),
                Line::Text {
                    prefix,
                    content,
                    ending,
                } => match worker
                    .line(line_no, prefix, content, ending, w)
                    .map_err(Error::Output)?
                {
                    Handled::Done(bad) => bad,
                    // Only a worker made with `Worker::fork` defers.
                    Handled::Deferred => None,
                },
            };
            if let Some(why) = bad {
                diags.report(&name, line_no, &why);
            }
            if out.line_buffered {
                out.w.flush().map_err(Error::Output)?;
            }
        }
    }
    worker.finish();
    out.w.flush().map_err(Error::Output)?;
    diags.finish();
    if input_failed {
        return Ok(ExitCode::Usage);
    }
    let cov = worker.coverage().cloned().unwrap_or_default();
    if cov.requests == 0 && cov.lines > 0 {
        crate::diag!("tokentime: {}", summary::NO_REQUESTS);
    }
    if config.strict && (cov.invalid > 0 || cov.too_long > 0) {
        crate::diag!(
            "tokentime: --strict: {} invalid and {} too-long lines",
            cov.invalid,
            cov.too_long
        );
        return Ok(ExitCode::BadLines);
    }
    Ok(ExitCode::Ok)
}

fn write_formats(w: &mut impl Write, config: &Config, names: &[String]) -> io::Result<()> {
    let mut first = true;
    for f in config
        .formats
        .iter()
        .filter(|f| names.is_empty() || names.contains(&f.name))
    {
        if !first {
            writeln!(w)?;
        }
        first = false;
        w.write_all(format::describe(f).as_bytes())?;
    }
    // The format `--map` makes, last (README's format table lists it).
    if names.is_empty() || names.iter().any(|n| n == "custom") {
        if !first {
            writeln!(w)?;
        }
        writeln!(
            w,
            "custom: a format of your own, from --map NAME=PATH[:UNIT] (or a --formats file)\n  {}",
            format::map_help()
        )?;
    }
    Ok(())
}
