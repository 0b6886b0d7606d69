//! The OpenMetrics text format (1.0) of a summary: its Prometheus rendering
//! ([`crate::output::render::write_prometheus`]) with what OpenMetrics adds. Every family in
//! seconds gets its `# UNIT` line (its name ends in `_seconds`, as OpenMetrics asks of a family
//! with a unit), a `"` in a `# HELP` text is escaped, blank lines are left out, and `# EOF`
//! ends the document. tokentime writes no counters, so no name needs a `_total`.

use std::io::{self, Write};

/// Writes `prom`, a Prometheus text exposition document, as an OpenMetrics document.
///
/// # Errors
/// The writer's.
pub(crate) fn write_from_prometheus(out: &mut impl Write, prom: &[u8]) -> io::Result<()> {
    for line in prom.split(|&b| b == b'\n') {
        if line.is_empty() {
            continue;
        }
        if let Some(help) = line.strip_prefix(b"# HELP ") {
            out.write_all(b"# HELP ")?;
            for &b in help {
                if b == b'"' {
                    out.write_all(b"\\\"")?;
                } else {
                    out.write_all(&[b])?;
                }
            }
            out.write_all(b"\n")?;
            continue;
        }
        out.write_all(line)?;
        out.write_all(b"\n")?;
        if let Some(ty) = line.strip_prefix(b"# TYPE ") {
            let name = ty.split(|&b| b == b' ').next().unwrap_or_default();
            if name.ends_with(b"_seconds") {
                out.write_all(b"# UNIT ")?;
                out.write_all(name)?;
                out.write_all(b" seconds\n")?;
            }
        }
    }
    out.write_all(b"# EOF\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_escapes_and_eof() {
        let prom = b"# HELP a_seconds Say \"hi\".\n# TYPE a_seconds summary\na_seconds_sum 1\n\n# HELP b Count.\n# TYPE b gauge\nb 2\n";
        let mut out = Vec::new();
        write_from_prometheus(&mut out, prom).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "# HELP a_seconds Say \\\"hi\\\".\n# TYPE a_seconds summary\n# UNIT a_seconds seconds\na_seconds_sum 1\n# HELP b Count.\n# TYPE b gauge\nb 2\n# EOF\n"
        );
    }
}
