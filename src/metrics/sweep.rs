//! In flight: how many requests were open while each request decoded, rebuilt from the log's
//! own start and end times in one pass.
//!
//! Owns the [`Sweep`]: a sweep line over start and end events, held in a bounded reorder
//! buffer (a min-heap of pending events) so that logs written in completion order, where a
//! request's start only becomes known when its line arrives at its end, are placed exactly.
//! Pure: takes epoch-nanosecond instants, returns `(mean in flight, payload)` pairs; no I/O.
//!
//! # Rules
//!
//! - A request is in flight from its start to its end (`[start, end)`, the gateway's or
//!   server's view: queueing, prefill and decode alike), whatever its outcome.
//! - A request's decode is `[end - decode, end]` (the decode always ends at the last token;
//!   for a streamed call that is `[first token, end]`, for a non-streamed one whose server
//!   logged its decode time, the same length before the end).
//! - Its in-flight count is the time-weighted mean of the number of open requests over its
//!   decode, itself included (a request alone counts 1); a zero-length decode takes the count
//!   at that instant.
//! - The count is rounded to the nearest integer (halves up, at least 1) and bucketed by
//!   powers of two: `1`, `2`, `3-4`, `5-8`, `9-16`, ... ([`bucket`], [`bucket_label`]).
//!
//! # The reorder buffer
//!
//! The sweep only moves past an instant once no request still to come can have started
//! before it: when the latest end seen so far is more than twice the longest request seen so
//! far plus [`SLACK_NS`] later (twice: a new longest request may be up to twice as long as
//! the last). A log in completion order (or start order, or up to [`SLACK_NS`] out of
//! either) is swept exactly. A request that started before the sweep's position (one more
//! than twice as long as every earlier one, lines far out of order) is still added exactly to the decodes in progress; if a decode it overlapped was
//! already reported, or its own decode began before the sweep's position (then measured from
//! there), it is counted in [`Sweep::late`]. When more than `max_pending` events wait, the
//! oldest are swept early and counted in [`Sweep::forced`]. Memory: the pending events, at
//! most `max_pending`; a ring of slots for the decodes waiting, at most 8/3 of their peak
//! number, of 4 bytes and a bit each; their payloads, packed in blocks allocated as their
//! number grows; and at the end of the input, the decodes placed but not yet drained, a block
//! at a time ([`Sweep::finish`]).

use std::cmp::Reverse;
use std::collections::hash_map::Entry;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// How far out of completion order lines may be and still be placed exactly (10 s).
pub(crate) const SLACK_NS: i64 = 10_000_000_000;

/// Pending events held at most by default.
pub(crate) const MAX_PENDING: usize = 500_000;

// An event is its time and a tag that orders the events of one instant: starts, then
// decodes opening, then ends (those closing a decode first, so that a request is counted
// during its own zero-length decode), and names the decode's slot (32 bits). 34 bits, so
// that a pending event is one word (see `pack`).
const START: u64 = 0;
const OPEN: u64 = 1 << 32;
const CLOSE_END: u64 = 2 << 32;
const END: u64 = 3 << 32;
const SLOT: u64 = (1 << 32) - 1;
const TAG_BITS: u32 = 34;

/// The slot of a closed entry of `Sweep::opened`.
const GONE: u32 = u32::MAX;

/// Payloads held by a block of [`Store`].
const BLOCK: usize = 4096;

/// Decodes placed at most between two calls of [`Drain::next`] once the input ended.
const FINISH_BATCH: usize = 4096;

/// How many events ahead of the sweep a closing decode's payload is asked for
/// ([`Sweep::prefetch_ahead`]).
const AHEAD: usize = 12;

/// How many puts ahead a freed place of [`Store`] is asked for.
const PUT_AHEAD: usize = 4;

/// Width of the buckets pending events wait in (1 s of log time): a small map of short
/// unsorted lists, each sorted once when the sweep reaches it, is several times cheaper than
/// one large heap.
const BUCKET_NS: i64 = 1_000_000_000;

/// A pending event as one word: its time's offset into its bucket (ns, below 2^30) above its
/// tag, so that the words of a bucket sort as the events do, as plain integers, in half the
/// memory of a pair.
fn pack(time: i64, bucket: i64, tag: u64) -> u64 {
    ((time.wrapping_sub(bucket.wrapping_mul(BUCKET_NS)) as u64) << TAG_BITS) | tag
}

/// The event (time, tag) packed as `word` in the bucket starting at `base` (epoch ns).
fn unpack(word: u64, base: i64) -> (i64, u64) {
    // The time fits an i64, so wrapping gives it exactly, even for a base that does not.
    (
        base.wrapping_add((word >> TAG_BITS) as i64),
        word & ((1 << TAG_BITS) - 1),
    )
}

/// A hasher for bucket numbers: one multiply (Fibonacci hashing). Every event looks up its
/// bucket; an ordered map's search cost several times more.
#[derive(Default)]
struct BucketHasher(u64);

