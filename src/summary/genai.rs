//! Histograms named by the OpenTelemetry GenAI semantic conventions (v1.41.0,
//! `docs/gen-ai/gen-ai-metrics.md`): TTFT, TPOT and E2E request duration in seconds, and
//! prompt and output token counts, each with the conventions' explicit bucket boundaries, per
//! series of model, format and cache class.
//!
//! A duration goes to the family of whoever measured it ([`Side`]): the server's TTFT (from
//! the request's arrival), TPOT and E2E to the `gen_ai.server.*` families; a gateway's or a
//! client's TTFT and E2E to `gen_ai.client.operation.time_to_first_chunk` and
//! `gen_ai.client.operation.duration`. A TTFT from the scheduling (queue left out), an E2E
//! from it and a gateway's TPOT (a mean per token, where the client metric is per chunk) go
//! to none.
//!
//! Bucket counts add up: the histograms of runs over parts of a log (per host, per day) summed
//! series by series are those of one run over all of it. So every value is kept in integer
//! units (a duration rounded to the nanosecond, a token count as it is): counts and sums do not
//! depend on the order values were added in, or on which thread added them.
//!
//! A histogram holds exactly the values the summary's digest of the same metric holds (the
//! same nulls, errors and response-cache answers left out).

use crate::metrics::{CacheClass, Metric, Metrics, Origin, Outcome, Sample};
use serde_json::{Map, Value as Json, json};
use std::collections::BTreeMap;

/// Who measured the values a family holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// The model server, TTFT and E2E from the request's arrival (`gen_ai.server.*`).
    Server,
    /// A gateway or a client in front of the server (`gen_ai.client.operation.*`).
    Client,
    /// Anyone: a token count is the same wherever it is read (`gen_ai.client.token.usage`).
    Any,
}

/// One histogram family: the metric it counts, whose measurements, its explicit bucket
/// boundaries (ns for a duration, tokens for a count), its name in a digest file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Family {
    /// The metric whose values it counts.
    pub metric: Metric,
    /// Whose values of the metric it counts.
    pub side: Side,
    /// Upper bounds of the buckets (inclusive), ascending, in integer units.
    pub bounds: &'static [i64],
    /// Its name in a digest file.
    pub key: &'static str,
}

const MS: i64 = 1_000_000;

/// `gen_ai.server.time_to_first_token`: [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,
/// 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0] s.
const TTFT_BOUNDS: [i64; 16] = [
    MS,
    5 * MS,
    10 * MS,
    20 * MS,
    40 * MS,
    60 * MS,
    80 * MS,
    100 * MS,
    250 * MS,
    500 * MS,
    750 * MS,
    1000 * MS,
    2500 * MS,
    5000 * MS,
    7500 * MS,
    10000 * MS,
];

/// `gen_ai.server.time_per_output_token`: [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4,
/// 0.5, 0.75, 1.0, 2.5] s.
const TPOT_BOUNDS: [i64; 13] = [
    10 * MS,
    25 * MS,
    50 * MS,
    75 * MS,
    100 * MS,
    150 * MS,
    200 * MS,
    300 * MS,
    400 * MS,
    500 * MS,
    750 * MS,
    1000 * MS,
    2500 * MS,
];

/// `gen_ai.server.request.duration`, `gen_ai.client.operation.duration` and
/// `gen_ai.client.operation.time_to_first_chunk`: [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64,
/// 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92] s.
const DURATION_BOUNDS: [i64; 14] = [
    10 * MS,
    20 * MS,
    40 * MS,
    80 * MS,
    160 * MS,
    320 * MS,
    640 * MS,
    1280 * MS,
    2560 * MS,
    5120 * MS,
    10240 * MS,
    20480 * MS,
    40960 * MS,
    81920 * MS,
];

/// `gen_ai.client.token.usage`: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576,
/// 4194304, 16777216, 67108864] tokens.
const TOKEN_BOUNDS: [i64; 14] = [
    1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262_144, 1_048_576, 4_194_304, 16_777_216,
    67_108_864,
];

