//! The sample the `inferred` format is learned from, and where it is decided.
//!
//! Before any line is counted, the calling thread reads the first lines (records, in a JSON
//! document) of the inputs, up to [`SAMPLE_LINES`] or [`SAMPLE_BYTES`], through the same
//! driver as the run. Under `--format auto` it stops at the first line a format in use claims
//! (then nothing is inferred), and reads standard input when it is a regular file (it is read
//! again from where it was) and, from a pipe, what the pipe holds at its start; under `--format
//! inferred` it reads every input it needs. A pipe's sample is kept and read again by the run.
//! The run then compiles the inferred [`FormatSpec`](crate::format::FormatSpec) like any other
//! format, whatever the thread count: the mapping is the same on one thread and several.

use crate::app::driver::{self, Documents, Reading, Sink};
use crate::classify::{Kind, Processor};
use crate::cli::config::{Config, Infer};
use crate::format::infer::{Inference, SAMPLE_BYTES, SAMPLE_LINES, infer, summary, to_toml};
use crate::input::source::Source;
use serde_json::Value;
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Reads `inner` to its first error, which ends it quietly (a truncated compressed sample).
struct UntilError<R>(R);

impl<R: Read> Read for UntilError<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Ok(self.0.read(buf).unwrap_or(0))
    }
}

/// Gathers the sample: each record no format in use claims, as a JSON value.
struct SampleSink<'a> {
    /// The formats in use, to tell claimed lines (auto only).
    claims: Option<Processor>,
    root: &'a [String],
    /// The member enrich splices into a line (`--key`): its metrics are tokentime's, not the
    /// log's, and a line read again after enrich is mapped from the log's own fields.
    key: &'a str,
    values: Vec<Value>,
    /// The objects the sample's records hold in lists, as the document walk tries them
    /// ([`listed`]): by how many lists deep they sit (first, the elements of the outermost
    /// lists). Gathered only without `--root`, which names the lists itself.
    listed: Vec<Vec<Value>>,
    lines: usize,
    bytes: usize,
    claimed: bool,
    /// Lines a format claimed with no duration at all.
    untimed: usize,
    /// Of those, the lines a fallback format claimed as answered requests (an OpenAI `usage`
    /// object in a gateway's own log), not failures.
    untimed_answers: usize,
    stop: &'a AtomicBool,
    /// The input being read, and the first line read that starts like a JSON object with the
    /// name of its input (to say where `--root` stops when it finds nothing).
    name: String,
    first: Option<(String, Vec<u8>)>,
}

/// A request with no duration: no TTFT, E2E, queue, prefill or decode, and none null for what
/// its format read of them (negative, out of order, no plausible time, not readable: the
/// timing is the format's, its values are wrong, and no other reading would mend them).
fn untimed(r: &crate::classify::Request) -> bool {
    use crate::metrics::NullReason;
    let m = &r.metrics;
    let read = |v: &Result<f64, NullReason>| {
        matches!(
            v,
            Ok(_)
                | Err(NullReason::NegativeInterval
                    | NullReason::OutOfOrder
                    | NullReason::ImplausibleInstant
                    | NullReason::Unparseable)
        )
    };
    ![m.ttft, m.e2e, m.queue, m.prefill, m.decode]
        .iter()
        .any(read)
}

impl SampleSink<'_> {
    fn full(&self) -> bool {
        self.claimed || self.lines >= SAMPLE_LINES || self.bytes >= SAMPLE_BYTES
    }
}

impl Sink for SampleSink<'_> {
    fn line(&mut self, _: u64, _: &[u8], content: &[u8], _: &[u8]) -> io::Result<()> {
        if self.full() {
            self.stop.store(true, Ordering::Relaxed);
            return Err(io::Error::other("sample complete"));
        }
        self.lines += 1;
        self.bytes += content.len();
        if self.first.is_none() && crate::app::unmapped::first_object_line(content).is_some() {
            self.first = Some((self.name.clone(), content.to_vec()));
        }
        if let Some(p) = &mut self.claims {
            match p.process(content) {
                // A line a format sets aside (a warm-up record) is that format's: known.
                Kind::NoTiming if p.line_skipped() => {
                    self.claimed = true;
                    return Ok(());
                }
                Kind::NoTiming => {}
                Kind::NonJson | Kind::Invalid(_) | Kind::AlreadyEnriched => return Ok(()),
                // A line a format claims without one duration (a fallback that reads only an
                // OpenAI `usage` object from a line that also logs its timing under names of
                // its own): still in the sample, so the inferred reader can go first.
                Kind::Requests if p.requests().iter().all(untimed) => {
                    self.untimed += 1;
                    let answer = |r: &crate::classify::Request| {
                        p.format_spec(r.format).fallback
                            && r.metrics.outcome == crate::metrics::Outcome::Ok
                    };
                    self.untimed_answers += usize::from(p.requests().iter().all(answer));
                }
                Kind::Requests | Kind::Part | Kind::Deferred => {
                    self.claimed = true;
                    return Ok(());
                }
            }
        }
        // tokentime's own documents (a digest file, a summary's JSON) are no log to learn.
        if crate::classify::own_schema(content).is_some() {
            return Ok(());
        }
        for mut v in body(content, self.root) {
            if self.root.is_empty() {
                if let Value::Object(m) = &mut v {
                    m.remove(self.key);
                }
                listed(&v, 0, 0, &mut self.listed);
            }
            self.values.push(v);
        }
        Ok(())
    }
}

