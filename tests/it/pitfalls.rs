//! One test per parser pitfall of FORMATS.md section 0.1, each running tokentime end to end on
//! small inputs. Expected values are computed by hand in the comments. Parts that need
//! multi-record lines (OTLP spans, vLLM bench arrays) or multi-line joins are written in full
//! but ignored until those features land.

use crate::common::*;
use serde_json::{Value, json};

/// The metrics of each output line: the spliced object, an array of them for a line with
/// several requests, or `None` for a line passed through.
fn metrics(args: &[&str], input: &str) -> Vec<Option<Value>> {
    let out = run_ok(args, input.as_bytes());
    lines_with_endings(&out)
        .into_iter()
        .map(|l| {
            if let Some((_, o)) = unsplice(l, "tokentime") {
                return Some(serde_json::from_str(&o).unwrap());
            }
            // A line with several requests carries an array; the line is JSON again.
            let v: Value = serde_json::from_slice(l).ok()?;
            v.get("tokentime").cloned()
        })
        .collect()
}

/// The metrics of one line that must be a request.
fn one(args: &[&str], input: &str) -> Value {
    let mut m = metrics(args, input);
    assert_eq!(m.len(), 1, "one line in, one line out");
    m.remove(0).expect("a request")
}

/// Two members of each request's metrics, in order (every line must be a request).
fn pairs(m: &[Option<Value>], a: &str, b: &str) -> Vec<(Value, Value)> {
    m.iter()
        .map(|o| {
            let o = o.as_ref().expect("a request");
            (o[a].clone(), o[b].clone())
        })
        .collect()
}

fn sample_line(name: &str, n: usize) -> String {
    let text = std::fs::read_to_string(testdata().join("samples").join(name)).unwrap();
    text.lines().nth(n - 1).unwrap().to_owned()
}

/// A formats file in a temporary folder.
fn formats_file(dir: &tempfile::TempDir, toml: &str) -> String {
    let p = dir.path().join("f.toml");
    std::fs::write(&p, toml).unwrap();
    p.to_str().unwrap().to_owned()
}

#[test]
fn pitfall_01_five_time_encodings() {
    // The same instants written five ways; E2E between two encodings is exact only if each is
    // read right. 1741946531 s is 2025-03-14T10:02:11Z.
    let dir = tempfile::tempdir().unwrap();
    let f = formats_file(
        &dir,
        r#"
[[format]]
name = "enc"
markers = [{ present = "kind" }]
fields = [
  { field = "arrival", path = "a.s", unit = "epoch_s" },
  { field = "arrival", path = "a.ms", unit = "epoch_ms" },
  { field = "arrival", path = "a.ns", unit = "epoch_ns" },
  { field = "arrival", path = "a.rfc", unit = "rfc3339" },
  { field = "end", path = "e.s", unit = "epoch_s" },
  { field = "end", path = "e.rfc", unit = "rfc3339" },
  { field = "end", path = "e.any", unit = "epoch" },
]
"#,
    );
    let input = [
        // epoch s float (LiteLLM, SGLang) -> RFC 3339 with µs (TGI): 12.000000 - 11.5 = 500 ms.
        r#"{"kind":1,"a":{"s":1741946531.5},"e":{"rfc":"2025-03-14T10:02:12.000000Z"}}"#,
        // epoch ms int (Kong started_at) -> RFC 3339 with ms (Langfuse): 14.905 - 11.412.
        r#"{"kind":2,"a":{"ms":1741946531412},"e":{"rfc":"2025-03-14T10:02:14.905Z"}}"#,
        // epoch ns as a decimal string (OTLP) -> RFC 3339 with ns (Ollama, Go):
        // 12.247388880 - 11.018273536 = 1229.115344 ms.
        r#"{"kind":3,"a":{"ns":"1741946531018273536"},"e":{"rfc":"2025-03-14T10:02:12.24738888Z"}}"#,
        // RFC 3339 whole seconds (Bedrock) -> int epoch seconds (OpenAI created): 20 - 11 = 9 s.
        r#"{"kind":4,"a":{"rfc":"2025-03-14T10:02:11Z"},"e":{"s":1741946540}}"#,
        // An offset other than Z, to epoch ms read by magnitude: 11.5 (+01:00) -> 12.25.
        r#"{"kind":5,"a":{"rfc":"2025-03-14T11:02:11.5+01:00"},"e":{"any":1741946532250}}"#,
    ]
    .join("\n");
    let m = metrics(&["--formats", &f], &input);
    let e2e: Vec<Value> = m
        .iter()
        .map(|o| o.as_ref().unwrap()["e2e_ms"].clone())
        .collect();
    assert_eq!(
        e2e,
        [
            json!(500.0),
            json!(3493.0),
            json!(1229.115),
            json!(9000.0),
            json!(750.0)
        ]
    );
}

