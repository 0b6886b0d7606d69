//! Output: the enrich splice, number formatting, and the renderings of a finished summary.

pub mod enrich;
pub mod reading;
pub mod render;
pub mod summary;