/// Gathers into `out[depth]` the objects that are elements of lists inside `v` (a value at
/// `level`, inside `depth` lists), at most [`SAMPLE_LINES`] a depth, at the levels the document
/// walk tries them ([`crate::classify::walk`]): a log whose lines hold their requests in a
/// list (`{"records":[...]}`, `{"export":{"requests":[...]}}`).
fn listed(v: &Value, level: usize, depth: usize, out: &mut Vec<Vec<Value>>) {
    if level >= crate::classify::walk::MAX_LEVEL {
        return;
    }
    match v {
        Value::Object(members) => {
            for child in members.values() {
                listed(child, level + 1, depth, out);
            }
        }
        Value::Array(items) => {
            for item in items {
                if item.is_object() {
                    if out.len() <= depth {
                        out.resize_with(depth + 1, Vec::new);
                    }
                    if out[depth].len() < SAMPLE_LINES {
                        out[depth].push(item.clone());
                    }
                }
                listed(item, level + 1, depth + 1, out);
            }
        }
        _ => {}
    }
}

/// The JSON objects of a line as inference reads them: from its first `{` (after a CRI or
/// syslog prefix), the `log` of a Docker json-file record, then the record at `--root` (every
/// object its `[*]` segments find).
fn body(content: &[u8], root: &[String]) -> Vec<Value> {
    let Some(start) = content.iter().position(|&b| b == b'{') else {
        return Vec::new();
    };
    let mut bytes = content[start..].to_vec();
    let mut v: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(_) => {
            crate::json::neutralize_non_finite(&mut bytes);
            match serde_json::from_slice(&bytes) {
                Ok(v) => v,
                Err(_) => return Vec::new(),
            }
        }
    };
    if let (Some(Value::String(log)), Some(_)) = (v.get("log"), v.get("stream"))
        && log.trim_start().starts_with('{')
    {
        match serde_json::from_str(log.trim()) {
            Ok(inner) => v = inner,
            Err(_) => return Vec::new(),
        }
    }
    let mut found = Vec::new();
    at_root(v, root, &mut found);
    found
}

/// Moves into `found` the objects at `root` below `v`: members by key, every element (or
/// member) at a `*` or `[*]` segment, an element by index at `[0]` or `[-1]`.
fn at_root(v: Value, root: &[String], found: &mut Vec<Value>) {
    let Some((seg, rest)) = root.split_first() else {
        if v.is_object() {
            found.push(v);
        }
        return;
    };
    match v {
        Value::Array(items) if seg == "*" || seg == "[*]" => {
            for item in items {
                at_root(item, rest, found);
            }
        }
        Value::Object(members) if seg == "*" || seg == "[*]" => {
            for (_, item) in members {
                at_root(item, rest, found);
            }
        }
        v => {
            if let Some(next) = crate::classify::records::member(&v, std::slice::from_ref(seg)) {
                at_root(next.clone(), rest, found);
            }
        }
    }
}

/// The sample of the inputs.
struct Sample {
    /// Each record no format in use claims.
    values: Vec<Value>,
    /// The objects they hold in lists, by depth ([`listed`]).
    listed: Vec<Vec<Value>>,
    /// Whether a format in use claimed a line with a duration (auto: then the sample stops
    /// there).
    claimed: bool,
    /// How many lines a format claimed without a duration.
    untimed: usize,
    /// Of those, how many a fallback claimed as answered requests.
    untimed_answers: usize,
    /// The first line read that starts like a JSON object, with its input's name.
    first: Option<(String, Vec<u8>)>,
}

