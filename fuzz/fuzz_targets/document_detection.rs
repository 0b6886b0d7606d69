//! Document detection: `sniff_document` (what the driver calls on every input) on arbitrary
//! bytes handed over in arbitrary read sizes, then the document readers on what it hands back.
//!
//! Input layout: `[config, data...]`: `config` picks the read size (1 byte to all at once),
//! the buffer's capacity and the read-ahead cap.
//!
//! Checked, with a reference written on serde_json alone (the whole input is one or more JSON
//! arrays, or one or more JSON objects, with only blanks and BOMs between and after them, and
//! `detect_document` on the whole input guessed that kind from its first bytes):
//! - Nothing lost: the reader `sniff_document` hands back reads exactly the input's bytes,
//!   whatever it decided and however the input trickled in.
//! - The decision: when the read-ahead cap is past the input's end, `sniff_document` says
//!   `Array` or `Object` exactly when the reference does, and `None` (lines) otherwise; the
//!   read size does not change it; and `detect_document` on the whole input made the same guess
//!   whenever `sniff_document` says document.
//! - Records: when it says `Array`, `for_each_element` on the reader yields, in order, exactly
//!   the raw text of the elements of the reference's arrays, and no error; when it says
//!   `Object`, `Objects` yields exactly the reference's objects' raw text (each on the line its
//!   `{` is on), nothing trailing.
//! - Past the cap (the guess stands on what was read), the readers only must not panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::value::RawValue;
use std::io::{self, BufReader, Read};
use tokentime::{Document, Item, Objects, detect_document, for_each_element, sniff_document};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Hands over at most `step` bytes per read, as a pipe may.
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = self.data.len().min(self.step).min(out.len());
        out[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// `b` without the JSON blanks (space, tab, CR, LF: no form feed) and BOMs it starts with.
fn skip_blanks(mut b: &[u8]) -> &[u8] {
    loop {
        let i = b
            .iter()
            .position(|c| !b" \t\r\n".contains(c))
            .unwrap_or(b.len());
        let t = &b[i..];
        match t.strip_prefix(BOM) {
            Some(rest) => b = rest,
            None => return t,
        }
    }
}

/// The reference: the kind of document `data` wholly is, with its records' raw text (an
/// array's elements, or the objects) and, for objects, the line each starts on.
/// A document's kind, its records (for objects, with the line each starts on), and whether
/// it is cut short.
type Reference = (Document, Vec<(u64, String)>, bool);

fn reference(data: &[u8]) -> Option<Reference> {
    let mut kind = None;
    let mut records = vec![];
    let mut rest = skip_blanks(data);
    while !rest.is_empty() {
        let line = 1 + memchr_count(&data[..data.len() - rest.len()]);
        let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<&RawValue>();
        let value = match values.next()? {
            Ok(v) => v,
            // Cut short inside a value of the kind: a document up to the cut.
            Err(e) if e.is_eof() => {
                let this = match rest[0] {
                    b'[' => Document::Array,
                    b'{' => Document::Object,
                    _ => return None,
                };
                return (*kind.get_or_insert(this) == this).then_some((this, records, true));
            }
            Err(_) => return None,
        };
        let this = match value.get().as_bytes().first() {
            Some(b'[') => Document::Array,
            Some(b'{') => Document::Object,
            _ => return None,
        };
        if *kind.get_or_insert(this) != this {
            return None;
        }
        match this {
            Document::Array => {
                let elements: Vec<&RawValue> = serde_json::from_str(value.get()).ok()?;
                records.extend(elements.iter().map(|e| (0, e.get().to_owned())));
            }
            Document::Object => records.push((line, value.get().to_owned())),
        }
        rest = skip_blanks(&rest[values.byte_offset()..]);
    }
    kind.map(|k| (k, records, false))
}

fn memchr_count(b: &[u8]) -> u64 {
    b.iter().filter(|&&c| c == b'\n').count() as u64
}

/// Sniffs `data` read `step` bytes at a time into a buffer of `capacity`: the decision and
/// everything the reader hands back.
fn sniffed(data: &[u8], step: usize, capacity: usize, cap: usize) -> (Option<Document>, Vec<u8>) {
    let r = BufReader::with_capacity(capacity, Trickle { data, step });
    let (kind, mut replay) = sniff_document(r, cap).expect("no read error");
    let mut all = vec![];
    replay.read_to_end(&mut all).expect("no read error");
    (kind, all)
}

/// The records the document readers yield for `kind` (element raw text, or `(line, object)`),
/// and whether they reported anything wrong.
fn records(data: &[u8], kind: Document, step: usize) -> (Vec<(u64, String)>, bool) {
    let (_, mut replay) = sniff_document(
        BufReader::with_capacity(64, Trickle { data, step }),
        usize::MAX,
    )
    .expect("no read error");
    let mut got = vec![];
    match kind {
        Document::Array => {
            let res = for_each_element(&mut replay, &mut |b| {
                got.push((
                    0,
                    String::from_utf8(b.to_vec()).expect("JSON text is UTF-8"),
                ));
                Ok(())
            });
            (got, res.is_err())
        }
        Document::Object => {
            let mut objects = Objects::new(replay, usize::MAX);
            let mut bad = false;
            while let Some(item) = objects.next_item().expect("no read error") {
                match item {
                    Item::Object { line, bytes } => {
                        got.push((line, String::from_utf8_lossy(bytes).into_owned()));
                    }
                    Item::TooLong { .. } | Item::Trailing { .. } | Item::CutShort { .. } => {
                        bad = true;
                    }
                }
            }
            (got, bad)
        }
    }
}

fuzz_target!(|input: &[u8]| {
    let Some((&config, data)) = input.split_first() else {
        return;
    };
    let step = [1, 2, 3, 7, 64, 4096, usize::MAX, usize::MAX][usize::from(config & 7)];
    let capacity = [1, 8, 64, 64 * 1024][usize::from((config >> 3) & 3)];
    let cap = [usize::MAX, usize::MAX, 16, 64][usize::from((config >> 5) & 3)];

    let (kind, all) = sniffed(data, step, capacity, cap);
    assert_eq!(all, data, "the bytes read back");
    let whole_guess = detect_document(&mut &data[..]).expect("no read error");
    if kind.is_some() {
        assert_eq!(kind, whole_guess, "sniff and detect disagree");
    }
    if cap < data.len() {
        // The guess stands on the first `cap` bytes: the readers only must not panic.
        if let Some(kind) = kind {
            let _ = records(data, kind, step);
        }
        return;
    }
    // `detect_document` tells from the first bytes (one BOM, JSON blanks, the lone `{` rule);
    // the rest must parse.
    let want = reference(data).filter(|w| Some(w.0) == whole_guess);
    assert_eq!(kind, want.as_ref().map(|w| w.0), "the decision");
    let (kind_whole, _) = sniffed(data, usize::MAX, 64 * 1024, usize::MAX);
    assert_eq!(kind, kind_whole, "the decision depends on the read size");
    if let Some((kind, _, true)) = want {
        // Cut short: the reader reports it, and must not panic.
        let (_, bad) = records(data, kind, step);
        assert!(
            bad,
            "the {kind:?} reader did not report a document cut short"
        );
        return;
    }
    if let (Some(kind), Some((_, want, _))) = (kind, want) {
        let (got, bad) = records(data, kind, step);
        assert!(
            !bad,
            "the {kind:?} reader reported an error on a valid document"
        );
        assert_eq!(got, want, "the records");
    }
});
