//! Formats files (`--formats FILE`): user-defined format tables in TOML or JSON, with the same
//! power as the built-in ones ([`crate::format::builtin::tables`]).
//!
//! Owns the file schema, its deserialization into [`FormatSpec`]s and their validation. Reads
//! one file; does nothing else. The schema (TOML shown; JSON is the same tree, e.g.
//! `{"format": [{"name": "inhouse", ...}]}`):
//!
//! ```toml
//! [[format]]
//! name = "inhouse"                       # shown by `tokentime formats`, used by --format
//! about = "our gateway's access log"     # optional one-liner
//! markers = [{ present = "req.t0" }, { path = "kind", equals = "llm" }]   # all must hold
//! error_markers = []                     # optional: an error record that lacks the markers
//! error_when = [{ path = "http.status", at_least = 400 }]                 # any holds
//! cancelled_when = [{ path = "finish", equals = "abort" }]
//! response_cache_when = [{ path = "cache", equals = "HIT" }]
//! streamed_when = { path = "stream", equals = true }      # optional
//! arrival_origin = "gateway"             # arrival (default) | scheduled | gateway
//! ttft_doc = "gateway: t1 - t0"          # optional, for `tokentime formats`
//! cache_doc = "usage.cached"
//! fallback = false                       # true: tried only after every other format
//! id = ["req.id"]                        # optional paths (a string or a list)
//! model = ["model"]
//! fields = [
//!   { field = "arrival", path = "req.t0", unit = "epoch_s" },
//!   { field = "first_token", path = "req.t1", unit = "epoch_s" },
//!   { field = "end", path = "req.t2", unit = "epoch_s" },
//!   { field = "input_tokens", paths = ["usage.in", "usage.cached"], combine = "sum" },
//!   { field = "output_tokens", path = "usage.out" },
//! ]
//! ```
//!
//! Conditions: `{present = PATH}`; `{path = PATH, equals = VALUE}` (VALUE any JSON/TOML value,
//! compared with the line's JSON text of it); `{path = PATH, differs = VALUE}` (present and
//! not VALUE); `{path = PATH, at_least = INTEGER}` (the line's number, or decimal string, is at least it); `{not = CONDITION}`.
//!
//! Fields (`tokentime formats` lists them): instants `arrival`, `scheduled`, `first_token`,
//! `end`, `logged_at` need a timestamp unit (`epoch_s`, `epoch_ms`, `epoch_us`, `epoch_ns`,
//! `rfc3339`, `epoch`); durations `ttft`, `queue`, `prefill`, `decode`, `e2e`, `itl` a
//! duration unit (`s`, `ms`, `us`, `ns`, `duration`); counts `input_tokens`, `cached_tokens`,
//! `evaluated_tokens`, `output_tokens` no unit. Omitted, the unit is `epoch`, `ms` or a count.
//! `combine`: `first` (default: the first present path), `sum` (of the present paths),
//! `floor_ratio` (`floor(a / b)` of two durations, a count), `difference` (`a - b`). Several
//! rules for one field: the first that yields a value wins. Paths are dotted, `\.` for a dot
//! in a key, `[0]` / `[-1]` for the first / last array element.

use crate::format::units::Unit;
use crate::format::{
    Combine, Cond, Field, FieldRule, FormatSpec, RecordSource, RecordWindow, parse_path,
};
use crate::input::shown_path;
use crate::metrics::Origin;
use serde::{Deserialize, Deserializer};
use std::path::Path;

