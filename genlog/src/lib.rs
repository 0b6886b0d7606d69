//! genlog: a deterministic generator of realistic JSON-lines logs of LLM servers and gateways,
//! for benchmarks and tests: a dev-only crate of tokentime's (its tests and benches call
//! [`generate`]; `examples/genlog.rs` is its command line).
//!
//! ```sh
//! cargo run --release --example genlog -- --format litellm --lines 1000000 --seed 7 > litellm.jsonl
//! cargo run --release --example genlog -- --format vllm --bytes 1G --seed 7 > vllm.jsonl
//! ```
//!
//! Formats: `litellm` (a trimmed LiteLLM StandardLoggingPayload, Python `json.dumps` style),
//! `llamacpp` (llama-server responses with `timings`), `vllm` (responses with the per-request
//! `metrics` object), `otlp` (vLLM `llm_request` spans as OTLP/JSON, one span per line).
//! Lines are about 1 KB. The same `--seed` gives the same bytes (tests compare them: change
//! nothing that changes them).
//!
//! What the numbers look like, so summaries have something to find:
//! - concurrency drifts between 1 and 64 over log time; queue time and TPOT rise with it;
//! - TTFT is bimodal: prefix-cache hits (most of the prompt cached) prefill only the tail of
//!   the prompt, misses prefill all of it (a few partial hits share only a template header);
//! - about 3% of requests fail (no first token), about 1% of LiteLLM calls are answered by its
//!   response cache, and about 2% of lines are not requests (access-log text, health checks).
//!
//! Scenarios (for the analysis tests; without these flags the output is unchanged):
//! - `--ttft-modes 80:0.6,1500:0.4` draws each request's TTFT from a mixture of log-normals
//!   with these medians (ms) and shares, each of spread `--ttft-sigma` (natural-log standard
//!   deviation, default 0.25). One mode is exactly one log-normal: `--ttft-modes 400:1
//!   --ttft-sigma 0.8` is a unimodal log-normal TTFT. Requests of the first mode are
//!   prefix-cache hits and the others misses (`--mode-cache tied`, the default), or the cache
//!   class is drawn as usual whatever the mode (`--mode-cache random`). The TTFT a format
//!   logs is the draw itself (queue under 0.5 ms, the rest prefill).
//! - `--scenario queue-growth`: the concurrency rises from 1 to 64 over the log and the queue
//!   time with it (log-normal, median 40 ms per request in flight); prompts and prefill do not
//!   change.
//! - `--scenario prompt-growth`: 4 requests in flight throughout (queue under 2 ms) while the
//!   median prompt grows from 200 to 12,000 tokens over the log, and the prefill with it.
//!
//! The growth scenarios measure progress through the log by `--lines` (or `--bytes` / 1 KB).

use std::io::{self, Write};

/// SplitMix64: tiny, fast, and identical on every platform (also used by the digest accuracy
/// tests, `tests/it/digest_accuracy.rs`).
pub struct Rng(pub u64);

