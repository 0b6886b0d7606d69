//! The per-line pipeline: parse a line once, attribute it to a format, derive its metrics.
//!
//! Owns the [`Processor`] (the compiled formats, the path trie, the reused slot buffer and
//! scratch line), its parts (envelopes: Kubernetes CRI and Docker wrappers, `--prefix`; joins of
//! requests that span lines; records of lines that hold many requests; `--by` values) and the
//! [`Coverage`] counters. Sees one line's bytes at a time; must not write output or hold
//! per-group state: the commands in `crate::app` decide what to do with the result.

mod by_values;
pub(crate) mod dedupe;
pub(crate) mod notes;
pub(crate) mod records;
pub(crate) mod walk;

pub(crate) use by_values::ByValues;

use crate::format::{FormatSpec, Formats};
use crate::json::{
    PathSet, ReadError, Slots, neutralize_non_finite, neutralize_undecodable, raw_str,
};
use crate::metrics::{Metrics, NullReason, Outcome, derive};

use std::collections::BTreeMap;

/// What one line turned out to be.
#[derive(Debug)]
pub enum Kind {
    /// Not a JSON object (a text log line, a banner): passed through, counted `non_json`.
    NonJson,
    /// Starts like a JSON object but cannot be read (malformed, not UTF-8, ...): passed
    /// through, counted `invalid`, reported.
    Invalid(LineError),
    /// A JSON object that no format recognizes as a request (health check, startup event).
    NoTiming,
    /// Already carries the enrich key: passed through unchanged, counted `already_enriched`.
    AlreadyEnriched,
    /// One or more requests completed on this line; they are in [`Processor::requests`].
    Requests,
    /// A line of a request that spans several (not its last): held in the join table; or a
    /// piece of a line split by Docker or the kubelet (not its last): held until the line
    /// ends. Counted `joined_lines`.
    Part,
    /// A line of a format whose requests span several lines (or a piece of a split line), left
    /// for the caller to process in input order (see [`Processor::defer_joins`]): nothing was
    /// counted.
    Deferred,
}

/// Why a line that starts like a JSON object could not be read ([`Kind::Invalid`]). The
/// message (`Display`) is the reason a diagnostic gives after `invalid JSON: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// Malformed JSON, or bytes that are not UTF-8: the JSON reader's message, with the byte it
    /// stopped at. Minimal input: the line `{"a":}` ("expected value at byte 6").
    #[error("{0}")]
    Malformed(String),
    /// A line split by Docker or the kubelet (the `log` field of json-file records, CRI
    /// partial lines) whose pieces add up to more than `max` bytes (`--max-line-bytes`): the
    /// pieces held are dropped. Minimal input: two records of one stream, each within
    /// `--max-line-bytes`, the first a piece (its `log` text without a final newline), whose
    /// `log` texts together are longer than `--max-line-bytes`.
    #[error("a split line longer than --max-line-bytes ({max} bytes)")]
    SplitTooLong {
        /// The bound on the pieces held (`--max-line-bytes`).
        max: usize,
    },
    /// A line of a format whose requests are records (a `vllm bench serve` result line) that
    /// is valid JSON but that serde_json will not hold as a value even once its numbers past
    /// f64 and lone surrogate escapes are made unusable. Minimal input: such a result line
    /// with a value nested deeper than serde_json's recursion limit (128 arrays or objects).
    #[error("not readable as records")]
    NotRecords,
}

/// The in-flight table of requests that span several lines (SPEC section 3), bounded by
/// `max_inflight` entries and an idle timeout in log time.
#[derive(Debug, Default, Clone)]
struct Joins {
    entries: std::collections::HashMap<String, JoinEntry>,
    /// The entries' keys by `seq` (insertion order): the oldest is the first.
    by_seq: std::collections::BTreeMap<u64, String>,
    /// `(last_seen_ns, seq)` of the entries that have a time: those that timed out are the
    /// first. With `by_seq`, a full table costs O(log n) a line, not a scan of the table.
    by_seen: std::collections::BTreeSet<(i64, u64)>,
    max_inflight: usize,
    idle_ns: i64,
    seq: u64,
    key: String,
    latest_ns: i64,
}

#[derive(Debug, Clone)]
struct JoinEntry {
    timeline: crate::metrics::Timeline,
    seq: u64,
    last_seen_ns: Option<i64>,
}

impl Joins {
    fn insert(&mut self, key: String, entry: JoinEntry) {
        self.by_seq.insert(entry.seq, key.clone());
        if let Some(t) = entry.last_seen_ns {
            self.by_seen.insert((t, entry.seq));
        }
        self.entries.insert(key, entry);
    }

    fn remove(&mut self, key: &str) -> Option<JoinEntry> {
        let e = self.entries.remove(key)?;
        self.by_seq.remove(&e.seq);
        if let Some(t) = e.last_seen_ns {
            self.by_seen.remove(&(t, e.seq));
        }
        Some(e)
    }

    /// Removes the entry inserted as `seq` (the key moves out of `by_seq`, no copy).
    fn remove_seq(&mut self, seq: u64) -> Option<JoinEntry> {
        let key = self.by_seq.remove(&seq)?;
        let e = self.entries.remove(&key)?;
        if let Some(t) = e.last_seen_ns {
            self.by_seen.remove(&(t, e.seq));
        }
        Some(e)
    }

    /// A later part of the entry at `key` was seen at `seen`.
    fn seen(&mut self, key: &str, seen: Option<i64>) -> Option<&mut JoinEntry> {
        let e = self.entries.get_mut(key)?;
        if let Some(t) = seen {
            if let Some(old) = e.last_seen_ns {
                self.by_seen.remove(&(old, e.seq));
            }
            e.last_seen_ns = Some(t);
            self.by_seen.insert((t, e.seq));
        }
        Some(e)
    }

    fn clear(&mut self) {
        self.entries.clear();
        self.by_seq.clear();
        self.by_seen.clear();
    }
}

/// One request's results.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Request {
    /// Index of the format it was attributed to.
    pub format: usize,
    /// The derived metrics.
    pub metrics: Metrics,
    /// When the request started, epoch ns, where the log says (arrival instant, or the log
    /// line's time minus E2E).
    pub start_ns: Option<i64>,
    /// When the request ended, epoch ns, where the log says (end instant, or the log line's
    /// time).
    pub end_ns: Option<i64>,
    /// Its token gaps (ITL), as a range of [`Processor::gaps`]: (start, length).
    pub itl: (u32, u32),
    /// A field present in the log that could not be read in its unit (its name).
    pub unparseable: Option<&'static str>,
    /// Every such field, one bit each ([`crate::metrics::Timeline::unreadable`]).
    pub unreadable: u32,
    /// The instants present in the log but outside the plausible window (bits, as
    /// [`crate::metrics::Timeline::implausible`]; 0 when none).
    pub implausible: u8,
    /// A client's view of a request whose server's view is on the same line (an OTLP export
    /// holding both spans: [`dedupe::mark_views`]): set aside by a summary, marked by enrich.
    pub duplicate: bool,
    /// It failed, and its format's reason path held an object, not a reason (`--map
    /// reason=error` where `error` is `{"type": ..., "message": ...}`): counted in
    /// [`Coverage::reason_objects`].
    pub reason_object: bool,
    /// Its identity for telling a record read again ([`dedupe::request_key`]), where its
    /// format logs an id; computed only when asked
    /// ([`Processor::set_dedupe`]).
    pub key: Option<u64>,
    /// Its format logs no instant at all (a benchmark's result file that keeps durations
    /// only): it is in no time span, and a summary leaves it out of the rates over the span
    /// of the others. A request of a format that logs instants, whose line lacks them (an
    /// error answer in a server's log), is in its log's span like its neighbours.
    pub timeless: bool,
    /// The run it belongs to, when its line gives the run's duration (a benchmark result's
    /// `duration`: [`crate::format::FormatSpec::run_seconds`]).
    pub run: Option<Run>,
    /// It ended outside `--since`/`--until` (without an end instant: it started outside; with
    /// neither, while they are given): a summary counts it in [`Coverage::outside_range`] only.
    pub outside: bool,
}

/// A benchmark run whose result file gives its duration: the time its requests' rates run
/// over, when they log no time of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// Tells the runs apart within one process ([`Run::next_id`]).
    pub id: u64,
    /// The run's duration, ns.
    pub ns: i64,
}

impl Run {
    /// A new run's identity, never given before in this process (runs read by parallel
    /// workers, or from digest files, stay apart).
    pub fn next_id() -> u64 {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }
}

/// The record-level reader of a format whose lines hold several requests.
#[derive(Clone)]
struct RecordReader {
    paths: PathSet,
    formats: Formats,
    slots: Slots,
    by_slots: Vec<ByKey>,
    /// The slots of [`SPAN_PATHS`] in `paths`: a record's span identity, noted with the
    /// reader's other values while the record is written.
    span: [crate::json::SlotId; 4],
}

/// The id and model of a request of format `f`, decoded from their JSON text.
fn read_id_model(
    formats: &Formats,
    f: usize,
    line: &[u8],
    slots: &Slots,
) -> (Option<String>, Option<String>) {
    let text = |raw: Option<&str>| {
        raw.map(|r| raw_str(r).map_or_else(|| r.to_owned(), |s| s.into_owned()))
    };
    (
        text(formats.id(f, line, slots)),
        text(formats.model(f, line, slots)),
    )
}

