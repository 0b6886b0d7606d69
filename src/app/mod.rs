//! The application: the driver that reads every input ([`driver`]), the commands on top of
//! it (enrich here, summary and merge in [`summary_cmd`], diff in [`diff_cmd`], the HTML
//! report in [`report_cmd`]), the threads that run them, and the
//! diagnostics a run prints on stderr.
//!
//! The top layer: it may use every folder below it; none of them may use it.

pub(crate) mod aggregates;
pub(crate) mod buckets;
pub(crate) mod diff_cmd;
pub(crate) mod driver;
pub(crate) mod error;
pub(crate) mod infer;
pub(crate) mod keys;
pub(crate) mod not_json;
pub(crate) mod ordered;
pub(crate) mod out_file;
pub(crate) mod overlaps;
pub(crate) mod parallel;
pub(crate) mod report_cmd;
pub(crate) mod summary_cmd;
pub(crate) mod unmapped;
pub(crate) mod watchdog;
pub(crate) mod worker;

use crate::cli::config::{Command, Config, EnrichConfig};
use crate::{format, summary};
use driver::{Reading, WorkerSink};
use error::{Error, ExitCode};
use std::io::{self, BufWriter, Write};
use worker::Worker;

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
            write_stderr(&format!(
                "{}:{line}: {reason}",
                crate::input::shown_name(file)
            ));
        } else {
            self.hidden += 1;
        }
    }

    /// A message on a bad line, formatted (`FILE:LINE: reason`): shown, or counted past `max`.
    pub(crate) fn show(&mut self, msg: String) {
        if self.shown < self.max {
            self.shown += 1;
            write_stderr(&msg);
        } else {
            self.hidden += 1;
        }
    }

    /// Counts a bad line past `--max-diagnostics` (not shown).
    pub(crate) fn hide(&mut self) {
        self.hidden += 1;
    }

    /// Counts `n` bad lines past `--max-diagnostics`.
    pub(crate) fn hide_n(&mut self, n: u64) {
        self.hidden += n;
    }

    pub(crate) fn finish(&self) {
        if self.hidden > 0 {
            crate::diag!(
                "tokentime: {} more message{} on bad input not shown (--max-diagnostics)",
                self.hidden,
                if self.hidden == 1 { "" } else { "s" }
            );
        }
    }
}

/// Writes `msg` and a newline on stderr, dropped when stderr is closed (as [`crate::diag!`],
/// but never held).
pub(crate) fn write_stderr(msg: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{msg}");
}

/// Runs the configured command, reading the inputs and writing to `stdout`.
///
/// Returns the exit code: [`ExitCode::Ok`], or [`ExitCode::BadLines`] under `--strict`.
/// A closed stdout (`| head`) ends the run quietly with [`ExitCode::Ok`].
///
/// # Errors
/// [`Error::Input`] when an input cannot be opened or read, [`Error::Output`] when stdout
/// fails other than by a closed pipe.
pub fn run(config: &Config, stdout: impl Write + Send) -> Result<ExitCode, Error> {
    match run_inner(config, stdout) {
        Err(Error::Output(e)) if e.kind() == io::ErrorKind::BrokenPipe => Ok(ExitCode::Ok),
        other => other,
    }
}

/// The line printed when a command would read a terminal: standard input is the only input
/// and nobody piped a log into it (a run that seems to hang, silently, otherwise).
pub(crate) const STDIN_HINT: &str = "tokentime: reading standard input (a terminal); give FILEs or pipe a log into it (Ctrl-D ends the input, Ctrl-C quits)";

fn run_inner(config: &Config, stdout: impl Write + Send) -> Result<ExitCode, Error> {
    if matches!(
        config.command,
        Command::Enrich(_) | Command::Summary(_) | Command::Report(_)
    ) && matches!(config.inputs[..], [crate::input::source::Source::Stdin])
        && io::IsTerminal::is_terminal(&io::stdin())
    {
        crate::diag!("{STDIN_HINT}");
    }
    for n in &config.notices {
        crate::diag!("tokentime: {n}");
    }
    // Under the buffer, the watchdog times the writes that reach stdout (a summary's report
    // blocked on a pipe nobody reads ends after a signal), not every fragment written to the
    // buffer.
    let mut out = BufWriter::with_capacity(256 * 1024, watchdog::Watched::new(stdout));
    // The `inferred` format is decided here, on the calling thread, before any line is counted.
    let inferred;
    let config = if config.infer == crate::cli::config::Infer::Off
        || matches!(config.command, Command::Guess | Command::Diff(_))
    {
        config
    } else {
        inferred = infer::prepare(config, "");
        &inferred
    };
    match &config.command {
        Command::Guess => {
            infer::guess(config, &mut out).map_err(Error::Output)?;
            out.flush().map_err(Error::Output)?;
            Ok(ExitCode::Ok)
        }
        Command::Formats(names) => {
            write_formats(&mut out, config, names).map_err(Error::Output)?;
            out.flush().map_err(Error::Output)?;
            Ok(ExitCode::Ok)
        }
        Command::Summary(s) => summary_cmd::run_summary(config, s, &mut out),
        Command::Merge(m) => summary_cmd::run_merge(m, &mut out),
        Command::Diff(d) => diff_cmd::run_diff(config, d, &mut out),
        Command::Report(r) => report_cmd::run_report(config, r, &mut out),
        Command::Enrich(e) => run_enrich(config, e, &mut out),
    }
}