#[test]
fn pitfall_02_duration_encodings() {
    // Rust Duration Debug strings (TGI): µ (U+00B5), μ (U+03BC) and "us" alike; "0ns"; seconds
    // never turn into minutes ("125.3s"); trimmed zeros ("38.91722ms").
    let tgi = |total: &str, queue: &str| {
        format!(
            r#"{{"timestamp":"2025-03-14T10:02:12.907355Z","level":"INFO","message":"Success","target":"text_generation_router::server","span":{{"total_time":"{total}","validation_time":"1ms","queue_time":"{queue}","inference_time":"38.91722ms","time_per_token":"38.91722ms","name":"generate"}}}}"#
        )
    };
    let input = [
        tgi("955.594µs", "0ns"),
        tgi("955.594μs", "12ns"),
        tgi("955.594us", "1.5s"),
        tgi("125.3s", "38.91722ms"),
    ]
    .join("\n");
    let m = metrics(&["--format", "tgi"], &input);
    let got = pairs(&m, "e2e_ms", "queue_ms");
    assert_eq!(
        got,
        [
            (json!(0.956), json!(0.0)),
            (json!(0.956), json!(0.0)),
            (json!(0.956), json!(1500.0)),
            (json!(125300.0), json!(38.917)),
        ]
    );
    // ms floats (NIM), seconds floats (SGLang), ns ints (Ollama-style, via --map).
    let nim = one(&[], &sample_line("nim.jsonl", 3));
    assert_eq!(nim["decode_ms"], 0.42, "15.02 ms - 14.6 ms");
    let sgl = one(&[], &sample_line("sglang.jsonl", 5));
    assert_eq!(sgl["e2e_ms"], 912.048, "0.9120481014251709 s");
    let ns = one(
        &["--map", "e2e=total_duration:ns", "--map", "ttft=ttft:ns"],
        r#"{"total_duration":4883901234,"ttft":281112000}"#,
    );
    assert_eq!(ns["e2e_ms"], 4883.901);
    assert_eq!(ns["decode_ms"], 4602.789, "4883.901234 - 281.112");
}

#[test]
fn pitfall_03_int64_as_string() {
    // OTLP writes 64-bit integers as strings; numbers must work too.
    let args = [
        "--map",
        "arrival=s.startTimeUnixNano:epoch_ns",
        "--map",
        "end=s.endTimeUnixNano:epoch_ns",
        "--map",
        "output_tokens=s.n",
    ];
    let a = one(
        &args,
        r#"{"s":{"startTimeUnixNano":"1741946531018273536","endTimeUnixNano":"1741946532247388880","n":"128"}}"#,
    );
    let b = one(
        &args,
        r#"{"s":{"startTimeUnixNano":1741946531018273536,"endTimeUnixNano":1741946532247388880,"n":128}}"#,
    );
    assert_eq!(a["output_tokens"], 128);
    assert_eq!(
        a["e2e_ms"], 1229.115,
        "1741946532247388880 - 1741946531018273536 ns"
    );
    assert_eq!(a, b);
}

