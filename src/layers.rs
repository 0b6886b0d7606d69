//! The layer order of the source folders, checked: a module may name (`crate::FOLDER`) only
//! its own folder and the folders below it. The order is the one `lib.rs` documents.

/// The folders from the bottom up. `number` and `cpu` are leaves every layer may use.
const LAYERS: [&str; 12] = [
    "number", "cpu", "input", "json", "metrics", "format", "classify", "summary", "analysis",
    "output", "cli", "app",
];

/// Every `crate::FOLDER` named in `text` (outside `//` comments) that sits above `own`.
fn upward_imports(own: &str, text: &str) -> Vec<(usize, String)> {
    let Some(own_rank) = LAYERS.iter().position(|l| *l == own) else {
        return vec![];
    };
    let mut bad = vec![];
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for (at, _) in code.match_indices("crate::") {
            let rest = &code[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if LAYERS
                .iter()
                .position(|l| *l == name)
                .is_some_and(|rank| rank > own_rank)
            {
                bad.push((n + 1, line.trim().to_owned()));
            }
        }
    }
    bad
}

#[test]
fn no_folder_imports_a_folder_above_it() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut dirs = vec![src.clone()];
    let mut bad = vec![];
    let mut files = 0;
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
                continue;
            }
            let rel = p.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
            let own = rel.split(['/', '.']).next().unwrap_or_default().to_owned();
            let text = std::fs::read_to_string(&p).unwrap();
            files += 1;
            for (line, code) in upward_imports(&own, &text) {
                bad.push(format!("src/{rel}:{line}: {code}"));
            }
        }
    }
    assert!(files > 30, "read {files} files");
    assert!(
        bad.is_empty(),
        "imports against the layer order ({}):\n{}",
        LAYERS.join(" < "),
        bad.join("\n")
    );
}

#[test]
fn an_upward_import_is_caught() {
    // summary sits below output: naming output from summary is against the order.
    let text = "use crate::metrics::Metrics;\nuse crate::output::enrich::round3;\n// crate::app\n";
    assert_eq!(
        upward_imports("summary", text),
        vec![(2, "use crate::output::enrich::round3;".to_owned())]
    );
    assert!(upward_imports("app", text).is_empty());
    assert!(upward_imports("number", "use crate::input::x;").len() == 1);
}
