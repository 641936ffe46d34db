//! One iteration of the loop (`run_once`): the timers due, the poll, the
//! transports called on readiness, the ready callbacks, and the writes the
//! iteration deferred, sent at its end.

use super::fd::{FdCallback, FdOwner, Owner, os_error};
use super::handle::{Failure, Handle, closed_error};
use super::{LoopCore, MAX_SPARES, time_now};
use crate::poll;
use crate::poll::{Ready, TIMER_TOKEN, WAKE_TOKEN};
use pyo3::intern;
use pyo3::prelude::*;
use std::collections::VecDeque;
use std::os::fd::RawFd;
use std::sync::atomic::Ordering::Relaxed;

impl LoopCore {
    /// One iteration: wait for I/O (or not, if work is ready), queue due
    /// timers, then run the callbacks that were ready when it began.
    ///
    /// While callbacks are ready the loop does not block, and it polls only
    /// when `POLL_GAP_NS` have passed since its last poll (see there), as
    /// `last_poll` tells.
    pub(super) fn run_once(
        slf: &Bound<'_, Self>,
        events: &mut poll::Events,
        ready_fds: &mut Vec<Ready>,
        last_poll: &mut poll::PollGap,
        window: &mut FlushWindow,
        todo: &mut VecDeque<Py<Handle>>,
        calls: &mut Vec<(FdCallback, bool, bool)>,
    ) -> PyResult<()> {
        let py = slf.py();
        // What to do about I/O this iteration.
        enum Io {
            Skip,
            Peek,
            Block,
        }
        let core = slf.get();
        let (epfd, wake_fd, io, mut now) = {
            let mut lp = Self::state(slf)?;
            if !lp.timers.is_empty() {
                lp.prune_timers();
            }
            let next = lp.timers.peek().map(|t| t.when);
            let mut now = None;
            let io = if core.stopping.load(Relaxed) {
                // The last iteration of run_forever polls, whatever the time:
                // `stop(); run_forever()` is how callers let pending I/O run.
                Io::Peek
            } else if !lp.ready.is_empty() {
                // With timers, the time is needed below anyway.
                let (due, t) = last_poll.due(!lp.timers.is_empty());
                now = t;
                if due || lp.new_interest {
                    Io::Peek
                } else {
                    Io::Skip
                }
            } else {
                let deadline = next.map(|w| (w * 1e9).ceil() as i128);
                let due = match deadline {
                    Some(d) => {
                        let t = poll::now_ns();
                        now = Some(t);
                        d <= t
                    }
                    None => false,
                };
                if due {
                    Io::Peek
                } else {
                    let p = lp.poller.as_mut().ok_or_else(closed_error)?;
                    p.arm(deadline, now).map_err(os_error)?;
                    lp.sleeping = true;
                    Io::Block
                }
            };
            if !matches!(io, Io::Skip) {
                lp.new_interest = false;
            }
            (lp.poller()?.epoll_fd(), lp.wake_fd, io, now)
        };
        let waited = match io {
            Io::Skip => {
                ready_fds.clear();
                Ok(())
            }
            // A zero-timeout poll returns at once: keep the GIL for it, since
            // releasing and taking it back costs more than the system call.
            Io::Peek => {
                let t = *now.get_or_insert_with(poll::now_ns);
                last_poll.polled(t);
                poll::wait(epfd, events, false, ready_fds)
            }
            Io::Block => {
                let r = py.detach(|| poll::wait(epfd, events, true, ready_fds));
                let t = poll::now_ns();
                let freed = {
                    let mut lp = Self::state(slf)?;
                    lp.sleeping = false;
                    lp.trim_spares(t)
                };
                drop(freed);
                last_poll.polled(t);
                now = Some(t);
                r
            }
        };
        if let Err(e) = waited {
            if e.kind() == std::io::ErrorKind::Interrupted {
                // A signal: run Python's handlers (KeyboardInterrupt is
                // raised from here), then carry on with the iteration.
                py.check_signals()?;
                ready_fds.clear();
                now = None;
            } else {
                return Err(os_error(e));
            }
        }

        // I/O: queue handles, and collect the transports to call (in
        // `calls`, the run's own vector: emptied each time, never freed).
        // `before` is how many callbacks were ready before this poll: they
        // run first, then the I/O's (transports, then handles), then the
        // timers that came due, as in asyncio, whose I/O callbacks join the
        // ready queue behind those already there.
        let mut before = usize::MAX;
        if !ready_fds.is_empty() {
            let mut lp = Self::state(slf)?;
            before = lp.ready.len();
            for r in ready_fds.iter() {
                match r.token {
                    WAKE_TOKEN => {
                        poll::drain_wake(wake_fd);
                        lp.wake_pending = false;
                    }
                    TIMER_TOKEN => {}
                    tok => {
                        let fd = tok as RawFd;
                        // The fd table and the ready queue, borrowed apart.
                        let st = &mut *lp;
                        let Some(entry) = st.fds.get(&fd) else {
                            continue;
                        };
                        let mut t_read = false;
                        let mut t_write = false;
                        let mut tr = None;
                        for (ready, cb, flag) in [
                            (r.readable, &entry.reader, &mut t_read),
                            (r.writable, &entry.writer, &mut t_write),
                        ] {
                            match cb {
                                Some(_) if !ready => {}
                                Some(FdCallback::Handle(h)) if !h.get().is_cancelled() => {
                                    st.ready.push_back(h.clone_ref(py));
                                }
                                Some(FdCallback::Handle(_)) => {}
                                Some(t) => {
                                    *flag = true;
                                    tr = Some(t.clone_ref(py));
                                }
                                None => {}
                            }
                        }
                        if let Some(t) = tr {
                            calls.push((t, t_read, t_write));
                        }
                    }
                }
            }
        }
        // Timers that are due (the clock is read only when there are any),
        // then take the ready queue whole: one borrow of the loop for the
        // batch, not one per callback. Callbacks they schedule go to the
        // emptied queue, for the next iteration.
        let (debug, slow, spare_cap) = {
            let mut lp = Self::state(slf)?;
            if !lp.timers.is_empty() {
                // The clock read before the poll will do when the poll did
                // not wait or find anything: no time has passed for timers.
                let t = match now {
                    Some(t) if ready_fds.is_empty() => t,
                    _ => poll::now_ns(),
                };
                let end = t as f64 / 1e9 + 1e-9;
                while let Some(top) = lp.timers.peek() {
                    if top.when >= end {
                        break;
                    }
                    let t = lp.timers.pop().expect("peeked");
                    let cancelled = {
                        let h = t.handle.get();
                        h.scheduled.store(false, Relaxed);
                        h.is_cancelled()
                    };
                    if cancelled {
                        Handle::settle(&t.handle);
                        lp.cancelled_timers = lp.cancelled_timers.saturating_sub(1);
                    } else {
                        lp.ready.push_back(t.handle);
                    }
                }
            }
            std::mem::swap(&mut lp.ready, todo);
            lp.batch_peak = lp.batch_peak.max(todo.len());
            lp.spare_cap = lp.spare_cap.max(todo.len().min(MAX_SPARES));
            (core.is_debug(), lp.slow_callback_duration, lp.spare_cap)
        };
        // Looked at first: most iterations of a busy loop read nothing. The
        // transports are called once the `old` callbacks (those ready before
        // the poll, at the head of the batch) have run.
        let mut io = !calls.is_empty();
        let old = before.min(todo.len());
        let mut ran = 0;
        loop {
            if io && ran == old {
                io = false;
                if let Err(e) = Self::call_transports(slf, calls, window) {
                    Self::requeue(slf, todo)?;
                    Self::flush_writes(slf)?;
                    return Err(e);
                }
            }
            let Some(h) = todo.pop_front() else {
                break;
            };
            ran += 1;
            let h = h.into_bound(py);
            let t0 = if debug { Some(time_now()) } else { None };
            let res = Handle::run(&h);
            Handle::settle(h.as_unbound());
            let res = match res {
                Ok(()) => Ok(()),
                Err(Failure::Report(e)) => Handle::report(&h, e),
                Err(Failure::Propagate(e)) => Err(e),
            };
            let res = res.and_then(|()| match t0 {
                Some(t0) if time_now() - t0 >= slow => slf
                    .call_method1(intern!(py, "_log_slow_callback"), (&h, time_now() - t0))
                    .map(|_| ()),
                _ => Ok(()),
            });
            if let Err(e) = res {
                // The rest of the batch stays queued, ahead of what the
                // batch scheduled, as in asyncio (see `abandon`).
                Self::abandon(slf, todo, calls)?;
                Self::flush_writes(slf)?;
                return Err(e);
            }
            // (Never on a free-threaded build, which keeps no spares: it
            // takes no lock for the count.)
            if !debug
                && !cfg!(Py_GIL_DISABLED)
                && Self::state(slf)?.spares.len() < spare_cap
                && let Some(spare) = Handle::recycle(h)
            {
                // `__traverse__` counts on every spare referring to this
                // loop: a handle is queued only by the loop that made it.
                debug_assert!(spare.get().loop_.is(slf));
                Self::state(slf)?.spares.push(spare);
            }
            if let Err(e) = Self::flush_if_due(slf, window) {
                // What could not be sent waits in the flush list already.
                Self::abandon(slf, todo, calls)?;
                return Err(e);
            }
        }
        window.open = false;
        Self::flush_writes(slf)
    }

