//! The fast scanner (`PathSet::extract`) against the serde_json reference
//! (`PathSet::extract_reference`): the same classification (object, not an object, invalid) and
//! the same slots on every testdata line, on generated logs of every format, on random
//! mutations of them, and on random JSON built around the trie's keys.

use crate::common::*;
use tokentime::{Document, Item, Objects};
use tokentime::{Formats, builtins as builtin};
use tokentime::{PathSet, ReadError, Slots};

/// The paths tokentime reads in `--format auto` mode (with the Docker wrapper's and the
/// record-level formats' paths), plus a few nested ones the built-in formats do not have (a
/// path below another path's value, an escaped key, array elements below array elements).
fn auto_paths() -> PathSet {
    let mut paths = PathSet::default();
    paths.add(&["tokentime"]);
    paths.add(&["log"]);
    paths.add(&["stream"]);
    let formats = Formats::compile(builtin(), &[], &mut paths);
    let _ = Formats::compile(builtin(), &["response".to_owned()], &mut paths);
    for i in 0..formats.len() {
        if let Some(spec) = formats.record_level(i) {
            let _ = Formats::compile(vec![spec], &[], &mut paths);
        }
    }
    paths.add(&["metadata"]);
    paths.add(&["model"]);
    paths.add(&["a/b", "c"]);
    paths.add(&["a/b"]);
    // Array elements: by index, the last one, below them, below elements, and a key that
    // names an element beside keys.
    paths.add(&["arr", "[0]"]);
    paths.add(&["arr", "[-1]", "x"]);
    paths.add(&["arr", "[-1]"]);
    paths.add(&["arr", "[1]", "[0]", "y"]);
    paths.add(&["arr", "[2]", "[-1]"]);
    paths.add(&["arr", "x"]);
    paths.add(&["choices", "[0]", "finish_reason"]);
    paths.add(&["choices", "[-1]"]);
    paths.add(&["timings", "[1]"]);
    paths.add(&["timings", "[-1]", "usage", "prompt_tokens"]);
    paths.add(&["response", "[0]", "x"]);
    paths.add(&["response", "[00]"]);
    paths
}

#[derive(Debug, PartialEq)]
enum Class {
    Object,
    NotAnObject,
    Invalid,
}

fn class(r: &Result<(), ReadError>) -> Class {
    match r {
        Ok(()) => Class::Object,
        Err(ReadError::NotAnObject) => Class::NotAnObject,
        Err(ReadError::Invalid(_)) => Class::Invalid,
    }
}

thread_local! {
    /// One thread's slots, reused line after line (and from one trie to the next) as a
    /// processor reuses them: the scanner guesses a line's keys from the lines before.
    static REUSED: std::cell::RefCell<Slots> = std::cell::RefCell::new(Slots::default());
}

/// Compares the two paths on one line; returns its class. The fast path is run twice: with
/// slots of its own, and with slots that read the lines before.
fn same(paths: &PathSet, line: &[u8], what: &str) -> Class {
    let (mut fast, mut reference) = (Slots::default(), Slots::default());
    let a = paths.extract(line, &mut fast);
    REUSED.with(|reused| {
        let mut reused = reused.borrow_mut();
        let again = paths.extract(line, &mut reused);
        assert_eq!(
            again,
            a,
            "{what}: reused slots on {:?}",
            String::from_utf8_lossy(line)
        );
        if a.is_ok() {
            assert!(*reused == fast, "{what}: reused slots differ");
        }
    });
    let b = paths.extract_reference(line, &mut reference);
    assert_eq!(
        class(&a),
        class(&b),
        "{what}: fast {a:?} vs reference {b:?} on {:?}",
        String::from_utf8_lossy(line)
    );
    if a.is_ok() {
        assert!(
            fast == reference,
            "{what}: slots differ on {:?}",
            String::from_utf8_lossy(line)
        );
    }
    class(&a)
}

