//! Worker: one thread's work on framed lines. Parses and classifies a line, counts it, and
//! hands the result to the sink of the command: the spliced line for enrich, the digests for
//! summary.
//!
//! Owns a [`Processor`], the [`Coverage`] counters, the [`Summary`] being built and the reused
//! buffers, so one line costs no allocation in steady state. Writes enriched lines to the
//! writer it is given; reports bad lines to its caller (who knows their line numbers) and never
//! prints. Used line by line by `run` and chunk by chunk by [`crate::parallel`].

use crate::config::{Command, Config};
use crate::enrich;
use crate::pipeline::{Coverage, Kind, Processor};
use crate::summary::{ByValues, Summary};
use std::io::{self, Write};

/// Per-thread state for the lines of one run.
pub struct Worker {
    proc: Processor,
    /// What the lines held so far.
    pub cov: Coverage,
    /// The summary being built (summary command only).
    pub summary: Option<Summary>,
    /// Enrich: the key of the spliced object, and whether non-request lines are dropped.
    enrich: Option<(String, bool)>,
    object: Vec<u8>,
    by_values: ByValues,
}

impl Worker {
    /// A worker for `config`'s command.
    pub fn new(config: &Config) -> Worker {
        let (key, by_paths): (&str, Vec<Vec<String>>) = match &config.command {
            Command::Enrich(e) => (e.key.as_str(), vec![]),
            Command::Summary(s) => ("tokentime", s.by.iter().map(|(_, p)| p.clone()).collect()),
            Command::Formats => ("tokentime", vec![]),
        };
        let mut proc = Processor::new(
            config.formats.clone(),
            &config.root,
            key,
            &by_paths,
            config.cache_hit_ratio,
        );
        if config.reference_parser {
            proc.use_reference_parser();
        }
        Worker {
            proc,
            cov: Coverage::default(),
            summary: match &config.command {
                Command::Summary(s) => Some(Summary::new(
                    s.by.iter().map(|(n, _)| n.clone()).collect(),
                    s.max_groups,
                )),
                _ => None,
            },
            enrich: match &config.command {
                Command::Enrich(e) => Some((e.key.clone(), e.only_requests)),
                _ => None,
            },
            object: Vec::with_capacity(512),
            by_values: ByValues::default(),
        }
    }

    /// True when a line longer than `--max-line-bytes` is passed through (enrich without
    /// `--only-requests`).
    pub fn passes_long_lines(&self) -> bool {
        matches!(self.enrich, Some((_, false)))
    }

    /// Handles one framed line: `prefix` (a BOM on the first line), `content`, `ending`
    /// (`\n`, `\r\n` or nothing), writing what enrich outputs to `w`. Returns why the line is
    /// bad, for the caller's diagnostics, when it is.
    ///
    /// # Errors
    /// The writer's.
    pub fn line(
        &mut self,
        prefix: &[u8],
        content: &[u8],
        ending: &[u8],
        w: &mut impl Write,
    ) -> io::Result<Option<String>> {
        let kind = self.proc.process(content);
        self.proc.count(&kind, &mut self.cov);
        let bad = match &kind {
            Kind::Invalid(msg) => Some(format!("invalid JSON: {msg}")),
            _ => None,
        };
        if let Some(s) = self.summary.as_mut()
            && let Kind::Requests = kind
        {
            self.proc.by_values(content, &mut self.by_values);
            for r in self.proc.requests() {
                s.add(&r.metrics, &self.by_values);
            }
        }
        if let Some((key, only_requests)) = &self.enrich {
            let spliced = match &kind {
                Kind::Requests => {
                    self.object.clear();
                    let proc = &self.proc;
                    enrich::render_all(&mut self.object, key, proc.requests(), |f| {
                        &proc.format_spec(f).name
                    })?;
                    w.write_all(prefix)?;
                    if !enrich::splice(w, content, &self.object)? {
                        w.write_all(content)?;
                    }
                    true
                }
                _ if *only_requests => return Ok(bad),
                _ => false,
            };
            if !spliced {
                w.write_all(prefix)?;
                w.write_all(content)?;
            }
            w.write_all(ending)?;
        }
        Ok(bad)
    }

    /// Adds the counters and summary of `other` (a worker of the same run) to this one.
    pub fn merge(&mut self, other: Worker) {
        self.cov.merge(&other.cov);
        if let (Some(mine), Some(theirs)) = (self.summary.as_mut(), other.summary.as_ref()) {
            mine.merge(theirs);
        }
    }

    /// Counts a line longer than `max_line_bytes` (its bytes are the caller's to pass on) and
    /// returns the diagnostic.
    pub fn too_long(&mut self, max_line_bytes: usize) -> String {
        self.cov.lines += 1;
        self.cov.too_long += 1;
        format!("line longer than --max-line-bytes {max_line_bytes}")
    }
}
