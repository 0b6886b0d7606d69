//! Unit tests of the [`Processor`]: envelopes (CRI, Docker, `--prefix`), one-request lines,
//! joins across lines, lines with several records, coverage counters and `--by` values.
//!
//! Every expected value is worked out by hand in a comment beside it (metrics are in ns).
//! `Kind::Invalid` is matched loosely (`Kind::Invalid(..)`), whatever it carries.

use super::*;
use crate::format::builtins;
use crate::metrics::{CacheClass, NullReason, Origin, Outcome};

/// ns in one ms.
const MS: f64 = 1e6;

/// A processor of every built-in format, enrich key `tokentime`, reading `by` (dotted paths,
/// or `$format` / `$model`).
fn processor_by(by: &[&str]) -> Processor {
    let by: Vec<Vec<String>> = by
        .iter()
        .map(|p| p.split('.').map(str::to_owned).collect())
        .collect();
    Processor::new(builtins(), &[], Some("tokentime"), &by, 0.5)
}

fn processor() -> Processor {
    processor_by(&[])
}

/// Processes `line`, counts it, and returns its kind.
fn feed(p: &mut Processor, cov: &mut Coverage, line: &[u8]) -> Kind {
    let k = p.process(line);
    p.count(&k, cov);
    k
}

/// The one request of `line` (panics unless the line is exactly one request).
fn one(p: &mut Processor, line: &str) -> Request {
    let k = p.process(line.as_bytes());
    assert!(matches!(k, Kind::Requests), "{k:?} for {line}");
    assert_eq!(p.requests().len(), 1, "{line}");
    p.requests()[0]
}

/// The name of the format request `r` was attributed to.
fn format_name(p: &Processor, r: &Request) -> String {
    p.format_spec(r.format).name.clone()
}

/// `a` and `b` agree to 1e-9 relative (for a TPOT that is not a whole number of ns).
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

// A LiteLLM StandardLoggingPayload, cut to the members tokentime reads (plus `metadata.team`
// for `--by`). startTime 1741946531.5 s, completionStartTime .75 s, endTime 1741946533.75 s.
const LITELLM: &str = r#"{"call_type":"acompletion","stream":true,"status":"success","startTime":1741946531.5,"completionStartTime":1741946531.75,"endTime":1741946533.75,"prompt_tokens":100,"completion_tokens":9,"model":"gpt-4o-mini","metadata":{"team":"t\u0041"}}"#;

// A vLLM response with per-request metrics: queue 2.5 ms, TTFT from scheduling 20 ms,
// generation 300 ms, 7 tokens out, 1792 of 1843 prompt tokens cached, created 1741946531 s.
const VLLM: &str = r#"{"id":"chatcmpl-1","object":"chat.completion","created":1741946531,"model":"meta-llama/Llama-3.1-8B-Instruct","usage":{"prompt_tokens":1843,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":1792}},"metrics":{"time_to_first_token_ms":20.0,"generation_time_ms":300.0,"queue_time_ms":2.5}}"#;

#[test]
fn litellm_line_by_hand() {
    let mut p = processor();
    let r = one(&mut p, LITELLM);
    assert_eq!(format_name(&p, &r), "litellm");
    let m = r.metrics;
    // TTFT = completionStartTime - startTime = 1741946531.75 - 1741946531.5 = 0.25 s.
    assert_eq!(m.ttft, Ok(250.0 * MS));
    assert_eq!(m.ttft_origin, Some(Origin::Gateway));
    // E2E = endTime - startTime = 1741946533.75 - 1741946531.5 = 2.25 s.
    assert_eq!(m.e2e, Ok(2250.0 * MS));
    // Decode = endTime - completionStartTime = 2.0 s; TPOT = 2000 ms / (9 - 1) = 250 ms.
    assert_eq!(m.decode, Ok(2000.0 * MS));
    assert_eq!(m.tpot, Ok(250.0 * MS));
    assert_eq!((m.input_tokens, m.output_tokens), (Some(100), Some(9)));
    // No cached count logged: no cache class.
    assert_eq!((m.cached_tokens, m.cache), (None, None));
    assert_eq!(m.outcome, Outcome::Ok);
    // The logged instants, epoch ns.
    assert_eq!(r.start_ns, Some(1_741_946_531_500_000_000));
    assert_eq!(r.end_ns, Some(1_741_946_533_750_000_000));
}

