//! Wrappers around the JSON (SPEC section 3): Docker's json-file driver, the Kubernetes CRI
//! prefix, and `--prefix REGEX`; and logs of every server concatenated into one stream.

use crate::common::*;

const LINE: &str = r#"{"timings":{"prompt_ms":5.0,"predicted_n":3,"predicted_ms":10.0}}"#;

/// With `--prefix`, a CRI line that the regex does not match is still unwrapped (the regex is
/// tried first); one it matches is the regex's.
#[test]
fn prefix_regex_and_cri_lines_in_one_log() {
    let input = format!(
        "Mar 14 10:02:11 gw1 litellm[812]: {LINE}\n2025-03-14T10:02:11.482917Z stdout F {LINE}\n"
    );
    let out = run_ok(&["--prefix", r"\w+ \d+ [\d:]+ \S+ \S+: "], input.as_bytes());
    let enriched = String::from_utf8(out).unwrap();
    assert_eq!(enriched.matches("\"tokentime\"").count(), 2, "{enriched}");
    let s: serde_json::Value = serde_json::from_slice(&run_ok(
        &[
            "summary",
            "-o",
            "json",
            "--prefix",
            r"\w+ \d+ [\d:]+ \S+ \S+: ",
        ],
        input.as_bytes(),
    ))
    .unwrap();
    assert_eq!(s["coverage"]["requests"], 2);
}

/// Every sample of every format, one after another in a stream: each line is attributed to its
/// format and gets the metrics it gets alone, in any order.
#[test]
fn all_samples_concatenated_in_any_order_get_the_metrics_they_get_alone() {
    let mut files: Vec<_> = std::fs::read_dir(testdata().join("samples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_str().unwrap();
            n.ends_with(".jsonl") && !n.ends_with(".expected.jsonl")
        })
        .collect();
    files.sort();
    let alone: Vec<Vec<u8>> = files
        .iter()
        .map(|f| run_ok(&[f.to_str().unwrap()], b""))
        .collect();
    for order in [0usize, 1, 2] {
        let mut idx: Vec<usize> = (0..files.len()).collect();
        match order {
            1 => idx.reverse(),
            2 => idx.sort_by_key(|&i| (i * 7) % files.len()),
            _ => {}
        }
        let mut stream = vec![];
        let mut want: Vec<u8> = vec![];
        for &i in &idx {
            stream.extend(std::fs::read(&files[i]).unwrap());
            want.extend(&alone[i]);
        }
        assert_eq!(run_ok(&[], &stream), want, "order {order}");
    }
}

/// Docker and the kubelet split lines over 16 KiB: Docker into json-file records whose `log`
/// does not end in a newline, the kubelet into `P` lines before the final `F`. The pieces are
/// joined back, so the lab log wrapped either way summarizes like the plain log.
#[test]
fn lines_split_by_docker_and_the_kubelet_are_joined_back() {
    let plain = std::fs::read(testdata().join("lab/litellm.jsonl")).unwrap();
    let lines: Vec<&[u8]> = plain.split_inclusive(|&b| b == b'\n').collect();
    assert!(
        lines.iter().any(|l| l.len() > 16 * 1024),
        "the lab log has long lines"
    );
    let (mut docker, mut cri) = (Vec::new(), Vec::new());
    let mut pieces_held = 0;
    for line in &lines {
        let text = std::str::from_utf8(line).unwrap();
        let chunks: Vec<&str> = text
            .as_bytes()
            .chunks(16 * 1024)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        pieces_held += chunks.len() - 1;
        for (i, c) in chunks.iter().enumerate() {
            let log = serde_json::to_string(c).unwrap();
            docker.extend(format!("{{\"log\":{log},\"stream\":\"stdout\",\"time\":\"2026-11-29T10:00:00.000000001Z\"}}\n").bytes());
            let last = i + 1 == chunks.len();
            let tag = if last { "F" } else { "P" };
            cri.extend(
                format!(
                    "2026-11-29T10:00:00.000000001Z stdout {tag} {}\n",
                    c.trim_end_matches('\n')
                )
                .bytes(),
            );
        }
    }
    // The pieces held are joined lines, which the plain log has none of.
    let summary = |input: &[u8]| -> (serde_json::Value, serde_json::Value) {
        let mut s: serde_json::Value =
            serde_json::from_slice(&run_ok(&["summary", "-o", "json"], input)).unwrap();
        let cov = s["coverage"].as_object_mut().unwrap();
        for k in ["lines", "no_timing", "non_json"] {
            cov.remove(k);
        }
        let joined = cov["joins"]["joined_lines"].take();
        (s, joined)
    };
    let (want, _) = summary(&plain);
    assert_eq!(want["coverage"]["requests"], 293);
    assert!(pieces_held > 0);
    for (name, input) in [("Docker json-file", &docker), ("CRI", &cri)] {
        let (got, joined) = summary(input);
        assert_eq!(got, want, "{name}");
        assert_eq!(
            joined, pieces_held,
            "{name}: every piece held is a joined line"
        );
        // A joined line is held up to --max-line-bytes, as a line read whole is: the longest
        // lab line (about 40 KB) is over a 20,000-byte limit, and the rest are under it.
        let longest = lines.iter().map(|l| l.len()).max().unwrap();
        assert!(longest > 20_000);
        let over = lines.iter().filter(|l| l.len() > 20_000).count();
        let s: serde_json::Value = serde_json::from_slice(&run_ok(
            &["summary", "-o", "json", "--max-line-bytes", "20000"],
            input,
        ))
        .unwrap();
        assert_eq!(
            s["coverage"]["invalid"].as_u64().unwrap() as usize,
            over,
            "{name}"
        );
        // The last piece counts too (found by a helper's trial: a line whose pieces before the
        // last fit was joined whatever its length). The limit is on the joined text, newline
        // excluded: the longest line (`longest - 1` bytes of JSON) is over a limit one byte
        // shorter than that, and within one of that length.
        for (limit, invalid) in [(longest - 2, 1), (longest - 1, 0)] {
            let s: serde_json::Value = serde_json::from_slice(&run_ok(
                &[
                    "summary",
                    "-o",
                    "json",
                    "--max-line-bytes",
                    &limit.to_string(),
                ],
                input,
            ))
            .unwrap();
            assert_eq!(s["coverage"]["invalid"], invalid, "{name}, limit {limit}");
        }
    }
}
