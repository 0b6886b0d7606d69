//! Records: the requests inside one line that holds several (an OTLP export with many spans,
//! a benchmark result with one array per metric, a report with nested request lists).
//!
//! Owns the walk from a line's JSON to each request's own JSON object, which the format's
//! fields then read as if it were a line. It runs only for lines already attributed (by their
//! cheap markers) to a format with records, never on the common one-request-per-line path.
//! Records found by a pattern ([`collect_raw`], OTLP exports) are read from the line's text
//! (which the fast scanner has checked) in one pass that writes each record as it reads it,
//! with only its OTLP attribute lists rewritten (`text.rs`); [`collect_raw_filled`] also notes
//! where the values of one reader's paths are in each record written ([`Filled`]), so that
//! the reader need not scan the record again. Columns ([`collect`], benchmark result files,
//! small) go through a `serde_json::Value`. The two give the same records: a test checks the
//! first against the second, and the noted places against an extract of each record. No I/O.

use crate::format::{RecordSource, RecordWindow};
use serde_json::{Map, Value};
use std::borrow::Cow;

#[cfg(test)]
mod indexed;
mod text;

/// Appends to `out` the JSON text of each record of `line` (a parsed JSON value) as `source`
/// says, in document order, and returns how many records fell outside `window`.
///
/// The members named in `carry` are copied into each record that has no member of that name
/// (a value that holds for every request of the line or of its group, as a benchmark's
/// model): the group's (the value a pattern's first `*` takes, a benchmark of a report),
/// else the root's.
///
/// OTLP `attributes` lists (`[{"key":K,"value":{"intValue":"3"}}]`) in a record become
/// objects (`{"K":"3"}`), so a format reads `attributes.K`. Each record found by a pattern
/// gets a member `"$parent"`: the key of the array or object that held it (`"spans"`,
/// `"errored"`), so a format can tell records of different lists apart. A record with
/// `response_timestamps` (Perf Analyzer's export) gets `"$content_timestamps"`: see
/// [`content_timestamps`].
pub(crate) fn collect(
    line: &Value,
    source: &RecordSource,
    window: Option<&RecordWindow>,
    carry: &[String],
    out: &mut Vec<Vec<u8>>,
) -> u64 {
    let carried: Vec<(&String, &Value)> = carry
        .iter()
        .filter_map(|k| Some((k, line.get(k.as_str())?)))
        .collect();
    let add_carried = |m: &mut Map<String, Value>, group: Option<&Value>| {
        for k in carry {
            if m.contains_key(k.as_str()) {
                continue;
            }
            let v = group
                .and_then(|g| g.get(k.as_str()))
                .or_else(|| carried.iter().find(|(c, _)| *c == k).map(|&(_, v)| v));
            if let Some(v) = v {
                // As a record's own member is: OTLP attribute lists become objects.
                let mut v = kv_list_to_object(v).unwrap_or_else(|| v.clone());
                normalize_otlp(&mut v);
                m.insert(k.clone(), v);
            }
        }
    };
    let mut outside = 0;
    match source {
        RecordSource::Each(patterns) => {
            for pattern in patterns {
                let mut found = Vec::new();
                walk(line, pattern, None, &mut found);
                let parent = parent_name(pattern);
                for (group, v) in found {
                    if let Some(w) = window
                        && !w.contains(group, v)
                    {
                        outside += 1;
                        continue;
                    }
                    let mut v = v.clone();
                    normalize_otlp(&mut v);
                    if let Value::Object(m) = &mut v {
                        m.insert("$parent".into(), Value::String(parent.to_owned()));
                        if let Some(ts) = m.get(TIMESTAMPS) {
                            let content = content_timestamps(ts, m.get(OUTPUTS));
                            m.insert(CONTENT_TIMESTAMPS.into(), content);
                        }
                        add_carried(m, group);
                    }
                    out.push(serde_json::to_vec(&v).unwrap_or_default());
                }
            }
        }
        RecordSource::Columns(names) => {
            let columns: Vec<(&String, &Vec<Value>)> = names
                .iter()
                .filter_map(|n| Some((n, line.get(n)?.as_array()?)))
                .collect();
            let n = columns.iter().map(|(_, c)| c.len()).max().unwrap_or(0);
            for i in 0..n {
                let mut rec = Map::new();
                for (name, col) in &columns {
                    if let Some(v) = col.get(i) {
                        rec.insert((*name).clone(), v.clone());
                    }
                }
                add_carried(&mut rec, None);
                // The line's other scalars are its run's settings and totals (`request_rate`,
                // `max_concurrency`, `date`): each request reads them, for `--by`.
                if let Value::Object(top) = line {
                    for (k, v) in top {
                        if !matches!(v, Value::Array(_) | Value::Object(_))
                            && !rec.contains_key(k.as_str())
                        {
                            rec.insert(k.clone(), v.clone());
                        }
                    }
                }
                out.push(serde_json::to_vec(&Value::Object(rec)).unwrap_or_default());
            }
        }
    }
    outside
}

/// The arrays `names` of `line` (a result file's per-request arrays), named with their
/// lengths, when those present differ in length: the requests past the end of a shorter one
/// have no value from it.
pub(crate) fn ragged_columns(line: &Value, names: &[String]) -> Option<String> {
    let lengths: Vec<(&String, usize)> = names
        .iter()
        .filter_map(|n| Some((n, line.get(n)?.as_array()?.len())))
        .collect();
    let n = lengths.iter().map(|&(_, l)| l).max()?;
    if lengths.iter().all(|&(_, l)| l == n) {
        return None;
    }
    let listed: Vec<String> = lengths.iter().map(|(k, l)| format!("{k} {l}")).collect();
    Some(format!(
        "the per-request arrays differ in length ({}): {n} requests read, each without a value \
         from an array that ends before it",
        listed.join(", ")
    ))
}