    /// Called after each callback and each transport's I/O: sends the
    /// writes that wait for the end of the iteration now if they have
    /// waited `FLUSH_GAP_NS`. The clock is read once when writes start to
    /// wait (the callback that made them has just ended), then the TSC
    /// after each callback while they do.
    pub(super) fn flush_if_due(slf: &Bound<'_, Self>, window: &mut FlushWindow) -> PyResult<()> {
        if !slf.get().deferred.load(Relaxed) {
            return Ok(());
        }
        if !window.open {
            window.open = true;
            window.gap.polled(poll::now_ns());
            return Ok(());
        }
        if window.gap.due(false).0 {
            window.open = false;
            return Self::flush_writes(slf);
        }
        Ok(())
    }

    /// Calls the transports whose sockets the poll found ready. Each
    /// reference is released as a `Bound`, which needs no look at the
    /// thread's state (a `Py` does, to know whether it may decref now).
    pub(super) fn call_transports(
        slf: &Bound<'_, Self>,
        calls: &mut Vec<(FdCallback, bool, bool)>,
        window: &mut FlushWindow,
    ) -> PyResult<()> {
        let py = slf.py();
        let mut result = Ok(());
        for (t, r, w) in calls.drain(..) {
            if result.is_err() {
                // After an error, the rest are reported again by the next
                // poll (epoll is level-triggered).
                t.release(py);
                continue;
            }
            result = match t {
                FdCallback::Owner(t) => t.call_ready(py, r, w),
                h @ FdCallback::Handle(_) => {
                    h.release(py);
                    Ok(())
                }
            };
            if result.is_ok() {
                result = Self::flush_if_due(slf, window);
            }
        }
        result
    }