impl Hasher for BucketHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_i64(&mut self, i: i64) {
        self.0 = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// A decode begun, an entry of `Sweep::opened`: 32 bytes, two to a cache line (the area is
/// kept as two halves so that the entry needs no 16-byte alignment).
#[derive(Debug, Clone, Copy)]
struct Opened {
    /// When it began (epoch ns).
    time: i64,
    /// `Sweep::area` when it began (request-ns), less what late requests added to it before
    /// the last compaction: low and high 64 bits.
    area_lo: u64,
    area_hi: i64,
    /// Its slot in the ring (`Sweep::places`), [`GONE`] once closed.
    slot: u32,
    /// Its payload's place in `Sweep::store`.
    item: u32,
}

impl Opened {
    fn new(time: i64, area: i128, slot: u32, item: u32) -> Self {
        Opened {
            time,
            area_lo: area as u64,
            area_hi: (area >> 64) as i64,
            slot,
            item,
        }
    }

    fn area(&self) -> i128 {
        (i128::from(self.area_hi) << 64) | i128::from(self.area_lo)
    }

    fn set_area(&mut self, area: i128) {
        self.area_lo = area as u64;
        self.area_hi = (area >> 64) as i64;
    }
}

/// The payloads of the decodes waiting, packed: blocks of [`BLOCK`] allocated as their number
/// grows (never more than one block beyond its peak), the places freed taken again first.
/// Apart from the ring of slots, whose length must run ahead of the number waiting so that a
/// free slot is near: there, a payload would cost its size several times over.
#[derive(Debug)]
struct Store<T> {
    /// Full but for the last, which fills up to [`BLOCK`].
    blocks: Vec<Vec<T>>,
    /// Places freed, taken again last in, first out.
    free: Vec<u32>,
    /// Places handed out so far (the first ones free, or not, after those).
    high: usize,
}

impl<T: Default> Store<T> {
    fn new() -> Self {
        Store {
            blocks: Vec::new(),
            free: Vec::new(),
            high: 0,
        }
    }

    /// Stores `value`, returns its place.
    fn put(&mut self, value: T) -> u32 {
        // Below the slots' count, itself 32-bit (see `Sweep::new`).
        if let Some(i) = self.free.pop() {
            // The places freed wait while the decodes waiting grow, then are taken again
            // long after, out of cache: the one taken a few puts on is asked for now (the
            // value there is read to be dropped as it is replaced).
            if let Some(&next) = self
                .free
                .len()
                .checked_sub(PUT_AHEAD)
                .map(|k| &self.free[k])
            {
                self.prefetch(next);
            }
            self.blocks[i as usize / BLOCK][i as usize % BLOCK] = value;
            return i;
        }
        if self.high.is_multiple_of(BLOCK) {
            self.blocks.push(Vec::with_capacity(BLOCK));
        }
        self.blocks[self.high / BLOCK].push(value);
        self.high += 1;
        (self.high - 1) as u32
    }

    /// Asks the cache for the line of the value at place `i` (no effect but on time).
    #[inline]
    fn prefetch(&self, i: u32) {
        let i = i as usize;
        if let Some(block) = self.blocks.get(i / BLOCK) {
            crate::cpu::prefetch(block.as_ptr().wrapping_add(i % BLOCK));
        }
    }

