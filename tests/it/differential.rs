//! Differential: enriching an input loses and invents nothing. For every testdata input and for
//! generated inputs that mix JSON lines of many formats with documents, banners, tracebacks,
//! brackets and cut lines, with one and two threads, from a file and from a pipe:
//!
//! - `summary -o json` of the enriched output equals `summary -o json` of the input, every
//!   field, and so does its exit status. Nothing is excluded: the JSON summary names no input
//!   (the `inputs` member is written only for several inputs) and counts no bytes, and
//!   `summary` reads a line that carries the enrich key as it reads the line without it.
//! - The requests `summary` counts equal the metrics objects enrich splices: a line holding one
//!   request carries `"tokentime":{...}`, a line holding several (an OTLP export, a compact
//!   vLLM or guidellm benchmark result) carries `"tokentime":[{...}, ...]`, one object per
//!   request, so the count is the sum of those arrays' lengths plus the single objects.
//! - A line that is a JSON array (among JSON lines) passes through unchanged: its objects (arrays
//!   in it flattened) are written one per line and enriched, and their metrics objects counted.
//! - A document (a JSON array of records, or pretty-printed objects, as the reader's own
//!   detection says) is no JSON lines: enrich passes an array through byte for byte and a
//!   pretty-printed object's lines unchanged (`summary` reads their records). For these the
//!   correspondence is with the records: each record written as one line (its newlines made
//!   blanks, nothing else changed) and enriched carries exactly `summary`'s request count of
//!   metrics objects.

use crate::common::*;
use serde_json::Value;
use std::io::{BufReader, Read};
use std::path::Path;
use tokentime::{Document, Item, Objects, for_each_element, sniff_document};

/// One way of handing an input to tokentime.
#[derive(Clone, Copy, Debug)]
struct Way {
    threads: &'static str,
    from_file: bool,
}

const WAYS: [Way; 4] = [
    Way {
        threads: "1",
        from_file: true,
    },
    Way {
        threads: "1",
        from_file: false,
    },
    Way {
        threads: "2",
        from_file: true,
    },
    Way {
        threads: "2",
        from_file: false,
    },
];

/// Runs tokentime with `args` (then `--threads`) on `input`, written to `dir/name` when `way`
/// reads a file, piped otherwise. Returns the exit status and stdout.
fn run_way(args: &[&str], input: &[u8], way: Way, dir: &Path, name: &str) -> (i32, Vec<u8>) {
    let mut a = args.to_vec();
    a.extend(["--threads", way.threads]);
    let path = dir.join(name);
    let path = path.to_str().unwrap();
    let stdin: &[u8] = if way.from_file {
        std::fs::write(path, input).unwrap();
        a.push(path);
        b""
    } else {
        input
    };
    let out = run(&a, stdin);
    (out.status.code().unwrap_or(-1), out.stdout)
}

/// The metrics objects spliced into `enriched`: one per single object, one per element of a
/// spliced array. A line that already carried the key before enrich would count too: no
/// input here has one (the `*.expected.jsonl` outputs are not inputs).
fn metrics_carried(enriched: &[u8]) -> usize {
    enriched_objects(enriched)
        .into_iter()
        .flatten()
        .map(|v| match v {
            Value::Array(a) => a.len(),
            _ => 1,
        })
        .sum()
}

/// The objects of the lines that are JSON arrays (arrays in them flattened), one per line.
fn array_lines_as_lines(text: &[u8]) -> Vec<u8> {
    fn objects(v: &Value, out: &mut Vec<u8>) {
        match v {
            Value::Array(a) => a.iter().for_each(|e| objects(e, out)),
            Value::Object(_) => {
                out.extend(serde_json::to_vec(v).unwrap());
                out.push(b'\n');
            }
            _ => {}
        }
    }
    let mut out = vec![];
    for line in text.split(|&b| b == b'\n') {
        let line = line.trim_ascii();
        if line.first() == Some(&b'[')
            && let Ok(v) = serde_json::from_slice::<Value>(line)
        {
            objects(&v, &mut out);
        }
    }
    out
}

/// The records of a document, one per line: each one's bytes with its newlines made blanks.
fn records_as_lines(text: &[u8], kind: Document) -> Vec<u8> {
    let mut out = vec![];
    let mut push = |b: &[u8]| {
        out.extend(b.iter().map(|&c| if c == b'\n' { b' ' } else { c }));
        out.push(b'\n');
    };
    match kind {
        Document::Array => for_each_element(text, &mut |b| {
            push(b);
            Ok(())
        })
        .expect("a document the detection accepted"),
        Document::Object => {
            let mut objects = Objects::new(text, usize::MAX);
            while let Some(item) = objects.next_item().unwrap() {
                match item {
                    Item::Object { bytes, .. } => push(bytes),
                    other => panic!("{other:?} in a document the detection accepted"),
                }
            }
        }
    }
    out
}

