//! Formats: each server's or gateway's log format as a table of key paths, units and rules,
//! and the detection that attributes a line to one of them.
//!
//! Owns the mapping from a parsed line ([`Slots`]) to a [`Timeline`]. A format is data
//! ([`FormatSpec`]); adding a server is adding a table here and a testdata file, not a parser.
//! Field facts and sources are in FORMATS.md (LiteLLM section 3a, llama.cpp section 5, vLLM
//! section 2b). No I/O here.

pub(crate) mod builtin;
pub(crate) mod cond_expr;
pub(crate) mod file;
pub(crate) mod infer;
pub(crate) mod reason;
pub(crate) mod units;

use crate::format::units::{
    Instant, Unit, decode_count_bytes, decode_instant_bytes, decode_ns, decode_ns_bytes,
};
use crate::json::{PathSet, SlotId, Slots, index_segment};
use crate::metrics::{Origin, Outcome, Timeline, instants};

/// A canonical field a format can fill (SPEC section 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// Instant the request arrived.
    Arrival,
    /// Instant prefill started.
    Scheduled,
    /// Instant of the first output token.
    FirstToken,
    /// Instant the response completed.
    End,
    /// Duration arrival -> first token.
    Ttft,
    /// Duration of queueing.
    Queue,
    /// Duration scheduled -> first token.
    Prefill,
    /// Duration first -> last token.
    Decode,
    /// Duration arrival -> end.
    E2e,
    /// Prompt tokens, cached included.
    InputTokens,
    /// Cached prompt tokens.
    CachedTokens,
    /// Prompt tokens actually evaluated (llama.cpp `prompt_n`): cached = input - this, when
    /// no cached count is logged.
    EvaluatedTokens,
    /// Generated tokens.
    OutputTokens,
    /// When the line was written (an instant: the request's end, for duration-only formats).
    LoggedAt,
    /// The gaps between consecutive output tokens or chunks: an array of durations (vLLM
    /// bench `itls[i]`). Their sum is the decode time when none is logged.
    Itl,
    /// Duration arrival -> first answer token (a reasoning model's first token after its
    /// reasoning: AIPerf's `time_to_first_output_token`).
    Ttfot,
}

impl Field {
    /// All fields, in `--map` order.
    pub const ALL: [Field; 16] = [
        Field::Arrival,
        Field::Scheduled,
        Field::FirstToken,
        Field::End,
        Field::Ttft,
        Field::Queue,
        Field::Prefill,
        Field::Decode,
        Field::E2e,
        Field::InputTokens,
        Field::CachedTokens,
        Field::EvaluatedTokens,
        Field::OutputTokens,
        Field::LoggedAt,
        Field::Itl,
        Field::Ttfot,
    ];

    /// The name used by `--map` and `tokentime formats`.
    pub fn name(self) -> &'static str {
        match self {
            Field::Arrival => "arrival",
            Field::Scheduled => "scheduled",
            Field::FirstToken => "first_token",
            Field::End => "end",
            Field::Ttft => "ttft",
            Field::Queue => "queue",
            Field::Prefill => "prefill",
            Field::Decode => "decode",
            Field::E2e => "e2e",
            Field::InputTokens => "input_tokens",
            Field::CachedTokens => "cached_tokens",
            Field::EvaluatedTokens => "evaluated_tokens",
            Field::OutputTokens => "output_tokens",
            Field::LoggedAt => "logged_at",
            Field::Itl => "itl",
            Field::Ttfot => "ttfot",
        }
    }

    /// Parses a `--map` field name.
    pub fn from_name(s: &str) -> Option<Field> {
        Field::ALL.into_iter().find(|f| f.name() == s)
    }

    /// True for instants (need a timestamp unit), false for durations and counts. `logged_at`
    /// is one: the wall-clock time the line was written.
    pub fn is_instant(self) -> bool {
        matches!(
            self,
            Field::Arrival | Field::Scheduled | Field::FirstToken | Field::End | Field::LoggedAt
        )
    }

    /// True for token counts.
    pub fn is_count(self) -> bool {
        matches!(
            self,
            Field::InputTokens | Field::CachedTokens | Field::EvaluatedTokens | Field::OutputTokens
        )
    }

    /// The unit assumed when `--map` names none.
    pub fn default_unit(self) -> Unit {
        if self.is_instant() {
            Unit::EpochAuto
        } else if self.is_count() {
            Unit::Count
        } else {
            Unit::Ms
        }
    }
}

/// A condition on a line. In a formats file: `{present = "a.b"}`, `{path = "a.b", equals =
/// VALUE}`, `{path = "a.b", differs = VALUE}`, `{path = "a.b", at_least = NUMBER}`, `{not =
/// COND}` (see [`crate::format::file`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(try_from = "crate::format::file::CondDef")]
pub enum Cond {
    /// The path has a non-null value.
    Present(Vec<String>),
    /// The path is set: it has a value that is not null, `false`, a zero, an empty string, an
    /// empty array or an empty object (`--map error_when=error`: an `"error": ""` on every
    /// success is no failure).
    Set(Vec<String>),
    /// The path's raw JSON text equals this (`"\"failure\""`, `"true"`).
    Equals(Vec<String>, String),
    /// The path has a non-null value whose raw JSON text is not this (Helicone: a
    /// `cache_reference_id` that is not the all-zero UUID).
    Differs(Vec<String>, String),
    /// The path holds a number (or a decimal string) at least this (an HTTP status >= 400).
    AtLeast(Vec<String>, i64),
    /// The path holds a string that contains this, ignoring ASCII case (LiteLLM: an
    /// `error_str` that says the client disconnected).
    Contains(Vec<String>, String),
    /// The inner condition does not hold (Kong: streamed unless `request_mode` is `"oneshot"`,
    /// which also covers versions that do not log the mode).
    Not(Box<Cond>),
    /// At least one of these holds (tokentime's own rows: an `outcome` of `"ok"`, `"error"` or
    /// `"cancelled"`).
    Any(Vec<Cond>),
}

/// Where one field is read: the first present of `paths`, decoded with `unit`.
///
/// When several rules fill the same field, the first that yields a value wins (Helicone:
/// `total_tokens - completion_tokens`, else `prompt_tokens`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(try_from = "crate::format::file::FieldRuleDef")]
pub struct FieldRule {
    /// The canonical field.
    pub field: Field,
    /// The paths read (alternatives or operands, as `combine` says).
    pub paths: Vec<Vec<String>>,
    /// How to decode each value.
    pub unit: Unit,
    /// How several paths combine into one value.
    pub combine: Combine,
}

/// How the values at a [`FieldRule`]'s paths make one value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Combine {
    /// The first present path wins (alternative spellings of one field).
    #[default]
    First,
    /// The sum of the present paths (Ollama: TTFT ~ `load_duration + prompt_eval_duration`);
    /// none present is absent.
    Sum,
    /// `floor(paths[0] / paths[1])`, both decoded with `unit`, as a count (TGI: generated tokens
    /// = `floor(inference_time / time_per_token)`, FORMATS.md section 1).
    FloorRatio,
    /// The first present path, or 0 when none is: for producers that omit zero values (Go's
    /// `omitempty`: Ollama drops `eval_duration` for a one-token answer).
    FirstOrZero,
    /// `paths[0] - paths[1]`, both present (NIM: decode = `generation_time_in_ms -
    /// time_to_first_token_in_ms`, both from processing start). A negative duration is kept,
    /// so the metric becomes null and the line is counted as an anomaly; a negative count is
    /// absent.
    Difference,
    /// `paths[0] * (paths[1] - 1)`: a duration per output token after the first (decoded with
    /// `unit`) times an output token count less one, both present, the count at least 2
    /// (tokentime's own rows: decode = `tpot_ms * (output_tokens - 1)`, SPEC's TPOT read back).
    PerTokenAfterFirst,
}

impl Combine {
    /// The name used in formats files and `tokentime formats` (`first`, `sum`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Combine::First => "first",
            Combine::Sum => "sum",
            Combine::FloorRatio => "floor_ratio",
            Combine::Difference => "difference",
            Combine::FirstOrZero => "first_or_zero",
            Combine::PerTokenAfterFirst => "per_token_after_first",
        }
    }

    /// Parses a combine name.
    pub fn from_name(s: &str) -> Option<Combine> {
        [
            Combine::First,
            Combine::Sum,
            Combine::FloorRatio,
            Combine::Difference,
            Combine::FirstOrZero,
            Combine::PerTokenAfterFirst,
        ]
        .into_iter()
        .find(|c| c.name() == s)
    }
}

/// Where the requests of a line are, when a line holds several (SPEC section 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordSource {
    /// Each element matched by the path pattern (`*` matches every array element or object
    /// member) is one request, read with the format's fields relative to it. OTLP
    /// `attributes` lists are turned into objects keyed by attribute name first.
    Each(Vec<Vec<String>>),
    /// Parallel arrays: element `i` of every named array makes request `i` (vLLM bench
    /// results: `ttfts`, `itls`, `output_lens`, ...), read as an object of those names.
    Columns(Vec<String>),
}

/// A measurement window: only records whose [start, end] overlaps the window of their group
/// (the element matched by the pattern's first `*`) are requests; the others are counted as
/// outside the window (guidellm's warm-up and cool-down requests). In a formats file:
/// `record_window = { start = PATH, end = PATH, record_start = PATH, record_end = PATH }`.
/// The four are numbers in one unit (any: they are only compared); a group without a window
/// keeps all its records, a record without a start or an end is outside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordWindow {
    /// Window start, epoch seconds, relative to the group.
    pub start: Vec<String>,
    /// Window end, relative to the group.
    pub end: Vec<String>,
    /// Record start, epoch seconds, relative to the record.
    pub record_start: Vec<String>,
    /// Record end, relative to the record.
    pub record_end: Vec<String>,
}

/// How the lines of one request are joined (SPEC section 3: multi-line requests).
///
/// Every line with the format's markers belongs to a request, found by its key. The line that
/// satisfies `complete_when` completes it: its `fields` are read, and what it lacks is filled
/// from the `part_fields` of the earlier lines (the first line that has a field sets it).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JoinSpec {
    /// The key's components; each is the first present of its alternative paths (llama.cpp:
    /// `[[id_slot, slot_id], [id_task, task_id]]`). No component: one request at a time per
    /// stream (an Ollama stream, whose chunks carry no id, keyed by model).
    pub key: Vec<Vec<Vec<String>>>,
    /// The line that completes the request satisfies all of these.
    pub complete_when: Vec<Cond>,
    /// Fields read from the lines before the completing one.
    pub part_fields: Vec<FieldRule>,
    /// A completing line with no earlier line is an orphan (counted), not a normal request.
    pub parts_required: bool,
    /// A completing line for which any of these holds is a whole response on its own (an
    /// Ollama non-streamed answer, with its text): it takes nothing from earlier lines.
    pub standalone_when: Vec<Cond>,
    /// When set, an earlier line gives the first-token instant only when one of these holds:
    /// the chunk carries output (text, reasoning, a tool call). A stream's first chunk may
    /// carry none (Ollama's opening `{"response":"","done":false}`), and TTFT runs to the
    /// first chunk that carries output.
    pub output_when: Vec<Cond>,
}

