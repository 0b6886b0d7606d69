//! Metrics: one request's timeline and the pure derivation of its metrics (TTFT, TPOT, E2E
//! latency, queue, prefill, decode, the prefix-cache class), the list of the metrics reported
//! ([`Metric`]), the in-flight sweep over many requests, and the span of log time a summary
//! keeps ([`TimeRange`]).
//!
//! Pure arithmetic on integer nanoseconds and token counts: must not see JSON, do I/O, or
//! know a format.

mod derive;
mod metric;
mod range;
pub(crate) mod sweep;

pub(crate) use derive::*;
pub(crate) use metric::{Metric, Sample};
pub(crate) use range::TimeRange;