/// Every line of every testdata file (JSON lines, logs, and the JSON files: big one-line
/// documents, pretty-printed arrays), every element of the JSON array documents and every
/// object of the pretty-printed object documents (newlines inside).
fn testdata_lines() -> Vec<Vec<u8>> {
    let mut out = vec![];
    for p in testdata_files(&["jsonl", "log", "json"]) {
        let bytes = std::fs::read(&p).unwrap();
        out.extend(lines_with_endings(&bytes).iter().map(|l| {
            let l = l.strip_suffix(b"\n").unwrap_or(l);
            l.strip_suffix(b"\r").unwrap_or(l).to_vec()
        }));
        match tokentime::detect_document(&mut &bytes[..]).unwrap() {
            Some(Document::Array) => {
                let _ = tokentime::for_each_element(&bytes[..], &mut |e| {
                    out.push(e.to_vec());
                    Ok(())
                });
            }
            Some(Document::Object) => {
                let mut objects = Objects::new(&bytes[..], 1 << 24);
                while let Some(Item::Object { bytes, .. }) = objects.next_item().unwrap() {
                    out.push(bytes.to_vec());
                }
            }
            None => {}
        }
    }
    out
}

fn generated_lines(per_format: u64) -> Vec<Vec<u8>> {
    let mut out = vec![];
    for (i, f) in ["litellm", "llamacpp", "vllm", "otlp"]
        .into_iter()
        .enumerate()
    {
        let mut buf = Vec::new();
        genlog::generate(f, 11 + i as u64, Some(per_format), None, &mut buf)
            .unwrap()
            .unwrap();
        out.extend(buf.split(|&b| b == b'\n').map(<[u8]>::to_vec));
    }
    out
}

#[test]
fn same_slots_on_every_testdata_and_generated_line() {
    let paths = auto_paths();
    let mut objects = 0;
    for (i, line) in testdata_lines().iter().enumerate() {
        objects += (same(&paths, line, &format!("testdata line {i}")) == Class::Object) as usize;
    }
    assert!(objects > 500, "{objects}");
    for (i, line) in generated_lines(500).iter().enumerate() {
        same(&paths, line, &format!("generated line {i}"));
    }
}

/// xorshift64*, so the test needs no crate.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Bytes that matter to a JSON reader, to insert or substitute.
const INTERESTING: &[&[u8]] = &[
    b"\"",
    b"\\",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b" ",
    b"\t",
    b"\r",
    b"\n",
    b"0",
    b"1",
    b"-",
    b"+",
    b".",
    b"e",
    b"E",
    b"n",
    b"t",
    b"f",
    b"u",
    b"\x00",
    b"\x1f",
    b"\x7f",
    b"\xc3\xa9",
    b"\xff",
    b"\xe2\x82",
    b"\\u00e9",
    b"\\ud83d\\ude00",
    b"\\ud83d",
    b"\\ude00",
    b"\\x",
    b"null",
    b"true",
    b"1e999",
    b"-0.5e-3",
    b"01",
    b"{}",
    b"[]",
    b"\"\"",
    b"NaN",
    b"\xef\xbb\xbf",
];

fn mutate(rng: &mut Rng, line: &[u8]) -> Vec<u8> {
    let mut l = line.to_vec();
    for _ in 0..1 + rng.below(3) {
        let at = rng.below(l.len() + 1);
        match rng.below(6) {
            0 if !l.is_empty() => {
                l.remove(at.min(l.len() - 1));
            }
            1 => {
                let ins = INTERESTING[rng.below(INTERESTING.len())];
                l.splice(at..at, ins.iter().copied());
            }
            2 if at < l.len() => {
                let ins = INTERESTING[rng.below(INTERESTING.len())];
                l.splice(at..at + 1, ins.iter().copied());
            }
            3 => l.truncate(at),
            4 if at < l.len() => {
                // Duplicate a span (a second copy of a key, say).
                let end = (at + rng.below(40)).min(l.len());
                let span = l[at..end].to_vec();
                let to = rng.below(l.len() + 1);
                l.splice(to..to, span);
            }
            _ => {
                let at = at.min(l.len().saturating_sub(1));
                if let Some(b) = l.get_mut(at) {
                    *b ^= 1 << rng.below(8);
                }
            }
        }
    }
    l
}

