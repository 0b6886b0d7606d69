//! Records: the requests inside one line that holds several (an OTLP export with many spans,
//! a benchmark result with one array per metric, a report with nested request lists).
//!
//! Owns the walk from a line's JSON to each request's own JSON object, which the format's
//! fields then read as if it were a line. This path builds a `serde_json::Value` of the line:
//! it runs only for lines already attributed (by their cheap markers) to a format with
//! records, never on the common one-request-per-line path. No I/O.

use crate::format::{RecordSource, RecordWindow};
use serde_json::{Map, Value};

/// Appends to `out` the JSON text of each record of `line` (a parsed JSON value) as `source`
/// says, in document order, and returns how many records fell outside `window`.
///
/// The members of `line` named in `carry` are copied into each record that has no member of
/// that name (a value that holds for every request of the line, as a benchmark's model).
///
/// OTLP `attributes` lists (`[{"key":K,"value":{"intValue":"3"}}]`) in a record become
/// objects (`{"K":"3"}`), so a format reads `attributes.K`. Each record found by a pattern
/// gets a member `"$parent"`: the key of the array or object that held it (`"spans"`,
/// `"errored"`), so a format can tell records of different lists apart.
pub fn collect(
    line: &Value,
    source: &RecordSource,
    window: Option<&RecordWindow>,
    carry: &[String],
    out: &mut Vec<Vec<u8>>,
) -> u64 {
    let carried: Vec<(&String, &Value)> = carry
        .iter()
        .filter_map(|k| Some((k, line.get(k.as_str())?)))
        .collect();
    let add_carried = |m: &mut Map<String, Value>| {
        for (k, v) in &carried {
            if !m.contains_key(k.as_str()) {
                m.insert((*k).clone(), (*v).clone());
            }
        }
    };
    let mut outside = 0;
    match source {
        RecordSource::Each(patterns) => {
            for pattern in patterns {
                let mut found = Vec::new();
                walk(line, pattern, None, &mut found);
                let parent = pattern
                    .iter()
                    .rev()
                    .find(|s| *s != "*")
                    .cloned()
                    .unwrap_or_default();
                for (group, v) in found {
                    if let Some(w) = window
                        && !w.contains(group, v)
                    {
                        outside += 1;
                        continue;
                    }
                    let mut v = v.clone();
                    normalize_otlp(&mut v);
                    if let Value::Object(m) = &mut v {
                        m.insert("$parent".into(), Value::String(parent.clone()));
                        add_carried(m);
                    }
                    out.push(serde_json::to_vec(&v).unwrap_or_default());
                }
            }
        }
        RecordSource::Columns(names) => {
            let columns: Vec<(&String, &Vec<Value>)> = names
                .iter()
                .filter_map(|n| Some((n, line.get(n)?.as_array()?)))
                .collect();
            let n = columns.iter().map(|(_, c)| c.len()).max().unwrap_or(0);
            for i in 0..n {
                let mut rec = Map::new();
                for (name, col) in &columns {
                    if let Some(v) = col.get(i) {
                        rec.insert((*name).clone(), v.clone());
                    }
                }
                add_carried(&mut rec);
                out.push(serde_json::to_vec(&Value::Object(rec)).unwrap_or_default());
            }
        }
    }
    outside
}

impl RecordWindow {
    /// True when the record's [start, end] overlaps the group's window; true when the group
    /// logs no window, false when the record has no start or end.
    fn contains(&self, group: Option<&Value>, record: &Value) -> bool {
        let num = |v: Option<&Value>, path: &[String]| -> Option<f64> {
            path.iter().try_fold(v?, |v, k| v.get(k.as_str()))?.as_f64()
        };
        let (Some(ws), Some(we)) = (num(group, &self.start), num(group, &self.end)) else {
            return true;
        };
        // A record that never ended (a request cancelled at the end of the run) is not in
        // the window.
        let (Some(rs), Some(re)) = (
            num(Some(record), &self.record_start),
            num(Some(record), &self.record_end),
        ) else {
            return false;
        };
        re >= ws && rs <= we
    }
}

