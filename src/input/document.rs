//! Documents: inputs that are not JSON lines. A JSON array of records (LLMPerf's
//! pretty-printed `individual_responses.json`) is read element by element, so that only one
//! record is in memory at a time. A pretty-printed JSON object (a `vllm bench serve` result or
//! a guidellm `benchmarks.json` written with `indent=2`) is read whole, object by object, each
//! as one line, up to `--max-line-bytes`.
//!
//! Owns the detection (the first non-blank byte is `[`; the first non-blank line is a lone
//! `{`) and the streaming walks. The records' and objects' bytes go to the caller, which
//! processes each as if it were a line.

use serde::de::{self, DeserializeSeed, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::cell::Cell;
use std::fmt;
use std::io::{self, BufRead, Read};

/// True when the input's first non-blank byte (after a UTF-8 BOM) is `[` and the next one is
/// `{`, `[` or `]`: a JSON array document of records, of lists of them, or an empty one. A text line that starts
/// with a bracket (`[INFO] proxy up`, `[2026-11-29 10:00:01] ...`) is no document: the input
/// is read as lines. When the buffered bytes end before the byte after `[` (a stream that has
/// written only that much), it is taken for a document. Peeks at the buffered bytes only;
/// consumes nothing.
///
/// # Errors
/// The reader's.
pub(crate) fn is_array_document(r: &mut impl BufRead) -> io::Result<bool> {
    let buf = r.fill_buf()?;
    Ok(opens_with(buf, b'[', b"{[]"))
}

/// True when `buf`'s first non-blank byte (after a UTF-8 BOM) is `open` and the non-blank byte
/// after it is one of `next`, or `buf` ends before there is one.
fn opens_with(buf: &[u8], open: u8, next: &[u8]) -> bool {
    let buf = buf.strip_prefix(UTF8_BOM).unwrap_or(buf);
    let mut bytes = buf.iter().filter(|b| !WHITESPACE.contains(b));
    bytes.next() == Some(&open) && bytes.next().is_none_or(|b| next.contains(b))
}

/// What kind of document an input is, told by [`detect`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Document {
    /// A JSON array of records: [`for_each_element`].
    Array,
    /// Pretty-printed JSON objects: [`Objects`].
    Object,
}

/// The kind of document the input is, or `None` for JSON lines: an array when its first
/// non-blank byte (after a UTF-8 BOM) is `[` and the next `{`, `[` or `]` ([`is_array_document`]),
/// pretty-printed objects when its first non-blank line is a lone `{` (whitespace only after
/// it, up to the newline), which no JSON-lines log has, and the next non-blank byte is a key's
/// `"` or the `}`. Peeks at the buffered bytes only; consumes nothing.
///
/// # Errors
/// The reader's.
pub fn detect(r: &mut impl BufRead) -> io::Result<Option<Document>> {
    if is_array_document(r)? {
        return Ok(Some(Document::Array));
    }
    let buf = r.fill_buf()?;
    let buf = buf.strip_prefix(UTF8_BOM).unwrap_or(buf);
    let Some(i) = buf.iter().position(|b| !WHITESPACE.contains(b)) else {
        return Ok(None);
    };
    let rest = &buf[i + 1..];
    // A lone `{`, then a key or the `}` (a line `{` of some text log is no document).
    let lone = buf[i] == b'{'
        && rest
            .iter()
            .find(|b| !b" \t\r".contains(b))
            .is_some_and(|&b| b == b'\n')
        && opens_with(&buf[i..], b'{', b"\"}");
    Ok(lone.then_some(Document::Object))
}

