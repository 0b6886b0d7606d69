//! Input: opens the FILE arguments and stdin, and undoes gzip (multi-member, zero padding at
//! the end ignored) and zstd (skippable frames too, as `pzstd` writes), detected by their
//! magic bytes, on files and stdin alike; xz, bzip2 and lz4 are recognised and refused.
//!
//! Owns the byte sources; hands out plain readers. No framing or parsing here.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// One input named on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Standard input (`-`, or no FILE at all).
    Stdin,
    /// A file.
    Path(PathBuf),
}

impl Source {
    /// The name used in diagnostics (`<stdin>` or the path as given).
    pub fn name(&self) -> String {
        match self {
            Source::Stdin => "<stdin>".to_owned(),
            Source::Path(p) => p.display().to_string(),
        }
    }

    /// Opens the source, decompressing when its first bytes are a gzip or zstd magic number;
    /// the bytes read from a file (before decompression) are added to `bytes` when given (for
    /// a progress line; standard input is not counted).
    ///
    /// # Errors
    /// The file's open error, a read error while peeking at its first bytes, or an
    /// unsupported compression (see [`decompress`]).
    pub(crate) fn open(&self, bytes: Option<&Arc<AtomicU64>>) -> io::Result<Box<dyn Read + Send>> {
        // Plain input: once the peeked bytes are consumed, reads of this size or more go
        // straight into the caller's buffer (`BufReader` steps aside), so bytes are copied
        // once. Compressed input: the decoder's read-ahead.
        const PEEK: usize = 32 * 1024;
        match (self, bytes) {
            (Source::Stdin, _) => match stdin_head() {
                Some(head) => decompress(BufReader::with_capacity(
                    PEEK,
                    io::Cursor::new(head).chain(Stdin::default()),
                )),
                None => decompress(BufReader::with_capacity(PEEK, Stdin::default())),
            },
            (Source::Path(p), bytes) => {
                let file: Box<dyn Read + Send> = match held(p) {
                    Some((head, file)) => {
                        Box::new(io::Cursor::new(head).chain(Truncated::watch(file)))
                    }
                    None => Box::new(Truncated::watch(File::open(p)?)),
                };
                match bytes {
                    None => decompress(BufReader::with_capacity(PEEK, file)),
                    Some(bytes) => decompress(BufReader::with_capacity(
                        PEEK,
                        Counting {
                            inner: file,
                            bytes: Arc::clone(bytes),
                        },
                    )),
                }
            }
        }
    }
}

/// The bytes standard input's pipe is asked to hold ([`widen_stdin_pipe`]): Linux's default
/// limit for a process without privileges (`/proc/sys/fs/pipe-max-size`).
const PIPE_BYTES: i32 = 1 << 20;

/// What a pipe holds by default on Linux.
const DEFAULT_PIPE_BYTES: usize = 64 * 1024;

/// Standard input, whose pipe is widened ([`widen_stdin_pipe`]) the first time one read
/// takes what a default pipe holds: the pipe was full, its writer is ahead of tokentime (a
/// `cat` or `zcat` of a file). A pipe that trickles (a live `tail -F`) is left as it is: a
/// wider pipe counts against its user's pipe quota (`/proc/sys/fs/pipe-user-pages-soft`,
/// 64 MiB by default), past which that user's new pipes, any program's, get one or two pages.
///
/// Standard input left non-blocking by the program that started tokentime (its descriptor
/// shared with that program, so never changed): a read that would block waits until there is
/// something to read, as on a blocking descriptor, instead of failing.
#[derive(Default)]
pub(crate) struct Stdin {
    widened: bool,
    /// Told at the first read: standard input as a regular file with a size (`< app.log`),
    /// read as a FILE is ([`Watched`]), else `None`.
    sized: Option<Option<Watched>>,
}