/// The schema of a formats file, printed by `tokentime formats --help` (docs/formats.md has it
/// with examples).
pub(crate) const SCHEMA: &str = "\
Formats files (--formats FILE): TOML [[format]] tables, or JSON {\"format\": [{...}]}. Keys:
  name                 required: the name --format uses (not auto)
  about                one line, shown here
  markers              required: conditions that all hold for a line of the format
  error_markers        conditions of an error record that lacks the markers
  errors_only_when_forced  true: error_markers count only under --format NAME
  skip_when            a list of condition lists: a line is no request when one list holds
                       ([[A, B]]: both hold; [[A], [B]]: either; [A]: A alone)
  skip_label           what those lines are, counted under this name (default: skipped by NAME)
  error_when           conditions: the request failed when any holds
  cancelled_when       conditions: the request was cancelled when any holds
  response_cache_when  conditions: a response cache answered when any holds
  streamed_when        one condition: streamed only when it holds
  arrival_origin       arrival (default), scheduled or gateway
  ttft_doc, cache_doc  text shown here
  fallback             true: tried after every other format
  id, model            a path or a list of paths (the first present is read)
  reason               a path or a list of paths: why a request failed (its error's text)
  fields               [{ field = NAME, path = PATH, unit = UNIT }] or
                       { field = NAME, paths = [PATH, ...], combine = first|sum|floor_ratio|
                       difference|first_or_zero|per_token_after_first }; names and units as
                       --map
  records              a line holds many requests: \"results[*]\" (a path to a list, [*] its
                       elements; or a list of such paths) or { columns = [NAME, ...] } (element i
                       of each named array is request i, with the line's scalar members);
                       markers then hold for the line, and
                       fields, id, model and the conditions for each record
  record_markers       with records, required: conditions that all hold for a record
  record_carry         with records: members copied into each record, the group's, else the top level's (a run's model)
  run_seconds          with records: the path of the run's duration in s at the line's top
                       level (a benchmark result's duration): rates of requests without times
  record_window        with records: { start = PATH, end = PATH, record_start = PATH,
                       record_end = PATH }: only records whose [record_start, record_end]
                       overlaps [start, end] of their group (the element the first [*] takes)
                       are requests (a benchmark's warm-up and cool-down left out)
Conditions: { present = PATH }, { set = PATH } (present and not false, 0 or empty),
{ path = PATH, equals = VALUE }, { path = PATH, differs = VALUE }, { path = PATH, at_least =
INTEGER }, { path = PATH, contains = TEXT }, { not = CONDITION }, { any = [CONDITIONS] }. Paths
are dotted; \\. is a dot in a key,
[0] and [-1] an array's first and last element.";

/// A formats file: `format` is the list of tables.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FormatsFile {
    #[serde(default)]
    format: Vec<FormatSpec>,
}

/// Reads and validates a formats file: JSON when its first non-blank byte is `{`, else TOML.
///
/// # Errors
/// A message naming the file for an I/O error, a syntax error (with its position), an unknown
/// key, field, unit or combine, a clock-domain mismatch, a format without markers, or a
/// duplicate name.
pub(crate) fn load(path: &Path) -> Result<Vec<FormatSpec>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("--formats {}: {e}", shown_path(path)))?;
    parse(&text).map_err(|e| format!("--formats {}: {e}", shown_path(path)))
}

/// Parses and validates the text of a formats file (JSON or TOML).
///
/// # Errors
/// As [`load`], without the file name.
pub(crate) fn parse(text: &str) -> Result<Vec<FormatSpec>, String> {
    let file: FormatsFile = if text.trim_start().starts_with('{') {
        serde_json::from_str(text).map_err(|e| e.to_string())?
    } else {
        toml::from_str(text).map_err(|e| toml_error(text, &e))?
    };
    let mut seen = std::collections::HashSet::new();
    for f in &file.format {
        validate(f)?;
        if !seen.insert(f.name.as_str()) {
            return Err(format!("format {:?} is defined twice", f.name));
        }
    }
    if file.format.is_empty() {
        return Err("no [[format]] table".into());
    }
    let mut formats = file.format;
    for f in &mut formats {
        f.from_file = true;
    }
    Ok(formats)
}

/// Checks what the types cannot: a name, markers, and fields whose units fit.
///
/// # Errors
/// A message naming the format and the problem.
pub(crate) fn validate(f: &FormatSpec) -> Result<(), String> {
    if f.name.is_empty() || f.name == "auto" {
        return Err(format!("format name {:?} is not allowed", f.name));
    }
    if f.markers.is_empty() {
        return Err(format!(
            "format {:?}: needs at least one marker (a line of the format satisfies them all)",
            f.name
        ));
    }
    if f.records.is_some() && f.record_markers.is_empty() {
        return Err(format!(
            "format {:?}: records need record_markers, the conditions a record of the format satisfies",
            f.name
        ));
    }
    if f.records.is_none()
        && !(f.record_markers.is_empty()
            && f.record_carry.is_empty()
            && f.record_window.is_none()
            && f.run_seconds.is_empty())
    {
        return Err(format!(
            "format {:?}: record_markers, record_carry, record_window and run_seconds go with records",
            f.name
        ));
    }
    if f.skip_when.is_empty() && !f.skip_label.is_empty() {
        return Err(format!(
            "format {:?}: skip_label names the lines skip_when leaves out, and there is no skip_when",
            f.name
        ));
    }
    Ok(())
}

/// Checks a field's unit and combine against the field's kind.
fn check_rule(field: Field, unit: Unit, combine: Combine, n_paths: usize) -> Result<(), String> {
    let name = field.name();
    if n_paths == 0 {
        return Err(format!("field {name}: no path"));
    }
    if matches!(
        combine,
        Combine::FloorRatio | Combine::Difference | Combine::PerTokenAfterFirst
    ) && n_paths != 2
    {
        return Err(format!(
            "field {name}: combine {} takes exactly two paths",
            combine.name()
        ));
    }
    if combine == Combine::PerTokenAfterFirst && (field.is_count() || field.is_instant()) {
        return Err(format!(
            "field {name}: per_token_after_first makes a duration from a duration per token and a token count"
        ));
    }
    if combine == Combine::FloorRatio {
        if !field.is_count() || !unit.is_duration() {
            return Err(format!(
                "field {name}: floor_ratio makes a token count from two durations (a count field with a duration unit)"
            ));
        }
        return Ok(());
    }
    if field.is_instant() {
        if !unit.is_timestamp() {
            return Err(format!(
                "field {name} is an instant and needs a timestamp unit (epoch_s, epoch_ms, epoch_us, epoch_ns, rfc3339, epoch), not {}",
                unit.name()
            ));
        }
        if matches!(combine, Combine::Sum | Combine::Difference) {
            return Err(format!(
                "field {name}: instants cannot be added or subtracted"
            ));
        }
    } else if field.is_count() {
        if unit != Unit::Count {
            return Err(format!("field {name} is a token count; give no unit"));
        }
    } else if !unit.is_duration() {
        return Err(format!(
            "field {name} is a duration and needs a duration unit (s, ms, us, ns, duration), not {}",
            unit.name()
        ));
    }
    Ok(())
}

/// A path list as written in a file: one string or a list of strings.
#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn paths(self) -> Vec<Vec<String>> {
        match self {
            OneOrMany::One(s) => vec![parse_path(&s)],
            OneOrMany::Many(v) => v.iter().map(|s| parse_path(s)).collect(),
        }
    }
}

