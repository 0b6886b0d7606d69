//! Numbers as tokentime writes them: milliseconds with at most three decimals, and JSON
//! string bodies. A leaf every layer may use; writes only to the buffer or writer it is given.

use std::io::{self, Write};

/// Writes a duration given in ns as milliseconds with at most 3 decimals (rounded to the
/// microsecond), at least one: `412.5`, `1650.0`, `0.001`.
///
/// ```
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

/// Writes `v` with at most 3 decimals, at least one (`2.5`, `3.0`, `-0.125`).
///
/// # Errors
/// The writer's.
pub fn write_fixed3(out: &mut impl Write, v: f64) -> io::Result<()> {
    let thousandths = (v * 1000.0).round();
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

/// Rounds to 3 decimals as [`write_fixed3`] prints it.
pub fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// Appends the decimal digits of `n`.
pub(crate) fn push_u64(out: &mut Vec<u8>, n: u64) {
    let mut buf = [0u8; 20];
    out.extend_from_slice(u64_digits(n, &mut buf));
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
    if !s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
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
