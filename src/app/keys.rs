//! The keys requests have, sampled from the first request lines of each input, so that a
//! `--by` path no request had can be told apart from a value the log leaves out, and the keys
//! close to it named (`--by modle`: `model`).
//!
//! Only the first [`SAMPLE_LINES`] request lines of a part are parsed a second time (as a
//! `serde_json::Value`), and only when there are `--by` keys: the cost does not grow with the
//! input.

use crate::summary::Summary;
use std::collections::BTreeSet;

/// Request lines sampled per part (an input, or a chunk of one).
const SAMPLE_LINES: u32 = 16;
/// Keys kept at most.
const MOST_KEYS: usize = 2000;
/// Depth of the dotted paths collected (`a.b.c`).
const DEPTH: usize = 4;
/// The names tokentime gives a request, which `--by` takes besides the log's paths.
const OWN_NAMES: [&str; 3] = ["$format", "$model", "$file"];

/// The dotted paths of the objects' keys of some request lines.
#[derive(Debug, Clone, Default)]
pub(crate) struct KeySample {
    /// Lines still to sample (0 when the run has no `--by` keys).
    left: u32,
    keys: BTreeSet<String>,
    /// The keys of the lines' top-level objects.
    top: BTreeSet<String>,
    /// Lines sampled.
    sampled: u32,
}

impl KeySample {
    /// A sample of the first request lines when `wanted` (the run has `--by` keys), else none.
    pub(crate) fn new(wanted: bool) -> Self {
        KeySample {
            left: if wanted { SAMPLE_LINES } else { 0 },
            keys: BTreeSet::new(),
            top: BTreeSet::new(),
            sampled: 0,
        }
    }

    /// Adds the keys of a request line, while the sample wants more lines: those of its record
    /// at `root` (`--root` without `[*]`), as the paths of `--map` and `--by` are read below it;
    /// those of the whole line when it has nothing there.
    pub(crate) fn add_line(&mut self, line: &[u8], root: &[String]) {
        if self.left == 0 {
            return;
        }
        self.left -= 1;
        self.sampled += 1;
        // A prefix (syslog, CRI) before the JSON: from the first `{`.
        let Some(start) = memchr::memchr(b'{', line) else {
            return;
        };
        if let Ok(whole) = serde_json::from_slice::<serde_json::Value>(&line[start..]) {
            let v = root
                .iter()
                .try_fold(&whole, |v, key| v.get(key))
                .unwrap_or(&whole);
            if let Some(map) = v.as_object() {
                let room = MOST_KEYS.saturating_sub(self.top.len());
                self.top.extend(map.keys().take(room).cloned());
            }
            self.walk(v, String::new(), 0);
        }
    }

    /// Whether it still takes lines (else a caller need not look for what to add).
    pub(crate) fn wants(&self) -> bool {
        self.left > 0
    }

    /// Adds the keys of a request line that held records (an OTLP export's spans, as their
    /// attribute lists and the members carried into them read): the first two records' (the
    /// paths of `--by` are read in a record; their top-level keys are the ones shown), and the
    /// line's (a path a record lacks is read in what holds it).
    pub(crate) fn add_records(&mut self, line: &[u8], records: &[Vec<u8>]) {
        if self.left == 0 {
            return;
        }
        self.left -= 1;
        self.sampled += 1;
        if let Some(start) = memchr::memchr(b'{', line)
            && let Ok(whole) = serde_json::from_slice::<serde_json::Value>(&line[start..])
        {
            self.walk(&whole, String::new(), 0);
        }
        for rec in records.iter().take(2) {
            if let Ok(v) = serde_json::from_slice::<serde_json::Value>(rec) {
                if let Some(map) = v.as_object() {
                    let room = MOST_KEYS.saturating_sub(self.top.len());
                    self.top.extend(map.keys().take(room).cloned());
                }
                self.walk(&v, String::new(), 0);
            }
        }
    }

