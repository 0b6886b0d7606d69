//! Worker: one thread's work on framed lines. Parses and classifies a line, counts it, and
//! does with it what its command's [`Role`] says: writes the spliced line (or the per-request
//! rows) for enrich, adds it to the digests of a [`Tally`] for summary. The lines come from
//! the driver ([`crate::app::driver`]) through its [`crate::app::driver::WorkerSink`].
//!
//! Owns a [`Processor`], the counters and the reused buffers, so one line costs no allocation
//! in steady state. Writes what enrich outputs to the writer it is given; returns why a line is
//! bad to its caller (who numbers and reports it) and never prints. Used line by line by
//! [`crate::run`] and [`crate::app::summary_cmd`], and chunk by chunk by [`crate::app::parallel`].

use crate::app::buckets::{BucketInput, READY_LIMIT};
use crate::classify::ByValues;
use crate::classify::dedupe::{SEEN_MAX, Seen};
use crate::classify::notes::Note;
use crate::classify::{Coverage, Kind, Processor, Request};
use crate::cli::config::{Command, Config, EnrichConfig, SummaryConfig};
use crate::metrics::CacheClass;
use crate::metrics::sweep::{MAX_PENDING, Sweep};
use crate::output::enrich;
use crate::output::render::{self, Rows};
use crate::summary::window::Buckets;
use crate::summary::{GroupIds, Summary};
use std::io::{self, Write};
use std::sync::{Mutex, MutexGuard};

/// What one input (or the total of several) has added up to, in a summary run.
#[derive(Debug, Clone)]
pub struct Tally {
    /// What the lines held.
    pub cov: Coverage,
    /// The digests.
    pub summary: Summary,
    /// The current `--window` slice: what came in since the last interval.
    pub slice: Option<(Coverage, Summary)>,
    /// `--bucket` windows.
    pub buckets: Option<Buckets>,
    /// `--bucket` windows complete and rendered, not yet written ([`crate::app::buckets`]).
    pub ready: Vec<u8>,
    /// The keys of the first request lines (when there are `--by` keys).
    pub(crate) keys: crate::app::keys::KeySample,
    /// The identities of a sample of the input's requests, when it was asked for
    /// ([`Worker::sample_keys`]): set at the end of the input.
    pub(crate) key_sample: Vec<u64>,
}

impl Tally {
    /// An empty part: `template`'s keys, bound and targets.
    pub fn new(template: &Summary, sc: &SummaryConfig) -> Tally {
        Tally {
            cov: Coverage::default(),
            summary: template.empty_like(),
            slice: sc
                .window
                .map(|_| (Coverage::default(), template.empty_like())),
            buckets: sc.bucket.map(|w| Buckets::new(w).cut_by(sc.range)),
            ready: Vec::new(),
            // With `--by` keys, `--map` paths or a formats file's to check against the log's.
            keys: crate::app::keys::KeySample::new(
                !sc.by.is_empty() || template.mapped() || template.formats_file(),
            ),
            key_sample: Vec::new(),
        }
    }

    /// Adds everything of `other` to this part.
    pub fn absorb(&mut self, other: &Tally, template: &Summary) {
        self.cov.merge(&other.cov);
        self.summary.merge(&other.summary);
        if let (Some(a), Some(b)) = (&mut self.slice, &other.slice) {
            a.0.merge(&b.0);
            a.1.merge(&b.1);
        }
        if let (Some(a), Some(b)) = (&mut self.buckets, &other.buckets) {
            a.merge(b, template);
        }
        self.ready.extend_from_slice(&other.ready);
        self.keys.merge(&other.keys);
    }

    /// Counts a line in the coverage (and in the current slice's).
    fn count(&mut self, f: impl Fn(&mut Coverage)) {
        f(&mut self.cov);
        if let Some((cov, _)) = &mut self.slice {
            f(cov);
        }
    }
}

/// The `--by` values of a request, owned, as group keys hold them
/// ([`crate::summary::bounded_key`]): a request waiting in the in-flight sweep keeps no more of
/// a long value than its group does.
fn bounded_owned(by: ByValues<'_>) -> Vec<Option<String>> {
    by.to_owned_values()
        .into_iter()
        .map(|v| v.map(|s| crate::summary::bounded_key(&s).into_owned()))
        .collect()
}

/// The empty summary a summary run starts from: its `--by` keys, `--max-groups`,
/// `--exact-limit` and `--goodput` targets.
pub(crate) fn template(sc: &SummaryConfig) -> Summary {
    Summary::new(
        sc.by.iter().map(|(n, _)| n.clone()).collect(),
        sc.max_groups,
        sc.exact_limit,
    )
    .with_goodput(sc.goodput.clone())
    .with_genai(sc.report.keeps_genai())
    .with_range(sc.range)
}

/// Where a summary worker adds its lines: a part of its own, or one shared with the thread
/// that prints `--every` summaries (locked once per line, uncontended but for a snapshot).
enum TallyRef<'p> {
    Own(Box<Tally>),
    Shared(&'p Mutex<Tally>),
}

enum TallyGuard<'a> {
    Own(&'a mut Tally),
    Shared(MutexGuard<'a, Tally>),
}

impl TallyRef<'_> {
    fn get(&mut self) -> TallyGuard<'_> {
        match self {
            TallyRef::Own(p) => TallyGuard::Own(p),
            TallyRef::Shared(m) => TallyGuard::Shared(m.lock().unwrap_or_else(|e| e.into_inner())),
        }
    }
}

impl TallyRef<'_> {
    /// Waits until the thread that writes has taken the windows rendered (a shared part's
    /// `ready` bytes back under [`READY_LIMIT`]), so that memory does not grow with them.
    fn wait_written(&mut self) {
        if let TallyRef::Shared(m) = self {
            while m.lock().unwrap_or_else(|e| e.into_inner()).ready.len() > READY_LIMIT {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
    }
}

impl std::ops::Deref for TallyGuard<'_> {
    type Target = Tally;
    fn deref(&self) -> &Tally {
        match self {
            TallyGuard::Own(p) => p,
            TallyGuard::Shared(g) => g,
        }
    }
}

impl std::ops::DerefMut for TallyGuard<'_> {
    fn deref_mut(&mut self) -> &mut Tally {
        match self {
            TallyGuard::Own(p) => p,
            TallyGuard::Shared(g) => g,
        }
    }
}

/// What a worker does with a line, by command.
enum Role<'p> {
    Enrich {
        cov: Coverage,
        key: String,
        only_requests: bool,
        rows: Option<Rows>,
        object: Vec<u8>,
    },
    Summary {
        part: TallyRef<'p>,
        /// An empty part like `part` (for [`Worker::fork`]).
        empty: Box<Tally>,
        template: Summary,
        inflight: Inflight,
        /// With `--bucket`: how windows are written, and a chunk worker's requests handed on.
        bucket: Option<BucketRole>,
        /// The requests of the input seen so far, to set aside a record read again (`None`
        /// with `--keep-duplicates`, and in a chunk worker, which hands its requests on).
        seen: Option<Box<Seen>>,
        /// In a chunk worker that sets copies aside and writes `--bucket` windows: its
        /// requests, in order, handed on to the caller, which tells the copies in input order
        /// and adds the others ([`Worker::take_handed`], [`Worker::feed_handed`]).
        hand: Option<Vec<BucketInput>>,
        /// In a chunk worker that sets copies aside (without `--bucket`): its requests wait
        /// for the caller's verdict on which are copies, then the others are added to its
        /// summary, by whichever thread is free ([`Worker::take_keyed`],
        /// [`Worker::feed_keyed`], [`Worker::applier`]).
        verdict: Option<Box<Verdicts>>,
    },
}

/// A chunk worker's requests of one chunk, kept until the caller says which are copies: the
/// requests, their token gaps (one buffer, each request's `itl` rewritten to its range in it),
/// their `--by` values (`width` a request, in strings reused from chunk to chunk) and notes.
#[derive(Default)]
pub(crate) struct Pending {
    requests: Vec<Request>,
    gaps: Vec<i64>,
    by_text: Vec<String>,
    by_present: Vec<bool>,
    by_len: usize,
    /// The `--by` values of a request.
    width: usize,
    notes: Vec<Option<Note>>,
}

