//! The validated, immutable run configuration, resolved from the command line by
//! [`crate::cli`].

use crate::format::FormatSpec;
use crate::input::source::Source;
use crate::output::render::Rows;
use crate::summary::slo::{Slo, Targets};
use std::path::PathBuf;

/// Everything a run needs, already checked.
#[derive(Debug, Clone)]
pub struct Config {
    /// What to do.
    pub command: Command,
    /// Inputs, read in order.
    pub inputs: Vec<Source>,
    /// Formats to try, in order (one when forced): those of `--formats FILE` first, then the
    /// built-in ones.
    pub formats: Vec<FormatSpec>,
    /// Path of the record inside each line (`--root`), empty for the whole line.
    pub root: Vec<String>,
    /// Lines longer than this are passed through and counted.
    pub max_line_bytes: usize,
    /// `--cache-hit-ratio`.
    pub cache_hit_ratio: f64,
    /// Exit 1 on invalid or too-long lines.
    pub strict: bool,
    /// How many bad lines to report individually.
    pub max_diagnostics: usize,
    /// Stdout is a terminal (line-buffered output, tables redrawn in place).
    pub stdout_is_terminal: bool,
    /// `--prefix`: skipped at the start of each line, anchored.
    pub prefix: Option<regex::bytes::Regex>,
    /// Multi-line requests in flight at most.
    pub max_inflight: usize,
    /// A multi-line request idle this long in log time is dropped (ns).
    pub join_timeout_ns: i64,
    /// Flush after every line: stdout is a terminal, or `--line-buffered`.
    pub line_buffered: bool,
    /// Stdin is a regular file (`< FILE`): it may be read in parallel like a file.
    pub stdin_is_file: bool,
    /// `--threads`: threads that read the inputs (at least 1): chunks of one file in
    /// parallel, or several files at once (summary).
    pub threads: usize,
    /// Read lines with the serde_json reference parser.
    pub reference_parser: bool,
    /// Bytes per chunk of a file read in parallel.
    pub chunk_bytes: usize,
    /// Whether the `inferred` format is learned from a sample of the input.
    pub infer: Infer,
    /// Said on stderr before anything is read (`--map` durations without a unit).
    pub notices: Vec<String>,
}

/// When the `inferred` format is learned from the input (`crate::app::infer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Infer {
    /// Never (`--format NAME`, `--map`, and the commands that read no log).
    Off,
    /// `--format auto`: used when no format in use recognises a line of the sample.
    Auto,
    /// `--format inferred`: the only format.
    Forced,
}

/// The subcommand.
#[derive(Debug, Clone)]
pub enum Command {
    /// Re-emit every line with the metrics spliced in.
    Enrich(EnrichConfig),
    /// Print percentile summaries.
    Summary(SummaryConfig),
    /// Merge digest files into one summary.
    Merge(MergeConfig),
    /// Compare two runs (logs or digest files).
    Diff(DiffConfig),
    /// Write the HTML report.
    Report(HtmlConfig),
    /// Describe the formats (those named, or all).
    Formats(Vec<String>),
    /// `formats --guess FILE`: print the format inferred from the input as a formats-file entry.
    Guess,
}

/// The member enrich splices its metrics into by default (`--key`).
pub(crate) const DEFAULT_KEY: &str = "tokentime";

/// Enrich options.
#[derive(Debug, Clone)]
pub struct EnrichConfig {
    /// Key of the spliced object.
    pub key: String,
    /// Drop non-request lines.
    pub only_requests: bool,
    /// `--output csv|tsv|jsonl`: one row per request instead of the splice.
    pub rows: Option<Rows>,
}

/// How a finished summary is reported: rendering, quantiles, SLOs, digest file.
#[derive(Debug, Clone)]
pub struct ReportConfig {
    /// Quantiles as fractions.
    pub quantiles: Vec<f64>,
    /// Rendering.
    pub output: SummaryOutput,
    /// `--slo`s, judged on the final summary.
    pub slos: Vec<Slo>,
    /// `--save-digest FILE`.
    pub save_digest: Option<PathBuf>,
    /// `--hist`, `--for`, `--reading-speed`: what the report adds to the percentiles.
    pub analysis: crate::analysis::AnalysisConfig,
    /// `--explain`, `--metrics` and the width: how the text table is written.
    pub table: crate::output::compact::TableStyle,
}

impl ReportConfig {
    /// `--save-digest -`: the digest document is written to standard output, in place of the
    /// report.
    #[must_use]
    pub fn digest_to_stdout(&self) -> bool {
        self.save_digest
            .as_deref()
            .is_some_and(|p| p.as_os_str() == "-")
    }

