//! The fast path of [`PathSet::extract`]: a validating JSON scanner over one line, written for
//! this one job.
//!
//! It walks the line once, descends only into the objects the path trie names (and into the
//! arrays whose elements it names by index, `[0]` or `[-1]` for the last), and skips every
//! other value without building anything. Skipping still checks the JSON grammar byte for byte
//! (strings, escapes, numbers, literals, nesting), so it accepts and rejects exactly what the
//! serde_json reference path ([`PathSet::extract_reference`]) does; tests compare the two on
//! every testdata file, on generated logs and on random mutations of them.
//!
//! Speed comes from a few plain things. Strings are skipped a block at a time: 16 bytes tested
//! at once for `"`, `\` and control bytes with SSE2 on x86-64 (which every x86-64 CPU has), 8
//! bytes with the same test serde_json uses (SWAR) elsewhere. Runs of digits are skipped 8 at a
//! time. The text from one value to the next (`, "key": `) is compared, 32 bytes at once, with the
//! text the line before had at that place ([`Guess`]); a key that differs is found by hash. A
//! container skipped at a member is compared with the texts between the scalars of the one
//! skipped there before ([`Layout`]), and only its scalars are read when they all match. A whole
//! line is first compared the same way with the texts between the scalars of a few lines walked
//! before ([`template`]): when one fits, its slots are those scalars, and nothing is walked.
//! UTF-8 is validated once per line with `std::str::from_utf8`, and only when a string held a
//! byte above 0x7F: outside strings the grammar admits ASCII only. Positions travel as plain
//! `usize` return values and errors as a zero-sized marker (the details are kept aside), so the
//! hot loops stay in registers.
//!
//! Beyond RFC 8259 one thing is checked, as the reference does: the objects and arrays at trie
//! nodes (from the root object) nest at most 127 deep, counted afresh below a node that also
//! has a value of its own and in an array element read by index (the reference reads those
//! again from their raw text, with a deserializer of their own). Skipped values have no such
//! limit. What serde_json decodes more strictly than the grammar is not an error, as in the
//! reference's lenient walk: a number past `f64` is a value like any other, and a key holding
//! a lone UTF-16 surrogate escape matches no path.

use super::{Node, PathSet, ReadError, invalid_utf8};

mod template;

/// The line is invalid; [`Scanner::why`] says where and why.
struct Stop;

/// What [`Scanner::member_head`] found.
enum Head {
    /// A member whose key names this child (or none), and the index of its value.
    Member(Option<usize>, usize),
    /// The object's end, and the index after its `}`.
    Closed(usize),
}

type Pos = Result<usize, Stop>;

#[cfg(not(target_arch = "x86_64"))]
const ONES: u64 = u64::MAX / 255;
#[cfg(not(target_arch = "x86_64"))]
const HIGH: u64 = ONES << 7;

/// serde_json's recursion limit as the reference meets it: the root object and the objects
/// and arrays visited at trie nodes below it count; skipped values do not.
const DEPTH_LIMIT: u32 = 127;

#[inline(always)]
fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\n' | b'\t' | b'\r')
}

#[inline(always)]
fn is_hex(c: u8) -> bool {
    c.is_ascii_hexdigit()
}

/// Tests the block of a string at `i`: returns the offset of its first `"`, `\` or control
/// byte ([`BLOCK`] when there is none), and a word that is nonzero when some byte is above
/// 0x7F. `None` when fewer than a block's bytes are left.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn block(b: &[u8], i: usize) -> Option<(usize, u32)> {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    let chunk: &[u8; 16] = b.get(i..i + 16)?.try_into().ok()?;
    // SAFETY: SSE2 is part of the x86-64 baseline, so these intrinsics are always available;
    // the load reads the 16 bytes of `chunk` and needs no alignment.
    let (special, any) = unsafe {
        let v = _mm_loadu_si128(chunk.as_ptr().cast());
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        let control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
        let special = _mm_or_si128(_mm_or_si128(quote, backslash), control);
        (
            _mm_movemask_epi8(special) as u32,
            _mm_movemask_epi8(v) as u32,
        )
    };
    Some(((special | 1 << BLOCK).trailing_zeros() as usize, any))
}

#[cfg(target_arch = "x86_64")]
const BLOCK: usize = 16;

/// The portable [`block`]: 8 bytes as one word (serde_json's test).
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn block(b: &[u8], i: usize) -> Option<(usize, u32)> {
    let w = u64::from_le_bytes(b.get(i..i + 8)?.try_into().ok()?);
    let q = w ^ (ONES * b'"' as u64);
    let s = w ^ (ONES * b'\\' as u64);
    let m = ((q.wrapping_sub(ONES) & !q)
        | (s.wrapping_sub(ONES) & !s)
        | (w.wrapping_sub(ONES * 0x20) & !w))
        & HIGH;
    Some(((m.trailing_zeros() / 8) as usize, (w & HIGH != 0) as u32))
}

#[cfg(not(target_arch = "x86_64"))]
const BLOCK: usize = 8;

/// The end of the number at `i` when it is a common one (`-?(0|[1-9][0-9]*)(\.[0-9]+)?`, its
/// integer part within the 16 bytes from `i`, no exponent): one test of the 16 bytes for
/// digits, and a fraction that goes on past them read a word at a time. `None` for any other
/// (a longer integer part, an exponent, or not a number), which [`Scanner::number`] then
/// reads as before.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn short_number(b: &[u8], i: usize) -> Option<usize> {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_set1_epi8,
        _mm_sub_epi8,
    };
    let chunk: &[u8; 16] = b.get(i..i + 16)?.try_into().ok()?;
    // SAFETY: SSE2 is part of the x86-64 baseline; the load reads the 16 bytes of `chunk` and
    // needs no alignment.
    let digit = unsafe {
        let v = _mm_sub_epi8(
            _mm_loadu_si128(chunk.as_ptr().cast()),
            _mm_set1_epi8(b'0' as i8),
        );
        let nine = _mm_set1_epi8(9);
        _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(v, nine), v)) as u32
    };
    // The length of the run of digits from `j`.
    let run = |j: usize| (!(digit >> j)).trailing_zeros() as usize;
    let mut j = usize::from(chunk[0] == b'-');
    let whole = run(j);
    if whole == 0 || (whole > 1 && chunk[j] == b'0') {
        return None;
    }
    j += whole;
    if j == 16 {
        return None;
    }
    let mut end = i + j;
    if chunk[j] == b'.' {
        let fraction = run(j + 1);
        if fraction == 0 {
            return None;
        }
        end += 1 + fraction;
        // A fraction that runs to the end of the 16 bytes (an epoch time in microseconds)
        // goes on a word at a time.
        if end - i == 16 {
            end = digits(b, end);
        }
    }
    match b.get(end) {
        Some(&c) if c | 0x20 == b'e' => None,
        _ => Some(end),
    }
}

