//! A span of log time the requests of a summary ended in (`--since`, `--until`).

/// A span of log time (`--since`, `--until`): the requests that ended in it, epoch ns; either
/// end open when not given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeRange {
    /// Ended at or after this.
    pub since: Option<i64>,
    /// Ended before this.
    pub until: Option<i64>,
}

impl TimeRange {
    /// Whether either end is given.
    pub fn is_set(&self) -> bool {
        self.since.is_some() || self.until.is_some()
    }

    /// Whether a request that ended at `end` (`None`: no end instant) is in the span: never
    /// without an end when the span is set.
    pub fn holds(&self, end: Option<i64>) -> bool {
        if !self.is_set() {
            return true;
        }
        end.is_some_and(|e| self.since.is_none_or(|s| e >= s) && self.until.is_none_or(|u| e < u))
    }
}