#[test]
fn pitfall_03_otlp_int_values_as_strings() {
    // vllm_otlp_traces.jsonl line 1: two llm_request spans, intValue strings.
    let m = metrics(&[], &sample_line("vllm_otlp_traces.jsonl", 1));
    let spans = m[0].as_ref().unwrap().as_array().unwrap().clone();
    assert_eq!(spans.len(), 2);
    assert_eq!(spans[0]["input_tokens"], 1843);
    assert_eq!(spans[0]["output_tokens"], 128);
    assert_eq!(spans[1]["input_tokens"], 3912);
    assert_eq!(spans[1]["output_tokens"], 512);
    // gen_ai.latency.time_to_first_token 0.03416924476623535 s, from arrival.
    assert_eq!(spans[0]["ttft_ms"], 34.169);
    assert_eq!(spans[0]["ttft_origin"], "arrival");
    assert_eq!(spans[1]["ttft_ms"], 499.126);
}

#[test]
fn pitfall_04_time_per_token_is_not_tpot() {
    // TGI: time_per_token = inference / n includes the prefill: TPOT is null, never it;
    // tokens = floor(1512339781 / 23630309) = 64.
    let t = one(&[], &sample_line("tgi.jsonl", 3));
    assert_eq!(t["tpot_ms"], Value::Null);
    assert_eq!(t["output_tokens"], 64);
    // Kong: time_per_token 48.793 = 1415 / 29 includes the TTFT; TPOT = (1415 - 1286) / 28.
    let k = one(&[], &sample_line("kong.jsonl", 1));
    assert_eq!(k["tpot_ms"], 4.607);
    // llama.cpp: predicted_per_token_ms 9.5496 = 238.74 / 25; TPOT = 238.74 / 24 = 9.9475.
    let l = one(&[], &sample_line("llamacpp.jsonl", 1));
    assert_eq!(l["tpot_ms"], 9.948);
}