/// Collects the values at `pattern` below `v`, each with its group (the element the first
/// `*` matched); a `*` segment matches every array element or object member.
fn walk<'a>(
    v: &'a Value,
    pattern: &[String],
    group: Option<&'a Value>,
    found: &mut Vec<(Option<&'a Value>, &'a Value)>,
) {
    let Some((seg, rest)) = pattern.split_first() else {
        found.push((group, v));
        return;
    };
    if seg == "*" {
        let each = |i: &'a Value, found: &mut Vec<_>| walk(i, rest, group.or(Some(i)), found);
        match v {
            Value::Array(items) => items.iter().for_each(|i| each(i, found)),
            Value::Object(members) => members.values().for_each(|i| each(i, found)),
            _ => {}
        }
    } else if let Some(next) = v.get(seg.as_str()) {
        walk(next, rest, group, found);
    }
}

/// Rewrites every OTLP key-value list below `v` into an object, unwrapping each `AnyValue`.
fn normalize_otlp(v: &mut Value) {
    match v {
        Value::Object(members) => {
            for (_, child) in members.iter_mut() {
                if let Some(obj) = kv_list_to_object(child) {
                    *child = obj;
                }
                normalize_otlp(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalize_otlp),
        _ => {}
    }
}

/// `[{"key":K,"value":ANY}, ...]` as `{K: unwrapped ANY}`; `None` when `v` is not such a list.
fn kv_list_to_object(v: &Value) -> Option<Value> {
    let items = v.as_array()?;
    if items.is_empty() {
        return None;
    }
    let mut out = Map::new();
    for item in items {
        let key = item.get("key")?.as_str()?;
        let value = item
            .get("value")
            .map(unwrap_any_value)
            .unwrap_or(Value::Null);
        out.insert(key.to_owned(), value);
    }
    Some(Value::Object(out))
}

/// An OTLP `AnyValue` (`{"stringValue":"x"}`, `{"intValue":"128"}`, `{"doubleValue":0.5}`,
/// `{"boolValue":true}`, `{"arrayValue":{"values":[...]}}`) as a plain JSON value. 64-bit
/// integers stay decimal strings, so they are exact beyond 2^53.
fn unwrap_any_value(v: &Value) -> Value {
    let Some(obj) = v.as_object() else {
        return v.clone();
    };
    if let Some(x) = obj.get("arrayValue") {
        let values = x
            .get("values")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        return Value::Array(values.iter().map(unwrap_any_value).collect());
    }
    if let Some(x) = obj.get("kvlistValue") {
        return x
            .get("values")
            .and_then(kv_list_to_object)
            .unwrap_or(Value::Null);
    }
    for k in [
        "stringValue",
        "intValue",
        "doubleValue",
        "boolValue",
        "bytesValue",
    ] {
        if let Some(x) = obj.get(k) {
            return x.clone();
        }
    }
    v.clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn otlp_spans_become_records_with_attribute_objects() {
        let line = json!({"resourceSpans":[{"scopeSpans":[{"spans":[
            {"name":"a","attributes":[{"key":"gen_ai.usage.input_tokens","value":{"intValue":"12"}},
                                      {"key":"x","value":{"arrayValue":{"values":[{"stringValue":"stop"}]}}}]},
            {"name":"b","attributes":[]}]}]},{"scopeSpans":[{"spans":[{"name":"c"}]}]}]});
        let mut out = vec![];
        let pattern = ["resourceSpans", "*", "scopeSpans", "*", "spans", "*"]
            .map(String::from)
            .to_vec();
        collect(
            &line,
            &RecordSource::Each(vec![pattern]),
            None,
            &[],
            &mut out,
        );
        let recs: Vec<Value> = out
            .iter()
            .map(|b| serde_json::from_slice(b).unwrap())
            .collect();
        assert_eq!(recs.len(), 3);
        assert_eq!(recs[0]["attributes"]["gen_ai.usage.input_tokens"], "12");
        assert_eq!(recs[0]["attributes"]["x"], json!(["stop"]));
        assert_eq!(recs[2]["name"], "c");
        assert_eq!(recs[2]["$parent"], "spans");
    }

    #[test]
    fn columns_zip_by_index() {
        let line = json!({"ttfts":[0.1,0.2],"itls":[[0.01],[]],"errors":["",""],"other":1,
                          "model_id":"m"});
        let mut out = vec![];
        collect(
            &line,
            &RecordSource::Columns(vec!["ttfts".into(), "itls".into(), "errors".into()]),
            None,
            // Carried when the line has it and the record does not.
            &["model_id".into(), "absent".into(), "ttfts".into()],
            &mut out,
        );
        assert_eq!(out.len(), 2);
        let r1: Value = serde_json::from_slice(&out[1]).unwrap();
        assert_eq!(
            r1,
            json!({"ttfts":0.2,"itls":[],"errors":"","model_id":"m"})
        );
    }
}
