//! tokentime: per-request TTFT, TPOT, E2E latency, queue time, prefill and decode from the
//! JSON-lines logs of LLM inference servers and gateways.
//!
//! One pass, one direction. The source folders are the stages, listed bottom up; a folder may
//! use only the folders above it in this list (checked by a test, `layers.rs`):
//!
//! 1. `number`: numbers as tokentime writes them (a leaf every layer may use).
//! 2. `cpu`: hints to the processor (a leaf every layer may use).
//! 3. `input/`: byte sources (files, stdin, gzip, zstd), line framing, JSON documents.
//! 4. `json/`: the validating scanner and the extraction of the key paths a format needs.
//! 5. `metrics/`: one request's timeline, the pure derivation of its metrics, the in-flight
//!    sweep.
//! 6. `format/`: format specs, their compilation, detection and description, `--map`, formats
//!    files, units, and the built-in formats (`format/builtin/`).
//! 7. `classify/`: the per-line processor (envelopes, joins, records) and coverage counters.
//! 8. `summary/`: groups, digests, accumulators, windows, SLOs, digest files.
//! 9. `analysis/`: modes, histograms, the report model.
//! 10. `output/`: the enrich splice, the table, JSON, CSV/TSV, Prometheus and per-request rows.
//! 11. `cli/`: clap arguments resolved into an immutable `Config`.
//! 12. `app/`: the driver that reads every input, the commands on top of it, the threads.

#![warn(unreachable_pub)]

/// `eprintln!` that never fails: a message to stderr, dropped when stderr is closed (`2>&1 |
/// head`). `eprintln!` panics then, which ended a thread before it counted a failed input
/// (and so the exit status); a diagnostic must never change what the run does.
///
/// A thread reading one of several inputs of a summary read at once holds the message until
/// the inputs before its own are read (`app/ordered.rs`): stderr comes out in input order.
#[macro_export]
macro_rules! diag {
    ($($arg:tt)*) => {{
        $crate::say_line(format_args!($($arg)*));
    }};
}

/// [`diag!`]'s writer (see there).
#[doc(hidden)]
pub fn say_line(args: std::fmt::Arguments<'_>) {
    app::ordered::say(args);
}

mod analysis;
mod app;
mod classify;
mod cli;
mod cpu;
mod format;
mod input;
mod json;
mod metrics;
mod number;
mod output;
mod summary;

#[cfg(test)]
mod layers;

// The library's surface: what the binary, the benches, the fuzz targets and the tests use.
pub use analysis::{AnalysisConfig, Report, analyze};
pub use app::error::{Error, ExitCode};
pub use app::run;
pub use app::worker::Worker;
pub use classify::{Coverage, Kind, LineError, Processor};
pub use cli::config::Config;
pub use cli::{Cli, ConfigError, args_hint, config_from_args};
pub use format::infer::{guess_format, parse_formats_file};
pub use format::units::{
    Instant, PLAUSIBLE_FROM_NS, PLAUSIBLE_UNTIL_NS, Unit, decode_count, decode_instant, decode_ns,
    parse_duration_str, parse_rfc3339,
};
pub use format::{Field, FormatSpec, Formats, builtins, custom as custom_format};
pub use input::document::{
    Document, Item, Objects, Replay, detect as detect_document, for_each_element,
    sniff as sniff_document,
};
pub use input::lines::{Line, LineReader};
pub use input::source::open_file;
pub use json::{PathSet, ReadError, Slots, neutralize_non_finite};
pub use metrics::sweep::Sweep;
pub use number::{round3, write_fixed3, write_ms};
pub use output::summary::to_json;
pub use summary::Summary;
pub use summary::digest::{Digest, EXACT_LIMIT, quantile_sorted};
