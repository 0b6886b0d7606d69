//! Why a log read with `--map` gave no request: at the end of an input that had lines but no
//! request, the paths `--map` names that its first JSON line lacks are named on stderr, with
//! the paths that line has that are close to them (`tokentime: app.log: no line was read as a
//! request: a line is one when it has req.t0, the path of --map arrival; the first JSON line
//! has no req.t0 (--map arrival); its paths close to them: a.t0`; with several time fields
//! mapped, a line is one when it has any of their paths). Told from the input's first bytes (the ones read ahead to tell
//! what the input is); said only when the input gave no request.

use crate::app::keys::KeySample;
use crate::format::units::Unit;
use crate::format::{Cond, Field, FormatSpec};
use crate::metrics::Metric;
use crate::summary::{FormatChoice, Summary};

/// The paths of the format `--map` makes: those a line must have one of to be read as a
/// request (its time fields'), and every mapped field's.
#[derive(Debug, Clone, Default)]
pub(crate) struct Mapped {
    /// `(field, dotted path)`, the markers' first.
    paths: Vec<(&'static str, String)>,
    /// How many of `paths` are markers: a line that has any of them is a request.
    n_markers: usize,
    /// The `--root` the paths are read below (none when it walks, `[*]`).
    root: Vec<String>,
    /// The name of the formats file's format the paths are of (none: `--map`'s).
    from_file: Option<String>,
}

impl Mapped {
    /// The paths of the fields of the formats file's format that read every request of `cov`
    /// (as [`Mapped::warn_unseen`] checks `--map`'s), read below `root`; `None` when no such
    /// format read them all, or its requests are records of a line.
    pub(crate) fn of_file(
        formats: &[FormatSpec],
        root: &[String],
        cov: &crate::classify::Coverage,
    ) -> Option<Mapped> {
        let f = formats.iter().find(|f| {
            f.from_file
                && f.records.is_none()
                && cov.requests > 0
                && cov.formats.get(&f.name) == Some(&cov.requests)
        })?;
        let paths = f
            .fields
            .iter()
            .flat_map(|rule| rule.paths.iter().map(|p| (rule.field.name(), p.join("."))))
            .collect();
        Some(Mapped {
            paths,
            n_markers: 0,
            root: crate::classify::record_prefix(root).to_vec(),
            from_file: Some(f.name.clone()),
        })
    }

