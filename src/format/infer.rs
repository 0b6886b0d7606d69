//! The `inferred` format: a [`FormatSpec`] learned from a sample of a log no format knows.
//!
//! Owns the field vocabulary that per-request logs share (`ttft`, `e2e_latency`,
//! `num_prompt_tokens`, `start_time`, ...), found at any depth of each sample object, and the
//! inference of each field's unit: from the name's suffix (`_s`, `_ms`, `_us`, `_ns`, ...), from a
//! `{"value": .., "unit": ..}` object, from duration strings (`"735.2ms"`), and where none says,
//! from cross-checks on the values: an equality with wall-clock instants of the same line (E2E =
//! end - start within a millisecond), or a bound that only one unit meets tightly (TTFT <= E2E,
//! a TPOT times the output tokens fits inside the E2E). A field is mapped only when its name and
//! its values agree on every sample line that has it; anything else is left out with a reason.
//! Pure: the caller gathers the sample (`crate::app`) and compiles the spec like any other.

use crate::format::units::{Instant, Unit, decode_count, decode_instant, decode_ns};
use crate::format::{Combine, Cond, Field, FieldRule, FormatSpec, path_str};
use crate::metrics::Origin;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Sample lines (records) inference reads at most.
pub(crate) const SAMPLE_LINES: usize = 1000;
/// Sample bytes inference reads at most.
pub(crate) const SAMPLE_BYTES: usize = 1 << 20;
/// Objects nested deeper than this are not searched.
const MAX_DEPTH: usize = 8;
/// Two times agree when they differ by at most this (ns).
const TOLERANCE_NS: i64 = 1_000_000;
/// The duration units a number without one may be in, smallest first.
const DURATION_UNITS: [Unit; 4] = [Unit::Ns, Unit::Us, Unit::Ms, Unit::S];

/// What a vocabulary name stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Target {
    /// A canonical field (an instant, a duration or a count).
    Field(FieldKey),
    /// A time per output token: not a field of the timeline, only a check on the E2E's unit.
    Tpot,
}

/// [`Field`] as an ordered key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct FieldKey(u8);

impl FieldKey {
    fn of(f: Field) -> Self {
        FieldKey(f as u8)
    }
    fn field(self) -> Field {
        Field::ALL
            .into_iter()
            .find(|f| *f as u8 == self.0)
            .unwrap_or(Field::E2e)
    }
}

impl Target {
    fn name(self) -> &'static str {
        match self {
            Target::Field(k) => k.field().name(),
            Target::Tpot => "tpot",
        }
    }
    fn is(self, f: Field) -> bool {
        self == Target::Field(FieldKey::of(f))
    }
}

/// A field inference mapped: where, in which unit, and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mapped {
    /// The canonical field, or `tpot` (a check only).
    pub(crate) what: &'static str,
    /// The paths read, the first present wins.
    pub(crate) paths: Vec<Vec<String>>,
    /// The unit.
    pub(crate) unit: Unit,
    /// Where the unit came from (`the name`, `{value, unit}`, `e2e = end - arrival on 12 of 12 lines`).
    pub(crate) how: String,
}

/// What inference made of a sample.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Inference {
    /// The format, `None` when no time field could be mapped.
    pub(crate) spec: Option<FormatSpec>,
    /// Objects in the sample.
    pub(crate) lines: usize,
    /// The fields mapped (and `tpot`, used only as a check).
    pub(crate) mapped: Vec<Mapped>,
    /// Names that look like a field but were not mapped: (path, field, reason).
    pub(crate) unmapped: Vec<(String, &'static str, String)>,
    /// The checks on the values, with how many lines backed each (`ttft <= e2e: 12 of 12
    /// lines`).
    pub(crate) checks: Vec<String>,
    /// Sample lines with both a TTFT and an E2E, and how many of them have TTFT <= E2E.
    pub(crate) ttft_e2e: (usize, usize),
    /// Sample lines with both an arrival and an end instant, and how many of them end at or
    /// after their arrival.
    pub(crate) spans: (usize, usize),
}

impl Inference {
    /// Whether `--format auto` may use the format: it reads both a TTFT and an E2E, and on
    /// at least two sample lines that have both, TTFT <= E2E holds on every one but at most one
    /// in [`UNREADABLE_SHARE`] (a log's own impossible values: an E2E of `-5`, null on its line).
    pub(crate) fn fit_for_auto(&self) -> bool {
        self.spec.is_some() && holds_on_most(self.ttft_e2e)
    }

    /// Whether `--format auto` may use the format on lines a fallback format claimed without
    /// one duration (an OpenAI `usage` object beside timing under names of the log's own):
    /// [`Inference::fit_for_auto`], or an E2E from two clock readings, an arrival and an end,
    /// which need no unit check (RFC 3339 text, or epoch numbers read by magnitude): on at least
    /// two sample lines that have both, the end is not before the arrival on every one but at
    /// most one in [`UNREADABLE_SHARE`].
    pub(crate) fn fit_beside_fallback(&self) -> bool {
        self.fit_for_auto() || (self.spec.is_some() && holds_on_most(self.spans))
    }
}

/// Whether a check made on `lines` sample lines and holding on `held` of them backs a mapping:
/// two lines at least, and it fails on at most one in [`UNREADABLE_SHARE`].
fn holds_on_most((lines, held): (usize, usize)) -> bool {
    lines >= 2 && (lines - held) * UNREADABLE_SHARE <= lines
}

/// How many of `results` there are, and how many hold.
fn tally(results: &[bool]) -> (usize, usize) {
    (results.len(), results.iter().filter(|&&b| b).count())
}

/// One leaf of a sample object: its raw JSON text, and the unit of a `{value, unit}` object.
#[derive(Debug, Clone)]
struct Leaf {
    raw: String,
    unit: Option<String>,
}

/// A name of the vocabulary found in the sample.
#[derive(Debug, Clone)]
struct Candidate {
    /// The path read (for a `{value, unit}` object, its `value`).
    path: Vec<String>,
    target: Target,
    name_unit: Option<Unit>,
    /// The raw value on each sample line (`None` where absent or null).
    values: Vec<Option<Leaf>>,
    unit: Option<Unit>,
    how: String,
}

