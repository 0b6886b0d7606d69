//! Enrich output: the metrics of a request as one JSON object spliced into its original line.
//!
//! Owns the byte-level splice and the rendering of numbers. The original bytes are written
//! unchanged up to the line's closing `}`; the metrics object is inserted before it; the rest
//! (the `}`, trailing blanks, the line ending) follows unchanged. Nothing is re-serialized.

use crate::metrics::{CacheClass, Metric, Metrics, NullReason, Origin, Outcome, Sample};
pub(crate) use crate::number::round3;
use crate::number::write_json_str_body;
use std::io::{self, Write};

/// Index of the closing `}` of a JSON object line (the last non-blank byte), if it is one.
pub(crate) fn closing_brace(content: &[u8]) -> Option<usize> {
    let i = content.iter().rposition(|b| !b" \t\r".contains(b))?;
    (content[i] == b'}').then_some(i)
}

/// True when the object that closes at `close` has no member (`{}`), so no comma is needed.
fn is_empty_object(content: &[u8], close: usize) -> bool {
    content[..close]
        .iter()
        .rev()
        .find(|b| !b" \t\r\n".contains(b))
        == Some(&b'{')
}

/// Renders the member for the requests a line completed: `"KEY":{...}` for one request,
/// `"KEY":[{...},...]` for several (an OTLP line with many spans, say). See [`render_object`].
///
/// # Errors
/// The writer's.
pub(crate) fn render_all<'a, 'b>(
    out: &mut Vec<u8>,
    key: &str,
    requests: &[crate::classify::Request],
    format_name: impl Fn(usize) -> &'a str,
    error_reason: impl Fn(usize) -> Option<&'b str>,
) -> io::Result<()> {
    out.push(b'"');
    write_json_str_body(out, key);
    out.extend_from_slice(b"\":");
    if requests.len() != 1 {
        out.push(b'[');
    }
    for (i, r) in requests.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        render_object(out, format_name(r.format), &r.metrics, error_reason(i))?;
        if r.duplicate {
            // A client's view of a request whose server's view is on the line: marked, not
            // dropped (a summary sets it aside).
            out.pop();
            out.extend_from_slice(b",\"duplicate\":true}");
        }
    }
    if requests.len() != 1 {
        out.push(b']');
    }
    Ok(())
}

/// Renders one request's metrics object `{"format":...,...}` (members, in this order: `format`, `ttft_ms`, `tpot_ms`,
/// `e2e_ms`, `queue_ms`, `prefill_ms`, `decode_ms`, `input_tokens`, `cached_tokens`,
/// `output_tokens`, `cache`, `ttft_origin`, `outcome`, `error_reason` (why it failed, `null`
/// when it did not or the log does not say), and `nulls`: the reason for each null metric,
/// omitted when none is null).
///
/// # Errors
/// The writer's.
pub(crate) fn render_object(
    out: &mut Vec<u8>,
    format: &str,
    m: &Metrics,
    error_reason: Option<&str>,
) -> io::Result<()> {
    // This runs once per request: every fixed text is a padded constant copied in one move,
    // numbers are written in place, and `out` grows once per part.
    out.extend_from_slice(b"{\"format\":\"");
    write_json_str_body(out, format);
    out.push(b'"');
    let mut w = Room::open(out);
    for metric in Metric::ALL.into_iter().filter(|m| m.per_request()) {
        let sample = metric.sample(m);
        if metric.only_where_logged() && sample == Sample::Ns(Err(NullReason::NotLogged)) {
            continue;
        }
        w.piece(&MEMBER[metric.index()]);
        match sample {
            Sample::Ns(Ok(ns)) => w.fixed3(ns / 1e6),
            Sample::Tokens(Some(n)) => w.digits(n),
            _ => w.piece(&NULL),
        }
    }
    w.piece(&CACHE[m.cache.map_or(CacheClass::ALL.len(), |c| c as usize)]);
    w.piece(&ORIGIN[m.ttft_origin.map_or(Origin::ALL.len(), |o| o as usize)]);
    w.piece(&OUTCOME[m.outcome as usize]);
    w.piece(&ERROR_REASON);
    w.close();
    match error_reason {
        Some(r) => {
            out.push(b'"');
            write_json_str_body(out, r);
            out.push(b'"');
        }
        None => out.extend_from_slice(b"null"),
    }
    // The reason for each null duration (a missing count needs none: it is not logged).
    let mut w = Room::open(out);
    let mut nulls = 0;
    for metric in Metric::ALL.into_iter().filter(|m| m.per_request()) {
        if let Sample::Ns(Err(r)) = metric.sample(m) {
            if metric.only_where_logged() && r == NullReason::NotLogged {
                continue;
            }
            w.piece(if nulls == 0 {
                &FIRST_NULL[metric.index()]
            } else {
                &MEMBER[metric.index()]
            });
            w.piece(&REASON[r as usize]);
            nulls += 1;
        }
    }
    if nulls > 0 {
        w.piece(&CLOSE);
    }
    w.piece(&CLOSE);
    w.close();
    Ok(())
}

