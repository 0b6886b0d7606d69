//! The README and the reference pages cannot lie: every ```console block in README.md and in
//! docs/*.md is run. A line starting with `$ ` is a command (run by bash, with `-o pipefail`,
//! in the repository root, with `tokentime` on PATH and `cargo run --release --` standing for
//! it); the lines after it, up to the next command or the end of the block, are its exact
//! standard output. Every relative link in those files points to a file that exists, and a
//! `#fragment` to a heading of that file.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The Markdown files checked: README.md, then docs/*.md in name order.
fn pages() -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    let mut all = vec![root().join("README.md")];
    all.extend(docs);
    all
}

/// Runs every ```console block of the Markdown file `page` and checks each command's standard
/// output against the lines under it. Returns how many commands ran. Failure messages name the
/// file and the command's line.
fn run_console_blocks(page: &Path) -> usize {
    let name = page
        .strip_prefix(root())
        .unwrap_or(page)
        .display()
        .to_string();
    let text = std::fs::read_to_string(page).unwrap_or_else(|e| panic!("{name}: {e}"));
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_tokentime"))
        .parent()
        .unwrap()
        .to_owned();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut in_block = false;
    // (line number, command, expected stdout)
    let mut cases: Vec<(usize, String, String)> = vec![];
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```console") {
            in_block = true;
            continue;
        }
        if in_block && line.trim_start().starts_with("```") {
            in_block = false;
            continue;
        }
        if !in_block {
            continue;
        }
        if let Some(cmd) = line.strip_prefix("$ ") {
            cases.push((i + 1, cmd.to_owned(), String::new()));
        } else if let Some(last) = cases.last_mut() {
            last.2.push_str(line);
            last.2.push('\n');
        }
    }
    assert!(!in_block, "{name}: a ```console block is not closed");
    let mut ran = 0;
    for (line, cmd, want) in cases {
        if cmd.starts_with("cargo test") {
            continue; // the suite itself
        }
        let cmd = cmd.replace("cargo run --release --", "tokentime");
        let out = Command::new("bash")
            .args(["-o", "pipefail", "-c", &cmd])
            .current_dir(root())
            .env("PATH", &path)
            .output()
            .unwrap();
        let got = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() || cmd.contains("; echo"),
            "{name}:{line}: command failed: {cmd}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(got, want, "{name}:{line}: output differs for: {cmd}");
        ran += 1;
    }
    ran
}

#[test]
fn readme_examples_run_as_written() {
    let ran = run_console_blocks(&root().join("README.md"));
    assert!(ran >= 4, "README.md examples run: {ran}");
}

#[test]
fn docs_examples_run_as_written() {
    let mut ran = 0;
    for page in pages().into_iter().skip(1) {
        ran += run_console_blocks(&page);
    }
    assert!(ran >= 20, "docs/*.md examples run: {ran}");
}

/// GitHub's anchor for a heading: lower case, characters other than letters, digits, spaces,
/// `-` and `_` dropped, spaces turned into `-`; a repeated anchor gets `-1`, `-2`, ...
fn anchors(text: &str) -> Vec<String> {
    let mut seen: std::collections::HashMap<String, usize> = Default::default();
    let mut out = vec![];
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let title = line.trim_start_matches('#');
        if fenced || !line.starts_with('#') || !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let n = seen.entry(slug.clone()).or_insert(0);
        out.push(if *n == 0 { slug } else { format!("{slug}-{n}") });
        *n += 1;
    }
    out
}

/// The targets of the inline links `[text](target)` of a Markdown text, outside fenced blocks
/// and code spans, with their line numbers.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = vec![];
    let mut fenced = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Drop code spans: a `](` inside one is no link.
        let plain: String = line
            .split('`')
            .enumerate()
            .filter(|(k, _)| k % 2 == 0)
            .map(|(_, s)| s)
            .collect::<Vec<_>>()
            .join(" ");
        let mut rest = plain.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            out.push((i + 1, after[..end].to_owned()));
            rest = &after[end..];
        }
    }
    out
}

#[test]
fn relative_links_resolve() {
    let mut broken = vec![];
    for page in pages() {
        let name = page.strip_prefix(root()).unwrap().display().to_string();
        let text = std::fs::read_to_string(&page).unwrap();
        for (line, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, fragment) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let dest = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            if !dest.exists() {
                broken.push(format!("{name}:{line}: no file {target}"));
                continue;
            }
            if let Some(a) = fragment {
                let dest_text = std::fs::read_to_string(&dest).unwrap_or_default();
                if !anchors(&dest_text).iter().any(|x| x == a) {
                    broken.push(format!("{name}:{line}: no heading for {target}"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}
