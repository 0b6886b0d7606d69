//! `tokentime report FILE... -o report.html`: the inputs read once, as `summary` reads them,
//! into the summary and its `--bucket` windows; the summary's JSON document written as
//! `summary --hist -o json` writes it (SLOs judged, a verdict per SLO on stderr), the windows
//! as `summary --bucket W -o json` writes them, with `--baseline` the comparison as `diff
//! BASELINE FILE -o json` writes it; and the page rendered from those documents
//! ([`crate::output::html`]).

use crate::app::diff_cmd::{Side, baseline_json};
use crate::app::error::{Error, ExitCode};
use crate::app::summary_cmd::{collect_into, exit_code, report};
use crate::cli::config::{Config, DiffConfig, DiffOutput, HtmlConfig, ReportConfig};
use crate::input::source::Source;
use crate::output::diff::Run;
use crate::output::html::{Page, page};
use std::io::Write;

/// `-o FILE` that is one of the inputs or the baseline (the same file by canonical path)
/// is refused before anything is read or written: the page would replace the log.
///
/// # Errors
/// [`Error::Config`] naming the file.
fn refuse_overwriting_an_input(config: &Config, hc: &HtmlConfig) -> Result<(), Error> {
    let Ok(out) = std::fs::canonicalize(&hc.output) else {
        // Not there yet (or `-`): no input can be it.
        return Ok(());
    };
    let inputs = config.inputs.iter().filter_map(|s| match s {
        Source::Path(p) => Some((p, "an input")),
        Source::Stdin => None,
    });
    for (path, what) in inputs.chain(hc.baseline.iter().map(|b| (b, "the baseline"))) {
        if std::fs::canonicalize(path).is_ok_and(|p| p == out) {
            return Err(Error::Config(format!(
                "report -o {}: that file is {what} ({}); the page would overwrite it: write the report to another file",
                hc.output.display(),
                path.display()
            )));
        }
    }
    Ok(())
}

/// Runs `tokentime report`.
///
/// # Errors
/// An input that cannot be read, a baseline that does not line up, a page that cannot be
/// written.
pub(crate) fn run_report(
    config: &Config,
    hc: &HtmlConfig,
    out: &mut impl Write,
) -> Result<ExitCode, Error> {
    refuse_overwriting_an_input(config, hc)?;
    let sc = &hc.summary;
    let mut windows = Vec::new();
    let (cov, mut summary) = collect_into(config, sc, &mut windows)?;
    crate::app::unmapped::warn_after_run(&config.formats, &mut summary, &cov);
    let mut summary_text = Vec::new();
    let broken = report(&mut summary_text, &sc.report, &cov, &mut summary, false)?;
    let bad = |e: serde_json::Error| Error::Output(e.into());
    let summary_doc: serde_json::Value = serde_json::from_slice(&summary_text).map_err(bad)?;
    let window_docs = windows
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(serde_json::from_slice)
        .collect::<Result<Vec<serde_json::Value>, _>>()
        .map_err(bad)?;
    let names: Vec<String> = config
        .inputs
        .iter()
        .map(|s| crate::input::shown_name(&s.name()).into_owned())
        .collect();
    // As summary: lines read but none a request (an empty input is not wrong).
    if cov.requests == 0 && cov.lines > 0 {
        crate::diag!("tokentime: {}", summary.no_requests(&cov));
    }
    let diff = match &hc.baseline {
        Some(path) => {
            let b = Side {
                run: Run {
                    name: names.join(", "),
                    digest_file: false,
                    requests: cov.requests,
                },
                cov: cov.clone(),
                summary,
            };
            let doc = baseline_json(config, &diff_config(hc), &Source::Path(path.clone()), b)?;
            let mut text = serde_json::to_string_pretty(&doc).map_err(bad)?;
            text.push('\n');
            Some((text, doc))
        }
        None => None,
    };
    let bucket = crate::summary::window::format_duration(sc.bucket.unwrap_or(60_000_000_000));
    let html = page(&Page {
        inputs: &names,
        summary_text: &String::from_utf8_lossy(&summary_text),
        summary: &summary_doc,
        windows_text: &String::from_utf8_lossy(&windows),
        windows: &window_docs,
        bucket: &bucket,
        diff: diff.as_ref().map(|(t, d)| (t.as_str(), d)),
    });
    write_page(&hc.output, html.as_bytes(), out)?;
    if cov.read_errors > 0 {
        return Ok(ExitCode::Usage);
    }
    Ok(exit_code(config, &cov, broken))
}

/// How the baseline is read and compared: as `tokentime diff` with the report's `--by`,
/// `--quantiles`, `--max-groups` and `--exact-limit`; whole (the report's `--since` and
/// `--until` are its own: a baseline of another span is a digest saved with that span).
fn diff_config(hc: &HtmlConfig) -> DiffConfig {
    let sc = &hc.summary;
    let mut summary = sc.clone();
    summary.report = ReportConfig {
        slos: vec![],
        analysis: crate::analysis::AnalysisConfig::default(),
        ..sc.report.clone()
    };
    summary.goodput = None;
    summary.bucket = None;
    summary.range = crate::cli::config::TimeRange::default();
    DiffConfig {
        summary,
        fail_if: vec![],
        fail_unjudged: false,
        output: DiffOutput::Json,
    }
}

/// Writes the page to `path`, or to `out` for `-`.
fn write_page(path: &std::path::Path, html: &[u8], out: &mut impl Write) -> Result<(), Error> {
    if path.as_os_str() == "-" {
        // A reader that stops early (`| head`) ends the page, not the run: the SLOs' exit
        // status still follows, as summary's does.
        return match out.write_all(html).and_then(|()| out.flush()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            w => w.map_err(Error::Output),
        };
    }
    std::fs::write(path, html)
        .map_err(|e| Error::Config(format!("-o {}: {e}", crate::input::shown_path(path))))
}
