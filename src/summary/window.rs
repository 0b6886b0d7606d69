//! Windows of time: `--every`/`--window` (wall time) and `--bucket` (log time), the duration
//! syntax of those flags, and RFC 3339 rendering of epoch instants.
//!
//! Owns the arithmetic of windows: which log-time bucket a request's end falls in, and which
//! wall-time slices make up a sliding window. Holds [`Summary`] values but never reads input
//! or writes output.

use crate::metrics::TimeRange;
use crate::summary::Summary;
use std::collections::{BTreeMap, VecDeque};

/// Parses a flag duration: a number with a unit `ns`, `us`/`µs`, `ms`, `s`, `m`, `h` or `d`
/// (`10s`, `1.5m`, `250ms`), into nanoseconds.
///
/// ```text
/// use tokentime::window::parse_flag_duration;
/// assert_eq!(parse_flag_duration("1m"), Ok(60_000_000_000));
/// assert_eq!(parse_flag_duration("250ms"), Ok(250_000_000));
/// assert!(parse_flag_duration("10").is_err());
/// ```
///
/// # Errors
/// A message when the text is not a positive number with one of those units.
pub(crate) fn parse_flag_duration(s: &str) -> Result<i64, String> {
    let t = s.trim();
    let bad =
        || format!("{s:?} is not a duration (a number and a unit: 800ms, 10s, 5m, 1h, 1d, 1w)");
    // Past `i64::MAX` ns (106751 days and some hours) a duration used to be clamped to it.
    let too_long = || format!("{s:?} is longer than the longest duration, 106751d");
    let scaled = |num: &str, ns: f64| -> Result<i64, String> {
        let v: f64 = num.parse().map_err(|_| bad())?;
        if !(v.is_finite() && v >= 0.0) {
            return Err(bad());
        }
        let v = (v * ns).round();
        // `i64::MAX as f64` is 2^63, one past it.
        if v >= i64::MAX as f64 {
            return Err(too_long());
        }
        Ok(v as i64)
    };
    let ns = if let Some(n) = t.strip_suffix('w') {
        scaled(n, 604_800e9)?
    } else if let Some(n) = t.strip_suffix('d') {
        scaled(n, 86_400e9)?
    } else if let Some(n) = t.strip_suffix('h') {
        scaled(n, 3_600e9)?
    } else if let Some(n) = t.strip_suffix("ms") {
        scaled(n, 1e6)?
    } else if let Some(n) = t.strip_suffix('m') {
        scaled(n, 60e9)?
    } else {
        match crate::format::units::parse_duration_str(t) {
            Some(ns) => ns,
            // A number of seconds (or us, ns) that reads but does not fit.
            None if ["ns", "us", "µs", "μs", "s"]
                .iter()
                .find_map(|u| t.strip_suffix(u))
                .filter(|n| n.starts_with(|c: char| c.is_ascii_digit()))
                .and_then(|n| n.parse::<f64>().ok())
                .is_some_and(|v| v.is_finite() && v >= 1.0) =>
            {
                return Err(too_long());
            }
            None => return Err(bad()),
        }
    };
    Ok(ns)
}

/// Like [`parse_flag_duration`], but zero is refused (an interval or a window).
///
/// # Errors
/// As [`parse_flag_duration`], and for zero.
pub(crate) fn parse_positive_duration(s: &str) -> Result<i64, String> {
    match parse_flag_duration(s)? {
        0 => Err(format!("{s:?}: the duration must be above zero")),
        ns => Ok(ns),
    }
}

/// Renders a duration in ns the way the flags take it (`10s`, `1m`, `1.5s`, `800ms`).
pub(crate) fn format_duration(ns: i64) -> String {
    const UNITS: [(i64, &str); 6] = [
        (86_400_000_000_000, "d"),
        (3_600_000_000_000, "h"),
        (60_000_000_000, "m"),
        (1_000_000_000, "s"),
        (1_000_000, "ms"),
        (1_000, "us"),
    ];
    for (size, unit) in UNITS {
        if ns % size == 0 && ns != 0 {
            return format!("{}{unit}", ns / size);
        }
    }
    for (size, unit) in UNITS[3..].iter() {
        if ns.abs() >= *size {
            return format!("{}{unit}", crate::number::round3(ns as f64 / *size as f64));
        }
    }
    format!("{ns}ns")
}

