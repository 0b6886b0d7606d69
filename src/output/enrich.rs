//! Enrich output: the metrics of a request as one JSON object spliced into its original line.
//!
//! Owns the byte-level splice and the rendering of numbers. The original bytes are written
//! unchanged up to the line's closing `}`; the metrics object is inserted before it; the rest
//! (the `}`, trailing blanks, the line ending) follows unchanged. Nothing is re-serialized.

use crate::metrics::{Metric, Metrics, NullReason, Sample};
pub(crate) use crate::number::round3;
use crate::number::{push_u64, write_json_str_body, write_ms};
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
    for metric in Metric::ALL.into_iter().filter(|m| m.per_request()) {
        if metric.only_where_logged() && metric.sample(m) == Sample::Ns(Err(NullReason::NotLogged))
        {
            continue;
        }
        member(out, metric.json_name());
        match metric.sample(m) {
            Sample::Ns(Ok(ns)) => write_ms(out, ns)?,
            Sample::Tokens(Some(n)) => push_u64(out, n),
            _ => out.extend_from_slice(b"null"),
        }
    }
    member(out, "cache");
    text(out, m.cache.map(|c| c.as_str()));
    member(out, "ttft_origin");
    text(out, m.ttft_origin.map(|o| o.as_str()));
    member(out, "outcome");
    text(out, Some(m.outcome.as_str()));
    member(out, "error_reason");
    match error_reason {
        Some(r) => {
            out.push(b'"');
            write_json_str_body(out, r);
            out.push(b'"');
        }
        None => out.extend_from_slice(b"null"),
    }
    // The reason for each null duration (a missing count needs none: it is not logged).
    let mut nulls = 0;
    for metric in Metric::ALL.into_iter().filter(|m| m.per_request()) {
        if let Sample::Ns(Err(r)) = metric.sample(m) {
            if metric.only_where_logged() && r == NullReason::NotLogged {
                continue;
            }
            out.extend_from_slice(if nulls == 0 {
                b",\"nulls\":{\""
            } else {
                b",\""
            });
            out.extend_from_slice(metric.json_name().as_bytes());
            out.extend_from_slice(b"\":");
            text(out, Some(r.as_str()));
            nulls += 1;
        }
    }
    if nulls > 0 {
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
