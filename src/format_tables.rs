//! More built-in format tables: servers and gateways whose one line is one request (FORMATS.md
//! sections 1, 6-8). Each is data ([`FormatSpec`]); see [`crate::format`] for the rules.

use crate::format::FormatSpec;

/// The formats of this module, in detection order (after litellm, llamacpp, vllm).
pub fn tables() -> Vec<FormatSpec> {
    vec![]
}
