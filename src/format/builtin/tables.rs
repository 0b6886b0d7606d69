//! More built-in format tables: servers, gateways and provider responses whose one line is one
//! request (FORMATS.md sections 1, 7a, 7b, 8a-8d, 8f). Each is data ([`FormatSpec`]); see
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

use crate::format::units::Unit;
use crate::format::{Combine, Cond, Field, FieldRule, FormatSpec, parse_path};
use crate::metrics::Origin;

/// The formats of this module, in detection order (after litellm, llamacpp, vllm). The
/// fallback formats come last.
pub(crate) fn tables() -> Vec<FormatSpec> {
    vec![
        tgi(),
        nim(),
        kong(),
        helicone(),
        langfuse(),
        bedrock(),
        sglang(),
        deepseek_usage(),
        anthropic_usage(),
        openai_responses_usage(),
        openai_usage(),
    ]
}

fn path(s: &str) -> Vec<String> {
    parse_path(s)
}

fn present(s: &str) -> Cond {
    Cond::Present(path(s))
}

/// `s`'s raw JSON text equals `raw` (write strings with their quotes).
fn eq(s: &str, raw: &str) -> Cond {
    Cond::Equals(path(s), raw.into())
}

fn rule(field: Field, unit: Unit, paths: &[&str]) -> FieldRule {
    combined(field, unit, Combine::First, paths)
}

fn combined(field: Field, unit: Unit, combine: Combine, paths: &[&str]) -> FieldRule {
    FieldRule {
        field,
        unit,
        combine,
        paths: paths.iter().map(|s| path(s)).collect(),
    }
}

fn paths(ps: &[&str]) -> Vec<Vec<String>> {
    ps.iter().map(|s| path(s)).collect()
}

/// TGI router `--json-output` "Success" events (FORMATS.md 1).
fn tgi() -> FormatSpec {
    FormatSpec {
        name: "tgi".into(),
        about: "Hugging Face TGI router --json-output \"Success\" events (one per finished request)".into(),
        markers: vec![eq("message", "\"Success\""), present("span.time_per_token")],
        // A request's failure is one ERROR event of the router's infer module inside the
        // request span (validation, overload, incomplete generation); no Success follows.
        // Other ERROR lines (launcher, shards, startup) are not requests.
        error_markers: vec![
            eq("level", "\"ERROR\""),
            eq("target", "\"text_generation_router::infer\""),
            present("span.name"),
        ],
        arrival_origin: Origin::Arrival,
        ttft_doc: "not logged: TGI folds prefill into inference_time, so TTFT, prefill, decode and TPOT are null (not_logged); time_per_token includes the prefill and only recovers the generated tokens".into(),
        cache_doc: "none (TGI logs no prompt or cache counts)".into(),
        fields: vec![
            rule(Field::E2e, Unit::DurationStr, &["span.total_time"]),
            rule(Field::Queue, Unit::DurationStr, &["span.queue_time"]),
            combined(
                Field::OutputTokens,
                Unit::DurationStr,
                Combine::FloorRatio,
                &["span.inference_time", "span.time_per_token"],
            ),
            rule(Field::LoggedAt, Unit::Rfc3339, &["timestamp"]),
        ],
        ..FormatSpec::default()
    }
}

/// NVIDIA NIM responses with per-request `stats` (FORMATS.md 8d).
fn nim() -> FormatSpec {
    FormatSpec {
        name: "nim".into(),
        about: "NVIDIA NIM response or final chunk with the per-request stats object (NIM_PER_REQ_METRICS_ENABLE=1)".into(),
        markers: vec![eq("stats.type", "\"NIM LLM Model Stats\"")],
        arrival_origin: Origin::Arrival,
        ttft_doc: "arrival (queue entry): time_in_queue_in_ms + time_to_first_token_in_ms (which runs from processing start); scheduled when the queue time is not logged (non-vLLM backends). Decode = generation_time_in_ms - time_to_first_token_in_ms, both from processing start".into(),
        cache_doc: "none in stats; usage.prompt_tokens_details.cached_tokens when the response has it".into(),
        fields: vec![
            rule(Field::Queue, Unit::Ms, &["stats.time_in_queue_in_ms"]),
            rule(Field::Prefill, Unit::Ms, &["stats.response_tokens.time_to_first_token_in_ms"]),
            combined(
                Field::Decode,
                Unit::Ms,
                Combine::Difference,
                &[
                    "stats.generation_time_in_ms",
                    "stats.response_tokens.time_to_first_token_in_ms",
                ],
            ),
            rule(Field::InputTokens, Unit::Count, &["stats.llm_input_token_length", "usage.prompt_tokens"]),
            rule(
                Field::OutputTokens,
                Unit::Count,
                &["stats.llm_output_token_length", "stats.response_tokens.response_token_length", "usage.completion_tokens"],
            ),
            rule(Field::CachedTokens, Unit::Count, &["usage.prompt_tokens_details.cached_tokens"]),
            rule(Field::LoggedAt, Unit::EpochS, &["created"]),
        ],
        id_paths: paths(&["id"]),
        model_paths: paths(&["model"]),
        ..FormatSpec::default()
    }
}

