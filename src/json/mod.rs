//! JSON: one borrowed pass over a JSON line that records where the values of a
//! fixed set of key paths are, and skips everything else.
//!
//! Owns the JSON reading of a line. A [`PathSet`] is a trie of object-key paths built once from
//! the formats in use; [`PathSet::extract`] walks a line with a validating scanner of its own
//! (`scan.rs`) and stores, for each path found, the byte range of its raw value in a
//! reused [`Slots`]. No `serde_json::Value` is built and nothing is allocated for values: they
//! stay in the line. Keys are compared after unescaping, so `"a\/b"` (lua-cjson) matches `a/b`.
//!
//! [`PathSet::extract_reference`] does the same with serde_json (a `DeserializeSeed` walking
//! the trie). It is the definition the fast path is tested against (byte-identical results on
//! every testdata file, generated logs and random mutations), and `--reference-parser` selects
//! it at run time.
//!
//! Duplicate keys: the last occurrence wins (as in JavaScript's `JSON.parse`).
//!
//! Validity is the JSON grammar's (RFC 8259) and UTF-8's, whichever fields are read: a number
//! past `f64` or an unpaired surrogate escape on a path is no reason to call a line invalid
//! (the field's value is then unusable, as any value of the wrong kind). The one check beyond
//! the grammar is serde_json's nesting limit on the objects and arrays the walk visits.

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

mod scan;

/// Index of a path in a [`PathSet`]; also the index of its value in [`Slots`].
pub(crate) type SlotId = usize;

#[derive(Debug, Default, Clone)]
struct Node {
    children: Vec<(Box<str>, usize)>,
    slot: Option<SlotId>,
    /// The children as an open-addressing hash table (a power of two, at most a quarter
    /// full, so a key that is no child usually costs one probe): per entry the key's first 8
    /// bytes as a word, its last 8 (0 when it is 8 bytes or shorter), its length, and its
    /// index in `children` plus one (0: empty entry). Empty when there are no children.
    table: Vec<(u64, u64, u32, u32)>,
    /// The children named by an array index segment (`[0]`, `[-1]`: element 0, the last
    /// element), as (index, node). Also in `children`: in an object, `"[0]"` is a key.
    elements: Vec<(i64, usize)>,
    /// Among the nodes with children (the ones whose objects the scanner reads member by
    /// member), this one's place: where its key guesses are ([`scan::Predictions`]).
    inner: usize,
}

/// A trie of key paths (`["usage", "prompt_tokens"]`), each with a [`SlotId`].
#[derive(Debug, Clone)]
pub struct PathSet {
    nodes: Vec<Node>,
    paths: Vec<Vec<String>>,
    /// The nodes with children.
    inner: usize,
    /// Names this trie's shape (taken anew whenever a node is added): the key predictions a
    /// [`Slots`] keeps are for one shape ([`scan::Predictions`]).
    shape: u64,
}

/// The next [`PathSet::shape`].
fn new_shape() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Default for PathSet {
    fn default() -> Self {
        PathSet {
            nodes: vec![Node::default()],
            paths: Vec::new(),
            inner: 0,
            shape: new_shape(),
        }
    }
}

/// Why a line could not be read as a JSON object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// The line does not start with `{` (after blanks): a text log line, a banner, an array.
    NotAnObject,
    /// The line starts with `{` but is not valid JSON or not valid UTF-8; the message is
    /// serde_json's, with its column.
    Invalid(String),
}

impl Node {
    /// Enters the last child into the lookup table (see [`Node::table`]), rebuilding the table
    /// twice as big when it would be more than a quarter full.
    fn index_last(&mut self) {
        if self.table.len() < self.children.len() * 4 {
            let size = (self.children.len() * 4).next_power_of_two().max(8);
            self.table = vec![(0, 0, 0, 0); size];
            for i in 0..self.children.len() {
                self.enter(i);
            }
        } else {
            self.enter(self.children.len() - 1);
        }
    }

    /// Enters child `i` into the lookup table.
    fn enter(&mut self, i: usize) {
        let size = self.table.len();
        let k = self.children[i].0.as_bytes();
        let (head, tail) = (scan::head8(k), scan::tail8(k));
        let mut at = scan::key_slot(head, tail, k.len(), size);
        while self.table[at].3 != 0 {
            at = (at + 1) & (size - 1);
        }
        self.table[at] = (head, tail, k.len() as u32, i as u32 + 1);
    }
}