impl Pending {
    pub(crate) fn clear(&mut self) {
        self.requests.clear();
        self.gaps.clear();
        self.by_len = 0;
        self.notes.clear();
    }

    fn push(&mut self, r: &Request, gaps: &[i64], by: ByValues<'_>, note: Option<&Note>) {
        let mut r = *r;
        r.itl.0 = self.gaps.len() as u32;
        self.gaps.extend_from_slice(gaps);
        self.requests.push(r);
        self.width = by.len();
        for i in 0..by.len() {
            if self.by_len == self.by_text.len() {
                self.by_text.push(String::new());
                self.by_present.push(false);
            }
            let v = by.get(i);
            let t = &mut self.by_text[self.by_len];
            t.clear();
            t.push_str(v.unwrap_or(""));
            self.by_present[self.by_len] = v.is_some();
            self.by_len += 1;
        }
        self.notes.push(note.cloned());
    }

    /// Request `i`: it, its gaps, its `--by` values, its note.
    fn get(&self, i: usize) -> (&Request, &[i64], ByValues<'_>, Option<&Note>) {
        let r = &self.requests[i];
        let gaps = &self.gaps[r.itl.0 as usize..(r.itl.0 + r.itl.1) as usize];
        let by = i * self.width..(i + 1) * self.width;
        let by = ByValues::new(&self.by_text[by.clone()], &self.by_present[by]);
        (r, gaps, by, self.notes[i].as_ref())
    }
}

/// A chunk worker's requests of the chunk being read, kept for the caller's verdict on
/// copies.
#[derive(Default)]
pub(crate) struct Verdicts {
    /// The chunk being read.
    current: Pending,
    /// The chunk being read's requests as the caller gets them.
    keyed: Vec<Keyed>,
}

/// A chunk worker's summary (and its `--window` slice's), taken out of its part so that its
/// chunks' requests can be added, once the caller has told the copies among them, by
/// whichever thread is free: a chunk at a time, in input order, as the worker itself would
/// ([`Worker::applier`], [`Worker::restore`]).
pub(crate) struct Applier {
    summary: Summary,
    slice: Option<Summary>,
}

impl Applier {
    /// Adds the requests of `chunk` but `copies` (their indexes, ascending).
    pub(crate) fn apply(&mut self, chunk: &Pending, copies: &[u32]) {
        let mut copies = copies.iter().peekable();
        for i in 0..chunk.requests.len() {
            if copies.next_if(|&&c| c as usize == i).is_some() || chunk.requests[i].outside {
                continue;
            }
            // As `tally` adds a request of a part without `--bucket` windows, and whose
            // in-flight sweep entries the caller has.
            add_to_summaries(&mut self.summary, self.slice.as_mut(), chunk.get(i));
        }
    }
}

impl Verdicts {
    /// Keeps request `r` of the chunk being read until its verdict, and hands on its identity.
    fn push(&mut self, r: &Request, gaps: &[i64], by: ByValues<'_>, note: Option<&Note>) {
        self.current.push(r, gaps, by, note);
        // One outside `--since`/`--until` is only in flight: not told from copies, not added.
        self.keyed.push(Keyed {
            key: r.key.filter(|_| !r.outside),
            end: r.end_ns,
            sweep: if r.outside {
                presence(r)
            } else {
                sweep_input(r, by)
            },
        });
    }
}

/// How many requests ahead of the one told [`Worker::feed_keyed`] fetches the table line of
/// [`Seen`] its key will be looked for in.
const PREFETCH_AHEAD: usize = 8;

/// A chunk worker's request as the caller gets it to tell copies in input order: its identity
/// and end ([`Seen::seen_before`]), and its entry into the in-flight sweep.
pub struct Keyed {
    key: Option<u64>,
    end: Option<i64>,
    sweep: Option<SweepInput>,
}