/// Deserializes paths written as one dotted string or a list of them.
///
/// # Errors
/// The deserializer's, for anything but a string or a list of strings.
pub(crate) fn de_paths<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Vec<String>>, D::Error> {
    Ok(OneOrMany::deserialize(d)?.paths())
}

/// Deserializes `skip_when`, a list of condition lists. A flat list of one condition is that
/// condition's list; a flat list of several is refused with both readings spelled out (all of
/// them, or any one), since either could be meant.
///
/// # Errors
/// Anything else, or a flat list of several conditions.
pub(crate) fn de_skip_when<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Vec<Cond>>, D::Error> {
    use serde::de::Error;
    let items = Vec::<serde_json::Value>::deserialize(d)?;
    let flat = items.iter().filter(|v| v.is_object()).count();
    if flat > 1 {
        return Err(D::Error::custom(format!(
            "skip_when is a list of condition lists, and this one has {flat} conditions \
             outside a list: write skip_when = [[A, B]] to skip a line where all hold, \
             or [[A], [B]] where any one holds"
        )));
    }
    items
        .into_iter()
        .map(|v| match v {
            serde_json::Value::Object(_) => Ok(vec![Cond::deserialize(v)?]),
            other => Vec::<Cond>::deserialize(other),
        })
        .collect::<Result<_, serde_json::Error>>()
        .map_err(|e| D::Error::custom(format!("skip_when: {e}")))
}