/// The kind of document the whole input is, or `None` when it is to be read as lines.
///
/// [`detect`] looks at the first bytes only: a first line of `[]`, `[` or `[{...}]` before JSON
/// lines, or a pretty-printed startup banner before a log, looks like a document there. This
/// reads ahead and keeps the guess only when what follows parses as the document: one or more
/// JSON arrays, or one or more JSON objects, with only blanks between and after them, to the
/// end of the input. At the first byte that does not parse, reading ahead stops and the input
/// is JSON lines, from its first byte. What was read ahead is handed back in front of the rest
/// of the input, so nothing is lost.
///
/// Reading ahead stops at `cap` bytes too: an input longer than that which parses as far as it
/// was read is taken for the document it looks like, and its reader reports what goes wrong
/// past that point.
///
/// # Errors
/// The reader's.
pub fn sniff<R: io::Read>(
    mut r: io::BufReader<R>,
    cap: usize,
) -> io::Result<(Option<Document>, io::BufReader<Replay<R>>)> {
    let mut ahead = vec![];
    // An error before the first line's end: where, as the line reader says it.
    let guess = first_bytes(&mut r, &mut ahead).map_err(|e| {
        let started = ahead.iter().any(|b| !b.is_ascii_whitespace());
        crate::input::lines::read_error(e, u64::from(started), started)
    })?;
    let kind = match guess {
        Some(kind) => read_ahead(&mut r, kind, cap, &mut ahead)?.then_some(kind),
        None => None,
    };
    let capacity = r.capacity();
    let replay = io::Cursor::new(ahead).chain(r);
    Ok((kind, io::BufReader::with_capacity(capacity, replay)))
}

/// Reads into `ahead` until its first bytes tell what [`detect`] tells (a pipe may hand over a
/// lone `{` or `[` first, and a peek at one read would take a document for lines), or to the
/// end of the input. JSON lines are told from their first line, so a live log is not held.
fn first_bytes(r: &mut impl BufRead, ahead: &mut Vec<u8>) -> io::Result<Option<Document>> {
    loop {
        if let Some(told) = tell(ahead) {
            return Ok(told);
        }
        let chunk = r.fill_buf()?;
        if chunk.is_empty() {
            return Ok(None);
        }
        ahead.extend_from_slice(chunk);
        let n = chunk.len();
        r.consume(n);
    }
}

/// What [`detect`] tells from `buf`, or `None` when `buf` ends before it can tell.
fn tell(buf: &[u8]) -> Option<Option<Document>> {
    if buf.len() < UTF8_BOM.len() && UTF8_BOM.starts_with(buf) {
        return None;
    }
    let buf = buf.strip_prefix(UTF8_BOM).unwrap_or(buf);
    let blank = |b: &u8| WHITESPACE.contains(b);
    let i = buf.iter().position(|b| !blank(b))?;
    let rest = &buf[i + 1..];
    match buf[i] {
        b'[' => {
            let next = rest.iter().find(|b| !blank(b))?;
            Some(b"{[]".contains(next).then_some(Document::Array))
        }
        b'{' => {
            // A lone `{` on its line, then a key or the `}`.
            let end = rest.iter().position(|b| !b" \t\r".contains(b))?;
            if rest[end] != b'\n' {
                return Some(None);
            }
            let next = rest[end..].iter().find(|b| !blank(b))?;
            Some(b"\"}".contains(next).then_some(Document::Object))
        }
        _ => Some(None),
    }
}

/// What [`sniff`] hands back: the bytes it read ahead, then the rest of the input.
pub type Replay<R> = io::Chain<io::Cursor<Vec<u8>>, io::BufReader<R>>;