/// One log format as data. A formats file (`--formats FILE`) holds the same tables; the
/// member names below are its keys (see [`crate::format::file`] for the schema).
#[derive(Debug, Clone, PartialEq, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FormatSpec {
    /// Stable name (`litellm`), used by `--format`.
    pub name: String,
    /// One line on what the format is.
    #[serde(default)]
    pub about: String,
    /// A request record of this format satisfies all of these.
    pub markers: Vec<Cond>,
    /// An error record of this format (which may lack the markers) satisfies all of these.
    #[serde(default)]
    pub error_markers: Vec<Cond>,
    /// The error markers are too generic for auto-detection (Ollama's `{"error": "..."}`):
    /// they count only when this format is forced with `--format`.
    #[serde(default)]
    pub errors_only_when_forced: bool,
    /// A line with the markers is still no request when all conditions of any one of these
    /// groups hold (a stream's intermediate chunk that repeats the timings so far).
    #[serde(default, deserialize_with = "crate::format::file::de_skip_when")]
    pub skip_when: Vec<Vec<Cond>>,
    /// What the lines `skip_when` sets aside are, counted under this name apart from the
    /// lines of no timing (`warm-up records`); empty: `skipped by NAME`.
    #[serde(default)]
    pub skip_label: String,
    /// A matched record is an error when any of these holds.
    #[serde(default)]
    pub error_when: Vec<Cond>,
    /// A matched record was cancelled when any of these holds.
    #[serde(default)]
    pub cancelled_when: Vec<Cond>,
    /// A gateway's response cache answered when any of these holds.
    #[serde(default)]
    pub response_cache_when: Vec<Cond>,
    /// When set, the response was streamed (first token observable) only if this holds.
    #[serde(default)]
    pub streamed_when: Option<Cond>,
    /// What the format's arrival instant is (`Arrival` for a server, `Gateway` for a gateway).
    #[serde(default, deserialize_with = "crate::format::file::de_origin")]
    pub arrival_origin: Origin,
    /// A line's own origin where it says it, in place of `arrival_origin`: the first whose
    /// condition holds (tokentime's rows: their `ttft_origin` column). Built-in formats only.
    #[serde(skip)]
    pub origin_when: Vec<(Origin, Cond)>,
    /// What its `itl_ms` gaps are (`chunk gaps`: one per stream chunk, a chunk may carry
    /// several tokens), for `tokentime formats`; empty when unknown (a `--map itl` array).
    #[serde(default)]
    pub itl_doc: String,
    /// What its TTFT is measured from, for `tokentime formats`.
    #[serde(default)]
    pub ttft_doc: String,
    /// What its cache signal means, for `tokentime formats`.
    #[serde(default)]
    pub cache_doc: String,
    /// The fields and where they are read.
    pub fields: Vec<FieldRule>,
    /// Where the request id is read (for `--output csv` and diagnostics).
    #[serde(
        default,
        rename = "id",
        deserialize_with = "crate::format::file::de_paths"
    )]
    pub id_paths: Vec<Vec<String>>,
    /// Where the model name is read.
    #[serde(
        default,
        rename = "model",
        deserialize_with = "crate::format::file::de_paths"
    )]
    pub model_paths: Vec<Vec<String>>,
    /// Where a failed request's reason is read (an error class, a code, an HTTP status or a
    /// message): the first path holding a string or a number; normalized by
    /// [`reason::normalize_into`].
    #[serde(
        default,
        rename = "reason",
        deserialize_with = "crate::format::file::de_paths"
    )]
    pub reason_paths: Vec<Vec<String>>,
    /// Tried only after every other format failed to match, in table order, and never first by
    /// the last-match hint: for formats whose markers are generic (a bare `usage` object) and
    /// would otherwise claim lines that a more specific format reads.
    #[serde(default)]
    pub fallback: bool,
    /// The E2E latency is only what the line writes: none is made of the TTFT and the decode
    /// (tokentime's own rows, whose `e2e_ms` is null where the log they came from had no E2E).
    #[serde(skip)]
    pub e2e_as_written: bool,
    /// A request's end is its start plus its E2E where both are there, the line's time
    /// (`logged_at`) only where not: AIPerf stamps a record's `request_end_ns` after the stream
    /// closed, tens of ms after the last response its `request_latency` runs to.
    #[serde(skip)]
    pub end_from_e2e_first: bool,
    /// When set, a line holds several requests, found here; `markers` then apply to the line
    /// and everything else (fields, conditions) to each record.
    #[serde(default, deserialize_with = "crate::format::file::de_records")]
    pub records: Option<RecordSource>,
    /// With `records`: a record is a request of this format when all of these hold.
    #[serde(default)]
    pub record_markers: Vec<Cond>,
    /// With `records`: the measurement window records must overlap.
    #[serde(default, deserialize_with = "crate::format::file::de_window")]
    pub record_window: Option<RecordWindow>,
    /// With `records`: members copied into each record that has no member of that name, from
    /// the record's group (the element the first `*` of a pattern takes: a benchmark of a
    /// report) where it has one, else from the line's top-level object (a benchmark result's
    /// `model_id`, which holds for all its requests), so the fields and `model` paths read
    /// them as the record's own.
    #[serde(default)]
    pub record_carry: Vec<String>,
    /// With `records`: where the line's top level holds the run's duration in seconds (a
    /// benchmark result's `duration`, over which its producer gives its throughput); the first
    /// present is read. A summary's rates of the requests that log no time run over it.
    #[serde(
        default,
        rename = "run_seconds",
        deserialize_with = "crate::format::file::de_paths"
    )]
    pub run_seconds: Vec<Vec<String>>,
    /// When set, a request spans several lines, joined this way.
    #[serde(skip)]
    pub join: Option<JoinSpec>,
    /// Read from a formats file (`--formats`): its units are the user's, checked as `--map`'s.
    #[serde(skip)]
    pub from_file: bool,
}

impl FormatSpec {
    /// Whether the user wrote this format's units (`--map`'s format, or one from a formats
    /// file), so that the checks of units that fit no log are made on it.
    pub(crate) fn users_units(&self) -> bool {
        self.name == "custom" || self.from_file
    }

    /// How the user writes `unit` for this format: `:epoch_ms` (`--map`), `unit = "epoch_ms"`
    /// (a formats file).
    pub(crate) fn unit_syntax(&self, unit: &str) -> String {
        if self.from_file {
            format!("unit = \"{unit}\"")
        } else {
            format!(":{unit}")
        }
    }

    /// What the lines `skip_when` leaves out are called in the report: `skip_label`, else
    /// `skipped by NAME`.
    pub fn skip_name(&self) -> std::borrow::Cow<'_, str> {
        if self.skip_label.is_empty() {
            std::borrow::Cow::Owned(format!("skipped by {}", self.name))
        } else {
            std::borrow::Cow::Borrowed(&self.skip_label)
        }
    }
}

/// A dotted path as segments (no escapes; for the built-in tables).
pub(crate) fn p(s: &str) -> Vec<String> {
    s.split('.').map(str::to_owned).collect()
}

/// A field rule reading the first present of `paths`.
pub(crate) fn rule(field: Field, unit: Unit, paths: &[&str]) -> FieldRule {
    FieldRule {
        field,
        unit,
        combine: Combine::First,
        paths: paths.iter().map(|s| p(s)).collect(),
    }
}

/// Parses a dotted path (`usage.prompt_tokens`). A key with a dot or a `[` in it is written
/// with a backslash: `a\.b`. An array element is its own segment: `a[0]` (the first), `a[-1]`
/// (the last), also written `a.[-1]`.
///
/// ```text
/// use tokentime::format::parse_path;
/// assert_eq!(parse_path("a.b[-1].c"), ["a", "b", "[-1]", "c"]);
/// assert_eq!(parse_path(r"gen_ai\.usage.x"), ["gen_ai.usage", "x"]);
/// ```
pub(crate) fn parse_path(s: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let (Some(n), Some(last)) = (chars.next(), out.last_mut()) {
                    last.push(n);
                }
            }
            '.' => out.push(String::new()),
            '[' => {
                if out.last().is_some_and(|l| !l.is_empty()) {
                    out.push(String::new());
                }
                if let Some(last) = out.last_mut() {
                    last.push('[');
                }
            }
            c => {
                if let Some(last) = out.last_mut() {
                    last.push(c);
                }
            }
        }
    }
    out
}

/// A path as `parse_path` reads it back (dots between keys, `[i]` for elements, `\` before a
/// dot or `[` inside a key).
pub(crate) fn path_str(path: &[String]) -> String {
    let mut s = String::new();
    for (i, seg) in path.iter().enumerate() {
        if index_segment(seg).is_some() {
            s.push_str(seg);
            continue;
        }
        if i > 0 {
            s.push('.');
        }
        for c in seg.chars() {
            if matches!(c, '.' | '[' | '\\') {
                s.push('\\');
            }
            s.push(c);
        }
    }
    s
}

/// The built-in formats, in detection order.
pub fn builtins() -> Vec<FormatSpec> {
    builtin::all()
}

impl std::fmt::Display for Cond {
    /// `a.b`, `a.b == "x"`, `a.b != "x"`, `a.b >= 400`, `not (...)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cond::Present(p) => write!(f, "{}", path_str(p)),
            Cond::Set(p) => write!(f, "{} is set", path_str(p)),
            Cond::Equals(p, v) => write!(f, "{} == {v}", path_str(p)),
            Cond::Differs(p, v) => write!(f, "{} != {v}", path_str(p)),
            Cond::AtLeast(p, v) => write!(f, "{} >= {v}", path_str(p)),
            Cond::Contains(p, v) => write!(f, "{} contains {v:?}", path_str(p)),
            Cond::Not(c) => write!(f, "not ({c})"),
            Cond::Any(cs) => {
                let each: Vec<String> = cs.iter().map(ToString::to_string).collect();
                write!(f, "any of ({})", each.join(", "))
            }
        }
    }
}

