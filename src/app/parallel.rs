//! Parallel reading of one file: chunks of whole lines, one [`Worker`] per thread, results put
//! back in input order.
//!
//! Shape: a reader thread reads the file in chunks (`--chunk-bytes`, 512 KiB) into reused
//! buffers, cut after the last newline, numbers their lines, and hands them out round-robin to
//! the workers; each worker frames and handles the lines of its chunks exactly as the
//! one-thread path does and returns, per chunk, the enrich output and its bad lines; the
//! calling thread writes the outputs in chunk order and reports the bad lines in order, and at
//! the end gets the workers back to merge their counters and summaries. At most a few chunks
//! per worker are in flight, so memory stays bounded whatever the file size.
//!
//! Lines of a format whose requests span several lines (Ollama streams, llama.cpp's legacy
//! log) must meet in one processor, in input order: the chunk workers leave them untouched
//! ([`LineOutcome::Deferred`]) and the calling thread hands them, in order and at their place in
//! the output, to its own worker (the one that reads the inputs that are not chunked). When
//! every format in use joins lines, the file is not chunked at all ([`applies`]). Lines split
//! by Docker or the kubelet (pieces of one long line) are read by the chunk worker when the
//! pieces are all in its chunk; the pieces at the start of a chunk, up to the first line that
//! ends one on each stream, go to the calling thread, and the pieces held at the end of a
//! chunk are handed over to it. The in-flight sweep of `summary` (requests in flight during
//! each decode) needs every request of the input in order: chunk workers hand each request's
//! start and end to the calling thread, whose worker sweeps them in order. A summary that sets
//! aside the records read again (the default, not `--keep-duplicates`) must see them in input
//! order too: its chunk workers add nothing, they hand every request on to the calling thread,
//! whose worker tells the copies and adds the others (and enters them in the sweep and the
//! `--bucket` windows) in order.
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
use crate::app::worker::{LineOutcome, SweepInput, Worker};
use crate::cli::config::Config;
use crate::input::lines::ReadBuf;
use crate::input::source::Source;
use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};

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