/// The portable [`short_number`]: none, every number is read byte by byte.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn short_number(_: &[u8], _: usize) -> Option<usize> {
    None
}

/// The index of the first byte at or after `i` that is not an ASCII digit.
#[inline(always)]
fn digits(b: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = b.get(i..i + 8) {
        let n =
            crate::number::leading_digits(u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8])));
        if n < 8 {
            return i + n;
        }
        i += 8;
    }
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    i
}

/// The members of an object at a trie node that get a guess: the first 32.
const PREDICTED_MEMBERS: usize = 32;

/// The longest text a [`Guess`] holds.
const GUESS_BYTES: usize = 32;

/// The guess of one member of an object at a trie node, from the line before: the lines of one
/// log name their keys in one order and write the same blanks, so the text from the end of the
/// k-th value (or the object's `{`) to the start of the next value (`, "key": `) is most often
/// the one the line before had there. A line that has that text at that place needs no key
/// read, no table probe and no separator check: the text was checked once, when it was learnt,
/// and holds no escape and no byte above 0x7F (which would call for the line's UTF-8 check).
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(16))]
pub(super) struct Guess {
    /// The text, zero-padded.
    text: [u8; GUESS_BYTES],
    /// One bit per byte of the text (0: no guess).
    want: u32,
    /// The text's length.
    len: u32,
    /// The child the key names, plus one (0: none).
    child: u32,
}

/// The most pieces a [`Layout`] holds (a text longer than a [`Guess`] holds takes several).
const LAYOUT_PIECES: usize = 64;

/// In a [`Layout`], the [`Guess::child`] of a piece the next one continues (no scalar between
/// them).
const CONTINUED: u32 = 1;

/// How many containers a [`Layout`] walks without learning after one it could not learn.
const LAYOUT_REST: u8 = 15;

/// The layout of a skipped object or array, from the containers skipped at the same place
/// before: the texts between its scalars (`[{"role": `, `, "content": `, `}, {"role": `, ...,
/// `}]`), each as a [`Guess`]. A container that has each of these texts in turn, with a valid
/// scalar (string, number, literal) between each two, has the grammar the one learnt had, and
/// is skipped without walking its structure. The places: a member with a guess, and an array
/// at a trie node (its elements, each compared with the one before, when it names some).
#[derive(Debug, Default, Clone)]
pub(super) struct Layout {
    pieces: Vec<Guess>,
    /// Whether the last two containers read at this place had the same pieces: only then is
    /// the next one compared with them.
    steady: bool,
    /// Containers still to walk without learning, after one that had no layout.
    rest: u8,
    /// The steady layout this place had before `pieces` (empty when none): tried when
    /// `pieces` does not fit, so that a log whose lines take two shapes (a success and an
    /// error, a span with and one without some attribute) skips both without learning again.
    other: Vec<Guess>,
}

impl Guess {
    /// The guess of `text` (at most [`GUESS_BYTES`] long), naming `child`.
    #[inline]
    fn learn(text: &[u8], child: Option<usize>) -> Guess {
        let mut g = Guess {
            len: text.len() as u32,
            want: ((1u64 << text.len()) - 1) as u32,
            child: child.map_or(0, |c| c as u32 + 1),
            ..Guess::default()
        };
        g.text[..text.len()].copy_from_slice(text);
        g
    }
}

/// Whether two [`Layout`]s' pieces are the same texts, naming the same children.
fn same_pieces(a: &[Guess], b: &[Guess]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(a, b)| a.want == b.want && a.text == b.text && a.child == b.child)
}

/// Guesses of the members of a line from the line before ([`Guess`], [`Layout`]), for one
/// [`PathSet`] shape.
#[derive(Debug, Default, Clone)]
pub(super) struct Predictions {
    shape: u64,
    /// `PREDICTED_MEMBERS` guesses per trie node with children.
    guesses: Vec<Guess>,
    /// The layouts of the containers skipped at the same places (reused): one per guess, then
    /// one per trie node with children (an array there, or its elements).
    layouts: Vec<Layout>,
    /// The pieces of the container being learnt (reused).
    learning: Vec<Guess>,
    /// The shapes of whole lines ([`template::Template`]).
    templates: template::Templates,
    /// The slots a walk wrote, for [`template::Templates::learn`] (reused).
    trace: Vec<(u32, u32, u32)>,
}

impl Predictions {
    /// Forgets the guesses made for another shape of trie than `set`'s.
    #[inline]
    pub(super) fn fit(&mut self, set: &PathSet) {
        if self.shape != set.shape {
            self.shape = set.shape;
            self.guesses.clear();
            self.guesses
                .resize(set.inner * PREDICTED_MEMBERS, Guess::default());
            self.layouts.clear();
            self.layouts
                .resize(set.inner * (PREDICTED_MEMBERS + 1), Layout::default());
            self.templates.clear();
        }
    }
}