#[test]
fn litellm_failure_is_an_error_counted_in_coverage() {
    let mut p = processor();
    let mut cov = Coverage::default();
    let failed = LITELLM.replace(r#""status":"success""#, r#""status":"failure""#);
    let k = feed(&mut p, &mut cov, failed.as_bytes());
    assert!(matches!(k, Kind::Requests), "{k:?}");
    let m = p.requests()[0].metrics;
    assert_eq!(m.outcome, Outcome::Error);
    // A failed request's latency is no sample.
    assert_eq!(m.e2e, Err(NullReason::Error));
    assert_eq!((cov.requests, cov.errors), (1, 1));
}

#[test]
fn llamacpp_line_by_hand() {
    // Final chat response of llama-server: prompt_ms 40.5, 11 tokens predicted in 250 ms,
    // 60 of 80 prompt tokens from the cache.
    let line = r#"{"object":"chat.completion","created":1741946600,"model":"gpt-oss-20b","usage":{"completion_tokens":11,"prompt_tokens":80},"id":"chatcmpl-2","timings":{"cache_n":60,"prompt_n":20,"prompt_ms":40.5,"predicted_n":11,"predicted_ms":250.0}}"#;
    let mut p = processor();
    let r = one(&mut p, line);
    assert_eq!(format_name(&p, &r), "llamacpp");
    let m = r.metrics;
    // TTFT = prompt_ms from the slot start (scheduled): 40.5 ms; prefill is the same span.
    assert_eq!(m.ttft, Ok(40.5 * MS));
    assert_eq!(m.ttft_origin, Some(Origin::Scheduled));
    assert_eq!(m.prefill, Ok(40.5 * MS));
    // Decode 250 ms; TPOT = 250 / (11 - 1) = 25 ms.
    assert_eq!(m.decode, Ok(250.0 * MS));
    assert_eq!(m.tpot, Ok(25.0 * MS));
    // No arrival instant: no E2E, no queue.
    assert!(m.e2e.is_err() && m.queue.is_err(), "{m:?}");
    // cache_n 60 / prompt_tokens 80 = 0.75 >= 0.5: a hit.
    assert_eq!((m.input_tokens, m.cached_tokens), (Some(80), Some(60)));
    assert_eq!(m.cache, Some(CacheClass::Hit));
}

#[test]
fn vllm_line_by_hand() {
    let mut p = processor();
    let r = one(&mut p, VLLM);
    assert_eq!(format_name(&p, &r), "vllm");
    let m = r.metrics;
    // TTFT from arrival = queue 2.5 + time_to_first_token 20.0 = 22.5 ms.
    assert_eq!(m.ttft, Ok(22.5 * MS));
    assert_eq!(m.ttft_origin, Some(Origin::Arrival));
    assert_eq!(m.queue, Ok(2.5 * MS));
    assert_eq!(m.prefill, Ok(20.0 * MS));
    // TPOT = generation 300 / (7 - 1) = 50 ms.
    assert_eq!(m.decode, Ok(300.0 * MS));
    assert_eq!(m.tpot, Ok(50.0 * MS));
    // E2E = 2.5 + 20 + 300 = 322.5 ms.
    assert_eq!(m.e2e, Ok(322.5 * MS));
    // 1792 / 1843 = 0.972 >= 0.5: a hit.
    assert_eq!(m.cache, Some(CacheClass::Hit));
    // `created` is the arrival (whole seconds); the end is arrival + E2E:
    // 1741946531 s + 322.5 ms.
    assert_eq!(r.start_ns, Some(1_741_946_531_000_000_000));
    assert_eq!(r.end_ns, Some(1_741_946_531_322_500_000));
}

#[test]
fn nan_in_a_field_not_read_keeps_the_request() {
    // Python's json writes NaN: the line is not strict JSON, but the request is read.
    let line = VLLM.replace(r#""id":"chatcmpl-1""#, r#""id":"chatcmpl-1","score":NaN"#);
    let mut p = processor();
    let r = one(&mut p, &line);
    // Same TPOT as the line without it: 300 / 6 = 50 ms.
    assert_eq!(r.metrics.tpot, Ok(50.0 * MS));
}

#[test]
fn cri_full_line_is_unwrapped() {
    let mut p = processor();
    let bare = one(&mut p, VLLM);
    let line = format!("2025-03-14T10:02:11.482917Z stdout F {VLLM}");
    let wrapped = one(&mut p, &line);
    assert_eq!(wrapped, bare, "the CRI prefix changes nothing");
    // Not a CRI line: a date, but a stream that is neither stdout nor stderr.
    let other = format!("2025-03-14T10:02:11.482917Z stdin F {VLLM}");
    assert!(matches!(p.process(other.as_bytes()), Kind::NonJson));
}

#[test]
fn cri_partial_pieces_are_held_per_stream_until_the_final_piece() {
    let mut p = processor();
    let mut cov = Coverage::default();
    let bare = one(&mut p, VLLM);
    // The kubelet split the stdout line at byte 40: a `P` piece, then the `F` piece; a
    // whole stderr line comes in between and is read alone.
    let (head, tail) = VLLM.split_at(40);
    let lines = [
        format!("2025-03-14T10:02:11.000000001Z stdout P {head}"),
        format!("2025-03-14T10:02:11.000000002Z stderr F {LITELLM}"),
        format!("2025-03-14T10:02:11.000000003Z stdout F {tail}"),
    ];
    let kinds: Vec<Kind> = lines
        .iter()
        .map(|l| feed(&mut p, &mut cov, l.as_bytes()))
        .collect();
    assert!(matches!(kinds[0], Kind::Part), "{:?}", kinds[0]);
    assert!(matches!(kinds[1], Kind::Requests), "{:?}", kinds[1]);
    assert!(matches!(kinds[2], Kind::Requests), "{:?}", kinds[2]);
    // The joined stdout line is the vLLM request, metrics unchanged.
    assert_eq!(p.requests()[0], bare);
    p.finish(&mut cov);
    // 3 lines: 2 requests (litellm, vllm) and 1 piece held (a joined line); nothing left.
    assert_eq!((cov.lines, cov.requests, cov.joined_lines), (3, 2, 1));
    assert_eq!(cov.join_unfinished, 0);
}

#[test]
fn cri_piece_never_completed_is_unfinished_and_an_overlong_one_invalid() {
    let mut p = processor();
    let mut cov = Coverage::default();
    let (head, _) = VLLM.split_at(40);
    let piece = format!("2025-03-14T10:02:11.000000001Z stdout P {head}");
    assert!(matches!(
        feed(&mut p, &mut cov, piece.as_bytes()),
        Kind::Part
    ));
    p.finish(&mut cov);
    assert_eq!((cov.joined_lines, cov.join_unfinished), (1, 1));

    // Held up to --max-line-bytes: 40 bytes held, then 40 more make 80 > 50.
    let mut p = processor();
    p.set_max_line(50);
    assert!(matches!(p.process(piece.as_bytes()), Kind::Part));
    let k = p.process(piece.as_bytes());
    assert!(matches!(k, Kind::Invalid(..)), "{k:?}");
    // The held text was dropped: nothing is unfinished.
    let mut cov = Coverage::default();
    p.finish(&mut cov);
    assert_eq!(cov.join_unfinished, 0);
}

/// A Docker json-file record of `log`.
fn docker(log: &str, stream: &str) -> String {
    format!(
        r#"{{"log":{},"stream":"{stream}","time":"2025-03-14T10:02:11.482917Z"}}"#,
        serde_json::Value::from(log)
    )
}

#[test]
fn docker_record_is_unwrapped() {
    let mut p = processor();
    let bare = one(&mut p, VLLM);
    let r = one(&mut p, &docker(&format!("{VLLM}\n"), "stdout"));
    assert_eq!(r, bare);
    // A record of a text line is a line of text, as a CRI line's is; one of a malformed object
    // is invalid.
    let text = docker("server started on :8000\n", "stderr");
    assert!(matches!(p.process(text.as_bytes()), Kind::NonJson));
    let broken = docker("{\"model\": \n", "stdout");
    assert!(matches!(p.process(broken.as_bytes()), Kind::Invalid(_)));
    let cri = "2025-03-14T10:02:11.482917Z stderr F server started on :8000";
    assert!(matches!(p.process(cri.as_bytes()), Kind::NonJson));
}

#[test]
fn docker_split_record_is_joined() {
    let mut p = processor();
    let mut cov = Coverage::default();
    let bare = one(&mut p, LITELLM);
    // Docker splits a long line into records whose `log` does not end in a newline.
    let (head, tail) = LITELLM.split_at(60);
    let first = docker(head, "stdout");
    let last = docker(&format!("{tail}\n"), "stdout");
    assert!(matches!(
        feed(&mut p, &mut cov, first.as_bytes()),
        Kind::Part
    ));
    assert!(matches!(
        feed(&mut p, &mut cov, last.as_bytes()),
        Kind::Requests
    ));
    assert_eq!(p.requests()[0], bare);
    p.finish(&mut cov);
    assert_eq!((cov.lines, cov.requests, cov.joined_lines), (2, 1, 1));
    assert_eq!(cov.join_unfinished, 0);
}

#[test]
fn prefix_regex_skips_text_before_the_json() {
    let line = format!("Mar 14 10:02:11 gw1 litellm[812]: {LITELLM}");
    let mut p = processor();
    // Without --prefix, text before the JSON makes a text line.
    assert!(matches!(p.process(line.as_bytes()), Kind::NonJson));
    let re = regex::bytes::Regex::new(r"\w+ \d+ [\d:]+ \S+ \S+: ").unwrap();
    p.set_prefix(Some(re));
    let r = one(&mut p, &line);
    // The same metrics as the bare line: TTFT 0.25 s (see `litellm_line_by_hand`).
    assert_eq!(r.metrics.ttft, Ok(250.0 * MS));
    // A match that does not start the line is no prefix.
    let late = format!("> {line}");
    assert!(matches!(p.process(late.as_bytes()), Kind::NonJson));
    // A CRI line the regex does not match is still unwrapped.
    let cri = format!("2025-03-14T10:02:11.482917Z stdout F {LITELLM}");
    assert_eq!(one(&mut p, &cri).metrics.ttft, Ok(250.0 * MS));
}

// testdata/samples/ollama_stream.jsonl: five chunks, then the final object.
const OLLAMA_STREAM: [&str; 6] = [
    r#"{"model":"llama3.2:3b","created_at":"2025-03-14T10:05:01.145300871Z","message":{"role":"assistant","content":"The"},"done":false}"#,
    r#"{"model":"llama3.2:3b","created_at":"2025-03-14T10:05:01.159612004Z","message":{"role":"assistant","content":" sky"},"done":false}"#,
    r#"{"model":"llama3.2:3b","created_at":"2025-03-14T10:05:01.173890518Z","message":{"role":"assistant","content":" is"},"done":false}"#,
    r#"{"model":"llama3.2:3b","created_at":"2025-03-14T10:05:01.188001293Z","message":{"role":"assistant","content":" blue"},"done":false}"#,
    r#"{"model":"llama3.2:3b","created_at":"2025-03-14T10:05:01.202114760Z","message":{"role":"assistant","content":"."},"done":false}"#,
    r#"{"model":"llama3.2:3b","created_at":"2025-03-14T10:05:01.220507182Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":131338125,"load_duration":10998333,"prompt_eval_count":26,"prompt_eval_duration":42143000,"eval_count":5,"eval_duration":56813000}"#,
];

#[test]
fn ollama_stream_is_joined_into_its_final_line() {
    let mut p = processor();
    let mut cov = Coverage::default();
    for chunk in &OLLAMA_STREAM[..5] {
        let k = feed(&mut p, &mut cov, chunk.as_bytes());
        assert!(matches!(k, Kind::Part), "{k:?}");
        assert!(p.requests().is_empty());
    }
    let k = feed(&mut p, &mut cov, OLLAMA_STREAM[5].as_bytes());
    assert!(matches!(k, Kind::Requests), "{k:?}");
    let r = p.requests()[0];
    assert_eq!(format_name(&p, &r), "ollama");
    let m = r.metrics;
    // Start = final created_at - total_duration = 01.220507182 - 0.131338125 = 01.089169057.
    // TTFT = first chunk 01.145300871 - 01.089169057 = 0.056131814 s.
    assert_eq!(m.ttft, Ok(56_131_814.0));
    // Decode = the logged eval_duration, 0.056813 s: it wins over the instants' final
    // 01.220507182 - first chunk 01.145300871 = 0.075206311 s (counted as a mismatch).
    assert_eq!(m.decode, Ok(56_813_000.0));
    assert!(m.duration_mismatch);
    // TPOT = 56813000 / (5 - 1) = 14203250 ns.
    assert_eq!(m.tpot, Ok(14_203_250.0));
    // E2E = total_duration.
    assert_eq!(m.e2e, Ok(131_338_125.0));
    assert_eq!((m.input_tokens, m.output_tokens), (Some(26), Some(5)));
    p.finish(&mut cov);
    // 6 lines: 5 joined, 1 request, nothing left in flight.
    assert_eq!((cov.lines, cov.joined_lines, cov.requests), (6, 5, 1));
    assert_eq!(cov.join_unfinished + cov.join_orphaned, 0);
}

#[test]
fn join_table_full_evicts_the_oldest() {
    let mut p = processor();
    p.set_join_limits(1, 600_000_000_000);
    let mut cov = Coverage::default();
    // Chunks of two models' streams: the table holds one, so the second evicts the first.
    let other = OLLAMA_STREAM[1].replace("llama3.2:3b", "qwen2.5:7b");
    assert!(matches!(
        feed(&mut p, &mut cov, OLLAMA_STREAM[0].as_bytes()),
        Kind::Part
    ));
    assert!(matches!(
        feed(&mut p, &mut cov, other.as_bytes()),
        Kind::Part
    ));
    p.finish(&mut cov);
    // One evicted (llama), one left at the end (qwen).
    assert_eq!((cov.join_evicted, cov.join_unfinished), (1, 1));
}

/// The docs (docs/inputs.md, "Requests over several lines"): the in-flight table is bounded by
/// `--join-timeout` of log time. An Ollama stream that never got its final object (a client
/// that went away) leaves its chunks in the table under the model's name; an hour later a new
/// stream of the same model must not be joined with them.
#[test]
/// An abandoned stream an hour before a new one of the same model (the key) is dropped
/// and counted timed out, not joined: its chunk would become the new stream's first token.
fn join_idle_past_the_timeout_is_dropped_not_joined() {
    let mut p = processor();
    // --join-timeout 10m (the default).
    p.set_join_limits(10_000, 600_000_000_000);
    let mut cov = Coverage::default();
    // An abandoned stream at 09:05.
    let stale = OLLAMA_STREAM[0].replace("T10:05:01", "T09:05:01");
    assert!(matches!(
        feed(&mut p, &mut cov, stale.as_bytes()),
        Kind::Part
    ));
    // The stream of the sample an hour later.
    for line in OLLAMA_STREAM {
        feed(&mut p, &mut cov, line.as_bytes());
    }
    let m = p.requests()[0].metrics;
    p.finish(&mut cov);
    // As alone: TTFT 56.131814 ms (see `ollama_stream_is_joined_into_its_final_line`).
    assert_eq!(m.ttft, Ok(56_131_814.0), "{m:?}");
    // TPOT 56813000 / 4 = 14203250 ns, the logged decode's (joined with the stale chunk the
    // first chunk would be 900 s earlier).
    assert_eq!(m.tpot, Ok(14_203_250.0));
    assert!(!m.negative_interval);
    assert_eq!(cov.join_timed_out, 1, "{cov:?}");
}

// testdata/samples/llamacpp_legacy_jsonlog.jsonl, lines 1 to 4: the launch line, then the three
// print_timings lines of slot 0, task 6.
const LLAMACPP_LEGACY: [&str; 4] = [
    r#"{"tid":"140147531671424","timestamp":1714489663,"level":"INFO","function":"launch_slot_with_task","line":1854,"msg":"slot is processing task","id_slot":0,"id_task":6}"#,
    r#"{"tid":"140147531671424","timestamp":1714489668,"level":"INFO","function":"print_timings","line":313,"msg":"prompt eval time     =    1442.30 ms /    18 tokens (   80.13 ms per token,    12.48 tokens per second)","id_slot":0,"id_task":6,"t_prompt_processing":1442.297,"n_prompt_tokens_processed":18,"t_token":80.12761111111111,"n_tokens_second":12.480092519085876}"#,
    r#"{"tid":"140147531671424","timestamp":1714489668,"level":"INFO","function":"print_timings","line":327,"msg":"generation eval time =    3389.28 ms /    22 runs   (  154.06 ms per token,     6.49 tokens per second)","id_slot":0,"id_task":6,"t_token_generation":3389.284,"n_decoded":22,"t_token":154.05836363636365,"n_tokens_second":6.491046486514556}"#,
    r#"{"tid":"140147531671424","timestamp":1714489668,"level":"INFO","function":"print_timings","line":337,"msg":"          total time =    4831.58 ms","id_slot":0,"id_task":6,"t_prompt_processing":1442.297,"t_token_generation":3389.284,"t_total":4831.581}"#,
];

#[test]
fn llamacpp_legacy_lines_join_by_slot_and_task_and_orphans_are_counted() {
    let mut p = processor();
    let mut cov = Coverage::default();
    let kinds: Vec<Kind> = LLAMACPP_LEGACY
        .iter()
        .map(|l| feed(&mut p, &mut cov, l.as_bytes()))
        .collect();
    assert!(matches!(kinds[0], Kind::NoTiming), "{:?}", kinds[0]);
    assert!(matches!(kinds[1], Kind::Part), "{:?}", kinds[1]);
    assert!(matches!(kinds[2], Kind::Part), "{:?}", kinds[2]);
    assert!(matches!(kinds[3], Kind::Requests), "{:?}", kinds[3]);
    let m = p.requests()[0].metrics;
    // TTFT = t_prompt_processing 1442.297 ms (from the slot start).
    assert_eq!(m.ttft, Ok(1_442_297_000.0));
    assert_eq!(m.ttft_origin, Some(Origin::Scheduled));
    // n_decoded 22 from the generation line; TPOT = 3389.284 ms / 21 = 161.394476.. ms.
    assert_eq!(m.output_tokens, Some(22));
    assert_eq!(m.decode, Ok(3_389_284_000.0));
    assert!(close(m.tpot.unwrap(), 3_389_284_000.0 / 21.0), "{m:?}");
    // The total line of a task whose earlier lines were never seen (task 7): an orphan.
    let orphan = LLAMACPP_LEGACY[3].replace(r#""id_task":6"#, r#""id_task":7"#);
    assert!(matches!(
        feed(&mut p, &mut cov, orphan.as_bytes()),
        Kind::Requests
    ));
    p.finish(&mut cov);
    // 5 lines: 1 no timing, 2 joined, 2 requests; 1 orphan, nothing unfinished.
    assert_eq!(
        (cov.lines, cov.no_timing, cov.joined_lines, cov.requests),
        (5, 1, 2, 2)
    );
    assert_eq!((cov.join_orphaned, cov.join_unfinished), (1, 0));
}

/// An OTLP export line with three spans: a non-streamed GenAI span, an HTTP span (no GenAI
/// attributes: no request) and a streamed GenAI span of one token (from
/// testdata/samples/otel_genai_otlp.jsonl line 2, cut down, plus the HTTP span).
const OTLP: &str = concat!(
    r#"{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"support-agent"}}]},"scopeSpans":[{"scope":{"name":"x"},"spans":["#,
    r#"{"spanId":"s1","name":"chat claude","startTimeUnixNano":"1741946540100731000","endTimeUnixNano":"1741946544226913000","attributes":[{"key":"gen_ai.request.model","value":{"stringValue":"claude"}},{"key":"gen_ai.request.stream","value":{"boolValue":false}},{"key":"gen_ai.usage.input_tokens","value":{"intValue":"3078"}},{"key":"gen_ai.usage.cache_read.input_tokens","value":{"intValue":"2950"}},{"key":"gen_ai.usage.output_tokens","value":{"intValue":"412"}}],"status":{}},"#,
    r#"{"spanId":"s2","name":"HTTP POST","startTimeUnixNano":"1741946540000000000","endTimeUnixNano":"1741946545000000000","attributes":[{"key":"http.method","value":{"stringValue":"POST"}}],"status":{}},"#,
    r#"{"spanId":"s3","name":"chat haiku","startTimeUnixNano":"1741946544413238000","endTimeUnixNano":"1741946544828009000","attributes":[{"key":"gen_ai.request.model","value":{"stringValue":"haiku"}},{"key":"gen_ai.request.stream","value":{"boolValue":true}},{"key":"gen_ai.response.time_to_first_chunk","value":{"doubleValue":0.40133}},{"key":"gen_ai.usage.input_tokens","value":{"intValue":"96"}},{"key":"gen_ai.usage.output_tokens","value":{"intValue":"1"}}],"status":{}}"#,
    r#"]}]}]}"#
);

#[test]
fn otlp_line_with_several_spans_is_one_request_per_genai_span() {
    let mut p = processor_by(&["name", "$model"]);
    let mut cov = Coverage::default();
    let k = feed(&mut p, &mut cov, OTLP.as_bytes());
    assert!(matches!(k, Kind::Requests), "{k:?}");
    let rs = p.requests().to_vec();
    assert_eq!(rs.len(), 2, "the HTTP span is no request");
    assert!(rs.iter().all(|r| format_name(&p, r) == "otlp"));
    let (a, b) = (rs[0].metrics, rs[1].metrics);
    // Span 1: E2E = 44.226913 - 40.100731 = 4.126182 s; no TTFT logged; cache read
    // 2950 / 3078 = 0.958 >= 0.5: a hit.
    assert_eq!(a.e2e, Ok(4_126_182_000.0));
    assert!(a.ttft.is_err(), "{a:?}");
    assert_eq!(a.cache, Some(CacheClass::Hit));
    assert_eq!(rs[0].start_ns, Some(1_741_946_540_100_731_000));
    assert_eq!(rs[0].end_ns, Some(1_741_946_544_226_913_000));
    // Span 3: TTFT 0.40133 s; E2E = 44.828009 - 44.413238 = 0.414771 s; one token: no TPOT.
    assert_eq!(b.ttft, Ok(401_330_000.0));
    assert_eq!(b.e2e, Ok(414_771_000.0));
    assert_eq!(b.tpot, Err(NullReason::OneToken));
    // Each request has its own span's --by values.
    let by = |i: usize| p.by_values(i).to_owned_values();
    assert_eq!(
        by(0),
        [Some("chat claude".to_owned()), Some("claude".to_owned())]
    );
    assert_eq!(
        by(1),
        [Some("chat haiku".to_owned()), Some("haiku".to_owned())]
    );
    // One line, two requests, both otlp.
    assert_eq!((cov.lines, cov.requests), (1, 2));
    assert_eq!(cov.formats.get("otlp"), Some(&2));
}

#[test]
fn each_kind_of_line_is_counted_once() {
    let mut p = processor();
    let mut cov = Coverage::default();
    let enriched = VLLM.replace(r#"{"id""#, r#"{"tokentime":{"ttft_ms":22.5},"id""#);
    let lines: [(&[u8], &str); 9] = [
        (b"INFO: Uvicorn running on http://0.0.0.0:8000", "non_json"),
        (b"[1, 2, 3]", "non_json"),
        (br#"{"model": "x", "usage": "#, "invalid"),
        (b"{\"msg\": \"caf\xe9\"}", "invalid"),
        (
            br#"{"level":"info","msg":"Application startup complete."}"#,
            "no_timing",
        ),
        (enriched.as_bytes(), "already_enriched"),
        (VLLM.as_bytes(), "requests"),
        (LITELLM.as_bytes(), "requests"),
        (OTLP.as_bytes(), "requests"),
    ];
    for (line, want) in lines {
        let k = feed(&mut p, &mut cov, line);
        let got = match k {
            Kind::NonJson => "non_json",
            Kind::Invalid(..) => "invalid",
            Kind::NoTiming => "no_timing",
            Kind::AlreadyEnriched => "already_enriched",
            Kind::Requests => "requests",
            Kind::Part | Kind::Deferred => "part",
        };
        assert_eq!(got, want, "{}", String::from_utf8_lossy(line));
    }
    p.finish(&mut cov);
    // 9 lines = 2 non-JSON + 2 invalid + 1 no timing + 1 enriched + 3 request lines; the
    // request lines hold 1 + 1 + 2 (OTLP) = 4 requests.
    assert_eq!(cov.lines, 9);
    assert_eq!(
        (
            cov.non_json,
            cov.invalid,
            cov.no_timing,
            cov.already_enriched
        ),
        (2, 2, 1, 1)
    );
    assert_eq!(cov.requests, 4);
    let formats: Vec<(&str, u64)> = cov.formats.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(formats, [("litellm", 1), ("otlp", 2), ("vllm", 1)]);
    assert_eq!(cov.errors + cov.cancelled + cov.joined_lines, 0);
}

#[test]
fn coverage_merge_adds_every_counter() {
    let mut p = processor();
    let (mut a, mut b) = (Coverage::default(), Coverage::default());
    feed(&mut p, &mut a, VLLM.as_bytes());
    feed(&mut p, &mut a, b"text");
    feed(&mut p, &mut b, OTLP.as_bytes());
    feed(&mut p, &mut b, b"{bad");
    a.merge(&b);
    // 2 + 2 lines; 1 + 2 requests; 1 non-JSON; 1 invalid; formats from both.
    assert_eq!((a.lines, a.requests, a.non_json, a.invalid), (4, 3, 1, 1));
    assert_eq!(a.formats.get("vllm"), Some(&1));
    assert_eq!(a.formats.get("otlp"), Some(&2));
}

#[test]
fn by_values_of_paths_and_names() {
    let mut p = processor_by(&[
        "metadata.team",
        "$format",
        "$model",
        "completion_tokens",
        "nowhere",
    ]);
    one(&mut p, LITELLM);
    let v = p.by_values(0);
    // A string with an escape is decoded ("t\u0041" is "tA"); a number is its JSON text; an
    // absent path is None; $format and $model are the format's name and its model field.
    assert_eq!(v.get(0), Some("tA"));
    assert_eq!(v.get(1), Some("litellm"));
    assert_eq!(v.get(2), Some("gpt-4o-mini"));
    assert_eq!(v.get(3), Some("9"));
    assert_eq!(v.get(4), None);
    // The next line's values replace them.
    one(&mut p, VLLM);
    let v = p.by_values(0);
    assert_eq!(v.get(0), None);
    assert_eq!(v.get(1), Some("vllm"));
    assert_eq!(v.get(2), Some("meta-llama/Llama-3.1-8B-Instruct"));
}

#[test]
fn ids_and_models_when_asked_for() {
    let mut p = processor();
    one(&mut p, VLLM);
    assert_eq!(p.id_model(0), (None, None), "not read unless asked for");
    p.want_ids(true);
    one(&mut p, VLLM);
    assert_eq!(
        p.id_model(0),
        (Some("chatcmpl-1"), Some("meta-llama/Llama-3.1-8B-Instruct"))
    );
}

/// The slowest requests are ranked by E2E latency; a request with a TTFT only ranks below
/// every one with an E2E, however long its TTFT (the two are not one measure).
#[test]
fn slowest_rank_e2e_above_ttft_only() {
    use crate::classify::notes::{slow_key, slow_ns};
    let mut p = processor();
    let with_e2e = one(&mut p, LITELLM);
    // startTime .5 to endTime 3.75: 2.25 s.
    assert_eq!(slow_key(&with_e2e).map(slow_ns), Some(2_250_000_000));
    let mut ttft_only = with_e2e;
    ttft_only.metrics.e2e = Err(crate::metrics::NullReason::NotLogged);
    ttft_only.metrics.ttft = Ok(10e9);
    assert_eq!(slow_key(&ttft_only), Some(10_000_000_000));
    assert!(slow_key(&with_e2e) > slow_key(&ttft_only));
}
