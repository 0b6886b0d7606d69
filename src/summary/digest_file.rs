//! Digest files: a summary's every group and digest saved as versioned JSON
//! (`tokentime.digest/v1`, `summary --save-digest FILE`), and read back to be merged
//! (`tokentime merge FILE...`).
//!
//! Owns the file's schema (documented in docs/digests.md). A digest is saved as its
//! count, sum, min, max and either every value (while exact, at most 10,000) or its t-digest
//! centroids, and rebuilt with `TDigest::new`: the `tdigest` crate's own serde support is not
//! used (its feature pins old proc-macro crates, and a digest serialized before `flush()` does
//! not read back). Reads and writes only the files it is given.

use crate::classify::Coverage;
use crate::metrics::{Metric, NullReason};
use crate::summary::digest::{Digest, Exported, Values};
use crate::summary::slo::Targets;
use crate::summary::window::Buckets;
use crate::summary::{
    GroupStats, GroupsDoc, MakeGroups, RawGroup, Summary, Untimed, coverage_json,
};
use serde_json::{Map, Value as Json, json};
use std::io::Write;
use std::path::Path;

/// The version of the digest file schema.
pub(crate) const SCHEMA: &str = "tokentime.digest/v1";

/// The version of a digest file that holds `--bucket` windows ([`windows`]): v1 and the
/// `"bucket"` and `"windows"` members. A reader of v1 files alone would merge its summary and
/// leave its windows out: it refuses this version instead.
pub(crate) const SCHEMA_WINDOWS: &str = "tokentime.digest/v2";

/// Whether `schema` names a digest file version this reader takes.
pub(crate) fn is_schema(schema: &Json) -> bool {
    matches!(schema.as_str(), Some(SCHEMA | SCHEMA_WINDOWS))
}

/// The summary and coverage as a digest file document, its groups made as it is written;
/// with the `--bucket` windows of `windows` when given.
pub(crate) fn to_json<'a>(
    cov: &Coverage,
    summary: &'a mut Summary,
    windows: Option<&mut Buckets>,
) -> GroupsDoc<SavedGroups<'a>> {
    let goodput = summary.targets().map(|t| {
        t.0.iter()
            .map(|&(m, ms)| (m.json_name().to_owned(), json!(ms)))
            .collect::<Map<_, _>>()
    });
    let head = json!({
        "schema": SCHEMA,
        "by": summary.by().to_vec(),
        "max_groups": summary.max_groups(),
        "exact_limit": summary.exact_limit(),
        "goodput": goodput,
        "cache_hit_ratio": summary.hit_ratio(),
        "coverage": coverage_json(cov),
    });
    let Json::Object(mut head) = head else {
        unreachable!("json! of an object literal is an object")
    };
    if let Some(p) = crate::summary::partial_json(cov) {
        head.insert("partial".into(), p);
    }
    let r = summary.range();
    if r.is_set() {
        head.insert(
            "range".into(),
            json!({"since_ns": r.since, "until_ns": r.until}),
        );
    }
    // The OpenTelemetry GenAI histograms, for `merge -o prometheus`.
    if let Some(g) = summary.genai() {
        head.insert("genai".into(), g.save_json());
    }
    if let Some(b) = windows {
        head.insert("schema".into(), json!(SCHEMA_WINDOWS));
        windows::save(&mut head, b);
    }
    save_top(&mut head, summary);
    GroupsDoc::new(head, SavedGroups(summary.raw_groups()))
}

/// The groups of a digest file, made one at a time ([`to_json`]).
pub(crate) struct SavedGroups<'a>(Vec<RawGroup<'a>>);

impl MakeGroups for SavedGroups<'_> {
    fn count(&self) -> usize {
        self.0.len()
    }

    fn group(&mut self, i: usize) -> Json {
        let (names, values, g) = &mut self.0[i];
        let key: Map<String, Json> = names
            .iter()
            .zip(values.iter())
            .map(|(n, v)| (n.clone(), v.clone().map(Json::String).unwrap_or(Json::Null)))
            .collect();
        let mut metrics = Map::new();
        for (metric, st) in Metric::ALL.into_iter().zip(g.metrics.iter_mut()) {
            if !st.shown(metric) {
                continue;
            }
            let nulls: Map<String, Json> = st
                .nulls
                .iter()
                .map(|(r, n)| (r.as_str().to_owned(), json!(n)))
                .collect();
            let mut m = digest_json(&mut st.digest);
            m["nulls"] = Json::Object(nulls);
            metrics.insert(metric.json_name().to_owned(), m);
        }
        let mut doc = json!({
            "key": key,
            "requests": g.requests,
            "errors": g.errors,
            "cancelled": g.cancelled,
            "response_cache": g.response_cache,
            "goodput": {"met": g.goodput.met, "unknown": g.goodput.unknown,
                        "met_output_tokens": g.goodput.met_output_tokens},
            "span_ns": g.span.map(|(a, b)| json!([a, b])),
            "ttft_origins": g.ttft_origins.to_json(),
            "metrics": metrics,
            "analysis": g.extra.save_json(),
        });
        // Only where some request's format logged no time (a file without it has none).
        if g.untimed != Untimed::default() {
            doc["untimed"] = json!({
                "requests": g.untimed.requests,
                "output_tokens": g.untimed.output_tokens,
                "met": g.untimed.met,
                "met_output_tokens": g.untimed.met_output_tokens,
            });
            if !g.untimed.failed_unknown {
                doc["untimed"]["failed"] = json!(g.untimed.failed);
            }
        }
        // Only where some request came with its benchmark run's duration.
        if !g.runs.0.is_empty() {
            let runs: Vec<Json> = g
                .runs
                .0
                .iter()
                .map(|r| {
                    json!({
                        "id": r.id,
                        "duration_ns": r.ns,
                        "requests": r.requests,
                        "completed": r.completed,
                        "output_tokens": r.output_tokens,
                        "met": r.met,
                        "met_output_tokens": r.met_output_tokens,
                    })
                })
                .collect();
            doc["runs"] = Json::Array(runs);
        }
        doc
    }
}

