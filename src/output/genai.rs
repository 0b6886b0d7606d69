//! The OpenTelemetry GenAI histograms in the Prometheus text exposition format, named as
//! Prometheus names OTLP metrics (dots to `_`, the unit `s` as a `_seconds` suffix, the
//! annotation `{token}` dropped): `gen_ai_server_time_to_first_token_seconds`,
//! `gen_ai_server_time_per_output_token_seconds`, `gen_ai_server_request_duration_seconds`
//! (the durations the server measured), `gen_ai_client_operation_duration_seconds`,
//! `gen_ai_client_operation_time_to_first_chunk_seconds` (those a gateway or a client
//! measured), `gen_ai_client_token_usage` (by `gen_ai_token_type`, `input` or `output`).
//!
//! Each series is labelled `gen_ai_request_model` (where the log names the model),
//! `gen_ai_provider_name` (where the format says whose it is: [`provider_name`]) and `cache`
//! (the prefix-cache class, `unknown` when the log does not say). There is no all-requests
//! series: every request is in exactly one series, so `sum by (...)` in PromQL adds them up,
//! over series and over hosts, without counting anything twice.

use crate::summary::genai::{FAMILIES, Family, GenAi, Hist};
use std::collections::BTreeMap;
use std::io::{self, Write};

/// The `gen_ai.provider.name` of a format's requests, where the format alone says it: the
/// conventions' well-known value for a provider's own API (`openai`, `anthropic`,
/// `aws.bedrock`, `deepseek`: the attribute names the API flavour, so an OpenAI-compatible
/// response is `openai`), the server's name for a server's own log (a custom value, as the
/// conventions allow). `None` for gateways, traces and benchmarks, which carry requests of
/// any provider.
pub(crate) fn provider_name(format: &str) -> Option<&'static str> {
    Some(match format {
        "openai-usage" | "openai-responses-usage" => "openai",
        "anthropic-usage" => "anthropic",
        "deepseek-usage" => "deepseek",
        "bedrock" => "aws.bedrock",
        "vllm" | "vllm-otlp" | "vllm-stats" | "vllm-v0-metrics" => "vllm",
        "sglang" | "sglang-log" => "sglang",
        "llamacpp" | "llamacpp-log" => "llama.cpp",
        "ollama" => "ollama",
        "tgi" => "tgi",
        "nim" => "nim",
        _ => return None,
    })
}

/// A family's name, help text and, for the token one, its `gen_ai_token_type` value.
fn family_text(f: &Family) -> (&'static str, &'static str, Option<&'static str>) {
    match f.key {
        "server_ttft_ms" => (
            "gen_ai_server_time_to_first_token_seconds",
            "Time to generate first token for successful responses (tokentime's TTFT, measured by the server from the request's arrival).",
            None,
        ),
        "server_tpot_ms" => (
            "gen_ai_server_time_per_output_token_seconds",
            "Time per output token generated after the first token for successful responses (tokentime's TPOT, measured by the server).",
            None,
        ),
        "server_e2e_ms" => (
            "gen_ai_server_request_duration_seconds",
            "Generative AI server request duration such as time-to-last byte or last output token (tokentime's E2E, measured by the server).",
            None,
        ),
        "client_e2e_ms" => (
            "gen_ai_client_operation_duration_seconds",
            "GenAI operation duration (tokentime's E2E, measured by a gateway or client).",
            None,
        ),
        "client_ttft_ms" => (
            "gen_ai_client_operation_time_to_first_chunk_seconds",
            "Time to receive the first chunk, measured from when the client issues the generation request to when the first chunk is received in the response stream (tokentime's TTFT, measured by a gateway or client).",
            None,
        ),
        "input_tokens" => (
            "gen_ai_client_token_usage",
            "Number of input and output tokens used.",
            Some("input"),
        ),
        _ => (
            "gen_ai_client_token_usage",
            "Number of input and output tokens used.",
            Some("output"),
        ),
    }
}