/// Kong AI Gateway log-plugin records, current `ai.proxy` and 3.8 `ai.<plugin>` (FORMATS.md 8b).
fn kong() -> FormatSpec {
    // 3.8 names the object after the plugin; both AI proxy plugins are read.
    let ai = |rest: &str| -> Vec<String> {
        ["proxy", "ai-proxy", "ai-proxy-advanced"]
            .iter()
            .map(|p| format!("ai.{p}.{rest}"))
            .collect()
    };
    let rule_ai = |field: Field, unit: Unit, rests: &[&str], extra: &[&str]| -> FieldRule {
        let mut ps: Vec<String> = rests.iter().flat_map(|r| ai(r)).collect();
        ps.extend(extra.iter().map(|s| s.to_string()));
        FieldRule {
            field,
            unit,
            combine: Combine::First,
            paths: ps.iter().map(|s| path(s)).collect(),
        }
    };
    FormatSpec {
        name: "kong".into(),
        about: "Kong AI Gateway log record (file-log/http-log/tcp-log) with the ai object: ai.proxy (current) or ai.<plugin> (3.8)".into(),
        markers: vec![present("started_at"), present("latencies.request"), present("ai")],
        error_when: vec![Cond::AtLeast(path("response.status"), 400)],
        response_cache_when: ai("cache.cache_status")
            .iter()
            .map(|p| eq(p, "\"Hit\""))
            .collect(),
        // Streamed unless the mode says oneshot (3.8 does not log the mode: then TTFT is
        // simply not logged).
        streamed_when: Some(Cond::Not(Box::new(eq(
            "ai.proxy.meta.request_mode",
            "\"oneshot\"",
        )))),
        arrival_origin: Origin::Gateway,
        ttft_doc: "gateway: ai.proxy.usage.time_to_first_token (streams; 3.8 has none); decode = llm_latency - TTFT; time_per_token = llm_latency / completion_tokens includes the TTFT and is not used".into(),
        cache_doc: "ai.proxy.usage.prompt_tokens_details.cached_tokens (an empty {} is unknown); cache_status \"Hit\" is the semantic response cache".into(),
        fields: vec![
            rule(Field::Arrival, Unit::EpochMs, &["started_at"]),
            rule_ai(Field::Ttft, Unit::Ms, &["usage.time_to_first_token"], &[]),
            rule_ai(Field::E2e, Unit::Ms, &["meta.llm_latency"], &["latencies.proxy"]),
            rule_ai(Field::InputTokens, Unit::Count, &["usage.prompt_tokens", "usage.input_tokens", "usage.prompt_token"], &[]),
            rule_ai(Field::OutputTokens, Unit::Count, &["usage.completion_tokens", "usage.output_tokens", "usage.completion_token"], &[]),
            rule_ai(Field::CachedTokens, Unit::Count, &["usage.prompt_tokens_details.cached_tokens"], &[]),
        ],
        id_paths: paths(&["request.id"]),
        model_paths: {
            let mut m: Vec<Vec<String>> = ai("meta.response_model").iter().map(|s| path(s)).collect();
            m.extend(ai("meta.request_model").iter().map(|s| path(s)));
            m
        },
        ..FormatSpec::default()
    }
}

