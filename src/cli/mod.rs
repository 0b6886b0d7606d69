//! Command line: the clap-derived arguments and their resolution into a validated [`Config`].
//!
//! Owns flag names, defaults and help text. Nothing is read from the environment or the
//! terminal except here, while resolving. Must not read input or run a command.

pub(crate) mod config;
mod error;
mod hints;
#[cfg(test)]
mod id_fields;
mod values;

pub use error::ConfigError;
pub use hints::args_hint;

use crate::analysis::AnalysisConfig;
use crate::cli::config::{
    Command, Config, DiffConfig, DiffOutput, EnrichConfig, HtmlConfig, Infer, MergeConfig,
    ReportConfig, SummaryConfig, SummaryOutput, TimeRange,
};
use crate::format::{FormatSpec, builtins, custom, map_help, parse_path};
use crate::input::source::Source;
use crate::output::render::{Rows, parse_fields};
use crate::summary::slo::{parse_goodput, parse_slo};
use crate::summary::window::{parse_flag_duration, parse_positive_duration};
use crate::summary::{parse_quantiles, quantile_name};
use clap::{Args, Parser, Subcommand};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use values::{EnrichOutput, ForArg, Progress};

const AFTER_HELP: &str = "\
Exit status: 0 ok (also when stdout is closed early, as by `| head`, and after Ctrl-C, \
SIGTERM or SIGHUP ends a summary); 1 with --strict when some lines were invalid or too long; 2 usage, \
configuration or I/O error, an --slo whose group no request was in, also a merge of digest \
files of partial runs (interrupted, or an input not read to its end) without --allow-partial; 3 an --slo was broken (one verdict per \
SLO on stderr), or a diff --fail-if condition held.

Metrics (ms): ttft = first_token - arrival; tpot = decode / (output_tokens - 1); \
e2e = end - arrival; queue = scheduled - arrival; prefill = first_token - scheduled; \
decode = end - first_token. A null metric carries its reason under \"nulls\".";

/// tokentime: TTFT, TPOT and E2E latency of every request in LLM server and gateway logs.
#[derive(Debug, Parser)]
#[command(name = "tokentime", version, about, after_help = AFTER_HELP, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Cmd>,
    #[command(flatten)]
    enrich: EnrichArgs,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Percentiles of TTFT, TPOT, E2E, queue, prefill, decode and token counts, per group.
    Summary(Box<SummaryArgs>),
    /// Describe the formats tokentime reads (all, or those named): how a line is recognized,
    /// the fields read with their units and paths, the TTFT origin and the cache signal.
    #[command(after_help = crate::format::file::SCHEMA)]
    Formats(FormatsArgs),
    /// Merge digest files (`summary --save-digest`) into the summary one run over all their
    /// inputs would have printed.
    Merge(MergeArgs),
    /// Compare two runs, each a log or a digest file: per group, metric and quantile, both
    /// values, the change, and whether it is beyond the noise of that many samples.
    Diff(Box<DiffArgs>),
    /// Write one self-contained HTML page (no network): charts of TTFT by cache class, TPOT by
    /// requests in flight, queue and prefill, p50 and p99 over log time; the percentiles, SLOs
    /// and goodput, coverage; with --baseline, the comparison with another run.
    Report(Box<HtmlArgs>),
}

#[derive(Debug, Args)]
struct HtmlArgs {
    #[command(flatten)]
    common: Common,
    /// Write the page to FILE (`-`: standard output).
    #[arg(long, short = 'o', value_name = "FILE", required = true)]
    output: PathBuf,
    /// Also group by this dotted path (e.g. `model`), repeatable.
    #[arg(long, value_name = "PATH")]
    by: Vec<String>,
    /// Percentiles to report.
    #[arg(long, default_value = "50,90,95,99,99.9", value_name = "LIST")]
    quantiles: String,
    /// An SLO, repeatable, as summary's: METRIC:pQ<=VALUE[@KEY=VALUE,...]. Exit status 3 when
    /// one is broken (or has no values).
    #[arg(long = "slo", value_name = "SLO")]
    slos: Vec<String>,
    /// Per-request targets for goodput, as summary's, e.g. ttft=1s,tpot=50ms.
    #[arg(long, value_name = "TARGETS")]
    goodput: Option<String>,
    /// Width of the windows of log time the p50 and p99 over time are drawn from (as
    /// `summary --bucket`).
    #[arg(long, default_value = "1m", value_name = "DURATION")]
    bucket: String,
    /// Compare with this run (a log or a digest file), as `tokentime diff BASELINE FILE`.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// At most this many groups; further keys are counted under "(other)".
    #[arg(long, default_value_t = 1000, value_name = "N")]
    max_groups: usize,
    /// Quantiles are exact while a group's metric holds at most N values, t-digest estimates
    /// beyond.
    #[arg(long, default_value_t = crate::summary::digest::EXACT_LIMIT, value_name = "N")]
    exact_limit: usize,
    #[command(flatten)]
    range: RangeArgs,
}

#[derive(Debug, Args)]
struct DiffArgs {
    #[command(flatten)]
    common: Common,
    /// Also group by this dotted path (e.g. `model`), repeatable (log inputs; a digest file
    /// keeps the keys it was saved with, which must be the same).
    #[arg(long, value_name = "PATH")]
    by: Vec<String>,
    /// Percentiles to compare.
    #[arg(long, default_value = "50,90,95,99,99.9", value_name = "LIST")]
    quantiles: String,
    /// Rendering: table or json.
    #[arg(long, short = 'o', default_value = "table")]
    output: DiffOutput,
    /// A regression gate, repeatable or comma-separated: METRIC.pQ>+N% or >+Nms or >+Ns (B
    /// slower), METRIC.pQ<-N% or <-Nms or <-Ns (B faster), optionally @KEY=VALUE,... for a
    /// group, e.g. 'ttft_ms.p99>+10%' or 'ttft_ms.p99>+0.5s'. Exit status 3 when one holds and its change is beyond noise.
    #[arg(long = "fail-if", value_name = "EXPR")]
    fail_if: Vec<String>,
    /// A --fail-if gate that cannot be judged (too few values for its quantile, or none in one
    /// run) fails the run with exit status 2 instead of passing.
    #[arg(long)]
    fail_unjudged: bool,
    /// At most this many groups per log input; further keys are counted under "(other)".
    #[arg(long, default_value_t = 1000, value_name = "N")]
    max_groups: usize,
    /// Quantiles are exact while a group's metric holds at most N values (log inputs).
    #[arg(long, default_value_t = crate::summary::digest::EXACT_LIMIT, value_name = "N")]
    exact_limit: usize,
}

#[derive(Debug, Args)]
struct FormatsArgs {
    /// Formats to describe (default: all, in detection order).
    #[arg(value_name = "NAME")]
    names: Vec<String>,
    /// Also read the format tables of this TOML or JSON file (listed first).
    #[arg(long = "formats", value_name = "FILE")]
    formats_files: Vec<PathBuf>,
    /// Print the format inferred from the first lines of FILE (`-`: standard input) as a
    /// formats-file entry to edit and keep (`--formats`), with what was mapped and why. FILE
    /// may also come after the other options (`--guess --root PATH FILE`).
    #[arg(long, value_name = "FILE", num_args = 0..=1)]
    guess: Option<Option<PathBuf>>,
    /// The record sits at this dotted path inside each line (with --guess).
    #[arg(long, value_name = "PATH", requires = "guess")]
    root: Option<String>,
}