/// `startTime` -> `start_time`, `TTFT` -> `ttft`, `latencyMs` -> `latency_ms`.
pub(super) fn snake(key: &str) -> String {
    let mut s = String::with_capacity(key.len() + 4);
    let mut prev_lower = false;
    for c in key.chars() {
        if c.is_ascii_uppercase() && prev_lower {
            s.push('_');
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        s.push(if c == '-' {
            '_'
        } else {
            c.to_ascii_lowercase()
        });
    }
    s
}

/// The unit a name's suffix gives, and the name without it (`ttft_ms` -> (`ttft`, ms);
/// `time_to_first_token_in_ms` -> (`time_to_first_token`, ms)).
pub(super) fn strip_unit(name: &str) -> (&str, Option<Unit>) {
    const SUFFIXES: [(&str, Unit); 17] = [
        ("_nanoseconds", Unit::Ns),
        ("_nanos", Unit::Ns),
        ("_ns", Unit::Ns),
        ("_microseconds", Unit::Us),
        ("_micros", Unit::Us),
        ("_usec", Unit::Us),
        ("_us", Unit::Us),
        ("_milliseconds", Unit::Ms),
        ("_millis", Unit::Ms),
        ("_msec", Unit::Ms),
        ("_ms", Unit::Ms),
        ("_seconds", Unit::S),
        ("_secs", Unit::S),
        ("_sec", Unit::S),
        ("_s", Unit::S),
        ("_nsec", Unit::Ns),
        ("_millisec", Unit::Ms),
    ];
    for (suffix, unit) in SUFFIXES {
        if let Some(stem) = name.strip_suffix(suffix)
            && !stem.is_empty()
        {
            return (stem.strip_suffix("_in").unwrap_or(stem), Some(unit));
        }
    }
    (name, None)
}

/// The timestamp unit of an instant whose name says a duration unit (`start_time_ms`).
fn epoch_unit(u: Unit) -> Unit {
    match u {
        Unit::S => Unit::EpochS,
        Unit::Ms => Unit::EpochMs,
        Unit::Us => Unit::EpochUs,
        Unit::Ns => Unit::EpochNs,
        other => other,
    }
}

/// What a key names, with the unit its suffix gives.
fn classify_key(key: &str) -> Option<(Target, Option<Unit>)> {
    let name = snake(key);
    let (stem, unit) = strip_unit(&name);
    let f = |f: Field| Some((Target::Field(FieldKey::of(f)), unit));
    match stem {
        // A gateway's time to the first byte of a streamed answer: its first chunk.
        "ttft" | "time_to_first_token" | "first_token_latency" | "ttfb" | "time_to_first_byte" => {
            return f(Field::Ttft);
        }
        "e2e" | "e2e_latency" | "end_to_end_latency" | "latency" | "request_latency"
        | "response_time" | "total_time" | "duration" | "request_duration" => return f(Field::E2e),
        "queue" | "queue_time" | "queued_time" | "time_in_queue" | "queue_duration" => {
            return f(Field::Queue);
        }
        "prefill" | "prefill_time" | "prefill_latency" => return f(Field::Prefill),
        "decode" | "decode_time" | "decode_latency" => return f(Field::Decode),
        "tpot" | "tbt" | "time_per_output_token" => return Some((Target::Tpot, unit)),
        _ if is_logged_at(stem) => {
            return Some((
                Target::Field(FieldKey::of(Field::LoggedAt)),
                unit.map(epoch_unit),
            ));
        }
        _ => {}
    }
    if unit.is_none()
        && let Some(field) = count_field(stem)
    {
        return Some((Target::Field(FieldKey::of(field)), None));
    }
    instant_field(stem).map(|field| (Target::Field(FieldKey::of(field)), unit.map(epoch_unit)))
}

/// The names a log line's own time goes by (`ts`, `timestamp`, `@timestamp`, `created_at`):
/// when the line was written, the request's end where no end is logged. Read at the root only
/// (a nested `timestamp` belongs to whatever object holds it).
fn is_logged_at(stem: &str) -> bool {
    matches!(
        stem,
        "ts" | "timestamp"
            | "@timestamp"
            | "time"
            | "datetime"
            | "logged_at"
            | "log_time"
            | "log_timestamp"
            | "created"
            | "created_at"
    )
}

/// A token count's field: `prompt_tokens`, `num_prompt_tokens`, `input_token_count`,
/// `prompt_tokens_cnt`, `number_output_tokens`, `completion_tokens`, `cached_tokens`, ...
fn count_field(stem: &str) -> Option<Field> {
    let mut s = stem;
    let mut affix = false;
    for prefix in ["number_of_", "number_", "num_", "n_"] {
        if let Some(rest) = s.strip_prefix(prefix) {
            s = rest;
            affix = true;
            break;
        }
    }
    for suffix in ["_cnt", "_count", "_num"] {
        if let Some(rest) = s.strip_suffix(suffix) {
            s = rest;
            affix = true;
            break;
        }
    }
    let word = s
        .strip_suffix("_tokens")
        .or_else(|| s.strip_suffix("_token"));
    let word = match word {
        Some(w) => w,
        None if affix || s.starts_with("tokens_") => s,
        None => return None,
    };
    match word {
        // `tokens_in`, `tokens_out`: the count first.
        _ if matches!(s, "tokens_in" | "tokens_input") => Some(Field::InputTokens),
        _ if matches!(s, "tokens_out" | "tokens_output") => Some(Field::OutputTokens),
        _ if matches!(s, "tokens_cached" | "tokens_cache_read") => Some(Field::CachedTokens),
        "prompt" | "input" => Some(Field::InputTokens),
        "completion" | "output" | "generation" | "generated" | "decode" => {
            Some(Field::OutputTokens)
        }
        "cached" | "cached_prompt" => Some(Field::CachedTokens),
        _ => None,
    }
}

/// An instant's field: `start`, `start_time`, `startedAt`, `request_received_ts`, `end_time`,
/// `first_token_time`, `last_token_ts`, `arrival_time`, `first_scheduled_time`, and a client's
/// `t_send`, `t_first_token`, `t_end`.
fn instant_field(stem: &str) -> Option<Field> {
    let s = instant_word(stem);
    match s {
        "start" | "started" | "arrival" | "arrived" | "received" => Some(Field::Arrival),
        // A client's, when it sent the request (`t_send`, `sent_at`; not a bare `sent` flag).
        "send" | "sent" if stem != s => Some(Field::Arrival),
        "end" | "ended" | "last_token" => Some(Field::End),
        // Not vLLM's `finished_time`, when the engine retired the request after its last token.
        "finished" | "completed" if stem.ends_with("_at") || stem.starts_with("request_") => {
            Some(Field::End)
        }
        "first_token" => Some(Field::FirstToken),
        "scheduled" | "first_scheduled" => Some(Field::Scheduled),
        _ => None,
    }
}

/// The word of an instant's name: without its suffix (`_time`, `_ts`, `_at`, `_timestamp`)
/// and its prefix (`t_`, `request_`): `t_send` is `send`, `request_received_ts` `received`.
fn instant_word(stem: &str) -> &str {
    let s = ["_timestamp", "_time", "_ts", "_at"]
        .iter()
        .find_map(|x| stem.strip_suffix(x))
        .unwrap_or(stem);
    let s = s.strip_prefix("t_").unwrap_or(s);
    s.strip_prefix("request_").unwrap_or(s)
}

/// True for the name of a client's send time (`t_send`, `sent_at`, `send_time`), an instant
/// [`instant_field`] reads as the arrival.
fn is_send_time(stem: &str) -> bool {
    matches!(instant_word(stem), "send" | "sent") && instant_field(stem) == Some(Field::Arrival)
}

/// Collects the leaves of `v` (objects only; arrays are not searched) into `out`, by path.
fn walk(v: &Value, path: &mut Vec<String>, depth: usize, out: &mut BTreeMap<Vec<String>, Leaf>) {
    let Value::Object(map) = v else { return };
    if depth > MAX_DEPTH {
        return;
    }
    for (k, child) in map {
        // A key that reads as an array index would not be found by the path.
        if k.starts_with('[') || k.is_empty() {
            continue;
        }
        path.push(k.clone());
        match child {
            Value::Object(inner) => {
                if let (Some(val), Some(Value::String(unit))) =
                    (inner.get("value"), inner.get("unit"))
                    && (val.is_number() || val.is_string())
                {
                    let mut p = path.clone();
                    p.push("value".into());
                    out.insert(
                        p,
                        Leaf {
                            raw: val.to_string(),
                            unit: Some(unit.clone()),
                        },
                    );
                } else {
                    walk(child, path, depth + 1, out);
                }
            }
            Value::Array(_) | Value::Null => {}
            scalar => {
                out.insert(
                    path.clone(),
                    Leaf {
                        raw: scalar.to_string(),
                        unit: None,
                    },
                );
            }
        }
        path.pop();
    }
}

/// The name a candidate's path is classified by: its last key, or for a `{value, unit}`
/// object, the object's key.
fn key_of(path: &[String], wrapped: bool) -> &str {
    let i = if wrapped {
        path.len().saturating_sub(2)
    } else {
        path.len() - 1
    };
    path.get(i).map_or("", String::as_str)
}

/// A `{value, unit}` object's unit.
fn unit_word(u: &str) -> Option<Unit> {
    match u.trim().to_ascii_lowercase().as_str() {
        "s" | "sec" | "secs" | "second" | "seconds" => Some(Unit::S),
        "ms" | "msec" | "millisecond" | "milliseconds" => Some(Unit::Ms),
        "us" | "µs" | "μs" | "usec" | "microsecond" | "microseconds" => Some(Unit::Us),
        "ns" | "nsec" | "nanosecond" | "nanoseconds" => Some(Unit::Ns),
        "tokens" | "token" | "count" => Some(Unit::Count),
        _ => None,
    }
}

/// Infers a format from the sample objects (each a request record, or not).
pub(crate) fn infer(sample: &[Value]) -> Inference {
    let leaves: Vec<BTreeMap<Vec<String>, Leaf>> = sample
        .iter()
        .map(|v| {
            let mut out = BTreeMap::new();
            walk(v, &mut Vec::new(), 0, &mut out);
            out
        })
        .collect();
    let mut inf = Inference {
        lines: sample.len(),
        ..Inference::default()
    };
    let mut paths: Vec<&Vec<String>> = leaves.iter().flat_map(BTreeMap::keys).collect();
    paths.sort();
    paths.dedup();
    let mut cands = Vec::new();
    for path in paths {
        let wrapped = path.last().is_some_and(|l| l == "value")
            && leaves
                .iter()
                .any(|l| l.get(path).is_some_and(|x| x.unit.is_some()));
        let Some((target, name_unit)) = classify_key(key_of(path, wrapped)) else {
            continue;
        };
        if target.is(Field::LoggedAt) && path.len() > 1 {
            continue;
        }
        cands.push(Candidate {
            path: path.clone(),
            target,
            name_unit,
            values: leaves.iter().map(|l| l.get(path).cloned()).collect(),
            unit: None,
            how: String::new(),
        });
    }
    let mut kept = Vec::new();
    for mut c in cands {
        match settle_unit(&mut c) {
            Ok(()) => kept.push(c),
            Err(why) => inf.unmapped.push((path_str(&c.path), c.target.name(), why)),
        }
    }
    pin_units(&mut kept, &mut inf);
    let mut chosen = choose(kept, &mut inf);
    drop_contradictions(&mut chosen, &mut inf);
    checks(&chosen, &mut inf);
    inf.spec = build_spec(&chosen, sample, &inf);
    inf.mapped = chosen
        .iter()
        .map(|c| Mapped {
            what: c.target.name(),
            paths: vec![c.path.clone()],
            unit: c.unit.unwrap_or(Unit::Count),
            how: c.how.clone(),
        })
        .collect();
    inf
}

/// The present values of a candidate.
fn present(c: &Candidate) -> impl Iterator<Item = &Leaf> {
    c.values.iter().flatten()
}

/// How many of a candidate's sample values may not read in its unit: one in 50 (a log's own
/// unreadable values, `Infinity` for a timeout, `"n/a"`, which the run reports line by line
/// and nulls as `unparseable`), none in a sample of fewer than 50.
const UNREADABLE_SHARE: usize = 50;

/// Whether `ok` holds for the values of `c` on the sample's lines, but at most one in
/// [`UNREADABLE_SHARE`]; the note on those that do not (empty when all do).
fn mostly(c: &Candidate, ok: impl Fn(&Leaf) -> bool) -> Option<String> {
    let (mut n, mut bad) = (0usize, 0usize);
    for l in present(c) {
        n += 1;
        bad += usize::from(!ok(l));
    }
    match bad {
        0 => Some(String::new()),
        _ if bad * UNREADABLE_SHARE <= n => Some(format!(
            "; {bad} of {n} values unreadable, null on their lines"
        )),
        _ => None,
    }
}

/// Settles what the name and the values alone say of a candidate's unit; `Err` with the reason
/// when they disagree. A duration whose unit neither says is left for the cross-checks.
fn settle_unit(c: &mut Candidate) -> Result<(), String> {
    if c.target != Target::Tpot && c.target.as_field().is_count() {
        if let Some(note) = mostly(c, |l| decode_count(&l.raw).is_some()) {
            c.unit = Some(Unit::Count);
            c.how = format!("a count{note}");
            return Ok(());
        }
        return Err("values that are not token counts".into());
    }
    if c.target != Target::Tpot && c.target.as_field().is_instant() {
        let unit = c.name_unit.unwrap_or(Unit::EpochAuto);
        if let Some(note) = mostly(c, |l| {
            matches!(decode_instant(&l.raw, unit), Instant::At(_))
        }) {
            c.unit = Some(unit);
            c.how = if c.name_unit.is_some() {
                format!("unit from the name{note}")
            } else {
                format!("wall-clock instants (by magnitude, or RFC 3339){note}")
            };
            return Ok(());
        }
        return Err("values that are not wall-clock instants (2000-2200)".into());
    }
    // A duration: a {value, unit} object, a duration string, the name's suffix.
    let object_units: Vec<String> = present(c).filter_map(|l| l.unit.clone()).collect();
    let object_unit = match object_units.first() {
        None => None,
        Some(first) => {
            if object_units.iter().any(|u| u != first) {
                return Err("conflicting units in its {value, unit} objects".into());
            }
            Some(unit_word(first).ok_or_else(|| format!("unknown unit {first:?}"))?)
        }
    };
    let strings = present(c).any(|l| l.raw.starts_with('"'))
        && present(c).all(|l| decode_ns(&l.raw, Unit::DurationStr).is_some());
    let given = match (object_unit, c.name_unit, strings) {
        (Some(Unit::Count), _, _) => return Err("a {value, unit} count, not a duration".into()),
        (Some(a), Some(b), _) if a != b => {
            return Err(format!(
                "conflicting units: {} by its name, {} by its {{value, unit}} object",
                b.name(),
                a.name()
            ));
        }
        (Some(a), _, _) => Some((a, "unit from its {value, unit} objects")),
        (None, _, true) => Some((Unit::DurationStr, "duration strings")),
        (None, Some(b), false) => Some((b, "unit from the name")),
        (None, None, false) => None,
    };
    let unit = given.map_or(Unit::Ms, |g| g.0);
    let Some(note) = mostly(c, |l| decode_ns(&l.raw, unit).is_some_and(|v| v >= 0)) else {
        return Err("values that are not non-negative durations".into());
    };
    if let Some((u, how)) = given {
        c.unit = Some(u);
        c.how = format!("{how}{note}");
    } else {
        c.how = note;
    }
    Ok(())
}

impl Target {
    /// The field (E2E for `tpot`, never asked).
    fn as_field(self) -> Field {
        match self {
            Target::Field(k) => k.field(),
            Target::Tpot => Field::E2e,
        }
    }
}

/// The value of candidate `c` on line `i` read in `unit`: ns for times, a count for counts.
fn val(c: &Candidate, i: usize, unit: Unit) -> Option<i64> {
    let raw = &c.values[i].as_ref()?.raw;
    let f = c.target.as_field();
    if c.target != Target::Tpot && f.is_count() {
        decode_count(raw).and_then(|n| i64::try_from(n).ok())
    } else if c.target != Target::Tpot && f.is_instant() {
        match decode_instant(raw, unit) {
            Instant::At(v) => Some(v),
            _ => None,
        }
    } else {
        decode_ns(raw, unit)
    }
}

/// The value of `t` on line `i` from the first candidate whose unit is known.
fn known(cands: &[Candidate], t: Target, i: usize) -> Option<i64> {
    cands
        .iter()
        .filter(|c| c.target == t)
        .find_map(|c| val(c, i, c.unit?))
}

fn fk(f: Field) -> Target {
    Target::Field(FieldKey::of(f))
}

/// An equality a duration must meet: its name, and its value on a line from known fields.
type Relation = (Field, &'static str, fn(&[Candidate], usize) -> Option<i64>);

/// `a - b` of two known instants.
fn diff(cands: &[Candidate], i: usize, a: Field, b: Field) -> Option<i64> {
    // The line's own time is the end where no end is logged.
    let at = |f: Field| {
        known(cands, fk(f), i).or_else(|| {
            (f == Field::End)
                .then(|| known(cands, fk(Field::LoggedAt), i))
                .flatten()
        })
    };
    at(a)?.checked_sub(at(b)?)
}

const RELATIONS: [Relation; 6] = [
    (Field::E2e, "e2e = end - arrival", |c, i| {
        diff(c, i, Field::End, Field::Arrival)
    }),
    (Field::Ttft, "ttft = first_token - arrival", |c, i| {
        diff(c, i, Field::FirstToken, Field::Arrival)
    }),
    (Field::Decode, "decode = end - first_token", |c, i| {
        diff(c, i, Field::End, Field::FirstToken)
    }),
    (Field::Queue, "queue = scheduled - arrival", |c, i| {
        diff(c, i, Field::Scheduled, Field::Arrival)
    }),
    (
        Field::Prefill,
        "prefill = first_token - scheduled",
        |c, i| diff(c, i, Field::FirstToken, Field::Scheduled),
    ),
    (Field::E2e, "e2e = ttft + decode", |c, i| {
        known(c, fk(Field::Ttft), i)?.checked_add(known(c, fk(Field::Decode), i)?)
    }),
];

/// The E2E of line `i`: a known duration, else end - arrival.
fn e2e_of(cands: &[Candidate], i: usize) -> Option<i64> {
    known(cands, fk(Field::E2e), i).or_else(|| diff(cands, i, Field::End, Field::Arrival))
}

/// The part of the E2E that candidate-target `t` stands for on line `i`, in `unit`, from
/// `value` (a TPOT times the output tokens after the first).
fn part(cands: &[Candidate], t: Target, i: usize, value: i64) -> Option<i64> {
    if t == Target::Tpot {
        let n = known(cands, fk(Field::OutputTokens), i)?;
        return (n >= 2).then(|| value.saturating_mul(n - 1));
    }
    Some(value)
}

/// Pins the unit of each duration its name leaves open, by the equalities with known fields,
/// then by the bounds within the E2E; what stays open is said in `inf.unmapped` later.
fn pin_units(cands: &mut [Candidate], inf: &mut Inference) {
    for _ in 0..4 {
        let mut changed = false;
        for k in 0..cands.len() {
            if cands[k].unit.is_some() {
                continue;
            }
            let found = by_equality(cands, k).or_else(|| {
                let (u, how) = by_bound(cands, k)?;
                // A bound pins a unit only where the next smaller one gives no plausible value.
                match smaller_plausible(&cands[k], cands, u) {
                    Some(why) => {
                        cands[k].how = why;
                        None
                    }
                    None => Some((u, how)),
                }
            });
            if let Some((u, how)) = found {
                inf.checks
                    .push(format!("{}: {how}", path_str(&cands[k].path)));
                cands[k].unit = Some(u);
                // The note on its unreadable values ([`mostly`]) stays.
                let note = if cands[k].how.starts_with("; ") {
                    std::mem::take(&mut cands[k].how)
                } else {
                    String::new()
                };
                cands[k].how = format!("{how}{note}");
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
}

/// The one unit under which candidate `k` meets an equality on every line that has both sides.
fn by_equality(cands: &[Candidate], k: usize) -> Option<(Unit, String)> {
    let c = &cands[k];
    for (target, name, f) in RELATIONS {
        if !c.target.is(target) {
            continue;
        }
        let lines: Vec<(usize, i64)> = (0..c.values.len())
            .filter(|&i| c.values[i].is_some())
            .filter_map(|i| Some((i, f(cands, i)?)))
            .collect();
        if lines.is_empty() {
            continue;
        }
        let ok: Vec<Unit> = DURATION_UNITS
            .into_iter()
            .filter(|&u| {
                lines.iter().all(|&(i, want)| {
                    val(c, i, u).is_some_and(|v| (v - want).abs() <= TOLERANCE_NS)
                })
            })
            .collect();
        if let [u] = ok[..] {
            let n = lines.len();
            return Some((
                u,
                format!("{} by {name} within 1 ms on {n} of {n} lines", u.name()),
            ));
        }
    }
    None
}

/// The one unit under which candidate `k` fits within the E2E on every line while the next
/// larger unit overflows it on most (or, for the E2E, covers its parts while the next smaller
/// unit falls short on most).
fn by_bound(cands: &[Candidate], k: usize) -> Option<(Unit, String)> {
    let c = &cands[k];
    let n = c.values.len();
    if c.target.is(Field::E2e) {
        // Lower bounds: the largest known part of each line.
        let lines: Vec<(usize, i64)> = (0..n)
            .filter(|&i| c.values[i].is_some())
            .filter_map(|i| {
                [Field::Ttft, Field::Queue, Field::Prefill, Field::Decode]
                    .into_iter()
                    .map(fk)
                    .chain([Target::Tpot])
                    .filter_map(|t| part(cands, t, i, known(cands, t, i)?))
                    .max()
                    .map(|lb| (i, lb))
            })
            .collect();
        if lines.is_empty() {
            return None;
        }
        for (j, &u) in DURATION_UNITS.iter().enumerate() {
            let holds = lines
                .iter()
                .all(|&(i, lb)| val(c, i, u).is_some_and(|v| v + TOLERANCE_NS >= lb));
            if !holds {
                continue;
            }
            let short = lines
                .iter()
                .filter(|&&(i, lb)| val(c, i, u).is_some_and(|v| v / 1000 + TOLERANCE_NS < lb))
                .count();
            if j > 0 && short * 2 > lines.len() {
                let m = lines.len();
                return Some((
                    u,
                    format!(
                        "{} by e2e >= its parts on {m} of {m} lines (in {} it falls short on {short})",
                        u.name(),
                        DURATION_UNITS[j - 1].name()
                    ),
                ));
            }
            return None;
        }
        return None;
    }
    let lines: Vec<(usize, i64)> = (0..n)
        .filter(|&i| c.values[i].is_some())
        .filter_map(|i| Some((i, e2e_of(cands, i)?)))
        .collect();
    if lines.is_empty() {
        return None;
    }
    let what = bound_check(c.target);
    for (j, &u) in DURATION_UNITS.iter().enumerate().rev() {
        let parts: Vec<Option<(i64, i64)>> = lines
            .iter()
            .map(|&(i, e2e)| Some((part(cands, c.target, i, val(c, i, u)?)?, e2e)))
            .collect();
        let counted: Vec<(i64, i64)> = parts.iter().flatten().copied().collect();
        if counted.is_empty() {
            return None;
        }
        if !counted.iter().all(|&(p, e2e)| p <= e2e + TOLERANCE_NS) {
            continue;
        }
        let over = counted
            .iter()
            .filter(|&&(p, e2e)| p.saturating_mul(1000) > e2e + TOLERANCE_NS)
            .count();
        let m = counted.len();
        if over * 2 > m {
            let larger = DURATION_UNITS
                .get(j + 1)
                .map_or("a unit 1000 times larger", |x| x.name());
            return Some((
                u,
                format!(
                    "{} by {what} on {m} of {m} lines (in {larger} it fails on {over})",
                    u.name()
                ),
            ));
        }
        return None;
    }
    None
}

/// The bound within the E2E that [`by_bound`] checks for a part of it (`ttft <= e2e`).
fn bound_check(t: Target) -> &'static str {
    if t == Target::Tpot {
        return "tpot * (output_tokens - 1) <= e2e";
    }
    match t.name() {
        "ttft" => "ttft <= e2e",
        "queue" => "queue <= e2e",
        "prefill" => "prefill <= e2e",
        _ => "decode <= e2e",
    }
}

/// Where candidate `k`'s values, in the unit 1000 times smaller than `u` (the one its bound
/// pinned), would still be a plausible TTFT or prefill (a median of 10 ms or more), TPOT or
/// decode per output token (0.2 ms or more): the bound cannot tell the two units apart, and
/// this says why. `None` where the smaller unit gives no plausible
/// value, or for the other fields (a queue time may be anything down to 0).
fn smaller_plausible(c: &Candidate, cands: &[Candidate], u: Unit) -> Option<String> {
    let j = DURATION_UNITS.iter().position(|&x| x == u)?;
    let smaller = *DURATION_UNITS.get(j.checked_sub(1)?)?;
    let (floor_ns, per_token) = match c.target {
        Target::Tpot => (200_000, false),
        t if t.is(Field::Ttft) || t.is(Field::Prefill) => (10_000_000, false),
        t if t.is(Field::Decode) => (200_000, true),
        _ => return None,
    };
    let mut v: Vec<i64> = (0..c.values.len())
        .filter_map(|i| {
            let x = val(c, i, u)?;
            if per_token {
                let n = known(cands, fk(Field::OutputTokens), i)?;
                return (n >= 2).then(|| x / (n - 1));
            }
            Some(x)
        })
        .collect();
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let median = v[v.len() / 2];
    if median / 1000 < floor_ns {
        return None;
    }
    let check = bound_check(c.target);
    let what = match c.target {
        Target::Tpot => "TPOT",
        t if t.is(Field::Ttft) => "TTFT",
        t if t.is(Field::Prefill) => "prefill time",
        _ => "decode time per output token",
    };
    // The number the log writes, read in either unit.
    let ns_per = decode_ns("1", u).unwrap_or(1) as f64;
    let in_unit = |unit: &str| format!("{:.1} {unit}", median as f64 / ns_per);
    Some(format!(
        "unit_unknown: {check} holds in {} and in {}, and both give a plausible {what} (median \
         {} or {}): say which, as unit = \"{}\" or \"{}\" in the entry `tokentime formats \
         --guess FILE` writes (or :{} or :{} in a --map of every field)",
        u.name(),
        smaller.name(),
        in_unit(u.name()),
        in_unit(smaller.name()),
        u.name(),
        smaller.name(),
        u.name(),
        smaller.name()
    ))
}

/// The candidates kept per field: those with a unit that agree with each other where they
/// meet; the others are said in `inf.unmapped`.
fn choose(cands: Vec<Candidate>, inf: &mut Inference) -> Vec<Candidate> {
    let mut by_target: BTreeMap<Target, Vec<Candidate>> = BTreeMap::new();
    for c in cands {
        if c.unit.is_none() {
            inf.unmapped.push((
                path_str(&c.path),
                c.target.name(),
                if c.how.starts_with("unit_unknown") {
                    c.how.clone()
                } else {
                    "unit_unknown: no unit in its name, no {value, unit} object, and no check on the values pins one".into()
                },
            ));
            continue;
        }
        if present(&c).next().is_none() {
            continue;
        }
        by_target.entry(c.target).or_default().push(c);
    }
    let mut out = Vec::new();
    for (_, mut group) in by_target {
        group.sort_by_key(|c| std::cmp::Reverse(c.values.iter().flatten().count()));
        let mut conflict = None;
        for a in 0..group.len() {
            for b in a + 1..group.len() {
                let (x, y) = (&group[a], &group[b]);
                let tol = if x.target.as_field().is_count() && x.target != Target::Tpot {
                    0
                } else {
                    TOLERANCE_NS
                };
                let differ = (0..x.values.len())
                    .filter(|&i| {
                        match (
                            val(x, i, x.unit.unwrap_or(Unit::Ms)),
                            val(y, i, y.unit.unwrap_or(Unit::Ms)),
                        ) {
                            (Some(p), Some(q)) => (p - q).abs() > tol,
                            _ => false,
                        }
                    })
                    .count();
                if differ > 0 && conflict.is_none() {
                    conflict = Some(format!(
                        "ambiguous: {} and {} disagree on {differ} lines",
                        path_str(&x.path),
                        path_str(&y.path)
                    ));
                }
            }
        }
        match conflict {
            Some(why) => {
                for c in group {
                    inf.unmapped
                        .push((path_str(&c.path), c.target.name(), why.clone()));
                }
            }
            None => out.extend(group),
        }
    }
    out
}

/// Leaves out a part of the E2E (TTFT, queue, prefill, decode, a TPOT times the output tokens
/// after the first) whose values break its bound within the E2E (`ttft <= e2e`) on most sample
/// lines that have both: its name and its values disagree (a `ttft_s` that holds ms). Where
/// the E2E is the instants' (or a logged one they confirm), the part alone is left out; where
/// nothing confirms the E2E, either may be the wrong one, so both are.
fn drop_contradictions(chosen: &mut Vec<Candidate>, inf: &mut Inference) {
    let parts = [Field::Ttft, Field::Queue, Field::Prefill, Field::Decode]
        .map(fk)
        .into_iter()
        .chain([Target::Tpot]);
    for t in parts {
        let Some(k) = chosen.iter().position(|c| c.target == t) else {
            continue;
        };
        let c = &chosen[k];
        let Some(unit) = c.unit else { continue };
        let (mut both, mut broken) = (0usize, 0usize);
        for i in 0..c.values.len() {
            let Some(p) = val(c, i, unit).and_then(|v| part(chosen, t, i, v)) else {
                continue;
            };
            let Some(e2e) = e2e_of(chosen, i) else {
                continue;
            };
            both += 1;
            broken += usize::from(p > e2e + TOLERANCE_NS);
        }
        if broken * 2 <= both || both == 0 {
            continue;
        }
        let check = bound_check(t);
        let logged = chosen.iter().position(|c| c.target == fk(Field::E2e));
        let confirmed = logged.is_none_or(|e| {
            let (mut n, mut ok) = (0usize, 0usize);
            for i in 0..chosen[e].values.len() {
                let (Some(v), Some(d)) = (
                    chosen[e].unit.and_then(|u| val(&chosen[e], i, u)),
                    diff(chosen, i, Field::End, Field::Arrival),
                ) else {
                    continue;
                };
                n += 1;
                ok += usize::from((v - d).abs() <= TOLERANCE_NS);
            }
            ok * 2 > n
        });
        let how = if c.name_unit.is_some() {
            "the unit its name says"
        } else {
            "its unit"
        };
        let c = chosen.remove(k);
        let path = path_str(&c.path);
        match logged.filter(|_| !confirmed) {
            None => inf.unmapped.push((
                path,
                c.target.name(),
                format!(
                    "contradicts the E2E: {check} fails on {broken} of {both} sample lines read \
                     in {how} ({}); map it with its unit in a formats file (tokentime formats \
                     --guess FILE)",
                    unit.name()
                ),
            )),
            Some(e) => {
                let e = if e > k { e - 1 } else { e };
                let e2e = chosen.remove(e);
                let why = format!(
                    "contradicts {}: {check} fails on {broken} of {both} sample lines, so one of \
                     them is not in {how} ({}) and nothing says which; map them with their units \
                     in a formats file (tokentime formats --guess FILE)",
                    path_str(&e2e.path),
                    unit.name()
                );
                inf.unmapped.push((path.clone(), c.target.name(), why));
                inf.unmapped.push((
                    path_str(&e2e.path),
                    e2e.target.name(),
                    format!("contradicts {path}: {check} fails on {broken} of {both} sample lines"),
                ));
            }
        }
    }
}

/// The checks on the final mapping, counted over the sample.
fn checks(chosen: &[Candidate], inf: &mut Inference) {
    let n = inf.lines;
    let mut count = |name: &str, test: &dyn Fn(usize) -> Option<bool>| {
        let results: Vec<bool> = (0..n).filter_map(test).collect();
        if !results.is_empty() {
            let (lines, ok) = tally(&results);
            inf.checks.push(format!("{name}: {ok} of {lines} lines"));
        }
    };
    let get = |t: Target, i: usize| known(chosen, t, i);
    let ttft_of = |i: usize| {
        get(fk(Field::Ttft), i).or_else(|| diff(chosen, i, Field::FirstToken, Field::Arrival))
    };
    let both: Vec<bool> = (0..n)
        .filter_map(|i| Some(ttft_of(i)? <= e2e_of(chosen, i)? + TOLERANCE_NS))
        .collect();
    let ttft_e2e = tally(&both);
    count("ttft <= e2e", &|i| {
        Some(ttft_of(i)? <= e2e_of(chosen, i)? + TOLERANCE_NS)
    });
    count("e2e = end - arrival within 1 ms", &|i| {
        let d = diff(chosen, i, Field::End, Field::Arrival)?;
        Some((get(fk(Field::E2e), i)? - d).abs() <= TOLERANCE_NS)
    });
    count("ttft = first_token - arrival within 1 ms", &|i| {
        let d = diff(chosen, i, Field::FirstToken, Field::Arrival)?;
        Some((get(fk(Field::Ttft), i)? - d).abs() <= TOLERANCE_NS)
    });
    count("tpot * (output_tokens - 1) <= e2e", &|i| {
        let p = part(chosen, Target::Tpot, i, get(Target::Tpot, i)?)?;
        Some(p <= e2e_of(chosen, i)? + TOLERANCE_NS)
    });
    inf.ttft_e2e = ttft_e2e;
    let spans: Vec<bool> = (0..n)
        .filter_map(|i| {
            let at = |f: Field| known(chosen, fk(f), i);
            Some(at(Field::End)? + TOLERANCE_NS >= at(Field::Arrival)?)
        })
        .collect();
    inf.spans = tally(&spans);
}

/// A root member of the sample objects that is a string (or number) on some line.
fn root_key(sample: &[Value], names: &[&str]) -> Vec<Vec<String>> {
    names
        .iter()
        .filter(|name| {
            sample.iter().any(|v| {
                v.get(**name)
                    .is_some_and(|x| x.is_string() || x.is_number())
            })
        })
        .map(|name| vec![(*name).to_owned()])
        .take(1)
        .collect()
}

/// The first root key (in name order) that ends with one of `suffixes` and holds a string or
/// a number on a sample line, as a path.
fn suffixed_key(sample: &[Value], suffixes: &[&str]) -> Vec<Vec<String>> {
    let keys: std::collections::BTreeSet<&String> = sample
        .iter()
        .filter_map(Value::as_object)
        .flat_map(|m| m.iter())
        .filter(|(k, v)| {
            suffixes.iter().any(|x| k.ends_with(x)) && (v.is_string() || v.is_number())
        })
        .map(|(k, _)| k)
        .collect();
    keys.into_iter().take(1).map(|k| vec![k.clone()]).collect()
}

/// The format of the mapping; `None` when no time field is mapped.
fn build_spec(chosen: &[Candidate], sample: &[Value], inf: &Inference) -> Option<FormatSpec> {
    let timing: Vec<&Candidate> = chosen
        .iter()
        .filter(|c| {
            c.target != Target::Tpot
                && !c.target.as_field().is_count()
                // Every line of a log has its time: it marks no request.
                && !c.target.is(Field::LoggedAt)
        })
        .collect();
    if timing.is_empty() {
        return None;
    }
    let fields: Vec<FieldRule> = chosen
        .iter()
        .filter(|c| c.target != Target::Tpot)
        .map(|c| FieldRule {
            field: c.target.as_field(),
            paths: vec![c.path.clone()],
            unit: c.unit.unwrap_or(Unit::Count),
            combine: Combine::First,
        })
        .collect();
    let has = |f: Field| fields.iter().any(|r| r.field == f);
    let path_of = |f: Field| {
        fields
            .iter()
            .find(|r| r.field == f)
            .map(|r| path_str(&r.paths[0]))
            .unwrap_or_default()
    };
    let ttft_doc = if has(Field::Ttft) {
        format!("inferred: the logged {}", path_of(Field::Ttft))
    } else if has(Field::FirstToken) && has(Field::Arrival) {
        format!(
            "inferred: {} - {}",
            path_of(Field::FirstToken),
            path_of(Field::Arrival)
        )
    } else if has(Field::Queue) && has(Field::Prefill) {
        // The durations' rule: the wait for the first token is the queue's and the prefill's.
        format!(
            "inferred: {} + {} (queue + prefill)",
            path_of(Field::Queue),
            path_of(Field::Prefill)
        )
    } else {
        "inferred: none found (TTFT null, not_logged)".into()
    };
    let cache_doc = if has(Field::CachedTokens) {
        format!("inferred: {}", path_of(Field::CachedTokens))
    } else {
        "none found".into()
    };
    let (error_when, cancelled_when, reason_paths) = outcome_conds(sample);
    let mut id_paths = root_key(
        sample,
        &["request_id", "requestId", "req_id", "reqId", "id"],
    );
    if id_paths.is_empty() {
        // A client's or tool's own name for it: `lab_req_id`, `client_request_id`.
        id_paths = suffixed_key(sample, &["_request_id", "_req_id"]);
    }
    let model_paths = root_key(sample, &["model", "model_id", "model_name"]);
    // A time to the first byte is a gateway's (or a client's) measure of the first chunk:
    // from its own arrival, not the server's (the Prometheus families tell them apart).
    let ttfb = fields
        .iter()
        .find(|r| r.field == Field::Ttft)
        .and_then(|r| r.paths.first()?.last())
        .is_some_and(|k| matches!(strip_unit(&snake(k)).0, "ttfb" | "time_to_first_byte"));
    // So is a time from when a client sent the request (`t_send`, `sent_at`).
    let sent = fields
        .iter()
        .find(|r| r.field == Field::Arrival)
        .and_then(|r| r.paths.first()?.last())
        .is_some_and(|k| is_send_time(&snake(k)));
    let (markers, error_markers) =
        crate::format::request_markers(&fields, &[&id_paths, &model_paths], &error_when);
    Some(FormatSpec {
        name: "inferred".into(),
        about: format!(
            "inferred from {} sample {}",
            inf.lines,
            if inf.lines == 1 { "line" } else { "lines" }
        ),
        markers,
        error_markers,
        error_when,
        cancelled_when,
        streamed_when: stream_flag(sample),
        reason_paths,
        arrival_origin: if ttfb || sent {
            Origin::Gateway
        } else {
            Origin::Arrival
        },
        ttft_doc,
        cache_doc,
        fields,
        id_paths,
        model_paths,
        fallback: true,
        ..FormatSpec::default()
    })
}

/// A condition as a formats file writes it.
fn toml_cond(c: &Cond) -> String {
    let at = |p: &Vec<String>| quoted(&path_str(p));
    match c {
        Cond::Present(p) => format!("{{ present = {} }}", at(p)),
        Cond::Set(p) => format!("{{ set = {} }}", at(p)),
        Cond::Differs(p, v) => format!("{{ path = {}, differs = {v} }}", at(p)),
        Cond::Equals(p, v) => format!("{{ path = {}, equals = {v} }}", at(p)),
        Cond::AtLeast(p, n) => format!("{{ path = {}, at_least = {n} }}", at(p)),
        Cond::Contains(p, t) => format!("{{ path = {}, contains = {} }}", at(p), quoted(t)),
        Cond::Not(c) => format!("{{ not = {} }}", toml_cond(c)),
        Cond::Any(cs) => {
            let each: Vec<String> = cs.iter().map(toml_cond).collect();
            format!("{{ any = [{}] }}", each.join(", "))
        }
    }
}

/// The non-null values of the root member `k` on the sample's lines.
fn root_values<'a>(sample: &'a [Value], k: &str) -> Vec<&'a Value> {
    sample
        .iter()
        .filter_map(|v| v.get(k))
        .filter(|x| !x.is_null())
        .collect()
}

/// The conditions under which a request of the sample's log failed or was cancelled, and
/// the paths of its reason.
fn outcome_conds(sample: &[Value]) -> (Vec<Cond>, Vec<Cond>, Vec<Vec<String>>) {
    // A root error member that is set: a failed request (`""`, `0` and `false` where the
    // sample writes them for a success are not set).
    const ERROR_KEYS: [&str; 4] = ["error_message", "error_msg", "error", "error_code"];
    let error_cond = |k: &str| -> Option<Cond> {
        let vs = root_values(sample, k);
        let path = vec![k.to_owned()];
        if vs.is_empty() || vs.iter().all(|e| *e == "") {
            // Not set on the sample's lines (the failures may all come later): set fails.
            Some(Cond::Set(path))
        } else if vs.iter().all(|e| e.is_boolean()) {
            Some(Cond::Equals(path, "true".into()))
        } else if vs.iter().any(|e| e.is_boolean()) {
            None
        } else if vs.iter().any(|e| e.as_f64() == Some(0.0)) {
            Some(Cond::Differs(path, "0".into()))
        } else {
            Some(Cond::Differs(path, "\"\"".into()))
        }
    };
    let (status_failed, status_cancelled, status_path) = status_conds(sample);
    let error_when: Vec<Cond> = ERROR_KEYS
        .into_iter()
        .filter_map(error_cond)
        .chain(status_failed)
        .collect();
    // Why a request failed: an error object's type, code or message (`"error": {"type":
    // ...}`, as the built-in formats read them), the error members the sample has, then its
    // status.
    let nested = ["type", "code", "message"]
        .into_iter()
        .filter(|m| {
            sample
                .iter()
                .any(|v| v.get("error").and_then(|e| e.get(*m)).is_some())
        })
        .map(|m| vec!["error".to_owned(), m.to_owned()]);
    let reason_paths: Vec<Vec<String>> = nested
        .chain(ERROR_KEYS.into_iter().map(|k| vec![k.to_owned()]))
        .chain(status_path)
        .collect();
    (error_when, status_cancelled, reason_paths)
}

/// Whether a request was streamed, when the log says so: a root `stream` that is a boolean on
/// every sample line (a call not streamed shows no first token: its TTFT is `not_streamed`,
/// not `not_logged`).
fn stream_flag(sample: &[Value]) -> Option<Cond> {
    let all_flags = !sample.is_empty()
        && sample
            .iter()
            .all(|v| v.get("stream").is_some_and(Value::is_boolean));
    all_flags.then(|| Cond::Equals(vec!["stream".to_owned()], "true".into()))
}

/// What an outcome in words holds when the request failed (timeouts are failures; an
/// `error_in_stream` came with its HTTP 200).
const FAILED_WORDS: [&str; 4] = ["error", "fail", "timeout", "timed_out"];

/// The root members that hold a request's outcome, and the conditions they give: (failed,
/// cancelled). An HTTP status (`status`, `status_code`, ...: integers 100-599 on every sample
/// line that has one, numbers or strings) fails a request at 400 and above, and 499 (the
/// client closed the request) is a cancellation; a `status` word (`"success"`, `"ok"`) fails it
/// when it holds `error` or `fail` and cancels it when it holds `cancel`, in any case;
/// `success: false` fails it. Also the status's path, read for a failure's reason.
fn status_conds(sample: &[Value]) -> (Vec<Cond>, Vec<Cond>, Option<Vec<String>>) {
    let (mut failed, mut cancelled) = (Vec::new(), Vec::new());
    let values = |k: &str| root_values(sample, k);
    const CODES: [&str; 7] = [
        "status",
        "status_code",
        "statusCode",
        "http_status",
        "http_status_code",
        "response_code",
        "response_status",
    ];
    let mut code_path = None;
    for k in CODES {
        let vs = values(k);
        let code = |v: &Value| match v {
            Value::Number(n) => n.as_u64(),
            Value::String(t) => t.parse::<u64>().ok(),
            _ => None,
        };
        if vs.is_empty()
            || !vs
                .iter()
                .all(|v| code(v).is_some_and(|c| (100..600).contains(&c)))
        {
            continue;
        }
        let path = vec![k.to_owned()];
        failed.push(Cond::AtLeast(path.clone(), 400));
        let strings = vs.iter().any(|v| v.is_string());
        let closed = if strings { "\"499\"" } else { "499" };
        cancelled.push(Cond::Equals(path.clone(), closed.into()));
        code_path = Some(path);
        break;
    }
    let mut status = None;
    let words = values("status");
    // A word of an outcome: in `status`, else `outcome` or `result` (a client's own log:
    // `"outcome": "cancelled"`).
    let is_outcome = |w: &str| {
        matches!(
            w.to_ascii_lowercase().as_str(),
            "success"
                | "succeeded"
                | "ok"
                | "completed"
                | "error"
                | "failure"
                | "failed"
                | "cancelled"
                | "canceled"
                | "timeout"
        )
    };
    let worded = ["status", "outcome", "result"]
        .into_iter()
        .find(|k| values(k).iter().filter_map(|v| v.as_str()).any(is_outcome));
    // An outcome in words fails or cancels a request beside an HTTP status too (a request
    // cancelled mid-stream had its 200).
    if let Some(k) = worded {
        let path = vec![k.to_owned()];
        for w in FAILED_WORDS {
            failed.push(Cond::Contains(path.clone(), w.into()));
        }
        cancelled.push(Cond::Contains(path.clone(), "cancel".into()));
        status = Some(path);
    }
    if let Some(path) = code_path {
        return (failed, cancelled, Some(path));
    }
    if values("success").iter().any(|v| v.is_boolean()) {
        failed.push(Cond::Equals(vec!["success".into()], "false".into()));
    }
    // A status member the sample's lines do not have (a log that writes it on its failures
    // only): an HTTP status there still fails or cancels the request.
    if words.is_empty() && status.is_none() {
        for k in ["status", "status_code", "http_status", "response_code"] {
            if sample.iter().all(|v| v.get(k).is_none()) {
                let path = vec![k.to_owned()];
                failed.push(Cond::AtLeast(path.clone(), 400));
                cancelled.push(Cond::Equals(path.clone(), "499".into()));
                cancelled.push(Cond::Equals(path, "\"499\"".into()));
            }
        }
        status = Some(vec!["status".to_owned()]);
    }
    (failed, cancelled, status)
}

/// A JSON string literal (also a TOML basic string).
fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// The inference as a formats-file entry (TOML, the schema of `--formats`): what was mapped,
/// with its reasons and checks in comments, and what was not.
pub(crate) fn to_toml(inf: &Inference) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Inferred by `tokentime formats --guess` from {} sample lines: edit, keep, and use with --formats FILE.",
        inf.lines
    );
    for m in &inf.mapped {
        let paths: Vec<String> = m.paths.iter().map(|p| path_str(p)).collect();
        let _ = writeln!(
            s,
            "# {} = {} ({}: {})",
            m.what,
            paths.join(" | "),
            m.unit.name(),
            m.how
        );
    }
    for (path, what, why) in &inf.unmapped {
        let _ = writeln!(s, "# not mapped: {path} as {what}: {why}");
    }
    for c in &inf.checks {
        let _ = writeln!(s, "# check: {c}");
    }
    let Some(f) = &inf.spec else {
        let _ = writeln!(s, "# no time field could be mapped: no format to write");
        template(&mut s, inf);
        return s;
    };
    let list = |cs: &[Cond]| cs.iter().map(toml_cond).collect::<Vec<_>>().join(", ");
    let _ = writeln!(s, "[[format]]");
    let _ = writeln!(s, "name = {}", quoted(&f.name));
    let _ = writeln!(s, "about = {}", quoted(&f.about));
    let _ = writeln!(s, "fallback = true");
    let _ = writeln!(s, "markers = [{}]", list(&f.markers));
    if !f.error_markers.is_empty() {
        let _ = writeln!(s, "error_markers = [{}]", list(&f.error_markers));
    }
    if !f.error_when.is_empty() {
        let _ = writeln!(s, "error_when = [{}]", list(&f.error_when));
    }
    if !f.cancelled_when.is_empty() {
        let _ = writeln!(s, "cancelled_when = [{}]", list(&f.cancelled_when));
    }
    if let Some(c) = &f.streamed_when {
        let _ = writeln!(s, "streamed_when = {}", toml_cond(c));
    }
    let _ = writeln!(s, "arrival_origin = {}", quoted(f.arrival_origin.as_str()));
    let _ = writeln!(s, "ttft_doc = {}", quoted(&f.ttft_doc));
    let _ = writeln!(s, "cache_doc = {}", quoted(&f.cache_doc));
    for (key, paths) in [("id", &f.id_paths), ("model", &f.model_paths)] {
        if let Some(p) = paths.first() {
            let _ = writeln!(s, "{key} = {}", quoted(&path_str(p)));
        }
    }
    if !f.reason_paths.is_empty() {
        let reasons: Vec<String> = f
            .reason_paths
            .iter()
            .map(|p| quoted(&path_str(p)))
            .collect();
        let _ = writeln!(s, "reason = [{}]", reasons.join(", "));
    }
    let _ = writeln!(s, "fields = [");
    for r in &f.fields {
        let unit = if r.field.is_count() {
            String::new()
        } else {
            format!(", unit = {}", quoted(r.unit.name()))
        };
        let _ = writeln!(
            s,
            "  {{ field = {}, path = {}{unit} }},",
            quoted(r.field.name()),
            quoted(&path_str(&r.paths[0]))
        );
    }
    // The durations whose unit is open: to uncomment with the unit the user knows.
    for (path, what, why) in &inf.unmapped {
        if why.starts_with("unit_unknown") && Field::from_name(what).is_some() {
            let _ = writeln!(
                s,
                "  # {{ field = {}, path = {}, unit = \"?\" }},  # its unit: see above",
                quoted(what),
                quoted(path)
            );
        }
    }
    let _ = writeln!(s, "]");
    s
}

