//! Messages: what tokentime says when something goes wrong, and that it says only that. The
//! runs whose output is not a pipe (a full disk, `/dev/full`) or whose input is not one line
//! of data are here; the rest are cases (`testdata/cases/`).

use crate::common::{run, run_ok, testdata};
use std::fs::File;
use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs tokentime with `args`, `stdin` fed through a pipe, and stdout writing to `/dev/full`
/// (every write fails with "No space left on device").
fn run_to_dev_full(args: &[&str], stdin: &[u8]) -> Output {
    let full = File::options()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tokentime"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(full)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tokentime");
    let mut sin = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = sin.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    out
}

/// `tokentime < log > /dev/full`: stdout fails while the input is read. The flush before a
/// read of the input failed, and that error was reported as the input's
/// (`<stdin>: No space left on device`) before the output's.
#[test]
fn full_stdout_is_not_an_input_error() {
    let sample = std::fs::read(super::common::testdata().join("samples/litellm.jsonl")).unwrap();
    // More than the output's buffer holds, so it is flushed while the input is still read.
    let mut input = Vec::new();
    while input.len() < 4 << 20 {
        input.extend_from_slice(&sample);
    }
    for args in [
        &[][..],
        &["--threads", "2"],
        &["summary", "--format", "litellm"],
    ] {
        let out = run_to_dev_full(args, &input);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(
            stderr, "tokentime: writing output: No space left on device (os error 28)\n",
            "{args:?}"
        );
    }
}

/// `tokentime --help > /dev/full` exited 0: the failed write of the help was ignored.
#[test]
fn help_to_full_stdout_exits_2() {
    for args in [&["--help"][..], &["--version"], &["summary", "--help"]] {
        let out = run_to_dev_full(args, b"");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(
            stderr, "tokentime: writing output: No space left on device (os error 28)\n",
            "{args:?}"
        );
    }
}

/// A file name with a newline split a diagnostic in two: names with control characters are
/// shown quoted and escaped, the bad line's `FILE:LINE:` and a read error's `FILE:` alike.
#[test]
fn file_name_with_newline_stays_on_one_line() {
    let dir = std::env::temp_dir().join(format!("tokentime-messages-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad\nname.jsonl");
    std::fs::write(&bad, "{\"cut\": \n").unwrap();
    // A gzip magic number and nothing after it: the input breaks off.
    let cut = dir.join("cut\tshort.jsonl.gz");
    std::fs::write(&cut, [0x1f, 0x8b, 0x08]).unwrap();
    let out = super::common::run(&[bad.to_str().unwrap(), cut.to_str().unwrap()], b"");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let dir_shown = format!("{:?}", dir.display().to_string());
    let dir_shown = &dir_shown[1..dir_shown.len() - 1];
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0].starts_with(&format!(
            "\"{dir_shown}/bad\\nname.jsonl\":1: invalid JSON: "
        )),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with(&format!(
            "tokentime: \"{dir_shown}/cut\\tshort.jsonl.gz\": "
        )),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `summary f - < f`: standard input redirected from a file named too would read its
/// requests twice: refused (exit 2), in either order. A pipe is read as given.
#[test]
fn summary_refuses_standard_input_that_is_a_file_named_too() {
    let log = testdata().join("samples/litellm.jsonl");
    let shown = log.to_str().unwrap();
    for (args, second, first) in [
        (vec!["summary", shown, "-"], "- (standard input)", shown),
        (vec!["summary", "-", shown], shown, "- (standard input)"),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_tokentime"))
            .args(&args)
            .stdin(std::fs::File::open(&log).unwrap())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!(
                "{second}: the same file as {first}, named twice (its requests would be read twice)"
            )),
            "{err}"
        );
    }
    let piped = run(&["summary", shown, "-"], &std::fs::read(&log).unwrap());
    assert!(piped.status.success());
}

/// A log copied under another name and given beside it (`app.log app.log.bak`): its copies
/// are not matched across FILEs, so stderr names the two; a log of the same size with one
/// byte changed is not named.
#[test]
fn summary_names_a_file_that_holds_the_same_bytes_as_another() {
    let dir = tempfile::tempdir().unwrap();
    let log = std::fs::read(testdata().join("lab/litellm.jsonl")).unwrap();
    let (a, b, c) = (
        dir.path().join("a.jsonl"),
        dir.path().join("b.jsonl"),
        dir.path().join("c.jsonl"),
    );
    std::fs::write(&a, &log).unwrap();
    std::fs::write(&b, &log).unwrap();
    // The same size, the last digit changed.
    let mut other = log.clone();
    let at = other.len() - 1 - other.iter().rev().position(u8::is_ascii_digit).unwrap();
    other[at] = if other[at] == b'1' { b'2' } else { b'1' };
    std::fs::write(&c, &other).unwrap();
    let p = |p: &std::path::Path| p.to_str().unwrap().to_owned();
    let out = run(&["summary", "-o", "json", &p(&a), &p(&c), &p(&b)], b"");
    let err = String::from_utf8_lossy(&out.stderr);
    let warnings: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("the same bytes"))
        .collect();
    assert_eq!(
        warnings,
        [format!(
            "tokentime: {} holds the same bytes as {}: its requests are counted again (each FILE \
             is an input of its own: copies in two are counted in each); give it once",
            b.display(),
            a.display()
        )],
        "{err}"
    );
    // Counted: 293 requests a file.
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["coverage"]["requests"], 3 * 293, "{}", doc["coverage"]);
}

