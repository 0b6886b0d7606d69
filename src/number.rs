//! Numbers as tokentime writes them: milliseconds with at most three decimals, and JSON
//! string bodies. A leaf every layer may use; writes only to the buffer or writer it is given.

use std::io::{self, Write};

/// Writes a duration given in ns as milliseconds with at most 3 decimals (rounded to the
/// microsecond), at least one: `412.5`, `1650.0`, `0.001`.
///
/// ```text
/// let mut out = Vec::new();
/// tokentime::write_ms(&mut out, 412_500_000.0).unwrap();
/// tokentime::write_ms(&mut out, 18_375_047.6).unwrap();
/// assert_eq!(out, b"412.518.375");
/// ```
///
/// # Errors
/// The writer's.
pub fn write_ms(out: &mut impl Write, ns: f64) -> io::Result<()> {
    write_fixed3(out, ns / 1e6)
}

/// `x.round()` (half away from zero), without the libm call `round` is on x86-64 without
/// SSE4.1: the same result for every `x`, the sign of a zero included.
#[inline(always)]
pub(crate) fn round(x: f64) -> f64 {
    // From 2^52 up every f64 is an integer (and infinities and NaN are left as they are).
    if x.abs() < TWO_52 {
        // Adding the f64 just below a half, then truncating (exact below 2^53), rounds halves
        // away from zero and nothing else up, with no branch on the fraction.
        let y = x + 0.499_999_999_999_999_94_f64.copysign(x);
        ((y as i64) as f64).copysign(x)
    } else {
        x
    }
}

/// 2^52, from which up every f64 is an integer.
const TWO_52: f64 = 4_503_599_627_370_496.0;

/// `x.floor()`, without the libm call `floor` is on x86-64 without SSE4.1: the same result
/// for every `x`, the sign of a zero included.
#[inline(always)]
pub(crate) fn floor(x: f64) -> f64 {
    if x.abs() < TWO_52 {
        let t = (x as i64) as f64;
        (t - f64::from(u8::from(t > x))).copysign(x)
    } else {
        x
    }
}

/// Writes `v` with at most 3 decimals, at least one (`2.5`, `3.0`, `-0.125`).
///
/// # Errors
/// The writer's.
pub fn write_fixed3(out: &mut impl Write, v: f64) -> io::Result<()> {
    let thousandths = round(v * 1000.0);
    if !thousandths.is_finite() || thousandths.abs() >= 9.0e18 {
        return out.write_all(b"null");
    }
    let t = thousandths as i64;
    let t_abs = t.unsigned_abs();
    let (int, mut frac) = (t_abs / 1000, t_abs % 1000);
    // Sign, integer digits, `.`, 1 to 3 decimals (trailing zeros dropped), in one write.
    let mut text = [0u8; 32];
    let mut len = 0;
    if t < 0 {
        text[0] = b'-';
        len = 1;
    }
    let mut digits = [0u8; 20];
    let int = u64_digits(int, &mut digits);
    text[len..len + int.len()].copy_from_slice(int);
    len += int.len();
    text[len] = b'.';
    len += 1;
    let mut places = 3;
    while places > 1 && frac % 10 == 0 {
        frac /= 10;
        places -= 1;
    }
    for p in (0..places).rev() {
        text[len + p] = b'0' + (frac % 10) as u8;
        frac /= 10;
    }
    len += places;
    out.write_all(&text[..len])
}

/// [`write_fixed3`] into a string.
pub(crate) fn fixed3(v: f64) -> String {
    let mut b = Vec::with_capacity(24);
    let _ = write_fixed3(&mut b, v);
    String::from_utf8_lossy(&b).into_owned()
}

/// A number as the tables print it: one decimal from 100 up, [`fixed3`] below.
pub(crate) fn fmt_cell(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.1}")
    } else {
        fixed3(x)
    }
}

/// Rounds to 3 decimals as [`write_fixed3`] prints it. Never `-0.0`: a value that rounds to
/// zero is `0.0` (JSON written from it never holds `-0.0`).
pub fn round3(v: f64) -> f64 {
    // `-0.0 + 0.0` is `0.0`.
    round(v * 1000.0) / 1000.0 + 0.0
}

