//! Throughput of the parsing core, in bytes per second, on generated logs of each format and on
//! the real lab LiteLLM log (`testdata/lab`). Run with `cargo bench --bench parse`.
//!
//! - `lines`: splitting into lines with memchr, the floor (what `wc -l` does);
//! - `extract`: the path extraction alone, fast scanner and serde_json reference;
//! - `worker`: the whole per-line work of `tokentime summary` and of enrich (to a sink), on
//!   lines already in memory (no file reading);
//! - `sweep_overlapping`, `sweep_reversed`, `sweep_start_ordered`: the in-flight sweep on a
//!   log concatenated to itself, on one in reverse time order, and on a long one in start
//!   order (requests/s).
//!
//! The `otlp` corpus (one vLLM span a line) and `otlp-batched` (its lines 20 at a time in one
//! line, as a collector's file exporter batches them) go through the records walk: `worker`
//! on them measures cutting each line into its spans and reading each as a line.
//!
//! - `digest_add`: a million latency-like values (log-normal, two modes) added to one digest,
//!   past its exact limit, and its p99 read (values/s): the t-digest's batches, sorted and
//!   merged.
//! - `file_summary`: `tokentime summary FILE` whole, file reading and threads included, on 64 MB
//!   of generated LiteLLM lines in a file, at 1 and 2 threads (the two-thread path cuts it into
//!   chunks read by workers in turns).
//!
//! The end-to-end numbers on 1 GiB logs (stdin, `wc -l`, jq, DuckDB) come from
//! `benches/throughput.sh`.

use clap::Parser;
use divan::Bencher;
use divan::counter::BytesCount;
use std::sync::OnceLock;
use tokentime::Worker;
use tokentime::{Formats, builtins};
use tokentime::{PathSet, Slots};

fn main() {
    divan::main();
}

const CORPORA: [&str; 6] = [
    "litellm",
    "llamacpp",
    "vllm",
    "otlp",
    "otlp-batched",
    "lab-litellm",
];

/// A corpus: its bytes, and each line's range (newline excluded).
type Corpus = (Vec<u8>, Vec<(usize, usize)>);

/// About 8 MB of lines of `name`.
fn corpus(name: &str) -> &'static Corpus {
    static CACHE: OnceLock<Vec<Corpus>> = OnceLock::new();
    let all = CACHE.get_or_init(|| {
        CORPORA
            .iter()
            .map(|&c| {
                let mut bytes = Vec::new();
                if c == "lab-litellm" {
                    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/lab/litellm.jsonl");
                    let lab = std::fs::read(path).expect("testdata/lab/litellm.jsonl");
                    while bytes.len() < 8 << 20 {
                        bytes.extend_from_slice(&lab);
                    }
                } else if c == "otlp-batched" {
                    bytes = batched_otlp();
                } else {
                    bytes = generated(c, 8 << 20);
                }
                let mut lines = Vec::new();
                let mut start = 0;
                for nl in memchr::memchr_iter(b'\n', &bytes) {
                    lines.push((start, nl));
                    start = nl + 1;
                }
                (bytes, lines)
            })
            .collect()
    });
    &all[CORPORA.iter().position(|&c| c == name).expect("a corpus")]
}

/// About `size` bytes of generated lines of `format` (seed 1).
fn generated(format: &str, size: u64) -> Vec<u8> {
    let mut bytes = Vec::new();
    genlog::generate(format, 1, None, Some(size), &mut bytes)
        .expect("a known format")
        .expect("writing to memory");
    bytes
}

/// About 8 MB of generated OTLP lines, each 20 of them in one line: their `resourceSpans`
/// in one list.
fn batched_otlp() -> Vec<u8> {
    let one = generated("otlp", 8 << 20);
    let mut bytes = Vec::new();
    let lines: Vec<serde_json::Value> = one
        .split(|&b| b == b'\n')
        .filter_map(|l| serde_json::from_slice(l).ok())
        .collect();
    for batch in lines.chunks(20) {
        let spans: Vec<&serde_json::Value> = batch
            .iter()
            .filter_map(|l| l["resourceSpans"].get(0))
            .collect();
        serde_json::to_writer(&mut bytes, &serde_json::json!({ "resourceSpans": spans }))
            .expect("writing to memory");
        bytes.push(b'\n');
    }
    bytes
}

fn auto_paths() -> PathSet {
    let mut paths = PathSet::default();
    paths.add(&["tokentime"]);
    let _ = Formats::compile(builtins(), &[], &mut paths);
    paths
}

#[divan::bench(args = CORPORA)]
fn lines(bencher: Bencher, name: &str) {
    let (bytes, _) = corpus(name);
    bencher
        .counter(BytesCount::new(bytes.len()))
        .bench(|| memchr::memchr_iter(b'\n', divan::black_box(bytes)).count());
}

