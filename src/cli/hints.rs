//! Hints for arguments clap refused: an option of another subcommand given without it
//! (`tokentime --every 10s`), and other tools' words for tokentime's options
//! (`--percentiles`, `--group-by`).

use clap::CommandFactory;
use clap::error::{ContextKind, ContextValue, ErrorKind};

/// Other tools' words for tokentime's options (clap suggests only options spelled alike).
const SYNONYMS: &[(&str, &str)] = &[
    ("percentiles", "quantiles"),
    ("percentile", "quantiles"),
    ("pct", "quantiles"),
    ("group-by", "by"),
    ("groupby", "by"),
    ("group", "by"),
    ("output-format", "output"),
];

/// tokentime's message (without the `tokentime: ` prefix) for an argument clap refused as
/// unknown, when it has a better one than clap's: `None` for any other error.
pub fn args_hint(e: &clap::Error) -> Option<String> {
    if e.kind() == ErrorKind::InvalidValue {
        return value_hint(e);
    }
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    let name = arg.strip_prefix("--")?.split('=').next()?;
    if let Some((_, ours)) = SYNONYMS.iter().find(|(w, _)| *w == name) {
        return Some(format!("unknown option --{name}: did you mean --{ours}?"));
    }
    let cli = crate::cli::Cli::command();
    let has = |c: &clap::Command| {
        c.get_arguments()
            .any(|a| !a.is_hide_set() && a.get_long() == Some(name))
    };
    let mut owners: Vec<String> = Vec::new();
    let mut example = None;
    if has(&cli) {
        owners.push("`tokentime` (enrich)".to_owned());
        example = Some("tokentime".to_owned());
    }
    for sub in cli.get_subcommands().filter(|s| has(s)) {
        owners.push(format!("`tokentime {}`", sub.get_name()));
        example.get_or_insert_with(|| format!("tokentime {}", sub.get_name()));
    }
    let example = example?;
    let owners = and_list(owners)?;
    Some(format!(
        "--{name} is an option of {owners} ({example} --{name} ... FILE...)"
    ))
}

/// A value refused for an option of `tokentime` (enrich) that a subcommand's option of the
/// same name takes (`tokentime -o json summary FILE`: the `-o` given before `summary` is
/// enrich's): which subcommand takes it.
fn value_hint(e: &clap::Error) -> Option<String> {
    let (Some(ContextValue::String(arg)), Some(ContextValue::String(value))) = (
        e.get(ContextKind::InvalidArg),
        e.get(ContextKind::InvalidValue),
    ) else {
        return None;
    };
    let cli = crate::cli::Cli::command();
    let top = cli
        .get_arguments()
        .find(|a| arg.starts_with(&format!("--{} ", a.get_long().unwrap_or("\0"))))?;
    let long = top.get_long()?;
    let takes = |c: &clap::Command| {
        c.get_arguments().any(|a| {
            a.get_long() == Some(long)
                && a.get_possible_values()
                    .iter()
                    .any(|p| p.matches(value, false))
        })
    };
    let subs: Vec<&str> = cli
        .get_subcommands()
        .filter(|s| takes(s))
        .map(clap::Command::get_name)
        .collect();
    let first = *subs.first()?;
    let owners = and_list(subs.iter().map(|s| format!("`tokentime {s}`")).collect())?;
    let short = top
        .get_short()
        .map_or(format!("--{long}"), |c| format!("-{c}"));
    Some(format!(
        "{short} {value} is an option of {} (tokentime {first} {short} {value} FILE...); given \
         before the subcommand it is `tokentime`'s (enrich), which takes {}",
        owners,
        top.get_possible_values()
            .iter()
            .map(|p| p.get_name().to_owned())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// `a`, `a and b`, `a, b and c`; `None` when empty.
fn and_list(mut items: Vec<String>) -> Option<String> {
    let last = items.pop()?;
    Some(if items.is_empty() {
        last
    } else {
        format!("{} and {last}", items.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::args_hint;
    use crate::cli::Cli;
    use clap::Parser;

    fn hint(args: &[&str]) -> Option<String> {
        let e = Cli::try_parse_from(std::iter::once("tokentime").chain(args.iter().copied()))
            .unwrap_err();
        args_hint(&e)
    }

    #[test]
    fn hints_name_the_option_meant() {
        assert_eq!(
            hint(&["--bucket", "5m"]).as_deref(),
            Some(
                "--bucket is an option of `tokentime summary`, `tokentime merge` and \
                 `tokentime report` (tokentime summary --bucket ... FILE...)"
            )
        );
        assert_eq!(
            hint(&["summary", "--key", "x"]).as_deref(),
            Some("--key is an option of `tokentime` (enrich) (tokentime --key ... FILE...)")
        );
        assert_eq!(
            hint(&["summary", "--group-by=model"]).as_deref(),
            Some("unknown option --group-by: did you mean --by?")
        );
        // clap's own message where it has a suggestion, or for other errors.
        assert_eq!(hint(&["summary", "--quantile", "99"]), None);
        assert_eq!(hint(&["summary", "--nonsense"]), None);
        assert_eq!(hint(&["-o", "bogus"]), None);
        assert_eq!(
            hint(&["-o", "json", "summary", "x"]).as_deref(),
            Some(
                "-o json is an option of `tokentime summary`, `tokentime merge` and `tokentime diff` \
                 (tokentime summary -o json FILE...); given before the subcommand it is \
                 `tokentime`'s (enrich), which takes enrich, csv, tsv, jsonl"
            )
        );
    }
}