impl RecordWindow {
    /// True when the record's [start, end] overlaps the group's window; true when the group
    /// logs no window, false when the record has no start or end.
    fn contains(&self, group: Option<&Value>, record: &Value) -> bool {
        let num =
            |v: Option<&Value>, path: &[String]| -> Option<f64> { member(v?, path)?.as_f64() };
        self.holds(|p| num(group, p), |p| num(Some(record), p))
    }

    /// The rule of [`RecordWindow::contains`] over the numbers at a path of the group and of
    /// the record.
    fn holds(
        &self,
        group: impl Fn(&[String]) -> Option<f64>,
        record: impl Fn(&[String]) -> Option<f64>,
    ) -> bool {
        self.holds_within((group(&self.start), group(&self.end)), record)
    }

    /// The rule of [`RecordWindow::holds`] given the group's start and end.
    fn holds_within(
        &self,
        group: (Option<f64>, Option<f64>),
        record: impl Fn(&[String]) -> Option<f64>,
    ) -> bool {
        let (Some(ws), Some(we)) = group else {
            return true;
        };
        // A record that never ended (a request cancelled at the end of the run) is not in
        // the window.
        let (Some(rs), Some(re)) = (record(&self.record_start), record(&self.record_end)) else {
            return false;
        };
        re >= ws && rs <= we
    }
}

/// The value at `path` below `v`: object members by key, array elements by
/// [`crate::json::index_segment`] (`[0]`, `[-1]` the last).
pub(crate) fn member<'a>(v: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter()
        .try_fold(v, |v, seg| match (v, crate::json::index_segment(seg)) {
            (Value::Array(a), Some(-1)) => a.last(),
            (Value::Array(a), Some(i)) => a.get(usize::try_from(i).ok()?),
            (Value::Object(o), _) => o.get(seg),
            _ => None,
        })
}

/// The `"$parent"` of the records a pattern finds: the key of the array or object that held
/// them (its last segment that is not `*`).
fn parent_name(pattern: &[String]) -> &str {
    pattern
        .iter()
        .rev()
        .find(|s| *s != "*")
        .map_or("", String::as_str)
}

/// Collects the values at `pattern` below `v`, each with its group (the element the first
/// `*` matched); a `*` segment matches every array element or object member.
fn walk<'a>(
    v: &'a Value,
    pattern: &[String],
    group: Option<&'a Value>,
    found: &mut Vec<(Option<&'a Value>, &'a Value)>,
) {
    let Some((seg, rest)) = pattern.split_first() else {
        found.push((group, v));
        return;
    };
    if seg == "*" {
        let each = |i: &'a Value, found: &mut Vec<_>| walk(i, rest, group.or(Some(i)), found);
        match v {
            Value::Array(items) => items.iter().for_each(|i| each(i, found)),
            Value::Object(members) => members.values().for_each(|i| each(i, found)),
            _ => {}
        }
    } else if let Some(next) = v.get(seg.as_str()) {
        walk(next, rest, group, found);
    }
}