#[derive(Debug, Args)]
struct Common {
    /// Input files (plain, .gz or .zst, detected by content); `-` or none for stdin.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Log format: auto (detect each line), or one of `tokentime formats`.
    #[arg(long, short = 'f', default_value = "auto")]
    format: String,
    // The help lists every field and unit from the format's tables (`map_help`).
    #[arg(long = "map", value_name = "NAME=PATH[:UNIT]", help = map_help())]
    maps: Vec<String>,
    /// Read more format tables from this TOML or JSON file (schema: `tokentime formats` and
    /// docs/formats.md); they are tried before the built-in ones, and `--format NAME` selects one.
    #[arg(long = "formats", value_name = "FILE")]
    formats_files: Vec<PathBuf>,
    /// The request record sits at this dotted path inside each line (e.g. `response`); `[*]`
    /// walks an array, each element a record (`results[*]`, `data.runs[*].requests[*]`).
    /// Without it, objects in arrays anywhere in a line no format reads are tried as records.
    #[arg(long, value_name = "PATH")]
    root: Option<String>,
    /// Longer lines are passed through and counted, never held whole (a number of bytes, or
    /// with K, M or G: KiB, MiB, GiB).
    #[arg(long, default_value = "16M", value_name = "BYTES", value_parser = parse_bytes)]
    max_line_bytes: usize,
    /// Prompt share served from the prefix cache at which a request counts as a cache hit.
    #[arg(long, default_value_t = 0.5, value_name = "RATIO")]
    cache_hit_ratio: f64,
    /// Exit with status 1 when some lines were invalid or too long.
    #[arg(long)]
    strict: bool,
    /// How many messages on bad lines (or bad records of a line) to show on stderr (then only
    /// a count).
    #[arg(long, default_value_t = 5, value_name = "N")]
    max_diagnostics: usize,
    /// Text before the JSON on each line matching this regex is skipped (a syslog or
    /// timestamp prefix). Kubernetes CRI prefixes and Docker json-file records are unwrapped
    /// without it.
    #[arg(long, value_name = "REGEX")]
    prefix: Option<String>,
    /// At most N multi-line requests in flight (Ollama streams, llama.cpp legacy logs); the
    /// oldest is dropped and counted beyond.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    max_inflight: usize,
    /// A multi-line request with no new line for this long in log time is dropped and counted
    /// (e.g. 10m, 90s, 1h).
    #[arg(long, default_value = "10m", value_name = "DURATION")]
    join_timeout: String,
    /// Flush output after every line, even on a pipe (the default flushes on a terminal, and
    /// on a pipe whenever the input is about to block).
    #[arg(long)]
    line_buffered: bool,
    /// Threads that read the inputs (0: one per core). A file is cut into chunks read in
    /// parallel, output kept in input order; summary also reads several files at once. Read
    /// by one thread each: standard input from a pipe or terminal (so output stays live), a
    /// JSON array document, and a file when every format in use joins lines.
    #[arg(long, default_value_t = 0, value_name = "N", value_parser = parse_threads)]
    threads: usize,
    /// Read lines with the serde_json reference parser (slower; for comparisons and tests).
    #[arg(long, hide = true)]
    reference_parser: bool,
    /// Bytes per chunk of a file read in parallel (tests use small chunks).
    #[arg(long, hide = true, default_value = "512K", value_name = "BYTES", value_parser = parse_bytes)]
    chunk_bytes: usize,
}

#[derive(Debug, Args)]
struct EnrichArgs {
    #[command(flatten)]
    common: Common,
    /// Key of the spliced metrics object.
    #[arg(long, default_value = config::DEFAULT_KEY)]
    key: String,
    /// Drop lines that are not requests (default: pass them through unchanged).
    #[arg(long)]
    only_requests: bool,
    /// Rendering: enrich (every line with the metrics spliced in), or one row per request
    /// with --fields: csv, tsv (with a header) or jsonl.
    #[arg(long, short = 'o', default_value = "enrich")]
    output: EnrichOutput,
    /// Columns of --output csv|tsv|jsonl, comma-separated: line, file, id, model, format, start,
    /// end, ttft_ms, tpot_ms, e2e_ms, queue_ms, prefill_ms, decode_ms, input_tokens,
    /// cached_tokens, output_tokens, ttfot_ms, cache, ttft_origin, outcome, error_reason.
    #[arg(long, value_name = "LIST")]
    fields: Option<String>,
}

const DEFAULT_FIELDS: &str =
    "id,model,ttft_ms,tpot_ms,e2e_ms,input_tokens,cached_tokens,output_tokens,cache,outcome";

/// The `--quantiles` of a report when none is given.
const DEFAULT_QUANTILES: &str = "50,90,95,99,99.9";

#[derive(Debug, Args)]
struct ReportArgs {
    /// Percentiles to report (the compact table shows p50, p90, p99, and p99.9 from 1,000
    /// values, unless this is given).
    #[arg(long, default_value = DEFAULT_QUANTILES, value_name = "LIST")]
    quantiles: String,
    /// The full table report: every metric's count, min, quantiles, max, mean and nulls,
    /// every group, every finding and its tables (the default is a compact report that fits
    /// one screen).
    #[arg(long)]
    explain: bool,
    /// The metric rows of the table (compact, --explain or --bucket), and the metrics its
    /// findings and --hist speak of, e.g. ttft,tpot: ttft, tpot, itl, e2e, queue, prefill,
    /// decode, input_tokens, cached_tokens, output_tokens, ttfot.
    #[arg(long, value_name = "LIST")]
    metrics: Option<String>,
    /// Rendering: table, json, csv, tsv, prometheus (text exposition format), or openmetrics.
    #[arg(long, short = 'o', default_value = "table")]
    output: SummaryOutput,
    /// An SLO, repeatable: METRIC:pQ<=VALUE[@KEY=VALUE,...], e.g. 'ttft:p99<=800ms' or
    /// 'e2e:p95<=20s@cache=miss'. Exit status 3 when one is broken (or has no values).
    #[arg(long = "slo", value_name = "SLO")]
    slos: Vec<String>,
    /// Write every group's digests to FILE (versioned JSON, tokentime.digest/v1; v2 with the
    /// --bucket windows), for `tokentime merge`; `-`: to standard output, in place of the
    /// report.
    #[arg(long, value_name = "FILE")]
    save_digest: Option<PathBuf>,
    /// Draw a log-scaled histogram of each metric under its group's table (and list its bins
    /// in --output json; not with --bucket, whose lines carry no histogram).
    #[arg(long)]
    hist: bool,
    /// Whose headline leads the report: chat (TTFT first, and the share of requests decoding
    /// slower than --reading-speed), agent (E2E first, and how much of it is decode), or both.
    #[arg(long = "for", default_value = "both", value_name = "CONSUMER")]
    consumer: ForArg,
    /// Reading speed for --for chat, in tokens/s. The default, 5.3, is 238 words per minute
    /// (Brysbaert 2019, adult silent reading of English non-fiction) at 0.75 words per token.
    #[arg(long, default_value_t = crate::analysis::DEFAULT_READING_SPEED, value_name = "TOKENS_PER_S")]
    reading_speed: f64,
}