    /// The mapped paths when the one format in use is `--map`'s, else `None`; read below
    /// `root` (`--root`).
    pub(crate) fn of(formats: &[FormatSpec], root: &[String]) -> Option<Mapped> {
        let [f] = formats else { return None };
        if f.name != "custom" || f.records.is_some() {
            return None;
        }
        let markers: Vec<&Vec<String>> = match f.markers.first() {
            Some(Cond::Present(p)) => vec![p],
            Some(Cond::Any(any)) => any
                .iter()
                .filter_map(|c| match c {
                    Cond::Present(p) => Some(p),
                    _ => None,
                })
                .collect(),
            _ => return None,
        };
        let mut paths: Vec<(&'static str, String)> = Vec::new();
        let mut rest: Vec<(&'static str, String)> = Vec::new();
        for rule in &f.fields {
            for p in &rule.paths {
                let entry = (rule.field.name(), p.join("."));
                if markers.contains(&p) {
                    paths.push(entry);
                } else {
                    rest.push(entry);
                }
            }
        }
        let n_markers = paths.len();
        paths.extend(rest);
        Some(Mapped {
            paths,
            n_markers,
            root: crate::classify::record_prefix(root).to_vec(),
            from_file: None,
        })
    }

    /// What to say of an input that gave no request, from its first bytes `head`: `None` when
    /// they hold no JSON object, or one that has the marker's path (then the counts of the
    /// report tell what was wrong with its values).
    pub(crate) fn message(&self, name: &str, head: &[u8]) -> Option<String> {
        let line = first_object_line(head)?;
        let mut sample = KeySample::new(true);
        sample.add_line(line, &self.root);
        if !sample.has_keys() {
            return None;
        }
        let markers = self.paths.get(..self.n_markers)?;
        if markers.is_empty() || markers.iter().any(|(_, p)| sample.has(p)) {
            return None;
        }
        let mut missing: Vec<String> = Vec::new();
        for (f, p) in &self.paths {
            let entry = format!("{p} (--map {f})");
            if !sample.has(p) && !missing.contains(&entry) {
                missing.push(entry);
            }
        }
        let close = close_to(
            &sample,
            self.paths
                .iter()
                .map(|(_, p)| p.as_str())
                .filter(|p| !sample.has(p)),
        );
        let hint = if close.is_empty() {
            format!("its keys: {}", sample.some_keys().join(", "))
        } else {
            format!("its paths close to them: {}", close.join(", "))
        };
        let one_of = match markers {
            [(field, marker)] => format!("{marker}, the path of --map {field}"),
            _ => {
                let each: Vec<String> = markers
                    .iter()
                    .map(|(f, p)| format!("{p} (--map {f})"))
                    .collect();
                format!("one of {}", each.join(", "))
            }
        };
        Some(format!(
            "{name}: no line was read as a request: a line is one when it has {one_of}; the \
             first JSON line has no {}; {hint}",
            missing.join(", ")
        ))
    }
}

/// The formats of a formats file (not those whose requests are records of a line), with the
/// paths their markers need a line to have: to name the one missing when an input gave no
/// request (a typo in a marker path leaves every line unread).
#[derive(Debug, Clone, Default)]
pub(crate) struct FileMarkers {
    /// `(format name, marker paths)`, in the formats' order.
    formats: Vec<(String, Vec<String>)>,
    /// The `--root` the paths are read below.
    root: Vec<String>,
}

impl FileMarkers {
    pub(crate) fn of(formats: &[FormatSpec], root: &[String]) -> FileMarkers {
        let formats = formats
            .iter()
            .filter(|f| f.from_file && f.records.is_none())
            .map(|f| {
                let mut paths: Vec<String> = Vec::new();
                for c in &f.markers {
                    if let Some(p) = cond_path(c).map(|p| p.join("."))
                        && !paths.contains(&p)
                    {
                        paths.push(p);
                    }
                }
                (f.name.clone(), paths)
            })
            .filter(|(_, paths)| !paths.is_empty())
            .collect();
        FileMarkers {
            formats,
            root: crate::classify::record_prefix(root).to_vec(),
        }
    }

    /// What to say of an input that gave no request, from its first bytes `head`: for each
    /// formats file's format whose marker paths its first JSON line lacks while it has paths
    /// close to them, or some of the others, which ones; `None` when no format is such.
    pub(crate) fn message(&self, name: &str, head: &[u8]) -> Option<String> {
        if self.formats.is_empty() {
            return None;
        }
        let line = first_object_line(head)?;
        let mut sample = KeySample::new(true);
        sample.add_line(line, &self.root);
        if !sample.has_keys() {
            return None;
        }
        let mut said: Vec<String> = Vec::new();
        for (format, paths) in &self.formats {
            let missing: Vec<&String> = paths.iter().filter(|p| !sample.has(p)).collect();
            let mut close = close_to(&sample, missing.iter().map(|p| p.as_str()));
            close.retain(|c| !paths.contains(c));
            if missing.is_empty() || (close.is_empty() && missing.len() == paths.len()) {
                continue;
            }
            let all = paths
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(" and ");
            let lacks = missing
                .iter()
                .map(|p| p.as_str())
                .collect::<Vec<_>>()
                .join(", ");
            let hint = if close.is_empty() {
                String::new()
            } else {
                format!(
                    "; its paths close to {}: {}",
                    if missing.len() == 1 { "it" } else { "them" },
                    close.join(", ")
                )
            };
            said.push(format!(
                "the format `{format}` reads a line as a request when it has {all} (its \
                 markers); the first JSON line has no {lacks}{hint}"
            ));
        }
        if said.is_empty() {
            return None;
        }
        Some(format!(
            "{name}: no line was read as a request: {}",
            said.join("; ")
        ))
    }
}

/// The keys of `sample` close to any of the paths `missing`, each once.
fn close_to<'a>(sample: &KeySample, missing: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut close: Vec<String> = Vec::new();
    for p in missing {
        for c in sample.close_keys(p) {
            if !close.contains(&c) {
                close.push(c);
            }
        }
    }
    close
}

/// The path a marker condition tests, where a line must have it for the condition to hold
/// (none for `not` and `any`).
fn cond_path(c: &Cond) -> Option<&Vec<String>> {
    match c {
        Cond::Present(p)
        | Cond::Set(p)
        | Cond::Equals(p, _)
        | Cond::Differs(p, _)
        | Cond::AtLeast(p, _)
        | Cond::Contains(p, _) => Some(p),
        Cond::Not(_) | Cond::Any(_) => None,
    }
}

impl Mapped {
    /// Says on stderr, for each path `--map` names that none of the sampled request lines
    /// had (a typo in a path other than the one that makes a line a request would otherwise
    /// only leave its metrics null, `not_logged`), that they lacked it, with the paths they
    /// have that are close to it. Nothing when no request was read.
    pub(crate) fn warn_unseen(&self, requests: u64, sample: &KeySample) {
        if requests == 0 || !sample.has_keys() {
            return;
        }
        for msg in self.unseen(sample, requests) {
            crate::diag!("tokentime: {msg}");
        }
    }