/// Adds request `r` (its gaps, its `--by` values) to the part `p`, its `--window` slice, its
/// `--bucket` window and the in-flight sweep.
fn tally(
    p: &mut Tally,
    (r, gaps, by, note): (&Request, &[i64], ByValues<'_>, Option<&Note>),
    template: &Summary,
    inflight: Option<&mut Inflight>,
    bucket: Option<&mut BucketRole>,
) {
    let slice = p.slice.as_mut().map(|(_, s)| s);
    let ids = add_to_summaries(&mut p.summary, slice, (r, gaps, by, note));
    if let (Some(b), Some(role)) = (&mut p.buckets, bucket) {
        add_to_window(b, role, r, gaps, by, template, &mut p.ready);
    }
    if let Some(inflight) = inflight {
        inflight.push(r, ids, by, p.slice.is_some());
    }
}

/// Adds request `r` to a part's summary and to its `--window` slice's; returns the groups it
/// was added to.
fn add_to_summaries(
    summary: &mut Summary,
    slice: Option<&mut Summary>,
    (r, gaps, by, note): (&Request, &[i64], ByValues<'_>, Option<&Note>),
) -> GroupIds {
    let ids = summary.add_request(r, gaps, by);
    summary.add_note(r, note);
    if let Some(s) = slice {
        s.add_request(r, gaps, by);
        s.add_note(r, note);
    }
    ids
}

/// True when `r` is a copy of a request `seen` holds (counted in `p`'s coverage as a
/// duplicate); else enters it.
fn is_copy(seen: Option<&mut Seen>, r: &Request, p: &mut Tally) -> bool {
    let (Some(seen), Some(key)) = (seen, r.key) else {
        return false;
    };
    let copy = seen.seen_before(key, r.end_ns);
    if copy {
        p.count(|c| c.duplicates += 1);
    } else if seen.behind {
        p.count(|c| c.behind_horizon += 1);
    }
    copy
}

/// A summary worker's part in `--bucket`: the quantiles its windows are written with; in a
/// chunk worker, the requests handed on to the caller, which adds them to its windows in input
/// order ([`Worker::take_buckets`], [`Worker::feed_buckets`]).
struct BucketRole {
    style: crate::app::buckets::WindowStyle,
    emit: Option<Vec<BucketInput>>,
}

/// Adds request `r` to its window of `b` (or hands it on, in a chunk worker), then renders the
/// windows complete into `ready`.
fn add_to_window(
    b: &mut Buckets,
    role: &mut BucketRole,
    r: &Request,
    gaps: &[i64],
    by: ByValues<'_>,
    template: &Summary,
    ready: &mut Vec<u8>,
) {
    if let Some(v) = &mut role.emit {
        v.push(BucketInput {
            request: *r,
            gaps: gaps.to_vec(),
            by: bounded_owned(by),
            note: None,
        });
        return;
    }
    if let Some(win) = b.window(r.end_ns, template) {
        win.add_request(r, gaps, by);
    } else if r.metrics.outcome == crate::metrics::Outcome::Error {
        b.unplaced_errors += 1;
    }
    crate::app::buckets::render_complete(b, &role.style, ready);
}

/// A decode in the in-flight sweep: the groups its request was added to in the part's
/// summary; its cache class and `--by` values when there is a `--window` slice (whose groups
/// change at each interval); its TPOT and TTFT ([`Timing`]).
type Sample = (
    GroupIds,
    // Boxed: only `--every`/`--window` slices need it, and every request waiting in the
    // sweep carries one (32 bytes an entry instead of 56).
    Option<Box<(Option<CacheClass>, Vec<Option<String>>)>>,
    Timing,
);

/// A placed request's TPOT and TTFT (ms), the TTFT NaN where it has none (8 bytes, not an
/// `Option`'s 16: every request waiting in the sweep carries one).
type Timing = (f64, f64);

/// One request's entry into the in-flight sweep, as a chunk worker hands it on: its start and
/// end (epoch ns), and, when it has a TPOT, its decode (ns), cache class, `--by` values and
/// TPOT (ms).
pub struct SweepInput {
    start: i64,
    end: i64,
    decode: Option<Decode>,
}

/// A decode as a chunk worker hands it on: its length (ns), cache class, `--by` values, TPOT
/// and TTFT ([`Timing`]).
type Decode = (i64, Option<CacheClass>, Vec<Option<String>>, Timing);

/// Requests in flight during each decode, from one input's own start and end times (one input
/// is one server's or gateway's log): the sweep must see the input's requests in input order.
enum Inflight {
    /// This worker sees them all, in order: a sweep, whose placed decodes go to the part.
    Sweep(Box<Sweep<Sample>>),
    /// A chunk worker: the sweep's entries, in order, for the caller ([`Worker::take_sweep`]).
    Emit(Vec<SweepInput>),
    /// The caller of chunk workers ([`Worker::sweep_apart`]): the groups stay in the chunk
    /// workers' parts until the end, so placed decodes go to a summary apart, merged into the
    /// part at the end. It holds at most `--max-groups` groups like any summary (memory must
    /// not grow with a `--by` key of many values): past that, which keys' samples land in
    /// `(other)` may differ from the part's choice, as between threads.
    Apart(Box<Sweep<(GroupIds, Timing)>>, Box<Summary>),
}

/// Request `r`'s entry into the in-flight sweep as one in flight only, with no decode of its
/// own to place (one outside `--since`/`--until`: the server had it in flight all the same);
/// `None` without a start and an end.
fn presence(r: &Request) -> Option<SweepInput> {
    Some(SweepInput {
        start: r.start_ns?,
        end: r.end_ns?,
        decode: None,
    })
}

/// Request `r`'s entry into the in-flight sweep as a chunk worker hands it on (`None` without
/// a start and an end).
fn sweep_input(r: &Request, by: ByValues<'_>) -> Option<SweepInput> {
    let mut entry = presence(r)?;
    entry.decode = match (r.metrics.tpot, r.metrics.decode) {
        (Ok(tpot), Ok(decode)) => Some((
            crate::number::round(decode) as i64,
            r.metrics.cache,
            bounded_owned(by),
            (tpot / 1e6, r.metrics.ttft.map_or(f64::NAN, |t| t / 1e6)),
        )),
        _ => None,
    };
    Some(entry)
}

impl Inflight {
    fn sweep() -> Inflight {
        Inflight::Sweep(Box::new(Sweep::new(MAX_PENDING)))
    }

    /// Enters request `r` (added to the part's groups `ids`, with `--by` values `by`).
    fn push(&mut self, r: &Request, ids: GroupIds, by: ByValues<'_>, slice: bool) {
        let (Some(start), Some(end)) = (r.start_ns, r.end_ns) else {
            return;
        };
        let decode = match (r.metrics.tpot, r.metrics.decode) {
            (Ok(tpot), Ok(decode)) => Some((
                crate::number::round(decode) as i64,
                (tpot / 1e6, r.metrics.ttft.map_or(f64::NAN, |t| t / 1e6)),
            )),
            _ => None,
        };
        let cache = r.metrics.cache;
        match self {
            Inflight::Sweep(sw) => sw.push(
                start,
                end,
                decode.map(|(d, tpot)| {
                    (
                        d,
                        (
                            ids,
                            slice.then(|| Box::new((cache, bounded_owned(by)))),
                            tpot,
                        ),
                    )
                }),
            ),
            Inflight::Emit(v) => v.extend(sweep_input(r, by)),
            Inflight::Apart(sw, side) => {
                let decode = decode.map(|(d, tpot)| (d, (side.group_ids(cache, by), tpot)));
                sw.push(start, end, decode);
            }
        }
    }

    /// Enters request `r` as in flight only ([`presence`]).
    fn push_presence(&mut self, r: &Request) {
        let Some(e) = presence(r) else {
            return;
        };
        match self {
            Inflight::Sweep(sw) => sw.push(e.start, e.end, None),
            Inflight::Apart(sw, _) => sw.push(e.start, e.end, None),
            Inflight::Emit(v) => v.push(e),
        }
    }

    /// Adds the decodes the sweep has placed to the part (or to the summary apart).
    fn drain(&mut self, p: &mut Tally) {
        match self {
            Inflight::Sweep(sw) => {
                for (mean, (ids, key, tpot)) in sw.drain() {
                    p.summary.add_inflight(&ids, mean, tpot);
                    if let (Some((_, s)), Some(k)) = (&mut p.slice, key) {
                        let (cache, by) = *k;
                        let ids = s.existing_group_ids(cache, ByValues::options(&by));
                        s.add_inflight(&ids, mean, tpot);
                    }
                }
            }
            Inflight::Apart(sw, side) => {
                for (mean, (ids, tpot)) in sw.drain() {
                    side.add_inflight(&ids, mean, tpot);
                }
            }
            Inflight::Emit(_) => {}
        }
    }

    /// Ends the input: the sweep places what it holds; the summary apart is merged into the
    /// part; the sweep's counts go to the part.
    fn finish(&mut self, p: &mut Tally) {
        let (late, forced) = match self {
            Inflight::Sweep(sw) => {
                sw.finish();
                (sw.late, sw.forced)
            }
            Inflight::Apart(sw, _) => {
                sw.finish();
                (sw.late, sw.forced)
            }
            Inflight::Emit(_) => return,
        };
        self.drain(p);
        if let Inflight::Apart(_, side) = self {
            p.summary.merge(side);
        }
        p.summary.add_sweep_counts(late, forced);
    }
}

/// What became of one line.
#[derive(Debug, PartialEq, Eq)]
pub enum LineOutcome {
    /// Handled; why it is bad, when it is, a message each thing wrong (for the caller's
    /// diagnostics).
    Done(Vec<String>),
    /// A line of a format whose requests span several lines, left untouched and uncounted by
    /// a worker made with [`Worker::fork`]: the caller hands it, in input order, to a worker
    /// that joins.
    Deferred,
}

/// Per-thread state for the lines of one run.
pub struct Worker<'p> {
    proc: Processor,
    role: Role<'p>,
    input: InputCheck,
    /// A copy of the processor, made at the first line cut short by another line: it reads
    /// what follows the cut, to tell a request from an object inside the cut line.
    probe: Option<Box<Processor>>,
}

/// What is known of the input being read, to name it when none of its lines is JSON
/// ([`crate::app::not_json`]).
#[derive(Debug, Clone, Default)]
struct InputCheck {
    name: String,
    looks: crate::app::not_json::Looks,
    /// What it is, when its first bytes are a benchmark's aggregates without its requests.
    aggregates: Option<&'static str>,
    /// Lines claimed by a format ([`Coverage::claimed`]) before it.
    claimed_before: u64,
    /// With `--map`: the paths it names, to say which are missing when the input gives no
    /// request.
    mapped: Option<crate::app::unmapped::Mapped>,
    /// The formats file's formats' marker paths, to say which are missing when the input
    /// gives no request.
    file_markers: crate::app::unmapped::FileMarkers,
    /// The `--root` path (empty without one), to say where it stops when the input gives no
    /// request.
    root: Vec<String>,
    /// The input's first line that starts like a JSON object (among the bytes read ahead): to
    /// say where `--root` stops, which of `--map`'s paths it lacks, or which member holds a
    /// request.
    head: Vec<u8>,
    /// Lines, those not JSON objects, and those not JSON objects, invalid or too long,
    /// counted before it.
    before: (u64, u64, u64),
}

impl InputCheck {
    /// Why the input gave no request, from its first JSON line: where `--root` stops in it,
    /// else which of `--map`'s paths, or of a formats file's markers, it lacks.
    fn unread_message(&self) -> Option<String> {
        if !self.root.is_empty()
            && let Some(msg) = crate::app::unmapped::root_message(&self.root, &self.head)
        {
            return Some(format!(
                "{}: no line was read as a request, and {msg}",
                self.name
            ));
        }
        self.mapped
            .as_ref()
            .and_then(|m| m.message(&self.name, &self.head))
            .or_else(|| self.file_markers.message(&self.name, &self.head))
    }

    /// Nothing known yet; `--map`'s paths and the `--root` path are kept for
    /// [`Worker::end_input`].
    fn of(config: &Config) -> InputCheck {
        InputCheck {
            mapped: crate::app::unmapped::Mapped::of(&config.formats, &config.root),
            file_markers: crate::app::unmapped::FileMarkers::of(&config.formats, &config.root),
            root: config.root.clone(),
            ..InputCheck::default()
        }
    }
}

impl Worker<'static> {
    /// A worker for `config`'s command: enrich, or summary into a part of its own. (Any other
    /// command gets a worker that writes and adds up nothing.)
    pub fn new(config: &Config) -> Worker<'static> {
        match &config.command {
            Command::Summary(sc) => {
                let template = template(sc);
                let part = TallyRef::Own(Box::new(Tally::new(&template, sc)));
                Worker::summary(config, sc, template, part)
            }
            Command::Enrich(e) => Worker::enrich(config, e),
            _ => Worker::enrich(
                config,
                &EnrichConfig {
                    key: crate::cli::config::DEFAULT_KEY.into(),
                    only_requests: true,
                    rows: None,
                },
            ),
        }
    }

    fn enrich(config: &Config, e: &EnrichConfig) -> Worker<'static> {
        let mut proc = processor(config, Some(&e.key), &[]);
        proc.want_ids(e.rows.is_some());
        Worker {
            proc,
            input: InputCheck::of(config),
            role: Role::Enrich {
                cov: Coverage::default(),
                key: e.key.clone(),
                only_requests: e.only_requests,
                rows: e.rows.clone(),
                object: Vec::with_capacity(512),
            },
            probe: None,
        }
    }

    /// The part a summary worker added its lines to (`None` for enrich, or a shared part).
    pub fn into_part(self) -> Option<Tally> {
        match self.role {
            Role::Summary {
                part: TallyRef::Own(p),
                ..
            } => Some(*p),
            _ => None,
        }
    }
}