/// The input's bytes as tokentime reads them (gzip and zstd inflated).
fn plain(input: &[u8]) -> Vec<u8> {
    let mut out = vec![];
    if input.starts_with(&[0x1f, 0x8b]) {
        flate2::read::MultiGzDecoder::new(input)
            .read_to_end(&mut out)
            .unwrap();
    } else if input.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        out = zstd::stream::decode_all(input).unwrap();
    } else {
        out = input.to_vec();
    }
    out
}

/// Checks `input` (run with the extra `opts`) every way in `ways`; returns the request count,
/// the same every way, and the kind of document the input is (`None`: JSON lines). `what`
/// names the input in messages.
fn check_ways(input: &[u8], opts: &[&str], ways: &[Way], what: &str) -> (u64, Option<Document>) {
    let dir = tempfile::tempdir().unwrap();
    let text = plain(input);
    let (kind, _) = sniff_document(BufReader::new(&text[..]), usize::MAX).unwrap();
    let mut summary_args = vec!["summary", "-o", "json"];
    summary_args.extend_from_slice(opts);
    let mut counts = vec![];
    for &way in ways {
        let (code, s_in) = run_way(&summary_args, input, way, dir.path(), "input");
        let (enrich_code, enriched) = run_way(opts, input, way, dir.path(), "input");
        assert_eq!(enrich_code, 0, "{what} {way:?}: enrich failed");
        let (code_out, s_out) = run_way(&summary_args, &enriched, way, dir.path(), "enriched");
        let s_in: Value = serde_json::from_slice(&s_in).unwrap();
        let s_out: Value = serde_json::from_slice(&s_out).unwrap();
        assert_eq!(
            (code_out, &s_out),
            (code, &s_in),
            "{what} {way:?}: summary of the enriched output"
        );
        let requests = s_in["coverage"]["requests"].as_u64().unwrap();
        let carried = match kind {
            None => {
                // A line that is a JSON array has no object to splice into: it passes through,
                // and its requests are counted as those of a one-line array document.
                let elements = array_lines_as_lines(&text);
                let from_arrays = if elements.is_empty() {
                    0
                } else {
                    let (_, enriched) = run_way(opts, &elements, way, dir.path(), "elements");
                    metrics_carried(&enriched)
                };
                metrics_carried(&enriched) + from_arrays
            }
            Some(kind) => {
                if kind == Document::Array {
                    assert_eq!(enriched, text, "{what} {way:?}: an array passes through");
                }
                let lines = records_as_lines(&text, kind);
                let (_, enriched) = run_way(opts, &lines, way, dir.path(), "records");
                metrics_carried(&enriched)
            }
        };
        assert_eq!(
            carried as u64, requests,
            "{what} {way:?} ({kind:?}): metrics objects spliced vs requests counted"
        );
        counts.push(requests);
    }
    assert!(counts.iter().all(|&c| c == counts[0]), "{what}: {counts:?}");
    (counts[0], kind)
}

/// [`check_ways`] every way: one and two threads, a file and a pipe.
pub(crate) fn check_every_way(input: &[u8], opts: &[&str], what: &str) -> (u64, Option<Document>) {
    check_ways(input, opts, &WAYS, what)
}

#[test]
fn every_testdata_input_summarises_the_same_enriched() {
    // The inputs the golden test runs: every testdata log (compressed ones too) and the
    // genlog-generated logs, with `--formats` for the custom format's logs. Left out there,
    // and here: the golden outputs and the `*.expected.jsonl` enrich outputs (outputs, not
    // inputs; their lines already carry the key), READMEs, SOURCE.md and scripts (not logs),
    // formats files (options, not logs), and `testdata/cases/` (each case is a command line
    // with its own options and expected exit status, run by `cases`).
    // Paths are relative to the package root, the tests' working directory.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let inputs = crate::golden::inputs();
    assert!(inputs.len() > 60, "{}", inputs.len());
    let mut requests = 0;
    for (rel, extra) in &inputs {
        let input = std::fs::read(root.join(rel)).unwrap();
        requests += check_every_way(&input, extra, rel).0;
    }
    assert!(requests > 10_000, "{requests}");
}

