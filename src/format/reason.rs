//! Why a request failed, as a short class that groups: an error class (`RateLimitError`), a
//! code or HTTP status (`429`), or the start of a message with its numbers and ids masked
//! (`Request timed out after # seconds`), at most [`MAX_CHARS`] characters.

use crate::json::raw_str;

/// The longest reason kept, in characters.
pub(crate) const MAX_CHARS: usize = 60;

/// The reason read from the raw JSON text of a value: a number is its integer text (`429`), a
/// string is normalized ([`normalize_text_into`]); anything else (an object, a list, a
/// boolean) and an empty string are no reason.
#[cfg(test)]
pub(crate) fn normalize(raw: &str) -> Option<String> {
    let mut out = String::new();
    normalize_into(raw, &mut out).then_some(out)
}

/// [`normalize`] into `out` (cleared first; no allocation once it has grown): true when
/// there is a reason.
pub(crate) fn normalize_into(raw: &str, out: &mut String) -> bool {
    use std::fmt::Write as _;
    out.clear();
    let raw = raw.trim();
    match raw.as_bytes().first() {
        Some(b'"') => raw_str(raw).is_some_and(|t| normalize_text_into(&t, out)),
        Some(b'-' | b'0'..=b'9') => {
            let Ok(v) = raw.parse::<f64>() else {
                return false;
            };
            if v.fract() == 0.0 && v.abs() < 1e15 {
                let _ = write!(out, "{}", v as i64);
            } else {
                out.extend(raw.chars().take(MAX_CHARS));
            }
            true
        }
        _ => false,
    }
}

/// A message as a reason, written to `out`: its first line only (a Python traceback's last); an exception's class when
/// it starts with one (`litellm.RateLimitError: ...` is `RateLimitError`); else the text with
/// every word that holds a digit masked as `#` (ids, counts, durations, timestamps), except an
/// HTTP status ([`is_status`]), brackets and quotes left out, blanks
/// collapsed, cut at [`MAX_CHARS`] characters. False when nothing is left.
pub(crate) fn normalize_text_into(text: &str, out: &mut String) -> bool {
    let text = text.trim();
    // A Python traceback says what failed on its last line.
    let line = if text.starts_with("Traceback (most recent call last)") {
        text.lines().rev().find(|l| !l.trim().is_empty())
    } else {
        text.lines().next()
    };
    let line = line.unwrap_or("").trim();
    if line.is_empty() {
        return false;
    }
    if let Some(class) = exception_class(line) {
        out.push_str(class);
        return true;
    }
    let body = with_body(line);
    let line = body.as_deref().unwrap_or(line);
    // Where the word being written starts in `out`, and its digits so far.
    let mut word: Option<(usize, usize)> = None;
    // A blank seen since the last thing written: written before the next one.
    let mut blank = false;
    let end_word = |out: &mut String, word: &mut Option<(usize, usize)>| {
        if let Some((at, digits)) = word.take() {
            let len = out.len() - at;
            if digits > 0 && !(digits == len && is_status(&out[..at], &out[at..])) {
                out.truncate(at);
                out.push('#');
            }
        }
    };
    for c in line.chars() {
        let in_word = word.is_some();
        if c.is_alphanumeric() || matches!(c, '_' | '-' | '.') && in_word {
            if !in_word {
                if std::mem::take(&mut blank) && !out.is_empty() {
                    out.push(' ');
                }
                word = Some((out.len(), 0));
            }
            if let Some((_, digits)) = &mut word
                && c.is_ascii_digit()
            {
                *digits += 1;
            }
            out.push(c);
            continue;
        }
        end_word(out, &mut word);
        if out.chars().count() > MAX_CHARS {
            break;
        }
        // Brackets, quotes and backslashes are left out (a reason is a label, and JSON's
        // brackets and escapes in one would only get in the way of reading it).
        if c.is_whitespace() || c.is_control() || matches!(c, '{' | '}' | '[' | ']' | '"' | '\\') {
            blank = true;
            continue;
        }
        if std::mem::take(&mut blank) && !out.is_empty() {
            out.push(' ');
        }
        out.push(c);
    }
    end_word(out, &mut word);
    if let Some((cut, _)) = out.char_indices().nth(MAX_CHARS) {
        // Cut at the last blank that keeps at least half the text (a word is never cut in
        // two), and marked: `…` ends a cut reason.
        let at = out[..cut]
            .rfind(' ')
            .filter(|&b| b >= cut / 2)
            .unwrap_or(cut);
        out.truncate(at);
        let keep = out.trim_end_matches(TRAILING).len();
        out.truncate(keep);
        if let Some((last, _)) = out.char_indices().nth(MAX_CHARS - 1) {
            out.truncate(last);
        }
        out.push('…');
        return true;
    }
    let keep = out.trim_end_matches(TRAILING).len();
    out.truncate(keep);
    !out.is_empty()
}

