//! Summary runs: reading the inputs into digests (several files at once), printing a summary
//! every interval of wall time (`--every`, `--window`), cutting log time into windows
//! (`--bucket`), ending cleanly on Ctrl-C or SIGTERM, a progress line on stderr, and the final
//! report (rendering, SLO verdicts, digest file, exit status). Also `tokentime merge`.
//!
//! Shape: worker threads read the inputs, each through the driver ([`crate::app::driver`]:
//! documents' records read, files chunked by their share of the threads) into its own
//! [`Tally`] behind a mutex ([`scan`]), locked once per line, uncontended but for a snapshot;
//! the calling thread ([`Watch`]) owns stdout and only waits, wakes every 100 ms or at the next interval, and renders. A worker blocked on a
//! silent stdin (`tail -F`) never delays a tick or a signal: the final summary is printed from
//! the parts as they are and [`run_summary`] returns without joining it. Parts are folded into
//! the total in input order, so results do not depend on which thread read what.
//!
//! `--threads N` threads read the inputs: up to N files at once, and, when there are fewer
//! files than threads (and no `--every`), each file in chunks by its share of the threads
//! ([`crate::app::parallel`]; the chunk workers' parts are folded into the file's part, in order,
//! when it is done).

use crate::analysis::analyze;
use crate::app::driver::{self, Documents, Reading, WorkerSink};
use crate::app::error::{Error, ExitCode};
use crate::app::ordered::Gate;
use crate::app::out_file::ClosedOk;
use crate::app::worker::{Tally, Worker};
use crate::classify::Coverage;
use crate::cli::config::{Config, MergeConfig, ReportConfig, SummaryConfig, SummaryOutput};
use crate::input::source::Source;
use crate::output::compact::{self, write_text};
use crate::output::render;
use crate::output::summary::{slos_json, to_json};
use crate::summary::Summary;
use crate::summary::window::{Buckets, Sliding, format_duration, rfc3339_ms};
use crate::summary::{digest_file, slo};
use serde_json::json;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Everything the workers share with the calling thread.
struct Shared {
    config: Config,
    /// `config` with `threads` set to each file's share, for files read in chunks; `None`
    /// when files are not read in chunks.
    chunked_config: Option<Config>,
    /// Files being read in chunks right now.
    chunked: AtomicUsize,
    sc: SummaryConfig,
    template: Summary,
    /// The processor every input's worker starts from (formats compiled once).
    proto: crate::classify::Processor,
    parts: Vec<Mutex<Tally>>,
    next: AtomicUsize,
    stop: AtomicBool,
    bytes: Arc<AtomicU64>,
    /// Writes the inputs' messages on stderr in input order.
    gate: Arc<Gate>,
    /// Inputs that failed (to open, or while being read).
    input_failed: AtomicU64,
    /// With several inputs whose copies are set aside: each keeps the identities of its
    /// requests below this bound, so that those two inputs both hold are told
    /// ([`crate::app::overlaps`]); and how many times the share kept was halved.
    sample: Option<(u64, u32)>,
}

/// The bytes of the inputs that are files (standard input counts none).
fn input_bytes(config: &Config) -> u64 {
    config
        .inputs
        .iter()
        .filter_map(|s| match s {
            Source::Path(p) => std::fs::metadata(p).ok().map(|m| m.len()),
            Source::Stdin => None,
        })
        .sum()
}

/// Reads input `i` into its part. An input that cannot be read is reported on stderr and
/// counted (the run still reports what the other inputs hold, and exits 2).
fn scan(sh: &Shared, i: usize) -> Result<(), Error> {
    let source = &sh.config.inputs[i];
    let name = source.name();
    let mut worker = Worker::shared(&sh.proto, &sh.sc, sh.template.clone(), &sh.parts[i])
        .with_map_check(&sh.config);
    if let Some((bound, _)) = sh.sample {
        worker.sample_keys(bound);
    }
    let _reading = sh.gate.enter(i);
    let mut report = |line: u64, why: Option<&str>| match why {
        Some(why) => sh.gate.report(i, &name, line, why),
        None => sh.gate.hide(i),
    };
    let mut sink = WorkerSink {
        worker: &mut worker,
        out: &mut io::sink(),
        report: &mut report,
        line_buffered: false,
        finish_each: true,
        failed: false,
        held: None,
    };
    let reading = Reading {
        config: &sh.config,
        chunked: sh.chunked_config.as_ref(),
        documents: Documents::Records,
        stop: Some(&sh.stop),
        bytes: Some(&sh.bytes),
        in_chunks: Some(&sh.chunked),
    };
    driver::read(&reading, source, &mut sink).map_err(Error::Output)?;
    if sink.failed {
        sh.input_failed.fetch_add(1, Ordering::Relaxed);
        // The requests after those read would have ended in the window of the last one read
        // and after: that window says so.
        if let Some(b) = &mut lock(&sh.parts[i]).buckets {
            b.mark_latest(&format!(
                "{} not read to its end",
                crate::input::shown_name(&name)
            ));
        }
    }
    Ok(())
}

/// SIGINT, SIGTERM and SIGHUP set a flag (the run then prints its final summary and saves its
/// digest file: a `tail -F | tokentime summary` whose ssh session or terminal closed keeps its
/// run); a second one ends the process at once (status 130). A SIGHUP ignored when the run
/// started (`nohup`) stays ignored.
fn install_signals() -> io::Result<Arc<AtomicBool>> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        if sig == SIGHUP && ignored(sig) {
            continue;
        }
        signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&flag))?;
        signal_hook::flag::register(sig, Arc::clone(&flag))?;
    }
    Ok(flag)
}

/// True when signal `sig` is ignored (as `nohup` leaves SIGHUP).
fn ignored(sig: i32) -> bool {
    // SAFETY: a query of the disposition only (no new action), into a zeroed sigaction that
    // lives across the call.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &raw mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    }
}

/// The progress line on stderr: bytes read of the files' total, and the rate.
struct Progress {
    enabled: bool,
    total: u64,
    start: Instant,
    delay: Duration,
    last: Option<Instant>,
}

impl Progress {
    fn update(&mut self, read: u64, last_call: bool) {
        let now = Instant::now();
        if !self.enabled || now - self.start < self.delay {
            return;
        }
        if !last_call
            && self
                .last
                .is_some_and(|t| now - t < Duration::from_millis(200))
        {
            return;
        }
        self.last = Some(now);
        let secs = (now - self.start).as_secs_f64().max(1e-3);
        let pct = if self.total > 0 {
            format!(" ({:.0}%)", read as f64 / self.total as f64 * 100.0)
        } else {
            String::new()
        };
        // Progress on a terminal: a closed stderr only loses it.
        let _ = write!(
            io::stderr(),
            "\r\x1b[2Ktokentime: read {} of {}{pct}, {}/s",
            human_bytes(read),
            human_bytes(self.total),
            human_bytes((read as f64 / secs) as u64)
        );
    }

