//! Why a command line does not resolve into a [`crate::Config`]: one variant per mistake, each
//! printed (after `tokentime: `) as the message tokentime has always given.

use thiserror::Error;

/// A command line that clap accepted but that does not make a valid configuration, or a flag
/// value that does not parse.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ConfigError {
    /// clap's own message for arguments it refused (`config_from_args`).
    #[error("{0}")]
    Args(String),
    /// A message of a parser outside `cli/` (quantiles, SLOs, goodput targets, `--fields`,
    /// `--map`, a formats file, a digest file), which names its flag itself.
    #[error("{0}")]
    Parse(String),
    /// A flag's value was refused by a parser that does not name the flag.
    #[error("--{flag}: {message}")]
    Flag {
        /// The flag, without its dashes.
        flag: &'static str,
        /// The parser's message.
        message: String,
    },
    /// `tokentime formats NAME` for a format that does not exist.
    #[error("{}", unknown_format(&format!("formats {name}"), name, known))]
    UnknownFormatsName {
        /// The name given.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// `--format NAME` for a format that does not exist.
    #[error("{}", unknown_format(&format!("--format {name}"), name, &format!("auto, inferred, {known}")))]
    UnknownFormat {
        /// The name given.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// `--by ''`.
    #[error("--by needs a path (e.g. --by model)")]
    EmptyBy,
    /// `--by` given the same key twice.
    #[error("--by {0} is given twice: each key once (--by model --by user)")]
    ByTwice(String),
    /// Two `--by` keys that would be one label or column.
    #[error("--by {given}: its name as a label or column, {label}, is that of --by {other}")]
    ByClash {
        /// The later key.
        given: String,
        /// The label both make.
        label: String,
        /// The earlier key.
        other: String,
    },
    /// An SLO on a group the summary does not build.
    #[error(
        "{flag} {text:?}: there is no group by [{keys}]; groups are all requests, cache{groups}"
    )]
    SloGroup {
        /// `--slo` or `--fail-if`.
        flag: &'static str,
        /// The SLO as given.
        text: String,
        /// Its group's keys, comma-separated.
        keys: String,
        /// The rest of the list of groups (or the hint to add `--by`).
        groups: String,
    },
    /// `--bucket` with an `--output` other than table or json.
    #[error("--bucket prints a table, or JSON lines with -o json; it takes no other --output")]
    BucketOutput,
    /// `--hist` with `--bucket`.
    #[error("--hist cannot be used with --bucket: its lines carry no histogram")]
    HistWithBucket,
    /// `--key ''`.
    #[error("--key must not be empty")]
    EmptyKey,
    /// `--fields` with the enrich splice.
    #[error("--fields needs --output csv, tsv or jsonl")]
    FieldsWithoutRows,
    /// `--reading-speed` not a positive number.
    #[error("--reading-speed {0}: must be a positive number of tokens/s")]
    ReadingSpeed(f64),
    /// `--cache-hit-ratio` outside (0, 1].
    #[error("--cache-hit-ratio {0}: must be in (0, 1]")]
    CacheHitRatio(f64),
    /// `--max-line-bytes 0`.
    #[error("--max-line-bytes must be at least 1")]
    ZeroMaxLineBytes,
    /// A named input that does not exist; `hint` says when it looks like a subcommand.
    #[error("{name}: no such file{hint}")]
    NoSuchFile {
        /// The path as given.
        name: String,
        /// Empty, or the hint that the subcommand comes first.
        hint: String,
    },
    /// A named input that is a directory, and what to name instead ([`directory_hint`]).
    ///
    /// [`directory_hint`]: crate::cli::directory_hint
    #[error("{0}: {1}")]
    IsADirectory(String, String),
    /// `report -o` names a directory.
    #[error("-o {0}: is a directory (name the page to write, e.g. -o {1}/report.html)")]
    OutputIsADirectory(String, String),
    /// `--map` with `--format` other than auto or custom.
    #[error("--map defines a custom format; it cannot be combined with --format {0}")]
    MapWithFormat(String),
    /// `--map` with `--formats`.
    #[error("--map and --formats both define formats; use one")]
    MapWithFormatsFile,
    /// `--format custom` without `--map`.
    #[error("--format custom is the format --map defines: give --map NAME=PATH[:UNIT]")]
    CustomWithoutMap,
    /// `-` twice among the inputs.
    #[error("- (standard input) is given more than once: it can be read only once")]
    StdinTwice,
    /// One file named twice among the inputs (a glob and a path, a path and a link to it).
    #[error("{0}: the same file as {1}, named twice (its requests would be read twice)")]
    FileTwice(String, String),
    /// A size (`--max-line-bytes`) that is not one.
    #[error("{0:?} is not a size (bytes, or a number with K, M or G)")]
    NotASize(String),
    /// A size past `usize::MAX` bytes.
    #[error("{0:?} is more bytes than this machine can address")]
    SizeTooLarge(String),
    /// `--threads` above the most it takes.
    #[error("at most {max} (0: one per core)")]
    TooManyThreads {
        /// The most threads `--threads` takes.
        max: usize,
    },
    /// `--threads` not a whole number.
    #[error("{0}")]
    NotAThreadCount(std::num::ParseIntError),
}

