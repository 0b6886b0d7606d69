//! The same request seen twice, counted once: the two views of one request in one OTLP export
//! (an instrumented client's span and the server's span below it), and a record read again
//! (a log re-read after rotation, a file given twice).
//!
//! Owns the identity of a request read again ([`request_key`]), the bounded set of the keys
//! seen in one input ([`Seen`]), and the pairing of a server span with the client span it
//! descends from in one line ([`mark_views`]). Decides nothing about output: the processor marks
//! a client view ([`super::Request::duplicate`]), a summary worker asks [`Seen`] in input order.

use crate::classify::Request;
use std::collections::{HashSet, VecDeque};
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// FNV-1a over 64-bit words (a number is one word, bytes eight at a time), finished with a
/// multiply-xorshift: a deterministic 64-bit hash (the same in every thread and every run),
/// a few multiplies for a request's identity.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        let mut h = self.0;
        h ^= h >> 29;
        h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h ^ (h >> 32)
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.write_u64(u64::from_le_bytes(w.try_into().unwrap_or_default()));
        }
        let mut last = [0u8; 8];
        let rest = words.remainder();
        last[..rest.len()].copy_from_slice(rest);
        self.write_u64(u64::from_le_bytes(last) ^ ((rest.len() as u64) << 56));
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x0000_0100_0000_01b3);
        self.0 ^= self.0 >> 31;
    }
}

/// The identity of a request of format `format` whose log names it `id` (the id's JSON text),
/// for telling a record read again from a new one: its id, its start and end instants and every
/// metric and token count derived from it. Two records with one id but different timings (a
/// retry that reuses the id, a server restarted whose task ids start again) are different
/// requests: their keys differ.
pub(crate) fn request_key(format: usize, id: &[u8], r: &Request) -> u64 {
    let mut h = Fnv::default();
    format.hash(&mut h);
    id.hash(&mut h);
    r.start_ns.hash(&mut h);
    r.end_ns.hash(&mut h);
    let m = &r.metrics;
    for v in [m.ttft, m.queue, m.prefill, m.decode, m.tpot, m.e2e, m.ttfot] {
        match v {
            Ok(x) => x.to_bits().hash(&mut h),
            Err(reason) => reason.hash(&mut h),
        }
    }
    m.input_tokens.hash(&mut h);
    m.cached_tokens.hash(&mut h);
    m.output_tokens.hash(&mut h);
    m.cache.hash(&mut h);
    (m.outcome as u8).hash(&mut h);
    r.itl.1.hash(&mut h);
    h.finish()
}

/// The keys of [`Seen`] are hashes already.
#[derive(Default)]
struct PreHashed(u64);

impl Hasher for PreHashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// Keys held at the most by a [`Seen`] (about 2.5 MB), whatever the horizon.
pub(crate) const SEEN_MAX: usize = 100_000;

/// The requests of one input seen so far, to tell one read again: the keys ([`request_key`])
/// of the requests that ended within the horizon (`--join-timeout` of log time, 10 minutes by
/// default) of the latest end read, and at most [`SEEN_MAX`] of them (the oldest go first).
/// A copy read after its first has left the set is counted again: the bound is in log time
/// and in keys, never in the input's size.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    keys: HashSet<u64, BuildHasherDefault<PreHashed>>,
    /// (end, key) in the order they were entered: the oldest first.
    order: VecDeque<(i64, u64)>,
    horizon_ns: i64,
    max: usize,
    latest_ns: i64,
}

impl Seen {
    /// An empty set keeping keys for `horizon_ns` of log time, and at most `max`.
    pub(crate) fn new(horizon_ns: i64, max: usize) -> Seen {
        Seen {
            keys: HashSet::default(),
            order: VecDeque::new(),
            horizon_ns,
            max: max.max(1),
            latest_ns: i64::MIN,
        }
    }

    /// True when a request with `key`, ending at `end_ns`, was seen before (it is a copy); else
    /// enters it and returns false. A request without an end is placed at the latest end read.
    pub(crate) fn seen_before(&mut self, key: u64, end_ns: Option<i64>) -> bool {
        let end_ns = end_ns.unwrap_or(self.latest_ns);
        self.latest_ns = self.latest_ns.max(end_ns);
        let cutoff = self.latest_ns.saturating_sub(self.horizon_ns);
        while let Some(&(end, k)) = self.order.front() {
            if end >= cutoff && self.order.len() < self.max {
                break;
            }
            self.order.pop_front();
            self.keys.remove(&k);
        }
        // One probe: `insert` tells whether the key was there.
        if !self.keys.insert(key) {
            return true;
        }
        self.order.push_back((end_ns, key));
        false
    }

