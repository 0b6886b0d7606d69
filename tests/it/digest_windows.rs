//! `--bucket` windows through digest files: `summary --bucket W --save-digest` saves each
//! window's digests (`tokentime.digest/v2`), and `merge` of the digests of the parts of a log
//! prints the windows one `summary --bucket W` over all the parts prints, JSON lines and table,
//! a window split across parts merged. Digests of another width, or without windows, are
//! refused (exit 2).

use crate::common::*;
use serde_json::Value;

fn parts(dir: &std::path::Path, n: usize) -> Vec<String> {
    crate::common::lab_parts(dir, n)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn with<'a>(head: &[&'a str], tail: &'a [String]) -> Vec<&'a str> {
    head.iter()
        .copied()
        .chain(tail.iter().map(String::as_str))
        .collect()
}

#[test]
fn merged_window_digests_print_the_windows_of_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let parts = parts(dir.path(), 3);
    for by in [&[][..], &["--by", "model"][..]] {
        let map = |extra: &[&str]| -> Vec<String> {
            let mut a = vec!["summary", "--bucket", "1m"];
            a.extend(by);
            a.extend(extra);
            a.into_iter().map(str::to_owned).collect()
        };
        // Each part's digest: on standard output (the map step of a Spark job), and in a file.
        let mut stream = Vec::new();
        let mut files = Vec::new();
        for (i, p) in parts.iter().enumerate() {
            let args = map(&["--save-digest", "-", p]);
            stream.extend(run_ok(&with(&[], &args), b""));
            let f = dir.path().join(format!("d{i}.json")).display().to_string();
            let args = map(&["--save-digest", &f, p]);
            run_ok(&with(&[], &args), b"");
            files.push(f);
        }
        let docs: Vec<Value> = serde_json::Deserializer::from_slice(&stream)
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(docs.len(), 3);
        let starts: Vec<Vec<i64>> = docs
            .iter()
            .map(|d| {
                assert_eq!(d["schema"], "tokentime.digest/v2");
                assert_eq!(d["bucket"]["width_ns"], 60_000_000_000i64);
                let w = d["windows"].as_array().unwrap();
                w.iter().map(|w| w["start_ns"].as_i64().unwrap()).collect()
            })
            .collect();
        // A window cut between two parts: in both digests, merged into one.
        assert!(
            starts
                .windows(2)
                .any(|p| p[0].last().is_some_and(|l| p[1].contains(l))),
            "{starts:?}"
        );
        for output in [&["-o", "json"][..], &[][..]] {
            let mut one = map(output);
            one.extend(parts.iter().cloned());
            let one = text(&run_ok(&with(&[], &one), b""));
            assert!(one.lines().count() > 10, "{one}");
            let mut merge = vec!["merge"];
            merge.extend(output);
            let streamed = run_ok(&with(&merge, &[]), &stream);
            assert_eq!(text(&streamed), one, "{by:?} {output:?}: merged stream");
            merge.extend(["--bucket", "1m"]);
            let merged = run_ok(&with(&merge, &files), b"");
            assert_eq!(text(&merged), one, "{by:?} {output:?}: merged files");
        }
    }
}

/// One input read with `--save-digest FILE`: its windows are held to the end (the file has
/// them all), and printed as they are without it.
#[test]
fn one_input_saving_its_digest_prints_the_same_windows() {
    let dir = tempfile::tempdir().unwrap();
    let log = testdata().join("lab/litellm.jsonl").display().to_string();
    let d = dir.path().join("d.json").display().to_string();
    let plain = run_ok(&["summary", "--bucket", "1m", "-o", "json", &log], b"");
    let saved = run_ok(
        &[
            "summary",
            "--bucket",
            "1m",
            "-o",
            "json",
            "--save-digest",
            &d,
            &log,
        ],
        b"",
    );
    assert_eq!(text(&saved), text(&plain));
    assert_eq!(
        text(&run_ok(&["merge", "-o", "json", &d], b"")),
        text(&plain)
    );
    // `diff` takes it as a digest file: the whole run, no change against its log.
    let diff = run(&["diff", "-o", "json", &d, &log], b"");
    assert_eq!(diff.status.code(), Some(0), "{}", text(&diff.stderr));
    assert!(text(&diff.stdout).contains("tokentime.diff/v1"));
    // A merge's own digest keeps the windows.
    let again = dir.path().join("again.json").display().to_string();
    run_ok(&["merge", "--save-digest", &again, &d], b"");
    assert_eq!(
        text(&run_ok(&["merge", "-o", "json", &again], b"")),
        text(&plain)
    );
}

