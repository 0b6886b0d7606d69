//! The per-line pipeline: parse a line once, attribute it to a format, derive its metrics.
//!
//! Owns the [`Processor`] (the compiled formats, the path trie, the reused slot buffer and
//! scratch line) and the [`Coverage`] counters. Sees one line's bytes at a time; writes
//! nothing. The sinks ([`crate::enrich`], [`crate::summary`]) decide what to do with the result.

use crate::format::{FormatSpec, Formats};
use crate::metrics::{Metrics, Outcome, derive};
use crate::record::{PathSet, ReadError, Slots, neutralize_non_finite, raw_str};
use crate::summary::ByValues;
use std::collections::BTreeMap;

/// What one line turned out to be.
#[derive(Debug)]
pub enum Kind {
    /// Not a JSON object (a text log line, a banner): passed through, counted `non_json`.
    NonJson,
    /// Starts like a JSON object but is malformed or not UTF-8: passed through, counted
    /// `invalid`, reported.
    Invalid(String),
    /// A JSON object that no format recognizes as a request (health check, startup event).
    NoTiming,
    /// Already carries the enrich key: passed through unchanged, counted `already_enriched`.
    AlreadyEnriched,
    /// One or more requests completed on this line; they are in [`Processor::requests`].
    Requests,
}

/// One request's results.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Request {
    /// Index of the format it was attributed to.
    pub format: usize,
    /// The derived metrics.
    pub metrics: Metrics,
    /// When the request started, epoch ns, where the log says (arrival instant, or the log
    /// line's time minus E2E).
    pub start_ns: Option<i64>,
    /// When the request ended, epoch ns, where the log says (end instant, or the log line's
    /// time).
    pub end_ns: Option<i64>,
}

/// Counters of what the input held (SPEC section 4, coverage).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Coverage {
    /// Lines read (including too-long ones).
    pub lines: u64,
    /// Request lines (attributed to a format).
    pub requests: u64,
    /// Lines that are not JSON objects.
    pub non_json: u64,
    /// JSON objects that are not requests.
    pub no_timing: u64,
    /// Malformed JSON or invalid UTF-8.
    pub invalid: u64,
    /// Lines over `--max-line-bytes`.
    pub too_long: u64,
    /// Lines that already carried the enrich key.
    pub already_enriched: u64,
    /// Requests that failed (or were cancelled before their first token).
    pub errors: u64,
    /// Requests cancelled after their first token.
    pub cancelled: u64,
    /// Requests answered by a gateway's response cache.
    pub response_cache: u64,
    /// Requests with a negative interval.
    pub negative_interval: u64,
    /// Requests per format name.
    pub formats: BTreeMap<String, u64>,
}

impl Coverage {
    /// Adds the counters of `other`.
    pub fn merge(&mut self, other: &Coverage) {
        self.lines += other.lines;
        self.requests += other.requests;
        self.non_json += other.non_json;
        self.no_timing += other.no_timing;
        self.invalid += other.invalid;
        self.too_long += other.too_long;
        self.already_enriched += other.already_enriched;
        self.errors += other.errors;
        self.cancelled += other.cancelled;
        self.response_cache += other.response_cache;
        self.negative_interval += other.negative_interval;
        for (k, v) in &other.formats {
            *self.formats.entry(k.clone()).or_default() += v;
        }
    }
}

/// Parses and classifies lines. One per thread; reuses its buffers across lines.
pub struct Processor {
    paths: PathSet,
    formats: Formats,
    slots: Slots,
    scratch: Vec<u8>,
    key_slot: usize,
    by_slots: Vec<usize>,
    hint: usize,
    hit_ratio: f64,
    from_scratch: bool,
    requests: Vec<Request>,
    reference: bool,
}

impl Processor {
    /// Builds a processor for `specs` (tried in order; the last match first), reading records
    /// at `root` inside each line, recognizing `key` (the enrich key) at the top level, and
    /// reading the `by` paths (below `root`) for grouping.
    pub fn new(
        specs: Vec<FormatSpec>,
        root: &[String],
        key: &str,
        by: &[Vec<String>],
        hit_ratio: f64,
    ) -> Self {
        let mut paths = PathSet::default();
        let key_slot = paths.add(&[key]);
        let formats = Formats::compile(specs, root, &mut paths);
        let by_slots = by
            .iter()
            .map(|p| {
                let full: Vec<&str> = root.iter().chain(p).map(String::as_str).collect();
                paths.add(&full)
            })
            .collect();
        Processor {
            paths,
            formats,
            slots: Slots::default(),
            scratch: Vec::new(),
            key_slot,
            by_slots,
            hint: 0,
            hit_ratio,
            from_scratch: false,
            requests: Vec::new(),
            reference: false,
        }
    }