    /// Leaves the rest of a batch after an error: its callbacks go back to
    /// the head of the ready queue, and the transports not called yet are
    /// dropped (epoll is level-triggered: the next poll reports them again).
    pub(super) fn abandon(
        slf: &Bound<'_, Self>,
        todo: &mut VecDeque<Py<Handle>>,
        calls: &mut Vec<(FdCallback, bool, bool)>,
    ) -> PyResult<()> {
        for (t, _, _) in calls.drain(..) {
            t.release(slf.py());
        }
        Self::requeue(slf, todo)
    }

    /// Puts the callbacks of a batch that did not run back at the head of
    /// the ready queue, ahead of what the batch scheduled, as in asyncio.
    pub(super) fn requeue(slf: &Bound<'_, Self>, todo: &mut VecDeque<Py<Handle>>) -> PyResult<()> {
        let mut lp = Self::state(slf)?;
        while let Some(rest) = todo.pop_back() {
            lp.ready.push_front(rest);
        }
        Ok(())
    }

    /// Sends what the iteration's callbacks wrote to transports (see
    /// `SocketTransport::write`): one system call per transport for all of
    /// it, before the loop polls or blocks again.
    pub(super) fn flush_writes(slf: &Bound<'_, Self>) -> PyResult<()> {
        // Most iterations wrote nothing: they only look (the sending, out
        // of line, is where the compiler reads pyo3's thread-local state).
        if Self::state(slf)?.flush.is_empty() {
            return Ok(());
        }
        Self::send_deferred(slf)
    }