/// A count as JSON: a whole number as an integer (`177`, not `177.0`), an estimated one (a
/// histogram bin's share of a t-digest) rounded to 3 decimals.
pub(crate) fn count_json(v: f64) -> serde_json::Value {
    let r = round3(v);
    if r.fract() == 0.0 && r.abs() < 9.0e15 {
        serde_json::Value::from(r as i64)
    } else {
        serde_json::Value::from(r)
    }
}

/// Rounds a rate to 6 significant digits (at most 3 decimals past 1000/s): a slow run's
/// 0.0415 requests/s keeps its digits, where 3 decimals would be 1.2% off. Never `-0.0`.
pub(crate) fn round_rate(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v + 0.0;
    }
    let decimals = (5 - v.abs().log10().floor() as i32).clamp(3, 12);
    let p = 10f64.powi(decimals);
    round(v * p) / p + 0.0
}

/// The decimal digits of `n`, written at the end of `buf`.
pub(crate) fn u64_digits(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[i..];
        }
    }
}

/// Appends `s` JSON-escaped (without quotes).
pub(crate) fn write_json_str_body(out: &mut Vec<u8>, s: &str) {
    if !needs_escape(s.as_bytes()) {
        out.extend_from_slice(s.as_bytes());
        return;
    }
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            c if (c as u32) < 0x20 => {
                out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes())
            }
            c => {
                let mut b = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            }
        }
    }
}

/// True when `b` has a byte JSON strings escape (`"`, `\\`, a control character), tested
/// eight bytes at a time.
fn needs_escape(b: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // A high bit for each byte of `w` that is zero, or below 0x20 (no false negatives; a
    // false positive only after a true one, in a higher byte).
    let special = |w: u64| {
        let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
        (w.wrapping_sub(ONES * 0x20) & !w & HIGH)
            | zero(w ^ (ONES * 0x22))
            | zero(w ^ (ONES * 0x5c))
    };
    let mut words = b.chunks_exact(8);
    for w in &mut words {
        if special(u64::from_le_bytes(w.try_into().unwrap_or_default())) != 0 {
            return true;
        }
    }
    // The rest, padded with a byte that is never special.
    let rest = words.remainder();
    let mut last = [b'a'; 8];
    last[..rest.len()].copy_from_slice(rest);
    special(u64::from_le_bytes(last)) != 0
}

/// How many ASCII digits start the 8 bytes of `w` (read little-endian, so the first byte is
/// the lowest): 8 when all of them are digits.
#[inline(always)]
pub(crate) fn leading_digits(w: u64) -> usize {
    const ONES: u64 = u64::MAX / 255;
    // High bit of a byte set when it is below '0' or above '9' (exact for the first such byte:
    // a borrow or carry only reaches the bytes after it).
    let stop = (w.wrapping_sub(ONES * 0x30) | w.wrapping_add(ONES * 0x46)) & (ONES << 7);
    (stop.trailing_zeros() / 8) as usize
}

