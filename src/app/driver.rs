//! The driver: the one loop that reads an input for every command.
//!
//! It opens the input (a file or standard input, compressed or not: [`Source::open`]), tells a
//! JSON document from JSON lines ([`document::detect`]), frames the lines ([`LineReader`], or
//! [`chunk_lines`] for a file read in chunks by several threads, [`crate::app::parallel`]),
//! and hands what it read to a [`Sink`]: framed lines, the pieces of a line too long to hold,
//! a document's records or its bytes, and the errors of the input. The commands are sinks
//! ([`WorkerSink`]: a [`Worker`] with its output and diagnostics); where they read an input
//! differently, it is a field of [`Reading`], not a second loop.
//!
//! Shaped after ripgrep's `Sink`: the driver owns the reading and the framing, the sink what
//! becomes of each line.

use crate::app::error::Error;
use crate::app::parallel;
use crate::app::worker::{LineOutcome, Worker};
use crate::cli::config::Config;
use crate::input::document::{self, Document, Item, Objects};
use crate::input::lines::{self, Line, LineReader, frame, within_limit};
use crate::input::source::Source;
use std::cell::RefCell;
use std::io::{self, BufRead, Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// What becomes of what the driver reads from one input. Every method but [`Sink::line`] has
/// a default that does nothing.
pub(crate) trait Sink {
    /// What the first bytes of the input look like (after decompression).
    fn looks(&mut self, _looks: crate::app::not_json::Looks) {}

    /// What the first bytes say the input is, when it is a benchmark's aggregates without
    /// its requests ([`crate::app::aggregates::of`]).
    fn aggregates(&mut self, _what: Option<&'static str>) {}

    /// The input's first bytes (those read ahead to tell what it is), for what is said at its
    /// end when it gave no request ([`crate::app::unmapped`]).
    fn head(&mut self, _head: &[u8]) {}

    /// The input `name` is about to be read.
    fn begin(&mut self, name: &str) {
        let _ = name;
    }

    /// A framed line, the `line_no`th of its input: `prefix` (NUL bytes, a byte-order mark),
    /// `content` (without its ending), `ending` (`\n`, `\r\n` or nothing). A document's record
    /// comes with an empty prefix and ending.
    ///
    /// # Errors
    /// The sink's output errors (they end the run).
    fn line(
        &mut self,
        line_no: u64,
        prefix: &[u8],
        content: &[u8],
        ending: &[u8],
    ) -> io::Result<()>;

    /// A record of a JSON document read by enrich, the `line_no`th: its requests are counted,
    /// and written only as rows (the document's bytes pass through as they are).
    ///
    /// # Errors
    /// The sink's output errors.
    fn record(&mut self, line_no: u64, content: &[u8]) -> io::Result<()> {
        self.line(line_no, b"", content, b"")
    }

    /// Whether the sink writes per-request rows (a document's records are written as rows).
    fn writes_rows(&self) -> bool {
        false
    }

    /// Whether bytes that are not lines pass through to the output: the pieces of a line
    /// longer than `--max-line-bytes`, a JSON array document.
    fn passes_through(&self) -> bool {
        false
    }

    /// Bytes passed through unchanged (called only when [`Sink::passes_through`]).
    ///
    /// # Errors
    /// The sink's output errors.
    fn through(&mut self, bytes: &[u8]) -> io::Result<()> {
        let _ = bytes;
        Ok(())
    }

    /// The `line_no`th line was longer than `max_line_bytes` (its bytes went to
    /// [`Sink::through`] when the sink passes them through).
    fn too_long(&mut self, line_no: u64, max_line_bytes: usize) {
        let _ = (line_no, max_line_bytes);
    }

    /// A JSON document could not be read further at line `line_no`, for reason `why`.
    fn bad_document(&mut self, line_no: u64, why: &str) {
        let _ = (line_no, why);
    }

    /// The input could not be opened, or could not be read to its end (the driver reports
    /// it on stderr).
    fn input_failed(&mut self) {}

    /// Called before a read of the input that may block (the output is flushed there, which
    /// keeps a pipeline live).
    ///
    /// # Errors
    /// The sink's output errors.
    fn before_read(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// Called after each line (a line-buffered output is flushed there).
    ///
    /// # Errors
    /// The sink's output errors.
    fn after_line(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// Reads `input`, a file of JSON lines, in chunks with `config.threads` threads; returns
    /// the input's read error, when reading stopped on one. Only called when
    /// [`Reading::chunked`] is set.
    ///
    /// # Errors
    /// The sink's output errors.
    fn chunked(
        &mut self,
        config: &Config,
        input: Box<dyn Read + Send>,
        stop: Option<&AtomicBool>,
    ) -> io::Result<Option<io::Error>> {
        let _ = (config, input, stop);
        Err(io::Error::other("this sink does not read in chunks"))
    }

    /// The input has been read (it was opened and its kind told).
    fn end(&mut self) {}
}

/// What a JSON document (an array of records, or pretty-printed objects) becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Documents {
    /// An array passes through unchanged (or is left out when the sink passes nothing
    /// through), with a note on stderr; pretty-printed objects are read as lines (enrich).
    PassThrough,
    /// Their records are read: an array's elements, each object whole (summary).
    Records,
}

/// How the inputs of a run are read: what differs between the commands.
pub(crate) struct Reading<'a> {
    /// `--max-line-bytes` and the rest of the run's configuration.
    pub(crate) config: &'a Config,
    /// The configuration a file is read in chunks with (its `threads` are the file's share),
    /// when files may be ([`parallel::applies`]).
    pub(crate) chunked: Option<&'a Config>,
    pub(crate) documents: Documents,
    /// Reading stops at the next line when set (Ctrl-C).
    pub(crate) stop: Option<&'a AtomicBool>,
    /// Bytes read from files, for the progress line.
    pub(crate) bytes: Option<&'a Arc<AtomicU64>>,
    /// Files being read in chunks right now (counted until [`Sink::end`] returns).
    pub(crate) in_chunks: Option<&'a AtomicUsize>,
}

impl<'a> Reading<'a> {
    /// Reads lines one at a time, documents passed through: nothing chunked, no stop.
    pub(crate) fn plain(config: &'a Config) -> Self {
        Reading {
            config,
            chunked: None,
            documents: Documents::PassThrough,
            stop: None,
            bytes: None,
            in_chunks: None,
        }
    }

    fn stopped(&self) -> bool {
        self.stop.is_some_and(|s| s.load(Ordering::Relaxed))
    }
}

/// Whether an input was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// It could not be opened, or its first bytes could not be read ([`Sink::end`] was not
    /// called).
    Unopened,
    /// It was read, to its end or to a read error.
    Read,
}

/// Reads `source` into `sink`. An input that cannot be opened or read is reported on stderr
/// (`tokentime: FILE: reason`) and told to the sink; the lines read before a read error are
/// handed on.
///
/// # Errors
/// The sink's output errors.
pub(crate) fn read(
    reading: &Reading<'_>,
    source: &Source,
    sink: &mut impl Sink,
) -> io::Result<Outcome> {
    let name = source.name();
    sink.begin(&name);
    let how = if reading
        .chunked
        .is_some_and(|c| parallel::applies(c, source))
    {
        ReadAs::Chunks
    } else if *source == Source::Stdin && !reading.config.stdin_is_file {
        ReadAs::Pipe
    } else {
        ReadAs::Lines
    };
    match source.open(reading.bytes) {
        Ok(r) => read_from(reading, &name, r, how, sink),
        Err(e) => {
            failed(&name, e, sink);
            Ok(Outcome::Unopened)
        }
    }
}

/// Reports that input `name` failed with `e`.
fn failed(name: &str, e: io::Error, sink: &mut impl Sink) {
    crate::diag!(
        "tokentime: {}",
        Error::Input {
            name: crate::input::shown_name(name).into_owned(),
            source: e
        }
    );
    sink.input_failed();
}

/// How the lines of an input are read ([`read_from`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadAs {
    /// In chunks, by several threads ([`parallel::applies`]).
    Chunks,
    /// One at a time.
    Lines,
    /// One at a time, from a pipe or a terminal: in larger reads
    /// ([`crate::input::lines::PIPE_READ_SIZE`]).
    Pipe,
}

