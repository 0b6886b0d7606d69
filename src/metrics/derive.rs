//! Metrics: the pure arithmetic of SPEC section 2, from one request's timeline to TTFT, TPOT,
//! E2E latency, queue time, prefill, decode and the prefix-cache class.
//!
//! Takes plain numbers (integer nanoseconds, token counts) in a [`Timeline`] and returns a
//! [`Metrics`] whose every value is either a number or the reason it is null. Never sees JSON,
//! never does I/O. The definitions follow vLLM's `FinishedRequestStats`
//! (`vllm/v1/metrics/stats.py`): queue = scheduled - arrival, prefill = first token -
//! scheduled, decode = last token - first token, TPOT = decode / (output tokens - 1).

/// The bits of [`Timeline::unreadable`] that `derive` reads, in the reader's numbering (the
/// order of `format::Field`, whose tests check them).
pub(crate) mod unread {
    /// The end instant.
    pub(crate) const END: u32 = 1 << 3;
    /// The logged decode.
    pub(crate) const DECODE: u32 = 1 << 7;
    /// The logged E2E.
    pub(crate) const E2E: u32 = 1 << 8;
    /// The input, cached and output token counts.
    pub(crate) const TOKENS: [u32; 3] = [1 << 9, 1 << 10, 1 << 12];
    /// The token gaps.
    pub(crate) const ITL: u32 = 1 << 14;
}

/// Where a request's TTFT is measured from (SPEC section 2: `ttft_origin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Origin {
    /// The server received the request (queue time included).
    #[default]
    Arrival,
    /// The request left the queue and prefill started (queue time excluded; llama.cpp
    /// `prompt_ms`, vLLM `time_to_first_token_ms`).
    Scheduled,
    /// A gateway or client saw the call start (network and server queue included).
    Gateway,
}

impl Origin {
    /// Every origin.
    pub const ALL: [Origin; 3] = [Origin::Arrival, Origin::Scheduled, Origin::Gateway];

    /// The name used in output (`"arrival"`, `"scheduled"`, `"gateway"`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Origin::Arrival => "arrival",
            Origin::Scheduled => "scheduled",
            Origin::Gateway => "gateway",
        }
    }
}

/// How a request ended, as its log says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Outcome {
    /// Completed normally.
    #[default]
    Ok,
    /// Failed (HTTP error, exception, a failure status). Kept out of latency percentiles.
    Error,
    /// Cancelled or aborted. Before its first token it counts as an error; after it, TTFT is
    /// kept and decode, TPOT and E2E are null (`cancelled`).
    Cancelled,
}

impl Outcome {
    /// Every outcome, in declaration order.
    pub const ALL: [Outcome; 3] = [Outcome::Ok, Outcome::Error, Outcome::Cancelled];

    /// `"ok"`, `"error"` or `"cancelled"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error => "error",
            Outcome::Cancelled => "cancelled",
        }
    }
}

/// One request as a format reports it, in integer nanoseconds. Instants share one clock (the
/// format guarantees it: all epoch, or all relative to one origin); durations are lengths.
/// `None` means the log does not say.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timeline {
    /// The server or gateway received the request (ns on the format's clock).
    pub arrival: Option<i64>,
    /// The request left the queue; prefill started.
    pub scheduled: Option<i64>,
    /// The first output token was produced or its chunk seen.
    pub first_token: Option<i64>,
    /// The response completed.
    pub end: Option<i64>,
    /// Logged duration arrival -> first token (ns).
    pub ttft: Option<i64>,
    /// `ttft` is tokentime's sum of a format's parts (Ollama: load + prompt eval), not a TTFT
    /// the producer logged: a first-token instant wins over it.
    pub ttft_summed: bool,
    /// Logged queue duration (ns).
    pub queue: Option<i64>,
    /// Logged prefill duration: scheduled -> first token (ns).
    pub prefill: Option<i64>,
    /// Logged decode duration: first token -> last token (ns).
    pub decode: Option<i64>,
    /// Logged E2E duration (ns).
    pub e2e: Option<i64>,
    /// Logged duration arrival -> first answer token (ns): a reasoning model's time to first
    /// output token, where the log separates it from the TTFT.
    pub ttfot: Option<i64>,
    /// Prompt tokens, cached ones included.
    pub input_tokens: Option<u64>,
    /// Prompt tokens served from a prefix/KV cache.
    pub cached_tokens: Option<u64>,
    /// Generated tokens.
    pub output_tokens: Option<u64>,
    /// Prompt tokens actually evaluated (llama.cpp `prompt_n`): when no cached count is
    /// logged, cached = input - evaluated.
    pub evaluated_tokens: Option<u64>,
    /// False when the response was not streamed, so no first-token time exists.
    pub streamed: Option<bool>,
    /// How the request ended.
    pub outcome: Outcome,
    /// A gateway's response cache answered (`cache: "response"`).
    pub response_cache: bool,
    /// The origin the format's arrival instant stands for (`Arrival` or `Gateway`).
    pub arrival_origin: Option<Origin>,
    /// When the log line was written (epoch ns), for formats whose timings are durations only:
    /// taken as the end of the request.
    pub logged_at: Option<i64>,
    /// A field that is present in the log but could not be read in its unit (an RFC 3339
    /// string mapped as `epoch_s`, a negative token count): its metrics are `unparseable`.
    pub unparseable: Option<&'static str>,
    /// Every such field, one bit each (the reader's numbering, `format::Field`): the reader
    /// tells the metrics that use them; `derive` makes none of their metrics up from the others.
    pub unreadable: u32,
    /// The wall-clock instants present in the log but outside the plausible window (before
    /// 2000, from 2200 on: a producer's 0 for "unknown", a unit mix-up), as [`instants`] bits:
    /// absent from the timeline, their metrics are `implausible_instant`.
    pub implausible: u8,
    /// The format's E2E is only the one it writes: none is made of TTFT and decode
    /// ([`crate::format::FormatSpec::e2e_as_written`]).
    pub e2e_as_written: bool,
    /// A token gap of the log's list came out negative (clock skew, a unit mixed up): the
    /// list gives no ITL sample, the decode it would give (its sum, where none is logged) is
    /// that gap (so null, `negative_interval`), and the request is counted as a negative
    /// interval.
    pub negative_gap: bool,
    /// The request ends at its start plus its E2E before the line's time
    /// ([`crate::format::FormatSpec::end_from_e2e_first`]).
    pub end_from_e2e_first: bool,
}

/// The bits of [`Timeline::implausible`], one per instant.
pub(crate) mod instants {
    /// [`super::Timeline::arrival`].
    pub(crate) const ARRIVAL: u8 = 1;
    /// [`super::Timeline::scheduled`].
    pub(crate) const SCHEDULED: u8 = 2;
    /// [`super::Timeline::first_token`].
    pub(crate) const FIRST_TOKEN: u8 = 4;
    /// [`super::Timeline::end`].
    pub(crate) const END: u8 = 8;
    /// [`super::Timeline::logged_at`].
    pub(crate) const LOGGED_AT: u8 = 16;
}

impl Timeline {
    /// The [`instants`] bits of the instants this timeline has.
    pub fn present_instants(&self) -> u8 {
        let bit = |v: Option<i64>, b: u8| if v.is_some() { b } else { 0 };
        bit(self.arrival, instants::ARRIVAL)
            | bit(self.scheduled, instants::SCHEDULED)
            | bit(self.first_token, instants::FIRST_TOKEN)
            | bit(self.end, instants::END)
            | bit(self.logged_at, instants::LOGGED_AT)
    }