    fn finish(&mut self, read: u64) {
        if self.enabled && self.last.is_some() {
            self.update(read, true);
            let _ = write!(io::stderr(), "\r\x1b[2K");
        }
    }
}

/// `1.5 MiB`, `320 B`.
pub(crate) fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

/// Runs `tokentime summary`: reads every input, prints the interval summaries when asked,
/// then the final report.
///
/// # Errors
/// An input that cannot be opened or read, output that cannot be written, a digest file
/// that cannot be saved.
pub(crate) fn run_summary(
    config: &Config,
    sc: &SummaryConfig,
    out: &mut impl Write,
) -> Result<ExitCode, Error> {
    check_save_digest(config, sc)?;
    let file_config;
    let config = match &sc.out {
        Some(path) => {
            check_out(config, path)?;
            // A file is no terminal: no redraw in place.
            file_config = Config {
                stdout_is_terminal: false,
                ..config.clone()
            };
            &file_config
        }
        None => config,
    };
    let signals = install_signals().map_err(|e| Error::Config(format!("signals: {e}")))?;
    let digest_file = (!sc.report.digest_to_stdout()).then(|| sc.report.save_digest.clone());
    crate::app::watchdog::start(Arc::clone(&signals), digest_file.flatten());
    let (sh, jobs) = start(config, sc);
    let rx = spawn_readers(&sh, jobs);
    let mut watch = Watch::new(&sh);
    if sc.every.is_some() {
        // An empty checkpoint first: a file of an earlier run, whole, must not outlive a run
        // killed before its first interval.
        watch.checkpoint(None);
    }
    match &sc.out {
        // Each report (flushed whole) replaces the file: see `out_file`.
        Some(path) => {
            let file = crate::app::out_file::ReplaceOnFlush::new(path.clone());
            let mut file = ClosedOk::new(file);
            watch.run(&rx, &signals, &mut file)?;
            file.get_mut().last();
            watch.finish(&mut file)
        }
        None => {
            let mut out = ClosedOk::new(out);
            watch.run(&rx, &signals, &mut out)?;
            watch.finish(&mut out)
        }
    }
}

/// Refuses an `--out` FILE that is also an input, or that cannot be written (before anything
/// is read).
fn check_out(config: &Config, path: &std::path::Path) -> Result<(), Error> {
    if let Some(input) = config
        .inputs
        .iter()
        .find(|s| same_file(s, path).unwrap_or(false))
    {
        return Err(Error::Config(format!(
            "--out {}: is also an input ({}): it would be overwritten",
            path.display(),
            input.name()
        )));
    }
    crate::app::out_file::check_writable(path)
        .map_err(|e| Error::Config(format!("--out {}: {e}", path.display())))
}

/// What the readers of a summary run share, and how many inputs are read at once: live input
/// (`--every`) all at once (each `tail -F` on its own thread); batch input by `--threads`
/// threads, a file in chunks when there are fewer files than threads.
fn start(config: &Config, sc: &SummaryConfig) -> (Arc<Shared>, usize) {
    let template = crate::app::worker::template(sc)
        .with_hit_ratio(Some(config.cache_hit_ratio))
        .with_format_choice(crate::app::unmapped::format_choice(config))
        .with_formats_file(config.formats.iter().any(|f| f.from_file));
    let n = config.inputs.len();
    let jobs = if sc.every.is_some() {
        n
    } else {
        sc.jobs.clamp(1, n.max(1))
    };
    let per_file = (config.threads / jobs.max(1)).max(1);
    let chunked_config = (sc.every.is_none() && per_file > 1).then(|| Config {
        threads: per_file,
        ..config.clone()
    });
    let sh = Arc::new(Shared {
        config: config.clone(),
        chunked_config,
        chunked: AtomicUsize::new(0),
        sc: sc.clone(),
        parts: (0..n)
            .map(|_| {
                let mut part = Tally::new(&template, sc);
                // One input is one stream: its windows are written as they complete (kept
                // too for a digest file, which holds them all; not when the digest is the
                // output, in their place).
                if n == 1 && !sc.report.digest_to_stdout() {
                    part.buckets = sc.bucket.map(|w| {
                        let b = Buckets::new(w).cut_by(sc.range).streaming(sc.bucket_grace);
                        if sc.report.save_digest.is_some() {
                            b.keeping()
                        } else {
                            b
                        }
                    });
                }
                Mutex::new(part)
            })
            .collect(),
        template,
        proto: Worker::summary_processor(config, sc),
        next: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        bytes: Arc::new(AtomicU64::new(0)),
        gate: Gate::new(n, config.max_diagnostics, sc.every.is_none()),
        input_failed: AtomicU64::new(0),
        sample: (n > 1 && !sc.keep_duplicates)
            .then(|| crate::app::overlaps::sample_bound(input_bytes(config))),
    });
    (sh, jobs)
}

/// Reads every input of `config` into one summary, as [`run_summary`] does, and returns it
/// without a report (`tokentime diff`): the same readers and folding, no interval summaries,
/// no signals (Ctrl-C ends the process). `coverage.read_errors` counts inputs that could not
/// be read to their end.
///
/// # Errors
/// As [`run_summary`]'s reading.
pub(crate) fn collect(config: &Config, sc: &SummaryConfig) -> Result<(Coverage, Summary), Error> {
    collect_into(config, sc, &mut io::sink())
}

/// [`collect`], with the `--bucket` windows `sc` asks for written to `windows` as `summary
/// --bucket -o json` writes them, one JSON line per window and group (`tokentime report`).
///
/// # Errors
/// As [`collect`]; `windows` that cannot be written.
pub(crate) fn collect_into(
    config: &Config,
    sc: &SummaryConfig,
    windows: &mut impl Write,
) -> Result<(Coverage, Summary), Error> {
    let (sh, jobs) = start(config, sc);
    let rx = spawn_readers(&sh, jobs);
    let mut watch = Watch::new(&sh);
    watch.run(
        &rx,
        &AtomicBool::new(false),
        &mut ClosedOk::new(&mut *windows),
    )?;
    let mut fin = watch.fold_rest();
    fin.cov.read_errors += sh.input_failed.load(Ordering::Relaxed);
    if let Some(b) = &mut fin.buckets {
        windows.write_all(&fin.ready).map_err(Error::Output)?;
        let style = crate::app::buckets::WindowStyle::of(sc);
        crate::app::buckets::write_all(windows, b, &style).map_err(Error::Output)?;
    }
    sh.gate.finish();
    watch.say_shared();
    Ok((fin.cov, fin.summary))
}