impl From<String> for ConfigError {
    fn from(message: String) -> Self {
        ConfigError::Parse(message)
    }
}

impl ConfigError {
    /// Wraps the message of a parser that does not name its flag: `--FLAG: message`.
    pub(crate) fn flag(flag: &'static str) -> impl FnOnce(String) -> ConfigError {
        move |message| ConfigError::Flag { flag, message }
    }
}

#[cfg(test)]
mod tests {
    use super::ConfigError;

    #[test]
    fn messages_are_tokentimes() {
        let flag = ConfigError::flag("bucket")("\"0s\": the duration must be above zero".into());
        assert_eq!(
            flag.to_string(),
            "--bucket: \"0s\": the duration must be above zero"
        );
        assert_eq!(
            ConfigError::NoSuchFile {
                name: "summary".into(),
                hint: " (the subcommand comes first: tokentime summary FILE...)".into()
            }
            .to_string(),
            "summary: no such file (the subcommand comes first: tokentime summary FILE...)"
        );
        assert_eq!(
            ConfigError::ReadingSpeed(-1.5).to_string(),
            "--reading-speed -1.5: must be a positive number of tokens/s"
        );
        assert_eq!(
            ConfigError::CacheHitRatio(0.0).to_string(),
            "--cache-hit-ratio 0: must be in (0, 1]"
        );
        assert_eq!(
            ConfigError::NotASize("1T".into()).to_string(),
            "\"1T\" is not a size (bytes, or a number with K, M or G)"
        );
        assert_eq!(
            ConfigError::SloGroup {
                flag: "--slo",
                text: "ttft:p99<=1s@model=a".into(),
                keys: "model".into(),
                groups: " (add --by KEY to group by KEY)".into(),
            }
            .to_string(),
            "--slo \"ttft:p99<=1s@model=a\": there is no group by [model]; groups are all \
             requests, cache (add --by KEY to group by KEY)"
        );
        assert_eq!(
            ConfigError::from("--quantiles: bad".to_owned()).to_string(),
            "--quantiles: bad"
        );
    }
}

/// The unknown-format message: the names closest to the one given (did you mean), the known
/// names, wrapped to the width of the terminal (`$COLUMNS`, else 100) after `tokentime: `.
fn unknown_format(what: &str, name: &str, known: &str) -> String {
    use std::io::IsTerminal as _;
    let names: Vec<&str> = known.split(", ").collect();
    let close = closest(name, &names);
    let mut s = format!("{what}: unknown format");
    if !close.is_empty() {
        s.push_str(&format!("; did you mean {}?", close.join(" or ")));
    }
    s.push_str(&format!(" (known: {known})"));
    let width = crate::output::compact::output_width(std::io::stderr().is_terminal());
    crate::output::compact::wrap(&s, width, "tokentime: ".len())
}

/// The names nearest `given` by edit distance (ignoring case), at most 3, within a third of
/// its length (at least 1; clap suggests a subcommand alike): `litelm` is `litellm`.
pub(crate) fn closest<'a>(given: &str, names: &[&'a str]) -> Vec<&'a str> {
    let given = given.to_ascii_lowercase();
    let limit = (given.chars().count() / 3).max(1);
    let mut scored: Vec<(usize, &str)> = names
        .iter()
        .map(|&n| (edit_distance(&given, &n.to_ascii_lowercase()), n))
        .filter(|&(d, _)| d <= limit)
        .collect();
    scored.sort_by_key(|&(d, _)| d);
    let best = scored.first().map_or(0, |s| s.0);
    scored
        .into_iter()
        .filter(|&(d, _)| d == best)
        .take(3)
        .map(|(_, n)| n)
        .collect()
}

/// Levenshtein distance: insertions, deletions and substitutions of characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod did_you_mean {
    use super::closest;

    #[test]
    fn the_nearest_names_are_suggested() {
        let names = ["litellm", "llamacpp", "vllm", "vllm-otlp", "otlp", "tgi"];
        assert_eq!(closest("litelm", &names), ["litellm"]);
        assert_eq!(closest("LiteLLM2", &names), ["litellm"]);
        assert_eq!(closest("vlm", &names), ["vllm"]);
        assert!(closest("nope", &names).is_empty());
    }
}
