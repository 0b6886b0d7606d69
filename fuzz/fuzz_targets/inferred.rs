//! The `inferred` format: the generic reader learned from a sample no format knows.
//!
//! The input's lines (at most 64) are the sample. Checked: nothing panics (conflicting units,
//! strings, nested objects, any depth); a format is inferred only with a time field, its
//! markers and fields non-empty; its formats-file entry (`formats --guess`) parses back, as
//! `--formats` reads it, to the same format; read with it, every line gives metrics that are
//! finite non-negative numbers or a reason.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tokentime::{Kind, Processor, guess_format, parse_formats_file};

fuzz_target!(|data: &[u8]| {
    let lines: Vec<&[u8]> = data.split(|&b| b == b'\n').take(64).collect();
    let (spec, toml) = guess_format(&lines);
    let Some(spec) = spec else {
        return;
    };
    assert!(
        !spec.markers.is_empty() && !spec.fields.is_empty(),
        "{spec:?}"
    );
    let back = parse_formats_file(&toml).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    assert_eq!(back.len(), 1, "{toml}");
    assert_eq!(back[0], spec, "{toml}");
    let mut proc = Processor::new(vec![spec], &[], None, &[], 0.5);
    for line in &lines {
        if let Kind::Requests = proc.process(line) {
            for r in proc.requests() {
                let m = &r.metrics;
                let values = [m.ttft, m.queue, m.prefill, m.decode, m.tpot, m.e2e];
                for ns in values.into_iter().flatten() {
                    assert!(ns.is_finite() && ns >= 0.0, "metric {ns} in {m:?}");
                }
            }
        }
    }
});