/// Whether `b[i..]` starts with the text of `g` (false when `g` holds none).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn starts_with(b: &[u8], i: usize, g: &Guess) -> bool {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_load_si128, _mm_loadu_si128, _mm_movemask_epi8};
    match b.get(i..i + GUESS_BYTES) {
        // SAFETY: SSE2 is part of the x86-64 baseline; the unaligned loads read the 32 bytes of
        // `w`, the aligned ones the 32 bytes of `g.text` (`Guess` is 16-byte aligned and starts
        // with it).
        Some(w) => unsafe {
            let t = g.text.as_ptr();
            let lo = _mm_cmpeq_epi8(_mm_loadu_si128(w.as_ptr().cast()), _mm_load_si128(t.cast()));
            let hi = _mm_cmpeq_epi8(
                _mm_loadu_si128(w.as_ptr().add(16).cast()),
                _mm_load_si128(t.add(16).cast()),
            );
            let eq = _mm_movemask_epi8(lo) as u32 | (_mm_movemask_epi8(hi) as u32) << 16;
            g.want != 0 && eq & g.want == g.want
        },
        None => g.want != 0 && b.get(i..i + g.len as usize) == Some(&g.text[..g.len as usize]),
    }
}

/// The portable [`starts_with`].
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn starts_with(b: &[u8], i: usize, g: &Guess) -> bool {
    g.want != 0 && b.get(i..i + g.len as usize) == Some(&g.text[..g.len as usize])
}

struct Scanner<'a, 's> {
    b: &'a [u8],
    /// Nonzero when some string held a byte above 0x7F: the line's UTF-8 must be checked.
    high: u32,
    /// Where and why the line is invalid, once a [`Stop`] was returned.
    why: (usize, &'static str),
    /// Unescaped key text (reused).
    key: &'s mut Vec<u8>,
    /// Open containers beyond the 128 kept in a register while skipping (reused).
    spill: &'s mut Vec<u128>,
    out: &'s mut [Option<(u32, u32)>],
    /// The slots written to `out`.
    written: &'s mut Vec<u32>,
    guesses: &'s mut [Guess],
    layouts: &'s mut [Layout],
    /// The pieces of the container being learnt, while they fit a [`Layout`].
    learning: &'s mut Vec<Guess>,
    learnable: bool,
    /// Where the piece being learnt starts.
    piece_from: usize,
    /// The slots written (slot, start, end), when the line is to teach a template.
    trace: Option<&'s mut Vec<(u32, u32, u32)>>,
}

/// Runs the scanner over `line`; see [`PathSet::extract`] for the contract.
pub(super) fn extract(
    set: &PathSet,
    line: &[u8],
    out: &mut [Option<(u32, u32)>],
    written: &mut Vec<u32>,
    key: &mut Vec<u8>,
    spill: &mut Vec<u128>,
    predictions: &mut Predictions,
) -> Result<(), ReadError> {
    let Predictions {
        guesses,
        layouts,
        learning,
        templates,
        trace,
        ..
    } = predictions;
    let mut s = Scanner {
        b: line,
        high: 0,
        why: (0, ""),
        key,
        spill,
        out,
        written,
        guesses,
        layouts,
        learning,
        learnable: false,
        piece_from: 0,
        trace: None,
    };
    let i = s.ws(0);
    if line.get(i) != Some(&b'{') {
        return Err(ReadError::NotAnObject);
    }
    let learn = templates.ready();
    if learn && s.by_template(templates) {
        return if s.high == 0 { Ok(()) } else { utf8(line) };
    }
    if learn {
        trace.clear();
        s.trace = Some(trace);
    }
    let end = s.object(set, 0, i + 1, 1).and_then(|i| {
        let i = s.ws(i);
        if i < line.len() {
            Err(s.stop(i, "trailing characters", ""))
        } else {
            Ok(i)
        }
    });
    let read = match end {
        Ok(_) if s.high == 0 => Ok(()),
        Ok(_) => utf8(line),
        // The reference checks UTF-8 first: so does the message, on this cold path.
        Err(Stop) => utf8(line).and(Err(invalid(s.why.0, s.why.1))),
    };
    if learn && read.is_ok() {
        templates.learn(line, trace);
    }
    read
}

/// The line's UTF-8 check, worded as [`PathSet::extract_reference`] words it.
fn utf8(line: &[u8]) -> Result<(), ReadError> {
    std::str::from_utf8(line)
        .map(|_| ())
        .map_err(|e| invalid_utf8(e.valid_up_to()))
}

fn invalid(at: usize, what: &str) -> ReadError {
    ReadError::Invalid(format!("{what} at byte {}", at + 1))
}

impl Scanner<'_, '_> {
    #[inline(always)]
    fn at(&self, i: usize) -> u8 {
        self.b.get(i).copied().unwrap_or(0)
    }

    /// The index of the first byte at or after `i` that is not whitespace. No blank, and one
    /// space (`", "`, `": "`, as Python's `json.dumps` writes), are the common cases.
    #[inline(always)]
    fn ws(&self, i: usize) -> usize {
        match self.b.get(i) {
            Some(&c) if c > b' ' => i,
            Some(b' ') if self.b.get(i + 1).is_some_and(|&c| c > b' ') => i + 1,
            _ => self.ws_run(i),
        }
    }

    /// The first byte at or after `i` that is not whitespace, and its index: where a `:`,
    /// `,` or closing bracket is expected, most often right at `i`.
    #[inline(always)]
    fn next_byte(&self, i: usize) -> (usize, u8) {
        let c = self.at(i);
        if is_ws(c) {
            let i = self.ws_run(i);
            (i, self.at(i))
        } else {
            (i, c)
        }
    }

    /// [`Scanner::ws`] over any run of whitespace.
    #[inline(never)]
    fn ws_run(&self, mut i: usize) -> usize {
        while self.b.get(i).is_some_and(|&c| is_ws(c)) {
            i += 1;
        }
        i
    }

    /// Records why the line is invalid: `what` at `i`, or `eof` when `i` is past the end.
    #[cold]
    #[inline(never)]
    fn stop(&mut self, i: usize, what: &'static str, eof: &'static str) -> Stop {
        let past = i >= self.b.len();
        self.why = (
            i.min(self.b.len()),
            if past && !eof.is_empty() { eof } else { what },
        );
        Stop
    }

