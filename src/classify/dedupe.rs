//! The same request seen twice, counted once: the two views of one request in one OTLP export
//! (an instrumented client's span and the server's span below it), and a record read again
//! (a log re-read after rotation, a file given twice).
//!
//! Owns the identity of a request read again ([`request_key`]), the bounded set of the keys
//! seen in one input ([`Seen`]), and the pairing of a server span with the client span it
//! descends from in one line ([`mark_views`]). Decides nothing about output: the processor marks
//! a client view ([`super::Request::duplicate`]), a summary worker asks [`Seen`] in input order.

use crate::classify::Request;

/// Multiplies `a` by `b` in 128 bits and folds the halves together (xor): the mixing step of
/// [`request_key`], sixteen bytes a multiply.
#[inline(always)]
fn fold_mul(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    (p as u64) ^ ((p >> 64) as u64)
}

/// Constants of the hash (odd, of balanced bits: the digits of pi).
const K0: u64 = 0x243f_6a88_85a3_08d3;
const K1: u64 = 0x1319_8a2e_0370_7344;
const K2: u64 = 0xa409_3822_299f_31d0;

/// The identity of a request of format `format` whose log names it `id` (the id's JSON text),
/// for telling a record read again from a new one: its id, its start and end instants and every
/// metric and token count derived from it. Two records with one id but different timings (a
/// retry that reuses the id, a server restarted whose task ids start again) are different
/// requests: their keys differ.
///
/// A deterministic 64-bit hash (the same in every thread and every run) of words that tell
/// every field apart: one word of which values are present (and the null reasons, the cache
/// class, the outcome, the number of token gaps), a word a value (0 where absent), the id's
/// length, then its bytes eight at a time; mixed two words a 128-bit multiply.
pub(crate) fn request_key(format: usize, id: &[u8], r: &Request) -> u64 {
    let m = &r.metrics;
    let mut present = 0u64;
    let mut opt = |i: u32, v: Option<u64>| -> u64 {
        present |= u64::from(v.is_some()) << i;
        v.unwrap_or(0)
    };
    let start = opt(0, r.start_ns.map(|x| x as u64));
    let end = opt(1, r.end_ns.map(|x| x as u64));
    let input = opt(2, m.input_tokens);
    let cached = opt(3, m.cached_tokens);
    let output = opt(4, m.output_tokens);
    let mut values = [0u64; 7];
    for (i, v) in [m.ttft, m.queue, m.prefill, m.decode, m.tpot, m.e2e, m.ttfot]
        .into_iter()
        .enumerate()
    {
        values[i] = match v {
            Ok(x) => {
                present |= 1 << (5 + i);
                x.to_bits()
            }
            Err(reason) => reason as u64,
        };
    }
    let cache = m.cache.map_or(0, |c| c as u64 + 1);
    let tags = present | cache << 16 | (m.outcome as u64) << 24 | u64::from(r.itl.1) << 32;
    let words = [
        tags,
        format as u64,
        id.len() as u64,
        start,
        end,
        input,
        cached,
        output,
        values[0],
        values[1],
        values[2],
        values[3],
        values[4],
        values[5],
        values[6],
        0,
    ];
    let mut h = K2;
    for w in words.chunks_exact(2) {
        h = fold_mul(w[0] ^ h ^ K0, w[1] ^ K1);
    }
    let word = |b: &[u8]| {
        let mut w = [0u8; 8];
        w[..b.len()].copy_from_slice(b);
        u64::from_le_bytes(w)
    };
    let mut chunks = id.chunks_exact(16);
    for c in &mut chunks {
        h = fold_mul(word(&c[..8]) ^ h ^ K0, word(&c[8..]) ^ K1);
    }
    let rest = chunks.remainder();
    let (a, b) = rest.split_at(rest.len().min(8));
    h = fold_mul(word(a) ^ h ^ K0, word(b) ^ K1);
    fold_mul(h ^ K2, K1)
}

/// Keys held at the most by a [`Seen`] (about 2.1 MB: 16 bytes a key in order, and a table of
/// 512 KB), whatever the horizon.
pub(crate) const SEEN_MAX: usize = 100_000;

