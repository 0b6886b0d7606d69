//! The built-in formats.

pub mod records;
pub mod tables;