/// When nothing could be mapped but fields were found whose unit no check pins: a commented
/// formats-file entry naming them, for the user to give each its unit (the log does not say,
/// so tokentime does not guess).
fn template(s: &mut String, inf: &Inference) {
    if inf.unmapped.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "# A template to complete: uncomment it, set each unit (s, ms, us or ns: the log does not \
         say which), drop what is not what its name says, and use it with --formats FILE."
    );
    let _ = writeln!(s, "# [[format]]");
    let _ = writeln!(s, "# name = \"my-log\"");
    let _ = writeln!(
        s,
        "# markers = [{{ present = {} }}]",
        quoted(&inf.unmapped[0].0)
    );
    let _ = writeln!(s, "# fields = [");
    // `tpot` is a cross-check of the inference, not a field a formats file reads.
    for m in inf.mapped.iter().filter(|m| m.what != "tpot") {
        if let Some(p) = m.paths.first() {
            let _ = writeln!(
                s,
                "#   {{ field = {}, path = {} }},",
                quoted(m.what),
                quoted(&path_str(p))
            );
        }
    }
    for (path, what, _) in inf.unmapped.iter().filter(|u| u.1 != "tpot") {
        let _ = writeln!(
            s,
            "#   {{ field = {}, path = {}, unit = \"?\" }},",
            quoted(what),
            quoted(path)
        );
    }
    let _ = writeln!(s, "# ]");
}