    /// Fills every field this timeline does not have from `other` (the earlier lines of a
    /// request that spans several). Outcome and flags are kept, and so is `logged_at`: it is
    /// when this line, the one that completes the request, was written; an earlier line's time
    /// (SGLang's `request.received`, the arrival itself) says nothing of the end.
    pub fn fill_from(&mut self, other: &Timeline) {
        macro_rules! fill {
            ($($f:ident),*) => { $( self.$f = self.$f.or(other.$f); )* };
        }
        if self.ttft.is_none() {
            self.ttft_summed = other.ttft_summed;
        }
        fill!(
            arrival,
            scheduled,
            first_token,
            end,
            ttft,
            queue,
            prefill,
            decode,
            e2e,
            input_tokens,
            cached_tokens,
            output_tokens,
            evaluated_tokens,
            streamed,
            arrival_origin,
            unparseable
        );
        self.unreadable |= other.unreadable;
        // An instant another line gave is known; one no line gave stays implausible.
        self.implausible = (self.implausible | other.implausible) & !self.present_instants();
    }
}

/// Why a metric is null. Each variant names the minimal input that triggers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NullReason {
    /// A field the metric needs is absent or null in the log (e.g. no `queue_time_ms`).
    NotLogged,
    /// A field the metric needs is present but not readable in its unit (`"abc"` as `ms`).
    Unparseable,
    /// The response was not streamed, so no first token was observable (LiteLLM `stream: null`).
    NotStreamed,
    /// `output_tokens < 2`: no decode interval to divide.
    OneToken,
    /// The producer wrote its "undefined" sentinel (a TTFT of 0; first chunk == end).
    Sentinel,
    /// The interval came out negative (clock skew, unit mix-up); counted as an anomaly.
    NegativeInterval,
    /// The request failed; its latency is not a sample.
    Error,
    /// Cancelled after the first token: decode, TPOT and E2E are cut short.
    Cancelled,
    /// A gateway's response cache answered: nothing ran.
    ResponseCache,
    /// An instant the metric needs is logged outside the plausible window of wall-clock time
    /// (before 2000-01-01, from 2200-01-01 on: `startTime: 0`, the year 9999); counted as an
    /// anomaly.
    ImplausibleInstant,
    /// The record's instants are out of order (a first token after the end), and the metric
    /// uses one of those that disagree: which of them is wrong is unknown. Counted as an
    /// anomaly.
    OutOfOrder,
}

impl NullReason {
    /// Every reason, in declaration order (its `Ord`, and its discriminant).
    pub const ALL: [NullReason; 11] = [
        NullReason::NotLogged,
        NullReason::Unparseable,
        NullReason::NotStreamed,
        NullReason::OneToken,
        NullReason::Sentinel,
        NullReason::NegativeInterval,
        NullReason::Error,
        NullReason::Cancelled,
        NullReason::ResponseCache,
        NullReason::ImplausibleInstant,
        NullReason::OutOfOrder,
    ];

    /// The reason named `name` ([`NullReason::as_str`]).
    pub fn from_name(name: &str) -> Option<NullReason> {
        NullReason::ALL.into_iter().find(|r| r.as_str() == name)
    }

    /// The reason's name in output (`"not_logged"`, `"one_token"`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            NullReason::NotLogged => "not_logged",
            NullReason::Unparseable => "unparseable",
            NullReason::NotStreamed => "not_streamed",
            NullReason::OneToken => "one_token",
            NullReason::Sentinel => "sentinel",
            NullReason::NegativeInterval => "negative_interval",
            NullReason::Error => "error",
            NullReason::Cancelled => "cancelled",
            NullReason::ResponseCache => "response_cache",
            NullReason::ImplausibleInstant => "implausible_instant",
            NullReason::OutOfOrder => "out_of_order",
        }
    }
}

/// A metric value in nanoseconds (fractional for TPOT), or why it is null.
pub(crate) type Value = Result<f64, NullReason>;

/// Prefix-cache class of a request (SPEC section 2, `cache`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CacheClass {
    /// `cached / input >= hit ratio` (default 0.5).
    Hit,
    /// Some prompt tokens cached, fewer than the hit ratio.
    Partial,
    /// No prompt token cached (`cached_tokens == 0`).
    Miss,
    /// A gateway's response cache answered.
    Response,
}

impl CacheClass {
    /// Every class, in declaration order.
    pub const ALL: [CacheClass; 4] = [
        CacheClass::Hit,
        CacheClass::Partial,
        CacheClass::Miss,
        CacheClass::Response,
    ];

    /// `"hit"`, `"partial"`, `"miss"` or `"response"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            CacheClass::Hit => "hit",
            CacheClass::Partial => "partial",
            CacheClass::Miss => "miss",
            CacheClass::Response => "response",
        }
    }
}

/// Every derived metric of one request. Durations in ns; `tpot` in ns per token.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metrics {
    /// TTFT: first token - arrival (or - scheduled when that is the format's origin).
    pub ttft: Value,
    /// Where `ttft` is measured from; `None` when TTFT is null.
    pub ttft_origin: Option<Origin>,
    /// What the request's arrival instant is (the line's or its format's, `Arrival` when
    /// neither says): where `e2e` is measured from, and whose clock timed the request (a
    /// gateway's or a client's for `Gateway`, the server's otherwise).
    pub arrival_origin: Origin,
    /// Queue time: scheduled - arrival.
    pub queue: Value,
    /// Prefill: first token - scheduled.
    pub prefill: Value,
    /// Decode: end - first token.
    pub decode: Value,
    /// TPOT: decode / (output tokens - 1).
    pub tpot: Value,
    /// E2E latency: end - arrival.
    pub e2e: Value,
    /// Time to first output (answer) token, logged only: `NotLogged` where the log has none.
    pub ttfot: Value,
    /// Prompt tokens, cached included.
    pub input_tokens: Option<u64>,
    /// Cached prompt tokens.
    pub cached_tokens: Option<u64>,
    /// Generated tokens.
    pub output_tokens: Option<u64>,
    /// Why `input_tokens`, `cached_tokens` and `output_tokens` (in that order) are null when
    /// the log gave a value that is no count: the zeros of a request that never ran
    /// ([`NullReason::Sentinel`]). `None` for a count that is a value or not logged.
    pub count_nulls: [Option<NullReason>; 3],
    /// Prefix-cache class, `None` when the log does not say.
    pub cache: Option<CacheClass>,
    /// How the request ended.
    pub outcome: Outcome,
    /// True when some interval came out negative (the metric is null, the line is counted).
    pub negative_interval: bool,
    /// True when the record's instants are out of order (the metrics using them are null,
    /// the line is counted).
    pub out_of_order: bool,
    /// True when a logged duration and the one its instants give differ by more than 1 ms
    /// (the logged one is used, the line is counted).
    pub duration_mismatch: bool,
    /// The mismatched durations a unit apart from their instants' ([`UnitOff`]).
    pub unit_off: UnitOff,
    /// True when the log gave token gaps that are not readable as durations (`itl_ms` is then
    /// null for the request, `unparseable`).
    pub itl_unreadable: bool,
    /// True when a token gap the log gave came out negative (`itl_ms` is then null for the
    /// request, `negative_interval`).
    pub itl_negative: bool,
}

/// The logged durations that are a thousandth (`small`) or a thousand times (`large`) of the
/// one their instants give, within 1%, as [`instants`] bits of the interval's end (queue:
/// `SCHEDULED`, prefill and TTFT: `FIRST_TOKEN`, decode: `END`, E2E: `LOGGED_AT`): seconds read
/// as ms, or ms read as seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UnitOff {
    /// Logged a thousandth of the instants' (seconds read as ms).
    pub small: u8,
    /// Logged a thousand times the instants' (ms read as seconds).
    pub large: u8,
    /// A logged TTFT (`FIRST_TOKEN`) or decode (`END`) ten times or more the E2E latency the
    /// instants give (ms read as seconds): it is out of order, and so are the others.
    pub past: u8,
}

