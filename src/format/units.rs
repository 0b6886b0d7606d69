//! Value decoding: timestamps and durations, from the raw JSON text of one field, to integer
//! nanoseconds.
//!
//! Owns every unit tokentime understands (SPEC section 3, "Units understood"). It sees only the
//! raw text of one JSON value (a number, or a string with its quotes) and never does I/O.
//! Decimal numbers are converted digit by digit, so `1795964927.0283072` seconds becomes
//! exactly `1_795_964_927_028_307_200` ns: intervals between epoch-second floats are exact,
//! which an `f64` round trip (256 ns resolution at that magnitude) would not be.

/// How a field's value is to be read. Timestamps are wall-clock instants; durations are lengths
/// of time. A format never subtracts a timestamp from a duration (SPEC section 2, clock domains).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Epoch seconds, a number or a decimal string (LiteLLM `startTime`).
    EpochS,
    /// Epoch milliseconds (Kong `started_at`).
    EpochMs,
    /// Epoch microseconds.
    EpochUs,
    /// Epoch nanoseconds (OTLP `startTimeUnixNano`, often a decimal string).
    EpochNs,
    /// RFC 3339 string with any fractional digits (read to the nanosecond) and any offset.
    Rfc3339,
    /// A timestamp in any of the above: strings are RFC 3339 or decimal, numbers are scaled by
    /// magnitude (below 1e11 seconds, below 1e14 ms, below 1e17 us, else ns).
    EpochAuto,
    /// Duration in seconds (vLLM span attributes).
    S,
    /// Duration in milliseconds (llama.cpp `timings`, vLLM `metrics`).
    Ms,
    /// Duration in microseconds.
    Us,
    /// Duration in nanoseconds (Ollama).
    Ns,
    /// Duration string with its unit: `"735.2ms"`, `"955.594µs"`, `"1.5s"`, `"0ns"` (TGI).
    DurationStr,
    /// A plain count (tokens).
    Count,
}

impl Unit {
    /// Every unit, in the order `--help` lists them.
    pub const ALL: [Unit; 12] = [
        Unit::EpochS,
        Unit::EpochMs,
        Unit::EpochUs,
        Unit::EpochNs,
        Unit::Rfc3339,
        Unit::EpochAuto,
        Unit::S,
        Unit::Ms,
        Unit::Us,
        Unit::Ns,
        Unit::DurationStr,
        Unit::Count,
    ];

    /// Parses a unit name as written in `--map` (`epoch_s`, `ms`, `rfc3339`, ...).
    ///
    /// # Errors
    /// Returns `None` for an unknown name.
    pub fn from_name(name: &str) -> Option<Unit> {
        Some(match name {
            "epoch_s" => Unit::EpochS,
            "epoch_ms" => Unit::EpochMs,
            "epoch_us" => Unit::EpochUs,
            "epoch_ns" => Unit::EpochNs,
            "rfc3339" => Unit::Rfc3339,
            "epoch" | "timestamp" => Unit::EpochAuto,
            "s" => Unit::S,
            "ms" => Unit::Ms,
            "us" | "µs" | "μs" => Unit::Us,
            "ns" => Unit::Ns,
            "duration" => Unit::DurationStr,
            "count" | "tokens" => Unit::Count,
            _ => return None,
        })
    }

    /// The name `--map` accepts for this unit.
    pub fn name(self) -> &'static str {
        match self {
            Unit::EpochS => "epoch_s",
            Unit::EpochMs => "epoch_ms",
            Unit::EpochUs => "epoch_us",
            Unit::EpochNs => "epoch_ns",
            Unit::Rfc3339 => "rfc3339",
            Unit::EpochAuto => "epoch",
            Unit::S => "s",
            Unit::Ms => "ms",
            Unit::Us => "us",
            Unit::Ns => "ns",
            Unit::DurationStr => "duration",
            Unit::Count => "count",
        }
    }

    /// True for the units of instants (wall clock), false for durations and counts.
    pub fn is_timestamp(self) -> bool {
        matches!(
            self,
            Unit::EpochS
                | Unit::EpochMs
                | Unit::EpochUs
                | Unit::EpochNs
                | Unit::Rfc3339
                | Unit::EpochAuto
        )
    }

    /// True for the units of durations.
    pub fn is_duration(self) -> bool {
        matches!(
            self,
            Unit::S | Unit::Ms | Unit::Us | Unit::Ns | Unit::DurationStr
        )
    }
}

/// Decodes the raw JSON text of one value as a time in nanoseconds (epoch ns for timestamps,
/// length in ns for durations).
///
/// Numbers may also be written as decimal strings (`"1741946531018273536"`). Returns `None` for
/// `null`, non-numeric text, non-finite values and values that overflow `i64` nanoseconds.
///
/// ```text
/// use tokentime::units::{decode_ns, Unit};
/// assert_eq!(decode_ns("1795964927.0283072", Unit::EpochS), Some(1_795_964_927_028_307_200));
/// assert_eq!(decode_ns("\"955.594µs\"", Unit::DurationStr), Some(955_594));
/// assert_eq!(decode_ns("862.155", Unit::Ms), Some(862_155_000));
/// ```
pub fn decode_ns(raw: &str, unit: Unit) -> Option<i64> {
    decode_ns_bytes(raw.trim().as_bytes(), unit)
}

/// [`decode_ns`] of raw JSON text as bytes, as a line's value spans are (only JSON's ASCII
/// blanks are trimmed: a value's text has no other). No UTF-8 check: only quoted RFC 3339 and
/// duration strings are read as text.
pub(crate) fn decode_ns_bytes(raw: &[u8], unit: Unit) -> Option<i64> {
    let raw = raw.trim_ascii();
    let (text, quoted) = match raw.strip_prefix(b"\"").and_then(|r| r.strip_suffix(b"\"")) {
        Some(inner) => (inner, true),
        None => (raw, false),
    };
    let as_str = || std::str::from_utf8(text).ok();
    match unit {
        Unit::EpochS | Unit::S => decimal_scaled(text, 9),
        Unit::EpochMs | Unit::Ms => decimal_scaled(text, 6),
        Unit::EpochUs | Unit::Us => decimal_scaled(text, 3),
        Unit::EpochNs | Unit::Ns => decimal_scaled(text, 0),
        Unit::Rfc3339 => quoted.then(|| parse_rfc3339(as_str()?)).flatten(),
        Unit::EpochAuto => {
            if quoted && let Some(t) = as_str().and_then(parse_rfc3339) {
                return Some(t);
            }
            let scale = |magnitude: u64| {
                if magnitude < 100_000_000_000 {
                    9
                } else if magnitude < 100_000_000_000_000 {
                    6
                } else if magnitude < 100_000_000_000_000_000 {
                    3
                } else {
                    0
                }
            };
            // The common short form is split once, its magnitude read off its integer part.
            if let Some(p) = short_parts(text) {
                return p.scaled(scale(p.rounded));
            }
            let magnitude = decimal_scaled(text, 0)?.unsigned_abs();
            decimal_scaled(text, scale(magnitude))
        }
        Unit::DurationStr => {
            if quoted {
                parse_duration_str(as_str()?)
            } else {
                None
            }
        }
        Unit::Count => None,
    }
}

