//! "Unknown" values a log writes as if they were instants or samples: an arrival of 0, epoch
//! seconds in the year 9999, a first token after the end, durations that are all 0. None of
//! them may become a sample; each is null with a reason and counted as an anomaly. The last
//! test builds random records from hostile instants and durations and checks that no sample
//! lies outside what the record's other fields allow.

use crate::common::*;
use serde_json::Value;

/// One LiteLLM line: `R` of the brief with its three instants replaced (raw JSON text).
fn litellm(start: &str, first: &str, end: &str) -> String {
    format!(
        r#"{{"id":"a","call_type":"acompletion","stream":true,"status":"success","startTime":{start},"completionStartTime":{first},"endTime":{end},"prompt_tokens":1,"completion_tokens":11}}"#
    )
}

/// The spliced metrics of each line of `input`, `None` for a line passed through.
fn enrich(input: &str) -> Vec<Option<Value>> {
    let out = run_ok(&["--threads", "1"], input.as_bytes());
    lines_with_endings(&out)
        .into_iter()
        .map(|l| {
            let (_, o) = unsplice(l, "tokentime")?;
            Some(serde_json::from_str(&o).unwrap())
        })
        .collect()
}

/// The spliced metrics of one line, which must be a request.
fn one(line: &str) -> Value {
    let mut v = enrich(&format!("{line}\n"));
    assert_eq!(v.len(), 1);
    v.remove(0).expect("a request")
}

/// The summary's coverage anomalies for `input`.
fn anomalies(input: &str) -> Value {
    let out = run_ok(&["summary", "-o", "json"], input.as_bytes());
    let v: Value = serde_json::from_slice(&out).unwrap();
    v["coverage"]["anomalies"].clone()
}

#[test]
fn the_reference_record_is_read_as_before() {
    let m = one(&litellm("1741946531.0", "1741946531.2", "1741946532.2"));
    assert_eq!(m["ttft_ms"], 200.0);
    assert_eq!(m["e2e_ms"], 1200.0);
    assert_eq!(m["decode_ms"], 1000.0);
    assert_eq!(m["tpot_ms"], 100.0);
}

#[test]
fn an_arrival_of_zero_is_unknown_not_a_huge_ttft() {
    let line = litellm("0", "1741946531.2", "1741946532.2");
    let m = one(&line);
    assert_eq!(m["ttft_ms"], Value::Null, "{m}");
    assert_eq!(m["e2e_ms"], Value::Null, "{m}");
    assert_eq!(m["nulls"]["ttft_ms"], "implausible_instant");
    assert_eq!(m["nulls"]["e2e_ms"], "implausible_instant");
    // The two instants that are known still give the decode.
    assert_eq!(m["decode_ms"], 1000.0);
    assert_eq!(m["tpot_ms"], 100.0);
    assert_eq!(m["nulls"].get("queue_ms"), Some(&Value::from("not_logged")));
    let a = anomalies(&format!("{line}\n"));
    assert_eq!(a["implausible_instant"], 1, "{a}");
    assert_eq!(a["unparseable"], 0, "{a}");
}

#[test]
fn year_9999_epoch_seconds_are_not_read_as_milliseconds() {
    // 9999-12-31T00:00:00Z is 253402214400 s: above 1e11, it used to be read as milliseconds
    // (1978), giving a TTFT of 0.2 ms and an E2E of 1.2 ms, 1000x too small.
    let numbers = litellm("253402214400.0", "253402214400.2", "253402214401.2");
    let text = litellm(
        r#""9999-12-31T00:00:00Z""#,
        r#""9999-12-31T00:00:00.2Z""#,
        r#""9999-12-31T00:00:01.2Z""#,
    );
    for line in [&numbers, &text] {
        let m = one(line);
        for metric in ["ttft_ms", "e2e_ms", "decode_ms", "tpot_ms"] {
            assert_eq!(m[metric], Value::Null, "{line}: {m}");
            assert_eq!(m["nulls"][metric], "implausible_instant", "{line}: {m}");
        }
    }
    // The same instant is the same anomaly in either spelling, not `unparseable` in one.
    let a = anomalies(&format!("{numbers}\n{text}\n"));
    assert_eq!(a["implausible_instant"], 2, "{a}");
    assert_eq!(a["unparseable"], 0, "{a}");
}

