//! The metrics tokentime reports, one enum: their order (the order of every output that lists
//! them), their spellings (enrich and JSON names, command-line names, Prometheus families,
//! help texts), and which are durations.

use crate::metrics::{Metrics, NullReason, Value};

/// One metric of a request (or of its token gaps, for [`Metric::Itl`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Metric {
    /// Time to first token.
    Ttft,
    /// Time per output token.
    Tpot,
    /// Inter-token latency: every gap between tokens, no single per-request value.
    Itl,
    /// End-to-end latency.
    E2e,
    /// Queue time.
    Queue,
    /// Prefill time.
    Prefill,
    /// Decode time.
    Decode,
    /// Prompt tokens, cached ones included.
    InputTokens,
    /// Prompt tokens served from the prefix cache.
    CachedTokens,
    /// Generated tokens.
    OutputTokens,
    /// Time to first output token: to the first answer token of a reasoning model, where the
    /// log separates it from the TTFT (the first token of any kind). Reported only where
    /// logged ([`Metric::only_where_logged`]).
    Ttfot,
}

/// One request's raw value of a metric, as [`Metric::sample`] reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Sample {
    /// A duration in ns, or why it is null; also a token count that is null for a reason
    /// other than not being logged (`Err(Sentinel)`: the zeros of a request that never ran),
    /// so that every output gives that reason as it gives a duration's.
    Ns(Value),
    /// A token count, `None` when not logged.
    Tokens(Option<u64>),
    /// No per-request value ([`Metric::Itl`]).
    None,
}

/// A token count's sample: the count, or the reason it is null when it has one.
fn count(v: Option<u64>, null: Option<NullReason>) -> Sample {
    match (v, null) {
        (None, Some(r)) => Sample::Ns(Err(r)),
        (v, _) => Sample::Tokens(v),
    }
}

impl Metric {
    /// How many metrics there are.
    pub const COUNT: usize = 11;

    /// Every metric, in output order.
    pub const ALL: [Metric; Metric::COUNT] = [
        Metric::Ttft,
        Metric::Tpot,
        Metric::Itl,
        Metric::E2e,
        Metric::Queue,
        Metric::Prefill,
        Metric::Decode,
        Metric::InputTokens,
        Metric::CachedTokens,
        Metric::OutputTokens,
        Metric::Ttfot,
    ];

