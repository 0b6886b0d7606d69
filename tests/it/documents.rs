//! Records anywhere in a JSON document: lists at any level found without options, `--root`
//! with `[*]`, rows and enrich of documents, `--map` conditions and records, formats files with
//! records.

use crate::common::*;

/// The Langfuse sample's observations as an API page, `{"data":{"observations":[...]}}`.
fn langfuse_page(pretty: bool) -> Vec<u8> {
    let text = std::fs::read_to_string(testdata().join("samples/langfuse.jsonl")).unwrap();
    let obs: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let page = serde_json::json!({"data": {"observations": obs}, "meta": {"page": 1}});
    if pretty {
        serde_json::to_vec_pretty(&page).unwrap()
    } else {
        serde_json::to_vec(&page).unwrap()
    }
}

fn stdout_of(args: &[&str], stdin: &[u8]) -> String {
    String::from_utf8(run_ok(args, stdin)).unwrap()
}

#[test]
fn a_list_at_any_level_is_found_without_options() {
    for pretty in [true, false] {
        let out = stdout_of(
            &["summary", "--explain", "--by", "$parent"],
            &langfuse_page(pretty),
        );
        assert!(
            out.starts_with("lines 1  requests 3  errors 1  non-JSON 0  no timing 0  invalid 0"),
            "{out}"
        );
        assert!(out.contains("observations"), "{out}");
    }
    // Two levels of arrays, in an array document.
    let lines = std::fs::read_to_string(testdata().join("samples/litellm.jsonl")).unwrap();
    let nested: Vec<Vec<serde_json::Value>> = lines
        .lines()
        .map(|l| vec![serde_json::from_str(l).unwrap()])
        .collect();
    let doc = serde_json::to_vec_pretty(&nested).unwrap();
    let out = stdout_of(&["summary", "--explain"], &doc);
    assert!(out.starts_with("lines 5  requests 5  errors 1"), "{out}");
}

#[test]
fn an_llm_load_test_list_nested_deeper_is_found() {
    let path = testdata().join("realdata/llmloadtest2023-caikit-c20/output.json");
    let run: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let doc = serde_json::to_vec_pretty(&serde_json::json!({"runs": [{"output": run}]})).unwrap();
    let auto = stdout_of(&["summary", "--explain"], &doc);
    assert!(
        auto.starts_with("lines 1  requests 107  errors 0"),
        "{auto}"
    );
    assert!(auto.contains("llm-load-test-2023 107"), "{auto}");
    let rooted = stdout_of(
        &[
            "summary",
            "--explain",
            "--root",
            "runs[*].output.results[*]",
        ],
        &doc,
    );
    assert_eq!(rooted, auto);
    let flat = stdout_of(
        &[
            "summary",
            "--explain",
            "--root",
            "results[*]",
            path.to_str().unwrap(),
        ],
        b"",
    );
    assert!(flat.starts_with("lines 1  requests 107"), "{flat}");
}

#[test]
fn rows_of_a_document_are_one_per_request() {
    let doc = langfuse_page(true);
    for (fmt, header) in [("csv", 1), ("tsv", 1), ("jsonl", 0)] {
        let out = stdout_of(&["-o", fmt], &doc);
        assert_eq!(out.lines().count(), 3 + header, "{fmt}: {out}");
    }
    let llmperf = testdata().join("realdata/llmperf-groq-70b/individual_responses.json");
    let out = stdout_of(&["-o", "csv", llmperf.to_str().unwrap()], b"");
    assert_eq!(out.lines().count(), 151);
}

#[test]
fn enrich_passes_a_pretty_document_through_and_counts_it() {
    let doc = langfuse_page(true);
    let out = run(&[], &doc);
    assert!(out.status.success());
    assert_eq!(out.stdout, doc, "byte for byte");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!err.contains("invalid"), "{err}");
    assert!(
        err.contains("a JSON document, passed through unchanged"),
        "{err}"
    );
    // --strict finds no bad line in it.
    assert!(run(&["--strict"], &doc).status.success());
}

#[test]
fn map_conditions_and_records() {
    let path = testdata().join("realdata/llmloadtest2023-caikit-c20/output.json");
    let path = path.to_str().unwrap();
    let base = [
        "summary",
        "--explain",
        "--map",
        "arrival=start:epoch_s",
        "--map",
        "end=end:epoch_s",
        "--map",
        "output_tokens=output_tokens",
        "--map",
        "records=results[*]",
    ];
    let with = |extra: &[&str]| {
        let args: Vec<&str> = base.iter().chain(extra).chain([&path]).copied().collect();
        stdout_of(&args, b"")
    };
    let all = with(&[]);
    assert!(all.starts_with("lines 1  requests 107  errors 0"), "{all}");
    let errors = with(&["--map", "error_when=output_tokens>=160"]);
    let cancelled = with(&["--map", "cancelled_when=!output_tokens>=160"]);
    let e: u64 = field(&errors, "errors");
    let c: u64 = field(&cancelled, "cancelled");
    assert!(e > 0 && c > 0, "{errors}\n{cancelled}");
    assert_eq!(e + c, 107);
    let cache = with(&["--map", "response_cache_when=worker_id==0"]);
    assert!(field(&cache, "response cache") > 0, "{cache}");
    let bad = run(
        &[
            "--map",
            "arrival=t:epoch_s",
            "--map",
            "error_when=status>500",
        ],
        b"",
    );
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8(bad.stderr).unwrap();
    assert!(
        err.contains("--map error_when=status>500: `>` is no operator here"),
        "{err}"
    );
    let bad = run(
        &[
            "--map",
            "arrival=t:epoch_s",
            "--map",
            "error_when=status>=5xx",
        ],
        b"",
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8(bad.stderr)
            .unwrap()
            .contains("`>=` takes an integer")
    );
}

