//! The threads that run the daemon's searches, the connections taking
//! turns.
//!
//! A search that arrives while the daemon is busy waits in a queue for one
//! of a few threads of its own ([`Searchers`]). The queue is fair between
//! connections: each connection with searches waiting has its turn, its
//! oldest search first, however many another has queued. A search runs in
//! turns ([`Task`]): at the end of each chunk of files it reads, it gives
//! way if another search waits, and goes back in the queue behind it. A
//! search whose client reads nothing more for now waits at its
//! connection's gate ([`Gate`]) holding no thread, and joins the queue
//! again when the client has read. A search that has had no turn yet goes
//! before those that have (but for one of those after every
//! [`NEW_IN_A_ROW`]), so a selective search, which mostly needs one turn,
//! waits for the turns that run, not for one turn of every broad search. So a client that asks for millions of
//! lines, reading them or not, holds up no one else: another client's
//! selective search waits for one chunk of each search ahead of it, not
//! for whole searches. The runtime's workers only read requests and write
//! answers, so a request is read soon after it arrives.
//!
//! (Served first come, first served, as before, a connection that sent
//! five broad searches held every search thread: another client's
//! selective search took 5.0 s while that connection read nothing, and
//! 101 s while it read its 20 million answers.)
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
//! requests in flight (`Limits::searches`, and `Limits::per_connection`
//! for one connection): each search in it holds one.
//!
//! The count of pending searches also says when the daemon has a
//! backlog, during which its threads are batch threads for the kernel
//! ([`crate::policy`]).
//!
//! The threads are a few of the daemon's own, not rayon's pool: rayon's idle workers yield in a loop for a while after
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

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// A search to run, a turn at a time.
pub trait Task: Send {
    /// Runs a turn: until the search is done, or `give_way()` says another
    /// search waits (the task stops at its next point to stop, which is
    /// the end of a chunk of files), or its answers cannot go out.
    fn turn(&mut self, give_way: &dyn Fn() -> bool) -> Step;
}

/// How a turn ended.
pub enum Step {
    Done,
    /// Another search waits: back in the queue, behind it.
    GiveWay,
    /// The client reads nothing more for now: the task waits, holding no
    /// thread, until `gate` has room, and then joins the queue.
    Wait(Arc<dyn Gate>),
}

impl std::fmt::Debug for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Step::Done => "Done",
            Step::GiveWay => "GiveWay",
            Step::Wait(_) => "Wait",
        })
    }
}

/// Where a task that cannot write waits ([`Step::Wait`]).
pub trait Gate: Send + Sync {
    /// Calls `wake` once there is room again (at once if there is now),
    /// or once there never will be (the client is gone): exactly once.
    fn when_room(&self, wake: Box<dyn FnOnce() + Send>);
}

/// A queued task and the connection it serves.
type Queued = (u64, Box<dyn Task>);

/// Searches waiting for a turn, by connection: the connections take
/// turns, each its oldest task, whatever one of them has queued.
#[derive(Default)]
struct Line {
    /// Connections with a task waiting, the next to go first.
    ring: VecDeque<u64>,
    waiting: rustc_hash::FxHashMap<u64, VecDeque<Box<dyn Task>>>,
}

impl Line {
    fn push(&mut self, conn: u64, task: Box<dyn Task>) {
        let line = self.waiting.entry(conn).or_default();
        if line.is_empty() {
            self.ring.push_back(conn);
        }
        line.push_back(task);
    }

    fn pop(&mut self) -> Option<Queued> {
        let conn = self.ring.pop_front()?;
        let line = self
            .waiting
            .get_mut(&conn)
            .expect("a connection in the ring waits");
        let task = line.pop_front().expect("a waiting connection has a task");
        if line.is_empty() {
            self.waiting.remove(&conn);
        } else {
            self.ring.push_back(conn);
        }
        Some((conn, task))
    }

    fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }
}

/// Searches that have had no turn go before those that have had one, but
/// for one of those after [`NEW_IN_A_ROW`] of these: a selective search
/// (one turn, mostly) waits for few turns of broad ones, and a broad one
/// still has its turns while new searches keep coming.
pub const NEW_IN_A_ROW: usize = 4;

/// The searches waiting for a turn: those that have had none, and those
/// that have (gave way, or waited for their client), each a [`Line`].
#[derive(Default)]
struct Turns {
    new: Line,
    old: Line,
    /// New searches taken since the last old one.
    new_in_a_row: usize,
    /// The daemon's searchers are gone: the threads end.
    closed: bool,
}