/// Refuses a `--save-digest` file that is also an input, or that cannot be written (before
/// anything is read).
fn check_save_digest(config: &Config, sc: &SummaryConfig) -> Result<(), Error> {
    let Some(path) = &sc.report.save_digest else {
        return Ok(());
    };
    if sc.report.digest_to_stdout() {
        return Ok(());
    }
    if let Some(input) = config
        .inputs
        .iter()
        .find(|s| same_file(s, path).unwrap_or(false))
    {
        return Err(Error::Config(format!(
            "--save-digest {}: is also an input ({}): it would be overwritten, or written into the pipe being read",
            path.display(),
            input.name()
        )));
    }
    digest_file::check_writable(path)
        .map_err(|e| Error::Config(format!("--save-digest {}: {e}", path.display())))
}

/// Whether `path` is the file `source` reads, told by device and inode (a hard link, a
/// `/dev/stdin` or `/dev/fd/0` of the standard input read, a pipe, all are caught; a name
/// compared would not be). `None` when either cannot be looked at (`path` does not exist yet).
#[cfg(unix)]
fn same_file(source: &Source, path: &std::path::Path) -> Option<bool> {
    use std::os::unix::fs::MetadataExt;
    let target = std::fs::metadata(path).ok()?;
    let input = match source {
        Source::Path(p) => std::fs::metadata(p).ok()?,
        Source::Stdin => {
            use std::os::fd::AsFd;
            let fd = io::stdin().as_fd().try_clone_to_owned().ok()?;
            std::fs::File::from(fd).metadata().ok()?
        }
    };
    Some(input.dev() == target.dev() && input.ino() == target.ino())
}

/// Whether `path` is the file `source` reads, by their canonical paths (no inodes here).
#[cfg(not(unix))]
fn same_file(source: &Source, path: &std::path::Path) -> Option<bool> {
    match source {
        Source::Path(p) => Some(p.canonicalize().ok()? == path.canonicalize().ok()?),
        Source::Stdin => None,
    }
}

/// Starts `jobs` threads that read the inputs, each the next one not yet taken; each input
/// read is announced on the channel returned.
fn spawn_readers(sh: &Arc<Shared>, jobs: usize) -> mpsc::Receiver<(usize, Result<(), Error>)> {
    let (tx, rx) = mpsc::channel::<(usize, Result<(), Error>)>();
    for _ in 0..jobs {
        let (sh, tx) = (Arc::clone(sh), tx.clone());
        std::thread::spawn(move || {
            loop {
                let i = sh.next.fetch_add(1, Ordering::Relaxed);
                if i >= sh.config.inputs.len() || sh.stop.load(Ordering::Relaxed) {
                    break;
                }
                let r = scan(&sh, i);
                let failed = r.is_err();
                if tx.send((i, r)).is_err() || failed {
                    break;
                }
            }
        });
    }
    rx
}

/// The calling thread of a summary run: it folds the inputs read into the total, in input
/// order, prints the interval summaries, the progress line, and the final report.
struct Watch<'a> {
    sh: &'a Shared,
    progress: Progress,
    /// The inputs folded so far (the first `folded`).
    total: Tally,
    done: Vec<bool>,
    finished: usize,
    folded: usize,
    start: Instant,
    every: Option<Duration>,
    next_tick: Option<Instant>,
    sliding: Option<Sliding>,
    ticks: u64,
    interrupted: bool,
    /// Standard output was closed while reading (`--every`, `--bucket`): reading stopped.
    output_closed: bool,
    said_no_requests: bool,
    /// A checkpoint of the digest file could not be written, and stderr said so.
    said_checkpoint_error: bool,
    /// `--bucket` windows are written as they complete.
    streaming: bool,
    /// How long to wait before looking for windows complete again: 2 ms while windows come,
    /// doubled up to [`IDLE_WAIT_MS`] while none do (an input that is idle, a live log at
    /// night, does not wake tokentime 500 times a second).
    window_wait_ms: u64,
    /// The `--bucket` table's header, until it is written (before the first window).
    window_header: Option<String>,
    /// The requests the inputs folded so far share ([`Shared::sample`]).
    overlaps: Option<crate::app::overlaps::Overlaps>,
}

/// How long the thread that prints waits for news, at the most (ms).
const IDLE_WAIT_MS: u64 = 100;

/// How long it waits while `--bucket` windows complete (ms): a worker that has rendered many
/// waits for them to be written.
const BUSY_WAIT_MS: u64 = 2;

impl<'a> Watch<'a> {
    fn new(sh: &'a Shared) -> Self {
        let (config, sc) = (&sh.config, &sh.sc);
        let total_bytes = input_bytes(config);
        let progress = Progress {
            enabled: sc.progress.is_some() && total_bytes > 0,
            total: total_bytes,
            start: Instant::now(),
            delay: sc.progress.unwrap_or_default(),
            last: None,
        };
        let start = Instant::now();
        let every = sc.every.map(|ns| Duration::from_nanos(ns as u64));
        Watch {
            sh,
            progress,
            total: Tally::new(&sh.template, sc),
            done: vec![false; config.inputs.len()],
            finished: 0,
            folded: 0,
            start,
            every,
            next_tick: every.map(|e| start + e),
            sliding: sc.window.map(|w| Sliding::new(w, sc.every.unwrap_or(w))),
            ticks: 0,
            interrupted: false,
            output_closed: false,
            said_no_requests: false,
            said_checkpoint_error: false,
            streaming: sc.bucket.is_some()
                && config.inputs.len() == 1
                && !sc.report.digest_to_stdout(),
            window_wait_ms: BUSY_WAIT_MS,
            window_header: sc
                .bucket
                .and_then(|_| crate::app::buckets::WindowStyle::of(sc).table)
                .map(|t| t.header()),
            overlaps: sh
                .sample
                .map(|(_, shift)| crate::app::overlaps::Overlaps::new(shift)),
        }
    }