/// Helicone request rows (FORMATS.md 7b).
fn helicone() -> FormatSpec {
    FormatSpec {
        name: "helicone".into(),
        about: "Helicone request row (npx @helicone/export --format jsonl, REST API)".into(),
        markers: vec![present("delay_ms"), present("request_created_at")],
        error_when: vec![Cond::AtLeast(path("response_status"), 400)],
        response_cache_when: vec![Cond::Differs(
            path("cache_reference_id"),
            "\"00000000-0000-0000-0000-000000000000\"".into(),
        )],
        arrival_origin: Origin::Gateway,
        ttft_doc: "gateway: time_to_first_token (ms; 0 is Helicone's \"none\" sentinel, null); decode = (response_created_at - request_created_at) - TTFT".into(),
        cache_doc: "prompt_cache_read_tokens (writes are not hits); cache_reference_id other than the all-zero UUID is Helicone's response cache; input = total_tokens - completion_tokens (prompt_tokens excludes cache writes for Anthropic)".into(),
        fields: vec![
            rule(Field::Arrival, Unit::Rfc3339, &["request_created_at"]),
            rule(Field::End, Unit::Rfc3339, &["response_created_at"]),
            rule(Field::E2e, Unit::Ms, &["delay_ms"]),
            rule(Field::Ttft, Unit::Ms, &["time_to_first_token"]),
            combined(Field::InputTokens, Unit::Count, Combine::Difference, &["total_tokens", "completion_tokens"]),
            rule(Field::InputTokens, Unit::Count, &["prompt_tokens"]),
            rule(Field::CachedTokens, Unit::Count, &["prompt_cache_read_tokens"]),
            rule(Field::OutputTokens, Unit::Count, &["completion_tokens"]),
        ],
        id_paths: paths(&["request_id"]),
        model_paths: paths(&["model", "response_model", "request_model"]),
        ..FormatSpec::default()
    }
}

/// Langfuse GENERATION observations (FORMATS.md 7a).
fn langfuse() -> FormatSpec {
    FormatSpec {
        name: "langfuse".into(),
        about: "Langfuse observation of type GENERATION (public API /observations); SPAN, EVENT and other types are not requests".into(),
        markers: vec![present("traceId"), eq("type", "\"GENERATION\""), present("startTime")],
        error_when: vec![eq("level", "\"ERROR\"")],
        arrival_origin: Origin::Gateway,
        ttft_doc: "gateway (client SDK): completionStartTime - startTime, else timeToFirstToken (s); null without a completion start (non-streamed calls)".into(),
        cache_doc: "usageDetails cache-read keys (input_cached_tokens, input_cache_read, cache_read_input_tokens, ...); input = usage.input (Langfuse's sum of every input* key, cached included), else usageDetails.total - output".into(),
        fields: vec![
            rule(Field::Arrival, Unit::Rfc3339, &["startTime"]),
            rule(Field::FirstToken, Unit::Rfc3339, &["completionStartTime"]),
            rule(Field::End, Unit::Rfc3339, &["endTime"]),
            rule(Field::Ttft, Unit::S, &["timeToFirstToken"]),
            rule(Field::E2e, Unit::S, &["latency"]),
            rule(Field::InputTokens, Unit::Count, &["usage.input"]),
            combined(Field::InputTokens, Unit::Count, Combine::Difference, &["usageDetails.total", "usageDetails.output"]),
            rule(Field::InputTokens, Unit::Count, &["usageDetails.input"]),
            rule(
                Field::CachedTokens,
                Unit::Count,
                &[
                    "usageDetails.input_cached_tokens",
                    "usageDetails.input_cache_read",
                    "usageDetails.cache_read_input_tokens",
                    "usageDetails.input_cached",
                    "usageDetails.cached_tokens",
                ],
            ),
            rule(Field::OutputTokens, Unit::Count, &["usage.output", "usageDetails.output"]),
        ],
        id_paths: paths(&["id"]),
        model_paths: paths(&["model"]),
        ..FormatSpec::default()
    }
}