impl<'p> Worker<'p> {
    /// A summary worker that adds its lines to `part`, shared with the thread that prints,
    /// reading with a fresh copy of `proto` (the formats are compiled once per run, not once
    /// per FILE: [`Worker::summary_processor`]).
    pub fn shared(
        proto: &Processor,
        sc: &SummaryConfig,
        template: Summary,
        part: &'p Mutex<Tally>,
    ) -> Worker<'p> {
        Worker::summary_with(proto.fresh(), sc, template, TallyRef::Shared(part))
    }

    /// The processor a summary worker of `config` reads with ([`Worker::shared`]).
    pub fn summary_processor(config: &Config, sc: &SummaryConfig) -> Processor {
        let mut by: Vec<Vec<String>> = sc.by.iter().map(|(_, p)| p.clone()).collect();
        if sc.report.keeps_genai() {
            // The GenAI histograms' labels, after the `--by` values (`Summary::with_genai`).
            by.extend([vec!["$model".to_owned()], vec!["$format".to_owned()]]);
        }
        // A summary reads the original fields of an enriched line like any other: no key.
        let mut proc = processor(config, None, &by);
        proc.set_dedupe(!sc.keep_duplicates, !sc.keep_duplicates);
        proc.set_range(sc.range);
        proc.want_slowest(true);
        if sc.window.is_some() {
            proc.want_every_id();
        }
        proc
    }

    fn summary(
        config: &Config,
        sc: &SummaryConfig,
        template: Summary,
        part: TallyRef<'p>,
    ) -> Worker<'p> {
        Worker::summary_with(Worker::summary_processor(config, sc), sc, template, part)
            .with_map_check(config)
    }

    /// The same worker, keeping what `--map` names (when `config` has it) to say at the end of
    /// an input that gave no request which of its paths its first JSON line lacks.
    #[must_use]
    pub fn with_map_check(mut self, config: &Config) -> Self {
        self.input = InputCheck::of(config);
        self
    }

    fn summary_with(
        proc: Processor,
        sc: &SummaryConfig,
        template: Summary,
        part: TallyRef<'p>,
    ) -> Worker<'p> {
        let seen =
            (!sc.keep_duplicates).then(|| Box::new(Seen::new(proc.join_timeout_ns(), SEEN_MAX)));
        Worker {
            proc,
            input: InputCheck::default(),
            role: Role::Summary {
                part,
                empty: Box::new(Tally::new(&template, sc)),
                template,
                inflight: Inflight::sweep(),
                bucket: sc.bucket.map(|_| BucketRole {
                    style: crate::app::buckets::WindowStyle::of(sc),
                    emit: None,
                }),
                seen,
                hand: None,
                verdict: None,
            },
            probe: None,
        }
    }

    /// Lines counted so far, those that were not JSON objects, and those that were not JSON
    /// objects, invalid or too long.
    fn line_counts(&mut self) -> (u64, u64, u64) {
        let count = |c: &Coverage| (c.lines, c.non_json, c.non_json + c.invalid + c.too_long);
        match &mut self.role {
            Role::Enrich { cov, .. } => count(cov),
            Role::Summary { part, .. } => count(&part.get().cov),
        }
    }

    /// What the first bytes of the input being read look like.
    pub(crate) fn input_looks(&mut self, looks: crate::app::not_json::Looks) {
        self.input.looks = looks;
    }

    /// What the first bytes of the input being read say it is, when it is a benchmark's
    /// aggregates without its requests.
    pub(crate) fn input_aggregates(&mut self, what: Option<&'static str>) {
        self.input.aggregates = what;
    }

    /// Lines claimed by a format so far ([`Coverage::claimed`]), and lines enriched before.
    fn claimed(&mut self) -> u64 {
        // A line tokentime enriched before is no line unknown: the run's end says why it
        // passed through, and a hint at another format would be wrong.
        let known = |c: &Coverage| c.claimed() + c.already_enriched;
        match &mut self.role {
            Role::Enrich { cov, .. } => known(cov),
            Role::Summary { part, .. } => known(&part.get().cov),
        }
    }

    /// The first bytes of the input being read: its first line that starts like a JSON object
    /// is kept.
    pub(crate) fn input_head(&mut self, head: &[u8]) {
        self.input.head.clear();
        self.input
            .head
            .extend_from_slice(crate::app::unmapped::first_object_line(head).unwrap_or_default());
    }

    /// The input being read: its lines so far, those not JSON, those not JSON objects, invalid
    /// or too long.
    fn input_lines(&mut self) -> (u64, u64, u64) {
        let (lines, non_json, bad) = self.line_counts();
        let before = self.input.before;
        (lines - before.0, non_json - before.1, bad - before.2)
    }

    /// Whether the input being read, at its end, is named as not JSON lines as a whole
    /// ([`Worker::end_input`]).
    pub(crate) fn input_named(&mut self) -> bool {
        let (lines, non_json, bad) = self.input_lines();
        crate::app::not_json::named(self.input.looks, lines, non_json, bad)
    }

    /// The input being read has ended: when it had lines and none was JSON, says so on
    /// stderr.
    pub(crate) fn end_input(&mut self) {
        let (lines, non_json, bad) = self.input_lines();
        if crate::app::not_json::named(self.input.looks, lines, non_json, bad) {
            crate::diag!(
                "tokentime: {}",
                crate::app::not_json::message(&self.input.name, self.input.looks, lines)
            );
            self.count(|cov| cov.inputs_named += 1);
        } else if let Some(what) = self.input.aggregates
            && lines > 0
            && self.claimed() == self.input.claimed_before
        {
            crate::diag!("tokentime: {}: {what}", self.input.name);
            self.count(|cov| cov.aggregate_lines += lines - non_json);
        } else if lines > 0
            && self.claimed() == self.input.claimed_before
            && let Some(msg) = self.input.unread_message()
        {
            crate::diag!("tokentime: {msg}");
        } else if lines > 0
            && self.claimed() == self.input.claimed_before
            && self.input.root.is_empty()
            && self.input.mapped.is_none()
            && let Some(hint) =
                crate::app::unmapped::root_hint(&self.proc.format_specs(), &self.input.head)
        {
            crate::diag!(
                "tokentime: {}: no line was read as a request; {hint}",
                self.input.name
            );
        }
        self.input.before = self.line_counts();
        self.input.claimed_before = self.claimed();
    }

    /// Names the input whose lines follow (the rows' `file` column, `--by '$file'`).
    pub fn set_input(&mut self, name: &str) {
        self.input = InputCheck {
            name: name.to_owned(),
            looks: crate::app::not_json::Looks::Text,
            aggregates: None,
            claimed_before: self.claimed(),
            mapped: self.input.mapped.take(),
            file_markers: std::mem::take(&mut self.input.file_markers),
            root: std::mem::take(&mut self.input.root),
            head: {
                let mut head = std::mem::take(&mut self.input.head);
                head.clear();
                head
            },
            before: self.line_counts(),
        };
        self.proc.set_input_name(name);
        if let Role::Enrich {
            rows: Some(rows), ..
        } = &mut self.role
        {
            rows.input.clear();
            rows.input.push_str(name);
        }
    }

    /// A worker for the same command with a copy of this one's processor
    /// ([`Processor::fork`]: it defers the lines of formats that join lines) and nothing
    /// counted: for a thread that reads one chunk of a file. A summary worker's part is its
    /// own, empty.
    pub fn fork(&self) -> Worker<'static> {
        let role = match &self.role {
            Role::Enrich {
                key,
                only_requests,
                rows,
                ..
            } => Role::Enrich {
                cov: Coverage::default(),
                key: key.clone(),
                only_requests: *only_requests,
                rows: rows.clone(),
                object: Vec::with_capacity(512),
            },
            Role::Summary {
                empty,
                template,
                bucket,
                seen,
                hand,
                verdict,
                ..
            } => {
                let dedupe = seen.is_some() || hand.is_some() || verdict.is_some();
                Role::Summary {
                    part: TallyRef::Own(empty.clone()),
                    empty: empty.clone(),
                    template: template.clone(),
                    inflight: Inflight::Emit(Vec::new()),
                    bucket: bucket.as_ref().map(|b| BucketRole {
                        style: b.style.clone(),
                        emit: Some(Vec::new()),
                    }),
                    seen: None,
                    hand: (dedupe && bucket.is_some()).then(Vec::new),
                    verdict: (dedupe && bucket.is_none()).then(Box::default),
                }
            }
        };
        Worker {
            proc: self.proc.fork(),
            role,
            input: InputCheck::default(),
            probe: None,
        }
    }

    /// True when the worker writes per-request rows (`--output csv|tsv|jsonl`).
    pub fn writes_rows(&self) -> bool {
        matches!(self.role, Role::Enrich { rows: Some(_), .. })
    }

    /// True when a line longer than `--max-line-bytes` is passed through (enrich without
    /// `--only-requests` or `--output` rows).
    pub fn passes_long_lines(&self) -> bool {
        matches!(
            self.role,
            Role::Enrich {
                only_requests: false,
                rows: None,
                ..
            }
        )
    }

    /// Handles one framed line: `prefix` (a BOM on the first line), `content`, `ending`
    /// (`\n`, `\r\n` or nothing), the `line_no`th of its input; writes what enrich outputs to
    /// `w`.
    ///
    /// # Errors
    /// The writer's.
    pub fn line(
        &mut self,
        line_no: u64,
        prefix: &[u8],
        content: &[u8],
        ending: &[u8],
        w: &mut impl Write,
    ) -> io::Result<LineOutcome> {
        let kind = self.proc.process(content);
        if let Kind::Invalid(_) = kind
            && let Some(parts) = crate::input::document::concatenated_objects(content)
        {
            return self.objects_in_line(line_no, [prefix, content, ending], &parts, w);
        }
        if let Kind::Invalid(_) = kind
            && let Some(at) = crate::input::lines::after_zero_fill(content)
        {
            return self.after_cut(line_no, [prefix, content, ending], at, w);
        }
        // Without NULs: only where what follows the cut is a request (an object at the end of
        // a line merely cut short, `..."usage": {"prompt_tokens": 5}`, is none).
        if let Kind::Invalid(_) = kind
            && let Some(at) = crate::input::lines::after_cut(content)
            && matches!(
                self.probe
                    .get_or_insert_with(|| Box::new(self.proc.fresh()))
                    .process(&content[at..]),
                Kind::Requests
            )
        {
            return self.after_cut(line_no, [prefix, content, ending], at, w);
        }
        let proc = &mut self.proc;
        let bad = match &kind {
            Kind::Deferred => return Ok(LineOutcome::Deferred),
            Kind::Invalid(msg) => vec![format!("invalid JSON: {msg}")],
            _ => unparseable(proc, content),
        };
        match &mut self.role {
            Role::Summary {
                part,
                template,
                inflight,
                bucket,
                seen,
                hand,
                verdict,
                ..
            } => {
                let mut guard = part.get();
                let p = &mut *guard;
                p.count(|cov| proc.count(&kind, cov));
                if matches!(kind, Kind::Requests) {
                    if p.keys.wants() {
                        match proc.line_records() {
                            Some(records) => p.keys.add_records(content, records),
                            None => p.keys.add_line(content, proc.record_root()),
                        }
                    }
                    for (k, r) in proc.requests().iter().enumerate() {
                        // A client's view of a request whose server's view is on the line:
                        // counted as a duplicate by `proc.count`.
                        if r.duplicate {
                            continue;
                        }
                        let gaps = &proc.gaps()[r.itl.0 as usize..(r.itl.0 + r.itl.1) as usize];
                        let by = proc.by_values(k);
                        if let Some(v) = verdict {
                            v.push(r, gaps, by, proc.note(k));
                            continue;
                        }
                        if let Some(h) = hand {
                            h.push(BucketInput {
                                request: *r,
                                gaps: gaps.to_vec(),
                                by: bounded_owned(by),
                                note: proc.note(k).cloned().map(Box::new),
                            });
                            continue;
                        }
                        // Outside `--since`/`--until` (counted as outside by `proc.count`):
                        // in flight only.
                        if r.outside {
                            inflight.push_presence(r);
                            continue;
                        }
                        if is_copy(seen.as_deref_mut(), r, p) {
                            continue;
                        }
                        let note = proc.note(k);
                        tally(
                            p,
                            (r, gaps, by, note),
                            template,
                            Some(inflight),
                            bucket.as_mut(),
                        );
                    }
                    inflight.drain(p);
                }
                let full = p.ready.len() > READY_LIMIT;
                drop(guard);
                if full {
                    part.wait_written();
                }
            }
            role @ Role::Enrich { .. } => {
                enrich_line(proc, role, &kind, line_no, [prefix, content, ending], w)?;
            }
        }
        Ok(LineOutcome::Done(bad))
    }

    /// A line of several JSON objects (`parts` of its `content`): each is read as a line of its own
    /// would be, numbered `line_no`. Enrich passes the line through byte for byte (its requests
    /// counted, not spliced in, as a document's); the row outputs write each one's rows.
    fn objects_in_line(
        &mut self,
        line_no: u64,
        [prefix, content, ending]: [&[u8]; 3],
        parts: &[std::ops::Range<usize>],
        w: &mut impl Write,
    ) -> io::Result<LineOutcome> {
        // A chunk's thread leaves the line to the in-order stage, which reads it whole.
        if self.proc.is_fork() {
            return Ok(LineOutcome::Deferred);
        }
        let rows = self.writes_rows();
        let mut bad = Vec::new();
        for part in parts {
            let object = &content[part.clone()];
            let outcome = if rows {
                self.line(line_no, b"", object, b"", w)?
            } else {
                self.line(line_no, b"", object, b"", &mut io::sink())?
            };
            if let LineOutcome::Done(why) = outcome {
                bad.extend(why);
            }
        }
        if self.passes_long_lines() {
            w.write_all(prefix)?;
            w.write_all(content)?;
            w.write_all(ending)?;
        }
        Ok(LineOutcome::Done(bad))
    }

    /// A line cut short, by NUL bytes or not, and then a JSON object
    /// (`{"a": 1, "b\0\0\0{"id": ...}`: a writer that crashed mid-line, the file's tail
    /// zero-filled, and the writer restarted after the zeros; `{"a": 1, "b{"id": ...}`, the same
    /// without the zeros): the bytes before the cut are counted as an invalid line and named;
    /// the object after them (from `at`) is read as a line of its own, numbered `line_no`,
    /// the bytes before it passed through as a prefix (as NULs at a line's start are) where
    /// enrich passes lines through.
    fn after_cut(
        &mut self,
        line_no: u64,
        [prefix, content, ending]: [&[u8]; 3],
        at: usize,
        w: &mut impl Write,
    ) -> io::Result<LineOutcome> {
        // A chunk's thread leaves the line to the in-order stage, which reads it whole.
        if self.proc.is_fork() {
            return Ok(LineOutcome::Deferred);
        }
        self.count(|cov| {
            cov.lines += 1;
            cov.invalid += 1;
        });
        let mut bad = vec![match content[..at].iter().position(|&b| b == 0) {
            Some(cut) => format!(
                "cut short at byte {cut} by NUL bytes (a crash's zero fill?): its first {cut} \
                 bytes are not read; the JSON after the NULs, at byte {at}, is read as a line of \
                 its own"
            ),
            None => format!(
                "cut short at byte {at} by a request's JSON (a line written without its end, then \
                 the next one?): its first {at} bytes are not read; the JSON at byte {at} is \
                 read as a line of its own"
            ),
        }];
        let through = self.passes_long_lines();
        if through {
            w.write_all(prefix)?;
        }
        let before = if through { &content[..at] } else { b"" };
        if let LineOutcome::Done(why) = self.line(line_no, before, &content[at..], ending, w)? {
            bad.extend(why);
        }
        Ok(LineOutcome::Done(bad))
    }

    /// Counts a line longer than `max_line_bytes` (its bytes are the caller's to pass on) and
    /// returns the diagnostic.
    pub fn too_long(&mut self, max_line_bytes: usize) -> String {
        self.count(|cov| {
            cov.lines += 1;
            cov.too_long += 1;
        });
        format!("line longer than --max-line-bytes {max_line_bytes}")
    }

    /// Counts, with `f`, in the coverage of the role (and of a summary's current slice).
    fn count(&mut self, f: impl Fn(&mut Coverage)) {
        match &mut self.role {
            Role::Enrich { cov, .. } => f(cov),
            Role::Summary { part, .. } => part.get().count(f),
        }
    }

    /// Counts, in `cov`, one more invalid line (a JSON document that could not be read).
    pub fn count_invalid(&mut self) {
        match &mut self.role {
            Role::Enrich { cov, .. } => cov.invalid += 1,
            Role::Summary { part, .. } => part.get().cov.invalid += 1,
        }
    }

    /// Ends the input: multi-line requests still in flight are counted as unfinished; the
    /// in-flight sweep places what it holds.
    pub fn finish(&mut self) {
        let proc = &mut self.proc;
        match &mut self.role {
            Role::Enrich { cov, .. } => proc.finish(cov),
            Role::Summary {
                part,
                inflight,
                seen,
                ..
            } => {
                let mut p = part.get();
                proc.finish(&mut p.cov);
                inflight.finish(&mut p);
                if let Some(s) = seen {
                    p.key_sample.extend(s.take_sample());
                    s.clear();
                }
            }
        }
    }

    /// Makes this summary worker keep the identities of the requests it counts that are below
    /// `bound` (a sample of them, to tell requests two inputs both hold): its part has them at
    /// the end of the input ([`Tally::key_sample`]). Nothing without a seen set
    /// (`--keep-duplicates`).
    pub fn sample_keys(&mut self, bound: u64) {
        if let Role::Summary { seen: Some(s), .. } = &mut self.role {
            s.sample_below(bound);
        }
    }

    /// Makes this summary worker the caller of chunk workers for its input: the in-flight
    /// sweep gets their requests ([`Worker::feed_sweep`]) and its own, in input order, and
    /// keeps what it places apart until [`Worker::finish`], when the chunk workers' parts
    /// have been added to this one's. (Before any line.)
    pub fn sweep_apart(&mut self) {
        if let Role::Summary {
            inflight, template, ..
        } = &mut self.role
        {
            *inflight = Inflight::Apart(
                Box::new(Sweep::new(MAX_PENDING)),
                Box::new(template.empty_like()),
            );
        }
    }

    /// In a chunk worker: starts a chunk.
    pub fn new_chunk(&mut self) {
        self.proc.new_chunk();
    }

    /// In a chunk worker: the in-flight sweep's entries so far in this chunk.
    pub fn sweep_len(&self) -> usize {
        match &self.role {
            Role::Summary {
                inflight: Inflight::Emit(v),
                ..
            } => v.len(),
            _ => 0,
        }
    }

    /// In a chunk worker, at the end of a chunk: the in-flight sweep's entries, in order.
    pub fn take_sweep(&mut self) -> Vec<SweepInput> {
        match &mut self.role {
            Role::Summary {
                inflight: Inflight::Emit(v),
                ..
            } => std::mem::take(v),
            _ => Vec::new(),
        }
    }

    /// In a chunk worker: the requests handed on for `--bucket` windows so far in this chunk.
    pub fn buckets_len(&self) -> usize {
        match &self.role {
            Role::Summary {
                bucket: Some(BucketRole { emit: Some(v), .. }),
                ..
            } => v.len(),
            _ => 0,
        }
    }

    /// In a chunk worker, at the end of a chunk: the requests handed on for `--bucket`
    /// windows, in order.
    pub fn take_buckets(&mut self) -> Vec<BucketInput> {
        match &mut self.role {
            Role::Summary {
                bucket: Some(BucketRole { emit: Some(v), .. }),
                ..
            } => std::mem::take(v),
            _ => Vec::new(),
        }
    }

    /// Adds a chunk worker's requests to their `--bucket` windows (in input order, between the
    /// lines this worker handles itself), and renders the windows they complete.
    pub fn feed_buckets(&mut self, entries: &[BucketInput]) {
        let Role::Summary {
            part,
            template,
            bucket: Some(role),
            ..
        } = &mut self.role
        else {
            return;
        };
        let mut guard = part.get();
        let p = &mut *guard;
        let Some(b) = &mut p.buckets else {
            return;
        };
        for e in entries {
            let by = ByValues::options(&e.by);
            add_to_window(b, role, &e.request, &e.gaps, by, template, &mut p.ready);
        }
        let full = p.ready.len() > READY_LIMIT;
        drop(guard);
        if full {
            part.wait_written();
        }
    }

    /// In a chunk worker that sets copies aside: the requests handed on so far in this chunk.
    pub fn handed_len(&self) -> usize {
        match &self.role {
            Role::Summary { hand: Some(v), .. } => v.len(),
            _ => 0,
        }
    }

    /// In a chunk worker, at the end of a chunk: the requests handed on, in order.
    pub fn take_handed(&mut self) -> Vec<BucketInput> {
        match &mut self.role {
            Role::Summary { hand: Some(v), .. } => std::mem::take(v),
            _ => Vec::new(),
        }
    }

    /// In a chunk worker that awaits verdicts: the requests read so far in this chunk.
    pub fn keyed_len(&self) -> usize {
        match &self.role {
            Role::Summary {
                verdict: Some(v), ..
            } => v.keyed.len(),
            _ => 0,
        }
    }

    /// In a chunk worker that awaits verdicts, at the end of a chunk: its requests as the
    /// caller tells copies from them, in order, and the requests themselves, to be added once
    /// it has ([`Applier::apply`]); `fresh` (emptied) holds the next chunk's.
    pub(crate) fn take_keyed(&mut self, fresh: Option<Pending>) -> (Vec<Keyed>, Option<Pending>) {
        let Role::Summary {
            verdict: Some(v), ..
        } = &mut self.role
        else {
            return (Vec::new(), None);
        };
        let read = std::mem::replace(&mut v.current, fresh.unwrap_or_default());
        // The next chunk's list starts with this one's room: grown from empty, it was copied
        // at each doubling, chunk after chunk.
        let room = Vec::with_capacity(v.keyed.len());
        (std::mem::replace(&mut v.keyed, room), Some(read))
    }

    /// In a chunk worker that awaits verdicts: its summary, taken out of its part until
    /// [`Worker::restore`] (meanwhile nothing else is added to it).
    pub(crate) fn applier(&mut self) -> Option<Applier> {
        let Role::Summary {
            part,
            template,
            verdict: Some(_),
            ..
        } = &mut self.role
        else {
            return None;
        };
        let mut p = part.get();
        let summary = std::mem::replace(&mut p.summary, template.empty_like());
        let slice = p
            .slice
            .as_mut()
            .map(|(_, s)| std::mem::replace(s, template.empty_like()));
        Some(Applier { summary, slice })
    }

    /// Puts the summary taken by [`Worker::applier`] back in its part.
    pub(crate) fn restore(&mut self, a: Applier) {
        let Role::Summary { part, .. } = &mut self.role else {
            return;
        };
        let mut p = part.get();
        p.summary = a.summary;
        if let (Some((_, s)), Some(a)) = (&mut p.slice, a.slice) {
            *s = a;
        }
    }

    /// Tells copies among a chunk worker's requests (in input order, between the lines this
    /// worker handles itself): a copy of one seen before is counted and its index (`first` the
    /// index of `entries[0]` in its chunk) pushed to `copies`; the others enter the in-flight
    /// sweep.
    pub fn feed_keyed(&mut self, entries: &[Keyed], first: usize, copies: &mut Vec<u32>) {
        let Role::Summary {
            part,
            inflight,
            seen,
            ..
        } = &mut self.role
        else {
            return;
        };
        if entries.is_empty() {
            return;
        }
        let mut guard = part.get();
        let p = &mut *guard;
        for (i, e) in entries.iter().enumerate() {
            // The table line of a key a few ahead is fetched while this one is told.
            if let (Some(seen), Some(Keyed { key: Some(k), .. })) =
                (seen.as_deref(), entries.get(i + PREFETCH_AHEAD))
            {
                seen.prefetch(*k);
            }
            if let (Some(seen), Some(key)) = (seen.as_deref_mut(), e.key) {
                if seen.seen_before(key, e.end) {
                    p.count(|c| c.duplicates += 1);
                    copies.push((first + i) as u32);
                    continue;
                }
                if seen.behind {
                    p.count(|c| c.behind_horizon += 1);
                }
            }
            if let (Some(s), Inflight::Apart(sw, side)) = (&e.sweep, &mut *inflight) {
                let decode = s.decode.as_ref().map(|(d, cache, by, tpot)| {
                    (*d, (side.group_ids(*cache, ByValues::options(by)), *tpot))
                });
                sw.push(s.start, s.end, decode);
            }
        }
        inflight.drain(p);
    }

    /// Adds a chunk worker's requests (in input order, between the lines this worker handles
    /// itself): a copy of one seen before is set aside, the others are added as this worker's
    /// own are.
    pub fn feed_handed(&mut self, entries: &[BucketInput]) {
        let Role::Summary {
            part,
            template,
            inflight,
            bucket,
            seen,
            ..
        } = &mut self.role
        else {
            return;
        };
        if entries.is_empty() {
            return;
        }
        let mut guard = part.get();
        let p = &mut *guard;
        for e in entries {
            if e.request.outside {
                inflight.push_presence(&e.request);
                continue;
            }
            if is_copy(seen.as_deref_mut(), &e.request, p) {
                continue;
            }
            let by = ByValues::options(&e.by);
            tally(
                p,
                (&e.request, &e.gaps, by, e.note.as_deref()),
                template,
                Some(&mut *inflight),
                bucket.as_mut(),
            );
        }
        inflight.drain(p);
        let full = p.ready.len() > READY_LIMIT;
        drop(guard);
        if full {
            part.wait_written();
        }
    }

    /// Enters a chunk worker's in-flight sweep entries (in input order, between the lines this
    /// worker handles itself).
    pub fn feed_sweep(&mut self, entries: &[SweepInput]) {
        let Role::Summary { inflight, .. } = &mut self.role else {
            return;
        };
        let Inflight::Apart(sw, side) = inflight else {
            return;
        };
        for e in entries {
            let decode = e.decode.as_ref().map(|(d, cache, by, tpot)| {
                (*d, (side.group_ids(*cache, ByValues::options(by)), *tpot))
            });
            sw.push(e.start, e.end, decode);
        }
        for (mean, (ids, tpot)) in sw.drain() {
            side.add_inflight(&ids, mean, tpot);
        }
    }

    /// In a chunk worker, after a line came back deferred: the pieces of a split line it
    /// completes (see [`Processor::take_handover`]).
    pub fn take_handover(&mut self) -> Option<(usize, Vec<u8>)> {
        self.proc.take_handover()
    }

    /// In a chunk worker, at the end of a chunk: the pieces of split lines held for the next
    /// one ([`Processor::take_held`]).
    pub fn take_held(&mut self) -> [Option<Vec<u8>>; 2] {
        self.proc.take_held()
    }

    /// Sets the pieces of a split line held for `stream` (from a chunk worker).
    pub fn set_held(&mut self, stream: usize, pieces: Vec<u8>) {
        self.proc.set_held(stream, pieces);
    }

    /// What the lines held so far (enrich; a summary worker's is in its part).
    pub fn coverage(&self) -> Option<&Coverage> {
        match &self.role {
            Role::Enrich { cov, .. } => Some(cov),
            Role::Summary { .. } => None,
        }
    }

    /// Adds the counters and digests of `other`, a worker of the same run, to this one.
    pub fn merge(&mut self, other: Worker<'_>) {
        match (&mut self.role, other.role) {
            (Role::Enrich { cov, .. }, Role::Enrich { cov: theirs, .. }) => cov.merge(&theirs),
            (
                Role::Summary { part, template, .. },
                Role::Summary {
                    part: mut theirs, ..
                },
            ) => {
                let theirs = theirs.get();
                part.get().absorb(&theirs, template);
            }
            _ => {}
        }
    }
}