/// Where and how format `f` reads `field` (`startTime as epoch_s`; alternatives joined by
/// `|`), for a diagnostic about a value it could not read.
pub(crate) fn field_source(f: &FormatSpec, field: &str) -> String {
    let rules: Vec<String> = f
        .fields
        .iter()
        .filter(|r| r.field.name() == field)
        .map(|r| {
            let paths: Vec<String> = r.paths.iter().map(|p| path_str(p)).collect();
            let unit = match r.unit {
                Unit::EpochAuto => "epoch s, ms, us or ns (by magnitude) or an RFC 3339 string",
                u => u.name(),
            };
            format!("{} as {unit}", paths.join(" | "))
        })
        .collect();
    rules.join("; ")
}

/// For `--map`'s format, what else `field`'s unit could be when a value of it is not readable:
/// a duration string (`"127.5ms"`) read as a number of ms needs `:duration`, a timestamp
/// string read as epoch seconds `:rfc3339` or `:epoch`. Empty for any other format or unit,
/// and where `value` (the JSON text the line holds, when found) is text no such unit reads
/// (`"n/a"`).
pub(crate) fn unit_hint(f: &FormatSpec, field: &str, value: Option<&str>) -> String {
    let unit = f
        .fields
        .iter()
        .find(|r| r.field.name() == field)
        .map(|r| r.unit);
    // A number too large for a duration: past 2^63 ns, about 292 years.
    let ns_per = match unit {
        Some(Unit::S) => Some(1e9),
        Some(Unit::Ms) => Some(1e6),
        Some(Unit::Us) => Some(1e3),
        Some(Unit::Ns) => Some(1.0),
        _ => None,
    };
    if let (Some(per), Some(v)) = (ns_per, value.and_then(|v| v.parse::<f64>().ok()))
        && (v * per).abs() >= 9.2e18
    {
        return "; past 2^63 ns (about 292 years), the longest duration tokentime holds".into();
    }
    if !f.users_units() {
        return String::new();
    }
    // The text inside a JSON string; a number or any other value takes no hint.
    let text = value.map(|v| v.strip_prefix('"').and_then(|v| v.strip_suffix('"')));
    let starts_numeric = |t: &str| {
        t.trim_start_matches(['-', '+'])
            .starts_with(|c: char| c.is_ascii_digit() || c == '.')
    };
    match unit {
        Some(Unit::S | Unit::Ms | Unit::Us | Unit::Ns)
            if text.is_none_or(|t| t.is_some_and(starts_numeric)) =>
        {
            format!(
                "; a duration written with its unit, \"127.5ms\", is read with {}",
                f.unit_syntax("duration")
            )
        }
        Some(Unit::EpochS | Unit::EpochMs | Unit::EpochUs | Unit::EpochNs)
            if text
                .is_none_or(|t| t.is_some_and(|t| t.starts_with(|c: char| c.is_ascii_digit()))) =>
        {
            format!(
                "; a timestamp written as a date is read with {} ({} reads either)",
                f.unit_syntax("rfc3339"),
                f.unit_syntax("epoch")
            )
        }
        _ => String::new(),
    }
}

/// The record of `line` under `root` as a tree, for a diagnostic: `None` where the line is no
/// JSON object holding one (a wrapper, a multi-record line).
pub(crate) fn record_value(line: &[u8], root: &[String]) -> Option<serde_json::Value> {
    let line = &line[memchr::memchr(b'{', line)?..];
    // A `NaN` where a number is read shows as the string `"NaN"`, a number serde_json would
    // write otherwise (beyond `f64`, past 64 bits, `1e+30`) as the string of its text.
    let non_finite = crate::json::non_finite_as_strings(line);
    let text = non_finite.as_deref().unwrap_or(line);
    let written = crate::json::numbers_as_written(text);
    let whole: serde_json::Value =
        serde_json::from_slice(written.as_deref().unwrap_or(text)).ok()?;
    root.iter().try_fold(whole, |mut v, key| {
        v.get_mut(key).map(serde_json::Value::take)
    })
}

/// The value `record` ([`record_value`]) holds for `field` as format `f` reads it (the first of
/// its paths present), as JSON text cut to 40 characters, for a diagnostic.
pub(crate) fn logged_value(
    f: &FormatSpec,
    field: &str,
    record: &serde_json::Value,
) -> Option<String> {
    logged_at(f, field, record).map(|(_, value)| value)
}

/// [`logged_value`] and the path it was found at.
pub(crate) fn logged_at(
    f: &FormatSpec,
    field: &str,
    record: &serde_json::Value,
) -> Option<(String, String)> {
    let (path, found) = f
        .fields
        .iter()
        .filter(|r| r.field.name() == field)
        .flat_map(|r| &r.paths)
        .find_map(|path| {
            let v = path
                .iter()
                .try_fold(record, |v, key| match v {
                    serde_json::Value::Array(a) => a.get(key.parse::<usize>().ok()?),
                    _ => v.get(key),
                })
                .filter(|v| !v.is_null())?;
            Some((path, v))
        })?;
    // A number as written (see `record_value`).
    let text = match found
        .as_str()
        .and_then(|s| s.strip_prefix(crate::json::OVERFLOW_MARK))
    {
        Some(number) => number.to_owned(),
        None => found.to_string(),
    };
    Some((path_str(path), clipped(text)))
}

/// The first element of `record`'s token-gap list that format `f` cannot read as a duration,
/// with its index, as JSON text cut to 40 characters, for a diagnostic.
pub(crate) fn unreadable_gap(
    f: &FormatSpec,
    record: &serde_json::Value,
) -> Option<(usize, String)> {
    find_gap(f, record, |ns| ns.is_none())
}

/// The first element of `record`'s token-gap list that format `f` reads as a negative
/// duration, with its index, as JSON text cut to 40 characters, for a diagnostic.
pub(crate) fn negative_gap(f: &FormatSpec, record: &serde_json::Value) -> Option<(usize, String)> {
    find_gap(f, record, |ns| ns.is_some_and(|ns| ns < 0))
}

/// The first element of `record`'s token-gap list whose duration as format `f` reads it
/// (`None`: not readable) is `bad`, with its index, as JSON text cut to 40 characters.
fn find_gap(
    f: &FormatSpec,
    record: &serde_json::Value,
    bad: impl Fn(Option<i64>) -> bool,
) -> Option<(usize, String)> {
    f.fields
        .iter()
        .filter(|r| r.field == Field::Itl)
        .find_map(|r| {
            let list = r.paths.iter().find_map(|path| {
                path.iter()
                    .try_fold(record, |v, key| v.get(key.as_str()))?
                    .as_array()
            })?;
            list.iter().enumerate().find_map(|(i, v)| {
                let text = v.to_string();
                bad(units::decode_ns(&text, r.unit)).then(|| (i, clipped(text)))
            })
        })
}

/// A value's text for a message: its first 40 characters and `…` when longer.
pub(crate) fn clipped(text: String) -> String {
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// The outcome rules of [`describe`]: the lines the format leaves out, error records, error,
/// cancellation and response-cache conditions, and when a response was streamed.
fn describe_outcomes(f: &FormatSpec, s: &mut String) {
    use std::fmt::Write as _;
    if !f.skip_when.is_empty() {
        let groups: Vec<String> = f
            .skip_when
            .iter()
            .map(|g| match g.len() {
                1 => conds(g, " and "),
                _ => format!("({})", conds(g, " and ")),
            })
            .collect();
        let label = f.skip_name();
        let _ = writeln!(
            s,
            "  no request, counted as {label}, when: {}",
            groups.join(" or ")
        );
    }
    let error_record = if f.errors_only_when_forced {
        format!(
            "error record (with --format {} only: too generic for auto)",
            f.name
        )
    } else {
        "error record".to_owned()
    };
    for (what, cs, sep) in [
        (error_record.as_str(), &f.error_markers, " and "),
        ("error when", &f.error_when, " or "),
        ("cancelled when", &f.cancelled_when, " or "),
        ("response cache when", &f.response_cache_when, " or "),
    ] {
        if !cs.is_empty() {
            let _ = writeln!(s, "  {what}: {}", conds(cs, sep));
        }
    }
    if let Some(c) = &f.streamed_when {
        let _ = writeln!(s, "  streamed when: {c}");
    }
}

/// Describes a format for `tokentime formats`: what it is, how a line is recognized, which
/// outcome rules apply, its TTFT origin and cache signal, and each field with its unit and
/// paths (`a | b` alternatives, `a + b` sums, `floor(a / b)`, `a - b`).
pub(crate) fn describe(f: &FormatSpec) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    match f.about.as_str() {
        "" => {
            let _ = writeln!(s, "{}", f.name);
        }
        about => {
            let _ = writeln!(s, "{}: {about}", f.name);
        }
    }
    let _ = writeln!(s, "  detected by: {}", conds(&f.markers, " and "));
    if f.fallback {
        let _ = writeln!(s, "  fallback: tried only after every other format");
    }
    describe_outcomes(f, &mut s);
    for (what, paths) in [
        ("error reason", &f.reason_paths),
        ("request id", &f.id_paths),
        ("model", &f.model_paths),
    ] {
        if !paths.is_empty() {
            let p: Vec<String> = paths.iter().map(|p| path_str(p)).collect();
            let _ = writeln!(s, "  {what}: {}", p.join(" | "));
        }
    }
    match &f.records {
        Some(RecordSource::Each(patterns)) => {
            let p: Vec<String> = patterns.iter().map(|p| path_str(p)).collect();
            let _ = writeln!(
                s,
                "  requests: each of {} (fields below are per record)",
                p.join(", ")
            );
            if !f.record_markers.is_empty() {
                let _ = writeln!(
                    s,
                    "  a record is a request when: {}",
                    conds(&f.record_markers, " and ")
                );
            }
        }
        Some(RecordSource::Columns(cols)) => {
            let _ = writeln!(
                s,
                "  requests: element i of the arrays {}; each also reads the line's members that are no array or object (the run's settings)",
                cols.join(", ")
            );
        }
        None => {}
    }
    if !f.record_carry.is_empty() {
        let _ = writeln!(
            s,
            "  each request also reads its group's or the line's: {}",
            f.record_carry.join(", ")
        );
    }
    if !f.run_seconds.is_empty() {
        let _ = writeln!(
            s,
            "  the run's duration (s; rates of requests that log no time): {}",
            f.run_seconds
                .iter()
                .map(|p| path_str(p))
                .collect::<Vec<_>>()
                .join(" | ")
        );
    }
    if let Some(j) = &f.join {
        describe_join(&mut s, j);
    }
    // A formats file may leave the texts out: its arrival origin is still known.
    match f.ttft_doc.as_str() {
        "" => {
            let _ = writeln!(s, "  TTFT origin: {}", f.arrival_origin.as_str());
        }
        doc => {
            let _ = writeln!(s, "  TTFT origin: {doc}");
        }
    }
    if !f.itl_doc.is_empty() {
        let _ = writeln!(s, "  itl_ms: {}", f.itl_doc);
    }
    if !f.cache_doc.is_empty() {
        let _ = writeln!(s, "  cache: {}", f.cache_doc);
    }
    for r in &f.fields {
        let paths: Vec<String> = r.paths.iter().map(|p| path_str(p)).collect();
        let how = match r.combine {
            Combine::First => paths.join(" | "),
            Combine::Sum => paths.join(" + "),
            Combine::FloorRatio => format!("floor({})", paths.join(" / ")),
            Combine::Difference => paths.join(" - "),
            Combine::FirstOrZero => format!("{} (absent: 0)", paths.join(" | ")),
            Combine::PerTokenAfterFirst => format!("{} * ({} - 1)", paths[0], paths[1]),
        };
        let _ = writeln!(s, "  {:<16} {:<8} {how}", r.field.name(), r.unit.name());
    }
    s
}

