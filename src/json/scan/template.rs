//! Whole lines read by their shape: the lines of one log are most often written by one call
//! with one set of keys, in one order, with the same blanks, and differ only in their scalars
//! (strings, numbers, literals). A [`Template`] holds the texts between the scalars of a line
//! the scanner walked and read (`{"id": `, `, "call_type": `, ..., `}}`), as [`Guess`]es, and
//! which of its scalars' spans went to which slot. A line that has each of these texts in turn,
//! with a valid scalar between each two and nothing after the last, has the grammar and the
//! keys the learnt line had: its slots are those scalars' spans, recorded in the order the walk
//! recorded them (so that a `null` is absent, and a slot written twice keeps the same value).
//! Such a line is read by comparing texts and checking scalars alone, with no key read, no trie
//! probe and no separator check. Any other line is walked as before, and teaches a template.

use super::{CONTINUED, GUESS_BYTES, Guess, Scanner};

/// Templates kept (the most recently matched first): a log whose lines take a few shapes (a
/// success, an error, a streamed call) has one for each. Of them, at most one that no line
/// has fitted yet.
const TEMPLATES: usize = 4;

/// The most pieces a [`Template`] holds (a text longer than a [`Guess`] holds takes several).
const TEMPLATE_PIECES: usize = 1024;

/// Lines compared with the templates between two looks at how many fitted.
const WINDOW: u32 = 16;

/// The most lines walked without templates, after a [`WINDOW`] of lines of which fewer than
/// three in four fitted one (each that fits none costs the comparisons that failed, and the
/// learning of its own).
const MAX_REST: u32 = 4096;

/// The shape of a line: its texts between scalars, and where its slots were.
#[derive(Debug, Clone, Default)]
pub(in crate::json) struct Template {
    /// The texts, each as one [`Guess`] or (when longer) several, each but the last
    /// [`CONTINUED`]; a scalar follows each text but the last.
    pieces: Vec<Guess>,
    /// The slots written, in the walk's order, each with its value's start and end: a piece's
    /// index and an offset into it.
    writes: Vec<Write>,
    /// Whether a line was read by this template since it was learnt.
    proven: bool,
}

/// One slot written by a [`Template`]'s line.
#[derive(Debug, Clone, Copy)]
struct Write {
    slot: u32,
    start: (u32, u32),
    end: (u32, u32),
}

/// The [`Template`]s of one [`super::PathSet`] shape, and when to learn one.
#[derive(Debug, Clone, Default)]
pub(in crate::json) struct Templates {
    kept: Vec<Template>,
    /// Where each piece of the line being compared starts (reused).
    starts: Vec<u32>,
    /// Lines compared in this window, and how many of them fitted a template.
    tried: u32,
    fitted: u32,
    /// Lines still to walk without templates.
    rest: u32,
    /// How many lines the next rest lasts (doubling, from [`WINDOW`] up to [`MAX_REST`], while
    /// windows of lines seldom fit).
    backoff: u32,
    /// Lines read by a template.
    #[cfg(test)]
    hits: usize,
}

impl Templates {
    /// Forgets every template (another trie's slots).
    pub(super) fn clear(&mut self) {
        *self = Templates::default();
    }

    /// Whether the line about to be read is to be compared with the templates (and, when none
    /// fits, to teach one): not while resting after a window of lines that seldom fitted.
    pub(super) fn ready(&mut self) -> bool {
        if self.rest > 0 {
            self.rest -= 1;
            return false;
        }
        true
    }

    /// Counts a line compared (`fitted`: read by a template); at the end of a window, rests
    /// when fewer than three lines in four fitted.
    fn count(&mut self, fitted: bool) {
        self.tried += 1;
        self.fitted += u32::from(fitted);
        if self.tried == WINDOW {
            if self.fitted * 4 < self.tried * 3 {
                self.backoff = (self.backoff * 2).clamp(WINDOW, MAX_REST);
                self.rest = self.backoff;
            } else {
                self.backoff = 0;
            }
            self.tried = 0;
            self.fitted = 0;
        }
    }