    /// Takes the value at place `i` out, freeing the place.
    fn take(&mut self, i: u32) -> T {
        self.free.push(i);
        let i = i as usize;
        std::mem::take(&mut self.blocks[i / BLOCK][i % BLOCK])
    }
}

/// The sweep of one input (one server or gateway log).
#[derive(Debug)]
pub struct Sweep<T> {
    /// Pending events by bucket, unsorted, packed ([`pack`]).
    pending: HashMap<i64, Vec<u64>, BuildHasherDefault<BucketHasher>>,
    /// The buckets of `pending`, earliest first.
    pending_order: BinaryHeap<Reverse<i64>>,
    /// The bucket being swept, sorted latest first, packed.
    ready: Vec<u64>,
    /// Events queued into the bucket being swept or before it once it was sorted (a start
    /// behind the sweep, clamped to its position): a heap, so that a log far out of order,
    /// where most events land here, costs O(log n) an event rather than a shift of `ready`.
    ready_late: BinaryHeap<Reverse<(i64, u64)>>,
    ready_bucket: Option<i64>,
    /// The start of the bucket being swept (epoch ns, wrapped).
    ready_base: i64,
    /// Events waiting, in `pending` and `ready`.
    len: usize,
    /// The slots of the decodes not yet reported (the slot is in their events' tags), a bit
    /// each, set while taken: a ring, taken in turn from `cursor` on (skipping the slots
    /// still taken), so that requests pushed together sit together and those ending
    /// together are near. Its length is that of `places`.
    ring: Vec<u64>,
    /// The next slot to try.
    cursor: usize,
    /// Slots taken.
    taken: usize,
    /// By slot: the place in `store` of the decode's payload until the decode begins, then
    /// its place in `opened` (whose entry holds the payload's place). 4 bytes a slot, so that
    /// the event that begins a decode touches little.
    places: Vec<u32>,
    /// The payloads of the decodes not yet reported.
    store: Store<T>,
    /// The decodes begun since the last compaction, in the order they began (so their open
    /// times never decrease).
    opened: Vec<Opened>,
    /// Entries of `opened` still in progress.
    live: usize,
    /// Room in `opened` before it is compacted (and in `late_area`).
    room: usize,
    /// Area added by late requests to the decodes in progress, by place in `opened`: a
    /// Fenwick tree of differences of `(c, k)`, the decode at `p` getting `c + k * open time`
    /// (see [`Sweep::add_late`]). Empty until a late request comes.
    late_area: Vec<(i128, i128)>,
    /// Tests only: late requests added decode by decode, the plain loop the Fenwick tree
    /// replaces (the reference it is checked against).
    #[cfg(test)]
    linear: bool,
    /// Time of the last event swept.
    now: i64,
    /// Requests open at `now`.
    open: i64,
    /// Integral of `open` over time up to `now` (request-nanoseconds).
    area: i128,
    watermark: i64,
    longest: i64,
    /// Time of the last decode reported.
    last_close: i64,
    max_pending: usize,
    /// Decodes placed, not yet drained, in order of their end.
    done: VecDeque<(f64, T)>,
    /// The input ended: what is still pending is swept as it is drained.
    finishing: bool,
    /// Requests that started before decodes already reported had ended, or whose own decode
    /// began before the sweep's position: their in-flight counts are approximate.
    pub late: u64,
    /// Times the buffer was full and its oldest event swept early.
    pub forced: u64,
}

impl<T: Default> Sweep<T> {
    /// An empty sweep holding at most `max_pending` events (at least 16, at most 2^29: slots
    /// and places are 32-bit).
    pub fn new(max_pending: usize) -> Self {
        Sweep {
            pending: HashMap::default(),
            pending_order: BinaryHeap::new(),
            ready: Vec::new(),
            ready_late: BinaryHeap::new(),
            ready_bucket: None,
            ready_base: 0,
            len: 0,
            ring: Vec::new(),
            cursor: 0,
            taken: 0,
            places: Vec::new(),
            store: Store::new(),
            opened: Vec::new(),
            live: 0,
            room: 1024,
            late_area: Vec::new(),
            #[cfg(test)]
            linear: false,
            now: i64::MIN,
            open: 0,
            area: 0,
            watermark: i64::MIN,
            longest: 0,
            last_close: i64::MIN,
            max_pending: max_pending.clamp(16, 1 << 29),
            done: VecDeque::new(),
            finishing: false,
            late: 0,
            forced: 0,
        }
    }

    /// Queues an event, never before the sweep's position.
    fn event(&mut self, time: i64, tag: u64) {
        let time = time.max(self.now);
        let b = time.div_euclid(BUCKET_NS);
        self.len += 1;
        match self.ready_bucket {
            Some(rb) if b <= rb => self.ready_late.push(Reverse((time, tag))),
            _ => {
                let word = pack(time, b, tag);
                match self.pending.entry(b) {
                    Entry::Occupied(o) => {
                        let events = o.into_mut();
                        if events.len() == events.capacity() {
                            // Doubling while small, then by a quarter: a bucket that stops
                            // growing leaves at most a fifth of its room empty (most of the
                            // memory of the sweep is in its pending events).
                            let len = events.len();
                            events.reserve_exact(if len < 256 { len.max(4) } else { len / 4 });
                        }
                        events.push(word);
                    }
                    Entry::Vacant(v) => {
                        self.pending_order.push(Reverse(b));
                        v.insert(vec![word]);
                    }
                }
            }
        }
    }

    /// Makes the earliest pending bucket the one being swept, when none is.
    fn load_front(&mut self) {
        if self.ready.is_empty()
            && let Some(Reverse(b)) = self.pending_order.pop()
        {
            let mut events = self.pending.remove(&b).unwrap_or_default();
            events.sort_unstable_by(|a, b| b.cmp(a));
            self.ready = events;
            self.ready_bucket = Some(b);
            self.ready_base = b.wrapping_mul(BUCKET_NS);
        }
    }

