//! Input: the byte sources (files, stdin, gzip, zstd), line framing, and JSON documents.

pub(crate) mod document;
pub(crate) mod lines;
pub(crate) mod source;
