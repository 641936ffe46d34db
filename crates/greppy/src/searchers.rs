//! The threads that run the daemon's searches, first come, first served.
//!
//! A search that arrives while the daemon is busy waits in one queue, in
//! the order the connections' requests were read, for one of a few
//! threads of its own ([`Searchers`]). The runtime's workers then only
//! read requests and write answers, so a request is read soon after it
//! arrives, and the searches run in that order.
//!
//! (Searches used to run as tasks on the runtime's workers, taking
//! turns. Under load the workers ran searches and looked for new requests
//! only now and then, so a request waited in its socket for as long as
//! the scheduler's order made it: under 64 clients in a closed loop, a
//! search took 43 µs in the daemon at the median, and its request waited
//! 2.7 ms to be read at the median, 5.7 to 7.7 ms at p99. With the queue,
//! in five interleaved pairs of 8,192 selective `-l` searches on the
//! benchmark corpus: p99 4.70 against 6.13 ms at the median of the pairs,
//! lower in all five; p90 3.72 against 4.37 ms; 7% fewer searches a second
//! at 64 clients, 7% more pipelined 64 deep on one connection.)
//!
//! The queue holds no more searches than the daemon has slots for
//! requests in flight (`Limits::searches`): each search in it holds one.
//!
//! The count of pending searches also says when the daemon has a
//! backlog, during which its threads are batch threads for the kernel
//! ([`crate::policy`]).
//!
//! The threads are a few of the daemon's own on a crossbeam channel, not
//! rayon's pool: rayon's idle workers yield in a loop for a while after
//! each job, on the cores the clients and the daemon need (see
//! `by_chunks` in the daemon).
//!
//! A search that arrives while no other is pending runs at once on the
//! worker that read it, as before: the common case of one client asking
//! one search at a time pays no hand-off to another thread. (One client's
//! sequential searches once seemed slower after the search threads had
//! run: 12,000 a second against 13,900. It was the machine, not the
//! queue. Each run of 8,192 searches lands in one of two modes, about 50
//! or 65-78 µs at the median, as the scheduler places the client and the
//! worker; a run right after the daemon starts is often in the fast one,
//! while the daemon's other threads still keep the second core awake.
//! Measured three seconds after the start, before and after 64 pipelined
//! searches had started the threads, in two interleaved pairs: the build
//! before the queue 11,200-13,200 a second, this one 11,800-13,700.)

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A search to run.
pub type Job = Box<dyn FnOnce() + Send + 'static>;

/// The search threads and their queue.
#[derive(Debug)]
pub struct Searchers {
    threads: usize,
    /// The queue, once a search has had to wait (the threads are started
    /// then).
    tx: std::sync::OnceLock<crossbeam_channel::Sender<Job>>,
    /// Searches handed in and not yet finished: queued, running on a
    /// search thread, or running where they were read.
    pending: Arc<AtomicUsize>,
}

/// Where [`Searchers::take`] says a search runs.
pub enum Place {
    /// Here, now: no other search is pending.
    Here(Job),
    /// Queued for a search thread.
    Queued,
}

impl Searchers {
    /// Up to `threads` search threads (at least one), started when a
    /// search first has to wait.
    pub fn new(threads: usize) -> Searchers {
        Searchers {
            threads: threads.max(1),
            tx: std::sync::OnceLock::new(),
            pending: Arc::default(),
        }
    }

    /// The queue, its threads started the first time.
    fn queue(&self) -> &crossbeam_channel::Sender<Job> {
        self.tx.get_or_init(|| {
            let (tx, rx) = crossbeam_channel::unbounded::<Job>();
            for _ in 0..self.threads {
                let rx = rx.clone();
                let started = std::thread::Builder::new()
                    .name("greppy-search".into())
                    .spawn(move || {
                        let _joined = crate::policy::Joined::new();
                        // Ends when the daemon's state, and so the sender,
                        // is gone.
                        for job in rx {
                            // A search that panics loses its answer, not
                            // the thread (the panic is printed by the hook).
                            let _ = std::panic::catch_unwind(AssertUnwindSafe(job));
                        }
                    });
                if started.is_err() {
                    break;
                }
            }
            tx
        })
    }

    /// Takes `job`: to run here if no other search is pending, else into
    /// the queue, behind every search taken before it. Either way it
    /// counts as pending until it drops the [`Pending`] it is given (at
    /// the latest when it ends, or when it is dropped unrun): a search
    /// drops it before its last answer goes out, so that the client's next
    /// search, asked as soon as that answer arrives, finds none pending.
    pub fn take(&self, job: impl FnOnce(Pending) + Send + 'static) -> Place {
        let pending = Pending(self.pending.clone());
        let job: Job = Box::new(move || job(pending));
        if self
            .pending
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            crate::policy::alone();
            return Place::Here(job);
        }
        // More searches pending than the threads can run, with the one
        // that may run where it was taken: a backlog.
        if self.pending.fetch_add(1, Ordering::AcqRel) > self.threads {
            crate::policy::backlog();
        }
        // The threads end only with this sender: the send fails only if no
        // thread could be started, and then the search runs here after all.
        match self.queue().send(job) {
            Ok(()) => Place::Queued,
            Err(e) => Place::Here(e.into_inner()),
        }
    }

    /// Searches pending: queued or running.
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::Acquire)
    }
}

impl std::fmt::Debug for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Place::Here(_) => "Here",
            Place::Queued => "Queued",
        })
    }
}

/// A search counted as pending: it is counted as finished once this is
/// dropped (run, panicked, or never run).
#[derive(Debug)]
pub struct Pending(Arc<AtomicUsize>);

