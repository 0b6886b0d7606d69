//! The timestamp, duration and count parsers and the millisecond printer.
//!
//! Every input is used three ways: its text goes to every decoder (`decode_ns` in each unit,
//! `decode_count`, `parse_rfc3339`, `parse_duration_str`); its first bytes become an `f64` for
//! `write_fixed3` and the fields of a valid RFC 3339 timestamp.
//!
//! Checked: nothing panics; every decimal unit agrees exactly with a naive reference that
//! shifts the decimal point in the digit string; counts are exact integers; `write_fixed3`
//! prints at most 3 decimals within half a thousandth; a generated RFC 3339 string parses to
//! the instant a naive day count gives; `decode_instant` keeps exactly the readings within the
//! plausible window (2000 to 2200) of a timestamp unit, and at most one reading of a number in
//! `epoch` (by magnitude) lies in it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tokentime::{Instant, PLAUSIBLE_FROM_NS, PLAUSIBLE_UNTIL_NS, decode_instant};
use tokentime::{Unit, decode_count, decode_ns, parse_duration_str, parse_rfc3339};
use tokentime::{round3, write_fixed3};

/// The plausibility window of wall-clock instants.
fn plausible(ns: i64) -> bool {
    (PLAUSIBLE_FROM_NS..PLAUSIBLE_UNTIL_NS).contains(&ns)
}

/// `decode_instant` agrees with `decode_ns` and the window: a timestamp is its decoded value
/// when that is in the window, and never a value out of it; a duration has no window. Of a
/// number's four epoch readings (s, ms, us, ns) at most one is in the window, and `epoch`
/// gives that one or none.
fn check_instants(raw: &str) {
    for unit in Unit::ALL {
        let got = decode_instant(raw, unit);
        let ns = decode_ns(raw, unit);
        match got {
            Instant::At(v) => {
                assert_eq!(Some(v), ns, "{raw:?} in {unit:?}");
                assert!(
                    !unit.is_timestamp() || plausible(v),
                    "{raw:?} in {unit:?}: {v}"
                );
            }
            Instant::Implausible => {
                assert!(unit.is_timestamp(), "{raw:?} in {unit:?}");
                assert!(ns.is_none_or(|v| !plausible(v)), "{raw:?} in {unit:?}");
            }
            Instant::Unreadable => assert_eq!(ns, None, "{raw:?} in {unit:?}"),
        }
    }
    let (text, quoted) = unquote(raw);
    if quoted && parse_rfc3339(text).is_some() {
        return;
    }
    let readings: Vec<i64> = [9, 6, 3, 0]
        .into_iter()
        .filter_map(|scale| reference_scaled(text, scale))
        .filter(|&v| plausible(v))
        .collect();
    assert!(readings.len() <= 1, "{raw:?}: {readings:?}");
    if let Instant::At(v) = decode_instant(raw, Unit::EpochAuto) {
        assert_eq!(readings, [v], "{raw:?} as an auto epoch");
    } else {
        assert!(readings.is_empty(), "{raw:?}: {readings:?} left out");
    }
}

/// `text` (a decimal number, `[+-]digits[.digits][(e|E)[+-]digits]`) times `10^scale`, rounded
/// half away from zero, or `None` when it is no such number or does not fit an `i64`.
/// Naive on purpose: the digits are kept as a string and the decimal point is moved.
fn reference_scaled(text: &str, scale: i64) -> Option<i64> {
    let b = text.as_bytes();
    let mut i = 0;
    let neg = match b.first() {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let digits_from = |i: &mut usize| {
        let s = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        &b[s..*i]
    };
    let int = digits_from(&mut i);
    let mut frac: &[u8] = &[];
    if b.get(i) == Some(&b'.') {
        i += 1;
        frac = digits_from(&mut i);
    }
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut exp: i64 = 0;
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        let eneg = match b.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let e = digits_from(&mut i);
        if e.is_empty() {
            return None;
        }
        let mag = saturating_exp(std::str::from_utf8(e).unwrap());
        exp = if eneg { -mag } else { mag };
    }
    if i != b.len() {
        return None;
    }
    let all: Vec<u8> = int.iter().chain(frac).copied().collect();
    if all.iter().all(|&d| d == b'0') {
        return Some(0);
    }
    // The decimal point sits after `point` digits of `all`.
    let point = int.len() as i64 + exp + scale;
    let mut v: i128 = 0;
    if point > 0 {
        for k in 0..point {
            let d = all.get(k as usize).map_or(0, |d| d - b'0');
            v = v * 10 + i128::from(d);
            if v > i128::from(i64::MAX) {
                return None;
            }
        }
    }
    let first_dropped = if point >= 0 {
        all.get(point as usize).map_or(0, |d| d - b'0')
    } else {
        0
    };
    if first_dropped >= 5 {
        v += 1;
    }
    let v = i64::try_from(v).ok()?;
    Some(if neg { -v } else { v })
}

