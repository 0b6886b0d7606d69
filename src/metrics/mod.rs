//! Metrics: one request's timeline and the pure derivation of its metrics, the list of the
//! metrics reported ([`Metric`]), and the in-flight sweep over many requests.

mod derive;
mod metric;
pub(crate) mod sweep;

pub(crate) use derive::*;
pub(crate) use metric::{Metric, Sample};