    #[inline(never)]
    pub(super) fn send_deferred(slf: &Bound<'_, Self>) -> PyResult<()> {
        let py = slf.py();
        loop {
            let mut st = Self::state(slf)?;
            if st.flush.is_empty() {
                return Ok(());
            }
            let mut batch = std::mem::take(&mut st.flush);
            slf.get().deferred.store(false, Relaxed);
            drop(st);
            // From the end: each transport has its own socket, so the order
            // does not matter, and popping costs no iterator to drop.
            while let Some(t) = batch.pop() {
                if let Err(e) = t.call_flush(py) {
                    // The exception leaves the loop; the rest go out at the
                    // end of its next iteration.
                    let mut st = Self::state(slf)?;
                    st.flush.append(&mut batch);
                    slf.get().deferred.store(!st.flush.is_empty(), Relaxed);
                    return Err(e);
                }
            }
            // The emptied list goes back with its capacity, so the next
            // iteration's writes allocate none (a flush can queue more:
            // then those go first, and this allocation is dropped).
            let mut st = Self::state(slf)?;
            if st.flush.is_empty() {
                st.flush = batch;
            }
        }
    }

    /// Whether a write now may wait for the end of the iteration: the loop
    /// is running callbacks (not blocked in `epoll_wait`, nor stopped).
    pub(crate) fn defer_write<T: FdOwner>(slf: &Bound<'_, Self>, t: &Bound<'_, T>) -> bool {
        if !slf.get().running.load(Relaxed) {
            return false;
        }
        let Ok(mut st) = Self::state(slf) else {
            return false;
        };
        if st.sleeping || st.poller.is_none() {
            return false;
        }
        st.flush.push(Owner::new(t));
        slf.get().deferred.store(true, Relaxed);
        true
    }
}

/// A write that waits for the end of the iteration (see
/// `SocketTransport::write`) waits at most this long, plus the callback in
/// progress: once it has, the next callback's end sends it and whatever else
/// waits. Without the bound, in a long iteration (aiohttp at 64 connections
/// on one vCPU: about 30 requests of 30 µs each) the first response waited
/// for the last, and wrk's p99 was a fifth above uvloop's. Measured by
/// `test_a_write_waits_at_most_50us_plus_a_callback_for_the_end_of_the_iteration`.
pub(super) const FLUSH_GAP_NS: i128 = 50_000;

/// Whether writes wait for the end of the iteration (`open`), and since
/// when (`gap`): see `FLUSH_GAP_NS`.
pub(super) struct FlushWindow {
    gap: poll::PollGap,
    open: bool,
}

impl FlushWindow {
    pub(super) fn new() -> Self {
        FlushWindow {
            gap: poll::PollGap::new(FLUSH_GAP_NS),
            open: false,
        }
    }
}

/// While callbacks are ready, the loop polls for I/O only when this long has
/// passed since its last poll, not on every iteration: a chain of short
/// callbacks then costs no system call each. So I/O that becomes ready
/// while the loop is busy waits at most this long, plus the iteration in
/// progress, before its callback is queued (tested by
/// `test_ready_io_is_seen_by_the_next_iteration_once_20us_have_passed`). One exception:
/// after an fd's interest grows (`State::new_interest`), the next iteration
/// polls, as asyncio's does.
pub(super) const POLL_GAP_NS: i128 = 20_000;
