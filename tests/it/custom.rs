//! A custom format from `--map` (SPEC section 3): an in-house log works without code.

use crate::common::*;

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
fn summary_groups_by_a_json_path() {
    // A gateway logs the model a request asked for and the dated one that answered; a failed
    // request has only the first. `--by model` groups by the one asked for, so a model's
    // failures are in its group: Helicone's sample has 3 `gpt-4o-mini` requests, one a 429.
    for (input, model, requests, errors) in [
        ("lab/litellm.jsonl", "smollm2-135m-instruct-q4_1", 293, 9),
        ("samples/helicone.jsonl", "gpt-4o-mini", 3, 1),
        ("samples/otel_genai_otlp.jsonl", "gpt-4o-mini", 3, 1),
    ] {
        let path = testdata().join(input);
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
            .filter(|g| {
                g["key"]["model"]
                    .as_str()
                    .is_some_and(|m| m.starts_with(model))
            })
            .collect();
        assert_eq!(by_model.len(), 1, "{input}");
        assert_eq!(by_model[0]["key"]["model"], model, "{input}");
        assert_eq!(by_model[0]["requests"], requests, "{input}");
        assert_eq!(by_model[0]["errors"], errors, "{input}");
    }
}

/// `--formats FILE` (TOML or JSON) defines formats with the built-in tables' power: markers,
/// error, response-cache and streamed rules, summed fields, the arrival origin.
#[test]
fn formats_file_defines_a_format_in_toml_or_json() {
    let log = testdata().join("custom/gateway.jsonl");
    let run_with = |file: &str| {
        let f = testdata().join("custom").join(file);
        run_ok(
            &["--formats", f.to_str().unwrap(), log.to_str().unwrap()],
            b"",
        )
    };
    let toml = run_with("gateway.formats.toml");
    assert_eq!(
        toml,
        run_with("gateway.formats.json"),
        "TOML and JSON agree"
    );
    let objs = enriched_objects(&toml);
    // Line 1: ttft 11.250 - 11.000 = 250 ms; e2e 1250; decode 1000 / 50 = 20; input 1000 +
    // cache_read 600 = 1600, 600/1600 = 0.375 -> partial.
    let m = objs[0].as_ref().unwrap();
    assert_eq!(m["format"], "gateway");
    assert_eq!(m["ttft_ms"], 250.0);
    assert_eq!(m["ttft_origin"], "gateway");
    assert_eq!(m["tpot_ms"], 20.0);
    assert_eq!(m["input_tokens"], 1600);
    assert_eq!(m["cache"], "partial");
    // Line 2: not streamed: no TTFT, e2e 800, cache_read 0 -> miss.
    let m = objs[1].as_ref().unwrap();
    assert_eq!(m["nulls"]["ttft_ms"], "not_streamed");
    assert_eq!(m["e2e_ms"], 800.0);
    assert_eq!(m["cache"], "miss");
    // Line 3: status 503 >= 500 -> error. Line 4: the response cache. Line 5: no request.
    assert_eq!(objs[2].as_ref().unwrap()["outcome"], "error");
    assert_eq!(objs[3].as_ref().unwrap()["cache"], "response");
    assert!(objs[4].is_none());
}

#[test]
fn formats_file_formats_come_first_and_can_be_forced_and_listed() {
    let file = testdata().join("custom/gateway.formats.toml");
    let file = file.to_str().unwrap();
    let listed = String::from_utf8(run_ok(&["formats", "--formats", file], b"")).unwrap();
    assert!(listed.starts_with("gateway: our LLM gateway's access log\n"));
    assert!(listed.contains("  input_tokens     count    llm.in + llm.cache_read\n"));
    assert!(listed.contains("\ntgi: "), "the built-in formats follow");
    // Forced, a line of another format is no request of it.
    let kong = testdata().join("samples/kong.jsonl");
    let out = run_ok(
        &[
            "--formats",
            file,
            "--format",
            "gateway",
            kong.to_str().unwrap(),
        ],
        b"",
    );
    assert!(enriched_objects(&out).iter().all(Option::is_none));
}

/// A formats-file entry named like a built-in format replaces it, and says so on stderr.
#[test]
fn a_formats_file_entry_named_like_a_built_in_replaces_it_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let toml = std::fs::read_to_string(testdata().join("custom/gateway.formats.toml"))
        .unwrap()
        .replace("name = \"gateway\"", "name = \"kong\"");
    let file = dir.path().join("kong.toml");
    std::fs::write(&file, toml).unwrap();
    let file = file.to_str().unwrap();
    let out = run(&["formats", "--formats", file], b"");
    assert_eq!(out.status.code(), Some(0));
    let listed = String::from_utf8(out.stdout).unwrap();
    assert!(listed.starts_with("kong: our LLM gateway's access log\n"));
    assert_eq!(
        listed.matches("\nkong: ").count(),
        0,
        "one kong, the file's: {listed}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("format \"kong\" replaces the built-in format of that name"),
        "{err}"
    );
    // Kong's own lines are no longer read as Kong's: the file's markers do not match them.
    let kong = testdata().join("samples/kong.jsonl");
    let out = run_ok(&["--formats", file, kong.to_str().unwrap()], b"");
    assert!(enriched_objects(&out).iter().all(Option::is_none));
}