/// Hourly digests rolled up into days (here: minutes into 10 minutes): `merge --bucket` of a
/// multiple of the saved width adds up the saved windows, the lines `summary --bucket` of that
/// width prints over the logs, partitions and all.
#[test]
fn merge_adds_up_saved_windows_into_wider_ones() {
    let dir = tempfile::tempdir().unwrap();
    let lab = std::fs::read(testdata().join("lab/litellm.jsonl")).unwrap();
    let log = String::from_utf8(lab).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    let (a, b) = lines.split_at(lines.len() / 2);
    let (pa, pb) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    std::fs::write(&pa, a.join("\n") + "\n").unwrap();
    std::fs::write(&pb, b.join("\n") + "\n").unwrap();
    let mut digests = vec![];
    for p in [&pa, &pb] {
        let d = p.with_extension("digest");
        run_ok(
            &[
                "summary",
                "--bucket",
                "1m",
                "--save-digest",
                d.to_str().unwrap(),
                p.to_str().unwrap(),
            ],
            b"",
        );
        digests.push(d.display().to_string());
    }
    for out in ["table", "json"] {
        let merged = run_ok(
            &[
                "merge",
                "--bucket",
                "10m",
                "-o",
                out,
                &digests[0],
                &digests[1],
            ],
            b"",
        );
        let direct = run_ok(
            &[
                "summary",
                "--bucket",
                "10m",
                "-o",
                out,
                pa.to_str().unwrap(),
                pb.to_str().unwrap(),
            ],
            b"",
        );
        assert_eq!(text(&merged), text(&direct), "-o {out}");
        assert!(text(&merged).lines().count() > 3, "{}", text(&merged));
    }
}

#[test]
fn merge_refuses_windows_that_do_not_line_up() {
    let dir = tempfile::tempdir().unwrap();
    let log = testdata().join("lab/litellm.jsonl").display().to_string();
    let save = |name: &str, extra: &[&str]| -> String {
        let d = dir.path().join(name).display().to_string();
        let mut a = vec!["summary", "--save-digest", &d];
        a.extend(extra);
        a.push(&log);
        run_ok(&a, b"");
        d
    };
    let m1 = save("m1.json", &["--bucket", "1m"]);
    let s10 = save("s10.json", &["--bucket", "10s"]);
    let plain = save("plain.json", &[]);
    assert_eq!(
        serde_json::from_slice::<Value>(&std::fs::read(&plain).unwrap()).unwrap()["schema"],
        "tokentime.digest/v1"
    );
    for (args, says) in [
        (
            vec!["merge", "--bucket", "90s", &m1],
            "--bucket 90s: the digest files were saved with --bucket 1m: their windows can be \
             added up into windows of a multiple of that width (--bucket 2m, 10m, ...), not cut again",
        ),
        (
            vec!["merge", "--bucket", "30s", &m1],
            "--bucket 30s: the digest files were saved with --bucket 1m",
        ),
        (
            vec!["merge", &m1, &s10],
            "saved with --bucket 10s, the first file with --bucket 1m",
        ),
        (
            vec!["merge", &plain, &m1],
            "saved with --bucket 1m, the first file without --bucket",
        ),
        (
            vec!["merge", "--bucket", "1m", &plain],
            "--bucket: the digest files hold no windows",
        ),
        (
            vec!["merge", "-o", "csv", &m1],
            "the digest files hold --bucket 1m windows: --bucket prints a table, or JSON lines",
        ),
        (
            vec!["merge", "--bucket", "1m", "-o", "csv", &m1],
            "--bucket prints a table",
        ),
    ] {
        let out = run(&args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            text(&out.stderr).contains(says),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// `merge --whole-run` of digests saved with windows prints the whole run, as `merge` of the
/// same parts' digests saved without windows does (text and JSON), and saves a digest of the
/// whole run.
#[test]
fn whole_run_of_window_digests_is_the_run_without_windows() {
    let dir = tempfile::tempdir().unwrap();
    let parts = parts(dir.path(), 3);
    let (mut windowed, mut plain) = (Vec::new(), Vec::new());
    for (i, p) in parts.iter().enumerate() {
        let w = dir.path().join(format!("w{i}.json")).display().to_string();
        let f = dir.path().join(format!("f{i}.json")).display().to_string();
        run_ok(&["summary", "--bucket", "10m", "--save-digest", &w, p], b"");
        run_ok(&["summary", "--save-digest", &f, p], b"");
        windowed.push(w);
        plain.push(f);
    }
    for output in [&[][..], &["-o", "json"][..], &["--explain"][..]] {
        let whole = run_ok(
            &with(&[&["merge", "--whole-run"][..], output].concat(), &windowed),
            b"",
        );
        let expected = run_ok(&with(&[&["merge"][..], output].concat(), &plain), b"");
        assert_eq!(text(&whole), text(&expected), "{output:?}");
    }
    let saved = dir.path().join("whole.json").display().to_string();
    run_ok(
        &with(
            &["merge", "--whole-run", "--save-digest", &saved],
            &windowed,
        ),
        b"",
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    assert_eq!(doc["schema"], "tokentime.digest/v1");
    // A width asked for is windows, not the whole run.
    let out = run(
        &with(&["merge", "--whole-run", "--bucket", "1h"], &windowed),
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
}