/// The first plausible wall-clock instant, 2000-01-01T00:00:00Z, in epoch ns. A logged instant
/// before it is a producer's "unknown" (`0`, `-1`) or a unit mix-up, not a time a request ran.
pub const PLAUSIBLE_FROM_NS: i64 = 946_684_800 * 1_000_000_000;

/// The end (excluded) of the plausible window of wall-clock instants, 2200-01-01T00:00:00Z, in
/// epoch ns.
pub const PLAUSIBLE_UNTIL_NS: i64 = 7_258_118_400 * 1_000_000_000;

/// A wall-clock instant as [`decode_instant`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instant {
    /// Epoch ns within the plausible window (or, for a unit that is no timestamp, the value).
    At(i64),
    /// A well-formed number or RFC 3339 time outside the window, in every reading its unit
    /// allows (0, a negative number, the year 9999, one past `i64` ns): unknown.
    Implausible,
    /// Not a value of the unit at all (`"abc"`, `NaN`, `true`).
    Unreadable,
}

/// Decodes the raw JSON text of a wall-clock instant in a timestamp unit, keeping only the
/// instants of the plausible window ([`PLAUSIBLE_FROM_NS`] to [`PLAUSIBLE_UNTIL_NS`]).
/// [`Unit::EpochAuto`] reads a number by its magnitude, and the magnitude ranges hold the
/// window's readings in seconds, ms, us and ns apart: a value is the one reading in the window,
/// or [`Instant::Implausible`] when every reading is out of it (`253402214400`, the year 9999
/// in seconds, is no millisecond count of 1978). A unit that is no timestamp (a duration, a
/// monotonic clock's reading) has no window: its value, or [`Instant::Unreadable`].
///
/// ```text
/// use tokentime::{decode_instant, Instant, Unit};
/// assert_eq!(decode_instant("1741946531.2", Unit::EpochAuto), Instant::At(1_741_946_531_200_000_000));
/// assert_eq!(decode_instant("0", Unit::EpochAuto), Instant::Implausible);
/// assert_eq!(decode_instant("253402214400", Unit::EpochAuto), Instant::Implausible);
/// assert_eq!(decode_instant("\"9999-12-31T00:00:00Z\"", Unit::Rfc3339), Instant::Implausible);
/// assert_eq!(decode_instant("\"abc\"", Unit::EpochS), Instant::Unreadable);
/// assert_eq!(decode_instant("0", Unit::Ms), Instant::At(0));
/// ```
pub fn decode_instant(raw: &str, unit: Unit) -> Instant {
    decode_instant_bytes(raw.trim().as_bytes(), unit)
}

/// [`decode_instant`] of raw JSON text as bytes.
pub(crate) fn decode_instant_bytes(raw: &[u8], unit: Unit) -> Instant {
    if let Some(ns) = decode_ns_bytes(raw, unit) {
        return if !unit.is_timestamp() || (PLAUSIBLE_FROM_NS..PLAUSIBLE_UNTIL_NS).contains(&ns) {
            Instant::At(ns)
        } else {
            Instant::Implausible
        };
    }
    if !unit.is_timestamp() {
        return Instant::Unreadable;
    }
    // Not decoded: well-formed but past `i64` ns (far past or future), or not a value at all.
    let raw = raw.trim_ascii();
    let (text, quoted) = match raw.strip_prefix(b"\"").and_then(|r| r.strip_suffix(b"\"")) {
        Some(inner) => (inner, true),
        None => (raw, false),
    };
    let rfc3339 = || {
        quoted
            && std::str::from_utf8(text)
                .ok()
                .and_then(rfc3339_parts)
                .is_some()
    };
    let well_formed = match unit {
        Unit::Rfc3339 => rfc3339(),
        Unit::EpochAuto => rfc3339() || is_decimal(text),
        _ => is_decimal(text),
    };
    if well_formed {
        Instant::Implausible
    } else {
        Instant::Unreadable
    }
}

/// True when `b` is a decimal number as [`decimal`] reads them (`-12.5e3`), of any size.
fn is_decimal(b: &[u8]) -> bool {
    let (_, start) = sign(b, 0);
    let mut i = start;
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let mut digits = i > start;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let frac = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        digits |= i > frac;
    }
    if !digits {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        match exponent(b, i + 1) {
            Some((_, after)) => i = after,
            None => return false,
        }
    }
    i == b.len()
}

/// Decodes the raw JSON text of a token count: a non-negative integer, as a number or a decimal
/// string (OTLP `intValue`). A number with a zero fraction (`12.0`, `1.2e1`) is accepted; one
/// with any non-zero digit below the units (`12.5`, `1e-9`) is not a count.
///
/// ```text
/// use tokentime::units::decode_count;
/// assert_eq!(decode_count("128"), Some(128));
/// assert_eq!(decode_count("\"128\""), Some(128));
/// assert_eq!(decode_count("1.28e2"), Some(128));
/// assert_eq!(decode_count("-1"), None);
/// assert_eq!(decode_count("128.000000000000000001"), None);
/// ```
pub fn decode_count(raw: &str) -> Option<u64> {
    decode_count_bytes(raw.trim().as_bytes())
}

