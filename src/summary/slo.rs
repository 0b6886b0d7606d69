//! Service-level objectives: `--slo 'METRIC:pQ<=VALUE[@KEY=VALUE,...]'` (a percentile of one
//! group held under a bound) and `--goodput ttft=1s,tpot=50ms` (per-request targets whose
//! every one a request must meet to count as good).
//!
//! Owns the syntax of both flags, the per-request goodput verdict, and the evaluation of an
//! SLO against a finished [`Summary`]. Writes nothing; the caller prints the verdicts.

use crate::metrics::{CacheClass, Metric, Metrics, NullReason, Outcome};
use crate::summary::window::{format_duration, parse_flag_duration};
use crate::summary::{GroupKey, OTHER, Summary, group_label, quantile_name};

/// One `--slo`: the `quantile` of `metric` in the group `group` must be at most `bound`.
#[derive(Debug, Clone, PartialEq)]
pub struct Slo {
    /// The SLO as written on the command line.
    pub text: String,
    /// The metric.
    pub metric: Metric,
    /// Quantile as a fraction (0.99 for `p99`).
    pub quantile: f64,
    /// Upper bound, in the metric's output unit (ms, or tokens).
    pub bound: f64,
    /// The group: `(dimension, value)` pairs, `None` for `unknown`; empty for all requests.
    pub group: Vec<(String, Option<String>)>,
}

/// Parses `METRIC:pQ<=VALUE[@KEY=VALUE,...]`, e.g. `ttft:p99<=800ms@cache=miss`. `VALUE` is
/// a duration with a unit for a duration metric (`800ms`, `1.5s`), a number for a token count.
///
/// ```text
/// let s = tokentime::slo::parse_slo("ttft:p99<=800ms@cache=miss").unwrap();
/// assert_eq!((s.quantile, s.bound), (0.99, 800.0));
/// assert_eq!(s.group, vec![("cache".to_string(), Some("miss".to_string()))]);
/// ```
///
/// # Errors
/// A message naming what is wrong.
pub(crate) fn parse_slo(text: &str) -> Result<Slo, String> {
    let err = |why: &str| format!("--slo {text:?}: {why} (want METRIC:pQ<=VALUE[@KEY=VALUE])");
    let (body, group) = match text.split_once('@') {
        Some((b, g)) => (b, parse_group(g).map_err(|e| err(&e))?),
        None => (text, vec![]),
    };
    let (metric, rest) = body.split_once(':').ok_or_else(|| err("no ':'"))?;
    let metric = Metric::from_name(metric).ok_or_else(|| {
        err(&format!(
            "unknown metric {} (known: {})",
            metric.trim(),
            Metric::known_names()
        ))
    })?;
    let (q, bound) = rest.split_once("<=").ok_or_else(|| err("no '<='"))?;
    let pct = gate_percentile(q).map_err(|e| err(&e))?;
    let bound = parse_bound(metric, bound).map_err(|e| err(&e))?;
    Ok(Slo {
        text: text.to_owned(),
        metric,
        quantile: pct / 100.0,
        bound,
        group,
    })
}

/// The percentile of a gate (`--slo`, `diff --fail-if`): `pQ` with Q from 0 to 100. A Q
/// between 0 and 1 is refused: `p0.99` would hold the 0.99th percentile, next to the fastest
/// request, where a bound is met by almost any log (the 99th percentile, `p99`, was meant).
pub(crate) fn gate_percentile(q: &str) -> Result<f64, String> {
    let pct: f64 = q
        .trim()
        .strip_prefix('p')
        .and_then(|p| p.parse().ok())
        .filter(|p| (0.0..=100.0).contains(p))
        .ok_or("the quantile must be p0..p100, e.g. p99")?;
    if pct > 0.0 && pct < 1.0 {
        // Rounded: 0.07 * 100 is 7.000000000000001 in f64.
        let meant = crate::number::round3(pct * 100.0);
        return Err(format!(
            "{} would be the {pct}th percentile, next to the fastest request: write p{meant} \
             for the {meant}th (the percentile, 0 to 100, not a fraction)",
            q.trim(),
        ));
    }
    Ok(pct)
}

