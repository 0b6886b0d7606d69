//! Line framing plus format parsing: arbitrary bytes, handed out by a reader in arbitrary
//! chunks (with `Interrupted` errors between some), framed by `LineReader` under a small
//! `max_line`, every line through `Processor::process` and the summary.
//!
//! Input layout: `[max_line, config, k, k chunk sizes..., data...]`.
//!
//! Checked: nothing panics; the framing equals a naive framing of the whole input (split after
//! each `\n`, too long when over `max_line`, NUL bytes then a BOM starting any line as its prefix) whatever the chunking, so no
//! byte is lost or moved; each line's kind agrees with serde_json on the same bytes; every
//! metric is a finite non-negative number or a reason; the coverage counts add up.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde::de::IgnoredAny;
use std::io::{self, Read};
use tokentime::{
    Coverage, Kind, Line, LineReader, Processor, Summary, analyze, builtins, custom_format,
    neutralize_non_finite, to_json,
};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Hands out `data` in chunks of the given sizes (cycled); a size of 0 is one `Interrupted`
/// (never two in a row: the reader retries and must get on).
struct Chunked<'a> {
    data: &'a [u8],
    sizes: &'a [u8],
    i: usize,
    interrupted: bool,
}

impl Read for Chunked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let want = if self.sizes.is_empty() {
            usize::MAX
        } else {
            let s = self.sizes[self.i % self.sizes.len()];
            self.i += 1;
            if s == 0 && !self.interrupted {
                self.interrupted = true;
                return Err(io::ErrorKind::Interrupted.into());
            }
            usize::from(s).max(1)
        };
        self.interrupted = false;
        let n = want.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Framed {
    Text {
        prefix: Vec<u8>,
        content: Vec<u8>,
        ending: Vec<u8>,
    },
    TooLong(Vec<u8>),
}

/// The framing the reader must produce, computed on the whole input at once.
fn reference(data: &[u8], max_line: usize) -> Vec<Framed> {
    data.split_inclusive(|&b| b == b'\n')
        .map(|line| {
            if line.len() > max_line {
                return Framed::TooLong(line.to_vec());
            }
            // NUL bytes (a copytruncate rotation's), then a BOM, are the prefix.
            let nuls = line.iter().position(|&b| b != 0).unwrap_or(line.len());
            let bom = if line[nuls..].starts_with(BOM) { 3 } else { 0 };
            let (prefix, rest) = line.split_at(nuls + bom);
            let n = if rest.ends_with(b"\r\n") {
                2
            } else if rest.ends_with(b"\n") {
                1
            } else {
                0
            };
            let (content, ending) = rest.split_at(rest.len() - n);
            Framed::Text {
                prefix: prefix.to_vec(),
                content: content.to_vec(),
                ending: ending.to_vec(),
            }
        })
        .collect()
}

fn processor(config: u8) -> Processor {
    let formats = match config % 5 {
        0 => builtins(),
        i @ 1..=3 => vec![builtins().swap_remove(usize::from(i) - 1)],
        _ => vec![
            custom_format(&[
                "arrival=req.t0:epoch".into(),
                "first_token=req.t1:epoch".into(),
                "end=req.t2:epoch".into(),
                "ttft=req.ttft:duration".into(),
                "e2e=req.e2e:ns".into(),
                "output_tokens=usage.completion_tokens".into(),
                "input_tokens=usage.prompt_tokens".into(),
                "cached_tokens=usage.cached".into(),
                "stream=req.stream".into(),
            ])
            .expect("valid map"),
        ],
    };
    let root: Vec<String> = if config & 0x08 != 0 {
        vec!["response".into()]
    } else {
        vec![]
    };
    let hit_ratio = if config & 0x10 != 0 { 1.0 } else { 0.5 };
    Processor::new(
        formats,
        &root,
        Some("tokentime"),
        &[vec!["model".into()]],
        hit_ratio,
    )
}