/// An exponent's value, `[+-]digits`, clamped to 10^12 in magnitude: past that every digit is
/// out of range either way.
fn saturating_exp(e: &str) -> i64 {
    let (neg, digits) = match e.as_bytes().first() {
        Some(b'-') => (true, &e[1..]),
        Some(b'+') => (false, &e[1..]),
        _ => (false, e),
    };
    let mag = digits
        .parse::<i64>()
        .unwrap_or(i64::MAX)
        .min(1_000_000_000_000);
    if neg { -mag } else { mag }
}

/// True when `text` (a valid decimal) has no non-zero digit below the units.
fn reference_integral(text: &str) -> bool {
    let (mant, exp) = match text.find(['e', 'E']) {
        Some(i) => (&text[..i], saturating_exp(&text[i + 1..])),
        None => (text, 0),
    };
    let mant = mant.trim_start_matches(['+', '-']);
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let all: Vec<u8> = int.bytes().chain(frac.bytes()).collect();
    let point = int.len() as i64 + exp;
    all.iter()
        .enumerate()
        .all(|(k, &d)| (k as i64) < point || d == b'0')
}

/// What `decode_ns` does before reading a number: trim, drop one pair of quotes.
fn unquote(raw: &str) -> (&str, bool) {
    let raw = raw.trim();
    match raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(inner) => (inner, true),
        None => (raw, false),
    }
}

fn check_decoders(raw: &str) {
    let (text, quoted) = unquote(raw);
    for (unit, scale) in [
        (Unit::EpochS, 9),
        (Unit::S, 9),
        (Unit::EpochMs, 6),
        (Unit::Ms, 6),
        (Unit::EpochUs, 3),
        (Unit::Us, 3),
        (Unit::EpochNs, 0),
        (Unit::Ns, 0),
    ] {
        assert_eq!(
            decode_ns(raw, unit),
            reference_scaled(text, scale),
            "{raw:?} in {unit:?}"
        );
    }
    let auto = decode_ns(raw, Unit::EpochAuto);
    match quoted.then(|| parse_rfc3339(text)).flatten() {
        Some(t) => assert_eq!(auto, Some(t), "{raw:?} as an RFC 3339 epoch"),
        None => {
            let want = reference_scaled(text, 0).and_then(|n| {
                let m = n.unsigned_abs();
                let scale = match m {
                    _ if m < 100_000_000_000 => 9,
                    _ if m < 100_000_000_000_000 => 6,
                    _ if m < 100_000_000_000_000_000 => 3,
                    _ => 0,
                };
                reference_scaled(text, scale)
            });
            assert_eq!(auto, want, "{raw:?} as an auto epoch");
        }
    }
    let rfc = decode_ns(raw, Unit::Rfc3339);
    assert_eq!(rfc, quoted.then(|| parse_rfc3339(text)).flatten());
    let dur = decode_ns(raw, Unit::DurationStr);
    assert_eq!(dur, quoted.then(|| parse_duration_str(text)).flatten());
    assert_eq!(decode_ns(raw, Unit::Count), None);

    let count = decode_count(raw);
    let (ctext, _) = unquote(raw);
    let want = reference_scaled(ctext, 0)
        .filter(|_| reference_integral(ctext))
        .and_then(|n| u64::try_from(n).ok());
    assert_eq!(count, want, "{raw:?} as a count");

    // A number followed by each suffix: unambiguous when the number ends in no letter of one.
    if !text.is_empty()
        && text
            .bytes()
            .all(|c| c.is_ascii_digit() || b".eE".contains(&c))
    {
        for (suffix, scale) in [
            ("ns", 0),
            ("us", 3),
            ("µs", 3),
            ("μs", 3),
            ("ms", 6),
            ("s", 9),
        ] {
            let s = format!("{text}{suffix}");
            assert_eq!(
                parse_duration_str(&s),
                reference_scaled(text, scale),
                "{s:?}"
            );
        }
    }
    let _ = parse_rfc3339(raw);
    let _ = parse_duration_str(raw);
}

