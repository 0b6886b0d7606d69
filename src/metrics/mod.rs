//! Metrics: one request's timeline and the pure derivation of its metrics, and the in-flight
//! sweep over many requests.

mod derive;
pub(crate) mod sweep;

pub(crate) use derive::*;