impl PathSet {
    /// Adds a path (or finds it) and returns its slot. An empty path is the whole line.
    pub fn add(&mut self, path: &[&str]) -> SlotId {
        let mut node = 0;
        for seg in path {
            node = match self.nodes[node].children.iter().find(|(k, _)| &**k == *seg) {
                Some(&(_, n)) => n,
                None => {
                    self.shape = new_shape();
                    self.nodes.push(Node::default());
                    let n = self.nodes.len() - 1;
                    let parent = &mut self.nodes[node];
                    if parent.children.is_empty() {
                        parent.inner = self.inner;
                        self.inner += 1;
                    }
                    parent.children.push(((*seg).into(), n));
                    parent.index_last();
                    if let Some(i) = index_segment(seg) {
                        parent.elements.push((i, n));
                    }
                    n
                }
            };
        }
        if let Some(s) = self.nodes[node].slot {
            return s;
        }
        let s = self.paths.len();
        self.paths
            .push(path.iter().map(|s| s.to_string()).collect());
        self.nodes[node].slot = Some(s);
        s
    }

    /// Number of slots.
    pub fn len(&self) -> usize {
        self.paths.len()
    }

    /// True when no path was added.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// The child of trie node `node` (the root is 0) named `key` (unescaped bytes). With
    /// [`PathSet::node_slot`] and the like, for a reader that knows where each value is
    /// without scanning for it (records written from a line, `classify::records`), which then
    /// fills [`Slots`] as [`PathSet::extract`] would ([`Slots::fill`]).
    pub(crate) fn child(&self, node: usize, key: &[u8]) -> Option<usize> {
        self.nodes[node].child(key, scan::head8(key))
    }

    /// [`PathSet::child`] for the key `text[start..end]`, read a word at a time.
    #[inline]
    pub(crate) fn child_at(
        &self,
        node: usize,
        text: &[u8],
        start: usize,
        end: usize,
    ) -> Option<usize> {
        let key = text.get(start..end)?;
        self.nodes[node].child(key, scan::head8_at(text, start, end))
    }

    /// The slot of trie node `node`, when its path is one of the set's.
    pub(crate) fn node_slot(&self, node: usize) -> Option<SlotId> {
        self.nodes[node].slot
    }

    /// True when trie node `node` has children (its value's members are read too).
    pub(crate) fn node_has_children(&self, node: usize) -> bool {
        !self.nodes[node].children.is_empty()
    }

    /// The children of trie node `node` named by an array index (`[0]`, `[-1]`): (index,
    /// node).
    pub(crate) fn node_elements(&self, node: usize) -> &[(i64, usize)] {
        &self.nodes[node].elements
    }

    /// Reads `line` (one JSON object, no newline) and fills `slots` with the byte ranges of the
    /// values found at the paths. A path whose value is JSON `null` is recorded as absent.
    /// A path that ends inside a value which has children in the trie records the whole value
    /// and, when it is an object, also the children.
    ///
    /// # Errors
    /// [`ReadError::NotAnObject`] when the first non-blank byte is not `{`;
    /// [`ReadError::Invalid`] for malformed JSON or invalid UTF-8 anywhere in the line, or
    /// objects and arrays on the paths nested deeper than serde_json's limit (127 levels).
    /// What the grammar allows is valid whichever fields are read: a number past `f64` is
    /// recorded as it is, and a key holding an unpaired surrogate escape matches no path.
    pub fn extract(&self, line: &[u8], slots: &mut Slots) -> Result<(), ReadError> {
        slots.clear_written(self.len());
        let Slots {
            spans,
            written,
            key,
            spill,
            predictions,
        } = slots;
        predictions.fit(self);
        scan::extract(self, line, spans, written, key, spill, predictions)
    }

    /// [`PathSet::extract`] done by serde_json: slower, and the definition the fast path is
    /// tested against. Same contract, same results; error messages may word things
    /// differently.
    ///
    /// # Errors
    /// As [`PathSet::extract`].
    pub fn extract_reference(&self, line: &[u8], slots: &mut Slots) -> Result<(), ReadError> {
        slots.reset(self.len());
        let first = line.iter().position(|b| !b" \t\r\n".contains(b));
        if first.map(|i| line[i]) != Some(b'{') {
            return Err(ReadError::NotAnObject);
        }
        // serde_json checks UTF-8 only in the strings it decodes, not in those it skips; the
        // whole line is checked here so that a line's kind never depends on which fields the
        // formats in use happen to read.
        let text = std::str::from_utf8(line).map_err(|e| invalid_utf8(e.valid_up_to()))?;
        match self.walk(text, slots, false) {
            Ok(()) => Ok(()),
            // The walk decodes the keys and the values at trie nodes with children, and
            // serde_json decodes more strictly than the JSON grammar: a number past f64
            // (`4E556`), an unpaired surrogate escape (`"\ud800"`). So that a line's kind never
            // depends on which fields are read, a grammatical line is walked again leniently
            // (rare: a line that passes the first walk costs nothing more, an invalid one one
            // more skim).
            Err(_) => match serde_json::from_str::<IgnoredAny>(text) {
                Err(e) => Err(invalid(e)),
                Ok(_) => self.walk(text, slots, true).map_err(invalid),
            },
        }
    }