/// xorshift64: a reproducible stream of words for tests (`x` is the state, never 0).
#[cfg(test)]
pub(crate) fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_and_floor_are_f64s() {
        let same = |x: f64| {
            for (a, b) in [(round(x), x.round()), (floor(x), x.floor())] {
                assert!(
                    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                    "{x:e}: {a} {b}"
                );
            }
        };
        for x in [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -1.5,
            2.5,
            0.49999999999999994,
            -0.49999999999999994,
            4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            -4_503_599_627_370_495.5,
            9.2e18,
            -9.3e18,
            1e300,
            f64::MIN_POSITIVE,
            -5e-324,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            12_590.445_233_909_576,
            -0.3,
            // Where a floor is taken as an i32 (a histogram bin): its bounds.
            1.0,
            -1.0,
            -2.5,
            1e10,
            -1e10,
            2_147_483_647.5,
            -2_147_483_648.5,
            -2_147_483_649.0,
            -f64::MIN_POSITIVE,
        ] {
            same(x);
        }
        // Halves and their neighbours at every magnitude.
        for e in 0..53 {
            let h = (1u64 << e) as f64 + 0.5;
            for x in [h, -h, 2.0 * h, h * 0.5] {
                for d in -3i64..=3 {
                    same(f64::from_bits(x.to_bits().wrapping_add_signed(d)));
                }
            }
        }
        let mut s = 0x5EED_u64;
        for _ in 0..200_000 {
            let w = xorshift(&mut s);
            // Any bit pattern, and values near halves.
            same(f64::from_bits(w));
            let v = (w % 2_000_000) as f64 / 1000.0 - 1000.0;
            same(v);
            same(v + 0.0005);
            same(f64::from_bits(w >> 12 | 0x4330_0000_0000_0000) - 4_503_599_627_370_496.0);
        }
    }

    #[test]
    fn special_bytes_found_at_every_place() {
        let naive = |b: &[u8]| b.iter().any(|&c| c == b'"' || c == b'\\' || c < 0x20);
        for len in 0..20 {
            for at in 0..len {
                for c in 0..=255u8 {
                    let mut b = vec![b'x'; len];
                    b[at] = c;
                    assert_eq!(needs_escape(&b), naive(&b), "{b:?}");
                    b[len - 1] = 0xff;
                    assert_eq!(needs_escape(&b), naive(&b), "{b:?}");
                }
            }
        }
    }

    #[test]
    fn rounding_never_gives_negative_zero() {
        for v in [-0.0, -0.0004, -1e-300] {
            assert!(round3(v).is_sign_positive(), "{v}");
        }
        assert_eq!(round3(-0.0005), -0.001);
    }

    #[test]
    fn three_decimals_at_most() {
        let s = |v: f64| {
            let mut o = Vec::new();
            write_fixed3(&mut o, v).unwrap();
            String::from_utf8(o).unwrap()
        };
        assert_eq!(s(1650.0), "1650.0");
        assert_eq!(s(412.5), "412.5");
        assert_eq!(s(0.0004), "0.0");
        assert_eq!(s(0.0005), "0.001");
        assert_eq!(s(18.375047619), "18.375");
        assert_eq!(s(2.25), "2.25");
        assert_eq!(s(-3.5), "-3.5");
        assert_eq!(s(f64::NAN), "null");
    }

    /// `write_fixed3` against the plain `format!` version it replaced, on many values.
    #[test]
    fn fixed3_matches_the_naive_rendering() {
        let naive = |v: f64| {
            let t = (v * 1000.0).round();
            if !t.is_finite() || t.abs() >= 9.0e18 {
                return "null".to_owned();
            }
            let t = t as i64;
            let sign = if t < 0 { "-" } else { "" };
            let (int, frac) = (t.unsigned_abs() / 1000, t.unsigned_abs() % 1000);
            if frac == 0 {
                format!("{sign}{int}.0")
            } else if frac % 100 == 0 {
                format!("{sign}{int}.{}", frac / 100)
            } else if frac % 10 == 0 {
                format!("{sign}{int}.{:02}", frac / 10)
            } else {
                format!("{sign}{int}.{frac:03}")
            }
        };
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for i in 0..100_000 {
            xorshift(&mut x);
            let v = match i % 4 {
                0 => (x % 10_000_000) as f64 / 1000.0,
                1 => -((x % 100_000) as f64) / 1000.0,
                2 => f64::from_bits(x) % 1e12,
                _ => (x % 1000) as f64 / 7.0,
            };
            let mut got = Vec::new();
            write_fixed3(&mut got, v).unwrap();
            assert_eq!(String::from_utf8(got).unwrap(), naive(v), "{v}");
        }
    }
}

/// The examples in this file's docs, run.
#[cfg(test)]
mod doc_examples {
    use super::*;

    #[test]
    fn example_of_write_ms() {
        let mut out = Vec::new();
        write_ms(&mut out, 412_500_000.0).unwrap();
        write_ms(&mut out, 18_375_047.6).unwrap();
        assert_eq!(out, b"412.518.375");
    }
}