/// A fixed text of at most [`PIECE`] bytes, padded to that length so that it is copied in one
/// fixed-size move and the write position then advances by its length.
struct Piece {
    bytes: [u8; PIECE],
    len: usize,
}

/// The padded length of a [`Piece`].
const PIECE: usize = 32;

/// The concatenation of `parts` as a [`Piece`] (a build error when longer than [`PIECE`]).
const fn piece(parts: &[&str]) -> Piece {
    let mut bytes = [0u8; PIECE];
    let mut len = 0;
    let mut p = 0;
    while p < parts.len() {
        let b = parts[p].as_bytes();
        let mut i = 0;
        while i < b.len() {
            bytes[len] = b[i];
            len += 1;
            i += 1;
        }
        p += 1;
    }
    Piece { bytes, len }
}

const NULL: Piece = piece(&["null"]);
const CLOSE: Piece = piece(&["}"]);
const ERROR_REASON: Piece = piece(&[",\"error_reason\":"]);

/// A table of `$n` pieces, the piece at `$i` given by `$piece`.
macro_rules! pieces {
    ($n:expr, |$i:ident| $piece:expr) => {{
        const EMPTY: Piece = piece(&[]);
        let mut table = [EMPTY; $n];
        let mut $i = 0;
        while $i < $n {
            table[$i] = $piece;
            $i += 1;
        }
        table
    }};
}

/// `,"NAME":` for each metric, by [`Metric::index`].
const MEMBER: [Piece; Metric::COUNT] = pieces!(Metric::COUNT, |i| piece(&[
    ",\"",
    Metric::ALL[i].json_name(),
    "\":"
]));

/// `,"nulls":{"NAME":` for each metric, by [`Metric::index`]: the first null's.
const FIRST_NULL: [Piece; Metric::COUNT] = pieces!(Metric::COUNT, |i| piece(&[
    ",\"nulls\":{\"",
    Metric::ALL[i].json_name(),
    "\":"
]));

/// `"REASON"` for each null reason, by its place in [`NullReason::ALL`].
const REASON: [Piece; NullReason::ALL.len()] = pieces!(NullReason::ALL.len(), |i| piece(&[
    "\"",
    NullReason::ALL[i].as_str(),
    "\""
]));

/// `,"cache":"CLASS"` for each cache class by its place in [`CacheClass::ALL`], then
/// `,"cache":null`.
const CACHE: [Piece; CacheClass::ALL.len() + 1] = pieces!(CacheClass::ALL.len() + 1, |i| {
    if i < CacheClass::ALL.len() {
        piece(&[",\"cache\":\"", CacheClass::ALL[i].as_str(), "\""])
    } else {
        piece(&[",\"cache\":null"])
    }
});