impl Read for Stdin {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = |buf: &mut [u8]| loop {
            match io::stdin().read(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => wait_for_stdin(),
                r => break r,
            }
        };
        let n = match self
            .sized
            .get_or_insert_with(|| stdin_file().and_then(Watched::new))
        {
            Some(w) => w.read_with(buf, |_, buf| read(buf))?,
            None => read(buf)?,
        };
        if n >= DEFAULT_PIPE_BYTES && !self.widened {
            self.widened = true;
            widen_stdin_pipe();
        }
        Ok(n)
    }
}

/// Standard input as a file: a duplicate of descriptor 0, the same open file (so the same
/// offset).
fn stdin_file() -> Option<File> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        Some(File::from(io::stdin().as_fd().try_clone_to_owned().ok()?))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Whether `f` is a regular file with a size: one [`cut_at_end`] may be asked of (the
/// kernel's files, `/proc/self/status`, say 0 whatever they hold).
fn has_size(f: &File) -> bool {
    f.metadata().is_ok_and(|m| m.is_file() && m.len() > 0)
}

/// At the end of a read of the regular file `f`: the read error when the file is now shorter
/// than where the read is (it was cut while it was read), else `None`.
fn cut_at_end(mut f: &File) -> Option<io::Error> {
    use io::Seek;
    let m = f.metadata().ok()?;
    let read = f.stream_position().ok()?;
    (m.is_file() && m.len() < read).then(|| {
        io::Error::other(format!(
            "the file was cut while it was read (rotated with copytruncate?): it holds {} \
             bytes now, {read} had been read; what it held after them was not read",
            m.len()
        ))
    })
}

/// Waits until standard input, non-blocking, has something to read (or its end, or an error
/// the next read reports). A signal ends the wait early; the read is then tried again.
fn wait_for_stdin() {
    #[cfg(target_os = "linux")]
    {
        let mut fd = libc::pollfd {
            fd: 0,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: `fd` is one valid pollfd that lives across the call, and its count is 1.
        unsafe {
            libc::poll(&raw mut fd, 1, -1);
        }
    }
    #[cfg(not(target_os = "linux"))]
    std::thread::sleep(std::time::Duration::from_millis(5));
}

/// Asks the pipe on standard input, if it is one, to hold [`PIPE_BYTES`] instead of the
/// default 64 KiB: each read then takes up to a whole read buffer, and the writer (`cat`,
/// `zcat`, `kubectl logs`) waits less often for room. With the default size, each 64 KiB
/// read woke the writer; `cat FILE | tokentime summary` spent about a tenth of its time in
/// the pipe's wake-ups. What a read returns and when is unchanged. Best effort: not a pipe, a
/// pipe already as large (its writer may have made it larger: it is never made smaller), or a
/// limit set lower, leaves it as it was.
fn widen_stdin_pipe() {
    #[cfg(target_os = "linux")]
    // SAFETY: fcntl with an integer argument on descriptor 0 reads or writes no memory of
    // ours; on a descriptor that is not a pipe it fails (EBADF, EINVAL), and is ignored.
    unsafe {
        let size = libc::fcntl(0, libc::F_GETPIPE_SZ);
        if (0..PIPE_BYTES).contains(&size) {
            libc::fcntl(0, libc::F_SETPIPE_SZ, PIPE_BYTES);
        }
    }
}

/// Bytes already read from standard input (a pipe) that its next [`Source::open`] reads first:
/// the sample the `inferred` format was learned from.
static STDIN_HEAD: std::sync::Mutex<Option<Vec<u8>>> = std::sync::Mutex::new(None);

/// Makes the next [`Source::open`] of standard input read `head` before the rest of it.
pub(crate) fn replay_on_stdin(head: Vec<u8>) {
    if let Ok(mut h) = STDIN_HEAD.lock() {
        *h = Some(head);
    }
}

/// The bytes to read again before standard input, once.
fn stdin_head() -> Option<Vec<u8>> {
    STDIN_HEAD.lock().ok()?.take()
}

/// The first line of standard input (a pipe), at most `max` bytes of it, without its newline:
/// read after the bytes already read from it, all of which the next [`Source::open`] reads
/// again. `None` past `max` bytes without a newline, or on a read error (which reading it again
/// meets).
pub(crate) fn stdin_first_line(max: usize) -> Option<Vec<u8>> {
    let mut head = stdin_head().unwrap_or_default();
    let mut stdin = Stdin::default();
    let mut buf = vec![0u8; 64 * 1024];
    let mut searched = 0;
    let end = loop {
        if let Some(i) = memchr::memchr(b'\n', &head[searched..]) {
            break Some(searched + i);
        }
        searched = head.len();
        if head.len() > max {
            break None;
        }
        match stdin.read(&mut buf) {
            Ok(0) => break Some(head.len()),
            Ok(n) => head.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break None,
        }
    };
    let line = end.filter(|&e| e <= max).map(|e| head[..e].to_vec());
    replay_on_stdin(head);
    line
}

/// FILE arguments that are not regular files (a named pipe, `<(cmd)`), opened once to read a
/// sample from, with the bytes read: their next [`Source::open`] reads those bytes and then
/// the rest from the same descriptor (opening such a path again would find its start gone, or
/// block for a writer that is no longer there).
#[allow(clippy::type_complexity)]
static HELD: std::sync::Mutex<Vec<(PathBuf, Vec<u8>, File)>> = std::sync::Mutex::new(Vec::new());

/// Makes the next [`Source::open`] of `path` read `head` and then the rest of `file`.
pub(crate) fn hold(path: PathBuf, head: Vec<u8>, file: File) {
    if let Ok(mut h) = HELD.lock() {
        h.push((path, head, file));
    }
}

/// The held bytes and descriptor of `path`, once.
fn held(path: &std::path::Path) -> Option<(Vec<u8>, File)> {
    let mut h = HELD.lock().ok()?;
    let i = h.iter().position(|(p, _, _)| p == path)?;
    let (_, head, file) = h.swap_remove(i);
    Some((head, file))
}

/// Whether `path` names a regular file (one that can be opened again, and read in chunks).
pub(crate) fn is_regular(path: &std::path::Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// A FILE as read: [`Watched`] when it has a size, else as it is (a file whose size was 0
/// when opened, the kernel's files: [`has_size`]).
enum Truncated {
    Sized(Watched),
    Plain(File),
}

impl Truncated {
    fn watch(file: File) -> Truncated {
        if has_size(&file) {
            Truncated::Sized(Watched::at(file))
        } else {
            Truncated::Plain(file)
        }
    }
}

impl Read for Truncated {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Truncated::Sized(w) => w.read_with(buf, |mut f, buf| f.read(buf)),
            Truncated::Plain(f) => f.read(buf),
        }
    }
}

/// A regular file with a size, as it is read (a FILE, or standard input that is one): its
/// end, when reached, is checked against what was read of it, so that a file cut shorter than
/// that while it was read (`logrotate`'s `copytruncate`, a `truncate` or `> file`) is a read
/// error, not an end, and the run says the input was not read to its end (its exit status 2)
/// instead of ending on a partial read in silence (a file cut and then written past where
/// the read was cannot be told from one that grew); and its pages are asked for ahead of the
/// read ([`Ahead`]).
struct Watched {
    file: File,
    ahead: Ahead,
}

impl Watched {
    fn at(file: File) -> Watched {
        Watched {
            ahead: Ahead::at(&file),
            file,
        }
    }

    /// `file`, when it has a size.
    fn new(file: File) -> Option<Watched> {
        has_size(&file).then(|| Watched::at(file))
    }

    /// Reads into `buf` with `read`, which is given the file (or reads the same open file
    /// through another descriptor, as standard input does).
    fn read_with(
        &mut self,
        buf: &mut [u8],
        read: impl FnOnce(&File, &mut [u8]) -> io::Result<usize>,
    ) -> io::Result<usize> {
        self.ahead.ask(&self.file);
        let n = read(&self.file, buf)?;
        self.ahead.pos += n as u64;
        if n == 0
            && !buf.is_empty()
            && let Some(e) = cut_at_end(&self.file)
        {
            return Err(e);
        }
        Ok(n)
    }
}

/// Opens the file at `path` as tokentime reads a FILE (without decompressing it): its pages
/// asked of the kernel 16 MiB ahead of the read (on Linux), and, at its end, a file cut
/// shorter than what was read of it is a read error.
///
/// # Errors
/// The file's open error.
pub fn open_file(path: &std::path::Path) -> io::Result<impl Read + Send> {
    Ok(Truncated::watch(File::open(path)?))
}

/// How far ahead of the read a file's pages are asked for ([`Ahead`]).
const AHEAD_BYTES: u64 = 16 << 20;

/// How many bytes are asked for at once (one system call per this many bytes read).
const AHEAD_STEP: u64 = 4 << 20;

/// The pages of a file asked of the kernel ahead of the read (`posix_fadvise`,
/// `POSIX_FADV_WILLNEED`, Linux only), [`AHEAD_BYTES`] ahead, [`AHEAD_STEP`] at a time. The
/// kernel's own read-ahead starts where a read finds a page missing and waits for it: a file
/// mostly in the page cache, whose pages the system reclaimed here and there, makes every
/// read that meets such a hole wait for the disk (and, read in chunks by several threads,
/// the thread that waits holds the next reader up). Asked for ahead, the pages are read while
/// the lines before them are parsed. Nothing read changes; on other systems, or when the
/// call fails, the reads are as they were.
struct Ahead {
    /// Where the next read starts.
    pos: u64,
    /// Where the pages asked for so far end.
    asked: u64,
}

impl Ahead {
    fn at(mut file: &File) -> Ahead {
        use io::Seek;
        let pos = file.stream_position().unwrap_or(0);
        Ahead { pos, asked: pos }
    }

    /// Asks for the pages up to [`AHEAD_BYTES`] past the read, when that is a step further
    /// than asked so far.
    fn ask(&mut self, file: &File) {
        let Some((from, len)) = self.next_range() else {
            return;
        };
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            if let (Ok(off), Ok(len)) = (i64::try_from(from), i64::try_from(len)) {
                // SAFETY: a plain system call on a descriptor that `file` holds open; it
                // touches no memory of this process. Its failure changes nothing read.
                unsafe {
                    libc::posix_fadvise(file.as_raw_fd(), off, len, libc::POSIX_FADV_WILLNEED);
                }
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (file, from, len);
    }

    /// The bytes to ask for now, (offset, length), when the read has moved a step on since
    /// the last time; they are then taken as asked.
    fn next_range(&mut self) -> Option<(u64, u64)> {
        let want = self.pos.saturating_add(AHEAD_BYTES);
        if want <= self.asked || want < self.asked.saturating_add(AHEAD_STEP) {
            return None;
        }
        let from = self.asked.max(self.pos);
        self.asked = want;
        Some((from, want - from))
    }
}

/// Counts the bytes read from a file, for the progress line.
struct Counting<R> {
    inner: R,
    bytes: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

const GZIP: &[u8] = &[0x1f, 0x8b];
const ZSTD: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];

/// A zstd skippable frame's magic number, 0x184D2A50..=0x184D2A5F little-endian: `pzstd`
/// starts its output with one (the size of the frame that follows), and zstd's streaming
/// decoder skips it.
fn zstd_skippable(head: &[u8]) -> bool {
    head.len() >= 4 && head[0] & 0xf0 == 0x50 && head[1..4] == [0x2a, 0x4d, 0x18]
}

/// The compression whose magic number `head` starts with, among those tokentime does not
/// decode: its name and the command that decodes it.
fn unsupported(head: &[u8]) -> Option<(&'static str, &'static str)> {
    const XZ: &[u8] = &[0xfd, b'7', b'z', b'X', b'Z', 0x00];
    const LZ4: &[u8] = &[0x04, 0x22, 0x4d, 0x18];
    let bzip2 = head.len() >= 4 && head.starts_with(b"BZh") && (b'1'..=b'9').contains(&head[3]);
    if head.starts_with(XZ) {
        Some(("xz", "xz -dc"))
    } else if bzip2 {
        Some(("bzip2", "bzip2 -dc"))
    } else if head.starts_with(LZ4) {
        Some(("lz4", "lz4 -dc"))
    } else {
        None
    }
}

/// A zstd decoder whose error at bytes after the last frame that start no other one says so:
/// the library's own is `Unknown frame descriptor`.
struct Zstd<R: BufRead>(zstd::stream::read::Decoder<'static, R>);

impl<R: BufRead> Read for Zstd<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf).map_err(|e| {
            if e.to_string().contains("Unknown frame descriptor") {
                // A frame's first bytes are read only once the frame before it ended (the
                // first frame's were checked before the decoder was made).
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    "bytes after the last zstd frame that start no other frame (trailing \
                     garbage; the lines before them were read)",
                )
            } else {
                e
            }
        })
    }
}