/// [`Worker::line`] for enrich (`role`): counts the line `proc` processed as `kind`, and writes
/// its rows, or the line with its requests' metrics spliced in, or the line as it came.
fn enrich_line(
    proc: &mut Processor,
    role: &mut Role,
    kind: &Kind,
    line_no: u64,
    [prefix, content, ending]: [&[u8]; 3],
    w: &mut impl Write,
) -> io::Result<()> {
    let Role::Enrich {
        cov,
        key,
        only_requests,
        rows,
        object,
    } = role
    else {
        return Ok(());
    };
    proc.count(kind, cov);
    if let Some(rows) = rows {
        if let Kind::Requests = kind {
            render::write_request_rows(w, rows, proc, content, line_no)?;
        }
        return Ok(());
    }
    let spliced = match kind {
        Kind::Requests => {
            object.clear();
            enrich::render_all(
                object,
                key,
                proc.requests(),
                |f| &proc.format_spec(f).name,
                |k| proc.note(k).and_then(|n| n.reason.as_deref()),
            )?;
            w.write_all(prefix)?;
            enrich::splice(w, content, object)?
        }
        _ if *only_requests => return Ok(()),
        _ => false,
    };
    if !spliced {
        w.write_all(prefix)?;
        w.write_all(content)?;
    }
    w.write_all(ending)
}