    fn walk(&mut self, v: &serde_json::Value, prefix: String, depth: usize) {
        match v {
            serde_json::Value::Object(map) if depth < DEPTH => {
                for (k, v) in map {
                    if self.keys.len() >= MOST_KEYS {
                        return;
                    }
                    // As `--by` writes a path: a dot in a key escaped.
                    let k = crate::format::path_str(std::slice::from_ref(k));
                    let path = if prefix.is_empty() {
                        k
                    } else {
                        format!("{prefix}.{k}")
                    };
                    self.keys.insert(path.clone());
                    self.walk(v, path, depth + 1);
                }
            }
            // The records of a line (`--root results[*]`, a benchmark's list): their keys, as
            // the paths of `--by` are read relative to a record.
            serde_json::Value::Array(items) if depth < DEPTH => {
                for item in items.iter().take(2) {
                    self.walk(item, String::new(), depth + 1);
                }
            }
            _ => {}
        }
    }

    /// Adds the keys of another part's sample.
    pub(crate) fn merge(&mut self, other: &KeySample) {
        self.sampled += other.sampled;
        for k in &other.top {
            if self.top.len() >= MOST_KEYS {
                break;
            }
            if !self.top.contains(k) {
                self.top.insert(k.clone());
            }
        }
        for k in &other.keys {
            if self.keys.len() >= MOST_KEYS {
                break;
            }
            if !self.keys.contains(k) {
                self.keys.insert(k.clone());
            }
        }
    }

    /// The sampled keys and tokentime's own names close to `path` (by edit distance, on the
    /// whole path or on its last part), closest first, at most three.
    pub(crate) fn close_to(&self, path: &str) -> Vec<String> {
        self.close(path, &OWN_NAMES)
    }

    /// The sampled keys close to `path`, as [`KeySample::close_to`] but without tokentime's
    /// own names (`--map` reads only the log's paths), and with the keys whose last part is
    /// `path`'s last part, or close to it (`a.t0` for `req.t0`), first.
    pub(crate) fn close_keys(&self, path: &str) -> Vec<String> {
        let last = |p: &str| p.rsplit('.').next().unwrap_or(p).to_lowercase();
        let want = last(path);
        let limit = want.chars().count() / 4;
        let mut close: Vec<(usize, String)> = self
            .keys
            .iter()
            .filter(|k| *k != path)
            .map(|k| (distance(&want, &last(k)), k.clone()))
            .filter(|&(d, _)| d <= limit)
            .collect();
        close.sort();
        let mut out: Vec<String> = close.into_iter().map(|(_, k)| k).take(3).collect();
        for k in self.close(path, &[]) {
            if out.len() < 3 && !out.contains(&k) {
                out.push(k);
            }
        }
        out
    }

    fn close(&self, path: &str, own: &[&'static str]) -> Vec<String> {
        let want = path.to_lowercase();
        let limit = (want.chars().count() / 4).max(1);
        let mut close: Vec<(usize, &str)> = self
            .keys
            .iter()
            .map(String::as_str)
            .chain(own.iter().copied())
            .filter(|&k| k != path)
            .filter_map(|k| {
                let key = k.to_lowercase();
                let last = key.rsplit('.').next().unwrap_or(&key);
                let d = distance(&want, &key).min(distance(&want, last).saturating_add(1));
                // `model` for `modelId`: the start of a key.
                let starts = want.chars().count() >= 3 && last.starts_with(&want);
                (d <= limit || starts).then_some((d, k))
            })
            .collect();
        close.sort();
        close.dedup_by(|a, b| a.1 == b.1);
        close
            .into_iter()
            .take(3)
            .map(|(_, k)| k.to_owned())
            .collect()
    }

    /// Some of the top-level keys of the sample, for a message: at most ten.
    pub(crate) fn some_keys(&self) -> Vec<&str> {
        self.top.iter().take(10).map(String::as_str).collect()
    }

    /// True when some key was sampled.
    pub(crate) fn has_keys(&self) -> bool {
        !self.keys.is_empty()
    }

    /// True when the sample would hold the dotted path `path` had a sampled line had it: it
    /// is no deeper than the paths collected, and the sample kept every key it met.
    pub(crate) fn would_hold(&self, path: &str) -> bool {
        path.split('.').count() <= DEPTH && self.keys.len() < MOST_KEYS
    }

    /// How many lines were sampled.
    pub(crate) fn lines(&self) -> u32 {
        self.sampled
    }

    /// True when the sample has the dotted path `path`.
    pub(crate) fn has(&self, path: &str) -> bool {
        self.keys.contains(path)
    }
}

/// Edit distance, by characters, a swap of two neighbours counting as one edit (optimal
/// string alignment: `modle` is one edit from `model`).
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for i in 0..=a.len() {
        for j in 0..=b.len() {
            d[i * w + j] = if i == 0 || j == 0 {
                i + j
            } else {
                let mut v = (d[(i - 1) * w + j - 1] + usize::from(a[i - 1] != b[j - 1]))
                    .min(d[(i - 1) * w + j] + 1)
                    .min(d[i * w + j - 1] + 1);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    v = v.min(d[(i - 2) * w + j - 2] + 1);
                }
                v
            };
        }
    }
    d[a.len() * w + b.len()]
}