/// What inference found, for stderr: one line each for the mapping, what was not mapped, and
/// the checks.
pub(crate) fn summary(inf: &Inference) -> Vec<String> {
    let mut out = Vec::new();
    let mapped: Vec<String> = inf
        .mapped
        .iter()
        .map(|m| {
            let paths: Vec<String> = m.paths.iter().map(|p| path_str(p)).collect();
            format!(
                "{} = {} ({}, {})",
                m.what,
                paths.join(" | "),
                m.unit.name(),
                m.how
            )
        })
        .collect();
    out.push(format!(
        "mapped from {} sample lines: {}",
        inf.lines,
        if mapped.is_empty() {
            "nothing".into()
        } else {
            mapped.join("; ")
        }
    ));
    if !inf.unmapped.is_empty() {
        let un: Vec<String> = inf
            .unmapped
            .iter()
            .map(|(p, w, why)| format!("{p} as {w} ({why})"))
            .collect();
        out.push(format!("not mapped, left null: {}", un.join("; ")));
    }
    if !inf.checks.is_empty() {
        out.push(format!("checks: {}", inf.checks.join("; ")));
    }
    out
}

/// The format inferred from `lines` (each a JSON object's text; others are skipped) and its
/// formats-file entry: what `tokentime formats --guess` prints, for the fuzz target and tests.
pub fn guess_format(lines: &[&[u8]]) -> (Option<FormatSpec>, String) {
    let sample: Vec<Value> = lines
        .iter()
        .filter_map(|l| serde_json::from_slice::<Value>(l).ok())
        .filter(Value::is_object)
        .collect();
    let inf = infer(&sample);
    let toml = to_toml(&inf);
    (inf.spec, toml)
}

