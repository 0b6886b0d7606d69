//! The closed sets of values some flags take, as types: clap lists, parses and refuses them
//! (`[possible values: ...]`), and the resolution matches on them, with no string fallback.
//!
//! Variants carry `//` comments, not doc comments: a documented possible value would make
//! clap's `--help` list each one on a line of its own.

use crate::analysis::Consumer;
use crate::output::render::Delimited;
use clap::ValueEnum;
use std::time::Duration;

/// `--output` of enrich: the splice, or one row per request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum EnrichOutput {
    // Every line with the metrics spliced in.
    Enrich,
    // One CSV record per request, with a header.
    Csv,
    // One TSV record per request, with a header.
    Tsv,
    // One JSON object per request.
    Jsonl,
}

impl EnrichOutput {
    /// The rendering of rows: `None` for the splice, `Some(None)` for JSON lines, else the
    /// delimiter.
    pub(crate) fn rows(self) -> Option<Option<Delimited>> {
        match self {
            EnrichOutput::Enrich => None,
            EnrichOutput::Csv => Some(Some(Delimited::Csv)),
            EnrichOutput::Tsv => Some(Some(Delimited::Tsv)),
            EnrichOutput::Jsonl => Some(None),
        }
    }
}

/// `--for`: whose headline leads the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ForArg {
    // TTFT first, decode speed against reading speed.
    Chat,
    // E2E first, with its decode share.
    Agent,
    // Both, labelled.
    Both,
}

impl From<ForArg> for Consumer {
    fn from(f: ForArg) -> Consumer {
        match f {
            ForArg::Chat => Consumer::Chat,
            ForArg::Agent => Consumer::Agent,
            ForArg::Both => Consumer::Both,
        }
    }
}

/// `--progress`: when a progress line is drawn on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Progress {
    // When stderr is a terminal.
    Auto,
    // Always, from the start.
    Always,
    // Never.
    Never,
}

impl Progress {
    /// How long after the start the progress line appears, `None` for never; `auto` asks
    /// whether stderr is a terminal (`stderr_is_terminal`).
    pub(crate) fn delay(self, stderr_is_terminal: bool) -> Option<Duration> {
        match self {
            Progress::Always => Some(Duration::ZERO),
            Progress::Never => None,
            Progress::Auto => stderr_is_terminal.then_some(Duration::from_secs(1)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{EnrichOutput, ForArg, Progress};
    use crate::cli::config::SummaryOutput;
    use clap::ValueEnum;

    fn names<T: ValueEnum>() -> Vec<String> {
        T::value_variants()
            .iter()
            .map(|v| v.to_possible_value().unwrap().get_name().to_owned())
            .collect()
    }

    #[test]
    fn value_names_are_the_flags_words() {
        assert_eq!(names::<EnrichOutput>(), ["enrich", "csv", "tsv", "jsonl"]);
        assert_eq!(
            names::<SummaryOutput>(),
            ["table", "json", "csv", "tsv", "prometheus", "openmetrics"]
        );
        assert_eq!(names::<ForArg>(), ["chat", "agent", "both"]);
        assert_eq!(names::<Progress>(), ["auto", "always", "never"]);
    }

    #[test]
    fn values_have_no_help_of_their_own() {
        // A possible value with help would change `--help` (one line per value).
        fn bare<T: ValueEnum>() -> bool {
            T::value_variants()
                .iter()
                .all(|v| v.to_possible_value().unwrap().get_help().is_none())
        }
        assert!(bare::<EnrichOutput>() && bare::<SummaryOutput>());
        assert!(bare::<ForArg>() && bare::<Progress>());
    }

    #[test]
    fn values_resolve() {
        use crate::analysis::Consumer;
        use crate::output::render::Delimited;
        assert_eq!(EnrichOutput::Enrich.rows(), None);
        assert_eq!(EnrichOutput::Csv.rows(), Some(Some(Delimited::Csv)));
        assert_eq!(EnrichOutput::Tsv.rows(), Some(Some(Delimited::Tsv)));
        assert_eq!(EnrichOutput::Jsonl.rows(), Some(None));
        assert_eq!(Consumer::from(ForArg::Chat), Consumer::Chat);
        assert_eq!(Consumer::from(ForArg::Agent), Consumer::Agent);
        assert_eq!(Consumer::from(ForArg::Both), Consumer::Both);
        assert_eq!(Progress::Never.delay(true), None);
        assert_eq!(
            Progress::Always.delay(false),
            Some(std::time::Duration::ZERO)
        );
        assert_eq!(Progress::Auto.delay(false), None);
        assert_eq!(
            Progress::Auto.delay(true),
            Some(std::time::Duration::from_secs(1))
        );
    }
}