/// Why the line `proc` processed last is bad, a message each: every request of it with a field
/// present but not readable ([`unreadable`]: a benchmark file's or an OTLP export's records
/// one by one); every request with an instant of no plausible time ([`implausible`]); every
/// request whose times disagree ([`anomalies`]); and what the line's run-level fields
/// say wrong (a vLLM result's arrays of different lengths, its `duration`).
fn unparseable(proc: &Processor, line: &[u8]) -> Vec<String> {
    // Most lines: nothing to say, told in one pass.
    let odd = |r: &Request| {
        r.unparseable.is_some()
            || r.implausible != 0
            || r.metrics.negative_interval
            || r.metrics.out_of_order
    };
    if proc.run_notes().is_empty() && !proc.requests().iter().any(odd) {
        return Vec::new();
    }
    let mut why = unreadable(proc, line);
    name_each(
        proc,
        |r| r.implausible != 0,
        |k| implausible(proc, line, k),
        "with no plausible time",
        &mut why,
    );
    anomalies(proc, line, &mut why);
    why.extend(proc.run_notes().iter().cloned());
    why
}

/// Adds to `why` a message for each request of the line `proc` processed last whose times
/// disagree (an interval that comes out negative, instants out of order: clock skew, a unit
/// mixed up), at most [`NAMED_PER_LINE`]: the times its format read, as logged.
fn anomalies(proc: &Processor, line: &[u8], why: &mut Vec<String>) {
    name_each(
        proc,
        |r| r.metrics.negative_interval || r.metrics.out_of_order,
        |k| anomaly(proc, line, k),
        "whose times disagree",
        why,
    );
}