#[derive(Debug, Args)]
struct MergeArgs {
    /// Digest files written by `summary --save-digest` (`-` or none: standard input). A file
    /// may hold several digests one after another (each run's `--save-digest -` output).
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Merge digest files of partial runs (interrupted, or with an input not read to its end)
    /// with exit status 0: each is still named on stderr, and the JSON summary says
    /// "partial". Without it, such a file makes the exit status 2.
    #[arg(long)]
    allow_partial: bool,
    /// The width of the windows of digest files saved with `summary --bucket` (their own when
    /// not given, or a multiple of it: the saved windows added up, 1h windows into 1d): one
    /// line per window and group, as that summary prints them.
    #[arg(long, value_name = "DURATION")]
    bucket: Option<String>,
    /// With digest files saved with `summary --bucket`: the whole run's summary (as `summary`
    /// without --bucket prints it over all their inputs) in place of the windows.
    #[arg(long, conflicts_with = "bucket")]
    whole_run: bool,
    #[command(flatten)]
    report: ReportArgs,
}

#[derive(Debug, Args)]
struct SummaryArgs {
    #[command(flatten)]
    common: Common,
    /// Also group by this dotted path (e.g. `model`, which falls back to where the format logs
    /// the model; `$model`, `$format`, or `$file` for the input's name), repeatable.
    #[arg(long, value_name = "PATH")]
    by: Vec<String>,
    #[command(flatten)]
    report: ReportArgs,
    /// At most this many groups; further keys are counted under "(other)".
    #[arg(long, default_value_t = 1000, value_name = "N")]
    max_groups: usize,
    /// Quantiles are exact while a group's metric holds at most N values, t-digest estimates
    /// beyond (raise it to reproduce a benchmark's own percentiles over many token gaps).
    #[arg(long, default_value_t = crate::summary::digest::EXACT_LIMIT, value_name = "N")]
    exact_limit: usize,
    /// Per-request targets for goodput, e.g. ttft=1s,tpot=50ms (or vLLM's 'ttft:300 tpot:50',
    /// in ms): the share of requests that met every one, and requests/s and output tokens/s
    /// over the log's time span.
    #[arg(long, value_name = "TARGETS")]
    goodput: Option<String>,
    /// Print a summary each DURATION of wall time while input keeps coming (10s, 1m), then
    /// the final one; redrawn in place on a terminal, one document per line with -o json.
    #[arg(long, value_name = "DURATION", conflicts_with = "bucket")]
    every: Option<String>,
    /// With --every: each summary covers the last DURATION of wall time (rounded up to whole
    /// intervals) instead of everything so far. The final summary covers everything.
    #[arg(long, value_name = "DURATION", conflicts_with = "bucket")]
    window: Option<String>,
    /// Cut the input into windows of log time (by request end, aligned on the epoch, UTC)
    /// and print a row per window and group (a table; a JSON line each with -o json), e.g.
    /// --bucket 5m.
    #[arg(long, value_name = "DURATION")]
    bucket: Option<String>,
    /// With --bucket, reading one input: a window is written as soon as a request has ended
    /// DURATION after the window's end (requests may end out of order by that much).
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "10m",
        requires = "bucket"
    )]
    bucket_grace: String,
    /// Progress line on stderr while reading files: auto (when stderr is a terminal),
    /// always, never.
    #[arg(long, default_value = "auto", value_name = "WHEN")]
    progress: Progress,
    /// Write the report to FILE instead of stdout, replacing it whole (a temporary file
    /// renamed over it): once at the end, or with --every after each summary (for
    /// node-exporter's textfile collector: -o prometheus --out DIR/tokentime.prom).
    #[arg(long, value_name = "FILE", conflicts_with = "bucket")]
    out: Option<PathBuf>,
    /// Count every copy of a record read again and both views of a request (a client's span
    /// and the server's, in one OTLP export) instead of once; with --by '$format' the views
    /// fall in their formats' groups.
    #[arg(long)]
    keep_duplicates: bool,
    #[command(flatten)]
    range: RangeArgs,
}

/// `--since` and `--until`: the requests that ended in a span of log time.
#[derive(Debug, Args)]
struct RangeArgs {
    /// Only the requests that ended at or after TIME: a date (2026-11-01, midnight UTC), an
    /// RFC 3339 time (2026-11-01T10:30:00Z, with an offset, or without one for UTC; seconds may
    /// be left out), or Unix seconds. The others are counted as outside.
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    since: Option<String>,
    /// Only the requests that ended before TIME (as --since).
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    until: Option<String>,
}

impl RangeArgs {
    fn resolve(&self) -> Result<TimeRange, ConfigError> {
        let at = |flag: &'static str, v: &Option<String>| -> Result<Option<i64>, ConfigError> {
            v.as_deref()
                .map(|t| {
                    crate::format::units::parse_flag_instant(t).ok_or_else(|| ConfigError::Flag {
                        flag,
                        message: format!(
                            "{t:?} is not a time: give a date (2026-11-01), an RFC 3339 time (2026-11-01T10:30:00Z, or +02:00 for an offset) or Unix seconds (from 2000 to 2200)"
                        ),
                    })
                })
                .transpose()
        };
        let range = TimeRange {
            since: at("since", &self.since)?,
            until: at("until", &self.until)?,
        };
        if let (Some(s), Some(u)) = (range.since, range.until)
            && s >= u
        {
            return Err(ConfigError::Parse(format!(
                "--since {} is not before --until {}: no request could be in between",
                self.since.as_deref().unwrap_or_default(),
                self.until.as_deref().unwrap_or_default()
            )));
        }
        Ok(range)
    }
}

/// Parses command-line arguments (the first is the program name) into a [`Config`], as the
/// binary does: for tests and fuzz targets that drive [`crate::run`].
///
/// # Errors
/// clap's message for bad arguments ([`ConfigError::Args`]), or the resolution's.
pub fn config_from_args<I, T>(args: I) -> Result<Config, ConfigError>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    Cli::try_parse_from(args)
        .map_err(|e| ConfigError::Args(args_hint(&e).unwrap_or_else(|| e.to_string())))?
        .resolve()
}

impl Cli {
    /// Resolves the arguments into a [`Config`].
    ///
    /// # Errors
    /// A [`ConfigError`] for an unknown format, a bad `--map`, an out-of-range ratio or
    /// quantile, flags that do not go together.
    pub fn resolve(self) -> Result<Config, ConfigError> {
        match self.command {
            Some(Cmd::Formats(f)) => f.resolve(),
            Some(Cmd::Merge(m)) => m.resolve(),
            Some(Cmd::Summary(s)) => s.resolve(),
            Some(Cmd::Diff(d)) => d.resolve(),
            Some(Cmd::Report(r)) => r.resolve(),
            None => self.enrich.resolve(),
        }
    }
}