/// Wraps `r` in a decoder chosen by its first bytes (gzip, zstd, or none).
///
/// # Errors
/// A read error while peeking, the zstd decoder's setup error, or
/// [`io::ErrorKind::InvalidData`] when the input is xz, bzip2 or lz4 (not decoded here: the
/// message says how to decompress it first).
pub(crate) fn decompress<R: BufRead + Send + 'static>(
    mut r: R,
) -> io::Result<Box<dyn Read + Send>> {
    let head = peek(&mut r)?;
    if head.starts_with(GZIP) {
        Ok(Box::new(Gzip::new(r)))
    } else if head.starts_with(ZSTD) || zstd_skippable(head) {
        Ok(Box::new(Zstd(zstd::stream::read::Decoder::with_buffer(r)?)))
    } else if let Some((name, tool)) = unsupported(head) {
        Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{name}-compressed input is not supported: decompress it first, \
                 e.g. {tool} FILE | tokentime ..."
            ),
        ))
    } else {
        Ok(Box::new(r))
    }
}

/// A gzip file: its members one after the other (as `cat a.gz b.gz` makes), then optionally
/// zero bytes to the end (tape or block padding, which gzip ignores too). Anything else after
/// a member is an error, as is a truncated member.
struct Gzip<R>(Gz<R>);

