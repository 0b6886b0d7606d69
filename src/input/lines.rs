//! Line framing: splits a byte stream into lines over one reused buffer, with memchr.
//!
//! Owns line endings (`\n`, `\r\n`, a missing final newline), the UTF-8 byte-order mark on the
//! first line, line numbers, and the `--max-line-bytes` bound: a longer line is never held
//! whole, its bytes are handed on in pieces. No parsing here.

use std::io::{self, Read};
use std::ops::{Deref, DerefMut};

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Room past `--max-line-bytes` that a line already enriched (by tokentime with the default
/// key) is allowed: a request's metrics object, spliced in, is at most a few hundred bytes, so
/// `tokentime f | tokentime summary` reads every line `tokentime summary f` reads.
pub(crate) const SPLICE_ROOM: usize = 4096;

/// The member an enriched line ends with (enrich's default `--key`).
const SPLICE_MEMBER: &[u8] = b"\"tokentime\":";

/// True when `raw` (a line with its ending) is within the `max` bytes of `--max-line-bytes`,
/// or is a line that was: one that ends with the spliced `"tokentime":` member, at most
/// [`SPLICE_ROOM`] bytes long, and that was at most `max` bytes without it.
pub(crate) fn within_limit(raw: &[u8], max: usize) -> bool {
    raw.len() <= max || (raw.len() <= max.saturating_add(SPLICE_ROOM) && unspliced_len(raw) <= max)
}

/// The length `raw` had before a metrics member was spliced in at its end (its own length
/// when it holds none).
fn unspliced_len(raw: &[u8]) -> usize {
    let Some(close) = raw.iter().rposition(|b| !b" \t\r\n".contains(b)) else {
        return raw.len();
    };
    if raw[close] != b'}' {
        return raw.len();
    }
    let from = close.saturating_sub(SPLICE_ROOM);
    let Some(at) = memchr::memmem::rfind(&raw[from..close], SPLICE_MEMBER).map(|i| from + i) else {
        return raw.len();
    };
    match raw[..at].iter().rposition(|b| !b" \t\r\n".contains(b)) {
        Some(i) if raw[i] == b',' => raw.len() - (close - i),
        Some(i) if raw[i] == b'{' => raw.len() - (close - at),
        _ => raw.len(),
    }
}

/// Splits one raw line (with its line ending) into its prefix, content and ending (`\n`,
/// `\r\n` or none). The prefix is no part of the JSON and passes through unchanged: NUL bytes
/// (what a `copytruncate` log rotation leaves before the writer's next line: the file is cut,
/// and the writer goes on at its old offset), then a byte-order mark (the input's, or, mid-stream,
/// a file concatenated onto it: `cat a.jsonl b.jsonl`).
pub(crate) fn frame(raw: &[u8]) -> (&[u8], &[u8], &[u8]) {
    let nuls = raw.iter().take_while(|&&b| b == 0).count();
    let bom = if raw[nuls..].starts_with(UTF8_BOM) {
        UTF8_BOM.len()
    } else {
        0
    };
    let (prefix, line) = raw.split_at(nuls + bom);
    let ending_len = if line.ends_with(b"\r\n") {
        2
    } else {
        usize::from(line.ends_with(b"\n"))
    };
    let (content, ending) = line.split_at(line.len() - ending_len);
    (prefix, content, ending)
}

/// Where the JSON object after the last NUL byte of a line's `content` starts, when a NUL is
/// followed by `{` there: a line cut short by a crash's zero fill, then the next line written
/// after the zeros ([`crate::app::worker::Worker`] reads that object as a line).
pub(crate) fn after_zero_fill(content: &[u8]) -> Option<usize> {
    let at = memchr::memrchr(0, content)? + 1;
    (content.get(at) == Some(&b'{')).then_some(at)
}

/// Where a JSON object that ends an invalid line's `content` starts, after its first byte,
/// when there is one: a line cut short with no NUL bytes and no newline (a writer that died
/// mid-line), then the next line written after it. The first `{` from which the rest of the
/// line is one JSON object (of the first 256 read as such), except one after `:`, `,` or `[`
/// (and blanks), which is not read: that is a value inside the line cut short (`"usage":
/// {"prompt_tokens": 5}` where the line ends), not a line of its own; an object inside that is
/// followed by more is none either.
pub(crate) fn after_cut(content: &[u8]) -> Option<usize> {
    let mut tries = 0;
    for at in memchr::memchr_iter(b'{', content).skip_while(|&at| at == 0) {
        let before = content[..at]
            .iter()
            .rev()
            .find(|b| !b.is_ascii_whitespace());
        if matches!(before, Some(b':' | b',' | b'[')) {
            continue;
        }
        if serde_json::from_slice::<serde::de::IgnoredAny>(&content[at..]).is_ok() {
            return Some(at);
        }
        tries += 1;
        if tries == 256 {
            return None;
        }
    }
    None
}

/// Bytes asked of the input per read when lines are short: big enough to amortize the system
/// call, small enough that what was read is still in the core's L2 cache when it is parsed.
const READ_SIZE: usize = 128 * 1024;

/// Bytes asked per read of a pipe ([`LineReader::with_read_size`]): a pipe's read takes what
/// the writer has written, up to the pipe's size (made 1 MiB on standard input once it fills,
/// see `input::source`), and each one frees room and wakes the writer. Reads of 512 KiB instead of 128 KiB took `cat FILE |
/// tokentime summary` on the 1 GiB generated log from 1.62 to 1.50 s (median of 9 alternating
/// runs, 2-core VM); on a file the size made no difference.
pub(crate) const PIPE_READ_SIZE: usize = 512 * 1024;

/// A heap buffer whose bytes start 64 bytes into a memory page.
///
/// Why: Linux copies file and pipe data into a buffer that starts 16 bytes into a page (where
/// glibc puts every allocation of 128 KiB or more) at about 1.5 GB/s on the machine this was
/// measured on, and into one that starts at 64 bytes (or at the page) at 5 to 7 GB/s.
pub(crate) struct ReadBuf {
    raw: Vec<u8>,
    base: usize,
    len: usize,
}

impl ReadBuf {
    /// A zeroed buffer of `len` bytes.
    pub(crate) fn new(len: usize) -> ReadBuf {
        const PAGE: usize = 4096;
        const OFFSET: usize = 64;
        let raw = vec![0; len + PAGE + OFFSET];
        let addr = raw.as_ptr() as usize;
        let base = (PAGE + OFFSET - addr % PAGE) % PAGE;
        ReadBuf { raw, base, len }
    }

    /// A buffer of `len` bytes holding the first `keep` bytes of this one.
    fn grown(&self, len: usize, keep: usize) -> ReadBuf {
        let mut b = ReadBuf::new(len);
        b[..keep].copy_from_slice(&self[..keep]);
        b
    }
}

impl Deref for ReadBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.raw[self.base..self.base + self.len]
    }
}