/// [`decode_count`] of raw JSON text as bytes (see [`decode_ns_bytes`]).
pub(crate) fn decode_count_bytes(raw: &[u8]) -> Option<u64> {
    let raw = raw.trim_ascii();
    let text = raw
        .strip_prefix(b"\"")
        .and_then(|r| r.strip_suffix(b"\""))
        .unwrap_or(raw);
    // The common case, plain digits, is exact by construction (18 digits fit a u64).
    if (1..=18).contains(&text.len()) && text.iter().all(|b| b.is_ascii_digit()) {
        return Some(text.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0')));
    }
    // Checked on the decimal digits: an f64 would call 1.92e-2050 or 9007199254740993.5
    // integral.
    let (n, exact) = decimal(text, 0)?;
    if !exact {
        return None;
    }
    u64::try_from(n).ok()
}

/// Parses a decimal number (`-12.5e3`) and returns `value * 10^scale`, rounded half away from
/// zero, exactly (no binary floating point on the way).
fn decimal_scaled(text: &[u8], scale: i32) -> Option<i64> {
    // Text of 19 bytes or more is a short decimal only as 18 digits and a point: the long
    // forms (OTLP's nanoseconds, `doubleValue` seconds) are tried first.
    let long_first = text.len() >= 19;
    if long_first && let Some(v) = long_fraction(text, scale) {
        return Some(v);
    }
    if let Some(v) = decimal_scaled_short(text, scale) {
        return v;
    }
    if !long_first && let Some(v) = long_fraction(text, scale) {
        return Some(v);
    }
    decimal(text, scale).map(|(v, _)| v)
}

/// [`decimal_scaled`] of a plain decimal with more digits than the short case takes, when its
/// integer part and the first `scale` digits of its fraction make at most 18 digits (OTLP's
/// `doubleValue` seconds, `0.012590445233909576`, in ns): the digits past those only round,
/// half away from zero, by the first of them; or of an integer of up to 19 digits whose scaled
/// value fits an `i64`. `None` when the text is not such a number.
fn long_fraction(b: &[u8], scale: i32) -> Option<i64> {
    let scale = usize::try_from(scale).ok()?;
    let (neg, start) = sign(b, 0);
    // At most 19 digits read (they fit a u64); a longer run is not followed by the point.
    let mut m = 0u64;
    let int_end = read_digits_from(&b[..b.len().min(start + 19)], start, &mut m);
    let int_digits = int_end - start;
    if int_digits == 0 {
        return None;
    }
    if int_end == b.len() {
        // An integer of 19 digits (OTLP's `startTimeUnixNano`), scaled within a u64.
        let v = m.checked_mul(*POW10.get(scale)?)?;
        let v = i64::try_from(v).ok()?;
        return Some(if neg { -v } else { v });
    }
    if int_digits + scale > 18 || b[int_end] != b'.' {
        return None;
    }
    let frac = int_end + 1;
    let kept = scale.min(b.len() - frac);
    // The fraction's first `kept` digits, then zeros up to `scale` of them.
    let mut f = 0u64;
    if read_digits_from(&b[..frac + kept], frac, &mut f) != frac + kept {
        return None;
    }
    // The rest of the fraction: digits only, at least one in all.
    let rest = &b[frac + kept..];
    if frac == b.len() || !rest.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let up = rest.first().is_some_and(|&c| c >= b'5');
    let v = m * POW10[scale] + f * POW10[scale - kept] + u64::from(up);
    let v = v as i64;
    Some(if neg { -v } else { v })
}

/// [`decimal_scaled`] for the common case, in `u64` arithmetic: at most 18 digits, no
/// exponent (`1795964927.028413`, `-12`, `0.5`). `None` when the text is not such a number.
#[inline]
fn decimal_scaled_short(b: &[u8], scale: i32) -> Option<Option<i64>> {
    short_parts(b).map(|p| p.scaled(scale))
}

/// A decimal number of at most 18 digits and no exponent, as its sign, its digits as one
/// integer, and the number of them after the point: `-12.50` is `(true, 1250, 2)`; also its
/// absolute value rounded to an integer, half up (`13`).
#[derive(Clone, Copy)]
struct ShortDecimal {
    neg: bool,
    m: u64,
    frac_digits: i32,
    rounded: u64,
}

/// Splits `b` into a [`ShortDecimal`]; `None` when it is not one.
#[inline]
fn short_parts(b: &[u8]) -> Option<ShortDecimal> {
    let (neg, b) = match b.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, b),
    };
    if let Some((int, frac, frac_digits)) = epoch_seconds(b) {
        return Some(ShortDecimal {
            neg,
            m: int * POW10[frac_digits] + frac,
            frac_digits: frac_digits as i32,
            rounded: int + u64::from(b[11] >= b'5'),
        });
    }
    // 18 digits and a point at most: longer text is no short decimal (and 19 digits still
    // fit the u64 below, before they are refused).
    if b.len() > 19 {
        return None;
    }
    let mut m = 0u64;
    let int_digits = read_digits(b, &mut m);
    let int = m;
    let mut half = false;
    if let Some((&point, frac)) = b[int_digits..].split_first() {
        if point != b'.' || read_digits_from(b, int_digits + 1, &mut m) != b.len() {
            return None;
        }
        half = frac.first().is_some_and(|&c| c >= b'5');
    }
    let frac_digits = b.len() - int_digits - usize::from(int_digits < b.len());
    let digits = int_digits + frac_digits;
    if digits == 0 || digits > 18 {
        return None;
    }
    Some(ShortDecimal {
        neg,
        m,
        frac_digits: frac_digits as i32,
        rounded: int + u64::from(half),
    })
}

/// The common shape of a Unix time in seconds: ten digits, a point and one to eight more
/// (`1787334732.002581`), read without a loop: its integer part, its fraction's digits as an
/// integer, and their number. `None` for any other text (which [`short_parts`] then reads
/// digit run by digit run, to the same parts).
#[inline(always)]
fn epoch_seconds(b: &[u8]) -> Option<(u64, u64, usize)> {
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    let len = b.len();
    if !(12..=19).contains(&len) || b[10] != b'.' {
        return None;
    }
    let head = u64::from_le_bytes(b[..8].try_into().ok()?);
    // The two digits after the first eight, above six '0's (leading zeros).
    let pair = u64::from(u16::from_le_bytes(b[8..10].try_into().ok()?)) << 48 | ZEROS >> 16;
    // The fraction's `frac_digits` bytes end the last word; the bytes before them become '0's.
    let frac_digits = len - 11;
    let before = u64::MAX.checked_shr(8 * frac_digits as u32).unwrap_or(0);
    let tail = u64::from_le_bytes(b[len - 8..].try_into().ok()?) & !before | ZEROS & before;
    let digits = crate::number::leading_digits;
    if digits(head) + digits(pair) + digits(tail) != 24 {
        return None;
    }
    Some((
        eight_digits(head) * 100 + eight_digits(pair),
        eight_digits(tail),
        frac_digits,
    ))
}

/// Reads the ASCII digits at the start of `b` into `m` (`m = m * 10 + digit` for each);
/// returns how many it read. The caller bounds their number so that `m` cannot overflow.
/// Eight bytes at a time: their run of digits is found and read as one word.
#[inline]
fn read_digits(b: &[u8], m: &mut u64) -> usize {
    read_digits_from(b, 0, m)
}

/// [`read_digits`] from `b[start..]`; returns the index after the digits.
#[inline]
fn read_digits_from(b: &[u8], start: usize, m: &mut u64) -> usize {
    let mut i = start;
    loop {
        let w = match b.get(i..i + 8) {
            Some(chunk) => u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8])),
            // Fewer than 8 bytes left: the slice's last word, shifted so that zeros (no
            // digits) follow them.
            None if i < b.len() && b.len() >= 8 => {
                let last = u64::from_le_bytes(b[b.len() - 8..].try_into().unwrap_or([0; 8]));
                last >> (8 * (8 - (b.len() - i)))
            }
            None => break,
        };
        let n = crate::number::leading_digits(w);
        if n == 0 {
            return i;
        }
        // The n digits moved to the word's top, zeros (`& 0x0F`) below them as leading zeros.
        *m = *m * POW10[n] + eight_digits(w << (64 - 8 * n));
        i += n;
        if n < 8 {
            return i;
        }
    }
    while let Some(&c) = b.get(i) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        *m = *m * 10 + u64::from(d);
        i += 1;
    }
    i
}

/// The value of eight ASCII digits read as a little-endian word (the first digit in the low
/// byte); a zero byte counts as a `0`.
#[inline(always)]
fn eight_digits(w: u64) -> u64 {
    let w = ((w & 0x0F0F_0F0F_0F0F_0F0F).wrapping_mul(2561)) >> 8;
    let w = ((w & 0x00FF_00FF_00FF_00FF).wrapping_mul(6_553_601)) >> 16;
    ((w & 0x0000_FFFF_0000_FFFF).wrapping_mul(42_949_672_960_001)) >> 32
}

/// Powers of ten, `10^0` to `10^18`.
const POW10: [u64; 19] = {
    let mut p = [1u64; 19];
    let mut i = 1;
    while i < 19 {
        p[i] = p[i - 1] * 10;
        i += 1;
    }
    p
};