impl<R: BufRead> Gzip<R> {
    /// Reads the first member's header.
    fn new(r: R) -> Self {
        Gzip(Gz::Member(flate2::bufread::GzDecoder::new(r)))
    }
}

enum Gz<R> {
    /// Inside a member.
    Member(flate2::bufread::GzDecoder<R>),
    /// After a member: another member, zero padding, or the end.
    After(R),
    /// In the zero padding after the last member: only zeros until the end.
    Padding(R),
    /// At the end, or after an error.
    Done,
}

impl<R: BufRead> Read for Gzip<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if let Gz::Member(d) = &mut self.0 {
                match d.read(buf) {
                    Ok(0) => {}
                    Ok(n) => return Ok(n),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => return Err(e),
                    Err(e) => {
                        self.0 = Gz::Done;
                        // A member cut in its header or trailer: the bare "unexpected end of
                        // file" does not say of what.
                        if e.kind() == io::ErrorKind::UnexpectedEof
                            && e.to_string() == "unexpected end of file"
                        {
                            return Err(io::Error::new(
                                e.kind(),
                                "the gzip data ends early (unexpected end of file)",
                            ));
                        }
                        return Err(e);
                    }
                }
            }
            // Between states; an error or the end leaves `Done`.
            let (mut r, padding) = match std::mem::replace(&mut self.0, Gz::Done) {
                Gz::Member(d) => {
                    self.0 = Gz::After(d.into_inner());
                    continue;
                }
                Gz::After(r) => (r, false),
                Gz::Padding(r) => (r, true),
                Gz::Done => return Ok(0),
            };
            let head = peek(&mut r)?;
            let len = head.len();
            let zeros = head.iter().take_while(|&&b| b == 0).count();
            if len == 0 {
                return Ok(0);
            } else if zeros == len {
                r.consume(len);
                self.0 = Gz::Padding(r);
            } else if padding || zeros > 0 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "bytes other than zeros after the zero padding that follows the last \
                     gzip member",
                ));
            } else if head[0] != 0x1f || head.get(1).is_some_and(|&b| b != 0x8b) {
                // What gzip(1) calls trailing garbage: every line before it was read.
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "bytes after the last gzip member that start no other member (trailing \
                     garbage; the lines before them were read)",
                ));
            } else {
                // Another member; `GzDecoder` reports a bad header.
                *self = Gzip::new(r);
            }
        }
    }
}

