//! Golden outputs: every command's stdout, stderr and exit status on every testdata input and
//! on generated logs, compared byte for byte with what was recorded in `testdata/golden/`.
//!
//! Output bytes change only on purpose. When they do, rerun with `TOKENTIME_BLESS=1 cargo test
//! --test it golden::` and review the diff of `testdata/golden/` like code. Outputs over 64
//! KiB are recorded as their length and FNV-1a hash, the rest in full.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common;

/// How one input is run: a name, the arguments before the input, and whether the input comes
/// as a FILE argument or on stdin.
struct Variant {
    name: &'static str,
    args: &'static [&'static str],
    stdin: bool,
}

const fn v(name: &'static str, args: &'static [&'static str]) -> Variant {
    Variant {
        name,
        args,
        stdin: false,
    }
}

const fn piped(name: &'static str, args: &'static [&'static str]) -> Variant {
    Variant {
        name,
        args,
        stdin: true,
    }
}

/// The variants run on every input. Enrich and per-request rows must not depend on the thread
/// count, so both counts are checked against one recording; summaries are recorded per count.
const VARIANTS: &[Variant] = &[
    v("enrich", &["--threads", "1"]),
    v("enrich", &["--threads", "2"]),
    piped("enrich.stdin", &["--threads", "2"]),
    v("rows-csv", &["--threads", "1", "-o", "csv"]),
    v("rows-csv", &["--threads", "2", "-o", "csv"]),
    v(
        "rows-jsonl",
        &["--threads", "2", "-o", "jsonl", "--only-requests"],
    ),
    // The full table report (`--explain`), and the compact default below.
    v("summary.t1", &["summary", "--explain", "--threads", "1"]),
    v("summary.t2", &["summary", "--explain", "--threads", "2"]),
    piped("summary.stdin", &["summary", "--explain"]),
    v(
        "summary-json.t1",
        &["summary", "--threads", "1", "-o", "json"],
    ),
    v(
        "summary-json.t2",
        &["summary", "--threads", "2", "-o", "json"],
    ),
    v("summary-csv", &["summary", "--threads", "1", "-o", "csv"]),
    v("summary-tsv", &["summary", "--threads", "2", "-o", "tsv"]),
    v(
        "summary-prometheus",
        &["summary", "--threads", "1", "-o", "prometheus"],
    ),
    v(
        "summary-by-model",
        &["summary", "--explain", "--threads", "1", "--by", "model"],
    ),
    v(
        "summary-hist-json",
        &["summary", "--threads", "2", "--hist", "-o", "json"],
    ),
    v(
        "summary-every",
        &["summary", "--explain", "--threads", "1", "--every", "1h"],
    ),
    v(
        "summary-bucket",
        &["summary", "--threads", "2", "--bucket", "1h", "-o", "json"],
    ),
    v(
        "summary-slo",
        &[
            "summary",
            "--explain",
            "--threads",
            "1",
            "--for",
            "chat",
            "--slo",
            "ttft:p99<=800ms",
            "--slo",
            "e2e:p50<=20s@cache=miss",
            "--goodput",
            "ttft=1s,tpot=50ms",
        ],
    ),
    v("summary-compact", &["summary", "--threads", "1"]),
    v("summary-compact", &["summary", "--threads", "2"]),
    v(
        "summary-compact-by-model",
        &["summary", "--threads", "1", "--by", "model"],
    ),
    v(
        "summary-compact-every",
        &["summary", "--threads", "1", "--every", "1h"],
    ),
    v(
        "summary-compact-goodput",
        &[
            "summary",
            "--threads",
            "2",
            "--goodput",
            "ttft=1s,tpot=50ms",
        ],
    ),
    v(
        "summary-bucket-table",
        &["summary", "--threads", "2", "--bucket", "1h"],
    ),
];

/// Runs tokentime in the repository root (so paths in messages are relative and stable).
fn run(args: &[String], stdin: Option<&Path>) -> (i32, Vec<u8>, Vec<u8>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tokentime"));
    cmd.current_dir(root).args(args);
    cmd.env_remove("COLUMNS").env_remove("NO_COLOR");
    cmd.stdin(match stdin {
        Some(p) => Stdio::from(std::fs::File::open(root.join(p)).unwrap()),
        None => Stdio::null(),
    });
    let out = cmd.output().expect("spawn tokentime");
    (out.status.code().unwrap_or(-1), out.stdout, out.stderr)
}

/// The wall-clock time and elapsed seconds that `--every` prints in its headers, replaced by a
/// placeholder: everything else in the output must be the same from run to run.
fn wall_clock_free(bytes: &[u8]) -> Vec<u8> {
    let re = regex::bytes::Regex::new(r"at \d{4}-\d\d-\d\dT[\d:.]+Z \(\d+s elapsed\)").unwrap();
    re.replace_all(bytes, &b"at WALL-CLOCK (ELAPSED)"[..])
        .into_owned()
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// One output as recorded: in full while small, else its length and hash.
fn record(out: &mut String, what: &str, bytes: &[u8]) {
    if bytes.len() > 96 * 1024 {
        let _ = writeln!(
            out,
            "--- {what}: {} bytes, fnv1a {:016x}",
            bytes.len(),
            fnv1a(bytes)
        );
    } else {
        let _ = writeln!(out, "--- {what}: {} bytes", bytes.len());
        out.push_str(&String::from_utf8_lossy(bytes));
        if !bytes.ends_with(b"\n") && !bytes.is_empty() {
            out.push_str("\n\\ no newline at end\n");
        }
    }
}

/// Every variant of `input` (a path relative to the repository root), as one text.
fn golden_of(input: &str, extra: &[&str]) -> String {
    let mut text = String::new();
    let mut seen: Vec<(&str, String)> = vec![];
    let digest = format!("target/golden-tmp/{}.digest", input.replace('/', "_"));
    std::fs::create_dir_all(Path::new(env!("CARGO_MANIFEST_DIR")).join("target/golden-tmp"))
        .unwrap();
    for var in VARIANTS {
        let mut args: Vec<String> = var.args.iter().map(|s| s.to_string()).collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        let stdin = if var.stdin {
            args.push("-".into());
            Some(Path::new(input))
        } else {
            args.push(input.into());
            None
        };
        let (code, stdout, stderr) = run(&args, stdin);
        let stdout = wall_clock_free(&stdout);
        let mut block = String::new();
        let _ = writeln!(block, "exit {code}");
        record(&mut block, "stdout", &stdout);
        record(&mut block, "stderr", &stderr);
        let how = if var.stdin { " < FILE" } else { " FILE" };
        if let Some((_, prev)) = seen.iter().find(|(n, _)| *n == var.name) {
            // Same recording for another thread count or stdin: must match the first.
            assert_eq!(
                prev,
                &block,
                "{input}: `{}`{how} differs from the first run of {}",
                args.join(" "),
                var.name
            );
            continue;
        }
        let _ = writeln!(text, "=== {} ({}{how})", var.name, var.args.join(" "));
        text.push_str(&block);
        seen.push((var.name, block));
    }
    // A digest saved and merged back: the merged summary as a table and as JSON.
    let mut save: Vec<String> = ["summary", "--threads", "2", "--save-digest", &digest]
        .iter()
        .map(|s| s.to_string())
        .collect();
    save.extend(extra.iter().map(|s| s.to_string()));
    save.push(input.into());
    let (code, _, stderr) = run(&save, None);
    let _ = writeln!(text, "=== save-digest\nexit {code}");
    record(&mut text, "stderr", &stderr);
    for (name, args) in [
        ("merge", vec!["merge", "--explain", digest.as_str()]),
        ("merge-json", vec!["merge", "-o", "json", digest.as_str()]),
        ("merge-compact", vec!["merge", digest.as_str()]),
    ] {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let (code, stdout, stderr) = run(&args, None);
        let _ = writeln!(text, "=== {name}\nexit {code}");
        record(&mut text, "stdout", &stdout);
        record(&mut text, "stderr", &stderr);
    }
    text
}

/// The inputs: every testdata log (not the expected outputs, READMEs or format files) and the
/// generated logs, with the extra arguments some need.
pub(crate) fn inputs() -> Vec<(String, Vec<&'static str>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut list = vec![];
    for p in common::testdata_files(&["jsonl", "json", "gz", "zst", "log"]) {
        let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        if rel.starts_with("testdata/golden/")
            || rel.ends_with(".expected.jsonl")
            || rel.ends_with(".formats.json")
            || rel.contains("/cases/")
        {
            continue;
        }
        let extra = if rel.starts_with("testdata/custom/") {
            vec!["--formats", "testdata/custom/gateway.formats.toml"]
        } else {
            vec![]
        };
        list.push((rel, extra));
    }
    for g in generated() {
        list.push((g, vec![]));
    }
    list
}

/// Generated logs of each genlog format, written under `target/` (the same seed gives the same
/// bytes).
fn generated() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("target/golden-tmp");
    std::fs::create_dir_all(&dir).unwrap();
    let mut out = vec![];
    for format in ["litellm", "llamacpp", "vllm", "otlp"] {
        let mut bytes = vec![];
        genlog::generate(format, 11, Some(3_000), None, &mut bytes)
            .unwrap()
            .unwrap();
        let rel = format!("target/golden-tmp/generated-{format}.jsonl");
        std::fs::write(root.join(&rel), &bytes).unwrap();
        out.push(rel);
    }
    out
}

fn golden_path(input: &str) -> PathBuf {
    let name = input
        .trim_start_matches("testdata/")
        .trim_start_matches("target/golden-tmp/")
        .replace('/', "__");
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/golden")
        .join(format!("{name}.txt"))
}

fn formats_golden() -> String {
    let mut text = String::new();
    for args in [vec!["formats"], vec!["formats", "litellm", "vllm-otlp"]] {
        let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let (code, stdout, stderr) = run(&a, None);
        let _ = writeln!(text, "=== {}\nexit {code}", args.join(" "));
        record(&mut text, "stdout", &stdout);
        record(&mut text, "stderr", &stderr);
    }
    text
}

#[test]
fn golden_outputs_are_unchanged() {
    let bless = std::env::var_os("TOKENTIME_BLESS").is_some();
    let mut jobs: Vec<(PathBuf, Box<dyn Fn() -> String + Send + Sync>)> = vec![(
        golden_path("formats"),
        Box::new(formats_golden) as Box<dyn Fn() -> String + Send + Sync>,
    )];
    for (input, extra) in inputs() {
        let path = golden_path(&input);
        jobs.push((path, Box::new(move || golden_of(&input, &extra))));
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(vec![]);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((path, job)) = jobs.get(i) else {
                        break;
                    };
                    let got = job();
                    if bless {
                        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                        std::fs::write(path, &got).unwrap();
                        continue;
                    }
                    let want = std::fs::read_to_string(path).unwrap_or_default();
                    if want != got {
                        let bad = path.with_extension("txt.new");
                        std::fs::write(&bad, &got).unwrap();
                        failures.lock().unwrap().push(format!(
                            "{} differs (got: {})",
                            path.display(),
                            bad.display()
                        ));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "golden outputs changed:\n{}",
        failures.join("\n")
    );
}