/// The one file `formats --guess` reads: its own value, or else the one positional argument.
fn guess_file(value: Option<PathBuf>, names: Vec<String>) -> Result<PathBuf, ConfigError> {
    match (value, names.as_slice()) {
        (Some(file), []) => Ok(file),
        (None, [file]) => Ok(PathBuf::from(file)),
        (None, []) => Err(ConfigError::Flag {
            flag: "guess",
            message: "needs the FILE to read (`-` for standard input)".into(),
        }),
        _ => Err(ConfigError::Flag {
            flag: "guess",
            message: "reads one FILE and takes no format names".into(),
        }),
    }
}

impl FormatsArgs {
    fn resolve(self) -> Result<Config, ConfigError> {
        if let Some(file) = self.guess {
            let file = guess_file(file, self.names)?;
            let common = Common {
                files: vec![file],
                format: "inferred".into(),
                root: self.root,
                ..Common::empty()
            };
            return resolve_common(common, Command::Guess);
        }
        let common = Common {
            formats_files: self.formats_files,
            ..Common::empty()
        };
        let mut config = resolve_common(common, Command::Formats(vec![]))?;
        let names: Vec<String> = self
            .names
            .iter()
            .map(|n| format_name(n, config.formats.iter().map(|s| s.name.as_str())).to_owned())
            .collect();
        if let Some(unknown) = names
            .iter()
            .find(|n| *n != "custom" && !config.formats.iter().any(|s| &s.name == *n))
        {
            let names: Vec<&str> = config.formats.iter().map(|s| s.name.as_str()).collect();
            return Err(ConfigError::UnknownFormatsName {
                name: unknown.clone(),
                known: names.join(", "),
            });
        }
        config.command = Command::Formats(names);
        Ok(config)
    }
}

impl MergeArgs {
    fn resolve(self) -> Result<Config, ConfigError> {
        for f in &self.files {
            refuse_directory(f, "digest ")?;
        }
        let report = self.report.resolve()?;
        let bucket = positive_duration("bucket", self.bucket.as_deref())?;
        if bucket.is_some() {
            check_bucket_report(&report)?;
        }
        resolve_common(
            Common::empty(),
            Command::Merge(MergeConfig {
                bucket,
                files: if self.files.is_empty() {
                    vec![PathBuf::from("-")]
                } else {
                    self.files
                },
                allow_partial: self.allow_partial,
                whole_run: self.whole_run,
                report,
            }),
        )
    }
}

/// Refuses a report of `--bucket` windows in another rendering than a table or JSON lines, or
/// with `--hist` (`summary --bucket`, `merge` of digest files with windows).
///
/// # Errors
/// [`ConfigError::BucketOutput`], [`ConfigError::HistWithBucket`].
pub(crate) fn check_bucket_report(report: &ReportConfig) -> Result<(), ConfigError> {
    if !matches!(report.output, SummaryOutput::Table | SummaryOutput::Json) {
        return Err(ConfigError::BucketOutput);
    }
    // (Checked here, not by clap: --hist is also in the report flags of commands without it.)
    if report.analysis.hist {
        return Err(ConfigError::HistWithBucket);
    }
    Ok(())
}

/// A duration flag of `summary` that must be above zero (`--every`, `--window`, `--bucket`).
fn positive_duration(flag: &'static str, v: Option<&str>) -> Result<Option<i64>, ConfigError> {
    v.map(parse_positive_duration)
        .transpose()
        .map_err(ConfigError::flag(flag))
}

impl SummaryArgs {
    fn resolve(self) -> Result<Config, ConfigError> {
        if self.by.iter().any(String::is_empty) {
            return Err(ConfigError::EmptyBy);
        }
        let names = by_names(&self.by)?;
        let report = self.report.resolve()?;
        let by: Vec<(String, Vec<String>)> = names
            .iter()
            .zip(&self.by)
            .map(|(name, b)| (name.clone(), parse_path(b)))
            .collect();
        for slo in &report.slos {
            check_slo_group("--slo", &slo.text, &slo.group, &names)?;
        }
        let bucket = positive_duration("bucket", self.bucket.as_deref())?;
        if bucket.is_some() {
            check_bucket_report(&report)?;
        }
        // (With --bucket, the digest holds the windows: they are not printed.)
        if report.digest_to_stdout() && self.every.is_some() {
            return Err(ConfigError::Parse(
                "--save-digest - writes the digest to standard output in place of the report: not with --every, whose output goes there too".to_owned()
            ));
        }
        let progress = self.progress.delay(std::io::stderr().is_terminal());
        let jobs = threads(self.common.threads);
        resolve_common(
            self.common,
            Command::Summary(SummaryConfig {
                by,
                max_groups: self.max_groups,
                exact_limit: self.exact_limit,
                report,
                goodput: self.goodput.as_deref().map(parse_goodput).transpose()?,
                every: positive_duration("every", self.every.as_deref())?,
                window: match (&self.window, &self.every) {
                    (Some(_), None) => {
                        return Err(ConfigError::Flag {
                            flag: "window",
                            message: "it slides with each interval of --every: give both \
                                      (--every 10s --window 5m); windows of log time are --bucket"
                                .into(),
                        });
                    }
                    _ => positive_duration("window", self.window.as_deref())?,
                },
                bucket,
                bucket_grace: parse_flag_duration(&self.bucket_grace)
                    .map_err(ConfigError::flag("bucket-grace"))?,
                progress,
                jobs,
                out: self.out,
                keep_duplicates: self.keep_duplicates,
                range: self.range.resolve()?,
            }),
        )
    }
}

impl DiffArgs {
    fn resolve(self) -> Result<Config, ConfigError> {
        if self.common.files.len() != 2 {
            return Err(ConfigError::Parse(format!(
                "diff takes two inputs, A and B (each a log or a digest file), not {}",
                self.common.files.len()
            )));
        }
        if self.by.iter().any(String::is_empty) {
            return Err(ConfigError::EmptyBy);
        }
        let names = by_names(&self.by)?;
        let quantiles = parse_quantiles(&self.quantiles)?;
        let mut fail_if = vec![];
        for v in &self.fail_if {
            for text in crate::summary::compare::split_fail_if(v) {
                let g = crate::summary::compare::parse_fail_if(text)?;
                check_slo_group("--fail-if", &g.text, &g.group, &names)?;
                if !quantiles
                    .iter()
                    .any(|&q| quantile_name(q) == quantile_name(g.quantile))
                {
                    return Err(ConfigError::Parse(format!(
                        "--fail-if {:?}: {} is not compared: add it to --quantiles",
                        g.text,
                        quantile_name(g.quantile)
                    )));
                }
                fail_if.push(g);
            }
        }
        let by = names
            .iter()
            .zip(&self.by)
            .map(|(name, b)| (name.clone(), parse_path(b)))
            .collect();
        let report = ReportConfig {
            quantiles,
            output: SummaryOutput::Table,
            slos: vec![],
            save_digest: None,
            analysis: AnalysisConfig::default(),
            table: crate::output::compact::TableStyle::default(),
        };
        let jobs = threads(self.common.threads);
        resolve_common(
            self.common,
            Command::Diff(DiffConfig {
                summary: SummaryConfig {
                    by,
                    max_groups: self.max_groups,
                    exact_limit: self.exact_limit,
                    report,
                    goodput: None,
                    every: None,
                    window: None,
                    bucket: None,
                    bucket_grace: 0,
                    progress: None,
                    jobs,
                    out: None,
                    keep_duplicates: false,
                    range: TimeRange::default(),
                },
                fail_if,
                fail_unjudged: self.fail_unjudged,
                output: self.output,
            }),
        )
    }
}