/// A records source as written in a file: a path with `[*]` (`"results[*]"`), a list of them,
/// or `{ columns = [NAME, ...] }`.
#[derive(Deserialize)]
#[serde(untagged)]
enum RecordsDef {
    One(String),
    Many(Vec<String>),
    Columns { columns: Vec<String> },
}

/// Deserializes `records` ([`RecordsDef`]).
///
/// # Errors
/// Anything else, or a path without `[*]`.
pub(crate) fn de_records<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<RecordSource>, D::Error> {
    let patterns = match RecordsDef::deserialize(d)? {
        RecordsDef::Columns { columns } => return Ok(Some(RecordSource::Columns(columns))),
        RecordsDef::One(s) => vec![s],
        RecordsDef::Many(v) => v,
    };
    let mut out = vec![];
    for s in patterns {
        let pattern = crate::format::record_pattern(&s);
        if !pattern.iter().any(|seg| seg == "*") || pattern.first().is_none_or(|s| s == "*") {
            return Err(serde::de::Error::custom(format!(
                "records {s:?}: a path to a list, with [*] for its elements (results[*])"
            )));
        }
        out.push(pattern);
    }
    Ok(Some(RecordSource::Each(out)))
}

/// A measurement window as written in a file: four paths.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WindowDef {
    start: String,
    end: String,
    record_start: String,
    record_end: String,
}

/// Deserializes `record_window` ([`WindowDef`]): the group's `start` and `end`, the record's
/// `record_start` and `record_end`, each a dotted path.
///
/// # Errors
/// A missing or unknown key, or an empty path.
pub(crate) fn de_window<'de, D: Deserializer<'de>>(d: D) -> Result<Option<RecordWindow>, D::Error> {
    let w = WindowDef::deserialize(d)?;
    let path = |key: &str, s: &str| {
        if s.is_empty() {
            Err(serde::de::Error::custom(format!(
                "record_window {key}: an empty path"
            )))
        } else {
            Ok(parse_path(s))
        }
    };
    Ok(Some(RecordWindow {
        start: path("start", &w.start)?,
        end: path("end", &w.end)?,
        record_start: path("record_start", &w.record_start)?,
        record_end: path("record_end", &w.record_end)?,
    }))
}

/// Deserializes an [`Origin`] from `"arrival"`, `"scheduled"` or `"gateway"`.
///
/// # Errors
/// An unknown name.
pub(crate) fn de_origin<'de, D: Deserializer<'de>>(d: D) -> Result<Origin, D::Error> {
    let s = String::deserialize(d)?;
    match s.as_str() {
        "arrival" => Ok(Origin::Arrival),
        "scheduled" => Ok(Origin::Scheduled),
        "gateway" => Ok(Origin::Gateway),
        _ => Err(serde::de::Error::custom(format!(
            "arrival_origin {s:?}: expected arrival, scheduled or gateway"
        ))),
    }
}