impl DerefMut for ReadBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.raw[self.base..self.base + self.len]
    }
}

/// One framed line.
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// A whole line: `prefix` (a byte-order mark, else empty), `content` (without the
    /// line ending), `ending` (`"\n"`, `"\r\n"` or `""` at end of input without newline).
    /// `prefix + content + ending` are the line's bytes exactly.
    Text {
        prefix: &'a [u8],
        content: &'a [u8],
        ending: &'a [u8],
    },
    /// A line longer than the limit; its bytes were given to the `overflow` callback.
    TooLong,
}

/// A read error that ended an input after `line` lines, the last of them `cut` short by it:
/// the message says where.
pub(crate) fn read_error(e: io::Error, line: u64, cut: bool) -> io::Error {
    let at = if cut {
        format!("line {line} was cut short")
    } else if line == 0 {
        "before line 1".to_owned()
    } else {
        format!("after line {line}")
    };
    io::Error::new(e.kind(), format!("{at}: {e}"))
}

/// Reads lines from `R` into a reused buffer.
pub struct LineReader<R> {
    inner: R,
    buf: ReadBuf,
    start: usize,
    end: usize,
    eof: bool,
    max_line: usize,
    /// What the buffer holds of a line: `max_line` and the room of [`within_limit`].
    hold: usize,
    line_no: u64,
    first: bool,
    /// A read error, and whether part of a line had been read before it: that part is
    /// returned as the last line first (nothing read is lost), then this.
    failed: Option<(io::Error, bool)>,
}