/// Reads the opened input `name` from `reader` into `sink` ([`read`]), its lines as `how`
/// says (a JSON document is read whole whatever it says).
///
/// # Errors
/// The sink's output errors.
pub(crate) fn read_from(
    reading: &Reading<'_>,
    name: &str,
    reader: Box<dyn Read + Send>,
    how: ReadAs,
    sink: &mut impl Sink,
) -> io::Result<Outcome> {
    let reader = io::BufReader::with_capacity(64 * 1024, reader);
    // A document only when the whole input parses as one: a first line of `[]` or a pretty
    // banner before a log leaves it JSON lines, every line read.
    let (doc, mut reader) = match document::sniff(reader, reading.config.max_line_bytes) {
        Ok(d) => d,
        Err(e) => {
            failed(name, e, sink);
            return Ok(Outcome::Unopened);
        }
    };
    // The bytes read ahead by `sniff`, from its replay: no read of the input (when nothing was
    // read ahead, the input is at its end).
    let head = reader.fill_buf().unwrap_or(&[]);
    sink.looks(crate::app::not_json::looks(head));
    sink.aggregates(crate::app::aggregates::of(head));
    sink.head(head);
    let failure = match (doc, reading.documents) {
        // Pretty objects then objects on one line each: a log after a pretty banner, whose
        // lines enrich splices.
        (Some(Document::Object), Documents::PassThrough) if has_one_line_object(&reader) => {
            read_lines(reading, reader, how, sink)?
        }
        (Some(kind), Documents::PassThrough) => {
            read_document_through(reading, name, kind, reader, sink)?
        }
        (Some(Document::Array), Documents::Records) => {
            read_array(reader, sink);
            None
        }
        (Some(Document::Object), Documents::Records) => read_objects(reading, reader, sink)?,
        (_, _) if how == ReadAs::Chunks => {
            let config = reading.chunked.unwrap_or(reading.config);
            if let Some(n) = reading.in_chunks {
                n.fetch_add(1, Ordering::SeqCst);
            }
            let e = sink.chunked(config, Box::new(reader), reading.stop)?;
            if let Some(e) = e {
                failed(name, e, sink);
            }
            sink.end();
            if let Some(n) = reading.in_chunks {
                n.fetch_sub(1, Ordering::SeqCst);
            }
            return Ok(Outcome::Read);
        }
        (_, _) => read_lines(reading, reader, how, sink)?,
    };
    if let Some(e) = failure {
        failed(name, e, sink);
    }
    sink.end();
    Ok(Outcome::Read)
}

