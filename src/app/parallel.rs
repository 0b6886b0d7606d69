//! Parallel reading of one file: chunks of whole lines, one [`Worker`] per thread, results put
//! back in input order.
//!
//! Shape: the workers read the file in turns (chunk `k` is handled by worker `k % n`, and read
//! on its thread unless that worker is late: then another reads it for it, up to a few chunks,
//! so that a worker kept off its core does not hold the others up), in chunks
//! (`--chunk-bytes`, 512 KiB) of reused buffers, cut after the last newline; each worker frames
//! and handles the lines of its chunks exactly as the one-thread path does and hands over, per
//! chunk, the enrich output, its bad lines and how many lines it held. A chunk's lines are
//! numbered from its start, and renumbered by the in-order stage, which knows how many lines
//! the chunks before held (per-request rows, which carry their line's number, are numbered as
//! the chunks are read instead: one more pass over each chunk, on the reading thread). The in-order
//! stage, run by the workers themselves, one at a time ([`Ordered`]: the calling thread only
//! waits for them), writes the outputs in chunk order and reports the bad lines in order; at
//! the end the calling thread gets the workers back to merge their counters and summaries. At
//! most a few chunks per worker are in flight, so memory stays bounded whatever the file size.
//!
//! The in-order stage has a worker of its own, the caller's (the one that reads the inputs
//! that are not chunked). Lines of a format whose requests span several lines (Ollama streams,
//! llama.cpp's legacy log) must meet in one processor, in input order: the chunk workers leave
//! them untouched ([`LineOutcome::Deferred`]) and the in-order stage hands them, in order and
//! at their place in the output, to its worker. When every format in use joins lines, the
//! file is not chunked at all ([`applies`]). Lines split by Docker or the kubelet (pieces of
//! one long line) are read by the chunk worker when the pieces are all in its chunk; the
//! pieces at the start of a chunk, up to the first line that ends one on each stream, go to
//! the in-order stage, and the pieces held at the end of a chunk are handed over to it. The
//! in-flight sweep of `summary` (requests in flight during each decode) needs every request of
//! the input in order: chunk workers hand each request's start and end to the in-order stage,
//! whose worker sweeps them in order. A summary that sets aside the records read again (the
//! default, not `--keep-duplicates`) must tell them in input order too: its chunk workers hand
//! each request's identity (and its sweep entry) on, the in-order stage's worker tells the
//! copies in order (and enters the others in the sweep); the chunk's requests, handed over
//! with it, then wait with that verdict (which of them are copies) until a thread adds the
//! others to the summary of the chunk's worker ([`Applies`]): its worker after its next chunk,
//! or one that would otherwise wait, a worker's chunks one at a time and in order, so the
//! result is the same whichever thread adds them. With
//! `--bucket` (windows are filled in input order) the chunk workers add nothing: they hand
//! every request on, and the in-order stage's worker tells the copies and adds the others (and
//! enters them in the sweep and the windows) in order.
//!
//! What is the same as on one thread: every output byte and its order, the coverage counters,
//! the diagnostics (lines numbered in the file), exact quantiles. What may differ: t-digest
//! estimates past `--exact-limit` values in a group (partial digests are merged), which keys
//! fall into `(other)` once `--max-groups` is reached, and, for a line that the markers of
//! several formats match, which of them it is attributed to (each worker starts from the
//! first format, one thread from the format of the line before). Round-robin dispatch (not
//! work stealing) keeps the split, and so those estimates, the same from run to run.
//!
//! Not used for standard input from a pipe or terminal (it may be a live `tail -F`: lines must
//! come out as they come in), nor for a JSON document, an array or pretty-printed objects (its
//! records are not lines).

use crate::app::buckets::BucketInput;
use crate::app::driver::{ChunkLine, chunk_lines};
use crate::app::worker::{Applier, Keyed, LineOutcome, Pending, SweepInput, Worker};
use crate::cli::config::{Command, Config};
use crate::input::lines::ReadBuf;
use crate::input::source::Source;
use std::collections::{BTreeMap, VecDeque};
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Condvar, Mutex, MutexGuard};

/// True when `source` may be read in chunks by several threads: more than one thread, a file
/// of more than one chunk (or standard input that is a regular file), and some format in use
/// that does not join lines. (A JSON document is told apart by the caller, which peeks
/// at it.)
pub(crate) fn applies(config: &Config, source: &Source) -> bool {
    let chunks = match source {
        Source::Path(p) => std::fs::metadata(p).is_ok_and(|m| m.len() > config.chunk_bytes as u64),
        Source::Stdin => config.stdin_is_file,
    };
    config.threads > 1 && chunks && !config.formats.iter().all(|f| f.join.is_some())
}

/// How many chunks of a late worker the others may read for it: a worker that the calling
/// thread (or another process) keeps off its core for a while does not hold the others up.
/// Two, not four: the worker ahead now has the in-order stage's work to do meanwhile, and on
/// the 1 GiB log of `benches/throughput.sh` four held ~1.5 MB more at the peak for no speed
/// (summary --threads 2, 7 alternating runs: 0.75 s with four, 0.71 s with two).
const PARKED: usize = 2;