/// Runs `tokentime enrich`: every input in turn through one worker (a request may span two
/// inputs), each line written with its metrics spliced in (or the rows).
fn run_enrich(
    config: &Config,
    e: &EnrichConfig,
    out: &mut BufWriter<watchdog::Watched<impl Write + Send>>,
) -> Result<ExitCode, Error> {
    let mut worker = Worker::new(config);
    let mut diags = Diagnostics::new(config.max_diagnostics);
    if let Some(rows) = &e.rows {
        rows.header(out).map_err(Error::Output)?;
    }
    let reading = Reading {
        chunked: Some(config),
        ..Reading::plain(config)
    };
    // An input that cannot be read is reported and skipped: the others are still read, and
    // the exit status says that something was missing (2).
    let mut input_failed = false;
    for source in &config.inputs {
        // An input whose last line had no line end: the next one's first line starts a line
        // of its own (the two were written as one). The last byte written is in the buffer,
        // or, just after it was written out, the writer's.
        let last = out.buffer().last().copied().or(out.get_ref().last());
        if last.is_some_and(|b| b != b'\n') {
            out.write_all(b"\n").map_err(Error::Output)?;
        }
        let name = source.name();
        let mut report = |line: u64, why: Option<&str>| match why {
            Some(why) => diags.report(&name, line, why),
            None => diags.hide(),
        };
        let mut sink = WorkerSink {
            worker: &mut worker,
            out: &mut *out,
            report: &mut report,
            line_buffered: config.line_buffered,
            finish_each: false,
            failed: false,
            held: None,
        };
        driver::read(&reading, source, &mut sink).map_err(Error::Output)?;
        input_failed |= sink.failed;
    }
    worker.finish();
    out.flush().map_err(Error::Output)?;
    diags.finish();
    if input_failed {
        return Ok(ExitCode::Usage);
    }
    let cov = worker.coverage().cloned().unwrap_or_default();
    for msg in crate::app::unmapped::own_documents(&cov) {
        crate::diag!("tokentime: {msg}");
    }
    // Input that is all tokentime's own output is said just above.
    let own: u64 = cov.own_documents.values().sum();
    if cov.requests == 0 && cov.lines > 0 && !(own > 0 && own == cov.no_timing) {
        let choice = crate::app::unmapped::format_choice(config);
        crate::diag!("tokentime: {}", no_requests(&cov, &e.key, &choice));
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

/// Why enrich found no request. Lines that carry the enrich key were passed through as already
/// enriched ([`crate::classify::Kind::AlreadyEnriched`]): when `--key` names a field of the log
/// (`--key id`), that is every line, and advice about formats would be beside the point.
fn no_requests(cov: &crate::Coverage, key: &str, choice: &summary::FormatChoice) -> String {
    if cov.already_enriched == 0 {
        return summary::no_requests(cov, choice);
    }
    let n = cov.already_enriched;
    format!(
        "no line was recognised as a request: {} already {} a field `{key}`, the key --key puts \
         the metrics under, so {} already enriched and {} unchanged; if not, --key NAME must \
         name a field the log does not have",
        crate::output::summary::plural(n, "line"),
        if n == 1 { "has" } else { "have" },
        if n == 1 { "it looks" } else { "they look" },
        if n == 1 {
            "passes through"
        } else {
            "pass through"
        },
    )
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
        let width = crate::output::compact::output_width(std::io::IsTerminal::is_terminal(
            &std::io::stdout(),
        ));
        let text = crate::output::compact::wrap_lines(&format::describe(f), width);
        w.write_all(text.as_bytes())?;
    }
    // The format `--map` makes, last (docs/formats.md lists it).
    if names.is_empty() || names.iter().any(|n| n == "custom") {
        if !first {
            writeln!(w)?;
        }
        let text = format!(
            "custom: a format of your own, from --map NAME=PATH[:UNIT] (or a --formats file)\n  {}\n",
            format::map_help()
        );
        let width = crate::output::compact::output_width(std::io::IsTerminal::is_terminal(
            &std::io::stdout(),
        ));
        w.write_all(crate::output::compact::wrap_lines(&text, width).as_bytes())?;
    }
    Ok(())
}