/// A JSON document in enrich: it is not JSON lines, so its bytes pass through unchanged (left
/// out when the sink passes nothing through: rows, `--only-requests`), while its records are
/// read as `summary` reads them ([`Sink::record`]): counted, and written as rows. Returns the
/// input's read error.
///
/// # Errors
/// The sink's output errors.
fn read_document_through<R: Read>(
    reading: &Reading<'_>,
    name: &str,
    kind: Document,
    reader: io::BufReader<document::Replay<R>>,
    sink: &mut impl Sink,
) -> io::Result<Option<io::Error>> {
    let keep = sink.passes_through();
    let rows = sink.writes_rows();
    let shared = RefCell::new(sink);
    let output_error = RefCell::new(None);
    let tee = Tee {
        inner: reader,
        sink: &shared,
        keep,
        output_error: &output_error,
    };
    let mut records = io::BufReader::with_capacity(64 * 1024, tee);
    let mut through = Records(&shared);
    let mut failure = match kind {
        Document::Array => {
            read_array(&mut records, &mut through);
            None
        }
        Document::Object => read_objects(reading, &mut records, &mut through)?,
    };
    // What is left after the records (after a part that does not parse, too) passes through.
    if let Err(e) = io::copy(&mut records, &mut io::sink()) {
        failure = failure.or(Some(e));
    }
    if let Some(e) = output_error.borrow_mut().take() {
        return Err(e);
    }
    let shown = crate::input::shown_name(name);
    if keep {
        crate::diag!(
            "tokentime: {shown}: a JSON document, passed through unchanged; its requests are counted, not spliced in (tokentime summary reads them, -o csv|tsv|jsonl writes a row each)"
        );
    } else if !rows {
        crate::diag!(
            "tokentime: {shown}: a JSON document, left out (it is no request line; -o csv|tsv|jsonl writes a row for each of its requests)"
        );
    }
    Ok(failure)
}

/// True when the bytes read ahead of an object document hold an object on one line (a JSON
/// line), after the first object.
fn has_one_line_object<R>(reader: &io::BufReader<document::Replay<R>>) -> bool {
    let ahead = reader.get_ref().get_ref().0.get_ref();
    let mut objects = Objects::new(&ahead[..], usize::MAX);
    let mut first = true;
    while let Ok(Some(item)) = objects.next_item() {
        if let Item::Object { bytes, .. } = item {
            if !first && !bytes.contains(&b'\n') {
                return true;
            }
            first = false;
        }
    }
    false
}

/// The bytes of a document as they are read, passed through to the sink (when `keep`).
struct Tee<'a, R, S> {
    inner: R,
    sink: &'a RefCell<&'a mut S>,
    keep: bool,
    /// The sink's output error: the read fails with its kind, and the caller returns it.
    output_error: &'a RefCell<Option<io::Error>>,
}

