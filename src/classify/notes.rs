//! What a summary's error reasons and slowest requests need of a request beyond its metrics:
//! why it failed (a failed request only) and, for a request that may be among the slowest,
//! its id. Kept only for those requests, so a request that is neither costs
//! a comparison.

use crate::classify::Request;
use crate::format::Formats;
use crate::json::{Slots, raw_str};
use crate::metrics::Outcome;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};
use std::sync::Arc;

/// The distinct reasons a processor keeps one copy of; later ones are copied per request.
const INTERNED: usize = 1024;

/// How many of the slowest requests a summary lists.
pub(crate) const SLOWEST: usize = 5;

/// A request's note: why it failed, and its id when it may be among the slowest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Note {
    /// Why it failed, normalized ([`crate::format::reason`]); `None` when it did not fail or
    /// its log does not say.
    pub reason: Option<Arc<str>>,
    /// Its id, where its format logs one (read only for a candidate slowest request).
    pub id: Option<Box<str>>,
}

/// Set in a [`slow_key`] ranked by E2E latency: every request with an E2E ranks above every
/// one with a TTFT only (a TTFT is a part of an E2E, not one to compare with).
pub(crate) const E2E_TIER: u64 = 1 << 63;

/// The slowest time of a request, for ranking: [`E2E_TIER`] plus its E2E latency (ns), else
/// its TTFT (ns). [`slow_ns`] gives the time back.
pub(crate) fn slow_key(r: &Request) -> Option<u64> {
    let ns = |v: f64| (v.is_finite() && v >= 0.0).then(|| (v as u64).min(E2E_TIER - 1));
    match r.metrics.e2e {
        Ok(v) => ns(v).map(|n| E2E_TIER | n),
        Err(_) => r.metrics.ttft.ok().and_then(ns),
    }
}

/// The time (ns) a [`slow_key`] ranks by.
pub(crate) fn slow_ns(key: u64) -> u64 {
    key & !E2E_TIER
}

/// The notes of the requests of the line last processed, and the filter that picks the
/// candidates for the slowest: the [`SLOWEST`] largest keys this processor has seen. A request
/// below them all cannot be among the slowest of any summary it goes to (every summary's
/// slowest are among the requests this processor, or another one, saw).
#[derive(Debug, Clone, Default)]
pub(crate) struct Notes {
    /// (index of the request in the line's requests, its note).
    list: Vec<(usize, Note)>,
    slow: BinaryHeap<Reverse<u64>>,
    /// Pick candidates for the slowest (a summary; enrich needs none).
    slowest: bool,
    /// The reasons seen, one copy each (a failed request costs no allocation once its reason
    /// was seen).
    reasons: HashSet<Arc<str>>,
    scratch: String,
    /// The keys of the first object a failed request's reason path held.
    object_keys: Vec<String>,
    /// Every request's id is noted ([`Notes::want_every_id`]).
    every: bool,
}

impl Notes {
    pub(crate) fn clear(&mut self) {
        self.list.clear();
    }

    pub(crate) fn want_slowest(&mut self, yes: bool) {
        self.slowest = yes;
    }

    /// Notes every request's id, not only those that may be among the slowest read so far: a
    /// `--window`'s slowest are of its own requests, which the run's slowest may not hold.
    pub(crate) fn want_every_id(&mut self) {
        self.slowest = true;
        self.every = true;
    }

    /// The shared copy of the reason in `scratch`.
    fn interned(&mut self) -> Arc<str> {
        if let Some(r) = self.reasons.get(self.scratch.as_str()) {
            return r.clone();
        }
        let r: Arc<str> = self.scratch.as_str().into();
        if self.reasons.len() < INTERNED {
            self.reasons.insert(r.clone());
        }
        r
    }

    /// True when a request of key `key` enters the slowest seen so far. The keys kept are
    /// distinct: a request read twice (a duplicate record, dropped later by the dedupe) must
    /// not push out a key the summary's slowest keep, or that request's id would not be read.
    fn enters(&mut self, key: u64) -> bool {
        if self.every {
            return true;
        }
        let full = self.slow.len() == SLOWEST;
        if full && self.slow.peek().is_some_and(|&Reverse(min)| key < min) {
            return false;
        }
        if self.slow.iter().any(|&Reverse(k)| k == key) {
            return true;
        }
        if full {
            self.slow.pop();
        }
        self.slow.push(Reverse(key));
        true
    }

    /// Notes request `i` (`r`) of format `f`, read from `line` with `slots`, when it failed
    /// or may be among the slowest. True when it failed and no reason path held a reason but
    /// one held an object ([`Request::reason_object`]).
    pub(crate) fn note(
        &mut self,
        (formats, f): (&Formats, usize),
        (line, slots): (&[u8], &Slots),
        (i, r): (usize, &Request),
    ) -> bool {
        let failed = r.metrics.outcome == Outcome::Error && formats.has_reason(f);
        let reason =
            (failed && formats.reason(f, line, slots, &mut self.scratch)).then(|| self.interned());
        let object = failed && reason.is_none() && self.reason_object(formats, f, line, slots);
        let slow = self.slowest && slow_key(r).is_some_and(|k| self.enters(k));
        if reason.is_none() && !slow {
            return object;
        }
        let mut note = Note {
            reason,
            ..Note::default()
        };
        if slow {
            note.id = formats.id(f, line, slots).map(|raw| {
                raw_str(raw)
                    .map_or_else(|| raw.to_owned(), |s| s.into_owned())
                    .into_boxed_str()
            });
        }
        self.list.push((i, note));
        object
    }

    /// Whether a reason path of format `f` holds an object on `line`; the first such object's
    /// keys are kept ([`Notes::object_keys`]).
    #[cold]
    fn reason_object(&mut self, formats: &Formats, f: usize, line: &[u8], slots: &Slots) -> bool {
        let Some(raw) = formats.reason_object(f, line, slots) else {
            return false;
        };
        if self.object_keys.is_empty()
            && let Ok(serde_json::Value::Object(o)) = serde_json::from_str(raw)
        {
            self.object_keys = o.keys().cloned().collect();
        }
        true
    }

    /// The keys of the first object a failed request's reason path held (empty when none).
    pub(crate) fn object_keys(&self) -> &Vec<String> {
        &self.object_keys
    }

    /// The note of request `i` of the line last processed, if it has one.
    pub(crate) fn get(&self, i: usize) -> Option<&Note> {
        self.list.iter().find(|(j, _)| *j == i).map(|(_, n)| n)
    }
}
