//! Property: enrich never loses, reorders or alters a byte of input, on mutated testdata.
//!
//! Inputs are built from testdata lines, mutated (bytes flipped, inserted, deleted; lines cut
//! short, split in two, joined), with `\n` or `\r\n` endings, a BOM or not, a final newline or
//! not, and run in-process through `tokentime::run` in enrich mode, sometimes with a small
//! `--max-line-bytes`, another key or `--root response`. Every output line must be its input
//! line, or that line with exactly one member inserted before its closing `}`: a comma unless
//! the object is empty, `"KEY":`, and a JSON object or array. A JSON input line must stay a
//! JSON line equal to the input with the key set. The generator is a fixed-seed xorshift, so a
//! failure names its case number and is reproducible; the fuzz crate (`fuzz/enrich_splice`)
//! explores the same property without a bound.

use crate::common::*;
use serde_json::Value;
use std::io::Write;
use tokentime::ExitCode;

const BOM: &[u8] = b"\xEF\xBB\xBF";

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn percent(&mut self, p: u64) -> bool {
        self.next() % 100 < p
    }
}

/// Every line of every testdata file, without its ending.
fn testdata_lines() -> Vec<Vec<u8>> {
    let mut lines = vec![];
    for f in testdata_files(&["jsonl"]) {
        let bytes = std::fs::read(f).unwrap();
        for l in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            lines.push(l.strip_suffix(b"\r").unwrap_or(l).to_vec());
        }
    }
    lines
}

/// Bytes a mutation inserts: JSON's structure, escapes, blanks, line breaks, invalid UTF-8,
/// the start of `NaN`, digits.
const INTERESTING: &[u8] = b"{}[]\",:\\ \t\r\n\xff\xc3N-.e0159";

fn mutate(rng: &mut Rng, line: &mut Vec<u8>) {
    for _ in 0..1 + rng.below(3) {
        let n = line.len();
        match rng.below(6) {
            0 if n > 0 => line[rng.below(n)] ^= 1 << rng.below(8),
            1 => {
                let b = if rng.percent(80) {
                    INTERESTING[rng.below(INTERESTING.len())]
                } else {
                    rng.next() as u8
                };
                line.insert(rng.below(n + 1), b);
            }
            2 if n > 0 => {
                let at = rng.below(n);
                let len = (1 + rng.below(8)).min(n - at);
                line.drain(at..at + len);
            }
            3 => line.truncate(rng.below(n + 1)),
            4 if n > 0 => {
                // A member, or any span, repeated: duplicate keys, `}}`, `,,`.
                let at = rng.below(n);
                let len = (1 + rng.below(32)).min(n - at);
                let span = line[at..at + len].to_vec();
                line.splice(at..at, span);
            }
            _ => {
                // Blanks after the closing brace, where the splice must leave them.
                let blanks = [&b" "[..], b"\t", b"\r", b" \t "];
                line.extend_from_slice(blanks[rng.below(blanks.len())]);
            }
        }
    }
}

/// An input of 1 to 8 lines, some mutated, with mixed endings, maybe a BOM, maybe no final
/// newline, maybe a line split in two.
fn build_input(rng: &mut Rng, pool: &[Vec<u8>]) -> Vec<u8> {
    let mut input = Vec::new();
    if rng.percent(15) {
        input.extend_from_slice(BOM);
    }
    for _ in 0..1 + rng.below(8) {
        let mut line = pool[rng.below(pool.len())].clone();
        if rng.percent(60) {
            mutate(rng, &mut line);
        }
        if rng.percent(10) && !line.is_empty() {
            let at = rng.below(line.len());
            line.insert(at, b'\n');
        }
        input.extend_from_slice(&line);
        input.extend_from_slice(if rng.percent(30) { b"\r\n" } else { b"\n" });
    }
    if rng.percent(20) {
        input.pop();
    }
    input
}

fn enrich(input: &[u8], key: &str, root: bool, max_line_bytes: usize) -> Vec<u8> {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(input).unwrap();
    file.flush().unwrap();
    let mut args = vec![
        "tokentime".to_owned(),
        "--key".to_owned(),
        key.to_owned(),
        "--max-line-bytes".to_owned(),
        max_line_bytes.to_string(),
        "--max-diagnostics".to_owned(),
        "0".to_owned(),
    ];
    if root {
        args.extend(["--root".to_owned(), "response".to_owned()]);
    }
    args.push(file.path().display().to_string());
    let config = tokentime::config_from_args(args).unwrap();
    let mut out = Vec::new();
    let code = tokentime::run(&config, &mut out).unwrap();
    assert_eq!(code, ExitCode::Ok);
    out
}