/// The queue the search threads take turns from.
struct Queue {
    turns: Mutex<Turns>,
    ready: Condvar,
    /// Tasks in `turns`: read without the lock, at every chunk's end.
    len: AtomicUsize,
    /// How many threads to start...
    threads: usize,
    /// ...and how many were, once a search first had to wait.
    started: std::sync::OnceLock<usize>,
}

impl Queue {
    /// Queues `task` behind `conn`'s others (`new`: it has had no turn
    /// yet), the threads started the first time (if none could be, it
    /// runs here after all).
    fn push(self: &Arc<Self>, conn: u64, task: Box<dyn Task>, new: bool) {
        if self.start() == 0 {
            let runner = Runner {
                queue: self.clone(),
                conn,
            };
            return runner.drive(task);
        }
        let mut guard = self.turns.lock().unwrap_or_else(|e| e.into_inner());
        let t = &mut *guard;
        if new {
            t.new.push(conn, task);
        } else {
            t.old.push(conn, task);
        }
        self.len.fetch_add(1, Ordering::AcqRel);
        drop(guard);
        self.ready.notify_one();
    }

    /// Starts the threads the first time; how many there are.
    fn start(self: &Arc<Self>) -> usize {
        *self.started.get_or_init(|| {
            let mut n = 0;
            for _ in 0..self.threads {
                let queue = self.clone();
                let started = std::thread::Builder::new()
                    .name("greppy-search".into())
                    .spawn(move || {
                        let _joined = crate::policy::Joined::new();
                        while let Some((conn, task)) = queue.pop() {
                            let runner = Runner {
                                queue: queue.clone(),
                                conn,
                            };
                            runner.drive(task);
                        }
                    });
                if started.is_err() {
                    break;
                }
                n += 1;
            }
            n
        })
    }

    /// The next connection's oldest task, waiting for one; `None` once
    /// the queue is closed.
    fn pop(&self) -> Option<Queued> {
        let mut t = self.turns.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if t.closed {
                return None;
            }
            let old_first =
                !t.old.is_empty() && (t.new.is_empty() || t.new_in_a_row >= NEW_IN_A_ROW);
            let next = if old_first {
                t.new_in_a_row = 0;
                t.old.pop()
            } else {
                t.new_in_a_row += 1;
                t.new.pop()
            };
            if let Some(queued) = next {
                self.len.fetch_sub(1, Ordering::AcqRel);
                return Some(queued);
            }
            t = self.ready.wait(t).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn contended(&self) -> bool {
        self.len.load(Ordering::Acquire) > 0
    }

    /// The threads end (tasks still queued are dropped).
    fn close(&self) {
        let mut t = self.turns.lock().unwrap_or_else(|e| e.into_inner());
        t.closed = true;
        t.new = Line::default();
        t.old = Line::default();
        drop(t);
        self.ready.notify_all();
    }
}

/// The search threads and their queue.
pub struct Searchers {
    threads: usize,
    queue: Arc<Queue>,
    /// Searches handed in and not yet finished: queued, running, waiting
    /// for their client, or running where they were read.
    pending: Arc<AtomicUsize>,
}

impl std::fmt::Debug for Searchers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Searchers")
            .field("threads", &self.threads)
            .field("pending", &self.pending())
            .finish()
    }
}

/// Where [`Searchers::take`] says a search runs.
pub enum Place {
    /// Here, now ([`Runner::drive`]): no other search is pending.
    Here(Runner, Box<dyn Task>),
    /// Queued for a search thread.
    Queued,
}

/// Runs tasks' turns, and sends a task that gives way or waits back to
/// the queue. Cheap to clone.
#[derive(Clone)]
pub struct Runner {
    queue: Arc<Queue>,
    conn: u64,
}

impl std::fmt::Debug for Runner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner").field("conn", &self.conn).finish()
    }
}

impl Runner {
    /// Runs `task`'s turns while no other search waits, then queues it
    /// (it gave way), leaves it at its gate (it waits for its client), or
    /// drops it (it is done, or it panicked: it loses its answer, not the
    /// thread, and the hook has printed the panic).
    pub fn drive(self, mut task: Box<dyn Task>) {
        let queue = self.queue.clone();
        let give_way = move || queue.contended();
        loop {
            let step = std::panic::catch_unwind(AssertUnwindSafe(|| task.turn(&give_way)));
            match step {
                Ok(Step::GiveWay) if self.queue.contended() => {
                    return self.queue.push(self.conn, task, false);
                }
                Ok(Step::GiveWay) => {}
                Ok(Step::Wait(gate)) => {
                    let (queue, conn) = (self.queue.clone(), self.conn);
                    return gate.when_room(Box::new(move || queue.push(conn, task, false)));
                }
                Ok(Step::Done) | Err(_) => return,
            }
        }
    }
}