impl HtmlArgs {
    fn resolve(self) -> Result<Config, ConfigError> {
        if self.by.iter().any(String::is_empty) {
            return Err(ConfigError::EmptyBy);
        }
        if self.output.is_dir() {
            let (name, dir) = shown_dir(&self.output);
            return Err(ConfigError::OutputIsADirectory(name, dir));
        }
        if let Some(b) = &self.baseline {
            refuse_directory(b, "")?;
        }
        if let Some(b) = &self.baseline
            && !b.exists()
        {
            let name = crate::input::shown_name(&b.display().to_string()).into_owned();
            return Err(ConfigError::NoSuchFile {
                name,
                hint: String::new(),
            });
        }
        let names = by_names(&self.by)?;
        let by: Vec<(String, Vec<String>)> = names
            .iter()
            .zip(&self.by)
            .map(|(name, b)| (name.clone(), parse_path(b)))
            .collect();
        let slos: Vec<_> = self
            .slos
            .iter()
            .map(|s| parse_slo(s))
            .collect::<Result<_, _>>()?;
        for slo in &slos {
            check_slo_group("--slo", &slo.text, &slo.group, &names)?;
        }
        let report = ReportConfig {
            quantiles: parse_quantiles(&self.quantiles)?,
            output: SummaryOutput::Json,
            slos,
            save_digest: None,
            analysis: AnalysisConfig {
                hist: true,
                ..AnalysisConfig::default()
            },
            table: crate::output::compact::TableStyle::default(),
        };
        let jobs = threads(self.common.threads);
        resolve_common(
            self.common,
            Command::Report(HtmlConfig {
                summary: SummaryConfig {
                    by,
                    max_groups: self.max_groups,
                    exact_limit: self.exact_limit,
                    report,
                    goodput: self.goodput.as_deref().map(parse_goodput).transpose()?,
                    every: None,
                    window: None,
                    bucket: Some(
                        parse_positive_duration(&self.bucket)
                            .map_err(ConfigError::flag("bucket"))?,
                    ),
                    bucket_grace: parse_flag_duration("10m")
                        .map_err(ConfigError::flag("bucket-grace"))?,
                    progress: None,
                    jobs,
                    keep_duplicates: false,
                    out: None,
                    range: self.range.resolve()?,
                },
                output: self.output,
                baseline: self.baseline,
            }),
        )
    }
}

impl EnrichArgs {
    fn resolve(self) -> Result<Config, ConfigError> {
        if self.key.is_empty() {
            return Err(ConfigError::EmptyKey);
        }
        let rows = match (self.output.rows(), &self.fields) {
            (None, Some(_)) => return Err(ConfigError::FieldsWithoutRows),
            (None, None) => None,
            (Some(delimited), fields) => Some(Rows {
                fields: parse_fields(fields.as_deref().unwrap_or(DEFAULT_FIELDS))?,
                delimited,
                input: String::new(),
            }),
        };
        resolve_common(
            self.common,
            Command::Enrich(EnrichConfig {
                key: self.key,
                only_requests: self.only_requests,
                rows,
            }),
        )
    }
}

impl ReportArgs {
    fn resolve(self) -> Result<ReportConfig, ConfigError> {
        if !(self.reading_speed.is_finite() && self.reading_speed > 0.0) {
            return Err(ConfigError::ReadingSpeed(self.reading_speed));
        }
        let metrics = self
            .metrics
            .as_deref()
            .map(crate::output::compact::parse_metrics)
            .transpose()
            .map_err(ConfigError::Parse)?;
        if metrics.is_some() && self.output != SummaryOutput::Table {
            return Err(ConfigError::Flag {
                flag: "metrics",
                message: "works only with the text table (no -o): the other outputs have a row or \
                          column of every metric; drop --metrics, or pick the metrics from the \
                          output (a CSV column, a JSON member)"
                    .to_owned(),
            });
        }
        let table = crate::output::compact::TableStyle {
            explain: self.explain,
            metrics,
            quantiles_given: self.quantiles != DEFAULT_QUANTILES,
            width: crate::output::compact::output_width(std::io::stdout().is_terminal()),
        };
        Ok(ReportConfig {
            quantiles: parse_quantiles(&self.quantiles)?,
            output: self.output,
            table,
            slos: self
                .slos
                .iter()
                .map(|s| parse_slo(s))
                .collect::<Result<_, _>>()?,
            save_digest: self.save_digest,
            analysis: AnalysisConfig {
                hist: self.hist,
                consumer: self.consumer.into(),
                reading_speed: self.reading_speed,
                // Set from --threads with the rest of the configuration.
                threads: 1,
                compact: self.output == SummaryOutput::Table && !self.explain && !self.hist,
            },
        })
    }
}

/// An SLO's group must be one the summary builds: all requests, `cache`, the `--by` keys, or
/// the `--by` keys with `cache`.
fn check_slo_group(
    flag: &'static str,
    text: &str,
    group: &[(String, Option<String>)],
    by: &[String],
) -> Result<(), ConfigError> {
    let mut names: Vec<&str> = group.iter().map(|(k, _)| k.as_str()).collect();
    names.sort_unstable();
    let mut with_cache: Vec<&str> = by.iter().map(String::as_str).chain(["cache"]).collect();
    with_cache.sort_unstable();
    let mut by_only: Vec<&str> = by.iter().map(String::as_str).collect();
    by_only.sort_unstable();
    if names.is_empty() || names == ["cache"] || names == by_only || names == with_cache {
        return Ok(());
    }
    Err(ConfigError::SloGroup {
        flag,
        text: text.to_owned(),
        keys: names.join(", "),
        groups: if by.is_empty() {
            " (add --by KEY to group by KEY)".to_owned()
        } else {
            format!(", [{}] and [{}, cache]", by.join(", "), by.join(", "))
        },
    })
}

impl Common {
    fn empty() -> Self {
        Common {
            files: vec![],
            format: "auto".into(),
            maps: vec![],
            formats_files: vec![],
            root: None,
            max_line_bytes: 16 << 20,
            cache_hit_ratio: 0.5,
            strict: false,
            max_diagnostics: 5,
            prefix: None,
            max_inflight: 10_000,
            join_timeout: "10m".into(),
            line_buffered: false,
            threads: 1,
            reference_parser: false,
            chunk_bytes: 512 << 10,
        }
    }
}