    /// Skips a string from just after its opening quote to just after its closing one.
    /// Escapes are checked as serde_json's `ignore_str` does (`\u` needs four hex digits;
    /// surrogates are not paired here). The flag says whether there were escapes.
    #[inline(always)]
    fn string(&mut self, mut i: usize) -> Result<(usize, bool), Stop> {
        let b = self.b;
        let mut escaped = false;
        let mut high = 0;
        loop {
            // The next special byte: a block at a time, byte by byte when fewer than a
            // block's bytes are left.
            let c = loop {
                if let Some((offset, h)) = block(b, i) {
                    high |= h;
                    i += offset;
                    if offset < BLOCK {
                        break b[i];
                    }
                    continue;
                }
                match b.get(i) {
                    None => return Err(self.stop(i, "EOF while parsing a string", "")),
                    Some(&c) if c == b'"' || c == b'\\' || c < 0x20 => break c,
                    Some(&c) => {
                        high |= (c >> 7) as u32;
                        i += 1;
                    }
                }
            };
            if c == b'"' {
                self.high |= high;
                return Ok((i + 1, escaped));
            }
            if c != b'\\' {
                return Err(self.stop(
                    i,
                    "control character (\\u0000-\\u001F) found while parsing a string",
                    "",
                ));
            }
            escaped = true;
            i = self.escape(i)?;
        }
    }

    /// Checks the escape at `i` (a backslash); returns the index after it.
    #[inline(never)]
    fn escape(&mut self, i: usize) -> Pos {
        let b = self.b;
        match b.get(i + 1) {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(i + 2),
            Some(b'u') => match b.get(i + 2..i + 6) {
                Some(h) if h.iter().all(|&c| is_hex(c)) => Ok(i + 6),
                Some(_) => Err(self.stop(i + 6, "invalid escape", "")),
                None => Err(self.stop(b.len(), "EOF while parsing a string", "")),
            },
            Some(_) => Err(self.stop(i + 1, "invalid escape", "")),
            None => Err(self.stop(i + 1, "EOF while parsing a string", "")),
        }
    }

    /// Decodes the escapes of the string text `b[start..end]` (checked by [`Scanner::string`])
    /// into `self.key`; `false` when it holds a lone surrogate (`self.key` is then partial).
    #[inline(never)]
    fn unescape(&mut self, start: usize, end: usize) -> bool {
        let raw = &self.b[start..end];
        self.key.clear();
        let mut i = 0;
        while i < raw.len() {
            let c = raw[i];
            if c != b'\\' {
                self.key.push(c);
                i += 1;
                continue;
            }
            let e = raw[i + 1];
            i += 2;
            let plain = match e {
                b'"' => b'"',
                b'\\' => b'\\',
                b'/' => b'/',
                b'b' => 8,
                b'f' => 12,
                b'n' => b'\n',
                b'r' => b'\r',
                b't' => b'\t',
                _ => {
                    // `\u` and four hex digits, already checked by `string`.
                    let hex4 = |at: usize| {
                        raw.get(at..at + 4).map(|h| {
                            h.iter().fold(0u32, |n, &c| {
                                (n << 4) | (c as char).to_digit(16).unwrap_or(0)
                            })
                        })
                    };
                    let n = hex4(i).unwrap_or(0);
                    i += 4;
                    let cp = if (0xDC00..=0xDFFF).contains(&n) {
                        return false;
                    } else if (0xD800..=0xDBFF).contains(&n) {
                        if raw.get(i..i + 2) != Some(b"\\u") {
                            return false;
                        }
                        let n2 = hex4(i + 2).unwrap_or(0);
                        i += 6;
                        if !(0xDC00..=0xDFFF).contains(&n2) {
                            return false;
                        }
                        0x10000 + ((n - 0xD800) << 10) + (n2 - 0xDC00)
                    } else {
                        n
                    };
                    let ch = char::from_u32(cp).unwrap_or(char::REPLACEMENT_CHARACTER);
                    let mut buf = [0; 4];
                    self.key
                        .extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                    continue;
                }
            };
            self.key.push(plain);
        }
        true
    }

    #[inline(always)]
    fn literal(&mut self, i: usize, word: &'static [u8]) -> Pos {
        if self.b.get(i..i + word.len()) == Some(word) {
            return Ok(i + word.len());
        }
        self.bad_literal(i, word)
    }

    #[cold]
    fn bad_literal(&mut self, i: usize, word: &'static [u8]) -> Pos {
        // Point at the first differing byte, as serde_json does.
        let mut j = i;
        while j - i < word.len() && self.b.get(j) == Some(&word[j - i]) {
            j += 1;
        }
        Err(self.stop(j, "expected ident", "EOF while parsing a value"))
    }

    /// Checks a number's grammar (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`).
    #[inline(always)]
    fn number(&mut self, mut i: usize) -> Pos {
        if let Some(end) = short_number(self.b, i) {
            return Ok(end);
        }
        if self.at(i) == b'-' {
            i += 1;
        }
        match self.at(i) {
            b'0' => {
                i += 1;
                if self.at(i).is_ascii_digit() {
                    return Err(self.stop(i, "invalid number", ""));
                }
            }
            b'1'..=b'9' => i = digits(self.b, i + 1),
            _ => return Err(self.stop(i, "invalid number", "EOF while parsing a value")),
        }
        if self.at(i) == b'.' {
            i += 1;
            if !self.at(i).is_ascii_digit() {
                return Err(self.stop(i, "invalid number", "EOF while parsing a value"));
            }
            i = digits(self.b, i + 1);
        }
        if self.at(i) | 0x20 == b'e' {
            i += 1;
            if matches!(self.at(i), b'+' | b'-') {
                i += 1;
            }
            if !self.at(i).is_ascii_digit() {
                return Err(self.stop(i, "invalid number", "EOF while parsing a value"));
            }
            i = digits(self.b, i + 1);
        }
        Ok(i)
    }

    /// Skips a scalar (string, number, literal) starting at `i`; `None` when `i` is at a
    /// bracket instead.
    #[inline(always)]
    fn scalar(&mut self, i: usize) -> Option<Pos> {
        Some(match self.at(i) {
            b'"' => self.string(i + 1).map(|(i, _)| i),
            b'-' | b'0'..=b'9' => self.number(i),
            b'n' => self.literal(i, b"null"),
            b't' => self.literal(i, b"true"),
            b'f' => self.literal(i, b"false"),
            b'{' | b'[' => return None,
            _ => Err(self.stop(i, "expected value", "EOF while parsing a value")),
        })
    }