/// How many keys ahead of the oldest the table line of the key to forget is fetched: it is
/// in the cache when that key leaves.
const EVICT_AHEAD: usize = 8;

/// Slots of a [`Bucket`].
const SLOTS: usize = 15;

/// Keys a bucket holds on average at the most before the table doubles (87% full).
const FILL: usize = 13;

/// The home bucket and fingerprint of `key` come from one multiply (the keys are hashes, but
/// any u64 may be given): the bucket from its top bits, the fingerprint from bit 20 up.
#[inline(always)]
fn spread(key: u64) -> u64 {
    key.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// One cache line of the table: a word of which the low 4 bits count the slots in use (they
/// come first), the others how many keys entered stand in a later bucket though their probe
/// went through this one (full); then the slots, each a fingerprint of its key above its place
/// in the ring plus one.
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(64))]
struct Bucket([u32; SLOTS + 1]);

impl Bucket {
    fn used(&self) -> usize {
        (self.0[0] & 0xf) as usize
    }

    fn passed(&self) -> u32 {
        self.0[0] >> 4
    }

    /// The slots in use whose bits above the lowest `shift` are `want`, as a mask (bit `k` for
    /// slot `k`).
    #[inline(always)]
    fn matching(&self, shift: u32, want: u32) -> u32 {
        let all = self.matching_all(shift, want);
        all & ((1 << self.used()) - 1)
    }

    /// `matching` over every slot, the unused ones too: the 16 words compared four at a time
    /// (SSE2, the x86_64 baseline) and the header's bit dropped.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn matching_all(&self, shift: u32, want: u32) -> u32 {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi32, _mm_cvtsi32_si128, _mm_loadu_si128, _mm_movemask_epi8,
            _mm_packs_epi16, _mm_packs_epi32, _mm_set1_epi32, _mm_srl_epi32,
        };
        let p = self.0.as_ptr().cast::<__m128i>();
        // SAFETY: SSE2 is part of the x86_64 baseline; the four loads read the bucket's 64
        // bytes (unaligned loads, in bounds).
        unsafe {
            let count = _mm_cvtsi32_si128(shift as i32);
            let want = _mm_set1_epi32(want as i32);
            let eq =
                |i: usize| _mm_cmpeq_epi32(_mm_srl_epi32(_mm_loadu_si128(p.add(i)), count), want);
            let lo = _mm_packs_epi32(eq(0), eq(1));
            let hi = _mm_packs_epi32(eq(2), eq(3));
            (_mm_movemask_epi8(_mm_packs_epi16(lo, hi)) as u32) >> 1
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    #[inline(always)]
    fn matching_all(&self, shift: u32, want: u32) -> u32 {
        let mut matches = 0u32;
        for (k, &slot) in self.0[1..].iter().enumerate() {
            matches |= u32::from(slot >> shift == want) << k;
        }
        matches
    }
}

/// The requests of one input seen so far, to tell one read again: the keys ([`request_key`])
/// of the requests that ended within the horizon (`--join-timeout` of log time, 10 minutes by
/// default) of the latest end read, and at most [`SEEN_MAX`] of them (the oldest go first).
/// A copy read after its first has left the set is counted again: the bound is in log time
/// and in keys, never in the input's size.
///
/// The keys and their ends are held in the order they were entered, in a ring of `max`
/// places (the oldest leaves from its head, in order). A table of buckets of one cache line
/// ([`Bucket`]) finds a key's place in the ring: a key stands in its home bucket, or the first
/// after it with a free slot; a slot holds the key's fingerprint and its place in the ring.
/// Telling a key reads one line mostly, and its place in the ring on a fingerprint match only.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    /// 2^`bits` buckets, at most [`FILL`] keys a bucket on average.
    table: Vec<Bucket>,
    bits: u32,
    /// The bits of a slot that hold a place in the ring plus one; those above, a fingerprint.
    place_bits: u32,
    /// The ring of keys and their ends: `len` of them from `head` on, wrapping at `max`.
    keys: Vec<u64>,
    ends: Vec<i64>,
    head: usize,
    len: usize,
    horizon_ns: i64,
    max: usize,
    latest_ns: i64,
    /// Whether the last request asked about ended before the horizon (`--join-timeout` before
    /// the latest end read): a copy of it read that long after would not be told.
    pub(crate) behind: bool,
    /// The keys entered that are below a bound ([`Seen::sample_below`]), at most
    /// [`SAMPLE_MAX`] of them: what two inputs of one run both counted is told from them.
    sample: Option<(u64, Vec<u64>)>,
}

