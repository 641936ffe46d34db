//! How the kernel schedules the daemon's threads: as any other thread
//! while searches come one or a few at a time, and as batch threads
//! (`SCHED_BATCH`) while more searches wait than there are search threads
//! to run them.
//!
//! A thread the kernel wakes normally preempts the thread running where
//! it wakes. Under a backlog that is all loss: a worker woken for one new
//! request preempted a search thread or a client, read that one request
//! and slept again; a search thread preempted the client it had just
//! answered. A batch thread does not preempt on waking: it runs when the
//! running thread sleeps or its slice ends, and by then a worker finds
//! several requests to read, and the clients have had the processor to
//! read their answers and ask again. Their searches then wait in the
//! daemon's queue, where connections take turns, and not in the kernel's run
//! queue, where the order is the scheduler's.
//!
//! Measured on two cores against the build before it, in three
//! interleaved pairs of runs, each of three rounds of 8,192 selective
//! `-l` searches (medians of the nine rounds):
//! - 64 clients in a closed loop: 25,500 against 23,700 searches a second
//!   (higher in every pair); p90 2.97 against 3.29 ms; p99 4.70 against
//!   5.26 ms; daemon CPU 59.8 against 62.3 µs a search. The threads went
//!   batch about five times in a run of the whole.
//! - 256 clients (two pairs, four rounds each): p99 15-21 against 19-43
//!   ms, 22,400-25,800 against 20,300-20,900 searches a second.
//! - One client: level (it never makes a backlog).
//! - Batch search threads alone, with the workers normal: level.
//!
//! Batch only under a backlog, because a batch thread is late when the
//! daemon is not the machine's only load: one client searching while two
//! processes kept both cores busy got its answers at p99 4.0 against
//! 3.3 ms with threads batch for good (two runs each): a batch thread
//! waits for the kernel's tick, where a normal one preempts the load on
//! waking. The threads go back to normal when a search comes alone after
//! none has been pending for a millisecond.
//!
//! Only threads that the kernel schedules normally when they join are
//! switched: a daemon started idle or batch (`chrt`) stays as it was
//! started. Their nice value is kept either way.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// The daemon's threads that are switched, and whether they are batch.
struct Threads {
    tids: Vec<libc::pid_t>,
    batch: bool,
}

static THREADS: Mutex<Threads> = Mutex::new(Threads {
    tids: Vec::new(),
    batch: false,
});

/// Whether the threads are batch now (read without the lock).
static BATCH: AtomicBool = AtomicBool::new(false);

fn lock() -> std::sync::MutexGuard<'static, Threads> {
    THREADS.lock().unwrap_or_else(|e| e.into_inner())
}

fn this_thread() -> libc::pid_t {
    // SAFETY: gettid has no preconditions and cannot fail.
    unsafe { libc::gettid() }
}

/// The kernel's policy for thread `tid`, if it can be read.
fn policy_of(tid: libc::pid_t) -> Option<libc::c_int> {
    // SAFETY: sched_getscheduler only reads the thread's policy.
    let p = unsafe { libc::sched_getscheduler(tid) };
    (p >= 0).then_some(p)
}

/// Sets thread `tid`'s policy to batch or back to normal (its nice value
/// is kept). A thread that is gone is left out.
fn set_policy(tid: libc::pid_t, batch: bool) {
    let policy = if batch {
        libc::SCHED_BATCH
    } else {
        libc::SCHED_OTHER
    };
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: sched_setscheduler reads `param`, which lives across the
    // call; a tid that is gone fails with ESRCH and changes nothing.
    let _ = unsafe { libc::sched_setscheduler(tid, policy, &param) };
}

/// The calling thread is one of the daemon's that are switched (if the
/// kernel schedules it normally now), from now until [`leave`]; it takes
/// the policy the others have.
pub fn join() {
    let tid = this_thread();
    if policy_of(tid) != Some(libc::SCHED_OTHER) {
        return;
    }
    let mut t = lock();
    if t.batch {
        set_policy(tid, true);
    }
    t.tids.push(tid);
}

/// The calling thread is no longer switched (it is about to end: its id
/// may be given to another thread, which must not be switched).
pub fn leave() {
    let tid = this_thread();
    lock().tids.retain(|&t| t != tid);
}

/// How long no search must have been pending before a search that comes
/// alone switches the threads back to normal: a backlog has gaps, and
/// switching costs a system call per thread.
const QUIET: std::time::Duration = std::time::Duration::from_millis(1);

/// When the last pending search ended while the threads were batch, in
/// nanoseconds since [`epoch`].
static QUIET_SINCE: AtomicU64 = AtomicU64::new(0);

fn epoch() -> std::time::Instant {
    static EPOCH: OnceLock<std::time::Instant> = OnceLock::new();
    *EPOCH.get_or_init(std::time::Instant::now)
}

/// More searches are pending than there are threads to run them: the
/// threads go batch.
pub fn backlog() {
    set_batch(true);
}

/// No search is pending now.
pub fn idle() {
    if is_batch() {
        let now = epoch().elapsed().as_nanos() as u64;
        QUIET_SINCE.store(now, Ordering::Release);
    }
}

/// A search comes while no other is pending: if none has been for
/// [`QUIET`], the backlog is over, and the threads go back to normal.
pub fn alone() {
    if is_batch() {
        let since = QUIET_SINCE.load(Ordering::Acquire);
        let quiet = std::time::Duration::from_nanos(since);
        if since == LONG_AGO || epoch().elapsed().saturating_sub(quiet) >= QUIET {
            set_batch(false);
        }
    }
}

/// [`QUIET_SINCE`] for "longer than [`QUIET`] ago, whenever now is".
const LONG_AGO: u64 = u64::MAX;

/// As if no search had been pending for longer than [`QUIET`] (tests
/// do not wait for time to pass).
#[cfg(test)]
pub(crate) fn as_if_quiet_for_long() {
    QUIET_SINCE.store(LONG_AGO, Ordering::Release);
}

/// Switches the joined threads to batch, or back to normal.
pub fn set_batch(batch: bool) {
    if BATCH.load(Ordering::Acquire) == batch {
        return;
    }
    let mut t = lock();
    if t.batch == batch {
        return;
    }
    for &tid in &t.tids {
        set_policy(tid, batch);
    }
    t.batch = batch;
    BATCH.store(batch, Ordering::Release);
}

/// Whether the joined threads are batch now.
pub fn is_batch() -> bool {
    BATCH.load(Ordering::Acquire)
}

/// Whether the calling thread is batch now (for tests).
#[doc(hidden)]
pub fn this_thread_is_batch() -> bool {
    policy_of(this_thread()) == Some(libc::SCHED_BATCH)
}

/// Joins the calling thread until dropped (also when it unwinds).
#[derive(Debug)]
pub struct Joined(());

impl Joined {
    pub fn new() -> Joined {
        join();
        Joined(())
    }
}

impl Default for Joined {
    fn default() -> Joined {
        Joined::new()
    }
}

impl Drop for Joined {
    fn drop(&mut self) {
        leave();
    }
}