/// AWS Bedrock model invocation logs (FORMATS.md 8f).
fn bedrock() -> FormatSpec {
    const STREAM_METRICS: &str = "output.outputBodyJson[-1].amazon-bedrock-invocationMetrics";
    let sm = |k: &str| format!("{STREAM_METRICS}.{k}");
    FormatSpec {
        name: "bedrock".into(),
        about: "AWS Bedrock model invocation log record (CloudWatch or S3, schemaType ModelInvocationLog)".into(),
        markers: vec![eq("schemaType", "\"ModelInvocationLog\"")],
        // Failed invocations carry an errorCode (a public report; not in FORMATS.md).
        error_when: vec![present("errorCode")],
        // A stream's body is the array of its chunks; a one-shot body is an object.
        streamed_when: Some(present("output.outputBodyJson[-1]")),
        arrival_origin: Origin::Arrival,
        ttft_doc: "arrival (Bedrock received the invocation): firstByteLatency of the last stream chunk's amazon-bedrock-invocationMetrics (InvokeModelWithResponseStream only); not streamed otherwise".into(),
        cache_doc: "input.cacheReadInputTokenCount; input = inputTokenCount + cacheReadInputTokenCount + cacheWriteInputTokenCount (inputTokenCount excludes the cache)".into(),
        fields: vec![
            rule(Field::Ttft, Unit::Ms, &[&sm("firstByteLatency")]),
            rule(
                Field::E2e,
                Unit::Ms,
                &[
                    "output.outputBodyJson.metrics.latencyMs",
                    &sm("invocationLatency"),
                    "output.outputBodyJson[-1].metadata.metrics.latencyMs",
                ],
            ),
            combined(
                Field::InputTokens,
                Unit::Count,
                Combine::Sum,
                &["input.inputTokenCount", "input.cacheReadInputTokenCount", "input.cacheWriteInputTokenCount"],
            ),
            rule(
                Field::CachedTokens,
                Unit::Count,
                &["input.cacheReadInputTokenCount", "output.outputBodyJson.usage.cacheReadInputTokens", &sm("cacheReadInputTokenCount")],
            ),
            rule(Field::OutputTokens, Unit::Count, &["output.outputTokenCount", &sm("outputTokenCount")]),
            rule(Field::LoggedAt, Unit::Rfc3339, &["timestamp"]),
        ],
        id_paths: paths(&["requestId"]),
        model_paths: paths(&["modelId"]),
        ..FormatSpec::default()
    }
}

/// SGLang `--export-metrics-to-file-dir` request records (FORMATS.md 8c).
fn sglang() -> FormatSpec {
    FormatSpec {
        name: "sglang".into(),
        about: "SGLang request metrics exporter record (--export-metrics-to-file-dir)".into(),
        markers: vec![present("e2e_latency"), present("request_parameters")],
        cancelled_when: vec![eq("finish_reason.type", "\"abort\"")],
        arrival_origin: Origin::Arrival,
        ttft_doc: "not logged: the exporter has no first-token time, and decode_throughput's formula differs between versions (n or n - 1 tokens over the decode time), so TTFT and TPOT are null rather than guessed".into(),
        cache_doc: "cached_tokens (prefix-cache hit tokens) of prompt_tokens".into(),
        fields: vec![
            rule(Field::Arrival, Unit::EpochS, &["request_received_ts"]),
            rule(Field::End, Unit::EpochS, &["request_finished_ts"]),
            rule(Field::E2e, Unit::S, &["e2e_latency"]),
            rule(Field::Queue, Unit::S, &["queue_time"]),
            rule(Field::InputTokens, Unit::Count, &["prompt_tokens"]),
            rule(Field::CachedTokens, Unit::Count, &["cached_tokens"]),
            rule(Field::OutputTokens, Unit::Count, &["completion_tokens"]),
        ],
        id_paths: paths(&["id"]),
        ..FormatSpec::default()
    }
}

const USAGE_TTFT: &str =
    "not logged: a provider's usage object has no timing (latencies null, not_logged)";

/// DeepSeek chat completion with `prompt_cache_hit_tokens` (FORMATS.md 8a).
fn deepseek_usage() -> FormatSpec {
    FormatSpec {
        name: "deepseek-usage".into(),
        about: "DeepSeek response usage (prompt_cache_hit_tokens + prompt_cache_miss_tokens = prompt_tokens); tokens and cache only".into(),
        markers: vec![present("usage.prompt_cache_hit_tokens")],
        fallback: true,
        ttft_doc: USAGE_TTFT.into(),
        cache_doc: "usage.prompt_cache_hit_tokens of usage.prompt_tokens".into(),
        fields: vec![
            rule(Field::InputTokens, Unit::Count, &["usage.prompt_tokens"]),
            combined(Field::InputTokens, Unit::Count, Combine::Sum, &["usage.prompt_cache_hit_tokens", "usage.prompt_cache_miss_tokens"]),
            rule(Field::CachedTokens, Unit::Count, &["usage.prompt_cache_hit_tokens"]),
            rule(Field::OutputTokens, Unit::Count, &["usage.completion_tokens"]),
            rule(Field::LoggedAt, Unit::EpochS, &["created"]),
        ],
        id_paths: paths(&["id"]),
        model_paths: paths(&["model"]),
        ..FormatSpec::default()
    }
}

