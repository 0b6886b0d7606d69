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