/// How many chunks per worker may wait, done, for the in-order stage to take them.
///
/// A worker that finds no room for its chunk waits (and runs the in-order stage meanwhile when
/// the next chunk is there). When the in-order stage ran on a thread of its own, on the 1 GiB
/// log of `benches/throughput.sh` (2-core VM, 21 alternating runs of `summary --threads 2`),
/// room for 4 instead of 1 took the median from 0.91 to 0.88 s; verdicts 4 chunks ahead instead
/// of 2 gained no more (0.87 s) and held ~2 MB more of requests awaiting them.
const DONE_AHEAD: usize = 4;

/// A chunk of the input, numbered in input order.
struct Job {
    seq: u64,
    /// Lines of the input before this chunk when the reader numbers them ([`Reader::number`]);
    /// else 0, and the chunk's lines are numbered from there, then renumbered in the in-order
    /// stage ([`Writer::lines`]).
    first_line: u64,
    buf: ReadBuf,
    len: usize,
    what: Piece,
}

enum Piece {
    /// Whole lines (the last one may lack its newline at the end of input).
    Lines,
    /// Part of a line longer than `--max-line-bytes`; `last` ends the line.
    Long { last: bool },
}

/// A line a worker left to the in-order stage.
struct Left {
    /// Where its output goes in the chunk's output.
    out_at: usize,
    /// Where its requests go among the chunk's in-flight sweep entries.
    sweep_at: usize,
    /// And among the requests handed on for `--bucket` windows.
    buckets_at: usize,
    /// And among the requests handed on to be told from copies.
    handed_at: usize,
    /// And among the requests handed on to be told from copies, awaiting a verdict.
    keyed_at: usize,
    line_no: u64,
    /// Its bytes in the chunk (with its ending), and the lengths of its prefix and content
    /// in them (its framing).
    start: usize,
    prefix: usize,
    content: usize,
    end: usize,
    /// The pieces of a split line it completes, held by the worker: (stream, bytes).
    handover: Option<(usize, Vec<u8>)>,
}

/// What a worker made of a chunk.
struct Done {
    seq: u64,
    /// Its job's `first_line`, and the number of lines it held.
    first_line: u64,
    lines: u64,
    /// Enrich output.
    out: Vec<u8>,
    /// Bad lines: line number in the input and reason; at most `--max-diagnostics`.
    bad: Vec<(u64, String)>,
    /// Bad lines beyond those.
    more_bad: u64,
    /// Lines left to the in-order stage, in order.
    left: Vec<Left>,
    /// The chunk's in-flight sweep entries (summary), in order.
    sweep: Vec<SweepInput>,
    /// The chunk's requests for `--bucket` windows (summary), in order.
    buckets: Vec<BucketInput>,
    /// The chunk's requests handed on to be told from copies and added (summary), in order.
    handed: Vec<BucketInput>,
    /// The chunk's requests handed on to be told from copies (summary), in order, and the
    /// requests themselves, added to its worker's summary after the verdict ([`Applies`]).
    keyed: Vec<Keyed>,
    /// The requests themselves (`None` when none wait for a verdict).
    pending: Option<Pending>,
    /// Pieces of split lines held at the end of the chunk, per stream.
    held: [Option<Vec<u8>>; 2],
    /// The input buffer when lines were left (the in-order stage reads them from it, then
    /// hands it back for reuse); else the worker has handed it back.
    buf: Option<ReadBuf>,
}

/// What [`run_file`] leaves to its caller.
pub(crate) struct Finished {
    /// The chunk workers, whose counters and summaries the caller merges.
    pub workers: Vec<Worker<'static>>,
    /// The input's read error, when reading stopped on one (the lines before it were read).
    pub input_error: Option<io::Error>,
}

/// The caller's side of [`run_file`], used by the in-order stage: its worker, which handles the
/// lines the chunk workers defer, in order and at their place; the output; where bad lines are
/// reported.
pub(crate) struct Caller<'a, 's, W: Write> {
    pub(crate) seq: &'a mut Worker<'s>,
    /// Enrich output, written in input order.
    pub(crate) w: &'a mut W,
    pub(crate) flush_each_chunk: bool,
    /// Bad lines in order: (line number, reason), or (line, `None`) for one past
    /// `--max-diagnostics` whose reason was not kept.
    pub(crate) report: &'a mut (dyn FnMut(u64, Option<&str>) + Send),
}

