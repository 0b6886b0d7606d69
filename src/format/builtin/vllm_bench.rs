//! The `vllm-bench` format.

use crate::format::units::Unit;
use crate::format::{Cond, Field, FormatSpec, RecordSource, p, rule};
use crate::metrics::Origin;

/// `vllm bench serve` / `benchmark_serving.py --save-result --save-detailed` result files: one
/// object per run with parallel per-request arrays (FORMATS.md 2d).
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "vllm-bench".into(),
        about: "vLLM benchmark result (ttfts/itls/output_lens arrays, one request per element)"
            .into(),
        markers: vec![
            Cond::Present(p("ttfts")),
            Cond::Present(p("itls")),
            // SGLang's benchmark writes the same arrays; its lines are `sglang-bench`.
            Cond::Not(Box::new(Cond::Present(p(
                "total_output_tokens_retokenized",
            )))),
        ],
        records: Some(RecordSource::Columns(
            ["ttfts", "itls", "output_lens", "input_lens", "errors"]
                .map(String::from)
                .to_vec(),
        )),
        record_markers: vec![Cond::Present(p("ttfts"))],
        record_carry: vec!["model_id".into()],
        run_seconds: vec![p("duration")],
        model_paths: vec![p("model_id")],
        arrival_origin: Origin::Gateway,
        itl_doc: "chunk gaps (itls[i]: one gap per stream chunk, a chunk may carry several tokens; not per-token ITL)".into(),
        ttft_doc: "gateway (benchmark client): ttfts[i]; decode = sum(itls[i])".into(),
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