/// A digest as saved: `count`, `sum`, `min`, `max`, and `exact` (every value) or
/// `centroids` (`[mean, weight]` pairs), with `atoms` (`[value, count]` pairs of every
/// distinct value) while the values past the exact limit are few distinct ones.
pub(crate) fn digest_json(d: &mut Digest) -> Json {
    let e = d.export();
    let mut m = json!({"count": e.count, "sum": e.sum, "min": e.min, "max": e.max});
    if let Some(a) = &e.atoms {
        m["atoms"] = a.iter().map(|&(v, n)| json!([v, n])).collect();
    }
    match e.values {
        Values::Exact(v) => m["exact"] = json!(v),
        Values::Centroids(c) => {
            m["centroids"] = c.into_iter().map(|(a, w)| json!([a, w])).collect()
        }
    }
    m
}

/// The `[number, x]` pairs of a JSON array, `x` read by `second`; `err` says what they should
/// have been.
fn pairs<T>(
    a: &[Json],
    second: impl Fn(&Json) -> Option<T>,
    err: impl Fn() -> String,
) -> Result<Vec<(f64, T)>, String> {
    a.iter()
        .map(|p| match (p[0].as_f64(), second(&p[1])) {
            (Some(x), Some(y)) => Ok((x, y)),
            _ => Err(err()),
        })
        .collect()
}

/// Rebuilds a digest saved by [`digest_json`]; `name` names it in messages.
///
/// # Errors
/// A message naming what is missing or inconsistent.
pub(crate) fn digest_from_json(j: &Json, name: &str) -> Result<Digest, String> {
    let f = |k: &str| {
        j[k].as_f64()
            .ok_or_else(|| format!("{name}.{k} must be a number"))
    };
    let values = match (&j["exact"], &j["centroids"]) {
        (Json::Array(v), Json::Null) => Values::Exact(
            v.iter()
                .map(|x| x.as_f64().ok_or(format!("{name}.exact holds numbers")))
                .collect::<Result<_, _>>()?,
        ),
        (Json::Null, Json::Array(c)) => Values::Centroids(pairs(c, Json::as_f64, || {
            format!("{name}.centroids holds [mean, weight] pairs")
        })?),
        _ => return Err(format!("{name} needs one of \"exact\" or \"centroids\"")),
    };
    let atoms_err = || format!("{name}.atoms holds [value, count] pairs");
    let atoms = match &j["atoms"] {
        Json::Null => None,
        Json::Array(a) => Some(pairs(a, Json::as_u64, atoms_err)?),
        _ => return Err(atoms_err()),
    };
    let e = Exported {
        atoms,
        count: u(&j["count"], "count")?,
        sum: f("sum")?,
        min: f("min")?,
        max: f("max")?,
        values,
    };
    Digest::import(e).map_err(|e| format!("{name}: {e}"))
}

/// Writes the digest document to `out`, on one line (`--save-digest -`: standard output, in
/// place of the report; one such line per run, so the output of several runs, concatenated, is
/// what `merge -` reads).
///
/// # Errors
/// The writer's.
pub(crate) fn write(
    out: &mut impl Write,
    cov: &Coverage,
    summary: &mut Summary,
    windows: Option<&mut Buckets>,
) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, &to_json(cov, summary, windows))?;
    out.write_all(b"\n")
}

/// Writes the digest file at `path` (through a temporary file beside it, renamed into place,
/// so a reader never sees half a file; a symbolic link, device or pipe is written through).
///
/// # Errors
/// The file system's.
#[cfg(test)]
pub(crate) fn save(path: &Path, cov: &Coverage, summary: &mut Summary) -> std::io::Result<()> {
    save_via(path, cov, summary, None, |p: &Path| {
        std::fs::File::create(p)
    })
}