/// Reads `input` (a file's bytes) with `config.threads` workers made by `make`; the caller's
/// side is `caller`. Stops reading early when `stop` is set.
///
/// # Errors
/// The output's (or the caller's worker's writing) errors.
pub(crate) fn run_file<W: Write + Send>(
    config: &Config,
    input: Box<dyn Read + Send>,
    make: &(dyn Fn() -> Worker<'static> + Sync),
    caller: Caller<'_, '_, W>,
    stop: Option<&AtomicBool>,
) -> io::Result<Finished> {
    let n = config.threads.max(1);
    let chunk = config.chunk_bytes.max(1);
    let (free_tx, free_rx) = mpsc::channel::<ReadBuf>();
    let out_pool = Mutex::new(Vec::<Vec<u8>>::new());
    let line_cap = config
        .max_line_bytes
        .saturating_add(crate::input::lines::SPLICE_ROOM + 2);
    // Per-request rows carry their line's number: chunks are numbered as they are read.
    // Otherwise only the in-order stage needs the numbers (bad lines, the lines left to it),
    // and it counts them from the chunks' own framing: the reader, one thread at a time,
    // does not count each chunk's newlines.
    let number = matches!(&config.command, Command::Enrich(e) if e.rows.is_some());
    let turns = Turns::new(input, (chunk, line_cap), free_rx, stop, (n, number));
    let applies = Applies::new(n);
    let ordered = Ordered {
        writer: Mutex::new(Writer {
            caller,
            free: free_tx.clone(),
            out_pool: &out_pool,
            scratch: Vec::new(),
            copies: Vec::new(),
            lines: 0,
        }),
        queue: Mutex::new(Queue {
            waiting: BTreeMap::new(),
            next: 0,
            writing: false,
            idle: 0,
            failed: None,
        }),
        changed: Condvar::new(),
        ahead: DONE_AHEAD * n,
        applies: &applies,
    };
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..n)
            .map(|me| {
                let free = free_tx.clone();
                let (out_pool, turns, ordered) = (&out_pool, &turns, &ordered);
                scope.spawn(move || {
                    let _leave = Leave(turns);
                    // A worker that panics (handling a chunk, or writing in its turn) never
                    // hands its chunk over, or never ends its turn: the others stop. Run after
                    // the worker's frames unwound, when it holds no lock.
                    let _failed = OnPanic(|| {
                        ordered.queue().failed = Some(io::Error::other("a worker panicked"));
                        ordered.changed.notify_all();
                    });
                    let mut worker = make();
                    ordered.applies.part(me).applier = worker.applier();
                    let place = (turns, me, n);
                    work(config, worker, place, (ordered, free), out_pool)
                })
            })
            .collect();
        let mut workers: Vec<Worker<'static>> = workers
            .into_iter()
            .map(|h| h.join().expect("a worker panicked"))
            .collect();
        let mut q = ordered.queue();
        if let Some(e) = q.failed.take() {
            return Err(e);
        }
        // The chunks a worker behind handed over last, left to a worker ahead that had ended
        // by then.
        let mut q = ordered.write(q);
        if let Some(e) = q.failed.take() {
            return Err(e);
        }
        debug_assert!(q.waiting.is_empty(), "every chunk handed over was written");
        drop(q);
        // The chunks whose requests still wait to be added (the last ones written).
        for (me, worker) in workers.iter_mut().enumerate() {
            applies.drain(me);
            if let Some(a) = applies.part(me).applier.take() {
                worker.restore(a);
            }
        }
        let read = turns.lock().end.take().unwrap_or(Ok(()));
        // Every chunk read was written: the lines read before the error are the writer's.
        let lines = ordered.writer.lock().map_or(0, |w| w.lines);
        Ok(Finished {
            workers,
            input_error: read
                .err()
                .map(|(e, cut)| crate::input::lines::read_error(e, lines, cut)),
        })
    })
}

/// A buffer of at least `len` bytes: a returned one when it is big enough.
fn buffer(free: &Receiver<ReadBuf>, len: usize) -> ReadBuf {
    while let Ok(b) = free.try_recv() {
        if b.len() >= len {
            return b;
        }
    }
    ReadBuf::new(len)
}

/// The input, read by the workers in turns: chunk `k` by worker `k % n` (the split is the
/// same from run to run, and a chunk's bytes are mostly read on the thread that handles them,
/// while they are in its core's cache). A worker whose turn it is not reads the chunk for its
/// owner when the owner is late, up to [`PARKED`] chunks, then goes on to its own.
struct Turns<'a> {
    reader: Mutex<Reader<'a>>,
    turn: Condvar,
}

impl<'a> Turns<'a> {
    /// Turns of `n` workers on `input`, in chunks of `chunk` bytes (a line that `line_cap`
    /// bytes do not end is too long), in buffers returned to `free` when they can be.
    fn new(
        input: Box<dyn Read + Send>,
        (chunk, line_cap): (usize, usize),
        free: Receiver<ReadBuf>,
        stop: Option<&'a AtomicBool>,
        (n, number): (usize, bool),
    ) -> Turns<'a> {
        Turns {
            reader: Mutex::new(Reader {
                input,
                chunk,
                line_cap,
                number,
                c: Cursor {
                    buf: buffer(&free, chunk),
                    cap: chunk,
                    filled: 0,
                    seq: 0,
                    lines: 0,
                },
                free,
                stop,
                eof: false,
                long: false,
                failed: None,
                end: None,
                parked: (0..n).map(|_| VecDeque::new()).collect(),
            }),
            turn: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Reader<'a>> {
        self.reader.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next chunk of worker `me` (of `n`): one read for it by another worker, or else one
    /// read when it is its turn; `None` at the end of the input (or when another worker has
    /// stopped).
    fn next(&self, me: usize, n: usize) -> Option<Job> {
        let mut r = self.lock();
        let job = loop {
            if let Some(job) = r.parked[me].pop_front() {
                break Some(job);
            }
            if r.end.is_some() {
                break None;
            }
            let owner = (r.c.seq % n as u64) as usize;
            if owner == me {
                break r.next();
            }
            if r.parked[owner].len() < PARKED {
                // The owner is late: its chunk is read for it, and this worker goes on to its
                // own.
                if let Some(job) = r.next() {
                    r.parked[owner].push_back(job);
                }
                continue;
            }
            r = self.turn.wait(r).unwrap_or_else(|e| e.into_inner());
        };
        drop(r);
        self.turn.notify_all();
        job
    }

    /// A worker stops: the others no longer wait for its turns.
    fn leave(&self) {
        let mut r = self.lock();
        if r.end.is_none() {
            r.end = Some(Ok(()));
        }
        drop(r);
        self.turn.notify_all();
    }
}

/// Makes a worker's leaving known to the others, when it returns or panics.
struct Leave<'t, 'a>(&'t Turns<'a>);

impl Drop for Leave<'_, '_> {
    fn drop(&mut self) {
        self.0.leave();
    }
}

/// Cuts the input into chunks of whole lines.
struct Reader<'a> {
    input: Box<dyn Read + Send>,
    chunk: usize,
    /// Holding this many bytes of one line without its newline proves it too long.
    line_cap: usize,
    /// Whether chunks are numbered as they are cut (their lines counted here).
    number: bool,
    free: Receiver<ReadBuf>,
    stop: Option<&'a AtomicBool>,
    c: Cursor,
    eof: bool,
    /// In a line too long, handed out in pieces.
    long: bool,
    /// A read error, and whether it cut a line.
    failed: Option<(io::Error, bool)>,
    /// Set at the end of the input: the read error that ended it, if one did, and whether it
    /// cut a line.
    end: Option<Result<(), (io::Error, bool)>>,
    /// Per worker, its chunks read by another worker while it was busy, in order.
    parked: Vec<VecDeque<Job>>,
}