/// `--by $model` groups by the model wherever each format logs it (Bedrock `modelId`, Kong
/// `ai.proxy.meta.request_model`, an OTLP span's attributes: the model asked for, which a
/// failed request has too); `--by $format` by format name.
#[test]
fn by_dollar_model_and_format_use_each_formats_own_fields() {
    let mut input = Vec::new();
    for f in ["bedrock.jsonl", "otel_genai_otlp.jsonl"] {
        input.extend(std::fs::read(testdata().join("samples").join(f)).unwrap());
    }
    let s: serde_json::Value = serde_json::from_slice(&run_ok(
        &["summary", "-o", "json", "--by", "$model", "--by", "$format"],
        &input,
    ))
    .unwrap();
    let keys: Vec<&serde_json::Value> = s["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| &g["key"])
        .filter(|k| k.as_object().unwrap().len() == 2)
        .collect();
    assert!(keys.iter().all(|k| !k["$model"].is_null()), "{keys:?}");
    assert!(keys.iter().any(|k| k["$format"] == "bedrock"));
    assert!(
        keys.iter()
            .any(|k| k["$format"] == "otlp" && k["$model"] == "gpt-4o-mini")
    );
}

/// `logged_at` is an instant (when the line was written, taken as the end when no `end` is
/// mapped): arrival 1700000000.0 = 2023-11-14T22:13:20Z, first token 0.5 s later, the line
/// written 2.5 s after arrival. By hand: e2e 2500 ms, ttft 500, decode 2000, tpot 2000 / 10 =
/// 200 (11 tokens), end 2023-11-14T22:13:22.500Z. The same in every timestamp unit.
#[test]
fn map_logged_at_is_an_instant_taken_as_the_end() {
    let epoch = br#"{"a":1700000000.0,"f":1700000000.5,"t":1700000002.5,"n":11}
"#;
    let rfc = br#"{"a":"2023-11-14T22:13:20Z","f":"2023-11-14T22:13:20.5Z","t":"2023-11-14T22:13:22.500+00:00","n":11}
"#;
    for (unit, input) in [
        ("epoch_s", &epoch[..]),
        ("epoch", &epoch[..]),
        ("", &epoch[..]),
        ("rfc3339", &rfc[..]),
        ("epoch", &rfc[..]),
    ] {
        let u = if unit.is_empty() {
            String::new()
        } else {
            format!(":{unit}")
        };
        let (arrival, first, logged) = (
            format!("arrival=a{u}"),
            format!("first_token=f{u}"),
            format!("logged_at=t{u}"),
        );
        let maps = [
            "--map",
            &arrival,
            "--map",
            &first,
            "--map",
            &logged,
            "--map",
            "output_tokens=n",
        ];
        let objs = enriched_objects(&run_ok(&maps, input));
        let m = objs[0].as_ref().unwrap();
        assert_eq!(m["e2e_ms"], 2500.0, "{unit}: {m}");
        assert_eq!(m["ttft_ms"], 500.0, "{unit}: {m}");
        assert_eq!(m["decode_ms"], 2000.0, "{unit}: {m}");
        assert_eq!(m["tpot_ms"], 200.0, "{unit}: {m}");
        let mut args = maps.to_vec();
        args.extend(["-o", "jsonl", "--fields", "start,end,e2e_ms"]);
        let row: serde_json::Value = serde_json::from_slice(&run_ok(&args, input)).unwrap();
        assert_eq!(
            row,
            serde_json::json!({"start": "2023-11-14T22:13:20.000Z",
                               "end": "2023-11-14T22:13:22.500Z", "e2e_ms": 2500.0}),
            "{unit}"
        );
    }
}

/// Arrival and `logged_at` alone: E2E = logged_at - arrival, and `--bucket` puts the request in
/// the window of its end (22:13:22.5 is in 22:10-22:15), not in 1970.
#[test]
fn map_logged_at_gives_e2e_and_the_bucket_of_the_end() {
    let input = br#"{"a":1700000000.0,"t":1700000002.5,"n":11}
"#;
    let maps = [
        "--map",
        "arrival=a:epoch_s",
        "--map",
        "logged_at=t:epoch_s",
        "--map",
        "output_tokens=n",
    ];
    let objs = enriched_objects(&run_ok(&maps, input));
    let m = objs[0].as_ref().unwrap();
    assert_eq!(m["e2e_ms"], 2500.0, "{m}");
    assert_eq!(m["nulls"]["ttft_ms"], "not_logged", "{m}");
    let mut args = vec!["summary", "-o", "json", "--bucket", "5m"];
    args.extend(maps);
    let out = run_ok(&args, input);
    let w: serde_json::Value =
        serde_json::from_slice(out.split(|&b| b == b'\n').next().unwrap()).unwrap();
    assert_eq!(w["start"], "2023-11-14T22:10:00.000Z", "{w}");
    assert_eq!(w["end"], "2023-11-14T22:15:00.000Z", "{w}");
    assert_eq!(w["metrics"]["e2e_ms"]["max"], 2500.0, "{w}");
}

/// A logged `end` stays the end; a logged E2E duration stays the E2E (the line may be written
/// after the response completed).
#[test]
fn map_logged_at_yields_to_a_logged_end_or_e2e() {
    let input = br#"{"a":1700000000.0,"e":1700000002.0,"t":1700000002.5,"d":1800}
"#;
    let with = |extra: &str| {
        let out = run_ok(
            &[
                "--map",
                "arrival=a:epoch_s",
                "--map",
                "logged_at=t:epoch_s",
                "--map",
                extra,
                "-o",
                "jsonl",
                "--fields",
                "end,e2e_ms",
            ],
            input,
        );
        serde_json::from_slice::<serde_json::Value>(&out).unwrap()
    };
    let end = with("end=e:epoch_s");
    assert_eq!(end["e2e_ms"], 2000.0, "{end}");
    assert_eq!(end["end"], "2023-11-14T22:13:22.000Z", "{end}");
    let e2e = with("e2e=d:ms");
    assert_eq!(e2e["e2e_ms"], 1800.0, "{e2e}");
}

/// `--help` names every field `--map` accepts (the list comes from the field table).
#[test]
fn help_lists_every_map_name() {
    let help = String::from_utf8(run_ok(&["--help"], b"")).unwrap();
    let start = help.find("--map").unwrap();
    let end = help[start..].find("--formats").unwrap() + start;
    let text = help[start..end]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let names = tokentime::Field::ALL
        .iter()
        .map(|f| f.name())
        .chain(["id", "model", "stream"]);
    for name in names {
        let found = text
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|w| w == name);
        assert!(found, "--help lacks {name}: {text}");
    }
}

/// `tokentime formats custom` describes the format `--map` makes (README's format table lists
/// `custom`), and the full list ends with it.
#[test]
fn formats_custom_describes_the_map_format() {
    let one = String::from_utf8(run_ok(&["formats", "custom"], b"")).unwrap();
    assert!(one.starts_with("custom: "), "{one}");
    for name in [
        "arrival",
        "logged_at",
        "itl",
        "output_tokens",
        "epoch_s",
        "rfc3339",
    ] {
        assert!(one.contains(name), "{name}: {one}");
    }
    let all = String::from_utf8(run_ok(&["formats"], b"")).unwrap();
    assert!(all.ends_with(&one), "{all}");
    assert!(all.starts_with("litellm: "));
}