/// Anthropic Messages response (FORMATS.md 8a).
fn anthropic_usage() -> FormatSpec {
    FormatSpec {
        name: "anthropic-usage".into(),
        about: "Anthropic Messages response (type \"message\") usage; tokens and cache only. Stream events (message_start, message_delta) are not requests on their own".into(),
        markers: vec![eq("type", "\"message\""), present("usage.input_tokens")],
        error_markers: vec![eq("type", "\"error\""), present("error.type")],
        fallback: true,
        ttft_doc: USAGE_TTFT.into(),
        cache_doc: "usage.cache_read_input_tokens; input = input_tokens + cache_read_input_tokens + cache_creation_input_tokens (Anthropic's input_tokens excludes both)".into(),
        fields: vec![
            combined(
                Field::InputTokens,
                Unit::Count,
                Combine::Sum,
                &["usage.input_tokens", "usage.cache_read_input_tokens", "usage.cache_creation_input_tokens"],
            ),
            rule(Field::CachedTokens, Unit::Count, &["usage.cache_read_input_tokens"]),
            rule(Field::OutputTokens, Unit::Count, &["usage.output_tokens"]),
        ],
        id_paths: paths(&["id"]),
        model_paths: paths(&["model"]),
        ..FormatSpec::default()
    }
}

/// OpenAI Responses API response object (FORMATS.md 8a).
fn openai_responses_usage() -> FormatSpec {
    FormatSpec {
        name: "openai-responses-usage".into(),
        about: "OpenAI Responses API response object (object \"response\") usage; tokens and cache only".into(),
        markers: vec![eq("object", "\"response\""), present("usage.input_tokens")],
        error_markers: vec![eq("object", "\"response\""), eq("status", "\"failed\"")],
        error_when: vec![eq("status", "\"failed\"")],
        cancelled_when: vec![eq("status", "\"cancelled\"")],
        fallback: true,
        ttft_doc: USAGE_TTFT.into(),
        cache_doc: "usage.input_tokens_details.cached_tokens of usage.input_tokens (which includes them)".into(),
        fields: vec![
            rule(Field::InputTokens, Unit::Count, &["usage.input_tokens"]),
            rule(Field::CachedTokens, Unit::Count, &["usage.input_tokens_details.cached_tokens"]),
            rule(Field::OutputTokens, Unit::Count, &["usage.output_tokens"]),
            rule(Field::LoggedAt, Unit::EpochS, &["created_at"]),
        ],
        id_paths: paths(&["id"]),
        model_paths: paths(&["model"]),
        ..FormatSpec::default()
    }
}

/// OpenAI Chat Completions / Completions response or final usage chunk (FORMATS.md 8a).
fn openai_usage() -> FormatSpec {
    FormatSpec {
        name: "openai-usage".into(),
        about: "OpenAI-compatible chat/completions response or final usage chunk (usage.prompt_tokens) that no server format claims; tokens and cache only".into(),
        markers: vec![present("usage.prompt_tokens"), present("usage.completion_tokens")],
        error_markers: vec![present("error.message"), present("error.type")],
        fallback: true,
        ttft_doc: USAGE_TTFT.into(),
        cache_doc: "usage.prompt_tokens_details.cached_tokens of usage.prompt_tokens (which includes them; 0 is a miss, absent or null unknown)".into(),
        fields: vec![
            rule(Field::InputTokens, Unit::Count, &["usage.prompt_tokens"]),
            rule(Field::CachedTokens, Unit::Count, &["usage.prompt_tokens_details.cached_tokens"]),
            rule(Field::OutputTokens, Unit::Count, &["usage.completion_tokens"]),
            rule(Field::LoggedAt, Unit::EpochS, &["created"]),
        ],
        id_paths: paths(&["id"]),
        model_paths: paths(&["model"]),
        ..FormatSpec::default()
    }
}