#[divan::bench(args = CORPORA)]
fn extract_fast(bencher: Bencher, name: &str) {
    let (bytes, lines) = corpus(name);
    let paths = auto_paths();
    let mut slots = Slots::default();
    bencher
        .counter(BytesCount::new(bytes.len()))
        .bench_local(|| {
            lines
                .iter()
                .filter(|&&(a, b)| paths.extract(&bytes[a..b], &mut slots).is_ok())
                .count()
        });
}

#[divan::bench(args = CORPORA)]
fn extract_reference(bencher: Bencher, name: &str) {
    let (bytes, lines) = corpus(name);
    let paths = auto_paths();
    let mut slots = Slots::default();
    bencher
        .counter(BytesCount::new(bytes.len()))
        .bench_local(|| {
            lines
                .iter()
                .filter(|&&(a, b)| paths.extract_reference(&bytes[a..b], &mut slots).is_ok())
                .count()
        });
}

fn worker(args: &[&str]) -> Worker<'static> {
    let config = tokentime::Cli::try_parse_from(args)
        .expect("valid arguments")
        .resolve()
        .expect("a valid configuration");
    Worker::new(&config)
}

fn run_lines(w: &mut Worker, bytes: &[u8], lines: &[(usize, usize)]) {
    let mut sink = std::io::sink();
    for (i, &(a, b)) in lines.iter().enumerate() {
        let _ = w.line(i as u64 + 1, b"", &bytes[a..b], b"\n", &mut sink);
    }
}

/// A fresh worker per run: one reused would see the same times again on every run, a log
/// concatenated to itself (that case is `sweep_overlapping`).
#[divan::bench(args = CORPORA)]
fn worker_summary(bencher: Bencher, name: &str) {
    let (bytes, lines) = corpus(name);
    bencher
        .counter(BytesCount::new(bytes.len()))
        .with_inputs(|| worker(&["tokentime", "summary"]))
        .bench_local_values(|mut w| {
            run_lines(&mut w, bytes, lines);
            w
        });
}

/// `size` bytes of generated LiteLLM lines written to the file `name` under cargo's temporary
/// directory; its path and size.
fn generated_file(name: &str, size: u64) -> (String, usize) {
    let path = format!("{}/{name}", env!("CARGO_TARGET_TMPDIR"));
    let bytes = generated("litellm", size);
    std::fs::write(&path, &bytes).expect("writing a generated file");
    (path, bytes.len())
}

/// About 64 MB of generated LiteLLM lines in a file, written once (the report's analysis, a
/// fixed cost, is a small part of a run on it); its path and size.
fn corpus_file() -> &'static (String, usize) {
    static FILE: OnceLock<(String, usize)> = OnceLock::new();
    FILE.get_or_init(|| generated_file("bench-litellm-64M.jsonl", 64 << 20))
}

/// About 4 MB of generated LiteLLM lines in a file, written once: on a log this small the
/// report, its analysis most of all, is most of a summary's time.
fn small_file() -> &'static (String, usize) {
    static FILE: OnceLock<(String, usize)> = OnceLock::new();
    FILE.get_or_init(|| generated_file("bench-litellm-4M.jsonl", 4 << 20))
}

/// `args` run as the command line runs them, the output written to a sink; `len` input bytes.
fn run_command(bencher: Bencher, args: &[&str], len: usize) {
    let config = tokentime::Cli::try_parse_from(args)
        .expect("valid arguments")
        .resolve()
        .expect("a valid configuration");
    bencher
        .counter(BytesCount::new(len))
        .bench_local(|| tokentime::run(&config, std::io::sink()).expect("a run"));
}

/// `tokentime summary --threads N FILE` on [`corpus_file`].
#[divan::bench(args = [1, 2], sample_count = 20)]
fn file_summary(bencher: Bencher, threads: usize) {
    let (path, len) = corpus_file();
    let threads = threads.to_string();
    run_command(
        bencher,
        &["tokentime", "summary", "--threads", &threads, path],
        *len,
    );
}

/// `tokentime summary --threads 1 FILE` on [`small_file`], the compact report (the findings it
/// shows) and the full one (`--explain`: every group's findings).
#[divan::bench(args = ["compact", "explain"], sample_count = 20)]
fn small_file_summary(bencher: Bencher, report: &str) {
    let (path, len) = small_file();
    let mut args = vec!["tokentime", "summary", "--threads", "1", path];
    if report == "explain" {
        args.push("--explain");
    }
    run_command(bencher, &args, *len);
}