    /// Waits for the inputs to be read (or a signal), printing the interval summaries.
    fn run<W: Write>(
        &mut self,
        rx: &mpsc::Receiver<(usize, Result<(), Error>)>,
        signals: &AtomicBool,
        out: &mut ClosedOk<W>,
    ) -> Result<(), Error> {
        let sh = self.sh;
        while self.finished < self.done.len() {
            // Windows written as they complete are waited for by their worker: written soon.
            let mut wait = Duration::from_millis(if self.streaming {
                self.window_wait_ms
            } else {
                IDLE_WAIT_MS
            });
            if let Some(t) = self.next_tick {
                wait = wait.min(t.saturating_duration_since(Instant::now()));
            }
            match rx.recv_timeout(wait) {
                Ok((_, Err(e))) => {
                    sh.stop.store(true, Ordering::Relaxed);
                    self.progress.finish(sh.bytes.load(Ordering::Relaxed));
                    return Err(e);
                }
                Ok((i, Ok(()))) => self.fold(i),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            if signals.load(Ordering::Relaxed) {
                self.interrupted = true;
                sh.stop.store(true, Ordering::Relaxed);
                // A file read in chunks adds up its chunks when they are done: wait for the
                // few in flight (a file on a silent pipe is never read in chunks).
                let deadline = Instant::now() + Duration::from_secs(2);
                while sh.chunked.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(5));
                }
                break;
            }
            if let (Some(t), Some(every)) = (self.next_tick, self.every)
                && Instant::now() >= t
            {
                let mut t = t + every;
                while t <= Instant::now() {
                    t += every;
                }
                self.next_tick = Some(t);
                self.tick(out)?;
            }
            self.window_wait_ms = if self.write_ready(out)? {
                BUSY_WAIT_MS
            } else {
                (self.window_wait_ms * 2).min(IDLE_WAIT_MS)
            };
            // Nobody reads the reports any more (`| head`): stop reading, as a signal would,
            // and end with the SLOs judged and the digest saved on what was read.
            if out.closed() {
                self.output_closed = true;
                sh.stop.store(true, Ordering::Relaxed);
                break;
            }
            self.progress
                .update(sh.bytes.load(Ordering::Relaxed), false);
        }
        Ok(())
    }

    /// Writes the `--bucket` windows completed so far (one input: [`Buckets::streaming`]);
    /// true when there were any.
    fn write_ready(&mut self, out: &mut impl Write) -> Result<bool, Error> {
        if !self.streaming {
            return Ok(false);
        }
        let mut bytes = std::mem::take(&mut self.total.ready);
        for p in &self.sh.parts {
            let mut p = lock(p);
            if bytes.is_empty() {
                std::mem::swap(&mut bytes, &mut p.ready);
            } else {
                bytes.extend_from_slice(&p.ready);
                p.ready.clear();
            }
        }
        if !bytes.is_empty() {
            self.write_window_header(out)?;
            out.write_all(&bytes).map_err(Error::Output)?;
            out.flush().map_err(Error::Output)?;
        }
        Ok(!bytes.is_empty())
    }

    /// Writes the `--bucket` table's header, once, before its first window.
    fn write_window_header(&mut self, out: &mut impl Write) -> Result<(), Error> {
        if let Some(h) = self.window_header.take() {
            writeln!(out, "{h}").map_err(Error::Output)?;
        }
        Ok(())
    }

    /// Input `i` has been read: folds it, and those after it already read, into the total.
    fn fold(&mut self, i: usize) {
        let (sh, n) = (self.sh, self.done.len());
        self.finished += 1;
        self.done[i] = true;
        while self.folded < n && self.done[self.folded] {
            let empty = Tally::new(&sh.template, &sh.sc);
            let p = std::mem::replace(&mut *lock(&sh.parts[self.folded]), empty);
            self.absorb(self.folded, &p);
            self.folded += 1;
        }
    }

    /// Adds input `i`'s part to the total (and its sample of identities to those compared).
    fn absorb(&mut self, i: usize, p: &Tally) {
        if let Some(o) = &mut self.overlaps {
            o.add(i, &p.key_sample, p.summary.overall_span().map(|s| s.0));
        }
        self.total.absorb(p, &self.sh.template);
    }

    /// The total, with the inputs not folded yet (those still being read when the run
    /// stopped) added: taken out, not cloned (a `--bucket` run holds every window).
    fn fold_rest(&mut self) -> Tally {
        let sh = self.sh;
        for (i, p) in sh.parts.iter().enumerate().skip(self.folded) {
            self.absorb(i, &lock(p));
        }
        std::mem::replace(&mut self.total, Tally::new(&sh.template, &sh.sc))
    }

    /// Says on stderr which two inputs both hold requests ([`crate::app::overlaps`]).
    fn say_shared(&self) {
        let Some(o) = &self.overlaps else {
            return;
        };
        let config = &self.sh.config;
        let name = |i: usize| crate::input::shown_name(&config.inputs[i].name()).into_owned();
        let warnings = o.warnings(name, &format_duration(config.join_timeout_ns));
        // Months of archives whose batches were shipped twice: the first few pairs, then a
        // count (--max-diagnostics, as bad lines).
        let shown = config.max_diagnostics.max(1);
        for w in warnings.iter().take(shown) {
            crate::diag!("tokentime: {w}");
        }
        if warnings.len() > shown {
            crate::diag!(
                "tokentime: {} more pairs of inputs hold requests alike (not named one by one: \
                 --max-diagnostics)",
                warnings.len() - shown
            );
        }
    }

    /// Prints an interval summary (`--every`).
    fn tick(&mut self, out: &mut impl Write) -> Result<(), Error> {
        let (sh, config, sc) = (self.sh, &self.sh.config, &self.sh.sc);
        self.ticks += 1;
        let (cov, mut summary) = match &mut self.sliding {
            Some(sl) => {
                let (c, s) = take_slices(sh, &mut self.total, self.folded);
                sl.push(c, s)
            }
            None => {
                let snap = snapshot(sh, &self.total, self.folded);
                (snap.cov, snap.summary)
            }
        };
        // Said once, as soon as it shows (a live `tail -F` may never end): lines read since
        // the start, none a request. (The table says it in every report.)
        if !self.said_no_requests
            && self.sliding.is_none()
            && cov.requests == 0
            && cov.lines > 0
            && sc.report.output != SummaryOutput::Table
        {
            crate::diag!("tokentime: {}", summary.no_requests(&cov));
            self.said_no_requests = true;
        }
        let elapsed = self.start.elapsed();
        let window_ns = window_ns(self.sliding.as_ref(), sc.every);
        let tick = Tick {
            header: tick_header(self.ticks, elapsed, window_ns),
            n: self.ticks,
            elapsed,
            window_ns,
        };
        write_tick(out, config, sc, &tick, &cov, &mut summary).map_err(Error::Output)?;
        out.flush().map_err(Error::Output)?;
        let whole = match self.sliding {
            Some(_) => None,
            None => Some((cov, summary)),
        };
        self.checkpoint(whole);
        Ok(())
    }

    /// `--save-digest FILE` under `--every`: the digest file of everything so far, written at
    /// each interval (a temporary file renamed over FILE) and marked as a partial run's, so that
    /// a live run killed outright (SIGKILL, a crash, the machine down) leaves the digest of
    /// what it had read by its last interval; the final summary replaces it with the whole
    /// run's. Not for a FILE that is not a regular one (a pipe would get a document per
    /// interval). `whole`: the interval's summary when it covers everything so far.
    fn checkpoint(&mut self, whole: Option<(Coverage, Summary)>) {
        let sc = &self.sh.sc;
        let Some(path) = sc.report.save_digest.as_deref() else {
            return;
        };
        if sc.report.digest_to_stdout() {
            return;
        }
        // A symbolic link to a regular file: its target is replaced, the link kept.
        let target = match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => match std::fs::canonicalize(path) {
                Ok(t) if t.is_file() => t,
                _ => return,
            },
            _ if digest_file::replaceable(path) => path.to_path_buf(),
            _ => return,
        };
        let (mut cov, mut summary) = whole.unwrap_or_else(|| {
            let snap = snapshot(self.sh, &self.total, self.folded);
            (snap.cov, snap.summary)
        });
        cov.read_errors += self.sh.input_failed.load(Ordering::Relaxed);
        cov.checkpoints = 1;
        if let Err(e) = digest_file::save_via(&target, &cov, &mut summary, None, create_watched) {
            // Said once; the final summary tries again, and its failure is the run's.
            if !self.said_checkpoint_error {
                crate::diag!("tokentime: --save-digest {}: {e}", path.display());
                self.said_checkpoint_error = true;
            }
        }
    }

    /// With `--window`, the Prometheus and OpenMetrics renderings' final document: the last
    /// window and the part of an interval since the last one (at least a window, as each
    /// interval's), with its span (`tokentime_window_seconds`).
    fn last_window(&mut self) -> Option<(Coverage, Summary, Option<i64>)> {
        let (sh, sc) = (self.sh, &self.sh.sc);
        let sl = self
            .sliding
            .as_mut()
            .filter(|_| sc.report.output.exposition())?;
        let (c, s) = take_slices(sh, &mut self.total, self.folded);
        let (c, mut s) = sl.push_last(c, s);
        let since_tick = match (self.next_tick, self.every) {
            (Some(t), Some(every)) => {
                every.saturating_sub(t.saturating_duration_since(Instant::now()))
            }
            _ => Duration::ZERO,
        };
        let since_tick = i64::try_from(since_tick.as_millis()).unwrap_or(0) * 1_000_000;
        let window = window_ns(Some(sl), sc.every).map(|w| w.saturating_add(since_tick));
        s.set_rate_window(covered_ns(window, self.start.elapsed()));
        Some((c, s, window))
    }

    /// Prints the final report; returns the exit code.
    fn finish(mut self, out: &mut impl Write) -> Result<ExitCode, Error> {
        let (sh, config, sc) = (self.sh, &self.sh.config, &self.sh.sc);
        self.progress.finish(sh.bytes.load(Ordering::Relaxed));
        // With `--window`, the Prometheus and OpenMetrics renderings end with the last window,
        // as each interval's document was (a textfile collector serves the last one written
        // after the run: whole-run values there would read as one window's).
        let last_window = self.last_window();
        let mut fin = self.fold_rest();
        // Saved with the digests too: a merge of partial runs says so ([`run_merge`]).
        fin.cov.read_errors += sh.input_failed.load(Ordering::Relaxed);
        // And that it was stopped before the end of its input (`partial` in the digest file).
        fin.cov.interrupted = u64::from(self.interrupted || self.output_closed);
        if self.output_closed {
            crate::diag!(
                "tokentime: standard output closed; stopped reading (SLOs judged, digest saved, on the input read so far)"
            );
        } else if self.interrupted {
            crate::diag!("tokentime: interrupted; summary of the input read so far");
        }
        if self.interrupted || self.output_closed {
            // No window still held was complete.
            if let Some(b) = &mut fin.buckets {
                b.mark_held("interrupted");
            }
        }
        if self.ticks > 0 && config.stdout_is_terminal && sc.report.output == SummaryOutput::Table {
            out.write_all(b"\x1b[H\x1b[2J").map_err(Error::Output)?;
        }
        if sc.every.is_some() && sc.report.output == SummaryOutput::Table && fin.buckets.is_none() {
            // The final table is headed like the interval ones (docs/live-and-windows.md).
            writeln!(
                out,
                "tokentime summary final at {} ({}s elapsed): everything",
                rfc3339_ms(now_ns()),
                self.start.elapsed().as_secs()
            )
            .map_err(Error::Output)?;
        }
        let broken = match &mut fin.buckets {
            Some(b) => {
                let windows =
                    !fin.ready.is_empty() || !b.windows.is_empty() || b.taken_before.is_some();
                // `--save-digest -`: the digest, windows and all, in place of the windows.
                if !sc.report.digest_to_stdout() {
                    let style = crate::app::buckets::WindowStyle::of(sc);
                    let head = self.window_header.take();
                    crate::app::buckets::write_windows(out, &fin.ready, b, &style, head)
                        .map_err(Error::Output)?;
                }
                if b.late > 0 {
                    crate::diag!(
                        "tokentime: {} ended in --bucket windows already complete (over --bucket-grace {} behind the latest end read): their windows are written with only them (a second line where one was written before), marked \"late\": true",
                        crate::output::summary::plural(b.late, "request"),
                        format_duration(b.grace)
                    );
                }
                crate::app::buckets::say_unplaced(b, windows);
                // The digest file holds the windows written as they completed too.
                b.restore_kept();
                report_slos_and_digest(out, &sc.report, &fin.cov, &mut fin.summary, Some(b))?.0
            }
            None => match last_window {
                Some(window) => report_last_window(out, &sc.report, &mut fin, window)?,
                None => report(
                    out,
                    &sc.report,
                    &fin.cov,
                    &mut fin.summary,
                    sc.every.is_some(),
                )?,
            },
        };
        out.flush().map_err(Error::Output)?;
        sh.gate.finish();
        self.say_shared();
        crate::app::keys::warn_absent_by(&sc.by, fin.cov.requests, &mut fin.summary, &fin.keys);
        let mapped =
            crate::app::unmapped::Mapped::of(&config.formats, &config.root).or_else(|| {
                crate::app::unmapped::Mapped::of_file(&config.formats, &config.root, &fin.cov)
            });
        if let Some(mapped) = mapped {
            mapped.warn_unseen(fin.cov.requests, &fin.keys);
        }
        crate::app::unmapped::warn_after_run(&config.formats, &mut fin.summary, &fin.cov);
        if fin.cov.requests == 0
            && fin.cov.lines > 0
            && sc.report.output != SummaryOutput::Table
            && !self.said_no_requests
        {
            crate::diag!("tokentime: {}", fin.summary.no_requests(&fin.cov));
        }
        if fin.cov.read_errors > 0 {
            return Ok(ExitCode::Usage);
        }
        Ok(exit_code(config, &fin.cov, broken))
    }
}