/// The reader's position in the input.
struct Cursor {
    buf: ReadBuf,
    /// The bytes to fill `buf` with before a chunk is cut (a reused buffer may be bigger:
    /// where chunks end must not depend on which buffer came back first).
    cap: usize,
    filled: usize,
    seq: u64,
    /// Lines cut so far, when they are counted ([`Reader::number`]).
    lines: u64,
}

impl Reader<'_> {
    /// Cuts `c.buf[..len]` off and carries `c.buf[len..filled]` over into a fresh buffer.
    fn cut(&mut self, len: usize, what: Piece) -> Job {
        let c = &mut self.c;
        let rest = c.filled - len;
        c.cap = self.chunk.max(rest);
        let mut next = buffer(&self.free, c.cap);
        next[..rest].copy_from_slice(&c.buf[len..c.filled]);
        c.filled = rest;
        let first_line = c.lines;
        let buf = std::mem::replace(&mut c.buf, next);
        if self.number {
            c.lines += match what {
                Piece::Lines => {
                    let data = &buf[..len];
                    let n = memchr::memchr_iter(b'\n', data).count() as u64;
                    n + u64::from(!data.ends_with(b"\n"))
                }
                Piece::Long { last } => u64::from(last),
            };
        }
        let job = Job {
            seq: c.seq,
            first_line,
            buf,
            len,
            what,
        };
        c.seq += 1;
        job
    }

    /// Ends the input: `end` says how.
    fn finish(&mut self) {
        if self.end.is_none() {
            self.end = Some(self.failed.take().map_or(Ok(()), Err));
        }
    }

    /// The next chunk; `None` at the end of the input. A read error ends the input there: what
    /// was read, a part of a line too, is handed out (nothing read is lost), then the error
    /// says after which line.
    fn next(&mut self) -> Option<Job> {
        loop {
            if self.end.is_some() {
                return None;
            }
            while self.c.filled < self.c.cap && !self.eof {
                if self.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                    // Stopped: the whole lines read so far.
                    self.end = Some(Ok(()));
                    let nl = memchr::memrchr(b'\n', &self.c.buf[..self.c.filled]);
                    return nl
                        .filter(|_| !self.long)
                        .map(|nl| self.cut(nl + 1, Piece::Lines));
                }
                let filled = self.c.filled;
                match self.input.read(&mut self.c.buf[filled..self.c.cap]) {
                    Ok(0) => self.eof = true,
                    Ok(k) => self.c.filled += k,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        let cut = filled > 0 && self.c.buf[filled - 1] != b'\n' || self.long;
                        self.failed = Some((e, cut));
                        self.eof = true;
                    }
                }
            }
            let (eof, filled) = (self.eof, self.c.filled);
            let job = if self.long {
                match memchr::memchr(b'\n', &self.c.buf[..filled]) {
                    Some(nl) => {
                        self.long = false;
                        self.cut(nl + 1, Piece::Long { last: true })
                    }
                    None => {
                        self.long = !eof;
                        self.cut(filled, Piece::Long { last: eof })
                    }
                }
            } else if filled == 0 {
                self.finish();
                return None;
            } else {
                match memchr::memrchr(b'\n', &self.c.buf[..filled]) {
                    Some(nl) if !eof => self.cut(nl + 1, Piece::Lines),
                    _ if eof => self.cut(filled, Piece::Lines),
                    _ if self.c.cap >= self.line_cap => {
                        self.long = true;
                        self.cut(filled, Piece::Long { last: false })
                    }
                    _ => {
                        // One line fills the buffer: grow it, up to what proves a line too
                        // long.
                        let len = (self.c.cap * 2).min(self.line_cap);
                        let mut bigger = buffer(&self.free, len);
                        bigger[..filled].copy_from_slice(&self.c.buf[..filled]);
                        self.c.buf = bigger;
                        self.c.cap = len;
                        continue;
                    }
                }
            };
            if self.eof && !self.long && self.c.filled == 0 {
                self.finish();
            }
            return Some(job);
        }
    }
}