/// The span identity paths of an OTLP record (their slots: `Processor::span_ids`,
/// `RecordReader::span`).
const SPAN_PATHS: [&str; 4] = ["traceId", "spanId", "parentSpanId", "kind"];

/// Held pieces of split lines (Docker, CRI) at the most, per stream, by default (a worker
/// sets `--max-line-bytes`: [`Processor::set_max_line`]).
const MAX_HELD: usize = 16 << 20;

/// A Kubernetes CRI log line (`2025-03-14T10:02:11.48Z stdout F {...}`): its stream (0
/// stdout, 1 stderr), whether it is a partial piece (`P`), and its text.
fn cri_parse(line: &[u8]) -> Option<(usize, bool, &[u8])> {
    if line.len() < 24 || !line[..4].iter().all(u8::is_ascii_digit) || line[4] != b'-' {
        return None;
    }
    let sp = memchr::memchr(b' ', &line[..line.len().min(64)])?;
    let rest = &line[sp + 1..];
    let (stream, rest) = match rest.strip_prefix(b"stdout ") {
        Some(r) => (0, r),
        None => (1, rest.strip_prefix(b"stderr ")?),
    };
    match rest.get(..2)? {
        b"F " => Some((stream, false, &rest[2..])),
        b"P " => Some((stream, true, &rest[2..])),
        _ => None,
    }
}

/// The `--by` values of the requests of one line, one row of `n` per request, in strings
/// that are reused from line to line (no allocation in steady state, except for a string
/// value with escapes).
#[derive(Debug, Default, Clone)]
struct ByBuf {
    text: Vec<String>,
    present: Vec<bool>,
    len: usize,
}

impl ByBuf {
    fn clear(&mut self) {
        self.len = 0;
    }

    fn push(&mut self, v: Option<&str>) {
        if self.len == self.text.len() {
            self.text.push(String::new());
            self.present.push(false);
        }
        let t = &mut self.text[self.len];
        t.clear();
        t.push_str(v.unwrap_or(""));
        self.present[self.len] = v.is_some();
        self.len += 1;
    }

    /// Row `i` of `n` values.
    fn row(&self, i: usize, n: usize) -> ByValues<'_> {
        let range = (i * n).min(self.len)..((i + 1) * n).min(self.len);
        ByValues::new(&self.text[range.clone()], &self.present[range])
    }
}

/// A `--by` key: a JSON path, or one of the names tokentime gives a request (`$format`, the
/// format's name; `$model`, the model wherever its format logs it; `$file`, the name of the
/// input it was read from). The path `model` is `$model` where the format logs one (Bedrock's
/// `modelId`, a benchmark result's run-level `model_id`, the model a request asked for where a
/// gateway logs the one it answered with too) and else the `model` member.
#[derive(Debug, Clone, Copy)]
enum ByKey {
    Slot(usize),
    SlotOrModel(usize),
    Format,
    Model,
    File,
}

fn by_keys(by: &[Vec<String>], mut add: impl FnMut(&[String]) -> usize) -> Vec<ByKey> {
    by.iter()
        .map(|p| match p.as_slice() {
            [k] if k == "$format" => ByKey::Format,
            [k] if k == "$model" => ByKey::Model,
            [k] if k == "$file" => ByKey::File,
            [k] if k == "model" => ByKey::SlotOrModel(add(p)),
            _ => ByKey::Slot(add(p)),
        })
        .collect()
}

/// The `by` values (as strings: a JSON string decoded, anything else its JSON text; `None`
/// when absent) of a request of format `f` (named `name`) read from a parsed line or record
/// of the input named `file`.
fn read_by(
    line: &[u8],
    slots: &Slots,
    keys: &[ByKey],
    (formats, f, name, file): (&Formats, usize, &str, &str),
    out: &mut ByBuf,
) {
    // A JSON value: a string decoded, anything else its JSON text.
    let push_raw = |out: &mut ByBuf, raw: Option<&str>| match raw {
        None => out.push(None),
        Some(raw) => match raw_str(raw) {
            Some(v) => out.push(Some(&v)),
            None => out.push(Some(raw)),
        },
    };
    for key in keys {
        match *key {
            ByKey::Slot(s) => push_raw(out, slots.raw(line, s)),
            ByKey::SlotOrModel(s) => push_raw(
                out,
                formats.model(f, line, slots).or_else(|| slots.raw(line, s)),
            ),
            ByKey::Format => out.push(Some(name)),
            ByKey::Model => push_raw(out, formats.model(f, line, slots)),
            ByKey::File => out.push(Some(file)),
        }
    }
}

/// Counters of what the input held (SPEC section 4, coverage).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Coverage {
    /// Lines read (including too-long ones).
    pub lines: u64,
    /// Request lines (attributed to a format).
    pub requests: u64,
    /// Lines that are not JSON objects.
    pub non_json: u64,
    /// JSON objects that are not requests.
    pub no_timing: u64,
    /// Malformed JSON or invalid UTF-8.
    pub invalid: u64,
    /// Lines over `--max-line-bytes`.
    pub too_long: u64,
    /// Lines that already carried the enrich key.
    pub already_enriched: u64,
    /// Requests that failed (or were cancelled before their first token).
    pub errors: u64,
    /// Requests cancelled after their first token.
    pub cancelled: u64,
    /// Requests answered by a gateway's response cache.
    pub response_cache: u64,
    /// Requests with a negative interval.
    pub negative_interval: u64,
    /// Requests with a field present but unreadable in its unit.
    pub unparseable: u64,
    /// Requests with a wall-clock instant outside the plausible window (before 2000, from
    /// 2200 on).
    pub implausible_instant: u64,
    /// Requests whose instants are out of order (or whose TTFT or decode exceeds the E2E).
    pub out_of_order: u64,
    /// Requests with a logged duration more than 1 ms away from the one their instants give
    /// (the logged one is used).
    pub duration_mismatch: u64,
    /// Inputs that could not be read to their end (a FILE missing or unreadable mid-run, a
    /// truncated or corrupt compressed stream): the other counts cover what was read of them.
    pub read_errors: u64,
    /// Lines that were part of a multi-line request (not its last line), and pieces of a line
    /// split by Docker or the kubelet (not its last piece): the lines of [`Kind::Part`].
    pub joined_lines: u64,
    /// Multi-line requests dropped from a full in-flight table (`--max-inflight`).
    pub join_evicted: u64,
    /// Requests set aside as the same request seen twice: a client's view of a request whose
    /// server's view is in the same OTLP export, a record read again (summary only).
    pub duplicates: u64,
    /// Records of a benchmark's result file outside its measurement window (warm-up,
    /// cool-down: `record_window`), not requests.
    pub outside_window: u64,
    /// Requests that ended outside `--since`/`--until` (without an end instant: started
    /// outside), or log neither instant while they are given (summary only): not counted as
    /// requests.
    pub outside_range: u64,
    /// Multi-line requests dropped after `--join-timeout` of log time without a new line.
    pub join_timed_out: u64,
    /// Multi-line requests (and split lines) still incomplete at the end of the input.
    pub join_unfinished: u64,
    /// Completing lines whose earlier lines were never seen.
    pub join_orphaned: u64,
    /// Runs ended by Ctrl-C, SIGTERM, SIGHUP or a closed output before the end of their input (a summary's own: 0 or
    /// 1; a merge's: those of its digest files). Not in the JSON coverage block: a digest file
    /// and a summary say it under `partial`.
    pub interrupted: u64,
    /// Digest files written at an interval of a live run (`--every --save-digest`), which was
    /// still reading, or was killed before it could write the final one (a checkpoint's own:
    /// 1; a merge's: those among its digest files). Said under `partial`, as `interrupted`.
    pub checkpoints: u64,
    /// Requests per format name.
    pub formats: BTreeMap<String, u64>,
    /// Of the requests in `duration_mismatch`, those whose logged duration is a unit apart from
    /// their instants' (said on stderr for `--map`; in no output).
    pub unit_off: UnitOffCounts,
    /// Failed requests whose reason path held an object ([`Request::reason_object`]; said on
    /// stderr for `--map`, in no output).
    pub reason_objects: u64,
    /// Requests with an id that ended more than `--join-timeout` before the latest end read
    /// before them: too far back to be told from a copy (said on stderr when copies were set
    /// aside; in no output).
    pub behind_horizon: u64,
    /// The keys of the first such object.
    pub reason_keys: Vec<String>,
    /// Inputs stderr named for what they are instead of JSON (a text log, UTF-16, binary).
    pub inputs_named: u64,
    /// JSON lines of inputs stderr named as a benchmark's aggregates without its requests
    /// (an LLMPerf `summary.json`, a vLLM result saved without its per-request arrays).
    pub aggregate_lines: u64,
    /// No-timing lines that are the error record of a format whose error records count only
    /// when it is forced (Ollama's bare `{"error": ...}`), by format name (said on stderr).
    pub generic_errors: BTreeMap<String, u64>,
    /// No-timing lines that are tokentime's own documents (a digest file, a summary's JSON), by
    /// their `schema`: never read for requests (said on stderr).
    pub own_documents: BTreeMap<String, u64>,
    /// Lines a format sets aside as no request of it (`skip_when`: an AIPerf warm-up record, a
    /// llama.cpp stream's intermediate chunk), by what they are (its `skip_label`); not in
    /// [`Coverage::no_timing`].
    pub skipped: BTreeMap<String, u64>,
}