pub(crate) fn exit_code(config: &Config, cov: &Coverage, slos: slo::Status) -> ExitCode {
    let bad = config.strict && (cov.invalid > 0 || cov.too_long > 0);
    if bad {
        crate::diag!(
            "tokentime: --strict: {} invalid and {} too-long lines",
            cov.invalid,
            cov.too_long
        );
    }
    if slos == slo::Status::Unjudged {
        ExitCode::Usage
    } else if slos == slo::Status::Broken {
        ExitCode::SloViolated
    } else if bad {
        ExitCode::BadLines
    } else {
        ExitCode::Ok
    }
}

/// The total so far: the folded inputs and, in order, those still being read.
fn snapshot(sh: &Shared, total: &Tally, folded: usize) -> Tally {
    let mut snap = total.clone();
    for p in &sh.parts[folded..] {
        snap.absorb(&lock(p), &sh.template);
    }
    snap
}

/// Takes the `--window` slices of every part (leaving empty ones) and adds them up.
fn take_slices(sh: &Shared, total: &mut Tally, folded: usize) -> (Coverage, Summary) {
    let empty = (Coverage::default(), sh.template.empty_like());
    let (mut cov, mut sum) = total.slice.replace(empty.clone()).unwrap_or(empty.clone());
    for p in &sh.parts[folded..] {
        if let Some((c, s)) = lock(p).slice.replace(empty.clone()) {
            cov.merge(&c);
            sum.merge(&s);
        }
    }
    (cov, sum)
}