impl<R: Read, S: Sink> Read for Tee<'_, R, S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if self.keep
            && let Err(e) = self.sink.borrow_mut().through(&buf[..n])
        {
            let kind = e.kind();
            *self.output_error.borrow_mut() = Some(e);
            return Err(io::Error::from(kind));
        }
        Ok(n)
    }
}

/// The sink a document's records go to in enrich: each record to [`Sink::record`].
struct Records<'a, S>(&'a RefCell<&'a mut S>);

impl<S: Sink> Sink for Records<'_, S> {
    fn line(&mut self, line_no: u64, _: &[u8], content: &[u8], _: &[u8]) -> io::Result<()> {
        self.0.borrow_mut().record(line_no, content)
    }

    fn too_long(&mut self, line_no: u64, max_line_bytes: usize) {
        self.0.borrow_mut().too_long(line_no, max_line_bytes);
    }

    fn bad_document(&mut self, line_no: u64, why: &str) {
        self.0.borrow_mut().bad_document(line_no, why);
    }
}

/// A JSON array document (LLMPerf): its elements are the records, each numbered by the line
/// it starts on.
fn read_array(reader: impl BufRead, sink: &mut impl Sink) {
    let mut line_no = 1u64;
    let mut each = |first: u64, rec: &[u8]| -> io::Result<()> {
        line_no = first;
        sink.line(first, b"", rec, b"")
    };
    if let Err(msg) = document::for_each_element_at(reader, &mut each) {
        // The line the message places the fault on, else the last record's.
        let at = msg
            .rsplit_once(" at line ")
            .and_then(|(_, r)| r.split(' ').next()?.parse().ok())
            .unwrap_or(line_no);
        let what = if msg.starts_with("EOF while parsing") {
            "JSON document cut short (the input ends inside it; its records before the cut are read)"
        } else {
            "invalid JSON document"
        };
        sink.bad_document(at, &format!("{what}: {msg}"));
    }
}

/// Pretty-printed objects (a benchmark result written with `indent=2`): each is read as one
/// line, numbered by the line its `{` is on. Returns the input's read error.
fn read_objects(
    reading: &Reading<'_>,
    reader: impl BufRead,
    sink: &mut impl Sink,
) -> io::Result<Option<io::Error>> {
    let max = reading.config.max_line_bytes;
    let mut objects = Objects::new(reader, max);
    while !reading.stopped() {
        match objects.next_item() {
            Ok(None) => break,
            Err(e) => return Ok(Some(e)),
            Ok(Some(Item::Object { line, bytes })) => sink.line(line, b"", bytes, b"")?,
            Ok(Some(Item::TooLong { line })) => sink.too_long(line, max),
            Ok(Some(Item::CutShort { line, start })) => sink.bad_document(
                line,
                &format!(
                    "JSON document cut short (the input ends inside the object that starts on \
                     line {start}, which is not read)"
                ),
            ),
            Ok(Some(Item::Trailing { line, byte })) => sink.bad_document(
                line,
                &format!(
                    "invalid JSON document: `{}` after its objects (not read further)",
                    byte.escape_ascii()
                ),
            ),
        }
    }
    Ok(None)
}

/// JSON lines, one at a time. Returns the input's read error.
fn read_lines(
    reading: &Reading<'_>,
    reader: impl Read,
    how: ReadAs,
    sink: &mut impl Sink,
) -> io::Result<Option<io::Error>> {
    let max = reading.config.max_line_bytes;
    let pass = sink.passes_through();
    let mut lines = match how {
        ReadAs::Pipe => LineReader::with_read_size(reader, max, lines::PIPE_READ_SIZE),
        _ => LineReader::new(reader, max),
    };
    let mut line_no = 0u64;
    let sink = RefCell::new(sink);
    // The output's error, when a callback failed: `next_line` returns it as it returns the
    // input's, and it must not be reported as the input's (`<stdin>: No space left on device`).
    let output_error = RefCell::new(None);
    let output = |r: io::Result<()>| {
        r.map_err(|e| {
            let kind = e.kind();
            *output_error.borrow_mut() = Some(e);
            io::Error::from(kind)
        })
    };
    while !reading.stopped() {
        // The two callbacks share the sink: a too-long line is passed on piece by piece,
        // never held whole.
        let next = lines.next_line(&mut || output(sink.borrow_mut().before_read()), &mut |b| {
            if pass {
                output(sink.borrow_mut().through(b))
            } else {
                Ok(())
            }
        });
        if let Some(e) = output_error.borrow_mut().take() {
            return Err(e);
        }
        let sink = &mut **sink.borrow_mut();
        match next {
            Ok(Some(Line::Text {
                prefix,
                content,
                ending,
            })) => {
                line_no += 1;
                sink.line(line_no, prefix, content, ending)?;
            }
            Ok(Some(Line::TooLong)) => {
                line_no += 1;
                sink.too_long(line_no, max);
            }
            Ok(None) => break,
            Err(e) => return Ok(Some(e)),
        }
        sink.after_line()?;
    }
    Ok(None)
}