impl ShortDecimal {
    /// `value * 10^scale`, rounded half away from zero; `None` beyond `i64`.
    #[inline]
    fn scaled(self, scale: i32) -> Option<i64> {
        let (m, e) = (self.m, scale - self.frac_digits);
        let v = if m == 0 {
            0
        } else if e >= 0 {
            // More than 18 powers of ten overflow any non-zero value.
            let p = *POW10.get(e as usize)?;
            match m.checked_mul(p) {
                Some(v) if v <= i64::MAX as u64 => v,
                _ => return None,
            }
        } else {
            // Fewer than 19 digits: dividing by 10^19 or more leaves 0 (rounded down, since
            // the first dropped digit is then 0).
            let Some(&d) = POW10.get((-e) as usize) else {
                return Some(0);
            };
            // Half away from zero: the first dropped digit is 5 or more.
            let (q, r) = (m / d, m % d);
            q + u64::from(r * 2 >= d)
        };
        let v = v as i64;
        Some(if self.neg { -v } else { v })
    }
}

/// [`decimal_scaled`] for any length and an exponent, in `i128` arithmetic, and whether the
/// result is exact: no non-zero digit was rounded off.
fn decimal(text: &[u8], scale: i32) -> Option<(i64, bool)> {
    let b = text;
    let (neg, i) = sign(b, 0);
    let mut m = Mantissa::default();
    let (mut i, mut seen_digit) = m.read(b, i, false);
    if b.get(i) == Some(&b'.') {
        let (after, fraction) = m.read(b, i + 1, true);
        (i, seen_digit) = (after, seen_digit || fraction);
    }
    if !seen_digit {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let (e, after) = exponent(b, i + 1)?;
        m.exp = m.exp.saturating_add(e);
        i = after;
    }
    if i != b.len() {
        return None;
    }
    let (v, exact) = m.scaled(scale)?;
    Some((if neg { -v } else { v }, exact))
}

/// An optional sign at `b[i]`: whether it is `-`, and the index after it.
#[inline]
fn sign(b: &[u8], i: usize) -> (bool, usize) {
    match b.get(i) {
        Some(b'-') => (true, i + 1),
        Some(b'+') => (false, i + 1),
        _ => (false, i),
    }
}

/// The exponent after an `e` at `b[i..]`: an optional sign and at least one digit (saturating
/// at `i32`), and the index after it. `None` without a digit.
#[inline]
fn exponent(b: &[u8], i: usize) -> Option<(i32, usize)> {
    let (neg, start) = sign(b, i);
    let mut i = start;
    let mut e: i32 = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        e = e.saturating_mul(10).saturating_add(i32::from(b[i] - b'0'));
        i += 1;
    }
    if i == start {
        return None;
    }
    Some((if neg { -e } else { e }, i))
}

/// The significant digits of a decimal number as [`decimal`] reads them: up to 36 kept in an
/// `i128` with the power of ten they stand at, the others dropped and remembered for rounding.
#[derive(Default)]
struct Mantissa {
    /// The kept digits, as one integer.
    digits: i128,
    /// Significant digits kept (leading zeros are not).
    ndigits: usize,
    /// Power of ten applied to `digits`.
    exp: i32,
    /// Some digit was dropped.
    dropped_any: bool,
    /// The first dropped digit (rounds half away from zero).
    first_dropped: u8,
    /// A dropped digit after the first was not zero (the value is not exact).
    dropped_nonzero: bool,
}

impl Mantissa {
    /// Reads the digits at `b[i..]`, of the fraction when `fractional`: the index after them,
    /// and whether there was one.
    #[inline]
    fn read(&mut self, b: &[u8], mut i: usize, fractional: bool) -> (usize, bool) {
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            self.push(b[i] - b'0', fractional);
            i += 1;
        }
        (i, i > start)
    }

    /// Takes one more digit.
    #[inline]
    fn push(&mut self, d: u8, fractional: bool) {
        // 36 significant digits fit an i128 with room to scale; beyond that the digit is
        // dropped (it is below a nanosecond for any value that fits i64 ns).
        if self.ndigits < 36 {
            if self.digits != 0 || d != 0 {
                self.ndigits += 1;
            }
            self.digits = self.digits * 10 + i128::from(d);
            if fractional {
                self.exp -= 1;
            }
        } else {
            if !self.dropped_any {
                self.first_dropped = d;
                self.dropped_any = true;
            } else if d != 0 {
                self.dropped_nonzero = true;
            }
            if !fractional {
                self.exp += 1;
            }
        }
    }

    /// The absolute value times `10^scale`, rounded half away from zero, and whether it is
    /// exact. `None` past `i64`.
    #[inline]
    fn scaled(&self, scale: i32) -> Option<(i64, bool)> {
        let mut e = self.exp.saturating_add(scale);
        let mut v = self.digits;
        if v == 0 {
            return Some((0, true));
        }
        // Digits past the 36 kept ones are all below the units when the result fits an i64.
        let mut exact = !(self.dropped_any && (self.first_dropped != 0 || self.dropped_nonzero));
        while e > 0 {
            v = v.checked_mul(10)?;
            if v > i128::from(i64::MAX) {
                return None;
            }
            e -= 1;
        }
        let mut round_up = false;
        if e < 0 {
            // Drop -e digits, rounding half away from zero on the first dropped digit.
            let mut last = 0;
            while e < 0 {
                if v == 0 {
                    last = 0;
                    break;
                }
                last = (v % 10) as u8;
                exact &= last == 0;
                v /= 10;
                e += 1;
            }
            round_up = last >= 5;
        } else if self.dropped_any {
            round_up = self.first_dropped >= 5;
        }
        if round_up {
            v += 1;
        }
        Some((i64::try_from(v).ok()?, exact))
    }
}

/// Parses RFC 3339 (`2025-03-14T10:02:11.482917Z`, `...+05:30`, any fractional digits, read
/// to the nanosecond; `t`,
/// `z` and a space separator accepted) to epoch nanoseconds. A time with no offset at all
/// (`2025-03-14 10:02:11.4`, as Python's `str(datetime)` writes) is taken as UTC.
///
/// ```text
/// use tokentime::units::parse_rfc3339;
/// assert_eq!(parse_rfc3339("1970-01-01T00:00:01.5Z"), Some(1_500_000_000));
/// assert_eq!(parse_rfc3339("1970-01-01T01:00:00+01:00"), Some(0));
/// assert_eq!(parse_rfc3339("1970-01-01T00:00:01.123456789999Z"), Some(1_123_456_789));
/// // Not a date or an offset RFC 3339 allows: the field is unparseable.
/// assert_eq!(parse_rfc3339("2025-02-29T00:00:00Z"), None);
/// assert_eq!(parse_rfc3339("2024-02-29T00:00:00Z"), Some(1_709_164_800_000_000_000));
/// assert_eq!(parse_rfc3339("2025-01-01T00:00:00+24:00"), None);
/// ```
///
/// # Errors
/// `None` when `s` is not such a time: wrong shape, a day the month does not have, an hour,
/// minute or offset out of range, or an instant beyond
/// `i64` nanoseconds (about the years 1678-2262).
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    let (secs, frac_ns) = rfc3339_parts(s)?;
    secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