/// A worker thread: handles its chunks until the reader is done, then returns its state. A
/// summary worker that sets copies aside adds a chunk's requests once the in-order stage has
/// told it which are copies (`verdicts`, one per chunk, in order): it reads the next chunk
/// meanwhile.
fn work<W: Write + Send>(
    config: &Config,
    mut worker: Worker<'static>,
    (turns, me, n): (&Turns<'_>, usize, usize),
    (ordered, free): (&Ordered<'_, '_, '_, W>, mpsc::Sender<ReadBuf>),
    out_pool: &Mutex<Vec<Vec<u8>>>,
) -> Worker<'static> {
    let pass_long = worker.passes_long_lines();
    let max_bad = config.max_diagnostics;
    while let Some(job) = turns.next(me, n) {
        let mut out = out_pool
            .lock()
            .ok()
            .and_then(|mut p| p.pop())
            .unwrap_or_default();
        out.clear();
        let (mut bad, mut more_bad, mut left) = (Vec::new(), 0u64, Vec::new());
        let mut note = |line: u64, why: String| {
            if bad.len() < max_bad {
                bad.push((line, why));
            } else {
                more_bad += 1;
            }
        };
        let data = &job.buf[..job.len];
        worker.new_chunk();
        let lines = match job.what {
            Piece::Long { last } => {
                if pass_long {
                    out.extend_from_slice(data);
                }
                if last {
                    note(job.first_line + 1, worker.too_long(config.max_line_bytes));
                }
                u64::from(last)
            }
            Piece::Lines => {
                let max = config.max_line_bytes;
                chunk_lines(data, job.first_line, max, |line_no, line| match line {
                    ChunkLine::TooLong(raw) => {
                        if pass_long {
                            out.extend_from_slice(raw);
                        }
                        note(line_no, worker.too_long(max));
                    }
                    ChunkLine::Text {
                        start,
                        end,
                        prefix,
                        content,
                        ending,
                    } => match worker.line(line_no, prefix, content, ending, &mut out) {
                        // Writing to a Vec cannot fail.
                        Ok(LineOutcome::Done(why)) => {
                            why.into_iter().for_each(|w| note(line_no, w))
                        }
                        Err(_) => {}
                        Ok(LineOutcome::Deferred) => left.push(Left {
                            out_at: out.len(),
                            sweep_at: worker.sweep_len(),
                            buckets_at: worker.buckets_len(),
                            handed_at: worker.handed_len(),
                            keyed_at: worker.keyed_len(),
                            line_no,
                            start,
                            prefix: prefix.len(),
                            content: content.len(),
                            end,
                            handover: worker.take_handover(),
                        }),
                    },
                })
            }
        };
        let (keyed, pending) = worker.take_keyed(ordered.applies.spare());
        let r = Done {
            seq: job.seq,
            first_line: job.first_line,
            lines,
            out,
            bad,
            more_bad,
            sweep: worker.take_sweep(),
            buckets: worker.take_buckets(),
            handed: worker.take_handed(),
            keyed,
            pending,
            held: worker.take_held(),
            buf: if left.is_empty() {
                // The reader, which takes it, outlives the workers.
                let _ = free.send(job.buf);
                None
            } else {
                Some(job.buf)
            },
            left,
        };
        let Some(behind) = ordered.hand(r) else {
            break;
        };
        if !behind {
            // The chunks told by now: this worker's first (in its core's cache, its summary
            // too), then the others'.
            ordered.applies.drain_all(me);
        }
    }
    worker
}

/// The requests of the chunks told (the in-order stage has said which are copies), waiting to
/// be added to their workers' summaries, per worker: by its worker after each of its chunks,
/// by a worker that would otherwise wait for room, and at the end by the calling thread. A
/// worker's chunks are added one thread at a time, in input order (a summary is taken out of
/// its place while a thread adds to it), so its summary is the same whichever thread adds
/// them. A worker kept off its core does not hold the others up: what is flexible here (and
/// the writing of the in-order stage) goes to whichever thread is free.
struct Applies {
    parts: Vec<Mutex<Part>>,
    /// Requests waiting, for a worker that looks for something to do.
    waiting: AtomicUsize,
    /// Stores emptied, for the chunks read next.
    spare: Mutex<Vec<Pending>>,
}

/// The chunks of one worker told, oldest first, and its summary (`None` while a thread adds
/// to it, or for a worker whose requests wait for no verdict).
#[derive(Default)]
struct Part {
    ready: VecDeque<(Pending, Vec<u32>)>,
    applier: Option<Applier>,
}

impl Applies {
    fn new(n: usize) -> Applies {
        Applies {
            parts: (0..n).map(|_| Mutex::default()).collect(),
            waiting: AtomicUsize::new(0),
            spare: Mutex::default(),
        }
    }

    fn part(&self, me: usize) -> MutexGuard<'_, Part> {
        self.parts[me].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A store for a chunk's requests, emptied (`None`: a new one).
    fn spare(&self) -> Option<Pending> {
        self.spare.lock().ok()?.pop()
    }

    /// Chunk `seq`'s requests, told: `copies` are the indexes of the copies among them.
    fn push(&self, seq: u64, pending: Pending, copies: Vec<u32>) {
        let me = (seq % self.parts.len() as u64) as usize;
        let mut part = self.part(me);
        part.ready.push_back((pending, copies));
        // Counted before the lock is let go: a thread that takes the chunk and counts it off
        // never finds the count below it (it wrapped round for a moment).
        self.waiting.fetch_add(1, Ordering::Relaxed);
    }

    /// Adds the requests of worker `me`'s chunks told, unless another thread is adding them.
    fn drain(&self, me: usize) {
        let mut part = self.part(me);
        let Some(mut a) = part.applier.take() else {
            return;
        };
        while let Some((mut pending, copies)) = part.ready.pop_front() {
            drop(part);
            a.apply(&pending, &copies);
            self.waiting.fetch_sub(1, Ordering::Relaxed);
            pending.clear();
            if let Ok(mut spare) = self.spare.lock() {
                spare.push(pending);
            }
            part = self.part(me);
        }
        part.applier = Some(a);
    }

    /// Adds the requests of every worker's chunks told, worker `first`'s first (those another
    /// thread adds are left to it).
    fn drain_all(&self, first: usize) {
        let n = self.parts.len();
        for k in 0..n {
            if self.waiting.load(Ordering::Relaxed) == 0 {
                return;
            }
            self.drain((first + k) % n);
        }
    }
}

/// The chunks done, put back in input order by the workers themselves: each hands its chunk
/// over ([`Ordered::hand`]), and one worker at a time writes every chunk that is next in
/// order, its own and the others'. No third thread shares the cores with the workers (one woken
/// per chunk took a worker's core while the other worker's core idled). The writing, and the
/// adding of the chunks told ([`Applies`]), go to a worker that is ahead: one that waits for
/// room to hand a chunk over (its core would idle), or else one that hands over a chunk later
/// than the next. Chunk `k` is worker `k % n`'s, so a core slower than the other (a virtual
/// machine's often is, for seconds at a time) would keep the faster one waiting for its
/// chunks; the work any thread may do goes to the faster one instead.
struct Ordered<'a, 'c, 's, W: Write> {
    /// The writer, used by the worker whose turn it is (`Queue::writing`).
    writer: Mutex<Writer<'a, 'c, 's, W>>,
    queue: Mutex<Queue>,
    /// Signalled when a chunk is handed over or written, or the writing failed.
    changed: Condvar,
    /// Chunks that may wait in the queue before a worker with one that is not next waits.
    ahead: usize,
    /// The requests of the chunks written, waiting to be added.
    applies: &'a Applies,
}