/// A formats file reaches the measurement window of a format whose line holds many requests
/// (`record_window`, what the built-in guidellm format uses): only the records whose
/// [record_start, record_end] overlaps their run's [start, end] are requests, in TOML and in
/// JSON; a run without a window keeps all its records; a window without `records` is refused.
#[test]
fn formats_file_record_window_keeps_the_records_of_the_measurement_window() {
    let dir = tempfile::tempdir().unwrap();
    let toml = r#"
[[format]]
name = "bench"
markers = [{ present = "runs" }]
records = "runs[*].requests[*]"
record_markers = [{ present = "t0" }]
record_window = { start = "window.from", end = "window.to", record_start = "t0", record_end = "t2" }
fields = [
  { field = "arrival", path = "t0", unit = "epoch_s" },
  { field = "first_token", path = "t1", unit = "epoch_s" },
  { field = "end", path = "t2", unit = "epoch_s" },
]
"#;
    let json = r#"{"format": [{"name": "bench", "markers": [{"present": "runs"}],
        "records": "runs[*].requests[*]", "record_markers": [{"present": "t0"}],
        "record_window": {"start": "window.from", "end": "window.to", "record_start": "t0", "record_end": "t2"},
        "fields": [{"field": "arrival", "path": "t0", "unit": "epoch_s"},
                   {"field": "first_token", "path": "t1", "unit": "epoch_s"},
                   {"field": "end", "path": "t2", "unit": "epoch_s"}]}]}"#;
    // Run 1's window is [100, 200]: a warm-up request ends at 99.5 (out), one straddles its
    // start (in), one inside (in), a cool-down one starts at 200.5 (out), one never ended
    // (out). Run 2 logs no window: both its requests are in.
    let doc = concat!(
        r#"{"runs":[{"window":{"from":1741946500,"to":1741946600},"requests":["#,
        r#"{"id":"warm","t0":1741946499.0,"t1":1741946499.1,"t2":1741946499.5},"#,
        r#"{"id":"edge","t0":1741946499.8,"t1":1741946500.1,"t2":1741946501.0},"#,
        r#"{"id":"in","t0":1741946550.0,"t1":1741946550.25,"t2":1741946551.0},"#,
        r#"{"id":"cool","t0":1741946600.5,"t1":1741946600.6,"t2":1741946601.0},"#,
        r#"{"id":"open","t0":1741946599.0,"t1":1741946599.2}]},"#,
        r#"{"requests":[{"id":"a","t0":1741946700.0,"t1":1741946700.5,"t2":1741946701.0},"#,
        r#"{"id":"b","t0":1741946800.0,"t1":1741946800.5,"t2":1741946801.0}]}]}"#,
        "\n"
    );
    for (name, text) in [("bench.toml", toml), ("bench.json", json)] {
        let file = dir.path().join(name);
        std::fs::write(&file, text).unwrap();
        let file = file.to_str().unwrap();
        let out = run_ok(
            &[
                "summary",
                "--formats",
                file,
                "--format",
                "bench",
                "-o",
                "json",
            ],
            doc.as_bytes(),
        );
        let s: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(s["coverage"]["requests"], 4, "{name}: {}", s["coverage"]);
        let ttft = &s["groups"][0]["metrics"]["ttft_ms"];
        assert_eq!(ttft["count"], 4, "{name}");
        assert_eq!(ttft["min"], 250.0, "{name}: warm-up (100 ms) left out");
        assert_eq!(ttft["max"], 500.0, "{name}");
    }
    // Without records, a window has no records to keep: refused, with the key named.
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        toml.replace("records = \"runs[*].requests[*]\"\n", "")
            .replace("record_markers = [{ present = \"t0\" }]\n", ""),
    )
    .unwrap();
    let out = run(&["--formats", bad.to_str().unwrap()], doc.as_bytes());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("record_window and run_seconds go with records"),
        "{err}"
    );
    // A window with a key missing or unknown is refused too.
    std::fs::write(&bad, toml.replace("record_end = \"t2\" ", "stop = \"t2\" ")).unwrap();
    let out = run(&["--formats", bad.to_str().unwrap()], doc.as_bytes());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("stop"), "{err}");
}

/// A `--map` path no line has: a summary (table, JSON, one thread or two, a file or standard
/// input) and enrich say which mapped paths the input's first JSON line lacks and which of its
/// paths are close, and the report does not suggest `--map` to a run that gave it.
#[test]
fn a_map_path_no_line_has_is_named_with_the_close_ones() {
    let path = testdata().join("custom/inhouse.jsonl");
    let file = path.to_str().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let map = [
        "--map",
        "arrival=request.t0:epoch_s",
        "--map",
        "end=request.t2:epoch_s",
    ];
    let said = |name: &str| {
        format!(
            "tokentime: {name}: no line was read as a request: a line is one when it has one \
             of request.t0 (--map arrival), request.t2 (--map end); the first JSON line has no \
             request.t0 (--map arrival), request.t2 (--map end); its paths close to them: \
             req.t0, req.t2\n"
        )
    };
    let runs: [(&[&str], bool); 5] = [
        (&["summary", "--threads", "1"], false),
        (&["summary", "--threads", "2"], false),
        (&["summary", "-o", "json"], false),
        (&[], false),
        (&["summary"], true),
    ];
    for (cmd, stdin) in runs {
        let mut args: Vec<&str> = cmd.to_vec();
        args.extend(map);
        let input: &[u8] = if stdin { &bytes } else { b"" };
        if !stdin {
            args.push(file);
        }
        let out = run(&args, input);
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        let name = if stdin { "<stdin>" } else { file };
        assert!(stderr.starts_with(&said(name)), "{args:?}: {stderr}");
        assert!(
            !stdout.contains("--map names the fields")
                && !stderr.contains("--map names the fields"),
            "{args:?}: {stdout}{stderr}"
        );
        assert_eq!(out.status.code(), Some(0), "{args:?}");
    }
    // With `records=`, the advice is still the one of `--map`, not of a forced `--format`.
    let doc = testdata().join("realdata/llmloadtest2023-caikit-c20/output.json");
    let out = run(
        &[
            "summary",
            "-o",
            "json",
            "--map",
            "records=results[*]",
            "--map",
            "arrival=start_tme:epoch_s",
            "--map",
            "end=ending:epoch_s",
            doc.to_str().unwrap(),
        ],
        b"",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the path of a time field --map names"),
        "{err}"
    );
    assert!(!err.contains("--format custom"), "{err}");
    // The marker's path is there: the counts tell what else was wrong, nothing more is said.
    let out = run(
        &[
            "summary",
            "--map",
            "arrival=req.t0:epoch_s",
            "--map",
            "end=req.t9",
            file,
        ],
        b"",
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("no line was read"));
}

