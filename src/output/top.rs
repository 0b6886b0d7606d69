//! The headline's lines on why requests failed and which were slowest, fitted to the width:
//! `errors by reason: RateLimitError 12, Timeout 5, 429 3 (+4 under 2 other reasons)` and `slowest: a1b2c3
//! (26.4s), ...`. The JSON summary's `errors` and `slowest` members.

use crate::output::compact::duration_text;
use crate::summary::top::{NOT_LOGGED, OTHER_REASONS, Slow, Top};
use serde_json::{Value as Json, json};

/// The reasons the headline names at most.
const SHOWN_REASONS: usize = 3;

/// The longest id the headline writes whole; a longer one is cut to its first and last
/// [`ID_END_CHARS`] characters around `…` (ids often share a prefix: `chatcmpl-`, `lab-`).
const MAX_ID_CHARS: usize = 20;
const ID_END_CHARS: usize = 6;

/// Items joined by `, ` after `label`, as many as fit `width` (at least one), with `(+N more)`
/// when some did not.
fn fitted(label: &str, items: &[String], width: usize) -> String {
    let mut line = label.to_owned();
    for (i, item) in items.iter().enumerate() {
        let rest = items.len() - i - 1;
        let more = if rest > 0 {
            format!(" (+{rest} more)")
        } else {
            String::new()
        };
        let sep = if i == 0 { "" } else { ", " };
        let with = line.chars().count() + sep.len() + item.chars().count();
        if i > 0 && with + more.chars().count() > width {
            line.push_str(&format!(" (+{} more)", items.len() - i));
            return line;
        }
        line.push_str(sep);
        line.push_str(item);
    }
    line
}

/// `errors by reason: R1 N1, R2 N2, R3 N3 (+N under K other reasons)`: the most frequent [`SHOWN_REASONS`]
/// reasons, as many as fit `width`. `None` when nothing failed or no failure's log gives a
/// reason.
pub(crate) fn reasons_line(top: &Top, width: usize) -> Option<String> {
    reasons_of(top, width, SHOWN_REASONS)
}

/// The full report's lines (`--explain`): every reason kept, and every slowest request kept
/// with its whole id, whatever the width.
pub(crate) fn explain_lines(top: &Top) -> Vec<String> {
    reasons_of(top, usize::MAX, usize::MAX)
        .into_iter()
        .chain(slowest_of(top, usize::MAX, true))
        .collect()
}

/// [`reasons_line`] with at most `shown` reasons, as many as fit `width` (at least one); the
/// others counted in errors and reasons (`(+6 under 2 other reasons)`: a bare `+2 more` beside
/// the error count read as two errors).
fn reasons_of(top: &Top, width: usize, shown: usize) -> Option<String> {
    let reasons = top.reasons();
    if reasons.iter().all(|&(r, _)| r == NOT_LOGGED) {
        return None;
    }
    let items: Vec<String> = reasons
        .iter()
        .map(|&(r, n)| format!("{} {n}", shown_reason(r)))
        .collect();
    let mut k = shown.min(items.len()).max(1);
    loop {
        let mut line = format!("errors by reason: {}", items[..k].join(", "));
        let others = reasons.len() - k;
        if others > 0 {
            let errors: u64 = reasons[k..].iter().map(|&(_, n)| n).sum();
            if reasons[k..].iter().any(|&(r, _)| r == OTHER_REASONS) {
                // Past the bound on distinct reasons: how many is not known.
                line.push_str(&format!(" (+{errors} under other reasons)"));
            } else {
                let s = if others == 1 { "" } else { "s" };
                line.push_str(&format!(" (+{errors} under {others} other reason{s})"));
            }
        }
        if k == 1 || line.chars().count() <= width {
            return Some(line);
        }
        k -= 1;
    }
}

/// A reason as the reasons line shows it: in quotes where it holds a blank, a comma or a `#`
/// (the digits a reason's text had, `Output too few tokens #`), so that its count is not read
/// as part of it (`"Output too few tokens #" 49`); `(not logged)` and `(other reasons)` as
/// they are.
fn shown_reason(r: &str) -> std::borrow::Cow<'_, str> {
    if r == NOT_LOGGED || r == OTHER_REASONS || !r.contains([' ', ',', '#']) {
        std::borrow::Cow::Borrowed(r)
    } else {
        std::borrow::Cow::Owned(format!("{r:?}"))
    }
}