    /// Skips one value at `i` (whitespace before it already skipped), checking its grammar as
    /// serde_json's `ignore_value` does.
    #[inline(always)]
    fn skip_value(&mut self, i: usize) -> Pos {
        self.skip(i, None)
    }

    /// [`Scanner::skip_value`], a container by the [`Layout`] at `layout` when there is one
    /// (walked, and its layout learnt, when it does not have it).
    #[inline(always)]
    fn skip(&mut self, i: usize, layout: Option<usize>) -> Pos {
        match self.scalar(i) {
            Some(r) => r,
            None => {
                // Empty ones (`"request_tags": []`) are common and need no stack.
                let close = if self.at(i) == b'[' { b']' } else { b'}' };
                let j = self.ws(i + 1);
                if self.at(j) == close {
                    return Ok(j + 1);
                }
                match layout {
                    Some(k) => self.skip_laid_out(k, i),
                    None => self.skip_container::<false>(i),
                }
            }
        }
    }

    /// Skips an object or array of any depth. Open containers are a bit stack (1 = object):
    /// 128 levels in a register, deeper ones spilled to a reused vector. `LEARN`: also learns
    /// the pieces of its [`Layout`] but the last ([`Scanner::piece`]).
    #[inline(never)]
    fn skip_container<const LEARN: bool>(&mut self, mut i: usize) -> Pos {
        let mut stack: u128 = 0;
        let mut depth: u32 = 0;
        self.spill.clear();
        'open: loop {
            // At an opening bracket.
            let is_obj = self.at(i) == b'{';
            if depth > 0 && depth.is_multiple_of(128) {
                self.spill.push(stack);
                stack = 0;
            }
            stack = (stack << 1) | is_obj as u128;
            depth += 1;
            i = self.ws(i + 1);
            if self.at(i) == if is_obj { b'}' } else { b']' } {
                self.pop(&mut stack, &mut depth);
                match self.after_value(i + 1, &mut stack, &mut depth)? {
                    (i, true) => return Ok(i),
                    (next, false) => i = next,
                }
            }
            // At a member (object) or an element (array).
            loop {
                if stack & 1 == 1 {
                    i = self.key_colon(i)?;
                }
                let at = i;
                i = match self.scalar(i) {
                    Some(r) => r?,
                    None => continue 'open,
                };
                if LEARN {
                    self.piece(at);
                    self.piece_from = i;
                }
                match self.after_value(i, &mut stack, &mut depth)? {
                    (i, true) => return Ok(i),
                    (next, false) => i = next,
                }
            }
        }
    }

    #[inline(always)]
    fn pop(&mut self, stack: &mut u128, depth: &mut u32) {
        *stack >>= 1;
        *depth -= 1;
        if *depth > 0 && depth.is_multiple_of(128) {
            *stack = self.spill.pop().unwrap_or(0);
        }
    }

    /// In an object being skipped, at a member: its key and colon. Returns the index of the
    /// value.
    #[inline(always)]
    fn key_colon(&mut self, i: usize) -> Pos {
        if self.at(i) != b'"' {
            return Err(self.stop(i, "key must be a string", "EOF while parsing an object"));
        }
        let (i, _) = self.string(i + 1)?;
        let (i, c) = self.next_byte(i);
        if c != b':' {
            return Err(self.stop(i, "expected `:`", "EOF while parsing an object"));
        }
        Ok(self.ws(i + 1))
    }

    /// After a value inside a skipped container: consumes a `,` (returning the index of the
    /// next member or element, and `false`) or closing brackets, popping them; `true` when
    /// the outermost one closed (the index is after it).
    #[inline(always)]
    fn after_value(
        &mut self,
        mut i: usize,
        stack: &mut u128,
        depth: &mut u32,
    ) -> Result<(usize, bool), Stop> {
        if *depth == 0 {
            return Ok((i, true));
        }
        loop {
            let c;
            (i, c) = self.next_byte(i);
            let obj = *stack & 1 == 1;
            match c {
                b',' => return Ok((self.ws(i + 1), false)),
                b'}' if obj => {}
                b']' if !obj => {}
                _ if obj => {
                    return Err(self.stop(i, "expected `,` or `}`", "EOF while parsing an object"));
                }
                _ => return Err(self.stop(i, "expected `,` or `]`", "EOF while parsing a list")),
            }
            i += 1;
            self.pop(stack, depth);
            if *depth == 0 {
                return Ok((i, true));
            }
        }
    }

    /// Reads the object whose `{` is just before `i`, at trie node `node`, `depth` levels
    /// down. Returns the index after its `}`.
    fn object(&mut self, set: &PathSet, node: usize, mut i: usize, depth: u32) -> Pos {
        let n = &set.nodes[node];
        let first = n.inner * PREDICTED_MEMBERS;
        let mut next = first;
        loop {
            // `i` is just after the `{` or after a member's value. This member's guesses are
            // at `k` when it is one of the first `PREDICTED_MEMBERS`.
            let k = next;
            next += 1;
            let guessed = (k < first + PREDICTED_MEMBERS).then_some(k);
            let guess = guessed.and_then(|k| self.guesses.get(k));
            let (child, at) = match guess.filter(|g| starts_with(self.b, i, g)) {
                Some(g) => (
                    g.child.checked_sub(1).map(|c| c as usize),
                    self.ws(i + g.len as usize),
                ),
                None => match self.member_head(n, i, k, first)? {
                    Head::Member(child, at) => (child, at),
                    Head::Closed(end) => return Ok(end),
                },
            };
            i = match child {
                None => self.skip(at, guessed)?,
                Some(c) => self.member(set, c, at, depth, guessed)?,
            };
        }
    }