/// A TOML error as the `toml` crate writes it, except that the error of a field rule, which
/// it places at the start of the `fields` list, is placed at the rule (the first `{ ... }` of
/// the list that names the field the message names, and the unit or combine it names).
fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let (Some(span), msg) = (e.span(), e.message()) else {
        return e.to_string();
    };
    let named = msg
        .strip_prefix("unknown field \"")
        .and_then(|m| m.split_once('"'))
        .map(|(f, _)| f)
        .or_else(|| {
            let rest = msg.strip_prefix("field ")?;
            rest.split([':', ' ']).next()
        });
    let at = named.and_then(|field| {
        let after = text.get(span.start..)?;
        if !after.starts_with('[') {
            return None;
        }
        let re = regex::Regex::new(&format!(
            r#"\{{[^{{}}\n]*\bfield\s*=\s*"{}"[^{{}}\n]*\}}"#,
            regex::escape(field)
        ))
        .ok()?;
        // Of several rules of the field, the one that holds the unit or combine named.
        let value = ["unknown unit ", "unknown combine "]
            .iter()
            .find_map(|k| Some(msg.split_once(k)?.1.split_once(' ')?.0));
        let m = re
            .find_iter(after)
            .find(|m| value.is_none_or(|v| m.as_str().contains(v)))?;
        Some((span.start + m.start())..(span.start + m.end()))
    });
    let Some(at) = at else {
        return e.to_string();
    };
    let line_start = text[..at.start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[at.start..]
        .find('\n')
        .map_or(text.len(), |i| at.start + i);
    let line_no = text[..at.start].matches('\n').count() + 1;
    let column = text[line_start..at.start].chars().count() + 1;
    let carets = text[at.start..at.end.min(line_end)].chars().count().max(1);
    let gutter = " ".repeat(line_no.to_string().len() + 1);
    format!(
        "TOML parse error at line {line_no}, column {column}\n{gutter}|\n{line_no} | {}\n{gutter}| \
         {}{}\n{msg}\n",
        &text[line_start..line_end],
        " ".repeat(column - 1),
        "^".repeat(carets)
    )
}

/// A field rule as written in a file (see the module docs).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldRuleDef {
    field: String,
    #[serde(alias = "path")]
    paths: OneOrManyDef,
    #[serde(default)]
    unit: Option<String>,
    #[serde(default)]
    combine: Option<String>,
}

/// [`OneOrMany`] with `Debug`, for [`FieldRuleDef`].
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrManyDef {
    One(String),
    Many(Vec<String>),
}

impl TryFrom<FieldRuleDef> for FieldRule {
    type Error = String;
    fn try_from(d: FieldRuleDef) -> Result<FieldRule, String> {
        let field = Field::from_name(&d.field).ok_or_else(|| {
            let names: Vec<_> = Field::ALL.iter().map(|f| f.name()).collect();
            let key = match d.field.as_str() {
                f @ ("id" | "model" | "reason") => {
                    format!("; {f} is a key of the format, {f} = PATH or [PATHS], not a field")
                }
                "stream" | "streamed" => {
                    "; whether a response was streamed is the format's streamed_when = CONDITION"
                        .to_owned()
                }
                _ => String::new(),
            };
            format!(
                "unknown field {:?} (known: {}){key}",
                d.field,
                names.join(", ")
            )
        })?;
        let combine = match &d.combine {
            None => Combine::First,
            Some(c) => Combine::from_name(c).ok_or_else(|| {
                format!(
                    "field {}: unknown combine {c:?} (first, sum, floor_ratio, difference, first_or_zero, per_token_after_first)",
                    d.field
                )
            })?,
        };
        let unit = match &d.unit {
            None if combine == Combine::FloorRatio => Unit::DurationStr,
            None => field.default_unit(),
            Some(u) => Unit::from_name(u).ok_or_else(|| {
                format!("field {}: unknown unit {u:?} (epoch_s, epoch_ms, epoch_us, epoch_ns, rfc3339, epoch, s, ms, us, ns, duration, count)", d.field)
            })?,
        };
        let paths = match d.paths {
            OneOrManyDef::One(s) => OneOrMany::One(s),
            OneOrManyDef::Many(v) => OneOrMany::Many(v),
        }
        .paths();
        check_rule(field, unit, combine, paths.len())?;
        Ok(FieldRule {
            field,
            paths,
            unit,
            combine,
        })
    }
}