/// The lines mutations start from: objects (not the inner lines of pretty-printed documents),
/// not the biggest ones.
fn mutation_corpus() -> Vec<Vec<u8>> {
    let mut corpus = testdata_lines();
    corpus.extend(generated_lines(50));
    corpus.retain(|l| l.len() < 20_000 && l.trim_ascii_start().starts_with(b"{"));
    corpus
}

/// 20,000 random mutations of corpus lines, each read by both paths; with `primed`, each
/// mutation is read right after the line it came from, itself read twice. Both valid and
/// invalid results are exercised.
fn check_mutations(seed: u64, primed: bool) {
    let paths = auto_paths();
    let corpus = mutation_corpus();
    let mut rng = Rng(seed);
    let mut counts = [0usize; 3];
    for i in 0..20_000 {
        let line = &corpus[rng.below(corpus.len())];
        if primed {
            same(&paths, line, &format!("line before mutation {i}"));
            same(&paths, line, &format!("line before mutation {i}, again"));
        }
        let m = mutate(&mut rng, line);
        counts[same(&paths, &m, &format!("mutation {i}")) as usize] += 1;
        if primed {
            // Read right after its line with slots that saw that line alone: the mutation is
            // compared with the line's shape (its template) before anything else.
            let (mut own, mut reference) = (Slots::default(), Slots::default());
            let _ = paths.extract(line, &mut own);
            let read = paths.extract(&m, &mut own);
            let want = paths.extract_reference(&m, &mut reference);
            let what = format!("mutation {i} after its line alone");
            assert_eq!(class(&read), class(&want), "{what}: {read:?} vs {want:?}");
            assert!(read.is_err() || own == reference, "{what}: slots differ");
        }
    }
    assert!(counts[0] > 2_000 && counts[2] > 2_000, "{counts:?}");
}

#[test]
fn same_results_on_random_mutations() {
    check_mutations(0x9E37_79B9_7F4A_7C15, false);
}

/// The scanner guesses each member's separator and key from the line before, the layout of a
/// skipped container from the two lines before, and a whole line's shape from the lines
/// walked before: a mutation read right after the line it came from (read twice) meets those
/// guesses at every place, the mutated one too, and one read right after its line alone meets
/// that line's shape first.
#[test]
fn same_results_on_mutations_read_right_after_their_line() {
    check_mutations(0x5EED_0F6E_55AA, true);
}

/// A line whose shape is known (read once before, with slots of its own) is first compared
/// with that shape, and only its scalars are then read: one byte of a random line changed (most
/// bytes of a log line are in its strings and numbers) into one that a scalar may or may not
/// hold (a quote, a backslash, a digit, a sign, a control byte, a byte above 0x7F, ...) gives
/// what the reference gives.
#[test]
fn same_results_on_one_byte_changes_read_by_the_line_s_shape() {
    const BYTES: &[u8] = b"\"\\0019-+.eEanu \t\x01\x7f\x80\xc3\xff}],:";
    let paths = auto_paths();
    let corpus = mutation_corpus();
    let mut rng = Rng(0x0DD_BA11);
    let mut counts = [0usize; 3];
    for i in 0..20_000 {
        let line = &corpus[rng.below(corpus.len())];
        let mut m = line.clone();
        let at = rng.below(m.len());
        m[at] = BYTES[rng.below(BYTES.len())];
        let (mut own, mut reference) = (Slots::default(), Slots::default());
        let _ = paths.extract(line, &mut own);
        let read = paths.extract(&m, &mut own);
        let want = paths.extract_reference(&m, &mut reference);
        let what = format!("change {i}: byte {at} of {:?}", String::from_utf8_lossy(&m));
        assert_eq!(class(&read), class(&want), "{what}: {read:?} vs {want:?}");
        assert!(read.is_err() || own == reference, "{what}: slots differ");
        counts[class(&read) as usize] += 1;
    }
    assert!(counts[0] > 2_000 && counts[2] > 2_000, "{counts:?}");
}