/// How the headline names a slow request: its id, its start and end around `…` when long.
fn label(id: &str, end: usize) -> String {
    let n = id.chars().count();
    if n > MAX_ID_CHARS.max(ID_END_CHARS + end + 1) {
        let start: String = id.chars().take(ID_END_CHARS).collect();
        let end: String = id.chars().skip(n - end).collect();
        return format!("{start}…{end}");
    }
    id.to_owned()
}

/// The labels of `ids`, each shortened ([`label`]) with as many end characters as keep two
/// different ids from looking the same (`chatcm…d7e8f9` twice for two requests).
fn labels(ids: &[&str]) -> Vec<String> {
    let mut end = ID_END_CHARS;
    loop {
        let out: Vec<String> = ids.iter().map(|id| label(id, end)).collect();
        let clash = (0..out.len()).any(|i| (0..i).any(|j| out[i] == out[j] && ids[i] != ids[j]));
        if !clash || out.iter().zip(ids).all(|(l, id)| l == id) {
            return out;
        }
        end += ID_END_CHARS;
    }
}

/// `slowest: ID (26.4s), ID (3251.7ms), ...` by E2E latency (`TTFT 3.2s` where only TTFT is
/// known), as many as fit `width`; without ids (a format that logs none), the durations
/// alone. `None` when no request has either.
pub(crate) fn slowest_line(top: &Top, width: usize) -> Option<String> {
    slowest_of(top, width, false)
}

/// [`slowest_line`], with each id whole when `whole_ids`.
fn slowest_of(top: &Top, width: usize, whole_ids: bool) -> Option<String> {
    let slowest = top.slowest();
    if slowest.is_empty() {
        return None;
    }
    let ids: Vec<&str> = slowest.iter().filter_map(|s| s.id.as_deref()).collect();
    let mut short = labels(&ids).into_iter();
    let items: Vec<String> = slowest
        .iter()
        .map(|s: &Slow| {
            let what = if s.e2e_ns.is_some() { "" } else { "TTFT " };
            let took = format!(
                "{what}{}",
                duration_text(crate::classify::notes::slow_ns(s.key_ns) as f64 / 1e6)
            );
            match &s.id {
                Some(id) if whole_ids => format!("{id} ({took})"),
                Some(_) => format!("{} ({took})", short.next().unwrap_or_default()),
                None => took,
            }
        })
        .collect();
    let head = if slowest.iter().all(|s| s.id.is_none()) {
        "slowest (no ids logged): "
    } else {
        "slowest: "
    };
    Some(fitted(head, &items, width))
}

/// The summary's `errors` member: `{"count", "rate", "reasons": [{"reason", "count"}]}`, the
/// rate the share of all requests (`null` without requests).
pub(crate) fn errors_json(top: &Top, errors: u64, requests: u64) -> Json {
    let rate = if requests > 0 {
        json!(crate::number::round3(errors as f64 / requests as f64))
    } else {
        Json::Null
    };
    json!({"count": errors, "rate": rate, "reasons": top.reasons_json()})
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two ids that share their first and last six characters get longer ends.
    #[test]
    fn short_ids_stay_apart() {
        let a = "chatcmpl-0000000000aaaaaaaaad7e8f9";
        let b = "chatcmpl-0000000000bbbbbbbbbd7e8f9";
        assert_eq!(labels(&[a]), ["chatcm…d7e8f9"]);
        assert_eq!(
            labels(&[a, b]),
            ["chatcm…aaaaaad7e8f9", "chatcm…bbbbbbd7e8f9"]
        );
        // The same id twice is one request, and short ids stay whole.
        assert_eq!(labels(&[a, a]), ["chatcm…d7e8f9", "chatcm…d7e8f9"]);
        assert_eq!(labels(&["r1", "r2"]), ["r1", "r2"]);
    }

    #[test]
    fn items_fit_the_width() {
        let items: Vec<String> = ["aaaa (1.0s)", "bbbb (2.0s)", "cccc (3.0s)"]
            .map(str::to_owned)
            .to_vec();
        assert_eq!(
            fitted("slowest: ", &items, 100),
            "slowest: aaaa (1.0s), bbbb (2.0s), cccc (3.0s)"
        );
        assert_eq!(
            fitted("slowest: ", &items, 36),
            "slowest: aaaa (1.0s) (+2 more)"
        );
        // The first item is always written.
        assert_eq!(
            fitted("slowest: ", &items, 5),
            "slowest: aaaa (1.0s) (+2 more)"
        );
    }
}