/// The histograms, in output order: the server's TTFT, TPOT and request duration (E2E), a
/// gateway's or client's operation duration (E2E) and time to first chunk (TTFT), input
/// tokens, output tokens (the last two one family, `gen_ai.client.token.usage`, by token
/// type).
pub(crate) const FAMILIES: [Family; 7] = [
    Family {
        metric: Metric::Ttft,
        side: Side::Server,
        bounds: &TTFT_BOUNDS,
        key: "server_ttft_ms",
    },
    Family {
        metric: Metric::Tpot,
        side: Side::Server,
        bounds: &TPOT_BOUNDS,
        key: "server_tpot_ms",
    },
    Family {
        metric: Metric::E2e,
        side: Side::Server,
        bounds: &DURATION_BOUNDS,
        key: "server_e2e_ms",
    },
    Family {
        metric: Metric::E2e,
        side: Side::Client,
        bounds: &DURATION_BOUNDS,
        key: "client_e2e_ms",
    },
    Family {
        metric: Metric::Ttft,
        side: Side::Client,
        bounds: &DURATION_BOUNDS,
        key: "client_ttft_ms",
    },
    Family {
        metric: Metric::InputTokens,
        side: Side::Any,
        bounds: &TOKEN_BOUNDS,
        key: "input_tokens",
    },
    Family {
        metric: Metric::OutputTokens,
        side: Side::Any,
        bounds: &TOKEN_BOUNDS,
        key: "output_tokens",
    },
];

/// One histogram: per bucket the values that fell in it (not cumulative; the last slot is
/// above every bound), their sum and count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hist {
    /// Values per bucket, `bounds.len() + 1` slots.
    pub buckets: Vec<u64>,
    /// Sum of the values (ns, or tokens).
    pub sum: i128,
    /// Number of values.
    pub count: u64,
}

impl Hist {
    fn new(bounds: &[i64]) -> Self {
        Hist {
            buckets: vec![0; bounds.len() + 1],
            sum: 0,
            count: 0,
        }
    }

    fn add(&mut self, bounds: &[i64], v: i64) {
        // The first bound at or above v (`le`: a bucket counts the values up to its bound).
        let i = bounds.partition_point(|&b| b < v);
        self.buckets[i] += 1;
        self.sum += i128::from(v);
        self.count += 1;
    }

    /// Adds every value of `other`.
    pub fn merge(&mut self, other: &Hist) {
        // Saturating: counts read from digest files may be anything.
        for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
            *a = a.saturating_add(*b);
        }
        self.sum = self.sum.saturating_add(other.sum);
        self.count = self.count.saturating_add(other.count);
    }

    /// Cumulative counts per bound, then the `+Inf` one (the count).
    pub fn cumulative(&self) -> impl Iterator<Item = u64> + '_ {
        self.buckets.iter().scan(0u64, |acc, &n| {
            *acc += n;
            Some(*acc)
        })
    }
}

/// A series: the model as logged (`None` when the log does not say), the format's name, the
/// cache class (`None` when unknown).
pub(crate) type SeriesKey = (Option<String>, String, Option<CacheClass>);

/// The value standing for the models past the bound on series.
pub(crate) const OTHER_MODEL: &str = crate::summary::OTHER;

/// The histograms of every series.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GenAi {
    series: BTreeMap<SeriesKey, Vec<Hist>>,
    max_series: usize,
}

/// Who measured `m`'s value of `metric`: for a TTFT, where it is measured from (`ttft_origin`);
/// for an E2E, what the arrival instant is; a TPOT is the server's unless a gateway or client
/// timed the request. `None` for the values no family takes: a TTFT or an E2E from the
/// scheduling (the queue left out, less than the server's), a gateway's or client's TPOT (a
/// mean per output token, where the conventions' client metric is one value per chunk).
fn side(metric: Metric, m: &Metrics) -> Option<Side> {
    let of = |o: Origin| match o {
        Origin::Arrival => Some(Side::Server),
        Origin::Gateway => Some(Side::Client),
        Origin::Scheduled => None,
    };
    match metric {
        Metric::Ttft => m.ttft_origin.and_then(of),
        Metric::E2e => of(m.arrival_origin),
        Metric::Tpot => (m.arrival_origin != Origin::Gateway).then_some(Side::Server),
        _ => Some(Side::Any),
    }
}

