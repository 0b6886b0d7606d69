//! Ends a summary that a first Ctrl-C or SIGTERM cannot end by itself: one blocked writing its
//! report or digest file (a stdout pipe nobody reads, a FIFO with no reader, a `/dev/stdin`
//! that is the pipe being read).
//!
//! The signal handler only sets a flag ([`crate::app::summary_cmd`]), which the run checks
//! between lines and while it waits for input; a write that blocks never checks it again, and
//! only a second signal ended the process. So the writes that may block (stdout, the digest
//! file's open and writes) are timed ([`Watched`], [`watched`]): once the flag is set and one
//! of them has not returned for [`GRACE`], a thread of its own removes the digest's temporary
//! file (so nothing half-written is left behind: the digest file is renamed into place only
//! when whole) and ends the process with status 130, as a second signal would. A write that
//! makes progress returns within the grace, however long the report: only a write stuck for
//! all of it ends the run.
//!
//! The clock is process-wide (a static): signals are too.

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// How long a write may stay blocked after the signal before the process ends.
pub(crate) const GRACE: Duration = Duration::from_secs(1);

/// When the write in progress began, in ms since [`epoch`] plus 1; 0 when none is.
static BLOCKED_SINCE: AtomicU64 = AtomicU64::new(0);

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn now_ms() -> u64 {
    epoch().elapsed().as_millis() as u64 + 1
}

/// Runs `f`, a call that may block (an open or a write), timed for the watchdog.
pub(crate) fn watched<T>(f: impl FnOnce() -> T) -> T {
    // Nested calls (a watched writer inside another) keep the outer start.
    let outer = BLOCKED_SINCE
        .compare_exchange(0, now_ms(), Ordering::SeqCst, Ordering::SeqCst)
        .is_err();
    let r = f();
    if !outer {
        BLOCKED_SINCE.store(0, Ordering::SeqCst);
    }
    r
}

/// A writer whose every write and flush is [`watched`]; it keeps the last byte written.
pub(crate) struct Watched<W> {
    inner: W,
    last: Option<u8>,
}

impl<W> Watched<W> {
    pub(crate) fn new(inner: W) -> Self {
        Watched { inner, last: None }
    }

    /// The last byte written through it.
    pub(crate) fn last(&self) -> Option<u8> {
        self.last
    }
}

impl<W: Write> Write for Watched<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = watched(|| self.inner.write(buf))?;
        if n > 0 {
            self.last = Some(buf[n - 1]);
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        watched(|| self.inner.flush())
    }
}

/// Starts the watchdog: once `signal` is set, a watched call blocked for [`GRACE`] ends the
/// process (status 130), after removing `digest`'s temporary file.
pub(crate) fn start(signal: Arc<AtomicBool>, digest: Option<PathBuf>) {
    epoch();
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(Duration::from_millis(50));
            if !signal.load(Ordering::SeqCst) {
                continue;
            }
            let since = BLOCKED_SINCE.load(Ordering::SeqCst);
            if since == 0 || now_ms().saturating_sub(since) < GRACE.as_millis() as u64 {
                continue;
            }
            if let Some(d) = &digest
                && crate::summary::digest_file::replaceable(d)
            {
                let _ = std::fs::remove_file(crate::summary::digest_file::tmp_path(d));
            }
            crate::diag!(
                "tokentime: interrupted while blocked writing the report or digest file for {} s; exiting",
                GRACE.as_secs()
            );
            std::process::exit(130);
        }
    });
}
