//! Input: the byte sources (files, stdin, gzip, zstd), line framing over one reused buffer,
//! and JSON documents (arrays of records, pretty-printed objects).
//!
//! Owns bytes until they are lines or document items. Must not parse a line's JSON, know a
//! format or a metric, or write anything but what a caller hands it.

pub(crate) mod document;
pub(crate) mod lines;
pub(crate) mod source;

use std::borrow::Cow;
use std::path::Path;

/// A file name (or a value) as a diagnostic shows it: as given, or, when it holds a control
/// character (a newline would split the message in two) or an invisible one (a zero-width
/// space, a direction mark or override, a byte-order mark: two names that look alike, a
/// message that reads backwards), quoted and escaped as Rust's `{:?}` does.
///
/// ```text
/// assert_eq!(shown_name("day.jsonl"), "day.jsonl");
/// assert_eq!(shown_name("a\nb.jsonl"), "\"a\\nb.jsonl\"");
/// ```
pub(crate) fn shown_name(name: &str) -> Cow<'_, str> {
    if name.chars().any(|c| c.is_control() || invisible(c)) {
        Cow::Owned(format!("{name:?}"))
    } else {
        Cow::Borrowed(name)
    }
}

/// Whether `c` is a format character that shows as nothing or reorders the text around it.
fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{061C}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{FEFF}'
    )
}

/// A value in a list of values a diagnostic shows: [`shown_name`], quoted too when it holds
/// the list's separator `, ` or is empty.
pub(crate) fn shown_value(v: &str) -> Cow<'_, str> {
    if v.is_empty() || v.contains(", ") {
        Cow::Owned(format!("{v:?}"))
    } else {
        shown_name(v)
    }
}

/// [`shown_name`] of a path.
pub(crate) fn shown_path(path: &Path) -> String {
    shown_name(&path.display().to_string()).into_owned()
}

/// The examples in this file's docs, run.
#[cfg(test)]
mod doc_examples {
    use super::*;

    #[test]
    fn example_of_shown_name() {
        assert_eq!(shown_name("day.jsonl"), "day.jsonl");
        assert_eq!(shown_name("a\nb.jsonl"), "\"a\\nb.jsonl\"");
        assert_eq!(shown_name("<stdin>"), "<stdin>");
        assert_eq!(shown_name("gpt\u{200b}4o"), "\"gpt\\u{200b}4o\"");
        assert_eq!(shown_name("caf\u{e9}"), "caf\u{e9}");
        assert_eq!(shown_value("a, b"), "\"a, b\"");
        assert_eq!(shown_value("a,b"), "a,b");
        assert_eq!(shown_path(Path::new("x\ty\"z")), "\"x\\ty\\\"z\"");
    }
}