/// Rewrites every OTLP key-value list below `v` into an object, unwrapping each `AnyValue`.
fn normalize_otlp(v: &mut Value) {
    match v {
        Value::Object(members) => {
            for (_, child) in members.iter_mut() {
                if let Some(obj) = kv_list_to_object(child) {
                    *child = obj;
                }
                normalize_otlp(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalize_otlp),
        _ => {}
    }
}

/// `[{"key":K,"value":ANY}, ...]` as `{K: unwrapped ANY}`; `None` when `v` is not such a list.
fn kv_list_to_object(v: &Value) -> Option<Value> {
    let items = v.as_array()?;
    if items.is_empty() {
        return None;
    }
    let mut out = Map::new();
    for item in items {
        let key = item.get("key")?.as_str()?;
        let value = item
            .get("value")
            .map(unwrap_any_value)
            .unwrap_or(Value::Null);
        out.insert(key.to_owned(), value);
    }
    Some(Value::Object(out))
}

/// The members of an OTLP `AnyValue` that hold a scalar, in the order they are tried.
const SCALAR_VALUES: [&str; 5] = [
    "stringValue",
    "intValue",
    "doubleValue",
    "boolValue",
    "bytesValue",
];

/// An OTLP `AnyValue` (`{"stringValue":"x"}`, `{"intValue":"128"}`, `{"doubleValue":0.5}`,
/// `{"boolValue":true}`, `{"arrayValue":{"values":[...]}}`) as a plain JSON value. 64-bit
/// integers stay decimal strings, so they are exact beyond 2^53.
fn unwrap_any_value(v: &Value) -> Value {
    let Some(obj) = v.as_object() else {
        return v.clone();
    };
    if let Some(x) = obj.get("arrayValue") {
        let values = x
            .get("values")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        return Value::Array(values.iter().map(unwrap_any_value).collect());
    }
    if let Some(x) = obj.get("kvlistValue") {
        return x
            .get("values")
            .and_then(kv_list_to_object)
            .unwrap_or(Value::Null);
    }
    for k in SCALAR_VALUES {
        if let Some(x) = obj.get(k) {
            return x.clone();
        }
    }
    v.clone()
}

/// [`collect`] for a [`RecordSource::Each`] source, reading `line` (JSON text the caller has
/// checked) without building a `serde_json::Value` of it: appends each record's JSON text to
/// `out` and returns how many fell outside `window`. The records read as [`collect`]'s do (the
/// same members and values; numbers keep their text, members their order). An error when a
/// key or an attribute name is not decodable (a lone surrogate escape) or the text is not
/// valid JSON after all: the caller then takes the `Value` path.
pub(crate) fn collect_raw(
    line: &str,
    patterns: &[Vec<String>],
    window: Option<&RecordWindow>,
    carry: &[String],
    out: &mut Vec<Vec<u8>>,
) -> Result<u64, NotRaw> {
    text::collect(line.as_bytes(), patterns, window, carry, out, None)
}

/// Where the values of one reader's paths are in each record [`collect_raw_filled`] wrote: what
/// [`crate::json::PathSet::extract`] of the record would find, noted while it was written.
#[derive(Debug, Default, Clone)]
pub(crate) struct Filled {
    /// (slot, start, end) of each value, as [`crate::json::Slots::fill`] takes them.
    pub(crate) entries: Vec<(u32, u32, u32)>,
    /// Per record of `out` (the same index): the range of `entries` that is its own; `None`
    /// when the record is to be extracted instead (its values were not all followed).
    pub(crate) ranges: Vec<Option<(u32, u32)>>,
    /// Scratch: the pairs of a key-value list written.
    pairs: Vec<text::PairAt>,
    /// The texts of records read before, emptied, for the next ones to be written in.
    spare: Vec<Vec<u8>>,
}

/// The most record texts [`Filled::spare`] keeps, and the largest (in bytes of room).
const SPARE: (usize, usize) = (16, 1 << 17);

impl Filled {
    /// Empties it for the next line (the spare texts stay).
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.ranges.clear();
    }

    /// Empties `recs`, keeping its texts (up to [`SPARE`]) for the next records.
    pub(crate) fn recycle(&mut self, recs: &mut Vec<Vec<u8>>) {
        for rec in recs.drain(..) {
            if self.spare.len() < SPARE.0 && rec.capacity() <= SPARE.1 {
                self.spare.push(rec);
            }
        }
    }

    /// A text to write a record of about `room` bytes in: a spare one, emptied, when there is
    /// one.
    fn text_for(&mut self, room: usize) -> Vec<u8> {
        match self.spare.pop() {
            Some(mut text) => {
                text.clear();
                text.reserve(room);
                text
            }
            None => Vec::with_capacity(room),
        }
    }

    /// The entries of record `i`, when they were noted.
    pub(crate) fn of(&self, i: usize) -> Option<&[(u32, u32, u32)]> {
        let (a, b) = self.ranges.get(i).copied().flatten()?;
        self.entries.get(a as usize..b as usize)
    }
}

/// [`collect_raw`] of a line's bytes (valid UTF-8: the caller has checked them, as an
/// extract of the line does) that also notes, in `fill`, where the values of `paths` are in
/// each record written, so that a reader of them need not scan the record again.
pub(crate) fn collect_raw_filled(
    line: &[u8],
    patterns: &[Vec<String>],
    window: Option<&RecordWindow>,
    carry: &[String],
    out: &mut Vec<Vec<u8>>,
    (paths, fill): (&crate::json::PathSet, &mut Filled),
) -> Result<u64, NotRaw> {
    text::collect(line, patterns, window, carry, out, Some((paths, fill)))
}

/// The response instants of a Perf Analyzer export record (GenAI-Perf's `profile_export.json`).
const TIMESTAMPS: &str = "response_timestamps";
/// The responses' text, one `{"response": TEXT}` per instant.
const OUTPUTS: &str = "response_outputs";
/// The member added to such a record: the instants of the responses that carry output.
const CONTENT_TIMESTAMPS: &str = "$content_timestamps";

/// The elements of `timestamps` whose response (the same index of `outputs`) carries output
/// text, as GenAI-Perf keeps them before it measures: a stream's role-only first chunk, a
/// usage-only chunk, `[DONE]` and SSE comments carry none. Every element when `outputs` is
/// absent or does not pair with `timestamps`; an empty array when `timestamps` is no array.
fn content_timestamps(timestamps: &Value, outputs: Option<&Value>) -> Value {
    let Some(ts) = timestamps.as_array() else {
        return Value::Array(vec![]);
    };
    let outputs = outputs
        .and_then(Value::as_array)
        .filter(|o| o.len() == ts.len());
    let Some(outputs) = outputs else {
        return Value::Array(ts.clone());
    };
    let kept = ts
        .iter()
        .zip(outputs)
        .filter(|(_, o)| {
            o.get("response")
                .and_then(Value::as_str)
                .is_some_and(response_has_content)
        })
        .map(|(t, _)| t.clone())
        .collect();
    Value::Array(kept)
}

/// True when one response's text (one or more SSE events, `data: {...}`, or a whole JSON
/// body) carries output: a non-empty `content` or `reasoning_content` / `reasoning` of the
/// first choice's `delta` or `message`, its `text`, a Triton `text_output` or a Hugging Face
/// `generated_text`. Data that is no JSON counts as output (a response the reader cannot
/// judge is still a response).
fn response_has_content(response: &str) -> bool {
    response.split("\n\n").any(|event| {
        let event = event.trim();
        if event.is_empty() || event.starts_with([':']) {
            return false;
        }
        if ["event:", "id:", "retry:"]
            .iter()
            .any(|f| event.starts_with(f))
        {
            return false;
        }
        let data = event.strip_prefix("data:").unwrap_or(event).trim();
        if data.is_empty() || data == "[DONE]" {
            return false;
        }
        let Ok(v) = serde_json::from_str::<Value>(data) else {
            return true;
        };
        let v = v.as_array().and_then(|a| a.first()).unwrap_or(&v);
        let choice = v.get("choices").and_then(|c| c.get(0));
        let texts = [
            choice.and_then(|c| c.get("delta")),
            choice.and_then(|c| c.get("message")),
        ]
        .into_iter()
        .flatten()
        .flat_map(|m| ["content", "reasoning_content", "reasoning"].map(|k| m.get(k)))
        .chain([
            choice.and_then(|c| c.get("text")),
            v.get("text_output"),
            v.get("generated_text"),
        ]);
        texts
            .flatten()
            .any(|t| t.as_str().is_some_and(|s| !s.is_empty()))
    })
}

/// [`collect_raw`] could not read the line (see there).
#[derive(Debug)]
pub(crate) struct NotRaw;

/// Where each object and array of the line closes, found in one pass, so that skipping a value
/// costs a lookup instead of a walk over it (the records walk splits the same text once per
/// level it descends).
pub(super) struct Index<'a> {
    line: &'a str,
    /// (opening bracket, index after the closing one), in order of the opening ones.
    close: Vec<(usize, usize)>,
}