/// Why request `k` of the line `proc` processed last is an anomaly ([`anomalies`]).
fn anomaly(proc: &Processor, line: &[u8], k: usize) -> String {
    let r = &proc.requests()[k];
    let (what, reason, null) = if r.metrics.out_of_order {
        (
            "instants out of order",
            "out_of_order",
            "which is wrong is unknown: the metrics that need them are null",
        )
    } else {
        (
            "a negative interval",
            "negative_interval",
            "the metrics that come out negative are null",
        )
    };
    let (which, record) = request_record(proc, line, k);
    let spec = proc.format_spec(r.format);
    let mut values: Vec<String> = TIMES
        .iter()
        .filter_map(|field| {
            let name = field.name();
            let (path, v) = crate::format::logged_at(spec, name, record.as_ref()?)?;
            Some(format!("{path} {v} ({name})"))
        })
        .collect();
    // A token gap negative: its element (the list is cut short in a message).
    if r.metrics.itl_negative
        && let Some(rec) = &record
        && let Some((path, _)) = crate::format::logged_at(spec, "itl", rec)
        && let Some((i, v)) = crate::format::negative_gap(spec, rec)
    {
        values.push(format!("{path} element {i}: {v} (itl)"));
    }
    // The times as logged, where the record's tree holds them at their paths (none found:
    // none listed).
    let listed = if values.is_empty() {
        String::new()
    } else {
        format!(": {}", values.join(", "))
    };
    format!(
        "{which}{what}{listed}, as {} reads them: {null}, reason {reason}",
        spec.name,
    )
}

