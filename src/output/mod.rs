//! Output: the enrich splice, the per-request rows, and the renderings of a finished summary
//! and its analysis report (table, JSON, CSV/TSV, Prometheus), and the HTML page of the
//! documents those write.
//!
//! Takes finished values and writes them to the writer it is given: must not read input or
//! decide what a number is (the analysis and the digests did).

pub(crate) mod charts;
pub(crate) mod compact;
pub(crate) mod diff;
pub(crate) mod enrich;
pub(crate) mod findings;
pub(crate) mod genai;
pub(crate) mod html;
pub(crate) mod openmetrics;
pub(crate) mod render;
pub(crate) mod summary;
pub(crate) mod top;
