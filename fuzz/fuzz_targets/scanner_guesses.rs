//! The scanner's guesses from the lines before: arbitrary line A, then line B. A is read twice
//! (so the keys, separators and container layouts of A are what the scanner expects), then B.
//!
//! Input layout: `A \n B` (without a newline, B is A).
//!
//! Checked: B read after A gives exactly what B read alone gives (the same result, the same
//! error message); B's class (object, not an object, invalid) and, for an object, its slots
//! equal the serde_json reference's.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use tokentime::{Formats, PathSet, ReadError, Slots, builtins};

/// The paths of `--format auto` (with the Docker wrapper's, the enrich key and the record
/// formats'), plus a path below an array element.
fn paths() -> &'static PathSet {
    static PATHS: OnceLock<PathSet> = OnceLock::new();
    PATHS.get_or_init(|| {
        let mut paths = PathSet::default();
        for p in ["tokentime", "log", "stream"] {
            paths.add(&[p]);
        }
        let formats = Formats::compile(builtins(), &[], &mut paths);
        for i in 0..formats.len() {
            if let Some(spec) = formats.record_level(i) {
                let _ = Formats::compile(vec![spec], &[], &mut paths);
            }
        }
        paths.add(&["arr", "[0]", "x"]);
        paths.add(&["arr", "[-1]"]);
        paths
    })
}

fn class(r: &Result<(), ReadError>) -> u8 {
    match r {
        Ok(()) => 0,
        Err(ReadError::NotAnObject) => 1,
        Err(ReadError::Invalid(_)) => 2,
    }
}

fuzz_target!(|data: &[u8]| {
    let (a, b) = match data.iter().position(|&c| c == b'\n') {
        Some(nl) => (&data[..nl], &data[nl + 1..]),
        None => (data, data),
    };
    let paths = paths();
    let mut primed = Slots::default();
    let _ = paths.extract(a, &mut primed);
    let _ = paths.extract(a, &mut primed);
    let after = paths.extract(b, &mut primed);
    let mut alone = Slots::default();
    let fresh = paths.extract(b, &mut alone);
    assert_eq!(after, fresh, "read after A");
    if after.is_ok() {
        assert!(primed == alone, "slots after A");
    }
    let mut reference = Slots::default();
    let r = paths.extract_reference(b, &mut reference);
    assert_eq!(class(&after), class(&r), "{after:?} vs reference {r:?}");
    if after.is_ok() {
        assert!(primed == reference, "slots against the reference");
    }
});
