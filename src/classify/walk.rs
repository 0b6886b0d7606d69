//! The document walk: requests in an array anywhere in a line (or a document's object) that no
//! format reads as a whole, as a Langfuse API page holds its observations in
//! `{"data":{"observations":[...]}}` or a trace export its spans.
//!
//! Owns which values are tried as requests and the walk's bounds; the caller decides what a
//! tried value is (it classifies it as a line: every format is matched per element). No I/O.
//!
//! The walk, precisely: the line's value is level 0, and the values inside a container at
//! level `n` are at level `n + 1`. Every object that is an element of an array, at a level of
//! at most [`MAX_LEVEL`], is tried, in document order; when it is a request, nothing inside it
//! is walked; when it is not, the walk goes on inside it. Objects that are members of objects
//! are walked into but never tried: a request is an element of a list. Each container is split
//! once per level above it, so a line of `n` bytes costs at most `MAX_LEVEL` passes over its
//! bytes, plus one try per element.

use crate::classify::records::{Index, NotRaw, elements, members};

/// The deepest level an object is tried at (the line's value is level 0).
pub(crate) const MAX_LEVEL: usize = 8;

/// True when `line` may hold an array of objects or arrays (a `[` followed, after blanks, by
/// `{` or `[`): a cheap test before the walk, which passes a log's lines that hold no list.
/// Brackets inside strings count too: a false yes costs only the walk.
pub(crate) fn may_hold_lists(line: &[u8]) -> bool {
    memchr::memchr_iter(b'[', line).any(|i| {
        line[i + 1..]
            .iter()
            .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .is_some_and(|b| matches!(b, b'{' | b'['))
    })
}

/// Walks `line` (JSON text that is valid: the caller has checked it) as the module says, calling
/// `each(parent, object)` for every object tried: `parent` is the key of the member that holds
/// its array (empty for the line's own array); `each` returns true when the object was a
/// request.
///
/// # Errors
/// When the text cannot be split (not valid JSON after all, a key with a lone surrogate
/// escape): objects before the error may have been tried.
pub(crate) fn walk(line: &str, each: &mut dyn FnMut(&str, &str) -> bool) -> Result<(), NotRaw> {
    let root = line.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r'));
    let index = Index::new(root)?;
    inside(&index, root, "", 0, each)
}

/// Walks inside `v`, a value at `level` held by the member named `parent`.
fn inside(
    ix: &Index,
    v: &str,
    parent: &str,
    level: usize,
    each: &mut dyn FnMut(&str, &str) -> bool,
) -> Result<(), NotRaw> {
    if level >= MAX_LEVEL {
        return Ok(());
    }
    if let Some(items) = elements(ix, v)? {
        for item in items {
            match item.as_bytes().first() {
                Some(b'{') if each(parent, item) => {}
                Some(b'{' | b'[') => inside(ix, item, parent, level + 1, each)?,
                _ => {}
            }
        }
    } else if let Some(ms) = members(ix, v)? {
        for (key, value) in ms {
            if matches!(value.as_bytes().first(), Some(b'{' | b'[')) {
                inside(ix, value, &key, level + 1, each)?;
            }
        }
    }
    Ok(())
}

/// `object`'s text with a member `"$parent": parent` first (the records of a format's lists
/// get one too), into `out`; unchanged when `parent` is empty.
pub(crate) fn with_parent(object: &str, parent: &str, out: &mut Vec<u8>) {
    out.clear();
    let Some(body) = object.strip_prefix('{').filter(|_| !parent.is_empty()) else {
        out.extend_from_slice(object.as_bytes());
        return;
    };
    out.extend_from_slice(b"{\"$parent\":");
    let _ = serde_json::to_writer(&mut *out, parent);
    if !body.trim_start().starts_with('}') {
        out.push(b',');
    }
    out.extend_from_slice(body.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The objects tried, as `parent:text`, when `is_request` says which are requests.
    fn tried(line: &str, is_request: impl Fn(&str) -> bool) -> Vec<String> {
        let mut got = vec![];
        walk(line, &mut |parent, obj| {
            got.push(format!("{parent}:{obj}"));
            is_request(obj)
        })
        .unwrap();
        got
    }

    #[test]
    fn objects_in_arrays_are_tried_at_any_level_and_requests_are_not_walked_into() {
        let line = r#"{"data":{"observations":[{"r":1,"x":[{"inner":1}]},{"s":2,"kids":[{"r":3}]}]},"meta":{"a":[1,2]}}"#;
        assert_eq!(
            tried(line, |o| o.contains("\"r\"") && !o.contains("kids")),
            vec![
                r#"observations:{"r":1,"x":[{"inner":1}]}"#,
                r#"observations:{"s":2,"kids":[{"r":3}]}"#,
                r#"kids:{"r":3}"#,
            ]
        );
        // The line's own array, and arrays of arrays.
        assert_eq!(
            tried(r#"[ {"a":1}, [[{"b":2}]], 3 ]"#, |_| true),
            vec![r#":{"a":1}"#, r#":{"b":2}"#]
        );
        // Members that are objects are walked into, never tried.
        assert!(tried(r#"{"a":{"b":{"c":1}}}"#, |_| true).is_empty());
    }

    #[test]
    fn the_walk_stops_at_the_deepest_level() {
        let nest = |n: usize| format!("{}{{\"r\":1}}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(tried(&nest(MAX_LEVEL), |_| true).len(), 1);
        assert!(tried(&nest(MAX_LEVEL + 1), |_| true).is_empty());
        assert!(walk("[{\"a\":1}", &mut |_, _| true).is_err());
    }

    #[test]
    fn lists_are_spotted_cheaply() {
        assert!(may_hold_lists(br#"{"a":[ {"b":1}]}"#));
        assert!(may_hold_lists(b"[\n [1]]"));
        assert!(!may_hold_lists(br#"{"a":[1,2],"b":"["}"#));
    }

    #[test]
    fn the_parent_goes_first() {
        let mut out = vec![];
        with_parent(r#"{"a":1}"#, "results", &mut out);
        assert_eq!(out, br#"{"$parent":"results","a":1}"#);
        with_parent("{ }", "x\"y", &mut out);
        assert_eq!(out, br#"{"$parent":"x\"y" }"#);
        with_parent(r#"{"a":1}"#, "", &mut out);
        assert_eq!(out, br#"{"a":1}"#);
    }
}