/// What a reason does not end with.
const TRAILING: [char; 6] = [' ', ':', ',', '-', '.', ';'];

/// A message that carries an error body (`Service Unavailable: {"object": "error", "message":
/// "server overloaded", "code": 503}`, or a Python dict's `{'error': {'message': ...}}`), as the
/// text before the body, the body's message and its HTTP status: `Service Unavailable: server
/// overloaded (code 503)`. `None` when the line holds no object with a message.
fn with_body(line: &str) -> Option<String> {
    let (start, end) = (line.find('{')?, line.rfind('}')?);
    let raw = line.get(start..=end)?;
    let body: serde_json::Value = serde_json::from_str(raw)
        .ok()
        .or_else(|| serde_json::from_str(&python_to_json(raw)?).ok())
        .filter(serde_json::Value::is_object)?;
    let inner = body.get("error").filter(|e| e.is_object()).unwrap_or(&body);
    let text = |v: &serde_json::Value, keys: &[&str]| {
        keys.iter()
            .find_map(|k| v.get(*k).and_then(serde_json::Value::as_str))
            .map(str::to_owned)
    };
    let message = text(inner, &["message", "detail", "msg"])
        .or_else(|| text(&body, &["message", "detail", "msg", "error"]))?;
    let status = [inner, &body]
        .iter()
        .flat_map(|v| ["code", "status", "status_code"].map(|k| v.get(k)))
        .flatten()
        .find_map(|c| match c {
            serde_json::Value::Number(n) => n.as_u64(),
            serde_json::Value::String(t) => t.parse().ok(),
            _ => None,
        })
        .filter(|c| (100..600).contains(c));
    let before = line[..start].trim().trim_end_matches(TRAILING);
    // The status first (a long message is cut at the end), unless the text before the body
    // already says it (`Error code: 429 - {...}`).
    let status = status.map(|c| c.to_string()).filter(|c| {
        !before
            .split(|ch: char| !ch.is_ascii_digit())
            .any(|w| w == c)
    });
    let parts: Vec<String> = [
        (!before.is_empty()).then(|| before.to_owned()),
        status.map(|c| format!("code {c}")),
        message.lines().next().map(str::to_owned),
    ]
    .into_iter()
    .flatten()
    .collect();
    Some(parts.join(": "))
}

/// A Python literal's repr (`{'error': {'message': "it's", 'param': None}}`) as JSON text:
/// single-quoted strings double-quoted, `None`, `True` and `False` as JSON's. `None` when a
/// string does not end.
fn python_to_json(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                out.push('"');
                loop {
                    match chars.next()? {
                        ch if ch == c => break,
                        '\\' => match chars.next()? {
                            '\'' => out.push('\''),
                            e => {
                                out.push('\\');
                                out.push(e);
                            }
                        },
                        '"' => out.push_str("\\\""),
                        ch => out.push(ch),
                    }
                }
                out.push('"');
            }
            ch if ch.is_ascii_alphabetic() => {
                let mut word = String::from(ch);
                while let Some(&n) = chars.peek().filter(|n| n.is_ascii_alphanumeric()) {
                    word.push(n);
                    chars.next();
                }
                out.push_str(match word.as_str() {
                    "None" => "null",
                    "True" => "true",
                    "False" => "false",
                    w => w,
                });
            }
            ch => out.push(ch),
        }
    }
    Some(out)
}

/// Whether `number`, a word of digits written after `before`, reads as an HTTP status: 100 to
/// 599, first in the message or after a word that names one (`Error code: 503`, `HTTP 429`,
/// `status 500`). Any other number is a count, a size or an id (`Output too few tokens 102`).
fn is_status(before: &str, number: &str) -> bool {
    let in_range = number.len() == 3 && matches!(number.as_bytes()[0], b'1'..=b'5');
    let word = before
        .trim_end_matches(|c: char| !c.is_alphanumeric())
        .rsplit(|c: char| !c.is_alphanumeric() && c != '_')
        .next()
        .unwrap_or("");
    in_range
        && [
            "",
            "code",
            "status",
            "status_code",
            "statuscode",
            "http",
            "error",
        ]
        .iter()
        .any(|w| w.eq_ignore_ascii_case(word))
}