/// A request's value for family `f` in its integer unit, when the summary's digest of the
/// family's metric takes one (as `GroupStats::add`: a token count of a failed request or of a
/// response-cache answer is left out, as the durations of those are null) and it was measured
/// by the family's side.
fn value(f: &Family, m: &Metrics) -> Option<i64> {
    if f.side != Side::Any && side(f.metric, m) != Some(f.side) {
        return None;
    }
    match f.metric.sample(m) {
        Sample::Ns(Ok(ns)) => Some(ns.round() as i64),
        Sample::Tokens(Some(n))
            if m.outcome != Outcome::Error && m.cache != Some(CacheClass::Response) =>
        {
            i64::try_from(n).ok()
        }
        _ => None,
    }
}

impl GenAi {
    /// Histograms of at most `max_series` series: later models go to [`OTHER_MODEL`].
    pub fn new(max_series: usize) -> Self {
        GenAi {
            series: BTreeMap::new(),
            max_series: max_series.max(1),
        }
    }

    /// An empty copy (same bound).
    pub fn empty_like(&self) -> Self {
        GenAi::new(self.max_series)
    }

    /// Adds one request of `model` read by format `format`.
    pub fn add(&mut self, m: &Metrics, model: Option<&str>, format: &str) {
        let values = FAMILIES.map(|f| value(&f, m));
        if values.iter().all(Option::is_none) {
            return;
        }
        let model = model.map(|v| crate::summary::bounded_key(v).into_owned());
        let hists = self.series_mut((model, format.to_owned(), m.cache));
        for ((f, v), h) in FAMILIES.iter().zip(values).zip(hists.iter_mut()) {
            if let Some(v) = v {
                h.add(f.bounds, v);
            }
        }
    }

    /// The histograms of a series, created when new (past the bound, those of its format and
    /// cache class with the model [`OTHER_MODEL`]).
    fn series_mut(&mut self, mut key: SeriesKey) -> &mut Vec<Hist> {
        if !self.series.contains_key(&key) && self.series.len() >= self.max_series {
            key.0 = Some(OTHER_MODEL.to_owned());
        }
        self.series
            .entry(key)
            .or_insert_with(|| FAMILIES.iter().map(|f| Hist::new(f.bounds)).collect())
    }

    /// Adds every series of `other`.
    pub fn merge(&mut self, other: &GenAi) {
        for (k, hs) in &other.series {
            let mine = self.series_mut(k.clone());
            for (a, b) in mine.iter_mut().zip(hs) {
                a.merge(b);
            }
        }
    }

    /// Every series with its histograms (in [`FAMILIES`] order), ordered by model, format and
    /// cache class.
    pub fn series(&self) -> impl Iterator<Item = (&SeriesKey, &[Hist])> {
        self.series.iter().map(|(k, v)| (k, v.as_slice()))
    }
}

/// The name of a family in a digest file.
fn family_name(f: &Family) -> &'static str {
    f.key
}

/// The name the TTFT histogram had in a digest file saved before the durations were split by
/// who measured them (one family each for every TTFT, TPOT and E2E).
const UNSPLIT_TTFT: &str = "ttft_ms";

/// An integer sum as saved: a JSON number while it fits in an `i64`, else its decimal digits
/// as a string (JSON readers lose integers past 2^53 anyway; this one reads both back).
fn sum_json(v: i128) -> Json {
    i64::try_from(v).map_or_else(|_| Json::String(v.to_string()), Json::from)
}

fn sum_from_json(v: &Json) -> Option<i128> {
    match v {
        Json::String(s) => s.parse().ok(),
        v => v.as_i64().map(i128::from),
    }
}

impl GenAi {
    /// The histograms as saved in a digest file (`"genai"`): every family's bounds, then
    /// every series with, per family, its bucket counts (not cumulative, the last one above
    /// every bound), sum and count:
    ///
    /// ```text
    /// {"bounds": {"server_ttft_ms": [1000000, ...], ...},
    ///  "series": [{"model": "m", "format": "vllm", "cache": "miss",
    ///              "server_ttft_ms": {"buckets": [0, 3, ...], "sum": 123456789, "count": 3}, ...}]}
    /// ```
    ///
    /// Bounds are in integer units (ns for a duration, tokens for a count), as counted.
    pub(crate) fn save_json(&self) -> Json {
        let bounds: Map<String, Json> = FAMILIES
            .iter()
            .map(|f| (family_name(f).to_owned(), json!(f.bounds)))
            .collect();
        let series: Vec<Json> = self
            .series
            .iter()
            .map(|((model, format, cache), hists)| {
                let mut s = json!({
                    "model": model,
                    "format": format,
                    "cache": cache.map(CacheClass::as_str),
                });
                for (f, h) in FAMILIES.iter().zip(hists) {
                    s[family_name(f)] =
                        json!({"buckets": h.buckets, "sum": sum_json(h.sum), "count": h.count});
                }
                s
            })
            .collect();
        json!({"bounds": bounds, "series": series})
    }