/// Reads `r` into `ahead` while it parses as a document of `kind`; true when it did to the end
/// of the input (or past `cap` bytes), false at the first value that is not of the kind or
/// does not parse.
fn read_ahead(
    r: &mut impl BufRead,
    kind: Document,
    cap: usize,
    ahead: &mut Vec<u8>,
) -> io::Result<bool> {
    let open = match kind {
        Document::Array => b'[',
        Document::Object => b'{',
    };
    // Offset of the end of the last whole value parsed: parsing resumes there.
    let mut done = 0;
    let mut any = false;
    // Parsing resumes once this much is read: doubling it keeps a long value that is still
    // incomplete from being parsed again at every chunk.
    let mut next_parse = 0;
    loop {
        let chunk = r.fill_buf()?;
        let eof = chunk.is_empty();
        ahead.extend_from_slice(chunk);
        let n = chunk.len();
        r.consume(n);
        if !eof && ahead.len() < next_parse && ahead.len() <= cap {
            continue;
        }
        next_parse = ahead.len().saturating_mul(2);
        loop {
            // Blanks and byte-order marks between values (files joined with `cat`).
            let rest = &ahead[done..];
            let skip = rest.len() - trim_blanks_and_boms(rest).len();
            // Nothing but blanks yet, or a BOM the read so far ends inside.
            let tail = &rest[skip..];
            if tail.is_empty()
                || (!eof && tail.len() < UTF8_BOM.len() && UTF8_BOM.starts_with(tail))
            {
                break;
            }
            let mut values =
                serde_json::Deserializer::from_slice(&rest[skip..]).into_iter::<&RawValue>();
            match values.next() {
                Some(Ok(v)) if v.get().as_bytes().first() == Some(&open) => {
                    any = true;
                    done += skip + values.byte_offset();
                }
                // More input may complete the value: serde_json says so, or stops at the last
                // bytes read (a number cut after its `.` or `e` is "invalid" to it).
                Some(Err(e)) if !eof && (e.is_eof() || at_end(tail, &e)) => break,
                // The input ends inside a value of the kind: a document cut short (a result
                // file whose writer was killed), read as one up to the cut, as past `cap`.
                Some(Err(e)) if e.is_eof() && tail.first() == Some(&open) => return Ok(true),
                _ => return Ok(false),
            }
        }
        if eof {
            return Ok(any);
        }
        if ahead.len() > cap {
            return Ok(true);
        }
    }
}

/// True when serde_json's error `e` on `b` is at `b`'s last byte or past it.
fn at_end(b: &[u8], e: &serde_json::Error) -> bool {
    let line_start = if e.line() <= 1 {
        Some(0)
    } else {
        memchr::memchr_iter(b'\n', b)
            .nth(e.line() - 2)
            .map(|i| i + 1)
    };
    line_start.is_some_and(|start| start + e.column() + 1 >= b.len())
}

/// `b` without the JSON blanks and UTF-8 byte-order marks it starts with (no other ASCII
/// whitespace: a form feed is no blank to the JSON readers of the document).
fn trim_blanks_and_boms(mut b: &[u8]) -> &[u8] {
    loop {
        let i = b
            .iter()
            .position(|c| !WHITESPACE.contains(c))
            .unwrap_or(b.len());
        let t = &b[i..];
        match t.strip_prefix(UTF8_BOM) {
            Some(rest) => b = rest,
            None => return t,
        }
    }
}

/// The objects of a line that holds two or more JSON objects and nothing else but blanks and
/// byte-order marks between and after them (`cat a.json b.json` of results written on one line
/// without a final newline: `{...}{...}`), as byte ranges of `line`; `None` for any other line.
/// Parses the line again, so it is for a line that failed as one object.
pub(crate) fn concatenated_objects(line: &[u8]) -> Option<Vec<std::ops::Range<usize>>> {
    let mut parts = Vec::new();
    let mut at = 0;
    loop {
        // Blanks and byte-order marks before the next object, or the end.
        loop {
            if let Some(rest) = line[at..].strip_prefix(UTF8_BOM) {
                at = line.len() - rest.len();
            } else if line.get(at).is_some_and(|b| WHITESPACE.contains(b)) {
                at += 1;
            } else {
                break;
            }
        }
        if at == line.len() {
            break;
        }
        if line[at] != b'{' {
            return None;
        }
        let mut values =
            serde_json::Deserializer::from_slice(&line[at..]).into_iter::<de::IgnoredAny>();
        values.next()?.ok()?;
        let end = at + values.byte_offset();
        parts.push(at..end);
        at = end;
    }
    (parts.len() >= 2).then_some(parts)
}

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";
const WHITESPACE: &[u8] = b" \t\r\n";