/// `KEY=VALUE,...`: a piece with no `=` goes on the value before it, comma and all, so that a
/// value with a comma in it (a model named `a,b`) can be named: `model=a,b`.
pub(crate) fn parse_group(g: &str) -> Result<Vec<(String, Option<String>)>, String> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for piece in g.split(',') {
        match (piece.split_once('='), pairs.last_mut()) {
            (Some((k, v)), _) => pairs.push((k.trim().to_owned(), v.to_owned())),
            (None, Some((_, v))) => {
                v.push(',');
                v.push_str(piece);
            }
            (None, None) => return Err(format!("group {piece:?} is not KEY=VALUE")),
        }
    }
    let group: Vec<(String, Option<String>)> = pairs
        .into_iter()
        .map(|(k, v)| {
            let v = (v != "unknown").then_some(v);
            (k, v)
        })
        .collect();
    // `cache` is tokentime's own dimension (a `--by cache` is renamed `by_cache`): a value
    // that is no class would name a group that never exists, an SLO broken for want of values.
    for (k, v) in &group {
        if k == "cache"
            && let Some(v) = v
            && !CACHE_CLASSES.iter().any(|c| c.as_str() == v)
            // The groups past the cap, when there are `--by` keys too.
            && !(v == OTHER && group.len() > 1)
        {
            let names: Vec<&str> = CACHE_CLASSES.iter().map(|c| c.as_str()).collect();
            return Err(format!(
                "cache {v:?} is no cache class: {} or unknown",
                names.join(", ")
            ));
        }
    }
    Ok(group)
}

/// The values of the `cache` dimension, but `unknown`.
const CACHE_CLASSES: [CacheClass; 4] = [
    CacheClass::Hit,
    CacheClass::Partial,
    CacheClass::Miss,
    CacheClass::Response,
];

fn parse_bound(metric: Metric, s: &str) -> Result<f64, String> {
    if metric.is_duration() {
        Ok(parse_flag_duration(s)? as f64 / 1e6)
    } else {
        s.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("{s:?} is not a token count"))
    }
}

/// How one SLO came out.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Verdict {
    /// The SLO.
    pub slo: Slo,
    /// The quantile's value (ms or tokens), `None` when the group has no values.
    pub value: Option<f64>,
    /// Values the quantile was taken over.
    pub count: u64,
    /// True when the value is at most the bound. An SLO without values is not met: nothing
    /// shows that it holds.
    pub met: bool,
    /// True when the value is exact, false when it is a t-digest estimate (past
    /// `--exact-limit` values).
    pub exact: bool,
    /// Why the SLO is not judged, when it is not: no request was in its group (a value
    /// mistyped, or one the log does not have; with the values its keys had, `model values: a,
    /// b`), or the log shows its metric for none of the group's requests (not logged or not
    /// streamed: a queue time from a gateway, a TTFT of non-streamed calls).
    pub unjudged: Option<String>,
}

/// How the SLOs of a run came out, worst last: the exit status follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Status {
    /// Every SLO held (or there were none).
    Held,
    /// An SLO was broken (exit status 3).
    Broken,
    /// An SLO's group matched no request, or its metric is not in the log: it could not be
    /// judged (exit status 2).
    Unjudged,
}

/// The worst of the verdicts.
pub(crate) fn status(verdicts: &[Verdict]) -> Status {
    verdicts
        .iter()
        .map(|v| match (&v.unjudged, v.met) {
            (Some(_), _) => Status::Unjudged,
            (None, false) => Status::Broken,
            (None, true) => Status::Held,
        })
        .max()
        .unwrap_or(Status::Held)
}