/// A duration mapped without a unit takes the one its path's name says (`ttft_s`: seconds);
/// with neither, it is read as ms and stderr says so once, naming each such entry (a log in
/// seconds read as ms would be 1000 times off with nothing else to show it).
#[test]
fn a_duration_without_a_unit_takes_its_names_or_is_said_to_be_ms() {
    let log = br#"{"t":1787334732.5,"ttft":0.49,"lat":2.5,"ttft_s":0.49,"ttftSeconds":0.49}
"#;
    let ttft = |map: &str| {
        let out = run(&["--map", "end=t:epoch_s", "--map", map], log);
        assert!(out.status.success());
        let objs = enriched_objects(&out.stdout);
        let stderr = String::from_utf8(out.stderr).unwrap();
        (objs[0].as_ref().unwrap()["ttft_ms"].clone(), stderr)
    };
    let (v, stderr) = ttft("ttft=ttft_s");
    assert_eq!(v, 490.0);
    assert_eq!(stderr, "");
    // camelCase as the inferred format reads it: ttftSeconds is ttft_seconds.
    let (v, stderr) = ttft("ttft=ttftSeconds");
    assert_eq!(v, 490.0);
    assert_eq!(stderr, "");
    let (v, stderr) = ttft("ttft=ttft:ms");
    assert_eq!(v, 0.49);
    assert_eq!(stderr, "");
    let (v, stderr) = ttft("ttft=ttft");
    assert_eq!(v, 0.49);
    assert_eq!(
        stderr,
        "tokentime: --map ttft=ttft: no unit given, read as ms (add :s, :us, :ns or :duration where the log writes another unit; :ms silences this)\n"
    );
    // One line for all of them; instants and counts need no such line.
    let out = run(
        &[
            "summary",
            "--map",
            "end=t",
            "--map",
            "ttft=ttft",
            "--map",
            "e2e=lat",
        ],
        log,
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("tokentime: --map ttft=ttft, e2e=lat: no unit given"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("no unit given").count(), 1, "{stderr}");
    // After the run, the TTFT (0.49 s read as ms) is named by its median.
    assert!(
        stderr.contains("--map ttft=ttft: read as ms, the median TTFT is 490us"),
        "{stderr}"
    );
}

#[test]
fn a_mapped_path_no_request_had_is_named_with_the_close_ones() {
    let out = run(
        &[
            "summary",
            "--map",
            "arrival=req.t0:epoch_s",
            "--map",
            "end=req.t9:epoch_s",
            "--map",
            "output_tokens=usage.completion_tokens",
            "testdata/custom/inhouse.jsonl",
        ],
        b"",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--map end=req.t9: not in any of the 2 request lines")
            && err.contains("paths close to it: req.t0, req.t1, req.t2"),
        "{err}"
    );
    // Paths every request line has: nothing said.
    assert!(
        !err.contains("--map arrival") && !err.contains("--map output_tokens"),
        "{err}"
    );
}

#[test]
fn reasons_left_out_of_the_headline_are_counted_in_errors() {
    let mut log = String::new();
    for (i, reason) in ["A", "A", "A", "A", "B", "B", "B", "C", "C", "D", "E"]
        .iter()
        .enumerate()
    {
        log.push_str(&format!(
            "{{\"t0\":{},\"t2\":{},\"err\":\"{reason}\"}}\n",
            1_787_334_700 + i,
            1_787_334_701 + i
        ));
    }
    log.push_str("{\"t0\":1787334800,\"t2\":1787334801}\n");
    let extra = ["--map", "error_when=err", "--map", "reason=err"];
    let out = summary_t0_t2(&extra, log.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("errors by reason: A 4, B 3, C 2 (+2 under 2 other reasons)\n"),
        "{text}"
    );
}

#[test]
fn an_instant_in_the_wrong_epoch_unit_is_named_with_the_units_that_read_it() {
    let line = b"{\"t0\":1787334732.5,\"t1\":1787334732900,\"t2\":1787334733.5}\n";
    let out = run(
        &[
            "summary",
            "--map",
            "arrival=t0:epoch_s",
            "--map",
            "first_token=t1:epoch_s",
            "--map",
            "end=t2:epoch_s",
        ],
        line,
    );
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "<stdin>:1: first_token: 1787334732900 is not a plausible time as custom reads it (t1 as epoch_s: \
             before 2000 or after 2200); another unit may read it (:epoch_ms, :epoch_us, \
             :epoch_ns; :epoch tells them by magnitude)"
        ),
        "{err}"
    );
    // Read in its unit, nothing is said.
    let out = run(
        &[
            "summary",
            "--map",
            "arrival=t0:epoch_s",
            "--map",
            "first_token=t1:epoch_ms",
            "--map",
            "end=t2:epoch_s",
        ],
        line,
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_reason_with_no_error_when_is_said_to_mark_no_failure() {
    let line = b"{\"t0\":1787334732.5,\"t2\":1787334733.5,\"err\":\"boom\"}\n";
    let mut with_reason = vec!["--map", "reason=err"];
    let err = String::from_utf8(summary_t0_t2(&with_reason, line).stderr).unwrap();
    assert!(
        err.contains("--map reason=err: a reason is read only for failed requests")
            && err.contains("--map error_when=err"),
        "{err}"
    );
    with_reason.extend(["--map", "error_when=err"]);
    assert!(summary_t0_t2(&with_reason, line).stderr.is_empty());
}

/// The errors `summary -o json` counts in `log` (times `t0` and `t2` in epoch seconds) with
/// the `--map` condition `cond`.
fn errors_with(log: &str, cond: &str) -> serde_json::Value {
    let out = summary_t0_t2(&["-o", "json", "--map", cond], log.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["coverage"]["errors"].clone()
}

#[test]
fn a_bare_path_condition_holds_where_the_value_is_set() {
    // Failed: "boom", an error object, 500. Not failed: "", null, absent, false, 0, {}, [].
    let errs = [
        "\"boom\"",
        "{\"type\":\"x\"}",
        "500",
        "\"\"",
        "null",
        "",
        "false",
        "0",
        "{}",
        "[ ]",
    ];
    let mut log = String::new();
    for (i, e) in errs.iter().enumerate() {
        let err = if e.is_empty() {
            String::new()
        } else {
            format!(",\"err\":{e}")
        };
        log.push_str(&format!(
            "{{\"t0\":{},\"t2\":{}{err}}}\n",
            1_787_334_700 + i,
            1_787_334_701 + i
        ));
    }
    assert_eq!(errors_with(&log, "error_when=err"), 3);
    // Not set: the seven others.
    assert_eq!(errors_with(&log, "error_when=!err"), 7);
}

#[test]
fn durations_in_seconds_read_as_ms_are_named_by_their_implausible_medians() {
    // TTFT 0.2-0.3 s and E2E 0.9-1.2 s, unit-less: read as ms, the median TTFT is 250us and
    // the median E2E 1050us (each field is named once).
    let log = "{\"t0\":1787334700,\"lat\":1.2,\"first\":0.2,\"out\":50}\n\
               {\"t0\":1787334710,\"lat\":0.9,\"first\":0.3,\"out\":40}\n";
    let args = |unit: &str| {
        vec![
            "summary".to_owned(),
            "--map".to_owned(),
            "arrival=t0:epoch_s".to_owned(),
            "--map".to_owned(),
            format!("e2e=lat{unit}"),
            "--map".to_owned(),
            format!("ttft=first{unit}"),
            "--map".to_owned(),
            "output_tokens=out".to_owned(),
        ]
    };
    let as_ms: Vec<String> = args("");
    let as_ms: Vec<&str> = as_ms.iter().map(String::as_str).collect();
    let out = run(&as_ms, log.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(
            "tokentime: --map ttft=first: read as ms, the median TTFT is 250us, shorter than \
             any LLM request waits; if the log writes seconds, --map ttft=first:s\n"
        ) && err.contains(
            "tokentime: --map e2e=lat: read as ms, the median E2E latency is 1050us, shorter \
             than any LLM request takes; if the log writes seconds, --map e2e=lat:s\n"
        ),
        "{err}"
    );
    let as_s: Vec<String> = args(":s");
    let as_s: Vec<&str> = as_s.iter().map(String::as_str).collect();
    let out = run(&as_s, log.as_bytes());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn conditions_compare_numbers_by_value_and_take_null_for_no_value() {
    let line = |i: u32, rest: &str| {
        format!(
            "{{\"t0\":{},\"t2\":{}{rest}}}\n",
            1_787_334_700 + i,
            1_787_334_701 + i
        )
    };
    let log: String = [
        ",\"status\":200,\"err\":null",
        ",\"status\":200.0",
        ",\"status\":500,\"err\":\"x\"",
        ",\"status\":\"200\",\"err\":\"\"",
    ]
    .iter()
    .enumerate()
    .map(|(i, rest)| line(i as u32, rest))
    .collect();
    let errors = |cond: &str| errors_with(&log, cond);
    // 500 and the string "200"; 200.0 is 200.
    assert_eq!(errors("error_when=status!=200"), 2);
    assert_eq!(errors("error_when=status==2e2"), 2);
    // null or absent; "" and "x" are values.
    assert_eq!(errors("error_when=err==null"), 2);
    assert_eq!(errors("error_when=err!=null"), 2);
}

#[test]
fn failures_are_no_sign_that_output_tokens_are_logged() {
    // No output tokens mapped; one request of two failed (its tokens are null: error).
    let log = "{\"t0\":1787334700,\"t2\":1787334701,\"err\":\"x\"}\n\
               {\"t0\":1787334702,\"t2\":1787334704}\n";
    let summary = |extra: &[&str]| {
        let mut args = vec!["--map", "error_when=err"];
        args.extend(extra);
        let out = summary_t0_t2(&args, log.as_bytes());
        assert_eq!(out.status.code(), Some(0));
        out.stdout
    };
    let text = String::from_utf8(summary(&[])).unwrap();
    assert!(!text.contains("output tokens/s"), "{text}");
    let json = summary(&["-o", "json", "--goodput", "e2e=5s"]);
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let text = v.to_string();
    assert!(text.contains("\"output_tokens_per_s\":null"), "{text}");
    assert!(!text.contains("\"output_tokens_per_s\":0"), "{text}");
}

#[test]
fn a_duration_a_unit_apart_from_the_instants_is_named_with_its_unit() {
    // E2E logged in seconds (2.5), the instants 2.5 s apart: read as ms, a 1000th of them.
    let log = "{\"t0\":1787334700,\"t2\":1787334702.5,\"lat\":2.5}\n\
               {\"t0\":1787334710,\"t2\":1787334711,\"lat\":1.0}\n";
    let err = |lat: &str| {
        let out = summary_t0_t2(&["--map", lat], log.as_bytes());
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8(out.stderr).unwrap()
    };
    let e = err("e2e=lat:ms");
    assert_eq!(
        e,
        "tokentime: --map e2e=lat: read as ms, it is a 1000th of what the log's instants give \
         on 2 of 2 requests; if the log writes seconds, --map e2e=lat:s\n"
    );
    assert!(err("e2e=lat:s").is_empty());
    // The same log's instants and durations, the durations written in ms but read as s.
    let ms = log.replace("2.5}", "2500}").replace("1.0}", "1000}");
    let out = summary_t0_t2(&["--map", "e2e=lat:s"], ms.as_bytes());
    let e = String::from_utf8(out.stderr).unwrap();
    assert!(
        e.contains("--map e2e=lat: read as s, it is 1000 times what the log's instants give on 2 of 2 requests; if the log writes ms, --map e2e=lat:ms"),
        "{e}"
    );
}

#[test]
fn a_headline_without_ttft_says_the_values_were_unreadable_not_absent() {
    // TTFT written "450ms" and mapped as ms (not :duration): every one unreadable.
    let log = "{\"t0\":1787334700,\"t2\":1787334701,\"first\":\"450ms\"}\n\
               {\"t0\":1787334702,\"t2\":1787334704,\"first\":\"300ms\"}\n";
    let headline = |extra: &[&str]| {
        let out = summary_t0_t2(extra, log.as_bytes());
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8(out.stdout).unwrap()
    };
    let text = headline(&["--map", "ttft=first:ms"]);
    assert!(
        text.contains("chat:  no TTFT value (unparseable 2)\n"),
        "{text}"
    );
    // Not mapped at all: not in the log.
    let text = headline(&[]);
    assert!(text.contains("chat:  no TTFT in the log\n"), "{text}");
}

#[test]
fn a_reason_path_holding_an_error_object_names_the_member_to_map() {
    // Two failures whose `error` is an object (hand-written: the OpenAI error shape), one
    // success whose `error` is null.
    let log = concat!(
        r#"{"t0":1700000000.0,"t2":1700000001.0,"error":null}"#,
        "\n",
        r#"{"t0":1700000001.0,"t2":1700000002.0,"error":{"type":"RateLimitError","message":"slow down"}}"#,
        "\n",
        r#"{"t0":1700000002.0,"t2":1700000003.0,"error":{"type":"Timeout","message":"late"}}"#,
        "\n",
    );
    let map = |reason: &str| {
        let extra = [
            "--threads",
            "1",
            "--map",
            "error_when=error",
            "--map",
            reason,
        ];
        summary_t0_t2(&extra, log.as_bytes())
    };
    let out = map("reason=error");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "tokentime: --map reason=error: an object on 2 failed requests, not a reason (an error \
         class, a code or a message), so their reasons are not logged; map one of its members, \
         as in --map reason=error.type (its keys: message, type)\n"
    );
    // Mapped as advised: the reasons are read, and nothing is said.
    let out = map("reason=error.type");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("errors by reason: RateLimitError 1, Timeout 1")
    );
}

#[test]
fn mapped_paths_below_a_root_are_checked_below_it() {
    // The real llama-server responses, each under `response` in the lab's client log.
    let log = testdata().join("lab/llamacpp_timings.jsonl");
    let log = log.to_str().unwrap();
    let summary = |ttft: &str| {
        let ttft = format!("ttft={ttft}:ms");
        run(
            &[
                "summary",
                "--threads",
                "1",
                "--root",
                "response",
                "--map",
                &ttft,
                "--map",
                "decode=timings.predicted_ms:ms",
                "--map",
                "output_tokens=timings.predicted_n",
                log,
            ],
            b"",
        )
    };
    // Every path is there below the root: nothing to say.
    let out = summary("timings.prompt_ms");
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A typo is named with the paths close to it, as written below the root.
    let out = summary("timings.prompt_mss");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "--map ttft=timings.prompt_mss: not in any of the 16 request lines sampled, so what \
             it gives is null (not_logged); paths close to it: timings.prompt_ms, \
             timings.prompt_n"
        ),
        "{err}"
    );
}