/// Calls `each` with the JSON text of every element of every top-level array in `r` (several
/// arrays one after another are accepted, with JSON blanks and UTF-8 byte-order marks before,
/// between and after them: files joined with `cat`, as [`sniff`] accepts them). Elements are
/// read one at a time.
///
/// # Errors
/// A message with serde_json's position (line and column in the whole input) when the document
/// is malformed, or the callback's error.
pub fn for_each_element(
    r: impl BufRead,
    each: &mut dyn FnMut(&[u8]) -> io::Result<()>,
) -> Result<(), String> {
    for_each_element_at(r, &mut |_, rec| each(rec))
}

/// [`for_each_element`], with each element's first line (1-based, in the whole input: the
/// line its first byte is on) handed to `each` with its bytes.
///
/// # Errors
/// As [`for_each_element`].
pub(crate) fn for_each_element_at(
    mut r: impl BufRead,
    each: &mut dyn FnMut(u64, &[u8]) -> io::Result<()>,
) -> Result<(), String> {
    // Where the reading is: newlines before it, bytes since the last one. Shared with the
    // visitor, which tells each element's first line from it.
    let at = Cell::new(Position::default());
    loop {
        let mut here = at.get();
        skip_blanks_and_boms(&mut r, &mut here)?;
        at.set(here);
        if r.fill_buf().map_err(|e| e.to_string())?.is_empty() {
            return Ok(());
        }
        let start = at.get();
        let mut counted = Counting { r: &mut r, at: &at };
        // One deserializer per array: it reads byte by byte and stops at the array's `]`, so
        // the blanks and BOMs after it are the reader's to skip.
        let mut de = serde_json::Deserializer::from_reader(&mut counted);
        let mut failed = None;
        if let Err(e) = (ArraySeed {
            each: &mut *each,
            at: &at,
            failed: &mut failed,
        })
        .deserialize(&mut de)
        {
            return Err(failed
                .map(|f: io::Error| f.to_string())
                .unwrap_or_else(|| start.shift(&e)));
        }
    }
}

/// A place in the input: the newlines before it and the bytes after the last of them.
#[derive(Default, Clone, Copy)]
struct Position {
    newlines: u64,
    column: u64,
}

impl Position {
    fn advance(&mut self, b: &[u8]) {
        match memchr::memrchr(b'\n', b) {
            Some(i) => {
                self.newlines += newlines(b);
                self.column = (b.len() - i - 1) as u64;
            }
            None => self.column += b.len() as u64,
        }
    }

    /// serde_json's message for `e`, which counts from this place, with the position in the
    /// whole input.
    fn shift(self, e: &serde_json::Error) -> String {
        let text = e.to_string();
        let Some(i) = text.rfind(" at line ") else {
            return text;
        };
        let column = e.column() as u64 + if e.line() <= 1 { self.column } else { 0 };
        format!(
            "{} at line {} column {column}",
            &text[..i],
            self.newlines + e.line() as u64
        )
    }
}

/// Skips the JSON blanks and UTF-8 BOMs `r` starts with.
///
/// # Errors
/// The reader's, or a message when the start of a BOM is not followed by its rest.
fn skip_blanks_and_boms(r: &mut impl BufRead, at: &mut Position) -> Result<(), String> {
    loop {
        let buf = r.fill_buf().map_err(|e| e.to_string())?;
        let len = buf.len();
        let i = buf
            .iter()
            .position(|b| !WHITESPACE.contains(b))
            .unwrap_or(len);
        at.advance(&buf[..i]);
        r.consume(i);
        if i == len && len > 0 {
            continue;
        }
        match take_bom(r).map_err(|e| e.to_string())? {
            Bom::Whole => at.column += UTF8_BOM.len() as u64,
            Bom::None => return Ok(()),
            Bom::Cut => {
                return Err(format!(
                    "expected value at line {} column {}",
                    at.newlines + 1,
                    at.column + 1
                ));
            }
        }
    }
}