/// The bytes `r` holds next (empty at the end), retrying an interrupted read.
fn peek<R: BufRead>(r: &mut R) -> io::Result<&[u8]> {
    loop {
        match r.fill_buf() {
            // Not `Ok(b) => return Ok(b)`: the borrow checker refuses that in a loop (NLL
            // problem case 3). The buffer is filled; asking again does not read.
            Ok(_) => return r.fill_buf(),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// The pages are asked for 16 MiB ahead of the read, 4 MiB at a time: at the first read,
    /// the first 16 MiB; then nothing until the read has moved 4 MiB on; never a byte twice.
    #[test]
    fn pages_are_asked_for_ahead_a_step_at_a_time() {
        const MIB: u64 = 1 << 20;
        let mut a = Ahead { pos: 0, asked: 0 };
        assert_eq!(a.next_range(), Some((0, 16 * MIB)));
        let mut asked = vec![];
        for _ in 0..12 {
            a.pos += MIB;
            asked.extend(a.next_range());
        }
        assert_eq!(
            asked,
            [
                (16 * MIB, 4 * MIB),
                (20 * MIB, 4 * MIB),
                (24 * MIB, 4 * MIB)
            ]
        );
        assert_eq!(a.asked, 28 * MIB);
        // A file opened after some of it was read (its head peeked at): from there on.
        let mut a = Ahead {
            pos: 100,
            asked: 100,
        };
        assert_eq!(a.next_range(), Some((100, 16 * MIB)));
        // At the end of what an offset can say: up to there, once.
        let mut a = Ahead {
            pos: u64::MAX - 5,
            asked: u64::MAX - 5,
        };
        assert_eq!(a.next_range(), Some((u64::MAX - 5, 5)));
        assert_eq!(a.next_range(), None);
    }

    #[test]
    fn a_file_cut_while_read_is_a_read_error_not_an_end() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&[b'x'; 100]).unwrap();
        let mut r = Truncated::watch(File::open(f.path()).unwrap());
        let mut buf = [0u8; 60];
        assert_eq!(r.read(&mut buf).unwrap(), 60);
        f.as_file().set_len(10).unwrap();
        let e = r.read(&mut buf).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the file was cut while it was read (rotated with copytruncate?): it holds 10 bytes \
             now, 60 had been read; what it held after them was not read"
        );
        // Read to its end as it is: an end.
        let mut r = Truncated::watch(File::open(f.path()).unwrap());
        assert_eq!(r.read(&mut buf).unwrap(), 10);
        assert_eq!(r.read(&mut buf).unwrap(), 0);
        // A kernel's file, of size 0 whatever it holds: read to its end.
        #[cfg(target_os = "linux")]
        {
            let mut r = Truncated::watch(File::open("/proc/self/status").unwrap());
            assert!(io::copy(&mut r, &mut io::sink()).unwrap() > 0);
        }
    }
}