/// [`save`], each file (the temporary one, or `path` written through) opened by `open`: the
/// summary command opens and writes them under its watch of blocked writes.
///
/// # Errors
/// The file system's.
pub(crate) fn save_via<W: Write>(
    path: &Path,
    cov: &Coverage,
    summary: &mut Summary,
    windows: Option<&mut Buckets>,
    open: impl FnOnce(&Path) -> std::io::Result<W>,
) -> std::io::Result<()> {
    let doc = to_json(cov, summary, windows);
    let write = |file: W| -> std::io::Result<()> {
        let mut w = std::io::BufWriter::new(file);
        serde_json::to_writer(&mut w, &doc)?;
        w.write_all(b"\n")?;
        w.flush()
    };
    if !replaceable(path) {
        // A symbolic link, a device, a pipe (`>(gzip > d.json.gz)`): written through, not
        // replaced by a regular file.
        return write(open(path)?);
    }
    let tmp = tmp_path(path);
    let written = open(&tmp)
        .and_then(write)
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// True when `path` is absent or a regular file (not a symbolic link): [`save`] may write a
/// temporary file and rename it over `path`, so a crash never leaves half a digest file.
pub(crate) fn replaceable(path: &Path) -> bool {
    match std::fs::symlink_metadata(path) {
        Ok(m) => m.file_type().is_file(),
        Err(_) => true,
    }
}

/// The file [`save`] writes before renaming it to `path`.
pub(crate) fn tmp_path(path: &Path) -> std::path::PathBuf {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::path::PathBuf::from(tmp)
}

/// Checks, before any input is read, that [`save`] will be able to write `path`: creates and
/// removes its temporary file, and refuses a directory. A run over hours of logs should not
/// fail at its very end.
///
/// # Errors
/// The reason, as the file system gives it.
pub(crate) fn check_writable(path: &Path) -> std::io::Result<()> {
    if path.is_dir() {
        return Err(std::io::Error::other("is a directory"));
    }
    if !replaceable(path) {
        // Written through when saved (opening a pipe now would wait for its reader).
        return Ok(());
    }
    let tmp = tmp_path(path);
    std::fs::File::create(&tmp)?;
    std::fs::remove_file(&tmp)
}

/// One digest file, read back.
#[derive(Debug)]
pub(crate) struct Loaded {
    /// The coverage counters.
    pub coverage: Coverage,
    /// The summary with every group.
    pub summary: Summary,
    /// Bounds on what merging this file adds to any count ([`merge_files`] checks them).
    pub totals: Totals,
    /// The `--bucket` windows, when the file holds them.
    pub buckets: Option<Buckets>,
}

/// Every group's requests, and every group's digest counts, added up (`u64::MAX` at most):
/// any count of a merge (a group's, the overall group's, a digest's) is at most the sum of
/// these over the files merged, so while those sums fit in a `u64` no count of the merge
/// wraps around.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Totals {
    /// The groups' `requests` (each of their other counts is at most that).
    pub requests: u64,
    /// The groups' digests' `count`s.
    pub values: u64,
}

impl Totals {
    /// Adds `other`, or names the total that passes `u64::MAX`.
    fn checked_add(self, other: Totals) -> Result<Totals, &'static str> {
        Ok(Totals {
            requests: self
                .requests
                .checked_add(other.requests)
                .ok_or("requests")?,
            values: self
                .values
                .checked_add(other.values)
                .ok_or("metric counts")?,
        })
    }
}

/// Reads a digest file.
///
/// # Errors
/// A message for a file that is not a `tokentime.digest/v1` document or is inconsistent.
pub(crate) fn load(path: &Path) -> Result<Loaded, String> {
    let name = crate::input::shown_path(path);
    let text = std::fs::read(path).map_err(|e| open_error(&name, &e))?;
    let doc: Json = serde_json::from_slice(&text).map_err(|e| {
        unreadable(
            &name,
            "one JSON document written by `tokentime summary --save-digest`",
            &text,
            &e,
        )
    })?;
    from_json(&doc).map_err(|e| format!("{name}: {e}"))
}

/// True when `head`, the first bytes of an input, start as a digest file does (its members
/// are written in name order: `{"by":[...],"cache_hit_ratio":...`): a file cut short is
/// still told from a log.
pub(crate) fn starts_like_digest(head: &[u8]) -> bool {
    let head = head.trim_ascii_start();
    head.starts_with(b"{\"by\":[")
        && memchr::memmem::find(&head[..head.len().min(4096)], b"],\"cache_hit_ratio\":").is_some()
}

/// The message for an input at `name` that did not parse as `what` (a digest file's
/// documents): one that starts like a digest file and ends early is named as cut short.
fn unreadable(name: &str, what: &str, head: &[u8], e: &serde_json::Error) -> String {
    if e.is_eof() && starts_like_digest(head) {
        format!(
            "{name}: a digest file cut short ({e}): it was not written to its end (a copy in \
             part, a disk that filled up); save it again"
        )
    } else {
        format!("{name}: not a digest file ({what}): {e}")
    }
}