/// Conditions as `tokentime formats` writes them, joined by `sep` (` and `, ` or `).
fn conds(cs: &[Cond], sep: &str) -> String {
    cs.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(sep)
}

/// The lines `tokentime formats` writes on how a format's lines join into one request.
fn describe_join(s: &mut String, j: &JoinSpec) {
    use std::fmt::Write as _;
    let key: Vec<String> = j
        .key
        .iter()
        .map(|alts| {
            alts.iter()
                .map(|p| path_str(p))
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect();
    let _ = writeln!(
        s,
        "  one request spans several lines, joined by [{}]; completed by the line where {}",
        key.join(", "),
        conds(&j.complete_when, " and ")
    );
    for r in &j.part_fields {
        let paths: Vec<String> = r.paths.iter().map(|p| path_str(p)).collect();
        let _ = writeln!(
            s,
            "  {:<16} {:<8} {} (earlier lines)",
            r.field.name(),
            r.unit.name(),
            paths.join(" | ")
        );
    }
    if !j.output_when.is_empty() {
        let _ = writeln!(
            s,
            "  first_token from the first earlier line that carries output: {}",
            conds(&j.output_when, " or ")
        );
    }
}

/// The names of the units that satisfy `keep`, comma-separated.
fn unit_names(keep: fn(Unit) -> bool) -> String {
    names(Unit::ALL, keep, Unit::name)
}

/// The names of the fields that satisfy `keep`, comma-separated.
fn field_names(keep: fn(Field) -> bool) -> String {
    names(Field::ALL, keep, Field::name)
}

/// The names (`name`) of the items of `all` that satisfy `keep`, comma-separated.
fn names<T: Copy, const N: usize>(
    all: [T; N],
    keep: fn(T) -> bool,
    name: fn(T) -> &'static str,
) -> String {
    let names: Vec<&str> = all.into_iter().filter(|&x| keep(x)).map(name).collect();
    names.join(", ")
}

/// The help text of `--map`, with every name it accepts and every unit, from [`Field::ALL`]
/// and [`Unit::ALL`] (so the list cannot drift from what [`custom`] reads).
pub(crate) fn map_help() -> String {
    format!(
        "Custom format field: NAME=PATH[:UNIT], repeatable or comma-separated (e.g. \
         arrival=req.t0:epoch_s,end=req.t2:epoch_s). \
         Names: {} (instants; logged_at is when the line was written, taken as the end where \
         no end is logged); {} (durations; itl is an array of token gaps); {} (counts); id, \
         model, stream; reason (why a failed request failed: a string or a number). Units: {} \
         (instants; epoch, the default, reads any of them); {} (durations; without one, the \
         unit the path's last key ends in, ttft_s or latencyMs, else ms; duration reads \
         \"1.5s\"). Conditions, repeatable (any \
         holds): error_when=, cancelled_when=, response_cache_when= COND, COND being PATH \
         (set: not null, false, 0 or empty), PATH==VALUE, PATH!=VALUE, PATH>=INTEGER or !COND (e.g. \
         error_when=status>=500). records=PATH[*]: each element is a request, read with the \
         paths above relative to it (e.g. records=data.items[*])",
        field_names(Field::is_instant),
        field_names(|f| !f.is_instant() && !f.is_count()),
        field_names(Field::is_count),
        unit_names(Unit::is_timestamp),
        unit_names(Unit::is_duration),
    )
}

/// The `--map` names of conditions: `NAME=CONDITION` ([`cond_expr`]), any of which holds.
const WHEN: [&str; 3] = ["error_when", "cancelled_when", "response_cache_when"];

/// A records path (`results[*]`, `a.b[*].c[*]`) as a pattern: `[*]` (or `*`) is every element.
pub(crate) fn record_pattern(s: &str) -> Vec<String> {
    parse_path(s)
        .into_iter()
        .map(|seg| if seg == "[*]" { "*".to_owned() } else { seg })
        .collect()
}

/// The field and unit of `--map` entry `m` (`name=PATH:unit`), checked against each other.
///
/// # Errors
/// An unknown field or unit, or a unit of another clock domain than the field's.
fn map_field(
    m: &str,
    (name, path): (&str, &str),
    unit: Option<&str>,
) -> Result<(Field, Unit), String> {
    let field = Field::from_name(name).ok_or_else(|| {
        let names: Vec<_> = Field::ALL.iter().map(|f| f.name()).collect();
        format!(
            "--map {m}: unknown field {name:?} (known: {}, id, model, stream, reason, records; \
             conditions: {})",
            names.join(", "),
            WHEN.join(", ")
        )
    })?;
    let unit = match unit {
        None => named_unit(field, path).unwrap_or(field.default_unit()),
        Some(u) => Unit::from_name(u)
            .ok_or_else(|| format!("--map {m}: unknown unit {u:?} ({})", unit_names(|_| true)))?,
    };
    if field.is_instant() && !unit.is_timestamp() {
        return Err(format!(
            "--map {m}: {name} is an instant and needs a timestamp unit ({}), not {}",
            unit_names(Unit::is_timestamp),
            unit.name()
        ));
    }
    if !field.is_instant() && !field.is_count() && !unit.is_duration() {
        return Err(format!(
            "--map {m}: {name} is a duration and needs a duration unit ({}), not {}",
            unit_names(Unit::is_duration),
            unit.name()
        ));
    }
    if field.is_count() && unit != Unit::Count {
        return Err(format!("--map {m}: {name} is a token count; give no unit"));
    }
    Ok((field, unit))
}

/// The unit the last key of `path` names by its suffix (`ttft_s`, `latencyMs`,
/// `queue_time_in_ms`: see [`infer`]) when `field` is a duration; `None` otherwise.
fn named_unit(field: Field, path: &str) -> Option<Unit> {
    if field.is_instant() || field.is_count() {
        return None;
    }
    let last = parse_path(path).pop()?;
    infer::strip_unit(&infer::snake(&last)).1
}

/// What a run with `--map` entries `maps` is told before it reads: [`map_notice`], and that a
/// `reason` with no `error_when` marks no request failed (the reason is read only for failures).
pub(crate) fn map_notices(maps: &[String]) -> Vec<String> {
    let mut out: Vec<String> = map_notice(maps).into_iter().collect();
    let named = |n: &str| {
        maps.iter()
            .find(|m| m.split_once('=').is_some_and(|(k, _)| k == n))
    };
    if let Some(reason) = named("reason")
        && named("error_when").is_none()
    {
        let path = reason.split_once('=').map_or("", |(_, p)| p);
        out.push(format!(
            "--map {reason}: a reason is read only for failed requests, and no --map error_when \
             says which failed, so none does (--map error_when={path} fails those where it is \
             set: not null, false, 0 or empty)"
        ));
    }
    out
}

/// The durations mapped with no unit that their path's name does not give either, read as ms
/// (one line naming them all; a log in seconds read as ms is 1000 times off, with nothing else
/// to show it). `None` when every duration has its unit.
pub(crate) fn map_notice(maps: &[String]) -> Option<String> {
    let bare: Vec<&str> = maps
        .iter()
        .filter(|m| {
            let Some((name, path)) = m.split_once('=') else {
                return false;
            };
            let field = Field::from_name(name);
            !path.contains(':')
                && field.is_some_and(|f| {
                    !f.is_instant() && !f.is_count() && named_unit(f, path).is_none()
                })
        })
        .map(String::as_str)
        .collect();
    if bare.is_empty() {
        return None;
    }
    Some(format!(
        "--map {}: no unit given, read as ms (add :s, :us, :ns or :duration where the log writes another unit; :ms silences this)",
        bare.join(", ")
    ))
}

/// `--map` values as one entry each: a value may list several, `ttft=t:s,e2e=latency:s`, cut at
/// each comma that a name `--map` takes and `=` follow (a comma elsewhere, in a path or a
/// condition's value, stays).
pub(crate) fn split_maps(maps: &[String]) -> Vec<String> {
    let named = |rest: &str| {
        rest.split_once('=').is_some_and(|(name, after)| {
            !after.starts_with('=')
                && (Field::from_name(name).is_some()
                    || WHEN.contains(&name)
                    || ["id", "model", "reason", "stream", "records"].contains(&name))
        })
    };
    let mut out = Vec::with_capacity(maps.len());
    for m in maps {
        let mut start = 0;
        for (i, _) in m.match_indices(',') {
            if named(&m[i + 1..]) {
                out.push(m[start..i].to_owned());
                start = i + 1;
            }
        }
        out.push(m[start..].to_owned());
    }
    out
}

/// Builds the custom format of `--map NAME=PATH[:UNIT]` entries.
///
/// # Errors
/// A message naming the entry when a field name or unit is unknown, or when a unit's clock
/// domain does not fit the field (an instant given a duration unit, or the reverse).
pub fn custom(maps: &[String]) -> Result<FormatSpec, String> {
    let mut fields: Vec<FieldRule> = Vec::new();
    // The paths of `id`, `model` and `reason`.
    let mut named: [Vec<Vec<String>>; 3] = Default::default();
    let mut streamed_when = None;
    let mut when: [Vec<Cond>; 3] = Default::default();
    let mut records = vec![];
    for m in maps {
        let (name, rest) = m
            .split_once('=')
            .ok_or_else(|| format!("--map {m}: expected NAME=PATH[:UNIT]"))?;
        if let Some(i) = WHEN.iter().position(|w| *w == name) {
            when[i].push(cond_expr::parse(rest).map_err(|e| format!("--map {m}: {e}"))?);
            continue;
        }
        if name == "records" {
            let pattern = record_pattern(rest);
            if pattern.first().is_none_or(|s| s.is_empty() || s == "*") {
                return Err(format!(
                    "--map {m}: a records path starts with a key (results[*], data.items[*])"
                ));
            }
            records.push(pattern);
            continue;
        }
        let (path, unit) = match rest.rsplit_once(':') {
            Some((path, unit)) => (path, Some(unit)),
            None => (rest, None),
        };
        if path.is_empty() {
            return Err(format!("--map {m}: empty path"));
        }
        if let Some(i) = ["id", "model", "reason"].iter().position(|n| *n == name) {
            named[i].push(parse_path(path));
            continue;
        }
        if name == "stream" {
            streamed_when = Some(Cond::Equals(parse_path(path), "true".into()));
            continue;
        }
        let (field, unit) = map_field(m, (name, path), unit)?;
        match fields.iter_mut().find(|r| r.field == field) {
            Some(r) if r.unit == unit => r.paths.push(parse_path(path)),
            Some(_) => return Err(format!("--map {m}: {name} was given another unit before")),
            None => fields.push(FieldRule {
                field,
                unit,
                paths: vec![parse_path(path)],
                combine: Combine::First,
            }),
        }
    }
    let [error_when, cancelled_when, response_cache_when] = when;
    let [id_paths, model_paths, reason_paths] = named;
    let (markers, error_markers) =
        request_markers(&fields, &[&id_paths, &model_paths], &error_when);
    if markers.is_empty() {
        return Err(
            "--map: map at least one time field (arrival, first_token, end, ttft, ...)".into(),
        );
    }
    // With records, the markers hold for each record; the line holds the first list.
    let (markers, record_markers, records) = match records.first() {
        None => (markers, vec![], None),
        Some(first) => {
            let list: Vec<String> = first.iter().take_while(|s| *s != "*").cloned().collect();
            (
                vec![Cond::Present(list)],
                markers,
                Some(RecordSource::Each(records)),
            )
        }
    };
    Ok(FormatSpec {
        name: "custom".into(),
        about: "defined by --map".into(),
        markers,
        record_markers,
        records,
        error_markers,
        error_when,
        cancelled_when,
        response_cache_when,
        streamed_when,
        arrival_origin: Origin::Arrival,
        ttft_doc: "arrival as mapped".into(),
        cache_doc: "cached_tokens as mapped".into(),
        fields,
        id_paths,
        model_paths,
        reason_paths,
        ..FormatSpec::default()
    })
}

/// The markers of a format made from a mapping (`--map`, `--format inferred`): a line (or a
/// record) is a request when it has a value at any path of a time field (the arrival, an
/// end, a TTFT, an E2E, ...; the time a line was written only when nothing else is mapped: a
/// health check or a start-up line has one too), so that a failure logged without its TTFT is
/// still a request. And its error markers: a line that has none of them but that one of the
/// failure conditions `error_when` calls a failure is a failed request too (a 429 answered
/// before any time was taken), when it has the request's id, model or token counts where
/// those are mapped. Empty markers when no time field is mapped.
pub(crate) fn request_markers(
    fields: &[FieldRule],
    named: &[&Vec<Vec<String>>],
    error_when: &[Cond],
) -> (Vec<Cond>, Vec<Cond>) {
    let times = |logged_at: bool| -> Vec<Cond> {
        let mut paths: Vec<&Vec<String>> = Vec::new();
        for r in fields {
            if !r.field.is_count() && (r.field != Field::LoggedAt) != logged_at {
                for p in &r.paths {
                    if !paths.contains(&p) {
                        paths.push(p);
                    }
                }
            }
        }
        paths
            .into_iter()
            .map(|p| Cond::Present(p.clone()))
            .collect()
    };
    let mut any = times(false);
    if any.is_empty() {
        any = times(true);
    }
    let markers = match any.len() {
        0 => return (vec![], vec![]),
        1 => any,
        _ => vec![Cond::Any(any)],
    };
    let error_markers = if error_when.is_empty() {
        vec![]
    } else {
        let mut identity: Vec<Cond> = named
            .iter()
            .flat_map(|paths| paths.iter())
            .chain(
                fields
                    .iter()
                    .filter(|r| r.field.is_count())
                    .flat_map(|r| &r.paths),
            )
            .map(|p| Cond::Present(p.clone()))
            .collect();
        identity.dedup();
        let mut e = vec![Cond::Any(error_when.to_vec())];
        if !identity.is_empty() {
            e.push(Cond::Any(identity));
        }
        e
    };
    (markers, error_markers)
}

/// Reads `fields` of a line into `t` (and the evaluated-token count into `evaluated`; token
/// gaps into `gaps`).
fn read_fields(
    fields: &[(Field, Unit, Combine, Vec<SlotId>)],
    line: &[u8],
    slots: &Slots,
    t: &mut Timeline,
    gaps: &mut Vec<i64>,
) {
    // The first rule that yields a value for a field wins.
    let mut filled = 0u32;
    let mut unreadable = 0u32;
    let mut first_unreadable = None;
    let mut implausible = 0u32;
    for (field, unit, combine, ids) in fields {
        let bit = 1u32 << (*field as u32);
        if filled & bit != 0 {
            continue;
        }
        // A wall-clock instant outside the plausible window is unknown, not a time.
        if field.is_instant() && unit.is_timestamp() && *combine == Combine::First {
            let Some(raw) = ids.iter().find_map(|&s| slots.raw_bytes(line, s)) else {
                continue;
            };
            match decode_instant_bytes(raw, *unit) {
                Instant::At(v) => {
                    filled |= bit;
                    set_field(t, *field, v);
                }
                Instant::Implausible => implausible |= bit,
                Instant::Unreadable => {
                    unreadable |= bit;
                    first_unreadable = first_unreadable.or(Some(*field));
                }
            }
            continue;
        }
        if *field == Field::Itl {
            if let Some(raw) = ids.iter().find_map(|&s| slots.raw(line, s)) {
                let before = gaps.len();
                // An empty list is a one-token response: its decode took no time.
                let read = read_gaps(raw, *unit, gaps);
                if read == Gaps::Read {
                    filled |= bit;
                    if let Some(&g) = gaps[before..].iter().find(|&&g| g < 0) {
                        // A negative gap: no sample of the list is kept, and the request is
                        // counted as a negative interval. Where the list would give the
                        // decode, the decode is that interval: null, `negative_interval`, as
                        // the metrics made of it, not `not_logged`.
                        gaps.truncate(before);
                        t.negative_gap = true;
                        if t.decode.is_none() {
                            t.decode = Some(g);
                        }
                    } else if t.decode.is_none() {
                        t.decode = Some(gaps[before..].iter().sum());
                    }
                } else if read == Gaps::Unreadable {
                    // A list with an element that is no duration (or no list): present but
                    // unreadable, as any other field.
                    unreadable |= bit;
                    first_unreadable = first_unreadable.or(Some(*field));
                }
            }
            continue;
        }
        // A difference, a ratio and a sum of durations need every operand: one absent is
        // unknown (not logged), neither a 0 nor an unreadable value (NIM's decode without its
        // generation time; Ollama's TTFT without its prompt_eval_duration is no load time).
        let every_operand = match combine {
            Combine::Difference | Combine::FloorRatio | Combine::PerTokenAfterFirst => true,
            Combine::Sum => !field.is_count(),
            Combine::First | Combine::FirstOrZero => false,
        };
        if every_operand && !ids.iter().all(|&s| slots.has(s)) {
            continue;
        }
        let Some(v) = read_field(*field, *unit, *combine, ids, line, slots) else {
            if ids.iter().any(|&s| slots.has(s)) {
                unreadable |= bit;
                first_unreadable = first_unreadable.or(Some(*field));
            }
            continue;
        };
        filled |= bit;
        set_field(t, *field, v);
        if *field == Field::Ttft && *combine == Combine::Sum {
            t.ttft_summed = true;
        }
    }
    // Instants outside the window that no other rule filled.
    for f in Field::ALL {
        if implausible & !filled & (1u32 << (f as u32)) != 0 {
            t.implausible |= instant_bit(f);
        }
    }
    // The fields present but unreadable, that no other rule filled.
    t.unreadable |= unreadable & !filled;
    if let Some(f) = first_unreadable
        && filled & (1u32 << (f as u32)) == 0
        && t.unparseable.is_none()
    {
        t.unparseable = Some(f.name());
    }
}

/// Sets `field` of `t` to `v` (ns, or a count).
fn set_field(t: &mut Timeline, field: Field, v: i64) {
    let count = u64::try_from(v).ok();
    match field {
        Field::InputTokens => t.input_tokens = count,
        Field::CachedTokens => t.cached_tokens = count,
        Field::EvaluatedTokens => t.evaluated_tokens = count,
        Field::OutputTokens => t.output_tokens = count,
        Field::Arrival => t.arrival = Some(v),
        Field::Scheduled => t.scheduled = Some(v),
        Field::FirstToken => t.first_token = Some(v),
        Field::End => t.end = Some(v),
        Field::Ttft => t.ttft = Some(v),
        Field::Queue => t.queue = Some(v),
        Field::Prefill => t.prefill = Some(v),
        Field::Decode => t.decode = Some(v),
        Field::E2e => t.e2e = Some(v),
        Field::LoggedAt => t.logged_at = Some(v),
        Field::Ttfot => t.ttfot = Some(v),
        Field::Itl => {}
    }
}

/// The [`Timeline::implausible`] bit of instant `field` (0 for any other field).
pub(crate) fn instant_bit(field: Field) -> u8 {
    match field {
        Field::Arrival => instants::ARRIVAL,
        Field::Scheduled => instants::SCHEDULED,
        Field::FirstToken => instants::FIRST_TOKEN,
        Field::End => instants::END,
        Field::LoggedAt => instants::LOGGED_AT,
        _ => 0,
    }
}

/// `t` as if its unreadable fields ([`Timeline::unreadable`]) had been read: each that no
/// other line of the request filled holds a stand-in value. The metrics derived from it tell
/// which of `t`'s metrics use an unreadable field: those not logged in `t` and logged here.
pub(crate) fn with_unreadable_read(t: &Timeline) -> Timeline {
    let mut probe = *t;
    for field in Field::ALL {
        if t.unreadable & (1u32 << (field as u32)) == 0 {
            continue;
        }
        if field == Field::Itl {
            // Token gaps read give the decode (their sum) where none is logged.
            if t.decode.is_none() {
                probe.decode = Some(2);
            }
            continue;
        }
        let empty = match field {
            Field::InputTokens => t.input_tokens.is_none(),
            Field::CachedTokens => t.cached_tokens.is_none(),
            Field::EvaluatedTokens => t.evaluated_tokens.is_none(),
            Field::OutputTokens => t.output_tokens.is_none(),
            Field::Arrival => t.arrival.is_none(),
            Field::Scheduled => t.scheduled.is_none(),
            Field::FirstToken => t.first_token.is_none(),
            Field::End => t.end.is_none(),
            Field::Ttft => t.ttft.is_none(),
            Field::Queue => t.queue.is_none(),
            Field::Prefill => t.prefill.is_none(),
            Field::Decode => t.decode.is_none(),
            Field::E2e => t.e2e.is_none(),
            Field::LoggedAt => t.logged_at.is_none(),
            Field::Ttfot => t.ttfot.is_none(),
            Field::Itl => false,
        };
        if empty {
            // Any value will do: a metric that uses the field is no longer `not_logged`.
            set_field(&mut probe, field, 2);
        }
    }
    probe
}

/// Appends the durations of a JSON array of numbers (in `unit`) to `gaps`; returns false,
/// appending nothing, when `raw` is not such an array.
fn read_gaps(raw: &str, unit: Unit, gaps: &mut Vec<i64>) -> Gaps {
    let Ok(items) = serde_json::from_str::<Vec<&serde_json::value::RawValue>>(raw) else {
        return Gaps::Unreadable;
    };
    let decoded: Option<Vec<i64>> = items.iter().map(|i| decode_ns(i.get(), unit)).collect();
    match decoded {
        Some(d) => {
            gaps.extend(d);
            Gaps::Read
        }
        // A `null` gap is one the producer did not know, as a `null` TTFT is: the list is
        // not logged, not unreadable, when every other element is a duration.
        None if items
            .iter()
            .all(|i| i.get() == "null" || decode_ns(i.get(), unit).is_some()) =>
        {
            Gaps::Unknown
        }
        None => Gaps::Unreadable,
    }
}

/// What [`read_gaps`] made of a token-gap list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gaps {
    /// Every element a duration: the gaps were added.
    Read,
    /// Durations and `null`s: a gap not known, so none of the list's.
    Unknown,
    /// No list, or an element that is no duration nor `null`.
    Unreadable,
}

/// Reads one field: a time in ns (instants and durations) or a count, combined from its slots
/// as `combine` says. `None` when absent or undecodable.
fn read_field(
    field: Field,
    unit: Unit,
    combine: Combine,
    ids: &[SlotId],
    line: &[u8],
    slots: &Slots,
) -> Option<i64> {
    let decode = |raw: &[u8]| -> Option<i64> {
        if field.is_count() && combine != Combine::FloorRatio {
            decode_count_bytes(raw).and_then(|c| i64::try_from(c).ok())
        } else {
            decode_ns_bytes(raw, unit)
        }
    };
    let raw = |s: SlotId| slots.raw_bytes(line, s);
    match combine {
        Combine::FirstOrZero => Some(
            ids.iter()
                .find_map(|&s| raw(s))
                .and_then(decode)
                .unwrap_or(0),
        ),
        Combine::First => ids.iter().find_map(|&s| raw(s)).and_then(decode),
        Combine::Sum => {
            // None when no slot decodes, or on overflow.
            let mut sum = None::<Option<i64>>;
            for v in ids.iter().filter_map(|&s| raw(s).and_then(decode)) {
                sum = Some(sum.unwrap_or(Some(0)).and_then(|a| a.checked_add(v)));
            }
            sum.flatten()
        }
        Combine::FloorRatio => {
            let a = decode(raw(*ids.first()?)?)?;
            let b = decode(raw(*ids.get(1)?)?)?;
            if b <= 0 || a < 0 { None } else { Some(a / b) }
        }
        Combine::PerTokenAfterFirst => {
            let per = decode_ns_bytes(raw(*ids.first()?)?, unit)?;
            let n = decode_count_bytes(raw(*ids.get(1)?)?).and_then(|c| i64::try_from(c).ok())?;
            if n < 2 || per < 0 {
                None
            } else {
                per.checked_mul(n - 1)
            }
        }
        Combine::Difference => {
            let a = decode(raw(*ids.first()?)?)?;
            let b = decode(raw(*ids.get(1)?)?)?;
            let d = a.checked_sub(b)?;
            if field.is_count() && d < 0 {
                None
            } else {
                Some(d)
            }
        }
    }
}

#[derive(Debug, Clone)]
enum CCond {
    Present(SlotId),
    Set(SlotId),
    /// The raw JSON text, and its number when it is one (`200` equals `200.0`).
    Equals(SlotId, String, Option<f64>),
    Differs(SlotId, String, Option<f64>),
    AtLeast(SlotId, i64),
    /// The needle in ASCII lower case.
    Contains(SlotId, String),
    Not(Box<CCond>),
    Any(Vec<CCond>),
}

impl CCond {
    fn holds(&self, line: &[u8], slots: &Slots) -> bool {
        match self {
            CCond::Present(s) => slots.has(*s),
            CCond::Set(s) => slots.raw_bytes(line, *s).is_some_and(is_set),
            CCond::Equals(s, v, n) => slots
                .raw_bytes(line, *s)
                .is_some_and(|raw| same_value(raw, v, *n)),
            CCond::Differs(s, v, n) => slots
                .raw_bytes(line, *s)
                .is_some_and(|raw| !same_value(raw, v, *n)),
            CCond::AtLeast(s, min) => slots
                .raw(line, *s)
                .map(|raw| raw.trim_matches('"'))
                .and_then(|t| t.parse::<f64>().ok())
                .is_some_and(|x| x >= *min as f64),
            CCond::Contains(s, needle) => slots.raw(line, *s).is_some_and(|raw| {
                let (raw, needle) = (raw.as_bytes(), needle.as_bytes());
                raw.first() == Some(&b'"')
                    && !needle.is_empty()
                    && raw
                        .windows(needle.len())
                        .any(|w| w.eq_ignore_ascii_case(needle))
            }),
            CCond::Not(c) => !c.holds(line, slots),
            CCond::Any(cs) => cs.iter().any(|c| c.holds(line, slots)),
        }
    }
}

/// The number a raw JSON text is, when it is one.
fn json_number(raw: &str) -> Option<f64> {
    if !matches!(raw.as_bytes().first(), Some(b'-' | b'0'..=b'9')) {
        return None;
    }
    raw.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// Whether a value's raw JSON text `raw` is the value whose text is `text` (and number
/// `number`, when it is one): the same text, or the same number written another way (`200.0`,
/// `2e2`).
fn same_value(raw: &[u8], text: &str, number: Option<f64>) -> bool {
    // Two integers JSON writes one way only (no leading zeros; `-0` aside): unequal texts are
    // unequal numbers, with no parse (OTLP's `status.code == 2`, on every span).
    let integer = |b: &[u8]| {
        let digits = b.strip_prefix(b"-").unwrap_or(b);
        !digits.is_empty() && digits.iter().all(u8::is_ascii_digit) && b != b"-0"
    };
    raw == text.as_bytes()
        || !(integer(raw) && integer(text.as_bytes()))
            && number.is_some_and(|n| {
                std::str::from_utf8(raw)
                    .ok()
                    .and_then(json_number)
                    .is_some_and(|x| x == n)
            })
}

/// Whether a value's raw JSON text (not null) is set ([`Cond::Set`]): not `false`, a zero, an
/// empty string, an empty array or an empty object.
fn is_set(raw: &[u8]) -> bool {
    let empty = |open: u8, close: u8| {
        raw.len() >= 2
            && raw[0] == open
            && raw[raw.len() - 1] == close
            && raw[1..raw.len() - 1].iter().all(u8::is_ascii_whitespace)
    };
    let zero = matches!(raw.first(), Some(b'-' | b'0'..=b'9'))
        && std::str::from_utf8(raw)
            .ok()
            .and_then(|t| t.parse::<f64>().ok())
            == Some(0.0);
    !(raw == b"false" || raw == b"\"\"" || zero || empty(b'[', b']') || empty(b'{', b'}'))
}

struct Compiler<'a> {
    paths: &'a mut PathSet,
    root: &'a [String],
}

impl Compiler<'_> {
    fn add(&mut self, path: &[String]) -> SlotId {
        let full: Vec<&str> = self.root.iter().chain(path).map(String::as_str).collect();
        self.paths.add(&full)
    }

    fn cond(&mut self, c: &Cond) -> CCond {
        match c {
            Cond::Present(p) => CCond::Present(self.add(p)),
            Cond::Set(p) => CCond::Set(self.add(p)),
            Cond::Equals(p, v) => CCond::Equals(self.add(p), v.clone(), json_number(v)),
            Cond::Differs(p, v) => CCond::Differs(self.add(p), v.clone(), json_number(v)),
            Cond::AtLeast(p, min) => CCond::AtLeast(self.add(p), *min),
            Cond::Contains(p, v) => CCond::Contains(self.add(p), v.to_ascii_lowercase()),
            Cond::Not(inner) => CCond::Not(Box::new(self.cond(inner))),
            Cond::Any(cs) => CCond::Any(cs.iter().map(|c| self.cond(c)).collect()),
        }
    }

    fn conds(&mut self, cs: &[Cond]) -> Vec<CCond> {
        cs.iter().map(|x| self.cond(x)).collect()
    }
}