/// A condition as written in a file (see the module docs).
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a condition: { present = PATH }, { path = PATH, equals = VALUE }, \
                 { path = PATH, at_least = N }, { not = CONDITION }, ..."
)]
pub struct CondDef {
    #[serde(default)]
    present: Option<String>,
    #[serde(default)]
    set: Option<String>,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    equals: Option<serde_json::Value>,
    #[serde(default)]
    differs: Option<serde_json::Value>,
    #[serde(default)]
    at_least: Option<i64>,
    #[serde(default)]
    contains: Option<String>,
    #[serde(default)]
    not: Option<Box<CondDef>>,
    #[serde(default)]
    any: Option<Vec<CondDef>>,
}

impl TryFrom<CondDef> for Cond {
    type Error = String;
    fn try_from(d: CondDef) -> Result<Cond, String> {
        let path = d.path.as_deref().map(parse_path);
        let need_path = |what: &str| {
            path.clone()
                .ok_or_else(|| format!("condition with {what} needs a path"))
        };
        let json = |v: &serde_json::Value| serde_json::to_string(v).map_err(|e| e.to_string());
        let mut found = Vec::new();
        if let Some(p) = &d.present {
            found.push(Cond::Present(parse_path(p)));
        }
        if let Some(p) = &d.set {
            found.push(Cond::Set(parse_path(p)));
        }
        if let Some(v) = &d.equals {
            found.push(Cond::Equals(need_path("equals")?, json(v)?));
        }
        if let Some(v) = &d.differs {
            found.push(Cond::Differs(need_path("differs")?, json(v)?));
        }
        if let Some(min) = d.at_least {
            found.push(Cond::AtLeast(need_path("at_least")?, min));
        }
        if let Some(v) = d.contains {
            found.push(Cond::Contains(need_path("contains")?, v));
        }
        if let Some(inner) = d.not {
            found.push(Cond::Not(Box::new(Cond::try_from(*inner)?)));
        }
        if let Some(each) = d.any {
            if each.is_empty() {
                return Err("any needs at least one condition".into());
            }
            let each: Result<Vec<Cond>, String> = each.into_iter().map(Cond::try_from).collect();
            found.push(Cond::Any(each?));
        }
        match found.len() {
            1 if d.path.is_none()
                || !matches!(
                    found[0],
                    Cond::Present(_) | Cond::Set(_) | Cond::Not(_) | Cond::Any(_)
                ) =>
            {
                Ok(found.remove(0))
            }
            1 => Err(
                "a path is given but the condition does not use it (present and set take their own path)"
                    .into(),
            ),
            _ => {
                Err("a condition is exactly one of: present, set, equals, differs, at_least, contains, not, any".into())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_rules_error_points_at_the_rule() {
        let t = r#"[[format]]
name = "x"
markers = [{ present = "a" }]
fields = [
  { field = "end", path = "a" },
  { field = "output_tokens", path = "n" },
  { field = "output_tokens", path = "m", unit = "cnt" },
  { field = "ende", path = "b" },
]
"#;
        let err = parse(&t.replace(", unit = \"cnt\"", "")).unwrap_err();
        assert_eq!(
            err,
            "TOML parse error at line 8, column 3\n  |\n8 |   { field = \"ende\", path = \"b\" },\n  \
             |   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\nunknown field \"ende\" (known: arrival, scheduled, \
             first_token, end, ttft, queue, prefill, decode, e2e, input_tokens, cached_tokens, \
             evaluated_tokens, output_tokens, logged_at, itl, ttfot)\n"
        );
        // Of two rules of one field, the one with the unit named.
        let err = parse(&t.replace("ende", "end")).unwrap_err();
        assert!(
            err.starts_with("TOML parse error at line 7, column 3\n")
                && err.contains("^^^\nfield output_tokens: unknown unit \"cnt\""),
            "{err}"
        );
        // Other errors are placed where the toml crate places them.
        let err = parse(&t.replace("unit = \"cnt\"", "unti = \"count\"")).unwrap_err();
        assert!(
            err.starts_with("TOML parse error at line 7, column 42\n"),
            "{err}"
        );
    }

    #[test]
    fn any_and_per_token_after_first() {
        let t = r#"
[[format]]
name = "x"
markers = [{ any = [{ path = "o", equals = "ok" }, { path = "o", equals = "error" }] }]
fields = [
  { field = "decode", paths = ["tpot", "n"], combine = "per_token_after_first", unit = "ms" },
]
"#;
        let f = &parse(t).unwrap()[0];
        assert_eq!(
            f.markers[0].to_string(),
            r#"any of (o == "ok", o == "error")"#
        );
        assert_eq!(f.fields[0].combine, Combine::PerTokenAfterFirst);
        let set = t.replace(
            "markers = [",
            "error_when = [{ set = \"err\" }]\nmarkers = [",
        );
        let f = &parse(&set).unwrap()[0];
        assert_eq!(f.error_when, vec![Cond::Set(vec!["err".into()])]);
        assert_eq!(f.error_when[0].to_string(), "err is set");
        let bad = |fields: &str| {
            parse(&format!(
                "[[format]]\nname = \"x\"\nmarkers = [{{ any = [] }}]\nfields = [{fields}]"
            ))
            .unwrap_err()
        };
        assert!(
            bad("").contains("any needs at least one condition"),
            "{}",
            bad("")
        );
        let one_path = r#"
[[format]]
name = "x"
markers = [{ present = "a" }]
fields = [{ field = "decode", paths = ["tpot"], combine = "per_token_after_first" }]
"#;
        assert!(parse(one_path).unwrap_err().contains("exactly two paths"));
        let count = one_path.replace(
            r#"field = "decode", paths = ["tpot"]"#,
            r#"field = "output_tokens", paths = ["a", "b"]"#,
        );
        assert!(
            parse(&count)
                .unwrap_err()
                .contains("per_token_after_first makes a duration")
        );
    }

    #[test]
    fn toml_and_json_give_the_same_spec() {
        let t = r#"
[[format]]
name = "x"
markers = [{ present = "a.t0" }, { not = { path = "kind", equals = "health" } }]
error_when = [{ path = "status", at_least = 400 }]
arrival_origin = "gateway"
fields = [
  { field = "arrival", path = "a.t0", unit = "epoch_s" },
  { field = "input_tokens", paths = ["u.in", "u.cached"], combine = "sum" },
]
"#;
        let j = r#"{"format":[{"name":"x",
 "markers":[{"present":"a.t0"},{"not":{"path":"kind","equals":"health"}}],
 "error_when":[{"path":"status","at_least":400}], "arrival_origin":"gateway",
 "fields":[{"field":"arrival","path":"a.t0","unit":"epoch_s"},
           {"field":"input_tokens","paths":["u.in","u.cached"],"combine":"sum"}]}]}"#;
        let a = parse(t).unwrap();
        assert_eq!(a, parse(j).unwrap());
        assert_eq!(
            a[0].markers[1],
            Cond::Not(Box::new(Cond::Equals(
                vec!["kind".into()],
                "\"health\"".into()
            )))
        );
        assert_eq!(a[0].fields[1].combine, Combine::Sum);
        assert_eq!(a[0].arrival_origin, Origin::Gateway);
    }