/// An RFC 3339 time as [`parse_rfc3339`] reads it, as epoch seconds and the nanoseconds past
/// them, whatever its year: the year 9999 is well-formed, only past `i64` nanoseconds.
fn rfc3339_parts(s: &str) -> Option<(i64, i64)> {
    let b = s.as_bytes();
    if b.len() < 19 {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let mut v = 0i64;
        for &c in b.get(r)? {
            if !c.is_ascii_digit() {
                return None;
            }
            v = v * 10 + i64::from(c - b'0');
        }
        Some(v)
    };
    if b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo)
        || !(1..=days_in_month(y, mo)).contains(&d)
        || h > 23
        || mi > 59
        || sec > 60
    {
        return None;
    }
    let mut i = 19;
    let mut frac_ns = 0i64;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        let mut scale = 100_000_000i64;
        while i < b.len() && b[i].is_ascii_digit() {
            frac_ns += i64::from(b[i] - b'0') * scale;
            scale /= 10;
            i += 1;
        }
        // Past the 9th digit (RFC 3339 sets no limit), below a nanosecond: dropped.
        if i == start {
            return None;
        }
    }
    let offset_s = match b.get(i) {
        // No offset (Python's `str(datetime)`, many in-house logs): taken as UTC.
        None => 0,
        Some(b'Z' | b'z') if i + 1 == b.len() => 0,
        Some(c @ (b'+' | b'-')) if i + 6 == b.len() && b[i + 3] == b':' => {
            let (oh, om) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
            // RFC 3339's time-numoffset: hours 00-23, minutes 00-59.
            if oh > 23 || om > 59 {
                return None;
            }
            let off = oh * 3600 + om * 60;
            if *c == b'+' { off } else { -off }
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo, d);
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset_s;
    Some((secs, frac_ns))
}

/// A time given on the command line (`--since`, `--until`), epoch ns: a date (`2026-11-01`,
/// midnight UTC), an RFC 3339 time (with a `T` or a space; an offset, `Z`, or none for UTC;
/// the seconds may be left out: `2026-11-01T10:30Z`), or Unix seconds (`1787334732`, a
/// fraction allowed) from 2000 to 2200, as the formats' instants must be (a number outside
/// them is more likely a date written `20261101`, or milliseconds). `None` for anything else.
pub(crate) fn parse_flag_instant(s: &str) -> Option<i64> {
    let s = s.trim();
    let b = s.as_bytes();
    let text = if b.len() == 10 && b[4] == b'-' && b[7] == b'-' {
        format!("{s}T00:00:00Z")
    } else if b.len() >= 16 && b[13] == b':' && b.get(16) != Some(&b':') && s.is_char_boundary(16) {
        // Hours and minutes: the seconds are 00.
        format!("{}:00{}", &s[..16], &s[16..])
    } else {
        s.to_owned()
    };
    if let Some((secs, frac_ns)) = rfc3339_parts(&text) {
        return secs.checked_mul(1_000_000_000)?.checked_add(frac_ns);
    }
    if !b.first()?.is_ascii_digit() {
        return None;
    }
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if !int.bytes().all(|c| c.is_ascii_digit())
        || !frac.bytes().all(|c| c.is_ascii_digit())
        || (s.contains('.') && frac.is_empty())
        || int.len() > 12
    {
        return None;
    }
    let mut frac_ns = 0i64;
    let mut scale = 100_000_000i64;
    for c in frac.bytes().take(9) {
        frac_ns += i64::from(c - b'0') * scale;
        scale /= 10;
    }
    let secs = int.parse::<i64>().ok()?;
    // 2000-01-01 and 2200-01-01.
    if !(946_684_800..7_258_118_400).contains(&secs) {
        return None;
    }
    secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

/// Days in month `m` (1-12) of year `y` (proleptic Gregorian: RFC 3339 section 5.7).
fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Parses a duration string: a decimal number and one of `ns`, `us`, `µs` (U+00B5), `μs`
/// (U+03BC), `ms`, `s` (Rust's `Duration` Debug form, as TGI logs it); or several such parts,
/// `h` and `m` among the units, added up (Go's `Duration.String()`: `"1m30s"`, `"1h2m3.5s"`).
///
/// ```text
/// use tokentime::units::parse_duration_str;
/// assert_eq!(parse_duration_str("735.200735ms"), Some(735_200_735));
/// assert_eq!(parse_duration_str("1.5s"), Some(1_500_000_000));
/// assert_eq!(parse_duration_str("49.382μs"), Some(49_382));
/// assert_eq!(parse_duration_str("0ns"), Some(0));
/// assert_eq!(parse_duration_str("1m2.5s"), Some(62_500_000_000));
/// ```
pub fn parse_duration_str(s: &str) -> Option<i64> {
    let s = s.trim();
    one_duration_part(s).or_else(|| compound_duration(s))
}

/// The units of a part of a duration string: each one's text, the power of ten of its
/// nanoseconds (of a second for `m` and `h`), and what that is multiplied by. `ms` comes before
/// `m`: the `m` of `ms` is no minute.
const DURATION_UNITS: [(&str, i32, i64); 8] = [
    ("ns", 0, 1),
    ("us", 3, 1),
    ("µs", 3, 1),
    ("μs", 3, 1),
    ("ms", 6, 1),
    ("s", 9, 1),
    ("m", 9, 60),
    ("h", 9, 3600),
];

/// A duration of parts, each a decimal number and a unit (`h`, `m`, `s`, `ms`, `us`, `µs`,
/// `μs`, `ns`), as Go's `time.ParseDuration` reads them: their sum.
fn compound_duration(s: &str) -> Option<i64> {
    let mut rest = s;
    let mut total: i64 = 0;
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|&n| n > 0)?;
        let (num, tail) = rest.split_at(n);
        let (unit, scale, times) = DURATION_UNITS
            .into_iter()
            .find(|(u, ..)| tail.starts_with(u))?;
        let part = decimal_scaled(num.as_bytes(), scale)?.checked_mul(times)?;
        total = total.checked_add(part)?;
        rest = &tail[unit.len()..];
    }
    Some(total)
}