/// What [`take_bom`] found.
enum Bom {
    /// No BOM: nothing consumed.
    None,
    /// A whole BOM, consumed.
    Whole,
    /// The start of a BOM without its rest: that start consumed.
    Cut,
}

/// Consumes a UTF-8 BOM at the start of `r`, also when the reader's buffer ends inside it.
fn take_bom(r: &mut impl BufRead) -> io::Result<Bom> {
    for (k, &want) in UTF8_BOM.iter().enumerate() {
        match r.fill_buf()?.first() {
            Some(&b) if b == want => r.consume(1),
            _ if k == 0 => return Ok(Bom::None),
            _ => return Ok(Bom::Cut),
        }
    }
    Ok(Bom::Whole)
}

/// A reader that keeps count of where it is.
struct Counting<'a, R> {
    r: &'a mut R,
    at: &'a Cell<Position>,
}

impl<R: BufRead> Read for Counting<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = self.r.read(out)?;
        let mut at = self.at.get();
        at.advance(&out[..n]);
        self.at.set(at);
        Ok(n)
    }
}

struct ArraySeed<'a> {
    each: &'a mut dyn FnMut(u64, &[u8]) -> io::Result<()>,
    /// Where the reading is: after an element, its last byte (serde_json reads byte by byte,
    /// and an object or array ends without a look past it).
    at: &'a Cell<Position>,
    failed: &'a mut Option<io::Error>,
}

impl<'de> DeserializeSeed<'de> for ArraySeed<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ArraySeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON array of records")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(raw) = seq.next_element::<Box<RawValue>>()? {
            let bytes = raw.get().as_bytes();
            // The line of its first byte: the newlines read, less those inside it.
            let first = self.at.get().newlines - newlines(bytes) + 1;
            if let Err(e) = (self.each)(first, bytes) {
                *self.failed = Some(e);
                return Err(de::Error::custom("stopped"));
            }
        }
        Ok(())
    }
}

/// One item of a document of objects ([`Objects::next_item`]).
#[derive(Debug, PartialEq, Eq)]
pub enum Item<'a> {
    /// An object's bytes, `{` to its matching `}`, newlines inside included; `line` is the
    /// line its `{` is on.
    Object { line: u64, bytes: &'a [u8] },
    /// An object longer than the limit, which starts on `line`: skipped, never held whole.
    TooLong { line: u64 },
    /// On `line`, something other than whitespace, a BOM or an object's `{`: the document ends
    /// there (later calls return `None`).
    Trailing { line: u64, byte: u8 },
    /// The input ends on `line` inside the object that starts on line `start` (its writer
    /// killed): the object is not read; later calls return `None`.
    CutShort { line: u64, start: u64 },
}

/// Pretty-printed JSON objects one after another, with only whitespace (and a UTF-8 BOM before
/// any of them) between and after them (an input [`detect`] says is [`Document::Object`]):
/// each is read into one buffer of at most `max` bytes. The bytes of an object are matched
/// bracket by bracket, strings and escapes minded, not checked: that is the JSON reader's job.
pub struct Objects<R> {
    r: R,
    max: usize,
    buf: Vec<u8>,
    /// The line the reader is on, 1-based.
    line: u64,
    done: bool,
}

impl<R: BufRead> Objects<R> {
    /// A reader of the objects of `r`, each held up to `max` bytes.
    pub fn new(r: R, max: usize) -> Self {
        Objects {
            r,
            max: max.max(1),
            buf: Vec::new(),
            line: 1,
            done: false,
        }
    }