/// Classifies a prompt by its cached share (SPEC section 2).
///
/// `hit_ratio` is `--cache-hit-ratio` (default 0.5). `None` when the cached count is unknown,
/// or when it is positive but the prompt length is unknown.
///
/// ```text
/// use tokentime::metrics::{cache_class, CacheClass};
/// assert_eq!(cache_class(Some(68), Some(60), 0.5), Some(CacheClass::Hit));
/// assert_eq!(cache_class(Some(1235), Some(40), 0.5), Some(CacheClass::Partial));
/// assert_eq!(cache_class(Some(56), Some(0), 0.5), Some(CacheClass::Miss));
/// assert_eq!(cache_class(Some(56), None, 0.5), None);
/// assert_eq!(cache_class(Some(1000), Some(1500), 0.5), None);
/// ```
pub(crate) fn cache_class(
    input: Option<u64>,
    cached: Option<u64>,
    hit_ratio: f64,
) -> Option<CacheClass> {
    let cached = cached?;
    if cached == 0 {
        return Some(CacheClass::Miss);
    }
    // More cached than prompt tokens: the two counts are not of the same prompt (an input
    // count that leaves the cached ones out, as Anthropic's does): no share to tell.
    let input = input.filter(|&i| i > 0 && cached <= i)?;
    if cached as f64 / input as f64 >= hit_ratio {
        Some(CacheClass::Hit)
    } else {
        Some(CacheClass::Partial)
    }
}

/// `b - a` (ns) for two instants whose difference is past `i64` (a year 1700 and a year 2200
/// timestamp), positive or negative all the same: in `i128`, whose conversion to `f64` is
/// slow, so it is kept off the common path (where the `i64` difference rounds the same).
#[cold]
fn wide_interval(a: i64, b: i64) -> Value {
    Ok((i128::from(b) - i128::from(a)) as f64)
}

/// Derives every metric of one request (SPEC section 2).
///
/// Each interval is taken from the logged duration when there is one, else from the two
/// instants. Rules: a negative interval is null (`NegativeInterval`) and flagged; a TTFT of
/// exactly 0, or a first-token instant equal to the end on a response with more than one
/// token, is the producer's sentinel; TPOT needs at least 2 output tokens and divides by
/// `n - 1`; an error or a response-cache answer has no latency sample; a cancellation keeps
/// TTFT and nulls the rest.
///
/// The steps below run in this order, each a function of its own; none allocates (this runs
/// once per request).
///
/// ```text
/// use tokentime::metrics::{derive, Timeline, Origin};
/// // llama.cpp timings: prompt_ms 862.155, predicted_ms 1157.628, predicted_n 64.
/// let t = Timeline { prefill: Some(862_155_000), decode: Some(1_157_628_000),
///                    output_tokens: Some(64), ..Timeline::default() };
/// let m = derive(&t, 0.5);
/// assert_eq!(m.ttft, Ok(862_155_000.0));
/// assert_eq!(m.ttft_origin, Some(Origin::Scheduled));
/// assert_eq!(m.tpot, Ok(1_157_628_000.0 / 63.0));
/// ```
pub(crate) fn derive(t: &Timeline, hit_ratio: f64) -> Metrics {
    let mut d = Draft::measure(t);
    d.ttft_from_parts(t);
    // A field present but unreadable held the value the log meant: what it would give is not
    // made up from the others (a LiteLLM E2E from the first token and llama.cpp's decode where
    // `endTime` is unreadable), and stays null, `unparseable`.
    let end_unread = t.unreadable & (unread::END | unread::E2E) != 0;
    if !end_unread {
        d.e2e_from_parts();
    }
    if d.first_token_seen {
        d.zero_ttft_is_sentinel();
    }
    if !end_unread {
        if !t.e2e_as_written {
            d.e2e_from_ttft_and_decode();
        }
        d.e2e_from_logged_at(t);
    }
    if t.unreadable & unread::DECODE == 0 {
        d.decode_from_e2e_and_ttft();
    }
    if d.first_token_seen {
        d.streamed_sentinels(t);
    } else {
        d.not_streamed(t);
    }
    d.implausible(t);
    d.out_of_order(t);
    d.decode_follows_its_operands(t);
    d.zero_durations(t);
    let tpot = tpot(d.decode, t);
    d.finish(t, tpot, hit_ratio)
}

/// The metrics of one request while [`derive`] works them out.
struct Draft {
    /// The arrival instant: logged, or the end less the logged E2E (Ollama: `created_at -
    /// total_duration`).
    arrival: Option<i64>,
    /// The response was streamed (or the log does not say it was not): a first token exists.
    first_token_seen: bool,
    ttft: Value,
    ttft_origin: Option<Origin>,
    queue: Value,
    prefill: Value,
    decode: Value,
    e2e: Value,
    /// Some interval came out negative.
    negative: bool,
    /// The intervals whose logged duration and instants differ by more than 1 ms
    /// ([`Flags::mismatch`]).
    mismatch: u8,
    /// Of those, the ones a unit apart ([`Flags::unit_off`]).
    unit_off: UnitOff,
    /// The instants are out of order.
    out_of_order: bool,
    /// Every logged duration is 0 (vLLM's stats of a request that never ran): its token
    /// counts of 0 are no counts either.
    never_ran: bool,
}

/// How far a logged duration and the one its instants give may differ before the pair is
/// counted as a mismatch (ns): 1 ms.
const MISMATCH_NS: f64 = 1e6;

/// The flags [`interval`] raises while measuring.
#[derive(Default)]
struct Flags {
    /// Some interval came out negative.
    negative: bool,
    /// The intervals whose logged duration and instants differ by more than
    /// [`MISMATCH_NS`], as [`instants`] bits of the interval's end (queue: `SCHEDULED`,
    /// prefill and TTFT: `FIRST_TOKEN`, decode: `END`, E2E: `LOGGED_AT`).
    mismatch: u8,
    /// Of those, the ones a unit apart.
    unit_off: UnitOff,
}

/// An interval as a metric: the duration the producer logged when there is one (it wins over
/// the one its instants give, which may be instants of another process or rounded; a
/// difference of more than 1 ms sets `mismatch`), else `to - from`. `instants_win` reverses
/// the order for a duration tokentime adds up from a format's parts (Ollama's TTFT: load +
/// prompt eval), which the producer never logged as such. A negative interval is null and
/// sets `negative`.
#[inline]
fn interval(
    from: Option<i64>,
    to: Option<i64>,
    logged: Option<i64>,
    instants_win: bool,
    bit: u8,
    flags: &mut Flags,
) -> Value {
    let derived = match (from, to) {
        (Some(a), Some(b)) => Some(match b.checked_sub(a) {
            Some(d) => Ok(d as f64),
            None => wide_interval(a, b),
        }),
        _ => None,
    };
    let v = match (derived, logged) {
        (Some(d), None) => d,
        (Some(d), Some(_)) if instants_win => d,
        (Some(Ok(d)), Some(l)) => {
            if (d - l as f64).abs() > MISMATCH_NS {
                flags.mismatch |= bit;
                let ratio = d / l as f64;
                if (ratio / 1000.0 - 1.0).abs() <= 0.01 {
                    flags.unit_off.small |= bit;
                } else if (ratio * 1000.0 - 1.0).abs() <= 0.01 {
                    flags.unit_off.large |= bit;
                }
            }
            Ok(l as f64)
        }
        (Some(Err(_)), Some(l)) | (None, Some(l)) => Ok(l as f64),
        (None, None) => Err(NullReason::NotLogged),
    };
    match v {
        Ok(v) if v < 0.0 => {
            flags.negative = true;
            Err(NullReason::NegativeInterval)
        }
        v => v,
    }
}