/// Random JSON whose keys are mostly the trie's, so the fast path descends, records, and
/// meets duplicates, nulls, escaped keys and odd numbers at every level.
fn value(rng: &mut Rng, out: &mut Vec<u8>, depth: usize) {
    const KEYS: &[&str] = &[
        "timings",
        "prompt_ms",
        "predicted_n",
        "usage",
        "prompt_tokens",
        "metrics",
        "time_to_first_token_ms",
        "response",
        "a/b",
        "a\\/b",
        "c",
        "metadata",
        "x",
        "\\u0074imings",
        "tokentime",
        "\\ud800",
        "model",
        "startTime",
        "arr",
        "y",
        "[0]",
        "caf\u{e9}",
        "caf\\u00e9",
    ];
    const SCALARS: &[&str] = &[
        "null",
        "true",
        "false",
        "0",
        "-0",
        "12",
        "1.5",
        "-3.25e2",
        "1e999",
        "-1e400",
        "1e-999",
        "123456789012345678901234567890",
        "\"s\"",
        "\"\\u00e9\"",
        "\"\\ud83d\\ude00\"",
        "\"\\udc00\"",
        "\"x\\\"y\"",
        "\"caf\u{e9}\"",
        "\"\"",
    ];
    let ws = |rng: &mut Rng, out: &mut Vec<u8>| {
        if rng.below(4) == 0 {
            out.extend_from_slice([&b" "[..], b"\t", b"\r\n ", b"  "][rng.below(4)]);
        }
    };
    ws(rng, out);
    match if depth > 4 { 2 } else { rng.below(5) } {
        0 | 1 => {
            out.push(b'{');
            for k in 0..rng.below(5) {
                if k > 0 {
                    out.push(b',');
                }
                ws(rng, out);
                out.push(b'"');
                out.extend_from_slice(KEYS[rng.below(KEYS.len())].as_bytes());
                out.push(b'"');
                ws(rng, out);
                out.push(b':');
                value(rng, out, depth + 1);
            }
            ws(rng, out);
            out.push(b'}');
        }
        2 | 3 => out.extend_from_slice(SCALARS[rng.below(SCALARS.len())].as_bytes()),
        _ => {
            out.push(b'[');
            for k in 0..rng.below(4) {
                if k > 0 {
                    out.push(b',');
                }
                value(rng, out, depth + 1);
            }
            out.push(b']');
        }
    }
    ws(rng, out);
}

#[test]
fn same_results_on_random_json_around_the_paths() {
    let paths = auto_paths();
    let mut rng = Rng(7);
    let mut objects = 0;
    for i in 0..20_000 {
        let mut line = b"{\"timings\":".to_vec();
        value(&mut rng, &mut line, 0);
        line.extend_from_slice(b",\"response\":");
        value(&mut rng, &mut line, 0);
        if rng.below(2) == 0 {
            // An array (often) where the trie reads elements.
            line.extend_from_slice(b",\"arr\":[");
            for k in 0..rng.below(4) {
                if k > 0 {
                    line.push(b',');
                }
                value(&mut rng, &mut line, 1);
            }
            line.push(b']');
        }
        line.push(b'}');
        if rng.below(3) == 0 {
            line = mutate(&mut rng, &line);
        }
        objects += (same(&paths, &line, &format!("random {i}")) == Class::Object) as usize;
    }
    assert!(objects > 2_000, "{objects}");
}