impl Drop for Pending {
    fn drop(&mut self) {
        // None pending now: a backlog, if there was one, may be over.
        if self.0.fetch_sub(1, Ordering::AcqRel) == 1 {
            crate::policy::idle();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::sync::mpsc;

    /// A search taken while none is pending runs where it was taken; those
    /// taken while one is pending are queued, and run in the order taken,
    /// each once; a panicking search leaves its thread, and the count,
    /// whole.
    /// The tests here switch the policy of the threads that joined it,
    /// which is one for the process: they take turns.
    static TURN: Mutex<()> = Mutex::new(());

    #[test]
    fn searches_run_here_when_alone_and_else_in_the_order_taken() {
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        let s = Searchers::new(1);
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let order = Arc::new(Mutex::new(Vec::new()));
        // The first is alone: it runs here, and blocks until released.
        let first = match s.take(move |_| {
            release_rx.recv().unwrap();
        }) {
            Place::Here(job) => job,
            Place::Queued => panic!("a search taken alone was queued"),
        };
        let runner = std::thread::spawn(first);
        let (done_tx, done_rx) = mpsc::channel::<usize>();
        for i in 0..20 {
            let (order, done_tx) = (order.clone(), done_tx.clone());
            let place = s.take(move |_| {
                order.lock().unwrap().push(i);
                if i == 7 {
                    panic!("a search that panics");
                }
                done_tx.send(i).unwrap();
            });
            assert!(matches!(place, Place::Queued), "search {i} ran here");
        }
        assert!(s.pending() >= 2);
        release_tx.send(()).unwrap();
        runner.join().unwrap();
        let mut got: Vec<usize> = (0..19).map(|_| done_rx.recv().unwrap()).collect();
        got.sort_unstable();
        assert_eq!(got, (0..20).filter(|&i| i != 7).collect::<Vec<_>>());
        assert_eq!(*order.lock().unwrap(), (0..20).collect::<Vec<_>>());
        // Every search before a last one is counted as finished once it
        // runs, the panicking one too: only the last one may be pending.
        let (last_tx, last_rx) = mpsc::channel::<()>();
        if let Place::Here(job) = s.take(move |_| last_tx.send(()).unwrap()) {
            job();
        }
        last_rx.recv().unwrap();
        assert!(s.pending() <= 1, "{} pending", s.pending());
    }

    /// While more searches are pending than there are threads to run
    /// them, the threads that joined the policy are batch: the thread
    /// running a search where it was taken (as a runtime worker does), and
    /// the search threads. A search that comes alone once none has been
    /// pending for a while finds them normal again. (The threads the
    /// kernel schedules normally are switched; under `chrt -b` the test
    /// proves nothing, and says so.)
    #[test]
    fn the_threads_are_batch_while_searches_wait_and_normal_after() {
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        if crate::policy::this_thread_is_batch() {
            eprintln!("the tests run batch: nothing to see");
            return;
        }
        crate::policy::set_batch(false);
        let s = Searchers::new(1);
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let (seen_tx, seen_rx) = mpsc::channel::<(&str, bool)>();
        let worker_saw = seen_tx.clone();
        let first = match s.take(move |p| {
            release_rx.recv().unwrap();
            worker_saw
                .send(("worker", crate::policy::this_thread_is_batch()))
                .unwrap();
            drop(p);
        }) {
            Place::Here(job) => job,
            Place::Queued => panic!("a search taken alone was queued"),
        };
        let worker = std::thread::spawn(move || {
            let _joined = crate::policy::Joined::new();
            first();
        });
        // One search pending and one thread to run the queue: no backlog.
        let (again_tx, again_rx) = mpsc::channel::<()>();
        let queued_saw = seen_tx.clone();
        let second = s.take(move |p| {
            let batch = crate::policy::this_thread_is_batch;
            queued_saw.send(("search thread", batch())).unwrap();
            again_rx.recv().unwrap();
            queued_saw.send(("search thread", batch())).unwrap();
            drop(p);
        });
        assert!(matches!(second, Place::Queued));
        assert_eq!(seen_rx.recv().unwrap(), ("search thread", false));
        // One more, with the two held: a backlog.
        let (hold_tx, hold_rx) = mpsc::channel::<()>();
        let held = seen_tx.clone();
        let third = s.take(move |p| {
            held.send(("third", crate::policy::this_thread_is_batch()))
                .unwrap();
            hold_rx.recv().unwrap();
            // The last pending search: none pending now.
            drop(p);
            held.send(("drained", crate::policy::is_batch())).unwrap();
        });
        assert!(matches!(third, Place::Queued));
        assert!(crate::policy::is_batch());
        release_tx.send(()).unwrap();
        assert_eq!(seen_rx.recv().unwrap(), ("worker", true));
        worker.join().unwrap();
        again_tx.send(()).unwrap();
        assert_eq!(seen_rx.recv().unwrap(), ("search thread", true));
        assert_eq!(seen_rx.recv().unwrap(), ("third", true));
        hold_tx.send(()).unwrap();
        // Drained, but not for long enough yet: still batch.
        assert_eq!(seen_rx.recv().unwrap(), ("drained", true));
        assert_eq!(s.pending(), 0);
        // Quiet for long enough: the next search alone switches them back.
        crate::policy::as_if_quiet_for_long();
        let last_saw = seen_tx.clone();
        let last = match s.take(move |p| {
            last_saw
                .send(("worker", crate::policy::this_thread_is_batch()))
                .unwrap();
            drop(p);
        }) {
            Place::Here(job) => job,
            Place::Queued => panic!("a search taken alone was queued"),
        };
        assert!(!crate::policy::is_batch());
        std::thread::spawn(move || {
            let _joined = crate::policy::Joined::new();
            last();
        })
        .join()
        .unwrap();
        assert_eq!(seen_rx.recv().unwrap(), ("worker", false));
    }
}
