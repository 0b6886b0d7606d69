//! Why a request failed, as a short class that groups: an error class (`RateLimitError`), a
//! code or HTTP status (`429`), or the start of a message with its numbers and ids masked
//! (`Request timed out after # seconds`), at most [`MAX_CHARS`] characters.

use crate::json::raw_str;

/// The longest reason kept, in characters.
pub(crate) const MAX_CHARS: usize = 60;

/// The reason read from the raw JSON text of a value: a number is its integer text (`429`), a
/// string is normalized ([`normalize_text`]); anything else (an object, a list, a boolean) and
/// an empty string are no reason.
pub(crate) fn normalize(raw: &str) -> Option<String> {
    let raw = raw.trim();
    match raw.as_bytes().first()? {
        b'"' => normalize_text(&raw_str(raw)?),
        b'-' | b'0'..=b'9' => {
            let v: f64 = raw.parse().ok()?;
            if v.fract() == 0.0 && v.abs() < 1e15 {
                Some(format!("{}", v as i64))
            } else {
                Some(raw.chars().take(MAX_CHARS).collect())
            }
        }
        _ => None,
    }
}

/// A message as a reason. Its first line only; an exception's class when it starts with one
/// (`litellm.RateLimitError: ...` is `RateLimitError`); else the text with every word that
/// holds a digit masked as `#` (ids, counts, durations, timestamps), except a number of one to
/// three digits (an HTTP status), blanks collapsed, cut at [`MAX_CHARS`] characters.
pub(crate) fn normalize_text(text: &str) -> Option<String> {
    let line = text.trim().lines().next().unwrap_or("").trim();
    if line.is_empty() {
        return None;
    }
    if let Some(class) = exception_class(line) {
        return Some(class.to_owned());
    }
    let mut out = String::new();
    let mut word = String::new();
    let flush = |out: &mut String, word: &mut String| {
        if word.is_empty() {
            return;
        }
        let digits = word.bytes().filter(u8::is_ascii_digit).count();
        let small_number = digits == word.len() && digits <= 3;
        if digits > 0 && !small_number {
            out.push('#');
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    let mut blank = false;
    for c in line.chars() {
        if c.is_alphanumeric() || matches!(c, '_' | '-' | '.') && !word.is_empty() {
            word.push(c);
            continue;
        }
        flush(&mut out, &mut word);
        if c.is_whitespace() {
            blank = !out.is_empty();
            continue;
        }
        if blank {
            out.push(' ');
            blank = false;
        }
        out.push(c);
        if out.chars().count() > MAX_CHARS {
            break;
        }
    }
    flush(&mut out, &mut word);
    let cut: String = out.chars().take(MAX_CHARS).collect();
    let cut = cut.trim_end_matches([' ', ':', ',', '-', '.', ';']);
    (!cut.is_empty()).then(|| cut.to_owned())
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