    #[test]
    fn records_are_lists_or_columns() {
        let t = r#"
[[format]]
name = "x"
markers = [{ present = "run.results" }]
records = "run.results[*]"
record_markers = [{ present = "t0" }]
record_carry = ["model"]
error_when = [{ not = { path = "ok", equals = true } }]
fields = [{ field = "arrival", path = "t0", unit = "epoch_s" }]
"#;
        let a = parse(t).unwrap();
        assert_eq!(
            a[0].records,
            Some(RecordSource::Each(vec![vec![
                "run".into(),
                "results".into(),
                "*".into()
            ]]))
        );
        assert_eq!(a[0].record_carry, ["model"]);
        let c = t.replace("\"run.results[*]\"", "{ columns = [\"ttfts\", \"itls\"] }");
        assert_eq!(
            parse(&c).unwrap()[0].records,
            Some(RecordSource::Columns(vec!["ttfts".into(), "itls".into()]))
        );
        let bad = |from: &str, to: &str| parse(&t.replace(from, to)).unwrap_err();
        assert!(bad("run.results[*]", "run.results").contains("[*]"));
        assert!(bad("record_markers = [{ present = \"t0\" }]", "").contains("need record_markers"));
        assert!(bad("records = \"run.results[*]\"", "").contains("go with records"));
    }

