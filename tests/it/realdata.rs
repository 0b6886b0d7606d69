//! Benchmark result files of vLLM, LLMPerf and guidellm (testdata/realdata, public files with
//! the producers' own aggregates, see its README): read under tokentime's definitions,
//! `summary` reproduces each producer's numbers where the definitions agree.

use crate::common::*;
use serde_json::Value;

fn summary(args: &[&str]) -> Value {
    serde_json::from_slice(&run_ok(args, b"")).unwrap()
}

fn dirs(prefix: &str) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(testdata().join("realdata"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with(prefix))
        .collect();
    v.sort();
    v
}

#[test]
fn vllm_results_reproduce_mean_median_p99_of_ttft_tpot_itl() {
    let dirs = dirs("vllm");
    assert_eq!(dirs.len(), 4);
    for d in dirs {
        let file = d.join("result.json");
        let theirs: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        // vLLM's ITL percentiles are over every token gap (~42,000 values): keep them exact.
        let s = summary(&[
            "summary",
            "-o",
            "json",
            "--exact-limit",
            "1000000",
            file.to_str().unwrap(),
        ]);
        assert_eq!(
            s["coverage"]["formats"]["vllm-bench"],
            theirs["completed"].as_u64().unwrap() + theirs["failed"].as_u64().unwrap_or(0)
        );
        let g = &s["groups"][0]["metrics"];
        for m in ["ttft", "tpot", "itl"] {
            let ours = &g[format!("{m}_ms")];
            let t = |k: &str| theirs[format!("{k}_{m}_ms")].as_f64().unwrap();
            close_stats(
                ours,
                [("mean", t("mean")), ("p50", t("median")), ("p99", t("p99"))],
                &format!("{} {m}", d.display()),
            );
            assert_eq!(ours["exact"], true);
        }
    }
}

#[test]
fn llmperf_reproduces_its_ttft_and_e2e_percentiles() {
    let dirs = dirs("llmperf");
    assert_eq!(dirs.len(), 3);
    for d in dirs {
        let file = d.join("individual_responses.json");
        let theirs: Value =
            serde_json::from_slice(&std::fs::read(d.join("summary.json")).unwrap()).unwrap();
        let s = summary(&[
            "summary",
            "-o",
            "json",
            "--quantiles",
            "25,50,75,90,95,99",
            file.to_str().unwrap(),
        ]);
        assert_eq!(s["coverage"]["errors"], theirs["results_number_errors"]);
        let g = &s["groups"][0]["metrics"];
        for (ours_key, their_key) in [("ttft_ms", "ttft_s"), ("e2e_ms", "end_to_end_latency_s")] {
            let m = &g[ours_key];
            assert_eq!(m["count"], theirs["results_num_completed_requests"]);
            let t = |k: &str| theirs[format!("results_{their_key}_{k}")].as_f64().unwrap() * 1000.0;
            let quantiles = ["p25", "p50", "p75", "p90", "p95", "p99"]
                .map(|q| (q, t(&format!("quantiles_{q}"))));
            let moments = ["mean", "min", "max"].map(|k| (k, t(k)));
            close_stats(
                m,
                quantiles.into_iter().chain(moments),
                &format!("{} {ours_key}", d.display()),
            );
        }
    }
}

#[test]
fn guidellm_reproduces_request_counts_and_ttft_mean_min_max() {
    let dirs = dirs("guidellm");
    assert_eq!(dirs.len(), 3);
    for d in dirs {
        let file = d.join("benchmarks.json");
        let report: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        let metrics = &report["benchmarks"][0]["metrics"];
        let ttft = &metrics["time_to_first_token_ms"]["successful"];
        // guidellm aggregates its successful requests; group by the list a record came from.
        let s = summary(&[
            "summary",
            "-o",
            "json",
            "--by",
            "$parent",
            file.to_str().unwrap(),
        ]);
        let groups = s["groups"].as_array().unwrap();
        let successful = groups
            .iter()
            .find(|g| g["key"] == serde_json::json!({"$parent": "successful"}))
            .expect("a group of successful requests");
        let n = ttft["count"].as_u64().unwrap();
        assert_eq!(
            successful["requests"].as_u64().unwrap(),
            n,
            "{}",
            d.display()
        );
        if let Some(totals) = metrics.get("request_totals") {
            assert_eq!(totals["successful"].as_u64().unwrap(), n);
            let total = s["coverage"]["requests"].as_u64().unwrap();
            assert_eq!(
                total,
                totals["total"].as_u64().unwrap(),
                "{}: requests in the window",
                d.display()
            );
            // The completed requests' rate counts guidellm's successful ones (neither errored
            // nor incomplete).
            let all = groups.iter().find(|g| g["key"] == serde_json::json!({}));
            assert_eq!(
                all.unwrap()["throughput"]["completed"].as_u64().unwrap(),
                n,
                "{}",
                d.display()
            );
        }
        let m = &successful["metrics"]["ttft_ms"];
        assert_eq!(m["count"].as_u64().unwrap(), n);
        close_stats(
            m,
            ["mean", "min", "max"].map(|k| (k, ttft[k].as_f64().unwrap())),
            &format!("{} ttft", d.display()),
        );
    }
}