impl<R: Read> LineReader<R> {
    /// A reader that holds lines up to `max_line` bytes (content plus ending).
    pub fn new(inner: R, max_line: usize) -> Self {
        Self::with_read_size(inner, max_line, READ_SIZE)
    }

    /// [`LineReader::new`], asking up to `read_size` bytes a read while lines are short.
    pub(crate) fn with_read_size(inner: R, max_line: usize, read_size: usize) -> Self {
        let hold = max_line.max(1).saturating_add(SPLICE_ROOM);
        let cap = read_size.min(hold.saturating_add(2)).max(4096);
        LineReader {
            inner,
            buf: ReadBuf::new(cap),
            start: 0,
            end: 0,
            eof: false,
            max_line: max_line.max(1),
            hold,
            line_no: 0,
            first: true,
            failed: None,
        }
    }

    /// The 1-based number of the line last returned.
    pub fn line_no(&self) -> u64 {
        self.line_no
    }

    /// Returns the next line, or `None` at end of input. Before each read from the input that
    /// may block, `before_read` is called (the caller flushes its output there, which keeps a
    /// pipeline live). A line longer than the limit is passed, piece by piece, to `overflow`
    /// and reported as [`Line::TooLong`].
    ///
    /// # Errors
    /// The input's read errors (their message says after which line; the part of a line read
    /// before one is returned first, as a last line without an ending), and the callbacks'
    /// errors.
    pub fn next_line(
        &mut self,
        before_read: &mut dyn FnMut() -> io::Result<()>,
        overflow: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<Option<Line<'_>>> {
        let mut scanned = 0; // bytes of buf[start..end] known to hold no newline
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[self.start + scanned..self.end]) {
                let nl = self.start + scanned + i;
                let line_start = self.start;
                self.start = nl + 1;
                if !within_limit(&self.buf[line_start..nl + 1], self.max_line) {
                    self.line_no += 1;
                    self.first = false;
                    overflow(&self.buf[line_start..nl + 1])?;
                    return Ok(Some(Line::TooLong));
                }
                return Ok(Some(self.frame(line_start, nl + 1)));
            }
            scanned = self.end - self.start;
            if self.eof {
                if self.start == self.end {
                    return match self.failed.take() {
                        Some((e, cut)) => Err(read_error(e, self.line_no, cut)),
                        None => Ok(None),
                    };
                }
                if !within_limit(&self.buf[self.start..self.end], self.max_line) {
                    self.line_no += 1;
                    overflow(&self.buf[self.start..self.end])?;
                    self.start = self.end;
                    return Ok(Some(Line::TooLong));
                }
                let line_start = self.start;
                self.start = self.end;
                return Ok(Some(self.frame(line_start, self.end)));
            }
            // Only past the limit: a final line of exactly `max_line` bytes has no newline
            // to come, and whether the reader has seen EOF yet depends on its chunking.
            if scanned > self.hold {
                self.line_no += 1;
                self.first = false;
                overflow(&self.buf[self.start..self.end])?;
                self.start = self.end;
                self.skip_long_line(before_read, overflow)?;
                return Ok(Some(Line::TooLong));
            }
            self.refill(before_read)?;
        }
    }

    fn frame(&mut self, a: usize, b: usize) -> Line<'_> {
        self.line_no += 1;
        self.first = false;
        let (prefix, content, ending) = frame(&self.buf[a..b]);
        Line::Text {
            prefix,
            content,
            ending,
        }
    }

    fn refill(&mut self, before_read: &mut dyn FnMut() -> io::Result<()>) -> io::Result<()> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            let grown = (self.buf.len() * 2)
                .min(self.hold.saturating_add(2))
                .max(self.buf.len() + 1);
            self.buf = self.buf.grown(grown, self.end);
        }
        before_read()?;
        loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.eof = true;
                    self.failed = Some((e, self.end > self.start));
                    return Ok(());
                }
            }
        }
    }

    fn skip_long_line(
        &mut self,
        before_read: &mut dyn FnMut() -> io::Result<()>,
        overflow: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<()> {
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[self.start..self.end]) {
                overflow(&self.buf[self.start..self.start + i + 1])?;
                self.start += i + 1;
                return Ok(());
            }
            overflow(&self.buf[self.start..self.end])?;
            self.start = 0;
            self.end = 0;
            if self.eof {
                return Ok(());
            }
            self.refill(before_read)?;
            // A read error here cut the long line short, whatever the buffer holds.
            if let Some((_, cut)) = self.failed.as_mut() {
                *cut = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(input: &[u8], max: usize) -> Vec<String> {
        let mut r = LineReader::new(input, max);
        let mut out = vec![];
        let mut long = Vec::new();
        loop {
            let line = r.next_line(&mut || Ok(()), &mut |b| {
                long.extend_from_slice(b);
                Ok(())
            });
            match line.unwrap() {
                None => break,
                Some(Line::Text {
                    prefix,
                    content,
                    ending,
                }) => out.push(format!(
                    "{}|{}|{}",
                    String::from_utf8_lossy(prefix).len(),
                    String::from_utf8_lossy(content),
                    String::from_utf8_lossy(ending).escape_default()
                )),
                Some(Line::TooLong) => {
                    out.push(format!(
                        "LONG:{}",
                        String::from_utf8_lossy(&long).escape_default()
                    ));
                    long.clear();
                }
            }
        }
        out
    }

    #[test]
    fn endings_bom_and_missing_final_newline() {
        assert_eq!(
            collect(b"\xEF\xBB\xBF{}\r\nb\n\nc", 100),
            vec!["3|{}|\\r\\n", "0|b|\\n", "0||\\n", "0|c|"]
        );
        assert!(collect(b"", 100).is_empty());
    }

    #[test]
    fn long_lines_are_streamed_not_held() {
        let got = collect(b"short\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nok", 10);
        assert_eq!(
            got,
            vec![
                "0|short|\\n",
                "LONG:xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\\n",
                "0|ok|"
            ]
        );
    }

    #[test]
    fn a_final_line_of_exactly_max_bytes_fits() {
        assert_eq!(collect(b"x\nabc", 3), vec!["0|x|\\n", "0|abc|"]);
        assert_eq!(collect(b"abc\n", 3), vec!["LONG:abc\\n"]);
        assert_eq!(collect(b"abcd", 3), vec!["LONG:abcd"]);
    }

    #[test]
    fn max_line_of_usize_max_does_not_overflow() {
        assert_eq!(collect(b"ab\nc", usize::MAX), vec!["0|ab|\\n", "0|c|"]);
    }

    #[test]
    fn a_line_across_many_reads() {
        struct Slow<'a>(&'a [u8]);
        impl Read for Slow<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = buf.len().min(3).min(self.0.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let data = "a".repeat(10_000) + "\nb\n";
        let mut r = LineReader::new(Slow(data.as_bytes()), 1 << 20);
        let mut n = 0;
        while let Some(l) = r.next_line(&mut || Ok(()), &mut |_| Ok(())).unwrap() {
            if let Line::Text { content, .. } = l {
                n += content.len();
            }
        }
        assert_eq!(n, 10_001);
    }
}

#[cfg(test)]
mod read_error_tests {
    use super::*;

    /// Gives `data` in reads of at most 7 bytes, then fails.
    struct Failing<'a>(&'a [u8]);

    impl Read for Failing<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Err(io::Error::other("disk gone"));
            }
            let n = buf.len().min(7).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn error_after(data: &[u8], max: usize) -> (u64, String) {
        let mut r = LineReader::new(Failing(data), max);
        let mut lines = 0;
        loop {
            match r.next_line(&mut || Ok(()), &mut |_| Ok(())) {
                Ok(Some(_)) => lines += 1,
                Ok(None) => panic!("the error was lost"),
                Err(e) => return (lines, e.to_string()),
            }
        }
    }

    #[test]
    fn a_read_error_says_which_line_it_cut_or_followed() {
        assert_eq!(
            error_after(b"{}\n{}\n", 64),
            (2, "after line 2: disk gone".to_owned())
        );
        // The part read is the last line, cut short.
        assert_eq!(
            error_after(b"{}\n{\"a\":", 64),
            (2, "line 2 was cut short: disk gone".to_owned())
        );
        // Also when the cut line was too long to hold.
        assert_eq!(
            error_after(b"{}\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 8),
            (2, "line 2 was cut short: disk gone".to_owned())
        );
    }
}
