//! The records walk over a line's text in one pass: the walk down a pattern and the writing of
//! each record it finds read each byte once (a value skipped is scanned once, never split
//! again per level), and the normalized record is written as the text is read.
//!
//! Text that needs no change is copied as it is: string values with their escapes, numbers,
//! keys without escapes. Only keys with escapes are decoded (to compare them) and written
//! again as JSON writes them. An OTLP key-value list is written as an object while it is read;
//! when an element turns out not to be a key-value pair, what was written of it is taken back
//! and the list written as a plain array (the same for a key or value met twice in one pair,
//! the last wins). No allocation per value but the record's own text, and the text an
//! `arrayValue` unwraps to.

use super::{
    CONTENT_TIMESTAMPS, Filled, NotRaw, OUTPUTS, SCALAR_VALUES, TIMESTAMPS, content_timestamps,
    parent_name,
};
use crate::format::RecordWindow;
use crate::json::PathSet;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;

type R<T> = Result<T, NotRaw>;

/// See [`super::collect_raw_filled`].
pub(super) fn collect(
    line: &[u8],
    patterns: &[Vec<String>],
    window: Option<&RecordWindow>,
    carry: &[String],
    out: &mut Vec<Vec<u8>>,
    fill: Option<(&PathSet, &mut Filled)>,
) -> R<u64> {
    let blank = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r');
    let start = line.iter().position(|c| !blank(c)).unwrap_or(line.len());
    let end = line
        .iter()
        .rposition(|c| !blank(c))
        .map_or(start, |e| e + 1);
    let text = Text::new(&line[start..end]);
    let mut root_carried = Vec::new();
    if !carry.is_empty() && text.b.first() == Some(&b'{') {
        for k in carry {
            if let Some(v) = text.last_member(0, k)? {
                root_carried.push((k.as_str(), v));
            }
        }
    }
    let fill = fill.map(|(paths, filled)| {
        filled.ranges.resize(out.len(), None);
        Fill { paths, filled }
    });
    let mut walk = Walk {
        text,
        window,
        carried: root_carried.clone(),
        root_carried,
        carry,
        carried_for: None,
        present: Vec::new(),
        parent: "",
        group: None,
        last_len: 0,
        out,
        outside: 0,
        fill,
    };
    for pattern in patterns {
        walk.parent = parent_name(pattern);
        walk.group = None;
        walk.walk(0, pattern, None)?;
    }
    Ok(walk.outside)
}

/// JSON text being read (valid JSON and UTF-8: the caller has checked it).
#[derive(Clone, Copy)]
struct Text<'a> {
    b: &'a [u8],
}

/// An object member's key.
struct Key<'a> {
    /// Decoded (borrowed when it has no escapes), as UTF-8 bytes.
    text: Cow<'a, [u8]>,
    /// The string's text, quotes included.
    raw: &'a [u8],
    /// JSON writes the decoded key as `raw`: no escapes, no control characters.
    plain: bool,
    /// The index after the closing quote.
    end: usize,
}

impl Key<'_> {
    fn write(&self, out: &mut Vec<u8>) {
        if self.plain {
            out.extend_from_slice(self.raw);
        } else {
            write_bytes(out, &self.text);
        }
        out.push(b':');
    }
}

/// The index of the first byte at or after `i` that is not JSON whitespace.
fn ws(b: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(i) {
        i += 1;
    }
    i
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Bit `k` set when byte `k` of the 16 at `i` is `"`, `\` or a control byte; `None` when fewer
/// than 16 bytes are left.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn special16(b: &[u8], i: usize) -> Option<u32> {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    let chunk: &[u8; 16] = b.get(i..i + 16)?.try_into().ok()?;
    // SAFETY: SSE2 is part of the x86-64 baseline, so these intrinsics are always available;
    // the load reads the 16 bytes of `chunk` and needs no alignment.
    let m = unsafe {
        let v = _mm_loadu_si128(chunk.as_ptr().cast());
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        let control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control))
    };
    Some(m as u32)
}

/// Bit `k` set when byte `k` of the 16 at `i` is a bracket or a brace (`{`, `}`, `[`, `]`) or
/// `"`; `None` when fewer than 16 bytes are left.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn structural16(b: &[u8], i: usize) -> Option<u32> {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    let chunk: &[u8; 16] = b.get(i..i + 16)?.try_into().ok()?;
    // SAFETY: as in `special16`.
    let m = unsafe {
        let v = _mm_loadu_si128(chunk.as_ptr().cast());
        // `[` and `{`, `]` and `}` differ only in the bit 0x20.
        let folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
        let open = _mm_cmpeq_epi8(folded, _mm_set1_epi8(b'{' as i8));
        let close = _mm_cmpeq_epi8(folded, _mm_set1_epi8(b'}' as i8));
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(open, close), quote))
    };
    Some(m as u32)
}

/// Bit `k` set when byte `k` of the 16 at `i` may end a scalar (`,`, `}`, `]`, or a byte up to
/// a space: in valid JSON, blanks); `None` when fewer than 16 bytes are left.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn delimiter16(b: &[u8], i: usize) -> Option<u32> {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    let chunk: &[u8; 16] = b.get(i..i + 16)?.try_into().ok()?;
    // SAFETY: as in `special16`.
    let m = unsafe {
        let v = _mm_loadu_si128(chunk.as_ptr().cast());
        let comma = _mm_cmpeq_epi8(v, _mm_set1_epi8(b',' as i8));
        let close = _mm_cmpeq_epi8(
            _mm_or_si128(v, _mm_set1_epi8(0x20)),
            _mm_set1_epi8(b'}' as i8),
        );
        let blank = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x20)), v);
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(comma, close), blank))
    };
    Some(m as u32)
}