    /// In the object at trie node `n`, just after its `{` (when `k` is `first`) or after its
    /// member `k - first - 1`'s value: reads the separator, the key and the colon, and learns
    /// the [`Guess`] of member `k - first` (its place in the guesses is `k`).
    #[inline(never)]
    fn member_head(&mut self, n: &Node, from: usize, k: usize, first: usize) -> Result<Head, Stop> {
        let mut i;
        if k == first {
            i = self.ws(from);
            if self.at(i) == b'}' {
                return Ok(Head::Closed(i + 1));
            }
        } else {
            let c;
            (i, c) = self.next_byte(from);
            match c {
                b',' => i = self.ws(i + 1),
                b'}' => return Ok(Head::Closed(i + 1)),
                _ => {
                    return Err(self.stop(i, "expected `,` or `}`", "EOF while parsing an object"));
                }
            }
        }
        if self.at(i) != b'"' {
            return Err(self.stop(i, "key must be a string", "EOF while parsing an object"));
        }
        let start = i + 1;
        let (after, escaped) = self.string(start)?;
        let end = after - 1;
        let child = if escaped {
            // A key with a lone surrogate is not UTF-8: it names no path.
            if self.unescape(start, end) {
                n.child(self.key, head8(self.key))
            } else {
                None
            }
        } else if n.table.is_empty() {
            None
        } else {
            n.child(&self.b[start..end], head8_at(self.b, start, end))
        };
        let c;
        (i, c) = self.next_byte(after);
        if c != b':' {
            return Err(self.stop(i, "expected `:`", "EOF while parsing an object"));
        }
        i = self.ws(i + 1);
        if k < first + PREDICTED_MEMBERS {
            let text = &self.b[from..i];
            if let Some(g) = self.guesses.get_mut(k) {
                *g = if !escaped && text.len() <= GUESS_BYTES && text.is_ascii() {
                    Guess::learn(text, child)
                } else {
                    Guess::default()
                };
            }
        }
        Ok(Head::Member(child, i))
    }

    /// Skips the non-empty container at `i` by the [`Layout`] at `k` when it has the one learnt
    /// there, else walks it (and learns its layout, unless the place rests).
    #[inline(always)]
    fn skip_laid_out(&mut self, k: usize, i: usize) -> Pos {
        if let Some(end) = self.skip_by_layout(k, i) {
            return Ok(end);
        }
        if let Some(layout) = self.layouts.get_mut(k)
            && layout.rest > 0
        {
            layout.rest -= 1;
            return self.skip_container::<false>(i);
        }
        self.skip_learning(k, i)
    }

    /// Skips the container at `i` by the [`Layout`] at `k`: its index after the container, or
    /// `None` when the container has neither that layout (when steady) nor the other one kept
    /// there (which then becomes the layout, steady).
    #[inline(never)]
    fn skip_by_layout(&mut self, k: usize, i: usize) -> Option<usize> {
        let layout = self.layouts.get(k)?;
        if layout.steady
            && let Some(end) = self.fits(k, false, i)
        {
            return Some(end);
        }
        self.skip_by_other(k, i)
    }

    /// [`Scanner::skip_by_layout`] by the other layout kept at `k`, which becomes the layout.
    #[cold]
    #[inline(never)]
    fn skip_by_other(&mut self, k: usize, i: usize) -> Option<usize> {
        let end = self.fits(k, true, i)?;
        let layout = &mut self.layouts[k];
        std::mem::swap(&mut layout.pieces, &mut layout.other);
        layout.steady = true;
        Some(end)
    }

    /// The index after the container at `i` when it has the layout at `k` (`other`: the
    /// other layout kept there): each piece of text in turn, with a valid scalar between each
    /// two. `None` when it does not (or the layout is empty).
    #[inline(always)]
    fn fits(&mut self, k: usize, other: bool, i: usize) -> Option<usize> {
        // The pieces are taken out of the layout while the scalars are read (two moves).
        let l = &mut self.layouts[k];
        let pieces = std::mem::take(if other { &mut l.other } else { &mut l.pieces });
        let end = self.fit_pieces(&pieces, i, |_, _| {});
        let l = &mut self.layouts[k];
        *(if other { &mut l.other } else { &mut l.pieces }) = pieces;
        end
    }

    /// The index after the last of `pieces` when `b[at..]` has each in turn, with a valid
    /// scalar after each but the last and those [`CONTINUED`]; `started(p, i)` is told where
    /// piece `p` starts. `None` when it does not (or there are no pieces).
    #[inline(always)]
    fn fit_pieces(
        &mut self,
        pieces: &[Guess],
        mut at: usize,
        mut started: impl FnMut(usize, usize),
    ) -> Option<usize> {
        let n = pieces.len();
        for (p, g) in pieces.iter().enumerate() {
            started(p, at);
            if !starts_with(self.b, at, g) {
                return None;
            }
            at += g.len as usize;
            if p + 1 == n {
                return Some(at);
            }
            if g.child == CONTINUED {
                continue;
            }
            at = match self.scalar(at) {
                Some(Ok(end)) => end,
                _ => return None,
            };
        }
        None
    }

    /// Skips the container at `i` (its grammar checked), learning its [`Layout`] at `k`.
    #[cold]
    #[inline(never)]
    fn skip_learning(&mut self, k: usize, i: usize) -> Pos {
        self.learning.clear();
        self.learnable = true;
        self.piece_from = i;
        let end = self.skip_container::<true>(i)?;
        self.piece(end);
        if let Some(layout) = self.layouts.get_mut(k) {
            let learnt = self.learnable && !self.learning.is_empty();
            let same = learnt && same_pieces(&layout.pieces, self.learning);
            let other = !same && learnt && same_pieces(&layout.other, self.learning);
            if other {
                std::mem::swap(&mut layout.pieces, &mut layout.other);
            } else if !same {
                // A steady layout is kept as the other one; the new one replaces it.
                if layout.steady {
                    std::mem::swap(&mut layout.pieces, &mut layout.other);
                }
                layout.pieces.clear();
                if learnt {
                    layout.pieces.extend_from_slice(self.learning);
                }
            }
            layout.steady = same || other;
            layout.rest = if learnt { 0 } else { LAYOUT_REST };
        }
        Ok(end)
    }

