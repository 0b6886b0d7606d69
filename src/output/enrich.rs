//! Enrich output: the metrics of a request as one JSON object spliced into its original line.
//!
//! Owns the byte-level splice and the rendering of numbers. The original bytes are written
//! unchanged up to the line's closing `}`; the metrics object is inserted before it; the rest
//! (the `}`, trailing blanks, the line ending) follows unchanged. Nothing is re-serialized.

use crate::metrics::{Metrics, NullReason, Value};
use crate::number::push_u64;
pub(crate) use crate::number::{round3, write_fixed3, write_json_str_body, write_ms};
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
pub(crate) fn render_all<'a>(
    out: &mut Vec<u8>,
    key: &str,
    requests: &[crate::classify::Request],
    format_name: impl Fn(usize) -> &'a str,
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
        render_object(out, format_name(r.format), &r.metrics)?;
    }
    if requests.len() != 1 {
        out.push(b']');
    }
    Ok(())
}

/// Renders one request's metrics object `{"format":...,...}` (members, in this order: `format`, `ttft_ms`, `tpot_ms`,
/// `e2e_ms`, `queue_ms`, `prefill_ms`, `decode_ms`, `input_tokens`, `cached_tokens`,
/// `output_tokens`, `cache`, `ttft_origin`, `outcome`, and `nulls`: the reason for each null
/// metric, omitted when none is null).
///
/// # Errors
/// The writer's.
pub(crate) fn render_object(out: &mut Vec<u8>, format: &str, m: &Metrics) -> io::Result<()> {
    // Plain byte pushes: this runs once per request, and `write!` costs more than the rest.
    let member = |out: &mut Vec<u8>, name: &str| {
        out.extend_from_slice(b",\"");
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"\":");
    };
    let text = |out: &mut Vec<u8>, v: Option<&str>| match v {
        Some(v) => {
            out.push(b'"');
            out.extend_from_slice(v.as_bytes());
            out.push(b'"');
        }
        None => out.extend_from_slice(b"null"),
    };
    out.extend_from_slice(b"{\"format\":\"");
    write_json_str_body(out, format);
    out.push(b'"');
    let durations: [(&str, Value); 6] = [
        ("ttft_ms", m.ttft),
        ("tpot_ms", m.tpot),
        ("e2e_ms", m.e2e),
        ("queue_ms", m.queue),
        ("prefill_ms", m.prefill),
        ("decode_ms", m.decode),
    ];
    for (name, v) in durations {
        member(out, name);
        match v {
            Ok(ns) => write_ms(out, ns)?,
            Err(_) => out.extend_from_slice(b"null"),
        }
    }
    for (name, v) in [
        ("input_tokens", m.input_tokens),
        ("cached_tokens", m.cached_tokens),
        ("output_tokens", m.output_tokens),
    ] {
        member(out, name);
        match v {
            Some(n) => push_u64(out, n),
            None => out.extend_from_slice(b"null"),
        }
    }
    member(out, "cache");
    text(out, m.cache.map(|c| c.as_str()));
    member(out, "ttft_origin");
    text(out, m.ttft_origin.map(|o| o.as_str()));
    member(out, "outcome");
    text(out, Some(m.outcome.as_str()));
    let nulls = durations
        .iter()
        .filter_map(|(n, v)| v.err().map(|r: NullReason| (*n, r)));
    for (i, (n, r)) in nulls.enumerate() {
        out.extend_from_slice(if i == 0 { b",\"nulls\":{\"" } else { b",\"" });
        out.extend_from_slice(n.as_bytes());
        out.extend_from_slice(b"\":");
        text(out, Some(r.as_str()));
    }
    if durations.iter().any(|(_, v)| v.is_err()) {
        out.push(b'}');
    }
    out.push(b'}');
    Ok(())
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
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
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