/// The number after `name ` in a summary's first line.
fn field(summary: &str, name: &str) -> u64 {
    let first = summary.lines().next().unwrap();
    let at = first
        .find(&format!("{name} "))
        .unwrap_or_else(|| panic!("{name}: {first}"));
    first[at + name.len() + 1..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn a_formats_file_reads_records_and_the_schema_is_in_the_help() {
    let dir = std::env::temp_dir().join(format!("tokentime-docs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("llt.formats.toml");
    std::fs::write(
        &file,
        r#"
[[format]]
name = "caikit-run"
markers = [{ present = "results" }]
records = "results[*]"
record_markers = [{ present = "worker_id" }]
error_when = [{ path = "output_tokens", at_least = 160 }]
fields = [
  { field = "arrival", path = "start", unit = "epoch_s" },
  { field = "end", path = "end", unit = "epoch_s" },
  { field = "output_tokens", path = "output_tokens" },
]
"#,
    )
    .unwrap();
    let path = testdata().join("realdata/llmloadtest2023-caikit-c20/output.json");
    let out = stdout_of(
        &[
            "summary",
            "--explain",
            "--formats",
            file.to_str().unwrap(),
            path.to_str().unwrap(),
        ],
        b"",
    );
    assert!(out.contains("formats: caikit-run 107"), "{out}");
    assert!(field(&out, "errors") > 0);
    let help = stdout_of(&["formats", "--help"], b"");
    for key in ["record_markers", "records", "error_when", "at_least"] {
        assert!(help.contains(key), "{key}: {help}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn one_line_objects_joined_without_a_newline_are_each_read() {
    // `cat a.json b.json` of two vLLM results written on one line each, without a final
    // newline: `{...}{...}` on one line (with a BOM before the second, and a space).
    let dir = testdata().join("realdata");
    let a = std::fs::read(dir.join("vllm083-llama70b-tp8-qps1/result.json")).unwrap();
    let b = std::fs::read(dir.join("vllm083-llama70b-tp8-qpsinf/result.json")).unwrap();
    let by_line = [a.as_slice(), b"\n", &b, b"\n"].concat();
    let want = stdout_of(&["summary", "-o", "json", "--by", "request_rate"], &by_line);
    for sep in [&b""[..], b" ", b"\xEF\xBB\xBF"] {
        let joined = [a.as_slice(), sep, &b].concat();
        for threads in ["1", "2"] {
            let args = [
                "summary",
                "-o",
                "json",
                "--by",
                "request_rate",
                "--threads",
                threads,
            ];
            let got = stdout_of(&args, &joined);
            let (w, g): (serde_json::Value, serde_json::Value) = (
                serde_json::from_str(&want).unwrap(),
                serde_json::from_str(&got).unwrap(),
            );
            assert_eq!(g["coverage"]["requests"], 400, "{sep:?}");
            assert_eq!(g["groups"], w["groups"], "{sep:?}");
        }
        // Enrich passes the line through byte for byte and counts its requests.
        let out = run(&[], &joined);
        assert_eq!(out.stdout, joined);
        assert!(!String::from_utf8_lossy(&out.stderr).contains("invalid JSON"));
    }
    // A line of an object and a non-object stays invalid.
    let out = run(&["summary"], b"{\"a\":1} [1]\n");
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid JSON: trailing characters"));
}

#[test]
fn a_record_of_a_pretty_array_is_numbered_by_its_first_line() {
    // LLMPerf's records, pretty-printed: the third starts on line 10, its bad TTFT on line 12.
    let doc = b"[\n  {\n    \"error_code\": null,\n    \"ttft_s\": 0.29,\n    \"end_to_end_latency_s\": 0.89,\n    \"inter_token_latency_s\": 0.006\n  },\n  {\"error_code\": null, \"ttft_s\": 0.31, \"end_to_end_latency_s\": 0.91, \"inter_token_latency_s\": 0.006},\n\n  {\n    \"error_code\": null,\n    \"ttft_s\": \"bad\",\n    \"end_to_end_latency_s\": 0.84,\n    \"inter_token_latency_s\": 0.006\n  }\n]\n";
    let out = run(&["-o", "csv", "--fields", "line,ttft_ms"], doc);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("<stdin>:10: ttft \"bad\": present"), "{err}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "line,ttft_ms\n2,290.0\n8,310.0\n10,\n"
    );
}

/// A benchmark's result file whose writer was killed: LLMPerf's records cut inside the 78th.
/// The 77 before the cut are read (as the whole file's first 77), and stderr names the line
/// of the cut; before, the file was read as lines and every record was lost.
#[test]
fn a_document_cut_short_keeps_its_records_before_the_cut() {
    let whole =
        std::fs::read(testdata().join("realdata/llmperf-groq-70b/individual_responses.json"))
            .unwrap();
    let cut = &whole[..30_000];
    let out = run(&["summary", "-o", "json"], cut);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "<stdin>:853: JSON document cut short (the input ends inside it; its records before \
             the cut are read): EOF while parsing a string at line 853 column 9"
        ),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["coverage"]["requests"], 77, "{doc}");
    // The same 77 records, closed as an array, give the same TTFTs.
    let records: Vec<serde_json::Value> = serde_json::from_slice(&whole).unwrap();
    let closed = serde_json::to_vec(&records[..77]).unwrap();
    let want: serde_json::Value =
        serde_json::from_slice(&run_ok(&["summary", "-o", "json"], &closed)).unwrap();
    assert_eq!(
        doc["groups"][0]["metrics"]["ttft_ms"],
        want["groups"][0]["metrics"]["ttft_ms"]
    );
}