    /// The next object, or `None` at the end of input.
    ///
    /// # Errors
    /// The reader's.
    pub fn next_item(&mut self) -> io::Result<Option<Item<'_>>> {
        if self.done {
            return Ok(None);
        }
        // Whitespace up to the next object, and a BOM before it (files joined with `cat`).
        loop {
            let buf = self.r.fill_buf()?;
            if buf.is_empty() {
                self.done = true;
                return Ok(None);
            }
            let len = buf.len();
            let i = buf
                .iter()
                .position(|b| !WHITESPACE.contains(b))
                .unwrap_or(len);
            self.line += newlines(&buf[..i]);
            self.r.consume(i);
            if i == len {
                continue;
            }
            // A BOM (the reader's buffer may end inside it).
            match take_bom(&mut self.r)? {
                Bom::Whole => {}
                Bom::None => break,
                Bom::Cut => {
                    self.done = true;
                    return Ok(Some(Item::Trailing {
                        line: self.line,
                        byte: UTF8_BOM[0],
                    }));
                }
            }
        }
        let line = self.line;
        let first = self.r.fill_buf()?[0];
        if first != b'{' {
            self.done = true;
            return Ok(Some(Item::Trailing { line, byte: first }));
        }
        self.buf.clear();
        let mut too_long = false;
        let mut scan = Brackets::default();
        loop {
            let buf = self.r.fill_buf()?;
            if buf.is_empty() {
                self.done = true;
                return Ok(Some(Item::CutShort {
                    line: self.line,
                    start: line,
                }));
            }
            let (n, end) = match scan.feed(buf) {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            self.line += newlines(&buf[..n]);
            if !too_long && self.buf.len() + n > self.max {
                too_long = true;
                self.buf = Vec::new();
            }
            if !too_long {
                self.buf.extend_from_slice(&buf[..n]);
            }
            self.r.consume(n);
            if end {
                break;
            }
        }
        Ok(Some(if too_long {
            Item::TooLong { line }
        } else {
            Item::Object {
                line,
                bytes: &self.buf,
            }
        }))
    }
}

fn newlines(b: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', b).count() as u64
}