    fn unseen(&self, sample: &KeySample, requests: u64) -> Vec<String> {
        let sampled = sample.lines();
        let mut out = vec![];
        for (i, (field, path)) in self.paths.iter().enumerate() {
            if sample.has(path)
                || !sample.would_hold(path)
                || self.paths[..i].iter().any(|(_, p)| p == path)
            {
                continue;
            }
            let close = sample.close_keys(path);
            let hint = if close.is_empty() {
                String::new()
            } else {
                format!("; paths close to it: {}", close.join(", "))
            };
            let which = match sampled {
                1 if requests <= 1 => "the one request line".to_owned(),
                n if u64::from(n) >= requests => format!("any of the {n} request lines"),
                n => format!("any of the {n} request lines sampled"),
            };
            let reads = match &self.from_file {
                Some(name) => format!("the format `{name}` reads {field} from {path}"),
                None => format!("--map {field}={path}"),
            };
            out.push(format!(
                "{reads}: not in {which}, so what it gives is null (not_logged){hint}"
            ));
        }
        out
    }
}

/// Says on stderr what the run showed of a `--map` that reads its log wrong
/// ([`after_run_warnings`]).
pub(crate) fn warn_after_run(
    formats: &[FormatSpec],
    summary: &mut Summary,
    cov: &crate::classify::Coverage,
) {
    for msg in after_run_warnings(formats, summary, cov) {
        crate::diag!("tokentime: {msg}");
    }
    for msg in generic_errors(cov).into_iter().chain(own_documents(cov)) {
        crate::diag!("tokentime: {msg}");
    }
    if cov.duplicates > 0 && cov.behind_horizon > 0 {
        crate::diag!(
            "tokentime: {} set aside as copies, but {} ended more than --join-timeout before the \
             latest end read before {}: too far back to be told from a copy (a file repeated \
             whole?); a longer --join-timeout widens the horizon",
            crate::output::summary::plural(cov.duplicates, "request"),
            crate::output::summary::plural(cov.behind_horizon, "request"),
            if cov.behind_horizon == 1 {
                "it"
            } else {
                "them"
            }
        );
    }
}

/// What stderr says of tokentime's own documents read as input: what each kind is, and what
/// reads it.
pub(crate) fn own_documents(cov: &crate::classify::Coverage) -> Vec<String> {
    cov.own_documents
        .iter()
        .map(|(schema, &n)| {
            let what = match schema.split('/').next().unwrap_or("") {
                "tokentime.digest" => {
                    "a digest file, no log: `tokentime merge FILE...` reports digest files, \
                     `tokentime diff A B` compares two"
                }
                "tokentime.summary" => {
                    "a summary's JSON (-o json): percentiles of requests, not requests; summarise \
                     the log it was made from, or save a digest file (--save-digest) to merge"
                }
                "tokentime.bucket" => {
                    "--bucket windows' JSON lines: percentiles of requests, not requests; \
                     summarise the log they were made from, or save a digest file (--save-digest) \
                     to merge"
                }
                "tokentime.diff" => "a comparison's JSON (diff -o json), not requests",
                _ => "tokentime's own output, not requests",
            };
            format!(
                "{} tokentime's own output ({schema}), left unread: {what}",
                match n {
                    1 => "1 JSON object is".to_owned(),
                    n => format!("{n} JSON objects are"),
                }
            )
        })
        .collect()
}

/// What stderr says of no-timing lines that are the error record of a format the run read
/// requests of, which counts such records only when forced (Ollama's bare `{"error": ...}`).
pub(crate) fn generic_errors(cov: &crate::classify::Coverage) -> Vec<String> {
    cov.generic_errors
        .iter()
        .filter(|(name, _)| cov.formats.get(*name).is_some_and(|&n| n > 0))
        .map(|(name, &n)| {
            let (is, it) = if n == 1 {
                ("is", "it")
            } else {
                ("are", "each")
            };
            format!(
                "{} {is} shaped as an error record of {name}, whose requests this input holds: \
                 too generic to count as a failure under --format auto; --format {name} counts \
                 {it} as a failed request",
                crate::output::summary::plural(n, "no-timing line")
            )
        })
        .collect()
}

/// What a run's summary shows of a `--map` that reads its log wrong: a duration in the wrong
/// unit, a thousandth or a thousand times what the log's instants give ([`unit_off`]), far
/// past the E2E ([`past_e2e`]), or with a median no LLM request has ([`implausible_medians`], for a
/// duration not named already); a reason path that holds an error object
/// ([`reason_objects`]). A log in seconds (microseconds) read as ms is 1000 times short (long)
/// with nothing else to show it.
pub(crate) fn after_run_warnings(
    formats: &[FormatSpec],
    summary: &mut Summary,
    cov: &crate::classify::Coverage,
) -> Vec<String> {
    let Some(r) = Reader::of(formats, cov) else {
        return vec![];
    };
    let mut said = unit_off(r, cov);
    for (field, msg) in implausible_medians(r, summary) {
        if !said.iter().any(|(named, _)| *named == field) {
            said.push((field, msg));
        }
    }
    let mut out: Vec<String> = said.into_iter().map(|(_, msg)| msg).collect();
    out.extend(reason_objects(formats, cov));
    out
}

/// The format whose units [`after_run_warnings`] checks: `--map`'s, the `inferred` one, or
/// one from a formats file, when it read every request (the inferred one's units come from
/// names, a formats file's from its writer: unchecked where the log has no instants).
#[derive(Clone, Copy)]
struct Reader<'f> {
    f: &'f FormatSpec,
    inferred: bool,
}

impl<'f> Reader<'f> {
    fn of(formats: &'f [FormatSpec], cov: &crate::classify::Coverage) -> Option<Self> {
        if let [f] = formats
            && f.name == "custom"
        {
            return Some(Reader { f, inferred: false });
        }
        let f = formats
            .iter()
            .find(|f| f.name == "inferred" || f.from_file && cov.formats.contains_key(&f.name))?;
        let read = cov.formats.get(&f.name).copied().unwrap_or(0);
        (read > 0 && read == cov.requests).then_some(Reader {
            f,
            inferred: f.name == "inferred",
        })
    }