    /// Learns the template of `line`, just walked and read without error, whose walk wrote
    /// the slots `trace` lists (slot, start, end). A line whose texts are not ASCII, or too
    /// many, or a slot not at a scalar's or a text's place, teaches none.
    pub(super) fn learn(&mut self, line: &[u8], trace: &[(u32, u32, u32)]) {
        let Some(t) = template_of(line, trace) else {
            return;
        };
        // At most one template that no line fitted yet: lines of ever new shapes replace it,
        // and never push out the ones that fit.
        self.kept.retain(|t| t.proven);
        if self.kept.len() == TEMPLATES {
            self.kept.pop();
        }
        self.kept.insert(0, t);
    }
}

impl Scanner<'_, '_> {
    /// Reads the line by one of `templates`: true when one fits it (its slots then recorded),
    /// false (nothing recorded, `high` as it was) when none does.
    pub(super) fn by_template(&mut self, templates: &mut Templates) -> bool {
        for k in 0..templates.kept.len() {
            if self.fits_template(&templates.kept[k], &mut templates.starts) {
                let t = &mut templates.kept[k];
                t.proven = true;
                for w in &t.writes {
                    let at = |(p, off): (u32, u32)| (templates.starts[p as usize] + off) as usize;
                    self.record(Some(w.slot as usize), at(w.start), at(w.end));
                }
                #[cfg(test)]
                {
                    templates.hits += 1;
                }
                if k > 0 {
                    let t = templates.kept.remove(k);
                    templates.kept.insert(0, t);
                }
                templates.count(true);
                return true;
            }
            self.high = 0;
        }
        templates.count(false);
        false
    }

    /// Whether the line has the texts of `t` in turn, a valid scalar between each two, and
    /// ends with the last; `starts` gets where each text starts.
    #[inline(always)]
    fn fits_template(&mut self, t: &Template, starts: &mut Vec<u32>) -> bool {
        starts.resize(t.pieces.len(), 0);
        self.fit_pieces(&t.pieces, 0, |p, at| starts[p] = at as u32) == Some(self.b.len())
    }
}