    /// One pass over `text` (the whole line) with serde_json. Strict (`lenient` false), it
    /// visits the values at trie nodes with children with `deserialize_any`, so serde_json
    /// decodes them and counts their nesting. Lenient, it compares keys as bytes (an unpaired
    /// surrogate then matches no path), takes every value on the paths raw, descends only into
    /// objects and arrays, and counts their nesting itself as the strict walk does (the limit
    /// is the one path-dependent check kept).
    fn walk(&self, text: &str, slots: &mut Slots, lenient: bool) -> serde_json::Result<()> {
        slots.reset(self.len());
        let mut de = serde_json::Deserializer::from_str(text);
        let seed = NodeSeed {
            set: self,
            node: 0,
            base: text.as_ptr() as usize,
            out: &mut slots.spans,
            lenient,
            depth: 1,
        };
        seed.deserialize(&mut de)?;
        de.end()
    }
}

/// serde_json's recursion limit: the 128th nested object or array its deserializer visits
/// (the root is the first) is an error.
const DEPTH_LIMIT: u32 = 128;

/// The error for a line whose UTF-8 is valid up to byte `valid_up_to` (0-based).
fn invalid_utf8(valid_up_to: usize) -> ReadError {
    ReadError::Invalid(format!("invalid UTF-8 at byte {}", valid_up_to + 1))
}

fn invalid(e: serde_json::Error) -> ReadError {
    let msg = e.to_string();
    let what = msg.rfind(" at line ").map_or(msg.as_str(), |i| &msg[..i]);
    ReadError::Invalid(format!("{what} at byte {}", e.column()))
}

/// The values found in one line: byte ranges into that line, indexed by [`SlotId`].
#[derive(Debug, Default, Clone)]
pub struct Slots {
    spans: Vec<Option<(u32, u32)>>,
    /// Scratch for the scanner: an unescaped key.
    key: Vec<u8>,
    /// Scratch for the scanner: the nesting of a deeply nested skipped value.
    spill: Vec<u128>,
    /// The slots the scanner wrote, some of them maybe more than once: only they need
    /// clearing before the next line (of the slots of every format, a line fills few).
    written: Vec<u32>,
    /// The scanner's guesses of the keys of the next line.
    predictions: scan::Predictions,
}

/// Two `Slots` are equal when they hold the same values (scratch space aside).
impl PartialEq for Slots {
    fn eq(&self, other: &Slots) -> bool {
        self.spans == other.spans
    }
}

impl Slots {
    fn reset(&mut self, n: usize) {
        self.spans.clear();
        self.spans.resize(n, None);
        self.written.clear();
    }

    /// [`Slots::reset`] for the scanner, which lists the slots it writes: clears only those.
    #[inline]
    fn clear_written(&mut self, n: usize) {
        if self.spans.len() == n {
            for &s in &self.written {
                if let Some(span) = self.spans.get_mut(s as usize) {
                    *span = None;
                }
            }
            self.written.clear();
        } else {
            self.reset(n);
        }
    }

    /// The raw JSON text of slot `id` in `line` (the line passed to `extract`), or `None` when
    /// the path was absent or null.
    pub fn raw<'l>(&self, line: &'l [u8], id: SlotId) -> Option<&'l str> {
        let (a, b) = self.spans.get(id).copied().flatten()?;
        std::str::from_utf8(&line[a as usize..b as usize]).ok()
    }

    /// The raw JSON text of slot `id`'s value in `line`, as bytes; `None` when absent or
    /// `null`. The same text as [`Slots::raw`] (a read line is valid UTF-8 and a value's text
    /// starts and ends at ASCII bytes), without checking it again.
    pub fn raw_bytes<'l>(&self, line: &'l [u8], id: SlotId) -> Option<&'l [u8]> {
        let (a, b) = self.spans.get(id).copied().flatten()?;
        line.get(a as usize..b as usize)
    }

    /// True when slot `id` holds a non-null value.
    pub fn has(&self, id: SlotId) -> bool {
        matches!(self.spans.get(id), Some(Some(_)))
    }

    /// Fills the slots of a set of `n` paths from `entries`, each (slot, start, end) of a
    /// value found, in the order [`PathSet::extract`] meets them (the last one of a slot
    /// wins); `start == end` for a `null`, which is recorded as absent. What `extract` of the
    /// text gives, for a reader that found the values' places itself.
    pub(crate) fn fill(&mut self, n: usize, entries: &[(u32, u32, u32)]) {
        self.clear_written(n);
        for &(slot, start, end) in entries {
            if let Some(span) = self.spans.get_mut(slot as usize) {
                self.written.push(slot);
                *span = (start != end).then_some((start, end));
            }
        }
    }
}