impl Verdict {
    /// One line for stderr: `SLO ttft:p99<=800ms met: p99 612.3 ms <= 800 ms (1040 values)`.
    pub(crate) fn line(&self) -> String {
        let unit = if self.slo.metric.is_duration() {
            " ms"
        } else {
            ""
        };
        let q = quantile_name(self.slo.quantile);
        let bound = crate::number::round3(self.slo.bound);
        if let Some(why) = &self.unjudged {
            return format!("SLO {} not judged: {why}", self.slo.text);
        }
        match self.value {
            None => format!(
                "SLO {} BROKEN: no {} values in group {}",
                self.slo.text,
                self.slo.metric.json_name(),
                group_label(&self.slo.group, "all requests")
            ),
            Some(v) => format!(
                "SLO {} {}: {q} {}{}{unit} {} {bound}{unit}{} ({} values{})",
                self.slo.text,
                if self.met { "met" } else { "BROKEN" },
                if self.exact { "" } else { "~" },
                crate::number::fixed3(v),
                if self.met { "<=" } else { ">" },
                if self.met {
                    String::new()
                } else {
                    let over = crate::number::round3(v) - bound;
                    // As many digits as tell it: +14283%, +43.8%, +0.065%.
                    let p = over / bound * 100.0;
                    let pct = if bound <= 0.0 {
                        String::new()
                    } else if p >= 100.0 {
                        format!(", +{p:.0}%")
                    } else if p >= 1.0 {
                        format!(", +{p:.1}%")
                    } else {
                        format!(", +{}%", crate::number::fixed3(p))
                    };
                    format!(", over by {}{unit}{pct}", crate::number::fixed3(over))
                },
                self.count,
                if self.exact {
                    String::new()
                } else {
                    format!(
                        "; ~: a t-digest estimate, exact with --exact-limit {}",
                        self.count
                    )
                }
            ),
        }
    }
}

/// Evaluates every SLO on a finished summary.
pub(crate) fn evaluate(slos: &[Slo], summary: &mut Summary) -> Vec<Verdict> {
    if slos.is_empty() {
        // The groups (the overall one merged from the others) are not made for nothing.
        return Vec::new();
    }
    let mut groups = summary.groups();
    slos.iter()
        .map(|slo| {
            let found = groups.iter_mut().find(|(k, _)| same_group(k, &slo.group));
            let label = group_label(&slo.group, "all requests");
            let missing = found.is_none() && !slo.group.is_empty();
            let (value, count, exact, mut unjudged) = match found {
                Some((_, g)) => {
                    let stats = &mut g.metrics[slo.metric.index()];
                    // The log shows the metric for none of the group's requests: not logged, or
                    // not streamed (no first token seen), for every request that could have a
                    // value (one that failed, was cancelled, answered from a response cache or
                    // gave one token has none anyway).
                    let not_logged =
                        stats.nulls.iter().any(|(r, _)| {
                            matches!(r, NullReason::NotLogged | NullReason::NotStreamed)
                        }) && stats.nulls.iter().all(|(r, _)| {
                            matches!(
                                r,
                                NullReason::NotLogged
                                    | NullReason::NotStreamed
                                    | NullReason::OneToken
                                    | NullReason::Error
                                    | NullReason::Cancelled
                                    | NullReason::ResponseCache
                            )
                        });
                    let unjudged = (stats.digest.count() == 0 && not_logged).then(|| {
                        let nulls: Vec<String> = stats
                            .nulls
                            .iter()
                            .map(|(r, n)| format!("{} {n}", r.as_str()))
                            .collect();
                        format!(
                            "the log shows {} for no request in group {label} ({})",
                            slo.metric.json_name(),
                            nulls.join(", ")
                        )
                    });
                    let d = &mut stats.digest;
                    (d.quantile(slo.quantile), d.count(), d.is_exact(), unjudged)
                }
                // The all-requests group always is: no requests is no values, not no group.
                None => (None, 0, true, None),
            };
            if missing {
                let keys: Vec<&GroupKey> = groups.iter().map(|(k, _)| k).collect();
                unjudged = Some(format!(
                    "no request was in group {label} ({})",
                    values_seen(&slo.group, &keys)
                ));
            }
            Verdict {
                slo: slo.clone(),
                value,
                count,
                // Compared as printed, to the microsecond (a bound copied from a report's
                // 143.80068917976584 is met by its own p99, printed 143.801).
                met: value
                    .is_some_and(|v| crate::number::round3(v) <= crate::number::round3(slo.bound)),
                exact,
                unjudged,
            }
        })
        .collect()
}