/// The template of `line` (valid, walked), whose walk wrote `trace` (slot, start, end).
fn template_of(line: &[u8], trace: &[(u32, u32, u32)]) -> Option<Template> {
    // The texts between scalars, as byte ranges: a string is a scalar unless a `:` follows
    // it (a key); a number or literal always is.
    let mut texts: Vec<(usize, usize)> = Vec::new();
    let (mut i, mut from) = (0, 0);
    while i < line.len() {
        match line[i] {
            b'"' => {
                let mut j = i + 1;
                loop {
                    j += memchr::memchr2(b'"', b'\\', line.get(j..)?)?;
                    if line[j] == b'"' {
                        break;
                    }
                    j += 2;
                }
                let end = j + 1;
                let mut k = end;
                while k < line.len() && matches!(line[k], b' ' | b'\t' | b'\r' | b'\n') {
                    k += 1;
                }
                if line.get(k) != Some(&b':') {
                    texts.push((from, i));
                    from = end;
                }
                i = end;
            }
            b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                let mut j = i + 1;
                while j < line.len()
                    && !matches!(line[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n')
                {
                    j += 1;
                }
                texts.push((from, i));
                from = j;
                i = j;
            }
            _ => i += 1,
        }
    }
    texts.push((from, line.len()));
    // Each text as pieces of at most a guess's bytes; where each piece starts in the line.
    let mut pieces = Vec::new();
    let mut starts = Vec::new();
    for &(a, b) in &texts {
        let text = &line[a..b];
        if text.is_empty() || !text.is_ascii() {
            return None;
        }
        let mut parts = text.chunks(GUESS_BYTES).enumerate().peekable();
        while let Some((c, part)) = parts.next() {
            let mut g = Guess::learn(part, None);
            if parts.peek().is_some() {
                g.child = CONTINUED;
            }
            pieces.push(g);
            starts.push(a + c * GUESS_BYTES);
        }
        if pieces.len() > TEMPLATE_PIECES {
            return None;
        }
    }
    // A place as a piece and an offset: the piece it lies in (a scalar's start is the end of
    // the piece before it, its end the start of the piece after it).
    let place = |at: u32| {
        let at = at as usize;
        let p = starts.partition_point(|&s| s <= at).checked_sub(1)?;
        let off = at - starts[p];
        (off <= pieces[p].len as usize).then_some((p as u32, off as u32))
    };
    let writes = trace
        .iter()
        .map(|&(slot, start, end)| {
            Some(Write {
                slot,
                start: place(start)?,
                end: place(end)?,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Template {
        pieces,
        writes,
        proven: false,
    })
}

#[cfg(test)]
mod tests {
    use crate::json::{PathSet, Slots};

    /// Reads `lines` in turn with one `Slots`, each checked against the reference; returns
    /// how many were read by a template.
    fn read_all(set: &PathSet, lines: &[&str]) -> usize {
        let mut slots = Slots::default();
        for (i, line) in lines.iter().enumerate() {
            let read = set.extract(line.as_bytes(), &mut slots);
            let mut reference = Slots::default();
            let want = set.extract_reference(line.as_bytes(), &mut reference);
            assert_eq!(read.is_ok(), want.is_ok(), "line {i}: {line}");
            if read.is_ok() {
                assert!(slots == reference, "line {i}: {line}");
            }
        }
        slots.predictions.templates.hits
    }

    fn paths(paths: &[&[&str]]) -> PathSet {
        let mut set = PathSet::default();
        for p in paths {
            set.add(p);
        }
        set
    }

    /// Lines that differ only in their scalars are read by the first one's template: a value
    /// `null` in the learnt line and a string later, a key given twice (the later value is
    /// the one kept), the last element of an array, an object read whole, a string with
    /// escapes and one above ASCII.
    #[test]
    fn lines_that_differ_in_scalars_are_read_by_template() {
        let set = paths(&[
            &["model"],
            &["usage", "prompt_tokens"],
            &["usage"],
            &["items", "[-1]", "id"],
            &["error"],
            &["n"],
        ]);
        let lines = [
            r#"{"model": null, "n": 1, "usage": {"prompt_tokens": 5}, "items": [{"id": 1}, {"id": 2}], "error": null, "n": 2}"#,
            r#"{"model": "m", "n": 3, "usage": {"prompt_tokens": 7}, "items": [{"id": "a"}, {"id": 9.5}], "error": "x\"y", "n": null}"#,
            r#"{"model": "é", "n": -0.5, "usage": {"prompt_tokens": null}, "items": [{"id": true}, {"id": false}], "error": "\u00e9", "n": 4e2}"#,
        ];
        assert_eq!(read_all(&set, &lines), 2);
    }

    /// A line of another shape (a member more, an array longer, other blanks), or a bad scalar
    /// where a template has one (an unknown escape, a number with a leading zero, a bracket),
    /// is walked and judged as the reference judges it; a valid one then teaches its own
    /// template.
    #[test]
    fn other_shapes_and_bad_scalars_are_walked() {
        let set = paths(&[&["model"], &["usage", "prompt_tokens"], &["items", "[0]"]]);
        let a = r#"{"model": "m", "usage": {"prompt_tokens": 5}, "items": [1, 2]}"#;
        let lines = [
            a,
            a,
            r#"{"model": "m\u0001", "usage": {"prompt_tokens": 5}, "items": [1, 2]}"#,
            r#"{"model": "m", "usage": {"prompt_tokens": 5}, "items": [1, 2, 3]}"#,
            r#"{"model": "m", "usage": {"prompt_tokens": 5, "x": 1}, "items": [1, 2]}"#,
            r#"{"model":"m", "usage": {"prompt_tokens": 5}, "items": [1, 2]}"#,
            r#"{"model": "\q", "usage": {"prompt_tokens": 5}, "items": [1, 2]}"#,
            r#"{"model": "m", "usage": {"prompt_tokens": 05}, "items": [1, 2]}"#,
            r#"{"model": "m", "usage": {"prompt_tokens": [5]}, "items": [1, 2]}"#,
            r#"{"model": "m", "usage": {"prompt_tokens": 5}, "items": [1, 2]} x"#,
            r#"{"model": "m", "usage": {"prompt_tokens": 5}, "items": [1, 2]"#,
            r#"{"model": "n", "usage": {"prompt_tokens": 6}, "items": [3, 4]}"#,
            r#"{"model": "o", "usage": {"prompt_tokens": 7}, "items": [5, 6]}"#,
        ];
        // Read by template: the second and third lines and the last two (the first shape's
        // template, proven, stays while each new shape's replaces the one before it).
        assert_eq!(read_all(&set, &lines), 4);
    }
}
