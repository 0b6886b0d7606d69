//! An input that holds a benchmark's aggregates only (its percentiles and throughput, no
//! request) is named as such on stderr at its end, with where its requests are:
//! `tokentime: summary.json: LLMPerf's summary of a run: ...`. Told from its first bytes;
//! said only when the input gave no request.

use memchr::memmem::find;

/// What the first bytes of an input (after decompression) say it is, when it is a benchmark's
/// aggregates without its requests: the words that say where they are.
pub(crate) fn of(head: &[u8]) -> Option<&'static str> {
    let has = |s: &str| find(head, s.as_bytes()).is_some();
    if has("\"results_ttft_s_quantiles_p") || has("\"results_inter_token_latency_s_quantiles_p") {
        return Some(
            "LLMPerf's summary of a run, no request in it: its requests are in the \
             *_individual_responses.json beside it",
        );
    }
    // 0.1 (`records` of metrics with a `tag` and a `header`), 0.13 (`aiperf_version`).
    if (has("\"records\"") && has("\"header\"") && has("\"tag\"")) || has("\"aiperf_version\"") {
        return Some(
            "AIPerf's aggregate export, no request in it: its requests are in the \
             profile_export.jsonl beside it",
        );
    }
    if has("\"request_throughput\": {") || has("\"request_throughput\":{") {
        return Some(
            "genai-perf's aggregate export, no request in it: its requests are in the \
             profile_export.json beside it",
        );
    }
    // vLLM's and SGLang's result files: their throughput or median TTFT beside the run's
    // duration (SGLang's early summaries have no request_throughput), or their first keys
    // (`backend` and `request_rate`) where a long member (SGLang's `server_info`) pushes the
    // aggregates past the first bytes read. Said only when no request was read, so a file
    // whose `ttfts` come later than these bytes never gets it.
    let result = ((has("\"request_throughput\"") || has("\"median_ttft_ms\""))
        && has("\"duration\""))
        || (has("\"backend\"") && has("\"request_rate\""));
    if result && !has("\"ttfts\"") {
        // SGLang's own: its retokenized count, or its backend where the first bytes end before
        // that (vLLM's benchmark, whose result starts with its `date`, writes `backend: sglang`
        // too when it drives SGLang).
        if has("\"total_output_tokens_retokenized\"")
            || (has("\"backend\": \"sglang\"") && !has("\"date\""))
        {
            return Some(
                "a benchmark result without its requests (only their aggregates): SGLang's \
                 bench_serving writes each request's TTFT and ITL with --output-details",
            );
        }
        return Some(
            "a benchmark result without its requests (only their aggregates): vLLM writes each \
             request's TTFT and ITL with --save-detailed (vllm bench serve), SGLang with \
             --output-details",
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::of;

    #[test]
    fn aggregate_exports_are_told_from_request_data() {
        let vllm = br#"{"duration": 20.1, "completed": 200, "request_throughput": 9.9}"#;
        assert!(of(vllm).unwrap().contains("--save-detailed"));
        let detailed = br#"{"duration": 20.1, "request_throughput": 9.9, "ttfts": [0.1]}"#;
        assert_eq!(of(detailed), None);
        let genai = br#"{"request_throughput": {"unit": "requests/sec", "avg": 8.5}}"#;
        assert!(of(genai).unwrap().contains("profile_export.json "));
        let llmperf = br#"{"results_ttft_s_quantiles_p50": 0.2}"#;
        assert!(of(llmperf).unwrap().contains("individual_responses"));
        let aiperf = br#"{"records": {"ttft": {"tag": "ttft", "header": "TTFT", "avg": 1}}}"#;
        assert!(of(aiperf).unwrap().contains("profile_export.jsonl"));
        let aiperf = br#"{"aiperf_version": "0.13.0", "request_throughput": {"avg": 8.3}}"#;
        assert!(of(aiperf).unwrap().contains("profile_export.jsonl"));
        assert_eq!(of(br#"{"model": "m", "startTime": 1}"#), None);
        // SGLang: a summary of medians (late 2024), and one whose server_info comes first.
        let sglang = br#"{"backend": "sglang", "median_ttft_ms": 85.7, "duration": 298.4, "total_output_tokens_retokenized": 9}"#;
        assert!(of(sglang).unwrap().contains("SGLang's bench_serving"));
        let sglang =
            br#"{"tag": "pd", "backend": "sglang", "request_rate": Infinity, "server_info": {"#;
        assert!(of(sglang).unwrap().contains("SGLang's bench_serving"));
        let vllm =
            br#"{"date": "20250410", "backend": "sglang", "request_rate": 4.0, "duration": 9"#;
        assert!(of(vllm).unwrap().contains("--save-detailed"));
    }
}