/// The in-flight sweep over a log in reverse time order (an export sorted newest first): every
/// event lands behind the sweep. Requests per second.
#[divan::bench]
fn sweep_reversed(bencher: Bencher) {
    let reqs: Vec<(i64, i64, i64)> = (0..400_000i64)
        .rev()
        .map(|i| {
            let t = i * 10_000_000;
            (t, t + 2_000_000_000 + (i % 7) * 100_000_000, 1_000_000_000)
        })
        .collect();
    bencher
        .counter(divan::counter::ItemsCount::new(reqs.len()))
        .bench_local(|| {
            let mut sweep = tokentime::Sweep::new(500_000);
            for &(s, e, d) in &reqs {
                sweep.push(s, e, Some((d, ())));
            }
            sweep.finish();
            sweep.drain().count()
        });
}

/// The in-flight sweep over a log concatenated to itself 20 times (replicas' logs one after
/// another, `cat day.jsonl day.jsonl`): from the second copy on every request starts behind
/// the sweep, and decodes in progress pile up. Requests per second.
#[divan::bench]
fn sweep_overlapping(bencher: Bencher) {
    let mut block = Vec::new();
    let mut x: u64 = 1;
    let mut next = |n: u64| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((x >> 33) % n) as i64
    };
    for i in 0..20_000i64 {
        let t = i * 50_000_000 + next(50_000_000);
        let len = 1 + next(30_000_000_000);
        block.push((t, t + len, next(len as u64 + 1)));
    }
    block.sort_by_key(|r| r.1);
    bencher
        .counter(divan::counter::ItemsCount::new(block.len() * 20))
        .bench_local(|| {
            let mut sweep = tokentime::Sweep::new(500_000);
            for _ in 0..20 {
                for &(s, e, d) in &block {
                    sweep.push(s, e, Some((d, ())));
                }
            }
            sweep.finish();
            sweep.drain().count()
        });
}

/// The in-flight sweep over a gateway log in start order, as the generated LiteLLM logs are:
/// 260 requests a second, lengths log-normal (median 4.7 s, up to 214 s), three in four with a
/// decode (the last 95 % of the request) and a 32-byte payload like a summary's. The sweep
/// lags twice the longest request behind, so some 115k requests wait (megabytes: the case
/// where cache misses, not instructions, cost). Requests per second.
#[divan::bench(sample_count = 20)]
fn sweep_start_ordered(bencher: Bencher) {
    let mut x: u64 = 3;
    let mut uniform = || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 11) as f64 / (1u64 << 53) as f64
    };
    let reqs: Vec<(i64, i64, Option<i64>)> = (0..600_000i64)
        .map(|i| {
            // A normal deviate as the sum of 12 uniforms, less 6.
            let z: f64 = (0..12).map(|_| uniform()).sum::<f64>() - 6.0;
            let len = (4.7e9 * (0.9 * z).exp()).min(214e9) as i64 + 1;
            let start = i * 3_846_154 + (uniform() * 3e6) as i64;
            let decode = (uniform() < 0.75).then_some(len * 95 / 100);
            (start, start + len, decode)
        })
        .collect();
    bencher
        .counter(divan::counter::ItemsCount::new(reqs.len()))
        .bench_local(|| {
            let mut sweep = tokentime::Sweep::new(500_000);
            let mut sum = 0u64;
            for (i, &(s, e, d)) in reqs.iter().enumerate() {
                let payload = ([i as u32; 4], i as u64, 0.5f64);
                sweep.push(s, e, d.map(|d| (d, payload)));
                sum += sweep.drain().map(|(_, p)| p.1).sum::<u64>();
            }
            sweep.finish();
            sum + sweep.drain().map(|(_, p)| p.1).sum::<u64>()
        });
}

/// A million latency-like values in seconds: two log-normal modes (a prefix-cache hit and a
/// miss), from a fixed xorshift sequence.
fn latencies() -> &'static [f64] {
    static V: OnceLock<Vec<f64>> = OnceLock::new();
    V.get_or_init(|| {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut uniform = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        (0..1_000_000)
            .map(|_| {
                // Box-Muller: a standard normal.
                let z = (-2.0 * uniform().ln()).sqrt() * (std::f64::consts::TAU * uniform()).cos();
                let (mu, sigma) = if uniform() < 0.4 {
                    (-2.5, 0.3)
                } else {
                    (-0.5, 0.5)
                };
                (mu + sigma * z).exp()
            })
            .collect()
    })
}

#[divan::bench(sample_count = 20)]
fn digest_add(bencher: Bencher) {
    let values = latencies();
    bencher
        .counter(divan::counter::ItemsCount::new(values.len()))
        .bench_local(|| {
            let mut d = tokentime::Digest::default();
            for &v in values {
                d.add(v);
            }
            d.quantile(0.99)
        });
}

#[divan::bench(args = CORPORA)]
fn worker_enrich(bencher: Bencher, name: &str) {
    let (bytes, lines) = corpus(name);
    let mut w = worker(&["tokentime"]);
    bencher
        .counter(BytesCount::new(bytes.len()))
        .bench_local(|| run_lines(&mut w, bytes, lines));
}