/// [`parse_duration_str`] of one number and its unit.
fn one_duration_part(s: &str) -> Option<i64> {
    let (num, scale) = if let Some(n) = s.strip_suffix("ns") {
        (n, 0)
    } else if let Some(n) = s
        .strip_suffix("µs")
        .or_else(|| s.strip_suffix("μs"))
        .or_else(|| s.strip_suffix("us"))
    {
        (n, 3)
    } else if let Some(n) = s.strip_suffix("ms") {
        (n, 6)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 9)
    } else {
        return None;
    };
    if num.starts_with('-') || num.starts_with('+') {
        return None;
    }
    decimal_scaled(num.as_bytes(), scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_and_exponent_read_their_part() {
        assert_eq!(sign(b"-1", 0), (true, 1));
        assert_eq!(sign(b"+1", 0), (false, 1));
        assert_eq!(sign(b"1", 0), (false, 0));
        assert_eq!(exponent(b"1e-3", 2), Some((-3, 4)));
        assert_eq!(exponent(b"e+12x", 1), Some((12, 4)));
        assert_eq!(exponent(b"e-", 1), None);
        assert_eq!(exponent(b"e99999999999", 1), Some((i32::MAX, 12)));
    }

    #[test]
    fn mantissa_keeps_36_digits_and_rounds_on_the_rest() {
        let mut m = Mantissa::default();
        assert_eq!(m.read(b"12.5", 0, false), (2, true));
        assert_eq!(m.read(b"12.5", 3, true), (4, true));
        assert_eq!((m.digits, m.exp), (125, -1));
        assert_eq!(m.scaled(0), Some((13, false)));
        assert_eq!(m.scaled(1), Some((125, true)));
        let mut long = Mantissa::default();
        let digits = [b'1'; 40];
        assert_eq!(long.read(&digits, 0, false), (40, true));
        assert_eq!((long.ndigits, long.exp, long.first_dropped), (36, 4, 1));
        assert!(long.dropped_any && long.dropped_nonzero);
        assert_eq!(long.scaled(0), None);
        assert_eq!(long.scaled(-22), Some((111_111_111_111_111_111, false)));
    }

    #[test]
    fn epoch_seconds_are_exact_to_the_nanosecond() {
        // 1795964927.0283072 s = 1795964927 s + 028307200 ns
        assert_eq!(
            decode_ns("1795964927.0283072", Unit::EpochS),
            Some(1_795_964_927_028_307_200)
        );
        assert_eq!(
            decode_ns("\"1795964927.5\"", Unit::EpochS),
            Some(1_795_964_927_500_000_000)
        );
        // 10 fractional digits: the 10th rounds (…0283072 4|6 -> …0283073 ns? no: 9th digit kept)
        assert_eq!(decode_ns("1.0000000005", Unit::EpochS), Some(1_000_000_001));
        assert_eq!(decode_ns("1.0000000004", Unit::EpochS), Some(1_000_000_000));
    }

    #[test]
    fn exponents_and_signs() {
        assert_eq!(decode_ns("1.5e3", Unit::Ms), Some(1_500_000_000));
        assert_eq!(decode_ns("-2.5", Unit::Ms), Some(-2_500_000));
        assert_eq!(decode_ns("2E-3", Unit::S), Some(2_000_000));
        assert_eq!(decode_ns("0.0", Unit::Ms), Some(0));
    }

    #[test]
    fn rejects_non_numbers() {
        for raw in [
            "null", "true", "\"abc\"", "[]", "1.2.3", "", "-", "1e", "NaN", "Infinity",
        ] {
            assert_eq!(decode_ns(raw, Unit::Ms), None, "{raw}");
        }
        assert_eq!(
            decode_ns("1e30", Unit::S),
            None,
            "overflow is None, not a wrap"
        );
    }

    #[test]
    fn counts_are_exact_integers() {
        assert_eq!(decode_count("12.0"), Some(12));
        assert_eq!(decode_count("1.2e1"), Some(12));
        assert_eq!(decode_count("0e5"), Some(0));
        assert_eq!(decode_count("12.5"), None);
        assert_eq!(decode_count("1.92e-2050"), None, "rounds to 0, is not 0");
        assert_eq!(decode_count("9007199254740993.5"), None, "f64 says .0");
        // 1, 35 zeros kept; a 36th zero and a 1 dropped past the 36 significant digits.
        assert_eq!(
            decode_count("1.0000000000000000000000000000000000001"),
            None
        );
        assert_eq!(
            decode_count("1.0000000000000000000000000000000000000"),
            Some(1)
        );
    }

    #[test]
    fn epoch_ns_decimal_string_beyond_2_pow_53() {
        assert_eq!(
            decode_ns("\"1741946531018273536\"", Unit::EpochNs),
            Some(1_741_946_531_018_273_536)
        );
    }

    #[test]
    fn times_on_the_command_line() {
        const NS: i64 = 1_000_000_000;
        let day = 1_793_491_200 * NS; // 2026-11-01T00:00:00Z
        for (text, want) in [
            ("2026-11-01", Some(day)),
            ("2026-11-01T00:00:00Z", Some(day)),
            ("2026-11-01 00:00:00", Some(day)),
            ("2026-11-01T10:30Z", Some(day + 37_800 * NS)),
            ("2026-11-01T10:30", Some(day + 37_800 * NS)),
            ("2026-11-01T12:30+02:00", Some(day + 37_800 * NS)),
            (
                "2026-11-01T10:30:00.25Z",
                Some(day + 37_800 * NS + 250_000_000),
            ),
            ("1793491200", Some(day)),
            ("1793491200.5", Some(day + 500_000_000)),
            (" 2026-11-01 ", Some(day)),
            ("2026-11-31", None),
            ("2026-11-01T25:00Z", None),
            ("yesterday", None),
            ("-5", None),
            ("12.", None),
            ("1e9", None),
            ("", None),
            ("2026-11-01T1é:00", None),
            ("99999999999999999999", None),
            ("20261101", None),
            ("1793491200000", None),
            ("946684799", None),
            ("946684800", Some(946_684_800 * NS)),
        ] {
            assert_eq!(parse_flag_instant(text), want, "{text:?}");
        }
    }

    #[test]
    fn rfc3339_offsets_and_precision() {
        // 2025-03-14 is day 20161 since the epoch: 20161*86400 = 1741910400.
        let base = 1_741_910_400i64 * 1_000_000_000;
        assert_eq!(parse_rfc3339("2025-03-14T00:00:00Z"), Some(base));
        assert_eq!(
            parse_rfc3339("2025-03-14T10:02:11.482917Z"),
            Some(base + 36_131_482_917_000)
        );
        assert_eq!(
            parse_rfc3339("2025-03-14T10:03:22.481907153Z"),
            Some(base + 36_202_481_907_153)
        );
        assert_eq!(parse_rfc3339("2025-03-14T05:30:00+05:30"), Some(base));
        assert_eq!(parse_rfc3339("2025-03-13T23:00:00-01:00"), Some(base));
        // RFC 3339 sets no limit to the fraction: past the 9th digit, below a nanosecond,
        // the digits are dropped.
        assert_eq!(
            parse_rfc3339("2025-03-14T00:00:00.1234567899Z"),
            Some(base + 123_456_789),
            "10 digits"
        );
        assert_eq!(parse_rfc3339("2025-03-14T00:00:00.Z"), None);
        assert_eq!(parse_rfc3339("2025-03-14"), None);
        assert_eq!(
            parse_rfc3339("2025-03-14 00:00:00.5"),
            Some(base + 500_000_000),
            "no offset: UTC"
        );
        assert_eq!(parse_rfc3339("2025-03-14T00:00:00+0100"), None);
    }

    #[test]
    fn duration_strings_all_micro_signs() {
        assert_eq!(parse_duration_str("955.594µs"), Some(955_594));
        assert_eq!(parse_duration_str("955.594μs"), Some(955_594));
        assert_eq!(parse_duration_str("955.594us"), Some(955_594));
        assert_eq!(parse_duration_str("125.3s"), Some(125_300_000_000));
        assert_eq!(parse_duration_str("12ns"), Some(12));
        assert_eq!(parse_duration_str("12"), None);
        assert_eq!(parse_duration_str("-1ms"), None);
        // Go's Duration.String() past a minute.
        assert_eq!(parse_duration_str("1m30s"), Some(90_000_000_000));
        assert_eq!(parse_duration_str("1m2.5s"), Some(62_500_000_000));
        assert_eq!(parse_duration_str("1h0m0s"), Some(3_600_000_000_000));
        assert_eq!(parse_duration_str("2h45m"), Some(9_900_000_000_000));
        assert_eq!(parse_duration_str("1m500ms"), Some(60_500_000_000));
        assert_eq!(parse_duration_str("1s500ms"), Some(1_500_000_000));
        assert_eq!(parse_duration_str("1m-2s"), None);
        assert_eq!(parse_duration_str("m30s"), None);
        assert_eq!(parse_duration_str("1m30"), None);
        assert_eq!(parse_duration_str("5m"), Some(300_000_000_000));
    }

    #[test]
    fn auto_epoch_by_magnitude() {
        assert_eq!(
            decode_ns("1741946531", Unit::EpochAuto),
            Some(1_741_946_531_000_000_000)
        );
        assert_eq!(
            decode_ns("1741946531018", Unit::EpochAuto),
            Some(1_741_946_531_018_000_000)
        );
        assert_eq!(
            decode_ns("\"1741946531018273536\"", Unit::EpochAuto),
            Some(1_741_946_531_018_273_536)
        );
        assert_eq!(
            decode_ns("\"1970-01-01T00:00:01Z\"", Unit::EpochAuto),
            Some(1_000_000_000)
        );
    }
}

