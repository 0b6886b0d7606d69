//! The whole enrich run (`tokentime::run`) on arbitrary input: framing, parsing, detection,
//! metrics, rendering and the splice together.
//!
//! Input layout: `[config, data...]`; `data` is written to a file that the run reads.
//!
//! Checked: the run succeeds (unless the data starts with a gzip or zstd magic number: then it
//! is a corrupt compressed stream and only must not panic); the output has exactly the input's lines, in order; each output
//! line is its input line unchanged, or with one insertion just before the closing `}`: a
//! comma (unless the object is empty), the key, and a JSON object or array; when the input line
//! is a JSON object, the output line is too, equal to it with the key set to the inserted
//! value; every inserted metric is null or a non-negative number. With `--only-requests`, the
//! output is exactly the enriched lines of the full run.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::OnceLock;
use tokentime::Config;
use tokentime::ExitCode;

const BOM: &[u8] = b"\xEF\xBB\xBF";

fn input_path() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        std::env::temp_dir().join(format!("tokentime-fuzz-{}.jsonl", std::process::id()))
    })
}

fn config_for(config: u8, only_requests: bool) -> Config {
    let root = if config & 0x02 != 0 {
        vec!["response".to_owned()]
    } else {
        vec![]
    };
    let max_line_bytes = if config & 0x04 != 0 {
        16 << 20
    } else {
        1 + usize::from(config >> 4) * 40
    };
    let mut args = vec![
        "tokentime".to_owned(),
        "--key".to_owned(),
        key(config).to_owned(),
        "--max-line-bytes".to_owned(),
        max_line_bytes.to_string(),
        "--max-diagnostics".to_owned(),
        "0".to_owned(),
    ];
    if !root.is_empty() {
        args.extend(["--root".to_owned(), root.join(".")]);
    }
    if only_requests {
        args.push("--only-requests".to_owned());
    }
    args.push(input_path().display().to_string());
    tokentime::config_from_args(args).expect("a valid configuration")
}

fn run(config: u8, only_requests: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let code =
        tokentime::run(&config_for(config, only_requests), &mut out).expect("the run succeeds");
    assert!(matches!(code, ExitCode::Ok));
    out
}

fn key(config: u8) -> &'static str {
    if config & 0x01 != 0 {
        "tt"
    } else {
        "tokentime"
    }
}

/// Splits a line into its body and its ending (`\r\n`, `\n` or nothing).
fn split_ending(line: &[u8]) -> (&[u8], &[u8]) {
    let n = if line.ends_with(b"\r\n") {
        2
    } else if line.ends_with(b"\n") {
        1
    } else {
        0
    };
    line.split_at(line.len() - n)
}

/// Checks that `out` is `inp` with one metrics member inserted before the closing brace, and
/// returns the inserted value.
fn check_spliced(inp: &[u8], out: &[u8], key: &str) -> Value {
    let (ibody, iend) = split_ending(inp);
    let (obody, oend) = split_ending(out);
    assert_eq!(iend, oend, "line ending changed");
    let close = ibody
        .iter()
        .rposition(|b| !b" \t\r".contains(b))
        .expect("a spliced line is not blank");
    assert_eq!(ibody[close], b'}', "spliced into a line not ending in }}");
    let tail = &ibody[close..];
    assert!(obody.len() > ibody.len(), "spliced line is not longer");
    assert!(
        obody.starts_with(&ibody[..close]),
        "bytes before the splice altered"
    );
    assert!(obody.ends_with(tail), "bytes after the splice altered");
    let inserted = &obody[close..obody.len() - tail.len()];
    let before = ibody[..close]
        .iter()
        .rev()
        .find(|b| !b" \t\r\n".contains(b));
    let member = if before == Some(&b'{') {
        inserted
    } else {
        inserted
            .strip_prefix(b",")
            .expect("a comma before the member of a non-empty object")
    };
    let name = format!("\"{key}\":");
    let value = member
        .strip_prefix(name.as_bytes())
        .unwrap_or_else(|| panic!("member starts with {name}"));
    let value: Value = serde_json::from_slice(value).expect("the inserted value is JSON");
    let objects = match &value {
        Value::Array(a) => a.clone(),
        o @ Value::Object(_) => vec![o.clone()],
        _ => panic!("inserted value is neither object nor array"),
    };
    for o in &objects {
        let o = o.as_object().expect("an object per request");
        assert!(o["format"].is_string());
        for m in [
            "ttft_ms",
            "tpot_ms",
            "e2e_ms",
            "queue_ms",
            "prefill_ms",
            "decode_ms",
        ] {
            match &o[m] {
                Value::Null => {}
                Value::Number(n) => assert!(n.as_f64().unwrap() >= 0.0, "{m}: {n}"),
                v => panic!("{m}: {v}"),
            }
        }
    }
    // Structurally, the output line is the input object with the key set (a null key of the
    // same name in the input is not a mark of enrichment; JSON's last duplicate wins).
    let ijson = ibody.strip_prefix(BOM).unwrap_or(ibody);
    if let Ok(Value::Object(mut want)) = serde_json::from_slice::<Value>(ijson) {
        let ojson = obody.strip_prefix(BOM).unwrap_or(obody);
        let got: Value = serde_json::from_slice(ojson).expect("enriched JSON line is JSON");
        want.insert(key.to_owned(), value.clone());
        assert_eq!(got, Value::Object(want), "structure changed");
    }
    value
}

fuzz_target!(|input: &[u8]| {
    let [config, data @ ..] = input else {
        return;
    };
    std::fs::write(input_path(), data).expect("write the input file");
    if data.starts_with(b"\x1f\x8b") || data.starts_with(b"\x28\xb5\x2f\xfd") {
        // Compressed by its magic bytes: arbitrary bytes after it are a corrupt stream, an
        // input error (exit 2), which must not panic.
        let _ = tokentime::run(&config_for(*config, false), Vec::new());
        return;
    }
    let out = run(*config, false);
    let ilines: Vec<&[u8]> = data.split_inclusive(|&b| b == b'\n').collect();
    let olines: Vec<&[u8]> = out.split_inclusive(|&b| b == b'\n').collect();
    assert_eq!(ilines.len(), olines.len(), "line count");
    let mut enriched = Vec::new();
    for (inp, outp) in ilines.iter().zip(&olines) {
        if inp != outp {
            check_spliced(inp, outp, key(*config));
            enriched.push(*outp);
        }
    }
    if config & 0x08 != 0 {
        let only = run(*config, true);
        let want: Vec<u8> = enriched.concat();
        assert_eq!(
            only, want,
            "--only-requests keeps exactly the enriched lines"
        );
    }
});