/// Rebuilds a summary and coverage from a digest file document.
///
/// # Errors
/// A message naming the first thing wrong.
pub(crate) fn from_json(doc: &Json) -> Result<Loaded, String> {
    match doc["schema"].as_str() {
        Some(SCHEMA | SCHEMA_WINDOWS) => {}
        Some(other) => {
            return Err(format!(
                "schema {other:?} is not {SCHEMA:?} or {SCHEMA_WINDOWS:?}"
            ));
        }
        None => return Err(format!("not a digest file (no \"schema\": {SCHEMA:?})")),
    }
    let by: Vec<String> = doc["by"]
        .as_array()
        .ok_or("\"by\" must be an array")?
        .iter()
        .map(|v| v.as_str().map(str::to_owned).ok_or("\"by\" holds strings"))
        .collect::<Result<_, _>>()?;
    let max_groups = doc["max_groups"].as_u64().ok_or("\"max_groups\" missing")? as usize;
    let targets = match &doc["goodput"] {
        Json::Null => None,
        Json::Object(m) => {
            let mut t = m
                .iter()
                .map(|(k, v)| {
                    let i = Metric::from_name(k).ok_or_else(|| format!("goodput metric {k:?}"))?;
                    Ok((i, v.as_f64().ok_or("goodput bound must be a number")?))
                })
                .collect::<Result<Vec<_>, String>>()?;
            t.sort_by_key(|&(m, _)| m);
            Some(Targets(t))
        }
        _ => return Err("\"goodput\" must be an object or null".into()),
    };
    // Files from before it was saved: the default.
    let exact_limit = match &doc["exact_limit"] {
        Json::Null => crate::summary::digest::EXACT_LIMIT,
        v => v.as_u64().ok_or("\"exact_limit\" must be a count")? as usize,
    };
    let mut summary = Summary::new(by, max_groups, exact_limit)
        .with_goodput(targets)
        .with_hit_ratio(match &doc["cache_hit_ratio"] {
            Json::Null => None,
            v => Some(v.as_f64().ok_or("\"cache_hit_ratio\" must be a number")?),
        })
        .with_range(load_range(&doc["range"])?);
    // Windows are made before the histograms are kept: a window has none.
    let template = summary.empty_like();
    // Files from before the histograms were saved have none, nor those from before their
    // durations were split by who measured them: `merge -o prometheus` then prints none.
    if !doc["genai"].is_null() {
        let g = crate::summary::genai::GenAi::load_json(&doc["genai"], max_groups)?;
        summary.set_genai(g);
    }
    load_top(doc, &mut summary)?;
    let mut coverage = coverage_from_json(&doc["coverage"])?;
    coverage.interrupted = match &doc["partial"] {
        // A complete run's file, or one from before the member existed.
        Json::Null => 0,
        p => match (&p["interrupted"], &p["read_errors"]) {
            (Json::Bool(i), n) if n.as_u64() == Some(coverage.read_errors) => {
                coverage.checkpoints = u64::from(p["checkpoint"] == Json::Bool(true));
                u64::from(*i)
            }
            _ => {
                return Err(format!(
                    "\"partial\" must be {{\"interrupted\": true or false, \"read_errors\": {}}} (coverage.read_errors)",
                    coverage.read_errors
                ));
            }
        },
    };
    let mut totals = Totals::default();
    let groups = doc["groups"]
        .as_array()
        .ok_or("\"groups\" must be an array")?;
    let mut runs = RunIds::new();
    add_groups(groups, &mut summary, &mut totals, &mut runs)?;
    let buckets = match (doc["schema"].as_str(), &doc["windows"]) {
        (Some(SCHEMA_WINDOWS), _) => Some(windows::load(doc, &template, &mut totals, &mut runs)?),
        (_, Json::Null) => None,
        _ => {
            return Err(format!(
                "\"windows\" in a {SCHEMA:?} file (they are {SCHEMA_WINDOWS:?})"
            ));
        }
    };
    Ok(Loaded {
        coverage,
        summary,
        totals,
        buckets,
    })
}

/// Reads `groups` (a digest file's, or a window's) into `summary`, adding their counts to
/// `totals`.
fn add_groups(
    groups: &[Json],
    summary: &mut Summary,
    totals: &mut Totals,
    runs: &mut RunIds,
) -> Result<(), String> {
    for (i, g) in groups.iter().enumerate() {
        let (key, stats) = group_from_json(g, runs).map_err(|e| format!("group {i}: {e}"))?;
        let values = stats
            .metrics
            .iter()
            .try_fold(0u64, |n, m| n.checked_add(m.digest.count()));
        *totals = values
            .ok_or("metric counts")
            .and_then(|values| {
                totals.checked_add(Totals {
                    requests: stats.requests,
                    values,
                })
            })
            .map_err(|what| {
                format!(
                    "group {i}: the groups' {what} add up past {} (2^64 - 1)",
                    u64::MAX
                )
            })?;
        summary
            .insert_group(&key, &stats)
            .map_err(|e| format!("group {i}: {e}"))?;
    }
    Ok(())
}

type Key = Vec<(String, Option<String>)>;