/// TPOT: decode / (output tokens - 1), null with decode's reason, or for want of two tokens.
#[inline]
fn tpot(decode: Value, t: &Timeline) -> Value {
    match (decode, t.output_tokens) {
        (Err(r), _) => Err(r),
        (Ok(_), None) => Err(NullReason::NotLogged),
        (Ok(_), Some(n)) if n < 2 => Err(NullReason::OneToken),
        (Ok(d), Some(n)) => Ok(d / (n - 1) as f64),
    }
}

impl Draft {
    /// Every interval from its two instants or its logged duration.
    #[inline]
    fn measure(t: &Timeline) -> Draft {
        use instants::{END, FIRST_TOKEN, LOGGED_AT, SCHEDULED};
        let mut f = Flags::default();
        let arrival = t.arrival.or_else(|| t.end?.checked_sub(t.e2e?));
        let (s, f1, end, e2) = (SCHEDULED, FIRST_TOKEN, END, LOGGED_AT);
        let queue = interval(arrival, t.scheduled, t.queue, false, s, &mut f);
        let prefill = interval(t.scheduled, t.first_token, t.prefill, false, f1, &mut f);
        let ttft = interval(arrival, t.first_token, t.ttft, t.ttft_summed, f1, &mut f);
        let decode = interval(t.first_token, t.end, t.decode, false, end, &mut f);
        let e2e = interval(arrival, t.end, t.e2e, false, e2, &mut f);
        Draft {
            arrival,
            first_token_seen: t.streamed != Some(false),
            prefill,
            ttft,
            ttft_origin: t.arrival_origin.or(Some(Origin::Arrival)),
            decode,
            e2e,
            queue,
            negative: f.negative,
            mismatch: f.mismatch,
            unit_off: f.unit_off,
            out_of_order: false,
            never_ran: false,
        }
    }

    /// A TTFT not logged is queue + prefill, or the prefill alone from `scheduled` when
    /// nothing of the queue is known.
    #[inline]
    fn ttft_from_parts(&mut self, t: &Timeline) {
        if self.ttft != Err(NullReason::NotLogged) {
            return;
        }
        if self.queue == Err(NullReason::NegativeInterval)
            || self.prefill == Err(NullReason::NegativeInterval)
        {
            self.ttft = Err(NullReason::NegativeInterval);
        } else if let (Ok(q), Ok(p)) = (self.queue, self.prefill) {
            self.ttft = Ok(q + p);
        } else if self.arrival.is_none() && t.queue.is_none() && self.prefill.is_ok() {
            self.ttft = self.prefill;
            self.ttft_origin = Some(Origin::Scheduled);
        }
    }

    /// An E2E not logged is queue + prefill + decode.
    #[inline]
    fn e2e_from_parts(&mut self) {
        if self.e2e == Err(NullReason::NotLogged)
            && let (Ok(q), Ok(p), Ok(d)) = (self.queue, self.prefill, self.decode)
        {
            self.e2e = Ok(q + p + d);
        }
    }

    /// A TTFT of exactly 0 is the producer's "none" (Helicone writes 0 for calls without a
    /// first token): null, and it must not leave the whole E2E as a decode.
    #[inline]
    fn zero_ttft_is_sentinel(&mut self) {
        if self.ttft == Ok(0.0) {
            self.ttft = Err(NullReason::Sentinel);
            if self.decode == Err(NullReason::NotLogged) && self.e2e.is_ok() {
                self.decode = Err(NullReason::Sentinel);
            }
        }
    }

    /// TTFT from the request's start plus the decode is the E2E latency (benchmark clients
    /// log the two parts); not from `scheduled`, which would leave the queue out.
    #[inline]
    fn e2e_from_ttft_and_decode(&mut self) {
        if self.e2e != Err(NullReason::NotLogged) || self.ttft_origin == Some(Origin::Scheduled) {
            return;
        }
        // A part that is an anomaly (negative, out of order, no plausible time) leaves the
        // E2E it would make null for that reason: it was logged, not "not logged".
        let anomaly = |v: Value| match v {
            Err(
                r @ (NullReason::NegativeInterval
                | NullReason::OutOfOrder
                | NullReason::ImplausibleInstant),
            ) => Some(r),
            _ => None,
        };
        match (self.ttft, self.decode) {
            (Ok(f), Ok(d)) => self.e2e = Ok(f + d),
            (Ok(_), part) | (part, Ok(_)) => {
                if let Some(r) = anomaly(part) {
                    self.e2e = Err(r);
                }
            }
            _ => {}
        }
    }

    /// The line's time is the end where no end is logged (`logged_at`): the last source of
    /// an E2E, after the logged one and its parts (the line may be written after the
    /// response).
    #[inline]
    fn e2e_from_logged_at(&mut self, t: &Timeline) {
        if self.e2e == Err(NullReason::NotLogged) && t.end.is_none() && t.logged_at.is_some() {
            let mut f = Flags::default();
            self.e2e = interval(t.arrival, t.logged_at, None, false, 0, &mut f);
            self.negative |= f.negative;
        }
    }

    /// E2E and TTFT from the same origin leave the decode (Kong, Helicone, NIM, Bedrock).
    #[inline]
    fn decode_from_e2e_and_ttft(&mut self) {
        if self.decode == Err(NullReason::NotLogged)
            && let (Ok(e), Ok(f)) = (self.e2e, self.ttft)
        {
            self.decode = if e >= f {
                Ok(e - f)
            } else {
                self.negative = true;
                Err(NullReason::NegativeInterval)
            };
        }
    }

    /// A decode the E2E less the TTFT would give ([`Draft::decode_from_e2e_and_ttft`]), where
    /// one of them is null for what the log holds, not for want of a field: the decode is
    /// null for that too, not `not_logged`. A negative or out-of-order operand makes it
    /// `out_of_order` (a TTFT of -50 ms, an end before the arrival), an implausible instant
    /// `implausible_instant`, an unreadable value `unparseable`.
    #[inline]
    fn decode_follows_its_operands(&mut self, t: &Timeline) {
        if self.decode != Err(NullReason::NotLogged) || t.decode.is_some() {
            return;
        }
        let why = |v: Value| match v {
            Ok(_) => Some(None),
            Err(NullReason::NegativeInterval | NullReason::OutOfOrder) => {
                Some(Some(NullReason::OutOfOrder))
            }
            Err(r @ (NullReason::ImplausibleInstant | NullReason::Unparseable)) => Some(Some(r)),
            Err(_) => None,
        };
        if let (Some(e), Some(f)) = (why(self.e2e), why(self.ttft))
            && let Some(r) = e.or(f)
        {
            self.decode = Err(r);
        }
    }

    /// The gateway saw no first token; durations an upstream server logged into the same
    /// record (LiteLLM keeps llama.cpp's `timings`) still stand.
    #[inline]
    fn not_streamed(&mut self, t: &Timeline) {
        // A first-token instant of a response not streamed is no first token: whatever it
        // gives is no sample, so no disagreement with a logged duration either.
        self.mismatch &= !(instants::FIRST_TOKEN | instants::END);
        self.unit_off.small &= !(instants::FIRST_TOKEN | instants::END);
        self.unit_off.large &= !(instants::FIRST_TOKEN | instants::END);
        self.ttft = Err(NullReason::NotStreamed);
        let logged = |v: Option<i64>| match v {
            Some(v) if v >= 0 => Ok(v as f64),
            _ => Err(NullReason::NotStreamed),
        };
        self.prefill = logged(t.prefill);
        self.decode = logged(t.decode);
    }