/// The `schema` of `line` when it is one of tokentime's own documents (a digest file, a
/// summary's or a window's JSON: a root member `schema` whose value starts `tokentime.`), which
/// hold numbers about requests, not requests.
pub(crate) fn own_schema(line: &[u8]) -> Option<String> {
    // The other members are skipped unread; a `schema` that is no string is no schema of ours.
    #[derive(serde::Deserialize)]
    struct Schema {
        schema: Option<String>,
    }
    // The test, on lines no format read: a quick look for the value first.
    memchr::memmem::find(line, b"\"tokentime.")?;
    let schema = serde_json::from_slice::<Schema>(line).ok()?.schema?;
    schema.starts_with("tokentime.").then_some(schema)
}

/// Requests whose logged duration is a thousandth (`small`) or a thousand times (`large`) of
/// their instants', by the [`crate::metrics::instants`] bit of the interval's end.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct UnitOffCounts {
    /// By bit: a thousandth.
    pub small: [u64; 8],
    /// By bit: a thousand times.
    pub large: [u64; 8],
    /// By bit: ten times the E2E latency or more.
    pub past: [u64; 8],
}

impl UnitOffCounts {
    fn add(&mut self, u: crate::metrics::UnitOff) {
        for bit in 0..8 {
            self.small[bit] += u64::from(u.small >> bit & 1);
            self.large[bit] += u64::from(u.large >> bit & 1);
            self.past[bit] += u64::from(u.past >> bit & 1);
        }
    }

    fn merge(&mut self, o: &UnitOffCounts) {
        for bit in 0..8 {
            self.small[bit] += o.small[bit];
            self.large[bit] += o.large[bit];
            self.past[bit] += o.past[bit];
        }
    }
}