#[test]
fn a_ttft_read_in_a_unit_too_large_for_the_instants_names_the_unit() {
    // TTFT in ms (250, 400) beside epoch-ms instants 2 s apart: read as seconds it is 125 and
    // 200 times the E2E, so every metric of both requests is out of order.
    let log = concat!(
        r#"{"start_ms":1700000000000,"end_ms":1700000002000,"ttft":250}"#,
        "\n",
        r#"{"start_ms":1700000001000,"end_ms":1700000003000,"ttft":400}"#,
        "\n",
    );
    let summary = |ttft: &str| {
        run(
            &[
                "summary",
                "--threads",
                "1",
                "--map",
                "arrival=start_ms:epoch_ms",
                "--map",
                "end=end_ms:epoch_ms",
                "--map",
                ttft,
            ],
            log.as_bytes(),
        )
    };
    let out = summary("ttft=ttft:s");
    assert!(String::from_utf8_lossy(&out.stdout).contains("chat:  no TTFT value (out_of_order 2)"));
    // Each request named with its times as logged, then the unit that explains them all.
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "<stdin>:1: instants out of order: start_ms 1700000000000 (arrival), end_ms \
         1700000002000 (end), ttft 250 (ttft), as custom reads them: which is wrong is unknown: \
         the metrics that need them are null, reason out_of_order\n\
         <stdin>:2: instants out of order: start_ms 1700000001000 (arrival), end_ms \
         1700000003000 (end), ttft 400 (ttft), as custom reads them: which is wrong is unknown: \
         the metrics that need them are null, reason out_of_order\n\
         tokentime: --map ttft=ttft: read as s, it is 10 times or more the E2E latency the \
         log's instants give on 2 of 2 requests, whose metrics are then null (out_of_order); if \
         the log writes ms, --map ttft=ttft:ms\n"
    );
    let out = summary("ttft=ttft:ms");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("chat:  TTFT p50 325.0ms"));
}

