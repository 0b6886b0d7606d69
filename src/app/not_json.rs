//! An input none of whose lines is JSON (a binary file, UTF-16 text, a plain-text log named
//! by mistake) is named as such on stderr at its end: `tokentime: FILE: not JSON lines (binary
//! data)`. What it looks like is told from its first bytes; that no line was JSON, from its
//! counters.

/// What an input's first bytes look like.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Looks {
    /// UTF-8 text with no `{` (or nothing yet).
    #[default]
    Text,
    /// UTF-8 text with a `{`: JSON after a prefix, or cut short, is not named (the hints of a
    /// run with no request, and the bad lines' diagnostics, say more).
    Braces,
    /// UTF-16 text: a byte-order mark, or every other byte NUL (PowerShell's `>` writes it).
    Utf16,
    /// Bytes that are not UTF-8, and no NUL.
    NotUtf8,
    /// NUL bytes: binary data.
    Binary,
    /// Nothing but blanks (spaces, tabs, line ends) in the head: an empty log with its line
    /// ends, not text.
    Blank,
    /// JSON values that are not objects (`[1,2]`, `42`, `"text"`): the first line that is not
    /// blank is one.
    JsonNotObject,
    /// llama.cpp's `llama-server` text log (its start-up or its slots' lines), whose timings
    /// are text: the formats that read llama.cpp are named.
    LlamaServerText,
}

/// Words only `llama-server`'s text log writes: at start-up (the model loader, the listening
/// line) or for each request (a slot taking a task, printing its timings, the request line).
const LLAMA_SERVER: [&[u8]; 5] = [
    b"llama_model_loader: ",
    b"main: HTTP server is listening",
    b"slot launch_slot_: ",
    b"slot print_timing: ",
    b"srv  log_server_r: ",
];

/// Bytes of the head looked at.
const HEAD: usize = 8192;

/// What `head` (the first bytes of an input, after decompression) looks like.
pub(crate) fn looks(head: &[u8]) -> Looks {
    let head = &head[..head.len().min(HEAD)];
    if head.starts_with(&[0xff, 0xfe]) || head.starts_with(&[0xfe, 0xff]) {
        return Looks::Utf16;
    }
    if head.contains(&0) {
        // Every other byte NUL and the bytes between them text: ASCII in UTF-16, little- or
        // big-endian (a binary file's runs of NULs have no text between them).
        let pairs = head.len() / 2;
        let count_at = |odd: usize, test: fn(&u8) -> bool| {
            head.iter().skip(odd).step_by(2).filter(|b| test(b)).count()
        };
        let text = |b: &u8| b.is_ascii_graphic() || matches!(b, b' ' | b'\t' | b'\r' | b'\n');
        let nul = |b: &u8| *b == 0;
        let utf16 = [(0, 1), (1, 0)].into_iter().any(|(nuls, chars)| {
            count_at(nuls, nul) * 10 >= pairs * 9 && count_at(chars, text) * 10 >= pairs * 9
        });
        return if pairs >= 2 && utf16 {
            Looks::Utf16
        } else {
            Looks::Binary
        };
    }
    match std::str::from_utf8(head) {
        // A character cut by the end of the head is no sign.
        Err(e) if e.error_len().is_some() => Looks::NotUtf8,
        _ if LLAMA_SERVER
            .iter()
            .any(|w| memchr::memmem::find(head, w).is_some()) =>
        {
            Looks::LlamaServerText
        }
        _ if head.contains(&b'{') => Looks::Braces,
        _ if !head.is_empty() && head.iter().all(u8::is_ascii_whitespace) => Looks::Blank,
        _ if head
            .split(|&b| b == b'\n')
            .find(|l| !l.iter().all(u8::is_ascii_whitespace))
            .is_some_and(|l| serde_json::from_slice::<serde::de::IgnoredAny>(l).is_ok()) =>
        {
            Looks::JsonNotObject
        }
        _ => Looks::Text,
    }
}

/// Whether an input that looks like `looks` and whose `lines` lines were `non_json` not JSON
/// objects and `bad` not JSON objects, invalid or too long, is named: plain text when every
/// line was text, anything else when no line was a JSON object.
pub(crate) fn named(looks: Looks, lines: u64, non_json: u64, bad: u64) -> bool {
    lines > 0
        && match looks {
            Looks::Text | Looks::Blank | Looks::LlamaServerText | Looks::JsonNotObject => {
                non_json == lines
            }
            Looks::Braces => false,
            Looks::Utf16 | Looks::NotUtf8 | Looks::Binary => bad == lines,
        }
}