/// `,"ttft_origin":"ORIGIN"` for each origin by its place in [`Origin::ALL`], then
/// `,"ttft_origin":null`.
const ORIGIN: [Piece; Origin::ALL.len() + 1] = pieces!(Origin::ALL.len() + 1, |i| {
    if i < Origin::ALL.len() {
        piece(&[",\"ttft_origin\":\"", Origin::ALL[i].as_str(), "\""])
    } else {
        piece(&[",\"ttft_origin\":null"])
    }
});

/// `,"outcome":"OUTCOME"` for each outcome by its place in [`Outcome::ALL`].
const OUTCOME: [Piece; Outcome::ALL.len()] = pieces!(Outcome::ALL.len(), |i| piece(&[
    ",\"outcome\":\"",
    Outcome::ALL[i].as_str(),
    "\""
]));

/// The two decimal digits of each number below 100.
const PAIRS: [[u8; 2]; 100] = {
    let mut t = [[0u8; 2]; 100];
    let mut i = 0;
    while i < 100 {
        t[i] = [b'0' + (i / 10) as u8, b'0' + (i % 10) as u8];
        i += 1;
    }
    t
};

/// Room at the end of a vector for one part of a metrics object (at most [`ROOM`] bytes, the
/// last [`PIECE`] of them only ever padding), written in place; [`Room::close`] keeps what was
/// written.
struct Room<'a> {
    out: &'a mut Vec<u8>,
    at: usize,
}

/// The bytes a [`Room`] opens: the longer of the two parts of a metrics object (the members
/// up to `error_reason`, each number at most [`NUMBER`] bytes; or the nulls), plus a padded
/// piece.
const ROOM: usize = {
    let values = Metric::COUNT * (longest(&MEMBER) + NUMBER)
        + longest(&CACHE)
        + longest(&ORIGIN)
        + longest(&OUTCOME)
        + ERROR_REASON.len;
    let nulls = longest(&FIRST_NULL) + Metric::COUNT * (longest(&MEMBER) + longest(&REASON)) + 2;
    (if values > nulls { values } else { nulls }) + PIECE
};

/// The longest number a [`Room`] writes: a token count (20 digits) or a duration in ms (a
/// sign, at most 16 digits, a point and 3 decimals).
const NUMBER: usize = 21;

/// The length of the longest of `pieces`.
const fn longest(pieces: &[Piece]) -> usize {
    let mut max = 0;
    let mut i = 0;
    while i < pieces.len() {
        if pieces[i].len > max {
            max = pieces[i].len;
        }
        i += 1;
    }
    max
}