/// Renders epoch nanoseconds as RFC 3339 UTC with milliseconds (`2026-01-01T00:01:00.000Z`).
///
/// ```text
/// use tokentime::window::rfc3339_ms;
/// assert_eq!(rfc3339_ms(0), "1970-01-01T00:00:00.000Z");
/// assert_eq!(rfc3339_ms(1_767_225_660_123_456_789), "2026-01-01T00:01:00.123Z");
/// ```
pub(crate) fn rfc3339_ms(ns: i64) -> String {
    let secs = ns.div_euclid(1_000_000_000);
    let ms = ns.rem_euclid(1_000_000_000) / 1_000_000;
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        sod / 3600,
        sod % 3600 / 60,
        sod % 60
    )
}

/// An instant as `--since` and `--until` are shown (a window they cut, a digest's span):
/// [`rfc3339_ms`] without the milliseconds when they are 0 (`2026-11-29T15:30:00Z`).
pub(crate) fn flag_time(ns: i64) -> String {
    let t = rfc3339_ms(ns);
    match t.strip_suffix(".000Z") {
        Some(whole) => format!("{whole}Z"),
        None => t,
    }
}

/// The start of the window `width` ns wide that instant `t` (epoch ns) falls in: windows of
/// whole weeks start on Monday 00:00 UTC, as ISO 8601 weeks do; others on multiples of the
/// width since the Unix epoch (a Thursday), so that a `1h` window starts on the hour, a `1d`
/// one at midnight UTC.
pub(crate) fn window_start(t: i64, width: i64) -> i64 {
    let from = window_origin(width);
    t.saturating_sub(from).div_euclid(width) * width + from
}

/// The instant windows `width` ns wide are aligned on: 1970-01-05T00:00:00Z, the first Monday,
/// for whole weeks; the epoch for others.
fn window_origin(width: i64) -> i64 {
    const WEEK: i64 = 604_800_000_000_000;
    if width % WEEK == 0 {
        4 * 86_400_000_000_000
    } else {
        0
    }
}

/// Requests cut into windows of log time by their end instant (`--bucket`): one [`Summary`]
/// per window, windows aligned on multiples of the width since the Unix epoch (a `1m` bucket
/// starts on the minute, UTC; weeks on Monday: [`window_start`]).
///
/// Read as one stream ([`Buckets::streaming`]), a window is complete once a request has been
/// read that ended `grace` or more after the window's end: [`Buckets::take_complete`] takes it
/// out, so memory holds only the windows within `grace` of the latest end read. A request that
/// ends in a window already complete is late: its window is made anew and taken again (a
/// second line for the same window, marked; the only line, marked, when none was written for
/// it), never dropped.
#[derive(Debug, Clone)]
pub struct Buckets {
    /// Width in ns.
    pub width: i64,
    /// Window start (epoch ns) -> the requests that ended in it.
    pub windows: BTreeMap<i64, Summary>,
    /// Requests without an end instant, left out of every window.
    pub unplaced: u64,
    /// Of those, the failed ones (a failure is often logged with no time at all).
    pub unplaced_errors: u64,
    /// How long after a window's end requests may still end in it (ns), when streaming.
    pub grace: i64,
    /// Whether complete windows are taken out as the input goes ([`Buckets::take_complete`]);
    /// otherwise every window is held until the end.
    pub streaming: bool,
    /// The latest end read.
    high: Option<i64>,
    /// Windows starting before this were taken out as complete.
    pub taken_before: Option<i64>,
    /// Requests that ended in a window already taken out.
    pub late: u64,
    /// Windows that miss requests the input held, by start: why, each reason once
    /// (`day5.jsonl.gz not read to its end`, `interrupted`), written with the window, joined
    /// by `; ` (`"partial"`, `(partial)`).
    pub partial: BTreeMap<i64, Vec<String>>,
    /// Whether the last request placed was late: its window, and those of the late requests
    /// before it, are held until a request on time is read (or the end of input), so that a
    /// run of late requests (a file read after a later one) makes a line per window, not one
    /// per request.
    last_late: bool,
    /// `--since`/`--until`: a window they cut is marked partial when made.
    cut: TimeRange,
    /// When streaming for a digest file, which holds every window: the windows taken out and
    /// written, each with the reasons it was partial ([`Buckets::keep`]).
    kept: Option<BTreeMap<i64, (Summary, Vec<String>)>>,
}

