//! Input: opens the FILE arguments and stdin, and undoes gzip (multi-member) and zstd
//! (skippable frames too, as `pzstd` writes), detected by their magic bytes, on files and
//! stdin alike; xz, bzip2 and lz4 are recognised and refused.
//!
//! Owns the byte sources; hands out plain readers. No framing or parsing here.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::PathBuf;

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

    /// Opens the source, decompressing when its first bytes are a gzip or zstd magic number.
    ///
    /// # Errors
    /// The file's open error, a read error while peeking at its first bytes, or an
    /// unsupported compression (see [`decompress`]).
    pub fn open(&self) -> io::Result<Box<dyn Read + Send>> {
        // Plain input: once the peeked bytes are consumed, reads of this size or more go
        // straight into the caller's buffer (`BufReader` steps aside), so bytes are copied
        // once. Compressed input: the decoder's read-ahead.
        const PEEK: usize = 32 * 1024;
        match self {
            Source::Stdin => decompress(BufReader::with_capacity(PEEK, io::stdin())),
            Source::Path(p) => decompress(BufReader::with_capacity(PEEK, File::open(p)?)),
        }
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

/// Wraps `r` in a decoder chosen by its first bytes (gzip, zstd, or none).
///
/// # Errors
/// A read error while peeking, the zstd decoder's setup error, or
/// [`io::ErrorKind::InvalidData`] when the input is xz, bzip2 or lz4 (not decoded here: the
/// message says how to decompress it first).
pub fn decompress<R: BufRead + Send + 'static>(mut r: R) -> io::Result<Box<dyn Read + Send>> {
    let head = peek(&mut r)?;
    if head.starts_with(GZIP) {
        Ok(Box::new(flate2::bufread::MultiGzDecoder::new(r)))
    } else if head.starts_with(ZSTD) || zstd_skippable(head) {
        Ok(Box::new(zstd::stream::read::Decoder::with_buffer(r)?))
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