#[derive(Debug, Clone, Default)]
struct CompiledFormat {
    join_key: Vec<Vec<SlotId>>,
    complete_when: Vec<CCond>,
    standalone_when: Vec<CCond>,
    output_when: Vec<CCond>,
    part_fields: Vec<(Field, Unit, Combine, Vec<SlotId>)>,
    markers: Vec<CCond>,
    skip_when: Vec<Vec<CCond>>,
    error_markers: Vec<CCond>,
    /// The error markers of a format whose error records count only when it is forced
    /// ([`FormatSpec::errors_only_when_forced`]), when it is not: a line they hold stays no
    /// timing, and is counted as one that `--format NAME` would count as a failure.
    generic_errors: Vec<CCond>,
    error_when: Vec<CCond>,
    cancelled_when: Vec<CCond>,
    response_cache_when: Vec<CCond>,
    streamed_when: Option<CCond>,
    origin_when: Vec<(Origin, CCond)>,
    fields: Vec<(Field, Unit, Combine, Vec<SlotId>)>,
    id: Vec<SlotId>,
    model: Vec<SlotId>,
    reason: Vec<SlotId>,
    fallback: bool,
}

/// The formats in use, compiled against one [`PathSet`] so a line is parsed once whatever the
/// number of formats.
#[derive(Debug, Clone)]
pub struct Formats {
    specs: Vec<FormatSpec>,
    compiled: Vec<CompiledFormat>,
}