/// Parses the text of a formats file (TOML or JSON), as `--formats` does.
///
/// # Errors
/// The message `--formats` would give.
pub fn parse_formats_file(text: &str) -> Result<Vec<FormatSpec>, String> {
    crate::format::file::parse(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inf(lines: &[&str]) -> Inference {
        let v: Vec<Value> = lines
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        infer(&v)
    }

    fn unit_of(i: &Inference, what: &str) -> Option<Unit> {
        i.mapped.iter().find(|m| m.what == what).map(|m| m.unit)
    }

    #[test]
    fn a_ttft_of_queue_and_prefill_is_documented_as_such() {
        let i = inf(&[
            r#"{"queue_ms":10.0,"prefill_ms":165.6,"decode_ms":0.0,"num_output_tokens":1}"#,
            r#"{"queue_ms":12.0,"prefill_ms":100.5,"decode_ms":50.0,"num_output_tokens":3}"#,
        ]);
        assert_eq!(
            i.spec.unwrap().ttft_doc,
            "inferred: queue_ms + prefill_ms (queue + prefill)"
        );
    }

    #[test]
    fn an_end_goes_by_many_names() {
        for key in [
            "end_time",
            "endedAt",
            "finished_at",
            "completedAt",
            "request_finished_ts",
        ] {
            assert!(
                matches!(classify_key(key), Some((Target::Field(k), _)) if k == FieldKey::of(Field::End)),
                "{key}"
            );
        }
        assert_eq!(classify_key("finished_time"), None);
    }

    #[test]
    fn names_say_the_unit() {
        let i = inf(&[
            r#"{"ttftMs":120,"x":{"e2e_s":1.5},"num_prompt_tokens":7,"completion_tokens_count":3}"#,
        ]);
        assert_eq!(unit_of(&i, "ttft"), Some(Unit::Ms));
        assert_eq!(unit_of(&i, "e2e"), Some(Unit::S));
        assert_eq!(unit_of(&i, "input_tokens"), Some(Unit::Count));
        assert_eq!(unit_of(&i, "output_tokens"), Some(Unit::Count));
        let spec = i.spec.unwrap();
        // A gateway's names: time to first byte, counts written first.
        let g = inf(&[r#"{"ttfb_ms":120,"duration_ms":900,"tokens_in":7,"tokens_out":3}"#]);
        assert_eq!(unit_of(&g, "ttft"), Some(Unit::Ms));
        assert_eq!(unit_of(&g, "input_tokens"), Some(Unit::Count));
        assert_eq!(unit_of(&g, "output_tokens"), Some(Unit::Count));
        assert_eq!(unit_of(&g, "e2e"), Some(Unit::Ms));
        assert!(spec.fallback);
        assert_eq!(spec.name, "inferred");
        // A time to first byte is a gateway's: its durations are from the gateway's arrival.
        assert_eq!(spec.arrival_origin, Origin::Arrival);
        assert_eq!(g.spec.unwrap().arrival_origin, Origin::Gateway);
    }

    #[test]
    fn the_lines_own_time_is_read_at_the_root_only_and_marks_no_request() {
        // `timestamp_ns` at the root: the line's time, in ns by its name; `time` holding a
        // duration is no instant (left out with its reason); a nested `timestamp` is the
        // object's own.
        let i = inf(&[
            r#"{"timestamp_ns":1764496801200000000,"time":1.5,"latency_ms":900,"meta":{"timestamp":1764496800}}"#,
        ]);
        assert_eq!(unit_of(&i, "logged_at"), Some(Unit::EpochNs));
        let mapped: Vec<_> = i.mapped.iter().map(|m| path_str(&m.paths[0])).collect();
        assert!(!mapped.contains(&"meta.timestamp".to_owned()), "{mapped:?}");
        assert!(
            i.unmapped
                .iter()
                .any(|(p, _, why)| p == "time" && why.contains("not wall-clock instants")),
            "{:?}",
            i.unmapped
        );
        let spec = i.spec.unwrap();
        assert_eq!(spec.markers, vec![Cond::Present(vec!["latency_ms".into()])]);
        // An error object: its members are the reason, before the object.
        let e = inf(&[
            r#"{"latency_ms":900,"error":null}"#,
            r#"{"latency_ms":9,"error":{"type":"rate_limit","message":"slow down"}}"#,
        ]);
        let reasons: Vec<String> = e
            .spec
            .unwrap()
            .reason_paths
            .iter()
            .map(|p| path_str(p))
            .collect();
        assert_eq!(
            reasons,
            [
                "error.type",
                "error.message",
                "error_message",
                "error_msg",
                "error",
                "error_code",
                "status"
            ]
        );
        // Only the line's time: no request timing, no format.
        assert!(
            inf(&[r#"{"ts":"2026-11-30T10:00:00Z","msg":"ready"}"#])
                .spec
                .is_none()
        );
    }

    #[test]
    fn value_unit_objects_and_duration_strings() {
        let i = inf(&[r#"{"m":{"ttft":{"value":0.2,"unit":"sec"}},"total_time":"1.5s"}"#]);
        assert_eq!(unit_of(&i, "ttft"), Some(Unit::S));
        assert_eq!(i.mapped[0].paths[0], ["m", "ttft", "value"]);
        assert_eq!(unit_of(&i, "e2e"), Some(Unit::DurationStr));
    }

    #[test]
    fn an_equality_with_instants_pins_the_unit() {
        // end - start = 1.5 s on both lines: a latency of 1500 is in ms (as s it would be
        // 1500 s, as us 1.5 ms).
        let i = inf(&[
            r#"{"start_time":1750000000.0,"end_time":1750000001.5,"latency":1500}"#,
            r#"{"start_time":1750000002.0,"end_time":1750000002.25,"latency":250.4}"#,
        ]);
        assert_eq!(unit_of(&i, "e2e"), Some(Unit::Ms));
        assert!(
            i.checks
                .iter()
                .any(|c| c.contains("e2e = end - arrival within 1 ms on 2 of 2")),
            "{:?}",
            i.checks
        );
        // Off by more than a millisecond on one line: not pinned, left null.
        let j = inf(&[
            r#"{"start_time":1750000000.0,"end_time":1750000001.5,"latency":1500}"#,
            r#"{"start_time":1750000002.0,"end_time":1750000002.25,"latency":252}"#,
        ]);
        assert_eq!(unit_of(&j, "e2e"), None);
        assert!(
            j.unmapped
                .iter()
                .any(|(p, _, why)| p == "latency" && why.starts_with("unit_unknown"))
        );
    }

    #[test]
    fn a_tight_bound_pins_the_unit() {
        // e2e 2 s and 4 s by name; ttft 300 and 500: in ms within the e2e, in s past it on
        // both lines: ms.
        let i = inf(&[r#"{"e2e_s":2.0,"ttft":300}"#, r#"{"e2e_s":4.0,"ttft":500}"#]);
        assert_eq!(unit_of(&i, "ttft"), Some(Unit::Ms));
        // A ttft of 0.001 fits in s, and in a unit 1000 times larger (1 s) still fits within
        // the 2 s: no tight unit, not mapped.
        let j = inf(&[r#"{"e2e_s":2.0,"ttft":0.001}"#]);
        assert_eq!(unit_of(&j, "ttft"), None);
        // TPOT * (n - 1) fits inside the e2e: a TPOT is a check only, never a field.
        let k = inf(&[r#"{"e2e_s":2.0,"tpot":20,"output_tokens":51}"#]);
        assert_eq!(unit_of(&k, "tpot"), Some(Unit::Ms));
        assert!(
            k.spec
                .unwrap()
                .fields
                .iter()
                .all(|r| r.field != Field::Ttft)
        );
    }

    #[test]
    fn a_bound_met_by_two_plausible_units_pins_none() {
        // E2E 92.8 s and 70.1 s by the instants; a TTFT of 25.375 and 22.524 fits inside it
        // in s (25 s) and in ms (25 ms) alike, and either is a TTFT a server gives: left
        // open, with the two units said.
        let i = inf(&[
            r#"{"start_time":1750000000.0,"end_time":1750000092.805,"ttft":25.375}"#,
            r#"{"start_time":1750000005.0,"end_time":1750000075.106,"ttft":22.524}"#,
        ]);
        assert_eq!(unit_of(&i, "ttft"), None);
        let why = &i.unmapped.iter().find(|(p, _, _)| p == "ttft").unwrap().2;
        assert!(
            why.starts_with("unit_unknown: ttft <= e2e holds in s and in ms")
                && why.contains("median 25.4 s or 25.4 ms"),
            "{why}"
        );
        // 0.3 s and 0.5 s of a 2 s and 4 s E2E: in ms they would be 0.3 and 0.5 ms, no TTFT a
        // server gives: s.
        let j = inf(&[
            r#"{"start_time":1750000000.0,"end_time":1750000002.0,"ttft":0.3}"#,
            r#"{"start_time":1750000005.0,"end_time":1750000009.0,"ttft":0.5}"#,
        ]);
        assert_eq!(unit_of(&j, "ttft"), Some(Unit::S));
        // A TPOT of 0.045 (s) would be 45 us in ms: s. Of 45 (ms), 45 us in us: ms.
        let k = inf(&[r#"{"e2e_s":20.0,"tpot":0.045,"output_tokens":401}"#]);
        assert_eq!(unit_of(&k, "tpot"), Some(Unit::S));
        let k = inf(&[r#"{"e2e_s":20.0,"tpot":45,"output_tokens":401}"#]);
        assert_eq!(unit_of(&k, "tpot"), Some(Unit::Ms));
    }

    #[test]
    fn disagreements_are_left_out_with_a_reason() {
        let i = inf(&[
            r#"{"ttft_ms":{"value":1,"unit":"s"},"e2e":{"value":1,"unit":"s"}}"#,
            r#"{"e2e":{"value":1,"unit":"ms"}}"#,
        ]);
        assert_eq!(unit_of(&i, "ttft"), None);
        assert_eq!(unit_of(&i, "e2e"), None);
        assert!(i.spec.is_none());
        let why: Vec<&str> = i.unmapped.iter().map(|u| u.2.as_str()).collect();
        assert!(why[0].starts_with("conflicting units in its"), "{why:?}");
        assert!(
            why[1].starts_with("conflicting units: ms by its name"),
            "{why:?}"
        );
        // Two names for the E2E that differ: ambiguous.
        let j = inf(&[r#"{"e2e_ms":10,"latency_ms":20}"#]);
        assert_eq!(unit_of(&j, "e2e"), None);
        assert!(j.unmapped.iter().all(|u| u.2.starts_with("ambiguous")));
        // Strings, negative durations, implausible or monotonic instants.
        let k =
            inf(&[r#"{"ttft_ms":"fast","e2e_ms":-3,"start_time":51234.5,"prompt_tokens":"many"}"#]);
        assert!(k.mapped.is_empty() && k.spec.is_none(), "{k:?}");
        assert_eq!(k.unmapped.len(), 4);
    }

    /// A `ttft_s` that holds ms: 470.4 "s" inside an E2E of 4.46 s (the instants' 4.457 s).
    /// The E2E the instants confirm stays; the TTFT is left out, not every request's metrics
    /// made null as out of order. With no instants, nothing says which of the two is wrong.
    #[test]
    fn a_part_whose_values_break_its_bound_is_left_out() {
        let lines = [
            r#"{"start_time":1767225601.0,"end_time":1767225605.457,"ttft_s":470.4,"e2e_latency_s":4.457}"#,
            r#"{"start_time":1767225602.0,"end_time":1767225608.662,"ttft_s":248.9,"e2e_latency_s":6.662}"#,
            r#"{"start_time":1767225603.0,"end_time":1767225604.5,"ttft_s":0.2,"e2e_latency_s":1.5}"#,
        ];
        let i = inf(&lines);
        assert_eq!(unit_of(&i, "ttft"), None);
        assert_eq!(unit_of(&i, "e2e"), Some(Unit::S));
        assert_eq!(
            i.unmapped,
            [(
                "ttft_s".to_owned(),
                "ttft",
                "contradicts the E2E: ttft <= e2e fails on 2 of 3 sample lines read in the unit \
                 its name says (s); map it with its unit in a formats file (tokentime formats \
                 --guess FILE)"
                    .to_owned()
            )]
        );
        assert!(!i.fit_for_auto());
        let bare: Vec<String> = lines
            .iter()
            .map(|l| {
                let mut v: Value = serde_json::from_str(l).unwrap();
                let o = v.as_object_mut().unwrap();
                o.remove("start_time");
                o.remove("end_time");
                v.to_string()
            })
            .collect();
        let j = inf(&bare.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(j.spec.is_none(), "{j:?}");
        let left: Vec<&str> = j.unmapped.iter().map(|u| u.0.as_str()).collect();
        assert_eq!(left, ["ttft_s", "e2e_latency_s"]);
        assert!(j.unmapped[0].2.contains("nothing says which"), "{j:?}");
        // Broken on one line of three: a producer's glitch, not a unit; kept.
        let k = inf(&[lines[0], lines[2], lines[2]]);
        assert_eq!(unit_of(&k, "ttft"), Some(Unit::S));
    }

    #[test]
    fn deep_objects_and_arrays_are_not_searched() {
        let mut deep = String::new();
        for _ in 0..20 {
            deep.push_str(r#"{"a":"#);
        }
        deep.push_str(r#"{"ttft_ms":5}"#);
        deep.push_str(&"}".repeat(20));
        let i = inf(&[&deep, r#"{"list":[{"ttft_ms":5}]}"#]);
        assert!(i.mapped.is_empty());
    }

    #[test]
    fn the_toml_reads_back_as_the_same_format() {
        let i = inf(&[
            r#"{"r":{"start_time":1750000000.0,"end_time":1750000001.5},"ttft_ms":100,"a.b":{"e2e_ms":1500},"error":"x","model":"m"}"#,
        ]);
        // Read back, it is a formats file's (its units then checked as the user's).
        let spec = FormatSpec {
            from_file: true,
            ..i.spec.clone().unwrap()
        };
        let back = crate::format::file::parse(&to_toml(&i)).unwrap();
        assert_eq!(back, vec![spec]);
    }
}