/// A small deterministic generator (xorshift64*).
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

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The request lines of every format: each line of the testdata samples (JSON objects of 17
/// producers' formats, some joined across lines, some holding several requests).
fn sample_lines() -> Vec<String> {
    let mut lines = vec![];
    for p in testdata_files(&["jsonl"]) {
        let name = p.to_string_lossy();
        if !name.contains("/samples/") || name.ends_with(".expected.jsonl") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        lines.extend(
            text.lines()
                .filter(|l| !l.trim().is_empty())
                .map(str::to_owned),
        );
    }
    assert!(lines.len() > 60, "{}", lines.len());
    lines
}

const BANNER: &str = "{\n  \"event\": \"startup\",\n  \"model\": \"m\",\n  \"args\": {\n    \"port\": 8000,\n    \"tp\": [1, 2]\n  }\n}";
const TRACEBACK: &str = "Traceback (most recent call last):\n  File \"/app/server.py\", line 42, in handle\n    raise ValueError(\"boom {\")\nValueError: boom {";
const TEXT: &str = "INFO:     127.0.0.1:50312 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK";

/// `line` cut at a random char boundary (a writer killed mid-line).
fn cut(rng: &mut Rng, line: &str) -> String {
    let mut at = rng.below(line.len().max(1));
    while !line.is_char_boundary(at) {
        at -= 1;
    }
    line[..at].to_owned()
}

/// A whole JSON array of 0 to 3 sample records, pretty-printed or compact.
fn array_doc(rng: &mut Rng, samples: &[String]) -> String {
    let records: Vec<&str> = (0..rng.below(4))
        .map(|_| rng.pick(samples).as_str())
        .collect();
    if rng.below(2) == 0 {
        format!("[\n  {}\n]", records.join(",\n  "))
    } else {
        format!("[{}]", records.join(","))
    }
}

/// A sample record pretty-printed (as `json.dump(indent=2)` writes a result).
fn pretty(line: &str) -> String {
    let v: Value = serde_json::from_str(line).unwrap();
    serde_json::to_string_pretty(&v).unwrap()
}

/// One generated input: mostly JSON lines mixed with everything that is not one; one in eight
/// is a whole array document, one in eight whole pretty-printed objects.
fn generate(rng: &mut Rng, samples: &[String]) -> Vec<u8> {
    let mode = rng.below(8);
    let n = 1 + rng.below(12);
    let mut parts: Vec<String> = vec![];
    for _ in 0..n {
        let part = match mode {
            0 => array_doc(rng, samples),
            1 if rng.below(3) == 0 => rng.pick(samples).clone(),
            1 => pretty(rng.pick(samples).as_str()),
            _ => match rng.below(16) {
                0..=6 => rng.pick(samples).clone(),
                7 => BANNER.to_owned(),
                8 => TRACEBACK.to_owned(),
                9 => (*rng.pick(&["[]", "[", "]", "[{\"x\":1}]", "],"])).to_owned(),
                10 => format!("[{}]", rng.pick(samples)),
                11 => (*rng.pick(&["", "  ", "\t", "\r"])).to_owned(),
                12 => array_doc(rng, samples),
                13 => {
                    let line = rng.pick(samples).clone();
                    cut(rng, &line)
                }
                14 => pretty(rng.pick(samples).as_str()),
                _ => TEXT.to_owned(),
            },
        };
        parts.push(part);
    }
    let eol = if rng.below(6) == 0 { "\r\n" } else { "\n" };
    let mut text = parts.join(eol);
    if rng.below(5) != 0 {
        text.push_str(eol);
    }
    text.into_bytes()
}

/// Inputs `from..to` of the generated sequence. Each runs with one and with two threads, from
/// a file with one and a pipe with the other, swapped from one input to the next: every
/// combination runs on half the inputs (all four on each would double the time for little).
/// Returns the requests counted, and how many inputs were lines, arrays and objects.
fn check_generated(from: u64, to: u64) -> (u64, [usize; 3]) {
    let samples = sample_lines();
    let mut requests = 0;
    let mut kinds = [0; 3];
    for seed in from..to {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (seed + 1).wrapping_mul(0xD1B5_4A32_D192_ED03));
        let input = generate(&mut rng, &samples);
        let ways = if seed % 2 == 0 {
            [WAYS[0], WAYS[3]]
        } else {
            [WAYS[1], WAYS[2]]
        };
        let (n, kind) = check_ways(&input, &[], &ways, &format!("generated input {seed}"));
        requests += n;
        kinds[match kind {
            None => 0,
            Some(Document::Array) => 1,
            Some(Document::Object) => 2,
        }] += 1;
    }
    (requests, kinds)
}

/// Each quarter of the 400 inputs holds requests and inputs read as lines, as array documents
/// and as pretty-printed objects (the generator's shares: 3/4, 1/8, 1/8).
fn check_quarter(q: u64) {
    let (requests, [lines, arrays, objects]) = check_generated(q * 100, q * 100 + 100);
    assert!(requests > 200, "{requests}");
    assert!(
        lines > 50 && arrays > 4 && objects > 4,
        "{lines} {arrays} {objects}"
    );
}

#[test]
fn generated_mixed_inputs_0() {
    check_quarter(0);
}

#[test]
fn generated_mixed_inputs_1() {
    check_quarter(1);
}

#[test]
fn generated_mixed_inputs_2() {
    check_quarter(2);
}

#[test]
fn generated_mixed_inputs_3() {
    check_quarter(3);
}