/// A line of a chunk as [`chunk_lines`] frames it.
pub(crate) enum ChunkLine<'a> {
    /// A line: where its bytes start and end in the chunk, and their framing.
    Text {
        start: usize,
        end: usize,
        prefix: &'a [u8],
        content: &'a [u8],
        ending: &'a [u8],
    },
    /// A line longer than the limit: its bytes (with its ending).
    TooLong(&'a [u8]),
}

/// Frames the lines of `data`, a chunk of whole lines (the last may lack its newline at the
/// end of input) whose first line is the `first_line + 1`th of its input, as
/// [`LineReader`] frames them: calls `each` with each line's number and framing. Returns the
/// number of lines.
pub(crate) fn chunk_lines<'a>(
    data: &'a [u8],
    first_line: u64,
    max_line_bytes: usize,
    mut each: impl FnMut(u64, ChunkLine<'a>),
) -> u64 {
    let mut start = 0;
    let mut line_no = first_line;
    while start < data.len() {
        let end = memchr::memchr(b'\n', &data[start..]).map_or(data.len(), |i| start + i + 1);
        let raw = &data[start..end];
        line_no += 1;
        if !within_limit(raw, max_line_bytes) {
            each(line_no, ChunkLine::TooLong(raw));
        } else {
            let (prefix, content, ending) = frame(raw);
            each(
                line_no,
                ChunkLine::Text {
                    start,
                    end,
                    prefix,
                    content,
                    ending,
                },
            );
        }
        start = end;
    }
    line_no - first_line
}

/// The sink of the commands that read lines (enrich, summary): their [`Worker`], the output
/// it writes to, and where bad lines are reported.
pub(crate) struct WorkerSink<'a, 'p, W: Write> {
    pub(crate) worker: &'a mut Worker<'p>,
    pub(crate) out: &'a mut W,
    /// Bad lines: (line number, reason), or (line, `None`) for one past `--max-diagnostics`
    /// whose reason was not kept.
    pub(crate) report: &'a mut (dyn FnMut(u64, Option<&str>) + Send),
    /// Flush the output after each line (and each chunk).
    pub(crate) line_buffered: bool,
    /// Ends the worker's input at the end of each input ([`Worker::finish`]); else the caller
    /// ends it after the last.
    pub(crate) finish_each: bool,
    /// Set when an input failed.
    pub(crate) failed: bool,
    /// The bad lines of an input whose first bytes are no UTF-8 text (UTF-16, binary), held
    /// until its end: when none of its lines was read, one message names what it is instead
    /// of one a line; else they are reported then.
    pub(crate) held: Option<HeldBad>,
}

/// Bad lines held by a [`WorkerSink`]: the first [`HELD_MAX`] with their reasons, then a
/// count.
#[derive(Debug, Default)]
pub(crate) struct HeldBad {
    lines: Vec<(u64, Option<String>)>,
    more: u64,
}

/// Bad lines held with their reasons at most (more than `--max-diagnostics` ever shows but
/// for a run that asks for more).
const HELD_MAX: usize = 10_000;

impl HeldBad {
    fn push(&mut self, line: u64, why: Option<&str>) {
        if self.lines.len() < HELD_MAX {
            self.lines.push((line, why.map(str::to_owned)));
        } else {
            self.more += 1;
        }
    }

    /// Reports what is held through `report`.
    fn replay(self, report: &mut (dyn FnMut(u64, Option<&str>) + Send)) {
        for (line, why) in &self.lines {
            report(*line, why.as_deref());
        }
        for _ in 0..self.more {
            report(0, None);
        }
    }
}

/// Bad line `line_no`, for reason `why`: held, when bad lines are, else reported.
fn held_or_reported(
    held: &mut Option<HeldBad>,
    report: &mut (dyn FnMut(u64, Option<&str>) + Send),
    line_no: u64,
    why: Option<&str>,
) {
    match held {
        Some(h) => h.push(line_no, why),
        None => report(line_no, why),
    }
}