    /// Learns the text from [`Scanner::piece_from`] to `to` as the next piece of a
    /// [`Layout`] (a longer text than a [`Guess`] holds as several, each but the last
    /// [`CONTINUED`]); a text not ASCII, or past [`LAYOUT_PIECES`], and the container has no
    /// layout.
    #[inline(always)]
    fn piece(&mut self, to: usize) {
        if !self.learnable {
            return;
        }
        let text = &self.b[self.piece_from..to];
        if self.learning.len() + text.len().div_ceil(GUESS_BYTES) > LAYOUT_PIECES
            || !text.is_ascii()
        {
            self.learnable = false;
            return;
        }
        let mut parts = text.chunks(GUESS_BYTES).peekable();
        while let Some(part) = parts.next() {
            let mut g = Guess::learn(part, None);
            if parts.peek().is_some() {
                g.child = CONTINUED;
            }
            self.learning.push(g);
        }
    }

    /// Reads the value at `i` of a member whose key is trie node `c`, recording its span when
    /// the node has a slot. Returns the index after the value. `guessed`: where the member's
    /// guesses (and the layout of a container it holds) are, when it has them.
    #[inline(always)]
    fn member(
        &mut self,
        set: &PathSet,
        c: usize,
        start: usize,
        depth: u32,
        guessed: Option<usize>,
    ) -> Pos {
        let cn = &set.nodes[c];
        let end = if cn.children.is_empty() {
            // A leaf's value: a container is skipped by its layout, when the member has one.
            self.skip(start, guessed)?
        } else if cn.slot.is_some() {
            // A value of its own and children: the reference keeps the raw text, then reads
            // the children out of it with a deserializer of its own (whose nesting count
            // starts afresh).
            self.visit(set, c, start, 0)?
        } else {
            self.visit(set, c, start, depth)?
        };
        self.record(cn.slot, start, end);
        Ok(end)
    }

    /// Records the value `b[start..end]` in `slot` (absent when it is `null`).
    #[inline(always)]
    fn record(&mut self, slot: Option<usize>, start: usize, end: usize) {
        if let Some(slot) = slot {
            self.written.push(slot as u32);
            if let Some(t) = &mut self.trace {
                t.push((slot as u32, start as u32, end as u32));
            }
            // A valid 4-byte value that starts with `n` is `null`.
            self.out[slot] = if end - start == 4 && self.b[start] == b'n' {
                None
            } else {
                Some((start as u32, end as u32))
            };
        }
    }

    /// Reads the array at `i` (its `[`) at trie node `node`, which has children named by
    /// element index: each element is skipped (checked) and, when a child names it, read at
    /// that child; the last element is read at a `[-1]` child once the array is closed.
    /// Returns the index after the `]`.
    #[inline(never)]
    fn array(&mut self, set: &PathSet, node: usize, i: usize) -> Pos {
        let n = &set.nodes[node];
        let mut i = self.ws(i + 1);
        if self.at(i) == b']' {
            return Ok(i + 1);
        }
        let mut index: i64 = 0;
        // The elements are skipped by one layout, each compared with the one before.
        let whole = set.inner * PREDICTED_MEMBERS + n.inner;
        let (start, end) = loop {
            let start = i;
            let end = self.skip(start, Some(whole))?;
            for &(want, c) in &n.elements {
                if want == index {
                    self.element(set, c, start, end)?;
                }
            }
            index += 1;
            i = self.ws(end);
            match self.at(i) {
                b',' => i = self.ws(i + 1),
                b']' => break (start, end),
                _ => return Err(self.stop(i, "expected `,` or `]`", "EOF while parsing a list")),
            }
        };
        for &(want, c) in &n.elements {
            if want == -1 {
                self.element(set, c, start, end)?;
            }
        }
        Ok(i + 1)
    }

    /// Reads the array element `b[start..end]` (already checked) at trie node `c`: records it,
    /// and reads `c`'s children out of it, with a nesting count that starts afresh (as the
    /// reference's deserializer of the element's raw text does).
    fn element(&mut self, set: &PathSet, c: usize, start: usize, end: usize) -> Result<(), Stop> {
        let cn = &set.nodes[c];
        self.record(cn.slot, start, end);
        if !cn.children.is_empty() {
            self.visit(set, c, start, 0)?;
        }
        Ok(())
    }

    /// Reads a value at a trie node with children: objects are descended into, arrays count
    /// towards the nesting limit and are read by element or skipped, scalars are skipped
    /// (checked by the grammar only, as the reference's lenient walk takes them).
    #[inline(never)]
    fn visit(&mut self, set: &PathSet, c: usize, i: usize, depth: u32) -> Pos {
        match self.at(i) {
            b'{' | b'[' if depth >= DEPTH_LIMIT => {
                Err(self.stop(i + 1, "recursion limit exceeded", ""))
            }
            b'{' => self.object(set, c, i + 1, depth + 1),
            b'[' if !set.nodes[c].elements.is_empty() => self.array(set, c, i),
            b'[' => {
                let whole = set.inner * PREDICTED_MEMBERS + set.nodes[c].inner;
                self.skip(i, Some(whole))
            }
            _ => self.skip_value(i),
        }
    }
}

impl Node {
    /// The child whose key is `key` (unescaped bytes), whose first word is `head` (see
    /// [`head8`]).
    #[inline(always)]
    pub(super) fn child(&self, key: &[u8], head: u64) -> Option<usize> {
        let size = self.table.len();
        if size == 0 {
            return None;
        }
        let tail = tail8(key);
        let mut at = key_slot(head, tail, key.len(), size);
        loop {
            let (h, t, len, c) = *self.table.get(at)?;
            if c == 0 {
                return None;
            }
            if h == head && t == tail && len as usize == key.len() {
                let (k, n) = self.children.get(c as usize - 1)?;
                if key.len() <= 16 || k.as_bytes() == key {
                    return Some(*n);
                }
            }
            at = (at + 1) & (size - 1);
        }
    }
}