/// `json.dump(obj, f, indent=2)` of a result file: the same object over many lines, no final
/// newline (as Python writes it).
fn pretty(file: &std::path::Path) -> Vec<u8> {
    let v: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    let text = serde_json::to_string_pretty(&v).unwrap();
    assert!(text.lines().count() > 1000, "{}", file.display());
    text.into_bytes()
}

/// A vLLM result and a guidellm report pretty-printed: a document whose first line is a lone
/// `{` is read as one object, not line by line. `summary` gives the very same JSON as on the
/// one-line file, from a file and from stdin, `lines` included: an object document counts
/// one line per object (as an array document counts one per element), which is what the
/// one-line file counts. Enrich passes the document through byte for byte.
#[test]
fn pretty_printed_result_files_summarize_as_their_one_line_originals() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            dirs("vllm083")[0].join("result.json"),
            &["summary", "-o", "json"][..],
        ),
        (
            dirs("guidellm")[0].join("benchmarks.json"),
            &["summary", "-o", "json", "--by", "$parent"][..],
        ),
    ];
    for (file, args) in cases {
        let bytes = pretty(&file);
        let p = dir.path().join("pretty.json");
        std::fs::write(&p, &bytes).unwrap();
        let path = p.to_str().unwrap();
        let with = |f: &str| {
            let mut a = args.to_vec();
            a.push(f);
            run_ok(&a, b"")
        };
        let want = with(file.to_str().unwrap());
        let s: Value = serde_json::from_slice(&want).unwrap();
        assert!(s["coverage"]["requests"].as_u64().unwrap() > 50);
        assert_eq!(s["coverage"]["lines"], 1);
        assert_eq!(s["coverage"]["non_json"], 0);
        let from_file = with(path);
        assert_eq!(
            String::from_utf8_lossy(&from_file),
            String::from_utf8_lossy(&want),
            "{} pretty-printed",
            file.display()
        );
        let from_stdin = run_ok(args, &bytes);
        assert_eq!(
            String::from_utf8_lossy(&from_stdin),
            String::from_utf8_lossy(&want),
            "{} pretty-printed on stdin",
            file.display()
        );
        // Enrich reads it as lines: none is a request, every byte passes through.
        let out = run(&[path], b"");
        assert!(out.status.success());
        assert!(out.stdout == bytes, "enrich passes it through unchanged");
    }
}

#[test]
fn vllm_results_group_by_model_under_their_model_id() {
    // The model is logged once per run (`model_id` at the top), not per request: every
    // request of a result file takes it, in `--by '$model'` groups and in rows.
    let dirs = dirs("vllm");
    let files: Vec<String> = dirs
        .iter()
        .map(|d| d.join("result.json").to_str().unwrap().to_string())
        .collect();
    let mut args = vec!["summary", "-o", "json", "--by", "$model"];
    args.extend(files.iter().map(String::as_str));
    let s = summary(&args);
    let mut by_model: Vec<(String, u64)> = s["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["key"].as_object().unwrap().len() == 1 && g["key"]["$model"].is_string())
        .map(|g| {
            let key = g["key"]["$model"].as_str().unwrap().to_string();
            (key, g["requests"].as_u64().unwrap())
        })
        .collect();
    by_model.sort();
    assert_eq!(
        by_model,
        vec![
            ("deepseek-ai/DeepSeek-V2.5".to_string(), 200),
            ("meta-llama/Llama-3.3-70B-Instruct".to_string(), 600),
        ]
    );
    let csv = run_ok(&["--output", "csv", &files[1]], b"");
    let csv = String::from_utf8(csv).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 200);
    assert!(
        rows.iter()
            .all(|r| r.split(',').nth(1) == Some("meta-llama/Llama-3.3-70B-Instruct")),
        "{}",
        rows[0]
    );
}