/// The wall time (ns) a `--window` summary covers, its rates' time: the window, or the time
/// since the start while that is shorter (`None` without `--window`).
fn covered_ns(window_ns: Option<i64>, elapsed: Duration) -> Option<i64> {
    // To the millisecond: `span_s` reads 0.5, not 0.500192444.
    let elapsed = i64::try_from(elapsed.as_millis())
        .unwrap_or(i64::MAX / 1_000_000)
        .saturating_mul(1_000_000);
    window_ns.map(|w| w.min(elapsed))
}

/// The wall time a `--window` interval summary covers, in ns: whole intervals of `every`
/// (`None` without `--window`).
fn window_ns(sliding: Option<&Sliding>, every: Option<i64>) -> Option<i64> {
    sliding
        .zip(every)
        .map(|(sl, every)| every * sl.intervals() as i64)
}

/// The line over an interval's summary on a pipe: its number, the time, what it covers (the
/// window once a whole window has passed since the start; before that, everything so far).
fn tick_header(n: u64, elapsed: Duration, window_ns: Option<i64>) -> String {
    let scope = match window_ns {
        Some(w) if covered_ns(Some(w), elapsed) == Some(w) => {
            format!("last {}", format_duration(w))
        }
        Some(w) => format!(
            "everything so far (the {} window not yet full)",
            format_duration(w)
        ),
        None => "everything so far".to_owned(),
    };
    format!(
        "tokentime summary #{n} at {} ({}s elapsed): {scope}",
        rfc3339_ms(now_ns()),
        elapsed.as_secs()
    )
}