impl Buckets {
    /// No windows yet, `width` ns wide, held until the end.
    pub fn new(width: i64) -> Self {
        Buckets {
            width: width.max(1),
            windows: BTreeMap::new(),
            unplaced: 0,
            unplaced_errors: 0,
            grace: 0,
            streaming: false,
            high: None,
            taken_before: None,
            late: 0,
            partial: BTreeMap::new(),
            last_late: false,
            cut: TimeRange::default(),
            kept: None,
        }
    }

    /// The same, holding the requests that ended in `range` only (`--since`, `--until`): the
    /// windows its ends fall inside of are marked partial (`cut by --since ...`).
    #[must_use]
    pub fn cut_by(mut self, range: TimeRange) -> Self {
        self.cut = range;
        self
    }

    /// Marks window `start` partial where `--since` or `--until` falls inside it.
    #[cold]
    fn mark_cut(&mut self, start: i64) {
        let end = start.saturating_add(self.width);
        for (flag, at) in [("since", self.cut.since), ("until", self.cut.until)] {
            if let Some(t) = at.filter(|&t| start < t && t < end) {
                self.mark(start, &format!("cut by --{flag} {}", flag_time(t)));
            }
        }
    }

    /// The same, taking windows out once complete: `grace` ns after their end.
    pub fn streaming(mut self, grace: i64) -> Self {
        self.streaming = true;
        self.grace = grace.max(0);
        self
    }

    /// The same, keeping the windows taken out for a digest file ([`Buckets::keep`],
    /// [`Buckets::restore_kept`]).
    #[must_use]
    pub fn keeping(mut self) -> Self {
        self.kept = Some(BTreeMap::new());
        self
    }