/// The most keys [`Seen::sample_below`] keeps of one input.
pub(crate) const SAMPLE_MAX: usize = 1 << 18;

impl Seen {
    /// An empty set keeping keys for `horizon_ns` of log time, and at most `max` (at least 1,
    /// at most 2^24).
    pub(crate) fn new(horizon_ns: i64, max: usize) -> Seen {
        let max = max.clamp(1, 1 << 24);
        // Zeroed pages: the ring's memory is touched as keys enter it, never more.
        Seen {
            table: Vec::new(),
            bits: 0,
            place_bits: usize::BITS - max.leading_zeros(),
            keys: vec![0; max],
            ends: vec![0; max],
            head: 0,
            len: 0,
            horizon_ns,
            max,
            latest_ns: i64::MIN,
            behind: false,
            sample: None,
        }
    }

    /// Keeps every key entered from now on that is below `bound` (keys are uniform hashes:
    /// `bound` sets the share kept), up to [`SAMPLE_MAX`], until [`Seen::take_sample`].
    pub(crate) fn sample_below(&mut self, bound: u64) {
        self.sample = Some((bound, Vec::new()));
    }

    /// The keys kept since [`Seen::sample_below`] (the input's requests that were no copies),
    /// in the order entered; keeps sampling, from none.
    pub(crate) fn take_sample(&mut self) -> Vec<u64> {
        self.sample
            .as_mut()
            .map(|(_, keys)| std::mem::take(keys))
            .unwrap_or_default()
    }

    /// The home bucket of a key of `spread`.
    #[inline(always)]
    fn home(&self, spread: u64) -> usize {
        (spread >> (64 - self.bits)) as usize
    }

    /// The slot of a key of `spread` at `place` in the ring.
    #[inline(always)]
    fn slot(&self, spread: u64, place: usize) -> u32 {
        ((spread >> 20) as u32) << self.place_bits | (place as u32 + 1)
    }

    /// Fetches the table's line where `key` would be into the cache (a caller that knows the
    /// keys it will ask about a few ahead).
    #[inline(always)]
    pub(crate) fn prefetch(&self, key: u64) {
        if self.bits > 0
            && let Some(b) = self.table.get(self.home(spread(key)))
        {
            crate::cpu::prefetch(std::ptr::from_ref(b));
        }
    }

    /// True when a request with `key`, ending at `end_ns`, was seen before (it is a copy); else
    /// enters it and returns false. A request without an end is placed at the latest end read.
    pub(crate) fn seen_before(&mut self, key: u64, end_ns: Option<i64>) -> bool {
        let end_ns = end_ns.unwrap_or(self.latest_ns);
        self.latest_ns = self.latest_ns.max(end_ns);
        let cutoff = self.latest_ns.saturating_sub(self.horizon_ns);
        self.behind = end_ns < cutoff;
        while self.len > 0 {
            if self.ends[self.head] >= cutoff && self.len < self.max {
                break;
            }
            self.forget_oldest();
        }
        if self.len > EVICT_AHEAD {
            let ahead = self.wrap(self.head + EVICT_AHEAD);
            self.prefetch(self.keys[ahead]);
        }
        if self.bits == 0 || self.len >= FILL << self.bits {
            self.grow();
        }
        let s = spread(key);
        if self.find(key, s) {
            return true;
        }
        if let Some((bound, keys)) = &mut self.sample
            && key < *bound
            && keys.len() < SAMPLE_MAX
        {
            keys.push(key);
        }
        let at = self.wrap(self.head + self.len);
        self.keys[at] = key;
        self.ends[at] = end_ns;
        self.place(self.slot(s, at), s);
        self.len += 1;
        false
    }

