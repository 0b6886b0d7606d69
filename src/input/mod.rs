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

/// A file name as a diagnostic shows it: as given, or, when it holds a control character (a
/// newline would split the message in two), quoted and escaped as Rust's `{:?}` does.
///
/// ```text
/// assert_eq!(shown_name("day.jsonl"), "day.jsonl");
/// assert_eq!(shown_name("a\nb.jsonl"), "\"a\\nb.jsonl\"");
/// ```
pub(crate) fn shown_name(name: &str) -> Cow<'_, str> {
    if name.chars().any(char::is_control) {
        Cow::Owned(format!("{name:?}"))
    } else {
        Cow::Borrowed(name)
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
        assert_eq!(shown_path(Path::new("x\ty\"z")), "\"x\\ty\\\"z\"");
    }
}
