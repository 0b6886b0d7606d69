//! A custom format from `--map` (SPEC section 3): an in-house log works without code.

mod common;
use common::*;

#[test]
fn map_defines_a_format() {
    let path = testdata().join("custom/inhouse.jsonl");
    let args = [
        "--map",
        "arrival=req.t0:epoch",
        "--map",
        "first_token=req.t1:epoch",
        "--map",
        "end=req.t2:epoch",
        "--map",
        "output_tokens=usage.completion_tokens",
        "--map",
        "input_tokens=usage.prompt_tokens",
        "--map",
        "cached_tokens=usage.cached",
        path.to_str().unwrap(),
    ];
    let out = run_ok(&args, b"");
    let objs = enriched_objects(&out);
    // Line 1: ttft 31.9125-31.5 = 412.5 ms; e2e 33.5625-31.5 = 2062.5; decode 1650 / 66 = 25.
    let m = objs[0].as_ref().unwrap();
    assert_eq!(m["format"], "custom");
    assert_eq!(m["ttft_ms"], 412.5);
    assert_eq!(m["e2e_ms"], 2062.5);
    assert_eq!(m["tpot_ms"], 25.0);
    assert_eq!(m["cache"], "hit", "600/1000 >= 0.5");
    assert!(objs[1].is_none(), "the startup event has no timing");
    // Line 3, RFC 3339: ttft 250 ms, e2e 350 ms, one token.
    let m = objs[2].as_ref().unwrap();
    assert_eq!(m["ttft_ms"], 250.0);
    assert_eq!(m["e2e_ms"], 350.0);
    assert_eq!(m["tpot_ms"], serde_json::Value::Null);
    assert_eq!(m["cache"], "miss");
}

#[test]
fn map_units_that_mix_clocks_are_refused() {
    let out = run(
        &[
            "--map",
            "arrival=req.t0:epoch_s",
            "--map",
            "first_token=req.t1:ms",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("first_token is an instant"));
}

#[test]
fn summary_groups_by_a_json_path() {
    let path = testdata().join("lab/litellm.jsonl");
    let out = run_ok(
        &[
            "summary",
            "-o",
            "json",
            "--by",
            "model",
            path.to_str().unwrap(),
        ],
        b"",
    );
    let s: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let by_model: Vec<_> = s["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["key"].as_object().unwrap().keys().eq(["model"].iter()))
        .collect();
    assert_eq!(by_model.len(), 1);
    assert_eq!(by_model[0]["key"]["model"], "smollm2-135m-instruct-q4_1");
    assert_eq!(by_model[0]["requests"], 293);
}
