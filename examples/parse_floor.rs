//! The floor under `tokentime summary`'s time: reading a file and checking every line as JSON
//! while picking out the fields the built-in formats read (`PathSet::extract`, the same fast
//! scanner and the same paths as `--format auto`), on one thread, and nothing else: no format
//! detection, no metrics, no summary. `benches/throughput.sh` runs it beside `wc -l` so that
//! the ratio a summary can reach on one thread is bounded by a number measured in the same run.
//!
//!     cargo run --release --example parse_floor -- FILE
//!
//! Prints the number of lines and of JSON objects among them.

use std::io::Read;
use tokentime::{Formats, builtins};
use tokentime::{PathSet, Slots};

fn main() -> std::io::Result<()> {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: parse_floor FILE");
        std::process::exit(2);
    };
    // The line paths of `--format auto` as `Processor::new` sets them up: the enrich key, the
    // Docker wrapper's `log` and `stream`, then the built-in formats'.
    let mut paths = PathSet::default();
    for p in ["tokentime", "log", "stream"] {
        paths.add(&[p]);
    }
    let _ = Formats::compile(builtins(), &[], &mut paths);
    let mut slots = Slots::default();
    // Opened as tokentime opens a FILE (its pages asked for ahead of the read).
    let mut file = tokentime::open_file(std::path::Path::new(&path))?;
    // Reads of 1 MiB into a buffer that keeps the partial last line for the next read.
    let mut buf = vec![0u8; 1 << 20];
    let (mut filled, mut lines, mut objects) = (0usize, 0u64, 0u64);
    loop {
        if filled == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let n = file.read(&mut buf[filled..])?;
        let end = filled + n;
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', &buf[..end]) {
            lines += 1;
            objects += u64::from(paths.extract(&buf[start..nl], &mut slots).is_ok());
            start = nl + 1;
        }
        if n == 0 {
            // The end of the file: a last line without a newline.
            if start < end {
                lines += 1;
                objects += u64::from(paths.extract(&buf[start..end], &mut slots).is_ok());
            }
            break;
        }
        buf.copy_within(start..end, 0);
        filled = end - start;
    }
    println!("{lines} lines, {objects} JSON objects");
    Ok(())
}