impl Searchers {
    /// Up to `threads` search threads (at least one), started when a
    /// search first has to wait.
    pub fn new(threads: usize) -> Searchers {
        Searchers {
            threads: threads.max(1),
            queue: Arc::new(Queue {
                turns: Mutex::default(),
                ready: Condvar::new(),
                len: AtomicUsize::new(0),
                threads: threads.max(1),
                started: std::sync::OnceLock::new(),
            }),
            pending: Arc::default(),
        }
    }

    /// Takes the task `make` makes for connection `conn`: to run here if
    /// no other search is pending, else into the queue, where connections
    /// take turns and each connection's tasks run in the order taken.
    /// Either way it counts as pending until it drops the [`Pending`] it
    /// is given (at the latest when it ends, or when it is dropped
    /// unrun): a search drops it before its last answer goes out, so that
    /// the client's next search, asked as soon as that answer arrives,
    /// finds none pending.
    pub fn take(&self, conn: u64, make: impl FnOnce(Pending) -> Box<dyn Task>) -> Place {
        let task = make(Pending(self.pending.clone()));
        let runner = Runner {
            queue: self.queue.clone(),
            conn,
        };
        if self
            .pending
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            crate::policy::alone();
            return Place::Here(runner, task);
        }
        // More searches pending than the threads can run, with the one
        // that may run where it was taken: a backlog.
        if self.pending.fetch_add(1, Ordering::AcqRel) > self.threads {
            crate::policy::backlog();
        }
        if self.queue.start() == 0 {
            // No thread could be started: it runs here after all.
            return Place::Here(runner, task);
        }
        self.queue.push(conn, task, true);
        Place::Queued
    }

    /// Searches pending: queued, running or waiting for their clients.
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::Acquire)
    }
}

impl Drop for Searchers {
    fn drop(&mut self) {
        self.queue.close();
    }
}