/// Two FILEs that both hold some requests (the overlap of two rotated files) are read as
/// inputs of their own, each counting its requests: stderr names the pair and how many they
/// share, and how to count them once. Not with `--keep-duplicates`, nor for one input.
#[test]
fn requests_two_files_both_hold_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let lab = std::fs::read_to_string(testdata().join("lab/litellm.jsonl")).unwrap();
    let lines: Vec<&str> = lab.lines().collect();
    let (a, b) = (dir.path().join("app.log.1"), dir.path().join("app.log"));
    std::fs::write(&a, lines[..200].join("\n") + "\n").unwrap();
    std::fs::write(&b, lines[150..].join("\n") + "\n").unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let said = |args: &[&str]| -> Vec<String> {
        let out = run(args, b"");
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.contains("both hold"))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(
        said(&["summary", a, b]),
        [format!(
            "tokentime: {a} and {b} both hold 50 requests alike (id, times and token counts: the \
             overlap of rotated files, a log exported twice?): each is counted in both; give the \
             two as one input, the older first (`cat {a} {b} | tokentime summary`, with a \
             --join-timeout as long as the overlap when it is over 10m), to count them once"
        )]
    );
    // Read as one input, the 50 are set aside.
    let cat = format!("{}\n{}\n", lines[..200].join("\n"), lines[150..].join("\n"));
    let doc: serde_json::Value =
        serde_json::from_slice(&run_ok(&["summary", "-o", "json"], cat.as_bytes())).unwrap();
    assert_eq!(doc["coverage"]["duplicates"], 50);
    // Given newest first, the older is still named first; the HTML report says it too.
    assert_eq!(said(&["summary", b, a]), said(&["summary", a, b]));
    let page = dir.path().join("page.html");
    assert_eq!(
        said(&["report", "-o", page.to_str().unwrap(), a, b]),
        said(&["summary", a, b])
    );
    assert!(said(&["summary", "--keep-duplicates", a, b]).is_empty());
    assert!(said(&["summary", "--threads", "1", a]).is_empty());
}

/// Many FILEs that share requests pairwise (batches shipped twice over months of archives):
/// the first `--max-diagnostics` pairs are named, then one count, not a line a pair.
#[test]
fn many_pairs_that_share_requests_are_named_up_to_the_limit_then_counted() {
    let dir = tempfile::tempdir().unwrap();
    let lab = std::fs::read_to_string(testdata().join("lab/litellm.jsonl")).unwrap();
    let lines: Vec<&str> = lab.lines().take(12).collect();
    // 24 files: file i and file i + 12 hold the same request (and other bytes).
    let paths: Vec<String> = (0..24)
        .map(|i| {
            let p = dir.path().join(format!("day{i:02}.jsonl"));
            std::fs::write(&p, format!("shipped {i:02}\n{}\n", lines[i % 12])).unwrap();
            p.to_str().unwrap().to_owned()
        })
        .collect();
    let mut args = vec!["summary", "--max-diagnostics", "3"];
    args.extend(paths.iter().map(String::as_str));
    let out = run(&args, b"");
    let err = String::from_utf8_lossy(&out.stderr);
    let said: Vec<&str> = err.lines().collect();
    assert_eq!(said.len(), 4, "{err}");
    for (k, line) in said[..3].iter().enumerate() {
        let (a, b) = (&paths[k], &paths[k + 12]);
        assert!(
            line.starts_with(&format!("tokentime: {a} and {b} both hold 1 request alike")),
            "{line}"
        );
    }
    assert_eq!(
        said[3],
        "tokentime: 9 more pairs of inputs hold requests alike (not named one by one: \
         --max-diagnostics)"
    );
    // The same bytes twice: as many named, then a count.
    for (i, p) in paths.iter().enumerate().skip(12) {
        std::fs::write(p, format!("shipped {:02}\n{}\n", i - 12, lines[i % 12])).unwrap();
    }
    let out = run(&args, b"");
    let err = String::from_utf8_lossy(&out.stderr);
    let said: Vec<&str> = err.lines().filter(|l| l.contains("same bytes")).collect();
    assert_eq!(said.len(), 4, "{err}");
    assert!(said[2].starts_with(&format!(
        "tokentime: {} holds the same bytes as {}:",
        paths[14], paths[2]
    )));
    assert_eq!(
        said[3],
        "tokentime: 9 more FILEs hold the same bytes as one given before them (not named one by \
         one: --max-diagnostics)"
    );
}

/// `merge d.json d.json` (a glob that matches a digest twice, or a link to it) would count
/// every request twice: refused, naming both.
#[test]
fn merge_refuses_the_same_digest_named_twice() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("d.json");
    let d = d.to_str().unwrap();
    let log = testdata().join("samples/litellm.jsonl");
    run_ok(&["summary", "--save-digest", d, log.to_str().unwrap()], b"");
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(d, &link).unwrap();
    for second in [d, link.to_str().unwrap()] {
        let out = run(&["merge", d, second], b"");
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!(
                "{second}: the same file as {d}, named twice (its requests would count twice)"
            )),
            "{err}"
        );
    }
}
