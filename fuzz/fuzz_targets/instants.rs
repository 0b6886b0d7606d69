//! The instant parser: one wall-clock instant written every way a producer writes it, read back
//! by `decode_instant` in the unit of each spelling, and arbitrary text in every timestamp unit.
//!
//! Input layout: `[mode, t (8 bytes, little endian), digits, offset (2 bytes), style, u
//! (8 bytes), text...]`. `mode` maps `t` (and `u`) anywhere in `i64` ns, near the plausible
//! window, or within a second of its edges; `text` is any text.
//!
//! Checked:
//! - Window: every timestamp unit reads any text as an instant in 2000..2200 (`At`), or as
//!   `Implausible`/`Unreadable`; never an `At` out of the window.
//! - Same instant, same answer: `t` written as epoch seconds, ms, us and ns (numbers, decimal
//!   strings, exponent forms such as `1741946531018e-3`) and as RFC 3339 (`T`/`t`/space, `Z`/`z`,
//!   any offset, no offset) is `At(t)` in each spelling's unit when `t` is in the window,
//!   `Implausible` out of it, never `Unreadable`; `epoch` (by magnitude) gives `At(t)` for every
//!   epoch spelling of a `t` in the window.
//! - Cut spellings: `t` written with `digits` fractional digits (0 to 9, truncated) reads as
//!   `t` truncated to that precision, in every unit.
//! - Floats: `t` as an `f64` of seconds (or ms, us), printed as Rust prints it (Python's `repr`
//!   prints the same shortest digits), reads within the float's rounding of `t`; and the reading
//!   is monotone: `t <= u` gives reading(t) <= reading(u).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tokentime::{Instant, PLAUSIBLE_FROM_NS, PLAUSIBLE_UNTIL_NS, Unit, decode_instant};

const NS: i64 = 1_000_000_000;

fn plausible(ns: i64) -> bool {
    (PLAUSIBLE_FROM_NS..PLAUSIBLE_UNTIL_NS).contains(&ns)
}

/// What an instant `t` (epoch ns) is as a wall-clock instant.
fn expected(t: i128) -> Instant {
    match i64::try_from(t) {
        Ok(t) if plausible(t) => Instant::At(t),
        _ => Instant::Implausible,
    }
}

/// Maps raw bytes to an instant: anywhere, near the window (10 years either side), or within a
/// second of one of its edges.
fn instant(mode: u8, raw: i64) -> i64 {
    let span = |from: i64, len: i64| from + raw.rem_euclid(len);
    match mode % 4 {
        0 => raw,
        1 | 2 => span(
            PLAUSIBLE_FROM_NS - 10 * 366 * 86_400 * NS,
            PLAUSIBLE_UNTIL_NS - PLAUSIBLE_FROM_NS + 20 * 366 * 86_400 * NS,
        ),
        _ if raw & 1 == 0 => span(PLAUSIBLE_FROM_NS - NS, 2 * NS),
        _ => span(PLAUSIBLE_UNTIL_NS - NS, 2 * NS),
    }
}

