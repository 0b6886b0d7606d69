//! The `aiperf` format.

use super::{combined, eq, present, rule};
use crate::format::units::Unit;
use crate::format::{Combine, Cond, Field, FormatSpec, p};
use crate::metrics::Origin;

/// NVIDIA AIPerf `profile_export.jsonl`: one record a line, `metadata` (request start, phase,
/// cancellation), `metrics` as `{"value": .., "unit": ..}` objects in each metric's display
/// unit (fixed per metric in AIPerf's registry: milliseconds for every latency, tokens for the
/// counts), and `error` for a failed or cancelled request (whose `metrics` hold only the
/// prompt length, or nothing). 0.1 wrote `ttft` and `metadata.timestamp_ns`; later versions
/// `time_to_first_token` and `metadata.request_start_ns`.
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "aiperf".into(),
        about: "NVIDIA AIPerf profile_export.jsonl record (metadata, metrics as {value, unit}, error)".into(),
        markers: vec![present("metadata.record_processor_id"), present("metrics")],
        // AIPerf aggregates the profiling phase only; a warm-up record is no request.
        skip_when: vec![
            vec![eq("metadata.benchmark_phase", "\"warmup\"")],
            vec![eq("metadata.credit_phase", "\"warmup\"")],
        ],
        skip_label: "warm-up records".into(),
        end_from_e2e_first: true,
        arrival_origin: Origin::Gateway,
        itl_doc: "chunk gaps (metrics.inter_chunk_latency: one gap per stream chunk, a chunk may carry several tokens; not per-token ITL)".into(),
        ttft_doc: "gateway (benchmark client): metrics.time_to_first_token, the first token of any kind (reasoning included); itl = inter_chunk_latency (chunk gaps)".into(),
        cache_doc: "metrics.usage_prompt_cache_read_tokens: the API usage's cached prompt tokens (OpenAI prompt_tokens_details.cached_tokens), written by later versions (0.10.0) where the server reports them; absent, the cache class is unknown".into(),
        fields: vec![
            rule(Field::Arrival, Unit::EpochNs, &["metadata.request_start_ns", "metadata.timestamp_ns"]),
            // When the record was done (later versions): the end of a failed or cancelled
            // request, whose record has no latency. Up to tens of ms after the last response of
            // one that succeeded (AIPerf closes the record after the stream): the line's time,
            // the end only where there is no E2E (`end_from_e2e_first`).
            rule(Field::LoggedAt, Unit::EpochNs, &["metadata.request_end_ns"]),
            rule(Field::Ttft, Unit::Ms, &["metrics.time_to_first_token.value", "metrics.ttft.value"]),
            rule(Field::E2e, Unit::Ms, &["metrics.request_latency.value"]),
            // AIPerf's TPOT (its `inter_token_latency`) is (E2E - TTFT) / (OSL - 1): the decode
            // is that difference, not the sum of the chunk gaps.
            combined(Field::Decode, Unit::Ms, Combine::Difference, &["metrics.request_latency.value", "metrics.time_to_first_token.value"]),
            combined(Field::Decode, Unit::Ms, Combine::Difference, &["metrics.request_latency.value", "metrics.ttft.value"]),
            rule(Field::Itl, Unit::Ms, &["metrics.inter_chunk_latency.value"]),
            // Later versions: the first non-reasoning token (`time_to_first_output`, renamed
            // `time_to_first_output_token`; display unit ms), streamed responses only.
            rule(Field::Ttfot, Unit::Ms, &["metrics.time_to_first_output_token.value", "metrics.time_to_first_output.value"]),
            rule(Field::OutputTokens, Unit::Count, &["metrics.output_sequence_length.value"]),
            rule(Field::InputTokens, Unit::Count, &["metrics.input_sequence_length.value", "metrics.error_isl.value"]),
            rule(Field::CachedTokens, Unit::Count, &["metrics.usage_prompt_cache_read_tokens.value"]),
        ],
        // Error before cancelled: a cancellation (HTTP 499, RequestCancellationError) is no
        // error, so the error rule leaves it out.
        error_when: vec![
            Cond::Differs(p("error.type"), "\"RequestCancellationError\"".into()),
            Cond::Differs(p("error.code"), "499".into()),
        ],
        cancelled_when: vec![
            eq("metadata.was_cancelled", "true"),
            present("metadata.cancellation_time_ns"),
            eq("error.type", "\"RequestCancellationError\""),
            eq("error.code", "499"),
        ],
        id_paths: vec![p("metadata.x_request_id")],
        reason_paths: vec![crate::format::p("error.type"), crate::format::p("error.code"), crate::format::p("error.message")],
        ..FormatSpec::default()
    }
}
