//! docs/renderings.md lists, per built-in format, the field the rows' `id` column is read
//! from (the field that joins rows to enriched lines); this test keeps that table the
//! formats' own. Run with `TOKENTIME_BLESS=1` to rewrite it.

use crate::format::{builtins, path_str};

/// The table's rows, from the built-in formats.
fn rows() -> String {
    builtins()
        .iter()
        .map(|f| {
            let paths: Vec<String> = f
                .id_paths
                .iter()
                .map(|p| format!("`{}`", path_str(p)))
                .collect();
            let read = if paths.is_empty() {
                "none (join on `file` and `line`)".to_owned()
            } else {
                paths.join(", else ")
            };
            format!("| {} | {read} |\n", f.name)
        })
        .collect()
}

#[test]
fn the_id_table_is_the_formats_own() {
    const START: &str = "| format | `id` is read from |\n|---|---|\n";
    const END: &str = "<!-- /id-fields -->";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/renderings.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let from = text.find(START).expect("the id table's header") + START.len();
    let to = from + text[from..].find(END).expect("the id table's end");
    let want = rows();
    if std::env::var_os("TOKENTIME_BLESS").is_some() {
        std::fs::write(&path, format!("{}{want}{}", &text[..from], &text[to..])).unwrap();
        return;
    }
    assert_eq!(
        text[from..to],
        want,
        "docs/renderings.md: the id table (TOKENTIME_BLESS=1 rewrites it)"
    );
}