fn check_fixed3(v: f64) {
    let mut out = Vec::new();
    write_fixed3(&mut out, v).unwrap();
    let s = String::from_utf8(out).expect("ASCII");
    let t = (v * 1000.0).round();
    if !t.is_finite() || t.abs() >= 9.0e18 {
        assert_eq!(s, "null", "{v}");
        return;
    }
    let body = s.strip_prefix('-').unwrap_or(&s);
    let (int, frac) = body.split_once('.').expect("a decimal point");
    assert!(
        !int.is_empty() && int.bytes().all(|c| c.is_ascii_digit()),
        "{s}"
    );
    assert!(
        (1..=3).contains(&frac.len()) && frac.bytes().all(|c| c.is_ascii_digit()),
        "{s}"
    );
    assert!(
        frac.len() == 1 || !frac.ends_with('0'),
        "trailing zero in {s}"
    );
    assert!(int == "0" || !int.starts_with('0'), "leading zero in {s}");
    let p: f64 = s.parse().unwrap();
    assert!(!(s.starts_with('-') && p == 0.0), "negative zero {s}");
    assert!(
        (p - v).abs() <= 0.0005 + v.abs() * 1e-15,
        "{v} printed as {s}"
    );
    if t.abs() < 9_007_199_254_740_992.0 {
        assert_eq!(p, round3(v), "{v}: printed {s}, round3 says {}", round3(v));
    }
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn month_days(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to `y-m-d`, counted year by year and month by month.
fn naive_days(y: i64, m: i64, d: i64) -> i64 {
    let mut days = 0;
    if y >= 1970 {
        for yy in 1970..y {
            days += if is_leap(yy) { 366 } else { 365 };
        }
    } else {
        for yy in y..1970 {
            days -= if is_leap(yy) { 366 } else { 365 };
        }
    }
    for mm in 1..m {
        days += month_days(y, mm);
    }
    days + d - 1
}

fn check_rfc3339(b: &[u8; 16]) {
    let u16_at = |i: usize| i64::from(u16::from_le_bytes([b[i], b[i + 1]]));
    let y = u16_at(0) % 10_000;
    let mo = i64::from(b[2] % 12) + 1;
    // Days up to 31 in every month: the ones the month does not have are refused.
    let d = i64::from(b[3]) % 31 + 1;
    let h = i64::from(b[4] % 24);
    let mi = i64::from(b[5] % 60);
    let sec = i64::from(b[6] % 61);
    let ndig = usize::from(b[7] % 10);
    let frac_raw = u32::from_le_bytes([b[8], b[9], b[10], b[11]]);
    let frac = i64::from(frac_raw) % 10i64.pow(ndig as u32);
    let sep = [b'T', b't', b' '][usize::from(b[12] % 3)] as char;
    let (zone, offset_s) = match b[13] % 4 {
        0 => ("Z".to_owned(), 0),
        1 => ("z".to_owned(), 0),
        k => {
            let (oh, om) = (i64::from(b[14] % 100), i64::from(b[15] % 60));
            let sign = if k == 2 { '+' } else { '-' };
            let off = (oh * 3600 + om * 60) * if k == 2 { 1 } else { -1 };
            (format!("{sign}{oh:02}:{om:02}"), off)
        }
    };
    let frac_text = if ndig == 0 {
        String::new()
    } else {
        format!(".{frac:0ndig$}")
    };
    let s = format!("{y:04}-{mo:02}-{d:02}{sep}{h:02}:{mi:02}:{sec:02}{frac_text}{zone}");
    let secs = i128::from(naive_days(y, mo, d) * 86_400 + h * 3600 + mi * 60 + sec - offset_s);
    let ns = secs * 1_000_000_000 + i128::from(frac * 10i64.pow(9 - ndig as u32));
    // RFC 3339: a day the month has, an offset of at most 23:59.
    let valid = d <= month_days(y, mo) && offset_s.abs() < 24 * 3600;
    let want = if valid { i64::try_from(ns).ok() } else { None };
    assert_eq!(parse_rfc3339(&s), want, "{s}");
    assert_eq!(
        decode_ns(&format!("\"{s}\""), Unit::Rfc3339),
        want,
        "{s} quoted"
    );
    // Well-formed, it is an instant in the window or implausible (the year 9999 too), never
    // unreadable.
    let instant = match i64::try_from(ns) {
        _ if !valid => Instant::Unreadable,
        Ok(v) if plausible(v) => Instant::At(v),
        _ => Instant::Implausible,
    };
    assert_eq!(
        decode_instant(&format!("\"{s}\""), Unit::Rfc3339),
        instant,
        "{s} as an instant"
    );
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    check_decoders(&text);
    check_instants(&text);
    if let Some(head) = data.first_chunk::<16>() {
        check_fixed3(f64::from_le_bytes(head[..8].try_into().unwrap()));
        check_rfc3339(head);
    }
});