fn split_ending(line: &[u8]) -> (&[u8], &[u8]) {
    let n = if line.ends_with(b"\r\n") {
        2
    } else if line.ends_with(b"\n") {
        1
    } else {
        0
    };
    line.split_at(line.len() - n)
}

/// Asserts that `out` is `inp` or `inp` with one `"KEY":VALUE` member spliced before its
/// closing brace; returns whether it was spliced.
fn assert_same_or_spliced(inp: &[u8], out: &[u8], key: &str) -> Result<bool, String> {
    if inp == out {
        return Ok(false);
    }
    let (ibody, iend) = split_ending(inp);
    let (obody, oend) = split_ending(out);
    if iend != oend {
        return Err("line ending changed".into());
    }
    let close = ibody
        .iter()
        .rposition(|b| !b" \t\r".contains(b))
        .filter(|&i| ibody[i] == b'}')
        .ok_or("changed a line that does not end in }")?;
    let tail = &ibody[close..];
    if obody.len() <= ibody.len() || !obody.starts_with(&ibody[..close]) || !obody.ends_with(tail) {
        return Err("bytes around the splice point altered".into());
    }
    let inserted = &obody[close..obody.len() - tail.len()];
    let empty = ibody[..close]
        .iter()
        .rev()
        .find(|b| !b" \t\r\n".contains(b))
        == Some(&b'{');
    let member = if empty {
        inserted
    } else {
        inserted
            .strip_prefix(b",")
            .ok_or("no comma before the member")?
    };
    let value = member
        .strip_prefix(format!("\"{key}\":").as_bytes())
        .ok_or("the member is not the key")?;
    let value: Value = serde_json::from_slice(value).map_err(|e| format!("value: {e}"))?;
    if !(value.is_object() || value.is_array()) {
        return Err("value neither object nor array".into());
    }
    let ijson = ibody.strip_prefix(BOM).unwrap_or(ibody);
    if let Ok(Value::Object(mut want)) = serde_json::from_slice::<Value>(ijson) {
        let ojson = obody.strip_prefix(BOM).unwrap_or(obody);
        let got: Value =
            serde_json::from_slice(ojson).map_err(|e| format!("output not JSON: {e}"))?;
        want.insert(key.to_owned(), value);
        if got != Value::Object(want) {
            return Err("the JSON changed beyond the key".into());
        }
    }
    Ok(true)
}

#[test]
fn enrich_keeps_every_byte_of_mutated_testdata() {
    let pool = testdata_lines();
    assert!(pool.len() > 900, "{} lines", pool.len());
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut spliced, mut kept, mut lines_total) = (0, 0, 0);
    for case in 0..2000 {
        let input = build_input(&mut rng, &pool);
        let key = if rng.percent(20) { "tt" } else { "tokentime" };
        let root = rng.percent(15);
        let max_line = if rng.percent(15) {
            1 + rng.below(400)
        } else {
            16 << 20
        };
        let out = enrich(&input, key, root, max_line);
        let what = || {
            format!(
                "case {case} (key {key}, root {root}, max {max_line}): {}",
                String::from_utf8_lossy(&input).escape_debug()
            )
        };
        let ilines = lines_with_endings(&input);
        let olines = lines_with_endings(&out);
        assert_eq!(ilines.len(), olines.len(), "line count, {}", what());
        for (i, (inp, outp)) in ilines.iter().zip(&olines).enumerate() {
            match assert_same_or_spliced(inp, outp, key) {
                Ok(true) => spliced += 1,
                Ok(false) => kept += 1,
                Err(e) => panic!("line {}: {e}, {}", i + 1, what()),
            }
        }
        lines_total += ilines.len();
    }
    // The mutations must leave both kinds common, or the property says little.
    assert!(
        spliced > lines_total / 10 && kept > lines_total / 10,
        "{spliced} spliced, {kept} unchanged of {lines_total}"
    );
}

#[test]
fn every_testdata_line_alone_and_with_crlf_and_bom_round_trips() {
    for line in testdata_lines() {
        // The two framings far apart; the mutated inputs mix the others.
        for (prefix, ending) in [(&b""[..], &b"\n"[..]), (BOM, b"\r\n")] {
            let input = [prefix, &line, ending].concat();
            let out = enrich(&input, "tokentime", false, 16 << 20);
            if let Err(e) = assert_same_or_spliced(&input, &out, "tokentime") {
                panic!("{e}: {}", String::from_utf8_lossy(&input).escape_debug());
            }
        }
    }
}
