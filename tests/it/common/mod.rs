//! Helpers shared by the integration tests: run the binary, read testdata, cut the spliced
//! object out of an enriched line.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The repository's testdata folder.
pub fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

/// Every testdata file (recursively) whose extension is one of `exts`, sorted.
pub fn testdata_files(exts: &[&str]) -> Vec<PathBuf> {
    let mut files = vec![];
    let mut dirs = vec![testdata()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| exts.iter().any(|e| x == *e)) {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// Runs tokentime with `args` and `stdin`, returning its output.
pub fn run(args: &[&str], stdin: &[u8]) -> Output {
    run_stderr(args, stdin, true)
}

/// [`run`] with stderr closed from the start when `!keep_stderr` (as `2>&1 | head` leaves it):
/// the output's stderr is then empty.
pub fn run_stderr(args: &[&str], stdin: &[u8], keep_stderr: bool) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tokentime"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tokentime");
    if !keep_stderr {
        drop(child.stderr.take());
    }
    let mut sin = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = sin.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    out
}

/// Runs tokentime and asserts exit status 0; returns stdout.
pub fn run_ok(args: &[&str], stdin: &[u8]) -> Vec<u8> {
    let out = run(args, stdin);
    assert!(
        out.status.success(),
        "tokentime {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The `--map` entries of the hand-written logs' instants: `t0` and `t2`, in epoch seconds.
pub const MAP_T0_T2: [&str; 4] = ["--map", "arrival=t0:epoch_s", "--map", "end=t2:epoch_s"];

/// `tokentime summary` of `log` read with [`MAP_T0_T2`], then `extra` arguments.
pub fn summary_t0_t2(extra: &[&str], log: &[u8]) -> Output {
    let mut args = vec!["summary"];
    args.extend(MAP_T0_T2);
    args.extend(extra);
    run(&args, log)
}

/// Splits bytes into lines, keeping each line's ending.
pub fn lines_with_endings(b: &[u8]) -> Vec<&[u8]> {
    b.split_inclusive(|&c| c == b'\n').collect()
}

/// Removes the spliced `,"KEY":{...}` object from an enriched line; returns the line and the
/// object's JSON text, or `None` when the line has no such object.
pub fn unsplice(line: &[u8], key: &str) -> Option<(Vec<u8>, String)> {
    let text = line;
    // One request: `"KEY":{...}`; several: `"KEY":[{...},...]`.
    let (pos, needle) = [format!("\"{key}\":{{"), format!("\"{key}\":[")]
        .into_iter()
        .filter_map(|n| find_last(text, n.as_bytes()).map(|p| (p, n)))
        .max_by_key(|(p, _)| *p)?;
    // The value starts after the key; find its matching bracket (no brackets inside the
    // strings tokentime writes).
    let obj_start = pos + needle.len() - 1;
    let mut depth = 0;
    let mut end = None;
    for (i, &c) in text[obj_start..].iter().enumerate() {
        match c {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    end = Some(obj_start + i + 1);
                    break;
                }
            }
            _ => {}
        }
    }
    let end = end?;
    let object = String::from_utf8(text[obj_start..end].to_vec()).unwrap();
    let mut start = pos;
    if start > 0 && text[start - 1] == b',' {
        start -= 1;
    }
    let mut out = text[..start].to_vec();
    out.extend_from_slice(&text[end..]);
    Some((out, object))
}

fn find_last(h: &[u8], n: &[u8]) -> Option<usize> {
    (0..=h.len().checked_sub(n.len())?)
        .rev()
        .find(|&i| &h[i..i + n.len()] == n)
}

/// The metrics object of each output line (`None` for pass-through lines).
pub fn enriched_objects(stdout: &[u8]) -> Vec<Option<serde_json::Value>> {
    lines_with_endings(stdout)
        .into_iter()
        .map(|l| {
            unsplice(l, "tokentime")
                .map(|(_, o)| serde_json::from_str(&o).expect("spliced object is JSON"))
        })
        .collect()
}

/// Type-7 (numpy linear) quantile of unsorted values, computed naively.
pub fn quantile7(values: &[f64], q: f64) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let h = (v.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(v.len() - 1);
    v[lo] + (h - lo as f64) * (v[hi] - v[lo])
}

/// Rounds to 3 decimals, as tokentime prints milliseconds.
pub fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// Writes `data` gzipped and cut in half (a .gz whose writer died mid-way) at `path`.
pub fn write_cut_gzip(path: &std::path::Path, data: &[u8]) {
    let gz = gzip(data);
    std::fs::write(path, &gz[..gz.len() / 2]).unwrap();
}

/// `data` as one gzip member.
pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(data).unwrap();
    gz.finish().unwrap()
}

/// One statistic of a summary metric object (`summary -o json`): `mean`, `min`, `max`, `count`,
/// or a quantile key (`p50`, `p99.9`).
pub fn stat<'a>(metric: &'a serde_json::Value, key: &str) -> &'a serde_json::Value {
    if key.starts_with('p') {
        &metric["quantiles"][key]
    } else {
        &metric[key]
    }
}

/// Ours within 0.01 of theirs (a producer's aggregate, rounded as it prints it).
pub fn close(ours: &serde_json::Value, theirs: f64, what: &str) {
    let ours = ours.as_f64().unwrap_or_else(|| panic!("{what}: no value"));
    assert!(
        (ours - theirs).abs() <= 0.01,
        "{what}: ours {ours} vs theirs {theirs}"
    );
}

/// Each statistic of `metric` (a key of [`stat`]) within 0.01 of a producer's value: the
/// comparison loop of the real-data tests. `what` names the metric in a failure.
pub fn close_stats<'k>(
    metric: &serde_json::Value,
    theirs: impl IntoIterator<Item = (&'k str, f64)>,
    what: &str,
) {
    for (key, t) in theirs {
        close(stat(metric, key), t, &format!("{what} {key}"));
    }
}

/// The lab LiteLLM log cut into `n` parts at line boundaries, each written to `dir` as
/// `partI.jsonl`; their paths, in order.
pub fn lab_parts(dir: &std::path::Path, n: usize) -> Vec<String> {
    let log = std::fs::read_to_string(testdata().join("lab/litellm.jsonl")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    lines
        .chunks(lines.len().div_ceil(n))
        .enumerate()
        .map(|(i, c)| {
            let p = dir.join(format!("part{i}.jsonl"));
            std::fs::write(&p, c.join("\n") + "\n").unwrap();
            p.display().to_string()
        })
        .collect()
}