/// `cri_split`: a Kubernetes CRI line (this one or one before) was held as a piece of a split
/// line; the kind of a CRI line may then be that of the pieces joined, not of the line alone,
/// and is not checked against the line.
fn check_kind(proc: &Processor, kind: &Kind, content: &[u8], cri_split: bool) {
    let first = content.iter().find(|b| !b" \t\r\n".contains(b));
    if first == Some(&b'{') {
        assert!(
            !matches!(kind, Kind::NonJson),
            "{kind:?}: a line starting with {{ is JSON or invalid"
        );
    }
    // A Kubernetes CRI line (`<time> stdout F {...}`) is read from its first `{`.
    let content = match first {
        Some(&b'{') | None => content,
        Some(_) => content
            .iter()
            .position(|&b| b == b'{')
            .map_or(content, |i| &content[i..]),
    };
    let parses = |b: &[u8]| {
        std::str::from_utf8(b).is_ok() && serde_json::from_slice::<IgnoredAny>(b).is_ok()
    };
    match kind {
        _ if cri_split && first != Some(&b'{') => {}
        Kind::NonJson => {}
        Kind::Invalid(_) => assert!(!parses(content), "valid JSON called invalid"),
        // Deferred only comes from a processor told to defer joins (never here).
        Kind::NoTiming | Kind::AlreadyEnriched | Kind::Requests | Kind::Part | Kind::Deferred => {
            let mut fixed = content.to_vec();
            neutralize_non_finite(&mut fixed);
            assert!(parses(&fixed), "{kind:?} on a line that is not UTF-8 JSON");
        }
    }
    assert_eq!(
        matches!(kind, Kind::Requests),
        !proc.requests().is_empty(),
        "requests exactly on request lines"
    );
    for r in proc.requests() {
        let m = &r.metrics;
        let values = [m.ttft, m.tpot, m.e2e, m.queue, m.prefill, m.decode];
        for ns in values.into_iter().flatten() {
            assert!(ns.is_finite() && ns >= 0.0, "metric {ns} in {m:?}");
        }
        assert_eq!(m.ttft_origin.is_some(), m.ttft.is_ok(), "{m:?}");
    }
}

fuzz_target!(|input: &[u8]| {
    let [max_sel, config, k, rest @ ..] = input else {
        return;
    };
    let k = usize::from(*k % 16).min(rest.len());
    let (sizes, data) = rest.split_at(k);
    let max_line = if *max_sel == 0xff {
        usize::MAX
    } else if max_sel & 0x80 != 0 {
        16 << 20
    } else {
        1 + usize::from(max_sel & 0x7f) * 3
    };
    let want = reference(data, max_line);

    let mut reader = LineReader::new(
        Chunked {
            data,
            sizes,
            i: 0,
            interrupted: false,
        },
        max_line,
    );
    let mut proc = processor(*config);
    let mut summary = Summary::new(vec!["model".into()], 4, tokentime::EXACT_LIMIT);
    let mut cov = Coverage::default();
    let mut got = Vec::new();
    let mut long = Vec::new();
    let (mut request_lines, mut requests, mut part_lines) = (0u64, 0u64, 0u64);
    let mut cri_split = false;
    loop {
        let line = reader
            .next_line(&mut || Ok(()), &mut |b| {
                long.extend_from_slice(b);
                Ok(())
            })
            .expect("reading a slice never fails");
        let framed = match line {
            None => break,
            Some(Line::TooLong) => Framed::TooLong(std::mem::take(&mut long)),
            Some(Line::Text {
                prefix,
                content,
                ending,
            }) => {
                assert!(long.is_empty(), "overflow bytes handed on for a whole line");
                let kind = proc.process(content);
                proc.count(&kind, &mut cov);
                let piece = matches!(kind, Kind::Part)
                    && content.iter().find(|b| !b" \t\r\n".contains(b)) != Some(&b'{');
                cri_split |= piece;
                check_kind(&proc, &kind, content, cri_split);
                part_lines += u64::from(matches!(kind, Kind::Part));
                if let Kind::Requests = kind {
                    request_lines += 1;
                    requests += proc.requests().len() as u64;
                    for (i, r) in proc.requests().iter().enumerate() {
                        let gaps = &proc.gaps()[r.itl.0 as usize..(r.itl.0 + r.itl.1) as usize];
                        summary.add_request(r, gaps, proc.by_values(i));
                    }
                }
                Framed::Text {
                    prefix: prefix.to_vec(),
                    content: content.to_vec(),
                    ending: ending.to_vec(),
                }
            }
        };
        got.push(framed);
        assert_eq!(reader.line_no(), got.len() as u64, "line numbers");
    }
    assert_eq!(got, want, "framing differs from the whole-input reference");

    let text_lines = want
        .iter()
        .filter(|f| matches!(f, Framed::Text { .. }))
        .count() as u64;
    // Joins still in flight and split lines never completed are counted unfinished.
    proc.finish(&mut cov);
    assert_eq!(cov.lines, text_lines);
    assert_eq!(cov.requests, requests);
    assert_eq!(
        cov.joined_lines, part_lines,
        "lines held for a join or pieces of a split line are counted joined"
    );
    assert_eq!(
        cov.non_json
            + cov.invalid
            + cov.no_timing
            + cov.already_enriched
            + request_lines
            + cov.joined_lines,
        cov.lines,
        "every line is counted once: {cov:?}"
    );
    let quantiles = [0.5, 0.99, 0.999];
    let report = analyze(&mut summary, &Default::default(), &quantiles);
    let doc = to_json(&cov, &mut summary, &quantiles, report);
    serde_json::to_vec(&doc).expect("summary serializes");
});
