//! The records walk as it was before the one-pass writer of `text.rs`, over an [`Index`] of the
//! line: kept for the tests only, which check that the writer's records are byte for byte the
//! ones this walk writes.

use super::{
    CONTENT_TIMESTAMPS, Index, NotRaw, OUTPUTS, SCALAR_VALUES, TIMESTAMPS, content_timestamps,
    decode_string, elements, members, parent_name,
};
use crate::format::RecordWindow;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// [`collect`] for a [`RecordSource::Each`] source, reading `line` (JSON text the caller has
/// checked) without building a `serde_json::Value` of it: appends each record's JSON text to
/// `out` and returns how many fell outside `window`. The records read as [`collect`]'s do (the
/// same members and values; numbers keep their text, members their order). An error when a
/// key or an attribute name is not decodable (a lone surrogate escape) or the text is not
/// valid JSON after all: the caller then takes the `Value` path.
pub(crate) fn collect_raw_indexed(
    line: &str,
    patterns: &[Vec<String>],
    window: Option<&RecordWindow>,
    carry: &[String],
    out: &mut Vec<Vec<u8>>,
) -> Result<u64, NotRaw> {
    let root = line.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r'));
    let index = Index::new(root)?;
    let ix = &index;
    let root_members = members(ix, root)?.unwrap_or_default();
    let carried: Vec<(&str, &str)> = carry
        .iter()
        .filter_map(|k| Some((k.as_str(), last(&root_members, k)?)))
        .collect();
    let mut outside = 0;
    let mut found = Vec::new();
    for pattern in patterns {
        found.clear();
        walk_raw(ix, root, pattern, None, &mut found)?;
        let parent = parent_name(pattern);
        for &(group, rec) in &found {
            if let Some(w) = window
                && !contains_raw(ix, w, group, rec)
            {
                outside += 1;
                continue;
            }
            // The group's member of a carried name, else the root's.
            let group_members = match group {
                Some(g) => members(ix, g)?.unwrap_or_default(),
                None => Vec::new(),
            };
            let carried: Vec<(&str, &str)> = carry
                .iter()
                .filter_map(|k| {
                    let v = last(&group_members, k)
                        .or_else(|| carried.iter().find(|(c, _)| c == k).map(|&(_, v)| v))?;
                    Some((k.as_str(), v))
                })
                .collect();
            let mut text = Vec::with_capacity(rec.len() + 32);
            match members(ix, rec)? {
                Some(ms) => {
                    text.push(b'{');
                    let mut first = true;
                    for (k, v) in &ms {
                        if k == "$parent" || k == CONTENT_TIMESTAMPS {
                            continue;
                        }
                        comma(&mut text, &mut first);
                        write_key(&mut text, k);
                        write_member(ix, v, &mut text)?;
                    }
                    comma(&mut text, &mut first);
                    write_key(&mut text, "$parent");
                    write_string(&mut text, parent);
                    if let Some(ts) = last(&ms, TIMESTAMPS) {
                        let ts: Value = serde_json::from_str(ts).map_err(|_| NotRaw)?;
                        let outputs =
                            last(&ms, OUTPUTS).and_then(|o| serde_json::from_str::<Value>(o).ok());
                        text.push(b',');
                        write_key(&mut text, CONTENT_TIMESTAMPS);
                        let content = content_timestamps(&ts, outputs.as_ref());
                        text.extend_from_slice(&serde_json::to_vec(&content).map_err(|_| NotRaw)?);
                    }
                    for &(k, v) in &carried {
                        if k != "$parent" && last(&ms, k).is_none() {
                            text.push(b',');
                            write_key(&mut text, k);
                            write_member(ix, v, &mut text)?;
                        }
                    }
                    text.push(b'}');
                }
                None => write_value(ix, rec, &mut text)?,
            }
            out.push(text);
        }
    }
    Ok(outside)
}

/// The value of the last member named `key` (the one a `Value` keeps).
fn last<'a>(ms: &[(Cow<'a, str>, &'a str)], key: &str) -> Option<&'a str> {
    ms.iter().rev().find(|(k, _)| k == key).map(|&(_, v)| v)
}

/// [`walk`] over text: `*` over an object takes its members in key order, each key once (the
/// last), as a `Value`'s map holds them.
fn walk_raw<'a>(
    ix: &Index,
    v: &'a str,
    pattern: &[String],
    group: Option<&'a str>,
    found: &mut Vec<(Option<&'a str>, &'a str)>,
) -> Result<(), NotRaw> {
    let Some((seg, rest)) = pattern.split_first() else {
        found.push((group, v));
        return Ok(());
    };
    if seg == "*" {
        if let Some(items) = elements(ix, v)? {
            for i in items {
                walk_raw(ix, i, rest, group.or(Some(i)), found)?;
            }
        } else if let Some(ms) = members(ix, v)? {
            let sorted: BTreeMap<Cow<str>, &str> = ms.into_iter().collect();
            for (_, i) in sorted {
                walk_raw(ix, i, rest, group.or(Some(i)), found)?;
            }
        }
    } else if let Some(next) = members(ix, v)?.and_then(|ms| last(&ms, seg)) {
        walk_raw(ix, next, rest, group, found)?;
    }
    Ok(())
}