struct NodeSeed<'a> {
    set: &'a PathSet,
    node: usize,
    base: usize,
    out: &'a mut Vec<Option<(u32, u32)>>,
    /// Keys as raw bytes and every value on a path taken raw, descended into only when it is
    /// an object or an array (see [`PathSet::walk`]).
    lenient: bool,
    /// The nesting level of the value visited, as the strict walk's deserializer counts it
    /// (the root object is 1); checked against [`DEPTH_LIMIT`] by the lenient walk only.
    depth: u32,
}

impl<'de> DeserializeSeed<'de> for NodeSeed<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NodeSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        let node = &self.set.nodes[self.node];
        while let Some(key) = map.next_key_seed(KeySeed(self.lenient))? {
            let child = node
                .children
                .iter()
                .find(|(k, _)| k.as_bytes() == &*key)
                .map(|&(_, n)| n);
            match child {
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
                Some(n) => {
                    let cn = &self.set.nodes[n];
                    if cn.children.is_empty() {
                        let raw: &RawValue = map.next_value()?;
                        record(self.out, self.base, cn.slot, raw);
                    } else if cn.slot.is_some() {
                        // Both a value of its own and children: keep the raw text, then read
                        // the children out of it, with a deserializer of its own (whose
                        // nesting count starts afresh).
                        let raw: &RawValue = map.next_value()?;
                        self.read_value(n, raw, 1)?;
                    } else if self.lenient {
                        let raw: &RawValue = map.next_value()?;
                        self.read_value(n, raw, self.depth + 1)?;
                    } else {
                        map.next_value_seed(NodeSeed {
                            set: self.set,
                            node: n,
                            base: self.base,
                            out: &mut *self.out,
                            lenient: false,
                            depth: self.depth + 1,
                        })?;
                    }
                }
            }
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        // Children named `[i]` (element i) or `[-1]` (the last element) read into the array;
        // without them it is skipped.
        let set = self.set;
        let node = &set.nodes[self.node];
        let indexed = |want: i64| {
            node.children
                .iter()
                .filter(move |(k, _)| index_segment(k) == Some(want))
                .map(|&(_, n)| n)
        };
        if !node
            .children
            .iter()
            .any(|(k, _)| index_segment(k).is_some())
        {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            return Ok(());
        }
        let mut last: Option<&'de RawValue> = None;
        let mut i: i64 = 0;
        while let Some(raw) = seq.next_element::<&'de RawValue>()? {
            for n in indexed(i) {
                self.read_value(n, raw, 1)?;
            }
            last = Some(raw);
            i += 1;
        }
        if let Some(raw) = last {
            for n in indexed(-1) {
                self.read_value(n, raw, 1)?;
            }
        }
        Ok(())
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

impl NodeSeed<'_> {
    /// Reads one value already cut out as `raw` (which points into the line) at trie node `n`:
    /// records it when `n` has a slot, and reads `n`'s children out of it with a deserializer
    /// of its own, at nesting level `depth` (see [`NodeSeed::depth`]). Strict, any value is
    /// decoded (an array element, or a member with a value of its own: their count starts
    /// afresh); lenient, only an object or an array is read, a scalar having no children.
    fn read_value<E: de::Error>(&mut self, n: usize, raw: &RawValue, depth: u32) -> Result<(), E> {
        let cn = &self.set.nodes[n];
        record(self.out, self.base, cn.slot, raw);
        if cn.children.is_empty() {
            return Ok(());
        }
        if self.lenient {
            if !raw.get().starts_with(['{', '[']) {
                return Ok(());
            }
            if depth >= DEPTH_LIMIT {
                return Err(de::Error::custom("recursion limit exceeded"));
            }
        }
        let mut sub = serde_json::Deserializer::from_str(raw.get());
        NodeSeed {
            set: self.set,
            node: n,
            base: self.base,
            out: &mut *self.out,
            lenient: self.lenient,
            depth,
        }
        .deserialize(&mut sub)
        .map_err(de::Error::custom)
    }
}

fn record(out: &mut [Option<(u32, u32)>], base: usize, slot: Option<SlotId>, raw: &RawValue) {
    let Some(slot) = slot else { return };
    let text = raw.get();
    if text == "null" {
        out[slot] = None;
        return;
    }
    let start = text.as_ptr() as usize - base;
    out[slot] = Some((start as u32, (start + text.len()) as u32));
}