    /// Keeps window `start`, taken out and written, and the reasons it was partial, when
    /// keeping: a window written again (its late requests) is added to the one kept.
    pub fn keep(&mut self, start: i64, summary: Summary, reasons: Option<Vec<String>>) {
        let Some(kept) = &mut self.kept else {
            return;
        };
        let reasons = reasons.unwrap_or_default();
        match kept.entry(start) {
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert((summary, reasons));
            }
            std::collections::btree_map::Entry::Occupied(mut o) => {
                let (s, r) = o.get_mut();
                s.merge(&summary);
                for why in reasons {
                    if !r.contains(&why) {
                        r.push(why);
                    }
                }
            }
        }
    }

    /// Puts the windows kept back among those held, as if none had been taken out (a window
    /// kept and held again, its late requests, as one): what a digest file saves.
    pub fn restore_kept(&mut self) {
        let Some(kept) = self.kept.take() else {
            return;
        };
        for (start, (mut summary, reasons)) in kept {
            if let Some(late) = self.windows.remove(&start) {
                summary.merge(&late);
            }
            self.windows.insert(start, summary);
            for why in reasons {
                self.mark(start, &why);
            }
        }
        self.taken_before = None;
    }

    /// The window a request that ended at `end_ns` belongs to, made from `template` (an empty
    /// summary) when new; `None` (counted as unplaced) without an end instant.
    pub fn window(&mut self, end_ns: Option<i64>, template: &Summary) -> Option<&mut Summary> {
        let Some(end) = end_ns else {
            self.unplaced += 1;
            return None;
        };
        let start = window_start(end, self.width);
        // Complete before this request: every window whose end is `grace` or more before the
        // latest end read, taken out or not (a request read after later ones may be the first
        // of its window, which was never written: it is late all the same, its window a line
        // of late requests, not one that looks complete).
        let complete = self.complete_before();
        self.last_late =
            self.taken_before.is_some_and(|t| start < t) || complete.is_some_and(|c| start < c);
        if self.last_late {
            self.late += 1;
            // Marks its window a repeat (every window before `complete` was taken out, or is
            // one held as a repeat).
            self.taken_before = self.taken_before.max(complete);
        }
        self.high = Some(self.high.map_or(end, |h| h.max(end)));
        if self.cut.is_set() && !self.windows.contains_key(&start) {
            self.mark_cut(start);
        }
        Some(
            self.windows
                .entry(start)
                .or_insert_with(|| template.clone()),
        )
    }

    /// When streaming, the first window start that is not complete: every window before it
    /// ended `grace` or more before the latest end read (`start + width + grace <= high`).
    fn complete_before(&self) -> Option<i64> {
        let high = self.high.filter(|_| self.streaming)?;
        Some(
            high.saturating_sub(self.grace)
                .saturating_sub(self.width)
                .saturating_add(1),
        )
    }

    /// Marks the window of the latest end read as missing requests, for `why` (an input that
    /// stopped early: the requests after those read would have ended there and after).
    pub fn mark_latest(&mut self, why: &str) {
        if let Some(h) = self.high {
            self.mark(window_start(h, self.width), why);
        }
    }

    /// Marks every window held as missing requests, for `why` (a run interrupted: none of
    /// them was complete).
    pub fn mark_held(&mut self, why: &str) {
        let held: Vec<i64> = self.windows.keys().copied().collect();
        for start in held {
            self.mark(start, why);
        }
    }

    /// Adds `why` to the reasons window `start` misses requests for (once).
    pub(crate) fn mark(&mut self, start: i64, why: &str) {
        let reasons = self.partial.entry(start).or_default();
        if !reasons.iter().any(|r| r == why) {
            reasons.push(why.to_owned());
        }
    }

    /// Whether the window starting at `start` was taken out before (a line written for it
    /// already): the requests it holds now came late.
    pub fn is_repeat(&self, start: i64) -> bool {
        self.taken_before.is_some_and(|t| start < t)
    }

    /// When streaming, takes out the windows that are complete (every window whose end is
    /// `grace` or more before the latest end read), earliest first, each with whether it is a
    /// repeat ([`Buckets::is_repeat`]); the repeats only once a request on time has been read
    /// after them. Nothing when not streaming.
    pub fn take_complete(&mut self) -> Vec<(i64, Summary, bool)> {
        let Some(cut) = self.complete_before() else {
            return Vec::new();
        };
        match self.windows.first_key_value() {
            Some((first, _)) if *first < cut => {}
            _ => return Vec::new(),
        }
        // Held: the repeats, while the last request read was late.
        let from = match (self.last_late, self.taken_before) {
            (true, Some(t)) => t.min(cut),
            _ => i64::MIN,
        };
        let mut done = self.windows.split_off(&from);
        let keep = done.split_off(&cut);
        self.windows.extend(keep);
        let out = done
            .into_iter()
            .map(|(s, w)| (s, w, self.is_repeat(s)))
            .collect();
        self.taken_before = Some(self.taken_before.map_or(cut, |t| t.max(cut)));
        out
    }

    /// These windows cut again `width` ns wide, a multiple of their own: each falls whole in
    /// one of the wider windows (which start where one of these does: [`window_origin`]), which
    /// adds up the ones it holds. `None` for a width that is not such a multiple.
    pub fn widened(&self, width: i64, template: &Summary) -> Option<Buckets> {
        // Each wider window starts where one of these does (3-day windows do not fall whole in
        // weeks that start on Monday).
        let aligned = (window_origin(width) - window_origin(self.width)) % self.width == 0;
        if width <= 0 || width % self.width != 0 || !aligned {
            return None;
        }
        let mut out = Buckets::new(width);
        for (start, s) in &self.windows {
            out.windows
                .entry(window_start(*start, width))
                .or_insert_with(|| template.clone())
                .merge(s);
        }
        for (start, reasons) in &self.partial {
            for r in reasons {
                out.mark(window_start(*start, width), r);
            }
        }
        out.unplaced = self.unplaced;
        out.unplaced_errors = self.unplaced_errors;
        out.late = self.late;
        out.high = self.high;
        Some(out)
    }

    /// Adds every window of `other` (same width) to these.
    pub fn merge(&mut self, other: &Buckets, template: &Summary) {
        for (start, s) in &other.windows {
            self.windows
                .entry(*start)
                .or_insert_with(|| template.clone())
                .merge(s);
        }
        self.unplaced += other.unplaced;
        self.unplaced_errors += other.unplaced_errors;
        self.late += other.late;
        for (&start, reasons) in &other.partial {
            for r in reasons {
                self.mark(start, r);
            }
        }
        self.grace = self.grace.max(other.grace);
        self.high = self.high.max(other.high);
        self.taken_before = self.taken_before.max(other.taken_before);
        if let Some(kept) = &other.kept {
            self.kept.get_or_insert_with(BTreeMap::new);
            for (&start, (s, reasons)) in kept {
                self.keep(start, s.clone(), Some(reasons.clone()));
            }
        }
    }
}