/// The class of an exception a message starts with (`openai.APITimeoutError: ...`,
/// `TimeoutError: ...`): a name without blanks ending in `Error` or `Exception`, before a `:`;
/// its last dotted segment.
fn exception_class(line: &str) -> Option<&str> {
    let (head, _) = line.split_once(':')?;
    if head.is_empty()
        || head.len() > MAX_CHARS
        || !head
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
    {
        return None;
    }
    let class = head.rsplit('.').next()?;
    let named =
        class.len() > "Error".len() && (class.ends_with("Error") || class.ends_with("Exception"));
    named.then_some(class)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_codes_and_messages() {
        let n = |raw: &str| normalize(raw);
        assert_eq!(n(r#""RateLimitError""#).as_deref(), Some("RateLimitError"));
        assert_eq!(n("429").as_deref(), Some("429"));
        assert_eq!(n("429.0").as_deref(), Some("429"));
        assert_eq!(n(r#""429""#).as_deref(), Some("429"));
        assert_eq!(n(r#""""#), None);
        assert_eq!(n(r#"{"a":1}"#), None);
        assert_eq!(n("true"), None);
        assert_eq!(
            n(r#""litellm.RateLimitError: RateLimitError: OpenAIException - Error code: 429""#)
                .as_deref(),
            Some("RateLimitError")
        );
        // The same reason with other numbers and ids groups together.
        let a = n(r#""Request req_8f3a2b91 timed out after 600.0 seconds""#);
        let b = n(r#""Request req_77aa01cd timed out after 30.5 seconds""#);
        assert_eq!(a.as_deref(), Some("Request # timed out after # seconds"));
        assert_eq!(a, b);
        // An HTTP status in a message is kept.
        assert_eq!(
            n(r#""Error code: 503 - upstream unavailable""#).as_deref(),
            Some("Error code: 503 - upstream unavailable")
        );
        assert_eq!(
            n(r#""HTTP 429 Too Many Requests""#).as_deref(),
            Some("HTTP 429 Too Many Requests")
        );
        assert_eq!(
            n(r#""502 Bad Gateway""#).as_deref(),
            Some("502 Bad Gateway")
        );
        // A count is no status: LLMPerf's 'Output too few tokens 102' groups with '... 59'.
        let (a, b) = (
            n(r#""Output too few tokens 102""#),
            n(r#""Output too few tokens 59""#),
        );
        assert_eq!(a.as_deref(), Some("Output too few tokens #"));
        assert_eq!(a, b);
        assert_eq!(
            n(r#""retry after 30 s""#).as_deref(),
            Some("retry after # s")
        );
        // An error body in the message: the text before it, its message and its status.
        assert_eq!(
            n(r#""Service Unavailable: {\"object\": \"error\", \"message\": \"mock: server overloaded\", \"type\": \"ServiceUnavailable\", \"code\": 503}""#)
                .as_deref(),
            Some("Service Unavailable: code 503: mock: server overloaded")
        );
        // openai-python's message: a Python dict (None, strings in either quote) after the
        // status it already says.
        let openai = n(
            r#""Error code: 429 - {'error': {'message': 'Rate limit reached for requests', 'type': 'requests', 'param': None, 'code': 'rate_limit_exceeded'}}""#,
        );
        assert_eq!(
            openai.as_deref(),
            Some("Error code: 429: Rate limit reached for requests")
        );
        assert_eq!(
            n(
                r#""Error code: 429 - {'error': {'message': 'Rate limit reached for requests', 'type': 'requests', 'code': 'rate_limit_exceeded'}}""#
            ),
            openai
        );
        assert_eq!(
            n(r#""Error code: 400 - {'object': 'error', 'message': \"This model's maximum context length is 4096 tokens.\", 'type': 'BadRequestError', 'param': None, 'code': 400}""#)
                .as_deref(),
            Some("Error code: 400: This model's maximum context length is #…")
        );
        assert_eq!(
            n(r#""{\"error\": {\"message\": \"Token rate limit exceeded, please try again later.\", \"code\": 429}}""#)
                .as_deref(),
            Some("code 429: Token rate limit exceeded, please try again later")
        );
        // A long message is cut between words, and says so.
        assert_eq!(
            n(r#""The server had an error while processing your request. Sorry about that! You can retry""#)
                .as_deref(),
            Some("The server had an error while processing your request…")
        );
        // Only the first line, at most 60 characters.
        let long = format!("\"{}\\nsecond line\"", "word ".repeat(40));
        let r = n(&long).unwrap();
        assert!(r.chars().count() <= MAX_CHARS, "{r}");
        assert!(!r.contains("second"));
        assert_eq!(
            n(r#""error: something""#).as_deref(),
            Some("error: something")
        );
    }
}