impl<'a> Index<'a> {
    pub(super) fn new(line: &'a str) -> Result<Self, NotRaw> {
        let b = line.as_bytes();
        let mut close = Vec::new();
        let mut open: Vec<usize> = Vec::new();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'"' => {
                    i = string_end(b, i)?;
                    continue;
                }
                b'{' | b'[' => {
                    open.push(close.len());
                    close.push((i, 0));
                }
                b'}' | b']' => close[open.pop().ok_or(NotRaw)?].1 = i + 1,
                _ => {}
            }
            i += 1;
        }
        if !open.is_empty() {
            return Err(NotRaw);
        }
        Ok(Index { line, close })
    }

    /// The index in `b` after the object or array opening at `b[i]`, when `b` is part of the
    /// line.
    fn end(&self, b: &[u8], i: usize) -> Option<usize> {
        let base = self.line.as_ptr() as usize;
        let at = (b.as_ptr() as usize).checked_sub(base)?;
        if at + b.len() > self.line.len() {
            return None;
        }
        let k = self.close.binary_search_by_key(&(at + i), |e| e.0).ok()?;
        Some(self.close[k].1 - at)
    }
}

/// The index of the first byte at or after `i` that is not JSON whitespace.
fn ws(b: &[u8], mut i: usize) -> usize {
    while b
        .get(i)
        .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
    {
        i += 1;
    }
    i
}

/// The index after the string whose opening quote is at `i`.
fn string_end(b: &[u8], mut i: usize) -> Result<usize, NotRaw> {
    i += 1;
    loop {
        let at = i + memchr::memchr2(b'"', b'\\', b.get(i..).ok_or(NotRaw)?).ok_or(NotRaw)?;
        if b[at] == b'"' {
            return Ok(at + 1);
        }
        i = at + 2;
    }
}

