//! The README cannot lie: every ```console block in README.md is run. A line starting with
//! `$ ` is a command (run by bash in the repository root, with `tokentime` on PATH and
//! `cargo run --release --` standing for it); the lines after it, up to the next command or
//! the end of the block, are its exact standard output.

use std::path::Path;
use std::process::Command;

#[test]
fn readme_examples_run_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
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
    let mut cases: Vec<(String, String)> = vec![];
    for line in readme.lines() {
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
            cases.push((cmd.to_owned(), String::new()));
        } else if let Some(last) = cases.last_mut() {
            last.1.push_str(line);
            last.1.push('\n');
        }
    }
    assert!(cases.len() >= 4, "README examples found: {}", cases.len());
    for (cmd, want) in cases {
        if cmd.starts_with("cargo test") {
            continue; // the suite itself
        }
        let cmd = cmd.replace("cargo run --release --", "tokentime");
        let out = Command::new("bash")
            .args(["-o", "pipefail", "-c", &cmd])
            .current_dir(root)
            .env("PATH", &path)
            .output()
            .unwrap();
        let got = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() || cmd.contains("; echo"),
            "README command failed: {cmd}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(got, want, "README output differs for: {cmd}");
    }
}