#[test]
fn pitfall_05_ttft_origins_differ() {
    // One stream of several formats: each TTFT says where it is measured from.
    let input = [
        sample_line("vllm_response_metrics.jsonl", 1), // queue 0.4 + 21.7 from scheduling
        sample_line("llamacpp.jsonl", 1),              // prompt_ms: slot start
        sample_line("nim.jsonl", 2),                   // queue 187.2 + 131.4 from processing
        sample_line("kong.jsonl", 1),                  // gateway
        sample_line("helicone.jsonl", 1),              // gateway
        sample_line("langfuse.jsonl", 1),              // client SDK
        sample_line("bedrock.jsonl", 2),               // Bedrock received the invocation
        sample_line("tgi.jsonl", 3),                   // not logged
    ]
    .join("\n");
    let m = metrics(&[], &input);
    let got = pairs(&m, "ttft_ms", "ttft_origin");
    assert_eq!(
        got,
        [
            (json!(22.1), json!("arrival")),
            (json!(43.237), json!("scheduled")),
            (json!(318.6), json!("arrival")),
            (json!(1286.0), json!("gateway")),
            (json!(465.0), json!("gateway")),
            (json!(465.0), json!("gateway")),
            (json!(2635.0), json!("arrival")),
            (Value::Null, Value::Null),
        ]
    );
    // NIM without a queue time (non-vLLM backends) measures from processing start.
    let nim = sample_line("nim.jsonl", 2).replace(r#""time_in_queue_in_ms":187.2,"#, "");
    let n = one(&[], &nim);
    assert_eq!(n["ttft_ms"], 131.4);
    assert_eq!(n["ttft_origin"], "scheduled");
}

#[test]
fn pitfall_06_missing_fields_are_normal() {
    // Kong omits llm_latency and time_per_token on a semantic-cache hit: a response-cache
    // answer, not a broken line.
    let k = one(&[], &sample_line("kong.jsonl", 3));
    assert_eq!(k["cache"], "response");
    assert_eq!(k["nulls"]["e2e_ms"], "response_cache");
    // Kong's empty details as lua-cjson's [] (or {}): the cached count is unknown, not 0.
    let kong_empty = sample_line("kong.jsonl", 1).replace(
        r#""prompt_tokens_details":{}"#,
        r#""prompt_tokens_details":[]"#,
    );
    assert_eq!(one(&[], &kong_empty)["cache"], Value::Null);
    // LiteLLM stream is true or null, never false: null means not streamed.
    let l = one(&[], &sample_line("litellm.jsonl", 2));
    assert_eq!(l["nulls"]["ttft_ms"], "not_streamed");
    // Helicone's failed row: null TTFT and token counts.
    let h = one(&[], &sample_line("helicone.jsonl", 4));
    assert_eq!(h["outcome"], "error");
    assert_eq!(h["input_tokens"], Value::Null);
    // Bedrock InvokeModel without metrics in its body: E2E not logged, tokens still read.
    let b = one(&[], &sample_line("bedrock.jsonl", 3));
    assert_eq!(b["nulls"]["e2e_ms"], "not_logged");
    assert_eq!(b["output_tokens"], 1);
    // vLLM's mean_itl_ms null for one token: TPOT null, one_token.
    let v = one(&[], &sample_line("vllm_response_metrics.jsonl", 3));
    assert_eq!(v["nulls"]["tpot_ms"], "one_token");
}

#[test]
fn pitfall_07_input_token_totals_differ_by_provider() {
    let input = [
        sample_line("provider_usage.jsonl", 1), // OpenAI: 2048 includes cached 1920
        sample_line("provider_usage.jsonl", 3), // Anthropic: 128 + read 2950 + creation 0
        sample_line("provider_usage.jsonl", 5), // DeepSeek: hit 1152 + miss 59 = 1211
        sample_line("llamacpp.jsonl", 2),       // no cache_n: cached = 1085 - prompt_n 1085 = 0
        sample_line("bedrock.jsonl", 2),        // 3 + read 0 + write 25037
        sample_line("helicone.jsonl", 2),       // Anthropic via Helicone: 3490 - 412
        sample_line("langfuse.jsonl", 2),       // usage.input 3078 = 128 + 2950
    ]
    .join("\n");
    let m = metrics(&[], &input);
    let got = pairs(&m, "input_tokens", "cache");
    assert_eq!(
        got,
        [
            (json!(2048), json!("hit")),
            (json!(3078), json!("hit")),
            (json!(1211), json!("hit")),
            (json!(1085), json!("miss")),
            (json!(25040), json!("miss")),
            (json!(3078), json!("miss")),
            (json!(3078), json!("hit")),
        ]
    );
}

#[test]
fn pitfall_08_cache_hit_means_two_things() {
    // Response caches (LiteLLM cache_hit, Kong "Hit", Helicone cache_reference_id) answered
    // without running: counted, kept out of latency. Prefix-cache hits ran: their latency
    // counts.
    let input = [
        sample_line("litellm.jsonl", 3),
        sample_line("kong.jsonl", 3),
        sample_line("helicone.jsonl", 3),
        sample_line("helicone.jsonl", 1), // prefix-cache hit, streamed: e2e 3493
        sample_line("kong.jsonl", 2),     // prefix-cache hit, oneshot: e2e 2874
    ]
    .join("\n");
    let out = run_ok(&["summary", "-o", "json"], input.as_bytes());
    let s: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(s["coverage"]["response_cache"], 3);
    let group = |cache: &str| {
        s["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["key"] == json!({ "cache": cache }))
            .unwrap()
            .clone()
    };
    let response = group("response");
    assert_eq!(response["requests"], 3);
    assert_eq!(response["metrics"]["e2e_ms"]["count"], 0);
    assert_eq!(response["metrics"]["e2e_ms"]["nulls"]["response_cache"], 3);
    let hit = group("hit");
    assert_eq!(hit["requests"], 2);
    assert_eq!(hit["metrics"]["e2e_ms"]["count"], 2);
    assert_eq!(hit["metrics"]["e2e_ms"]["min"], 2874.0);
    assert_eq!(hit["metrics"]["e2e_ms"]["max"], 3493.0);
}

#[test]
fn pitfall_09_stream_fragments_are_not_requests() {
    // One request per response, never one per fragment: an OpenAI content chunk
    // (usage null), Anthropic's message_start and message_delta are not requests; the final
    // usage chunk and the complete message are.
    let input = [
        r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741946600,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}],"usage":null}"#,
        r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741946600,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":56,"completion_tokens":9,"total_tokens":65,"prompt_tokens_details":{"cached_tokens":0}}}"#,
        r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-3-5-haiku-20241022","content":[],"usage":{"input_tokens":57,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":9}}"#,
    ]
    .join("\n");
    let m = metrics(&[], &input);
    assert!(m[0].is_none() && m[2].is_none() && m[3].is_none());
    let u = m[1].as_ref().unwrap();
    assert_eq!(u["format"], "openai-usage");
    assert_eq!(u["output_tokens"], 9);
}