#[test]
fn diff_says_once_what_map_read_wrong_on_both_sides() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("ms.jsonl");
    // TTFT in ms beside epoch-ms instants 2 s apart, mapped as seconds.
    std::fs::write(
        &log,
        concat!(
            r#"{"start_ms":1700000000000,"end_ms":1700000002000,"ttft":250}"#,
            "\n",
            r#"{"start_ms":1700000001000,"end_ms":1700000003000,"ttft":400}"#,
            "\n",
        ),
    )
    .unwrap();
    let log = log.to_str().unwrap();
    let out = run(
        &[
            "diff",
            "--map",
            "arrival=start_ms:epoch_ms",
            "--map",
            "end=end_ms:epoch_ms",
            "--map",
            "ttft=ttft:s",
            log,
            log,
        ],
        b"",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.matches("--map ttft=ttft: read as s, it is 10 times or more")
            .count(),
        1,
        "{err}"
    );
}

#[test]
fn durations_a_thousand_times_off_either_way_are_named_by_their_medians() {
    let run_with = |first: [&str; 2], lat: [&str; 2]| {
        let log = format!(
            "{{\"t0\":1787334700,\"lat\":{},\"first\":{},\"out\":64}}\n\
             {{\"t0\":1787334710,\"lat\":{},\"first\":{},\"out\":64}}\n",
            lat[0], first[0], lat[1], first[1]
        );
        let args = [
            "summary",
            "--map",
            "arrival=t0:epoch_s",
            "--map",
            "e2e=lat",
            "--map",
            "ttft=first",
            "--map",
            "output_tokens=out",
        ];
        String::from_utf8(run(&args, log.as_bytes()).stderr).unwrap()
    };
    // Seconds read as ms: a median TTFT of 3.25 ms.
    let err = run_with(["3.2", "3.3"], ["26.4", "20.0"]);
    assert!(
        err.contains(
            "tokentime: --map ttft=first: read as ms, the median TTFT is 3250us, shorter than \
             any LLM request waits; if the log writes seconds, --map ttft=first:s\n"
        ),
        "{err}"
    );
    // Microseconds read as ms: a median TTFT of 3250 s, an E2E of 23200 s.
    let err = run_with(["3200000", "3300000"], ["26400000", "20000000"]);
    assert!(
        err.contains(
            "tokentime: --map ttft=first: read as ms, the median TTFT is 3250s, longer than \
             LLM servers let a request wait; if the log writes microseconds, --map \
             ttft=first:us\n"
        ) && err.contains(
            "tokentime: --map e2e=lat: read as ms, the median E2E latency is 23200s, longer \
             than LLM servers let a request run; if the log writes microseconds, --map \
             e2e=lat:us\n"
        ),
        "{err}"
    );
    // Plausible medians: nothing said.
    let err = run_with(["320", "330"], ["2640", "2000"]);
    assert!(!err.contains("median"), "{err}");
    // Milliseconds read as seconds: a median E2E of 23200 s.
    let log = "{\"t0\":1787334700,\"lat\":26400,\"first\":320}\n\
               {\"t0\":1787334710,\"lat\":20000,\"first\":330}\n";
    let args = [
        "summary",
        "--map",
        "arrival=t0:epoch_s",
        "--map",
        "e2e=lat:s",
        "--map",
        "ttft=first:s",
    ];
    let err = String::from_utf8(run(&args, log.as_bytes()).stderr).unwrap();
    assert_eq!(
        err,
        "tokentime: --map e2e=lat: read as s, the median E2E latency is 23200s, longer than \
         LLM servers let a request run; if the log writes ms, --map e2e=lat:ms\n"
    );
    // A queue read as s from ms: a median of 23200 s.
    let args = [
        "summary",
        "--map",
        "arrival=t0:epoch_s",
        "--map",
        "e2e=lat:ms",
        "--map",
        "queue=lat:s",
    ];
    let err = String::from_utf8(run(&args, log.as_bytes()).stderr).unwrap();
    assert!(
        err.contains(
            "tokentime: --map queue=lat: read as s, the median queue time is 23200s, longer than \
             LLM servers let a request wait; if the log writes ms, --map queue=lat:ms\n"
        ),
        "{err}"
    );
}