/// The counters of a [`Coverage`] but `formats`, with their names in the JSON coverage block:
/// `counters` by value, `counters_mut` to add to.
macro_rules! coverage_counters {
    ($($field:ident: $name:literal),* $(,)?) => {
        impl Coverage {
            fn counters(&self) -> [u64; 26] {
                [$(self.$field),*]
            }

            fn counters_mut(&mut self) -> [(&'static str, &mut u64); 26] {
                [$(($name, &mut self.$field)),*]
            }
        }
    };
}

coverage_counters!(
    lines: "lines",
    requests: "requests",
    non_json: "non_json",
    no_timing: "no_timing",
    invalid: "invalid",
    too_long: "too_long",
    already_enriched: "already_enriched",
    errors: "errors",
    cancelled: "cancelled",
    response_cache: "response_cache",
    negative_interval: "negative_interval",
    unparseable: "unparseable",
    implausible_instant: "implausible_instant",
    out_of_order: "out_of_order",
    duration_mismatch: "duration_mismatch",
    read_errors: "read_errors",
    joined_lines: "joined_lines",
    join_evicted: "evicted",
    join_timed_out: "timed_out",
    join_unfinished: "unfinished",
    join_orphaned: "orphaned",
    interrupted: "interrupted",
    checkpoints: "checkpoints",
    duplicates: "duplicates",
    outside_window: "outside_window",
    outside_range: "outside_range",
);

impl Coverage {
    /// Adds the counters of `other`.
    pub fn merge(&mut self, other: &Coverage) {
        for ((_, a), b) in self.counters_mut().into_iter().zip(other.counters()) {
            *a += b;
        }
        for (k, v) in &other.formats {
            *self.formats.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &other.generic_errors {
            *self.generic_errors.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &other.own_documents {
            *self.own_documents.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &other.skipped {
            *self.skipped.entry(k.clone()).or_default() += v;
        }
        self.unit_off.merge(&other.unit_off);
        self.reason_objects += other.reason_objects;
        self.behind_horizon += other.behind_horizon;
        self.inputs_named += other.inputs_named;
        self.aggregate_lines += other.aggregate_lines;
        if self.reason_keys.is_empty() {
            self.reason_keys.clone_from(&other.reason_keys);
        }
    }

    /// Adds the counters of `other` when no sum passes `u64::MAX` (digest files read back
    /// may hold any count); else leaves `self` as it was and names the counter.
    ///
    /// # Errors
    /// The name of the first counter whose sum does not fit.
    pub fn checked_merge(&mut self, other: &Coverage) -> Result<(), String> {
        let mut sum = self.clone();
        for ((name, a), b) in sum.counters_mut().into_iter().zip(other.counters()) {
            *a = a.checked_add(b).ok_or(name)?;
        }
        for (k, v) in &other.formats {
            let n = sum.formats.entry(k.clone()).or_default();
            *n = n.checked_add(*v).ok_or_else(|| format!("formats.{k}"))?;
        }
        for (k, v) in &other.skipped {
            let n = sum.skipped.entry(k.clone()).or_default();
            *n = n.checked_add(*v).ok_or_else(|| format!("skipped.{k}"))?;
        }
        *self = sum;
        Ok(())
    }

    /// The lines a format read as requests or as lines it leaves out: the requests, and those
    /// set aside after they were read (copies, outside `--window`, `--since` or `--until`,
    /// `skip_when`). Zero when no format knew any line.
    pub fn claimed(&self) -> u64 {
        self.requests
            + self.duplicates
            + self.outside_window
            + self.outside_range
            + self.skipped.values().sum::<u64>()
    }

    /// True for the coverage of a run that did not read all of its input: interrupted, or an
    /// input not read to its end.
    pub fn partial(&self) -> bool {
        self.interrupted > 0 || self.read_errors > 0 || self.checkpoints > 0
    }
}

/// A metric not logged is `unparseable` when a field it uses was present in the log but
/// unreadable: when it would not be null for want of a field had that field been read
/// ([`crate::format::with_unreadable_read`]). The other metrics keep their own reasons.
fn unparseable(metrics: &mut Metrics, t: &crate::metrics::Timeline, hit_ratio: f64) {
    let probe = derive(&crate::format::with_unreadable_read(t), hit_ratio);
    for (v, p) in [
        (&mut metrics.ttft, probe.ttft),
        (&mut metrics.queue, probe.queue),
        (&mut metrics.prefill, probe.prefill),
        (&mut metrics.decode, probe.decode),
        (&mut metrics.tpot, probe.tpot),
        (&mut metrics.e2e, probe.e2e),
    ] {
        if *v == Err(NullReason::NotLogged) && p != Err(NullReason::NotLogged) {
            *v = Err(NullReason::Unparseable);
        }
    }
}

/// Parses and classifies lines. One per thread; reuses its buffers across lines.
#[derive(Clone)]
pub struct Processor {
    paths: PathSet,
    formats: Formats,
    /// By format: it logs no instant ([`Request::timeless`]).
    timeless: Vec<bool>,
    slots: Slots,
    scratch: Vec<u8>,
    key_slot: Option<usize>,
    by_slots: Vec<ByKey>,
    hint: usize,
    hit_ratio: f64,
    prefix: Option<regex::bytes::Regex>,
    docker_log: Option<usize>,
    docker_stream: Option<usize>,
    inner: Vec<u8>,
    partials: [Vec<u8>; 2],
    /// The longest split line held whole ([`MAX_HELD`], or `--max-line-bytes`).
    max_held: usize,
    /// In a chunk worker: the streams whose split lines no longer depend on the chunk before.
    settled: [bool; 2],
    /// In a chunk worker: the stream whose held pieces go with the line just deferred.
    handover: Option<usize>,
    requests: Vec<Request>,
    gaps: Vec<i64>,
    record_readers: Vec<Option<RecordReader>>,
    /// Per format: the members copied into its records ([`record_carry`]).
    record_carry: Vec<Vec<String>>,
    record_buf: Vec<Vec<u8>>,
    /// Where the values the detected format's record reader reads are in each record of
    /// `record_buf`, noted while the records were written.
    record_fill: records::Filled,
    /// Scratch: the record each request of the line was read from.
    record_from: Vec<usize>,
    /// The line last classified had records, and no format claimed any of them.
    unclaimed: bool,
    /// Records of the line being read outside its measurement window.
    outside_window: u64,
    /// What is wrong with the run of the line being read, its records read, a message each:
    /// per-request arrays that differ in length, a run length that is no number of seconds
    /// ([`Processor::run_notes`]).
    run_notes: Vec<String>,
    /// `--since`/`--until`: requests that ended outside are marked [`Request::outside`].
    range: crate::metrics::TimeRange,
    /// The format whose forced-only error record the last no-timing line is
    /// ([`Coverage::generic_errors`]).
    generic_error: Option<usize>,
    /// The format that set the last no-timing line aside as no request of it
    /// ([`Coverage::skipped`]).
    skipped_by: Option<usize>,
    /// The `schema` of the last no-timing line when it is one of tokentime's own documents
    /// ([`Coverage::own_documents`]).
    own_document: Option<String>,
    by_buf: ByBuf,
    /// The name of the input being read (`--by '$file'`).
    input_name: String,
    joins: Joins,
    join_counts: Coverage,
    want_ids: bool,
    ids: Vec<(Option<String>, Option<String>)>,
    /// Why the requests of the line failed, and the ids of the candidates for the slowest.
    notes: notes::Notes,
    reference: bool,
    defer_joins: bool,
    /// What walks a line for requests inside it ([`Walk`]).
    walk: Walk,
    /// The `--root` path the formats read below (empty with none, or with one that walks).
    root: Vec<String>,
    /// The object being tried by a walk, with its `"$parent"`.
    walk_buf: Vec<u8>,
    /// Mark the client views of requests whose server views are on the same line.
    views: bool,
    /// Compute each request's [`Request::key`].
    keys: bool,
    /// The span identity of an OTLP export's records: `traceId`, `spanId`, `parentSpanId`,
    /// `kind` (for [`dedupe::mark_views`]), and the slots of [`SPAN_PATHS`] in it.
    span_paths: PathSet,
    span_ids: [crate::json::SlotId; 4],
    span_slots: Slots,
}

/// How a line that no format reads as a whole is searched for requests inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Walk {
    /// Every object in an array at any level ([`walk`]): no `--root`.
    Arrays,
    /// The values a `--root` pattern with `[*]` finds, each tried as a line; the line itself
    /// is not.
    Root(Vec<String>),
    /// A `--root` without `[*]`: formats read below it, nothing is walked.
    Off,
}

/// The part of a `--root` path the formats' paths (and `--map`'s, `--by`'s) are read below:
/// all of it, or nothing when it walks to its records (`[*]`).
pub(crate) fn record_prefix(root: &[String]) -> &[String] {
    split_root(root).0
}

/// The `--root` path as [`Processor::new`] takes it apart: the prefix the formats' paths are
/// read below, and how lines are walked.
fn split_root(root: &[String]) -> (&[String], Walk) {
    let wild = |s: &String| s == "*" || s == "[*]";
    if root.is_empty() {
        (root, Walk::Arrays)
    } else if root.iter().any(wild) {
        let pattern = root
            .iter()
            .map(|s| if wild(s) { "*".to_owned() } else { s.clone() })
            .collect();
        (&[], Walk::Root(pattern))
    } else {
        (root, Walk::Off)
    }
}

/// The members copied into each record of a line of format `spec` that lacks them: the
/// format's own (a run's model), and the first member of each `--by` path that names no `$`
/// value, so that a path into the group that holds the records (an OTLP export's
/// `resourceSpans` entry: `--by 'resource.attributes.service\.name'`) or into the line is read
/// for each record. Only for records found by a pattern.
fn record_carry(spec: &FormatSpec, by: &[Vec<String>]) -> Vec<String> {
    let mut carry = spec.record_carry.clone();
    if matches!(spec.records, Some(crate::format::RecordSource::Each(_))) {
        for first in by.iter().filter_map(|p| p.first()) {
            if !first.starts_with('$') && !carry.contains(first) {
                carry.push(first.clone());
            }
        }
    }
    carry
}

impl Processor {
    /// Builds a processor for `specs` (tried in order; the last match first), reading records
    /// at `root` inside each line, recognizing `key` (the enrich key, when enriching: a line
    /// that has it is [`Kind::AlreadyEnriched`]) at the top level, and
    /// reading the `by` paths (below `root`) for grouping.
    pub fn new(
        specs: Vec<FormatSpec>,
        root: &[String],
        key: Option<&str>,
        by: &[Vec<String>],
        hit_ratio: f64,
    ) -> Self {
        let (root, walk) = split_root(root);
        let mut paths = PathSet::default();
        let key_slot = key.map(|k| paths.add(&[k]));
        let docker_log = Some(paths.add(&["log"]));
        let docker_stream = Some(paths.add(&["stream"]));
        let formats = Formats::compile(specs, root, &mut paths);
        let mut span_paths = PathSet::default();
        let span_ids = SPAN_PATHS.map(|k| span_paths.add(&[k]));
        let record_readers = (0..formats.len())
            .map(|i| {
                let spec = formats.record_level(i)?;
                let mut paths = PathSet::default();
                let formats = Formats::compile(vec![spec], &[], &mut paths);
                let by_slots = by_keys(by, |p| {
                    paths.add(&p.iter().map(String::as_str).collect::<Vec<_>>())
                });
                let span = SPAN_PATHS.map(|k| paths.add(&[k]));
                Some(RecordReader {
                    paths,
                    formats,
                    slots: Slots::default(),
                    by_slots,
                    span,
                })
            })
            .collect();
        let by_slots = by_keys(by, |p| {
            let full: Vec<&str> = root.iter().chain(p).map(String::as_str).collect();
            paths.add(&full)
        });
        let record_carry = (0..formats.len())
            .map(|i| record_carry(formats.spec(i), by))
            .collect();
        let instants = |s: &FormatSpec| s.fields.iter().any(|r| r.field.is_instant());
        let timeless = (0..formats.len())
            .map(|i| {
                !instants(formats.spec(i)) && !formats.record_level(i).is_some_and(|s| instants(&s))
            })
            .collect();
        Processor {
            paths,
            formats,
            timeless,
            slots: Slots::default(),
            scratch: Vec::new(),
            key_slot,
            by_slots,
            hint: 0,
            hit_ratio,
            prefix: None,
            docker_log,
            docker_stream,
            inner: Vec::new(),
            partials: [Vec::new(), Vec::new()],
            max_held: MAX_HELD,
            settled: [false; 2],
            handover: None,
            requests: Vec::new(),
            gaps: Vec::new(),
            record_readers,
            record_carry,
            record_buf: Vec::new(),
            record_fill: records::Filled::default(),
            record_from: Vec::new(),
            unclaimed: false,
            outside_window: 0,
            run_notes: Vec::new(),
            range: crate::metrics::TimeRange::default(),
            generic_error: None,
            skipped_by: None,
            own_document: None,
            by_buf: ByBuf::default(),
            input_name: String::new(),
            joins: Joins {
                max_inflight: 10_000,
                idle_ns: 600_000_000_000,
                ..Joins::default()
            },
            join_counts: Coverage::default(),
            want_ids: false,
            ids: Vec::new(),
            notes: notes::Notes::default(),
            reference: false,
            defer_joins: false,
            walk,
            root: root.to_vec(),
            walk_buf: Vec::new(),
            views: true,
            keys: false,
            span_paths,
            span_ids,
            span_slots: Slots::default(),
        }
    }

    /// Sets what is told of the same request seen twice: `views`, mark a client's view of a
    /// request whose server's view is on the same line ([`Request::duplicate`]); `keys`,
    /// compute each request's identity ([`Request::key`]) for a reader that sets copies aside.
    pub fn set_dedupe(&mut self, views: bool, keys: bool) {
        self.views = views;
        self.keys = keys;
    }

    /// Marks the requests that ended outside `range` ([`Request::outside`]).
    pub fn set_range(&mut self, range: crate::metrics::TimeRange) {
        self.range = range;
    }

    /// Reads lines with the serde_json reference parser ([`PathSet::extract_reference`])
    /// instead of the fast scanner: same results, slower; for tests and comparisons.
    pub fn use_reference_parser(&mut self) {
        self.reference = true;
    }

    /// A processor like this one (same formats, paths and settings) with nothing in flight and
    /// nothing counted, that defers the lines of formats that join lines
    /// ([`Processor::defer_joins`]): for a thread that reads a chunk of a file. Much cheaper
    /// than [`Processor::new`], which compiles the formats.
    pub fn fork(&self) -> Processor {
        let mut p = self.fresh();
        p.defer_joins = true;
        p
    }

    /// True for a processor made by [`Processor::fork`].
    pub fn is_fork(&self) -> bool {
        self.defer_joins
    }

    /// A processor like this one (same formats, paths and settings) with nothing in flight and
    /// nothing counted: for the next input, without compiling the formats again.
    pub fn fresh(&self) -> Processor {
        let mut p = self.clone();
        p.joins.clear();
        p.joins.seq = 0;
        p.joins.latest_ns = 0;
        p.join_counts = Coverage::default();
        p.outside_window = 0;
        p.partials = [Vec::new(), Vec::new()];
        p.settled = [false; 2];
        p.handover = None;
        p
    }

    fn extract(&mut self, line: &[u8]) -> Result<(), ReadError> {
        if self.reference {
            self.paths.extract_reference(line, &mut self.slots)
        } else {
            self.paths.extract(line, &mut self.slots)
        }
    }

    /// The records of the line just processed, when its requests came from records (an OTLP
    /// export's spans, a benchmark file's requests) written as its formats read them.
    pub fn line_records(&self) -> Option<&[Vec<u8>]> {
        let first = self.requests.first()?;
        self.formats.spec(first.format).records.as_ref()?;
        Some(&self.record_buf)
    }

    /// The record request `k` of the line just processed was read from, with its index among
    /// the line's records (a benchmark file's request index), when its requests came from
    /// records.
    pub fn request_record(&self, k: usize) -> Option<(usize, &[u8])> {
        self.line_records()?;
        if self.record_from.len() != self.requests.len() {
            return None;
        }
        let i = *self.record_from.get(k)?;
        Some((i, self.record_buf.get(i)?))
    }

    /// The formats it reads, in the order it was given them.
    pub fn format_specs(&self) -> Vec<FormatSpec> {
        (0..self.formats.len())
            .map(|i| self.formats.spec(i).clone())
            .collect()
    }

    /// The spec of format `i`.
    pub fn format_spec(&self, i: usize) -> &FormatSpec {
        self.formats.spec(i)
    }

    /// Classifies one line's content (no line ending, no BOM) and derives its metrics.
    pub fn process(&mut self, content: &[u8]) -> Kind {
        self.outside_window = 0;
        self.run_notes.clear();
        self.generic_error = None;
        self.skipped_by = None;
        self.own_document = None;
        self.requests.clear();
        self.gaps.clear();
        self.by_buf.clear();
        self.ids.clear();
        self.notes.clear();
        // The JSON part of the line: after what `--prefix` matches (tried first), else after
        // a Kubernetes CRI prefix (`<RFC 3339> stdout F `), which is unwrapped.
        let body = match self.user_prefix_end(content) {
            Some(end) => &content[end..],
            None => {
                if content.first() != Some(&b'{')
                    && let Some((stream, partial, body)) = cri_parse(content)
                {
                    return self.cri(stream, partial, body);
                }
                content
            }
        };
        let kind = self.process_object(body);
        if matches!(kind, Kind::NoTiming)
            && let Some((stream, text)) = self.docker_log(body)
        {
            return self.docker(stream, text);
        }
        kind
    }

    /// In a chunk worker ([`Processor::defer_joins`]), whether a line of a split-line stream
    /// (CRI, Docker) is left to the caller: those of `stream` up to and including its first
    /// complete one in the chunk, which depend on pieces held before the chunk.
    fn defer_split(&mut self, stream: usize, complete: bool) -> bool {
        if !self.defer_joins || self.settled[stream] {
            return false;
        }
        self.settled[stream] = complete;
        true
    }

    /// In a chunk worker, a line that completed held pieces came back [`Kind::Deferred`]: the
    /// pieces are held again, for the caller to hand over with the line
    /// ([`Processor::take_handover`]).
    fn deferred_with(&mut self, stream: usize, mut whole: Vec<u8>, held: usize) -> Kind {
        whole.truncate(held);
        self.partials[stream] = whole;
        self.handover = Some(stream);
        Kind::Deferred
    }

    /// A Kubernetes CRI line: `P` (partial) pieces of a long line are held until the `F` piece
    /// that ends it, then the whole JSON is read (the kubelet splits lines over 16 KiB).
    fn cri(&mut self, stream: usize, partial: bool, body: &[u8]) -> Kind {
        if self.defer_split(stream, !partial) {
            return Kind::Deferred;
        }
        let held = &mut self.partials[stream];
        if partial {
            if held.is_empty() && body.first() != Some(&b'{') {
                return Kind::NonJson;
            }
            return self.hold(stream, body);
        }
        if held.is_empty() {
            return self.process_object(body);
        }
        if self.over_limit(stream, body.len()) {
            return self.split_too_long(stream);
        }
        let mut whole = std::mem::take(&mut self.partials[stream]);
        let held = whole.len();
        whole.extend_from_slice(body);
        let kind = self.process_object(&whole);
        if let Kind::Deferred = kind {
            return self.deferred_with(stream, whole, held);
        }
        whole.clear();
        self.partials[stream] = whole;
        kind
    }

    /// A Docker json-file record: its `log` holds a line of text or (a piece of) a JSON
    /// object: Docker splits lines over 16 KiB into records whose `log` does not end in a
    /// newline.
    fn docker(&mut self, stream: usize, text: String) -> Kind {
        if self.defer_split(stream, text.ends_with('\n')) {
            return Kind::Deferred;
        }
        if !text.ends_with('\n') {
            if self.partials[stream].is_empty() && !text.trim_start().starts_with('{') {
                return Kind::NonJson;
            }
            return self.hold(stream, text.as_bytes());
        }
        let last = text.trim_end().as_bytes();
        if !self.partials[stream].is_empty() && self.over_limit(stream, last.len()) {
            return self.split_too_long(stream);
        }
        let mut inner = std::mem::take(&mut self.inner);
        inner.clear();
        inner.append(&mut self.partials[stream]);
        let held = inner.len();
        inner.extend_from_slice(last);
        // What the record holds is the line, read as a CRI line's text is: plain text is
        // non-JSON, a malformed object invalid.
        let kind = if inner.first() == Some(&b'{') {
            match self.process_object(&inner) {
                Kind::Deferred if held > 0 => {
                    let pieces = inner[..held].to_vec();
                    self.inner = inner;
                    return self.deferred_with(stream, pieces, held);
                }
                k => k,
            }
        } else {
            Kind::NonJson
        };
        self.inner = inner;
        kind
    }

    /// In a chunk worker: starts a chunk. Split lines (CRI, Docker) are left to the caller up
    /// to the first complete one of each stream.
    pub fn new_chunk(&mut self) {
        self.settled = [false; 2];
    }

    /// In a chunk worker, after a line came back [`Kind::Deferred`]: the pieces of a split line
    /// it completes, held here, with their stream; the caller sets them in the processor that
    /// handles the line ([`Processor::set_held`]).
    pub fn take_handover(&mut self) -> Option<(usize, Vec<u8>)> {
        let s = self.handover.take()?;
        Some((s, std::mem::take(&mut self.partials[s])))
    }

    /// In a chunk worker, at the end of a chunk: the pieces of split lines held for the next
    /// chunk, per stream (`None`: nothing held here; the caller keeps what it holds).
    pub fn take_held(&mut self) -> [Option<Vec<u8>>; 2] {
        let mut out = [None, None];
        for (s, o) in out.iter_mut().enumerate() {
            if !self.partials[s].is_empty() {
                *o = Some(std::mem::take(&mut self.partials[s]));
            }
        }
        out
    }

    /// Sets the pieces of a split line held for `stream` (from a chunk worker).
    pub fn set_held(&mut self, stream: usize, pieces: Vec<u8>) {
        self.partials[stream] = pieces;
    }

    /// Holds a piece of a split line (bounded: past `max_held` the held text is dropped and
    /// the line counted invalid).
    fn hold(&mut self, stream: usize, piece: &[u8]) -> Kind {
        if self.over_limit(stream, piece.len()) {
            return self.split_too_long(stream);
        }
        self.partials[stream].extend_from_slice(piece);
        Kind::Part
    }

    /// Whether the pieces held for `stream` and one more of `piece` bytes (held, or the last,
    /// that completes the line) are longer than `max_held`.
    fn over_limit(&self, stream: usize, piece: usize) -> bool {
        self.partials[stream].len() + piece > self.max_held
    }

    /// Drops the pieces held for `stream`: with the piece that came, the split line is longer
    /// than `max_held` (the last piece counts as the others do).
    fn split_too_long(&mut self, stream: usize) -> Kind {
        self.partials[stream].clear();
        Kind::Invalid(LineError::SplitTooLong { max: self.max_held })
    }

    /// Where what `--prefix` matches at the start of `content` ends; `None` without a match
    /// (or without `--prefix`, or when the line starts with the JSON).
    fn user_prefix_end(&self, content: &[u8]) -> Option<usize> {
        if content.first() == Some(&b'{') {
            return None;
        }
        let m = self.prefix.as_ref()?.find(content)?;
        (m.start() == 0).then_some(m.end())
    }

    /// The stream (0 stdout, 1 stderr) and the unescaped `log` text of the line last read, when
    /// it is a Docker json-file record.
    fn docker_log(&self, body: &[u8]) -> Option<(usize, String)> {
        let log = self.docker_log.and_then(|s| self.slots.raw(body, s))?;
        let stream = self.docker_stream.and_then(|s| self.slots.raw(body, s))?;
        let text = serde_json::from_str::<String>(log).ok()?;
        Some((usize::from(stream == "\"stderr\""), text))
    }

    fn process_object(&mut self, body: &[u8]) -> Kind {
        match self.extract(body) {
            Ok(()) => self.classify(body),
            // A line that is a JSON array: its objects may be requests.
            Err(ReadError::NotAnObject)
                if body.trim_ascii_start().first() == Some(&b'[')
                    && self.walk == Walk::Arrays
                    && serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok() =>
            {
                self.walk_line(body).unwrap_or(Kind::NonJson)
            }
            Err(ReadError::NotAnObject) => Kind::NonJson,
            Err(ReadError::Invalid(msg)) => {
                // Python writes NaN/Infinity; one in a field we do not read must not cost the
                // request its metrics.
                self.scratch.clear();
                self.scratch.extend_from_slice(body);
                if neutralize_non_finite(&mut self.scratch) {
                    let scratch = std::mem::take(&mut self.scratch);
                    let kind = if self.extract(&scratch).is_ok() {
                        self.classify(&scratch)
                    } else {
                        Kind::Invalid(LineError::Malformed(msg))
                    };
                    self.scratch = scratch;
                    return kind;
                }
                Kind::Invalid(LineError::Malformed(msg))
            }
        }
    }

    fn classify(&mut self, line: &[u8]) -> Kind {
        if self.key_slot.is_some_and(|k| self.slots.has(k)) {
            return Kind::AlreadyEnriched;
        }
        match self.walk {
            Walk::Root(_) => {
                return match self.own_document(line) {
                    true => Kind::NoTiming,
                    false => self.walk_line(line).unwrap_or(Kind::NoTiming),
                };
            }
            Walk::Arrays => {}
            Walk::Off => {
                let kind = self.classify_one(line);
                if matches!(kind, Kind::NoTiming) {
                    self.own_document(line);
                }
                return kind;
            }
        }
        self.unclaimed = false;
        match self.classify_one(line) {
            // A line whose records were each tried by every format that reads records (an OTLP
            // export of spans that are no inference requests: health checks, HTTP and database
            // spans) holds no other requests to walk to.
            Kind::NoTiming if self.unclaimed => Kind::NoTiming,
            // A line a format set aside (a warm-up record, a stream's intermediate chunk) is
            // no request of any shape.
            Kind::NoTiming if self.skipped_by.is_some() => Kind::NoTiming,
            // tokentime's own documents hold numbers of requests, not requests: the walk would
            // read its list of the slowest, or a digest's groups, as records.
            Kind::NoTiming if self.own_document(line) => Kind::NoTiming,
            Kind::NoTiming => self.walk_line(line).unwrap_or(Kind::NoTiming),
            kind => kind,
        }
    }

    /// True when `line` is one of tokentime's own documents ([`own_schema`]), noted for
    /// [`Processor::count`].
    fn own_document(&mut self, line: &[u8]) -> bool {
        self.own_document = own_schema(line);
        self.own_document.is_some()
    }

    /// The requests inside `line` (valid JSON), as [`Walk`] says: each object found is
    /// classified as a line would be. `None` when it holds none; [`Kind::Deferred`] (nothing
    /// kept) when one of them is a line of a format that joins lines and this processor
    /// defers those: the whole line is processed again in input order.
    fn walk_line(&mut self, line: &[u8]) -> Option<Kind> {
        let text = std::str::from_utf8(line).ok()?;
        let mut buf = std::mem::take(&mut self.walk_buf);
        let mut deferred = false;
        let by_name = matches!(self.walk, Walk::Arrays);
        let mut try_one = |p: &mut Processor, parent: &str, object: &str| -> bool {
            walk::with_parent(object, parent, &mut buf);
            if p.extract(&buf).is_err() {
                return false;
            }
            let n = p.requests.len();
            match p.classify_one(&buf) {
                Kind::Deferred => {
                    deferred = true;
                    true
                }
                Kind::Part => true,
                _ if p.requests.len() > n => true,
                _ => p.walked_record(&buf, by_name.then_some(parent)),
            }
        };
        match &self.walk {
            Walk::Root(pattern) => {
                let mut recs = Vec::new();
                let pattern = std::slice::from_ref(pattern);
                let _ = records::collect_raw(text, pattern, None, &[], &mut recs);
                for rec in &recs {
                    if let Ok(rec) = std::str::from_utf8(rec) {
                        try_one(self, "", rec);
                    }
                }
            }
            Walk::Arrays if walk::may_hold_lists(line) => {
                let _ = walk::walk(text, &mut |parent, object| try_one(self, parent, object));
            }
            Walk::Arrays | Walk::Off => {}
        }
        self.walk_buf = buf;
        if deferred {
            self.requests.clear();
            self.gaps.clear();
            self.by_buf.clear();
            self.ids.clear();
            self.notes.clear();
            return Some(Kind::Deferred);
        }
        (!self.requests.is_empty()).then_some(Kind::Requests)
    }

    /// Classifies `line` (its slots extracted) as one record: by the formats, no walk.
    fn classify_one(&mut self, line: &[u8]) -> Kind {
        let Some(d) = self.formats.detect(line, &self.slots, self.hint) else {
            self.generic_error = self.formats.generic_error(line, &self.slots);
            self.skipped_by = self.formats.skipped_by(line, &self.slots);
            return Kind::NoTiming;
        };
        self.hint = d.format;
        if self.record_readers[d.format].is_some() {
            return self.read_records(d.format, line);
        }
        if self.formats.joins(d.format) && !d.error_record {
            if self.defer_joins {
                return Kind::Deferred;
            }
            return self.join(d, line);
        }
        let start = self.gaps.len();
        let timeline = self.formats.timeline(d, line, &self.slots, &mut self.gaps);
        self.push_from_line(d.format, line, &timeline, start);
        Kind::Requests
    }

    /// Completes a request read from the line itself (not a record of it): its `--by` values
    /// and id come from the line's slots.
    fn push_from_line(
        &mut self,
        format: usize,
        line: &[u8],
        timeline: &crate::metrics::Timeline,
        gaps_start: usize,
    ) {
        let name = &self.formats.spec(format).name;
        read_by(
            line,
            &self.slots,
            &self.by_slots,
            (&self.formats, format, name, &self.input_name),
            &mut self.by_buf,
        );
        if self.want_ids {
            self.ids
                .push(read_id_model(&self.formats, format, line, &self.slots));
        }
        self.push(format, timeline, gaps_start);
        let i = self.requests.len() - 1;
        let fs = (&self.formats, format);
        let at = (line, &self.slots);
        self.requests[i].reason_object = self.notes.note(fs, at, (i, &self.requests[i]));
        if self.keys {
            let id = self.formats.id_bytes(format, line, &self.slots);
            self.set_key(format, id);
        }
    }

    /// Sets the key of the request just pushed, of format `format`, logged with `id`.
    fn set_key(&mut self, format: usize, id: Option<&[u8]>) {
        if let (Some(id), Some(r)) = (id, self.requests.last_mut()) {
            r.key = Some(dedupe::request_key(format, id, r));
        }
    }

    /// The `--root` path the formats read below: empty without one, and with one whose
    /// `[*]` walks to the records (then the paths are found by walking).
    pub fn record_root(&self) -> &[String] {
        &self.root
    }

    /// Names the input whose lines follow (the value of `--by '$file'`).
    pub fn set_input_name(&mut self, name: &str) {
        self.input_name.clear();
        self.input_name.push_str(name);
    }

    /// Sets `--prefix`: text matching `re` at the start of a line is skipped before the JSON.
    pub fn set_prefix(&mut self, re: Option<regex::bytes::Regex>) {
        self.prefix = re;
    }

    /// Holds a line split by Docker or the kubelet up to `bytes` (`--max-line-bytes`), as a
    /// line read whole is.
    pub fn set_max_line(&mut self, bytes: usize) {
        self.max_held = bytes.max(1);
    }

    /// Sets the bounds of the join table: at most `max_inflight` requests in flight, each
    /// dropped after `idle_ns` of log time without a new line.
    pub fn set_join_limits(&mut self, max_inflight: usize, idle_ns: i64) {
        self.joins.max_inflight = max_inflight.max(1);
        self.joins.idle_ns = idle_ns;
    }

    /// The idle timeout of the join table (`--join-timeout`, ns of log time): also how long
    /// a summary keeps a request's key to tell a copy read again.
    pub fn join_timeout_ns(&self) -> i64 {
        self.joins.idle_ns
    }

    /// A line of a format whose requests span several lines.
    fn join(&mut self, d: crate::format::Detected, line: &[u8]) -> Kind {
        let mut key = std::mem::take(&mut self.joins.key);
        if !self.formats.join_key(d.format, line, &self.slots, &mut key) {
            self.joins.key = key;
            return Kind::NoTiming;
        }
        let spec_requires_parts = self
            .formats
            .spec(d.format)
            .join
            .as_ref()
            .is_some_and(|j| j.parts_required);
        let kind = if self.formats.completes(d.format, line, &self.slots) {
            let start = self.gaps.len();
            let mut timeline = self.formats.timeline(d, line, &self.slots, &mut self.gaps);
            let standalone = self.formats.standalone(d.format, line, &self.slots);
            let now = timeline.logged_at.or(timeline.end);
            let entry = (!standalone).then(|| self.take_join(&key, now)).flatten();
            match entry {
                Some(entry) => timeline.fill_from(&entry.timeline),
                None if spec_requires_parts => self.join_counts.join_orphaned += 1,
                None => {}
            }
            self.push_from_line(d.format, line, &timeline, start);
            Kind::Requests
        } else {
            let part = self.formats.part_timeline(d.format, line, &self.slots);
            let seen = part.logged_at.or(part.first_token).or(part.end);
            if let Some(t) = seen {
                self.joins.latest_ns = self.joins.latest_ns.max(t);
            }
            self.joins.seq += 1;
            let seq = self.joins.seq;
            self.drop_if_idle(&key, seen);
            match self.joins.seen(&key, seen) {
                Some(e) => e.timeline.fill_from(&part),
                None => {
                    self.expire_joins();
                    self.joins.insert(
                        key.clone(),
                        JoinEntry {
                            timeline: part,
                            seq,
                            last_seen_ns: seen,
                        },
                    );
                }
            }
            Kind::Part
        };
        self.joins.key = key;
        kind
    }

    /// Removes the entry at `key` when its last part is older than the idle timeout before
    /// `now` (an abandoned stream whose key a later request reuses), counting it timed out.
    fn drop_if_idle(&mut self, key: &str, now: Option<i64>) {
        let idle = self.joins.idle_ns;
        let stale = self
            .joins
            .entries
            .get(key)
            .and_then(|e| e.last_seen_ns)
            .zip(now)
            .is_some_and(|(last, now)| now.saturating_sub(last) > idle);
        if stale {
            self.joins.remove(key);
            self.join_counts.join_timed_out += 1;
        }
    }

    /// The entry at `key`, removed, unless it timed out before `now` ([`Self::drop_if_idle`]).
    fn take_join(&mut self, key: &str, now: Option<i64>) -> Option<JoinEntry> {
        self.drop_if_idle(key, now);
        self.joins.remove(key)
    }

    /// Drops timed-out entries, then the oldest while the table is full.
    fn expire_joins(&mut self) {
        let j = &mut self.joins;
        if j.entries.len() < j.max_inflight && !j.seq.is_multiple_of(1024) {
            return;
        }
        let cutoff = j.latest_ns.saturating_sub(j.idle_ns);
        while let Some(&(t, seq)) = j.by_seen.first()
            && t < cutoff
        {
            if j.remove_seq(seq).is_none() {
                // (Not reached: the indexes hold the same entries.)
                j.by_seen.pop_first();
                continue;
            }
            self.join_counts.join_timed_out += 1;
        }
        while j.entries.len() >= j.max_inflight {
            let Some(&oldest) = j.by_seq.keys().next() else {
                break;
            };
            j.remove_seq(oldest);
            self.join_counts.join_evicted += 1;
        }
    }

    /// Ends the input: the requests still in flight are counted as unfinished, and the join
    /// counters are added to `cov`.
    pub fn finish(&mut self, cov: &mut Coverage) {
        self.join_counts.join_unfinished += self.joins.entries.len() as u64;
        self.joins.clear();
        // A line split by Docker or the kubelet whose last piece never came.
        for held in &mut self.partials {
            self.join_counts.join_unfinished += u64::from(!held.is_empty());
            held.clear();
        }
        let counts = std::mem::take(&mut self.join_counts);
        cov.joined_lines += counts.joined_lines;
        cov.join_evicted += counts.join_evicted;
        cov.join_timed_out += counts.join_timed_out;
        cov.join_unfinished += counts.join_unfinished;
        cov.join_orphaned += counts.join_orphaned;
    }

    fn push(&mut self, format: usize, timeline: &crate::metrics::Timeline, gaps_start: usize) {
        let mut metrics = derive(timeline, self.hit_ratio);
        if timeline.unreadable != 0 {
            unparseable(&mut metrics, timeline, self.hit_ratio);
        }
        // The end where logged; else the line's time; else the start plus the E2E (Kong's
        // `started_at` and latency). Those two the other way round for a format whose line
        // time comes after the end its E2E runs to (AIPerf's record end).
        let from_e2e = || timeline.arrival?.checked_add(metrics.e2e.ok()? as i64);
        let end_ns = timeline.end.or_else(|| {
            if timeline.end_from_e2e_first {
                from_e2e().or(timeline.logged_at)
            } else {
                timeline.logged_at.or_else(from_e2e)
            }
        });
        let start_ns = timeline
            .arrival
            .or_else(|| end_ns?.checked_sub(metrics.e2e.ok()? as i64));
        let itl = if metrics.decode.is_ok() && metrics.outcome != Outcome::Error {
            (gaps_start as u32, (self.gaps.len() - gaps_start) as u32)
        } else {
            self.gaps.truncate(gaps_start);
            (gaps_start as u32, 0)
        };
        self.requests.push(Request {
            format,
            metrics,
            start_ns,
            end_ns,
            itl,
            unparseable: timeline.unparseable,
            unreadable: timeline.unreadable,
            implausible: timeline.implausible,
            duplicate: false,
            reason_object: false,
            key: None,
            timeless: self.timeless[format],
            run: None,
            // Placed by its end; one that logs none (a failure logged with its start only) by
            // its start.
            outside: !self.range.holds(end_ns.or(start_ns)),
        });
    }

    /// Explodes a line of a format with records into its requests. `line` was extracted (so
    /// it is valid JSON and UTF-8).
    fn read_records(&mut self, format: usize, line: &[u8]) -> Kind {
        let mut recs = std::mem::take(&mut self.record_buf);
        self.record_fill.recycle(&mut recs);
        self.record_fill.clear();
        let spec = self.formats.spec(format);
        let raw = match (&spec.records, &self.record_readers[format]) {
            (Some(crate::format::RecordSource::Each(patterns)), Some(reader))
                // A format with a run's duration reads it from the line's value.
                if !self.reference && spec.run_seconds.is_empty() =>
            {
                // The detected format's reader (the first to try each record) finds its
                // values where they were noted while the record was written.
                records::collect_raw_filled(
                    line,
                    patterns,
                    spec.record_window.as_ref(),
                    &self.record_carry[format],
                    &mut recs,
                    (&reader.paths, &mut self.record_fill),
                )
                .ok()
            }
            _ => None,
        };
        let mut run_ns = None;
        match raw {
            Some(outside) => self.outside_window += outside,
            None => {
                recs.clear();
                self.record_fill.clear();
                match self.records_by_value(format, line, &mut recs) {
                    Ok(ns) => run_ns = ns,
                    Err(kind) => {
                        self.record_buf = recs;
                        return kind;
                    }
                }
            }
        }
        let first = self.requests.len();
        let kind = self.claim_records(format, line, recs);
        if let Some(ns) = run_ns {
            let run = Some(Run {
                id: Run::next_id(),
                ns,
            });
            for r in &mut self.requests[first..] {
                r.run = run;
            }
        }
        kind
    }

    /// The records of `line` through a `serde_json::Value` of it (columns, the reference path,
    /// and lines the raw walk cannot read), and the duration of their run (ns) where the
    /// format reads one ([`crate::format::FormatSpec::run_seconds`]).
    fn records_by_value(
        &mut self,
        format: usize,
        line: &[u8],
        recs: &mut Vec<Vec<u8>>,
    ) -> Result<Option<i64>, Kind> {
        let value = match serde_json::from_slice::<serde_json::Value>(line) {
            Ok(v) => v,
            // Valid JSON that serde_json will not hold as a value (a number beyond f64, a lone
            // surrogate escape): read with those values made unusable, as the line's own
            // fields are.
            Err(_) => {
                let mut fixed = line.to_vec();
                match neutralize_undecodable(&mut fixed)
                    .then(|| serde_json::from_slice::<serde_json::Value>(&fixed).ok())
                    .flatten()
                {
                    Some(v) => v,
                    None => return Err(Kind::Invalid(LineError::NotRecords)),
                }
            }
        };
        let spec = self.formats.spec(format);
        let Some(source) = &spec.records else {
            return Err(Kind::NoTiming);
        };
        let run = spec
            .run_seconds
            .iter()
            .find_map(|p| Some((p, crate::classify::records::member(&value, p)?)));
        let run_ns = run
            .and_then(|(_, v)| v.as_f64())
            .filter(|s| s.is_finite() && *s > 0.0 && *s < 1e9)
            .map(|s| (s * 1e9).round() as i64);
        // A run length present but not usable: said, not passed over as if none was logged.
        let bad_run = run.filter(|_| run_ns.is_none()).map(|(p, v)| {
            format!(
                "{} {}: not readable as the run's length in seconds (a number above 0): the \
                 run's rates are not given",
                p.join("."),
                crate::format::clipped(v.to_string())
            )
        });
        self.outside_window += crate::classify::records::collect(
            &value,
            source,
            spec.record_window.as_ref(),
            &self.record_carry[format],
            recs,
        );
        if let crate::format::RecordSource::Columns(names) = source {
            self.run_notes
                .extend(crate::classify::records::ragged_columns(&value, names));
        }
        self.run_notes.extend(bad_run);
        Ok(run_ns)
    }

    /// Hands each record to the first format with records that reads a request from it.
    fn claim_records(&mut self, format: usize, line: &[u8], recs: Vec<Vec<u8>>) -> Kind {
        let first = self.requests.len();
        // The record each request was read from.
        let mut from = std::mem::take(&mut self.record_from);
        from.clear();
        let fill = std::mem::take(&mut self.record_fill);
        // Every format with records whose line markers hold may claim a record (vLLM's spans
        // and other GenAI spans can share one OTLP export), the detected one first; the others
        // are found when it leaves a record unclaimed.
        let mut others: Option<Vec<usize>> = None;
        // A record of the detected format's per-request arrays is a request of the run by
        // construction: one whose marking element is null, or past the end of a shorter
        // array, has that value unknown, and is not left out.
        let columns = matches!(
            self.formats.spec(format).records,
            Some(crate::format::RecordSource::Columns(_))
        );
        for (i, rec) in recs.iter().enumerate() {
            match self.read_record(format, rec, fill.of(i), columns) {
                Err(()) => continue,
                Ok(true) => {
                    from.push(i);
                    continue;
                }
                Ok(false) => {}
            }
            let others = others.get_or_insert_with(|| {
                (0..self.formats.len())
                    .filter(|&i| {
                        i != format
                            && self.record_readers[i].is_some()
                            && self.formats.markers_hold(i, line, &self.slots)
                    })
                    .collect()
            });
            for &f in others.iter() {
                match self.read_record(f, rec, None, false) {
                    Err(()) => break,
                    Ok(true) => {
                        from.push(i);
                        break;
                    }
                    Ok(false) => {}
                }
            }
        }
        self.record_fill = fill;
        if self.views && from.len() >= 2 {
            self.mark_views(format, &recs, first, &from);
        }
        self.unclaimed = from.is_empty() && !recs.is_empty();
        self.record_from = from;
        self.record_buf = recs;
        if self.requests.is_empty() {
            Kind::NoTiming
        } else {
            Kind::Requests
        }
    }

    /// Marks the client views among the requests from `first` on, read from the records
    /// `from` of `recs` (each request's record index, in increasing order), when the records
    /// are OTel spans. A record's span identity is where it was noted while the record was
    /// written, when it was (for format `format`'s reader); else the record is extracted.
    fn mark_views(&mut self, format: usize, recs: &[Vec<u8>], first: usize, from: &[usize]) {
        let mut spans = Vec::with_capacity(recs.len());
        let mut reader = self.record_readers[format].as_mut();
        for (i, rec) in recs.iter().enumerate() {
            let (slots, ids) = match (self.record_fill.of(i), reader.as_deref_mut()) {
                (Some(entries), Some(r)) => {
                    r.slots.fill(r.paths.len(), entries);
                    (&r.slots, r.span)
                }
                _ => {
                    if self.span_paths.extract(rec, &mut self.span_slots).is_err() {
                        continue;
                    }
                    (&self.span_slots, self.span_ids)
                }
            };
            let raw = |k: usize| slots.raw(rec, ids[k]);
            let (Some(trace), Some(id)) = (raw(0), raw(1)) else {
                continue;
            };
            spans.push(dedupe::Span {
                trace: trace.to_ascii_lowercase(),
                id: id.to_ascii_lowercase(),
                parent: raw(2).unwrap_or("").to_ascii_lowercase(),
                kind: dedupe::SpanKind::from_raw(raw(3)),
                request: from.binary_search(&i).ok(),
            });
        }
        dedupe::mark_views(&spans, &mut self.requests[first..]);
    }

    /// Reads `rec` as a record of format `f` (which has records): `Ok(true)` when it is one
    /// (its request pushed), `Ok(false)` when its record markers do not hold (unless `whole`:
    /// then it is one whatever they say), `Err` when it cannot be read. Its values are where
    /// `filled` says, when it was noted ([`records::Filled`]); else the record is extracted.
    fn read_record(
        &mut self,
        f: usize,
        rec: &[u8],
        filled: Option<&[(u32, u32, u32)]>,
        whole: bool,
    ) -> Result<bool, ()> {
        let Some(reader) = self.record_readers[f].as_mut() else {
            return Ok(false);
        };
        let read = match filled {
            Some(entries) => {
                reader.slots.fill(reader.paths.len(), entries);
                #[cfg(debug_assertions)]
                {
                    // What was noted is what an extract of the record finds.
                    let mut check = reader.slots.clone();
                    reader
                        .paths
                        .extract(rec, &mut check)
                        .expect("a written record");
                    assert_eq!(check, reader.slots, "{}", String::from_utf8_lossy(rec));
                }
                Ok(())
            }
            None if self.reference => reader.paths.extract_reference(rec, &mut reader.slots),
            None => reader.paths.extract(rec, &mut reader.slots),
        };
        if read.is_err() {
            return Err(());
        }
        let d = match reader.formats.detect(rec, &reader.slots, 0) {
            Some(d) => d,
            None if whole => crate::format::Detected {
                format: 0,
                error_record: false,
            },
            None => return Ok(false),
        };
        let start = self.gaps.len();
        let timeline = reader
            .formats
            .timeline(d, rec, &reader.slots, &mut self.gaps);
        let name = &self.formats.spec(f).name;
        read_by(
            rec,
            &reader.slots,
            &reader.by_slots,
            (&reader.formats, 0, name, &self.input_name),
            &mut self.by_buf,
        );
        if self.want_ids {
            self.ids
                .push(read_id_model(&reader.formats, 0, rec, &reader.slots));
        }
        let key = self
            .keys
            .then(|| reader.formats.id_bytes(0, rec, &reader.slots))
            .flatten()
            .map(<[u8]>::to_vec);
        self.push(f, &timeline, start);
        if let Some(reader) = &self.record_readers[f] {
            let i = self.requests.len() - 1;
            let at = (rec, &reader.slots);
            let fs = (&reader.formats, 0);
            self.requests[i].reason_object = self.notes.note(fs, at, (i, &self.requests[i]));
        }
        if self.keys {
            self.set_key(f, key.as_deref());
        }
        Ok(true)
    }

    /// Reads an object a walk found, which no format reads as a line, as a record of a format
    /// with records: under `--root` pattern, of any; else of one whose lists have the name
    /// `parent` (an llm-load-test `results` list nested deeper than its format looks).
    fn walked_record(&mut self, rec: &[u8], parent: Option<&str>) -> bool {
        for f in 0..self.formats.len() {
            let named = match (&self.formats.spec(f).records, parent) {
                (Some(_), None) => true,
                (Some(crate::format::RecordSource::Each(patterns)), Some(parent)) => {
                    patterns.iter().any(|p| {
                        p.iter()
                            .rev()
                            .find(|s| *s != "*")
                            .is_some_and(|s| s == parent)
                    })
                }
                _ => false,
            };
            if named && self.read_record(f, rec, None, false) == Ok(true) {
                return true;
            }
        }
        false
    }

    /// The token gaps (ns) of the line last processed; a request's `itl` indexes them.
    pub fn gaps(&self) -> &[i64] {
        &self.gaps
    }

    /// What is wrong with the run of the line last processed, its records read, a message
    /// each: its per-request arrays, named with their lengths, when they differ in length (a
    /// result file cut or edited by hand); its run length, when it is no number of seconds
    /// above 0.
    pub fn run_notes(&self) -> &[String] {
        &self.run_notes
    }

    /// The requests completed by the line last processed (when it was [`Kind::Requests`]).
    pub fn requests(&self) -> &[Request] {
        &self.requests
    }

    /// The `by` values (one per `--by` path) of request `i` of the line last processed.
    pub fn by_values(&self, i: usize) -> ByValues<'_> {
        self.by_buf.row(i, self.by_slots.len())
    }

    /// The id and the model of request `i` of the line last processed, where the format logs
    /// them (read only when [`Processor::want_ids`] was set).
    pub fn id_model(&self, i: usize) -> (Option<&str>, Option<&str>) {
        match self.ids.get(i) {
            Some((id, model)) => (id.as_deref(), model.as_deref()),
            None => (None, None),
        }
    }

    /// The note of request `i` of the line last processed: why it failed, its id when it
    /// may be among the slowest ([`notes::Note`]).
    pub fn note(&self, i: usize) -> Option<&notes::Note> {
        self.notes.get(i)
    }

    /// True when the line last processed is one a format sets aside as no request of it
    /// (`skip_when`: a warm-up record, a stream's intermediate chunk).
    pub fn line_skipped(&self) -> bool {
        self.skipped_by.is_some()
    }

    /// Makes the processor note the ids of the candidates for the slowest (a summary).
    pub fn want_slowest(&mut self, yes: bool) {
        self.notes.want_slowest(yes);
    }

    /// Makes the processor note every request's id (a `--window`'s slowest are its own).
    pub fn want_every_id(&mut self) {
        self.notes.want_every_id();
    }

    /// Makes the processor keep each request's id and model (for per-request rows).
    pub fn want_ids(&mut self, yes: bool) {
        self.want_ids = yes;
    }

    /// Adds a processed line's kind to the counters.
    pub fn count(&self, kind: &Kind, cov: &mut Coverage) {
        if let Kind::Deferred = kind {
            return;
        }
        cov.lines += 1;
        // The line's records outside a benchmark's measurement window (counted with the line,
        // by whichever worker read it).
        cov.outside_window += self.outside_window;
        match kind {
            Kind::NonJson => cov.non_json += 1,
            Kind::Invalid(_) => cov.invalid += 1,
            Kind::NoTiming if let Some(i) = self.skipped_by => {
                let label = self.formats.spec(i).skip_name();
                match cov.skipped.get_mut(label.as_ref()) {
                    Some(n) => *n += 1,
                    None => {
                        cov.skipped.insert(label.into_owned(), 1);
                    }
                }
            }
            Kind::NoTiming => {
                cov.no_timing += 1;
                if let Some(i) = self.generic_error {
                    let name = &self.formats.spec(i).name;
                    *cov.generic_errors.entry(name.clone()).or_default() += 1;
                }
                if let Some(schema) = &self.own_document {
                    *cov.own_documents.entry(schema.clone()).or_default() += 1;
                }
            }
            // Counted here, not at `finish`: in a chunk worker the pieces of a split line are
            // read by whichever thread holds them, whose counters are merged as they are.
            Kind::Part => cov.joined_lines += 1,
            Kind::Deferred => {}
            Kind::AlreadyEnriched => cov.already_enriched += 1,
            Kind::Requests => {
                for r in &self.requests {
                    if r.outside {
                        cov.outside_range += 1;
                        continue;
                    }
                    cov.requests += 1;
                    match r.metrics.outcome {
                        Outcome::Error => cov.errors += 1,
                        Outcome::Cancelled => cov.cancelled += 1,
                        Outcome::Ok => {}
                    }
                    if r.metrics.cache == Some(crate::metrics::CacheClass::Response) {
                        cov.response_cache += 1;
                    }
                    if r.metrics.negative_interval {
                        cov.negative_interval += 1;
                    }
                    if r.unparseable.is_some() {
                        cov.unparseable += 1;
                    }
                    if r.implausible != 0 {
                        cov.implausible_instant += 1;
                    }
                    if r.metrics.out_of_order {
                        cov.out_of_order += 1;
                        if r.metrics.unit_off.past != 0 && !r.metrics.duration_mismatch {
                            cov.unit_off.add(r.metrics.unit_off);
                        }
                    }
                    if r.metrics.duration_mismatch {
                        cov.duration_mismatch += 1;
                        cov.unit_off.add(r.metrics.unit_off);
                    }
                    if r.duplicate {
                        cov.duplicates += 1;
                    }
                    if r.reason_object {
                        cov.reason_objects += 1;
                        if cov.reason_keys.is_empty() {
                            cov.reason_keys.clone_from(self.notes.object_keys());
                        }
                    }
                    let name = &self.formats.spec(r.format).name;
                    match cov.formats.get_mut(name) {
                        Some(n) => *n += 1,
                        None => {
                            cov.formats.insert(name.clone(), 1);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