/// `all 5 requests are in KEY=unknown`, `the one request is in KEY=unknown`.
fn all_in(requests: u64, name: &str) -> String {
    if requests == 1 {
        format!("the one request is in {name}=unknown")
    } else {
        format!("all {requests} requests are in {name}=unknown")
    }
}

/// Says on stderr, for each `--by` key no request had (every request is in `KEY=unknown`),
/// that no request had it, with the keys requests have that are close to it. Nothing when no
/// request was read.
pub(crate) fn warn_absent_by(
    by: &[(String, Vec<String>)],
    requests: u64,
    summary: &mut Summary,
    sample: &KeySample,
) {
    if requests == 0 || by.is_empty() {
        return;
    }
    let groups = summary.groups();
    for (name, path) in by {
        // The path as given, and the key's name where it differs (`cache` is `by_cache`).
        let given = crate::format::path_str(path);
        let shown = if given == *name {
            given.clone()
        } else {
            format!("{given} (named {name})")
        };
        let had = groups
            .iter()
            .any(|(k, _)| k.iter().any(|(n, v)| n == name && v.is_some()));
        if had {
            continue;
        }
        if sample.keys.contains(given.as_str()) {
            crate::diag!(
                "tokentime: --by {shown}: no request had a value there, only null ({})",
                all_in(requests, name)
            );
            continue;
        }
        let close = sample.close_to(&given);
        let hint = if close.is_empty() {
            format!(
                "requests have keys such as: {}",
                sample.some_keys().join(", ")
            )
        } else {
            format!(
                "close matches among the requests' keys: {}",
                close.join(", ")
            )
        };
        crate::diag!(
            "tokentime: --by {shown}: no request had this path ({}); {hint}",
            all_in(requests, name)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{KeySample, distance};

    #[test]
    fn close_keys_are_found() {
        assert_eq!(distance("modle", "model"), 1);
        assert_eq!(distance("", "ab"), 2);
        assert_eq!(distance("kitten", "sitting"), 3);
        let mut s = KeySample::new(true);
        s.add_line(
            br#"{"model":"m","metadata":{"user_api_key":"k","region":"eu"},"id":1}"#,
            &[],
        );
        assert_eq!(s.close_to("modle"), ["model"]);
        assert_eq!(s.close_to("$modle"), ["$model"]);
        // A key nested deeper, by its whole path or by its last part.
        assert_eq!(s.close_to("metadata.regoin"), ["metadata.region"]);
        assert_eq!(s.close_to("region"), ["metadata.region"]);
        assert!(s.close_to("regoin").is_empty());
        assert_eq!(s.close_to("user_api"), ["metadata.user_api_key"]);
        assert_eq!(s.close_to("Model"), ["model", "$model"]);
        assert!(s.close_to("zzzzzz").is_empty());
        assert_eq!(s.some_keys(), ["id", "metadata", "model"]);
        // Not wanted: nothing sampled.
        let mut none = KeySample::new(false);
        none.add_line(br#"{"a":1}"#, &[]);
        assert!(none.some_keys().is_empty());
    }
}
