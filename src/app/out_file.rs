//! `summary --out FILE`: the report written to FILE, replaced whole each time (a temporary
//! file in the same directory, renamed over FILE), so that a reader (node-exporter's textfile
//! collector, a scraper, `cat`) never sees half of one.
//!
//! [`ReplaceOnFlush`] is the writer a summary run writes its reports to instead of stdout: it
//! holds what is written, and each flush (the run flushes once per document: after each
//! `--every` summary, and after the final one) replaces FILE with it.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` whole: into a temporary file beside it (same directory, so the
/// rename cannot cross file systems; a name starting with `.` and ending in `.tmp`, which the
/// textfile collector, reading `*.prom`, skips), synced, then renamed over `path`. A symbolic
/// link, a device or a pipe at `path` is written through instead (replacing it would put a
/// regular file where the link or pipe was).
///
/// # Errors
/// The file system's; the temporary file is removed on failure.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if !replaceable(path) {
        return std::fs::write(path, bytes);
    }
    let tmp = tmp_path(path);
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// True when `path` is absent or a regular file (not a symbolic link).
fn replaceable(path: &Path) -> bool {
    match std::fs::symlink_metadata(path) {
        Ok(m) => m.file_type().is_file(),
        Err(_) => true,
    }
}

/// The temporary file beside `path`: `.NAME.PID.tmp`.
fn tmp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

/// Refuses an `--out` FILE that cannot be written (before anything is read): a directory, or
/// a place where no file can be made.
///
/// # Errors
/// The file system's.
pub(crate) fn check_writable(path: &Path) -> io::Result<()> {
    if path.is_dir() {
        return Err(io::Error::other("is a directory"));
    }
    if !replaceable(path) {
        return Ok(());
    }
    let tmp = tmp_path(path);
    std::fs::File::create(&tmp)?;
    std::fs::remove_file(&tmp)
}

/// A writer whose every flush replaces a file with what was written since the last one
/// ([`write_atomically`]). Nothing written, nothing replaced.
///
/// Until [`ReplaceOnFlush::last`], a flush that fails (a full disk, a directory removed) is
/// said on stderr, once until one succeeds again, and the run goes on: FILE keeps the last
/// summary written, and the next interval's tries again (a live exporter outlives an outage
/// of its disk). The flush after `last` fails as any output does.
pub(crate) struct ReplaceOnFlush {
    path: PathBuf,
    buf: Vec<u8>,
    /// Whether the next flush is the run's last (its failure is the run's).
    last: bool,
    /// Whether the last flush failed (said on stderr).
    failing: bool,
}

impl ReplaceOnFlush {
    /// A writer replacing `path`.
    pub(crate) fn new(path: PathBuf) -> Self {
        ReplaceOnFlush {
            path,
            buf: Vec::new(),
            last: false,
            failing: false,
        }
    }

    /// The next flush is the run's last: its failure is returned, not said and passed over.
    pub(crate) fn last(&mut self) {
        self.last = true;
    }
}

impl Write for ReplaceOnFlush {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let written = write_atomically(&self.path, &self.buf);
        self.buf.clear();
        match written {
            Ok(()) => {
                if std::mem::take(&mut self.failing) {
                    crate::diag!("tokentime: --out {}: written again", self.path.display());
                }
                Ok(())
            }
            Err(e) if self.last => Err(io::Error::new(
                e.kind(),
                format!("--out {}: {e}", self.path.display()),
            )),
            Err(e) => {
                if !std::mem::replace(&mut self.failing, true) {
                    crate::diag!(
                        "tokentime: --out {}: {e}; this summary is not written, the next interval tries again",
                        self.path.display()
                    );
                }
                Ok(())
            }
        }
    }
}

/// Standard output that its reader may close (`| head`): past a broken pipe, writes are dropped
/// and [`ClosedOk::closed`] says so, so that a summary still judges its SLOs (its exit status)
/// and saves its digest file. A live run stops reading when it sees it closed.
pub(crate) struct ClosedOk<W> {
    inner: W,
    closed: bool,
}

impl<W: Write> ClosedOk<W> {
    pub(crate) fn new(inner: W) -> Self {
        ClosedOk {
            inner,
            closed: false,
        }
    }

    /// The writer it wraps.
    pub(crate) fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// True once a write or flush met a closed pipe.
    pub(crate) fn closed(&self) -> bool {
        self.closed
    }

    /// The result of a write or flush: a broken pipe is success, noted.
    fn note<T>(&mut self, r: io::Result<T>, done: T) -> io::Result<T> {
        match r {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(done)
            }
            r => r,
        }
    }
}

impl<W: Write> Write for ClosedOk<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        let r = self.inner.write(buf);
        self.note(r, buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let r = self.inner.flush();
        self.note(r, ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_whole_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokentime.prom");
        write_atomically(&path, b"one\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"one\n");
        let mut w = ReplaceOnFlush::new(path.clone());
        w.write_all(b"two\n").unwrap();
        // Written but not flushed: the file is still the last whole document.
        assert_eq!(std::fs::read(&path).unwrap(), b"one\n");
        w.flush().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two\n");
        // A flush with nothing new leaves the file as it is.
        w.flush().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two\n");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["tokentime.prom"]);
    }

    #[cfg(unix)]
    #[test]
    fn replacing_keeps_readers_of_the_old_file_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.prom");
        write_atomically(&path, b"old\n").unwrap();
        // A reader that opened the file before the rename reads the old document to its end.
        let mut old = std::fs::File::open(&path).unwrap();
        write_atomically(&path, b"new document\n").unwrap();
        let mut s = String::new();
        io::Read::read_to_string(&mut old, &mut s).unwrap();
        assert_eq!(s, "old\n");
        assert_eq!(std::fs::read(&path).unwrap(), b"new document\n");
    }

    #[test]
    fn a_failed_flush_before_the_last_is_passed_over_and_the_last_one_is_returned() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("textfile");
        std::fs::create_dir(&sub).unwrap();
        let path = sub.join("m.prom");
        let mut w = ReplaceOnFlush::new(path.clone());
        w.write_all(b"one\n").unwrap();
        w.flush().unwrap();
        // The directory gone: the interval's summary is not written, the run goes on.
        std::fs::remove_dir_all(&sub).unwrap();
        w.write_all(b"two\n").unwrap();
        w.flush().unwrap();
        // Back: the next one is written whole, without what the failed one held.
        std::fs::create_dir(&sub).unwrap();
        w.write_all(b"three\n").unwrap();
        w.flush().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"three\n");
        // The run's last flush fails as any output does.
        std::fs::remove_dir_all(&sub).unwrap();
        w.last();
        w.write_all(b"four\n").unwrap();
        let e = w.flush().unwrap_err();
        assert!(e.to_string().starts_with("--out "), "{e}");
    }

    #[test]
    fn refuses_a_directory_and_a_missing_one() {
        let dir = tempfile::tempdir().unwrap();
        assert!(check_writable(dir.path()).is_err());
        assert!(check_writable(&dir.path().join("no/such/dir/m.prom")).is_err());
        assert!(check_writable(&dir.path().join("m.prom")).is_ok());
        assert!(write_atomically(&dir.path().join("no/m.prom"), b"x").is_err());
    }
}
