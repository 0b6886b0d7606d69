//! The `bedrock` format.

use super::{combined, eq, paths, present, rule};
use crate::format::units::Unit;
use crate::format::{Combine, Field, FormatSpec};
use crate::metrics::Origin;

/// AWS Bedrock model invocation logs (FORMATS.md 8f).
pub(crate) fn spec() -> FormatSpec {
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
        reason_paths: vec![crate::format::p("errorCode")],
        ..FormatSpec::default()
    }
}