/// The chunks handed over and not yet written, and whose turn it is to write them.
struct Queue {
    waiting: BTreeMap<u64, Done>,
    /// The chunk to write next.
    next: u64,
    /// True while a worker writes.
    writing: bool,
    /// Workers waiting (for a verdict, or for room).
    idle: usize,
    /// The output's error, when writing failed: the workers stop.
    failed: Option<io::Error>,
}

impl Queue {
    /// True when the next chunk waits and nobody writes.
    fn writable(&self) -> bool {
        !self.writing && self.waiting.contains_key(&self.next)
    }
}

impl<W: Write + Send> Ordered<'_, '_, '_, W> {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until something changes; counted as idle meanwhile.
    fn wait<'q>(&self, mut q: MutexGuard<'q, Queue>) -> MutexGuard<'q, Queue> {
        q.idle += 1;
        let mut q = self.changed.wait(q).unwrap_or_else(|e| e.into_inner());
        q.idle -= 1;
        q
    }

    /// Hands chunk `d` over. While [`Self::ahead`] chunks wait and `d` is not the next, waits
    /// (writing what is next meanwhile, when nobody does, or adding the requests of chunks
    /// told). Then a worker that waits writes it; else, when a later chunk waits (its worker
    /// is ahead of this one), the worker ahead writes it when it hands its next chunk over;
    /// else this one, unless another writes. `Some(true)` when this worker is behind (it
    /// leaves the work that any thread may do to the others and reads on); `None` when the
    /// writing failed: the worker stops.
    fn hand(&self, d: Done) -> Option<bool> {
        let mut q = self.queue();
        while q.waiting.len() >= self.ahead && d.seq != q.next && q.failed.is_none() {
            q = if q.writable() {
                self.write(q)
            } else if self.applies.waiting.load(Ordering::Relaxed) > 0 {
                drop(q);
                self.applies.drain_all(0);
                self.queue()
            } else {
                self.wait(q)
            };
        }
        if q.failed.is_some() {
            return None;
        }
        let seq = d.seq;
        q.waiting.insert(seq, d);
        let behind = q.waiting.range(seq + 1..).next().is_some();
        if q.idle > 0 || behind {
            drop(q);
            self.changed.notify_all();
            return Some(behind);
        }
        let q = self.write(q);
        q.failed.is_none().then_some(false)
    }

    /// Writes the chunks that are next in order, if nobody else writes.
    fn write<'q>(&'q self, mut q: MutexGuard<'q, Queue>) -> MutexGuard<'q, Queue> {
        if !q.writable() {
            return q;
        }
        q.writing = true;
        // A panic while writing is met by the worker's own guard (in `run_file`) once this
        // frame has unwound and let the queue go: the other workers then stop instead of
        // waiting for a writer that never comes.
        let mut w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let next = q.next;
            let Some(mut d) = q.waiting.remove(&next) else {
                break;
            };
            q.next += 1;
            drop(q);
            let written = w.chunk(&mut d, self.applies);
            w.recycle(d);
            q = self.queue();
            self.changed.notify_all();
            if let Err(e) = written {
                q.failed = Some(e);
                break;
            }
        }
        q.writing = false;
        q
    }
}

/// Runs its closure when dropped while the thread panics.
struct OnPanic<F: Fn()>(F);

impl<F: Fn()> Drop for OnPanic<F> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            (self.0)();
        }
    }
}