/// The names of the `--by` keys: as given, except one that would be called `cache` (a
/// Prometheus label, a CSV column, a JSON group key), which is tokentime's own prefix-cache
/// dimension: it is renamed `by_cache` (stderr says so). Two keys whose label names are the
/// same (`a.b`, `a_b`) are refused.
fn by_names(by: &[String]) -> Result<Vec<String>, ConfigError> {
    let mut out: Vec<String> = Vec::new();
    for b in by {
        let name = if crate::output::render::label_name(b) == "cache" {
            crate::diag!(
                "tokentime: --by {b}: named by_cache (cache is the prefix-cache dimension every summary is split by)"
            );
            "by_cache".to_owned()
        } else {
            b.clone()
        };
        let label = crate::output::render::label_name(&name);
        if let Some(i) = out
            .iter()
            .position(|o| crate::output::render::label_name(o) == label)
        {
            if by[i] == *b {
                return Err(ConfigError::ByTwice(b.clone()));
            }
            return Err(ConfigError::ByClash {
                given: b.clone(),
                label,
                other: by[i].clone(),
            });
        }
        out.push(name);
    }
    Ok(out)
}

/// Most threads `--threads` takes.
const MAX_THREADS: usize = 1024;

/// Parses `--threads N`: 0 to [`MAX_THREADS`].
fn parse_threads(s: &str) -> Result<usize, ConfigError> {
    match s.parse::<usize>() {
        Ok(n) if n <= MAX_THREADS => Ok(n),
        Ok(_) => Err(ConfigError::TooManyThreads { max: MAX_THREADS }),
        Err(e) => Err(ConfigError::NotAThreadCount(e)),
    }
}

/// Parses a size in bytes: a whole number, optionally with `K`, `M` or `G` (powers of 1024;
/// `KiB`, `MiB`, `GiB` and `KB`, `MB`, `GB` are read the same).
///
/// # Errors
/// A message when the text is not such a size, or one past `usize::MAX` bytes.
fn parse_bytes(s: &str) -> Result<usize, ConfigError> {
    let t = s.trim();
    let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let (num, unit) = t.split_at(digits);
    let shift = match unit.trim_start().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        _ => return Err(ConfigError::NotASize(s.to_owned())),
    };
    let too_large = || ConfigError::SizeTooLarge(s.to_owned());
    let n: usize = match num.parse() {
        Ok(n) => n,
        Err(_) if !num.is_empty() => return Err(too_large()),
        Err(_) => return Err(ConfigError::NotASize(s.to_owned())),
    };
    n.checked_mul(1 << shift).ok_or_else(too_large)
}