    /// True when `key` (of `spread` `s`) is in the table.
    #[inline(always)]
    fn find(&self, key: u64, s: u64) -> bool {
        let fp = self.slot(s, 0) >> self.place_bits;
        let places = (1u32 << self.place_bits) - 1;
        let mask = self.table.len() - 1;
        let mut b = self.home(s);
        loop {
            let bucket = &self.table[b];
            // Every slot compared at once, the unused masked out.
            let mut matches = bucket.matching(self.place_bits, fp);
            while matches != 0 {
                let slot = bucket.0[1 + matches.trailing_zeros() as usize];
                if self.keys[((slot & places) - 1) as usize] == key {
                    return true;
                }
                matches &= matches - 1;
            }
            if bucket.passed() == 0 {
                return false;
            }
            b = (b + 1) & mask;
        }
    }

    /// Enters `slot` of a key of `spread` `s` in its home bucket or the first after it with a
    /// free slot (the full ones passed count it).
    fn place(&mut self, slot: u32, s: u64) {
        let mask = self.table.len() - 1;
        let mut b = self.home(s);
        loop {
            let bucket = &mut self.table[b];
            let used = bucket.used();
            if used < SLOTS {
                bucket.0[1 + used] = slot;
                bucket.0[0] += 1;
                return;
            }
            bucket.0[0] += 1 << 4;
            b = (b + 1) & mask;
        }
    }

    /// `i` within the ring (`i` < 2 `max`).
    #[inline(always)]
    fn wrap(&self, i: usize) -> usize {
        if i >= self.max { i - self.max } else { i }
    }

    /// Removes the oldest key: its slot takes the bucket's last one, the full buckets its
    /// probe went through count it no longer.
    fn forget_oldest(&mut self) {
        let s = spread(self.keys[self.head]);
        let slot = self.slot(s, self.head);
        let mask = self.table.len() - 1;
        let mut b = self.home(s);
        loop {
            let bucket = &mut self.table[b];
            let used = bucket.used();
            let matches = bucket.matching(0, slot);
            if matches != 0 {
                let k = matches.trailing_zeros() as usize;
                bucket.0[1 + k] = bucket.0[used];
                bucket.0[used] = 0;
                bucket.0[0] -= 1;
                break;
            }
            bucket.0[0] -= 1 << 4;
            b = (b + 1) & mask;
        }
        self.head = self.wrap(self.head + 1);
        self.len -= 1;
    }

    /// Doubles the table (at least 64 buckets) and enters the ring's keys again.
    fn grow(&mut self) {
        self.bits = (self.bits + 1).max(6);
        // The old table goes first: never both at once.
        self.table = Vec::new();
        self.table = vec![Bucket::default(); 1 << self.bits];
        for n in 0..self.len {
            let at = self.wrap(self.head + n);
            let s = spread(self.keys[at]);
            self.place(self.slot(s, at), s);
        }
    }

    /// Forgets every key (a new input).
    pub(crate) fn clear(&mut self) {
        self.table.fill(Bucket::default());
        self.head = 0;
        self.len = 0;
        self.latest_ns = i64::MIN;
    }
}

/// The OTel span kinds a view is told by (`kind`, an integer in OTLP/JSON, or its enum name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SpanKind {
    /// `SPAN_KIND_SERVER` (2): the server's span of a request it received (vLLM's
    /// `llm_request`).
    Server,
    /// `SPAN_KIND_CLIENT` (3): the caller's span of a request it sent (OpenLLMetry, OpenLIT).
    Client,
    /// Any other, or none.
    Other,
}

impl SpanKind {
    /// The kind of a span from the JSON text of its `kind`.
    pub(crate) fn from_raw(raw: Option<&str>) -> SpanKind {
        match raw.map(|r| r.trim_matches('"')) {
            Some("2" | "SPAN_KIND_SERVER") => SpanKind::Server,
            Some("3" | "SPAN_KIND_CLIENT") => SpanKind::Client,
            _ => SpanKind::Other,
        }
    }
}