/// A sliding window of wall time made of the last `slices` intervals (`--every` slices, the
/// window rounded up to whole intervals).
#[derive(Debug)]
pub(crate) struct Sliding {
    slices: VecDeque<(crate::classify::Coverage, Summary)>,
    keep: usize,
}

impl Sliding {
    /// A window of `window` ns made of slices of `every` ns.
    pub(crate) fn new(window: i64, every: i64) -> Self {
        let keep = ((window + every - 1) / every.max(1)).max(1) as usize;
        Sliding {
            slices: VecDeque::new(),
            keep,
        }
    }

    /// Number of intervals the window spans.
    pub(crate) fn intervals(&self) -> usize {
        self.keep
    }

    /// Adds the slice of the interval that just ended, dropping the oldest beyond the window,
    /// and returns the window's coverage and summary.
    pub(crate) fn push(
        &mut self,
        cov: crate::classify::Coverage,
        slice: Summary,
    ) -> (crate::classify::Coverage, Summary) {
        self.push_keeping(cov, slice, self.keep)
    }

    /// [`Sliding::push`] of the slice since the last interval, at the end of a run: the whole
    /// window before it is kept with it (a summary of at least a window, as each interval's).
    pub(crate) fn push_last(
        &mut self,
        cov: crate::classify::Coverage,
        slice: Summary,
    ) -> (crate::classify::Coverage, Summary) {
        self.push_keeping(cov, slice, self.keep + 1)
    }