#[cfg(test)]
mod instant_tests {
    use super::*;

    #[test]
    fn year_9999_epoch_seconds_are_not_read_as_milliseconds() {
        // 9999-12-31T00:00:00Z: above 1e11, read as ms it is 1978. Every reading is out of
        // the window, in any spelling of the instant.
        for raw in [
            "253402214400",
            "253402214400.2",
            "\"253402214400\"",
            "\"9999-12-31T00:00:00Z\"",
        ] {
            assert_eq!(
                decode_instant(raw, Unit::EpochAuto),
                Instant::Implausible,
                "{raw}"
            );
        }
        assert_eq!(
            decode_instant("\"9999-12-31T00:00:00Z\"", Unit::Rfc3339),
            Instant::Implausible
        );
        assert_eq!(
            decode_instant("253402214400", Unit::EpochS),
            Instant::Implausible
        );
    }

    #[test]
    fn an_arrival_of_zero_is_unknown_not_a_huge_ttft() {
        for unit in [Unit::EpochS, Unit::EpochMs, Unit::EpochNs, Unit::EpochAuto] {
            for raw in ["0", "-1", "0.0", "1e30", "-1e400", "946684799.999"] {
                let scaled = match unit {
                    Unit::EpochMs | Unit::EpochNs if raw == "946684799.999" => continue,
                    _ => raw,
                };
                assert_eq!(
                    decode_instant(scaled, unit),
                    Instant::Implausible,
                    "{raw} {unit:?}"
                );
            }
        }
        for raw in ["\"NaN\"", "NaN", "true", "\"abc\"", "1e", "\"\""] {
            assert_eq!(
                decode_instant(raw, Unit::EpochAuto),
                Instant::Unreadable,
                "{raw}"
            );
        }
    }

    #[test]
    fn the_window_bounds_and_every_magnitude() {
        assert_eq!(
            decode_instant("946684800", Unit::EpochAuto),
            Instant::At(PLAUSIBLE_FROM_NS)
        );
        assert_eq!(
            decode_instant("7258118400", Unit::EpochS),
            Instant::Implausible
        );
        assert_eq!(
            decode_instant("7258118399", Unit::EpochAuto),
            Instant::At(PLAUSIBLE_UNTIL_NS - 1_000_000_000)
        );
        let at = Instant::At(1_741_946_531_018_000_000);
        for raw in [
            "1741946531.018",
            "1741946531018",
            "1741946531018000",
            "1741946531018000000",
        ] {
            assert_eq!(decode_instant(raw, Unit::EpochAuto), at, "{raw}");
        }
        // Durations and monotonic readings have no window.
        assert_eq!(decode_instant("0", Unit::S), Instant::At(0));
        assert_eq!(decode_instant("-5", Unit::Ms), Instant::At(-5_000_000));
        assert_eq!(decode_instant("\"x\"", Unit::Ms), Instant::Unreadable);
    }
}

#[cfg(test)]
mod short_path_tests {
    use super::*;