    /// `--map ttft=ttft_ms: read as ms`, `the format inferred reads ttft from ttft_ms as ms`.
    fn read(self, name: &str, path: &str, unit: &str) -> String {
        if self.inferred || self.f.from_file {
            format!(
                "the format `{}` reads {name} from {path} as {unit}",
                self.f.name
            )
        } else {
            format!("--map {name}={path}: read as {unit}")
        }
    }

    /// How to read `path` in `unit` instead.
    fn fix(self, name: &str, path: &str, unit: &str) -> String {
        if self.inferred {
            format!(
                "give {name} unit = \"{unit}\" in what `tokentime formats --guess FILE` writes, \
                 and read with --formats (or --map {name}={path}:{unit} with the other fields)"
            )
        } else if self.f.from_file {
            format!("give {name} unit = \"{unit}\" in the formats file")
        } else {
            format!("--map {name}={path}:{unit}")
        }
    }
}

/// The warning of [`warn_reason_objects`], if any.
fn reason_objects(formats: &[FormatSpec], cov: &crate::classify::Coverage) -> Option<String> {
    let [f] = formats else { return None };
    if f.name != "custom" || cov.reason_objects == 0 {
        return None;
    }
    let path = f.reason_paths.first()?.join(".");
    const LIKELY: [&str; 7] = [
        "type",
        "code",
        "error_class",
        "class",
        "status",
        "message",
        "error_message",
    ];
    let keys = &cov.reason_keys;
    let member = LIKELY
        .iter()
        .find(|k| keys.iter().any(|key| key == *k))
        .map(|k| (*k).to_owned())
        .or_else(|| keys.first().cloned());
    let n = cov.reason_objects;
    let requests = if n == 1 { "request" } else { "requests" };
    let advice = match member {
        Some(m) => format!(
            "map one of its members, as in --map reason={path}.{m} (its keys: {})",
            keys.join(", ")
        ),
        None => format!("map one of its members: --map reason={path}.KEY"),
    };
    Some(format!(
        "--map reason={path}: an object on {n} failed {requests}, not a reason (an error class, \
         a code or a message), so their reasons are not logged; {advice}"
    ))
}

/// The first of `fields` that the `--map` format `f` reads from one path in `unit`, with that
/// path (dotted).
fn one_path(f: &FormatSpec, fields: &[Field], unit: Unit) -> Option<(Field, String)> {
    fields.iter().find_map(|&field| {
        let r = f
            .fields
            .iter()
            .find(|r| r.field == field && r.unit == unit && r.paths.len() == 1)?;
        Some((field, r.paths[0].join(".")))
    })
}

/// The metrics [`implausible_medians`] checks: the metric, its name, the median under which no
/// LLM request is (ms) and why (none for a queue or a prefill, which may be any short time), the median over which none is and why, and the mapped fields
/// it is made from, the likeliest first.
type Plausible = (
    Metric,
    &'static str,
    Option<(f64, &'static str)>,
    (f64, &'static str),
    &'static [Field],
);
const PLAUSIBLE: [Plausible; 5] = [
    (
        Metric::Ttft,
        "TTFT",
        Some((5.0, "shorter than any LLM request waits")),
        (600_000.0, "longer than LLM servers let a request wait"),
        &[Field::Ttft],
    ),
    (
        Metric::E2e,
        "E2E latency",
        Some((5.0, "shorter than any LLM request takes")),
        (3_600_000.0, "longer than LLM servers let a request run"),
        &[Field::E2e],
    ),
    (
        Metric::Queue,
        "queue time",
        None,
        (600_000.0, "longer than LLM servers let a request wait"),
        &[Field::Queue],
    ),
    (
        Metric::Prefill,
        "prefill time",
        None,
        (600_000.0, "longer than any LLM prefills a prompt"),
        &[Field::Prefill],
    ),
    (
        Metric::Tpot,
        "TPOT",
        Some((
            0.25,
            "over 4,000 tokens a second, faster than any LLM decodes",
        )),
        (
            10_000.0,
            "a token in over 10 s, slower than any LLM decodes",
        ),
        &[Field::Decode, Field::E2e],
    ),
];

/// For a duration the `--map` format `f` reads as ms from one path (TTFT, E2E latency or
/// decode), whether a metric it makes has a median no LLM request has: a TTFT or an E2E
/// latency under 5 ms (seconds read as ms), a TPOT under 0.25 ms; a TTFT over 10 minutes, an
/// E2E latency over an hour, a TPOT over 10 s (microseconds read as ms). Each with the field
/// named, once.
fn implausible_medians(r: Reader, summary: &mut Summary) -> Vec<(Field, String)> {
    let f = r.f;
    let checks: Vec<(Plausible, Field, String, Unit)> = PLAUSIBLE
        .iter()
        .filter_map(|&check| {
            let ((field, path), unit) = one_path(f, check.4, Unit::Ms)
                .map(|p| (p, Unit::Ms))
                .or_else(|| Some((one_path(f, check.4, Unit::S)?, Unit::S)))?;
            Some((check, field, path, unit))
        })
        .collect();
    if checks.is_empty() {
        return vec![];
    }
    let groups = summary.groups();
    let Some((_, all)) = groups.into_iter().next() else {
        return vec![];
    };
    let mut out: Vec<(Field, String)> = vec![];
    for ((metric, label, least, (most, long), _), field, path, read) in checks {
        let Some(p50) = all.metrics[metric.index()].digest.quantile(0.5) else {
            continue;
        };
        let (why, unit, name) = match read {
            Unit::Ms if let Some((_, short)) = least.filter(|&(l, _)| p50 < l) => {
                (short, "s", "seconds")
            }
            Unit::Ms if p50 > most => (long, "us", "microseconds"),
            Unit::S if p50 > most => (long, "ms", "ms"),
            _ => continue,
        };
        if out.iter().any(|(named, _)| *named == field) {
            continue;
        }
        let f = field.name();
        out.push((
            field,
            format!(
                "{}, the median {label} is {}, {why}; if the log writes {name}, {}",
                r.read(f, &path, read.name()),
                if p50 > most {
                    crate::output::compact::duration_text(p50)
                } else {
                    crate::summary::window::format_duration((p50 * 1e6).round() as i64)
                },
                r.fix(f, &path, unit)
            ),
        ));
    }
    out
}

/// For a duration the `--map` format `f` reads from one path as ms (as s) that is a thousandth
/// (a thousand times) of what the log's own instants give on some requests, that the log
/// likely writes it in seconds (in ms). Each with the field named.
fn unit_off(r: Reader, cov: &crate::classify::Coverage) -> Vec<(Field, String)> {
    use crate::metrics::instants::{END, FIRST_TOKEN, LOGGED_AT, SCHEDULED};
    let f = r.f;
    let fields: [(u8, &[Field]); 4] = [
        (SCHEDULED, &[Field::Queue]),
        (FIRST_TOKEN, &[Field::Ttft, Field::Prefill]),
        (END, &[Field::Decode]),
        (LOGGED_AT, &[Field::E2e]),
    ];
    let mut out = vec![];
    for (bit, candidates) in fields {
        let i = bit.trailing_zeros() as usize;
        let sides = [
            (
                cov.unit_off.small[i],
                Unit::Ms,
                "a 1000th of",
                "seconds",
                Unit::S,
            ),
            (cov.unit_off.large[i], Unit::S, "1000 times", "ms", Unit::Ms),
        ];
        for (n, unit, how, writes, fix) in sides {
            let Some((field, path)) = one_path(f, candidates, unit).filter(|_| n > 0) else {
                continue;
            };
            let name = field.name();
            out.push((
                field,
                format!(
                    "{}, it is {how} what the log's instants give on {n} of {} requests; if the \
                     log writes {writes}, {}",
                    r.read(name, &path, unit.name()),
                    cov.requests,
                    r.fix(name, &path, fix.name())
                ),
            ));
        }
    }
    out.extend(past_e2e(r, cov));
    out
}

/// For a TTFT or decode the `--map` format `f` reads from one path that came out ten times or
/// more the E2E latency the log's instants give (every metric of the request then null,
/// `out_of_order`), the unit a thousandth of the one given. Each with the field named.
fn past_e2e(r: Reader, cov: &crate::classify::Coverage) -> Vec<(Field, String)> {
    use crate::metrics::instants::{END, FIRST_TOKEN};
    let f = r.f;
    let mut out = vec![];
    for (bit, field) in [(FIRST_TOKEN, Field::Ttft), (END, Field::Decode)] {
        let n = cov.unit_off.past[bit.trailing_zeros() as usize];
        let found = [
            (Unit::S, Unit::Ms),
            (Unit::Ms, Unit::Us),
            (Unit::Us, Unit::Ns),
        ]
        .into_iter()
        .find_map(|(unit, fix)| Some((one_path(f, &[field], unit)?, unit, fix)));
        let Some(((field, path), unit, fix)) = found.filter(|_| n > 0) else {
            continue;
        };
        let name = field.name();
        out.push((
            field,
            format!(
                "{}, it is 10 times or more the E2E latency the log's instants give on {n} of \
                 {} requests, whose metrics are then null (out_of_order); if the log writes {}, \
                 {}",
                r.read(name, &path, unit.name()),
                cov.requests,
                match fix {
                    Unit::Us => "microseconds",
                    Unit::Ns => "nanoseconds",
                    _ => "ms",
                },
                r.fix(name, &path, fix.name())
            ),
        ));
    }
    out
}

/// How `config`'s formats were chosen: `--map`, `--format NAME` (one format, none learned from
/// the input), or else every format.
pub(crate) fn format_choice(config: &crate::cli::config::Config) -> FormatChoice {
    match config.formats.as_slice() {
        // `--map` (with `records=` too, which [`Mapped`] leaves to the report's counts).
        [f] if f.name == "custom" => FormatChoice::Mapped,
        [f] if config.infer == crate::cli::config::Infer::Off => {
            FormatChoice::Forced(f.name.clone())
        }
        _ => FormatChoice::Auto,
    }
}

/// What to say of an input that gave no record under `--root` `root`, from its first bytes
/// `head`: where the path stops in the first line that is a JSON object (a key it lacks, with
/// the keys there; a value that is not an object or a list; an empty list). `None` when the
/// path finds an object there (then the formats, not the path, are what to look at), or the
/// line is not JSON.
pub(crate) fn root_message(root: &[String], head: &[u8]) -> Option<String> {
    use serde_json::Value;
    let line = first_object_line(head)?;
    let start = line.iter().position(|&b| b == b'{')?;
    let whole: Value = serde_json::from_slice(&line[start..]).ok()?;
    let kind = |v: &Value| match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    };
    let shown = |upto: usize| {
        let mut s = String::new();
        for seg in &root[..upto] {
            if !s.is_empty() && !seg.starts_with('[') {
                s.push('.');
            }
            s.push_str(seg);
        }
        s
    };
    let whole_root = shown(root.len());
    let stop = |why: String| format!("--root {whole_root} stops in the first JSON line: {why}");
    let mut here: Vec<&Value> = vec![&whole];
    for (i, seg) in root.iter().enumerate() {
        let at = if i == 0 {
            "the line".to_owned()
        } else {
            format!("`{}`", shown(i))
        };
        let wild = seg == "*" || seg == "[*]";
        let index = crate::json::index_segment(seg);
        let mut next: Vec<&Value> = Vec::new();
        for v in &here {
            match (v, wild, index) {
                (Value::Array(a), true, _) => next.extend(a.iter()),
                (Value::Object(o), true, _) => next.extend(o.values()),
                (Value::Array(a), false, Some(-1)) => next.extend(a.last()),
                (Value::Array(a), false, Some(n)) => {
                    next.extend(usize::try_from(n).ok().and_then(|n| a.get(n)));
                }
                (Value::Object(o), false, _) => next.extend(o.get(seg.as_str())),
                _ => {}
            }
        }
        if next.is_empty() {
            let first = here[0];
            let why = match first {
                Value::Array(a) if a.is_empty() => format!("{at} is an empty list"),
                Value::Object(o) if o.is_empty() => format!("{at} is an empty object"),
                Value::Object(o) if !wild && index.is_none() => {
                    let keys: Vec<&str> = o.keys().take(10).map(String::as_str).collect();
                    let more = if o.len() > 10 { ", ..." } else { "" };
                    format!("{at} has no `{seg}`; its keys: {}{more}", keys.join(", "))
                }
                Value::Array(a) if index.is_some() => {
                    format!("{at} is a list of {} with no element {seg}", a.len())
                }
                Value::Array(_) => format!("{at} is a list, not an object (`[*]` walks a list)"),
                v => format!(
                    "{at} is {}, not {}",
                    kind(v),
                    if wild || index.is_some() {
                        "a list"
                    } else {
                        "an object"
                    }
                ),
            };
            return Some(stop(why));
        }
        here = next;
    }
    if here.iter().any(|v| v.is_object()) {
        return None;
    }
    let walk = if here[0].is_array() {
        " (`[*]` walks a list)"
    } else {
        ""
    };
    Some(stop(format!(
        "`{whole_root}` is {}, not an object{walk}",
        kind(here[0])
    )))
}

/// What to say of an input that gave no request, read without `--root`, when its first JSON
/// line holds a request of one of `formats` as the object at one of its members (a capture
/// that wraps each server response under `"response"`): `response holds a llamacpp request in
/// the first JSON line: try --root response`. `None` when no member does.
pub(crate) fn root_hint(formats: &[FormatSpec], head: &[u8]) -> Option<String> {
    use serde_json::Value;
    let line = first_object_line(head)?;
    let start = line.iter().position(|&b| b == b'{')?;
    let Value::Object(members) = serde_json::from_slice(&line[start..]).ok()? else {
        return None;
    };
    // The first 16 members that hold an object: each is tried with every format.
    let objects = members
        .iter()
        .filter(|(k, v)| v.is_object() && !k.is_empty());
    objects.take(16).find_map(|(key, _)| {
        let root = [key.clone()];
        let mut p = crate::classify::Processor::new(formats.to_vec(), &root, None, &[], 0.5);
        if !matches!(p.process(&line[start..]), crate::classify::Kind::Requests) {
            return None;
        }
        let format = &p.format_spec(p.requests().first()?.format).name;
        // As `--root` reads a path (a dot or bracket in a key escaped), quoted for the shell.
        let path = crate::format::path_str(std::slice::from_ref(key));
        let arg = if path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            path
        } else {
            format!("'{path}'")
        };
        let article = if format.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        Some(format!(
            "`{key}` holds {article} {format} request in the first JSON line: try --root {arg}"
        ))
    })
}

/// The first line of `head` that starts like a JSON object.
pub(crate) fn first_object_line(head: &[u8]) -> Option<&[u8]> {
    head.split(|&b| b == b'\n')
        .find(|l| l.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root_says(root: &str, line: &str) -> Option<String> {
        let head = format!("{line}\n{{\"cut");
        root_message(&crate::format::parse_path(root), head.as_bytes())
    }

    #[test]
    fn a_root_that_stops_in_the_first_line_is_named_where_it_stops() {
        for (root, line, why) in [
            (
                "requests[*]",
                r#"{"id":1,"data":{"requests":[]}}"#,
                "the line has no `requests`; its keys: data, id",
            ),
            (
                "data.requests[*]",
                r#"{"data":{"requests":[]}}"#,
                "`data.requests` is an empty list",
            ),
            (
                "data.requests.t0",
                r#"{"data":{"requests":[{"t0":1}]}}"#,
                "`data.requests` is a list, not an object (`[*]` walks a list)",
            ),
            (
                "data[*]",
                r#"{"data":"x"}"#,
                "`data` is a string, not a list",
            ),
            (
                "data[2]",
                r#"{"data":[{}, {}]}"#,
                "`data` is a list of 2 with no element [2]",
            ),
            (
                "data[*]",
                r#"{"data":[1, 2]}"#,
                "`data[*]` is a number, not an object",
            ),
        ] {
            assert_eq!(
                root_says(root, line).as_deref(),
                Some(format!("--root {root} stops in the first JSON line: {why}").as_str())
            );
        }
        // The path finds an object: the formats, not the path, are what failed.
        assert_eq!(root_says("data[*]", r#"{"data":[{"t":1}]}"#), None);
        assert_eq!(root_says("data[-1]", r#"{"data":[1, {"t":1}]}"#), None);
        assert_eq!(root_says("data", r#"not json"#), None);
    }

    fn mapped(maps: &[&str]) -> Mapped {
        let maps: Vec<String> = maps.iter().map(|s| (*s).to_owned()).collect();
        Mapped::of(&[crate::format::custom(&maps).unwrap()], &[]).unwrap()
    }

    #[test]
    fn names_the_missing_paths_and_the_close_ones() {
        let m = mapped(&["arrival=req.t0:epoch_s", "end=req.t1:epoch_s"]);
        let head = b"{\"a\":{\"t0\":1.5,\"t1\":2.0},\"m\":\"x\"}\n{\"a\":";
        assert_eq!(
            m.message("app.log", head).unwrap(),
            "app.log: no line was read as a request: a line is one when it has one of req.t0 \
             (--map arrival), req.t1 (--map end); the first JSON line has no req.t0 (--map \
             arrival), req.t1 (--map end); its paths close to them: a.t0, a.t1"
        );
    }

    #[test]
    fn lists_the_keys_when_nothing_is_close() {
        let m = mapped(&["first_token=timing.first_chunk_at:epoch_ms"]);
        let msg = m
            .message("-", b"starting up\n{\"ts\":1,\"event\":\"done\"}\n")
            .unwrap();
        assert!(msg.ends_with("; its keys: event, ts"), "{msg}");
    }

    #[test]
    fn says_nothing_when_the_marker_is_there_or_no_line_is_json() {
        let m = mapped(&["arrival=a.t0:epoch_s", "end=a.t9:epoch_s"]);
        assert_eq!(m.message("f", b"{\"a\":{\"t0\":1.5}}\n"), None);
        assert_eq!(m.message("f", b"plain text\n"), None);
        assert_eq!(m.message("f", b"{\"a\":"), None);
    }

    #[test]
    fn names_a_path_no_request_line_had_with_the_close_ones() {
        let m = mapped(&[
            "arrival=req.t0:epoch_s",
            "end=req.t9:epoch_s",
            "output_tokens=n",
        ]);
        let mut sample = KeySample::new(true);
        sample.add_line(b"{\"req\":{\"t0\":1.5,\"t2\":2.0},\"n\":3}", &[]);
        sample.add_line(b"{\"req\":{\"t0\":1.6,\"t2\":2.1}}", &[]);
        assert_eq!(
            m.unseen(&sample, 1000),
            vec![
                "--map end=req.t9: not in any of the 2 request lines sampled, so what it gives is \
                 null (not_logged); paths close to it: req.t0, req.t2"
                    .to_owned()
            ]
        );
    }

    #[test]
    fn only_for_the_map_format() {
        assert!(Mapped::of(&crate::format::builtins(), &[]).is_none());
    }
}