    fn push_keeping(
        &mut self,
        cov: crate::classify::Coverage,
        slice: Summary,
        keep: usize,
    ) -> (crate::classify::Coverage, Summary) {
        self.slices.push_back((cov, slice));
        while self.slices.len() > keep {
            self.slices.pop_front();
        }
        let mut it = self.slices.iter();
        let (c0, s0) = it.next().expect("just pushed");
        let (mut cov, mut sum) = (c0.clone(), s0.clone());
        for (c, s) in it {
            cov.merge(c);
            sum.merge(s);
        }
        (cov, sum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: 2026-12-05T12:00:00Z is in epoch day 20792, a Saturday: 20792 - 4 = 20788 = 7 *
    /// 2969 + 5 days after the first Monday (day 4), so its week started on Monday 2026-11-30
    /// (day 20787); 20788 = 14 * 1484 + 12, so its 2-week window started on Monday 2026-11-23
    /// (day 4 + 14 * 1484 = 20780); a day starts at midnight, an hour on the hour.
    #[test]
    fn weeks_start_on_monday_and_other_widths_on_the_epoch() {
        const DAY: i64 = 86_400_000_000_000;
        let t = 20_792 * DAY + 12 * 3_600_000_000_000;
        assert_eq!(window_start(t, 7 * DAY), 20_787 * DAY);
        assert_eq!(window_start(t, 14 * DAY), 20_780 * DAY);
        assert_eq!(window_start(t, DAY), 20_792 * DAY);
        assert_eq!(window_start(t, 3_600_000_000_000), t);
        assert_eq!(parse_flag_duration("1w"), Ok(7 * DAY));
        // Days add up into weeks; 3-day windows do not fall whole in Monday weeks.
        let tpl = Summary::new(vec![], 10, 10);
        let mut days = Buckets::new(DAY);
        days.window(Some(t), &tpl);
        assert!(days.widened(7 * DAY, &tpl).is_some());
        assert!(Buckets::new(3 * DAY).widened(21 * DAY, &tpl).is_none());
    }

    #[test]
    fn a_window_is_complete_once_a_request_ends_grace_after_its_end() {
        let t = Summary::new(vec![], 10, 10);
        let mut b = Buckets::new(60).streaming(30);
        b.window(Some(10), &t);
        // Window [0, 60) completes at 60 + 30 = 90, not before.
        b.window(Some(89), &t);
        assert!(b.take_complete().is_empty());
        b.window(Some(90), &t);
        let done: Vec<(i64, bool)> = b.take_complete().iter().map(|w| (w.0, w.2)).collect();
        assert_eq!(done, [(0, false)]);
        assert_eq!(b.windows.keys().copied().collect::<Vec<_>>(), [60]);
        // A request in the window taken is late: the window is made anew, a repeat, held
        // until a request on time is read.
        b.window(Some(59), &t);
        assert_eq!(b.late, 1);
        assert!(b.take_complete().is_empty());
        b.window(Some(91), &t);
        let done: Vec<(i64, bool)> = b.take_complete().iter().map(|w| (w.0, w.2)).collect();
        assert_eq!(done, [(0, true)]);
        // Not streaming: everything held.
        let mut held = Buckets::new(60);
        held.window(Some(10), &t);
        held.window(Some(10_000), &t);
        assert!(held.take_complete().is_empty());
        assert_eq!(held.windows.len(), 2);
    }

    #[test]
    fn durations() {
        assert_eq!(parse_flag_duration("10s"), Ok(10_000_000_000));
        assert_eq!(parse_flag_duration("1.5m"), Ok(90_000_000_000));
        assert_eq!(parse_flag_duration("2h"), Ok(7_200_000_000_000));
        assert_eq!(parse_flag_duration("1d"), Ok(86_400_000_000_000));
        assert_eq!(parse_flag_duration("800ms"), Ok(800_000_000));
        assert_eq!(parse_flag_duration("50us"), Ok(50_000));
        assert!(parse_flag_duration("-1s").is_err());
        assert!(parse_positive_duration("0s").is_err());
        assert_eq!(format_duration(60_000_000_000), "1m");
        assert_eq!(format_duration(800_000_000), "800ms");
        assert_eq!(format_duration(1_500_000_000), "1500ms");
        assert_eq!(format_duration(1_500_000), "1500us");
    }

    #[test]
    fn rfc3339_of_known_instants() {
        // 2024-02-29T23:59:59.999Z = 1709251199.999 s (a leap day)
        assert_eq!(
            rfc3339_ms(1_709_251_199_999_000_000),
            "2024-02-29T23:59:59.999Z"
        );
        assert_eq!(rfc3339_ms(-1_000_000), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn buckets_align_on_the_epoch() {
        let t = Summary::new(vec![], 10, crate::summary::digest::EXACT_LIMIT);
        let mut b = Buckets::new(60_000_000_000);
        assert!(b.window(None, &t).is_none());
        b.window(Some(119_999_999_999), &t);
        b.window(Some(120_000_000_000), &t);
        assert_eq!(
            b.windows.keys().copied().collect::<Vec<_>>(),
            vec![60_000_000_000, 120_000_000_000]
        );
        assert_eq!(b.unplaced, 1);
    }
}

/// The examples in this file's docs, run.
#[cfg(test)]
mod doc_examples {
    use super::*;

    #[test]
    fn example_of_parse_flag_duration() {
        assert_eq!(parse_flag_duration("1m"), Ok(60_000_000_000));
        assert_eq!(parse_flag_duration("250ms"), Ok(250_000_000));
        assert!(parse_flag_duration("10").is_err());
    }

    #[test]
    fn example_of_rfc3339_ms() {
        assert_eq!(rfc3339_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            rfc3339_ms(1_767_225_660_123_456_789),
            "2026-01-01T00:01:00.123Z"
        );
    }
}