/// An object key, unescaped; with `KeySeed(true)` as bytes, an unpaired surrogate kept as
/// WTF-8 (which matches no path: paths are UTF-8).
struct KeySeed(bool);

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, [u8]>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        if self.0 {
            d.deserialize_bytes(self)
        } else {
            d.deserialize_str(self)
        }
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, [u8]>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v.as_bytes()))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.as_bytes().to_owned()))
    }
    fn visit_borrowed_bytes<E>(self, v: &'de [u8]) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_bytes<E>(self, v: &[u8]) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
}

/// Decodes the raw JSON text of a string value (quotes and escapes), borrowing when it has no
/// escapes. Returns `None` when the raw text is not a string.
pub(crate) fn raw_str(raw: &str) -> Option<Cow<'_, str>> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    if !inner.contains('\\') {
        return Some(Cow::Borrowed(inner));
    }
    serde_json::from_str::<String>(raw).ok().map(Cow::Owned)
}

/// Python's non-JSON number tokens, longest first.
const NON_FINITE: [&[u8]; 3] = [b"-Infinity", b"Infinity", b"NaN"];

/// Where Python's non-JSON number tokens (`NaN`, `Infinity`, `-Infinity`) stand outside strings
/// in `line`: each one's offset and text.
fn non_finite_tokens(line: &[u8]) -> Vec<(usize, &'static [u8])> {
    let mut found = Vec::new();
    let mut in_str = false;
    let mut i = 0;
    while i < line.len() {
        let c = line[i];
        if in_str {
            if c == b'\\' {
                i += 2;
                continue;
            }
            if c == b'"' {
                in_str = false;
            }
            i += 1;
            continue;
        }
        if c == b'"' {
            in_str = true;
            i += 1;
            continue;
        }
        if let Some(tok) = NON_FINITE.into_iter().find(|t| line[i..].starts_with(t)) {
            found.push((i, tok));
            i += tok.len();
            continue;
        }
        i += 1;
    }
    found
}

/// Replaces Python's non-JSON number tokens outside strings, keeping every byte offset:
/// `Infinity` and `-Infinity` by the strings `"inf"` and `"-inf"` (Python's own spelling, and
/// vLLM's for an unbounded request rate: a `--by request_rate` group is `inf` either way),
/// `NaN` by an empty array, each padded with spaces. A field tokentime reads as a number then
/// holds no number (unusable, as it should be), and the rest of the line parses. Returns
/// `false` when there was nothing to replace.
pub fn neutralize_non_finite(line: &mut [u8]) -> bool {
    let found = non_finite_tokens(line);
    for &(i, tok) in &found {
        let with: &[u8] = match tok {
            b"-Infinity" => b"\"-inf\"",
            b"Infinity" => b"\"inf\"",
            _ => b"[]",
        };
        line[i..i + with.len()].copy_from_slice(with);
        for b in &mut line[i + with.len()..i + tok.len()] {
            *b = b' ';
        }
    }
    !found.is_empty()
}

/// `line` with each of Python's non-JSON number tokens outside strings written as a string of
/// its text (`NaN` as `"NaN"`), for a diagnostic that shows the value a line holds; `None`
/// when it has none.
pub(crate) fn non_finite_as_strings(line: &[u8]) -> Option<Vec<u8>> {
    let found = non_finite_tokens(line);
    if found.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(line.len() + 2 * found.len());
    let mut from = 0;
    for (i, tok) in found {
        out.extend_from_slice(&line[from..i]);
        out.push(b'"');
        out.extend_from_slice(tok);
        out.push(b'"');
        from = i + tok.len();
    }
    out.extend_from_slice(&line[from..]);
    Some(out)
}