/// The runs of one digest file: each run's id in the file and the id it takes here
/// ([`crate::classify::Run::next_id`]), so that its requests in several groups stay one run
/// and runs of two files stay two.
pub(crate) type RunIds = std::collections::HashMap<u64, u64>;

/// A group's `runs` ([`crate::summary::Runs`]), their ids made this process's.
fn runs_from_json(j: &Json, ids: &mut RunIds) -> Result<crate::summary::Runs, String> {
    let Some(list) = j.as_array() else {
        return Err("\"runs\" must be an array".into());
    };
    let mut runs = crate::summary::Runs::default();
    for r in list {
        let ns = r["duration_ns"]
            .as_i64()
            .filter(|&ns| ns > 0)
            .ok_or("\"runs\": \"duration_ns\" must be a positive integer")?;
        let t = crate::summary::RunTally {
            id: *ids
                .entry(u(&r["id"], "runs.id")?)
                .or_insert_with(crate::classify::Run::next_id),
            ns,
            requests: u(&r["requests"], "runs.requests")?,
            completed: u(&r["completed"], "runs.completed")?,
            output_tokens: u(&r["output_tokens"], "runs.output_tokens")?,
            met: u(&r["met"], "runs.met")?,
            met_output_tokens: u(&r["met_output_tokens"], "runs.met_output_tokens")?,
        };
        if t.completed > t.requests || t.met > t.completed {
            return Err(
                "\"runs\": completed must be at most requests, met at most completed".into(),
            );
        }
        runs.0.push(t);
    }
    Ok(runs)
}

fn u(v: &Json, what: &str) -> Result<u64, String> {
    v.as_u64()
        .ok_or_else(|| format!("{what:?} must be a count"))
}

fn group_from_json(g: &Json, runs: &mut RunIds) -> Result<(Key, GroupStats), String> {
    let key = g["key"]
        .as_object()
        .ok_or("\"key\" must be an object")?
        .iter()
        .map(|(k, v)| match v {
            Json::Null => Ok((k.clone(), None)),
            Json::String(s) => Ok((k.clone(), Some(s.clone()))),
            _ => Err(format!("key {k:?} must be a string or null")),
        })
        .collect::<Result<Key, String>>()?;
    let mut st = GroupStats {
        requests: u(&g["requests"], "requests")?,
        errors: u(&g["errors"], "errors")?,
        cancelled: u(&g["cancelled"], "cancelled")?,
        response_cache: u(&g["response_cache"], "response_cache")?,
        ..GroupStats::default()
    };
    st.goodput.met = u(&g["goodput"]["met"], "goodput.met")?;
    st.goodput.unknown = u(&g["goodput"]["unknown"], "goodput.unknown")?;
    st.goodput.met_output_tokens = u(
        &g["goodput"]["met_output_tokens"],
        "goodput.met_output_tokens",
    )?;
    if let Some(origins) = g["ttft_origins"].as_object() {
        for (o, n) in origins {
            let n = n.as_u64().ok_or("ttft_origins holds counts")?;
            if !st.ttft_origins.set(o, n) {
                return Err(format!("unknown TTFT origin {o:?}"));
            }
        }
    }
    if !g["untimed"].is_null() {
        let t = &g["untimed"];
        st.untimed = Untimed {
            requests: u(&t["requests"], "untimed.requests")?,
            output_tokens: u(&t["output_tokens"], "untimed.output_tokens")?,
            met: u(&t["met"], "untimed.met")?,
            met_output_tokens: u(&t["met_output_tokens"], "untimed.met_output_tokens")?,
            // Kept since the completed requests' rate: a file saved before it does not say.
            failed: match &t["failed"] {
                Json::Null => 0,
                f => u(f, "untimed.failed")?,
            },
            failed_unknown: t["failed"].is_null(),
        };
    }
    if !g["runs"].is_null() {
        st.runs = runs_from_json(&g["runs"], runs)?;
    }
    check_counts(&st)?;
    st.span = match &g["span_ns"] {
        Json::Null => None,
        Json::Array(a) if a.len() == 2 => Some((
            a[0].as_i64().ok_or("span_ns holds integers")?,
            a[1].as_i64().ok_or("span_ns holds integers")?,
        )),
        _ => return Err("\"span_ns\" must be [start, end] or null".into()),
    };
    // Files saved before the analysis member existed have none: the analysis tables stay
    // empty.
    if !g["analysis"].is_null() {
        st.extra = crate::summary::accumulators::Extra::load_json(&g["analysis"])?;
    }
    for (metric, m) in Metric::ALL.into_iter().zip(st.metrics.iter_mut()) {
        let name = metric.json_name();
        let j = &g["metrics"][name];
        if j.is_null() && metric.only_where_logged() {
            // Left out when no request logged it (and by files saved before it existed).
            m.nulls.insert(NullReason::NotLogged, st.requests);
            continue;
        }
        if j.is_null() {
            return Err(format!("metric {name} missing"));
        }
        m.digest = digest_from_json(j, name)?;
        for (r, n) in j["nulls"].as_object().ok_or(format!("{name}.nulls"))? {
            let reason = NullReason::from_name(r)
                .ok_or_else(|| format!("{name}: unknown null reason {r:?}"))?;
            m.nulls.insert(reason, u(n, r)?);
        }
    }
    check_nulls(&st)?;
    Ok((key, st))
}