    /// Adds a request open over `[start, end]` (epoch ns); `decode`, when given, is its
    /// decode length (ns) and the payload to return with its mean in-flight count. A request
    /// whose end is before its start is ignored.
    pub fn push(&mut self, start: i64, end: i64, decode: Option<(i64, T)>) {
        if end < start {
            return;
        }
        self.longest = self.longest.max(end - start);
        self.watermark = self.watermark.max(end);
        let swept = self.now != i64::MIN;
        let mut late = false;
        let mut close = None;
        if let Some((len, payload)) = decode {
            let mut open = (end - len.max(0)).clamp(start, end);
            if swept && open < self.now {
                // Its own decode began before the sweep's position: measured from there.
                late = true;
                open = self.now;
            }
            let slot = self.take_slot(payload);
            self.event(open, OPEN | slot as u64);
            close = Some(slot);
        }
        let end_tag = close.map_or(END, |slot| CLOSE_END | slot as u64);
        if swept && start < self.now {
            // The sweep has passed this start. The decodes still open get the part they
            // missed ([start, now] over their own [open, now]); those already reported
            // cannot, and make the request late.
            let upto = end.min(self.now);
            #[cfg(test)]
            if self.linear {
                for o in self.opened.iter_mut().filter(|o| o.slot != GONE) {
                    let overlap = upto - start.max(o.time);
                    if overlap > 0 {
                        o.set_area(o.area() - overlap as i128);
                    }
                }
                self.late_area.clear();
            }
            self.add_late(start, upto);
            late |= start < self.last_close;
            if end >= self.now {
                self.open += 1;
                self.event(end, end_tag);
            } else if let Some(slot) = close {
                // Over before the sweep's position: its decode closes at once, and it is not
                // open any more.
                self.open += 1;
                self.event(self.now, CLOSE_END | slot as u64);
            }
        } else {
            self.event(start, START);
            self.event(end, end_tag);
        }
        if late {
            self.late += 1;
        }
        let safe = self
            .watermark
            .saturating_sub(self.longest.saturating_mul(2))
            .saturating_sub(SLACK_NS);
        self.advance(safe, usize::MAX);
        while self.len > self.max_pending {
            self.load_front();
            let Some(((time, _), _)) = self.next_event() else {
                break;
            };
            self.advance(time, usize::MAX);
            self.forced += 1;
        }
    }

    /// Stores `payload` in the next free slot of the ring and returns it. The ring doubles
    /// when more than three quarters of it are taken, so that a free slot is found within a
    /// few (at most `max_pending` + 1 decodes are waiting, each with its end pending: slots
    /// stay below 2^32).
    fn take_slot(&mut self, payload: T) -> u32 {
        let len = self.places.len();
        if self.taken * 4 >= len * 3 {
            // A multiple of 64: whole words of `ring`.
            let grown = (len * 2).max(64);
            self.ring.resize(grown / 64, 0);
            self.places.resize(grown, GONE);
            // The new half is free: go on from there.
            self.cursor = len;
        }
        // The first free slot from the cursor on (most often the cursor's), a word of the
        // ring at a time: the run of taken bits from the cursor's on; past the word's end,
        // the shift brings in free bits, which move on to the next word.
        let mut c = self.cursor;
        while self.ring[c / 64] >> (c % 64) & 1 == 1 {
            let (word, bit) = (c / 64, c % 64);
            let run = (!(self.ring[word] >> bit)).trailing_zeros() as usize;
            if bit + run < 64 {
                c += run;
                break;
            }
            c = if word + 1 == self.ring.len() {
                0
            } else {
                (word + 1) * 64
            };
        }
        let slot = c;
        self.ring[slot / 64] |= 1 << (slot % 64);
        self.places[slot] = self.store.put(payload);
        self.taken += 1;
        self.cursor = if slot + 1 == self.places.len() {
            0
        } else {
            slot + 1
        };
        slot as u32
    }

    /// Sweeps every event at or before `to`, or stops once `limit` decodes wait in `done`.
    fn advance(&mut self, to: i64, limit: usize) {
        loop {
            if self.ready.is_empty() && self.ready_late.is_empty() {
                self.ready_bucket = None;
                match self.pending_order.peek() {
                    Some(&Reverse(b)) if b.saturating_mul(BUCKET_NS) <= to => self.load_front(),
                    _ => return,
                }
            }
            let Some(((time, tag), late)) = self.next_event() else {
                return;
            };
            if time > to {
                return;
            }
            if late {
                self.ready_late.pop();
            } else {
                self.ready.pop();
                self.prefetch_ahead();
            }
            self.len -= 1;
            if self.now != i64::MIN {
                self.area += self.open as i128 * (time - self.now) as i128;
            }
            self.now = time;
            // Slots are below 2^32 (see `push`).
            let slot = (tag & SLOT) as u32;
            match tag & !SLOT {
                START => self.open += 1,
                OPEN => {
                    // A decode's opening is swept before its closing (it is queued with it,
                    // no later and ordered first), and its slot is freed only then.
                    if self.opened.len() == self.room {
                        self.compact();
                    }
                    // Below `room`, itself 32-bit (see `new`).
                    let item = std::mem::replace(
                        &mut self.places[slot as usize],
                        self.opened.len() as u32,
                    );
                    self.opened.push(Opened::new(time, self.area, slot, item));
                    self.live += 1;
                }
                CLOSE_END => {
                    let (word, bit) = (slot as usize / 64, slot % 64);
                    if self.ring[word] >> bit & 1 == 1 {
                        self.ring[word] &= !(1 << bit);
                        self.taken -= 1;
                        let p = self.places[slot as usize] as usize;
                        let o = &mut self.opened[p];
                        o.slot = GONE;
                        let (open_time, open_area, item) = (o.time, o.area(), o.item);
                        let payload = self.store.take(item);
                        self.live -= 1;
                        let open_area = open_area - self.late_at(p, open_time);
                        self.last_close = time;
                        let len = time - open_time;
                        let mean = if len > 0 {
                            // Through i64 when it fits: the same rounding, cheaper.
                            let area = self.area - open_area;
                            i64::try_from(area).map_or_else(|_| area as f64, |a| a as f64)
                                / len as f64
                        } else {
                            self.open as f64
                        };
                        self.done.push_back((mean, payload));
                        if self.done.len() >= limit {
                            self.open -= 1;
                            return;
                        }
                    }
                    self.open -= 1;
                }
                _ => self.open -= 1,
            }
        }
    }