/// The instants and durations a request's latency is made of, in the order a message lists
/// them.
const TIMES: [crate::format::Field; 9] = {
    use crate::format::Field;
    [
        Field::Arrival,
        Field::Scheduled,
        Field::FirstToken,
        Field::End,
        Field::Queue,
        Field::Prefill,
        Field::Ttft,
        Field::Decode,
        Field::E2e,
    ]
};

/// How request `k` of the line `proc` processed last is named in a message, and the record its
/// values are read from: a benchmark file's i-th request or an OTLP span by its record, else
/// the line (under `--root`).
fn request_record(proc: &Processor, line: &[u8], k: usize) -> (String, Option<serde_json::Value>) {
    match proc.request_record(k) {
        Some((i, text)) => (
            format!("record {i} (from 0): "),
            crate::format::record_value(text, &[]),
        ),
        None => (
            String::new(),
            crate::format::record_value(line, proc.record_root()),
        ),
    }
}

/// Request `k` of the line `proc` processed last has an instant its unit reads as before 2000
/// or after 2200: the first such field named, with its value as logged; with `--map`'s format
/// or a formats file's (epoch milliseconds mapped as `:epoch_s`) with the units that could
/// read it, where the report would only count implausible instants and say the log has no
/// TTFT.
fn implausible(proc: &Processor, line: &[u8], k: usize) -> String {
    let r = &proc.requests()[k];
    let spec = proc.format_spec(r.format);
    use crate::format::Field;
    let name = [
        Field::Arrival,
        Field::Scheduled,
        Field::FirstToken,
        Field::End,
        Field::LoggedAt,
    ]
    .into_iter()
    .find(|&f| r.implausible & crate::format::instant_bit(f) != 0)
    .map_or("instant", Field::name);
    let (which, record) = request_record(proc, line, k);
    let value = record
        .as_ref()
        .and_then(|rec| crate::format::logged_at(spec, name, rec))
        .map_or(String::new(), |(_, v)| format!("{v} is "));
    // What the message starts with: the request, the field, its value.
    let field = format!("{which}{name}: {value}");
    if !spec.users_units() {
        // A built-in format reads the producer's unit: the value, not the unit, is wrong.
        return format!(
            "{field}not a plausible time as {} reads it ({}: before 2000 or after 2200): \
             the metrics that need it are null, reason implausible_instant",
            spec.name,
            crate::format::field_source(spec, name),
        );
    }
    use crate::format::units::Unit;
    let given: Vec<Unit> = spec
        .fields
        .iter()
        .filter(|r| r.field.name() == name)
        .map(|r| r.unit)
        .collect();
    let others: Vec<String> = [Unit::EpochS, Unit::EpochMs, Unit::EpochUs, Unit::EpochNs]
        .into_iter()
        .filter(|u| !given.contains(u))
        .map(|u| spec.unit_syntax(u.name()))
        .collect();
    format!(
        "{field}not a plausible time as {} reads it ({}: before 2000 or after 2200); \
         another unit may read it ({}; {} tells them by magnitude): the metrics that need \
         it are null, reason implausible_instant",
        spec.name,
        crate::format::field_source(spec, name),
        others.join(", "),
        spec.unit_syntax("epoch")
    )
}

/// [`unparseable`]: each request of `line` with fields present but not readable (at most
/// [`NAMED_PER_LINE`], then a count), each field with the value the line holds.
fn unreadable(proc: &Processor, line: &[u8]) -> Vec<String> {
    let mut why = Vec::new();
    name_each(
        proc,
        |r| r.unparseable.is_some(),
        |k| unreadable_one(proc, line, k),
        "with a value present but not readable",
        &mut why,
    );
    why
}

/// Adds to `why` the message `name(k)` of each request `k` of the line `proc` processed last
/// that is `bad`, the first [`NAMED_PER_LINE`] of them, and one message counting the others
/// (`more records {what}`).
fn name_each(
    proc: &Processor,
    bad: impl Fn(&Request) -> bool,
    name: impl Fn(usize) -> String,
    what: &str,
    why: &mut Vec<String>,
) {
    let mut bad = (proc.requests().iter().enumerate()).filter(|(_, r)| bad(r));
    why.extend(bad.by_ref().take(NAMED_PER_LINE).map(|(k, _)| name(k)));
    let more = bad.count();
    if more > 0 {
        why.push(format!("{more} more records {what} (not named one by one)"));
    }
}

/// The requests of one line (a benchmark file's records, an OTLP export's spans) named one by
/// one at most when their values are not readable; the others are counted in one message.
const NAMED_PER_LINE: usize = 100;

/// Why request `k` of the line `proc` processed last is bad: its fields present but not
/// readable, with their values and where the format reads them.
fn unreadable_one(proc: &Processor, line: &[u8], k: usize) -> String {
    use crate::format::Field;
    let r = &proc.requests()[k];
    let spec = proc.format_spec(r.format);
    // In the order the format reads them.
    let mut fields: Vec<&'static str> = Vec::new();
    for rule in &spec.fields {
        let name = rule.field.name();
        if r.unreadable & (1u32 << (rule.field as u32)) != 0 && !fields.contains(&name) {
            fields.push(name);
        }
    }
    if fields.is_empty() {
        fields.extend(r.unparseable);
    }
    let (which, record) = request_record(proc, line, k);
    let mut named = Vec::new();
    let mut sources = Vec::new();
    for &field in &fields {
        let value = record
            .as_ref()
            .and_then(|r| crate::format::logged_value(spec, field, r));
        let gap = (field == Field::Itl.name())
            .then(|| crate::format::unreadable_gap(spec, record.as_ref()?))
            .flatten()
            .map_or_else(String::new, |(i, v)| format!(" (element {i}: {v})"));
        named.push(match &value {
            Some(v) => format!("{field} {v}{gap}"),
            None => field.to_owned(),
        });
        sources.push(format!(
            "{}{}",
            crate::format::field_source(spec, field),
            crate::format::unit_hint(spec, field, value.as_deref())
        ));
    }
    let them = if fields.len() == 1 { "it" } else { "them" };
    // The time a line was logged places the request in time and enters no metric.
    let what = if fields.iter().all(|&f| f == Field::LoggedAt.name()) {
        format!("no time of the request is read from {them} (its metrics stand)")
    } else {
        format!("the metrics that need {them} are null, reason unparseable")
    };
    format!(
        "{which}{}: present but not readable as {} reads {them} ({}): {what}",
        named.join(", "),
        spec.name,
        sources.join("; ")
    )
}

/// The processor of a worker: `config`'s formats, root, prefix and join limits; `key` the
/// enrich key; `by` the `--by` paths.
fn processor(config: &Config, key: Option<&str>, by: &[Vec<String>]) -> Processor {
    let mut proc = Processor::new(
        config.formats.clone(),
        &config.root,
        key,
        by,
        config.cache_hit_ratio,
    );
    proc.set_prefix(config.prefix.clone());
    proc.set_join_limits(config.max_inflight, config.join_timeout_ns);
    proc.set_max_line(config.max_line_bytes);
    if config.reference_parser {
        proc.use_reference_parser();
    }
    proc
}