/// The index after the value that starts at `i` (the text is valid JSON: brackets are only
/// counted, scalars run to the next delimiter).
fn value_end(ix: &Index, b: &[u8], i: usize) -> Result<usize, NotRaw> {
    match b.get(i) {
        Some(b'"') => string_end(b, i),
        Some(b'{' | b'[') if let Some(end) = ix.end(b, i) => Ok(end),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match b.get(j).ok_or(NotRaw)? {
                    b'"' => {
                        j = string_end(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Ok(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        Some(_) => {
            let mut j = i;
            while b
                .get(j)
                .is_some_and(|c| !matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
            {
                j += 1;
            }
            Ok(j)
        }
        None => Err(NotRaw),
    }
}

/// An object's members in document order: each key (decoded) and its value's text.
pub(super) type Members<'a> = Vec<(Cow<'a, str>, &'a str)>;

/// The members of `v` (a value's text) when it is an object.
pub(super) fn members<'a>(ix: &Index, v: &'a str) -> Result<Option<Members<'a>>, NotRaw> {
    items(v, b'{', b'}', |b, i| {
        let key_end = string_end(b, i)?;
        let key = decode_string(v.get(i..key_end).ok_or(NotRaw)?)?;
        let i = ws(b, ws(b, key_end) + 1);
        let end = value_end(ix, b, i)?;
        Ok(((key, v.get(i..end).ok_or(NotRaw)?), end))
    })
}

/// The elements' texts of `v` when it is an array.
pub(super) fn elements<'a>(ix: &Index, v: &'a str) -> Result<Option<Vec<&'a str>>, NotRaw> {
    items(v, b'[', b']', |b, i| {
        let end = value_end(ix, b, i)?;
        Ok((v.get(i..end).ok_or(NotRaw)?, end))
    })
}

/// The items of the container `v` when it opens with `open`: `item` reads one at its first
/// byte and says where it ends; items are separated by `,` and closed by `close`.
fn items<T>(
    v: &str,
    open: u8,
    close: u8,
    mut item: impl FnMut(&[u8], usize) -> Result<(T, usize), NotRaw>,
) -> Result<Option<Vec<T>>, NotRaw> {
    let b = v.as_bytes();
    if b.first() != Some(&open) {
        return Ok(None);
    }
    let mut out = Vec::new();
    let mut i = ws(b, 1);
    if b.get(i) == Some(&close) {
        return Ok(Some(out));
    }
    loop {
        let (x, end) = item(b, i)?;
        out.push(x);
        i = ws(b, end);
        match b.get(i) {
            Some(b',') => i = ws(b, i + 1),
            Some(&c) if c == close => return Ok(Some(out)),
            _ => return Err(NotRaw),
        }
    }
}

/// A JSON string's text (quotes included) decoded; borrowed when it has no escapes.
fn decode_string(text: &str) -> Result<Cow<'_, str>, NotRaw> {
    let inner = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .ok_or(NotRaw)?;
    if !inner.contains('\\') {
        return Ok(Cow::Borrowed(inner));
    }
    serde_json::from_str::<String>(text)
        .map(Cow::Owned)
        .map_err(|_| NotRaw)
}
#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn otlp_spans_become_records_with_attribute_objects() {
        let line = json!({"resourceSpans":[{"scopeSpans":[{"spans":[
            {"name":"a","attributes":[{"key":"gen_ai.usage.input_tokens","value":{"intValue":"12"}},
                                      {"key":"x","value":{"arrayValue":{"values":[{"stringValue":"stop"}]}}}]},
            {"name":"b","attributes":[]}]}]},{"scopeSpans":[{"spans":[{"name":"c"}]}]}]});
        let mut out = vec![];
        let pattern = ["resourceSpans", "*", "scopeSpans", "*", "spans", "*"]
            .map(String::from)
            .to_vec();
        collect(
            &line,
            &RecordSource::Each(vec![pattern]),
            None,
            &[],
            &mut out,
        );
        let recs: Vec<Value> = out
            .iter()
            .map(|b| serde_json::from_slice(b).unwrap())
            .collect();
        assert_eq!(recs.len(), 3);
        assert_eq!(recs[0]["attributes"]["gen_ai.usage.input_tokens"], "12");
        assert_eq!(recs[0]["attributes"]["x"], json!(["stop"]));
        assert_eq!(recs[2]["name"], "c");
        assert_eq!(recs[2]["$parent"], "spans");
    }

    /// Both walks over `line` with `patterns`: the records as values, and the counts outside.
    fn both(
        line: &str,
        patterns: &[&str],
        window: Option<&RecordWindow>,
        carry: &[&str],
    ) -> ((Vec<Value>, u64), (Vec<Value>, u64)) {
        let patterns: Vec<Vec<String>> = patterns
            .iter()
            .map(|p| p.split('.').map(String::from).collect())
            .collect();
        let carry: Vec<String> = carry.iter().map(|c| c.to_string()).collect();
        let parse = |out: Vec<Vec<u8>>| -> Vec<Value> {
            out.iter()
                .map(|b| serde_json::from_slice(b).expect("a record is JSON"))
                .collect()
        };
        let mut by_value = vec![];
        let value: Value = serde_json::from_str(line).unwrap();
        let n = collect(
            &value,
            &RecordSource::Each(patterns.clone()),
            window,
            &carry,
            &mut by_value,
        );
        let mut raw = vec![];
        let m = collect_raw(line, &patterns, window, &carry, &mut raw).expect("readable");
        same_as_indexed(line, &patterns, window, &carry);
        same_as_extract(line, &patterns, window, &carry, &raw);
        ((parse(by_value), n), (parse(raw), m))
    }

    /// Checks that where [`collect_raw_filled`] notes the values of a set of paths in the
    /// records it writes (the ones `raw` holds) is what an extract of each record finds.
    fn same_as_extract(
        line: &str,
        patterns: &[Vec<String>],
        window: Option<&RecordWindow>,
        carry: &[String],
        raw: &[Vec<u8>],
    ) {
        let names = [
            "a",
            "gen_ai.usage.input_tokens",
            "x y",
            "é",
            "日本",
            "\"",
            "key",
            "value",
            "$parent",
            "x",
            "kv",
            "esc\u{e9}\"q",
            "in",
            "name",
            "n",
        ];
        let mut paths = crate::json::PathSet::default();
        for name in names {
            paths.add(&[name]);
            paths.add(&["attributes", name]);
            paths.add(&["attributes", name, "k"]);
            paths.add(&["status", name]);
        }
        for p in [
            &["attributes", "kv", "in"][..],
            &["attributes", "x", "[0]"],
            &["status"],
            &["status", "code"],
            &["events", "[0]", "name"],
            &["info", "start"],
            &["info", "end"],
            &["$content_timestamps"],
            &["resourceSpans"],
            &["model"],
            &["timestamp"],
        ] {
            paths.add(p);
        }
        let (mut recs, mut filled) = (vec![], Filled::default());
        collect_raw_filled(
            line.as_bytes(),
            patterns,
            window,
            carry,
            &mut recs,
            (&paths, &mut filled),
        )
        .expect("readable");
        assert_eq!(recs, raw, "{line}");
        assert_eq!(filled.ranges.len(), recs.len());
        let (mut a, mut b) = (crate::json::Slots::default(), crate::json::Slots::default());
        for (i, rec) in recs.iter().enumerate() {
            let Some(entries) = filled.of(i) else {
                continue;
            };
            a.fill(paths.len(), entries);
            if paths.extract(rec, &mut b).is_ok() {
                assert_eq!(a, b, "{}", String::from_utf8_lossy(rec));
            }
        }
    }

    /// Checks that the one-pass writer's records are byte for byte the ones the indexed walk
    /// it replaced writes (and that both read the line or neither).
    fn same_as_indexed(
        line: &str,
        patterns: &[Vec<String>],
        window: Option<&RecordWindow>,
        carry: &[String],
    ) {
        let (mut new, mut old) = (vec![], vec![]);
        let n = collect_raw(line, patterns, window, carry, &mut new);
        let m = indexed::collect_raw_indexed(line, patterns, window, carry, &mut old);
        let text = |recs: Vec<Vec<u8>>| -> Vec<String> {
            recs.into_iter()
                .map(|r| String::from_utf8(r).unwrap())
                .collect()
        };
        match (n, m) {
            (Ok(n), Ok(m)) => {
                assert_eq!(n, m, "{line}");
                assert_eq!(text(new), text(old), "{line}");
            }
            (Err(_), Err(_)) => {}
            (n, m) => panic!("{n:?} vs {m:?}: {line}"),
        }
    }

    /// Generated OTLP lines, odd in every way the records walk must keep: escapes and unicode
    /// in keys and strings, nested `kvlistValue` / `arrayValue`s, empty and missing lists and
    /// members, pairs out of order or repeated, several `resourceSpans` and `scopeSpans`,
    /// blanks anywhere.
    #[test]
    fn generated_otlp_lines_give_the_records_of_the_indexed_walk() {
        let pattern = ["resourceSpans.*.scopeSpans.*.spans.*"];
        for seed in 1..=1000u64 {
            // With blanks, and without (as exporters write it: the common pairs' path).
            for blanks in [true, false] {
                let line = otlp_gen::line(seed, blanks);
                serde_json::from_str::<Value>(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
                let ((by_value, _), (raw, _)) = both(&line, &pattern, None, &[]);
                assert_eq!(by_value, raw, "{line}");
            }
        }
    }

    /// A small generator of OTLP/JSON trace lines (see the test above).
    mod otlp_gen {
        /// The generator's state, and whether it writes blanks.
        struct Rng(u64, bool);

        impl Rng {
            fn below(&mut self, n: u64) -> u64 {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                self.0 % n
            }
            fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
                xs[self.below(xs.len() as u64) as usize]
            }
        }

        /// Writes a generated value.
        type Gen<'a> = dyn Fn(&mut Rng, &mut String) + 'a;

        const PIECES: &[&str] = &[
            "a",
            "gen_ai.usage.input_tokens",
            "x y",
            r"\u00e9",
            "é",
            "日本",
            r#"\""#,
            r"\n",
            r"\\",
            r"\/",
            r"\ud83d\ude00",
            "😀",
            "\u{7f}",
            r"\u001f",
            r"\t",
            "key",
            "value",
            "$parent",
            "",
        ];

        fn blank(r: &mut Rng, out: &mut String) {
            if r.1 {
                out.push_str(r.pick(&["", "", "", " ", "\n ", "\t"]));
            }
        }

        fn string(r: &mut Rng, out: &mut String) {
            out.push('"');
            for _ in 0..r.below(4) {
                out.push_str(r.pick(PIECES));
            }
            out.push('"');
        }

        fn scalar(r: &mut Rng, out: &mut String) {
            match r.below(6) {
                0 | 1 => string(r, out),
                2 => out.push_str(r.pick(&["1", "-0.5", "1.50e3", "12345678901234567890", "0"])),
                3 => out.push_str(r.pick(&["true", "false", "null"])),
                4 => out.push_str("[]"),
                _ => out.push_str("{}"),
            }
        }

        /// An object of `members`, each written by its function, in order, with blanks.
        fn object(r: &mut Rng, out: &mut String, members: &[(&str, &Gen)]) {
            out.push('{');
            for (n, (k, f)) in members.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                blank(r, out);
                out.push_str(&format!("\"{k}\""));
                blank(r, out);
                out.push(':');
                blank(r, out);
                f(r, out);
                blank(r, out);
            }
            out.push('}');
        }

        fn list(r: &mut Rng, out: &mut String, max: u64, item: &dyn Fn(&mut Rng, &mut String)) {
            out.push('[');
            for n in 0..r.below(max + 1) {
                if n > 0 {
                    out.push(',');
                }
                blank(r, out);
                item(r, out);
            }
            blank(r, out);
            out.push(']');
        }

        fn any(r: &mut Rng, out: &mut String, depth: u32) {
            let deep = depth < 3;
            match r.below(if deep { 12 } else { 8 }) {
                0 => object(r, out, &[("stringValue", &string)]),
                1 => object(
                    r,
                    out,
                    &[("intValue", &|r, o| {
                        o.push('"');
                        o.push_str(&r.below(1 << 40).to_string());
                        o.push('"');
                    })],
                ),
                2 => object(r, out, &[("doubleValue", &scalar)]),
                3 => object(r, out, &[("boolValue", &scalar), ("bytesValue", &string)]),
                4 => object(r, out, &[]),
                5 => scalar(r, out),
                6 => object(
                    r,
                    out,
                    &[
                        ("intValue", &scalar),
                        ("stringValue", &string),
                        ("intValue", &scalar),
                    ],
                ),
                7 => object(r, out, &[("arrayValue", &|_, o| o.push_str("{}"))]),
                8 | 9 => object(
                    r,
                    out,
                    &[("arrayValue", &|r, o| {
                        object(
                            r,
                            o,
                            &[("values", &|r, o| {
                                list(r, o, 3, &|r, o| any(r, o, depth + 1))
                            })],
                        )
                    })],
                ),
                _ => object(
                    r,
                    out,
                    &[("kvlistValue", &|r, o| {
                        object(r, o, &[("values", &|r, o| kv_list(r, o, depth + 1))])
                    })],
                ),
            }
        }

        fn kv_list(r: &mut Rng, out: &mut String, depth: u32) {
            list(r, out, 4, &|r, o| match r.below(12) {
                0 => object(
                    r,
                    o,
                    &[("value", &|r, o| any(r, o, depth)), ("key", &string)],
                ),
                1 => object(r, o, &[("key", &string)]),
                2 => object(
                    r,
                    o,
                    &[
                        ("key", &string),
                        ("value", &|r, o| any(r, o, depth)),
                        ("key", &string),
                    ],
                ),
                3 if r.below(4) == 0 => scalar(r, o),
                4 if r.below(4) == 0 => object(r, o, &[("key", &scalar), ("value", &scalar)]),
                5 => object(
                    r,
                    o,
                    &[
                        ("key", &string),
                        ("value", &|r, o| any(r, o, depth)),
                        ("extra", &scalar),
                    ],
                ),
                // Member names with escapes: `key`, `value`.
                6 => object(
                    r,
                    o,
                    &[
                        (r"k\u0065y", &string),
                        (r"valu\u0065", &|r, o| any(r, o, depth)),
                    ],
                ),
                _ => object(
                    r,
                    o,
                    &[("key", &string), ("value", &|r, o| any(r, o, depth))],
                ),
            });
        }

        fn span(r: &mut Rng, out: &mut String) {
            type Member = (&'static str, Box<dyn Fn(&mut Rng, &mut String)>);
            let kv: fn(&mut Rng, &mut String) = |r, o| kv_list(r, o, 0);
            let mut members: Vec<Member> = vec![
                ("traceId", Box::new(string)),
                ("name", Box::new(string)),
                (
                    "startTimeUnixNano",
                    Box::new(|r, o| o.push_str(&format!("\"{}\"", r.below(1 << 62)))),
                ),
                ("attributes", Box::new(kv)),
                (
                    "events",
                    Box::new(move |r, o| {
                        list(r, o, 2, &|r, o| {
                            object(r, o, &[("name", &string), ("attributes", &kv)])
                        })
                    }),
                ),
                (
                    "status",
                    Box::new(|r, o| match r.below(2) {
                        0 => o.push_str("{}"),
                        _ => object(r, o, &[("code", &|_, o| o.push('2')), ("message", &string)]),
                    }),
                ),
                ("$parent", Box::new(string)),
                (r"\u0024parent", Box::new(string)),
                (r"attr\u0069butes", Box::new(kv)),
                ("attributes", Box::new(kv)),
                (r"odd\n\u00e9\u007f😀", Box::new(scalar)),
                ("kind", Box::new(scalar)),
            ];
            // Some members left out, the rest in a shuffled order.
            let keep = members.len() - r.below(4) as usize;
            for i in (1..members.len()).rev() {
                members.swap(i, r.below(i as u64 + 1) as usize);
            }
            members.truncate(keep);
            let members: Vec<(&str, &Gen<'_>)> = members.iter().map(|(k, f)| (*k, &**f)).collect();
            match r.below(8) {
                0 => scalar(r, out),
                _ => object(r, out, &members),
            }
        }

        /// The line of `seed`, with blanks or without.
        pub(super) fn line(seed: u64, blanks: bool) -> String {
            let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1, blanks);
            let mut out = String::new();
            let scope = &|r: &mut Rng, o: &mut String| {
                object(
                    r,
                    o,
                    &[
                        ("scope", &|r, o| object(r, o, &[("name", &string)])),
                        ("spans", &|r, o| list(r, o, 3, &span)),
                    ],
                );
            };
            let resource = &|r: &mut Rng, o: &mut String| match r.below(6) {
                0 => object(
                    r,
                    o,
                    &[
                        ("scopeSpans", &|r, o| list(r, o, 2, scope)),
                        ("scopeSpans", &|r, o| list(r, o, 2, scope)),
                    ],
                ),
                2 => object(r, o, &[(r"scope\u0053pans", &|r, o| list(r, o, 2, scope))]),
                1 => object(r, o, &[("resource", &|r, o| object(r, o, &[]))]),
                _ => object(
                    r,
                    o,
                    &[
                        ("resource", &|r, o| {
                            object(r, o, &[("attributes", &|r, o| kv_list(r, o, 0))])
                        }),
                        ("scopeSpans", &|r, o| list(r, o, 2, scope)),
                    ],
                ),
            };
            blank(&mut r, &mut out);
            object(
                &mut r,
                &mut out,
                &[("resourceSpans", &|r, o| list(r, o, 3, resource))],
            );
            blank(&mut r, &mut out);
            out
        }
    }

    #[test]
    fn the_text_walk_gives_the_records_the_value_walk_gives() {
        let window = RecordWindow {
            start: vec!["start_time".into()],
            end: vec!["end_time".into()],
            record_start: vec!["info".into(), "start".into()],
            record_end: vec!["info".into(), "end".into()],
        };
        let cases: &[(&str, &[&str], bool, &[&str])] = &[
            // OTLP: attribute lists, nested AnyValues, events with their own attributes.
            (
                r#" {"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"v"}}]},
                  "scopeSpans":[{"spans":[{"name":"a","attributes":[
                    {"key":"gen_ai.usage.input_tokens","value":{"intValue":"12"}},
                    {"key":"x","value":{"arrayValue":{"values":[{"stringValue":"stop"},{"intValue":"3"},
                        {"kvlistValue":{"values":[{"key":"k","value":{"boolValue":true}}]}}]}}},
                    {"key":"kv","value":{"kvlistValue":{"values":[{"key":"in","value":{"doubleValue":0.5}}]}}},
                    {"key":"nokv","value":{"kvlistValue":{}}},
                    {"key":"empty","value":{}},
                    {"key":"novalue"},
                    {"key":"x","value":{"stringValue":"duplicate: the last wins"}},
                    {"key":"esc\u00e9\"q","value":{"bytesValue":"AAE="}}],
                   "events":[{"name":"e","attributes":[{"key":"t","value":{"intValue":"1"}}]}],
                   "links":[], "status":{}, "$parent":"mine", "n": 1.50e3},
                   {"name":"b","attributes":[]}, 7, [1, {"attributes":[{"key":"z","value":{"intValue":"2"}}]}]]}]},
                  {"scopeSpans":[{"spans":[{"name":"c"}]}]}]} "#,
                &["resourceSpans.*.scopeSpans.*.spans.*"],
                false,
                &["resourceSpans", "absent", "$parent"],
            ),
            // Not kv lists: a key that is no string, an element that is no object.
            (
                r#"{"recs":[{"attributes":[{"key":1,"value":2}],"b":[{"key":"k"},3],"c":[[{"key":"k","value":{"intValue":"1"}}]]}]}"#,
                &["recs.*"],
                false,
                &[],
            ),
            // `*` over an object's members (key order, a duplicate key once), a named segment
            // taken from the last duplicate, a window per group.
            (
                r#"{"benchmarks":{"zz":{"start_time":10,"end_time":20,"requests":{"ok":[
                      {"info":{"start":5,"end":9}},{"info":{"start":9,"end":12}},{"info":{"start":21,"end":25}},
                      {"info":{"start":15}}, {"info":{"start":"12","end":"15"}}]}},
                    "aa":{"requests":{"ok":[{"info":{}}]}, "requests":{"ok":[{"info":{"start":1,"end":2}}]}},
                    "aa":{"start_time":0,"end_time":1,"requests":{"errored":[{"info":{"start":0,"end":3}}]}}},
                  "model":"m"}"#,
                &[
                    "benchmarks.*.requests.ok.*",
                    "benchmarks.*.requests.errored.*",
                ],
                true,
                &["model"],
            ),
            // Perf Analyzer's export: the instants of the responses with content are added.
            (
                r#"{"experiments":[{"requests":[
                    {"timestamp":1,"response_timestamps":[2,3,4,5],"response_outputs":[
                      {"response":"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n"},
                      {"response":"data: {\"choices\":[{\"delta\":{\"content\":\" a\"}}]}\n\n"},
                      {"response":": keep-alive\n\ndata: {\"choices\":[{\"text\":\"b\"}]}\n\n"},
                      {"response":"data: [DONE]\n\n"}]},
                    {"timestamp":1,"response_timestamps":[2,3],"response_outputs":[{"response":"x"}]},
                    {"timestamp":1,"response_timestamps":7,"$content_timestamps":[1]}]}]}"#,
                &["experiments.*.requests.*"],
                false,
                &[],
            ),
        ];
        for (line, patterns, windowed, carry) in cases {
            let w = windowed.then_some(&window);
            let (by_value, raw) = both(line, patterns, w, carry);
            assert!(!by_value.0.is_empty());
            assert_eq!(by_value, raw, "{line}");
        }
    }

    #[test]
    fn a_carried_member_comes_from_the_records_group_else_the_root() {
        // guidellm: 0.3 writes each benchmark's `args` and `worker`, 0.5 the run's `args` at
        // the top; a record's own member of the name stays.
        let line = r#"{"args":{"model":"top"},"benchmarks":[
            {"args":{"rate":1},"worker":{"backend_model":"w1"},"requests":{"ok":[{"n":1},{"n":2,"worker":"own"}]}},
            {"worker":{"backend_model":"w2"},"requests":{"ok":[{"n":3}]}},
            {"requests":{"ok":[{"n":4}]}}]}"#;
        let ((recs, _), raw) = both(
            line,
            &["benchmarks.*.requests.ok.*"],
            None,
            &["args", "worker"],
        );
        assert_eq!(raw.0, recs);
        let got: Vec<(String, String)> = recs
            .iter()
            .map(|r| (r["args"].to_string(), r["worker"].to_string()))
            .collect();
        let want = [
            (r#"{"rate":1}"#, r#"{"backend_model":"w1"}"#),
            (r#"{"rate":1}"#, r#""own""#),
            (r#"{"model":"top"}"#, r#"{"backend_model":"w2"}"#),
            (r#"{"model":"top"}"#, "null"),
        ];
        assert_eq!(
            got,
            want.map(|(a, w)| (a.to_owned(), w.to_owned())).to_vec()
        );
    }

    #[test]
    fn perf_analyzer_records_list_the_instants_of_responses_with_content() {
        let line = r#"{"requests":[
            {"response_timestamps":[10,20,30,40,50,60],"response_outputs":[
              {"response":"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n"},
              {"response":"data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"hm\"}}]}\n\n"},
              {"response":"data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n"},
              {"response":"data: {\"choices\":[],\"usage\":{\"completion_tokens\":2}}\n\n"},
              {"response":"event: ping"},
              {"response":"data: [DONE]\n\n"}]},
            {"response_timestamps":[10,20],"response_outputs":[{"response":""}]},
            {"response_timestamps":[10],"response_outputs":[{"response":"not json"}]}]}"#;
        let ((recs, _), (raw, _)) = both(line, &["requests.*"], None, &[]);
        assert_eq!(recs, raw);
        assert_eq!(recs[0]["$content_timestamps"], json!([20, 30]));
        // Outputs that do not pair with the instants: every instant.
        assert_eq!(recs[1]["$content_timestamps"], json!([10, 20]));
        assert_eq!(recs[2]["$content_timestamps"], json!([10]));
    }

    #[test]
    fn an_undecodable_key_sends_the_line_to_the_value_walk() {
        let line = r#"{"spans":[{"\ud800":1}]}"#;
        let mut out = vec![];
        assert!(
            collect_raw(
                line,
                &[vec!["spans".into(), "*".into()]],
                None,
                &[],
                &mut out
            )
            .is_err()
        );
    }

    #[test]
    fn the_any_value_slots_follow_the_scalar_order() {
        for (n, name) in SCALAR_VALUES.iter().enumerate() {
            assert_eq!(text::slot(name.as_bytes()), Some(n + 2));
        }
        assert_eq!(text::slot(b"arrayValue"), Some(0));
        assert_eq!(text::slot(b"kvlistValue"), Some(1));
        assert_eq!(text::slot(b"value"), None);
    }

    #[test]
    fn columns_zip_by_index() {
        let line = json!({"ttfts":[0.1,0.2],"itls":[[0.01],[]],"errors":["",""],"other":1,
                          "model_id":"m"});
        let mut out = vec![];
        collect(
            &line,
            &RecordSource::Columns(vec!["ttfts".into(), "itls".into(), "errors".into()]),
            None,
            // Carried when the line has it and the record does not.
            &["model_id".into(), "absent".into(), "ttfts".into()],
            &mut out,
        );
        assert_eq!(out.len(), 2);
        let r1: Value = serde_json::from_slice(&out[1]).unwrap();
        // The line's other scalars too (a run's settings); not its arrays or objects.
        assert_eq!(
            r1,
            json!({"ttfts":0.2,"itls":[],"errors":"","model_id":"m","other":1})
        );
    }
}