/// One span of an OTLP export line: its trace, its id, its parent's id (JSON texts, as
/// logged), its kind, and the request read from it (an index into the line's requests).
#[derive(Debug, Clone)]
pub(crate) struct Span {
    pub(crate) trace: String,
    pub(crate) id: String,
    pub(crate) parent: String,
    pub(crate) kind: SpanKind,
    pub(crate) request: Option<usize>,
}

/// How far up a server span's parents the client span is looked for (an HTTP client span,
/// a framework's span may sit between them).
const MAX_DEPTH: usize = 32;

/// Marks the client views among `requests`: a request read from a CLIENT span of which a
/// request read from a SERVER span of the same line descends (its parent, or a parent's
/// parent, through the spans of the line, in the same trace) is the same request seen by its
/// caller; the server's view wins. Returns how many were marked.
pub(crate) fn mark_views(spans: &[Span], requests: &mut [Request]) -> usize {
    let mut marked = 0;
    for s in spans {
        if s.kind != SpanKind::Server || s.request.is_none() {
            continue;
        }
        let mut parent = &s.parent;
        for _ in 0..MAX_DEPTH {
            if parent.is_empty() || parent == "\"\"" {
                break;
            }
            let Some(p) = spans.iter().find(|p| &p.id == parent && p.trace == s.trace) else {
                break;
            };
            if p.kind == SpanKind::Client
                && let Some(i) = p.request
            {
                if let Some(r) = requests.get_mut(i)
                    && !r.duplicate
                {
                    r.duplicate = true;
                    marked += 1;
                }
                break;
            }
            parent = &p.parent;
        }
    }
    marked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buckets_slots_are_matched_as_one_by_one() {
        // Buckets of slots drawn from few values (so that many match), every count in use.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..2000 {
            let used = (next() % 16) as usize;
            let mut b = Bucket::default();
            b.0[0] = used as u32 | ((next() % 5) as u32) << 4;
            for k in 1..=SLOTS {
                b.0[k] = if k <= used {
                    (next() % 4) as u32 * 0x0100_0001 + 1
                } else {
                    0
                };
            }
            for (shift, want) in [(0, b.0[1]), (0, 1), (24, 1), (24, 0), (24, 3), (31, 0)] {
                let mut expected = 0u32;
                for k in 0..used {
                    expected |= u32::from(b.0[1 + k] >> shift == want) << k;
                }
                assert_eq!(
                    b.matching(shift, want),
                    expected,
                    "{:?} {shift} {want}",
                    b.0
                );
            }
        }
    }

    #[test]
    fn a_key_is_seen_again_within_the_horizon_and_the_bound() {
        let min = 60_000_000_000;
        let mut s = Seen::new(10 * min, 3);
        assert!(!s.seen_before(1, Some(0)));
        assert!(s.seen_before(1, Some(0)));
        assert!(!s.seen_before(2, Some(min)));
        // Past the horizon of the latest end (11 min), key 1 (end 0) is forgotten.
        assert!(!s.seen_before(3, Some(11 * min)));
        assert!(!s.seen_before(1, Some(0)), "forgotten: counted again");
        // At most 3 keys: entering 4 forgets the oldest held (2).
        assert!(!s.seen_before(4, Some(11 * min)));
        assert!(!s.seen_before(2, Some(min)));
        s.clear();
        assert!(!s.seen_before(3, Some(11 * min)));
    }

    /// The set as it was first written (a `HashSet` and a `VecDeque` of (end, key)): the
    /// reference the table and ring must agree with, answer for answer.
    struct Reference {
        keys: std::collections::HashSet<u64>,
        order: std::collections::VecDeque<(i64, u64)>,
        horizon_ns: i64,
        max: usize,
        latest_ns: i64,
    }

    impl Reference {
        fn new(horizon_ns: i64, max: usize) -> Reference {
            Reference {
                keys: std::collections::HashSet::new(),
                order: std::collections::VecDeque::new(),
                horizon_ns,
                max: max.max(1),
                latest_ns: i64::MIN,
            }
        }

        fn seen_before(&mut self, key: u64, end_ns: Option<i64>) -> bool {
            let end_ns = end_ns.unwrap_or(self.latest_ns);
            self.latest_ns = self.latest_ns.max(end_ns);
            let cutoff = self.latest_ns.saturating_sub(self.horizon_ns);
            while let Some(&(end, k)) = self.order.front() {
                if end >= cutoff && self.order.len() < self.max {
                    break;
                }
                self.order.pop_front();
                self.keys.remove(&k);
            }
            if !self.keys.insert(key) {
                return true;
            }
            self.order.push_back((end_ns, key));
            false
        }

        fn clear(&mut self) {
            self.keys.clear();
            self.order.clear();
            self.latest_ns = i64::MIN;
        }
    }

    /// splitmix64, the generator of the generated logs: a reproducible stream of words.
    use genlog::Rng;

    /// A key for step `i`: new ones, copies of recent and of old ones, small numbers, and keys
    /// whose spread shares its top bits (one home slot, long runs in the table).
    fn random_key(rng: &mut Rng, past: &[u64]) -> u64 {
        match rng.below(20) {
            0..=7 => rng.word(),
            8..=11 if !past.is_empty() => {
                let back = (rng.below(64) as usize + 1).min(past.len());
                past[past.len() - back]
            }
            12..=13 if !past.is_empty() => past[rng.below(past.len() as u64) as usize],
            14..=15 => rng.below(40),
            // spread(k) = k * odd: keys k * inverse + small land on one home.
            _ => rng.below(16).wrapping_mul(0xf1de_83e1_9937_733d),
        }
    }

    /// An end for a request after `latest`: mostly a little later, sometimes earlier (out of
    /// order), sometimes a jump past the horizon, sometimes none, sometimes (with `extremes`)
    /// at the ends of time.
    fn random_end(rng: &mut Rng, latest: i64, horizon: i64, extremes: bool) -> Option<i64> {
        let step = horizon / 50 + 1;
        match rng.below(if extremes { 40 } else { 38 }) {
            0..=24 => Some(latest.saturating_add(rng.below(step as u64) as i64)),
            25..=31 => Some(latest.saturating_sub(rng.below(4 * step as u64) as i64)),
            32..=33 => Some(latest.saturating_add(horizon.saturating_mul(2))),
            34..=37 => None,
            38 => Some(i64::MIN),
            _ => Some(i64::MAX - rng.below(3) as i64),
        }
    }

    #[test]
    fn the_table_and_ring_tell_the_same_copies_as_a_hash_set_and_a_queue() {
        // (horizon, max, steps, ends at the ends of time and clears)
        let cases: [(i64, usize, usize, bool); 9] = [
            (1_000, 100_000, 300_000, false),
            (1_000_000, 3_000, 200_000, false),
            (i64::MAX, 1_000, 100_000, false),
            (0, 5, 20_000, false),
            (10, 1, 20_000, false),
            (100, 17, 50_000, false),
            (50_000, 40_000, 200_000, false),
            (1_000, 2_000, 100_000, true),
            (i64::MAX, 300, 50_000, true),
        ];
        for (case, &(horizon, max, steps, extremes)) in cases.iter().enumerate() {
            let mut rng = Rng(case as u64 + 1);
            let mut seen = Seen::new(horizon, max);
            let mut reference = Reference::new(horizon, max);
            let mut past = Vec::new();
            let mut latest = 1_700_000_000_000_000_000i64;
            let mut copies = 0;
            for i in 0..steps {
                if rng.below(if extremes { 2_000 } else { 50_000 }) == 0 {
                    seen.clear();
                    reference.clear();
                }
                let key = random_key(&mut rng, &past);
                let end = random_end(&mut rng, latest, horizon, extremes);
                if let Some(e) = end
                    && e > latest
                    && e < i64::MAX - 10
                {
                    latest = e;
                }
                if rng.below(3) == 0
                    && let Some(&k) = past.last()
                {
                    seen.prefetch(k);
                }
                let got = seen.seen_before(key, end);
                assert_eq!(
                    got,
                    reference.seen_before(key, end),
                    "case {case}, step {i}: key {key:#x}, end {end:?}"
                );
                assert_eq!(seen.len, reference.order.len(), "case {case}, step {i}");
                copies += usize::from(got);
                past.push(key);
            }
            // With room for one key, the one held leaves before the next is looked for.
            let least = if max == 1 { 0 } else { steps / 1000 + 1 };
            assert!(copies >= least, "case {case}: {copies} copies only");
        }
    }

    /// A request with every field known (`start`, its TTFT).
    fn request(start: i64, ttft: f64) -> Request {
        use crate::metrics::{Metrics, NullReason};
        let nl = Err(NullReason::NotLogged);
        Request {
            format: 0,
            metrics: Metrics {
                ttft: Ok(ttft),
                ttft_origin: None,
                arrival_origin: crate::metrics::Origin::Arrival,
                queue: nl,
                prefill: nl,
                decode: Ok(5.0),
                tpot: Ok(1.0),
                e2e: Ok(9.0),
                ttfot: nl,
                input_tokens: Some(10),
                cached_tokens: None,
                output_tokens: Some(6),
                count_nulls: [None; 3],
                cache: None,
                outcome: crate::metrics::Outcome::Ok,
                negative_interval: false,
                out_of_order: false,
                duration_mismatch: false,
                unit_off: crate::metrics::UnitOff::default(),
                itl_unreadable: false,
                itl_negative: false,
            },
            start_ns: Some(start),
            end_ns: Some(start + 9),
            itl: (0, 0),
            unparseable: None,
            unreadable: 0,
            implausible: 0,
            duplicate: false,
            reason_object: false,
            timeless: false,
            run: None,
            outside: false,
            key: None,
        }
    }

    #[test]
    fn keys_tell_ids_timings_counts_and_absences_apart() {
        use crate::metrics::NullReason;
        let base = request(100, 2.0);
        let key = |f: usize, id: &[u8], r: &Request| request_key(f, id, r);
        let k = key(0, b"\"abc\"", &base);
        assert_eq!(k, key(0, b"\"abc\"", &base), "deterministic");
        let mut variants = vec![
            key(1, b"\"abc\"", &base),
            key(0, b"\"abd\"", &base),
            key(0, b"\"abc\"\0", &base),
            key(0, b"\"abc\"", &request(101, 2.0)),
            key(0, b"\"abc\"", &request(100, 2.5)),
        ];
        let mut r = base;
        r.metrics.input_tokens = None;
        variants.push(key(0, b"\"abc\"", &r));
        r.metrics.input_tokens = Some(0);
        variants.push(key(0, b"\"abc\"", &r));
        let mut r = base;
        r.metrics.queue = Err(NullReason::Error);
        variants.push(key(0, b"\"abc\"", &r));
        r.metrics.queue = Ok(0.0);
        variants.push(key(0, b"\"abc\"", &r));
        let mut r = base;
        r.metrics.outcome = crate::metrics::Outcome::Cancelled;
        variants.push(key(0, b"\"abc\"", &r));
        let mut r = base;
        r.itl.1 = 3;
        variants.push(key(0, b"\"abc\"", &r));
        let mut r = base;
        r.end_ns = None;
        variants.push(key(0, b"\"abc\"", &r));
        // Ids of every length around the 16-byte steps.
        let long = [b'x'; 40];
        variants.extend((0..=40).map(|n| key(0, &long[..n], &base)));
        variants.push(k);
        let n = variants.len();
        variants.sort_unstable();
        variants.dedup();
        assert_eq!(variants.len(), n, "one key shared by two requests");
    }

    #[test]
    fn span_kinds_as_numbers_and_names() {
        assert_eq!(SpanKind::from_raw(Some("2")), SpanKind::Server);
        assert_eq!(
            SpanKind::from_raw(Some("\"SPAN_KIND_CLIENT\"")),
            SpanKind::Client
        );
        assert_eq!(SpanKind::from_raw(Some("1")), SpanKind::Other);
        assert_eq!(SpanKind::from_raw(None), SpanKind::Other);
    }
}
