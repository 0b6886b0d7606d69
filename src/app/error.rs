//! Errors and exit codes.
//!
//! A fatal [`Error`] stops the run (I/O, configuration); bad input lines are never errors:
//! they are counted in [`crate::classify::Coverage`] and reported as diagnostics.

use std::io;

/// A fatal error: the run stops and the process exits with [`ExitCode::Usage`] (2).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A configuration or usage problem, with the message to show.
    #[error("{0}")]
    Config(String),
    /// An input could not be opened or read.
    #[error("{name}: {source}")]
    Input {
        /// The input's name (a path or `<stdin>`).
        name: String,
        /// The underlying error.
        source: io::Error,
    },
    /// Output could not be written (other than a closed pipe, which is not an error).
    #[error("writing output: {0}")]
    Output(io::Error),
}

/// The process exit status (SPEC section 4; `--help` and docs/bad-input.md list them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// Success, also when stdout was closed early (`| head`).
    Ok = 0,
    /// `--strict` and some lines were invalid or too long.
    BadLines = 1,
    /// Usage, configuration or I/O error.
    Usage = 2,
    /// An SLO was violated.
    SloViolated = 3,
}