/// Whether the bad lines of an input that looks like `looks` are held till its end, when it
/// is named as a whole if none of its lines was read ([`named`]): UTF-16 text and binary data,
/// whose lines' messages (a NUL at byte 1) say nothing the one message does not. Not text
/// that is not UTF-8: there each line's message says where its bad byte is.
pub(crate) fn names_bad_lines(looks: Looks) -> bool {
    matches!(looks, Looks::Utf16 | Looks::Binary)
}

/// The message for input `name` whose `lines` lines were none of them JSON (after
/// `tokentime: `).
pub(crate) fn message(name: &str, looks: Looks, lines: u64) -> String {
    let name = crate::input::shown_name(name);
    let what = match looks {
        Looks::Binary => "(binary data)".to_owned(),
        Looks::Utf16 => {
            "(UTF-16 text: convert it to UTF-8, e.g. iconv -f UTF-16 -t UTF-8)".to_owned()
        }
        Looks::NotUtf8 => "(text not in UTF-8, or binary data)".to_owned(),
        Looks::LlamaServerText => format!(
            "(llama-server's text log: none of its {lines} lines is JSON, and its timings have \
             no request id or wall-clock time): tokentime reads llama-server's responses, whose \
             `timings` object a client or a gateway logs (format llamacpp), and the JSON log of \
             older builds (--log-format json, format llamacpp-log)"
        ),
        Looks::Blank => format!(
            "(blank lines): none of its {lines} line{} is JSON",
            if lines == 1 { "" } else { "s" }
        ),
        Looks::JsonNotObject => {
            return format!(
                "{name}: JSON values, but none an object: none of its {lines} line{} is a JSON \
                 object; tokentime reads one object a line (a request's record), or a JSON \
                 document of them",
                if lines == 1 { "" } else { "s" }
            );
        }
        Looks::Text | Looks::Braces => format!(
            "(plain text): none of its {lines} line{} is JSON",
            if lines == 1 { "" } else { "s" }
        ),
    };
    format!("{name}: not JSON lines {what}")
}

#[cfg(test)]
mod tests {
    use super::{Looks, looks, message};

    #[test]
    fn heads_are_told_apart() {
        assert_eq!(looks(b"{\"a\":1}\n"), Looks::Braces);
        assert_eq!(looks(b"[INFO] up\n"), Looks::Text);
        assert_eq!(looks(b"hello \xc3"), Looks::Text);
        assert_eq!(looks(b"caf\xe9\n"), Looks::NotUtf8);
        assert_eq!(looks(b"\x7fELF\x02\x01\x01\x00\x00\x00"), Looks::Binary);
        // An executable's head: mostly NULs, with no text between them.
        let mut elf = b"\x7fELF\x02\x01\x01".to_vec();
        elf.resize(3000, 0);
        elf[40] = 0x40;
        assert_eq!(looks(&elf), Looks::Binary);
        assert_eq!(looks(b"\xff\xfe{\x00"), Looks::Utf16);
        assert_eq!(looks(b"{\x00\"\x00a\x00\"\x00"), Looks::Utf16);
        assert_eq!(looks(b""), Looks::Text);
        assert_eq!(looks(b"\n\n \r\n"), Looks::Blank);
        assert_eq!(looks(b"\n[1, 2]\n42\n"), Looks::JsonNotObject);
        assert_eq!(looks(b"\"text\"\r\n"), Looks::JsonNotObject);
        assert_eq!(looks(b"[1, 2\n"), Looks::Text);
        assert_eq!(
            message("a.jsonl", Looks::JsonNotObject, 2),
            "a.jsonl: JSON values, but none an object: none of its 2 lines is a JSON object; \
             tokentime reads one object a line (a request's record), or a JSON document of them"
        );
        assert_eq!(
            message("a.jsonl", Looks::Blank, 3),
            "a.jsonl: not JSON lines (blank lines): none of its 3 lines is JSON"
        );
        assert_eq!(
            looks(b"0.12.392.481 I slot print_timing: id  0 | task 0 | \n{"),
            Looks::LlamaServerText
        );
        assert_eq!(
            message("a.txt", Looks::Text, 1),
            "a.txt: not JSON lines (plain text): none of its 1 line is JSON"
        );
    }
}