/// Refuses a group whose counts cannot all be true: more errors (cancelled, response-cache
/// answers, requests judged for goodput) than requests.
fn check_counts(st: &GroupStats) -> Result<(), String> {
    let r = st.requests;
    for (what, n) in [
        ("errors", st.errors),
        ("cancelled", st.cancelled),
        ("response_cache", st.response_cache),
        ("goodput.met + goodput.unknown", {
            let g = st.goodput;
            g.met.saturating_add(g.unknown)
        }),
        ("untimed.requests", st.untimed.requests),
        (
            "ttft_origins",
            st.ttft_origins
                .iter()
                .try_fold(0u64, |a, (_, b)| a.checked_add(b))
                .unwrap_or(u64::MAX),
        ),
    ] {
        if n > r {
            return Err(format!("{what} {n} is more than the requests {r}"));
        }
    }
    let (t, g) = (st.untimed, st.goodput);
    if t.met > g.met
        || t.met_output_tokens > g.met_output_tokens
        || t.met > t.requests
        || t.failed > t.requests
        || t.failed > st.errors.saturating_add(st.cancelled)
    {
        return Err("untimed goodput counts are more than the group's".into());
    }
    Ok(())
}

/// Refuses a group with more nulls of one reason than requests (a request is null at most once
/// per metric).
fn check_nulls(st: &GroupStats) -> Result<(), String> {
    for (metric, m) in Metric::ALL.into_iter().zip(&st.metrics) {
        if let Some((reason, n)) = m.nulls.iter().find(|&(_, n)| n > st.requests) {
            return Err(format!(
                "{}.nulls.{} {n} is more than the requests {}",
                metric.json_name(),
                reason.as_str(),
                st.requests
            ));
        }
    }
    Ok(())
}

fn coverage_from_json(c: &Json) -> Result<Coverage, String> {
    let n = |k: &str| u(&c[k], k);
    let mut cov = Coverage {
        lines: n("lines")?,
        requests: n("requests")?,
        non_json: n("non_json")?,
        no_timing: n("no_timing")?,
        invalid: n("invalid")?,
        too_long: n("too_long")?,
        already_enriched: n("already_enriched")?,
        errors: n("errors")?,
        cancelled: n("cancelled")?,
        response_cache: n("response_cache")?,
        negative_interval: u(&c["anomalies"]["negative_interval"], "negative_interval")?,
        ..Coverage::default()
    };
    // Counters added after the first digest files: absent means 0.
    let opt = |v: &Json| v.as_u64().unwrap_or(0);
    cov.unparseable = opt(&c["anomalies"]["unparseable"]);
    cov.implausible_instant = opt(&c["anomalies"]["implausible_instant"]);
    cov.out_of_order = opt(&c["anomalies"]["out_of_order"]);
    cov.duration_mismatch = opt(&c["anomalies"]["duration_mismatch"]);
    cov.duplicates = opt(&c["duplicates"]);
    cov.outside_window = opt(&c["outside_window"]);
    cov.outside_range = opt(&c["outside_range"]);
    cov.read_errors = opt(&c["read_errors"]);
    let j = &c["joins"];
    cov.joined_lines = opt(&j["joined_lines"]);
    cov.join_evicted = opt(&j["evicted"]);
    cov.join_timed_out = opt(&j["timed_out"]);
    cov.join_unfinished = opt(&j["unfinished"]);
    cov.join_orphaned = opt(&j["orphaned"]);
    for (k, v) in c["formats"].as_object().ok_or("coverage.formats")? {
        cov.formats.insert(k.clone(), u(v, k)?);
    }
    // Added later: absent in older files.
    if let Some(skipped) = c["skipped"].as_object() {
        for (k, v) in skipped {
            cov.skipped.insert(k.clone(), u(v, k)?);
        }
    }
    Ok(cov)
}

/// What [`merge_files`] returns: the coverage and summary one run over all the inputs of the
/// digest documents read would have built, and how many documents were read.
#[derive(Debug)]
pub(crate) struct Merged {
    pub coverage: Coverage,
    pub summary: Summary,
    /// Digest documents merged (a file or standard input may hold several, one after another).
    pub documents: usize,
    /// The `--bucket` windows, when the documents hold them (all of them, of one width).
    pub buckets: Option<Buckets>,
    /// A message for each document with requests that is the same as one merged before it:
    /// most likely a copy, whose requests count twice.
    pub copies: Vec<String>,
}