/// The values each key of `group` had in the groups built (`model values: a, b; cache
/// values: hit, miss`), at most ten a key.
fn values_seen(group: &[(String, Option<String>)], keys: &[&GroupKey]) -> String {
    const MOST: usize = 10;
    group
        .iter()
        .map(|(name, _)| {
            let mut seen: Vec<&str> = keys
                .iter()
                .flat_map(|k| k.iter())
                .filter(|(n, _)| n == name)
                .map(|(_, v)| v.as_deref().unwrap_or("unknown"))
                .collect();
            seen.sort_unstable();
            seen.dedup();
            let more = if seen.len() > MOST { ", ..." } else { "" };
            seen.truncate(MOST);
            if seen.is_empty() {
                // Not a --by key of the run (or of the digests merged).
                let mut names: Vec<&str> = keys
                    .iter()
                    .flat_map(|k| k.iter())
                    .map(|(n, _)| n.as_str())
                    .collect();
                names.sort_unstable();
                names.dedup();
                // The cache is a key of every run: with no request, no group has it.
                if names.is_empty() || name == "cache" {
                    format!("no {name} values")
                } else {
                    format!(
                        "no group is keyed by {name}: the groups' keys are {}",
                        names.join(", ")
                    )
                }
            } else {
                let seen: Vec<_> = seen.iter().map(|v| crate::input::shown_value(v)).collect();
                format!("{name} values: {}{more}", seen.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn same_group(key: &GroupKey, want: &[(String, Option<String>)]) -> bool {
    key.len() == want.len() && want.iter().all(|w| key.contains(w))
}

/// The per-request targets of `--goodput`: `(metric, bound in ms)`, in metric order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Targets(pub(crate) Vec<(Metric, f64)>);

/// Parses `ttft=1s,tpot=50ms` (duration metrics only), or vLLM's own `--goodput` spelling,
/// `ttft:300 tpot:50 e2el:2000` (milliseconds; `e2el` is E2E latency).
///
/// ```text
/// let t = tokentime::slo::parse_goodput("ttft=1s,tpot=50ms").unwrap();
/// assert_eq!(t.text(), "ttft=1s,tpot=50ms");
/// ```
///
/// # Errors
/// A message for an unknown or non-duration metric, or a bad duration.
pub(crate) fn parse_goodput(s: &str) -> Result<Targets, String> {
    let mut out = Vec::new();
    for part in s.split([',', ' ']).filter(|p| !p.is_empty()) {
        let err = |why: &str| format!("--goodput {s:?}: {part:?}: {why} (want ttft=1s,tpot=50ms)");
        let (k, v, vllm) = match (part.split_once('='), part.split_once(':')) {
            (Some((k, v)), _) => (k, v, false),
            (None, Some((k, v))) => (k, v, true),
            (None, None) => return Err(err("not METRIC=DURATION")),
        };
        let m = Metric::from_name(if k == "e2el" { "e2e" } else { k })
            .filter(|m| m.is_duration())
            .ok_or_else(|| err("not a duration metric"))?;
        if m == Metric::Itl {
            return Err(err(
                "ITL is every gap between two tokens, not one value a request meets or misses: \
                 bound the request's mean with tpot=..., or the gaps' percentile with \
                 --slo 'itl:p99<=...'",
            ));
        }
        // vLLM's `METRIC:VALUE` is in ms.
        let ns = match v.trim().parse::<f64>() {
            Ok(ms) if vllm && ms.is_finite() && ms >= 0.0 => (ms * 1e6).round() as i64,
            _ => parse_flag_duration(v).map_err(|e| err(&e))?,
        };
        if out.iter().any(|&(o, _)| o == m) {
            return Err(err(&format!(
                "a second target for {}: a metric takes one",
                m.short_name()
            )));
        }
        out.push((m, ns as f64 / 1e6));
    }
    out.sort_by_key(|&(m, _)| m);
    Ok(Targets(out))
}

impl Targets {
    /// The flag's text back (`ttft=1s,tpot=50ms`).
    pub fn text(&self) -> String {
        self.0
            .iter()
            .map(|&(m, ms)| {
                let name = m.short_name();
                format!("{name}={}", format_duration((ms * 1e6).round() as i64))
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Whether a request met every target: `Some(true)` good, `Some(false)` a target missed
    /// (or the request failed), `None` when a target's metric is unknown for it (not logged,
    /// not streamed). A TPOT target holds for a one-token answer: it had no decode to be late.
    pub fn judge(&self, m: &Metrics) -> Option<bool> {
        if m.outcome == Outcome::Error {
            return Some(false);
        }
        let mut unknown = false;
        for &(metric, bound_ms) in &self.0 {
            match metric.request_value(m) {
                Ok(ms) if ms <= bound_ms => {}
                Ok(_) => return Some(false),
                Err(NullReason::OneToken) if metric == Metric::Tpot => {}
                Err(_) => unknown = true,
            }
        }
        if unknown { None } else { Some(true) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slo_syntax() {
        let s = parse_slo("tpot_ms:p99.9<=1.5s").unwrap();
        assert_eq!(s.metric, Metric::Tpot);
        assert!((s.quantile - 0.999).abs() < 1e-12);
        assert_eq!(s.bound, 1500.0);
        let s = parse_slo("output_tokens:p50<=200@model=x,cache=unknown").unwrap();
        assert_eq!(s.bound, 200.0);
        assert_eq!(
            s.group,
            vec![("model".into(), Some("x".into())), ("cache".into(), None)]
        );
        // A piece without `=` is the value before it going on: a model named `a,b`.
        let s = parse_slo("ttft:p99<=1s@model=a,b,cache=hit").unwrap();
        assert_eq!(
            s.group,
            vec![
                ("model".into(), Some("a,b".into())),
                ("cache".into(), Some("hit".into()))
            ]
        );
        for bad in [
            "ttft<=1s",
            "ttft:p99<=800",
            "ttft:q99<=1s",
            "nope:p99<=1s",
            "ttft:p99<=1s@x",
            "ttft:p0.99<=1s",
        ] {
            assert!(parse_slo(bad).is_err(), "{bad}");
        }
        let e = super::gate_percentile("p0.07").unwrap_err();
        assert!(e.contains("write p7 for the 7th"), "{e}");
    }

    #[test]
    fn goodput_verdicts() {
        let t = parse_goodput("ttft=1s,tpot=50ms").unwrap();
        assert_eq!(t.text(), "ttft=1s,tpot=50ms");
        let base = crate::metrics::derive(&crate::metrics::Timeline::default(), 0.5);
        let ok = Metrics {
            ttft: Ok(900e6),
            tpot: Ok(50e6),
            outcome: Outcome::Ok,
            ..base
        };
        assert_eq!(t.judge(&ok), Some(true));
        let slow = Metrics {
            tpot: Ok(50.001e6),
            ..ok
        };
        assert_eq!(t.judge(&slow), Some(false));
        let one = Metrics {
            tpot: Err(NullReason::OneToken),
            ..ok
        };
        assert_eq!(t.judge(&one), Some(true));
        let unknown = Metrics {
            ttft: Err(NullReason::NotStreamed),
            ..ok
        };
        assert_eq!(t.judge(&unknown), None);
        assert!(parse_goodput("input_tokens=5s").is_err());
        // One target a metric: a second one is refused, not taken in place of the first.
        assert_eq!(
            parse_goodput("ttft=1s,ttft=2s").unwrap_err(),
            "--goodput \"ttft=1s,ttft=2s\": \"ttft=2s\": a second target for ttft: a metric \
             takes one (want ttft=1s,tpot=50ms)"
        );
        assert!(
            parse_goodput("ttft=1s,itl=30ms")
                .unwrap_err()
                .contains("ITL is every gap between two tokens")
        );
        assert!(parse_goodput("e2e=1s e2el:900").is_err());
    }
}

/// The examples in this file's docs, run.
#[cfg(test)]
mod doc_examples {
    use super::*;

    #[test]
    fn example_of_parse_slo() {
        let s = parse_slo("ttft:p99<=800ms@cache=miss").unwrap();
        assert_eq!((s.quantile, s.bound), (0.99, 800.0));
        assert_eq!(
            s.group,
            vec![("cache".to_string(), Some("miss".to_string()))]
        );
    }

    #[test]
    fn example_of_parse_goodput() {
        let t = parse_goodput("ttft=1s,tpot=50ms").unwrap();
        assert_eq!(t.text(), "ttft=1s,tpot=50ms");
    }
}