/// guidellm keeps the requests of its warm-up and cool-down in the file: the records outside
/// the measurement window are no requests, and the coverage counts them (Qwen3-30B's file
/// holds 23 successful and 1 incomplete records, 19 within the window: 5 outside), in the
/// table's first line, the JSON and Prometheus.
#[test]
fn guidellm_records_outside_the_window_are_counted() {
    let file = testdata().join("realdata/guidellm050-qwen3-30b-xpu/benchmarks.json");
    let doc: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let records: usize = doc["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|b| b["requests"].as_object().unwrap().values())
        .map(|v| v.as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(records, 24);
    let j = summary(&["summary", "-o", "json", file.to_str().unwrap()]);
    assert_eq!(j["coverage"]["requests"], 19);
    assert_eq!(j["coverage"]["outside_window"], 5);
    let table = String::from_utf8(run_ok(&["summary", file.to_str().unwrap()], b"")).unwrap();
    assert!(
        table.contains("(guidellm 19), records outside the measurement window 5"),
        "{table}"
    );
    let prom = String::from_utf8(run_ok(
        &["summary", "-o", "prometheus", file.to_str().unwrap()],
        b"",
    ))
    .unwrap();
    assert!(
        prom.contains("\ntokentime_records_outside_window 5\n"),
        "{prom}"
    );
}

/// vLLM's and SGLang's result files log no request's time, only the run's `duration`, over
/// which their producers give `request_throughput` (completed / duration) and
/// `output_throughput` (the completed requests' output tokens / duration): a summary's rates
/// run over it and reproduce both, per run and over several runs.
#[test]
fn benchmark_results_give_their_own_throughput_over_the_runs_duration() {
    for d in dirs("vllm083") {
        let file = d.join("result.json");
        let theirs: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        let s = summary(&["summary", "-o", "json", file.to_str().unwrap()]);
        let runs = &s["groups"][0]["runs"];
        assert_eq!(runs["count"], 1, "{}", d.display());
        assert_eq!(runs["completed"], theirs["completed"]);
        assert_eq!(runs["output_tokens"], theirs["total_output_tokens"]);
        for (ours, t) in [
            ("duration_s", "duration"),
            ("completed_per_s", "request_throughput"),
            ("output_tokens_per_s", "output_throughput"),
        ] {
            let (a, b) = (runs[ours].as_f64().unwrap(), theirs[t].as_f64().unwrap());
            // The duration to the ms, the rates to 6 significant digits.
            let tolerance = if ours == "duration_s" {
                0.0005
            } else {
                b * 1e-5
            };
            assert!(
                (a - b).abs() <= tolerance,
                "{}: {ours} {a} vs {t} {b}",
                d.display()
            );
        }
    }
    // 200 / 205.219 s = 0.975/s; 42,722 tokens / 205.219 s = 208.2/s.
    let qps1 = testdata().join("realdata/vllm083-llama70b-tp8-qps1/result.json");
    let text = String::from_utf8(run_ok(&["summary", qps1.to_str().unwrap()], b"")).unwrap();
    assert_eq!(
        text.lines().next().unwrap(),
        "200 requests in 1 run of 3m25s: 0.97 requests/s, 208 output tokens/s"
    );
}

/// SGLang's result lines, one run each: the rates over each run and over both, a sweep split by
/// a run's setting, digests merged by run, and goodput over the runs.
#[test]
fn sglang_runs_give_their_throughput_split_merged_and_judged() {
    // SGLang's two runs: 99 of 100 completed in 14.840 s (6.67128/s, 2,964 tokens: 199.734/s) and
    // 74 of 80 in 6.421 s (11.524/s, 1,794 tokens: 279.4/s); together 173 in 21.261 s
    // (8.13692/s) and 4,758 tokens (223.789/s).
    let file = testdata().join("realdata/sglang0523-mock/sglang-bench.jsonl");
    let f = file.to_str().unwrap();
    let s = summary(&["summary", "-o", "json", "--by", "backend", f]);
    let rate = |key: &str, m: &str| {
        let g = s["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["key"]["backend"] == key)
            .unwrap();
        g["runs"][m].as_f64().unwrap()
    };
    assert_eq!(rate("sglang-oai", "completed_per_s"), 6.67128);
    assert_eq!(rate("sglang-oai", "output_tokens_per_s"), 199.734);
    assert_eq!(rate("sglang-oai-chat", "completed_per_s"), 11.524);
    assert_eq!(rate("sglang-oai-chat", "output_tokens_per_s"), 279.379);
    let all = &s["groups"][0]["runs"];
    assert_eq!(all["count"], 2);
    assert_eq!(all["requests"], 180);
    assert_eq!(all["completed_per_s"], 8.13692);
    assert_eq!(all["output_tokens_per_s"], 223.789);
    let text = String::from_utf8(run_ok(&["summary", f], b"")).unwrap();
    assert_eq!(
        text.lines().next().unwrap(),
        "180 requests in 2 runs of 21.3s in all: 8.14 completed requests/s, 224 output tokens/s"
    );

    // Saved as digests, one file per run, merged: the same two runs (a run whose requests
    // are in two groups counts once).
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    let mut digests = vec![];
    for (i, line) in text.lines().enumerate() {
        let part = dir.path().join(format!("run{i}.jsonl"));
        std::fs::write(&part, format!("{line}\n")).unwrap();
        let digest = dir.path().join(format!("run{i}.digest"));
        let (p, d) = (part.to_str().unwrap(), digest.to_str().unwrap());
        run_ok(&["summary", "--save-digest", d, "--by", "backend", p], b"");
        digests.push(d.to_owned());
    }
    let mut args = vec!["merge", "-o", "json"];
    args.extend(digests.iter().map(String::as_str));
    let merged = summary(&args);
    assert_eq!(merged["groups"][0]["runs"], s["groups"][0]["runs"]);

    // A sweep split by a run's setting: each group's title has its run's throughput, and
    // SGLang's `"request_rate": Infinity` is the group `inf` (vLLM writes the string "inf").
    let text = String::from_utf8(run_ok(
        &["summary", "--explain", "--by", "request_rate", f],
        b"",
    ))
    .unwrap();
    let titles: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("request_rate=") && !l.contains(" cache="))
        .collect();
    assert_eq!(
        titles,
        [
            "request_rate=8.0: 100 requests, 1 error (1.0%); 6.67 completed requests/s, 200 output tokens/s over 1 run of 14.8s",
            "request_rate=inf: 80 requests, 6 errors (7.5%); 11.5 completed requests/s, 279 output tokens/s over 1 run of 6.4s",
        ]
    );
    // Any of the run's scalar members splits it (`random_input_len`: no member the format
    // names).
    let s = summary(&["summary", "-o", "json", "--by", "random_input_len", f]);
    let mut lens: Vec<(&str, u64)> = s["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["key"].as_object().unwrap().len() == 1)
        .filter_map(|g| {
            Some((
                g["key"]["random_input_len"].as_str()?,
                g["requests"].as_u64()?,
            ))
        })
        .collect();
    lens.sort();
    assert_eq!(lens, [("128", 80), ("256", 100)]);

    // With a goodput target, the completed requests that met it over the runs' time (vLLM's
    // `request_goodput`): 111 of the 173 had TTFT <= 200 ms, 5.2208/s.
    let s = summary(&["summary", "-o", "json", "--goodput", "ttft=200ms", f]);
    assert_eq!(s["groups"][0]["runs"]["met"], 111);
    assert_eq!(s["groups"][0]["runs"]["met_per_s"], 5.2208);
    // vLLM's own spelling of the targets (`METRIC:MS`, space-separated) means the same.
    let v = summary(&["summary", "-o", "json", "--goodput", "ttft:200", f]);
    assert_eq!(v["groups"][0]["runs"], s["groups"][0]["runs"]);
}

/// A benchmark's aggregates without its requests (LLMPerf's summary, AIPerf's and genai-perf's
/// aggregate exports, a vLLM result saved without `--save-detailed`) is named on stderr with
/// where its requests are; a file with its requests is not.
#[test]
fn aggregate_only_files_say_where_their_requests_are() {
    let stderr = |file: &std::path::Path| {
        let out = run(&["summary", "-o", "json", file.to_str().unwrap()], b"");
        assert_eq!(out.status.code(), Some(0), "{}", file.display());
        String::from_utf8(out.stderr).unwrap()
    };
    let realdata = testdata().join("realdata");
    for (file, says) in [
        (
            "llmperf-groq-70b/summary.json",
            "individual_responses.json beside it",
        ),
        (
            "aiperf011-reasoning-cancel/profile_export_aiperf.json",
            "profile_export.jsonl beside it",
        ),
        (
            "aiperf013-mock-chat-cancel/profile_export_aiperf.json",
            "profile_export.jsonl beside it",
        ),
        (
            "genai-perf016-mock-chat-stream/profile_export_genai_perf.json",
            "profile_export.json beside it",
        ),
    ] {
        let err = stderr(&realdata.join(file));
        assert!(
            err.contains(&format!("{file}: ")) && err.contains(says),
            "{err}"
        );
        // What to try next is that file, not another --format or --root.
        assert!(
            err.contains("the input holds a benchmark's aggregates, not its requests")
                && !err.contains("--root"),
            "{err}"
        );
    }
    let table = run(
        &[
            "summary",
            realdata
                .join("llmperf-groq-70b/summary.json")
                .to_str()
                .unwrap(),
        ],
        b"",
    );
    let table = String::from_utf8(table.stdout).unwrap();
    assert!(
        table.contains("no line was a request: the input holds a benchmark's aggregates")
            && !table.contains("--root"),
        "{table}"
    );
    // vLLM's result without its per-request arrays.
    let full = realdata.join("vllm083-llama70b-tp8-qps1/result.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&full).unwrap()).unwrap();
    for k in [
        "input_lens",
        "output_lens",
        "ttfts",
        "itls",
        "generated_texts",
        "errors",
    ] {
        v.as_object_mut().unwrap().remove(k);
    }
    let dir = tempfile::tempdir().unwrap();
    let bare = dir.path().join("result.json");
    std::fs::write(&bare, serde_json::to_vec(&v).unwrap()).unwrap();
    assert!(stderr(&bare).contains("result.json: a benchmark result without its requests"));
    assert!(!stderr(&full).contains("without its requests"));
    // SGLang's bench_serving lines without --output-details: a late-2024 one of medians (no
    // request_throughput), and a later one whose server_info (40 KB of server arguments) comes
    // before the aggregates. Named as such, with no word of a timing that could not be read
    // (the run's `duration` is no request's E2E).
    let medians = r#"{"backend": "sglang", "dataset_name": "random", "request_rate": 1.0, "total_input_tokens": 152612, "total_output_tokens_retokenized": 160192, "mean_e2e_latency_ms": 7840.6, "median_e2e_latency_ms": 7819.0, "median_ttft_ms": 85.7, "median_itl_ms": 13.6, "output_throughput": 537.4, "duration": 298.4, "completed": 300}"#;
    let server_info = format!(
        r#"{{"tag": "pd", "backend": "sglang", "request_rate": 4.0, "server_info": {{"args": "{}"}}, "duration": 20.1, "completed": 100, "total_output_tokens_retokenized": 4800, "request_throughput": 4.9, "median_ttft_ms": 80.1}}"#,
        "x".repeat(40_000)
    );
    for (name, line) in [
        ("medians.jsonl", medians),
        ("server_info.jsonl", &server_info),
    ] {
        let f = dir.path().join(name);
        std::fs::write(&f, format!("{line}\n{line}\n")).unwrap();
        let err = stderr(&f);
        assert!(
            err.contains(&format!("{name}: a benchmark result without its requests"))
                && err.contains("SGLang's bench_serving writes each request's TTFT and ITL with --output-details")
                && !err.contains("could not read their timing"),
            "{name}: {err}"
        );
    }
}

/// guidellm's incomplete records (cut off at the end of the run) are cancellations; one cut
/// off before its first token (`first_token_time` null: guidellm then writes the requested
/// `output_tokens`, not a count of tokens that came) counts as an error.
#[test]
fn guidellm_incomplete_before_the_first_token_is_an_error() {
    let file = testdata().join("realdata/guidellm03-qwen3-0.6b-llmd-sim/benchmarks.json");
    let report: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let incomplete = report["benchmarks"][0]["requests"]["incomplete"]
        .as_array()
        .unwrap();
    let before = incomplete
        .iter()
        .filter(|r| r["first_token_time"].is_null())
        .count() as u64;
    assert_eq!((incomplete.len(), before), (23, 10));
    let s = summary(&[
        "summary",
        "-o",
        "json",
        "--by",
        "$parent",
        file.to_str().unwrap(),
    ]);
    let group = s["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["key"] == serde_json::json!({"$parent": "incomplete"}))
        .unwrap();
    assert_eq!(group["errors"], before, "{group}");
    assert_eq!(group["cancelled"], 23 - before, "{group}");
}

/// vLLM writes an empty `itls` list for a one-token request: its ITL is null for that reason,
/// as its TPOT is, not "not logged".
#[test]
fn a_one_token_requests_itl_is_null_as_one_token() {
    let file = testdata().join("realdata/vllm083-llama70b-tp8-qps1/result.json");
    let report: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let one = report["output_lens"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n.as_u64() == Some(1))
        .count();
    assert_eq!(one, 14);
    let s = summary(&["summary", "-o", "json", file.to_str().unwrap()]);
    let m = &s["groups"][0]["metrics"];
    assert_eq!(m["itl_ms"]["nulls"], serde_json::json!({"one_token": 14}));
    assert_eq!(m["tpot_ms"]["nulls"], serde_json::json!({"one_token": 14}));
}