#[test]
fn deep_nesting_is_skipped_without_limit_and_checked() {
    let paths = auto_paths();
    for depth in [1, 127, 128, 129, 300, 1000] {
        let deep = |open: &str, close: &str| {
            format!(
                "{{\"x\":{}1{},\"usage\":{{\"prompt_tokens\":3}}}}",
                open.repeat(depth),
                close.repeat(depth)
            )
        };
        assert_eq!(
            same(&paths, deep("[", "]").as_bytes(), "arrays"),
            Class::Object
        );
        let objs = format!(
            "{{\"x\":{}1{},\"usage\":{{\"prompt_tokens\":3}}}}",
            "{\"k\":".repeat(depth),
            "}".repeat(depth)
        );
        assert_eq!(same(&paths, objs.as_bytes(), "objects"), Class::Object);
        let unbalanced = format!("{{\"x\":{}1{}}}", "[".repeat(depth), "]".repeat(depth - 1));
        assert_eq!(
            same(&paths, unbalanced.as_bytes(), "unbalanced"),
            Class::Invalid
        );
    }
}

#[test]
fn invalid_utf8_anywhere_is_invalid() {
    let paths = auto_paths();
    for line in [
        &b"{\"skipped\":\"\xff\"}"[..],
        b"{\"usage\":{\"prompt_tokens\":1},\"k\":\"ok \xc3\"}",
        b"{\"\xc3\xa9\":1,\"x\":\"\xed\xa0\x80\"}",
        b"{\"id\":1,\"caf\xff\":2}",
        b"{\"usage\":{\"\xc3\":1}}",
    ] {
        // Twice: the second time the scanner guesses the keys from the first.
        assert_eq!(same(&paths, line, "utf8"), Class::Invalid);
        assert_eq!(same(&paths, line, "utf8, again"), Class::Invalid);
    }
    assert_eq!(
        same(&paths, "{\"caf\u{e9}\":\"\u{1F600}\"}".as_bytes(), "utf8"),
        Class::Object
    );
}

/// The nesting limit the reference meets below a path that has a value of its own (read again
/// from its raw text) or an array element (the same): its count starts afresh there.
#[test]
fn nesting_counts_start_afresh_below_slots_and_elements() {
    // Both parsers recurse once per trie level (200 here, a handful in real formats): give
    // the unoptimized build room.
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(nesting_afresh)
        .unwrap()
        .join()
        .unwrap();
}

fn nesting_afresh() {
    let mut paths = PathSet::default();
    let deep: Vec<&str> = std::iter::repeat_n("d", 200).collect();
    paths.add(&deep);
    paths.add(&["d", "d"]);
    let elements: Vec<&str> = std::iter::repeat_n(["e", "[0]"], 100).flatten().collect();
    paths.add(&elements);
    paths.add(&["e", "[0]", "e"]);
    let below_element: Vec<&str> = ["e", "[1]"]
        .into_iter()
        .chain(std::iter::repeat_n("d", 150))
        .collect();
    paths.add(&below_element);
    let mut classes = vec![];
    for depth in [100, 125, 126, 127, 128, 129, 130, 150, 199] {
        let objects = format!(
            "{{{}\"d\":1{}}}",
            "\"d\":{".repeat(depth),
            "}".repeat(depth)
        );
        classes.push(same(
            &paths,
            objects.as_bytes(),
            &format!("objects {depth}"),
        ));
        let arrays = format!(
            "{{{}\"e\":1{}}}",
            "\"e\":[{".repeat(depth / 2),
            "}]".repeat(depth / 2)
        );
        classes.push(same(
            &paths,
            arrays.as_bytes(),
            &format!("elements {depth}"),
        ));
        let in_element = format!(
            "{{\"e\":[0,{}1{}]}}",
            "{\"d\":".repeat(depth),
            "}".repeat(depth)
        );
        classes.push(same(
            &paths,
            in_element.as_bytes(),
            &format!("in element {depth}"),
        ));
    }
    // Both sides of the limit were met.
    assert!(classes.contains(&Class::Object) && classes.contains(&Class::Invalid));
}
