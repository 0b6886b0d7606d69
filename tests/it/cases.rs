//! End-to-end scenarios as data: each `testdata/cases/NAME.toml` is one run of the built
//! tokentime (in the repository root, so paths in messages are relative) with its arguments and
//! standard input, and the exit status, standard output and standard error it must give. Every
//! case runs; a failure names each failing case and what differed.
//!
//! A case file's fields (a comment at its top says what it checks and where it came from):
//!
//! ```toml
//! args = ["summary", "--bucket", "5m"]  # the arguments
//! stdin = "..."                   # standard input, inline, as a pipe (default: empty)
//! stdin_file = "testdata/x.jsonl" # or a file opened as standard input (/dev/null too)
//! status = 0                      # the exit status
//! stdout = "..."                  # the exact standard output, or
//! stdout_contains = ["..."]       # text it must contain (where the whole is too long)
//! stderr = "..."                  # likewise for standard error
//! stderr_contains = ["..."]
//! ```
//!
//! A stream with neither field must be empty. `TOKENTIME_CASE=TEXT` runs only the cases whose
//! name contains TEXT.

use serde::Deserialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    args: Vec<String>,
    stdin: Option<String>,
    stdin_file: Option<String>,
    status: i32,
    stdout: Option<String>,
    #[serde(default)]
    stdout_contains: Vec<String>,
    stderr: Option<String>,
    #[serde(default)]
    stderr_contains: Vec<String>,
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The case files, sorted by name.
fn case_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("testdata/cases"))
        .expect("testdata/cases exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

/// Runs `case`; returns its output.
fn run(case: &Case) -> Result<Output, String> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tokentime"));
    cmd.current_dir(root()).args(&case.args);
    cmd.env_remove("COLUMNS").env_remove("NO_COLOR");
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    match &case.stdin_file {
        Some(f) => {
            let file = std::fs::File::open(root().join(f)).map_err(|e| format!("{f}: {e}"))?;
            cmd.stdin(file);
        }
        None => {
            cmd.stdin(Stdio::piped());
        }
    }
    let mut child = cmd.spawn().map_err(|e| format!("spawn tokentime: {e}"))?;
    // Fed by a thread of its own: the child may write a pipe full before it reads everything.
    let feeder = child.stdin.take().map(|mut sin| {
        let data = case.stdin.clone().unwrap_or_default();
        std::thread::spawn(move || {
            let _ = sin.write_all(data.as_bytes());
        })
    });
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if let Some(f) = feeder {
        f.join().unwrap();
    }
    Ok(out)
}

/// What is wrong with one output stream, if anything.
fn check_stream(name: &str, got: &[u8], exact: Option<&str>, contains: &[String]) -> Vec<String> {
    let text = String::from_utf8_lossy(got);
    match exact {
        Some(want) if got != want.as_bytes() => vec![differs(name, want, &text)],
        Some(_) => vec![],
        None if contains.is_empty() && !got.is_empty() => {
            vec![format!("{name} should be empty, got:\n{}", clip(&text))]
        }
        None => contains
            .iter()
            .filter(|c| !text.contains(c.as_str()))
            .map(|c| format!("{name} lacks {c:?}; got:\n{}", clip(&text)))
            .collect(),
    }
}

/// `text`, or its start when long.
fn clip(text: &str) -> String {
    match text.char_indices().nth(2000) {
        Some((at, _)) => format!("{}... ({} bytes in all)", &text[..at], text.len()),
        None => text.to_owned(),
    }
}

/// The first line where `got` departs from `want`, both in full when short.
fn differs(name: &str, want: &str, got: &str) -> String {
    let (w, g): (Vec<&str>, Vec<&str>) = (
        want.split_inclusive('\n').collect(),
        got.split_inclusive('\n').collect(),
    );
    let at = w.iter().zip(&g).take_while(|(a, b)| a == b).count();
    let mut msg = format!(
        "{name} differs at line {}:\n  want {:?}\n  got  {:?}",
        at + 1,
        w.get(at).copied().unwrap_or("(end)"),
        g.get(at).copied().unwrap_or("(end)"),
    );
    if want.len() + got.len() < 4000 {
        msg.push_str(&format!("\nwant:\n{want}\ngot:\n{got}"));
    }
    msg
}

/// Everything wrong with the case in `path` (nothing when it passes).
fn check(path: &Path) -> Vec<String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return vec![e.to_string()],
    };
    let case: Case = match toml::from_str(&text) {
        Ok(c) => c,
        Err(e) => return vec![format!("not a case file: {e}")],
    };
    if case.stdin.is_some() && case.stdin_file.is_some() {
        return vec!["both stdin and stdin_file".into()];
    }
    if case.stdout.is_some() && !case.stdout_contains.is_empty()
        || case.stderr.is_some() && !case.stderr_contains.is_empty()
    {
        return vec!["both an exact stream and text it contains".into()];
    }
    let out = match run(&case) {
        Ok(out) => out,
        Err(e) => return vec![e],
    };
    // `None` when killed by a signal.
    let (status, stdout, stderr) = (out.status.code(), out.stdout, out.stderr);
    let mut wrong = vec![];
    if status != Some(case.status) {
        wrong.push(format!(
            "exit status {status:?}, want {}; stderr:\n{}",
            case.status,
            String::from_utf8_lossy(&stderr)
        ));
    }
    wrong.extend(check_stream(
        "stdout",
        &stdout,
        case.stdout.as_deref(),
        &case.stdout_contains,
    ));
    wrong.extend(check_stream(
        "stderr",
        &stderr,
        case.stderr.as_deref(),
        &case.stderr_contains,
    ));
    wrong
}

#[test]
fn every_case_gives_its_expected_output() {
    let only = std::env::var("TOKENTIME_CASE").unwrap_or_default();
    let files = case_files();
    assert!(!files.is_empty(), "no case in testdata/cases");
    let mut ran = 0;
    let mut failed = vec![];
    for path in &files {
        let name = path.file_stem().unwrap().to_string_lossy();
        if !name.contains(&only) {
            continue;
        }
        ran += 1;
        let wrong = check(path);
        if !wrong.is_empty() {
            failed.push((name.into_owned(), wrong));
        }
    }
    assert!(ran > 0, "no case name contains {only:?}");
    let report: Vec<String> = failed
        .iter()
        .map(|(name, wrong)| {
            format!(
                "case {name} (testdata/cases/{name}.toml):\n{}",
                wrong.join("\n")
            )
        })
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {ran} cases failed: {}\n\n{}",
        failed.len(),
        failed
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        report.join("\n\n")
    );
}