/// A line attributed to a format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Detected {
    /// Index into [`Formats::spec`].
    pub format: usize,
    /// True when the line matched the format's error markers only.
    pub error_record: bool,
}

impl Formats {
    /// Compiles `specs`, adding their paths (below `root`) to `paths`. A format with records
    /// contributes only its line markers here; see [`Formats::record_level`].
    pub fn compile(specs: Vec<FormatSpec>, root: &[String], paths: &mut PathSet) -> Formats {
        let mut c = Compiler { paths, root };
        let compiled = specs
            .iter()
            .map(|s| {
                if s.records.is_some() {
                    return CompiledFormat {
                        markers: c.conds(&s.markers),
                        ..CompiledFormat::default()
                    };
                }
                let join = s.join.clone().unwrap_or_default();
                CompiledFormat {
                    join_key: join
                        .key
                        .iter()
                        .map(|alts| alts.iter().map(|p| c.add(p)).collect())
                        .collect(),
                    complete_when: c.conds(&join.complete_when),
                    standalone_when: c.conds(&join.standalone_when),
                    output_when: c.conds(&join.output_when),
                    part_fields: join
                        .part_fields
                        .iter()
                        .map(|r| {
                            (
                                r.field,
                                r.unit,
                                r.combine,
                                r.paths.iter().map(|p| c.add(p)).collect(),
                            )
                        })
                        .collect(),
                    markers: c.conds(&s.markers),
                    skip_when: s.skip_when.iter().map(|g| c.conds(g)).collect(),
                    error_markers: if s.errors_only_when_forced && specs.len() > 1 {
                        Vec::new()
                    } else {
                        c.conds(&s.error_markers)
                    },
                    generic_errors: if s.errors_only_when_forced && specs.len() > 1 {
                        c.conds(&s.error_markers)
                    } else {
                        Vec::new()
                    },
                    error_when: c.conds(&s.error_when),
                    cancelled_when: c.conds(&s.cancelled_when),
                    response_cache_when: c.conds(&s.response_cache_when),
                    streamed_when: s.streamed_when.as_ref().map(|x| c.cond(x)),
                    origin_when: s.origin_when.iter().map(|(o, x)| (*o, c.cond(x))).collect(),
                    fields: s
                        .fields
                        .iter()
                        .map(|r| {
                            (
                                r.field,
                                r.unit,
                                r.combine,
                                r.paths.iter().map(|p| c.add(p)).collect(),
                            )
                        })
                        .collect(),
                    id: s.id_paths.iter().map(|p| c.add(p)).collect(),
                    model: s.model_paths.iter().map(|p| c.add(p)).collect(),
                    reason: s.reason_paths.iter().map(|p| c.add(p)).collect(),
                    fallback: s.fallback,
                }
            })
            .collect();
        Formats { specs, compiled }
    }