/// Merges digest files in order: the coverage and summary one run over all their inputs
/// would have built (exact while every digest is, a t-digest merge beyond). `-` is standard
/// input. A file (or standard input) may hold several digest documents one after another
/// (`cat a.json b.json`, or the digests of `summary --save-digest -` run per partition): each
/// is merged in turn.
///
/// Each document saved by a partial run ([`Coverage::partial`]: interrupted, or an input not
/// read to its end) is told to `partial` with its name (the file's, and `, digest N` when the
/// file holds several) and its coverage, as it is read.
///
/// # Errors
/// A message for an unreadable file, or files saved with different `--by` keys or goodput
/// targets (their groups do not line up).
/// Why the file `name` could not be read: a missing one worded as a missing input of `summary`
/// is.
fn open_error(name: &str, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => format!("{name}: no such file"),
        _ => format!("{name}: {e}"),
    }
}

pub(crate) fn merge_files(
    paths: &[std::path::PathBuf],
    mut partial: impl FnMut(&str, &Coverage),
) -> Result<Merged, String> {
    let mut m = Merger::default();
    let mut seen: Vec<(u64, u64, &Path)> = vec![];
    if paths.iter().filter(|p| p.as_os_str() == "-").count() > 1 {
        return Err("-: standard input named twice (its digests are read once)".to_owned());
    }
    for p in paths {
        let stdin = p.as_os_str() == "-";
        if !stdin && let Ok(meta) = std::fs::metadata(p) {
            // The same file named twice (`merge *.json` over a folder, a path and a link to
            // it) would count its requests twice.
            use std::os::unix::fs::MetadataExt;
            let id = (meta.dev(), meta.ino());
            if let Some((_, _, first)) = seen.iter().find(|(d, i, _)| (*d, *i) == id) {
                return Err(format!(
                    "{}: the same file as {}, named twice (its requests would count twice)",
                    shown_path(p),
                    shown_path(first)
                ));
            }
            seen.push((id.0, id.1, p));
        }
        let name = if stdin {
            "<stdin>".to_owned()
        } else {
            shown_path(p)
        };
        let reader: Box<dyn std::io::Read> = if stdin {
            Box::new(crate::input::source::Stdin::default())
        } else {
            Box::new(std::fs::File::open(p).map_err(|e| open_error(&name, &e))?)
        };
        m.read_stream(&name, reader, &mut partial)?;
    }
    let (coverage, summary, buckets) = m
        .acc
        .ok_or_else(|| "merge needs at least one digest file".to_owned())?;
    Ok(Merged {
        coverage,
        summary,
        documents: m.documents,
        buckets,
        copies: m.copies,
    })
}

fn shown_path(p: &Path) -> String {
    crate::input::shown_path(p)
}

/// The documents merged so far ([`merge_files`]).
#[derive(Default)]
struct Merger {
    acc: Option<(Coverage, Summary, Option<Buckets>)>,
    totals: Totals,
    documents: usize,
    /// A hash of each document with requests merged so far, and its name: a second copy of
    /// one (a `cp` of a digest file, one saved twice) counts its requests twice.
    seen: Vec<(u64, String)>,
    /// What [`Merged::copies`] says.
    copies: Vec<String>,
}

impl Merger {
    /// Reads and merges every digest document of one input named `name`: JSON documents one
    /// after another (blanks between them allowed). The first is named `name` in messages; the
    /// others `name, digest N`.
    fn read_stream(
        &mut self,
        name: &str,
        reader: impl std::io::Read,
        partial: &mut impl FnMut(&str, &Coverage),
    ) -> Result<(), String> {
        // The first bytes, kept to tell a digest file cut short from another input.
        let mut reader = std::io::BufReader::with_capacity(1 << 16, reader);
        let head = std::io::BufRead::fill_buf(&mut reader)
            .map(|b| b[..b.len().min(4096)].to_vec())
            .unwrap_or_default();
        let docs = serde_json::Deserializer::from_reader(reader).into_iter::<Json>();
        let mut n = 0usize;
        for doc in docs {
            n += 1;
            let at = if n == 1 {
                name.to_owned()
            } else {
                format!("{name}, digest {n}")
            };
            let doc = doc.map_err(|e| {
                unreadable(
                    &at,
                    "JSON documents written by `tokentime summary --save-digest`",
                    if n == 1 { &head } else { b"" },
                    &e,
                )
            })?;
            let l = from_json(&doc).map_err(|e| format!("{at}: {e}"))?;
            if l.coverage.requests > 0 {
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                doc.to_string().hash(&mut h);
                let h = h.finish();
                match self.seen.iter().find(|(seen, _)| *seen == h) {
                    Some((_, first)) => self.copies.push(format!(
                        "{at}: the same digest as {first} (the same {} requests: a copy, or a \
                         map step saved twice?); both are counted, as one run over two copies \
                         of a log counts both",
                        l.coverage.requests
                    )),
                    None => self.seen.push((h, at.clone())),
                }
            }
            if l.coverage.partial() {
                partial(&at, &l.coverage);
            }
            self.add(&at, l)?;
        }
        if n == 0 {
            return Err(format!(
                "{name}: no digest in it (empty: `tokentime summary --save-digest` writes one JSON document)"
            ));
        }
        Ok(())
    }

