//! Output: the enrich splice, number formatting, and the renderings of a finished summary.

pub(crate) mod enrich;
pub(crate) mod reading;
pub(crate) mod render;
pub(crate) mod summary;