    /// Reads lines with the serde_json reference parser ([`PathSet::extract_reference`])
    /// instead of the fast scanner: same results, slower; for tests and comparisons.
    pub fn use_reference_parser(&mut self) {
        self.reference = true;
    }

    fn extract(&mut self, line: &[u8]) -> Result<(), ReadError> {
        if self.reference {
            self.paths.extract_reference(line, &mut self.slots)
        } else {
            self.paths.extract(line, &mut self.slots)
        }
    }

    /// The spec of format `i`.
    pub fn format_spec(&self, i: usize) -> &FormatSpec {
        self.formats.spec(i)
    }

    /// Classifies one line's content (no line ending, no BOM) and derives its metrics.
    pub fn process(&mut self, content: &[u8]) -> Kind {
        self.from_scratch = false;
        self.requests.clear();
        match self.extract(content) {
            Ok(()) => self.classify(content),
            Err(ReadError::NotAnObject) => Kind::NonJson,
            Err(ReadError::Invalid(msg)) => {
                // Python writes NaN/Infinity; one in a field we do not read must not cost the
                // request its metrics.
                self.scratch.clear();
                self.scratch.extend_from_slice(content);
                if neutralize_non_finite(&mut self.scratch) {
                    let scratch = std::mem::take(&mut self.scratch);
                    let ok = self.extract(&scratch).is_ok();
                    self.from_scratch = ok;
                    let kind = if ok {
                        self.classify(&scratch)
                    } else {
                        Kind::Invalid(msg)
                    };
                    self.scratch = scratch;
                    return kind;
                }
                Kind::Invalid(msg)
            }
        }
    }

    fn classify(&mut self, line: &[u8]) -> Kind {
        if self.slots.has(self.key_slot) {
            return Kind::AlreadyEnriched;
        }
        let Some(d) = self.formats.detect(line, &self.slots, self.hint) else {
            return Kind::NoTiming;
        };
        self.hint = d.format;
        let timeline = self.formats.timeline(d, line, &self.slots);
        let metrics = derive(&timeline, self.hit_ratio);
        let end_ns = timeline.end.or(timeline.logged_at);
        let start_ns = timeline
            .arrival
            .or_else(|| Some(timeline.logged_at? - metrics.e2e.ok()? as i64));
        self.requests.push(Request {
            format: d.format,
            metrics,
            start_ns,
            end_ns,
        });
        Kind::Requests
    }

    /// The requests completed by the line last processed (when it was [`Kind::Requests`]).
    pub fn requests(&self) -> &[Request] {
        &self.requests
    }

    /// The `by` values of the line last processed, as strings (`None` when absent; a value
    /// that is not a JSON string is its JSON text). Must be called right after
    /// [`Processor::process`] with the same content. Allocates nothing in steady state, except
    /// for a string value with escapes.
    pub fn by_values(&self, content: &[u8], out: &mut ByValues) {
        out.reset(self.by_slots.len());
        let line: &[u8] = if self.from_scratch {
            &self.scratch
        } else {
            content
        };
        for (i, &s) in self.by_slots.iter().enumerate() {
            match self.slots.raw(line, s) {
                None => out.set(i, None),
                Some(raw) => match raw_str(raw) {
                    Some(v) => out.set(i, Some(&v)),
                    None => out.set(i, Some(raw)),
                },
            }
        }
    }

    /// Adds a processed line's kind to the counters.
    pub fn count(&self, kind: &Kind, cov: &mut Coverage) {
        cov.lines += 1;
        match kind {
            Kind::NonJson => cov.non_json += 1,
            Kind::Invalid(_) => cov.invalid += 1,
            Kind::NoTiming => cov.no_timing += 1,
            Kind::AlreadyEnriched => cov.already_enriched += 1,
            Kind::Requests => {
                for r in &self.requests {
                    cov.requests += 1;
                    match r.metrics.outcome {
                        Outcome::Error => cov.errors += 1,
                        Outcome::Cancelled => cov.cancelled += 1,
                        Outcome::Ok => {}
                    }
                    if r.metrics.cache == Some(crate::metrics::CacheClass::Response) {
                        cov.response_cache += 1;
                    }
                    if r.metrics.negative_interval {
                        cov.negative_interval += 1;
                    }
                    let name = &self.formats.spec(r.format).name;
                    match cov.formats.get_mut(name) {
                        Some(n) => *n += 1,
                        None => {
                            cov.formats.insert(name.clone(), 1);
                        }
                    }
                }
            }
        }
    }
}