/// Writes chunk results in input order, handles the lines the workers left, reports bad lines
/// in order, hands buffers back for reuse (on the thread of the worker whose turn it is).
struct Writer<'a, 'c, 's, W: Write> {
    caller: Caller<'c, 's, W>,
    free: mpsc::Sender<ReadBuf>,
    out_pool: &'a Mutex<Vec<Vec<u8>>>,
    scratch: Vec<u8>,
    /// The verdict on the chunk being written: which of its requests are copies.
    copies: Vec<u32>,
    /// Lines of the chunks written: the number of the line before the next chunk's first.
    lines: u64,
}

impl<W: Write> Writer<'_, '_, '_, W> {
    /// Hands a written chunk's buffers back for reuse.
    fn recycle(&self, mut d: Done) {
        if let Some(buf) = d.buf.take() {
            let _ = self.free.send(buf);
        }
        if let Ok(mut pool) = self.out_pool.lock() {
            pool.push(d.out);
        }
    }

    /// Writes one chunk's output with the lines its worker left handled in their place (and
    /// its in-flight sweep entries entered around them), and reports its bad lines in line
    /// order.
    fn chunk(&mut self, d: &mut Done, applies: &Applies) -> io::Result<()> {
        // The chunk's lines as numbered in the input (numbered from 0 unless the reader
        // numbered them).
        debug_assert!(d.first_line == 0 || d.first_line == self.lines);
        let shift = self.lines - d.first_line;
        self.lines += d.lines;
        for (line, _) in &mut d.bad {
            *line += shift;
        }
        for l in &mut d.left {
            l.line_no += shift;
        }
        let c = &mut self.caller;
        let mut bad = d.bad.iter().peekable();
        let mut written = 0;
        let mut fed = 0;
        let mut fed_buckets = 0;
        let mut fed_handed = 0;
        let mut fed_keyed = 0;
        for l in &mut d.left {
            while let Some((line, why)) = bad.next_if(|(line, _)| *line < l.line_no) {
                (c.report)(*line, Some(why));
            }
            c.w.write_all(&d.out[written..l.out_at])?;
            written = l.out_at;
            c.seq.feed_sweep(&d.sweep[fed..l.sweep_at]);
            fed = l.sweep_at;
            c.seq.feed_buckets(&d.buckets[fed_buckets..l.buckets_at]);
            fed_buckets = l.buckets_at;
            c.seq.feed_handed(&d.handed[fed_handed..l.handed_at]);
            fed_handed = l.handed_at;
            c.seq
                .feed_keyed(&d.keyed[fed_keyed..l.keyed_at], fed_keyed, &mut self.copies);
            fed_keyed = l.keyed_at;
            if let Some((stream, pieces)) = l.handover.take() {
                c.seq.set_held(stream, pieces);
            }
            let buf = d
                .buf
                .as_ref()
                .expect("a chunk with lines left keeps its buffer");
            let (prefix, rest) = buf[l.start..l.end].split_at(l.prefix);
            let (content, ending) = rest.split_at(l.content);
            self.scratch.clear();
            let handled = c
                .seq
                .line(l.line_no, prefix, content, ending, &mut self.scratch)?;
            c.w.write_all(&self.scratch)?;
            if let LineOutcome::Done(why) = handled {
                why.iter().for_each(|w| (c.report)(l.line_no, Some(w)));
            }
        }
        c.w.write_all(&d.out[written..])?;
        c.seq.feed_sweep(&d.sweep[fed..]);
        c.seq.feed_buckets(&d.buckets[fed_buckets..]);
        c.seq.feed_handed(&d.handed[fed_handed..]);
        c.seq
            .feed_keyed(&d.keyed[fed_keyed..], fed_keyed, &mut self.copies);
        if let Some(pending) = d.pending.take() {
            applies.push(d.seq, pending, std::mem::take(&mut self.copies));
        }
        for (stream, pieces) in d.held.iter_mut().enumerate() {
            if let Some(pieces) = pieces.take() {
                c.seq.set_held(stream, pieces);
            }
        }
        if c.flush_each_chunk {
            c.w.flush()?;
        }
        for (line, why) in bad {
            (c.report)(*line, Some(why));
        }
        for _ in 0..d.more_bad {
            (c.report)(0, None);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Worker 0 goes on while worker 1 has not come: it reads [`PARKED`] chunks for worker 1
    /// and takes its own in between; worker 1 then gets its own, in order, and the split is
    /// the one of strict turns.
    #[test]
    fn a_late_worker_finds_its_chunks_read() {
        let text: Vec<u8> = (0..40)
            .flat_map(|i| format!("line {i:02}\n").into_bytes())
            .collect();
        let (_free_tx, free_rx) = mpsc::channel();
        // Chunks of 16 bytes: two lines of 8 bytes each, 20 chunks.
        let turns = Turns::new(
            Box::new(io::Cursor::new(text)),
            (16, 1 << 10),
            free_rx,
            None,
            (2, true),
        );
        let first_lines = |worker: usize, k: usize| -> Vec<(u64, u64)> {
            (0..k)
                .map(|_| {
                    turns
                        .next(worker, 2)
                        .map(|j| (j.seq, j.first_line))
                        .unwrap()
                })
                .collect()
        };
        let mine = first_lines(0, PARKED + 1);
        let expected: Vec<_> = (0..=PARKED as u64).map(|k| (2 * k, 4 * k)).collect();
        assert_eq!(mine, expected);
        assert_eq!(turns.lock().parked[1].len(), PARKED);
        let theirs = first_lines(1, PARKED + 1);
        let expected: Vec<_> = (0..=PARKED as u64)
            .map(|k| (2 * k + 1, 4 * k + 2))
            .collect();
        assert_eq!(theirs, expected);
        assert!(turns.lock().parked.iter().all(VecDeque::is_empty));
    }

    /// The requests of two workers' chunks, told and added by whichever threads come (two of
    /// them at once here, each trying every worker's chunks), make the same summaries as each
    /// worker adding its own chunks in order: a worker's chunks are added one thread at a
    /// time, in the order they were told.
    #[test]
    fn chunks_told_are_added_in_order_whichever_thread_adds_them() {
        let config = crate::cli::config_from_args([
            "tokentime",
            "summary",
            "--exact-limit",
            "8",
            "--by",
            "model",
            "--max-groups",
            "4",
        ])
        .unwrap();
        let parent = Worker::new(&config);
        // Eight chunks of 40 LiteLLM requests, chunk `k` read by worker `k % 2`, its requests
        // of model `mk`: a worker's first model has groups of its own, the others land in
        // `(other)` (which one does depends on the order its chunks are added in).
        let chunks: Vec<(usize, Pending)> = (0..8u64)
            .map(|k| {
                let me = (k % 2) as usize;
                let mut w = parent.fork();
                w.new_chunk();
                for i in 0..40u64 {
                    let n = k * 40 + i;
                    let start = 1_700_000_000.0 + n as f64 * 0.37;
                    let line = format!(
                        r#"{{"id":"r{n}","call_type":"acompletion","model":"m{}","startTime":{start},"completionStartTime":{},"endTime":{},"cache_hit":false,"usage":{{"prompt_tokens":{},"completion_tokens":{}}}}}"#,
                        k,
                        start + 0.05 + (n * 7919 % 101) as f64 / 1000.0,
                        start + 1.0 + (n * 104_729 % 997) as f64 / 1000.0,
                        100 + n % 50,
                        20 + n % 30,
                    );
                    let mut out = Vec::new();
                    w.line(n + 1, b"", line.as_bytes(), b"\n", &mut out).unwrap();
                }
                let (keyed, pending) = w.take_keyed(None);
                assert_eq!(keyed.len(), 40);
                (me, pending.unwrap())
            })
            .collect();
        // Copies set aside by the verdict: a few, different per chunk.
        let copies = |k: usize| -> Vec<u32> { vec![k as u32, (k * 5 + 3) as u32] };
        let summaries = |ws: Vec<Worker<'static>>| -> Vec<String> {
            ws.into_iter()
                .map(|w| format!("{:?}", w.into_part().unwrap().summary))
                .collect()
        };

        // Each worker adds its own chunks, in order.
        let mut own: Vec<Worker<'static>> = (0..2).map(|_| parent.fork()).collect();
        for (k, (me, pending)) in chunks.iter().enumerate() {
            let mut a = own[*me].applier().unwrap();
            a.apply(pending, &copies(k));
            own[*me].restore(a);
        }

        // Told in order, added by two threads at once, each trying both workers' chunks; the
        // first four told before the threads start.
        let mut ws: Vec<Worker<'static>> = (0..2).map(|_| parent.fork()).collect();
        let applies = Applies::new(2);
        for (me, w) in ws.iter_mut().enumerate() {
            applies.part(me).applier = w.applier();
        }
        let mut chunks = chunks.into_iter().enumerate();
        for (k, (_, pending)) in chunks.by_ref().take(4) {
            applies.push(k as u64, pending, copies(k));
        }
        std::thread::scope(|scope| {
            for first in 0..2 {
                let applies = &applies;
                scope.spawn(move || {
                    for _ in 0..200 {
                        applies.drain_all(first);
                        std::thread::yield_now();
                    }
                });
            }
            for (k, (_, pending)) in chunks {
                applies.push(k as u64, pending, copies(k));
                std::thread::yield_now();
            }
        });
        for (me, w) in ws.iter_mut().enumerate() {
            applies.drain(me);
            w.restore(applies.part(me).applier.take().unwrap());
        }
        assert_eq!(applies.waiting.load(Ordering::Relaxed), 0);
        let (a, b) = (summaries(own), summaries(ws));
        assert!(a[1].contains(r#"Some("m1")"#), "the requests were added");
        assert_eq!(a, b);
    }

    /// A reused buffer bigger than a chunk (one grown for a long line) is filled no further
    /// than a chunk: where chunks end, and so which worker reads a line, is the same whichever
    /// buffers come back first.
    #[test]
    fn chunks_end_where_they_would_in_fresh_buffers() {
        let text: Vec<u8> = (0..40)
            .flat_map(|i| format!("line {i:02}\n").into_bytes())
            .collect();
        let cuts = |spare: usize| -> Vec<(u64, u64, usize)> {
            let (free_tx, free_rx) = mpsc::channel();
            for _ in 0..spare {
                free_tx.send(ReadBuf::new(1 << 10)).unwrap();
            }
            let turns = Turns::new(
                Box::new(io::Cursor::new(text.clone())),
                (16, 1 << 10),
                free_rx,
                None,
                (1, true),
            );
            std::iter::from_fn(|| turns.next(0, 1))
                .map(|j| (j.seq, j.first_line, j.len))
                .collect()
        };
        let fresh = cuts(0);
        assert_eq!(fresh.len(), 20);
        assert_eq!(cuts(3), fresh);
    }
}
