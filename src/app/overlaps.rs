//! Requests that two inputs of one summary both hold (the overlap of two rotated files, a log
//! exported twice over overlapping hours): each input sets aside the copies it holds itself,
//! but two inputs are read apart, so a request in both is counted twice. They are told from
//! a sample of each input's requests ([`crate::classify::dedupe::Seen::sample_below`]), and
//! stderr names the inputs.

use std::collections::{BTreeMap, HashMap};

/// How many keys the sample of a whole run aims at, at most: the share of keys kept is set
/// from the inputs' size so that about this many are.
const AIM: u64 = 1 << 19;

/// Input bytes per request, for that estimate: a little under a LiteLLM line, so that
/// compressed inputs (several times as many requests a byte) keep the sample near the aim.
const BYTES_PER_REQUEST: u64 = 256;

/// The keys the first map holds at the most: later inputs' keys are still looked for in it,
/// no longer entered.
const FIRST_MAX: usize = 1 << 20;

/// The share of the keys of a run over `bytes` bytes of input kept in the sample: a key is
/// kept when it is below the bound returned (`u64::MAX`: every key, for a run of up to
/// `AIM` requests or so), and `shift` says how many times the share was halved.
pub(crate) fn sample_bound(bytes: u64) -> (u64, u32) {
    let expected = bytes / BYTES_PER_REQUEST;
    let mut shift = 0;
    while expected >> shift > AIM && shift < 40 {
        shift += 1;
    }
    (u64::MAX >> shift, shift)
}

/// The samples of the inputs read so far, in input order: which input a key was last seen
/// in, and how many keys each pair of inputs shares (a key in three inputs counts for the
/// first and second, and the second and third: rotated files overlap their neighbours).
#[derive(Debug, Default)]
pub(crate) struct Overlaps {
    /// The share of keys sampled was halved this many times.
    shift: u32,
    last: HashMap<u64, u32>,
    /// (earlier input, later input) -> sampled keys both hold.
    pairs: BTreeMap<(u32, u32), u64>,
    /// Per input, when its first request started (to tell the older of two).
    starts: Vec<Option<i64>>,
}

impl Overlaps {
    pub(crate) fn new(shift: u32) -> Overlaps {
        Overlaps {
            shift,
            ..Overlaps::default()
        }
    }

    /// Adds input `i`'s sampled keys (the requests it counted); its first request started at
    /// `start`.
    pub(crate) fn add(&mut self, i: usize, keys: &[u64], start: Option<i64>) {
        if self.starts.len() <= i {
            self.starts.resize(i + 1, None);
        }
        self.starts[i] = start;
        let i = i as u32;
        for &k in keys {
            let full = self.last.len() >= FIRST_MAX;
            match self.last.get_mut(&k) {
                Some(j) if *j != i => {
                    *self.pairs.entry(((*j).min(i), (*j).max(i))).or_default() += 1;
                    *j = i;
                }
                Some(_) => {}
                None if !full => {
                    self.last.insert(k, i);
                }
                None => {}
            }
        }
    }

    /// One line for stderr per pair of inputs that share requests, named by `name` (the older
    /// first, by their first requests); `horizon` is `--join-timeout` as given.
    pub(crate) fn warnings(&self, name: impl Fn(usize) -> String, horizon: &str) -> Vec<String> {
        self.pairs
            .iter()
            .map(|(&(a, b), &n)| {
                let start = |i: u32| self.starts.get(i as usize).copied().flatten();
                let (a, b) = match (start(a), start(b)) {
                    (Some(x), Some(y)) if y < x => (b, a),
                    _ => (a, b),
                };
                let (a, b) = (name(a as usize), name(b as usize));
                let gz = |n: &str| n.ends_with(".gz");
                let zst = |n: &str| n.ends_with(".zst");
                let cat = match (gz(&a) || gz(&b), zst(&a) || zst(&b)) {
                    (false, false) => "cat",
                    (true, false) => "zcat -f",
                    (false, true) => "zstdcat -f",
                    (true, true) => "decompress them, then cat",
                };
                let count = if self.shift == 0 {
                    crate::output::summary::plural(n, "request")
                } else {
                    format!("about {} requests (told from a sample)", n << self.shift)
                };
                format!(
                    "{a} and {b} both hold {count} alike (id, times and token counts: the overlap of rotated files, a log exported twice?): each is counted in both; give the two as one input, the older first (`{cat} {a} {b} | tokentime summary`, with a --join-timeout as long as the overlap when it is over {horizon}), to count them once"
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_sampled_halves_as_the_input_grows() {
        assert_eq!(sample_bound(0), (u64::MAX, 0));
        assert_eq!(sample_bound(AIM * BYTES_PER_REQUEST), (u64::MAX, 0));
        assert_eq!(sample_bound(AIM * BYTES_PER_REQUEST + 1), (u64::MAX, 0));
        assert_eq!(
            sample_bound(2 * AIM * BYTES_PER_REQUEST + BYTES_PER_REQUEST),
            (u64::MAX >> 1, 1)
        );
        assert_eq!(sample_bound(1 << 40).1, 13);
    }

    #[test]
    fn keys_two_inputs_share_are_counted_per_pair() {
        let mut o = Overlaps::new(0);
        o.add(0, &[1, 2, 3, 4], Some(10));
        o.add(1, &[5, 6], Some(20));
        o.add(2, &[3, 4, 6, 7, 7], Some(30));
        assert_eq!(o.pairs, BTreeMap::from([((0, 2), 2), ((1, 2), 1)]));
        let w = o.warnings(|i| format!("f{i}"), "10m");
        assert_eq!(w.len(), 2);
        assert!(
            w[0].starts_with("f0 and f2 both hold 2 requests alike"),
            "{}",
            w[0]
        );
        assert!(w[0].ends_with("the older first (`cat f0 f2 | tokentime summary`, with a --join-timeout as long as the overlap when it is over 10m), to count them once"), "{}", w[0]);
        let mut sampled = Overlaps::new(3);
        sampled.add(0, &[9], None);
        sampled.add(1, &[9], None);
        assert!(
            sampled.warnings(|i| format!("f{i}"), "10m")[0]
                .contains("about 8 requests (told from a sample)")
        );
    }

    /// A key three inputs hold counts for each input and the one before it; the older input
    /// is named first, and compressed ones are read with zcat.
    #[test]
    fn neighbours_share_and_the_older_comes_first() {
        let mut o = Overlaps::new(0);
        // Newest first, as `ls app.log*` lists them.
        o.add(0, &[1, 2], Some(300));
        o.add(1, &[1, 2, 3], Some(200));
        o.add(2, &[1, 3, 4], Some(100));
        assert_eq!(o.pairs, BTreeMap::from([((0, 1), 2), ((1, 2), 2)]));
        let names = ["app.log", "app.log.1", "app.log.2.gz"];
        let w = o.warnings(|i| names[i].to_owned(), "10m");
        assert!(
            w[0].starts_with("app.log.1 and app.log both hold 2"),
            "{}",
            w[0]
        );
        assert!(
            w[1].contains("(`zcat -f app.log.2.gz app.log.1 | tokentime summary`"),
            "{}",
            w[1]
        );
    }
}
