//! Input: the byte sources (files, stdin, gzip, zstd), line framing over one reused buffer,
//! and JSON documents (arrays of records, pretty-printed objects).
//!
//! Owns bytes until they are lines or document items. Must not parse a line's JSON, know a
//! format or a metric, or write anything but what a caller hands it.

pub(crate) mod document;
pub(crate) mod lines;
pub(crate) mod source;