/// A chunk of the input, numbered in input order.
struct Job {
    seq: u64,
    /// Lines of the input before this chunk.
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

/// A line a worker left to the calling thread.
struct Left {
    /// Where its output goes in the chunk's output.
    out_at: usize,
    /// Where its requests go among the chunk's in-flight sweep entries.
    sweep_at: usize,
    /// And among the requests handed on for `--bucket` windows.
    buckets_at: usize,
    /// And among the requests handed on to be told from copies.
    handed_at: usize,
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
    /// Enrich output.
    out: Vec<u8>,
    /// Bad lines: line number in the input and reason; at most `--max-diagnostics`.
    bad: Vec<(u64, String)>,
    /// Bad lines beyond those.
    more_bad: u64,
    /// Lines left to the calling thread, in order.
    left: Vec<Left>,
    /// The chunk's in-flight sweep entries (summary), in order.
    sweep: Vec<SweepInput>,
    /// The chunk's requests for `--bucket` windows (summary), in order.
    buckets: Vec<BucketInput>,
    /// The chunk's requests handed on to be told from copies and added (summary), in order.
    handed: Vec<BucketInput>,
    /// Pieces of split lines held at the end of the chunk, per stream.
    held: [Option<Vec<u8>>; 2],
    /// The input buffer, for reuse (and for the lines left).
    buf: ReadBuf,
}

/// What [`run_file`] leaves to its caller.
pub(crate) struct Finished {
    /// The chunk workers, whose counters and summaries the caller merges.
    pub workers: Vec<Worker<'static>>,
    /// The input's read error, when reading stopped on one (the lines before it were read).
    pub input_error: Option<io::Error>,
}

/// The calling thread's side of [`run_file`]: its worker, which handles the lines the chunk
/// workers defer, in order and at their place; the output; where bad lines are reported.
pub(crate) struct Caller<'a, 's, W: Write> {
    pub(crate) seq: &'a mut Worker<'s>,
    /// Enrich output, written in input order.
    pub(crate) w: &'a mut W,
    pub(crate) flush_each_chunk: bool,
    /// Bad lines in order: (line number, reason), or (line, `None`) for one past
    /// `--max-diagnostics` whose reason was not kept.
    pub(crate) report: &'a mut dyn FnMut(u64, Option<&str>),
}

/// Reads `input` (a file's bytes) with `config.threads` workers made by `make`; the calling
/// thread's side is `caller`. Stops reading early when `stop` is set.
///
/// # Errors
/// The output's (or the calling thread's worker's writing) errors.
pub(crate) fn run_file<W: Write>(
    config: &Config,
    mut input: Box<dyn Read + Send>,
    make: &(dyn Fn() -> Worker<'static> + Sync),
    caller: Caller<'_, '_, W>,
    stop: Option<&AtomicBool>,
) -> io::Result<Finished> {
    let n = config.threads.max(1);
    let chunk = config.chunk_bytes.max(1);
    let (free_tx, free_rx) = mpsc::channel::<ReadBuf>();
    let out_pool = Mutex::new(Vec::<Vec<u8>>::new());
    let (done_tx, done_rx) = mpsc::sync_channel::<Done>(n);
    let mut job_txs = Vec::new();
    let mut job_rxs = Vec::new();
    for _ in 0..n {
        let (tx, rx) = mpsc::sync_channel::<Job>(1);
        job_txs.push(tx);
        job_rxs.push(rx);
    }
    std::thread::scope(|scope| {
        let reading = scope.spawn(move || {
            let reader = Reader {
                chunk,
                line_cap: config
                    .max_line_bytes
                    .saturating_add(crate::input::lines::SPLICE_ROOM + 2),
                free: &free_rx,
                jobs: &job_txs,
                stop,
            };
            reader.run(&mut *input)
        });
        let workers: Vec<_> = job_rxs
            .into_iter()
            .map(|rx| {
                let done_tx = done_tx.clone();
                let out_pool = &out_pool;
                scope.spawn(move || work(config, make(), rx, done_tx, out_pool))
            })
            .collect();
        drop(done_tx);
        let mut writer = Writer {
            caller,
            free: &free_tx,
            out_pool: &out_pool,
            scratch: Vec::new(),
        };
        let written = writer.run(done_rx);
        // On a write error the results receiver is gone: workers and reader stop at their
        // next send, and the scope can end.
        let read = reading
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the reading thread panicked")));
        let workers: Vec<Worker<'static>> = workers
            .into_iter()
            .map(|h| h.join().expect("a worker panicked"))
            .collect();
        written?;
        Ok(Finished {
            workers,
            input_error: read.err(),
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

/// The reader thread: cuts the input into chunks of whole lines and deals them out.
struct Reader<'a> {
    chunk: usize,
    /// Holding this many bytes of one line without its newline proves it too long.
    line_cap: usize,
    free: &'a Receiver<ReadBuf>,
    jobs: &'a [SyncSender<Job>],
    stop: Option<&'a AtomicBool>,
}

/// The reader's position in the input.
struct Cursor {
    buf: ReadBuf,
    filled: usize,
    seq: u64,
    lines: u64,
}

impl Reader<'_> {
    /// Sends `c.buf[..len]` and carries `c.buf[len..filled]` over into a fresh buffer.
    /// Returns false when the workers are gone (the writer failed).
    fn send(&self, c: &mut Cursor, len: usize, what: Piece) -> bool {
        let rest = c.filled - len;
        let mut next = buffer(self.free, self.chunk.max(rest));
        next[..rest].copy_from_slice(&c.buf[len..c.filled]);
        c.filled = rest;
        let first_line = c.lines;
        let buf = std::mem::replace(&mut c.buf, next);
        c.lines += match what {
            Piece::Lines => {
                let data = &buf[..len];
                let n = memchr::memchr_iter(b'\n', data).count() as u64;
                n + u64::from(!data.ends_with(b"\n"))
            }
            Piece::Long { last } => u64::from(last),
        };
        let job = Job {
            seq: c.seq,
            first_line,
            buf,
            len,
            what,
        };
        let ok = self.jobs[(c.seq % self.jobs.len() as u64) as usize]
            .send(job)
            .is_ok();
        c.seq += 1;
        ok
    }

    /// Sends the whole lines read so far (on a read error, or when told to stop).
    fn send_whole_lines(&self, c: &mut Cursor, long: bool) {
        if long {
            return;
        }
        if let Some(nl) = memchr::memrchr(b'\n', &c.buf[..c.filled]) {
            self.send(c, nl + 1, Piece::Lines);
        }
    }

    fn run(&self, r: &mut dyn Read) -> io::Result<()> {
        let mut c = Cursor {
            buf: buffer(self.free, self.chunk),
            filled: 0,
            seq: 0,
            lines: 0,
        };
        let mut eof = false;
        let mut long = false;
        // A read error ends the input there: what was read, a part of a line too, is handed
        // out (nothing read is lost), then the error says after which line.
        let mut failed: Option<(io::Error, bool)> = None;
        let end = |failed: Option<(io::Error, bool)>, lines: u64| match failed {
            Some((e, cut)) => Err(crate::input::lines::read_error(e, lines, cut)),
            None => Ok(()),
        };
        loop {
            while c.filled < c.buf.len() && !eof {
                if self.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                    self.send_whole_lines(&mut c, long);
                    return Ok(());
                }
                match r.read(&mut c.buf[c.filled..]) {
                    Ok(0) => eof = true,
                    Ok(k) => c.filled += k,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        let cut = c.filled > 0 && c.buf[c.filled - 1] != b'\n' || long;
                        failed = Some((e, cut));
                        eof = true;
                    }
                }
            }
            let sent = if long {
                match memchr::memchr(b'\n', &c.buf[..c.filled]) {
                    Some(nl) => {
                        long = false;
                        self.send(&mut c, nl + 1, Piece::Long { last: true })
                    }
                    None => {
                        long = !eof;
                        let len = c.filled;
                        self.send(&mut c, len, Piece::Long { last: eof })
                    }
                }
            } else if c.filled == 0 {
                return end(failed, c.lines);
            } else {
                match memchr::memrchr(b'\n', &c.buf[..c.filled]) {
                    Some(nl) if !eof => self.send(&mut c, nl + 1, Piece::Lines),
                    _ if eof => {
                        let len = c.filled;
                        self.send(&mut c, len, Piece::Lines)
                    }
                    _ if c.buf.len() >= self.line_cap => {
                        long = true;
                        let len = c.filled;
                        self.send(&mut c, len, Piece::Long { last: false })
                    }
                    _ => {
                        // One line fills the buffer: grow it, up to what proves a line too
                        // long.
                        let mut bigger = buffer(self.free, (c.buf.len() * 2).min(self.line_cap));
                        bigger[..c.filled].copy_from_slice(&c.buf[..c.filled]);
                        c.buf = bigger;
                        true
                    }
                }
            };
            if !sent {
                return Ok(());
            }
            if eof && !long && c.filled == 0 {
                return end(failed, c.lines);
            }
        }
    }
}

/// A worker thread: handles its chunks until the reader is done, then returns its state.
fn work(
    config: &Config,
    mut worker: Worker<'static>,
    jobs: Receiver<Job>,
    done: SyncSender<Done>,
    out_pool: &Mutex<Vec<Vec<u8>>>,
) -> Worker<'static> {
    let pass_long = worker.passes_long_lines();
    let max_bad = config.max_diagnostics;
    for job in jobs {
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
        match job.what {
            Piece::Long { last } => {
                if pass_long {
                    out.extend_from_slice(data);
                }
                if last {
                    note(job.first_line + 1, worker.too_long(config.max_line_bytes));
                }
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
                        Ok(LineOutcome::Done(Some(why))) => note(line_no, why),
                        Ok(LineOutcome::Done(None)) | Err(_) => {}
                        Ok(LineOutcome::Deferred) => left.push(Left {
                            out_at: out.len(),
                            sweep_at: worker.sweep_len(),
                            buckets_at: worker.buckets_len(),
                            handed_at: worker.handed_len(),
                            line_no,
                            start,
                            prefix: prefix.len(),
                            content: content.len(),
                            end,
                            handover: worker.take_handover(),
                        }),
                    },
                });
            }
        }
        let r = Done {
            seq: job.seq,
            out,
            bad,
            more_bad,
            left,
            sweep: worker.take_sweep(),
            buckets: worker.take_buckets(),
            handed: worker.take_handed(),
            held: worker.take_held(),
            buf: job.buf,
        };
        if done.send(r).is_err() {
            break;
        }
    }
    worker
}

