//! Parallel reading of one file: chunks of whole lines, one [`Worker`] per thread, results put
//! back in input order.
//!
//! Shape: a reader thread reads the file in chunks (`--chunk-bytes`, 1 MiB) into reused
//! buffers, cut after the last newline, and hands them out round-robin to `--threads` workers;
//! each worker frames and handles the lines of its chunks exactly as the one-thread path does
//! and returns, per chunk, the enriched output and its bad lines (numbered within the chunk);
//! the calling thread writes the outputs in chunk order, numbers and reports the bad lines,
//! and at the end gets the workers back to merge their counters and summaries. At most a few
//! chunks per worker are in flight, so memory stays bounded whatever the file size.
//!
//! What is the same as on one thread: every output byte and its order, the coverage counters,
//! the diagnostics (lines numbered in the file), exact quantiles. What may differ: t-digest
//! estimates past 10,000 values in a group (partial digests are merged), and which keys fall
//! into `(other)` once `--max-groups` is reached. Round-robin dispatch (not work stealing)
//! keeps the split, and so those estimates, the same from run to run.
//!
//! Not used for standard input from a pipe or terminal (it may be a live `tail -F`: lines must
//! come out as they come in), nor for formats whose requests span several lines (a request's
//! lines must meet in one worker, in order).

use crate::config::{Command, Config};
use crate::error::Error;
use crate::input::Source;
use crate::lines::ReadBuf;
use crate::worker::Worker;
use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::sync::Mutex;
use std::sync::mpsc::{self, Receiver, SyncSender};

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// True when `source` is read in parallel: several threads, a file (or standard input that is
/// a regular file), no line joins.
pub fn applies(config: &Config, source: &Source) -> bool {
    config.threads > 1
        && (matches!(source, Source::Path(_)) || config.stdin_is_file)
        && !matches!(config.command, Command::Formats)
        && !formats_join_lines(config)
}

/// True when a format in use joins several lines into one request (their lines must be read
/// in order by one thread). None of the built-in formats does yet; a format that does must
/// say so here.
fn formats_join_lines(_config: &Config) -> bool {
    false
}

/// A chunk of the input, numbered in input order.
struct Job {
    seq: u64,
    buf: ReadBuf,
    len: usize,
    what: Piece,
}

enum Piece {
    /// Whole lines (the last one may lack its newline at the end of input). `first`: they
    /// start the input, so the first line may carry a byte-order mark.
    Lines { first: bool },
    /// Part of a line longer than `--max-line-bytes`; `last` ends the line.
    Long { last: bool },
}

/// What a worker made of a chunk.
struct Done {
    seq: u64,
    /// Enrich output.
    out: Vec<u8>,
    /// Lines that ended in the chunk.
    lines: u64,
    /// Bad lines: number within the chunk (1-based) and reason; at most `--max-diagnostics`.
    bad: Vec<(u64, String)>,
    /// Bad lines beyond those.
    more_bad: u64,
    /// The input buffer, for reuse.
    buf: ReadBuf,
}