impl Rng {
    /// The next word of the stream.
    pub fn word(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    fn f(&mut self) -> f64 {
        (self.word() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// A word below `n` (not 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.word() % n
    }
    fn chance(&mut self, p: f64) -> bool {
        self.f() < p
    }
    /// Standard normal (Box-Muller).
    fn normal(&mut self) -> f64 {
        let u = self.f().max(1e-300);
        let v = self.f();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
    /// Log-normal with the given median and shape.
    pub fn lognormal(&mut self, median: f64, sigma: f64) -> f64 {
        median * (sigma * self.normal()).exp()
    }
    fn hex(&mut self, out: &mut String, n: usize) {
        const H: &[u8; 16] = b"0123456789abcdef";
        for _ in 0..n {
            out.push(H[self.below(16) as usize] as char);
        }
    }
    fn alnum(&mut self, out: &mut String, n: usize) {
        const A: &[u8; 62] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        for _ in 0..n {
            out.push(A[self.below(62) as usize] as char);
        }
    }
}

const WORDS: &[&str] = &[
    "the",
    "model",
    "token",
    "cache",
    "prefix",
    "request",
    "latency",
    "server",
    "batch",
    "queue",
    "prompt",
    "decode",
    "summary",
    "explain",
    "write",
    "a",
    "short",
    "story",
    "about",
    "solar",
    "panels",
    "and",
    "how",
    "they",
    "work",
    "in",
    "winter",
    "please",
    "list",
    "three",
    "reasons",
    "why",
    "database",
    "index",
    "is",
    "slow",
    "translate",
    "this",
    "into",
    "French",
    "code",
    "review",
    "function",
    "returns",
    "error",
    "when",
    "input",
    "empty",
    "customer",
    "ticket",
    "refund",
    "order",
    "shipping",
    "delayed",
    "weather",
    "tomorrow",
    "recipe",
    "pasta",
    "garlic",
    "quantum",
    "computing",
    "for",
    "beginners",
    "with",
    "examples",
    "café",
    "naïve",
    "über",
];

fn words(rng: &mut Rng, out: &mut String, n: usize) {
    for i in 0..n {
        if i > 0 {
            out.push(' ');
        }
        let w = WORDS[rng.below(WORDS.len() as u64) as usize];
        out.push_str(w);
    }
}

/// Writes `s` as the body of a JSON string; `ascii` escapes non-ASCII as Python's json.dumps.
fn esc(out: &mut String, s: &str, ascii: bool) {
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if ascii && !c.is_ascii() => {
                let mut b = [0u16; 2];
                for u in c.encode_utf16(&mut b) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
            c => out.push(c),
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Format {
    Litellm,
    Llamacpp,
    Vllm,
    Otlp,
}

struct Model {
    name: &'static str,
    /// Decode time per token at concurrency 1, ms.
    tpot_ms: f64,
    /// Prefill time per uncached prompt token, ms.
    prefill_ms_per_token: f64,
}

const MODELS: &[Model] = &[
    Model {
        name: "llama-3.1-8b-instruct",
        tpot_ms: 9.0,
        prefill_ms_per_token: 0.08,
    },
    Model {
        name: "qwen2.5-32b-instruct",
        tpot_ms: 24.0,
        prefill_ms_per_token: 0.30,
    },
    Model {
        name: "gpt-oss-20b",
        tpot_ms: 14.0,
        prefill_ms_per_token: 0.15,
    },
];

/// How the generated log departs from the default mix (see the module docs).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scenario {
    /// TTFT modes: (median ms, share).
    pub ttft_modes: Vec<(f64, f64)>,
    /// Natural-log spread of each TTFT mode (0 for the default, 0.25).
    pub ttft_sigma: f64,
    /// With TTFT modes: the cache class is drawn whatever the mode (not tied to it).
    pub mode_cache_random: bool,
    /// The load over the log.
    pub growth: Growth,
}

/// How load or prompts change over the log.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub enum Growth {
    /// The default random walk of the concurrency.
    #[default]
    None,
    /// Concurrency 1 to 64 and queue time with it.
    Queue,
    /// Median prompt 200 to 12,000 tokens, no queue.
    Prompt,
}

/// One simulated request, in ms relative to its arrival.
struct Req {
    arrival_s: f64,
    model: &'static Model,
    prompt_tokens: u64,
    cached_tokens: u64,
    output_tokens: u64,
    queue_ms: f64,
    prefill_ms: f64,
    decode_ms: f64,
    stream: bool,
    failed: bool,
    response_cache: bool,
    /// The TTFT a scenario fixed (ms), logged as is.
    ttft_ms: Option<f64>,
}

struct Sim {
    rng: Rng,
    t: f64,
    concurrency: f64,
    scenario: Scenario,
    /// Requests generated so far, and the number expected (for the growth scenarios).
    n: u64,
    total: u64,
}

impl Sim {
    fn new(seed: u64) -> Sim {
        let mut rng = Rng(seed ^ 0x5DEE_CE66_D1CE_5EED);
        let t = 1_780_000_000.0 + rng.below(10_000_000) as f64;
        Sim {
            rng,
            t,
            concurrency: 8.0,
            scenario: Scenario::default(),
            n: 0,
            total: 1,
        }
    }

    fn request(&mut self) -> Req {
        if self.scenario != Scenario::default() {
            return self.scenario_request();
        }
        let r = &mut self.rng;
        // Concurrency: a bounded random walk, so there are calm and busy stretches.
        self.concurrency = (self.concurrency + r.normal() * 0.7).clamp(1.0, 64.0);
        let c = self.concurrency;
        self.t += r.f() * 0.02 / (1.0 + c / 16.0);
        let model = &MODELS[r.below(MODELS.len() as u64) as usize];
        let prompt_tokens = (r.lognormal(700.0, 0.8) as u64).clamp(12, 16_000);
        let class = r.f();
        let cached_tokens = if class < 0.55 {
            // A hit: the shared prefix is most of the prompt, in whole 16-token blocks.
            ((prompt_tokens as f64 * (0.6 + 0.38 * r.f())) as u64) / 16 * 16
        } else if class < 0.65 {
            // A partial hit: only the chat template header.
            (16 * (1 + r.below(3))).min(prompt_tokens / 2)
        } else {
            0
        };
        let output_tokens = if r.chance(0.03) {
            1
        } else {
            (r.lognormal(160.0, 0.8) as u64).clamp(1, 2048)
        };
        let queue_ms = if c > 16.0 {
            r.lognormal(4.0 * (c - 16.0), 0.6)
        } else {
            r.f() * 0.5
        };
        let prefill_ms = r.lognormal(
            6.0 + (prompt_tokens - cached_tokens) as f64 * model.prefill_ms_per_token,
            0.2,
        );
        let tpot = r.lognormal(model.tpot_ms * (1.0 + 0.035 * c), 0.12);
        let decode_ms = tpot * output_tokens.saturating_sub(1) as f64;
        let failed = r.chance(0.03);
        let response_cache = !failed && r.chance(0.01);
        let stream = r.chance(0.8);
        Req {
            arrival_s: self.t,
            model,
            prompt_tokens,
            cached_tokens,
            output_tokens,
            queue_ms,
            prefill_ms,
            decode_ms,
            stream,
            failed,
            response_cache,
            ttft_ms: None,
        }
    }

    /// A request of a scenario (see the module docs).
    fn scenario_request(&mut self) -> Req {
        let progress = (self.n as f64 / self.total.max(1) as f64).min(1.0);
        self.n += 1;
        let sc = &self.scenario;
        let r = &mut self.rng;
        let c = match sc.growth {
            Growth::None => {
                self.concurrency = (self.concurrency + r.normal() * 0.7).clamp(1.0, 64.0);
                self.concurrency
            }
            Growth::Queue => 1.0 + 63.0 * progress,
            Growth::Prompt => 4.0,
        };
        self.t += r.f() * 0.02 / (1.0 + c / 16.0);
        let model = &MODELS[r.below(MODELS.len() as u64) as usize];
        let prompt_tokens = match sc.growth {
            Growth::None => (r.lognormal(700.0, 0.8) as u64).clamp(12, 16_000),
            Growth::Queue => (r.lognormal(700.0, 0.5) as u64).clamp(12, 16_000),
            Growth::Prompt => {
                (r.lognormal(200.0 * 60f64.powf(progress), 0.3) as u64).clamp(12, 64_000)
            }
        };
        // The TTFT mode, when the scenario has modes.
        let total_share: f64 = sc.ttft_modes.iter().map(|m| m.1).sum();
        let mode = (!sc.ttft_modes.is_empty()).then(|| {
            let mut u = r.f() * total_share;
            let mut k = 0;
            while k + 1 < sc.ttft_modes.len() && u >= sc.ttft_modes[k].1 {
                u -= sc.ttft_modes[k].1;
                k += 1;
            }
            k
        });
        let class = match mode {
            Some(k) if !sc.mode_cache_random => {
                if k == 0 {
                    0.0
                } else {
                    1.0
                }
            }
            _ => r.f(),
        };
        let cached_tokens = if class < 0.55 {
            ((prompt_tokens as f64 * (0.6 + 0.38 * r.f())) as u64) / 16 * 16
        } else if class < 0.65 {
            (16 * (1 + r.below(3))).min(prompt_tokens / 2)
        } else {
            0
        };
        let output_tokens = if r.chance(0.03) {
            1
        } else {
            (r.lognormal(160.0, 0.8) as u64).clamp(1, 2048)
        };
        let mut queue_ms = match sc.growth {
            Growth::Queue => r.lognormal(40.0 * c, 0.3),
            Growth::Prompt => r.f() * 2.0,
            Growth::None => r.f() * 0.5,
        };
        let mut prefill_ms = r.lognormal(
            6.0 + (prompt_tokens - cached_tokens) as f64 * model.prefill_ms_per_token,
            0.2,
        );
        let sigma = if sc.ttft_sigma > 0.0 {
            sc.ttft_sigma
        } else {
            0.25
        };
        let ttft_ms = mode.map(|k| r.lognormal(sc.ttft_modes[k].0, sigma));
        if let Some(t) = ttft_ms {
            queue_ms = (r.f() * 0.5).min(t / 2.0);
            prefill_ms = t - queue_ms;
        }
        let tpot = r.lognormal(model.tpot_ms * (1.0 + 0.035 * c), 0.12);
        let decode_ms = tpot * output_tokens.saturating_sub(1) as f64;
        let failed = r.chance(0.03);
        let response_cache = !failed && r.chance(0.01);
        let stream = r.chance(0.8);
        Req {
            arrival_s: self.t,
            model,
            prompt_tokens,
            cached_tokens,
            output_tokens,
            queue_ms,
            prefill_ms,
            decode_ms,
            stream,
            failed,
            response_cache,
            ttft_ms,
        }
    }
}

/// A JSON string body of `min` to `min + spread - 1` words.
fn content(rng: &mut Rng, min: u64, spread: u64, ascii: bool) -> String {
    let n_words = (min + rng.below(spread)) as usize;
    let mut w = String::new();
    words(rng, &mut w, n_words);
    let mut out = String::with_capacity(w.len() + 16);
    esc(&mut out, &w, ascii);
    out
}

fn litellm(sim: &mut Sim, out: &mut String) {
    let q = sim.request();
    let r = &mut sim.rng;
    let mut id = String::from("chatcmpl-");
    r.alnum(&mut id, 29);
    let mut call = String::new();
    r.hex(&mut call, 20);
    let start = q.arrival_s;
    let ttft_s = match q.ttft_ms {
        Some(t) => t / 1e3,
        None => (q.queue_ms + q.prefill_ms + r.lognormal(3.0, 0.3)) / 1e3,
    };
    let end = if q.failed {
        start + r.lognormal(0.4, 1.0)
    } else if q.response_cache {
        start + 0.004
    } else {
        start + ttft_s + q.decode_ms / 1e3
    };
    let first = if q.stream && !q.failed && !q.response_cache {
        start + ttft_s
    } else {
        end
    };
    let (pt, ct) = if q.failed {
        (0, 0)
    } else {
        (q.prompt_tokens, q.output_tokens)
    };
    let stream = if q.stream && !q.failed {
        "true"
    } else {
        "null"
    };
    let status = if q.failed { "failure" } else { "success" };
    let cached = if q.failed {
        "null".to_string()
    } else {
        format!("{{\"cached_tokens\": {}}}", q.cached_tokens)
    };
    let user = r.below(40);
    let team = r.below(5);
    let ip = r.below(250);
    let prompt = content(r, 4, 9, true);
    let answer = if q.failed {
        String::new()
    } else {
        content(r, 2, 9, true)
    };
    let response = if q.failed {
        "{}".to_string()
    } else {
        format!(
            "{{\"id\": \"{id}\", \"created\": {created}, \"model\": \"{model}\", \"object\": \"chat.completion\", \"choices\": [{{\"finish_reason\": \"stop\", \"index\": 0, \"message\": {{\"content\": \"{answer}\", \"role\": \"assistant\"}}}}]}}",
            created = start as u64,
            model = q.model.name,
        )
    };
    let error = if q.failed {
        let code = [429, 500, 503][r.below(3) as usize];
        format!(
            "\"error_str\": \"litellm.RateLimitError: upstream returned {code}\", \"error_information\": {{\"error_code\": \"{code}\", \"error_class\": \"RateLimitError\", \"llm_provider\": \"openai\"}}"
        )
    } else {
        "\"error_str\": null".to_string()
    };
    out.push_str(&format!(
        "{{\"id\": \"{id}\", \"litellm_call_id\": \"lab-{call}\", \"call_type\": \"acompletion\", \"cache_hit\": {cache_hit}, \"stream\": {stream}, \"status\": \"{status}\", \"custom_llm_provider\": \"openai\", \"startTime\": {start:.6}, \"endTime\": {end:.6}, \"completionStartTime\": {first:.6}, \"response_time\": {rt:.6}, \"model\": \"{model}\", \"api_base\": \"http://10.0.3.{ip}:8000/v1\", \"metadata\": {{\"user_api_key_hash\": null, \"user_api_key_alias\": \"team-{team}-key\", \"user_api_key_team_id\": \"team-{team}\", \"user_api_key_user_id\": \"user-{user}\", \"applied_guardrails\": [], \"usage_object\": {{\"completion_tokens\": {ct}, \"prompt_tokens\": {pt}, \"total_tokens\": {tt}, \"prompt_tokens_details\": {cached}}}}}, \"response_cost\": {cost:.7}, \"total_tokens\": {tt}, \"prompt_tokens\": {pt}, \"completion_tokens\": {ct}, \"request_tags\": [], \"end_user\": \"\", \"messages\": [{{\"role\": \"system\", \"content\": \"You are a helpful assistant.\"}}, {{\"role\": \"user\", \"content\": \"{prompt}\"}}], \"response\": {response}, {error}}}",
        cache_hit = if q.response_cache { "true" } else { "false" },
        rt = first - start,
        model = q.model.name,
        tt = pt + ct,
        cost = (pt + 3 * ct) as f64 * 1.5e-7,
    ));
}

fn llamacpp(sim: &mut Sim, out: &mut String) {
    let q = sim.request();
    let r = &mut sim.rng;
    let mut id = String::from("chatcmpl-");
    r.alnum(&mut id, 32);
    let created = (q.arrival_s + (q.queue_ms + q.prefill_ms + q.decode_ms) / 1e3) as u64;
    if q.failed {
        let (code, msg) = [
            (503, "Loading model"),
            (
                500,
                "the request exceeds the available context size, try increasing it",
            ),
            (400, "Invalid JSON in request body"),
        ][r.below(3) as usize];
        out.push_str(&format!(
            "{{\"error\":{{\"code\":{code},\"message\":\"{msg}\",\"type\":\"server_error\"}},\"id_slot\":{slot},\"model\":\"{model}.gguf\",\"request\":{{\"messages\":[{{\"role\":\"user\",\"content\":\"{prompt}\"}}],\"max_tokens\":{mt},\"stream\":{stream}}}}}",
            slot = r.below(8),
            model = q.model.name,
            prompt = content(r, 40, 30, false),
            mt = 256 << r.below(4),
            stream = q.stream,
        ));
        return;
    }
    let evaluated = q.prompt_tokens - q.cached_tokens;
    let predicted_ms = q.decode_ms;
    let pps = if predicted_ms > 0.0 {
        format!("{}", q.output_tokens as f64 * 1e3 / predicted_ms)
    } else {
        "null".into()
    };
    out.push_str(&format!(
        "{{\"choices\":[{{\"finish_reason\":\"{finish}\",\"index\":0,\"message\":{{\"role\":\"assistant\",\"content\":\"{answer}\"}}}}],\"created\":{created},\"model\":\"{model}.gguf\",\"system_fingerprint\":\"b6917-1a2b3c4d\",\"object\":\"chat.completion\",\"usage\":{{\"completion_tokens\":{ct},\"prompt_tokens\":{pt},\"total_tokens\":{tt},\"prompt_tokens_details\":{{\"cached_tokens\":{cached}}}}},\"id\":\"{id}\",\"timings\":{{\"cache_n\":{cached},\"prompt_n\":{evaluated},\"prompt_ms\":{prompt_ms:.3},\"prompt_per_token_ms\":{pptm},\"prompt_per_second\":{pps_in},\"predicted_n\":{ct},\"predicted_ms\":{predicted_ms:.3},\"predicted_per_token_ms\":{ptm},\"predicted_per_second\":{pps}}}}}",
        finish = if r.chance(0.9) { "stop" } else { "length" },
        answer = content(r, 45, 41, false),
        model = q.model.name,
        ct = q.output_tokens,
        pt = q.prompt_tokens,
        tt = q.prompt_tokens + q.output_tokens,
        cached = q.cached_tokens,
        prompt_ms = q.prefill_ms,
        pptm = q.prefill_ms / evaluated.max(1) as f64,
        pps_in = evaluated as f64 * 1e3 / q.prefill_ms,
        ptm = predicted_ms / q.output_tokens as f64,
    ));
}

fn vllm(sim: &mut Sim, out: &mut String) {
    let q = sim.request();
    let r = &mut sim.rng;
    let mut id = String::from("chatcmpl-");
    r.hex(&mut id, 32);
    let created = q.arrival_s as u64;
    let model = q.model.name;
    if q.failed {
        out.push_str(&format!(
            "{{\"object\":\"error\",\"message\":\"This model's maximum context length is 32768 tokens. However, you requested {n} tokens in the messages. Please reduce the length of the messages.\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400,\"request\":{{\"model\":\"{model}\",\"messages\":[{{\"role\":\"user\",\"content\":\"{prompt}\"}}]}}}}",
            n = 32768 + r.below(9000),
            prompt = content(r, 30, 30, false),
        ));
        return;
    }
    let itl = if q.output_tokens > 1 {
        format!("{:.2}", q.decode_ms / (q.output_tokens - 1) as f64)
    } else {
        "null".into()
    };
    out.push_str(&format!(
        "{{\"id\":\"{id}\",\"object\":\"chat.completion\",\"created\":{created},\"model\":\"{model}\",\"choices\":[{{\"index\":0,\"message\":{{\"role\":\"assistant\",\"content\":\"{answer}\",\"refusal\":null,\"annotations\":null,\"audio\":null,\"function_call\":null,\"tool_calls\":[],\"reasoning_content\":null}},\"logprobs\":null,\"finish_reason\":\"stop\",\"stop_reason\":null}}],\"service_tier\":null,\"system_fingerprint\":null,\"usage\":{{\"prompt_tokens\":{pt},\"total_tokens\":{tt},\"completion_tokens\":{ct},\"prompt_tokens_details\":{{\"cached_tokens\":{cached}}}}},\"prompt_logprobs\":null,\"kv_transfer_params\":null,\"metrics\":{{\"time_to_first_token_ms\":{ttft:.1},\"generation_time_ms\":{gen:.1},\"queue_time_ms\":{queue:.1},\"mean_itl_ms\":{itl},\"tokens_per_second\":{tps:.2}}}}}",
        answer = content(r, 35, 36, false),
        pt = q.prompt_tokens,
        ct = q.output_tokens,
        tt = q.prompt_tokens + q.output_tokens,
        cached = q.cached_tokens,
        ttft = q.prefill_ms,
        gen = q.decode_ms,
        queue = q.queue_ms,
        tps = q.output_tokens as f64 * 1e3 / (q.prefill_ms + q.decode_ms),
    ));
}

fn otlp(sim: &mut Sim, out: &mut String) {
    let q = sim.request();
    let r = &mut sim.rng;
    let start_ns = (q.arrival_s * 1e9) as u64;
    let ttft = (q.queue_ms + q.prefill_ms) / 1e3;
    let e2e = if q.failed {
        r.lognormal(0.05, 0.5)
    } else {
        ttft + q.decode_ms / 1e3
    };
    let end_ns = start_ns + (e2e * 1e9) as u64;
    let mut trace = String::new();
    r.hex(&mut trace, 32);
    let mut span = String::new();
    r.hex(&mut span, 16);
    let mut req = String::from("chatcmpl-");
    r.hex(&mut req, 32);
    let d = |k: &str, v: f64| format!("{{\"key\":\"{k}\",\"value\":{{\"doubleValue\":{v}}}}}");
    let i = |k: &str, v: u64| format!("{{\"key\":\"{k}\",\"value\":{{\"intValue\":\"{v}\"}}}}");
    let mut attrs = vec![];
    let status = if q.failed {
        attrs.push(format!(
            "{{\"key\":\"gen_ai.request.id\",\"value\":{{\"stringValue\":\"{req}\"}}}}"
        ));
        attrs.push(i("gen_ai.usage.prompt_tokens", q.prompt_tokens));
        "{\"code\":2,\"message\":\"engine dead: request aborted\"}"
    } else {
        attrs.push(d("gen_ai.latency.time_to_first_token", ttft));
        attrs.push(d("gen_ai.latency.e2e", e2e));
        attrs.push(d("gen_ai.latency.time_in_queue", q.queue_ms / 1e3));
        attrs.push(i("gen_ai.usage.prompt_tokens", q.prompt_tokens));
        attrs.push(i("gen_ai.usage.completion_tokens", q.output_tokens));
        attrs.push(d(
            "gen_ai.latency.time_in_model_prefill",
            q.prefill_ms / 1e3,
        ));
        attrs.push(d("gen_ai.latency.time_in_model_decode", q.decode_ms / 1e3));
        attrs.push(d(
            "gen_ai.latency.time_in_model_inference",
            (q.prefill_ms + q.decode_ms) / 1e3,
        ));
        attrs.push(format!(
            "{{\"key\":\"gen_ai.request.id\",\"value\":{{\"stringValue\":\"{req}\"}}}}"
        ));
        attrs.push(
            "{\"key\":\"gen_ai.response.finish_reasons\",\"value\":{\"stringValue\":\"[\\\"stop\\\"]\"}}"
                .to_string(),
        );
        attrs.push(d("gen_ai.request.top_p", 0.95));
        attrs.push(i("gen_ai.request.max_tokens", 1024));
        "{}"
    };
    out.push_str(&format!(
        "{{\"resourceSpans\":[{{\"resource\":{{\"attributes\":[{{\"key\":\"service.name\",\"value\":{{\"stringValue\":\"vllm-{model}\"}}}},{{\"key\":\"telemetry.sdk.language\",\"value\":{{\"stringValue\":\"python\"}}}}]}},\"scopeSpans\":[{{\"scope\":{{\"name\":\"vllm.llm_engine\"}},\"spans\":[{{\"traceId\":\"{trace}\",\"spanId\":\"{span}\",\"parentSpanId\":\"\",\"flags\":256,\"name\":\"llm_request\",\"kind\":2,\"startTimeUnixNano\":\"{start_ns}\",\"endTimeUnixNano\":\"{end_ns}\",\"attributes\":[{attrs}],\"status\":{status}}}]}}]}}]}}",
        model = q.model.name,
        attrs = attrs.join(","),
    ));
}

/// A line that is not a request: the access log or a health check, as servers interleave them.
fn noise(sim: &mut Sim, format: Format, out: &mut String) {
    let r = &mut sim.rng;
    let t = sim.t;
    match (format, r.below(2)) {
        (Format::Litellm, 0) => out.push_str(&format!(
            "INFO:     10.0.{}.{}:{} - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
            r.below(8),
            r.below(250),
            30000 + r.below(30000)
        )),
        (Format::Litellm, _) => out.push_str(&format!(
            "{{\"message\": \"Health check passed for model group\", \"level\": \"INFO\", \"timestamp\": {t:.6}, \"healthy_endpoints\": {}, \"unhealthy_endpoints\": 0}}",
            1 + r.below(4)
        )),
        (Format::Otlp, _) => out.push_str(&format!(
            "{{\"resourceSpans\":[{{\"resource\":{{\"attributes\":[{{\"key\":\"service.name\",\"value\":{{\"stringValue\":\"vllm\"}}}}]}},\"scopeSpans\":[{{\"scope\":{{\"name\":\"vllm.api_server\"}},\"spans\":[{{\"traceId\":\"{:032x}\",\"spanId\":\"{:016x}\",\"name\":\"GET /health\",\"kind\":2,\"startTimeUnixNano\":\"{}\",\"endTimeUnixNano\":\"{}\",\"attributes\":[],\"status\":{{}}}}]}}]}}]}}",
            r.word() as u128 * r.word() as u128,
            r.word(),
            (t * 1e9) as u64,
            (t * 1e9) as u64 + 180_000
        )),
        (_, 0) => out.push_str(&format!(
            "INFO:     10.0.{}.{}:{} - \"GET /health HTTP/1.1\" 200 OK",
            r.below(8),
            r.below(250),
            30000 + r.below(30000)
        )),
        (_, _) => out.push_str(&format!(
            "{{\"level\":\"INFO\",\"ts\":{t:.3},\"msg\":\"slot released\",\"id_slot\":{},\"n_past\":{}}}",
            r.below(8),
            r.below(8000)
        )),
    }
}

/// Parses `--ttft-modes 80:0.6,1500:0.4`.
pub fn parse_modes(s: &str) -> Option<Vec<(f64, f64)>> {
    s.split(',')
        .map(|m| {
            let (a, b) = m.split_once(':')?;
            let (a, b) = (a.trim().parse::<f64>().ok()?, b.trim().parse::<f64>().ok()?);
            (a > 0.0 && b > 0.0).then_some((a, b))
        })
        .collect()
}

/// Writes generated lines of `format` (`litellm`, `llamacpp`, `vllm`, `otlp`) to `out`: `lines`
/// lines, or as many as fit in `bytes` bytes (whichever ends first; at least one line).
/// Returns `None` for an unknown format.
pub fn generate(
    format: &str,
    seed: u64,
    lines: Option<u64>,
    bytes: Option<u64>,
    out: &mut impl Write,
) -> Option<io::Result<()>> {
    generate_scenario(format, seed, lines, bytes, &Scenario::default(), out)
}

/// [`generate`] with a [`Scenario`]: TTFT modes, queue or prompt growth.
pub fn generate_scenario(
    format: &str,
    seed: u64,
    lines: Option<u64>,
    bytes: Option<u64>,
    scenario: &Scenario,
    out: &mut impl Write,
) -> Option<io::Result<()>> {
    let format = match format {
        "litellm" => Format::Litellm,
        "llamacpp" => Format::Llamacpp,
        "vllm" => Format::Vllm,
        "otlp" => Format::Otlp,
        _ => return None,
    };
    let mut sim = Sim::new(seed);
    sim.scenario = scenario.clone();
    sim.total = lines.unwrap_or_else(|| bytes.unwrap_or(1000) / 1000).max(1);
    let mut line = String::with_capacity(4096);
    let (mut n, mut written) = (0u64, 0u64);
    let result = (|| {
        loop {
            if lines.is_some_and(|l| n >= l) || bytes.is_some_and(|b| written >= b) {
                return Ok(());
            }
            line.clear();
            if sim.rng.chance(0.02) {
                noise(&mut sim, format, &mut line);
            } else {
                match format {
                    Format::Litellm => litellm(&mut sim, &mut line),
                    Format::Llamacpp => llamacpp(&mut sim, &mut line),
                    Format::Vllm => vllm(&mut sim, &mut line),
                    Format::Otlp => otlp(&mut sim, &mut line),
                }
            }
            line.push('\n');
            if bytes.is_some_and(|b| written + line.len() as u64 > b) && n > 0 {
                return Ok(());
            }
            out.write_all(line.as_bytes())?;
            written += line.len() as u64;
            n += 1;
        }
    })();
    Some(result)
}