/// A line is a request when it has any mapped time field, whatever the order of the `--map`s:
/// a 504 logged with `"ttft_ms": null` is still a request (a failure), and a health line that
/// has only the time it was written is none. A record of `records=` likewise.
#[test]
fn any_mapped_time_field_makes_a_request() {
    let log = testdata().join("cases/files/fastapi-middleware.jsonl");
    let log = log.to_str().unwrap();
    let (ttft, e2e, ts) = (
        "ttft=ttft_ms:ms",
        "e2e=latency_ms:ms",
        "logged_at=ts:rfc3339",
    );
    // A summary with these `--map`s in this order.
    let mapped = |maps: &[&str], file: &str| -> String {
        let mut args = vec!["summary", "--threads", "1"];
        for m in maps {
            args.extend(["--map", m]);
        }
        args.push(file);
        String::from_utf8(run_ok(&args, b"")).unwrap()
    };
    for order in [[ttft, e2e, ts], [e2e, ttft, ts], [ts, ttft, e2e]] {
        let text = mapped(&[&order[..], &["error_when=status>=400"]].concat(), log);
        // r4 (504, no TTFT) and r7 (429) failed: 2 of 8; 6 completed over 8 s.
        assert!(text.starts_with("8 requests from "), "{order:?}\n{text}");
        assert!(
            text.contains(
                "\nerrors 2 (25.0%), 6 completed (0.75 requests/s); 8 lines (custom 8)\n"
            ),
            "{order:?}\n{text}"
        );
    }
    let health = testdata().join("cases/files/with-health.jsonl");
    for order in [[ts, ttft], [ttft, ts]] {
        let text = mapped(&order, health.to_str().unwrap());
        assert!(text.starts_with("2 requests from "), "{order:?}\n{text}");
        assert!(
            text.contains("(custom 2), no timing 3\n"),
            "{order:?}\n{text}"
        );
    }
    // x4's queue and TTFT are null, its total is there: a failed request (503).
    let batches = testdata().join("cases/files/batches.jsonl");
    let text = String::from_utf8(run_ok(
        &[
            "summary",
            "--map",
            "records=items[*]",
            "--map",
            "queue=t.queue_ns:ns",
            "--map",
            "ttft=t.ttft_s:s",
            "--map",
            "e2e=t.total_s:s",
            "--map",
            "output_tokens=tok.out",
            "--map",
            "error_when=error.status>=500",
            batches.to_str().unwrap(),
        ],
        b"",
    ))
    .unwrap();
    assert!(text.starts_with("5 requests "), "{text}");
    assert!(
        text.contains("\nerrors 1 (20.0%); 3 lines (custom 5)"),
        "{text}"
    );
}

/// A line with no mapped time field that a failure rule calls failed is a failed request
/// when it has the request's id (a 401 answered before any time was taken), with `--map` and
/// with the inferred format; the inferred format also reads each of two shapes of line.
#[test]
fn a_failure_without_times_is_a_failed_request() {
    let log = testdata().join("cases/files/gateway-errors.jsonl");
    let log = log.to_str().unwrap();
    // r2 (401, no latency), r4 (500, an error object, no latency), r5 (503, latency null).
    let explained = String::from_utf8(run_ok(&["summary", "--explain", log], b"")).unwrap();
    assert!(
        explained.contains("lines 6  requests 6  errors 3  non-JSON 0  no timing 0"),
        "{explained}"
    );
    assert!(explained.contains("formats: inferred 6"), "{explained}");
    // With an id mapped, and without an id, model or token count mapped (then a failure rule
    // alone makes the request).
    let with_id = ["ttft=ttft_ms:ms", "e2e=latency_ms:ms", "id=req_id"];
    for maps in [&with_id[..], &["e2e=latency_ms:ms"]] {
        let mut args = vec!["summary"];
        for m in maps.iter().chain(&["error_when=status>=400"]) {
            args.extend(["--map", m]);
        }
        args.push(log);
        let text = String::from_utf8(run_ok(&args, b"")).unwrap();
        assert!(
            text.contains("\nerrors 3 (50.0%); 6 lines (custom 6)\n"),
            "{maps:?}\n{text}"
        );
    }
    let shapes = testdata().join("cases/files/two-shapes.jsonl");
    let text = String::from_utf8(run_ok(&["summary", shapes.to_str().unwrap()], b"")).unwrap();
    assert!(text.starts_with("5 requests "), "{text}");
}