impl Sample {
    /// The inference from the records, else from the objects they hold in lists, the outermost
    /// first: the first that `good` takes, else the records'. The flag says whether it is the
    /// lists' (a log whose lines hold their requests in a list, read by the document walk).
    fn infer(&self, good: impl Fn(&Inference) -> bool) -> (Inference, bool) {
        let own = infer(&self.values);
        if good(&own) {
            return (own, false);
        }
        for objects in &self.listed {
            let inf = infer(objects);
            if good(&inf) {
                return (inf, true);
            }
        }
        (own, false)
    }
}

/// Reads the sample of `config`'s inputs.
fn sample(config: &Config, auto: bool) -> Sample {
    let stop = AtomicBool::new(false);
    let claims = auto.then(|| {
        let mut p = Processor::new(
            config.formats.clone(),
            &config.root,
            None,
            &[],
            config.cache_hit_ratio,
        );
        p.set_prefix(config.prefix.clone());
        p
    });
    let mut sink = SampleSink {
        claims,
        root: &config.root,
        key: match &config.command {
            crate::cli::config::Command::Enrich(e) => &e.key,
            _ => crate::cli::config::DEFAULT_KEY,
        },
        values: Vec::new(),
        listed: Vec::new(),
        lines: 0,
        bytes: 0,
        claimed: false,
        untimed: 0,
        untimed_answers: 0,
        stop: &stop,
        name: String::new(),
        first: None,
    };
    let reading = Reading {
        documents: Documents::Records,
        stop: Some(&stop),
        ..Reading::plain(config)
    };
    let pipe_head = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    for source in &config.inputs {
        if sink.full() {
            break;
        }
        let name = source.name();
        let reader: Box<dyn Read + Send> = match source {
            Source::Path(p) if crate::input::source::is_regular(p) => match source.open(None) {
                Ok(r) => r,
                // The run reports it.
                Err(_) => continue,
            },
            // A named pipe or `<(cmd)`: read once, like a pipe on standard input.
            Source::Path(_) if auto => continue,
            Source::Path(p) => match path_pipe_sample(p) {
                Some(r) => r,
                None => continue,
            },
            Source::Stdin if config.stdin_is_file => match stdin_file_sample() {
                Some(r) => r,
                None => continue,
            },
            #[cfg(target_os = "linux")]
            Source::Stdin if auto => {
                let reader = PipeHead {
                    kept: pipe_head.clone(),
                };
                match crate::input::source::decompress(io::BufReader::new(reader)) {
                    Ok(r) => r,
                    Err(_) => break,
                }
            }
            Source::Stdin if auto => break,
            Source::Stdin => match stdin_pipe_sample() {
                Some(r) => r,
                None => continue,
            },
        };
        sink.name.clone_from(&name);
        let _ = driver::read_from(
            &reading,
            &name,
            Box::new(UntilError(reader)),
            driver::ReadAs::Lines,
            &mut sink,
        );
    }
    if let Ok(mut kept) = pipe_head.lock()
        && !kept.is_empty()
    {
        crate::input::source::replay_on_stdin(std::mem::take(&mut kept));
    }
    Sample {
        values: sink.values,
        listed: sink.listed,
        claimed: sink.claimed,
        untimed: sink.untimed,
        untimed_answers: sink.untimed_answers,
        first: sink.first,
    }
}