    /// Asks the cache for the payload of the decode that closes [`AHEAD`] events on in the
    /// bucket being swept, if it has begun: payloads wait a whole reorder window (a hundred
    /// thousand requests on a busy log), their places freed and taken again in no order, so
    /// that each one read at its close is a miss to memory; asked for this far ahead, it is
    /// there when its close comes. (Only where it is found: its slot and its place in
    /// `opened` are near what the sweep touched last; a guess that misses asks for nothing
    /// useful, and changes nothing.)
    #[inline]
    fn prefetch_ahead(&self) {
        let Some(i) = self.ready.len().checked_sub(AHEAD) else {
            return;
        };
        let tag = self.ready[i] & ((1 << TAG_BITS) - 1);
        if tag & !SLOT != CLOSE_END {
            return;
        }
        let slot = (tag & SLOT) as u32;
        let Some(&p) = self.places.get(slot as usize) else {
            return;
        };
        if let Some(o) = self.opened.get(p as usize)
            && o.slot == slot
        {
            self.store.prefetch(o.item);
        }
    }

    /// Adds a request open over `[start, upto]`, behind the sweep's position (`upto` at most
    /// `now`), to the decodes in progress: each gets its overlap with its own `[open, now]`,
    /// `upto - max(start, open)` when positive. As the open times never decrease along
    /// `opened`, that is `upto - start` for a prefix of it, `upto - open` for the range after,
    /// and nothing beyond: two range updates of the Fenwick tree, O(log n) whatever the
    /// number of decodes in progress (a log far out of order keeps many open).
    fn add_late(&mut self, start: i64, upto: i64) {
        #[cfg(test)]
        if self.linear {
            return;
        }
        if upto <= start || self.live == 0 {
            return;
        }
        if self.late_area.is_empty() {
            // Zeroed afresh after each compaction, in the buffer already there.
            self.late_area.resize(self.room + 1, (0, 0));
        }
        let k1 = self.opened.partition_point(|e| e.time <= start);
        let k2 = self.opened.partition_point(|e| e.time < upto);
        self.fenwick_add(0, ((upto - start) as i128, 0));
        self.fenwick_add(k1, (start as i128, -1));
        self.fenwick_add(k2, (-(upto as i128), 1));
    }

    /// Adds `d` to the differences at place `p` (so to every place from `p` on).
    fn fenwick_add(&mut self, p: usize, d: (i128, i128)) {
        let mut i = p + 1;
        while let Some(e) = self.late_area.get_mut(i) {
            e.0 += d.0;
            e.1 += d.1;
            i += i & i.wrapping_neg();
        }
    }

    /// The area late requests added to the decode at place `p` of `opened`, which began at
    /// `open`.
    fn late_at(&self, p: usize, open: i64) -> i128 {
        if self.late_area.is_empty() {
            return 0;
        }
        let (mut c, mut k) = (0, 0);
        let mut i = p + 1;
        while i > 0 {
            let e = self.late_area[i];
            c += e.0;
            k += e.1;
            i &= i - 1;
        }
        c + k * open as i128
    }

    /// Drops the closed entries of `opened`, in place: the late area of each decode in
    /// progress is moved into its entry, and the room doubles when more than half of it is in
    /// use.
    fn compact(&mut self) {
        let mut kept = 0;
        for p in 0..self.opened.len() {
            let mut o = self.opened[p];
            if o.slot == GONE {
                continue;
            }
            o.set_area(o.area() - self.late_at(p, o.time));
            self.places[o.slot as usize] = kept as u32;
            self.opened[kept] = o;
            kept += 1;
        }
        self.opened.truncate(kept);
        if self.live * 2 > self.room {
            self.room *= 2;
        }
        self.late_area.clear();
    }

    /// The earliest event of the bucket being swept, (time, tag), and whether it is in
    /// `ready_late` (rather than `ready`).
    fn next_event(&self) -> Option<((i64, u64), bool)> {
        let r = self.ready.last().map(|&w| unpack(w, self.ready_base));
        match (r, self.ready_late.peek()) {
            (Some(r), Some(&Reverse(l))) => Some(if l < r { (l, true) } else { (r, false) }),
            (Some(r), None) => Some((r, false)),
            (None, Some(&Reverse(l))) => Some((l, true)),
            (None, None) => None,
        }
    }

