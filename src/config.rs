//! The validated, immutable run configuration, resolved from the command line by
//! [`crate::cli`].

use crate::format::FormatSpec;
use crate::input::Source;

/// Everything a run needs, already checked.
#[derive(Debug, Clone)]
pub struct Config {
    /// What to do.
    pub command: Command,
    /// Inputs, read in order.
    pub inputs: Vec<Source>,
    /// Formats to try, in order (one when forced).
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
    /// Stdout is a terminal (line-buffered output).
    pub stdout_is_terminal: bool,
    /// Stdin is a regular file (`< FILE`): it may be read in parallel like a file.
    pub stdin_is_file: bool,
    /// Threads that read files in parallel (at least 1).
    pub threads: usize,
    /// Read lines with the serde_json reference parser.
    pub reference_parser: bool,
    /// Bytes per chunk of a file read in parallel.
    pub chunk_bytes: usize,
}

/// The subcommand.
#[derive(Debug, Clone)]
pub enum Command {
    /// Re-emit every line with the metrics spliced in.
    Enrich(EnrichConfig),
    /// Print percentile summaries.
    Summary(SummaryConfig),
    /// List the formats.
    Formats,
}

/// Enrich options.
#[derive(Debug, Clone)]
pub struct EnrichConfig {
    /// Key of the spliced object.
    pub key: String,
    /// Drop non-request lines.
    pub only_requests: bool,
}

/// Summary options.
#[derive(Debug, Clone)]
pub struct SummaryConfig {
    /// `--by` keys: (name as given, path).
    pub by: Vec<(String, Vec<String>)>,
    /// Quantiles as fractions.
    pub quantiles: Vec<f64>,
    /// Rendering.
    pub output: SummaryOutput,
    /// Bound on the number of groups.
    pub max_groups: usize,
}

/// Summary rendering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryOutput {
    /// Aligned text table.
    Table,
    /// `tokentime.summary/v1` JSON.
    Json,
}