impl std::fmt::Debug for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Place::Here(..) => "Here",
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

    /// A task of one turn.
    struct Once(Option<Box<dyn FnOnce() + Send>>);

    impl Task for Once {
        fn turn(&mut self, _: &dyn Fn() -> bool) -> Step {
            if let Some(f) = self.0.take() {
                f();
            }
            Step::Done
        }
    }

    /// Takes `f` as a task of one turn for connection `conn`: how to run
    /// it here, or `None` if it was queued.
    fn take(
        s: &Searchers,
        conn: u64,
        f: impl FnOnce(Pending) + Send + 'static,
    ) -> Option<Box<dyn FnOnce() + Send>> {
        match s.take(conn, move |p| Box::new(Once(Some(Box::new(move || f(p)))))) {
            Place::Here(runner, task) => Some(Box::new(move || runner.drive(task))),
            Place::Queued => None,
        }
    }

    #[test]
    fn searches_run_here_when_alone_and_else_in_the_order_taken() {
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        let s = Searchers::new(1);
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let order = Arc::new(Mutex::new(Vec::new()));
        // The first is alone: it runs here, and blocks until released.
        let first = take(&s, 0, move |_| {
            release_rx.recv().unwrap();
        })
        .expect("a search taken alone was queued");
        let runner = std::thread::spawn(first);
        let (done_tx, done_rx) = mpsc::channel::<usize>();
        for i in 0..20 {
            let (order, done_tx) = (order.clone(), done_tx.clone());
            let place = take(&s, 0, move |_| {
                order.lock().unwrap().push(i);
                if i == 7 {
                    panic!("a search that panics");
                }
                done_tx.send(i).unwrap();
            });
            assert!(place.is_none(), "search {i} ran here");
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
        if let Some(job) = take(&s, 0, move |_| last_tx.send(()).unwrap()) {
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
        let first = take(&s, 0, move |p| {
            release_rx.recv().unwrap();
            worker_saw
                .send(("worker", crate::policy::this_thread_is_batch()))
                .unwrap();
            drop(p);
        })
        .expect("a search taken alone was queued");
        let worker = std::thread::spawn(move || {
            let _joined = crate::policy::Joined::new();
            first();
        });
        // One search pending and one thread to run the queue: no backlog.
        let (again_tx, again_rx) = mpsc::channel::<()>();
        let queued_saw = seen_tx.clone();
        let second = take(&s, 0, move |p| {
            let batch = crate::policy::this_thread_is_batch;
            queued_saw.send(("search thread", batch())).unwrap();
            again_rx.recv().unwrap();
            queued_saw.send(("search thread", batch())).unwrap();
            drop(p);
        });
        assert!(second.is_none());
        assert_eq!(seen_rx.recv().unwrap(), ("search thread", false));
        // One more, with the two held: a backlog.
        let (hold_tx, hold_rx) = mpsc::channel::<()>();
        let held = seen_tx.clone();
        let third = take(&s, 0, move |p| {
            held.send(("third", crate::policy::this_thread_is_batch()))
                .unwrap();
            hold_rx.recv().unwrap();
            // The last pending search: none pending now.
            drop(p);
            held.send(("drained", crate::policy::is_batch())).unwrap();
        });
        assert!(third.is_none());
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
        let last = take(&s, 0, move |p| {
            last_saw
                .send(("worker", crate::policy::this_thread_is_batch()))
                .unwrap();
            drop(p);
        })
        .expect("a search taken alone was queued");
        assert!(!crate::policy::is_batch());
        std::thread::spawn(move || {
            let _joined = crate::policy::Joined::new();
            last();
        })
        .join()
        .unwrap();
        assert_eq!(seen_rx.recv().unwrap(), ("worker", false));
    }

    /// A task of several turns, each recorded by name; `first` runs
    /// before the first one returns, and `then` says how each turn ends.
    struct Turning {
        name: &'static str,
        turns: usize,
        log: mpsc::Sender<String>,
        first: Option<Box<dyn FnOnce() + Send>>,
        then: Box<dyn FnMut(usize) -> Step + Send>,
    }

    impl Turning {
        /// A task of one turn, which logs its name.
        fn once(name: &'static str, log: &mpsc::Sender<String>) -> Box<Turning> {
            Box::new(Turning {
                name,
                turns: 0,
                log: log.clone(),
                first: None,
                then: Box::new(|_| Step::Done),
            })
        }
    }

    /// Queues `t` for `conn` (it counts as pending while it lives).
    fn queue(s: &Searchers, conn: u64, t: Box<Turning>) {
        let place = s.take(conn, move |p| Box::new((t, p)) as Box<dyn Task>);
        assert!(matches!(place, Place::Queued), "{place:?}");
    }

    impl Task for (Box<Turning>, Pending) {
        fn turn(&mut self, give_way: &dyn Fn() -> bool) -> Step {
            self.0.turn(give_way)
        }
    }

    impl Task for Turning {
        fn turn(&mut self, _: &dyn Fn() -> bool) -> Step {
            let _ = self.log.send(format!("{}{}", self.name, self.turns));
            if let Some(f) = self.first.take() {
                f();
            }
            self.turns += 1;
            (self.then)(self.turns)
        }
    }

    /// One search holds the place where searches run alone, so that the
    /// rest are queued; released by the sender returned.
    fn hold_here(s: &Searchers) -> (mpsc::Sender<()>, std::thread::JoinHandle<()>) {
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let first = take(s, 0, move |_| release_rx.recv().unwrap())
            .expect("a search taken alone was queued");
        (release_tx, std::thread::spawn(first))
    }

    /// The next `n` turns' names, as they come.
    fn turns(log: &mpsc::Receiver<String>, n: usize) -> Vec<String> {
        let wait = std::time::Duration::from_secs(20);
        (0..n).map_while(|_| log.recv_timeout(wait).ok()).collect()
    }

    /// A connection that has queued ten searches gets one turn, and then
    /// another connection's one search runs, not after all ten.
    #[test]
    fn connections_take_turns_whatever_one_has_queued() {
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        let s = Searchers::new(1);
        let (release, here) = hold_here(&s);
        let (log, seen) = mpsc::channel();
        let (started_tx, started_rx) = mpsc::channel::<()>();
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let task = |name, first: Option<Box<dyn FnOnce() + Send>>| {
            Box::new(Turning {
                name,
                turns: 0,
                log: log.clone(),
                first,
                then: Box::new(|_| Step::Done),
            })
        };
        // A's first search holds the one thread until the rest are queued.
        let first: Box<dyn FnOnce() + Send> = Box::new(move || {
            started_tx.send(()).unwrap();
            go_rx.recv().unwrap();
        });
        let a0 = task("a", Some(first));
        queue(&s, 1, a0);
        started_rx.recv().unwrap();
        for _ in 1..10 {
            let t = task("a", None);
            queue(&s, 1, t);
        }
        let b = task("b", None);
        queue(&s, 2, b);
        go_tx.send(()).unwrap();
        let got = turns(&seen, 11);
        assert_eq!(got[..3], ["a0", "a0", "b0"], "{got:?}");
        release.send(()).unwrap();
        here.join().unwrap();
    }

    /// A search that has had no turn goes before those that have had one:
    /// a selective search waits for the turn that runs, not for a turn of
    /// each broad search; and after `NEW_IN_A_ROW` new ones, an old one
    /// has its turn.
    #[test]
    fn a_new_search_goes_before_those_that_had_turns() {
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        let s = Arc::new(Searchers::new(1));
        let (release, here) = hold_here(&s);
        let (log, seen) = mpsc::channel();
        let broad = |name, first: Option<Box<dyn FnOnce() + Send>>, then| {
            Box::new(Turning {
                name,
                turns: 0,
                log: log.clone(),
                first,
                then,
            })
        };
        let give_way = |n: usize| if n < 4 { Step::GiveWay } else { Step::Done };
        // While b's first turn runs, c and d are queued; c's second turn
        // queues a short search, then six more.
        let (go_tx, go_rx) = mpsc::channel::<()>();
        queue(
            &s,
            1,
            broad(
                "b",
                Some(Box::new(move || go_rx.recv().unwrap())),
                Box::new(give_way),
            ),
        );
        let (s2, log2) = (s.clone(), log.clone());
        let c_then = Box::new(move |n: usize| {
            if n == 2 {
                queue(&s2, 9, Turning::once("short", &log2));
                for name in ["n1", "n2", "n3", "n4", "n5", "n6"] {
                    queue(&s2, 10, Turning::once(name, &log2));
                }
            }
            give_way(n)
        });
        queue(&s, 2, broad("c", None, c_then));
        queue(&s, 3, broad("d", None, Box::new(give_way)));
        go_tx.send(()).unwrap();
        assert_eq!(
            turns(&seen, 11),
            [
                "b0", "c0", "d0", "b1", "c1", "short0", "n10", "n20", "n30", "d1", "n40"
            ]
        );
        release.send(()).unwrap();
        here.join().unwrap();
    }

    /// A long search gives way at its next stop when another waits, and
    /// goes on after it; a search that waits for its client holds no
    /// thread, and runs again once its gate calls it.
    #[test]
    fn a_search_gives_way_and_one_that_waits_holds_no_thread() {
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        let s = Arc::new(Searchers::new(1));
        let (release, here) = hold_here(&s);
        let (log, seen) = mpsc::channel();
        // The long one's first turn lasts until the short one is queued.
        let (queued_tx, queued_rx) = mpsc::channel::<()>();
        let long = Box::new(Turning {
            name: "long",
            turns: 0,
            log: log.clone(),
            first: Some(Box::new(move || queued_rx.recv().unwrap())),
            then: Box::new(|n| if n < 3 { Step::GiveWay } else { Step::Done }),
        });
        queue(&s, 1, long);
        queue(&s, 2, Turning::once("short", &log));
        queued_tx.send(()).unwrap();
        assert_eq!(turns(&seen, 4), ["long0", "short0", "long1", "long2"]);

        /// A gate that keeps its caller until the test opens it.
        #[derive(Default)]
        struct Held(Mutex<Option<Box<dyn FnOnce() + Send>>>);
        impl Gate for Held {
            fn when_room(&self, wake: Box<dyn FnOnce() + Send>) {
                *self.0.lock().unwrap() = Some(wake);
            }
        }
        let gate = Arc::new(Held::default());
        let g = gate.clone();
        let waits = Box::new(Turning {
            name: "waits",
            turns: 0,
            log: log.clone(),
            first: None,
            then: Box::new(move |n| {
                if n == 1 {
                    Step::Wait(g.clone())
                } else {
                    Step::Done
                }
            }),
        });
        queue(&s, 3, waits);
        assert_eq!(turns(&seen, 1), ["waits0"]);
        queue(&s, 4, Turning::once("other", &log));
        assert_eq!(turns(&seen, 1), ["other0"]);
        let wake = gate
            .0
            .lock()
            .unwrap()
            .take()
            .expect("the search waits at its gate");
        wake();
        assert_eq!(turns(&seen, 1), ["waits1"]);
        release.send(()).unwrap();
        here.join().unwrap();
    }
}