    /// The `u64` fast path gives what the general `i128` path gives, on random decimals.
    #[test]
    fn short_decimals_agree_with_the_general_path() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || crate::number::xorshift(&mut x);
        let mut checked = 0;
        for _ in 0..200_000 {
            let r = next();
            let int_digits = (r % 12) as usize;
            let frac_digits = ((r >> 8) % 12) as usize;
            let mut s = String::new();
            match (r >> 16) % 5 {
                0 => s.push('-'),
                1 => s.push('+'),
                _ => {}
            }
            for _ in 0..int_digits {
                s.push((b'0' + (next() % 10) as u8) as char);
            }
            if (r >> 20) % 4 != 0 {
                s.push('.');
            }
            for _ in 0..frac_digits {
                s.push((b'0' + (next() % 10) as u8) as char);
            }
            let scale = [0, 3, 6, 9, 12][((r >> 24) % 5) as usize];
            if let Some(fast) = decimal_scaled_short(s.as_bytes(), scale) {
                assert_eq!(
                    fast,
                    decimal(s.as_bytes(), scale).map(|(v, _)| v),
                    "{s:?} scale {scale}"
                );
                checked += 1;
            }
        }
        assert!(checked > 100_000);
        // decode_count's plain-digit path against the general one.
        for _ in 0..20_000 {
            let len = 1 + (next() % 18) as usize;
            let s: String = (0..len)
                .map(|_| (b'0' + (next() % 10) as u8) as char)
                .collect();
            let general = decimal(s.as_bytes(), 0)
                .and_then(|(v, exact)| u64::try_from(v).ok().filter(|_| exact));
            assert_eq!(decode_count(&s), general, "{s:?}");
        }
        // EpochAuto's magnitude taken from the split parts, against the general path.
        for _ in 0..50_000 {
            let r = next();
            let int_digits = (r % 19) as usize;
            let frac_digits = ((r >> 8) % 8) as usize;
            let mut s: String = (0..int_digits)
                .map(|_| (b'0' + (next() % 10) as u8) as char)
                .collect();
            // Just below the thresholds: 99999999999.5 rounds up into milliseconds.
            if (r >> 16) % 4 == 0 {
                s = "9".repeat(int_digits);
            }
            if frac_digits > 0 {
                s.push('.');
                s.extend((0..frac_digits).map(|_| (b'0' + (next() % 10) as u8) as char));
            }
            let general = decimal(s.as_bytes(), 0).and_then(|(m, _)| {
                let m = m.unsigned_abs();
                let scale = match m {
                    _ if m < 100_000_000_000 => 9,
                    _ if m < 100_000_000_000_000 => 6,
                    _ if m < 100_000_000_000_000_000 => 3,
                    _ => 0,
                };
                decimal(s.as_bytes(), scale).map(|(v, _)| v)
            });
            assert_eq!(decode_ns(&s, Unit::EpochAuto), general, "{s:?}");
        }
        assert_eq!(decimal_scaled_short(b"1e3", 0), None);
        // A byte just outside the digits ends them, wherever it is.
        for pos in 0..16 {
            for bad in [b'/', b':', b' ', b'\x7f', b'e', 0x80, 0xb9, 0xba, 0xff, 0] {
                let mut s = b"1234567890123456".to_vec();
                s[pos] = bad;
                let mut m = 0;
                assert_eq!(read_digits(&s, &mut m), pos, "{s:?}");
                let want = std::str::from_utf8(&s[..pos]).unwrap().parse().unwrap_or(0);
                assert_eq!(m, want);
                assert_eq!(short_parts(&s).map(|p| p.m), None);
            }
        }
        assert_eq!(
            decimal_scaled(b"1795964927.0283072", 9),
            Some(1_795_964_927_028_307_200)
        );
    }

    /// Unix seconds with a fraction (read by `epoch_seconds`) against the general path, with
    /// a byte anywhere replaced by one that is no digit.
    #[test]
    fn epoch_seconds_agree_with_the_general_path() {
        let mut x = 0x00E9_0C45_u64;
        let mut next = || crate::number::xorshift(&mut x);
        for _ in 0..50_000 {
            let r = next();
            let frac_digits = 1 + (r % 9) as usize;
            let mut s: Vec<u8> = (0..11 + frac_digits)
                .map(|_| b'0' + (next() % 10) as u8)
                .collect();
            s[10] = b'.';
            if (r >> 8) % 3 == 0 {
                let at = (next() % s.len() as u64) as usize;
                s[at] = [b'.', b'/', b':', b'e', b'-', 0, 0x80, b' '][(next() % 8) as usize];
            }
            let sign = ["", "-", "+"][((r >> 12) % 3) as usize].as_bytes();
            let text = [sign, &s].concat();
            for scale in [0, 3, 6, 9] {
                let general = decimal(&text, scale).map(|(v, _)| v);
                let short = decimal_scaled_short(&text, scale).flatten();
                if let Some(v) = short {
                    assert_eq!(
                        Some(v),
                        general,
                        "{:?} scale {scale}",
                        String::from_utf8_lossy(&text)
                    );
                }
                if s.len() <= 19 && general.is_some() && !text.contains(&b'e') {
                    assert_eq!(
                        short,
                        general,
                        "{:?} scale {scale}",
                        String::from_utf8_lossy(&text)
                    );
                }
            }
            if let Some(p) = short_parts(&text) {
                let point = text.iter().position(|&c| c == b'.');
                let int: u64 = std::str::from_utf8(&text[..point.unwrap_or(text.len())])
                    .unwrap()
                    .trim_start_matches(['-', '+'])
                    .parse()
                    .unwrap_or(0);
                let half = point.is_some_and(|i| text.get(i + 1).is_some_and(|&c| c >= b'5'));
                assert_eq!(
                    p.rounded,
                    int + u64::from(half),
                    "{:?}",
                    String::from_utf8_lossy(&text)
                );
            }
        }
    }

    /// Long plain decimals (more than 18 digits) against the general path, in every scale.
    #[test]
    fn long_fractions_agree_with_the_general_path() {
        let mut x = 0x00DD_BA11_5EED_u64;
        for _ in 0..20_000 {
            let mut r = || crate::number::xorshift(&mut x);
            let mut s = String::new();
            match r() % 4 {
                0 => s.push('-'),
                1 => s.push('+'),
                _ => {}
            }
            for _ in 0..r() % 22 {
                s.push((b'0' + (r() % 10) as u8) as char);
            }
            if r() % 8 != 0 {
                s.push('.');
            }
            for _ in 0..r() % 24 {
                s.push((b'0' + (r() % 10) as u8) as char);
            }
            if r() % 16 == 0 {
                s.push(['e', 'x', ' ', '.'][(r() % 4) as usize]);
            }
            for scale in [0, 3, 6, 9] {
                let general = decimal(s.as_bytes(), scale).map(|(v, _)| v);
                if let Some(v) = long_fraction(s.as_bytes(), scale) {
                    assert_eq!(Some(v), general, "{s:?} at scale {scale}");
                }
                assert_eq!(decimal_scaled(s.as_bytes(), scale), general, "{s:?}");
            }
        }
        assert_eq!(long_fraction(b"0.012590445233909576", 9), Some(12_590_445));
        assert_eq!(
            long_fraction(b"-1.9699754267698404", 9),
            Some(-1_969_975_427)
        );
        assert_eq!(
            long_fraction(b"1787334732002580736", 0),
            Some(1_787_334_732_002_580_736)
        );
        assert_eq!(long_fraction(b"9999999999999999999", 0), None);
    }

    /// Runs of digits read eight bytes at a time, of every length up to 19, ending anywhere
    /// (or not at all), against the digits read one by one.
    #[test]
    fn digits_are_read_as_one_by_one() {
        // Every length up to 19, a run of digits ending anywhere (or not at all).
        let mut x = 0x1234_5678_9ABC_DEF1u64;
        for len in 0..=19 {
            for run in 0..=len {
                for _ in 0..20 {
                    let mut s: Vec<u8> = (0..len)
                        .map(|_| b'0' + (crate::number::xorshift(&mut x) % 10) as u8)
                        .collect();
                    if run < len {
                        s[run] = [b'.', b'e', b'/', b':', 0, 0xff][(x % 6) as usize];
                    }
                    let mut m = 0;
                    assert_eq!(read_digits(&s, &mut m), run, "{s:?}");
                    let want = s[..run]
                        .iter()
                        .fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'));
                    assert_eq!(m, want, "{s:?}");
                }
            }
        }
    }
}

/// The examples in this file's docs, run.
#[cfg(test)]
mod doc_examples {
    use super::*;

    #[test]
    fn example_of_decode_ns() {
        assert_eq!(
            decode_ns("1795964927.0283072", Unit::EpochS),
            Some(1_795_964_927_028_307_200)
        );
        assert_eq!(decode_ns("\"955.594µs\"", Unit::DurationStr), Some(955_594));
        assert_eq!(decode_ns("862.155", Unit::Ms), Some(862_155_000));
    }

    #[test]
    fn example_of_decode_instant() {
        assert_eq!(
            decode_instant("1741946531.2", Unit::EpochAuto),
            Instant::At(1_741_946_531_200_000_000)
        );
        assert_eq!(decode_instant("0", Unit::EpochAuto), Instant::Implausible);
        assert_eq!(
            decode_instant("253402214400", Unit::EpochAuto),
            Instant::Implausible
        );
        assert_eq!(
            decode_instant("\"9999-12-31T00:00:00Z\"", Unit::Rfc3339),
            Instant::Implausible
        );
        assert_eq!(decode_instant("\"abc\"", Unit::EpochS), Instant::Unreadable);
        assert_eq!(decode_instant("0", Unit::Ms), Instant::At(0));
    }

    #[test]
    fn example_of_decode_count() {
        assert_eq!(decode_count("128"), Some(128));
        assert_eq!(decode_count("\"128\""), Some(128));
        assert_eq!(decode_count("1.28e2"), Some(128));
        assert_eq!(decode_count("-1"), None);
        assert_eq!(decode_count("128.000000000000000001"), None);
    }

    #[test]
    fn example_of_parse_rfc3339() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:01.5Z"), Some(1_500_000_000));
        assert_eq!(parse_rfc3339("1970-01-01T01:00:00+01:00"), Some(0));
        // Not a date or an offset RFC 3339 allows: the field is unparseable.
        assert_eq!(parse_rfc3339("2025-02-29T00:00:00Z"), None);
        assert_eq!(
            parse_rfc3339("2024-02-29T00:00:00Z"),
            Some(1_709_164_800_000_000_000)
        );
        assert_eq!(parse_rfc3339("2025-01-01T00:00:00+24:00"), None);
    }

    #[test]
    fn example_of_parse_duration_str() {
        assert_eq!(parse_duration_str("735.200735ms"), Some(735_200_735));
        assert_eq!(parse_duration_str("1.5s"), Some(1_500_000_000));
        assert_eq!(parse_duration_str("49.382μs"), Some(49_382));
        assert_eq!(parse_duration_str("0ns"), Some(0));
    }
}