    /// Reads back what [`GenAi::save_json`] wrote, at most `max_series` series as a run keeps;
    /// `None` for the histograms of a file saved before the durations were split by who
    /// measured them (a gateway's TTFT among the server's: they cannot be split again).
    ///
    /// # Errors
    /// A message naming what is missing, or bounds other than this version's (the buckets
    /// would not line up).
    pub(crate) fn load_json(j: &Json, max_series: usize) -> Result<Option<GenAi>, String> {
        if j["bounds"].get(FAMILIES[0].key).is_none() && j["bounds"].get(UNSPLIT_TTFT).is_some() {
            return Ok(None);
        }
        for f in &FAMILIES {
            let name = family_name(f);
            let saved: Option<Vec<i64>> = j["bounds"][name]
                .as_array()
                .and_then(|a| a.iter().map(Json::as_i64).collect());
            if saved.as_deref() != Some(f.bounds) {
                return Err(format!(
                    "genai.bounds.{name}: not this version's bucket bounds (OpenTelemetry GenAI semantic conventions v1.41.0)"
                ));
            }
        }
        let mut g = GenAi::new(max_series);
        for (i, s) in j["series"]
            .as_array()
            .ok_or("\"genai.series\" must be an array")?
            .iter()
            .enumerate()
        {
            let at = |what: &str| format!("genai.series[{i}]: {what}");
            let model = match &s["model"] {
                Json::Null => None,
                Json::String(m) => Some(m.clone()),
                _ => return Err(at("\"model\" must be a string or null")),
            };
            let format = s["format"]
                .as_str()
                .ok_or_else(|| at("\"format\" must be a string"))?
                .to_owned();
            let cache = match &s["cache"] {
                Json::Null => None,
                c => Some(
                    [
                        CacheClass::Hit,
                        CacheClass::Partial,
                        CacheClass::Miss,
                        CacheClass::Response,
                    ]
                    .into_iter()
                    .find(|k| c.as_str() == Some(k.as_str()))
                    .ok_or_else(|| at("unknown \"cache\""))?,
                ),
            };
            let hists = FAMILIES
                .iter()
                .map(|f| hist_from_json(&s[family_name(f)], f.bounds.len() + 1))
                .collect::<Option<Vec<Hist>>>()
                .ok_or_else(|| {
                    at("each family needs {\"buckets\": [counts], \"sum\", \"count\"} with one count per bucket adding up to \"count\"")
                })?;
            let mine = g.series_mut((model, format, cache));
            for (a, b) in mine.iter_mut().zip(&hists) {
                a.merge(b);
            }
        }
        Ok(Some(g))
    }
}

