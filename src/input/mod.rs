//! Input: the byte sources (files, stdin, gzip, zstd), line framing, and JSON documents.

pub mod document;
pub mod lines;
pub mod source;