/// The entry of a key in a [`Node::table`] of `size` entries (a power of two), from its
/// [`head8`], [`tail8`] and length.
#[inline(always)]
pub(super) fn key_slot(head: u64, tail: u64, len: usize, size: usize) -> usize {
    let h = (head ^ tail.rotate_left(29) ^ (len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_mul(0xBF58_476D_1CE4_E5B9);
    (h >> 40) as usize & (size - 1)
}

/// The first 8 bytes of `key`, zero-padded, as one word.
#[inline(always)]
pub(super) fn head8(key: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    for (d, s) in w.iter_mut().zip(key) {
        *d = *s;
    }
    u64::from_le_bytes(w)
}

/// The last 8 bytes of `key` as one word when it is longer than 8 bytes, else 0: with
/// [`head8`], all of a key of up to 16 bytes.
#[inline(always)]
pub(super) fn tail8(key: &[u8]) -> u64 {
    match key.len().checked_sub(8) {
        Some(start) if start > 0 => u64::from_le_bytes(key[start..].try_into().unwrap_or([0; 8])),
        _ => 0,
    }
}

/// [`head8`] of `line[start..end]`, read as one word when the line has 8 bytes from `start`.
#[inline(always)]
pub(super) fn head8_at(line: &[u8], start: usize, end: usize) -> u64 {
    match line.get(start..start + 8) {
        Some(w) => {
            let w = u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
            let len = end - start;
            if len >= 8 {
                w
            } else {
                w & ((1u64 << (8 * len)) - 1)
            }
        }
        None => head8(&line[start..end]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Slots;

    /// A skipped container that takes two shapes from line to line (a request that succeeded,
    /// one that failed) is skipped by one of the two layouts kept at its place, without being
    /// learnt again, once each shape was seen twice in all; a line that fits neither is walked
    /// and judged as before.
    #[test]
    fn two_shapes_of_a_skipped_container_are_both_kept() {
        let mut set = PathSet::default();
        set.add(&["model"]);
        let ok: &[u8] = br#"{"model":"m","messages":[{"role":"user","content":"hi"}],"n":1}"#;
        let failed: &[u8] =
            br#"{"model":"m","messages":[{"role":"user","content":"yo","error":"boom"}],"n":2}"#;
        let broken: &[u8] =
            br#"{"model":"m","messages":[{"role":"user","content":"yo","error":boom}],"n":2}"#;
        let mut slots = Slots::default();
        let lines = [ok, ok, failed, ok, failed, failed, ok, broken, ok, failed];
        for (i, &line) in lines.iter().enumerate() {
            // Walked each time: lines of a shape seen before are otherwise read by template.
            slots.predictions.templates = template::Templates::default();
            let read = set.extract(line, &mut slots);
            let mut reference = Slots::default();
            let want = set.extract_reference(line, &mut reference);
            assert_eq!(read.is_ok(), want.is_ok(), "line {i}");
            if read.is_ok() {
                assert_eq!(slots.raw(line, 0), Some("\"m\""), "line {i}");
            }
            let kept: Vec<&Layout> = slots
                .predictions
                .layouts
                .iter()
                .filter(|l| !l.pieces.is_empty())
                .collect();
            assert_eq!(kept.len(), 1, "line {i}: one place learnt");
            if i >= 3 {
                assert!(kept[0].steady && !kept[0].other.is_empty(), "line {i}");
            }
        }
    }

    /// The end of the number at the start of `b` by the grammar alone, byte by byte.
    fn grammar_number(b: &[u8]) -> Option<usize> {
        let at = |i: usize| b.get(i).copied().unwrap_or(0);
        let digits = |mut i: usize| {
            while at(i).is_ascii_digit() {
                i += 1;
            }
            i
        };
        let mut i = usize::from(at(0) == b'-');
        match at(i) {
            b'0' if at(i + 1).is_ascii_digit() => return None,
            b'0' => i += 1,
            b'1'..=b'9' => i = digits(i + 1),
            _ => return None,
        }
        if at(i) == b'.' {
            if !at(i + 1).is_ascii_digit() {
                return None;
            }
            i = digits(i + 2);
        }
        if at(i) | 0x20 == b'e' {
            i += 1;
            if matches!(at(i), b'+' | b'-') {
                i += 1;
            }
            if !at(i).is_ascii_digit() {
                return None;
            }
            i = digits(i + 1);
        }
        Some(i)
    }

    /// The 16-byte test of a number ends where the grammar ends, or leaves the number to the
    /// byte-by-byte reading, which ends there too: numbers of every shape, followed by every
    /// kind of byte, with and without 16 bytes after them.
    #[test]
    fn short_numbers_end_where_the_grammar_ends() {
        let bodies = [
            "0",
            "7",
            "-0",
            "-3",
            "10",
            "1787334732",
            "1787334732.002581",
            "0.5",
            "-0.25",
            "00",
            "-",
            "-a",
            "1.",
            "1.e5",
            "1e5",
            "1E+5",
            "2.5e-3",
            "0.0000000000001",
            "123456789012345",
            "1234567890123456",
            "12345678901234567",
            "-123456789012345",
            "1.23456789012345",
            "01",
            "-01",
            ".5",
            "9.",
            "-1234567890123.5",
        ];
        let tails = [
            "", ",", "}", "]", " ", "e", "E", "x", ".", "-", "0", "\"", "9",
        ];
        let mut short = 0;
        for body in bodies {
            for tail in tails {
                for pad in [0, 1, 16] {
                    let text = format!("{body}{tail}{}", " ".repeat(pad));
                    let b = text.as_bytes();
                    let want = grammar_number(b);
                    if let Some(end) = short_number(b, 0) {
                        assert_eq!(Some(end), want, "{text:?}");
                        short += 1;
                    }
                    let mut set = PathSet::default();
                    set.add(&["n"]);
                    let line = format!("{{\"n\":{text}}}");
                    let (mut fast, mut reference) = (Slots::default(), Slots::default());
                    let read = set.extract(line.as_bytes(), &mut fast);
                    let want = set.extract_reference(line.as_bytes(), &mut reference);
                    assert_eq!(read.is_ok(), want.is_ok(), "{line:?}");
                    assert!(fast == reference, "{line:?}");
                }
            }
        }
        assert!(short > 100, "{short}");
    }
}