#[test]
fn pitfall_09_bench_run_arrays_explode_into_requests() {
    // vllm_bench_serve.jsonl line 1: one run, four requests in parallel arrays.
    let m = metrics(&[], &sample_line("vllm_bench_serve.jsonl", 1));
    let r = m[0].as_ref().unwrap().as_array().unwrap().clone();
    assert_eq!(r.len(), 4);
    // Request 0: ttft 0.0841273330161348 s; tpot = (0.01213 + 0.011804 + 0.012211 +
    // 0.011932 + 0.012048) / (6 - 1) = 0.060125 / 5 s = 12.025 ms.
    assert_eq!(r[0]["ttft_ms"], 84.127);
    assert_eq!(r[0]["tpot_ms"], 12.025);
    assert_eq!(r[0]["output_tokens"], 6);
    // Request 1: one token, no ITL: TPOT null.
    assert_eq!(r[1]["ttft_ms"], 52.31);
    assert_eq!(r[1]["nulls"]["tpot_ms"], "one_token");
    // Request 3: errors[3] = "Internal Server Error"; its ttft 0.0 is no sample.
    assert_eq!(r[3]["outcome"], "error");
    assert_eq!(r[3]["ttft_ms"], Value::Null);
}

#[test]
fn pitfall_09_legacy_llamacpp_lines_join_into_one_request() {
    // llamacpp_legacy_jsonlog.jsonl: launch + three print_timings of task 6 complete on the
    // "total time" line (4): ttft = t_prompt_processing 1442.297 (from the slot start),
    // tpot = 3389.284 / (22 - 1) = 161.39448. t_total (4831.581) runs from the slot start, not
    // from the request's arrival, so E2E stays null (as for llama.cpp's `timings`).
    let text =
        std::fs::read_to_string(testdata().join("samples/llamacpp_legacy_jsonlog.jsonl")).unwrap();
    let m = metrics(&[], &text);
    assert!(m[0].is_none() && m[1].is_none() && m[2].is_none());
    let r = m[3].as_ref().unwrap();
    assert_eq!(r["ttft_ms"], 1442.297);
    assert_eq!(r["ttft_origin"], "scheduled");
    assert_eq!(r["tpot_ms"], 161.394);
    assert_eq!(r["e2e_ms"], serde_json::Value::Null);
    assert_eq!(r["nulls"]["e2e_ms"], "not_logged");
    assert_eq!(r["output_tokens"], 22);
    assert!(m[4].is_none(), "the access line is no request");
    assert!(
        m[5].is_none(),
        "an old-format prompt line whose task never completes here"
    );
}