    /// The record-level form of format `i` (which has records): the same spec with its
    /// `record_markers` as markers, to compile against a record's own [`PathSet`].
    pub fn record_level(&self, i: usize) -> Option<FormatSpec> {
        let s = &self.specs[i];
        s.records.as_ref()?;
        Some(FormatSpec {
            markers: s.record_markers.clone(),
            records: None,
            ..s.clone()
        })
    }

    /// True when format `i` joins several lines into one request.
    pub fn joins(&self, i: usize) -> bool {
        self.specs[i].join.is_some()
    }

    /// The join key of a line of format `i`: its key components' raw values, joined; `None`
    /// when a component is missing.
    pub fn join_key(&self, i: usize, line: &[u8], slots: &Slots, out: &mut String) -> bool {
        out.clear();
        out.push_str(&self.specs[i].name);
        for alts in &self.compiled[i].join_key {
            let Some(raw) = alts.iter().find_map(|&s| slots.raw(line, s)) else {
                return false;
            };
            out.push('\u{1}');
            out.push_str(raw);
        }
        true
    }

    /// True when a completing line of format `i` is a whole response on its own.
    pub fn standalone(&self, i: usize, line: &[u8], slots: &Slots) -> bool {
        self.compiled[i]
            .standalone_when
            .iter()
            .any(|c| c.holds(line, slots))
    }

    /// True when a line of format `i` completes its request.
    pub fn completes(&self, i: usize, line: &[u8], slots: &Slots) -> bool {
        self.compiled[i]
            .complete_when
            .iter()
            .all(|c| c.holds(line, slots))
    }

    /// The part fields of a line of format `i` (one line of a request before the last). A
    /// line that carries no output (the join's `output_when`) gives no first-token instant.
    pub fn part_timeline(&self, i: usize, line: &[u8], slots: &Slots) -> Timeline {
        let f = &self.compiled[i];
        let mut t = Timeline::default();
        read_fields(&f.part_fields, line, slots, &mut t, &mut Vec::new());
        if !f.output_when.is_empty() && !f.output_when.iter().any(|c| c.holds(line, slots)) {
            t.first_token = None;
        }
        t
    }

    /// The first format whose error records count only when it is forced, and is not, whose
    /// error markers hold on this line (a no-timing line `--format NAME` would count as a
    /// failed request).
    pub fn generic_error(&self, line: &[u8], slots: &Slots) -> Option<usize> {
        self.compiled.iter().position(|f| {
            !f.generic_errors.is_empty() && f.generic_errors.iter().all(|c| c.holds(line, slots))
        })
    }

    /// The first format whose markers and one of whose `skip_when` groups hold on this line: a
    /// line [`Formats::detect`] set aside as no request of that format (an AIPerf warm-up
    /// record, a stream's intermediate chunk).
    pub fn skipped_by(&self, line: &[u8], slots: &Slots) -> Option<usize> {
        let all = |cs: &[CCond]| !cs.is_empty() && cs.iter().all(|c| c.holds(line, slots));
        self.compiled.iter().position(|f| {
            !f.skip_when.is_empty() && all(&f.markers) && f.skip_when.iter().any(|g| all(g))
        })
    }

    /// True when the line markers of format `i` hold on this line.
    pub fn markers_hold(&self, i: usize, line: &[u8], slots: &Slots) -> bool {
        let m = &self.compiled[i].markers;
        !m.is_empty() && m.iter().all(|c| c.holds(line, slots))
    }

    /// The spec of format `i`.
    pub fn spec(&self, i: usize) -> &FormatSpec {
        &self.specs[i]
    }

    /// Number of formats.
    pub fn len(&self) -> usize {
        self.specs.len()
    }

    /// True when there is no format.
    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// Attributes a parsed line to a format: `hint` (the format that matched last) is tried
    /// first, then the others in order, and the fallback formats last, in order (a fallback
    /// hint is not tried first). A full marker match anywhere beats an error-marker match.
    /// `None` when the line is no request of any format.
    pub fn detect(&self, line: &[u8], slots: &Slots, hint: usize) -> Option<Detected> {
        let n = self.compiled.len();
        let hint = hint.min(n.saturating_sub(1));
        let hint = (n > 0 && !self.compiled[hint].fallback).then_some(hint);
        let primary = |i: &usize| !self.compiled[*i].fallback && Some(*i) != hint;
        let order = hint
            .into_iter()
            .chain((0..n).filter(primary))
            .chain((0..n).filter(|&i| self.compiled[i].fallback));
        let all = |cs: &[CCond]| !cs.is_empty() && cs.iter().all(|c| c.holds(line, slots));
        let mut error_match = None;
        for i in order {
            let f = &self.compiled[i];
            if all(&f.markers) {
                if f.skip_when.iter().any(|g| all(g)) {
                    return None;
                }
                return Some(Detected {
                    format: i,
                    error_record: false,
                });
            }
            if error_match.is_none() && all(&f.error_markers) {
                error_match = Some(Detected {
                    format: i,
                    error_record: true,
                });
            }
        }
        error_match
    }

    /// Reads the timeline of a line attributed to format `d.format`.
    ///
    /// Token gaps (an [`Field::Itl`] list) are appended to `gaps` (ns).
    pub fn timeline(
        &self,
        d: Detected,
        line: &[u8],
        slots: &Slots,
        gaps: &mut Vec<i64>,
    ) -> Timeline {
        let f = &self.compiled[d.format];
        let spec = &self.specs[d.format];
        let any = |cs: &[CCond]| cs.iter().any(|c| c.holds(line, slots));
        let origin = f
            .origin_when
            .iter()
            .find(|(_, c)| c.holds(line, slots))
            .map_or(spec.arrival_origin, |(o, _)| *o);
        let mut t = Timeline {
            arrival_origin: Some(origin),
            e2e_as_written: spec.e2e_as_written,
            end_from_e2e_first: spec.end_from_e2e_first,
            ..Timeline::default()
        };
        read_fields(&f.fields, line, slots, &mut t, gaps);
        if let Some(c) = &f.streamed_when {
            t.streamed = Some(c.holds(line, slots));
        }
        // A cancellation first: the producers spell one as a failure too (HTTP 499 is a
        // status >= 400), and a cancellation is no error. An error record (a line that is
        // only a failure) stays an error.
        if d.error_record {
            t.outcome = Outcome::Error;
        } else if any(&f.cancelled_when) {
            t.outcome = Outcome::Cancelled;
            // Where the format logs the first token's time and this request has none, the
            // first token never came: an error (SPEC), whatever output count is written
            // (guidellm writes the requested one for a request cut off before any token).
            if t.first_token.is_none()
                && t.ttft.is_none()
                && f.fields.iter().any(|r| r.0 == Field::FirstToken)
            {
                t.outcome = Outcome::Error;
                t.output_tokens = None;
            }
        } else if any(&f.error_when) {
            t.outcome = Outcome::Error;
        }
        t.response_cache = any(&f.response_cache_when);
        t
    }