/// A series' labels: model, provider, cache class.
type Labels = (Option<String>, Option<&'static str>, String);

/// The series of `g` by their labels: those of formats with the same provider (or none) and
/// the same model and cache class are one series, their histograms added up.
fn by_labels(g: &GenAi) -> BTreeMap<Labels, Vec<Hist>> {
    let mut out: BTreeMap<Labels, Vec<Hist>> = BTreeMap::new();
    for ((model, format, cache), hists) in g.series() {
        let key = (
            model.clone(),
            provider_name(format),
            cache.map_or("unknown", |c| c.as_str()).to_owned(),
        );
        match out.get_mut(&key) {
            Some(mine) => {
                for (a, b) in mine.iter_mut().zip(hists) {
                    a.merge(b);
                }
            }
            None => {
                out.insert(key, hists.to_vec());
            }
        }
    }
    out
}

/// A bucket bound or a sum in the family's unit: ns as seconds (exactly, 9 decimals at most),
/// tokens as they are.
fn unit_text(v: i128, duration: bool) -> String {
    if !duration {
        return v.to_string();
    }
    let sign = if v < 0 { "-" } else { "" };
    let (s, ns) = (
        v.unsigned_abs() / 1_000_000_000,
        v.unsigned_abs() % 1_000_000_000,
    );
    if ns == 0 {
        return format!("{sign}{s}");
    }
    let frac = format!("{ns:09}");
    format!("{sign}{s}.{}", frac.trim_end_matches('0'))
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Writes the histogram families of `g` (their `# HELP` and `# TYPE` lines even without a
/// series).
///
/// # Errors
/// The writer's.
pub(crate) fn write_histograms(out: &mut impl Write, g: &GenAi) -> io::Result<()> {
    let series = by_labels(g);
    for (i, f) in FAMILIES.iter().enumerate() {
        let (name, help, token_type) = family_text(f);
        // The token family's output half follows its input half under the same header.
        if token_type != Some("output") {
            writeln!(out, "# HELP {name} {help}")?;
            writeln!(out, "# TYPE {name} histogram")?;
        }
        let duration = f.metric.is_duration();
        for ((model, provider, cache), hists) in &series {
            let h = &hists[i];
            if h.count == 0 {
                continue;
            }
            let mut labels = String::new();
            if let Some(t) = token_type {
                labels.push_str(&format!("gen_ai_token_type=\"{t}\","));
            }
            // An empty label value is no label: the model logged as "" says `(empty)`, as the
            // summary families do.
            match model.as_deref() {
                Some("") => labels.push_str("gen_ai_request_model=\"(empty)\","),
                Some(m) => labels.push_str(&format!("gen_ai_request_model=\"{}\",", escape(m))),
                None => {}
            }
            if let Some(p) = provider {
                labels.push_str(&format!("gen_ai_provider_name=\"{p}\","));
            }
            labels.push_str(&format!("cache=\"{cache}\""));
            for (bound, n) in f.bounds.iter().zip(h.cumulative()) {
                let le = unit_text(i128::from(*bound), duration);
                writeln!(out, "{name}_bucket{{{labels},le=\"{le}\"}} {n}")?;
            }
            writeln!(out, "{name}_bucket{{{labels},le=\"+Inf\"}} {}", h.count)?;
            writeln!(out, "{name}_sum{{{labels}}} {}", unit_text(h.sum, duration))?;
            writeln!(out, "{name}_count{{{labels}}} {}", h.count)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_exact() {
        assert_eq!(unit_text(1_000_000, true), "0.001");
        assert_eq!(unit_text(10_000_000_000, true), "10");
        assert_eq!(unit_text(81_920_000_000, true), "81.92");
        assert_eq!(unit_text(412_500_001, true), "0.412500001");
        assert_eq!(unit_text(-1, true), "-0.000000001");
        assert_eq!(unit_text(67_108_864, false), "67108864");
    }

    #[test]
    fn providers_name_builtin_formats() {
        let names: Vec<String> = crate::format::builtins()
            .into_iter()
            .map(|f| f.name)
            .collect();
        for f in [
            "openai-usage",
            "openai-responses-usage",
            "anthropic-usage",
            "deepseek-usage",
            "bedrock",
            "vllm",
            "vllm-otlp",
            "vllm-stats",
            "vllm-v0-metrics",
            "sglang",
            "sglang-log",
            "llamacpp",
            "llamacpp-log",
            "ollama",
            "tgi",
            "nim",
        ] {
            assert!(names.iter().any(|n| n == f), "{f} is not a built-in format");
        }
        assert_eq!(provider_name("litellm"), None);
        assert_eq!(provider_name("otlp"), None);
    }
}