    /// The metric's place in [`Metric::ALL`] (and in every per-metric array).
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The name in enrich objects, JSON and CSV (`ttft_ms`, `input_tokens`).
    pub const fn json_name(self) -> &'static str {
        match self {
            Metric::Ttft => "ttft_ms",
            Metric::Tpot => "tpot_ms",
            Metric::Itl => "itl_ms",
            Metric::E2e => "e2e_ms",
            Metric::Queue => "queue_ms",
            Metric::Prefill => "prefill_ms",
            Metric::Decode => "decode_ms",
            Metric::InputTokens => "input_tokens",
            Metric::CachedTokens => "cached_tokens",
            Metric::OutputTokens => "output_tokens",
            Metric::Ttfot => "ttfot_ms",
        }
    }

    /// The name without its unit, as `--goodput` writes it back (`ttft`, `input_tokens`).
    pub const fn short_name(self) -> &'static str {
        match self {
            Metric::Ttft => "ttft",
            Metric::Tpot => "tpot",
            Metric::Itl => "itl",
            Metric::E2e => "e2e",
            Metric::Queue => "queue",
            Metric::Prefill => "prefill",
            Metric::Decode => "decode",
            Metric::InputTokens => "input_tokens",
            Metric::CachedTokens => "cached_tokens",
            Metric::OutputTokens => "output_tokens",
            Metric::Ttfot => "ttfot",
        }
    }

    /// True for the durations (values in ms), false for token counts.
    pub const fn is_duration(self) -> bool {
        !matches!(
            self,
            Metric::InputTokens | Metric::CachedTokens | Metric::OutputTokens
        )
    }

    /// The metric named as on the command line or in a file: its [`Metric::json_name`] or
    /// its [`Metric::short_name`] (`ttft`, `ttft_ms`), blanks around it ignored.
    pub fn from_name(name: &str) -> Option<Metric> {
        let n = name.trim();
        Metric::ALL
            .into_iter()
            .find(|m| m.json_name() == n || m.short_name() == n)
    }

    /// The names [`Metric::from_name`] knows, for a message that refuses another: the
    /// durations by their short names, then the token counts (`ttft, tpot, itl, e2e, queue,
    /// prefill, decode, ttfot, each also with _ms, input_tokens, cached_tokens,
    /// output_tokens`).
    pub fn known_names() -> String {
        let names = |durations: bool| {
            Metric::ALL
                .into_iter()
                .filter(move |m| m.is_duration() == durations)
                .map(Metric::short_name)
        };
        names(true)
            .chain(["each also with _ms"])
            .chain(names(false))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The metric of a [`Metric::json_name`], exactly.
    pub fn from_json_name(name: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.json_name() == name)
    }

    /// True when a request has one value of it (all but [`Metric::Itl`]): a member of the
    /// enrich object and a `--fields` column.
    pub const fn per_request(self) -> bool {
        !matches!(self, Metric::Itl)
    }

    /// True for a metric that outputs show only where some request logged it (its values and
    /// its nulls other than `not_logged`): a log without it renders as if the metric did not
    /// exist. Only [`Metric::Ttfot`], which few producers log.
    pub const fn only_where_logged(self) -> bool {
        matches!(self, Metric::Ttfot)
    }

    /// The Prometheus family: durations in seconds (`tokentime_ttft_seconds`), token counts
    /// as they are (`tokentime_input_tokens`).
    pub const fn prometheus_name(self) -> &'static str {
        match self {
            Metric::Ttft => "tokentime_ttft_seconds",
            Metric::Tpot => "tokentime_tpot_seconds",
            Metric::Itl => "tokentime_itl_seconds",
            Metric::E2e => "tokentime_e2e_seconds",
            Metric::Queue => "tokentime_queue_seconds",
            Metric::Prefill => "tokentime_prefill_seconds",
            Metric::Decode => "tokentime_decode_seconds",
            Metric::InputTokens => "tokentime_input_tokens",
            Metric::CachedTokens => "tokentime_cached_tokens",
            Metric::OutputTokens => "tokentime_output_tokens",
            Metric::Ttfot => "tokentime_ttfot_seconds",
        }
    }

    /// The factor from the output unit (ms, tokens) to the Prometheus unit (s, tokens).
    pub const fn prometheus_scale(self) -> f64 {
        if self.is_duration() { 1e-3 } else { 1.0 }
    }

    /// The Prometheus `# HELP` text.
    pub const fn help(self) -> &'static str {
        match self {
            Metric::Ttft => "Time to first token (TTFT) of the logged requests, in seconds.",
            Metric::Tpot => {
                "Time per output token (TPOT, decode / (output tokens - 1)), in seconds."
            }
            Metric::Itl => {
                "Inter-token latency (ITL): every gap the log gives between consecutive chunks of a \
                 stream (a chunk may carry several tokens), in seconds."
            }
            Metric::E2e => "End-to-end latency (E2E) of the logged requests, in seconds.",
            Metric::Queue => "Queue time (scheduled - arrival), in seconds.",
            Metric::Prefill => "Prefill time (first token - scheduled), in seconds.",
            Metric::Decode => "Decode time (end - first token), in seconds.",
            Metric::InputTokens => "Prompt tokens per request, cached ones included.",
            Metric::CachedTokens => "Prompt tokens served from the prefix cache per request.",
            Metric::OutputTokens => "Generated tokens per request.",
            Metric::Ttfot => {
                "Time to first output token (the first answer token after a reasoning model's reasoning), in seconds."
            }
        }
    }

    /// One request's raw value: ns for a duration, a count for tokens.
    pub(crate) fn sample(self, m: &Metrics) -> Sample {
        match self {
            Metric::Ttft => Sample::Ns(m.ttft),
            Metric::Tpot => Sample::Ns(m.tpot),
            Metric::Itl => Sample::None,
            Metric::E2e => Sample::Ns(m.e2e),
            Metric::Queue => Sample::Ns(m.queue),
            Metric::Prefill => Sample::Ns(m.prefill),
            Metric::Decode => Sample::Ns(m.decode),
            Metric::InputTokens => count(m.input_tokens, m.count_nulls[0]),
            Metric::CachedTokens => count(m.cached_tokens, m.count_nulls[1]),
            Metric::OutputTokens => count(m.output_tokens, m.count_nulls[2]),
            Metric::Ttfot => Sample::Ns(m.ttfot),
        }
    }

    /// One request's value in the output unit: ms for durations, a count for tokens. `itl_ms`
    /// has no single per-request value (it is every gap): it is `NotLogged` here, as is a
    /// count the log does not give.
    pub(crate) fn request_value(self, m: &Metrics) -> Result<f64, NullReason> {
        match self.sample(m) {
            Sample::Ns(v) => v.map(|ns| ns / 1e6),
            Sample::Tokens(n) => n.map(|n| n as f64).ok_or(NullReason::NotLogged),
            Sample::None => Err(NullReason::NotLogged),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The summary's metric list before the enum, in its order.
    const OLD_METRICS: [&str; 11] = [
        "ttft_ms",
        "tpot_ms",
        "itl_ms",
        "e2e_ms",
        "queue_ms",
        "prefill_ms",
        "decode_ms",
        "input_tokens",
        "cached_tokens",
        "output_tokens",
        "ttfot_ms",
    ];

    #[test]
    fn all_is_the_old_order() {
        let names: Vec<&str> = Metric::ALL.iter().map(|m| m.json_name()).collect();
        assert_eq!(names, OLD_METRICS);
        for (i, m) in Metric::ALL.iter().enumerate() {
            assert_eq!(m.index(), i);
        }
    }

    #[test]
    fn every_spelling_round_trips() {
        for m in Metric::ALL {
            assert_eq!(Metric::from_json_name(m.json_name()), Some(m));
            assert_eq!(Metric::from_name(m.json_name()), Some(m));
            assert_eq!(Metric::from_name(m.short_name()), Some(m));
            assert_eq!(Metric::from_name(&format!(" {} ", m.short_name())), Some(m));
            // The old rules: a duration's name ends in `_ms`, its short name drops it, its
            // Prometheus family is in seconds.
            assert_eq!(m.is_duration(), m.json_name().ends_with("_ms"));
            assert_eq!(
                m.short_name(),
                m.json_name().strip_suffix("_ms").unwrap_or(m.json_name())
            );
            let family = match m.json_name().strip_suffix("_ms") {
                Some(base) => format!("tokentime_{base}_seconds"),
                None => format!("tokentime_{}", m.json_name()),
            };
            assert_eq!(m.prometheus_name(), family);
            let from_family = Metric::ALL
                .into_iter()
                .find(|o| o.prometheus_name() == m.prometheus_name());
            assert_eq!(from_family, Some(m));
            assert_eq!(m.per_request(), m != Metric::Itl);
            assert!(!m.help().is_empty());
        }
        assert_eq!(Metric::from_name("tokens"), None);
        assert_eq!(Metric::from_json_name("ttft"), None);
    }

    #[test]
    fn request_values_in_output_units() {
        let base = crate::metrics::derive(&crate::metrics::Timeline::default(), 0.5);
        let m = Metrics {
            ttft: Ok(2.5e6),
            input_tokens: Some(12),
            cached_tokens: None,
            ..base
        };
        assert_eq!(Metric::Ttft.request_value(&m), Ok(2.5));
        assert_eq!(Metric::InputTokens.request_value(&m), Ok(12.0));
        assert_eq!(
            Metric::CachedTokens.request_value(&m),
            Err(NullReason::NotLogged)
        );
        assert_eq!(Metric::Itl.request_value(&m), Err(NullReason::NotLogged));
    }
}
