//! The document walk: requests found in arrays at any level of a line, and under a `--root`
//! pattern with `[*]`.
//!
//! Input layout: `[mode, data...]`. `data` is split into lines; each line goes through a
//! processor of every built-in format (the walk on), one with `--root 'a[*]'`, and, wrapped as
//! `{"page":{"items":[LINE, LINE]}}` and `{"a":[LINE]}`, through both again. The whole of
//! `data` also goes through the document readers (`detect_document`, then array elements or
//! objects) into the walking processor. `mode` bit 0 uses the serde_json reference parser.
//!
//! Checked: nothing panics; a line that is one request or more on its own (of a format that
//! does not join lines) gives twice those requests, the same metrics, wrapped in a list twice,
//! and the same requests wrapped once and read with `--root 'a[*]'`; a line's kind is
//! `Requests` exactly when it has requests; every metric is a finite non-negative number or a
//! reason.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::io::BufRead;
use std::sync::OnceLock;
use tokentime::{
    Document, Item, Kind, Objects, Processor, builtins, detect_document, for_each_element,
};

/// The formats with records, and those that join lines (a line's requests depend on the lines
/// before it, which the wrapped copies repeat).
const RECORDS: [&str; 12] = [
    "ollama",
    "llamacpp-log",
    "sglang-log",
    "otlp",
    "vllm-otlp",
    "vllm-bench",
    "sglang-bench",
    "guidellm",
    "genai-perf",
    "llm-load-test",
    "llm-load-test-2023",
    "llmperf",
];

struct Procs {
    walk: Processor,
    root: Processor,
}

fn procs() -> &'static Procs {
    static P: OnceLock<Procs> = OnceLock::new();
    P.get_or_init(|| Procs {
        walk: Processor::new(builtins(), &[], None, &[], 0.9),
        root: Processor::new(builtins(), &["a".into(), "[*]".into()], None, &[], 0.9),
    })
}

fn fresh(p: &Processor, reference: bool) -> Processor {
    let mut p = p.fresh();
    if reference {
        p.use_reference_parser();
    }
    p
}

/// Processes `line`; returns its kind and its requests' formats and metrics (as text, so that
/// NaN compares equal to itself).
fn run(p: &mut Processor, line: &[u8]) -> (bool, Vec<String>, bool) {
    let kind = p.process(line);
    let requests: Vec<String> = p
        .requests()
        .iter()
        .map(|r| {
            for x in [r.metrics.ttft, r.metrics.tpot, r.metrics.e2e]
                .into_iter()
                .flatten()
            {
                assert!(x.is_finite() && x >= 0.0, "metric {x} of {line:?}");
            }
            format!("{} {:?}", r.format, r.metrics)
        })
        .collect();
    let is_requests = matches!(kind, Kind::Requests);
    assert_eq!(
        is_requests,
        !requests.is_empty() && !matches!(kind, Kind::Deferred),
        "{kind:?} of {line:?}"
    );
    (is_requests, requests, matches!(kind, Kind::Part))
}

fuzz_target!(|input: &[u8]| {
    let Some((&mode, data)) = input.split_first() else {
        return;
    };
    let reference = mode & 1 == 1;
    let ps = procs();
    // Forked once an input (a fork clones the compiled formats): each line is processed
    // alone, and its requests are per line.
    let mut alone = fresh(&ps.walk, reference);
    let mut walker = fresh(&ps.walk, reference);
    let mut rooter = fresh(&ps.root, reference);
    for line in data.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let (is_req, reqs, part) = run(&mut alone, line);
        let joins = part || reqs.is_empty();
        let wrapped = [&b"{\"page\":{\"items\":["[..], line, b",", line, b"]}}"].concat();
        let (_, twice, _) = run(&mut walker, &wrapped);
        let once = [&b"{\"a\":["[..], line, b"]}"].concat();
        let (_, rooted, _) = run(&mut rooter, &once);
        // A line of a format that joins lines, or a line of a format with records (they find
        // their records from the line's top), may read differently inside a list.
        // A line of a format with records (which finds them from the line's top) or one
        // whose requests were themselves found in its lists (which nest deeper when wrapped,
        // and may pass the deepest level) may read differently inside a list.
        let records = alone
            .requests()
            .iter()
            .any(|r| RECORDS.contains(&alone.format_spec(r.format).name.as_str()));
        let lists = line.iter().enumerate().any(|(i, &b)| {
            b == b'['
                && line[i + 1..]
                    .iter()
                    .find(|c| !c.is_ascii_whitespace())
                    .is_some_and(|c| matches!(c, b'{' | b'['))
        });
        // The walk ends at a key it cannot decode (a lone surrogate escape).
        let plain_keys = !line.contains(&b'\\');
        if is_req && !joins && !records && !lists && plain_keys && line.first() == Some(&b'{') {
            let want: Vec<String> = reqs.iter().chain(&reqs).cloned().collect();
            assert_eq!(
                twice,
                want,
                "wrapped twice: {:?}",
                String::from_utf8_lossy(line)
            );
            assert_eq!(
                rooted,
                reqs,
                "under --root: {:?}",
                String::from_utf8_lossy(line)
            );
        }
    }
    // The whole input as a document.
    let mut r = std::io::BufReader::new(data);
    let mut p = walker;
    match detect_document(&mut r) {
        Ok(Some(Document::Array)) => {
            let _ = for_each_element(&mut r, &mut |rec| {
                run(&mut p, rec);
                Ok(())
            });
        }
        Ok(Some(Document::Object)) => {
            let mut objects = Objects::new(&mut r as &mut dyn BufRead, 1 << 16);
            while let Ok(Some(item)) = objects.next_item() {
                if let Item::Object { bytes, .. } = item {
                    let bytes = bytes.to_vec();
                    run(&mut p, &bytes);
                }
            }
        }
        _ => {}
    }
});
