//! Command line: the clap-derived arguments and their resolution into a validated [`Config`].
//!
//! Owns flag names, defaults and help text. Nothing is read from the environment or the
//! terminal except here, while resolving.

use crate::config::{Command, Config, EnrichConfig, SummaryConfig, SummaryOutput};
use crate::format::{FormatSpec, builtin, custom, parse_path};
use crate::input::Source;
use crate::summary::parse_quantiles;
use clap::{Args, Parser, Subcommand};
use std::io::IsTerminal;
use std::path::PathBuf;

const AFTER_HELP: &str = "\
Exit status: 0 ok (also when stdout is closed early, as by `| head`); 1 with --strict when \
some lines were invalid or too long; 2 usage, configuration or I/O error.

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
    /// List the formats tokentime reads, with the fields each reads and its TTFT origin.
    Formats,
}

#[derive(Debug, Args)]
struct Common {
    /// Input files (plain, .gz or .zst, detected by content); `-` or none for stdin.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Log format: auto (detect each line), or one of `tokentime formats`.
    #[arg(long, short = 'f', default_value = "auto")]
    format: String,
    /// Custom format field: NAME=PATH[:UNIT], repeatable (e.g. arrival=req.t0:epoch_s).
    /// Names: arrival, scheduled, first_token, end (instants); ttft, queue, prefill, decode,
    /// e2e (durations); input_tokens, cached_tokens, evaluated_tokens, output_tokens; id, model,
    /// stream. Units: epoch_s, epoch_ms, epoch_us, epoch_ns, rfc3339, epoch (auto); s, ms, us,
    /// ns, duration ("1.5s").
    #[arg(long = "map", value_name = "NAME=PATH[:UNIT]")]
    maps: Vec<String>,
    /// The request record sits at this dotted path inside each line (e.g. `response`).
    #[arg(long, value_name = "PATH")]
    root: Option<String>,
    /// Longer lines are passed through and counted, never held whole.
    #[arg(long, default_value_t = 16 * 1024 * 1024, value_name = "BYTES")]
    max_line_bytes: usize,
    /// Prompt share served from the prefix cache at which a request counts as a cache hit.
    #[arg(long, default_value_t = 0.5, value_name = "RATIO")]
    cache_hit_ratio: f64,
    /// Exit with status 1 when some lines were invalid or too long.
    #[arg(long)]
    strict: bool,
    /// How many bad lines to report on stderr (then only a count).
    #[arg(long, default_value_t = 5, value_name = "N")]
    max_diagnostics: usize,
    /// Threads that read FILEs in parallel (0: one per core). Standard input is read by one
    /// thread, so output stays live.
    #[arg(long, default_value_t = 0, value_name = "N")]
    threads: usize,
    /// Read lines with the serde_json reference parser (slower; for comparisons and tests).
    #[arg(long, hide = true)]
    reference_parser: bool,
    /// Bytes per chunk of a file read in parallel (tests use small chunks).
    #[arg(long, hide = true, default_value_t = 1 << 20, value_name = "BYTES")]
    chunk_bytes: usize,
}

#[derive(Debug, Args)]
struct EnrichArgs {
    #[command(flatten)]
    common: Common,
    /// Key of the spliced metrics object.
    #[arg(long, default_value = "tokentime")]
    key: String,
    /// Drop lines that are not requests (default: pass them through unchanged).
    #[arg(long)]
    only_requests: bool,
}

#[derive(Debug, Args)]
struct SummaryArgs {
    #[command(flatten)]
    common: Common,
    /// Also group by this dotted path (e.g. `model`), repeatable.
    #[arg(long, value_name = "PATH")]
    by: Vec<String>,
    /// Percentiles to report.
    #[arg(long, default_value = "50,90,95,99,99.9", value_name = "LIST")]
    quantiles: String,
    /// Rendering: table or json.
    #[arg(long, short = 'o', default_value = "table", value_parser = ["table", "json"])]
    output: String,
    /// At most this many groups; further keys are counted under "(other)".
    #[arg(long, default_value_t = 1000, value_name = "N")]
    max_groups: usize,
}

impl Cli {
    /// Resolves the arguments into a [`Config`].
    ///
    /// # Errors
    /// A message for an unknown format, a bad `--map`, an out-of-range ratio or quantile.
    pub fn resolve(self) -> Result<Config, String> {
        match self.command {
            Some(Cmd::Formats) => resolve_common(Common::empty(), Command::Formats),
            Some(Cmd::Summary(s)) => {
                let s = *s;
                let quantiles = parse_quantiles(&s.quantiles)?;
                let by = s.by.iter().map(|b| (b.clone(), parse_path(b))).collect();
                let output = if s.output == "json" {
                    SummaryOutput::Json
                } else {
                    SummaryOutput::Table
                };
                resolve_common(
                    s.common,
                    Command::Summary(SummaryConfig {
                        by,
                        quantiles,
                        output,
                        max_groups: s.max_groups,
                    }),
                )
            }
            None => {
                let e = self.enrich;
                if e.key.is_empty() {
                    return Err("--key must not be empty".into());
                }
                resolve_common(
                    e.common,
                    Command::Enrich(EnrichConfig {
                        key: e.key,
                        only_requests: e.only_requests,
                    }),
                )
            }
        }
    }
}

impl Common {
    fn empty() -> Self {
        Common {
            files: vec![],
            format: "auto".into(),
            maps: vec![],
            root: None,
            max_line_bytes: 16 << 20,
            cache_hit_ratio: 0.5,
            strict: false,
            max_diagnostics: 5,
            threads: 1,
            reference_parser: false,
            chunk_bytes: 1 << 20,
        }
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

fn resolve_common(c: Common, command: Command) -> Result<Config, String> {
    if !(c.cache_hit_ratio > 0.0 && c.cache_hit_ratio <= 1.0) {
        return Err(format!(
            "--cache-hit-ratio {}: must be in (0, 1]",
            c.cache_hit_ratio
        ));
    }
    let all = builtin();
    let formats: Vec<FormatSpec> = if !c.maps.is_empty() {
        if c.format != "auto" && c.format != "custom" {
            return Err(format!(
                "--map defines a custom format; it cannot be combined with --format {}",
                c.format
            ));
        }
        vec![custom(&c.maps)?]
    } else if c.format == "auto" {
        all
    } else {
        match all.into_iter().find(|f| f.name == c.format) {
            Some(f) => vec![f],
            None => {
                let names: Vec<String> = builtin().into_iter().map(|f| f.name).collect();
                return Err(format!(
                    "--format {}: unknown format (known: auto, {})",
                    c.format,
                    names.join(", ")
                ));
            }
        }
    };
    let inputs = if c.files.is_empty() {
        vec![Source::Stdin]
    } else {
        c.files
            .into_iter()
            .map(|p| {
                if p.as_os_str() == "-" {
                    Source::Stdin
                } else {
                    Source::Path(p)
                }
            })
            .collect()
    };
    Ok(Config {
        command,
        inputs,
        formats,
        root: c.root.as_deref().map(parse_path).unwrap_or_default(),
        max_line_bytes: c.max_line_bytes.max(1),
        cache_hit_ratio: c.cache_hit_ratio,
        strict: c.strict,
        max_diagnostics: c.max_diagnostics,
        stdout_is_terminal: std::io::stdout().is_terminal(),
        stdin_is_file: stdin_is_file(),
        threads: match c.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        },
        reference_parser: c.reference_parser,
        chunk_bytes: c.chunk_bytes.max(1),
    })
}