    /// The producers' placeholders on a streamed response: a TTFT or an E2E of 0, a first
    /// chunk logged at the very end of a multi-token response.
    #[inline]
    fn streamed_sentinels(&mut self, t: &Timeline) {
        if self.ttft == Ok(0.0) {
            self.ttft = Err(NullReason::Sentinel);
        }
        if self.e2e == Ok(0.0) && t.output_tokens != Some(0) {
            self.e2e = Err(NullReason::Sentinel);
        }
        if let (Some(f), Some(e)) = (t.first_token, t.end)
            && f == e
            && t.decode.is_none()
            && t.output_tokens.is_some_and(|n| n > 1)
        {
            self.ttft = Err(NullReason::Sentinel);
            self.decode = Err(NullReason::Sentinel);
        }
    }

    /// A metric not logged for want of an instant is `implausible_instant` when that instant
    /// was logged outside the window, and every other instant it needs is there or
    /// implausible too (a queue is `not_logged` where no `scheduled` is logged at all).
    #[inline]
    fn implausible(&mut self, t: &Timeline) {
        use instants::{ARRIVAL, END, FIRST_TOKEN, LOGGED_AT, SCHEDULED};
        if t.implausible == 0 {
            return;
        }
        let known = t.present_instants() | t.implausible;
        // E2E ends at the line's time where no end is logged.
        let end = if known & END != 0 { END } else { LOGGED_AT };
        for (v, needs) in [
            (&mut self.ttft, ARRIVAL | FIRST_TOKEN),
            (&mut self.queue, ARRIVAL | SCHEDULED),
            (&mut self.prefill, SCHEDULED | FIRST_TOKEN),
            (&mut self.decode, FIRST_TOKEN | END),
            (&mut self.e2e, ARRIVAL | end),
        ] {
            if *v == Err(NullReason::NotLogged)
                && known & needs == needs
                && t.implausible & needs != 0
            {
                *v = Err(NullReason::ImplausibleInstant);
            }
        }
    }

    /// Instants out of order (arrival <= scheduled <= first token <= end, each pair that is
    /// logged): the interval between two that disagree is negative (null, counted as such),
    /// and every other metric that uses one of them is null, `out_of_order`, since which one
    /// is wrong is unknown. Also a TTFT or a decode longer than the E2E (by more than a
    /// microsecond), however they came (logged durations that disagree): all three null,
    /// `out_of_order`.
    #[inline]
    fn out_of_order(&mut self, t: &Timeline) {
        use instants::{ARRIVAL, END, FIRST_TOKEN, SCHEDULED};
        let ordered = [
            (t.arrival, ARRIVAL),
            (t.scheduled, SCHEDULED),
            (t.first_token, FIRST_TOKEN),
            (t.end, END),
        ];
        let mut suspect = 0u8;
        for (i, &(a, abit)) in ordered.iter().enumerate() {
            for &(b, bbit) in &ordered[i + 1..] {
                if let (Some(a), Some(b)) = (a, b)
                    && a > b
                {
                    suspect |= abit | bbit;
                }
            }
        }
        if suspect != 0 {
            self.out_of_order = true;
            for (v, uses) in [
                (&mut self.ttft, ARRIVAL | SCHEDULED | FIRST_TOKEN),
                (&mut self.queue, ARRIVAL | SCHEDULED),
                (&mut self.prefill, SCHEDULED | FIRST_TOKEN),
                (&mut self.decode, FIRST_TOKEN | END),
                (&mut self.e2e, ARRIVAL | END),
            ] {
                if v.is_ok() && suspect & uses != 0 {
                    *v = Err(NullReason::OutOfOrder);
                }
            }
        }
        // By more than a microsecond: a TTFT logged in float seconds next to an E2E of two
        // integer-ns instants may exceed it by a rounded nanosecond (vLLM's OTLP spans).
        let longer =
            |part: Value, whole: Value| matches!((part, whole), (Ok(p), Ok(w)) if p > w + 1e3);
        if longer(self.ttft, self.e2e) || longer(self.decode, self.e2e) {
            self.out_of_order = true;
            // A logged part far past an E2E of two instants: its unit, most likely.
            if t.e2e.is_none()
                && let Ok(whole) = self.e2e
                && whole > 0.0
            {
                let far = |part: Value, logged: Option<i64>| {
                    logged.is_some() && matches!(part, Ok(p) if p >= 10.0 * whole)
                };
                if far(self.ttft, t.ttft) {
                    self.unit_off.past |= FIRST_TOKEN;
                }
                if far(self.decode, t.decode) {
                    self.unit_off.past |= END;
                }
            }
            for v in [&mut self.ttft, &mut self.decode, &mut self.e2e] {
                if v.is_ok() {
                    *v = Err(NullReason::OutOfOrder);
                }
            }
        }
    }

    /// Zero durations where a positive one is required are the producer's "none" (vLLM
    /// writes 0 for every duration it did not measure): a prefill of 0 (a first token takes
    /// time), a decode of 0 over two or more tokens; and when every logged duration is 0,
    /// the queue as well.
    #[inline]
    fn zero_durations(&mut self, t: &Timeline) {
        let logged = [t.ttft, t.queue, t.prefill, t.decode, t.e2e];
        let all_zero = logged.iter().any(Option::is_some)
            && logged.iter().all(|v| v.is_none_or(|v| v == 0))
            && logged.iter().filter(|v| v.is_some()).count() > 1;
        if self.prefill == Ok(0.0) {
            self.prefill = Err(NullReason::Sentinel);
        }
        if self.decode == Ok(0.0) && t.output_tokens.is_some_and(|n| n > 1) {
            self.decode = Err(NullReason::Sentinel);
        }
        if all_zero {
            self.never_ran = true;
            for v in [
                &mut self.ttft,
                &mut self.queue,
                &mut self.prefill,
                &mut self.decode,
                &mut self.e2e,
            ] {
                if *v == Ok(0.0) {
                    *v = Err(NullReason::Sentinel);
                }
            }
        }
    }

    /// The outcome's and the response cache's nulls, the token counts and the cache class:
    /// the finished [`Metrics`].
    #[inline]
    fn finish(mut self, t: &Timeline, mut tpot: Value, hit_ratio: f64) -> Metrics {
        // A failed call's token counts are the producer's zeros (LiteLLM, Helicone write 0 on
        // failure), not measurements: neither counts nor a cache class come from them.
        // Nor are the zero counts of a request whose every duration is 0 (vLLM's
        // `FinishedRequestStats` of a request that never ran: its defaults): they are null,
        // `sentinel`.
        let failed = matches!(t.outcome, Outcome::Error);
        let never_ran = self.never_ran;
        let count = |v: Option<u64>| {
            if (failed || never_ran) && v == Some(0) {
                None
            } else {
                v
            }
        };
        // Evaluated and cached tokens make up the prompt (llama.cpp's `prompt_n` and
        // `cache_n`): each of the three follows from the other two.
        let input_tokens = t
            .input_tokens
            .or_else(|| t.cached_tokens?.checked_add(t.evaluated_tokens?));
        let cached_tokens = t
            .cached_tokens
            .or_else(|| t.input_tokens?.checked_sub(t.evaluated_tokens?));
        let count_null =
            |v: Option<u64>| (never_ran && !failed && v == Some(0)).then_some(NullReason::Sentinel);
        // A count the log gives in a form not readable as one is `unparseable`.
        let unreadable = |v: Option<u64>, bit: u32| {
            (v.is_none() && t.unreadable & bit != 0).then_some(NullReason::Unparseable)
        };
        let count_nulls = [
            count_null(input_tokens).or(unreadable(input_tokens, unread::TOKENS[0])),
            count_null(cached_tokens).or(unreadable(cached_tokens, unread::TOKENS[1])),
            count_null(t.output_tokens).or(unreadable(t.output_tokens, unread::TOKENS[2])),
        ];
        let cache = if t.response_cache {
            Some(CacheClass::Response)
        } else {
            cache_class(count(input_tokens), count(cached_tokens), hit_ratio)
        };
        // Output tokens prove the first token came, also where no TTFT is logged (SGLang, TGI).
        let reached_first = self.ttft.is_ok() || t.output_tokens.is_some_and(|n| n > 0);
        let outcome = match t.outcome {
            Outcome::Cancelled if !reached_first => Outcome::Error,
            o => o,
        };
        match outcome {
            Outcome::Error => self.null_all(&mut tpot, NullReason::Error),
            Outcome::Cancelled => {
                for v in [&mut self.decode, &mut tpot, &mut self.e2e] {
                    *v = Err(NullReason::Cancelled);
                }
            }
            Outcome::Ok => {}
        }
        if t.response_cache {
            self.null_all(&mut tpot, NullReason::ResponseCache);
        }
        Metrics {
            ttft: self.ttft,
            ttft_origin: if self.ttft.is_err() {
                None
            } else {
                self.ttft_origin
            },
            arrival_origin: t.arrival_origin.unwrap_or_default(),
            queue: self.queue,
            prefill: self.prefill,
            decode: self.decode,
            tpot,
            e2e: self.e2e,
            ttfot: match t.ttfot {
                None => Err(NullReason::NotLogged),
                Some(_) if outcome == Outcome::Error => Err(NullReason::Error),
                Some(_) if t.response_cache => Err(NullReason::ResponseCache),
                Some(v) if v < 0 => Err(NullReason::NegativeInterval),
                Some(v) => Ok(v as f64),
            },
            input_tokens: count(input_tokens),
            cached_tokens: count(cached_tokens),
            output_tokens: count(t.output_tokens),
            count_nulls,
            cache,
            outcome,
            negative_interval: self.negative || t.negative_gap,
            out_of_order: self.out_of_order,
            duration_mismatch: self.mismatch != 0,
            unit_off: self.unit_off,
            itl_unreadable: t.unreadable & unread::ITL != 0,
            itl_negative: t.negative_gap,
        }
    }