impl<'a> Room<'a> {
    fn open(out: &'a mut Vec<u8>) -> Room<'a> {
        let at = out.len();
        out.resize(at + ROOM, 0);
        Room { out, at }
    }

    #[inline(always)]
    fn piece(&mut self, p: &Piece) {
        self.out[self.at..self.at + PIECE].copy_from_slice(&p.bytes);
        self.at += p.len;
    }

    /// The decimal digits of `n`, two at a time.
    #[inline(always)]
    fn digits(&mut self, mut n: u64) {
        let len = n.checked_ilog10().unwrap_or(0) as usize + 1;
        let digits = &mut self.out[self.at..self.at + len];
        let mut end = len;
        while n >= 100 {
            digits[end - 2..end].copy_from_slice(&PAIRS[(n % 100) as usize]);
            n /= 100;
            end -= 2;
        }
        if n >= 10 {
            digits[..2].copy_from_slice(&PAIRS[n as usize]);
        } else {
            digits[0] = b'0' + n as u8;
        }
        self.at += len;
    }

    /// `v` as [`crate::number::write_fixed3`] writes it.
    #[inline(always)]
    fn fixed3(&mut self, v: f64) {
        let thousandths = crate::number::round(v * 1000.0);
        if !thousandths.is_finite() || thousandths.abs() >= 9.0e18 {
            self.piece(&NULL);
            return;
        }
        let t = thousandths as i64;
        if t < 0 {
            self.out[self.at] = b'-';
            self.at += 1;
        }
        let t = t.unsigned_abs();
        let (int, frac) = (t / 1000, (t % 1000) as usize);
        self.digits(int);
        // All three decimals are written; trailing zeros past the first are then left out.
        let [tens, units] = PAIRS[frac % 100];
        self.out[self.at..self.at + 4].copy_from_slice(&[
            b'.',
            b'0' + (frac / 100) as u8,
            tens,
            units,
        ]);
        self.at += if frac % 10 != 0 {
            4
        } else if frac % 100 != 0 {
            3
        } else {
            2
        };
    }

    fn close(self) {
        self.out.truncate(self.at);
    }
}

/// Writes `content` with `object` (already rendered, e.g. by [`render_all`]) spliced in before its
/// closing brace, with a comma unless the object is empty. Returns `false`, writing nothing,
/// when `content` does not end in `}`.
///
/// # Errors
/// The writer's.
pub(crate) fn splice(out: &mut impl Write, content: &[u8], object: &[u8]) -> io::Result<bool> {
    let Some(close) = closing_brace(content) else {
        return Ok(false);
    };
    out.write_all(&content[..close])?;
    if !is_empty_object(content, close) {
        out.write_all(b",")?;
    }
    out.write_all(object)?;
    out.write_all(&content[close..])?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tables of texts are indexed by each enum's discriminant: it must be its place in
    /// its `ALL`.
    #[test]
    fn every_table_index_is_the_place_in_all() {
        for (i, r) in NullReason::ALL.into_iter().enumerate() {
            assert_eq!(r as usize, i);
            assert_eq!(
                &REASON[i].bytes[..REASON[i].len],
                format!("\"{}\"", r.as_str()).as_bytes()
            );
        }
        for (i, c) in CacheClass::ALL.into_iter().enumerate() {
            assert_eq!(c as usize, i);
        }
        for (i, o) in Origin::ALL.into_iter().enumerate() {
            assert_eq!(o as usize, i);
        }
        for (i, o) in Outcome::ALL.into_iter().enumerate() {
            assert_eq!(o as usize, i);
        }
        for (i, m) in Metric::ALL.into_iter().enumerate() {
            assert_eq!(m.index(), i);
        }
    }

    /// Numbers written in place against the writers of `number.rs`.
    #[test]
    fn numbers_in_place_match_the_writers() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut out = Vec::new();
        for i in 0..200_000 {
            crate::number::xorshift(&mut x);
            let ns = match i % 5 {
                0 => (x % 10_000_000_000) as f64,
                1 => -((x % 100_000_000) as f64),
                2 => f64::from_bits(x) % 1e18,
                3 => (x % 1_000_000) as f64 / 7.0,
                _ => f64::from_bits(x),
            };
            let mut want = Vec::new();
            crate::number::write_ms(&mut want, ns).unwrap();
            out.clear();
            let mut w = Room::open(&mut out);
            w.fixed3(ns / 1e6);
            w.close();
            assert_eq!(out, want, "{ns}");
            let n = if i % 3 == 0 { x } else { x % 100_000 };
            let want = crate::number::u64_digits(n, &mut [0; 20]).to_vec();
            out.clear();
            let mut w = Room::open(&mut out);
            w.digits(n);
            w.close();
            assert_eq!(out, want, "{n}");
        }
    }

    #[test]
    fn splice_keeps_every_original_byte() {
        let mut out = Vec::new();
        assert!(splice(&mut out, br#"{"a":1} "#, b"\"k\":{}").unwrap());
        assert_eq!(out, br#"{"a":1,"k":{}} "#);
        out.clear();
        assert!(splice(&mut out, b"{ }", b"\"k\":{}").unwrap());
        assert_eq!(out, b"{ \"k\":{}}");
        out.clear();
        assert!(!splice(&mut out, b"{\"a\":1", b"x").unwrap());
    }
}