    #[test]
    fn mistakes_are_named() {
        let bad = |body: &str| parse(&format!("[[format]]\nname = \"x\"\n{body}")).unwrap_err();
        assert!(bad("markers = []\nfields = []").contains("at least one marker"));
        assert!(
            bad("markers = [{present = \"a\"}]\nskip_label = \"probes\"\nfields = []")
                .contains("there is no skip_when")
        );
        assert!(
            bad("markers = [{present = \"a\"}]\nfields = [{field = \"arrival\", path = \"a\", unit = \"ms\"}]")
                .contains("timestamp unit")
        );
        assert!(
            bad("markers = [{present = \"a\"}]\nfields = [{field = \"ttft\", path = \"a\", unit = \"epoch_s\"}]")
                .contains("duration unit")
        );
        assert!(
            bad("markers = [{present = \"a\"}]\nfields = [{field = \"bogus\", path = \"a\"}]")
                .contains("unknown field")
        );
        assert!(
            bad("markers = [{present = \"a\", path = \"b\", equals = 1}]\nfields = []")
                .contains("exactly one")
        );
        assert!(
            bad("markers = [{present = \"a\"}]\nfields = []\nsurprise = 1").contains("surprise")
        );
        assert!(
            bad("markers = [{present = \"a\"}]\nfields = [{field = \"output_tokens\", path = \"a\", combine = \"floor_ratio\"}]")
                .contains("exactly two")
        );
    }

    #[test]
    fn skip_when_takes_one_condition_without_its_list_and_names_the_two_readings_of_several() {
        let spec = |skip: &str| {
            parse(&format!(
                "[[format]]\nname = \"x\"\nmarkers = [{{present = \"a\"}}]\nfields = []\nskip_when = {skip}"
            ))
        };
        let warm = Cond::Equals(vec!["kind".into()], "\"warmup\"".into());
        let probe = Cond::Present(vec!["probe".into()]);
        let one = spec("[{ path = \"kind\", equals = \"warmup\" }]").unwrap();
        assert_eq!(one[0].skip_when, [vec![warm.clone()]]);
        let both = spec("[[{ path = \"kind\", equals = \"warmup\" }, { present = \"probe\" }]]");
        assert_eq!(
            both.unwrap()[0].skip_when,
            [vec![warm.clone(), probe.clone()]]
        );
        let either = spec("[{ path = \"kind\", equals = \"warmup\" }, [{ present = \"probe\" }]]");
        assert_eq!(
            either.unwrap()[0].skip_when,
            [vec![warm], vec![probe.clone()]]
        );
        let flat = spec("[{ path = \"kind\", equals = \"warmup\" }, { present = \"probe\" }]");
        let e = flat.unwrap_err();
        assert!(e.contains("2 conditions outside a list"), "{e}");
        assert!(e.contains("[[A, B]]") && e.contains("[[A], [B]]"), "{e}");
        // A mistake inside a condition is still named.
        let e = spec("[[{ path = \"kind\", equalz = 1 }]]").unwrap_err();
        assert!(e.contains("equalz"), "{e}");
        // JSON formats files read the same.
        let json = r#"{"format": [{"name": "x", "markers": [{"present": "a"}], "fields": [],
            "skip_when": [{"present": "probe"}]}]}"#;
        assert_eq!(parse(json).unwrap()[0].skip_when, [vec![probe]]);
    }
}