    /// Every latency null for `reason` (a failed request, a response-cache answer).
    #[inline]
    fn null_all(&mut self, tpot: &mut Value, reason: NullReason) {
        for v in [
            &mut self.ttft,
            &mut self.queue,
            &mut self.prefill,
            &mut self.decode,
            tpot,
            &mut self.e2e,
        ] {
            *v = Err(reason);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    #[test]
    fn interval_prefers_instants_and_flags_negatives() {
        let mut f = Flags::default();
        // The logged duration wins; within 1 ms of the instants it is no mismatch.
        assert_eq!(
            interval(Some(1), Some(4), Some(9), false, 1, &mut f),
            Ok(9.0)
        );
        assert_eq!(f.mismatch, 0);
        assert_eq!(
            interval(Some(1), Some(4), Some(9), true, 1, &mut f),
            Ok(3.0)
        );
        assert_eq!(interval(None, Some(4), Some(9), false, 1, &mut f), Ok(9.0));
        assert_eq!(
            interval(None, None, None, false, 1, &mut f),
            Err(NullReason::NotLogged)
        );
        assert!(!f.negative);
        assert_eq!(
            interval(Some(4), Some(1), None, false, 1, &mut f),
            Err(NullReason::NegativeInterval)
        );
        assert!(f.negative);
        let mut f = Flags::default();
        assert_eq!(
            interval(Some(0), Some(1000 * MS), Some(1100 * MS), false, 1, &mut f),
            Ok(1100e6)
        );
        assert!(f.mismatch == 1 && !f.negative);
    }

    #[test]
    fn tpot_needs_two_tokens() {
        let t = |n: Option<u64>| Timeline {
            output_tokens: n,
            ..Timeline::default()
        };
        assert_eq!(tpot(Ok(90.0), &t(Some(10))), Ok(10.0));
        assert_eq!(tpot(Ok(90.0), &t(Some(1))), Err(NullReason::OneToken));
        assert_eq!(tpot(Ok(90.0), &t(None)), Err(NullReason::NotLogged));
        assert_eq!(
            tpot(Err(NullReason::Sentinel), &t(Some(10))),
            Err(NullReason::Sentinel)
        );
    }

    fn litellm(start: i64, first: i64, end: i64, out: u64, streamed: bool) -> Timeline {
        Timeline {
            arrival: Some(start),
            first_token: Some(first),
            end: Some(end),
            output_tokens: Some(out),
            streamed: Some(streamed),
            arrival_origin: Some(Origin::Gateway),
            ..Timeline::default()
        }
    }

    #[test]
    fn gateway_stream_by_hand() {
        // start 1000 ms, first chunk 1412.5 ms, end 3062.5 ms, 67 tokens:
        // TTFT 412.5, decode 1650, TPOT 1650/66 = 25, E2E 2062.5.
        let m = derive(
            &litellm(1000 * MS, 1_412_500_000, 3_062_500_000, 67, true),
            0.5,
        );
        assert_eq!(m.ttft, Ok(412.5e6));
        assert_eq!(m.decode, Ok(1650e6));
        assert_eq!(m.tpot, Ok(25e6));
        assert_eq!(m.e2e, Ok(2062.5e6));
        assert_eq!(m.ttft_origin, Some(Origin::Gateway));
        assert_eq!(m.queue, Err(NullReason::NotLogged));
    }

    /// An end present but unreadable leaves the E2E not logged (made `unparseable` by the
    /// reader), not the first token plus a logged decode: a non-streamed LiteLLM call's first
    /// token is its end, so that sum counts the decode twice. A count present but unreadable
    /// is `unparseable`.
    #[test]
    fn an_unreadable_end_or_count_is_not_made_up() {
        let mut t = litellm(0, 500 * MS, 500 * MS, 10, false);
        t.end = None;
        t.decode = Some(300 * MS);
        t.output_tokens = None;
        assert_eq!(derive(&t, 0.5).e2e, Ok(800e6));
        t.unreadable = unread::END | unread::TOKENS[2];
        let m = derive(&t, 0.5);
        assert_eq!(m.e2e, Err(NullReason::NotLogged));
        assert_eq!(m.decode, Ok(300e6));
        assert_eq!(m.count_nulls, [None, None, Some(NullReason::Unparseable)]);
    }

    #[test]
    fn non_streamed_call_has_no_ttft_but_keeps_e2e() {
        let m = derive(&litellm(0, 500 * MS, 500 * MS, 10, false), 0.5);
        assert_eq!(m.ttft, Err(NullReason::NotStreamed));
        assert_eq!(m.tpot, Err(NullReason::NotStreamed));
        assert_eq!(m.e2e, Ok(500e6));
        assert_eq!(m.ttft_origin, None);
    }

    #[test]
    fn tpot_is_null_for_one_token_never_zero() {
        let m = derive(&litellm(0, 100 * MS, 100 * MS, 1, true), 0.5);
        assert_eq!(m.tpot, Err(NullReason::OneToken));
        assert_eq!(
            m.ttft,
            Ok(100e6),
            "a one-token stream's first chunk at the end is real"
        );
    }

    #[test]
    fn tpot_divides_by_n_minus_one() {
        // decode 90 ms over 10 tokens = 9 gaps -> 10 ms (dividing by n would say 9).
        let t = Timeline {
            prefill: Some(5 * MS),
            decode: Some(90 * MS),
            output_tokens: Some(10),
            ..Timeline::default()
        };
        assert_eq!(derive(&t, 0.5).tpot, Ok(10e6));
    }

    #[test]
    fn first_chunk_equal_to_end_on_a_long_stream_is_a_sentinel() {
        let m = derive(&litellm(0, 900 * MS, 900 * MS, 50, true), 0.5);
        assert_eq!(m.ttft, Err(NullReason::Sentinel));
        assert_eq!(m.tpot, Err(NullReason::Sentinel));
    }

    #[test]
    fn zero_ttft_is_a_sentinel() {
        let t = Timeline {
            ttft: Some(0),
            output_tokens: Some(3),
            ..Timeline::default()
        };
        assert_eq!(derive(&t, 0.5).ttft, Err(NullReason::Sentinel));
    }

    #[test]
    fn zero_ttft_leaves_no_decode_behind() {
        // Helicone: delay 4126 ms, time_to_first_token 0 (its "none"), 412 tokens. Taking
        // decode = 4126 - 0 would report a TPOT of 10.04 ms that nobody measured.
        let t = Timeline {
            e2e: Some(4126 * MS),
            ttft: Some(0),
            output_tokens: Some(412),
            ..Timeline::default()
        };
        let m = derive(&t, 0.5);
        assert_eq!(m.ttft, Err(NullReason::Sentinel));
        assert_eq!(m.decode, Err(NullReason::Sentinel));
        assert_eq!(m.tpot, Err(NullReason::Sentinel));
        assert_eq!(m.e2e, Ok(4126e6));
    }

    /// A decode that would be the E2E less a logged TTFT is null for what the log holds, not
    /// `not_logged` (it was logged): a TTFT of -50 ms or an end before the arrival make it
    /// `out_of_order`, an arrival in the year 5000 `implausible_instant`; TPOT follows.
    #[test]
    fn a_decode_from_null_operands_says_why() {
        const S: i64 = 1_767_225_600 * 1_000_000_000;
        let base = Timeline {
            arrival: Some(S),
            end: Some(S + 1000 * MS),
            ttft: Some(100 * MS),
            output_tokens: Some(10),
            ..Timeline::default()
        };
        let m = derive(&base, 0.5);
        assert_eq!(m.decode, Ok(900e6));
        let negative_ttft = Timeline {
            ttft: Some(-50 * MS),
            ..base
        };
        let m = derive(&negative_ttft, 0.5);
        assert_eq!(m.ttft, Err(NullReason::NegativeInterval));
        assert_eq!(m.decode, Err(NullReason::OutOfOrder));
        assert_eq!(m.tpot, Err(NullReason::OutOfOrder));
        let end_first = Timeline {
            end: Some(S - 1000 * MS),
            ..base
        };
        let m = derive(&end_first, 0.5);
        assert_eq!(m.e2e, Err(NullReason::NegativeInterval));
        assert_eq!(m.decode, Err(NullReason::OutOfOrder));
        assert_eq!(m.tpot, Err(NullReason::OutOfOrder));
        let far_arrival = Timeline {
            arrival: None,
            implausible: instants::ARRIVAL,
            ..base
        };
        let m = derive(&far_arrival, 0.5);
        assert_eq!(m.e2e, Err(NullReason::ImplausibleInstant));
        assert_eq!(m.decode, Err(NullReason::ImplausibleInstant));
        assert_eq!(m.tpot, Err(NullReason::ImplausibleInstant));
    }

    #[test]
    fn a_failed_calls_zero_counts_make_no_cache_class() {
        // Helicone 429: prompt_cache_read_tokens 0, prompt_tokens null.
        let t = Timeline {
            cached_tokens: Some(0),
            outcome: Outcome::Error,
            ..Timeline::default()
        };
        let m = derive(&t, 0.5);
        assert_eq!(m.cached_tokens, None);
        assert_eq!(m.cache, None, "not a miss: nothing ran");
    }

    #[test]
    fn negative_interval_is_null_and_flagged_not_clamped() {
        let m = derive(&litellm(1000 * MS, 900 * MS, 2000 * MS, 5, true), 0.5);
        assert_eq!(m.ttft, Err(NullReason::NegativeInterval));
        assert!(m.negative_interval);
        // The arrival or the first token is wrong, which one is unknown: the E2E from the
        // arrival and the decode from the first token are no samples either.
        assert_eq!(m.e2e, Err(NullReason::OutOfOrder));
        assert_eq!(m.decode, Err(NullReason::OutOfOrder));
        assert_eq!(m.tpot, Err(NullReason::OutOfOrder));
        assert!(m.out_of_order);
    }

    #[test]
    fn a_first_token_after_the_end_nulls_ttft() {
        // R: start 0, first token 4000 ms, end 1000 ms (the TTFT was kept, 4000 ms next to an
        // E2E of 1000 ms).
        let m = derive(&litellm(0, 4000 * MS, 1000 * MS, 11, true), 0.5);
        assert_eq!(m.ttft, Err(NullReason::OutOfOrder));
        assert_eq!(m.decode, Err(NullReason::NegativeInterval));
        assert_eq!(m.e2e, Err(NullReason::OutOfOrder));
        assert!(m.out_of_order && m.negative_interval);
    }

    #[test]
    fn logged_durations_longer_than_the_e2e_are_out_of_order() {
        // Helicone-like: delay 1000 ms, time to first token 4000 ms.
        let t = Timeline {
            e2e: Some(1000 * MS),
            ttft: Some(4000 * MS),
            output_tokens: Some(11),
            ..Timeline::default()
        };
        let m = derive(&t, 0.5);
        assert_eq!(m.ttft, Err(NullReason::OutOfOrder));
        assert_eq!(m.e2e, Err(NullReason::OutOfOrder));
        assert!(m.out_of_order);
    }

    #[test]
    fn vllm_all_zero_durations_make_no_tpot_sample() {
        let t = Timeline {
            queue: Some(0),
            prefill: Some(0),
            decode: Some(0),
            output_tokens: Some(11),
            ..Timeline::default()
        };
        let m = derive(&t, 0.5);
        assert_eq!(m.tpot, Err(NullReason::Sentinel));
        assert_eq!(m.decode, Err(NullReason::Sentinel));
        assert_eq!(m.prefill, Err(NullReason::Sentinel));
        assert_eq!(m.queue, Err(NullReason::Sentinel));
        // A request that never ran: its counts of 0 are vLLM's defaults, null (sentinel); an
        // unlogged count stays unknown without a reason.
        let never = derive(
            &Timeline {
                input_tokens: Some(0),
                output_tokens: Some(0),
                ..t
            },
            0.5,
        );
        assert_eq!((never.input_tokens, never.output_tokens), (None, None));
        assert_eq!(
            never.count_nulls,
            [Some(NullReason::Sentinel), None, Some(NullReason::Sentinel)]
        );
        // A queue of 0 next to real durations is real; a decode of 0 over one token too.
        let t = Timeline {
            queue: Some(0),
            prefill: Some(5 * MS),
            decode: Some(0),
            output_tokens: Some(1),
            ..Timeline::default()
        };
        let m = derive(&t, 0.5);
        assert_eq!(m.queue, Ok(0.0));
        assert_eq!(m.decode, Ok(0.0));
        assert_eq!(m.tpot, Err(NullReason::OneToken));
    }

    #[test]
    fn an_implausible_arrival_nulls_what_needs_it() {
        let mut t = litellm(0, 200 * MS, 1200 * MS, 11, true);
        t.arrival = None;
        t.implausible = instants::ARRIVAL;
        let m = derive(&t, 0.5);
        assert_eq!(m.ttft, Err(NullReason::ImplausibleInstant));
        assert_eq!(m.e2e, Err(NullReason::ImplausibleInstant));
        assert_eq!(m.decode, Ok(1000e6));
        assert_eq!(
            m.queue,
            Err(NullReason::NotLogged),
            "no scheduled time is logged"
        );
        // Another line of the request that gives the arrival makes it known.
        let mut joined = t;
        joined.fill_from(&Timeline {
            arrival: Some(0),
            ..Timeline::default()
        });
        assert_eq!(joined.implausible, 0);
        assert_eq!(derive(&joined, 0.5).ttft, Ok(200e6));
    }

    #[test]
    fn an_interval_past_i64_keeps_its_sign() {
        // -9e18 ns to 9e18 ns: 18e18 ns, more than i64::MAX (9.22e18), and positive.
        let m = derive(
            &litellm(
                -9_000_000_000 * 1000 * MS,
                0,
                9_000_000_000 * 1000 * MS,
                5,
                false,
            ),
            0.5,
        );
        assert_eq!(m.e2e, Ok(18e18));
        assert!(!m.negative_interval);
        let m = derive(&litellm(i64::MAX, 0, i64::MIN, 5, false), 0.5);
        assert_eq!(m.e2e, Err(NullReason::NegativeInterval));
    }

    #[test]
    fn queue_plus_prefill_make_ttft_from_arrival() {
        // vLLM metrics: queue 187.2 ms, ttft-from-scheduling 311.9 ms, generation 5402.6 ms, 512 tokens.
        let t = Timeline {
            queue: Some(187_200_000),
            prefill: Some(311_900_000),
            decode: Some(5_402_600_000),
            output_tokens: Some(512),
            ..Timeline::default()
        };
        let m = derive(&t, 0.5);
        assert_eq!(m.ttft, Ok(499.1e6));
        assert_eq!(m.ttft_origin, Some(Origin::Arrival));
        assert_eq!(m.e2e, Ok(5_901_700_000.0));
        assert_eq!(m.tpot, Ok(5_402_600_000.0 / 511.0));
    }

    #[test]
    fn errors_and_response_cache_have_no_samples() {
        let mut t = litellm(0, 10 * MS, 20 * MS, 5, true);
        t.outcome = Outcome::Error;
        let m = derive(&t, 0.5);
        assert_eq!(m.ttft, Err(NullReason::Error));
        assert_eq!(m.e2e, Err(NullReason::Error));
        let mut t = litellm(0, 10 * MS, 20 * MS, 5, true);
        t.response_cache = true;
        let m = derive(&t, 0.5);
        assert_eq!(m.cache, Some(CacheClass::Response));
        assert_eq!(m.e2e, Err(NullReason::ResponseCache));
    }

    #[test]
    fn cancellation_after_first_token_keeps_ttft() {
        let mut t = litellm(0, 10 * MS, 20 * MS, 5, true);
        t.outcome = Outcome::Cancelled;
        let m = derive(&t, 0.5);
        assert_eq!(m.ttft, Ok(10e6));
        assert_eq!(m.tpot, Err(NullReason::Cancelled));
        assert_eq!(m.e2e, Err(NullReason::Cancelled));
        assert_eq!(m.outcome, Outcome::Cancelled);
        t.first_token = None;
        t.output_tokens = Some(0);
        let m = derive(&t, 0.5);
        assert_eq!(
            m.outcome,
            Outcome::Error,
            "cancelled before the first token counts as an error"
        );
    }

    #[test]
    fn logged_at_is_the_end_when_none_is_logged() {
        // Arrival 1700000000.0 s, first token 0.5 s later, the line written at 2.5 s.
        let s = 1_700_000_000_000_000_000i64;
        let t = Timeline {
            arrival: Some(s),
            first_token: Some(s + 500_000_000),
            logged_at: Some(s + 2_500_000_000),
            output_tokens: Some(11),
            ..Timeline::default()
        };
        let m = derive(&t, 0.5);
        assert_eq!(m.e2e, Ok(2_500_000_000.0));
        assert_eq!(m.ttft, Ok(500_000_000.0));
        assert_eq!(m.decode, Ok(2_000_000_000.0));
        assert_eq!(m.tpot, Ok(200_000_000.0));
        // A logged end, or a logged E2E, comes first.
        let end = Timeline {
            end: Some(s + 2_000_000_000),
            ..t
        };
        assert_eq!(derive(&end, 0.5).e2e, Ok(2_000_000_000.0));
        let e2e = Timeline {
            first_token: None,
            e2e: Some(1_800_000_000),
            ..t
        };
        assert_eq!(derive(&e2e, 0.5).e2e, Ok(1_800_000_000.0));
        // Written before the arrival: a negative interval, flagged.
        let skew = Timeline {
            first_token: None,
            logged_at: Some(s - 1),
            ..t
        };
        let m = derive(&skew, 0.5);
        assert_eq!(m.e2e, Err(NullReason::NegativeInterval));
        assert!(m.negative_interval);
        // No arrival: the line's time alone is no E2E.
        let alone = Timeline {
            arrival: None,
            first_token: None,
            ..t
        };
        assert_eq!(derive(&alone, 0.5).e2e, Err(NullReason::NotLogged));
        // A request joined from the line of its arrival (SGLang's received event, written
        // at the arrival) and a finish line that logs no time: the received line's time is not
        // the finish line's, so no end, no E2E.
        let received = Timeline {
            arrival: Some(s),
            logged_at: Some(s),
            ..Timeline::default()
        };
        let mut finished = Timeline {
            output_tokens: Some(11),
            ..Timeline::default()
        };
        finished.fill_from(&received);
        assert_eq!(finished.arrival, Some(s));
        assert_eq!(finished.logged_at, None);
        assert_eq!(derive(&finished, 0.5).e2e, Err(NullReason::NotLogged));
    }

    #[test]
    fn cancellation_after_tokens_without_a_logged_ttft_is_no_error() {
        // SGLang abort after 40 tokens: no TTFT field, yet the first token came.
        let t = Timeline {
            e2e: Some(900 * MS),
            output_tokens: Some(40),
            outcome: Outcome::Cancelled,
            ..Timeline::default()
        };
        let m = derive(&t, 0.5);
        assert_eq!(m.outcome, Outcome::Cancelled);
        assert_eq!(m.e2e, Err(NullReason::Cancelled));
        assert_eq!(m.ttft, Err(NullReason::NotLogged));
        let t = Timeline {
            output_tokens: Some(0),
            ..t
        };
        assert_eq!(derive(&t, 0.5).outcome, Outcome::Error);
    }

    #[test]
    fn cache_ratio_boundaries() {
        assert_eq!(cache_class(Some(100), Some(50), 0.5), Some(CacheClass::Hit));
        assert_eq!(
            cache_class(Some(100), Some(49), 0.5),
            Some(CacheClass::Partial)
        );
        assert_eq!(cache_class(None, Some(3), 0.5), None);
        assert_eq!(cache_class(None, Some(0), 0.5), Some(CacheClass::Miss));
    }
}

/// The examples in this file's docs, run.
#[cfg(test)]
mod doc_examples {
    use super::*;

    #[test]
    fn example_of_cache_class() {
        assert_eq!(cache_class(Some(68), Some(60), 0.5), Some(CacheClass::Hit));
        assert_eq!(
            cache_class(Some(1235), Some(40), 0.5),
            Some(CacheClass::Partial)
        );
        assert_eq!(cache_class(Some(56), Some(0), 0.5), Some(CacheClass::Miss));
        assert_eq!(cache_class(Some(56), None, 0.5), None);
        // More cached than prompt tokens: counts of two different things, no share.
        assert_eq!(cache_class(Some(1000), Some(1500), 0.5), None);
        assert_eq!(
            cache_class(Some(1000), Some(1000), 0.5),
            Some(CacheClass::Hit)
        );
    }

    #[test]
    fn example_of_derive() {
        // llama.cpp timings: prompt_ms 862.155, predicted_ms 1157.628, predicted_n 64.
        let t = Timeline {
            prefill: Some(862_155_000),
            decode: Some(1_157_628_000),
            output_tokens: Some(64),
            ..Timeline::default()
        };
        let m = derive(&t, 0.5);
        assert_eq!(m.ttft, Ok(862_155_000.0));
        assert_eq!(m.ttft_origin, Some(Origin::Scheduled));
        assert_eq!(m.tpot, Ok(1_157_628_000.0 / 63.0));
    }
}