/// Where the outermost bracket closes, fed a value's bytes piece by piece.
#[derive(Default)]
struct Brackets {
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl Brackets {
    /// The index in `b` of the byte that closes the value, if it is there.
    fn feed(&mut self, b: &[u8]) -> Option<usize> {
        for (i, &c) in b.iter().enumerate() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if c == b'\\' {
                    self.escaped = true;
                } else if c == b'"' {
                    self.in_string = false;
                }
                continue;
            }
            match c {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return Some(i);
                    }
                }
                _ => {}
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pretty_printed_arrays_are_read_element_by_element() {
        let doc = b"[\n  {\"a\": 1},\n  {\"a\": [2, 3]}\n]\n[{\"b\":4}]\n";
        assert!(is_array_document(&mut &doc[..]).unwrap());
        let mut got = vec![];
        for_each_element(&doc[..], &mut |b| {
            got.push(String::from_utf8(b.to_vec()).unwrap());
            Ok(())
        })
        .unwrap();
        assert_eq!(got, vec!["{\"a\": 1}", "{\"a\": [2, 3]}", "{\"b\":4}"]);
        assert!(!is_array_document(&mut &b"  {\"a\":1}"[..]).unwrap());
        assert!(for_each_element(&b"[{\"a\":1},"[..], &mut |_| Ok(())).is_err());
        let mut n = 0;
        for_each_element(&b"\xEF\xBB\xBF[{\"a\":1},{\"a\":2}]"[..], &mut |_| {
            n += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 2, "a BOM before the array");
    }

    fn items(doc: &[u8], max: usize) -> Vec<String> {
        let mut r = Objects::new(doc, max);
        let mut got = vec![];
        while let Some(item) = r.next_item().unwrap() {
            got.push(match item {
                Item::Object { line, bytes } => {
                    format!("{line}: {}", String::from_utf8(bytes.to_vec()).unwrap())
                }
                Item::TooLong { line } => format!("{line}: too long"),
                Item::Trailing { line, byte } => format!("{line}: trailing {}", byte as char),
                Item::CutShort { line, start } => format!("{line}: cut short from {start}"),
            });
        }
        got
    }

    #[test]
    fn a_lone_brace_on_the_first_line_is_an_object_document() {
        for (doc, want) in [
            (&b"{\n  \"a\": 1\n}"[..], Some(Document::Object)),
            (
                b"\xEF\xBB\xBF\n  { \t\r\n\"a\":1}\n",
                Some(Document::Object),
            ),
            (b"{\"a\": 1}\n", None),
            (b"{ \"a\": 1\n}\n", None),
            (b"{", None),
            (b"", None),
            (b"  \n", None),
            (b"x{\n", None),
            (b"[\n{\"a\":1}]", Some(Document::Array)),
        ] {
            assert_eq!(
                detect(&mut &doc[..]).unwrap(),
                want,
                "{}",
                String::from_utf8_lossy(doc)
            );
        }
    }

    #[test]
    fn pretty_objects_are_read_whole_one_after_another() {
        let doc = b"\xEF\xBB\xBF{\n  \"a\": \"}{\\\"]\",\n  \"b\": [1, {\"c\": 2}]\n}\n\n\xEF\xBB\xBF{\n}{\"d\":3}\n \n";
        assert_eq!(
            items(doc, 1000),
            vec![
                "1: {\n  \"a\": \"}{\\\"]\",\n  \"b\": [1, {\"c\": 2}]\n}",
                "6: {\n}",
                "7: {\"d\":3}",
            ]
        );
        // Bytes of an object past the limit are skipped, the next object read.
        assert_eq!(
            items(b"{\n\"a\": 12345\n}\n{\n}\n", 10),
            vec!["1: too long", "4: {\n}"]
        );
        assert_eq!(items(b"{\n}", 3), vec!["1: {\n}"]);
        assert_eq!(items(b"{\n} ", 2), vec!["1: too long"]);
        // Anything else ends the document; so does an object cut short, named by both lines.
        assert_eq!(
            items(b"{\n}\n\n x {\n}", 100),
            vec!["1: {\n}", "4: trailing x"]
        );
        assert_eq!(
            items(b"{\n}\n{\n\"a\": [1,", 100),
            vec!["1: {\n}", "4: cut short from 3"]
        );
        assert_eq!(items(b"", 100), Vec::<String>::new());
    }

    fn sniffed(input: &[u8], cap: usize) -> (Option<Document>, Vec<u8>) {
        let (kind, mut r) = sniff(io::BufReader::with_capacity(8, input), cap).unwrap();
        let mut all = vec![];
        r.read_to_end(&mut all).unwrap();
        (kind, all)
    }

    #[test]
    fn an_array_first_line_before_json_lines_is_no_document() {
        let r = br#"{"id":"a"}"#;
        for first in [&b"[]\n"[..], b"[\n", b"[{\"x\":1}]\n"] {
            let input = [first, r, b"\n", r, b"\n"].concat();
            // Everything read ahead comes back, from the first byte.
            assert_eq!(sniffed(&input, 1 << 20), (None, input.clone()));
        }
    }

    #[test]
    fn a_pretty_banner_before_a_log_is_no_document() {
        let input = b"{\n \"event\": \"startup\"\n}\n{\"id\":1}\nTraceback (most recent call last):\n{\"id\":2}\n";
        assert_eq!(sniffed(input, 1 << 20), (None, input.to_vec()));
    }

    #[test]
    fn whole_documents_stay_documents() {
        let array = b"[\n {\"a\": 1},\n {\"a\": 2}\n]\n";
        assert_eq!(
            sniffed(array, 1 << 20),
            (Some(Document::Array), array.to_vec())
        );
        let two = b"[{\"a\": 1}]\n[]\n";
        assert_eq!(sniffed(two, 1 << 20).0, Some(Document::Array));
        let objects = b"\xEF\xBB\xBF{\n \"a\": 1\n}\r\n\xEF\xBB\xBF{\n \"b\": 2\n}\n";
        assert_eq!(
            sniffed(objects, 1 << 20),
            (Some(Document::Object), objects.to_vec())
        );
        // A compact object after a pretty one is still a sequence of objects.
        let mixed = b"{\n \"a\": 1\n}\n{\"b\":2}\n";
        assert_eq!(sniffed(mixed, 1 << 20).0, Some(Document::Object));
        // Cut short (the writer killed): a document up to the cut, as past the cap.
        assert_eq!(
            sniffed(b"[\n {\"a\": 1},\n", 1 << 20).0,
            Some(Document::Array)
        );
        assert_eq!(
            sniffed(b"{\n \"a\": 1\n}\n{\n \"b\":", 1 << 20).0,
            Some(Document::Object)
        );
        // Not of the kind before the end: lines.
        assert_eq!(sniffed(b"[\n {\"a\": 1}\n {\"a\":", 1 << 20).0, None);
    }

    #[test]
    fn past_the_cap_the_guess_stands_and_nothing_is_lost() {
        let array = b"[\n {\"a\": 1},\n {\"a\": 2}\n]\n";
        assert_eq!(sniffed(array, 4), (Some(Document::Array), array.to_vec()));
        let lines = b"{\"a\":1}\n";
        assert_eq!(sniffed(lines, 4), (None, lines.to_vec()));
    }

    #[test]
    fn a_pipe_that_hands_over_one_byte_at_a_time_is_told_right() {
        struct Trickle<'a>(&'a [u8]);
        impl io::Read for Trickle<'_> {
            fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(1).min(out.len());
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        for (input, want) in [
            (&b"{\n  \"a\": 1\n}\n"[..], Some(Document::Object)),
            (b"[\n {\"a\": 1}\n]", Some(Document::Array)),
            (b"{\"a\":1}\n{\"a\":2}\n", None),
            (b"\xEF\xBB\xBF[]", Some(Document::Array)),
        ] {
            let (kind, mut r) = sniff(io::BufReader::new(Trickle(input)), 1 << 20).unwrap();
            let mut all = vec![];
            r.read_to_end(&mut all).unwrap();
            assert_eq!((kind, all.as_slice()), (want, input), "{input:?}");
        }
    }

    #[test]
    fn a_read_that_ends_inside_a_number_or_a_bom_waits_for_the_next() {
        // Every read size cuts the numbers (`1741946531.` is "invalid" to serde_json, not
        // short) and the BOM somewhere.
        let doc = "[{\"t\":1741946531.25,\"e\":1.5e-3,\"n\":-7}]\u{FEFF}\n[{\"t\":2.0}]\n";
        for capacity in 1..=doc.len() {
            let r = io::BufReader::with_capacity(capacity, doc.as_bytes());
            let (kind, mut r) = sniff(r, 1 << 20).unwrap();
            assert_eq!(kind, Some(Document::Array), "reads of {capacity}");
            let mut n = 0;
            for_each_element(&mut r, &mut |_| {
                n += 1;
                Ok(())
            })
            .unwrap();
            assert_eq!(n, 2, "reads of {capacity}");
        }
        // Positions in messages count from the input's start, whichever array fails.
        let bad = b"[{\"a\":1}]\n\xEF\xBB\xBF[{\"a\":1},\n{\"a\":x}]";
        let e = for_each_element(&bad[..], &mut |_| Ok(())).unwrap_err();
        assert_eq!(e, "expected value at line 3 column 6");
    }
}