#[test]
fn a_first_token_after_the_end_nulls_ttft() {
    // First token at 4.0 s, end at 1.0 s: the two disagree, and either may be the wrong one.
    let line = litellm("1741946531.0", "1741946535.0", "1741946532.0");
    let m = one(&line);
    assert_eq!(m["ttft_ms"], Value::Null, "{m}");
    assert_eq!(m["nulls"]["ttft_ms"], "out_of_order");
    assert_eq!(m["nulls"]["decode_ms"], "negative_interval");
    assert_eq!(m["nulls"]["tpot_ms"], "negative_interval");
    assert_eq!(
        m["e2e_ms"],
        Value::Null,
        "the end is as suspect as the first token: {m}"
    );
    assert_eq!(m["nulls"]["e2e_ms"], "out_of_order");
    let a = anomalies(&format!("{line}\n"));
    assert_eq!(a["out_of_order"], 1, "{a}");
    assert_eq!(a["negative_interval"], 1, "{a}");
}

#[test]
fn vllm_all_zero_durations_make_no_tpot_sample() {
    let line = r#"{"id":"x","object":"chat.completion","metrics":{"queue_time_ms":0,"time_to_first_token_ms":0,"generation_time_ms":0},"usage":{"prompt_tokens":5,"completion_tokens":11}}"#;
    let m = one(line);
    assert_eq!(m["format"], "vllm");
    for metric in ["tpot_ms", "decode_ms", "prefill_ms", "ttft_ms", "e2e_ms"] {
        assert_eq!(m[metric], Value::Null, "{metric}: {m}");
        assert_eq!(m["nulls"][metric], "sentinel", "{metric}: {m}");
    }
    // A real decode of a two-token answer with no queue is kept.
    let real = r#"{"id":"y","object":"chat.completion","metrics":{"queue_time_ms":0,"time_to_first_token_ms":12.5,"generation_time_ms":30},"usage":{"prompt_tokens":5,"completion_tokens":2}}"#;
    let m = one(real);
    assert_eq!(m["tpot_ms"], 30.0, "{m}");
    assert_eq!(m["queue_ms"], 0.0, "{m}");
    assert_eq!(m["ttft_ms"], 12.5, "{m}");
}

/// A small deterministic PRNG (xorshift64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next() % items.len() as u64) as usize]
    }
}

/// One hostile or plausible instant: its raw JSON text and the epoch seconds it stands for
/// when it is a plausible wall-clock instant (2000-01-01 to 2200-01-01).
fn instant(rng: &mut Rng, base: f64) -> (String, Option<f64>) {
    const HOSTILE: [&str; 16] = [
        "0",
        "-1",
        "-1741946531.0",
        "1e30",
        "1e308",
        "\"NaN\"",
        "\"abc\"",
        "null",
        "true",
        "253402214400.0",
        "\"9999-12-31T00:00:00Z\"",
        "\"1999-12-31T23:59:59Z\"",
        "1.0",
        "946684799.0",
        "99999999999.9",
        "\"-5\"",
    ];
    // Offsets of up to 10 s either way: the instants of a record come out in any order.
    let offset = (rng.next() % 20_000) as f64 / 1000.0 - 10.0;
    let s = base + offset;
    match rng.next() % 6 {
        0 => ((*rng.pick(&HOSTILE)).to_owned(), None),
        1 => (
            format!("{:.0}", s * 1000.0),
            Some((s * 1000.0).round() / 1000.0),
        ),
        2 => {
            let whole = s.floor();
            let ms = ((s - whole) * 1000.0).round().min(999.0);
            let secs = whole as i64;
            let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
            let (y, m, d) = civil_from_days(days);
            let text = format!(
                "\"{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z\"",
                rem / 3600,
                rem / 60 % 60,
                rem % 60,
                ms as i64
            );
            (text, Some(whole + ms / 1000.0))
        }
        _ => (format!("{s:.3}"), Some((s * 1000.0).round() / 1000.0)),
    }
}

/// Howard Hinnant's `civil_from_days`: (year, month, day) of days since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// A hostile duration in ms (vLLM's `metrics`): raw JSON text.
fn duration(rng: &mut Rng) -> String {
    const VALUES: [&str; 12] = [
        "0", "0.0", "-1", "-250.5", "1e30", "\"NaN\"", "\"x\"", "null", "1e-9", "12.5", "300",
        "5000",
    ];
    (*rng.pick(&VALUES)).to_owned()
}