/// `--threads N`: N, or one per core for 0.
fn threads(n: usize) -> usize {
    match n {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// True when standard input is a regular file (`tokentime < FILE`), not a pipe or terminal.
fn stdin_is_file() -> bool {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        std::io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .and_then(|fd| std::fs::File::from(fd).metadata())
            .is_ok_and(|m| m.is_file())
    }
    #[cfg(not(unix))]
    {
        false
    }
}

/// Refuses an input that is a directory, saying what to name instead ([`directory_hint`]);
/// `kind` names what the files are (`digest `) when they are not logs.
///
/// # Errors
/// [`ConfigError::IsADirectory`].
pub(crate) fn refuse_directory(f: &Path, kind: &str) -> Result<(), ConfigError> {
    if f.as_os_str() != "-" && f.is_dir() {
        let (name, dir) = shown_dir(f);
        let hint = directory_hint(f, &dir, kind);
        return Err(ConfigError::IsADirectory(name, hint));
    }
    Ok(())
}

/// A directory as the user wrote it, and without its trailing `/` (to append `/*.jsonl`).
fn shown_dir(f: &Path) -> (String, String) {
    let name = crate::input::shown_name(&f.display().to_string()).into_owned();
    let dir = name.trim_end_matches('/').to_owned();
    (name, dir)
}

/// What to say of a directory named where files go: `is a directory (name the files in it:
/// logs/*.jsonl logs/*.jsonl.gz)`, by the endings of the files it holds (their last extension,
/// and the one before a compression's; every file, `logs/*`, when they have more than three
/// endings, one without, or endings one glob of which would take another's), and how to
/// name the files below its folders (`$(find logs -type f)`) when it has some. `shown` is the
/// directory as written, `kind` what its files are (`digest `) when not logs.
pub(crate) fn directory_hint(dir: &Path, shown: &str, kind: &str) -> String {
    let (mut endings, mut files, mut folders) = (std::collections::BTreeSet::new(), 0, 0);
    let mut any_bare = false;
    for entry in std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .take(10_000)
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        if entry.path().is_dir() {
            folders += 1;
            continue;
        }
        files += 1;
        // The last extension, with the one before it when the last is a compression's.
        let last = name.rfind('.').filter(|&i| i > 0 && i + 1 < name.len());
        let ending = last.map(|i| match name[..i].rfind('.') {
            Some(j) if j > 0 && matches!(&name[i..], ".gz" | ".zst" | ".bz2" | ".xz") => j,
            _ => i,
        });
        match ending {
            Some(i) => {
                endings.insert(name[i..].to_owned());
            }
            None => any_bare = true,
        }
    }
    // Globs that would match one file twice (`*.gz` and `*.jsonl.gz`) are one `*`.
    let overlap = endings
        .iter()
        .any(|a| endings.iter().any(|b| a != b && b.ends_with(a.as_str())));
    let safe = |c: char| c.is_ascii_alphanumeric() || "/._-~+@:,".contains(c);
    let quoted = if shown.chars().all(safe) {
        shown.to_owned()
    } else {
        format!("'{}'", shown.replace('\'', r"'\''"))
    };
    let below = format!("$(find {quoted} -type f)");
    if files == 0 && folders == 0 {
        return format!("is an empty directory (name the {kind}files to read)");
    }
    if files == 0 {
        return format!("is a directory of folders (name the {kind}files below it: {below})");
    }
    let globs = if any_bare || overlap || endings.len() > 3 {
        format!("{quoted}/*")
    } else {
        endings
            .iter()
            .map(|e| format!("{quoted}/*{e}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    if folders == 0 {
        format!("is a directory (name the {kind}files in it: {globs})")
    } else {
        format!("is a directory (name the {kind}files in it: {globs}; or all below it: {below})")
    }
}

/// The checks of the common flags that need no format: `--max-line-bytes`, the named files,
/// `--cache-hit-ratio`.
fn check_common(c: &Common) -> Result<(), ConfigError> {
    if c.max_line_bytes == 0 {
        return Err(ConfigError::ZeroMaxLineBytes);
    }
    // Check named files up front, so a typo stops the run before any output (a file that
    // fails later, while being read, is reported and skipped).
    for f in &c.files {
        refuse_directory(f, "")?;
        if f.as_os_str() != "-" && !f.exists() {
            let name = f.display().to_string();
            const SUBCOMMANDS: [&str; 5] = ["summary", "formats", "merge", "diff", "report"];
            let close = if name.contains(['/', '.']) {
                vec![]
            } else {
                crate::cli::error::closest(&name, &SUBCOMMANDS)
            };
            let hint = if ["summary", "formats"].contains(&name.as_str()) {
                format!(" (the subcommand comes first: tokentime {name} FILE...)")
            } else if let Some(sub) = close.first() {
                format!(" (did you mean the subcommand {sub}? tokentime {sub} FILE...)")
            } else {
                String::new()
            };
            let name = crate::input::shown_name(&name).into_owned();
            return Err(ConfigError::NoSuchFile { name, hint });
        }
    }
    if !(c.cache_hit_ratio > 0.0 && c.cache_hit_ratio <= 1.0) {
        return Err(ConfigError::CacheHitRatio(c.cache_hit_ratio));
    }
    Ok(())
}

/// The formats of `--formats` files, then the built-in ones a file does not replace.
fn available_formats(files: &[PathBuf]) -> Result<Vec<FormatSpec>, ConfigError> {
    let mut all = Vec::new();
    for path in files {
        all.extend(crate::format::file::load(path)?);
    }
    // A format of a formats file named like a built-in one replaces it (said on stderr, so
    // that a typo'd copy of a built-in is not mistaken for the real thing).
    for b in builtins() {
        if all.iter().any(|f: &FormatSpec| f.name == b.name) {
            crate::diag!(
                "tokentime: --formats: format {:?} replaces the built-in format of that name",
                b.name
            );
        } else {
            all.push(b);
        }
    }
    Ok(all)
}

/// A format name as given, or the one it names when case is ignored (`LiteLLM`: `litellm`)
/// among `names` and the words `auto`, `custom`, `inferred`; an exact match wins.
fn format_name<'a>(given: &'a str, names: impl Iterator<Item = &'a str> + Clone) -> &'a str {
    let words = ["auto", "custom", "inferred"].into_iter().chain(names);
    if words.clone().any(|n| n == given) {
        return given;
    }
    words
        .into_iter()
        .find(|n| n.eq_ignore_ascii_case(given))
        .unwrap_or(given)
}

/// The formats to try: `--map`'s custom one, the one `--format` names, or all; and whether the
/// `inferred` format is learned from the input (auto, or `--format inferred` when no formats
/// file defines a format of that name).
fn selected_formats(c: &Common) -> Result<(Vec<FormatSpec>, Infer), ConfigError> {
    let all = available_formats(&c.formats_files)?;
    let format = format_name(&c.format, all.iter().map(|f| f.name.as_str())).to_owned();
    let format = format.as_str();
    if !c.maps.is_empty() {
        if format != "auto" && format != "custom" {
            return Err(ConfigError::MapWithFormat(c.format.clone()));
        }
        if !c.formats_files.is_empty() {
            return Err(ConfigError::MapWithFormatsFile);
        }
        return Ok((vec![custom(&c.maps)?], Infer::Off));
    }
    match format {
        "custom" => Err(ConfigError::CustomWithoutMap),
        "auto" => Ok((all, Infer::Auto)),
        "inferred" if !all.iter().any(|f| f.name == "inferred") => Ok((vec![], Infer::Forced)),
        name => match all.into_iter().find(|f| f.name == name) {
            Some(f) => Ok((vec![f], Infer::Off)),
            None => {
                let mut names: Vec<String> = Vec::new();
                for path in &c.formats_files {
                    names.extend(crate::format::file::load(path)?.into_iter().map(|f| f.name));
                }
                names.extend(builtins().into_iter().map(|f| f.name));
                Err(ConfigError::UnknownFormat {
                    name: c.format.clone(),
                    known: names.join(", "),
                })
            }
        },
    }
}

/// The inputs: the files, `-` for standard input (at most once), or standard input alone.
fn sources(files: Vec<PathBuf>) -> Result<Vec<Source>, ConfigError> {
    let inputs = if files.is_empty() {
        vec![Source::Stdin]
    } else {
        files
            .into_iter()
            .map(|p| {
                if p.as_os_str() == "-" {
                    Source::Stdin
                } else {
                    Source::Path(p)
                }
            })
            .collect::<Vec<_>>()
    };
    if inputs.iter().filter(|s| matches!(s, Source::Stdin)).count() > 1 {
        return Err(ConfigError::StdinTwice);
    }
    Ok(inputs)
}

/// Refuses a file named twice among the inputs of a summary, which would count its requests
/// twice (`summary *.jsonl a.jsonl`); a file that cannot be read is said when it is opened.
/// (diff compares two inputs, which may be one file; enrich writes what it is given.)
/// Standard input counts as the file it is redirected from (`summary f - < f`).
fn once_each(inputs: &[Source]) -> Result<(), ConfigError> {
    let mut seen: Vec<((u64, u64), String)> = Vec::new();
    for s in inputs {
        let (path, shown) = match s {
            Source::Path(p) => (p.as_path(), crate::input::shown_path(p)),
            // Linux names the file standard input is open on here.
            Source::Stdin => (
                std::path::Path::new("/dev/stdin"),
                "- (standard input)".to_owned(),
            ),
        };
        if let Ok(meta) = std::fs::metadata(path)
            && meta.is_file()
        {
            use std::os::unix::fs::MetadataExt;
            let id = (meta.dev(), meta.ino());
            if let Some((_, first)) = seen.iter().find(|(i, _)| *i == id) {
                return Err(ConfigError::FileTwice(shown, first.clone()));
            }
            seen.push((id, shown));
        }
    }
    Ok(())
}

/// Says on stderr which FILEs hold the same bytes as one before them (a log copied under
/// another name, `app.log` and `app.log.bak`): copies in two FILEs are not set aside, so the
/// requests of both are counted. Only files of one size are compared, by a hash of their first
/// and last 64 KiB.
/// The first `shown` such files are named, the others counted.
fn warn_same_bytes(inputs: &[Source], shown: usize) {
    const EDGE: u64 = 64 * 1024;
    let files: Vec<(&std::path::Path, u64)> = inputs
        .iter()
        .filter_map(|s| match s {
            Source::Path(p) => std::fs::metadata(p)
                .ok()
                .filter(|m| m.is_file() && m.len() > 0)
                .map(|m| (p.as_path(), m.len())),
            Source::Stdin => None,
        })
        .collect();
    // A hash of the edges (not the bytes: many files of one size would hold 128 KiB each).
    let edges = |path: &std::path::Path, len: u64| -> Option<u64> {
        use std::hash::{Hash, Hasher};
        use std::io::{Read, Seek, SeekFrom};
        let mut f = std::fs::File::open(path).ok()?;
        let mut out = Vec::new();
        (&mut f).take(EDGE).read_to_end(&mut out).ok()?;
        if len > EDGE {
            f.seek(SeekFrom::Start(len.saturating_sub(EDGE).max(EDGE)))
                .ok()?;
            f.take(EDGE).read_to_end(&mut out).ok()?;
        }
        let mut h = std::collections::hash_map::DefaultHasher::new();
        out.hash(&mut h);
        Some(h.finish())
    };
    let mut read: Vec<Option<u64>> = vec![None; files.len()];
    let mut copies = 0;
    for (j, &(b, len)) in files.iter().enumerate() {
        let Some(i) = (0..j).find(|&i| {
            files[i].1 == len && {
                if read[i].is_none() {
                    read[i] = edges(files[i].0, files[i].1);
                }
                if read[j].is_none() {
                    read[j] = edges(b, len);
                }
                read[i].is_some() && read[i] == read[j]
            }
        }) else {
            continue;
        };
        copies += 1;
        if copies <= shown {
            crate::diag!(
                "tokentime: {} holds the same bytes as {}: its requests are counted again (each \
                 FILE is an input of its own: copies in two are counted in each); give it once",
                crate::input::shown_path(b),
                crate::input::shown_path(files[i].0)
            );
        }
    }
    if copies > shown {
        crate::diag!(
            "tokentime: {} more FILEs hold the same bytes as one given before them (not named one \
             by one: --max-diagnostics)",
            copies - shown
        );
    }
}

/// `--prefix REGEX`, anchored at the start of the line.
fn prefix_regex(prefix: Option<&str>) -> Result<Option<regex::bytes::Regex>, ConfigError> {
    prefix
        .map(|p| {
            regex::bytes::Regex::new(&format!("^(?:{p})"))
                .map_err(|e| ConfigError::flag("prefix")(e.to_string()))
        })
        .transpose()
}

fn resolve_common(mut c: Common, mut command: Command) -> Result<Config, ConfigError> {
    c.maps = crate::format::split_maps(&c.maps);
    check_common(&c)?;
    let (formats, infer) = selected_formats(&c)?;
    let notices = crate::format::map_notices(&c.maps);
    let infer = match command {
        // diff infers for each side it reads as a log, on its own.
        Command::Enrich(_)
        | Command::Summary(_)
        | Command::Report(_)
        | Command::Guess
        | Command::Diff(_) => infer,
        Command::Merge(_) | Command::Formats(_) => Infer::Off,
    };
    let inputs = sources(c.files)?;
    if matches!(command, Command::Summary(_) | Command::Report(_)) {
        once_each(&inputs)?;
        warn_same_bytes(&inputs, c.max_diagnostics.max(1));
    }
    let prefix = prefix_regex(c.prefix.as_deref())?;
    // The one duration parser of every flag (`d` included, as docs/live-and-windows.md lists).
    let join_timeout_ns = crate::summary::window::parse_flag_duration(&c.join_timeout)
        .map_err(ConfigError::flag("join-timeout"))?;
    // The report's analysis works out the groups' findings on as many threads as the reading.
    let threads = threads(c.threads);
    match &mut command {
        Command::Summary(sc) => sc.report.analysis.threads = threads,
        Command::Merge(mc) => mc.report.analysis.threads = threads,
        Command::Report(hc) => hc.summary.report.analysis.threads = threads,
        Command::Enrich(_) | Command::Formats(_) | Command::Diff(_) | Command::Guess => {}
    }
    Ok(Config {
        command,
        prefix,
        max_inflight: c.max_inflight.max(1),
        join_timeout_ns,
        inputs,
        formats,
        root: c.root.as_deref().map(parse_path).unwrap_or_default(),
        max_line_bytes: c.max_line_bytes.max(1),
        cache_hit_ratio: c.cache_hit_ratio,
        strict: c.strict,
        max_diagnostics: c.max_diagnostics,
        stdout_is_terminal: std::io::stdout().is_terminal(),
        line_buffered: c.line_buffered || std::io::stdout().is_terminal(),
        stdin_is_file: stdin_is_file(),
        threads,
        reference_parser: c.reference_parser,
        chunk_bytes: c.chunk_bytes.max(1),
        infer,
        notices,
    })
}

#[cfg(test)]
mod tests {
    use super::{Cli, ConfigError, config_from_args, parse_bytes, parse_threads};

    fn error(args: &[&str]) -> ConfigError {
        config_from_args(std::iter::once("tokentime").chain(args.iter().copied())).unwrap_err()
    }

    #[test]
    fn resolution_errors_are_typed() {
        assert_eq!(error(&["--key", ""]), ConfigError::EmptyKey);
        assert_eq!(error(&["--fields", "id"]), ConfigError::FieldsWithoutRows);
        assert_eq!(error(&["summary", "--by", ""]), ConfigError::EmptyBy);
        assert_eq!(
            error(&["summary", "--bucket", "5m", "-o", "csv"]),
            ConfigError::BucketOutput
        );
        assert_eq!(
            error(&["summary", "--bucket", "5m", "--hist"]),
            ConfigError::HistWithBucket
        );
        assert_eq!(
            error(&["--format", "custom"]),
            ConfigError::CustomWithoutMap
        );
        assert_eq!(error(&["-", "-"]), ConfigError::StdinTwice);
        let f = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/lab/litellm.jsonl");
        let link = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/testdata/lab/../lab/litellm.jsonl"
        );
        assert!(
            matches!(error(&["summary", f, link]), ConfigError::FileTwice(a, b) if a == link && b == f)
        );
        assert!(
            config_from_args(["tokentime", "diff", f, link]).is_ok(),
            "diff compares A with B"
        );
        assert_eq!(
            error(&["--cache-hit-ratio", "2"]),
            ConfigError::CacheHitRatio(2.0)
        );
        assert!(matches!(
            error(&["summary", "--every", "0s"]),
            ConfigError::Flag { flag: "every", .. }
        ));
        assert!(matches!(error(&["-o", "bogus"]), ConfigError::Args(_)));
        assert_eq!(
            error(&["summary", "--by", "a.b", "--by", "a_b"]).to_string(),
            "--by a_b: its name as a label or column, a_b, is that of --by a.b"
        );
        assert_eq!(
            error(&["summary", "--by", "model", "--by", "model"]).to_string(),
            "--by model is given twice: each key once (--by model --by user)"
        );
        assert!(
            error(&["summary", "--window", "5m"])
                .to_string()
                .starts_with("--window: it slides with each interval of --every: give both")
        );
    }

    #[test]
    fn thread_counts_are_bounded() {
        assert_eq!(parse_threads("0"), Ok(0));
        assert_eq!(parse_threads("1024"), Ok(1024));
        assert_eq!(
            parse_threads("1025").unwrap_err().to_string(),
            "at most 1024 (0: one per core)"
        );
        assert_eq!(
            parse_threads("x").unwrap_err().to_string(),
            "invalid digit found in string"
        );
    }

    /// clap's own checks of the argument definitions (they run in debug builds only, at the
    /// first parse: a `conflicts_with` naming an argument one subcommand lacks panicked
    /// there while release builds ran).
    #[test]
    fn argument_definitions_pass_clap_checks() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn sizes_take_binary_units() {
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert_eq!(parse_bytes("1K"), Ok(1024));
        assert_eq!(parse_bytes("16M"), Ok(16 << 20));
        assert_eq!(parse_bytes("16 MiB"), Ok(16 << 20));
        assert_eq!(parse_bytes("2gb"), Ok(2 << 30));
        assert_eq!(parse_bytes(&usize::MAX.to_string()), Ok(usize::MAX));
        assert!(parse_bytes(&format!("{}0", usize::MAX)).is_err());
        assert!(parse_bytes(&format!("{}G", usize::MAX)).is_err());
        for bad in ["", "M", "1.5M", "-1", "1T", "1 K B"] {
            assert!(parse_bytes(bad).is_err(), "{bad:?}");
        }
    }
}