/// Moves `i` from the start of a number token (outside strings) past it; true when the number
/// is beyond `f64` (`1e400`).
fn number_token(line: &[u8], i: &mut usize) -> bool {
    let start = *i;
    while *i < line.len() && matches!(line[*i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
        *i += 1;
    }
    let text = std::str::from_utf8(&line[start..*i]).unwrap_or("0");
    text.parse::<f64>().is_ok_and(f64::is_infinite)
}

/// Whether serde_json writes the number `token` back as it is written.
fn written_back(token: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(token)
        .is_ok_and(|v| v.to_string().as_bytes() == token)
}

/// What [`numbers_as_written`] puts before a number's text in the string it makes of it
/// (U+E000, of the Private Use Area), so that the diagnostic shows the number as written.
pub(crate) const OVERFLOW_MARK: char = '\u{E000}';

/// `line` with each number outside strings that serde_json would not write back as the line
/// has it written as a string of [`OVERFLOW_MARK`] and its text, for a diagnostic that shows
/// the value a line holds as written: one beyond `f64` (`1e400`, which serde_json refuses), an
/// integer beyond 64 bits (`18446744073709551617`, read as a float), `1e+30`, `1.50`; `None`
/// when it has none.
pub(crate) fn numbers_as_written(line: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(line.len() + 8);
    let (mut i, mut from, mut found) = (0, 0, false);
    while i < line.len() {
        match line[i] {
            b'"' => {
                i += 1;
                while i < line.len() && line[i] != b'"' {
                    i += if line[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let (start, overflows) = (i, number_token(line, &mut i));
                if overflows || !written_back(&line[start..i]) {
                    out.extend_from_slice(&line[from..start]);
                    out.push(b'"');
                    out.extend_from_slice(OVERFLOW_MARK.encode_utf8(&mut [0; 4]).as_bytes());
                    out.extend_from_slice(&line[start..i]);
                    out.push(b'"');
                    from = i;
                    found = true;
                }
            }
            _ => i += 1,
        }
    }
    out.extend_from_slice(&line[from..]);
    found.then_some(out)
}

/// Makes a line whose grammar is valid JSON decodable by serde_json as a value, keeping every
/// byte offset: a number beyond `f64` (`4E556`) becomes an empty array padded with spaces (as
/// [`neutralize_non_finite`] does: a field read there is unusable), and a `\u` escape of a
/// lone UTF-16 surrogate becomes `\ufffd` (U+FFFD, the replacement character). Such a line is
/// valid JSON, so reading its records must not fail on a value tokentime may not even read.
/// Returns `false` when there was nothing to replace.
pub(crate) fn neutralize_undecodable(line: &mut [u8]) -> bool {
    let hex4 = |b: &[u8]| -> Option<u32> {
        let t = std::str::from_utf8(b.get(..4)?).ok()?;
        u32::from_str_radix(t, 16).ok()
    };
    let mut changed = false;
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            b'"' => {
                i += 1;
                while i < line.len() && line[i] != b'"' {
                    if line[i] != b'\\' {
                        i += 1;
                        continue;
                    }
                    if line.get(i + 1) != Some(&b'u') {
                        i += 2;
                        continue;
                    }
                    let Some(u) = hex4(&line[i + 2..]) else {
                        i += 2;
                        continue;
                    };
                    let low_next = line.get(i + 6) == Some(&b'\\')
                        && line.get(i + 7) == Some(&b'u')
                        && line
                            .get(i + 8..)
                            .and_then(hex4)
                            .is_some_and(|v| (0xDC00..0xE000).contains(&v));
                    if (0xD800..0xDC00).contains(&u) && low_next {
                        i += 12;
                    } else if (0xD800..0xE000).contains(&u) {
                        line[i + 2..i + 6].copy_from_slice(b"fffd");
                        changed = true;
                        i += 6;
                    } else {
                        i += 6;
                    }
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let (start, overflows) = (i, number_token(line, &mut i));
                if overflows {
                    line[start] = b'[';
                    line[start + 1] = b']';
                    for b in &mut line[start + 2..i] {
                        *b = b' ';
                    }
                    changed = true;
                }
            }
            _ => i += 1,
        }
    }
    changed
}

/// The array index a path segment names (`[0]` -> 0, `[-1]` -> -1), if it is one.
pub(crate) fn index_segment(seg: &str) -> Option<i64> {
    seg.strip_prefix('[')?.strip_suffix(']')?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(paths: &[&[&str]]) -> PathSet {
        let mut s = PathSet::default();
        for p in paths {
            s.add(p);
        }
        s
    }

    #[test]
    fn numbers_not_written_back_as_written_become_strings_for_a_diagnostic() {
        let line =
            br#"{"a":1e400,"s":"1e400 \" 2e999","b":[-3E+999,1.5,18446744073709551617,1.50]}"#;
        let out = numbers_as_written(line).unwrap();
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            r#"{"a":"M1e400","s":"1e400 \" 2e999","b":["M-3E+999",1.5,"M18446744073709551617","M1.50"]}"#
                .replace('M', &OVERFLOW_MARK.to_string())
        );
        assert!(numbers_as_written(br#"{"a":-7,"b":0.25,"s":"9e999"}"#).is_none());
    }

    #[test]
    fn finds_nested_values_and_skips_the_rest() {
        let s = set(&[&["a"], &["b", "c"], &["b", "d"], &["x"]]);
        let line = br#"{"z":[1,{"a":9}],"a":1.5,"b":{"c":"s\"q","e":{"c":0},"d":null},"a2":3}"#;
        let mut slots = Slots::default();
        s.extract(line, &mut slots).unwrap();
        assert_eq!(slots.raw(line, 0), Some("1.5"));
        assert_eq!(slots.raw(line, 1), Some(r#""s\"q""#));
        assert_eq!(slots.raw(line, 2), None, "null is absent");
        assert_eq!(slots.raw(line, 3), None);
    }

    #[test]
    fn guessed_keys_follow_each_line_and_each_trie() {
        // One slots for every line, as a processor keeps: the keys of a line are guessed from
        // the line before (same order, another order, a key of the same length and head, an
        // escaped key), and from a trie that has since grown.
        let mut s = set(&[&["a"], &["b", "c"], &["usage_prompt_tok"]]);
        let mut slots = Slots::default();
        let lines: [&[u8]; 6] = [
            br#"{"a":1,"b":{"c":2},"usage_prompt_tok":3}"#,
            br#"{"a":4,"b":{"c":5},"usage_prompt_tok":6}"#,
            br#"{"b":{"c":7},"a":8,"usage_prompt_toc":9}"#,
            br#"{"\u0061":10,"b":{"d":0,"c":11},"usage_prompt_tok":12}"#,
            br#"{"x":13,"a":14,"b":{"c":15}}"#,
            br#"{"a":16,"b":{"c":17},"usage_prompt_tok":18}"#,
        ];
        for round in 0..2 {
            if round == 1 {
                s.add(&["x"]);
            }
            for line in lines {
                let (mut fresh, mut reference) = (Slots::default(), Slots::default());
                s.extract(line, &mut slots).unwrap();
                s.extract(line, &mut fresh).unwrap();
                s.extract_reference(line, &mut reference).unwrap();
                assert!(
                    slots == fresh && slots == reference,
                    "round {round}: {line:?}"
                );
            }
        }
        let line = lines[4];
        s.extract(line, &mut slots).unwrap();
        assert_eq!(slots.raw(line, 3), Some("13"), "the path added later");
    }

    #[test]
    fn array_elements_by_index_and_last() {
        // Bedrock stream bodies: the metrics are in the last chunk of an array.
        let s = set(&[
            &["b", "[-1]", "m", "lat"],
            &["b", "[0]", "t"],
            &["b", "[1]"],
            &["c", "[-1]"],
        ]);
        let line = br#"{"b":[{"t":"s","m":{"lat":1}},[9],{"t":"x","m":{"lat":7}}],"c":[],"d":[1]}"#;
        let mut slots = Slots::default();
        s.extract(line, &mut slots).unwrap();
        assert_eq!(
            slots.raw(line, 0),
            Some("7"),
            "the last element, not the first"
        );
        assert_eq!(slots.raw(line, 1), Some("\"s\""));
        assert_eq!(slots.raw(line, 2), Some("[9]"));
        assert_eq!(
            slots.raw(line, 3),
            None,
            "an empty array has no last element"
        );
    }

    #[test]
    fn escaped_keys_match() {
        let s = set(&[&["a/b"]]);
        let line = br#"{"a\/b":7}"#;
        let mut slots = Slots::default();
        s.extract(line, &mut slots).unwrap();
        assert_eq!(slots.raw(line, 0), Some("7"));
    }

    #[test]
    fn last_duplicate_wins() {
        let s = set(&[&["a"]]);
        let line = br#"{"a":1,"a":2}"#;
        let mut slots = Slots::default();
        s.extract(line, &mut slots).unwrap();
        assert_eq!(slots.raw(line, 0), Some("2"));
    }

    #[test]
    fn errors_are_classified() {
        let s = set(&[&["a"]]);
        let mut slots = Slots::default();
        assert_eq!(s.extract(b"hello", &mut slots), Err(ReadError::NotAnObject));
        assert_eq!(s.extract(b"[1]", &mut slots), Err(ReadError::NotAnObject));
        assert!(matches!(
            s.extract(b"{\"a\":", &mut slots),
            Err(ReadError::Invalid(_))
        ));
        assert!(matches!(
            s.extract(b"{\"a\":1} x", &mut slots),
            Err(ReadError::Invalid(_))
        ));
        assert!(matches!(
            s.extract(b"{\"a\":\"\xff\"}", &mut slots),
            Err(ReadError::Invalid(_))
        ));
        assert_eq!(
            s.extract(b"{\"b\":\"\xff\",\"a\":1}", &mut slots),
            Err(ReadError::Invalid("invalid UTF-8 at byte 7".into())),
            "in a field that is not read too"
        );
    }

    /// Both extraction paths, which must agree.
    fn both(s: &PathSet, line: &[u8]) -> Result<Slots, ReadError> {
        let (mut fast, mut reference) = (Slots::default(), Slots::default());
        let a = s.extract(line, &mut fast).map(|()| fast);
        let b = s
            .extract_reference(line, &mut reference)
            .map(|()| reference);
        assert_eq!(
            a.is_ok(),
            b.is_ok(),
            "{a:?} vs {b:?} on {}",
            String::from_utf8_lossy(line)
        );
        if let (Ok(a), Ok(b)) = (&a, &b) {
            assert!(a == b, "{a:?} vs {b:?}");
        }
        a
    }

    #[test]
    fn what_is_valid_does_not_depend_on_the_paths_read() {
        // A number past f64 where a path has children, with and without a value of its own.
        let s = set(&[&["e"], &["e", "m"], &["t", "p"]]);
        let line = br#"{"e":4E556,"t":1e999}"#;
        assert_eq!(both(&s, line).unwrap().raw(line, 0), Some("4E556"));
        // Unpaired surrogates in a value and in a key on the paths.
        let line = br#"{"t":"\ud800","e":{"\udc00":1,"\ud800\n":2,"m":7}}"#;
        assert_eq!(both(&s, line).unwrap().raw(line, 1), Some("7"));
        // The same in array elements read by index.
        let s = set(&[
            &["b", "[0]", "x"],
            &["b", "[-1]", "x"],
            &["b", "[-1]", "\u{fffd}"],
        ]);
        let line = br#"{"b":[1e999,{"\ud800":1,"x":2}]}"#;
        let slots = both(&s, line).unwrap();
        assert_eq!(slots.raw(line, 0), None);
        assert_eq!(slots.raw(line, 1), Some("2"));
        assert_eq!(
            slots.raw(line, 2),
            None,
            "not decoded as a replacement character"
        );
        // Still invalid when the grammar says so.
        for bad in [
            &br#"{"e":4E556"#[..],
            b"{\"e\x01\":1}",
            br#"{"e":"\x"}"#,
            br#"{"e":"\ud8"}"#,
        ] {
            assert!(
                matches!(both(&s, bad), Err(ReadError::Invalid(_))),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        // And past the nesting limit, after a number that only the lenient walk accepts.
        let s = set(&[&["e", "m"], &["d"; 130]]);
        let deep = format!(
            "{{\"e\":4E556,{}\"d\":1{}}}",
            "\"d\":{".repeat(127),
            "}".repeat(127)
        );
        assert!(matches!(
            both(&s, deep.as_bytes()),
            Err(ReadError::Invalid(_))
        ));
        let ok = format!(
            "{{\"e\":4E556,{}\"d\":1{}}}",
            "\"d\":{".repeat(126),
            "}".repeat(126)
        );
        both(&s, ok.as_bytes()).unwrap();
    }

    #[test]
    fn undecodable_values_are_neutralized_keeping_offsets() {
        let cases: [(&str, &str, bool); 5] = [
            (
                r#"{"a":4E556,"b":-1e400}"#,
                r#"{"a":[]   ,"b":[]    }"#,
                true,
            ),
            (
                r#"{"a":"\ud800x","b":"\udc00"}"#,
                r#"{"a":"\ufffdx","b":"\ufffd"}"#,
                true,
            ),
            // A pair, an escaped backslash before `u`, and numbers in range stay as they are.
            (
                r#"{"a":"\ud83d\ude00","b":"\\ud800","c":1.5e300}"#,
                r#"{"a":"\ud83d\ude00","b":"\\ud800","c":1.5e300}"#,
                false,
            ),
            (r#"{"k\ud800":1}"#, r#"{"k\ufffd":1}"#, true),
            (r#"{"a":"4E556"}"#, r#"{"a":"4E556"}"#, false),
        ];
        for (input, want, changed) in cases {
            let mut line = input.as_bytes().to_vec();
            assert_eq!(neutralize_undecodable(&mut line), changed, "{input}");
            assert_eq!(String::from_utf8(line.clone()).unwrap(), want, "{input}");
            assert!(
                serde_json::from_slice::<serde_json::Value>(&line).is_ok(),
                "{want}"
            );
        }
    }

    #[test]
    fn non_finite_tokens_are_neutralized_outside_strings_only() {
        let mut line = br#"{"x":NaN,"s":"NaN Infinity","y":-Infinity,"a":1}"#.to_vec();
        assert!(neutralize_non_finite(&mut line));
        assert_eq!(
            &line[..],
            &br#"{"x":[] ,"s":"NaN Infinity","y":"-inf"   ,"a":1}"#[..]
        );
        let s = set(&[&["a"], &["x"]]);
        let mut slots = Slots::default();
        s.extract(&line, &mut slots).unwrap();
        assert_eq!(slots.raw(&line, 0), Some("1"));
    }
}
