//! The `--by` values of one request, borrowed from the processor's reused buffers.

/// The `--by` values of one request (`None` where the log does not say): borrowed from
/// buffers that are reused from line to line, so reading them allocates nothing in steady
/// state.
#[derive(Debug, Clone, Copy)]
pub struct ByValues<'a>(ByRepr<'a>);

#[derive(Debug, Clone, Copy)]
enum ByRepr<'a> {
    Split(&'a [String], &'a [bool]),
    Options(&'a [Option<String>]),
}

impl Default for ByValues<'_> {
    fn default() -> Self {
        ByValues(ByRepr::Options(&[]))
    }
}

impl<'a> ByValues<'a> {
    /// Value `i` is `text[i]` where `present[i]`, absent elsewhere (and past the end).
    pub fn new(text: &'a [String], present: &'a [bool]) -> Self {
        ByValues(ByRepr::Split(text, present))
    }

    /// The values of a slice.
    pub fn options(values: &'a [Option<String>]) -> Self {
        ByValues(ByRepr::Options(values))
    }

    /// How many values (present or absent) there are.
    pub fn len(&self) -> usize {
        match self.0 {
            ByRepr::Split(_, present) => present.len(),
            ByRepr::Options(v) => v.len(),
        }
    }

    /// True when there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Value `i`, `None` when absent (or out of range).
    pub fn get(&self, i: usize) -> Option<&'a str> {
        match self.0 {
            ByRepr::Split(text, present) => match present.get(i) {
                Some(true) => text.get(i).map(String::as_str),
                _ => None,
            },
            ByRepr::Options(v) => v.get(i)?.as_deref(),
        }
    }

    /// The values, owned.
    pub fn to_owned_values(self) -> Vec<Option<String>> {
        (0..self.len())
            .map(|i| self.get(i).map(str::to_owned))
            .collect()
    }
}
