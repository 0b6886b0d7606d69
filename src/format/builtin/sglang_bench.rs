//! The `sglang-bench` format.

use crate::format::units::Unit;
use crate::format::{Cond, Field, FormatSpec, RecordSource, p, rule};
use crate::metrics::Origin;

/// SGLang `bench_serving --output-file F --output-details` lines: one JSON object per run
/// with parallel per-request arrays, as vLLM's benchmark writes them, told apart by
/// `total_output_tokens_retokenized` (SGLang re-tokenizes the output; vLLM never writes it).
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "sglang-bench".into(),
        about: "SGLang bench_serving --output-details line (ttfts/itls/output_lens arrays, one request per element)".into(),
        markers: vec![
            Cond::Present(p("ttfts")),
            Cond::Present(p("itls")),
            Cond::Present(p("total_output_tokens_retokenized")),
        ],
        records: Some(RecordSource::Columns(
            ["ttfts", "itls", "output_lens", "input_lens", "errors"]
                .map(String::from)
                .to_vec(),
        )),
        record_markers: vec![Cond::Present(p("ttfts"))],
        record_carry: vec!["backend".into()],
        run_seconds: vec![p("duration")],
        arrival_origin: Origin::Gateway,
        itl_doc: "chunk gaps (itls[i]: with an OpenAI-compatible backend one gap per stream chunk that carries text, a chunk may carry several tokens; with the native sglang backend each chunk's gap divided evenly over its new tokens, equal values, not measured per token)".into(),
        ttft_doc: "gateway (benchmark client): ttfts[i]; decode = sum(itls[i]); a non-streamed run's ttfts[i] is the whole latency".into(),
        cache_doc: "none".into(),
        fields: vec![
            rule(Field::Ttft, Unit::S, &["ttfts"]),
            rule(Field::Itl, Unit::S, &["itls"]),
            rule(Field::OutputTokens, Unit::Count, &["output_lens"]),
            rule(Field::InputTokens, Unit::Count, &["input_lens"]),
        ],
        error_when: vec![Cond::Differs(p("errors"), "\"\"".into())],
        reason_paths: vec![crate::format::p("errors")],
        ..FormatSpec::default()
    }
}