fn ms(v: &Value) -> Option<f64> {
    v.as_f64()
}

/// Every duration is finite and non-negative, TPOT positive, and the parts fit the whole.
fn check_common(m: &Value, line: &str) {
    for metric in [
        "ttft_ms",
        "tpot_ms",
        "e2e_ms",
        "queue_ms",
        "prefill_ms",
        "decode_ms",
    ] {
        match &m[metric] {
            Value::Null => assert!(m["nulls"][metric].is_string(), "{metric}: {line}: {m}"),
            v => {
                let v = v.as_f64().unwrap();
                assert!(v.is_finite() && v >= 0.0, "{metric} {v}: {line}: {m}");
            }
        }
    }
    if let Some(t) = ms(&m["tpot_ms"]) {
        assert!(t > 0.0, "a TPOT of 0: {line}: {m}");
    }
    if let (Some(f), Some(e)) = (ms(&m["ttft_ms"]), ms(&m["e2e_ms"])) {
        assert!(f <= e + 1e-3, "TTFT {f} > E2E {e}: {line}: {m}");
    }
    if let (Some(d), Some(e)) = (ms(&m["decode_ms"]), ms(&m["e2e_ms"])) {
        assert!(d <= e + 1e-3, "decode {d} > E2E {e}: {line}: {m}");
    }
}

/// `b - a` in ms, when both are plausible and in order.
fn span(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    let d = (b? - a?) * 1000.0;
    (d >= 0.0).then_some(d)
}

#[test]
fn no_sample_lies_outside_what_a_hostile_record_allows() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let base = 1_741_946_531.0;
    let mut lines = String::new();
    let mut expect = vec![];
    for i in 0..1500 {
        if i % 3 == 2 {
            let (q, p, d) = (duration(&mut rng), duration(&mut rng), duration(&mut rng));
            let n = *rng.pick(&[0u32, 1, 2, 11]);
            lines.push_str(&format!(
                r#"{{"id":"v{i}","object":"chat.completion","metrics":{{"queue_time_ms":{q},"time_to_first_token_ms":{p},"generation_time_ms":{d}}},"usage":{{"prompt_tokens":5,"completion_tokens":{n}}}}}"#
            ));
            expect.push(None);
        } else {
            let (a, f, e) = (
                instant(&mut rng, base),
                instant(&mut rng, base),
                instant(&mut rng, base),
            );
            lines.push_str(&litellm(&a.0, &f.0, &e.0));
            expect.push(Some((a.1, f.1, e.1)));
        }
        lines.push('\n');
    }
    let out = enrich(&lines);
    assert_eq!(out.len(), expect.len());
    let near = |x: f64, y: f64| (x - y).abs() <= 0.01;
    for ((m, want), line) in out.iter().zip(&expect).zip(lines.lines()) {
        // A line with nothing readable is no request: passed through.
        let Some(m) = m else { continue };
        check_common(m, line);
        let Some((a, f, e)) = *want else { continue };
        // LiteLLM: each metric is its two instants' difference, and only when both are
        // plausible and every pair of the three present ones is in order.
        let ordered = span(a, f).is_some() || a.is_none() || f.is_none();
        let ordered = ordered && (span(f, e).is_some() || f.is_none() || e.is_none());
        let ordered = ordered && (span(a, e).is_some() || a.is_none() || e.is_none());
        if let Some(t) = ms(&m["ttft_ms"]) {
            let want = span(a, f).filter(|_| ordered);
            assert!(
                want.is_some_and(|w| near(w, t)),
                "TTFT {t} vs {want:?}: {line}: {m}"
            );
        }
        if let Some(t) = ms(&m["e2e_ms"]) {
            let want = span(a, e).filter(|_| ordered);
            assert!(
                want.is_some_and(|w| near(w, t)),
                "E2E {t} vs {want:?}: {line}: {m}"
            );
        }
        if let Some(t) = ms(&m["decode_ms"]) {
            let want = span(f, e).filter(|_| ordered);
            assert!(
                want.is_some_and(|w| near(w, t)),
                "decode {t} vs {want:?}: {line}: {m}"
            );
        }
    }
}