/// One interval summary: its header (table), its number from 1, the time since the start, the
/// `--window` it covers (whole intervals).
struct Tick {
    header: String,
    n: u64,
    elapsed: Duration,
    window_ns: Option<i64>,
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

fn write_tick(
    out: &mut impl Write,
    config: &Config,
    sc: &SummaryConfig,
    tick: &Tick,
    cov: &Coverage,
    summary: &mut Summary,
) -> io::Result<()> {
    let Tick {
        header,
        n,
        elapsed,
        window_ns,
    } = tick;
    let q = &sc.report.quantiles;
    // A window's rates run over the wall time it covers.
    summary.set_rate_window(covered_ns(*window_ns, *elapsed));
    // Each interval's SLO verdicts, on what it covers (the last `--window`, else everything so
    // far); the exit status is the final summary's.
    let verdicts = judge(&sc.report.slos, cov, summary, *window_ns);
    match sc.report.output {
        SummaryOutput::Json => {
            let report = analyze(summary, &sc.report.analysis, q);
            let mut doc = to_json(cov, summary, q, report);
            if !verdicts.is_empty() {
                doc.head.insert("slos".into(), slos_json(&verdicts));
            }
            doc.head.insert(
                "interval".into(),
                json!({
                    "n": n,
                    "at": rfc3339_ms(now_ns()),
                    "elapsed_s": crate::output::enrich::round3(elapsed.as_secs_f64()),
                    "window_s": window_ns.map(|w| w as f64 / 1e9),
                }),
            );
            doc.head.insert("final".into(), json!(false));
            serde_json::to_writer(&mut *out, &doc)?;
            out.write_all(b"\n")
        }
        SummaryOutput::Table => {
            let report = analyze(summary, &sc.report.analysis, q);
            let style = &sc.report.table;
            if style.explain || sc.report.analysis.hist {
                if config.stdout_is_terminal {
                    out.write_all(b"\x1b[H\x1b[2J")?;
                }
                writeln!(out, "{header}")?;
                for v in &verdicts {
                    writeln!(out, "{}", v.line())?;
                }
                write_text(out, cov, summary, q, &sc.report.analysis, &report, style)?;
                if !config.stdout_is_terminal {
                    writeln!(out)?;
                }
                return Ok(());
            }
            let mut lines = vec![header.clone()];
            lines.extend(verdicts.iter().map(slo::Verdict::line));
            lines.extend(compact::compact_lines(cov, summary, q, &report, style));
            if config.stdout_is_terminal {
                write_in_place(out, lines, compact::output_height())
            } else {
                for l in lines {
                    writeln!(out, "{l}")?;
                }
                writeln!(out)
            }
        }
        // Whole documents one after another, a blank line after each (docs/live-and-windows.md).
        SummaryOutput::Csv => {
            render::write_delimited(out, render::Delimited::Csv, summary, q)?;
            writeln!(out)
        }
        SummaryOutput::Tsv => {
            render::write_delimited(out, render::Delimited::Tsv, summary, q)?;
            writeln!(out)
        }
        SummaryOutput::Prometheus => {
            render::write_prometheus(out, cov, summary, q, &verdicts)?;
            render::write_window_gauge(out, *window_ns)?;
            writeln!(out)
        }
        // Each document ends with `# EOF` (OpenMetrics has no blank lines).
        SummaryOutput::Openmetrics => {
            write_openmetrics(out, (cov, summary), q, &verdicts, *window_ns)
        }
    }
}

/// The final report of `--every --window` in a Prometheus or OpenMetrics rendering: the SLOs
/// judged for the exit status (and the digest saved) on the whole run `fin`, as without
/// `--window`; the document, its SLO series included, the last window's `(cov, summary)`, as
/// each interval's was.
fn report_last_window(
    out: &mut impl Write,
    rc: &ReportConfig,
    fin: &mut Tally,
    (cov, mut window, window_ns): (Coverage, Summary, Option<i64>),
) -> Result<slo::Status, Error> {
    let (broken, _) = report_slos_and_digest(out, rc, &fin.cov, &mut fin.summary, None)?;
    if !rc.digest_to_stdout() {
        // The document's SLO series are the last window's, as each interval's were.
        let verdicts = judge(&rc.slos, &cov, &mut window, window_ns);
        let doc = (&cov, &mut window);
        write_exposition(out, rc.output, doc, &rc.quantiles, &verdicts, window_ns)
            .map_err(Error::Output)?;
    }
    Ok(broken)
}

/// Writes the summary in the rendering `output` names of the two
/// ([`SummaryOutput::exposition`]): OpenMetrics, else Prometheus; with the span of a
/// `--window` summary (`window_ns`) as a gauge.
fn write_exposition(
    out: &mut impl Write,
    output: SummaryOutput,
    (cov, summary): (&Coverage, &mut Summary),
    q: &[f64],
    verdicts: &[slo::Verdict],
    window_ns: Option<i64>,
) -> io::Result<()> {
    if output == SummaryOutput::Openmetrics {
        write_openmetrics(out, (cov, summary), q, verdicts, window_ns)
    } else {
        render::write_prometheus(out, cov, summary, q, verdicts)?;
        render::write_window_gauge(out, window_ns)
    }
}

/// Writes the summary in the OpenMetrics text format (with the span of a `--window` summary,
/// `window_ns`, as a gauge).
fn write_openmetrics(
    out: &mut impl Write,
    (cov, summary): (&Coverage, &mut Summary),
    q: &[f64],
    verdicts: &[slo::Verdict],
    window_ns: Option<i64>,
) -> io::Result<()> {
    let mut prom = Vec::new();
    render::write_prometheus(&mut prom, cov, summary, q, verdicts)?;
    render::write_window_gauge(&mut prom, window_ns)?;
    crate::output::openmetrics::write_from_prometheus(out, &prom)
}

/// Redraws an interval summary in place on a terminal of `height` lines: from the top left,
/// each line clearing what was after it, the rest of the screen cleared; the lines that do not
/// fit are left out (the last line says how many).
fn write_in_place(out: &mut impl Write, mut lines: Vec<String>, height: usize) -> io::Result<()> {
    let room = height.saturating_sub(1).max(1);
    if lines.len() > room {
        let hidden = lines.len() - (room - 1);
        lines.truncate(room - 1);
        lines.push(format!(
            "... {hidden} more lines: a taller terminal shows them, the final summary has them"
        ));
    }
    out.write_all(b"\x1b[H")?;
    for l in lines {
        writeln!(out, "{l}\x1b[K")?;
    }
    out.write_all(b"\x1b[J")
}

/// Judges the SLOs (a verdict per SLO on stderr) and saves the digest file (`--save-digest -`:
/// writes it to `out`). Returns how the SLOs came out, and the verdicts.
fn report_slos_and_digest(
    out: &mut impl Write,
    rc: &ReportConfig,
    cov: &Coverage,
    summary: &mut Summary,
    mut windows: Option<&mut Buckets>,
) -> Result<(slo::Status, Vec<slo::Verdict>), Error> {
    if rc.digest_to_stdout() {
        digest_file::write(out, cov, summary, windows).map_err(Error::Output)?;
    } else if let Some(path) = &rc.save_digest {
        digest_file::save_via(path, cov, summary, windows.take(), create_watched)
            .map_err(|e| Error::Config(format!("--save-digest {}: {e}", path.display())))?;
    }
    let verdicts = judge(&rc.slos, cov, summary, None);
    for v in &verdicts {
        crate::diag!("tokentime: {}", v.line());
    }
    Ok((slo::status(&verdicts), verdicts))
}

/// A digest file created, and then written, under the watchdog: a FIFO with no reader blocks
/// in its open.
fn create_watched(p: &std::path::Path) -> io::Result<crate::app::watchdog::Watched<std::fs::File>> {
    crate::app::watchdog::watched(|| std::fs::File::create(p))
        .map(crate::app::watchdog::Watched::new)
}

/// The SLOs judged on `summary`. No request read (an empty file, a log of another format, a
/// quiet interval) or none ended in `--since`/`--until` (a span mistyped, a quiet day): nothing
/// to judge, as for a group no request was in.
fn judge(
    slos: &[slo::Slo],
    cov: &Coverage,
    summary: &mut Summary,
    window_ns: Option<i64>,
) -> Vec<slo::Verdict> {
    let mut verdicts = slo::evaluate(slos, summary);
    if cov.requests == 0 {
        let why = if cov.outside_range > 0 {
            "no request ended between --since and --until".to_owned()
        } else if let Some(w) = window_ns {
            format!("no request in the last {}", format_duration(w))
        } else {
            "no request was read".to_owned()
        };
        for v in verdicts.iter_mut().filter(|v| v.value.is_none()) {
            v.unjudged.get_or_insert_with(|| why.clone());
        }
    }
    verdicts
}

/// Renders the final summary, judges the SLOs, saves the digest file. Returns how the SLOs
/// came out. `one_line` writes JSON on one line (after `--every` documents).
///
/// # Errors
/// Output that cannot be written, a digest file that cannot be saved.
pub(crate) fn report(
    out: &mut impl Write,
    rc: &ReportConfig,
    cov: &Coverage,
    summary: &mut Summary,
    one_line: bool,
) -> Result<slo::Status, Error> {
    let (broken, verdicts) = report_slos_and_digest(out, rc, cov, summary, None)?;
    if rc.digest_to_stdout() {
        // Standard output holds the digest document only.
        return Ok(broken);
    }
    let q = &rc.quantiles;
    let w = match rc.output {
        SummaryOutput::Json => {
            let report = analyze(summary, &rc.analysis, q);
            let mut doc = to_json(cov, summary, q, report);
            if !verdicts.is_empty() {
                doc.head.insert("slos".into(), slos_json(&verdicts));
            }
            let w = if one_line {
                // The last of `--every`'s documents, the whole run's (`interval` null).
                doc.head.insert("interval".into(), serde_json::Value::Null);
                doc.head.insert("final".into(), json!(true));
                serde_json::to_writer(&mut *out, &doc)
            } else {
                serde_json::to_writer_pretty(&mut *out, &doc)
            };
            w.map_err(io::Error::from)
                .and_then(|()| out.write_all(b"\n"))
        }
        SummaryOutput::Table => {
            let report = analyze(summary, &rc.analysis, q);
            write_text(out, cov, summary, q, &rc.analysis, &report, &rc.table)
        }
        SummaryOutput::Csv => render::write_delimited(out, render::Delimited::Csv, summary, q),
        SummaryOutput::Tsv => render::write_delimited(out, render::Delimited::Tsv, summary, q),
        SummaryOutput::Prometheus | SummaryOutput::Openmetrics => {
            write_exposition(out, rc.output, (cov, summary), q, &verdicts, None)
        }
    };
    w.map_err(Error::Output)?;
    Ok(broken)
}

/// Runs `tokentime merge`: the digest files merged in order, reported as a summary run over
/// all their inputs would have been.
///
/// # Errors
/// A digest file that cannot be read or does not line up with the first ([`Error::Config`]);
/// output that cannot be written.
pub(crate) fn run_merge(mc: &MergeConfig, out: &mut impl Write) -> Result<ExitCode, Error> {
    // A closed output (`| head`) still gives the SLOs' exit status.
    let out = &mut ClosedOk::new(out);
    let mut partial = 0usize;
    let merged = digest_file::merge_files(&mc.files, |name, cov| {
        partial += 1;
        crate::diag!(
            "tokentime: {name}: saved by a partial run ({}): the merged summary covers only what it read",
            partial_reasons(cov)
        );
    })
    .map_err(Error::Config)?;
    for copy in &merged.copies {
        crate::diag!("tokentime: {copy}");
    }
    let (cov, mut summary) = (merged.coverage, merged.summary);
    if mc.report.output.exposition() && summary.genai().is_none() {
        crate::diag!(
            "tokentime: no gen_ai_* histograms: a digest file merged was saved without them (by a tokentime before they were saved, or before their durations were split into the server's and a gateway's or client's)"
        );
    }
    let broken = match merged.buckets {
        // Metrics for a scrape are the whole run's: windowed files hold it beside their
        // windows (a merged digest is not saved here unasked: it would lose the windows).
        Some(_)
            if mc.whole_run
                || (mc.bucket.is_none()
                    && mc.report.output.exposition()
                    && mc.report.save_digest.is_none()) =>
        {
            report(out, &mc.report, &cov, &mut summary, false)?
        }
        Some(mut b) => merge_windows(out, mc, &cov, &mut summary, &mut b)?,
        None if mc.bucket.is_some() => {
            return Err(Error::Config(
                "--bucket: the digest files hold no windows (saved by `summary --save-digest` without --bucket)".to_owned(),
            ));
        }
        None => report(out, &mc.report, &cov, &mut summary, false)?,
    };
    out.flush().map_err(Error::Output)?;
    if partial > 0 && !mc.allow_partial {
        // As the runs themselves did for an input not read to its end (exit 2): a partial day
        // must not pass for a whole one.
        crate::diag!(
            "tokentime: {partial} of {} digests saved by partial runs (--allow-partial to merge them with exit status 0)",
            merged.documents
        );
        return Ok(ExitCode::Usage);
    }
    Ok(match broken {
        slo::Status::Unjudged => ExitCode::Usage,
        slo::Status::Broken => ExitCode::SloViolated,
        slo::Status::Held => ExitCode::Ok,
    })
}

/// The report of a merge of digest files with `--bucket` windows, as `summary --bucket` over
/// all their inputs prints it: the windows, then the SLO verdicts (and the merged digest file,
/// windows and all). Returns how the SLOs came out.
///
/// # Errors
/// A `--bucket` that is not a multiple of the files' width, a rendering windows do not have,
/// output that cannot be written.
fn merge_windows(
    out: &mut impl Write,
    mc: &MergeConfig,
    cov: &Coverage,
    summary: &mut Summary,
    b: &mut Buckets,
) -> Result<slo::Status, Error> {
    if let Some(w) = mc.bucket
        && w != b.width
    {
        // Windows of a multiple of the files' width hold whole saved windows: added up.
        match b.widened(w, &summary.empty_like()) {
            Some(wide) => *b = wide,
            None => {
                return Err(Error::Config(format!(
                    "--bucket {}: the digest files were saved with --bucket {}: their windows can be added up into windows of a multiple of that width (--bucket {}, {}, ...), not cut again",
                    format_duration(w),
                    format_duration(b.width),
                    format_duration(b.width * 2),
                    format_duration(b.width * 10),
                )));
            }
        }
    }
    let width = format_duration(b.width);
    crate::cli::check_bucket_report(&mc.report).map_err(|e| {
        Error::Config(format!(
            "the digest files hold --bucket {width} windows: {e}"
        ))
    })?;
    let rc = &mc.report;
    let windows = !b.windows.is_empty();
    if !rc.digest_to_stdout() {
        let style = crate::app::buckets::WindowStyle::new(rc, !summary.by().is_empty(), b.width);
        let header = style
            .table
            .as_ref()
            .map(crate::output::compact::WindowTable::header);
        crate::app::buckets::write_windows(out, &[], b, &style, header).map_err(Error::Output)?;
    }
    crate::app::buckets::say_unplaced(b, windows);
    Ok(report_slos_and_digest(out, rc, cov, summary, Some(b))?.0)
}

/// Why the run of a digest file was partial: `interrupted by Ctrl-C, SIGTERM, SIGHUP or its
/// output closed; 2 inputs not read to the end (coverage.read_errors)`.
fn partial_reasons(cov: &Coverage) -> String {
    let mut why = Vec::new();
    if cov.interrupted > 0 {
        why.push("interrupted by Ctrl-C, SIGTERM, SIGHUP or its output closed".to_owned());
    }
    if cov.checkpoints > 0 {
        why.push(
            "written at an interval of a live run (--every) that was still reading, or was killed before its end"
                .to_owned(),
        );
    }
    if cov.read_errors > 0 {
        why.push(format!(
            "{} not read to the end (coverage.read_errors)",
            crate::output::summary::plural(cov.read_errors, "input")
        ));
    }
    why.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_for_people() {
        assert_eq!(human_bytes(1000), "1000 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
    }

    /// A `--window 20s` summary 5 s after the start covers those 5 s, not the last 20.
    #[test]
    fn a_window_not_yet_full_says_so() {
        let w = Some(20_000_000_000);
        let scope = |secs| {
            let h = tick_header(1, Duration::from_secs(secs), w);
            h[h.find("elapsed): ").unwrap() + 10..].to_owned()
        };
        assert_eq!(scope(5), "everything so far (the 20s window not yet full)");
        assert_eq!(scope(20), "last 20s");
        assert_eq!(scope(25), "last 20s");
        let h = tick_header(1, Duration::from_secs(5), None);
        assert!(h.ends_with("(5s elapsed): everything so far"), "{h}");
    }
}