#[test]
fn pitfall_10_key_naming_drift() {
    // Kong 3.8's singular prompt_token/completion_token under ai.<plugin> read like the
    // current ai.proxy plural names.
    let old = one(&[], &sample_line("kong.jsonl", 4));
    assert_eq!(
        (old["input_tokens"].clone(), old["output_tokens"].clone()),
        (json!(28), json!(20))
    );
    let renamed = sample_line("kong.jsonl", 4)
        .replace(r#""ai-proxy""#, r#""proxy""#)
        .replace("prompt_token\"", "prompt_tokens\"")
        .replace("completion_token\"", "completion_tokens\"");
    let new = one(&[], &renamed);
    assert_eq!(new["input_tokens"], 28);
    assert_eq!(new["e2e_ms"], old["e2e_ms"]);
    // TGI: the router's "message" is a request event; the launcher's "fields.message" with
    // the same text is not.
    let launcher = sample_line("tgi.jsonl", 3).replace(
        r#""message":"Success""#,
        r#""fields":{"message":"Success"}"#,
    );
    assert!(metrics(&[], &launcher)[0].is_none());
}

#[test]
fn pitfall_10_llamacpp_slot_id_and_id_slot() {
    // Old builds write slot_id/task_id, newer id_slot/id_task: both join.
    let new = std::fs::read_to_string(testdata().join("samples/llamacpp_legacy_jsonlog.jsonl"))
        .unwrap()
        .lines()
        .take(4)
        .collect::<Vec<_>>()
        .join("\n");
    let old = new
        .replace("\"id_slot\"", "\"slot_id\"")
        .replace("\"id_task\"", "\"task_id\"");
    let a = metrics(&[], &new);
    let b = metrics(&[], &old);
    assert_eq!(a[3].as_ref().unwrap()["tpot_ms"], 161.394);
    assert_eq!(a, b);
}

#[test]
fn pitfall_11_json_in_json_is_not_read_as_structure() {
    // SGLang's request_parameters is a JSON string; text in it that looks like fields of
    // other formats ("usage", "e2e_latency") must neither be read nor confuse detection.
    let sgl = sample_line("sglang.jsonl", 2).replace(
        r#"\"return_logprob\": false}"#,
        r#"\"return_logprob\": false, \"e2e_latency\": 99, \"usage\": {\"prompt_tokens\": 1, \"completion_tokens\": 1}}"#,
    );
    let m = one(&[], &sgl);
    assert_eq!(m["format"], "sglang");
    assert_eq!(m["e2e_ms"], 3441.121);
    // TGI's parameters is a Rust Debug string that may hold anything.
    let tgi = sample_line("tgi.jsonl", 3).replace(
        "stop: []",
        r#"stop: [\"\\\"message\\\":\\\"Success\\\"\", \"total_time\"]"#,
    );
    assert_eq!(one(&[], &tgi)["e2e_ms"], 1514.409);
    // A JSON string holding a whole usage object is no usage object.
    let spend = r#"{"request_id":"x","metadata":"{\"usage\": {\"prompt_tokens\": 12, \"completion_tokens\": 3}}"}"#;
    assert!(metrics(&[], spend)[0].is_none());
}

#[test]
fn pitfall_11_otlp_finish_reasons_as_a_json_string() {
    // vLLM spans write gen_ai.response.finish_reasons as the string "[\"stop\"]", not an
    // array; the span is read all the same (second span: "[\"length\"]").
    let m = metrics(&[], &sample_line("vllm_otlp_traces.jsonl", 1));
    let spans = m[0].as_ref().unwrap().as_array().unwrap().clone();
    assert_eq!(spans.len(), 2);
    assert!(spans.iter().all(|s| s["outcome"] == "ok"));
}

#[test]
fn pitfall_12_escaping_cjson_and_python_nan() {
    // lua-cjson escapes "/" as "\/", in values and in keys: read alike, and the line comes
    // out byte for byte with the metrics spliced in.
    let kong = sample_line("kong.jsonl", 2).replace(
        r#""llm_latency":2874"#,
        r#""llm\/latency":1,"llm_latency":2874"#,
    );
    let out = run_ok(&[], kong.as_bytes());
    let (rest, obj) = unsplice(&out, "tokentime").unwrap();
    assert_eq!(rest, kong.as_bytes(), "no byte changed, none added");
    let m: Value = serde_json::from_str(&obj).unwrap();
    assert_eq!(m["e2e_ms"], 2874.0);
    assert_eq!(m["cache"], "hit");
    let escaped_key =
        sample_line("kong.jsonl", 2).replace(r#""started_at""#, r#""started\u005fat""#);
    assert_eq!(one(&[], &escaped_key)["format"], "kong");
    // Python json.dumps: ", " separators, \u escapes of non-ASCII, NaN/Infinity in a field
    // tokentime does not read (decode_throughput) cost nothing...
    let sgl = sample_line("sglang.jsonl", 1).replace(
        "\"decode_throughput\": 97.2004179",
        "\"decode_throughput\": NaN, \"note\": \"caf\\u00e9 Infinity\", \"x\": -Infinity",
    );
    assert!(sgl.contains(", \"x\": -Infinity"));
    let m = one(&[], &sgl);
    assert_eq!(m["e2e_ms"], 2218.094);
    assert_eq!(m["cache"], "hit");
    // ...and in a field it reads, only that value is lost.
    let nan = sample_line("sglang.jsonl", 5).replace("0.9120481014251709", "NaN");
    let m = one(&[], &nan);
    assert_eq!(m["e2e_ms"], Value::Null);
    assert_eq!(m["queue_ms"], 4.212);
    assert_eq!(m["cache"], "hit");
}

/// LiteLLM's spend-log rows (database exports) carry `startTime`/`endTime` as ISO strings, not
/// the callback payload's epoch floats: both are read, any offset or none (UTC).
#[test]
fn litellm_times_as_iso_strings_or_epoch_floats() {
    let line = |start: &str, first: &str, end: &str| {
        format!(
            "{{\"call_type\":\"acompletion\",\"stream\":true,\"status\":\"success\",\
             \"startTime\":{start},\"completionStartTime\":{first},\"endTime\":{end},\
             \"prompt_tokens\":100,\"completion_tokens\":11}}"
        )
    };
    let iso = one(
        &[],
        &line(
            "\"2026-11-29 15:08:47.000000\"",
            "\"2026-11-29T15:08:47.250Z\"",
            "\"2026-11-29T17:08:48.500+02:00\"",
        ),
    );
    // 15:08:47 UTC on 2026-11-29 is 1795964927 s after the epoch.
    let epoch = one(&[], &line("1795964927.0", "1795964927.25", "1795964928.5"));
    for m in [&iso, &epoch] {
        assert_eq!(m["ttft_ms"], 250.0);
        assert_eq!(m["e2e_ms"], 1500.0);
        // (1500 - 250) / (11 - 1)
        assert_eq!(m["tpot_ms"], 125.0);
    }
}

#[test]
fn pitfall_11b_a_failed_vllm_span_without_latencies_is_an_error() {
    // A request that failed carries its name and an error status but none of the
    // gen_ai.latency.* attributes: it is a request, counted as an error, not dropped.
    let ok = sample_line("vllm_otlp_traces.jsonl", 1);
    let failed = r#"{"traceId":"aa","spanId":"bb","name":"llm_request","kind":2,"startTimeUnixNano":"1787334732002580736","endTimeUnixNano":"1787334732102580736","attributes":[{"key":"gen_ai.request.id","value":{"stringValue":"chatcmpl-x"}},{"key":"gen_ai.usage.prompt_tokens","value":{"intValue":"12"}}],"status":{"code":2,"message":"engine dead: request aborted"}}"#;
    // Into the first scope's spans, after the two that succeeded.
    let at = ok.find("\"spans\":[").unwrap() + "\"spans\":[".len();
    let line = format!("{}{failed},{}", &ok[..at], &ok[at..]);
    let m = metrics(&[], &line);
    let spans = m[0].as_ref().unwrap().as_array().unwrap().clone();
    assert_eq!(spans.len(), 3);
    assert_eq!(spans[0]["outcome"], "error");
    assert_eq!(spans[0]["input_tokens"], 12);
    assert_eq!(spans[0]["ttft_ms"], Value::Null);
    let s: Value =
        serde_json::from_slice(&run_ok(&["summary", "-o", "json"], line.as_bytes())).unwrap();
    assert_eq!(s["coverage"]["requests"], 3);
    assert_eq!(s["coverage"]["errors"], 1);
}