/// The index of the first `"`, `\` or control byte at or after `i` inside a string (the length
/// of `b` when there is none): 16 bytes at a time (x86-64), then 8 as one word, then byte by
/// byte.
#[inline(always)]
fn special(b: &[u8], mut i: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    while let Some(m) = special16(b, i) {
        if m != 0 {
            return i + m.trailing_zeros() as usize;
        }
        i += 16;
    }
    while let Some(chunk) = b.get(i..i + 8) {
        let w = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        let q = w ^ (ONES * u64::from(b'"'));
        let s = w ^ (ONES * u64::from(b'\\'));
        // High bit of a byte set when it is `"`, `\` or below 0x20 (exact for the first one).
        let m = ((q.wrapping_sub(ONES) & !q)
            | (s.wrapping_sub(ONES) & !s)
            | (w.wrapping_sub(ONES * 0x20) & !w))
            & HIGH;
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while b
        .get(i)
        .is_some_and(|&c| c != b'"' && c != b'\\' && c >= 0x20)
    {
        i += 1;
    }
    i
}

/// The index of the first byte at or after `i` that is `"`, `{`, `}`, `[` or `]` (the length of
/// `b` when there is none).
#[inline(always)]
fn structural(b: &[u8], mut i: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    while let Some(m) = structural16(b, i) {
        if m != 0 {
            return i + m.trailing_zeros() as usize;
        }
        i += 16;
    }
    while b
        .get(i)
        .is_some_and(|c| !matches!(c, b'"' | b'{' | b'}' | b'[' | b']'))
    {
        i += 1;
    }
    i
}

/// The index after the scalar (number, `true`, `false`, `null`) at `i`: the first byte at or
/// after `i` that is `,`, `}`, `]` or a byte up to a space (outside strings of valid JSON, a
/// blank); the length of `b` when there is none.
#[inline(always)]
fn scalar_end(b: &[u8], mut i: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    while let Some(m) = delimiter16(b, i) {
        if m != 0 {
            return i + m.trailing_zeros() as usize;
        }
        i += 16;
    }
    while b
        .get(i)
        .is_some_and(|&c| !matches!(c, b',' | b'}' | b']') && c > b' ')
    {
        i += 1;
    }
    i
}

/// The index after the string whose opening quote is at `i`.
#[inline]
fn string_end(b: &[u8], mut i: usize) -> R<usize> {
    i += 1;
    loop {
        i = special(b, i);
        match *b.get(i).ok_or(NotRaw)? {
            b'"' => return Ok(i + 1),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
}

/// The index after the value that starts at `b[i]` (valid JSON).
fn skip(b: &[u8], i: usize) -> R<usize> {
    match b.get(i) {
        Some(b'"') => string_end(b, i),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                j = structural(b, j);
                match b.get(j).ok_or(NotRaw)? {
                    b'"' => {
                        j = string_end(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    _ => {
                        depth -= 1;
                        if depth == 0 {
                            return Ok(j + 1);
                        }
                    }
                }
                j += 1;
            }
        }
        Some(_) => {
            let j = scalar_end(b, i);
            if j == i { Err(NotRaw) } else { Ok(j) }
        }
        None => Err(NotRaw),
    }
}

fn write_string(out: &mut Vec<u8>, s: &str) {
    // Writing a string to a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

/// [`write_string`] of a decoded key's UTF-8 bytes.
fn write_bytes(out: &mut Vec<u8>, s: &[u8]) {
    write_string(out, &String::from_utf8_lossy(s));
}

fn comma(out: &mut Vec<u8>, first: bool) {
    if !first {
        out.push(b',');
    }
}

/// Where an `AnyValue`'s member goes in the table [`Text::any`] fills: `arrayValue`,
/// `kvlistValue`, then the scalars in the order they are tried.
pub(super) fn slot(name: &[u8]) -> Option<usize> {
    // SCALAR_VALUES, spelled out so that the match compiles to a test of the length first.
    match name {
        b"arrayValue" => Some(0),
        b"kvlistValue" => Some(1),
        b"stringValue" => Some(2),
        b"intValue" => Some(3),
        b"doubleValue" => Some(4),
        b"boolValue" => Some(5),
        b"bytesValue" => Some(6),
        _ => None,
    }
}

/// Where a pair [`Text::plain_pair`] wrote is: its key's text in the line (no quotes, no
/// escapes) and its value's in the record written.
#[derive(Debug, Clone, Copy)]
pub(super) struct PairAt {
    key: (usize, usize),
    value: (usize, usize),
}

/// How far a key-value pair has been written while its object is read (see
/// [`Text::kv_pair`]).
#[derive(PartialEq)]
enum Pair {
    Start,
    KeyWritten,
    Done,
    /// Not in the order key, value, each once: written again from the members' last ones.
    Again,
}

impl<'a> Text<'a> {
    fn new(b: &'a [u8]) -> Self {
        Text { b }
    }

    /// The byte at `i`; 0 past the end.
    fn at(&self, i: usize) -> u8 {
        self.b.get(i).copied().unwrap_or(0)
    }

    fn slice(&self, i: usize, j: usize) -> R<&'a [u8]> {
        self.b.get(i..j).ok_or(NotRaw)
    }

    /// The index after the value that starts at `i`.
    fn skip(&self, i: usize) -> R<usize> {
        skip(self.b, i)
    }

    /// The key whose opening quote is at `i`: one pass finds its end and whether it has
    /// escapes; decoded only when it has.
    fn key(&self, i: usize) -> R<Key<'a>> {
        let b = self.b;
        if b.get(i) != Some(&b'"') {
            return Err(NotRaw);
        }
        let (mut escaped, mut control) = (false, false);
        let mut j = i + 1;
        loop {
            j = special(b, j);
            match *b.get(j).ok_or(NotRaw)? {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    j += 2;
                }
                _ => {
                    control = true;
                    j += 1;
                }
            }
        }
        let raw = self.slice(i, j + 1)?;
        let text = if escaped {
            let decoded = serde_json::from_slice::<String>(raw).map_err(|_| NotRaw)?;
            Cow::Owned(decoded.into_bytes())
        } else {
            Cow::Borrowed(&raw[1..raw.len() - 1])
        };
        Ok(Key {
            text,
            raw,
            plain: !escaped && !control,
            end: j + 1,
        })
    }

    /// Reads the object at `i` (`{`): `each(key, i)` reads the value at `i` and says where it
    /// ends. The index after the object.
    fn object(&self, i: usize, mut each: impl FnMut(Key<'a>, usize) -> R<usize>) -> R<usize> {
        let b = self.b;
        let mut j = ws(b, i + 1);
        if b.get(j) == Some(&b'}') {
            return Ok(j + 1);
        }
        loop {
            let key = self.key(j)?;
            j = ws(b, key.end);
            if b.get(j) != Some(&b':') {
                return Err(NotRaw);
            }
            j = each(key, ws(b, j + 1))?;
            j = ws(b, j);
            match b.get(j) {
                Some(b',') => j = ws(b, j + 1),
                Some(b'}') => return Ok(j + 1),
                _ => return Err(NotRaw),
            }
        }
    }

    /// Reads the array at `i` (`[`): `each(n, i)` reads the `n`th element, at `i`, and says where
    /// it ends. The index after the array.
    fn array(&self, i: usize, mut each: impl FnMut(usize, usize) -> R<usize>) -> R<usize> {
        let b = self.b;
        let mut j = ws(b, i + 1);
        if b.get(j) == Some(&b']') {
            return Ok(j + 1);
        }
        let mut n = 0;
        loop {
            j = ws(b, each(n, j)?);
            n += 1;
            match b.get(j) {
                Some(b',') => j = ws(b, j + 1),
                Some(b']') => return Ok(j + 1),
                _ => return Err(NotRaw),
            }
        }
    }

    /// Where the value of the last member named `name` of the object at `i` starts.
    fn last_member(&self, i: usize, name: &str) -> R<Option<usize>> {
        let mut found = None;
        self.object(i, |k, v| {
            if *k.text == *name.as_bytes() {
                found = Some(v);
            }
            self.skip(v)
        })?;
        Ok(found)
    }

    /// The number at `path` below the value at `i`, as [`RecordWindow::contains`] reads it.
    fn number(&self, mut i: usize, path: &[String]) -> Option<f64> {
        for k in path {
            if self.b.get(i) != Some(&b'{') {
                return None;
            }
            i = self.last_member(i, k).ok()??;
        }
        let v = self.slice(i, self.skip(i).ok()?).ok()?;
        serde_json::from_slice::<Value>(v).ok()?.as_f64()
    }

    /// Writes the value at `i` with every object member's value written by [`Text::member`];
    /// scalars as they are.
    fn value(&self, i: usize, out: &mut Vec<u8>) -> R<usize> {
        match self.b.get(i) {
            Some(b'{') => {
                out.push(b'{');
                let mut first = true;
                let end = self.object(i, |k, v| {
                    comma(out, first);
                    first = false;
                    k.write(out);
                    self.member(v, out)
                })?;
                out.push(b'}');
                Ok(end)
            }
            Some(b'[') => {
                out.push(b'[');
                let end = self.array(i, |n, v| {
                    comma(out, n == 0);
                    self.value(v, out)
                })?;
                out.push(b']');
                Ok(end)
            }
            _ => {
                let end = self.skip(i)?;
                out.extend_from_slice(self.slice(i, end)?);
                Ok(end)
            }
        }
    }

    /// Writes an object member's value: an OTLP key-value list as an object, anything else as
    /// [`Text::value`] does.
    fn member(&self, i: usize, out: &mut Vec<u8>) -> R<usize> {
        self.member_noting(i, out, None)
    }

    /// [`Text::member`], noting in `pairs` where each pair is when the value is a key-value
    /// list that [`Text::plain_list`] writes; `pairs` is left empty otherwise.
    fn member_noting(
        &self,
        i: usize,
        out: &mut Vec<u8>,
        pairs: Option<&mut Vec<PairAt>>,
    ) -> R<usize> {
        if self.b.get(i) == Some(&b'[')
            && let Some(end) = self.kv_list(i, out, pairs)?
        {
            return Ok(end);
        }
        self.value(i, out)
    }

    /// Writes the array at `i` as an object when it is a non-empty list of objects each with a
    /// string `key`: `{K: unwrapped value}`; `None` (nothing written) when it is not. With
    /// `pairs`, notes where each pair is when [`Text::plain_list`] writes the list.
    fn kv_list(
        &self,
        i: usize,
        out: &mut Vec<u8>,
        pairs: Option<&mut Vec<PairAt>>,
    ) -> R<Option<usize>> {
        if let Some(end) = self.plain_list(i, out, pairs) {
            return Ok(Some(end));
        }
        let mark = out.len();
        out.push(b'{');
        let mut is_list = true;
        let end = self.array(i, |n, item| {
            if !is_list {
                return self.skip(item);
            }
            match self.kv_pair(item, n == 0, out)? {
                Some(end) => Ok(end),
                None => {
                    is_list = false;
                    self.skip(item)
                }
            }
        })?;
        if !is_list || end == ws(self.b, i + 1) + 1 {
            out.truncate(mark);
            return Ok(None);
        }
        out.push(b'}');
        Ok(Some(end))
    }

    /// Writes the key-value pair at `item` (`"K":` and its unwrapped value, `null` when it has
    /// none), a comma first unless `first`; `None` (nothing written) when it is no object with
    /// a string `key`. In one pass when its members are `key` then `value`, each once.
    fn kv_pair(&self, item: usize, first: bool, out: &mut Vec<u8>) -> R<Option<usize>> {
        if self.b.get(item) != Some(&b'{') {
            return Ok(None);
        }
        if let Some((end, _)) = self.plain_pair(item, first, out) {
            return Ok(Some(end));
        }
        let mark = out.len();
        let mut state = Pair::Start;
        let (mut key, mut value) = (None, None);
        let end = self.object(item, |k, v| match &*k.text {
            b"key" => {
                key = Some(v);
                if state == Pair::Start
                    && self.at(v) == b'"'
                    && let Ok(name) = self.key(v)
                {
                    comma(out, first);
                    name.write(out);
                    state = Pair::KeyWritten;
                    return Ok(name.end);
                }
                state = Pair::Again;
                self.skip(v)
            }
            b"value" => {
                value = Some(v);
                if state == Pair::KeyWritten {
                    state = Pair::Done;
                    return self.any(v, out);
                }
                state = Pair::Again;
                self.skip(v)
            }
            _ => self.skip(v),
        })?;
        match state {
            Pair::Done => return Ok(Some(end)),
            Pair::KeyWritten => {
                out.extend_from_slice(b"null");
                return Ok(Some(end));
            }
            Pair::Start | Pair::Again => out.truncate(mark),
        }
        let Some(k) = key.filter(|&k| self.at(k) == b'"') else {
            return Ok(None);
        };
        let name = self.key(k)?;
        comma(out, first);
        name.write(out);
        match value {
            Some(v) => {
                self.any(v, out)?;
            }
            None => out.extend_from_slice(b"null"),
        }
        Ok(Some(end))
    }

    /// [`Text::kv_list`] for a list as OTLP exporters write it: each pair one
    /// [`Text::plain_pair`] reads, no blanks between them. The object written and the index
    /// after the list; `None` (nothing written) for any other list.
    ///
    /// With `pairs`, notes where each pair's key and value are; leaves it empty when it
    /// returns `None`.
    fn plain_list(
        &self,
        i: usize,
        out: &mut Vec<u8>,
        mut pairs: Option<&mut Vec<PairAt>>,
    ) -> Option<usize> {
        let mark = out.len();
        out.push(b'{');
        let mut j = i + 1;
        let mut first = true;
        while let Some((end, at)) = self.plain_pair(j, first, out) {
            first = false;
            if let Some(p) = pairs.as_deref_mut() {
                p.push(at);
            }
            match self.b.get(end) {
                Some(b',') => j = end + 1,
                Some(b']') => {
                    out.push(b'}');
                    return Some(end + 1);
                }
                _ => break,
            }
        }
        out.truncate(mark);
        if let Some(p) = pairs {
            p.clear();
        }
        None
    }

    /// [`Text::kv_pair`] for the pair OTLP exporters write, `{"key":"K","value":{"T":X}}`
    /// without blanks, where `K` has no escapes, `T` is a scalar member of an `AnyValue`
    /// (`stringValue`, `intValue`, ...) and `X` a string or another scalar: `"K":X` written,
    /// with a comma first unless `first`, and the index after the pair with where its key and
    /// value are. `None` (nothing written) for any other text, which the general reading then
    /// takes.
    #[inline]
    fn plain_pair(&self, item: usize, first: bool, out: &mut Vec<u8>) -> Option<(usize, PairAt)> {
        const KEY: [u8; 8] = *b"{\"key\":\"";
        const VALUE: &[u8; 11] = b",\"value\":{\"";
        let b = self.b;
        if *b.get(item..item + KEY.len())? != KEY {
            return None;
        }
        // The name's quotes.
        let k0 = item + KEY.len() - 1;
        let k1 = special(b, k0 + 1);
        if b.get(k1) != Some(&b'"') || b.get(k1 + 1..k1 + 1 + VALUE.len())? != VALUE {
            return None;
        }
        // The `AnyValue`'s member, after its opening quote: a scalar's name, quote and colon.
        let t = k1 + 1 + VALUE.len();
        let is = |name: &[u8]| b.get(t..t + name.len()) == Some(name);
        let x = t + match b.get(t..t + 2)? {
            b"do" if is(b"doubleValue\":") => 13,
            b"in" if is(b"intValue\":") => 10,
            b"st" if is(b"stringValue\":") => 13,
            b"bo" if is(b"boolValue\":") => 11,
            b"by" if is(b"bytesValue\":") => 12,
            _ => return None,
        };
        let x_end = match *b.get(x)? {
            b'"' => string_end(b, x).ok()?,
            b'{' | b'[' => return None,
            _ => scalar_end(b, x),
        };
        if x_end == x || b.get(x_end..x_end + 2)? != b"}}" {
            return None;
        }
        comma(out, first);
        out.extend_from_slice(&b[k0..=k1]);
        out.push(b':');
        let value = out.len();
        out.extend_from_slice(&b[x..x_end]);
        let at = PairAt {
            key: (k0 + 1, k1),
            value: (value, out.len()),
        };
        Some((x_end + 2, at))
    }

    /// Writes the OTLP `AnyValue` at `i` unwrapped (see [`super::unwrap_any_value`]), and what
    /// it unwraps to as [`Text::member`] does.
    fn any(&self, i: usize, out: &mut Vec<u8>) -> R<usize> {
        if self.b.get(i) != Some(&b'{') {
            return self.member(i, out);
        }
        // arrayValue, kvlistValue, then the scalars in the order they are tried.
        let mut at = [None; 2 + SCALAR_VALUES.len()];
        let end = self.object(i, |k, v| {
            let end = self.skip(v)?;
            if let Some(s) = slot(&k.text) {
                at[s] = Some((v, end));
            }
            Ok(end)
        })?;
        if let Some((x, _)) = at[0] {
            let text = self.array_value(x)?;
            Text::new(&text).member(0, out)?;
        } else if let Some((x, _)) = at[1] {
            let list = match self.at(x) {
                b'{' => self.last_member(x, "values")?,
                _ => None,
            };
            let written = match list {
                Some(l) if self.at(l) == b'[' => self.kv_list(l, out, None)?,
                _ => None,
            };
            if written.is_none() {
                out.extend_from_slice(b"null");
            }
        } else if let Some(&(x, x_end)) = at[2..].iter().flatten().next() {
            if matches!(self.at(x), b'{' | b'[') {
                self.member(x, out)?;
            } else {
                out.extend_from_slice(self.slice(x, x_end)?);
            }
        } else {
            self.value(i, out)?;
        }
        Ok(end)
    }

    /// The text an `arrayValue` (at `x`) unwraps to: its `values`, each unwrapped, in an array.
    fn array_value(&self, x: usize) -> R<Vec<u8>> {
        let mut text = Vec::from(b"[");
        let values = match self.at(x) {
            b'{' => self.last_member(x, "values")?,
            _ => None,
        };
        if let Some(vals) = values.filter(|&v| self.at(v) == b'[') {
            self.array(vals, |n, item| {
                comma(&mut text, n == 0);
                let (u, end) = self.unwrapped(item)?;
                text.extend_from_slice(&u);
                Ok(end)
            })?;
        }
        text.push(b']');
        Ok(text)
    }

    /// The text the `AnyValue` at `i` unwraps to (a slice, or text built for it), and the index
    /// after it.
    fn unwrapped(&self, i: usize) -> R<(Cow<'a, [u8]>, usize)> {
        let end = self.skip(i)?;
        let whole = self.slice(i, end)?;
        if self.at(i) != b'{' {
            return Ok((Cow::Borrowed(whole), end));
        }
        let mut at = [None; 2 + SCALAR_VALUES.len()];
        self.object(i, |k, v| {
            if let Some(s) = slot(&k.text) {
                at[s] = Some(v);
            }
            self.skip(v)
        })?;
        if let Some(x) = at[0] {
            return Ok((Cow::Owned(self.array_value(x)?), end));
        }
        if let Some(x) = at[1] {
            return Ok((self.kvlist_value(x)?, end));
        }
        if let Some(&x) = at[2..].iter().flatten().next() {
            return Ok((Cow::Borrowed(self.slice(x, self.skip(x)?)?), end));
        }
        Ok((Cow::Borrowed(whole), end))
    }

    /// The text a `kvlistValue` (at `x`) unwraps to inside an `arrayValue`: `{K: unwrapped
    /// text}`, `null` when its `values` are no key-value list.
    fn kvlist_value(&self, x: usize) -> R<Cow<'a, [u8]>> {
        let list = match self.at(x) {
            b'{' => self.last_member(x, "values")?,
            _ => None,
        };
        let Some(l) = list.filter(|&l| self.at(l) == b'[') else {
            return Ok(Cow::Borrowed(b"null"));
        };
        // The pairs first (the last key and value of each), as a list they are or not.
        let mut pairs = Vec::new();
        let mut is_list = true;
        let end = self.array(l, |_, item| {
            if is_list && self.at(item) == b'{' {
                let (mut key, mut value) = (None, None);
                let end = self.object(item, |k, v| {
                    match &*k.text {
                        b"key" => key = Some(v),
                        b"value" => value = Some(v),
                        _ => {}
                    }
                    self.skip(v)
                })?;
                match key.filter(|&k| self.at(k) == b'"') {
                    Some(k) => pairs.push((self.key(k)?.text, value)),
                    None => is_list = false,
                }
                return Ok(end);
            }
            is_list = false;
            self.skip(item)
        })?;
        if !is_list || end == ws(self.b, l + 1) + 1 {
            return Ok(Cow::Borrowed(b"null"));
        }
        let mut text = Vec::from(b"{");
        for (n, (k, value)) in pairs.into_iter().enumerate() {
            comma(&mut text, n == 0);
            write_bytes(&mut text, &k);
            text.push(b':');
            match value {
                Some(v) => text.extend_from_slice(&self.unwrapped(v)?.0),
                None => text.extend_from_slice(b"null"),
            }
        }
        text.push(b'}');
        Ok(Cow::Owned(text))
    }
}

/// The most room a record's text gets before it is written (it grows when it needs more).
const MAX_ROOM: usize = 1 << 16;

/// A group's window: its start and end, when it has them.
type Bounds = (Option<f64>, Option<f64>);

/// The walk down the patterns, writing each record found.
struct Walk<'a, 'o> {
    text: Text<'a>,
    window: Option<&'o RecordWindow>,
    /// The members copied into records that lack them (where their values start in the
    /// line): the group's of each name in `carry`, else the root's (`root_carried`), for the
    /// group `carried_for`. Written as a record's members are (OTLP attribute lists as objects).
    carried: Vec<(&'o str, usize)>,
    root_carried: Vec<(&'o str, usize)>,
    carry: &'o [String],
    carried_for: Option<usize>,
    /// Which of `carried` the record being written has.
    present: Vec<bool>,
    /// The records' `"$parent"`.
    parent: &'o str,
    /// The group last met (where it starts) and its window's bounds.
    group: Option<(usize, Bounds)>,
    /// The length of the record written last (0 before the first).
    last_len: usize,
    out: &'o mut Vec<Vec<u8>>,
    outside: u64,
    /// Where a reader's values are in each record, noted while it is written.
    fill: Option<Fill<'o>>,
}

/// A reader's paths, and where their values are in the records written (see
/// [`super::collect_raw_filled`]).
struct Fill<'o> {
    paths: &'o PathSet,
    filled: &'o mut Filled,
}

/// The entry of [`Filled::entries`] for the value `out[a..b]` in `slot`: `start == end` for a
/// `null`, as [`crate::json::Slots::fill`] takes it.
fn entry(slot: usize, out: &[u8], a: usize, b: usize) -> (u32, u32, u32) {
    if b - a == 4 && out[a] == b'n' {
        (slot as u32, 0, 0)
    } else {
        (slot as u32, a as u32, b as u32)
    }
}

/// Notes where the values of `paths` are in a record written (`out`, valid JSON), as
/// [`PathSet::extract`] of the record records them, into `entries`.
struct Noter<'p, 'o> {
    paths: &'p PathSet,
    out: &'o [u8],
    entries: &'o mut Vec<(u32, u32, u32)>,
}

impl Noter<'_, '_> {
    /// Notes the value `out[a..b]` at trie node `c`: its slot and, when `c` has children,
    /// theirs inside it. False when the text is not what the record's writer writes (the
    /// record is then extracted).
    fn value(&mut self, c: usize, (a, b): (usize, usize)) -> bool {
        let paths = self.paths;
        if paths.node_has_children(c) {
            let read = match self.out[a] {
                b'{' => self.object(c, a),
                b'[' if !paths.node_elements(c).is_empty() => self.array(c, a),
                _ => Ok(b),
            };
            if read.is_err() {
                return false;
            }
        }
        if let Some(slot) = paths.node_slot(c) {
            self.entries.push(entry(slot, self.out, a, b));
        }
        true
    }

    /// Notes the members of the object at `out[i]` (its `{`) at trie node `node`; the index
    /// after it.
    fn object(&mut self, node: usize, i: usize) -> R<usize> {
        let out = self.out;
        let mut j = ws(out, i + 1);
        if out.get(j) == Some(&b'}') {
            return Ok(j + 1);
        }
        loop {
            if out.get(j) != Some(&b'"') {
                return Err(NotRaw);
            }
            let k_end = string_end(out, j)?;
            let v = ws(out, k_end);
            if out.get(v) != Some(&b':') {
                return Err(NotRaw);
            }
            let v = ws(out, v + 1);
            let end = skip(out, v)?;
            // A key is compared unescaped; one that does not decode (a lone surrogate escape)
            // names no path.
            let child = match special(out, j + 1) {
                q if q == k_end - 1 => self.paths.child_at(node, out, j + 1, q),
                _ => serde_json::from_slice::<String>(&out[j..k_end])
                    .ok()
                    .and_then(|k| self.paths.child(node, k.as_bytes())),
            };
            if let Some(c) = child
                && !self.value(c, (v, end))
            {
                return Err(NotRaw);
            }
            j = ws(out, end);
            match out.get(j) {
                Some(b',') => j = ws(out, j + 1),
                Some(b'}') => return Ok(j + 1),
                _ => return Err(NotRaw),
            }
        }
    }

    /// Notes the elements of the array at `out[i]` (its `[`) that the children of trie node
    /// `node` name by index (the last one for `[-1]`); the index after it.
    fn array(&mut self, node: usize, i: usize) -> R<usize> {
        let out = self.out;
        let elements = self.paths.node_elements(node);
        let mut j = ws(out, i + 1);
        if out.get(j) == Some(&b']') {
            return Ok(j + 1);
        }
        let mut index = 0;
        loop {
            let end = skip(out, j)?;
            for &(want, c) in elements {
                if (want == index || want == -1 && out.get(ws(out, end)) == Some(&b']'))
                    && !self.value(c, (j, end))
                {
                    return Err(NotRaw);
                }
            }
            index += 1;
            j = ws(out, end);
            match out.get(j) {
                Some(b',') => j = ws(out, j + 1),
                Some(b']') => return Ok(j + 1),
                _ => return Err(NotRaw),
            }
        }
    }
}

impl Walk<'_, '_> {
    /// Walks the value at `i` down `pattern`; the index after the value.
    fn walk(&mut self, i: usize, pattern: &[String], group: Option<usize>) -> R<usize> {
        let Some((seg, rest)) = pattern.split_first() else {
            return self.record(i, group);
        };
        let text = self.text;
        match text.b.get(i) {
            Some(b'[') if seg == "*" => {
                text.array(i, |_, item| self.walk(item, rest, group.or(Some(item))))
            }
            Some(b'{') if seg == "*" => {
                // In key order, each key once (the last), as a `Value`'s map holds them.
                let mut sorted = BTreeMap::new();
                let end = text.object(i, |k, v| {
                    sorted.insert(k.text, v);
                    text.skip(v)
                })?;
                for v in sorted.into_values() {
                    self.walk(v, rest, group.or(Some(v)))?;
                }
                Ok(end)
            }
            Some(b'{') => {
                // The last member of that name: walked when met, again from the records it
                // wrote when a later one replaces it.
                let mut taken = None;
                text.object(i, |k, v| {
                    if *k.text != *seg.as_bytes() {
                        return text.skip(v);
                    }
                    if let Some((n, outside)) = taken {
                        self.out.truncate(n);
                        if let Some(f) = &mut self.fill {
                            f.filled.ranges.truncate(n);
                        }
                        self.outside = outside;
                    }
                    taken = Some((self.out.len(), self.outside));
                    self.walk(v, rest, group)
                })
            }
            _ => text.skip(i),
        }
    }

    /// Writes the record at `i` (of `group`) to the output, unless it is outside the window;
    /// the index after it.
    fn record(&mut self, i: usize, group: Option<usize>) -> R<usize> {
        let text = self.text;
        if let Some(w) = self.window {
            let bounds = match (group, self.group) {
                (Some(g), Some((at, bounds))) if g == at => bounds,
                (Some(g), _) => {
                    let bounds = (text.number(g, &w.start), text.number(g, &w.end));
                    self.group = Some((g, bounds));
                    bounds
                }
                (None, _) => (None, None),
            };
            if !w.holds_within(bounds, |p| text.number(i, p)) {
                self.outside += 1;
                return text.skip(i);
            }
        }
        if !self.carry.is_empty() && group != self.carried_for {
            self.carry_for(group)?;
        }
        // Written in place: room for the text left in the line (the first record) or for
        // one more record as long as the last one, grown when that is too little.
        let room = match self.last_len {
            0 => (text.b.len() - i).min(MAX_ROOM),
            n => n,
        };
        let mut buf = match &mut self.fill {
            Some(f) => f.filled.text_for(room + 64),
            None => Vec::with_capacity(room + 64),
        };
        let (end, filled) = if text.b.get(i) == Some(&b'{') {
            self.object_record(i, &mut buf)?
        } else {
            (text.value(i, &mut buf)?, None)
        };
        self.last_len = buf.len();
        self.out.push(buf);
        if let Some(f) = &mut self.fill {
            f.filled.ranges.push(filled);
        }
        Ok(end)
    }

    /// Sets the members carried into the records of `group`: its own of each carried name,
    /// else the root's.
    fn carry_for(&mut self, group: Option<usize>) -> R<()> {
        let text = self.text;
        self.carried.clear();
        for k in self.carry {
            let own = match group {
                Some(g) if text.b.get(g) == Some(&b'{') => text.last_member(g, k)?,
                _ => None,
            };
            let v = match own {
                Some(v) => Some(v),
                None => self
                    .root_carried
                    .iter()
                    .find(|(c, _)| *c == k.as_str())
                    .map(|&(_, v)| v),
            };
            if let Some(v) = v {
                self.carried.push((k.as_str(), v));
            }
        }
        self.carried_for = group;
        Ok(())
    }

    /// Writes the object record at `i`: its members (but `"$parent"` and
    /// `"$content_timestamps"`), then `"$parent"`, `"$content_timestamps"` when it has
    /// `response_timestamps`, and the carried members it lacks. With a reader's paths
    /// ([`Walk::fill`]), also where their values are in it: the range of [`Filled::entries`]
    /// noted, `None` when some could not be followed.
    fn object_record(&mut self, i: usize, out: &mut Vec<u8>) -> R<(usize, Option<(u32, u32)>)> {
        let text = self.text;
        let (mut timestamps, mut outputs) = (None, None);
        self.present.clear();
        self.present.resize(self.carried.len(), false);
        let (carried, present) = (&self.carried, &mut self.present);
        let mut fill = self.fill.as_mut();
        // The root's own slot (the whole record) is not one a member can note.
        let mut noting = fill
            .as_ref()
            .is_some_and(|f| f.paths.node_slot(0).is_none());
        let first_entry = fill.as_ref().map_or(0, |f| f.filled.entries.len());
        out.push(b'{');
        let mut first = true;
        let end = text.object(i, |k, v| {
            for (n, (c, _)) in carried.iter().enumerate() {
                present[n] |= *k.text == *c.as_bytes();
            }
            let key = &*k.text;
            if key == b"$parent" || key == CONTENT_TIMESTAMPS.as_bytes() {
                return text.skip(v);
            }
            comma(out, first);
            first = false;
            k.write(out);
            let at = out.len();
            let node = match &fill {
                // A key without escapes is read where it is in the line.
                Some(f) if noting => match &k.text {
                    Cow::Borrowed(_) => {
                        f.paths
                            .child_at(0, text.b, k.end - 1 - key.len(), k.end - 1)
                    }
                    Cow::Owned(_) => f.paths.child(0, key),
                },
                _ => None,
            };
            let end = match (node, fill.as_deref_mut()) {
                (Some(c), Some(f)) => {
                    f.filled.pairs.clear();
                    let pairs = f.paths.node_has_children(c).then_some(&mut f.filled.pairs);
                    let end = text.member_noting(v, out, pairs)?;
                    noting &= f.note_member(c, text, out, at);
                    end
                }
                _ => text.member(v, out)?,
            };
            if key == TIMESTAMPS.as_bytes() {
                timestamps = Some((v, end));
            } else if key == OUTPUTS.as_bytes() {
                outputs = Some((v, end));
            }
            Ok(end)
        })?;
        let noting = self.added_members(out, first, [timestamps, outputs], noting)?;
        out.push(b'}');
        let filled = match self.fill.as_mut() {
            Some(f) if noting => Some((first_entry as u32, f.filled.entries.len() as u32)),
            Some(f) => {
                f.filled.entries.truncate(first_entry);
                None
            }
            None => None,
        };
        Ok((end, filled))
    }

    /// Writes the members [`Walk::object_record`] adds after the record's own (`first`: it has
    /// none): `"$parent"`, `"$content_timestamps"` from the record's `response_timestamps` and
    /// `response_outputs` (where they are in the line), the carried members it lacks. Notes
    /// them as the record's own while `noting`; whether it still is.
    fn added_members(
        &mut self,
        out: &mut Vec<u8>,
        first: bool,
        [timestamps, outputs]: [Option<(usize, usize)>; 2],
        mut noting: bool,
    ) -> R<bool> {
        let text = self.text;
        let mut fill = self.fill.as_mut();
        let mut added = |out: &mut Vec<u8>, key: &str, at: usize| {
            if let Some(f) = fill.as_deref_mut()
                && noting
                && let Some(c) = f.paths.child(0, key.as_bytes())
            {
                let entries = &mut f.filled.entries;
                let mut noter = Noter {
                    paths: f.paths,
                    out,
                    entries,
                };
                noting &= noter.value(c, (at, out.len()));
            }
        };
        comma(out, first);
        out.extend_from_slice(b"\"$parent\":");
        let at = out.len();
        let parent = self.parent.as_bytes();
        if special(parent, 0) == parent.len() {
            out.push(b'"');
            out.extend_from_slice(parent);
            out.push(b'"');
        } else {
            write_string(out, self.parent);
        }
        added(out, "$parent", at);
        if let Some((a, b)) = timestamps {
            let ts: Value = serde_json::from_slice(text.slice(a, b)?).map_err(|_| NotRaw)?;
            let outputs = match outputs {
                Some((a, b)) => serde_json::from_slice::<Value>(text.slice(a, b)?).ok(),
                None => None,
            };
            out.push(b',');
            write_string(out, CONTENT_TIMESTAMPS);
            out.push(b':');
            let at = out.len();
            let content = content_timestamps(&ts, outputs.as_ref());
            out.extend_from_slice(&serde_json::to_vec(&content).map_err(|_| NotRaw)?);
            added(out, CONTENT_TIMESTAMPS, at);
        }
        for (&(k, v), &has) in self.carried.iter().zip(&self.present) {
            if k != "$parent" && !has {
                out.push(b',');
                write_string(out, k);
                out.push(b':');
                let at = out.len();
                text.member(v, out)?;
                added(out, k, at);
            }
        }
        Ok(noting)
    }
}

impl Fill<'_> {
    /// Notes the record's member just written from `out[at]` at trie node `c`: from the
    /// [`Filled::pairs`] when it was a key-value list written by [`Text::plain_list`] (the keys
    /// in the line's `text`), else by reading what was written. False as [`Noter::value`].
    fn note_member(&mut self, c: usize, text: Text<'_>, out: &[u8], at: usize) -> bool {
        let Filled { entries, pairs, .. } = &mut *self.filled;
        let paths = self.paths;
        let mut noter = Noter {
            paths,
            out,
            entries,
        };
        if pairs.is_empty() {
            return noter.value(c, (at, out.len()));
        }
        for p in pairs.iter() {
            if let Some(pc) = paths.child_at(c, text.b, p.key.0, p.key.1)
                && !noter.value(pc, p.value)
            {
                return false;
            }
        }
        if let Some(slot) = paths.node_slot(c) {
            noter.entries.push(entry(slot, out, at, out.len()));
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The block scans find what a byte-by-byte scan finds, at every start and with every
    /// kind of byte at every place of a block and of the tail after it.
    #[test]
    fn the_block_scans_agree_with_byte_scans() {
        let kinds = b"a\"\\\x01\x1f {}[],:\t\n\r0e\x7f\xc3";
        let naive = |b: &[u8], i: usize, stop: &dyn Fn(u8) -> bool| {
            (i..b.len()).find(|&j| stop(b[j])).unwrap_or(b.len())
        };
        for len in [1usize, 7, 8, 15, 16, 17, 31, 33, 40] {
            for at in 0..len {
                for &k in kinds {
                    let mut b = vec![b'x'; len];
                    b[at] = k;
                    for i in 0..len {
                        assert_eq!(
                            special(&b, i),
                            naive(&b, i, &|c| c == b'"' || c == b'\\' || c < 0x20),
                        );
                        assert_eq!(
                            structural(&b, i),
                            naive(&b, i, &|c| matches!(c, b'"' | b'{' | b'}' | b'[' | b']')),
                        );
                        // A scalar holds no byte up to a space, so a blank and any other such
                        // byte end one alike.
                        assert_eq!(
                            scalar_end(&b, i),
                            naive(&b, i, &|c| matches!(c, b',' | b'}' | b']') || c <= b' '),
                        );
                    }
                }
            }
        }
    }
}
