//! The built-in formats, one file each: servers, gateways and provider responses whose one
//! line is one request (FORMATS.md sections 1, 3a, 5, 7a, 7b, 8a-8d, 8f), and formats whose
//! one line (or document) holds many requests: OTLP trace exports and benchmark result files
//! (FORMATS.md sections 2c, 2d, 6; realdata/README.md). Each is data ([`FormatSpec`]); see
//! [`crate::format`] for the rules and [`crate::format::file`] for the same tables as a file.
//!
//! Decisions that the tables encode (each also in the format's `ttft_doc`/`cache_doc`, shown by
//! `tokentime formats`):
//! - TGI logs no first-token time: TTFT, prefill, decode and TPOT are null (`not_logged`);
//!   `time_per_token` includes the prefill, so it only recovers the generated tokens,
//!   `floor(inference_time / time_per_token)`.
//! - SGLang's exporter has no TTFT either: `decode_throughput` is `n / decode` in some versions
//!   and `(n - 1) / decode` in others, so a TTFT derived from it would be off by a token's time
//!   or more with no way to tell which; TTFT and TPOT are null rather than guessed.
//! - Bare provider usage objects (OpenAI, OpenAI Responses, Anthropic, DeepSeek) are requests
//!   with tokens and a cache class and null latencies (`not_logged`): they are what a gateway
//!   captures of a call, and counting them keeps token and cache percentiles complete and the
//!   coverage honest about how many requests had no timing. They are fallback formats: tried
//!   only when no other format claims the line, so they never take a server's response.
//! - Input tokens always include cached ones: Anthropic and Bedrock add
//!   `cache_read + cache_creation` to `input_tokens`; Helicone and Langfuse take the total
//!   minus the output, since their prompt count excludes the cache for some providers only.

mod aiperf;
mod anthropic_usage;
mod bedrock;
mod deepseek_usage;
mod genai_perf;
mod guidellm;
mod helicone;
mod kong;
mod langfuse;
mod litellm;
mod llamacpp;
mod llamacpp_log;
mod llm_load_test;
mod llm_load_test_2023;
mod llmperf;
mod nim;
mod ollama;
mod openai_responses_usage;
mod openai_usage;
mod otlp;
mod ray_data_vllm;
mod sglang;
mod sglang_bench;
mod sglang_log;
mod tgi;
mod tokentime_rows;
mod vllm;
mod vllm_bench;
mod vllm_otlp;
mod vllm_stats;
mod vllm_v0_metrics;

use crate::format::units::Unit;
use crate::format::{Combine, Cond, Field, FieldRule, FormatSpec, RecordSource, p, parse_path};

/// The built-in formats, in detection order. The fallback formats (bare provider usage
/// objects) come after the servers' and gateways' own, the formats whose lines hold many
/// requests after them.
pub(crate) fn all() -> Vec<FormatSpec> {
    vec![
        litellm::spec(),
        llamacpp::spec(),
        vllm::spec(),
        tgi::spec(),
        nim::spec(),
        kong::spec(),
        helicone::spec(),
        langfuse::spec(),
        bedrock::spec(),
        sglang::spec(),
        deepseek_usage::spec(),
        anthropic_usage::spec(),
        openai_responses_usage::spec(),
        openai_usage::spec(),
        vllm_otlp::spec(),
        otlp::spec(),
        vllm_bench::spec(),
        llmperf::spec(),
        guidellm::spec(),
        aiperf::spec(),
        genai_perf::spec(),
        ollama::spec(),
        llamacpp_log::spec(),
        sglang_log::spec(),
        sglang_bench::spec(),
        llm_load_test::spec(),
        llm_load_test_2023::spec(),
        vllm_stats::spec(),
        vllm_v0_metrics::spec(),
        ray_data_vllm::spec(),
        tokentime_rows::spec(),
    ]
}

pub(super) fn path(s: &str) -> Vec<String> {
    parse_path(s)
}

pub(super) fn present(s: &str) -> Cond {
    Cond::Present(path(s))
}

/// `s`'s raw JSON text equals `raw` (write strings with their quotes).
pub(super) fn eq(s: &str, raw: &str) -> Cond {
    Cond::Equals(path(s), raw.into())
}

pub(super) fn rule(field: Field, unit: Unit, paths: &[&str]) -> FieldRule {
    combined(field, unit, Combine::First, paths)
}

pub(super) fn combined(field: Field, unit: Unit, combine: Combine, paths: &[&str]) -> FieldRule {
    FieldRule {
        field,
        unit,
        combine,
        paths: paths.iter().map(|s| path(s)).collect(),
    }
}

pub(super) fn paths(ps: &[&str]) -> Vec<Vec<String>> {
    ps.iter().map(|s| path(s)).collect()
}

pub(super) const USAGE_TTFT: &str =
    "not logged: a provider's usage object has no timing (latencies null, not_logged)";

pub(super) fn spans() -> RecordSource {
    RecordSource::Each(vec![p("resourceSpans.*.scopeSpans.*.spans.*")])
}

/// A rule whose paths are OTLP attribute names (which contain dots).
pub(super) fn attr_rule(field: Field, unit: Unit, names: &[&str]) -> crate::format::FieldRule {
    let mut r = crate::format::rule(field, unit, &[]);
    r.paths = names
        .iter()
        .map(|n| vec!["attributes".to_owned(), (*n).to_owned()])
        .collect();
    r
}

pub(super) fn attr_present(name: &str) -> Cond {
    Cond::Present(vec!["attributes".to_owned(), name.to_owned()])
}