/// `t` (epoch ns) in a unit of `10^scale` ns (`scale` 9: seconds ... 0: ns) with `digits`
/// fractional digits, cut toward zero, and the instant it denotes: `(text, ns)`.
fn epoch_text(t: i64, scale: u32, digits: u32) -> (String, i128) {
    let unit = 10u128.pow(scale);
    let digits = digits.min(scale);
    let cut = 10u128.pow(scale - digits);
    let mag = u128::from(t.unsigned_abs());
    let (int, kept) = (mag / unit, mag % unit / cut);
    let sign = if t < 0 { "-" } else { "" };
    let value = i128::try_from(int * unit + kept * cut).unwrap();
    let ns = if t < 0 { -value } else { value };
    let text = if digits == 0 {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{kept:0w$}", w = digits as usize)
    };
    (text, ns)
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// `t` as RFC 3339 with `digits` fractional digits (truncated), written at `offset_min` minutes
/// east of UTC, in one of the accepted styles, and the instant it denotes; `None` when the
/// local year has no four digits.
fn rfc3339_text(t: i64, digits: u32, offset_min: i64, style: u8) -> Option<(String, i128)> {
    let (secs, frac) = (t.div_euclid(NS), t.rem_euclid(NS));
    let local = secs + offset_min * 60;
    let (days, tod) = (local.div_euclid(86_400), local.rem_euclid(86_400));
    let (y, mo, d) = civil_from_days(days);
    if !(0..=9999).contains(&y) {
        return None;
    }
    let kept = frac / 10i64.pow(9 - digits);
    let ns = i128::from(secs) * i128::from(NS) + i128::from(kept * 10i64.pow(9 - digits));
    let frac_text = if digits == 0 {
        String::new()
    } else {
        format!(".{kept:0w$}", w = digits as usize)
    };
    let sep = [b'T', b't', b' '][usize::from(style % 3)] as char;
    let zone = match (style / 3) % 4 {
        // No offset is read as UTC: only for UTC.
        0 if offset_min == 0 => String::new(),
        1 if offset_min == 0 => "z".to_owned(),
        _ if offset_min == 0 && style & 0x80 != 0 => "Z".to_owned(),
        _ => {
            let sign = if offset_min < 0 { '-' } else { '+' };
            let m = offset_min.abs();
            format!("{sign}{:02}:{:02}", m / 60, m % 60)
        }
    };
    let text = format!(
        "{y:04}-{mo:02}-{d:02}{sep}{:02}:{:02}:{:02}{frac_text}{zone}",
        tod / 3600,
        tod / 60 % 60,
        tod % 60
    );
    Some((text, ns))
}

/// Every epoch spelling of `t`, whole and cut to `digits`: `(json text, unit, instant)`.
fn epoch_spellings(t: i64, digits: u32) -> Vec<(String, Unit, i128)> {
    let mut out = vec![];
    for (unit, scale) in [
        (Unit::EpochS, 9),
        (Unit::EpochMs, 6),
        (Unit::EpochUs, 3),
        (Unit::EpochNs, 0),
    ] {
        for d in [scale, digits] {
            let (text, ns) = epoch_text(t, scale, d);
            // As a number, as a decimal string, with blanks around it (JSON allows them).
            out.push((text.clone(), unit, ns));
            out.push((format!("\"{text}\""), unit, ns));
            out.push((format!(" {text}\t"), unit, ns));
            // The same digits with an exponent: the point moved 3 places.
            let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
            let (sign, int) = int.split_at(usize::from(int.starts_with('-')));
            let all = format!("{int}{frac}");
            let all = all.trim_start_matches('0');
            let mantissa = format!("{sign}{}", if all.is_empty() { "0" } else { all });
            if scale >= 3 {
                let e = frac.len() as i64;
                out.push((format!("{mantissa}e-{e}"), unit, ns));
                out.push((format!("{mantissa}E-{e}"), unit, ns));
            }
        }
    }
    out
}

/// `t` as a float of seconds, ms and us, printed the shortest way, and the tolerance the float
/// has (half its spacing, and the ns rounding).
fn float_spellings(t: i64) -> Vec<(String, Unit, f64)> {
    let mut out = vec![];
    for (unit, per) in [
        (Unit::EpochS, 1e9),
        (Unit::EpochMs, 1e6),
        (Unit::EpochUs, 1e3),
    ] {
        let v = t as f64 / per;
        // One ulp of the value in ns, plus the conversion of `t` to f64 and the last ns.
        let ulp = (v.abs() * f64::EPSILON).max(f64::MIN_POSITIVE) * per;
        let slack = ulp * 2.0 + t.unsigned_abs() as f64 * f64::EPSILON + 1.0;
        out.push((format!("{v:?}"), unit, slack));
    }
    out
}

fn check_text(raw: &str) {
    for unit in Unit::ALL.into_iter().filter(|u| u.is_timestamp()) {
        if let Instant::At(v) = decode_instant(raw, unit) {
            assert!(plausible(v), "{raw:?} in {unit:?}: {v} out of the window");
        }
    }
}

fn check_instant(t: i64, digits: u32, offset_min: i64, style: u8) {
    let want = expected(t.into());
    for (text, unit, ns) in epoch_spellings(t, digits) {
        assert_eq!(
            decode_instant(&text, unit),
            expected(ns),
            "{text} in {unit:?}"
        );
        if let Instant::At(ns) = expected(ns) {
            assert_eq!(
                decode_instant(&text, Unit::EpochAuto),
                Instant::At(ns),
                "{text} as an auto epoch"
            );
        }
    }
    for d in [9, digits] {
        if let Some((text, ns)) = rfc3339_text(t, d, offset_min, style) {
            let quoted = format!("\"{text}\"");
            assert_eq!(
                decode_instant(&quoted, Unit::Rfc3339),
                expected(ns),
                "{text}"
            );
            assert_eq!(
                decode_instant(&quoted, Unit::EpochAuto),
                expected(ns),
                "{text} as an auto epoch"
            );
            // Unquoted, it is no JSON string: not an instant.
            assert_eq!(
                decode_instant(&text, Unit::Rfc3339),
                Instant::Unreadable,
                "{text} unquoted"
            );
        }
    }
    for (text, unit, slack) in float_spellings(t) {
        match decode_instant(&text, unit) {
            Instant::At(v) => {
                assert!(
                    ((i128::from(v) - i128::from(t)) as f64).abs() <= slack,
                    "{text} in {unit:?}: {v}, not {t} (slack {slack})"
                );
            }
            // Far from the window's edges, the float is on the same side as `t`.
            got => {
                let wide = i128::from(t);
                let edge = (wide - i128::from(PLAUSIBLE_FROM_NS))
                    .unsigned_abs()
                    .min((wide - i128::from(PLAUSIBLE_UNTIL_NS)).unsigned_abs());
                assert!(
                    want != Instant::At(t) || (edge as f64) <= slack,
                    "{text} in {unit:?}: {got:?}, not {t}"
                );
            }
        }
    }
}

/// Float spellings of `t <= u` read in order.
fn check_monotone(t: i64, u: i64) {
    let (t, u) = (t.min(u), t.max(u));
    for ((a, unit, _), (b, _, _)) in float_spellings(t).into_iter().zip(float_spellings(u)) {
        if let (Instant::At(x), Instant::At(y)) =
            (decode_instant(&a, unit), decode_instant(&b, unit))
        {
            assert!(x <= y, "{a} read {x}, {b} read {y} in {unit:?}");
        }
    }
    for (digits, scale) in [(9, 9), (3, 6), (0, 3)] {
        let (a, _) = epoch_text(t, scale, digits);
        let (b, _) = epoch_text(u, scale, digits);
        let unit = [Unit::EpochUs, Unit::EpochMs, Unit::EpochS][(scale / 3 - 1) as usize];
        if let (Instant::At(x), Instant::At(y)) =
            (decode_instant(&a, unit), decode_instant(&b, unit))
        {
            assert!(x <= y, "{a} read {x}, {b} read {y} in {unit:?}");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    check_text(&String::from_utf8_lossy(data));
    let Some((head, rest)) = data.split_first_chunk::<21>() else {
        return;
    };
    check_text(&String::from_utf8_lossy(rest));
    let mode = head[0];
    let t = instant(mode, i64::from_le_bytes(head[1..9].try_into().unwrap()));
    let u = instant(mode, i64::from_le_bytes(head[13..21].try_into().unwrap()));
    let digits = u32::from(head[9] % 10);
    // Offsets of RFC 3339: -23:59 to +23:59.
    let offset_min = i64::from(i16::from_le_bytes([head[10], head[11]])) % (24 * 60);
    check_instant(t, digits, offset_min, head[12]);
    check_monotone(t, u);
});