/// Go's `Duration.String()` past a minute (`"1m2.5s"`) reads as the sum of its parts, mapped
/// with `:duration` or found by the inferred format.
#[test]
fn go_durations_past_a_minute_are_read() {
    let log = br#"{"time":"2026-03-01T10:00:02.1+01:00","ttft":"412.3ms","duration":"2.1s","completion_tokens":85}
{"time":"2026-03-01T10:00:08.0+01:00","ttft":"1m2.5s","duration":"1m30s","completion_tokens":101}
"#;
    let mapped = String::from_utf8(run_ok(
        &[
            "--only-requests",
            "--map",
            "ttft=ttft:duration",
            "--map",
            "e2e=duration:duration",
        ],
        log,
    ))
    .unwrap();
    assert!(mapped.contains(r#""ttft_ms":62500.0"#), "{mapped}");
    assert!(mapped.contains(r#""e2e_ms":90000.0"#), "{mapped}");
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), log).unwrap();
    let inferred = String::from_utf8(run_ok(
        &["--only-requests", file.path().to_str().unwrap()],
        b"",
    ))
    .unwrap();
    assert!(inferred.contains(r#""ttft_ms":62500.0"#), "{inferred}");
}

/// A formats file's `skip_when` lines are counted apart from the lines of no timing: under its
/// `skip_label`, else `skipped by NAME`.
#[test]
fn a_formats_file_names_the_lines_it_skips() {
    let dir = tempfile::tempdir().unwrap();
    let log = concat!(
        r#"{"t0": 1765000001.0, "t2": 1765000001.5, "phase": "probe"}"#,
        "\n",
        r#"{"t0": 1765000002.0, "t2": 1765000002.25, "phase": "run"}"#,
        "\n",
        r#"{"other": 1}"#,
        "\n",
    );
    for (label, says) in [
        ("skip_label = \"health probes\"\n", "health probes 1"),
        ("", "skipped by probed 1"),
    ] {
        let f = dir.path().join("f.toml");
        std::fs::write(
            &f,
            format!(
                "[[format]]\nname = \"probed\"\nmarkers = [{{ present = \"t0\" }}]\n\
                 skip_when = [[{{ path = \"phase\", equals = \"probe\" }}]]\n{label}\
                 fields = [{{ field = \"arrival\", path = \"t0\", unit = \"epoch\" }}, \
                 {{ field = \"end\", path = \"t2\", unit = \"epoch\" }}]\n"
            ),
        )
        .unwrap();
        let out = run_ok(
            &["summary", "--formats", f.to_str().unwrap()],
            log.as_bytes(),
        );
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains(&format!("3 lines (probed 1), no timing 1, {says}\n")),
            "{text}"
        );
    }
    // `tokentime formats` shows the rule; a file without `about`, `ttft_doc` or `cache_doc`
    // gets no empty text, and its TTFT origin is its arrival_origin.
    let f = dir.path().join("f.toml");
    let out = run_ok(
        &["formats", "--formats", f.to_str().unwrap(), "probed"],
        b"",
    );
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "probed\n  detected by: t0\n  no request, counted as skipped by probed, when: phase == \"probe\"\n  \
         TTFT origin: arrival\n  arrival          epoch    t0\n  end              epoch    t2\n"
    );
}

/// A formats file's units and paths are checked as `--map`'s: a path no line has, an instant
/// read in the wrong scale, a date read as a number, a duration whose median no server takes,
/// each named on stderr with what to write in the file.
#[test]
fn a_formats_files_units_and_paths_are_checked_as_maps_are() {
    let dir = tempfile::tempdir().unwrap();
    // The end read as the log writes it, in epoch s.
    let toml = std::fs::read_to_string(testdata().join("custom/gateway.formats.toml"))
        .unwrap()
        .replace(
            r#"path = "ts.end", unit = "rfc3339""#,
            r#"path = "ts.end", unit = "epoch_s""#,
        )
        .replace(
            r#"path = "ts.first", unit = "rfc3339""#,
            r#"path = "ts.first", unit = "epoch_ms""#,
        );
    // The times as epoch ms (the first token's) and s (the end's).
    let mut log = String::new();
    for i in 0..20u64 {
        let t0 = 1_767_225_600_000 + i * 10_000;
        log.push_str(&format!(
            "{{\"ts\":{{\"start\":\"2026-01-01T00:00:{:02}Z\",\"first\":{},\"end\":{}}},\"http\":{{\"status\":200}},\"llm\":{{\"in\":100,\"cache_read\":0,\"out\":11,\"prefill\":1500}},\"stream\":true,\"model\":\"m\",\"id\":\"g-{i}\"}}\n",
            i * 2,
            t0 + 300,
            (t0 + 1300) as f64 / 1000.0
        ));
    }
    let input = dir.path().join("gw.jsonl");
    std::fs::write(&input, log).unwrap();
    let said = |toml: &str| {
        let f = dir.path().join("f.toml");
        std::fs::write(&f, toml).unwrap();
        let out = run(
            &[
                "summary",
                "--formats",
                f.to_str().unwrap(),
                input.to_str().unwrap(),
            ],
            b"",
        );
        String::from_utf8(out.stderr).unwrap()
    };
    let err = said(&toml.replace(
        r#"path = "ts.first", unit = "epoch_ms""#,
        r#"path = "ts.first", unit = "epoch_s""#,
    ));
    assert!(
        err.contains(
            "first_token: 1767225600300 is not a plausible time as gateway reads it (ts.first as epoch_s: before \
             2000 or after 2200); another unit may read it (unit = \"epoch_ms\", unit = \
             \"epoch_us\", unit = \"epoch_ns\"; unit = \"epoch\" tells them by magnitude)"
        ),
        "{err}"
    );
    let err = said(&toml.replace(
        r#"path = "ts.start", unit = "rfc3339""#,
        r#"path = "ts.start", unit = "epoch_ms""#,
    ));
    assert!(
        err.contains(
            "arrival \"2026-01-01T00:00:00Z\": present but not readable as gateway reads it \
             (ts.start as epoch_ms; a timestamp written as a date is read with unit = \
             \"rfc3339\" (unit = \"epoch\" reads either))"
        ),
        "{err}"
    );
    // The prefill, in ms, read as s.
    let fixed = toml.replace(
            r#"  { field = "output_tokens", path = "llm.out" },"#,
            "  { field = \"output_tokens\", path = \"llm.out\" },\n  { field = \"prefill\", path = \"llm.prefill\", unit = \"s\" },",
        );
    let err = said(&fixed);
    assert!(
        err.contains(
            "the format `gateway` reads prefill from llm.prefill as s, the median prefill time \
             is 1500s"
        ) && err.contains("give prefill unit = \"ms\" in the formats file"),
        "{err}"
    );
    // A path no request line has, a typo: named, with the one close to it.
    let err = said(&toml.replace(r#"path = "llm.out""#, r#"path = "llm.otu""#));
    assert!(
        err.contains(
            "the format `gateway` reads output_tokens from llm.otu: not in any of the 16 request \
             lines sampled, so what it gives is null (not_logged); paths close to it: llm.out"
        ),
        "{err}"
    );
    // A request key written as a field is named as the key it is.
    let err = said(&toml.replace(
        r#"  { field = "output_tokens", path = "llm.out" },"#,
        "  { field = \"output_tokens\", path = \"llm.out\" },\n  { field = \"model\", path = \"model\" },",
    ));
    assert!(
        err.contains("model is a key of the format, model = PATH or [PATHS], not a field"),
        "{err}"
    );
}

#[test]
fn a_typo_in_a_formats_files_marker_is_named_with_the_path_close_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let toml = std::fs::read_to_string(testdata().join("custom/gateway.formats.toml"))
        .unwrap()
        .replace(
            r#"{ present = "http.status" }"#,
            r#"{ present = "http.stauts" }"#,
        );
    let f = dir.path().join("f.toml");
    std::fs::write(&f, toml).unwrap();
    let log = testdata().join("custom/gateway.jsonl");
    let out = run(
        &[
            "summary",
            "--formats",
            f.to_str().unwrap(),
            log.to_str().unwrap(),
        ],
        b"",
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(
            "gateway.jsonl: no line was read as a request: the format `gateway` reads a line as \
             a request when it has ts.start and http.stauts (its markers); the first JSON line \
             has no http.stauts; its paths close to it: http.status"
        ),
        "{err}"
    );
}