    /// The raw JSON text of the request id of a line of format `format`, if logged.
    pub fn id<'l>(&self, format: usize, line: &'l [u8], slots: &Slots) -> Option<&'l str> {
        self.compiled[format]
            .id
            .iter()
            .find_map(|&s| slots.raw(line, s))
    }

    /// [`Formats::id`] as bytes, not checked as UTF-8 again (for hashing: a read line is
    /// valid UTF-8 already).
    pub fn id_bytes<'l>(&self, format: usize, line: &'l [u8], slots: &Slots) -> Option<&'l [u8]> {
        self.compiled[format]
            .id
            .iter()
            .find_map(|&s| slots.raw_bytes(line, s))
    }

    /// The reason a failed request of format `format` failed, normalized to a short class
    /// ([`reason::normalize_into`]) into `out`: the first reason path that holds one, except
    /// that a negative code (a client's own sentinel, LLMPerf's `-1` or `-100`, which says only
    /// that it failed) yields to a later path's message when there is one. False when no path
    /// holds a reason.
    pub fn reason(&self, format: usize, line: &[u8], slots: &Slots, out: &mut String) -> bool {
        let mut paths = self.compiled[format].reason.iter();
        let mut first_into = |out: &mut String| {
            paths.any(|&s| {
                slots
                    .raw(line, s)
                    .is_some_and(|raw| reason::normalize_into(raw, out))
            })
        };
        let found = first_into(out);
        let negative = |r: &str| {
            r.strip_prefix('-')
                .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        };
        if found && negative(out) {
            let mut later = String::new();
            if first_into(&mut later) {
                *out = later;
            }
        }
        found
    }

    /// The raw text of the first object a reason path of format `format` holds on `line`.
    pub fn reason_object<'l>(
        &self,
        format: usize,
        line: &'l [u8],
        slots: &Slots,
    ) -> Option<&'l str> {
        self.compiled[format]
            .reason
            .iter()
            .filter_map(|&s| slots.raw(line, s))
            .find(|raw| raw.trim_start().starts_with('{'))
    }

    /// True when format `format` reads a reason.
    pub fn has_reason(&self, format: usize) -> bool {
        !self.compiled[format].reason.is_empty()
    }

    /// The raw JSON text of the model name of a line of format `format`, if logged.
    pub fn model<'l>(&self, format: usize, line: &'l [u8], slots: &Slots) -> Option<&'l str> {
        self.compiled[format]
            .model
            .iter()
            .find_map(|&s| slots.raw(line, s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The unreadable fields' bits `derive` reads are this enum's.
    #[test]
    fn the_unreadable_bits_derive_reads_are_the_fields() {
        use crate::metrics::unread;
        let bit = |f: Field| 1u32 << (f as u32);
        assert_eq!(unread::END, bit(Field::End));
        assert_eq!(unread::DECODE, bit(Field::Decode));
        assert_eq!(unread::E2E, bit(Field::E2e));
        assert_eq!(unread::ITL, bit(Field::Itl));
        assert_eq!(
            unread::TOKENS,
            [
                bit(Field::InputTokens),
                bit(Field::CachedTokens),
                bit(Field::OutputTokens)
            ]
        );
    }

    #[test]
    fn values_are_the_same_as_text_or_as_numbers() {
        let same = |raw: &str, text: &str| same_value(raw.as_bytes(), text, json_number(text));
        assert!(same("200", "200") && same("200.0", "200") && same("2e2", "200"));
        assert!(same("-0", "0") && same("0.0", "-0"));
        assert!(!same("1", "2") && !same("\"200\"", "200") && !same("201.0", "200"));
        assert!(!same("9007199254740993", "9007199254740992"));
    }

    #[test]
    fn a_value_is_set_unless_null_false_zero_or_empty() {
        for raw in [
            "\"x\"",
            "\" \"",
            "1",
            "-0.5",
            "true",
            "[1]",
            "{\"a\":1}",
            "\"0\"",
        ] {
            assert!(is_set(raw.as_bytes()), "{raw}");
        }
        for raw in [
            "\"\"", "false", "0", "0.0", "-0", "0e3", "[]", "[ ]", "{}", "{ }",
        ] {
            assert!(!is_set(raw.as_bytes()), "{raw}");
        }
    }

    #[test]
    fn custom_rejects_mixed_clock_domains() {
        assert!(
            custom(&["arrival=a:ms".into()])
                .unwrap_err()
                .contains("timestamp unit")
        );
        assert!(
            custom(&["ttft=a:epoch_s".into()])
                .unwrap_err()
                .contains("duration unit")
        );
        assert!(
            custom(&["bogus=a".into()])
                .unwrap_err()
                .contains("unknown field")
        );
        assert!(
            custom(&["arrival=a:parsecs".into()])
                .unwrap_err()
                .contains("unknown unit")
        );
        assert!(custom(&["arrival=req.t0:epoch_s".into(), "end=req.t2:epoch_s".into()]).is_ok());
    }

    #[test]
    fn custom_logged_at_is_an_instant() {
        for unit in [
            "epoch_s", "epoch_ms", "epoch_us", "epoch_ns", "epoch", "rfc3339",
        ] {
            let f = custom(&[format!("logged_at=t:{unit}")]).unwrap();
            assert_eq!(f.fields[0].field, Field::LoggedAt);
            assert_eq!(f.fields[0].unit.name(), unit);
        }
        let f = custom(&["logged_at=t".into()]).unwrap();
        assert_eq!(
            f.fields[0].unit,
            Unit::EpochAuto,
            "the default unit of an instant"
        );
        assert_eq!(
            custom(&["logged_at=t:s".into()]).unwrap_err(),
            "--map logged_at=t:s: logged_at is an instant and needs a timestamp unit (epoch_s, epoch_ms, epoch_us, epoch_ns, rfc3339, epoch), not s"
        );
    }

    #[test]
    fn map_values_may_list_several_entries() {
        let split = |v: &[&str]| split_maps(&v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
        assert_eq!(
            split(&["ttft=t:s,e2e=latency:s", "model=m"]),
            ["ttft=t:s", "e2e=latency:s", "model=m"]
        );
        // A comma in a path or a condition's value, or before no name --map takes, stays.
        assert_eq!(split(&["ttft=a,b"]), ["ttft=a,b"]);
        assert_eq!(
            split(&["error_when=status==\"a,b\",records=items[*]"]),
            ["error_when=status==\"a,b\"", "records=items[*]"]
        );
        assert_eq!(split(&["error_when=x,ttft==1"]), ["error_when=x,ttft==1"]);
    }

    #[test]
    fn map_help_names_every_field() {
        let help = map_help();
        for name in Field::ALL
            .iter()
            .map(|f| f.name())
            .chain(["id", "model", "stream"])
        {
            assert!(
                help.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .any(|w| w == name),
                "{name} missing: {help}"
            );
        }
    }

    fn spec(name: &str, markers: Vec<Cond>, fallback: bool) -> FormatSpec {
        FormatSpec {
            name: name.into(),
            markers,
            fallback,
            fields: vec![rule(Field::E2e, Unit::Ms, &["e"])],
            ..FormatSpec::default()
        }
    }

    fn detect_all(specs: Vec<FormatSpec>, lines: &[&str]) -> Vec<Option<String>> {
        let mut paths = PathSet::default();
        let f = Formats::compile(specs, &[], &mut paths);
        let mut slots = Slots::default();
        let mut hint = 0;
        lines
            .iter()
            .map(|l| {
                paths.extract(l.as_bytes(), &mut slots).unwrap();
                let d = f.detect(l.as_bytes(), &slots, hint)?;
                hint = d.format;
                Some(f.spec(d.format).name.clone())
            })
            .collect()
    }

    #[test]
    fn a_fallback_format_never_claims_a_line_first_by_the_hint() {
        // "usage" is generic (fallback); "server" is specific. After a usage line, the hint
        // points at "usage", yet a server line (which also has `u`) goes to "server".
        let specs = vec![
            spec(
                "server",
                vec![Cond::Present(p("u")), Cond::Present(p("t"))],
                false,
            ),
            spec("usage", vec![Cond::Present(p("u"))], true),
        ];
        let got = detect_all(specs, &[r#"{"u":1}"#, r#"{"u":1,"t":2}"#, r#"{"x":1}"#]);
        assert_eq!(
            got,
            [Some("usage".to_string()), Some("server".to_string()), None]
        );
    }

    #[test]
    fn conditions_differs_at_least_not() {
        let specs = vec![spec(
            "x",
            vec![
                Cond::Differs(p("c"), "\"0\"".into()),
                Cond::AtLeast(p("s"), 400),
                Cond::Not(Box::new(Cond::Equals(p("m"), "\"oneshot\"".into()))),
            ],
            false,
        )];
        let got = detect_all(
            specs,
            &[
                r#"{"c":"1","s":429}"#,
                r#"{"c":"1","s":"500"}"#,
                r#"{"c":"0","s":429}"#,
                r#"{"s":429}"#,
                r#"{"c":"1","s":399}"#,
                r#"{"c":"1","s":429,"m":"oneshot"}"#,
                r#"{"c":"1","s":429,"m":"stream"}"#,
            ],
        );
        let x = Some("x".to_string());
        assert_eq!(
            got,
            [x.clone(), x.clone(), None, None, None, None, x],
            "differs needs presence; at_least reads decimal strings; not covers absence"
        );
    }

    #[test]
    fn first_rule_with_a_value_wins_and_difference_subtracts() {
        let mut s = spec("x", vec![Cond::Present(p("e"))], false);
        s.fields = vec![
            FieldRule {
                field: Field::InputTokens,
                unit: Unit::Count,
                combine: Combine::Difference,
                paths: vec![p("total"), p("out")],
            },
            rule(Field::InputTokens, Unit::Count, &["prompt"]),
            FieldRule {
                field: Field::Decode,
                unit: Unit::Ms,
                combine: Combine::Difference,
                paths: vec![p("gen"), p("ttft")],
            },
        ];
        let mut paths = PathSet::default();
        let f = Formats::compile(vec![s], &[], &mut paths);
        let mut slots = Slots::default();
        let t = |l: &str, slots: &mut Slots| {
            paths.extract(l.as_bytes(), slots).unwrap();
            let d = f.detect(l.as_bytes(), slots, 0).unwrap();
            f.timeline(d, l.as_bytes(), slots, &mut Vec::new())
        };
        let a = t(
            r#"{"e":1,"total":3490,"out":412,"prompt":128,"gen":10.5,"ttft":2.5}"#,
            &mut slots,
        );
        assert_eq!(a.input_tokens, Some(3078));
        assert_eq!(a.decode, Some(8_000_000));
        let b = t(r#"{"e":1,"prompt":128,"gen":1,"ttft":2}"#, &mut slots);
        assert_eq!(b.input_tokens, Some(128), "the next rule fills in");
        assert_eq!(
            b.decode,
            Some(-1_000_000),
            "a negative duration is kept for derive to flag"
        );
        let c = t(r#"{"e":1,"total":10,"out":12}"#, &mut slots);
        assert_eq!(c.input_tokens, None, "a negative count is absent");
    }

    #[test]
    fn dotted_paths_with_escapes() {
        assert_eq!(parse_path("a.b"), vec!["a", "b"]);
        assert_eq!(parse_path(r"gen_ai\.usage.x"), vec!["gen_ai.usage", "x"]);
    }
}

/// The examples in this file's docs, run.
#[cfg(test)]
mod doc_examples {
    use super::*;

    #[test]
    fn example_of_parse_path() {
        assert_eq!(parse_path("a.b[-1].c"), ["a", "b", "[-1]", "c"]);
        assert_eq!(parse_path(r"gen_ai\.usage.x"), ["gen_ai.usage", "x"]);
    }
}