/// The calling thread: writes chunk results in input order, handles the lines the workers
/// left, reports bad lines in order, hands buffers back for reuse.
struct Writer<'a, 'c, 's, W: Write> {
    caller: Caller<'c, 's, W>,
    free: &'a mpsc::Sender<ReadBuf>,
    out_pool: &'a Mutex<Vec<Vec<u8>>>,
    scratch: Vec<u8>,
}

impl<W: Write> Writer<'_, '_, '_, W> {
    fn run(&mut self, done: Receiver<Done>) -> io::Result<()> {
        let mut waiting: BTreeMap<u64, Done> = BTreeMap::new();
        let mut next = 0u64;
        for d in done {
            waiting.insert(d.seq, d);
            while let Some(mut d) = waiting.remove(&next) {
                self.chunk(&mut d)?;
                next += 1;
                let _ = self.free.send(d.buf);
                if let Ok(mut pool) = self.out_pool.lock() {
                    pool.push(d.out);
                }
            }
        }
        Ok(())
    }

    /// Writes one chunk's output with the lines its worker left handled in their place (and
    /// its in-flight sweep entries entered around them), and reports its bad lines in line
    /// order.
    fn chunk(&mut self, d: &mut Done) -> io::Result<()> {
        let c = &mut self.caller;
        let mut bad = d.bad.iter().peekable();
        let mut written = 0;
        let mut fed = 0;
        let mut fed_buckets = 0;
        let mut fed_handed = 0;
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
            if let Some((stream, pieces)) = l.handover.take() {
                c.seq.set_held(stream, pieces);
            }
            let (prefix, rest) = d.buf[l.start..l.end].split_at(l.prefix);
            let (content, ending) = rest.split_at(l.content);
            self.scratch.clear();
            let handled = c
                .seq
                .line(l.line_no, prefix, content, ending, &mut self.scratch)?;
            c.w.write_all(&self.scratch)?;
            if let LineOutcome::Done(Some(why)) = handled {
                (c.report)(l.line_no, Some(&why));
            }
        }
        c.w.write_all(&d.out[written..])?;
        c.seq.feed_sweep(&d.sweep[fed..]);
        c.seq.feed_buckets(&d.buckets[fed_buckets..]);
        c.seq.feed_handed(&d.handed[fed_handed..]);
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