    /// Merges one document, named `at` in messages, into those before it.
    fn add(&mut self, at: &str, l: Loaded) -> Result<(), String> {
        self.documents += 1;
        self.totals = self.totals.checked_add(l.totals).map_err(|what| {
            format!(
                "{at}: the {what} of the groups of the files up to this one add up past {} (2^64 - 1)",
                u64::MAX
            )
        })?;
        let Some((cov, sum, buckets)) = &mut self.acc else {
            self.acc = Some((l.coverage, l.summary, l.buckets));
            return Ok(());
        };
        if sum.by() != l.summary.by() {
            return Err(format!(
                "{at}: grouped by [{}], the first file by [{}]",
                l.summary.by().join(", "),
                sum.by().join(", ")
            ));
        }
        // Spans of one log that share time count the requests in both twice (those of
        // several hosts do not: said, not refused). The merge has no span of its own.
        if sum.range() != l.summary.range() {
            if overlap(sum.range(), l.summary.range()) {
                crate::diag!(
                    "tokentime: {at}: saved with {}, an earlier file with {}: the spans overlap; merged, each with the requests of its own span (spans of one log that overlap count the requests in both twice)",
                    range_text(l.summary.range()),
                    range_text(sum.range())
                );
            }
            sum.set_range(crate::metrics::TimeRange::default());
        }
        match (sum.hit_ratio(), l.summary.hit_ratio()) {
            (Some(a), Some(b)) if a != b => {
                return Err(format!(
                    "{at}: saved with --cache-hit-ratio {b}, an earlier file with {a}: their hit and partial groups differ"
                ));
            }
            // A file from before the ratio was recorded: checked against the next.
            (None, Some(b)) => sum.set_hit_ratio(Some(b)),
            _ => {}
        }
        if sum.exact_limit() != l.summary.exact_limit() {
            return Err(format!(
                "{at}: saved with --exact-limit {}, the first file with {}: one run would have had one",
                l.summary.exact_limit(),
                sum.exact_limit()
            ));
        }
        if sum.targets() != l.summary.targets() {
            return Err(format!(
                "{at}: saved with other --goodput targets than the first file"
            ));
        }
        cov.checked_merge(&l.coverage).map_err(|what| {
            format!(
                "{at}: coverage.{what} of the files up to this one adds up past {} (2^64 - 1)",
                u64::MAX
            )
        })?;
        windows::check_same(at, buckets.as_ref(), l.buckets.as_ref())?;
        if let (Some(a), Some(b)) = (buckets, &l.buckets) {
            let mut template = sum.empty_like();
            template.set_genai(None);
            a.merge(b, &template);
        }
        if l.summary.genai().is_none() && sum.genai().is_some() {
            // A file saved before the histograms were: the merge has none, not some.
            sum.set_genai(None);
        }
        sum.merge(&l.summary);
        Ok(())
    }
}

#[path = "digest_windows.rs"]
mod windows;

/// Saves the failures' reasons and the slowest requests as `"top"`
/// ([`crate::summary::top::Top::save_json`]).
fn save_top(head: &mut Map<String, Json>, summary: &Summary) {
    head.insert("top".into(), summary.top().save_json());
}

/// Reads `"top"` into `summary`; a file from before it was saved has none.
///
/// # Errors
/// A message for a `"top"` that is not as saved.
fn load_top(doc: &Json, summary: &mut Summary) -> Result<(), String> {
    summary.set_top(crate::summary::top::Top::load_json(&doc["top"])?);
    Ok(())
}

#[cfg(test)]
#[path = "digest_file_tests.rs"]
mod tests;

/// A digest file's `range` (`null` or absent in a file saved without `--since`/`--until`, or
/// before it was saved).
fn load_range(v: &Json) -> Result<crate::metrics::TimeRange, String> {
    if v.is_null() {
        return Ok(crate::metrics::TimeRange::default());
    }
    let at = |k: &str| -> Result<Option<i64>, String> {
        match &v[k] {
            Json::Null => Ok(None),
            t => t
                .as_i64()
                .map(Some)
                .ok_or_else(|| format!("\"range.{k}\" must be an integer (ns) or null")),
        }
    };
    Ok(crate::metrics::TimeRange {
        since: at("since_ns")?,
        until: at("until_ns")?,
    })
}

/// Whether two spans share an instant (an end not given is open).
fn overlap(a: crate::metrics::TimeRange, b: crate::metrics::TimeRange) -> bool {
    let before = |since: Option<i64>, until: Option<i64>| match (since, until) {
        (Some(s), Some(u)) => s < u,
        _ => true,
    };
    before(a.since, b.until) && before(b.since, a.until)
}

/// A span as its flags (`--since 2026-11-29T15:30:00.000Z --until ...`), or `no --since or
/// --until`.
fn range_text(r: crate::metrics::TimeRange) -> String {
    let flags: Vec<String> = [("since", r.since), ("until", r.until)]
        .into_iter()
        .filter_map(|(f, t)| Some(format!("--{f} {}", crate::summary::window::flag_time(t?))))
        .collect();
    if flags.is_empty() {
        "no --since or --until".into()
    } else {
        flags.join(" ")
    }
}
