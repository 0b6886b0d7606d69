//! The built-in formats.

pub(crate) mod records;
pub(crate) mod tables;