/// One histogram of `slots` buckets as [`GenAi::save_json`] writes it; `None` when it is not
/// one (the counts must add up to its count).
fn hist_from_json(j: &Json, slots: usize) -> Option<Hist> {
    let buckets: Vec<u64> = j["buckets"]
        .as_array()?
        .iter()
        .map(Json::as_u64)
        .collect::<Option<_>>()?;
    let count = j["count"].as_u64()?;
    let total = buckets.iter().try_fold(0u64, |a, &b| a.checked_add(b))?;
    (buckets.len() == slots && total == count).then_some(Hist {
        buckets,
        sum: sum_from_json(&j["sum"])?,
        count,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_ascend_and_a_value_on_a_bound_is_in_its_bucket() {
        for f in FAMILIES {
            assert!(f.bounds.windows(2).all(|w| w[0] < w[1]));
        }
        let mut h = Hist::new(&TTFT_BOUNDS);
        for v in [0, MS, MS + 1, 10_000 * MS, 10_000 * MS + 1] {
            h.add(&TTFT_BOUNDS, v);
        }
        assert_eq!(h.buckets[0], 2);
        assert_eq!(h.buckets[1], 1);
        assert_eq!(h.buckets[15], 1);
        assert_eq!(h.buckets[16], 1);
        let cum: Vec<u64> = h.cumulative().collect();
        assert_eq!(cum.last(), Some(&5));
        assert_eq!(cum.len(), 17);
    }

    #[test]
    fn merging_parts_is_adding_everything() {
        let mut whole = Hist::new(&TOKEN_BOUNDS);
        let mut a = Hist::new(&TOKEN_BOUNDS);
        let mut b = Hist::new(&TOKEN_BOUNDS);
        for (i, v) in [1, 3, 900, 70_000_000, 5, 16].into_iter().enumerate() {
            whole.add(&TOKEN_BOUNDS, v);
            if i % 2 == 0 {
                a.add(&TOKEN_BOUNDS, v)
            } else {
                b.add(&TOKEN_BOUNDS, v)
            }
        }
        b.merge(&a);
        assert_eq!(b, whole);
    }

    #[test]
    fn saved_histograms_read_back_the_same() {
        let mut g = GenAi::new(10);
        g.series_mut((Some("m".into()), "vllm".into(), Some(CacheClass::Miss)))[0]
            .add(&TTFT_BOUNDS, 3 * MS);
        let h = &mut g.series_mut((None, "litellm".into(), None))[5];
        h.add(&TOKEN_BOUNDS, 900);
        h.sum = i128::from(i64::MAX) + 5;
        let j = g.save_json();
        assert_eq!(
            j["series"][0]["input_tokens"]["sum"],
            json!("9223372036854775812")
        );
        assert_eq!(GenAi::load_json(&j, 10), Ok(Some(g)));
        let mut bad = j.clone();
        bad["series"][0]["server_ttft_ms"]["count"] = json!(1);
        assert!(GenAi::load_json(&bad, 10).is_err());
        let mut other_bounds = j.clone();
        other_bounds["bounds"]["server_tpot_ms"][0] = json!(1);
        assert!(
            GenAi::load_json(&other_bounds, 10)
                .unwrap_err()
                .contains("server_tpot_ms")
        );
        // A file from before the durations were split: no histograms rather than wrong ones.
        let unsplit = json!({
            "bounds": {"ttft_ms": TTFT_BOUNDS, "tpot_ms": TPOT_BOUNDS, "e2e_ms": DURATION_BOUNDS,
                       "input_tokens": TOKEN_BOUNDS, "output_tokens": TOKEN_BOUNDS},
            "series": []
        });
        assert_eq!(GenAi::load_json(&unsplit, 10), Ok(None));
    }

    /// The families a request's durations go to, by who measured them.
    #[test]
    fn durations_go_to_the_family_of_whoever_measured_them() {
        let base = crate::metrics::derive(&crate::metrics::Timeline::default(), 0.5);
        let m = |ttft_origin, arrival_origin| Metrics {
            ttft: Ok(300.0 * MS as f64),
            ttft_origin,
            tpot: Ok(20.0 * MS as f64),
            e2e: Ok(2000.0 * MS as f64),
            arrival_origin,
            outcome: Outcome::Ok,
            ..base
        };
        let families = |m: &Metrics| -> Vec<&str> {
            FAMILIES
                .iter()
                .filter(|f| value(f, m).is_some())
                .map(|f| f.key)
                .collect()
        };
        let server = m(Some(Origin::Arrival), Origin::Arrival);
        assert_eq!(
            families(&server),
            ["server_ttft_ms", "server_tpot_ms", "server_e2e_ms"]
        );
        let gateway = m(Some(Origin::Gateway), Origin::Gateway);
        assert_eq!(families(&gateway), ["client_e2e_ms", "client_ttft_ms"]);
        // From the scheduling: the queue is left out of the TTFT; the E2E from the arrival is
        // the server's, the TPOT too.
        let scheduled = m(Some(Origin::Scheduled), Origin::Arrival);
        assert_eq!(families(&scheduled), ["server_tpot_ms", "server_e2e_ms"]);
        // A format whose arrival instant is the scheduling: its E2E leaves the queue out too.
        let from_prefill = m(Some(Origin::Scheduled), Origin::Scheduled);
        assert_eq!(families(&from_prefill), ["server_tpot_ms"]);
        // A gateway's E2E without a TTFT (not streamed).
        let unstreamed = Metrics {
            ttft: Err(crate::metrics::NullReason::NotStreamed),
            ..m(None, Origin::Gateway)
        };
        assert_eq!(families(&unstreamed), ["client_e2e_ms"]);
    }
}
