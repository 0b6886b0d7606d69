//! genlog's command line: writes a deterministic, realistic JSON-lines log of an LLM server or
//! gateway to standard output, for benchmarks (`benches/throughput.sh`) and by hand. The
//! generator is the dev-only crate `genlog/` (see its docs for the formats and scenarios).
//!
//! ```sh
//! cargo run --release --example genlog -- --format litellm --lines 1000000 --seed 7 > litellm.jsonl
//! cargo run --release --example genlog -- --format vllm --bytes 1G --seed 7 > vllm.jsonl
//! cargo run --release --example genlog -- --format vllm --ttft-modes 80:0.6,1500:0.4 > modes.jsonl
//! ```

use genlog::{Growth, Scenario, generate_scenario, parse_modes};
use std::io::{self, BufWriter, Write};

fn parse_size(s: &str) -> Option<u64> {
    let (num, mult) = match s.as_bytes().last()? {
        b'K' | b'k' => (&s[..s.len() - 1], 1u64 << 10),
        b'M' | b'm' => (&s[..s.len() - 1], 1 << 20),
        b'G' | b'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    Some(num.parse::<u64>().ok()? * mult)
}

fn usage() -> ! {
    eprintln!(
        "usage: genlog --format litellm|llamacpp|vllm|otlp [--lines N | --bytes SIZE(K|M|G)] [--seed S]\n\
         \x20      [--ttft-modes MS:SHARE[,MS:SHARE...]] [--ttft-sigma S] [--mode-cache tied|random]\n\
         \x20      [--scenario default|queue-growth|prompt-growth]"
    );
    std::process::exit(2)
}

fn main() -> io::Result<()> {
    let mut format = String::from("litellm");
    let mut lines = None;
    let mut bytes = None;
    let mut seed = 1u64;
    let mut scenario = Scenario::default();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let v = args.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--format" => format = v,
            "--lines" => lines = Some(v.parse::<u64>().unwrap_or_else(|_| usage())),
            "--bytes" => bytes = Some(parse_size(&v).unwrap_or_else(|| usage())),
            "--seed" => seed = v.parse().unwrap_or_else(|_| usage()),
            "--ttft-modes" => scenario.ttft_modes = parse_modes(&v).unwrap_or_else(|| usage()),
            "--ttft-sigma" => scenario.ttft_sigma = v.parse().unwrap_or_else(|_| usage()),
            "--mode-cache" => {
                scenario.mode_cache_random = match v.as_str() {
                    "tied" => false,
                    "random" => true,
                    _ => usage(),
                }
            }
            "--scenario" => {
                scenario.growth = match v.as_str() {
                    "default" => Growth::None,
                    "queue-growth" => Growth::Queue,
                    "prompt-growth" => Growth::Prompt,
                    _ => usage(),
                }
            }
            _ => usage(),
        }
    }
    if lines.is_none() && bytes.is_none() {
        lines = Some(1000);
    }
    let stdout = io::stdout();
    let mut w = BufWriter::with_capacity(1 << 20, stdout.lock());
    generate_scenario(&format, seed, lines, bytes, &scenario, &mut w).unwrap_or_else(|| usage())?;
    w.flush()
}