/// [`RecordWindow::contains`] over text.
fn contains_raw(ix: &Index, w: &RecordWindow, group: Option<&str>, record: &str) -> bool {
    let num = |v: Option<&str>, path: &[String]| -> Option<f64> {
        let mut v = v?;
        for k in path {
            v = last(&members(ix, v).ok()??, k)?;
        }
        serde_json::from_str::<Value>(v).ok()?.as_f64()
    };
    w.holds(|p| num(group, p), |p| num(Some(record), p))
}

fn comma(out: &mut Vec<u8>, first: &mut bool) {
    if !*first {
        out.push(b',');
    }
    *first = false;
}

fn write_string(out: &mut Vec<u8>, k: &str) {
    // Writing a string to a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, k);
}

fn write_key(out: &mut Vec<u8>, k: &str) {
    write_string(out, k);
    out.push(b':');
}

/// Writes `v` normalized as [`normalize_otlp`] leaves a value it recurses into: objects and
/// arrays are walked, every object member written by [`write_member`].
fn write_value(ix: &Index, v: &str, out: &mut Vec<u8>) -> Result<(), NotRaw> {
    if let Some(ms) = members(ix, v)? {
        out.push(b'{');
        let mut first = true;
        for (k, m) in &ms {
            comma(out, &mut first);
            write_key(out, k);
            write_member(ix, m, out)?;
        }
        out.push(b'}');
    } else if let Some(items) = elements(ix, v)? {
        out.push(b'[');
        let mut first = true;
        for i in items {
            comma(out, &mut first);
            write_value(ix, i, out)?;
        }
        out.push(b']');
    } else {
        out.extend_from_slice(v.as_bytes());
    }
    Ok(())
}

/// Writes an object member's value: an OTLP key-value list as an object (each value unwrapped
/// and written as a member in turn), anything else as [`write_value`] does.
fn write_member(ix: &Index, v: &str, out: &mut Vec<u8>) -> Result<(), NotRaw> {
    let Some(pairs) = kv_list_raw(ix, v)? else {
        return write_value(ix, v, out);
    };
    out.push(b'{');
    let mut first = true;
    for (k, value) in pairs {
        comma(out, &mut first);
        write_key(out, &k);
        match value.map(|u| unwrap_any_raw(ix, u)).transpose()? {
            None => out.extend_from_slice(b"null"),
            Some(Cow::Borrowed(r)) => write_member(ix, r, out)?,
            Some(Cow::Owned(text)) => write_member(ix, &text, out)?,
        }
    }
    out.push(b'}');
    Ok(())
}

/// An OTLP key-value list's pairs.
type Pairs<'a> = Vec<(Cow<'a, str>, Option<&'a str>)>;

/// [`kv_list_to_object`] over text: the (key, value) pairs of `v` when it is a non-empty array
/// of objects each with a string `key`.
fn kv_list_raw<'a>(ix: &Index, v: &'a str) -> Result<Option<Pairs<'a>>, NotRaw> {
    let Some(items) = elements(ix, v)? else {
        return Ok(None);
    };
    if items.is_empty() {
        return Ok(None);
    }
    let mut pairs = Vec::with_capacity(items.len());
    for item in items {
        let Some(ms) = members(ix, item)? else {
            return Ok(None);
        };
        let Some(key) = last(&ms, "key").filter(|k| k.starts_with('"')) else {
            return Ok(None);
        };
        pairs.push((decode_string(key)?, last(&ms, "value")));
    }
    Ok(Some(pairs))
}

/// [`unwrap_any_value`] over text: a slice of `v`, or text built for it.
fn unwrap_any_raw<'a>(ix: &Index, v: &'a str) -> Result<Cow<'a, str>, NotRaw> {
    let Some(ms) = members(ix, v)? else {
        return Ok(Cow::Borrowed(v));
    };
    if let Some(x) = last(&ms, "arrayValue") {
        let values = match members(ix, x)?.and_then(|xm| last(&xm, "values")) {
            Some(vals) => elements(ix, vals)?.unwrap_or_default(),
            None => Vec::new(),
        };
        let mut text = String::from("[");
        for (n, item) in values.into_iter().enumerate() {
            if n > 0 {
                text.push(',');
            }
            text.push_str(&unwrap_any_raw(ix, item)?);
        }
        text.push(']');
        return Ok(Cow::Owned(text));
    }
    if let Some(x) = last(&ms, "kvlistValue") {
        let list = members(ix, x)?.and_then(|xm| last(&xm, "values"));
        let Some(pairs) = list.map(|l| kv_list_raw(ix, l)).transpose()?.flatten() else {
            return Ok(Cow::Borrowed("null"));
        };
        let mut text = Vec::new();
        text.push(b'{');
        let mut first = true;
        for (k, value) in pairs {
            comma(&mut text, &mut first);
            write_key(&mut text, &k);
            match value.map(|u| unwrap_any_raw(ix, u)).transpose()? {
                None => text.extend_from_slice(b"null"),
                Some(u) => text.extend_from_slice(u.as_bytes()),
            }
        }
        text.push(b'}');
        return String::from_utf8(text).map(Cow::Owned).map_err(|_| NotRaw);
    }
    for k in SCALAR_VALUES {
        if let Some(x) = last(&ms, k) {
            return Ok(Cow::Borrowed(x));
        }
    }
    Ok(Cow::Borrowed(v))
}