/// Standard input that is a regular file: its first [`SAMPLE_BYTES`] (and some: a compressed
/// file's), read through a second descriptor, the offset put back for the run.
fn stdin_file_sample() -> Option<Box<dyn Read + Send>> {
    #[cfg(unix)]
    {
        use std::io::{Seek, SeekFrom};
        use std::os::fd::AsFd;
        let mut file = std::fs::File::from(io::stdin().as_fd().try_clone_to_owned().ok()?);
        let at = file.stream_position().ok()?;
        let mut raw = Vec::new();
        let _ = (&mut file)
            .take(4 * SAMPLE_BYTES as u64)
            .read_to_end(&mut raw);
        file.seek(SeekFrom::Start(at)).ok()?;
        crate::input::source::decompress(io::BufReader::new(io::Cursor::new(raw))).ok()
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Standard input from a pipe (`--format inferred` only): read up to [`SAMPLE_LINES`] lines,
/// [`SAMPLE_BYTES`] or its end, kept for the run to read again.
fn stdin_pipe_sample() -> Option<Box<dyn Read + Send>> {
    let raw = pipe_sample(&mut crate::input::source::Stdin::default(), 0);
    crate::input::source::replay_on_stdin(raw.clone());
    crate::input::source::decompress(io::BufReader::new(io::Cursor::new(raw))).ok()
}

/// How long a read of the sample of a pipe under `--format auto` waits for bytes
/// ([`PipeHead`]).
#[cfg(target_os = "linux")]
const HEAD_WAIT_MS: i32 = 100;

/// Standard input from a pipe under `--format auto`, read for the sample: each read waits at
/// most [`HEAD_WAIT_MS`] for bytes (then it is the sample's end: a `tail -F` that has written
/// its last lines is not waited for), and every byte read is kept in `kept` for the run to read
/// again. The sample stops where it would on a file (the first line a format reads a duration
/// from, [`SAMPLE_LINES`], [`SAMPLE_BYTES`]), so `cat FILE | tokentime` reads FILE as `tokentime
/// FILE` does.
#[cfg(target_os = "linux")]
struct PipeHead {
    kept: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
}

/// The most a [`PipeHead`] keeps: past it the sample ends, so that a line longer than
/// `--max-line-bytes` at the head of a pipe is not held whole to be read again (the run skips
/// it piece by piece, as it would from a file).
#[cfg(target_os = "linux")]
const HEAD_MAX_BYTES: usize = 4 * SAMPLE_BYTES;

#[cfg(target_os = "linux")]
impl Read for PipeHead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let room = self
            .kept
            .lock()
            .map_or(0, |k| HEAD_MAX_BYTES.saturating_sub(k.len()));
        if room == 0 {
            return Ok(0);
        }
        let len = room.min(buf.len());
        let buf = &mut buf[..len];
        loop {
            let mut fd = libc::pollfd {
                fd: 0,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: `fd` is one valid pollfd that lives across the call, and its count is 1.
            if unsafe { libc::poll(&raw mut fd, 1, HEAD_WAIT_MS) } <= 0 {
                return Ok(0);
            }
            match io::stdin().read(buf) {
                Ok(n) => {
                    if let Ok(mut kept) = self.kept.lock() {
                        kept.extend_from_slice(&buf[..n]);
                    }
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// A FILE argument that is a pipe (`--format inferred` only): its sample, read as from
/// standard input, kept with the open descriptor for the run to read again.
fn path_pipe_sample(path: &std::path::Path) -> Option<Box<dyn Read + Send>> {
    let mut file = std::fs::File::open(path).ok()?;
    let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
    let raw = pipe_sample(&mut file, fd);
    crate::input::source::hold(path.to_path_buf(), raw.clone(), file);
    crate::input::source::decompress(io::BufReader::new(io::Cursor::new(raw))).ok()
}

/// How long the sample of a pipe under `--format inferred` waits for more bytes once it has a
/// line ([`pipe_sample`]).
const TRICKLE_WAIT_MS: i32 = 500;

/// Up to [`SAMPLE_LINES`] lines, [`SAMPLE_BYTES`] or the end of `r` (a pipe, descriptor
/// `fd`): once a whole line is in, a pipe that stays silent for [`TRICKLE_WAIT_MS`] ends the
/// sample, so that the lines of a live `tail -F` that writes a few are read (and, on Ctrl-C,
/// reported) rather than held until the sample is full.
fn pipe_sample(r: &mut impl Read, fd: i32) -> Vec<u8> {
    let mut raw = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    while raw.len() < SAMPLE_BYTES && memchr::memchr_iter(b'\n', &raw).count() < SAMPLE_LINES {
        #[cfg(target_os = "linux")]
        if memchr::memchr(b'\n', &raw).is_some() {
            let mut p = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: `p` is one valid pollfd that lives across the call, and its count is 1.
            if unsafe { libc::poll(&raw mut p, 1, TRICKLE_WAIT_MS) } == 0 {
                break;
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = fd;
        match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
        }
    }
    raw
}

/// The configuration the run uses: under `--format inferred`, the inferred format alone;
/// under auto, the formats in use plus the inferred one (a fallback, tried after every other)
/// when no format in use claimed a line of the sample and the inferred one is fit for it
/// ([`Inference::fit_for_auto`]: a TTFT and an E2E that agree). What was inferred is said once
/// on stderr, after `about` (`a.jsonl: `, naming a side of `diff`; empty for one run).
pub(crate) fn prepare(config: &Config, about: &str) -> Config {
    let mut out = config.clone();
    out.infer = Infer::Off;
    match config.infer {
        Infer::Off => {}
        Infer::Auto => {
            let sample = sample(config, true);
            if sample.claimed || sample.values.is_empty() {
                return out;
            }
            // Lines a fallback claimed as answered requests without a duration (half the
            // sample at least, and no failure among them) are requests already: an E2E from
            // their arrival and end instants is enough.
            let answers = sample.untimed_answers;
            let fit =
                if answers > 0 && answers == sample.untimed && answers * 2 >= sample.values.len() {
                    Inference::fit_beside_fallback
                } else {
                    Inference::fit_for_auto
                };
            let (inf, in_lists) = sample.infer(fit);
            if let Some(mut spec) = inf.spec.clone().filter(|_| fit(&inf)) {
                if in_lists {
                    crate::diag!(
                        "tokentime: {about}no format recognised {}: read the {} objects in their \
                         lists with the format `inferred` (tokentime formats --guess FILE writes it \
                         as a formats file to edit)",
                        first_objects(sample.values.len()),
                        inf.lines
                    );
                    // Tried before the fallbacks, which may claim the objects without their
                    // timing (an OpenAI `usage` object in each).
                    spec.fallback = false;
                } else if sample.untimed > 0 {
                    crate::diag!(
                        "tokentime: {about}the formats that recognised the first {} JSON objects read no \
                         duration from them, which log their timing under names of their own: read \
                         with the format `inferred` first (tokentime formats --guess FILE writes it \
                         as a formats file to edit)",
                        inf.lines
                    );
                    // Tried before the fallbacks that claimed the lines without their timing.
                    spec.fallback = false;
                } else {
                    crate::diag!(
                        "tokentime: {about}no format recognised any of the first {} JSON objects: read \
                         with the format `inferred` (tokentime formats --guess FILE writes it as a \
                         formats file to edit)",
                        inf.lines
                    );
                }
                say(&inf, about);
                out.formats.push(spec);
            } else {
                // Why the durations a reader needs were not read: a unit two checks allow.
                let why: Vec<String> = inf
                    .unmapped
                    .iter()
                    .filter(|(_, what, _)| ["ttft", "e2e"].contains(what))
                    .map(|(path, what, why)| format!("{what} as {path} ({why})"))
                    .collect();
                // A benchmark's aggregates (a `duration` of the whole run, no request): the
                // end of the input says what it is, not which timing was not read.
                let aggregates = sample.values.first().is_some_and(|v| {
                    crate::app::aggregates::of(&serde_json::to_vec(v).unwrap_or_default()).is_some()
                });
                if !aggregates && !why.is_empty() {
                    crate::diag!(
                        "tokentime: {about}no format recognised any of the first {} JSON objects, and \
                         the format `inferred` could not read their timing: {}",
                        inf.lines,
                        why.join("; ")
                    );
                } else if !aggregates && inf.spec.is_some() && inf.ttft_e2e.0 == 1 {
                    // One line short of a check of the TTFT against the E2E: a one-line
                    // sample (a pipe's first read, a file of one request).
                    crate::diag!(
                        "tokentime: {about}no format recognised {}, and the format `inferred` is used \
                         unasked only when two sample lines or more have both a TTFT and an E2E \
                         to check ({} here): --format inferred reads with it anyway",
                        first_objects(inf.lines),
                        inf.ttft_e2e.0
                    );
                }
            }
        }
        Infer::Forced => {
            let (inf, _) = sample(config, false).infer(|inf| inf.spec.is_some());
            say(&inf, about);
            out.formats = inf.spec.into_iter().collect();
        }
    }
    out
}

/// `the first JSON object`, `any of the first 3 JSON objects`.
fn first_objects(n: usize) -> String {
    match n {
        1 => "the first JSON object".to_owned(),
        n => format!("any of the first {n} JSON objects"),
    }
}

/// Says what was inferred on stderr (of the input `about` names, when it is not empty: `a.jsonl: `).
fn say(inf: &Inference, about: &str) {
    for line in summary(inf) {
        crate::diag!("tokentime: {about}inferred: {line}");
    }
}

/// `tokentime formats --guess FILE`: the inferred mapping of the input as a formats-file entry.
///
/// # Errors
/// The output's.
pub(crate) fn guess(config: &Config, w: &mut impl Write) -> io::Result<()> {
    let sample = sample(config, false);
    let (inf, _) = sample.infer(|inf| inf.spec.is_some());
    w.write_all(to_toml(&inf).as_bytes())?;
    if sample.values.is_empty()
        && !config.root.is_empty()
        && let Some((name, line)) = &sample.first
        && let Some(msg) = crate::app::unmapped::root_message(&config.root, line)
    {
        writeln!(w, "# {name}: no record to sample: {msg}")?;
    }
    // A built-in format that reads the records under one member needs no mapping.
    if config.root.is_empty()
        && inf.spec.is_none()
        && let Some((name, line)) = &sample.first
        && let Some(hint) = crate::app::unmapped::root_hint(&crate::format::builtins(), line)
    {
        writeln!(w, "# {name}: {hint}")?;
    }
    Ok(())
}
