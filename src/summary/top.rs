//! What an SRE looks for first beside the quantiles: why requests failed (each reason's count)
//! and the slowest requests (their ids, where they are). Kept for all requests (the overall
//! group), bounded: at most [`MAX_REASONS`] distinct reasons (the others counted together)
//! and the [`SLOWEST`] slowest requests by E2E latency, else TTFT.
//!
//! A request costs a comparison with the slowest kept and, when it failed, a count; its id is
//! read and kept only when it may enter the slowest
//! ([`crate::classify::notes`]).

use crate::classify::Request;
pub(crate) use crate::classify::notes::SLOWEST;
use crate::classify::notes::{Note, slow_key};
use crate::metrics::Outcome;
use crate::number::round3;
use serde_json::{Value as Json, json};
use std::collections::HashMap;

/// The most distinct reasons counted one by one; the later ones count as [`OTHER_REASONS`].
pub(crate) const MAX_REASONS: usize = 64;
/// The reason of the failures past [`MAX_REASONS`] distinct ones.
pub(crate) const OTHER_REASONS: &str = "(other reasons)";
/// The reason of a failure whose log gives none.
pub(crate) const NOT_LOGGED: &str = "(not logged)";

/// One of the slowest requests.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Slow {
    /// What it is ranked by ([`slow_key`]): its E2E latency, else (ranked below every E2E)
    /// its TTFT.
    pub key_ns: u64,
    /// Its E2E latency (ns), where known.
    pub e2e_ns: Option<f64>,
    /// Its TTFT (ns), where known.
    pub ttft_ns: Option<f64>,
    /// `ok`, `error` or `cancelled`.
    pub outcome: &'static str,
    /// Its id, where its format logs one.
    pub id: Option<String>,
}

impl Slow {
    /// Slowest first; among equals, by id, then by E2E latency and TTFT (the same order
    /// whatever the threads).
    fn order(&self, other: &Slow) -> std::cmp::Ordering {
        let ns = |v: Option<f64>| v.map(f64::to_bits);
        other
            .key_ns
            .cmp(&self.key_ns)
            .then_with(|| self.id.cmp(&other.id))
            .then_with(|| ns(self.e2e_ns).cmp(&ns(other.e2e_ns)))
            .then_with(|| ns(self.ttft_ns).cmp(&ns(other.ttft_ns)))
            .then_with(|| self.outcome.cmp(other.outcome))
    }
}

/// The failures' reasons and the slowest requests of a summary.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Top {
    reasons: HashMap<Box<str>, u64>,
    /// Failures whose reason came after [`MAX_REASONS`] distinct ones.
    other: u64,
    /// At most [`SLOWEST`], slowest first.
    slowest: Vec<Slow>,
}

impl Top {
    /// Adds request `r`, with its note (why it failed; its id).
    pub(crate) fn add(&mut self, r: &Request, note: Option<&Note>) {
        if r.metrics.outcome == Outcome::Error {
            let reason = note.and_then(|n| n.reason.as_deref()).unwrap_or(NOT_LOGGED);
            self.count(reason, 1);
        }
        let Some(key) = slow_key(r) else {
            return;
        };
        if self.slowest.len() == SLOWEST && self.slowest.last().is_some_and(|s| key < s.key_ns) {
            return;
        }
        let m = &r.metrics;
        self.enter(Slow {
            key_ns: key,
            e2e_ns: m.e2e.ok(),
            ttft_ns: m.ttft.ok(),
            outcome: m.outcome.as_str(),
            id: note.and_then(|n| n.id.as_deref()).map(str::to_owned),
        });
    }

    fn count(&mut self, reason: &str, n: u64) {
        if reason == OTHER_REASONS {
            self.other += n;
        } else if let Some(c) = self.reasons.get_mut(reason) {
            *c += n;
        } else if self.reasons.len() < MAX_REASONS {
            self.reasons.insert(reason.into(), n);
        } else {
            self.other += n;
        }
    }

    fn enter(&mut self, s: Slow) {
        let at = self
            .slowest
            .partition_point(|x| x.order(&s) != std::cmp::Ordering::Greater);
        if at < SLOWEST {
            self.slowest.insert(at, s);
            self.slowest.truncate(SLOWEST);
        }
    }