    /// Ends the input: everything still pending is swept, [`FINISH_BATCH`] decodes at a time
    /// as [`Sweep::drain`] hands them on (so that they are not all held at once). The counts
    /// [`Sweep::late`] and [`Sweep::forced`] are final.
    pub fn finish(&mut self) {
        self.finishing = true;
    }

    /// The decodes swept so far (after [`Sweep::finish`], all of them), as (mean in-flight
    /// count, payload), in order of their end.
    pub fn drain(&mut self) -> Drain<'_, T> {
        Drain { sweep: self }
    }

    /// Events waiting in the buffer.
    #[cfg(test)]
    pub(crate) fn pending(&self) -> usize {
        self.len
    }
}

/// The decodes a sweep has placed, in order of their end ([`Sweep::drain`]); those not handed
/// on when it is dropped stay in the sweep.
#[derive(Debug)]
pub struct Drain<'a, T> {
    sweep: &'a mut Sweep<T>,
}

impl<T: Default> Iterator for Drain<'_, T> {
    type Item = (f64, T);

    fn next(&mut self) -> Option<(f64, T)> {
        let sw = &mut *self.sweep;
        if sw.done.is_empty() && sw.finishing {
            sw.advance(i64::MAX, FINISH_BATCH);
        }
        sw.done.pop_front()
    }
}

/// The bucket of a mean in-flight count: rounded to the nearest integer (halves up, at least
/// 1), then `0` for 1, `1` for 2, `2` for 3-4, `3` for 5-8, `k` for `2^(k-1)+1 ..= 2^k`.
///
/// ```text
/// use tokentime::concurrency::{bucket, bucket_label};
/// assert_eq!(bucket(0.3), 0);
/// assert_eq!(bucket(1.49), 0);
/// assert_eq!(bucket(1.5), 1);
/// assert_eq!(bucket(3.97), 2);
/// assert_eq!(bucket(8.4), 3);
/// assert_eq!(bucket_label(bucket(8.6)), "9-16");
/// ```
pub(crate) fn bucket(mean: f64) -> u32 {
    let n = if mean.is_finite() {
        crate::number::floor(mean + 0.5).max(1.0) as u64
    } else {
        1
    };
    64 - (n - 1).leading_zeros()
}

