//! The messages of inputs read at once, written on stderr in the order the inputs were given.
//!
//! Owns the [`Gate`]: a summary that reads several files on several threads holds each
//! input's messages (its bad lines, its hints, what it inferred) until the inputs before it
//! are read, so that stderr, and which bad lines `--max-diagnostics` shows, are those of one
//! thread. The messages of the input read first in order are written at once. A message
//! written through [`crate::diag!`] by a thread reading an input ([`Gate::enter`]) goes
//! through its gate.

use crate::app::Diagnostics;
use std::cell::RefCell;
use std::sync::{Arc, Mutex, MutexGuard};

/// A message held until the inputs before its own are read.
enum Held {
    /// Written as it is.
    Say(String),
    /// A bad line or record (`FILE:LINE: reason`): shown or counted under `--max-diagnostics`.
    Bad(String),
}

struct State {
    /// The first input whose reading has not ended: its messages are written at once.
    head: usize,
    ended: Vec<bool>,
    held: Vec<Vec<Held>>,
    /// Bad lines of each input not held (past `--max-diagnostics` of its own, which could not
    /// be shown whatever came before): counted as not shown.
    overflow: Vec<u64>,
    /// Bad lines held, by input.
    held_bad: Vec<usize>,
    diags: Diagnostics,
}

/// Orders the messages of `n` inputs read at once (see the module).
pub(crate) struct Gate {
    state: Mutex<State>,
    max: usize,
    /// False for live inputs (`--every`, each on its thread until it ends): every message is
    /// written at once.
    ordered: bool,
}

thread_local! {
    /// The gate and input of the input this thread reads, while it reads it.
    static READING: RefCell<Option<(Arc<Gate>, usize)>> = const { RefCell::new(None) };
}

/// Writes one line on stderr: through the gate of the input this thread reads, if any.
pub(crate) fn say(args: std::fmt::Arguments<'_>) {
    let routed = READING.with(|r| match &*r.borrow() {
        Some((gate, i)) => {
            gate.say(*i, args.to_string());
            true
        }
        None => false,
    });
    if !routed {
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "{args}");
    }
}

/// While alive, this thread reads input `i` of its gate; dropped, the input's reading has
/// ended (also when it failed or panicked).
pub(crate) struct Reading {
    gate: Arc<Gate>,
    input: usize,
}

impl Drop for Reading {
    fn drop(&mut self) {
        READING.with(|r| *r.borrow_mut() = None);
        self.gate.ended(self.input);
    }
}

impl Gate {
    /// A gate for `n` inputs, showing at most `max` bad lines in all; holding messages when
    /// `ordered`, else writing each at once.
    pub(crate) fn new(n: usize, max: usize, ordered: bool) -> Arc<Gate> {
        Arc::new(Gate {
            state: Mutex::new(State {
                head: 0,
                ended: vec![false; n],
                held: (0..n).map(|_| Vec::new()).collect(),
                overflow: vec![0; n],
                held_bad: vec![0; n],
                diags: Diagnostics::new(max),
            }),
            max,
            ordered,
        })
    }

    /// Whether a message of input `i` is written now.
    fn now(&self, st: &State, i: usize) -> bool {
        !self.ordered || i <= st.head
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// This thread reads input `i` until the guard is dropped.
    pub(crate) fn enter(self: &Arc<Gate>, i: usize) -> Reading {
        READING.with(|r| *r.borrow_mut() = Some((Arc::clone(self), i)));
        Reading {
            gate: Arc::clone(self),
            input: i,
        }
    }

    fn say(&self, i: usize, msg: String) {
        let mut st = self.lock();
        if self.now(&st, i) {
            crate::app::write_stderr(&msg);
        } else {
            st.held[i].push(Held::Say(msg));
        }
    }

    /// Bad line `line` of input `i` (named `file`): `reason` shown, or counted when
    /// `--max-diagnostics` are shown already.
    pub(crate) fn report(&self, i: usize, file: &str, line: u64, reason: &str) {
        let mut st = self.lock();
        if self.now(&st, i) {
            st.diags.report(file, line, reason);
        } else if st.held_bad[i] < self.max {
            let msg = format!("{}:{line}: {reason}", crate::input::shown_name(file));
            st.held[i].push(Held::Bad(msg));
            st.held_bad[i] += 1;
        } else {
            st.overflow[i] += 1;
        }
    }

    /// A bad line of input `i` counted past `--max-diagnostics` by its reader.
    pub(crate) fn hide(&self, i: usize) {
        let mut st = self.lock();
        if self.now(&st, i) {
            st.diags.hide();
        } else {
            st.overflow[i] += 1;
        }
    }

    /// Input `i` is read: the messages of the inputs after it, up to the next one still
    /// being read, are written.
    fn ended(&self, i: usize) {
        let mut st = self.lock();
        st.ended[i] = true;
        while st.head < st.ended.len() && st.ended[st.head] {
            st.head += 1;
            if st.head < st.ended.len() {
                let head = st.head;
                flush(&mut st, head);
            }
        }
    }

    /// Writes what is still held, in input order, then the count of bad lines not shown.
    pub(crate) fn finish(&self) {
        let mut st = self.lock();
        for i in 0..st.held.len() {
            flush(&mut st, i);
        }
        st.diags.finish();
    }
}

/// Writes the messages input `i` holds (and counts its overflow).
fn flush(st: &mut State, i: usize) {
    for h in std::mem::take(&mut st.held[i]) {
        match h {
            Held::Say(msg) => crate::app::write_stderr(&msg),
            Held::Bad(msg) => st.diags.show(msg),
        }
    }
    let overflow = std::mem::take(&mut st.overflow[i]);
    st.diags.hide_n(overflow);
    st.held_bad[i] = 0;
}
