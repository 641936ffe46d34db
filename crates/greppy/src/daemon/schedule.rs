//! Sharing the search threads between connections: claims, slots,
//! cancelling, and the threads themselves.

use super::{State, lock};
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::OwnedSemaphorePermit;

/// Candidate files read in parallel at a time by one search.
pub(super) const VERIFY_CHUNK: usize = 64;

impl State {}

/// A connection's searches that a `cancel` may reach, by id.
pub(super) type Cancels = Arc<Mutex<FxHashMap<u64, Arc<AtomicBool>>>>;

/// A request's slots: its connection's and the daemon's ([`State::slot`]).
pub(super) struct Slot {
    pub(super) _own: OwnedSemaphorePermit,
    pub(super) _all: OwnedSemaphorePermit,
}

/// Why [`by_chunks`] stopped before the last chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stop {
    /// Cancelled, or the client is gone.
    Cancelled,
    /// The search has all the answers it was asked for.
    Full,
    /// Another search waits, or the client reads nothing for now: the
    /// search goes on from the next chunk at its next turn.
    Pause,
}

/// How far past what a search has handed on its helpers may read
/// ([`by_chunks`]): two chunks.
pub(super) const AHEAD: usize = 2 * VERIFY_CHUNK;

/// The files of a parallel search: which is next, and how many were
/// handed on ([`by_chunks`]).
pub(super) struct Claims<'a> {
    pub(super) state: Mutex<ClaimState>,
    pub(super) room: std::sync::Condvar,
    pub(super) len: usize,
    pub(super) cancel: &'a AtomicBool,
}

#[derive(Default)]
pub(super) struct ClaimState {
    pub(super) next: usize,
    pub(super) handed: usize,
    pub(super) stop: bool,
}

impl Claims<'_> {
    /// The next file to read, if any is left and within [`AHEAD`] of what
    /// was handed on; `wait`: for room, else `None` at once.
    pub(super) fn claim(&self, wait: bool) -> Option<usize> {
        let mut st = lock(&self.state);
        loop {
            if st.stop || st.next >= self.len || self.cancel.load(Ordering::Relaxed) {
                return None;
            }
            if st.next < st.handed + AHEAD {
                st.next += 1;
                return Some(st.next - 1);
            }
            if !wait {
                return None;
            }
            st = self.room.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// The first `n` files were handed on: room for more.
    pub(super) fn handed(&self, n: usize) {
        lock(&self.state).handed = n;
        self.room.notify_all();
    }

    /// No more files are taken.
    pub(super) fn stop(&self) {
        lock(&self.state).stop = true;
        self.room.notify_all();
    }
}

/// Stops a parallel search's other helpers when a helper panics.
pub(super) struct StopOnPanic<'a, 'b>(pub(super) &'a Claims<'b>);

impl Drop for StopOnPanic<'_, '_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.stop();
        }
    }
}

/// How many threads run searches ([`crate::searchers`]): two per core,
/// since a search may also wait (for the disk, for the updater to apply
/// changes it read). With one per core, 64 clients got 17,700-18,700
/// searches a second in a few side runs, against 19,200-21,600 with two
/// (not interleaved: a hint, not a measurement). Measured again with the
/// client's `poll` wait, interleaved: one per core fewer in all four
/// pairs; three per core within what the runs move (a little ahead in
/// most pairs, p99 higher in some); four per core a longer p99.
pub(super) fn searchers() -> usize {
    2 * cores()
}

/// The cores this process may use, asked once: the standard library reads
/// the cgroup files on every call (a search asked twice, and it was 4% of
/// the daemon's time under 64 clients).
pub(super) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
}
