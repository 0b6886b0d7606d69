//! Documents: inputs that are one JSON array of records rather than JSON lines (LLMPerf's
//! pretty-printed `individual_responses.json`), read element by element so that only one
//! record is in memory at a time.
//!
//! Owns the detection (the first non-blank byte is `[`) and the streaming walk. The records'
//! bytes are handed to a callback, which processes each as if it were a line.

use serde::de::{self, DeserializeSeed, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::fmt;
use std::io::{self, BufRead, Read};

/// True when the input's first non-blank byte (after a UTF-8 BOM) is `[`: a JSON array
/// document. Peeks at the buffered bytes only; consumes nothing.
///
/// # Errors
/// The reader's.
pub fn is_array_document(r: &mut impl BufRead) -> io::Result<bool> {
    let buf = r.fill_buf()?;
    let buf = buf.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(buf);
    Ok(buf.iter().find(|b| !b" \t\r\n".contains(b)) == Some(&b'['))
}

/// Calls `each` with the JSON text of every element of every top-level array in `r` (several
/// arrays one after another are accepted). Elements are read one at a time.
///
/// # Errors
/// A message with serde_json's position when the document is malformed, or the callback's
/// error.
pub fn for_each_element(
    r: impl Read,
    each: &mut dyn FnMut(&[u8]) -> io::Result<()>,
) -> Result<(), String> {
    let mut de = serde_json::Deserializer::from_reader(r);
    loop {
        let mut failed = None;
        let mut started = false;
        match (ArraySeed {
            each: &mut *each,
            failed: &mut failed,
            started: &mut started,
        })
        .deserialize(&mut de)
        {
            Ok(()) => {}
            // End of input between documents is the end; inside one, a truncation.
            Err(e) if e.is_eof() && !started => return Ok(()),
            Err(e) => {
                return Err(failed
                    .map(|f: io::Error| f.to_string())
                    .unwrap_or_else(|| e.to_string()));
            }
        }
    }
}

struct ArraySeed<'a> {
    each: &'a mut dyn FnMut(&[u8]) -> io::Result<()>,
    failed: &'a mut Option<io::Error>,
    started: &'a mut bool,
}

impl<'de> DeserializeSeed<'de> for ArraySeed<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ArraySeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON array of records")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        *self.started = true;
        while let Some(raw) = seq.next_element::<Box<RawValue>>()? {
            if let Err(e) = (self.each)(raw.get().as_bytes()) {
                *self.failed = Some(e);
                return Err(de::Error::custom("stopped"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pretty_printed_arrays_are_read_element_by_element() {
        let doc = b"[\n  {\"a\": 1},\n  {\"a\": [2, 3]}\n]\n[{\"b\":4}]\n";
        assert!(is_array_document(&mut &doc[..]).unwrap());
        let mut got = vec![];
        for_each_element(&doc[..], &mut |b| {
            got.push(String::from_utf8(b.to_vec()).unwrap());
            Ok(())
        })
        .unwrap();
        assert_eq!(got, vec!["{\"a\": 1}", "{\"a\": [2, 3]}", "{\"b\":4}"]);
        assert!(!is_array_document(&mut &b"  {\"a\":1}"[..]).unwrap());
        assert!(for_each_element(&b"[{\"a\":1},"[..], &mut |_| Ok(())).is_err());
    }
}