    /// Whether the summary keeps the OpenTelemetry GenAI histograms: for the renderings that
    /// print them, and for the digest file (`merge -o prometheus` prints them from it).
    #[must_use]
    pub fn keeps_genai(&self) -> bool {
        self.output.exposition() || self.save_digest.is_some()
    }
}

/// Summary options.
#[derive(Debug, Clone)]
pub struct SummaryConfig {
    /// `--by` keys: (name as given, path).
    pub by: Vec<(String, Vec<String>)>,
    /// Bound on the number of groups.
    pub max_groups: usize,
    /// Values held exactly per digest.
    pub exact_limit: usize,
    /// Rendering, SLOs, digest file.
    pub report: ReportConfig,
    /// `--goodput` targets.
    pub goodput: Option<Targets>,
    /// `--every`: print a summary each interval of wall time (ns).
    pub every: Option<i64>,
    /// `--window`: the `--every` summaries cover this much wall time (ns), not everything.
    pub window: Option<i64>,
    /// `--bucket`: one JSON line per window of log time of this width (ns) and group.
    pub bucket: Option<i64>,
    /// `--bucket-grace`: reading one input, a window is written once a request has ended this
    /// long (ns) after its end.
    pub bucket_grace: i64,
    /// Show a progress line on stderr while reading files, after this long.
    pub progress: Option<std::time::Duration>,
    /// Files read at once (`--threads`).
    pub jobs: usize,
    /// `--out FILE`: the reports replace FILE whole instead of going to stdout.
    pub out: Option<PathBuf>,
    /// `--keep-duplicates`: count every copy of a record and both views of a request.
    pub keep_duplicates: bool,
    /// `--since`, `--until`: only the requests that ended in this span of log time.
    pub range: TimeRange,
}

pub(crate) use crate::metrics::TimeRange;

/// `tokentime merge` options.
#[derive(Debug, Clone)]
pub struct MergeConfig {
    /// Digest files, merged in order.
    pub files: Vec<PathBuf>,
    /// `--allow-partial`: digest files of partial runs merged with exit status 0 (still named
    /// on stderr).
    pub allow_partial: bool,
    /// `--bucket`: the width of the windows the digest files must hold (ns); `None`: theirs.
    pub bucket: Option<i64>,
    /// `--whole-run`: the whole run's report from files with windows, in place of them.
    pub whole_run: bool,
    /// Rendering, SLOs, digest file.
    pub report: ReportConfig,
}

/// `tokentime diff` options.
#[derive(Debug, Clone)]
pub struct DiffConfig {
    /// How a log side is summarized (`--by`, `--exact-limit`, `--max-groups`; the quantiles
    /// compared are its report's).
    pub summary: SummaryConfig,
    /// `--fail-if` gates.
    pub fail_if: Vec<crate::summary::compare::FailIf>,
    /// `--fail-unjudged`: a gate that cannot be judged is a failure (exit 2).
    pub fail_unjudged: bool,
    /// Rendering.
    pub output: DiffOutput,
}

/// `tokentime report` options.
#[derive(Debug, Clone)]
pub struct HtmlConfig {
    /// How the inputs are summarized: JSON with histograms, `--bucket` windows, SLOs, goodput.
    pub summary: SummaryConfig,
    /// `-o FILE` (`-`: standard output).
    pub output: PathBuf,
    /// `--baseline FILE`: the run compared with (side A of a diff).
    pub baseline: Option<PathBuf>,
}

/// Diff rendering (`--output`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DiffOutput {
    // Aligned text table.
    Table,
    // `tokentime.diff/v1` JSON.
    Json,
}

/// Summary rendering (`--output`). Its variants are commented, not documented: clap would
/// list a documented value on a line of its own in `--help`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SummaryOutput {
    // Aligned text table.
    Table,
    // `tokentime.summary/v1` JSON.
    Json,
    // One CSV record per group and metric.
    Csv,
    // One TSV record per group and metric.
    Tsv,
    // Prometheus text exposition format.
    Prometheus,
    // OpenMetrics text format (the Prometheus rendering with units and `# EOF`).
    Openmetrics,
}

impl SummaryOutput {
    /// True for the renderings that carry the OpenTelemetry GenAI histograms (Prometheus and
    /// OpenMetrics).
    pub fn exposition(self) -> bool {
        matches!(self, SummaryOutput::Prometheus | SummaryOutput::Openmetrics)
    }
}