/// The label of bucket `b`: `1`, `2`, `3-4`, `5-8`, ...
pub(crate) fn bucket_label(b: u32) -> String {
    match b {
        0 => "1".into(),
        1 => "2".into(),
        _ => format!("{}-{}", (1u64 << (b - 1)) + 1, 1u64 << b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The naive reference: every interval kept, the overlap with the decode summed.
    fn naive(reqs: &[(i64, i64, Option<i64>)]) -> Vec<(usize, f64)> {
        let mut out = vec![];
        for (i, &(_, end, dec)) in reqs.iter().enumerate() {
            let Some(len) = dec else { continue };
            let a = (end - len).max(reqs[i].0);
            let b = end;
            let mean = if b > a {
                reqs.iter()
                    .map(|&(s, e, _)| (b.min(e) - a.max(s)).max(0) as f64)
                    .sum::<f64>()
                    / (b - a) as f64
            } else {
                reqs.iter().filter(|&&(s, e, _)| s <= a && a <= e).count() as f64
            };
            out.push((i, mean));
        }
        out
    }

    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self, n: u64) -> i64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) % n) as i64
        }

        /// `0..n` in a random order.
        fn shuffled(&mut self, n: usize) -> Vec<usize> {
            let keys: Vec<i64> = (0..n).map(|_| self.next(1 << 40)).collect();
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by_key(|&i| keys[i]);
            order
        }
    }

    /// Runs `reqs` through a sweep of `max_pending` events in `order`, the late ones added by
    /// the Fenwick tree or (`linear`) decode by decode; returns (request, mean) in the order
    /// reported, and the finished sweep (its counters).
    fn sweep_all(
        reqs: &[(i64, i64, Option<i64>)],
        order: &[usize],
        max_pending: usize,
        linear: bool,
    ) -> (Vec<(usize, f64)>, Sweep<usize>) {
        let mut sweep = Sweep::new(max_pending);
        sweep.linear = linear;
        let mut got = vec![];
        for &i in order {
            let (s, e, d) = reqs[i];
            sweep.push(s, e, d.map(|d| (d, i)));
            got.extend(sweep.drain().map(|(m, i)| (i, m)));
        }
        sweep.finish();
        got.extend(sweep.drain().map(|(m, i)| (i, m)));
        (got, sweep)
    }

    #[test]
    fn sweep_in_completion_order_equals_the_naive_overlap() {
        let mut rng = Lcg(7);
        let mut reqs = vec![];
        let mut t = 0i64;
        for _ in 0..2000 {
            t += rng.next(3_000_000_000);
            let len = 1 + rng.next(60_000_000_000);
            let dec = if rng.next(4) == 0 {
                None
            } else {
                Some(rng.next(len as u64 + 1))
            };
            reqs.push((t, t + len, dec));
        }
        // Lines written in completion order, up to 2 s out of it.
        let keys: Vec<i64> = reqs.iter().map(|r| r.1 + rng.next(2_000_000_000)).collect();
        let mut order: Vec<usize> = (0..reqs.len()).collect();
        order.sort_by_key(|&i| keys[i]);
        let (mut got, sweep) = sweep_all(&reqs, &order, MAX_PENDING, false);
        assert_eq!(sweep.late, 0);
        assert_eq!(sweep.forced, 0);
        got.sort_by_key(|p| p.0);
        let want = naive(&reqs);
        assert_eq!(got.len(), want.len());
        for ((gi, g), (wi, w)) in got.iter().zip(&want) {
            assert_eq!(gi, wi);
            assert!((g - w).abs() < 1e-9, "request {gi}: sweep {g}, naive {w}");
        }
    }

    #[test]
    fn one_request_alone_is_one_in_flight_and_two_overlapping_are_two() {
        let mut s = Sweep::new(16);
        // A alone over [0, 10]; B over [20, 40] and C over [20, 40]: both see 2.
        s.push(0, 10, Some((5, 'a')));
        s.push(20, 40, Some((20, 'b')));
        s.push(20, 40, Some((10, 'c')));
        s.finish();
        let got: Vec<(f64, char)> = s.drain().collect();
        assert_eq!(got, vec![(1.0, 'a'), (2.0, 'b'), (2.0, 'c')]);
    }

    #[test]
    fn half_overlap_is_a_time_weighted_mean() {
        let mut s = Sweep::new(16);
        // D decodes over [0, 100]; E is open over [50, 100]: mean 1 * 0.5 + 2 * 0.5 = 1.5.
        s.push(0, 100, Some((100, 'd')));
        s.push(50, 100, None);
        s.finish();
        assert_eq!(s.drain().collect::<Vec<_>>(), vec![(1.5, 'd')]);
    }

    #[test]
    fn a_start_behind_the_sweep_still_counts_for_open_decodes() {
        const S: i64 = 1_000_000_000;
        let reqs = [
            (60 * S, 70 * S, None),
            (0, 100 * S, Some(50 * S)),
            // Moves the sweep to 70 s, A's decode open.
            (200 * S, 280 * S, None),
            // More than twice as long as any before: it starts behind the sweep.
            (40 * S, 500 * S, None),
        ];
        let mut s = Sweep::new(MAX_PENDING);
        for &(a, b, d) in &reqs {
            s.push(a, b, d.map(|d| (d, ())));
        }
        s.finish();
        let got: Vec<f64> = s.drain().map(|x| x.0).collect();
        // Over [50, 100]: itself 50, [60, 70] 10, [50, 100] 50: 110 / 50.
        assert_eq!(got, vec![2.2]);
        assert_eq!(naive(&reqs)[0].1, 2.2);
        assert_eq!(s.late, 0);
    }

    #[test]
    fn any_order_reports_every_decode_once_and_counts_the_approximate_ones() {
        let mut rng = Lcg(11);
        let mut reqs = vec![];
        for i in 0..3000i64 {
            let t = i * 1_000_000_000 + rng.next(500_000_000);
            let len = 1 + rng.next(30_000_000_000);
            reqs.push((t, t + len, Some(rng.next(len as u64 + 1))));
        }
        // Fully shuffled: nothing like completion order.
        let order = rng.shuffled(reqs.len());
        let (got, sweep) = sweep_all(&reqs, &order, 64, false);
        let mut ids: Vec<usize> = got.iter().map(|g| g.0).collect();
        ids.sort_unstable();
        assert_eq!(ids, (0..reqs.len()).collect::<Vec<_>>());
        assert!(got.iter().all(|g| g.1.is_finite() && g.1 >= 0.0));
        assert!(sweep.late > 0, "{}", sweep.late);
        assert!(sweep.pending() == 0);
    }

    #[test]
    fn late_requests_add_to_open_decodes_as_the_plain_loop_does() {
        // A log cut in blocks written one after the other with the same times (a file
        // concatenated to itself, replicas' logs one after another): from the second block
        // on, every request starts behind the sweep, and decodes pile up in progress.
        let mut rng = Lcg(5);
        let mut block = vec![];
        for i in 0..1500i64 {
            let t = i * 200_000_000 + rng.next(100_000_000);
            let len = 1 + rng.next(20_000_000_000);
            let dec = (rng.next(5) != 0).then(|| rng.next(len as u64 + 1));
            block.push((t, t + len, dec));
        }
        block.sort_by_key(|r| r.1);
        let reqs: Vec<_> = (0..6).flat_map(|_| block.iter().copied()).collect();
        let in_order: Vec<usize> = (0..reqs.len()).collect();
        let shuffled = rng.shuffled(reqs.len());
        for order in [&in_order, &shuffled] {
            for max_pending in [64, 4096, MAX_PENDING] {
                let fast = sweep_all(&reqs, order, max_pending, false);
                let plain = sweep_all(&reqs, order, max_pending, true);
                assert!(fast.1.late > 1000, "{}", fast.1.late);
                assert_eq!(fast.1.late, plain.1.late);
                assert_eq!(fast.0.len(), plain.0.len());
                for (f, p) in fast.0.iter().zip(&plain.0) {
                    assert_eq!(f.0, p.0);
                    assert_eq!(f.1.to_bits(), p.1.to_bits(), "request {}", f.0);
                }
            }
        }
    }

    #[test]
    fn the_slot_ring_goes_round_past_a_taken_slot_and_stays_near_the_decodes_waiting() {
        const S: i64 = 1_000_000_000;
        // A small buffer, so that the sweep keeps up and the ring goes round many times; one
        // long request keeps its slot taken all along.
        let mut s = Sweep::new(1000);
        s.push(0, 1000 * S, Some((1, usize::MAX)));
        let (mut peak, mut got) = (0, vec![]);
        for i in 0..20_000i64 {
            let t = S + i * 5_000_000;
            s.push(t, t + S, Some((S / 2, i as usize)));
            peak = peak.max(s.taken);
            got.extend(s.drain().map(|d| d.1));
        }
        assert!(s.places.len() * 3 <= peak * 8, "{} {peak}", s.places.len());
        // The payloads take no more places than decodes waited at once (`peak` is counted
        // after each push has swept what it could: one more waited just before).
        assert!(s.store.high <= peak + 1, "{} {peak}", s.store.high);
        assert!(peak < 1000, "{peak}");
        s.finish();
        got.extend(s.drain().map(|d| d.1));
        assert_eq!(got.pop(), Some(usize::MAX));
        assert_eq!(got, (0..20_000).collect::<Vec<_>>());
    }

    #[test]
    fn the_end_places_what_waits_a_batch_at_a_time_as_the_naive_overlap() {
        // Every request far longer than the log: nothing is placed before the end.
        let mut rng = Lcg(3);
        let reqs: Vec<_> = (0..3 * FINISH_BATCH as i64)
            .map(|i| {
                let t = i * 1_000_000 + rng.next(500_000);
                let len = 1_000_000_000_000 + rng.next(1_000_000_000);
                (t, t + len, Some(rng.next(len as u64 + 1)))
            })
            .collect();
        let mut s = Sweep::new(MAX_PENDING);
        for (i, &(a, b, d)) in reqs.iter().enumerate() {
            s.push(a, b, d.map(|d| (d, i)));
            assert_eq!(s.drain().count(), 0);
        }
        s.finish();
        let mut got = vec![];
        let mut drain = s.drain();
        while let Some((mean, i)) = drain.next() {
            assert!(drain.sweep.done.len() < FINISH_BATCH);
            got.push((i, mean));
        }
        assert_eq!(s.pending(), 0);
        got.sort_by_key(|g| g.0);
        let want = naive(&reqs);
        assert_eq!(got.len(), want.len());
        for ((gi, g), (wi, w)) in got.iter().zip(&want) {
            assert_eq!(gi, wi);
            assert!((g - w).abs() < 1e-9, "request {gi}: sweep {g}, naive {w}");
        }
    }

    #[test]
    fn a_full_buffer_sweeps_early_and_says_so() {
        let mut s = Sweep::new(16);
        for i in 0..40 {
            // Each request is longer than any before it: nothing is ever safe to sweep
            // until the buffer is full.
            s.push(1000 - i, 1000 + i * 1000, Some((10, i)));
        }
        s.finish();
        assert_eq!(s.drain().count(), 40);
        assert!(s.forced > 0);
        assert!(s.late > 0);
    }

    #[test]
    fn buckets_are_powers_of_two() {
        let labels: Vec<String> = [1.0, 2.0, 3.0, 4.0, 5.0, 8.0, 9.0, 16.0, 17.0]
            .iter()
            .map(|&m| bucket_label(bucket(m)))
            .collect();
        assert_eq!(
            labels,
            [
                "1", "2", "3-4", "3-4", "5-8", "5-8", "9-16", "9-16", "17-32"
            ]
        );
    }
}

/// The examples in this file's docs, run.
#[cfg(test)]
mod doc_examples {
    use super::*;

    #[test]
    fn example_of_bucket() {
        assert_eq!(bucket(0.3), 0);
        assert_eq!(bucket(1.49), 0);
        assert_eq!(bucket(1.5), 1);
        assert_eq!(bucket(3.97), 2);
        assert_eq!(bucket(8.4), 3);
        assert_eq!(bucket_label(bucket(8.6)), "9-16");
    }
}
