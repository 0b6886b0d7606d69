//! The `genai-perf` format.

use super::{path, present};
use crate::format::units::Unit;
use crate::format::{Cond, Field, FormatSpec, RecordSource, p, rule};
use crate::metrics::Origin;

/// GenAI-Perf's `profile_export.json` (Perf Analyzer's export, read by GenAI-Perf): one
/// document, `experiments[].requests[]`, each request with its start `timestamp` and the
/// `response_timestamps` of its responses (epoch ns). As GenAI-Perf does, only the responses
/// that carry output count (the records walk lists their instants as `$content_timestamps`):
/// a chat stream's role-only first chunk and the closing `[DONE]` neither start nor end it.
pub(crate) fn spec() -> FormatSpec {
    FormatSpec {
        name: "genai-perf".into(),
        about: "GenAI-Perf / Perf Analyzer profile_export.json: experiments[].requests[] with request and response timestamps".into(),
        markers: vec![present("experiments"), present("service_kind")],
        records: Some(RecordSource::Each(vec![p("experiments.*.requests.*")])),
        record_markers: vec![present("timestamp"), present("response_timestamps")],
        // One response is a whole answer: no first token of a stream to time.
        streamed_when: Some(Cond::Present(path("response_timestamps[1]"))),
        arrival_origin: Origin::Gateway,
        ttft_doc: "gateway (benchmark client): the first response with output text - timestamp, streamed requests (two responses or more) only".into(),
        cache_doc: "none".into(),
        fields: vec![
            rule(Field::Arrival, Unit::EpochNs, &["timestamp"]),
            super::rule(Field::FirstToken, Unit::EpochNs, &["$content_timestamps[0]"]),
            super::rule(Field::End, Unit::EpochNs, &["$content_timestamps[-1]"]),
        ],
        ..FormatSpec::default()
    }
}