    /// Adds `other`'s counts and slowest requests to this one's.
    pub(crate) fn merge(&mut self, other: &Top) {
        let mut theirs: Vec<(&str, u64)> = other.reasons.iter().map(|(r, &n)| (&**r, n)).collect();
        // Most frequent first, so that the bound keeps them.
        theirs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        for (r, n) in theirs {
            self.count(r, n);
        }
        self.other += other.other;
        for s in &other.slowest {
            self.enter(s.clone());
        }
    }

    /// The failures' reasons, most frequent first (by name among equals), the reasons past
    /// the bound last.
    pub(crate) fn reasons(&self) -> Vec<(&str, u64)> {
        let mut v: Vec<(&str, u64)> = self.reasons.iter().map(|(r, &n)| (&**r, n)).collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        if self.other > 0 {
            v.push((OTHER_REASONS, self.other));
        }
        v
    }

    /// The slowest requests, slowest first.
    pub(crate) fn slowest(&self) -> &[Slow] {
        &self.slowest
    }

    /// The failures' reasons as the summary's JSON writes them: `[{"reason", "count"}]`.
    pub(crate) fn reasons_json(&self) -> Json {
        self.reasons()
            .into_iter()
            .map(|(r, n)| json!({"reason": r, "count": n}))
            .collect()
    }

    /// The slowest requests as the summary's JSON writes them.
    pub(crate) fn slowest_json(&self) -> Json {
        let ms = |ns: Option<f64>| ns.map_or(Json::Null, |v| json!(round3(v / 1e6)));
        self.slowest
            .iter()
            .map(|s| {
                json!({
                    "id": s.id,
                    "e2e_ms": ms(s.e2e_ns),
                    "ttft_ms": ms(s.ttft_ns),
                    "outcome": s.outcome,
                })
            })
            .collect()
    }

    /// As a digest file saves it (`"top"`): `{"reasons": {REASON: COUNT}, "slowest": [...]}`,
    /// durations in ns.
    pub(crate) fn save_json(&self) -> Json {
        let mut reasons = serde_json::Map::new();
        for (r, n) in self.reasons() {
            reasons.insert(r.to_owned(), json!(n));
        }
        let slowest: Vec<Json> = self
            .slowest
            .iter()
            .map(|s| {
                json!({
                    "key_ns": s.key_ns, "e2e_ns": s.e2e_ns, "ttft_ns": s.ttft_ns,
                    "outcome": s.outcome, "id": s.id,
                })
            })
            .collect();
        json!({"reasons": reasons, "slowest": slowest})
    }

    /// Reads what [`Top::save_json`] wrote; `null` (a file from before it was saved) is an
    /// empty one.
    ///
    /// # Errors
    /// A message naming what is wrong.
    pub(crate) fn load_json(j: &Json) -> Result<Top, String> {
        let mut top = Top::default();
        if j.is_null() {
            return Ok(top);
        }
        let reasons = j["reasons"]
            .as_object()
            .ok_or("\"top.reasons\" must be an object")?;
        for (r, n) in reasons {
            let n = n.as_u64().ok_or("\"top.reasons\" holds counts")?;
            top.count(r, n);
        }
        for s in j["slowest"]
            .as_array()
            .ok_or("\"top.slowest\" must be an array")?
        {
            let text = |k: &str| s[k].as_str().map(str::to_owned);
            let outcome = match s["outcome"].as_str() {
                Some("error") => Outcome::Error,
                Some("cancelled") => Outcome::Cancelled,
                _ => Outcome::Ok,
            };
            top.enter(Slow {
                key_ns: s["key_ns"]
                    .as_u64()
                    .ok_or("\"top.slowest\": key_ns must be a count")?,
                e2e_ns: s["e2e_ns"].as_f64(),
                ttft_ns: s["ttft_ns"].as_f64(),
                outcome: outcome.as_str(),
                id: text("id"),
            });
        }
        Ok(top)
    }
}

impl crate::summary::Summary {
    /// Adds request `r` (with its note: why it failed, its id) to the failures' reasons
    /// and the slowest requests.
    pub fn add_note(&mut self, r: &Request, note: Option<&Note>) {
        self.top.add(r, note);
    }

    /// The failures' reasons and the slowest requests.
    pub(crate) fn top(&self) -> &Top {
        &self.top
    }

    /// Sets the failures' reasons and the slowest requests (read from a digest file).
    pub(crate) fn set_top(&mut self, top: Top) {
        self.top = top;
    }
}
