//! The `kong` format.

use super::{eq, path, paths, present, rule};
use crate::format::units::Unit;
use crate::format::{Combine, Cond, Field, FieldRule, FormatSpec};
use crate::metrics::Origin;

/// Kong AI Gateway log-plugin records, current `ai.proxy` and 3.8 `ai.<plugin>` (FORMATS.md 8b).
pub(crate) fn spec() -> FormatSpec {
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
        // 499: the client closed the request (nginx's status, which Kong logs).
        cancelled_when: vec![eq("response.status", "499")],
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
            // The model asked for first, as a failed request has no response model.
            let mut m: Vec<Vec<String>> = ai("meta.request_model").iter().map(|s| path(s)).collect();
            m.extend(ai("meta.response_model").iter().map(|s| path(s)));
            m
        },
        reason_paths: vec![crate::format::p("response.status")],
        ..FormatSpec::default()
    }
}