impl<W: Write> WorkerSink<'_, '_, W> {
    /// Bad line `line_no`, for reason `why`: reported, or held.
    fn bad(&mut self, line_no: u64, why: Option<&str>) {
        held_or_reported(&mut self.held, self.report, line_no, why);
    }
}

impl<W: Write + Send> Sink for WorkerSink<'_, '_, W> {
    fn begin(&mut self, name: &str) {
        self.worker.set_input(name);
    }

    fn looks(&mut self, looks: crate::app::not_json::Looks) {
        self.worker.input_looks(looks);
        self.held = crate::app::not_json::names_bad_lines(looks).then(HeldBad::default);
    }

    fn aggregates(&mut self, what: Option<&'static str>) {
        self.worker.input_aggregates(what);
    }

    fn head(&mut self, head: &[u8]) {
        self.worker.input_head(head);
    }

    fn line(
        &mut self,
        line_no: u64,
        prefix: &[u8],
        content: &[u8],
        ending: &[u8],
    ) -> io::Result<()> {
        match self
            .worker
            .line(line_no, prefix, content, ending, self.out)?
        {
            LineOutcome::Done(why) => why.iter().for_each(|w| self.bad(line_no, Some(w))),
            // Only a worker made with `Worker::fork` defers.
            LineOutcome::Deferred => {}
        }
        Ok(())
    }

    fn writes_rows(&self) -> bool {
        self.worker.writes_rows()
    }

    fn record(&mut self, line_no: u64, content: &[u8]) -> io::Result<()> {
        if self.worker.writes_rows() {
            return self.line(line_no, b"", content, b"");
        }
        if let LineOutcome::Done(why) =
            self.worker
                .line(line_no, b"", content, b"", &mut io::sink())?
        {
            why.iter().for_each(|w| self.bad(line_no, Some(w)));
        }
        Ok(())
    }

    fn passes_through(&self) -> bool {
        self.worker.passes_long_lines()
    }