    /// Forgets every key (a new input).
    pub(crate) fn clear(&mut self) {
        self.keys.clear();
        self.order.clear();
        self.latest_ns = i64::MIN;
    }
}

/// The OTel span kinds a view is told by (`kind`, an integer in OTLP/JSON, or its enum name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SpanKind {
    /// `SPAN_KIND_SERVER` (2): the server's span of a request it received (vLLM's
    /// `llm_request`).
    Server,
    /// `SPAN_KIND_CLIENT` (3): the caller's span of a request it sent (OpenLLMetry, OpenLIT).
    Client,
    /// Any other, or none.
    Other,
}

impl SpanKind {
    /// The kind of a span from the JSON text of its `kind`.
    pub(crate) fn from_raw(raw: Option<&str>) -> SpanKind {
        match raw.map(|r| r.trim_matches('"')) {
            Some("2" | "SPAN_KIND_SERVER") => SpanKind::Server,
            Some("3" | "SPAN_KIND_CLIENT") => SpanKind::Client,
            _ => SpanKind::Other,
        }
    }
}

/// One span of an OTLP export line: its trace, its id, its parent's id (JSON texts, as
/// logged), its kind, and the request read from it (an index into the line's requests).
#[derive(Debug, Clone)]
pub(crate) struct Span {
    pub(crate) trace: String,
    pub(crate) id: String,
    pub(crate) parent: String,
    pub(crate) kind: SpanKind,
    pub(crate) request: Option<usize>,
}

/// How far up a server span's parents the client span is looked for (an HTTP client span,
/// a framework's span may sit between them).
const MAX_DEPTH: usize = 32;

/// Marks the client views among `requests`: a request read from a CLIENT span of which a
/// request read from a SERVER span of the same line descends (its parent, or a parent's
/// parent, through the spans of the line, in the same trace) is the same request seen by its
/// caller; the server's view wins. Returns how many were marked.
pub(crate) fn mark_views(spans: &[Span], requests: &mut [Request]) -> usize {
    let mut marked = 0;
    for s in spans {
        if s.kind != SpanKind::Server || s.request.is_none() {
            continue;
        }
        let mut parent = &s.parent;
        for _ in 0..MAX_DEPTH {
            if parent.is_empty() || parent == "\"\"" {
                break;
            }
            let Some(p) = spans.iter().find(|p| &p.id == parent && p.trace == s.trace) else {
                break;
            };
            if p.kind == SpanKind::Client
                && let Some(i) = p.request
            {
                if let Some(r) = requests.get_mut(i)
                    && !r.duplicate
                {
                    r.duplicate = true;
                    marked += 1;
                }
                break;
            }
            parent = &p.parent;
        }
    }
    marked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_seen_again_within_the_horizon_and_the_bound() {
        let min = 60_000_000_000;
        let mut s = Seen::new(10 * min, 3);
        assert!(!s.seen_before(1, Some(0)));
        assert!(s.seen_before(1, Some(0)));
        assert!(!s.seen_before(2, Some(min)));
        // Past the horizon of the latest end (11 min), key 1 (end 0) is forgotten.
        assert!(!s.seen_before(3, Some(11 * min)));
        assert!(!s.seen_before(1, Some(0)), "forgotten: counted again");
        // At most 3 keys: entering 4 forgets the oldest held (2).
        assert!(!s.seen_before(4, Some(11 * min)));
        assert!(!s.seen_before(2, Some(min)));
        s.clear();
        assert!(!s.seen_before(3, Some(11 * min)));
    }

    #[test]
    fn span_kinds_as_numbers_and_names() {
        assert_eq!(SpanKind::from_raw(Some("2")), SpanKind::Server);
        assert_eq!(
            SpanKind::from_raw(Some("\"SPAN_KIND_CLIENT\"")),
            SpanKind::Client
        );
        assert_eq!(SpanKind::from_raw(Some("1")), SpanKind::Other);
        assert_eq!(SpanKind::from_raw(None), SpanKind::Other);
    }
}