/// Reads `source` with `config.threads` workers, writing enrich output to `w` in input order
/// and reporting bad lines to `report` in order: (file line number, reason), or (line, `None`)
/// for one past the `--max-diagnostics` whose reason was not kept. Returns the workers, whose
/// counters and summaries the caller merges.
///
/// # Errors
/// [`Error::Input`] when the file cannot be opened or read, [`Error::Output`] when `w` fails.
pub fn run_file(
    config: &Config,
    source: &Source,
    w: &mut impl Write,
    flush_each_chunk: bool,
    report: &mut dyn FnMut(u64, Option<&str>),
) -> Result<Vec<Worker>, Error> {
    let name = source.name();
    let input_error = |e| Error::Input {
        name: name.clone(),
        source: e,
    };
    let mut reader = source.open().map_err(input_error)?;
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
            read_chunks(
                &mut reader,
                chunk,
                config.max_line_bytes,
                &free_rx,
                &job_txs,
            )
        });
        let workers: Vec<_> = job_rxs
            .into_iter()
            .map(|rx| {
                let done_tx = done_tx.clone();
                let out_pool = &out_pool;
                scope.spawn(move || work(config, rx, done_tx, out_pool))
            })
            .collect();
        drop(done_tx);
        let written = write_in_order(done_rx, w, flush_each_chunk, report, &free_tx, &out_pool);
        // On a write error the results receiver is gone: workers and reader stop at their
        // next send, and the scope can end.
        let read = reading
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("reader panicked")));
        let workers: Vec<Worker> = workers
            .into_iter()
            .map(|h| h.join().expect("a worker panicked"))
            .collect();
        written.map_err(Error::Output)?;
        read.map_err(input_error)?;
        Ok(workers)
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
fn read_chunks(
    r: &mut dyn Read,
    chunk: usize,
    max_line: usize,
    free: &Receiver<ReadBuf>,
    jobs: &[SyncSender<Job>],
) -> io::Result<()> {
    // Holding this many bytes of one line without its newline proves it too long.
    let line_cap = max_line.saturating_add(2);
    let mut seq = 0u64;
    let mut buf = buffer(free, chunk);
    let mut filled = 0;
    let mut eof = false;
    let mut long = false;
    let mut first = true;
    // Sends `buf[..len]` and carries `buf[len..filled]` over into a fresh buffer. Returns
    // false when the workers are gone (the writer failed).
    let mut send = |buf: &mut ReadBuf, len: usize, filled: &mut usize, what: Piece| {
        let rest = *filled - len;
        let mut next = buffer(free, chunk.max(rest));
        next[..rest].copy_from_slice(&buf[len..*filled]);
        *filled = rest;
        let job = Job {
            seq,
            buf: std::mem::replace(buf, next),
            len,
            what,
        };
        let ok = jobs[(seq % jobs.len() as u64) as usize].send(job).is_ok();
        seq += 1;
        ok
    };
    loop {
        while filled < buf.len() && !eof {
            match r.read(&mut buf[filled..]) {
                Ok(0) => eof = true,
                Ok(k) => filled += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let sent = if long {
            match memchr::memchr(b'\n', &buf[..filled]) {
                Some(nl) => {
                    long = false;
                    send(&mut buf, nl + 1, &mut filled, Piece::Long { last: true })
                }
                None => {
                    long = !eof;
                    let len = filled;
                    send(&mut buf, len, &mut filled, Piece::Long { last: eof })
                }
            }
        } else if filled == 0 {
            return Ok(());
        } else {
            match memchr::memrchr(b'\n', &buf[..filled]) {
                Some(nl) if !eof => {
                    let f = std::mem::take(&mut first);
                    send(&mut buf, nl + 1, &mut filled, Piece::Lines { first: f })
                }
                _ if eof => {
                    let f = std::mem::take(&mut first);
                    let len = filled;
                    send(&mut buf, len, &mut filled, Piece::Lines { first: f })
                }
                _ if buf.len() >= line_cap => {
                    first = false;
                    long = true;
                    let len = filled;
                    send(&mut buf, len, &mut filled, Piece::Long { last: false })
                }
                _ => {
                    // One line fills the buffer: grow it, up to what proves a line too long.
                    let mut bigger = buffer(free, (buf.len() * 2).min(line_cap));
                    bigger[..filled].copy_from_slice(&buf[..filled]);
                    buf = bigger;
                    true
                }
            }
        };
        if !sent {
            return Ok(());
        }
        if eof && !long && filled == 0 {
            return Ok(());
        }
    }
}

/// A worker thread: handles its chunks until the reader is done, then returns its state.
fn work(
    config: &Config,
    jobs: Receiver<Job>,
    done: SyncSender<Done>,
    out_pool: &Mutex<Vec<Vec<u8>>>,
) -> Worker {
    let mut worker = Worker::new(config);
    let pass_long = worker.passes_long_lines();
    let max_bad = config.max_diagnostics;
    for job in jobs {
        let mut out = out_pool
            .lock()
            .ok()
            .and_then(|mut p| p.pop())
            .unwrap_or_default();
        out.clear();
        let (mut lines, mut bad, mut more_bad) = (0u64, Vec::new(), 0u64);
        let mut note = |line: u64, why: String| {
            if bad.len() < max_bad {
                bad.push((line, why));
            } else {
                more_bad += 1;
            }
        };
        let data = &job.buf[..job.len];
        match job.what {
            Piece::Long { last } => {
                if pass_long {
                    out.extend_from_slice(data);
                }
                if last {
                    lines = 1;
                    note(1, worker.too_long(config.max_line_bytes));
                }
            }
            Piece::Lines { first } => {
                let mut start = 0;
                while start < data.len() {
                    let end =
                        memchr::memchr(b'\n', &data[start..]).map_or(data.len(), |i| start + i + 1);
                    let raw = &data[start..end];
                    start = end;
                    lines += 1;
                    if raw.len() > config.max_line_bytes {
                        if pass_long {
                            out.extend_from_slice(raw);
                        }
                        note(lines, worker.too_long(config.max_line_bytes));
                        continue;
                    }
                    let (prefix, line) = if first && lines == 1 && raw.starts_with(UTF8_BOM) {
                        raw.split_at(UTF8_BOM.len())
                    } else {
                        (&[][..], raw)
                    };
                    let ending_len = if line.ends_with(b"\r\n") {
                        2
                    } else {
                        usize::from(line.ends_with(b"\n"))
                    };
                    let (content, ending) = line.split_at(line.len() - ending_len);
                    // Writing to a Vec cannot fail.
                    if let Ok(Some(why)) = worker.line(prefix, content, ending, &mut out) {
                        note(lines, why);
                    }
                }
            }
        }
        let r = Done {
            seq: job.seq,
            out,
            lines,
            bad,
            more_bad,
            buf: job.buf,
        };
        if done.send(r).is_err() {
            break;
        }
    }
    worker
}

/// The calling thread: writes chunk results in input order and reports their bad lines with
/// file line numbers; hands buffers back for reuse.
fn write_in_order(
    done: Receiver<Done>,
    w: &mut impl Write,
    flush_each_chunk: bool,
    report: &mut dyn FnMut(u64, Option<&str>),
    free: &mpsc::Sender<ReadBuf>,
    out_pool: &Mutex<Vec<Vec<u8>>>,
) -> io::Result<()> {
    let mut waiting: BTreeMap<u64, Done> = BTreeMap::new();
    let mut next = 0u64;
    let mut line_base = 0u64;
    for d in done {
        waiting.insert(d.seq, d);
        while let Some(d) = waiting.remove(&next) {
            w.write_all(&d.out)?;
            if flush_each_chunk {
                w.flush()?;
            }
            for (line, why) in &d.bad {
                report(line_base + line, Some(why));
            }
            for _ in 0..d.more_bad {
                report(line_base + d.lines, None);
            }
            line_base += d.lines;
            next += 1;
            let _ = free.send(d.buf);
            if let Ok(mut pool) = out_pool.lock() {
                pool.push(d.out);
            }
        }
    }
    Ok(())
}