    fn through(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)
    }

    fn too_long(&mut self, line_no: u64, max_line_bytes: usize) {
        let why = self.worker.too_long(max_line_bytes);
        self.bad(line_no, Some(&why));
    }

    fn bad_document(&mut self, line_no: u64, why: &str) {
        self.worker.count_invalid();
        self.bad(line_no, Some(why));
    }

    fn input_failed(&mut self) {
        self.failed = true;
    }

    fn before_read(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    fn after_line(&mut self) -> io::Result<()> {
        if self.line_buffered {
            self.out.flush()?;
        }
        Ok(())
    }

    fn chunked(
        &mut self,
        config: &Config,
        input: Box<dyn Read + Send>,
        stop: Option<&AtomicBool>,
    ) -> io::Result<Option<io::Error>> {
        let proto = self.worker.fork();
        self.worker.sweep_apart();
        let (held, report) = (&mut self.held, &mut *self.report);
        let mut bad = |line: u64, why: Option<&str>| held_or_reported(held, report, line, why);
        let done = parallel::run_file(
            config,
            input,
            &|| proto.fork(),
            parallel::Caller {
                seq: self.worker,
                w: self.out,
                flush_each_chunk: self.line_buffered,
                report: &mut bad,
            },
            stop,
        )?;
        for other in done.workers {
            self.worker.merge(other);
        }
        Ok(done.input_error)
    }

    fn end(&mut self) {
        if let Some(held) = self.held.take()
            && !self.worker.input_named()
        {
            held.replay(self.report);
        }
        self.worker.end_input();
        if self.finish_each {
            self.worker.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// A sink that writes down what it is handed.
    #[derive(Default)]
    struct Log {
        pass: bool,
        events: Vec<String>,
        through: Vec<u8>,
        failed: bool,
        ended: bool,
    }

    impl Sink for Log {
        fn begin(&mut self, name: &str) {
            self.events.push(format!("begin {name}"));
        }
        fn line(&mut self, n: u64, prefix: &[u8], content: &[u8], ending: &[u8]) -> io::Result<()> {
            self.events.push(format!(
                "line {n} {:?}|{}|{:?}",
                prefix.escape_ascii().to_string(),
                String::from_utf8_lossy(content),
                ending.escape_ascii().to_string()
            ));
            Ok(())
        }
        fn passes_through(&self) -> bool {
            self.pass
        }
        fn through(&mut self, bytes: &[u8]) -> io::Result<()> {
            self.through.extend_from_slice(bytes);
            Ok(())
        }
        fn too_long(&mut self, n: u64, max: usize) {
            self.events.push(format!("too long {n} > {max}"));
        }
        fn bad_document(&mut self, n: u64, why: &str) {
            self.events.push(format!("bad {n} {why}"));
        }
        fn input_failed(&mut self) {
            self.failed = true;
        }
        fn end(&mut self) {
            self.ended = true;
        }
    }

    fn config(max_line_bytes: usize) -> Config {
        let max = max_line_bytes.to_string();
        crate::cli::config_from_args(["tokentime", "--max-line-bytes", &max]).unwrap()
    }

    fn read_bytes(data: &[u8], documents: Documents, pass: bool) -> Log {
        let config = config(16);
        let reading = Reading {
            documents,
            ..Reading::plain(&config)
        };
        let mut log = Log {
            pass,
            ..Log::default()
        };
        let input = Box::new(Cursor::new(data.to_vec()));
        let outcome = read_from(&reading, "mem", input, ReadAs::Lines, &mut log).unwrap();
        assert_eq!(outcome, Outcome::Read);
        assert!(log.ended);
        log
    }

    const LINES: &[u8] = b"\xEF\xBB\xBF{\"a\":1}\n0123456789abcdefghij\nx\r\nlast";

    #[test]
    fn lines_are_framed_and_numbered_and_a_long_one_passed_on() {
        let log = read_bytes(LINES, Documents::PassThrough, true);
        assert_eq!(
            log.events,
            [
                r#"line 1 "\\xef\\xbb\\xbf"|{"a":1}|"\\n""#,
                "too long 2 > 16",
                r#"line 3 ""|x|"\\r\\n""#,
                r#"line 4 ""|last|"""#,
            ]
        );
        assert_eq!(log.through, b"0123456789abcdefghij\n");
        assert!(!log.failed);
        // A sink that passes nothing through gets no bytes.
        assert!(
            read_bytes(LINES, Documents::Records, false)
                .through
                .is_empty()
        );
    }

    #[test]
    fn chunks_are_framed_as_lines_are() {
        let mut events = Vec::new();
        let n = chunk_lines(LINES, 10, 16, |n, line| {
            events.push(match line {
                ChunkLine::TooLong(raw) => format!("too long {n} {}", raw.len()),
                ChunkLine::Text {
                    start,
                    end,
                    prefix,
                    content,
                    ending,
                } => {
                    assert_eq!(
                        [prefix, content, ending].concat(),
                        &LINES[start..end],
                        "framing covers the line's bytes"
                    );
                    format!(
                        "line {n} {}|{}|{}",
                        prefix.len(),
                        String::from_utf8_lossy(content),
                        ending.len()
                    )
                }
            });
        });
        assert_eq!(n, 4, "the lines framed");
        assert_eq!(
            events,
            [
                "line 11 3|{\"a\":1}|1",
                "too long 12 21",
                "line 13 0|x|2",
                "line 14 0|last|0"
            ]
        );
    }

    #[test]
    fn an_array_document_passes_through_or_its_records_are_read() {
        let doc = b"[{\"a\":1},\n {\"b\":2}]\n";
        let records = [r#"line 1 ""|{"a":1}|"""#, r#"line 2 ""|{"b":2}|"""#];
        // Enrich: the bytes pass through as they are, and the records are read (counted).
        let passed = read_bytes(doc, Documents::PassThrough, true);
        assert_eq!(passed.events, records);
        assert_eq!(passed.through, doc);
        let left_out = read_bytes(doc, Documents::PassThrough, false);
        assert_eq!(left_out.events, records);
        assert!(left_out.through.is_empty());
        let read = read_bytes(doc, Documents::Records, true);
        assert_eq!(read.events, records);
        assert!(read.through.is_empty());
        // What does not parse as an array to its end is no document: its one line is read.
        let bad = read_bytes(b"[{\"a\":1}, oops]", Documents::Records, false);
        assert_eq!(bad.events.len(), 1);
        assert!(bad.events[0].starts_with("line 1 "), "{:?}", bad.events);
    }

    #[test]
    fn pretty_objects_are_records_and_pass_through_whole_in_enrich() {
        let doc = b"{\n  \"a\": 1\n}\n{\n  \"b\": 2\n}\n";
        for (documents, pass) in [(Documents::Records, false), (Documents::PassThrough, true)] {
            let read = read_bytes(doc, documents, pass);
            assert_eq!(read.events.len(), 2, "{:?}", read.events);
            assert!(read.events[0].starts_with("line 1 "));
            assert!(read.events[1].starts_with("line 4 "));
            assert_eq!(read.through, if pass { &doc[..] } else { b"" });
        }
    }

    /// Yields `data`, then fails.
    struct Failing(Cursor<Vec<u8>>);

    impl Read for Failing {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match self.0.read(buf)? {
                0 => Err(io::Error::other("disk on fire")),
                n => Ok(n),
            }
        }
    }

    #[test]
    fn a_read_error_mid_way_keeps_the_lines_before_it_and_fails_the_input() {
        let config = config(1 << 20);
        let reading = Reading::plain(&config);
        let mut log = Log::default();
        let input = Failing(Cursor::new(b"{\"a\":1}\n{\"b\"".to_vec()));
        let outcome = read_from(&reading, "mem", Box::new(input), ReadAs::Lines, &mut log).unwrap();
        assert_eq!(outcome, Outcome::Read);
        assert_eq!(
            log.events,
            [r#"line 1 ""|{"a":1}|"\\n""#, r#"line 2 ""|{"b"|"""#]
        );
        assert!(log.failed && log.ended);
    }

    #[test]
    fn a_file_reads_as_its_bytes_do_and_a_missing_one_fails() {
        let dir = std::env::temp_dir().join(format!("tokentime-driver-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("in.jsonl");
        std::fs::write(&path, LINES).unwrap();
        let config = config(16);
        let reading = Reading::plain(&config);
        let mut from_file = Log {
            pass: true,
            ..Log::default()
        };
        let bytes = Arc::new(AtomicU64::new(0));
        let counted = Reading {
            bytes: Some(&bytes),
            ..Reading::plain(&config)
        };
        let outcome = read(&counted, &Source::Path(path.clone()), &mut from_file).unwrap();
        assert_eq!(outcome, Outcome::Read);
        assert_eq!(bytes.load(Ordering::Relaxed), LINES.len() as u64);
        let from_memory = read_bytes(LINES, Documents::PassThrough, true);
        assert_eq!(from_file.events[0], format!("begin {}", path.display()));
        assert_eq!(from_file.events[1..], from_memory.events);
        assert_eq!(from_file.through, from_memory.through);

        let mut missing = Log::default();
        let gone = Source::Path(dir.join("missing.jsonl"));
        assert_eq!(
            read(&reading, &gone, &mut missing).unwrap(),
            Outcome::Unopened
        );
        assert!(missing.failed && !missing.ended);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Enrich over the driver: a file read line by line and the same file read in chunks by
    /// two threads give the same bytes and the same bad lines.
    #[test]
    fn chunked_reading_gives_what_one_thread_gives() {
        let mut input = Vec::new();
        for i in 0..40 {
            input.extend_from_slice(include_bytes!("../../testdata/formats/kong.jsonl"));
            input.extend_from_slice(include_bytes!("../../testdata/formats/ollama.jsonl"));
            input.extend_from_slice(include_bytes!("../../testdata/formats/sglang.jsonl"));
            if i % 10 == 0 {
                input.extend_from_slice(b"{\"broken\": \n");
            }
        }
        assert!(input.len() > 8 * 4096, "several chunks");
        let run = |threads: &str| {
            let config = crate::cli::config_from_args([
                "tokentime",
                "--threads",
                threads,
                "--chunk-bytes",
                "4K",
            ])
            .unwrap();
            let reading = Reading {
                chunked: Some(&config),
                ..Reading::plain(&config)
            };
            let mut worker = Worker::new(&config);
            let (mut out, mut bad) = (Vec::new(), Vec::new());
            let mut report =
                |line: u64, why: Option<&str>| bad.push((line, why.map(str::to_owned)));
            let mut sink = WorkerSink {
                worker: &mut worker,
                out: &mut out,
                report: &mut report,
                line_buffered: false,
                finish_each: false,
                failed: false,
                held: None,
            };
            let input = Box::new(Cursor::new(input.clone()));
            let how = if threads == "1" {
                ReadAs::Lines
            } else {
                ReadAs::Chunks
            };
            read_from(&reading, "mem", input, how, &mut sink).unwrap();
            assert!(!sink.failed);
            worker.finish();
            let cov = worker.coverage().cloned().unwrap_or_default();
            (out, bad, cov.lines, cov.invalid, cov.requests)
        };
        let one = run("1");
        let two = run("2");
        let lines = memchr::memchr_iter(b'\n', &input).count() as u64;
        assert_eq!(one.2, lines);
        assert_eq!(one.3, 4);
        assert!(one.4 > 0, "the lines are requests");
        assert_eq!(one.1.len(), 4);
        assert!(one.0.len() > input.len(), "enriched lines are longer");
        assert_eq!(one, two);
    }
}
