//! `LoopCore`: the ready queue, the timer heap, the file-descriptor table and
//! the `run` loop. The Python class `pyloop.Loop` derives from it and adds the
//! rest of `asyncio.AbstractEventLoop` in Python.
//!
//! Borrows of the core are short: none is held across a call into Python
//! (callbacks re-enter `call_soon`) or while the GIL is released (other
//! threads call `call_soon_threadsafe`).

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::os::fd::RawFd;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyModule, PyTuple};
use pyo3::{PyTraverseError, PyVisit};
use rustc_hash::FxHashMap;

use crate::cell::{GilCell, RefMut};
use crate::poll::{self, Poller, READ, WRITE};
use handle::{Handle, Slot, closed_error};

mod fd;
pub mod handle;
mod run;

use fd::FdEntry;
pub(crate) use fd::{FdCallback, FdOwner, Owner, os_error};
use run::{FlushWindow, POLL_GAP_NS};

#[derive(Debug)]
struct Timer {
    when: f64,
    seq: u64,
    handle: Py<Handle>,
}

impl PartialEq for Timer {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Timer {}
impl PartialOrd for Timer {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Timer {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest timer;
    /// equal deadlines run in the order they were scheduled.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .when
            .total_cmp(&self.when)
            .then(other.seq.cmp(&self.seq))
    }
}

/// The loop. Its state is in a [`GilCell`]: one cheap borrow per
/// iteration and per `call_soon`. The flags that every call reads are
/// atomics, read without a borrow.
#[pyclass(subclass, module = "pyloop._pyloop", dict, frozen)]
#[derive(Debug)]
pub struct LoopCore {
    pub(crate) state: GilCell<State>,
    closed: AtomicBool,
    debug: AtomicBool,
    stopping: AtomicBool,
    running: AtomicBool,
    /// Writes wait in `State::flush`: set as the first is queued, cleared
    /// as they are sent. Read after every callback (`flush_if_due`) with
    /// no lock of the state, which a free-threaded build would take.
    deferred: AtomicBool,
    /// The context that handles made where the current context was empty
    /// run in, while it stays empty (see `handle::enter_empty_context`).
    pub(crate) empty_context: GilCell<Option<Py<PyAny>>>,
    /// `set_task_factory`'s callable, or `None` for asyncio's `Task`.
    task_factory: GilCell<Option<Py<PyAny>>>,
}

#[derive(Debug)]
pub(crate) struct State {
    ready: VecDeque<Py<Handle>>,
    timers: BinaryHeap<Timer>,
    cancelled_timers: usize,
    seq: u64,
    slow_callback_duration: f64,
    poller: Option<Poller>,
    fds: FxHashMap<RawFd, FdEntry>,
    /// The eventfd, kept outside `poller` so that waking needs no borrow of
    /// anything that `close` drops.
    wake_fd: RawFd,
    /// The loop is blocked (or about to block) in `epoll_wait`. Set and read
    /// with the GIL held, so a thread that queues work sees it.
    sleeping: bool,
    /// The eventfd has been written since the loop last drained it: further
    /// `call_soon_threadsafe` calls need not write it again.
    wake_pending: bool,
    /// An fd's interest grew since the last poll (a new reader or writer):
    /// the next iteration polls, whatever `POLL_GAP_NS` says, so that what
    /// is already waiting on it comes where asyncio, which polls every
    /// iteration, delivers it.
    new_interest: bool,
    /// Transports whose writes wait for the end of this iteration, to leave
    /// in one system call (see `SocketTransport::write`).
    flush: Vec<Owner>,
    /// Handles that have run and that nothing else refers to, kept to carry
    /// the next callbacks (see `Handle::recycle`); at most `spare_cap`.
    spares: Vec<Py<Handle>>,
    /// How many spares the loop keeps: `MIN_SPARES`, or the largest batch
    /// of callbacks it has run lately, up to `MAX_SPARES` (see `trim_spares`).
    spare_cap: usize,
    /// The largest batch since `peak_since` (`CLOCK_MONOTONIC` ns).
    batch_peak: usize,
    peak_since: i128,
}

/// Below this many timers, cancelled ones are left in the heap until they
/// come up; above it, the heap is rebuilt once half of it is cancelled, as
/// asyncio does, so that schedule-and-cancel keeps memory flat.
const MIN_HEAP_FOR_CLEANUP: usize = 100;

/// How many spare handles a loop keeps at least (see `Handle::recycle`):
/// enough for the callbacks of a busy iteration, a few tens of KiB.
const MIN_SPARES: usize = 256;

/// How many it keeps at most: after a burst of this many callbacks (other
/// threads' `call_soon_threadsafe` calls while the loop waited for the GIL,
/// say), the next burst is made of the handles the last one left, not of
/// memory the allocator gave back to the kernel and faults in again. About
/// 8 MiB of handles, held only while such bursts go on: see `SPARE_WINDOW_NS`.
const MAX_SPARES: usize = 65_536;

/// The loop keeps as many spares as the largest batch it ran in the last
/// window of this long; what is above that is freed as the loop wakes from
/// a wait after the window.
const SPARE_WINDOW_NS: i128 = 1_000_000_000;

/// A new handle is hidden from the garbage collector while it waits only
/// when at least this many wait before it (see `LoopCore::new_handle`).
const UNTRACK_BEHIND: usize = 8;

fn time_now() -> f64 {
    poll::now_ns() as f64 / 1e9
}

/// A time argument in seconds: a number, not NaN.
fn seconds(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<f64> {
    let v: f64 = obj.extract().map_err(|_| {
        let ty = obj
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default();
        PyTypeError::new_err(format!("{what} must be a number, not {ty}"))
    })?;
    if v.is_nan() {
        return Err(PyValueError::new_err(format!("{what} must not be NaN")));
    }
    Ok(v)
}

/// An int, or what an object's `fileno()` gives, unchecked: asyncio's
/// `_fileobj_to_fd` and `_ensure_fd_no_transport` take it this far.
fn int_fileno(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    let invalid = || PyValueError::new_err(format!("Invalid file object: {obj}"));
    match obj.extract::<i64>() {
        Ok(fd) => Ok(fd),
        Err(_) => obj
            .call_method0(intern!(obj.py(), "fileno"))
            .map_err(|_| invalid())?
            .extract()
            .map_err(|_| invalid()),
    }
}

fn fileno(obj: &Bound<'_, PyAny>) -> PyResult<RawFd> {
    let fd = int_fileno(obj)?;
    if fd < 0 || fd > i32::MAX as i64 {
        return Err(PyValueError::new_err(format!(
            "Invalid file descriptor: {fd}"
        )));
    }
    Ok(fd as RawFd)
}

impl State {
    /// Once a `SPARE_WINDOW_NS` window has passed at `now`: the loop keeps
    /// as many spares as the window's largest batch needed (at least
    /// `MIN_SPARES`), and the rest are returned, for the caller to drop
    /// after the borrow.
    fn trim_spares(&mut self, now: i128) -> Vec<Py<Handle>> {
        if now - self.peak_since < SPARE_WINDOW_NS {
            return Vec::new();
        }
        self.spare_cap = self.batch_peak.clamp(MIN_SPARES, MAX_SPARES);
        self.batch_peak = 0;
        self.peak_since = now;
        let keep = self.spares.len().min(self.spare_cap);
        self.spares.split_off(keep)
    }

    pub(crate) fn timer_cancelled(&mut self) {
        self.cancelled_timers += 1;
    }

    fn poller(&self) -> PyResult<&Poller> {
        self.poller.as_ref().ok_or_else(closed_error)
    }

    fn schedule_timer(&mut self, py: Python<'_>, handle: &Py<Handle>, when: f64) -> PyResult<()> {
        let h = handle.clone_ref(py);
        h.get().scheduled.store(true, Relaxed);
        self.seq += 1;
        self.timers.push(Timer {
            when,
            seq: self.seq,
            handle: h,
        });
        Ok(())
    }

    /// Drops cancelled timers from the top of the heap, and rebuilds the heap
    /// without them once they are most of it.
    fn prune_timers(&mut self) {
        if self.timers.len() > MIN_HEAP_FOR_CLEANUP && self.cancelled_timers * 2 > self.timers.len()
        {
            let timers = std::mem::take(&mut self.timers);
            self.timers = timers
                .into_iter()
                .filter(|t| {
                    let h = t.handle.get();
                    let cancelled = h.is_cancelled();
                    if cancelled {
                        h.scheduled.store(false, Relaxed);
                        Handle::settle(&t.handle);
                    }
                    !cancelled
                })
                .collect();
            self.cancelled_timers = 0;
        } else {
            while let Some(top) = self.timers.peek() {
                let h = top.handle.get();
                if !h.is_cancelled() {
                    break;
                }
                h.scheduled.store(false, Relaxed);
                Handle::settle(&top.handle);
                self.timers.pop();
                self.cancelled_timers = self.cancelled_timers.saturating_sub(1);
            }
        }
    }
}

impl LoopCore {
    pub(crate) fn state<'a>(slf: &'a Bound<'_, Self>) -> PyResult<RefMut<'a, State>> {
        slf.get().state.borrow_mut(slf.py())
    }

    fn check_closed(&self) -> PyResult<()> {
        if self.closed.load(Relaxed) {
            Err(closed_error())
        } else {
            Ok(())
        }
    }

    pub(crate) fn is_debug(&self) -> bool {
        self.debug.load(Relaxed)
    }

    /// Raises if the loop is closed and, in debug mode, if called from a
    /// thread other than the loop's. Returns whether debug mode is on.
    #[inline]
    fn check_open_and_thread(slf: &Bound<'_, Self>) -> PyResult<bool> {
        let lp = slf.get();
        lp.check_closed()?;
        let debug = lp.is_debug();
        if debug {
            slf.call_method0(intern!(slf.py(), "_check_thread"))?;
        }
        Ok(debug)
    }

    fn new_handle(
        slf: &Bound<'_, Self>,
        callback: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
        context: Option<Py<PyAny>>,
        when: f64,
        what: &str,
        debug: bool,
    ) -> PyResult<Py<Handle>> {
        // Every handle made here goes to the ready queue or the timer heap,
        // except add_reader's and add_writer's. It is hidden from the
        // collector while it waits (see `Handle::settle`) only behind a
        // queue already `UNTRACK_BEHIND` long: that saves collections in a
        // burst, and would cost more than it saves for a handle that runs
        // next.
        //
        // A plain handle for the ready queue takes a spare one if the loop
        // has one (see `Handle::recycle`), outside debug mode, where a
        // handle also carries where it was made.
        // A free-threaded build keeps no spares and untracks nothing (see
        // `Handle::create` and `Handle::recycle`): it takes no lock here.
        let (queued, spare) = if cfg!(Py_GIL_DISABLED) || what.starts_with("add_") {
            (false, None)
        } else {
            let mut st = Self::state(slf)?;
            let waiting = if when.is_nan() {
                st.ready.len()
            } else {
                st.timers.len()
            };
            // A spare should be out of everyone's reach (see
            // `Handle::recycle`), but one that someone holds all the same
            // is left to them (dropping it here frees nothing; as a Bound,
            // since a Py's drop on a thread that entered through `fastcall`
            // is put off to pyo3's pool).
            let spare = if when.is_nan() && !debug {
                match st.spares.pop() {
                    Some(h) if handle::only_reference(&h) => Some(h),
                    Some(h) => {
                        drop(h.into_bound(slf.py()));
                        None
                    }
                    None => None,
                }
            } else {
                None
            };
            (waiting >= UNTRACK_BEHIND, spare)
        };
        let py = slf.py();
        if !callback.is_callable() {
            return Err(PyTypeError::new_err(format!(
                "a callable object was expected by {what}(), got {}",
                callback.repr()?
            )));
        }
        if debug {
            // asyncio's own checks; `iscoroutinefunction` warns from Python
            // 3.14 on, where asyncio calls the private one.
            let coroutines = py.import("asyncio.coroutines")?;
            let isfunction = match coroutines.getattr(intern!(py, "_iscoroutinefunction")) {
                Ok(f) => f,
                Err(_) => coroutines.getattr(intern!(py, "iscoroutinefunction"))?,
            };
            let iscoro = isfunction.call1((callback,))?.is_truthy()?
                || coroutines
                    .getattr(intern!(py, "iscoroutine"))?
                    .call1((callback,))?
                    .is_truthy()?;
            if iscoro {
                return Err(PyTypeError::new_err(format!(
                    "coroutines cannot be used with {what}()"
                )));
            }
        }
        let slot = match spare {
            Some(h) => Slot::Spare(h),
            None => Slot::New(slf.clone().unbind()),
        };
        let h = Handle::create(
            py,
            slot,
            callback.clone().unbind(),
            args.clone().unbind(),
            context,
            when,
            queued,
        )?;
        if debug {
            // The innermost Python frame is the caller's: this method has none.
            let frame = py
                .import("sys")?
                .call_method1(intern!(py, "_getframe"), (0,))?;
            let tb = py
                .import("asyncio.format_helpers")?
                .call_method1(intern!(py, "extract_stack"), (frame,))?;
            h.get().set_source_traceback(py, tb.unbind())?;
        }
        Ok(h)
    }

    /// `call_soon(callback, *args, context=None)`, called through
    /// `fastcall`.
    pub(crate) fn call_soon_impl(
        slf: &Bound<'_, Self>,
        callback: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
        context: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let debug = Self::check_open_and_thread(slf)?;
        let (h, st) = Self::queue_soon(slf, callback, args, context, "call_soon", debug)?;
        drop(st);
        Ok(h.into_any())
    }

    /// `call_soon_threadsafe(callback, *args, context=None)`, called through
    /// `fastcall`.
    pub(crate) fn call_soon_threadsafe_impl(
        slf: &Bound<'_, Self>,
        callback: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
        context: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let core = slf.get();
        core.check_closed()?;
        let what = "call_soon_threadsafe";
        let (h, mut lp) = Self::queue_soon(slf, callback, args, context, what, core.is_debug())?;
        // A loop that is running callbacks sees the queue before it blocks
        // again; only a sleeping loop needs the eventfd, and only once.
        if lp.sleeping && !lp.wake_pending {
            lp.wake_pending = true;
            poll::wake(lp.wake_fd);
        }
        Ok(h.into_any())
    }

    /// Makes the handle of a `call_soon` and puts it at the end of the
    /// ready queue; returns it, and the state still borrowed.
    fn queue_soon<'a>(
        slf: &'a Bound<'_, Self>,
        callback: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
        context: Option<Py<PyAny>>,
        what: &str,
        debug: bool,
    ) -> PyResult<(Py<Handle>, RefMut<'a, State>)> {
        let h = Self::new_handle(slf, callback, args, context, f64::NAN, what, debug)?;
        let mut st = Self::state(slf)?;
        st.ready.push_back(h.clone_ref(slf.py()));
        Ok((h, st))
    }

    /// `loop.create_future()`: an `asyncio.Future` of this loop, called
    /// through `fastcall`. Made here, not in Python: a Python
    /// method's frame was a tenth of a future's round trip (create, resolve
    /// from a callback, await).
    pub(crate) fn create_future<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        static FUTURE: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
        static LOOP_KW: pyo3::sync::PyOnceLock<Py<PyTuple>> = pyo3::sync::PyOnceLock::new();
        let py = slf.py();
        let cls = FUTURE.import(py, "asyncio.futures", "Future")?;
        let kw = LOOP_KW.get_or_try_init(py, || PyTuple::new(py, ["loop"]).map(Bound::unbind))?;
        let args = [slf.as_ptr()];
        // SAFETY: with the GIL held; `args` holds one live reference, named
        // by the one keyword in `kw` (a tuple of str), as vectorcall takes
        // them. Returns a new reference or NULL with an exception set.
        unsafe {
            Bound::from_owned_ptr_or_err(
                py,
                ffi::PyObject_Vectorcall(cls.as_ptr(), args.as_ptr(), 0, kw.as_ptr()),
            )
        }
    }

    /// `loop.create_task(coro, *, name=None, context=None)`, as asyncio's
    /// `BaseEventLoop.create_task` does it: `tasks.Task(coro, loop=self,
    /// name=name, context=context)` (the class looked up on each call, as
    /// there), or the task factory's task, named. Called from C
    /// (`fastcall`), so no frame of the loop's is on the stack: in debug
    /// mode, the task's traceback already ends at the caller's line.
    pub(crate) fn create_task<'py>(
        slf: &Bound<'py, Self>,
        coro: &Bound<'py, PyAny>,
        name: Option<Bound<'py, PyAny>>,
        context: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        static TASKS: pyo3::sync::PyOnceLock<Py<PyModule>> = pyo3::sync::PyOnceLock::new();
        static TASK_KW: pyo3::sync::PyOnceLock<Py<PyTuple>> = pyo3::sync::PyOnceLock::new();
        let py = slf.py();
        if let Some(factory) = slf.get().open_task_factory(py)? {
            let task = match context {
                None => factory.call1(py, (slf, coro))?,
                Some(ctx) => {
                    let kw = pyo3::types::PyDict::new(py);
                    kw.set_item(intern!(py, "context"), ctx)?;
                    factory.call(py, (slf, coro), Some(&kw))?
                }
            }
            .into_bound(py);
            if let Some(name) = name {
                task.call_method1(intern!(py, "set_name"), (name,))?;
            }
            return Ok(task);
        }
        let tasks = TASKS.get_or_try_init(py, || py.import("asyncio.tasks").map(Bound::unbind))?;
        let cls = tasks.bind(py).getattr(intern!(py, "Task"))?;
        let kw = TASK_KW.get_or_try_init(py, || {
            PyTuple::new(py, ["loop", "name", "context"]).map(Bound::unbind)
        })?;
        let none = py.None();
        let args = [
            coro.as_ptr(),
            slf.as_ptr(),
            name.as_ref().map_or(none.as_ptr(), |n| n.as_ptr()),
            context.as_ref().map_or(none.as_ptr(), |c| c.as_ptr()),
        ];
        // SAFETY: with the GIL held; `args` holds four live references (one
        // positional, then one per keyword in `kw`, a tuple of str), as
        // vectorcall takes them. Returns a new reference or NULL with an
        // exception set.
        unsafe {
            Bound::from_owned_ptr_or_err(
                py,
                ffi::PyObject_Vectorcall(cls.as_ptr(), args.as_ptr(), 1, kw.as_ptr()),
            )
        }
    }
}

impl LoopCore {
    /// The task factory, if one is set, once the loop is checked open: the
    /// start of every `create_task`.
    fn open_task_factory(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.check_closed()?;
        Ok(self
            .task_factory
            .borrow(py)?
            .as_ref()
            .map(|f| f.clone_ref(py)))
    }

    /// `loop.create_task(coro, **kwargs)` with keywords, as Python 3.14's
    /// asyncio does it: `factory(loop, coro, **kwargs)`, else
    /// `tasks.Task(coro, loop=self, **kwargs)`. Without keywords,
    /// [`LoopCore::create_task`] gives the same calls.
    #[cfg(Py_3_14)]
    pub(crate) fn create_task_with<'py>(
        slf: &Bound<'py, Self>,
        coro: &Bound<'py, PyAny>,
        kwargs: &Bound<'py, pyo3::types::PyDict>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        if let Some(factory) = slf.get().open_task_factory(py)? {
            return factory.bind(py).call((slf, coro), Some(kwargs));
        }
        let cls = py.import("asyncio.tasks")?.getattr(intern!(py, "Task"))?;
        if kwargs.contains(intern!(py, "loop"))? {
            return Err(PyTypeError::new_err(
                "Task() got multiple values for keyword argument 'loop'",
            ));
        }
        kwargs.set_item(intern!(py, "loop"), slf)?;
        cls.call((coro,), Some(kwargs))
    }
}

#[pymethods]
impl LoopCore {
    /// Shows the garbage collector the handles and transports the loop
    /// holds, so that a loop dropped unclosed, whose callbacks refer back to
    /// it, is collected, as asyncio's is.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Some(c) = self.empty_context.peek() {
            visit.call(&*c)?;
        }
        if let Some(f) = self.task_factory.peek() {
            visit.call(&*f)?;
        }
        let Some(st) = self.state.peek() else {
            return Ok(());
        };
        // A running loop is not garbage: the thread in `run_forever` holds
        // it. What its queued handles refer to is then alive as long as
        // they wait, and leaving those edges out only makes the collector
        // count it as held from outside, which it is. So a collection while
        // the loop runs (a young one, every few hundred allocations, while
        // the loop itself is young) does not walk a queue of tens of
        // thousands of handles. A loop that is not running shows them all,
        // so that one dropped unclosed is collected with its callbacks.
        if !self.running.load(Relaxed) {
            for h in &st.ready {
                Handle::traverse_queued(h, &visit)?;
            }
            for t in &st.timers {
                Handle::traverse_queued(&t.handle, &visit)?;
            }
        }
        for t in &st.flush {
            visit.call(&t.obj)?;
        }
        // Spares are untracked, and each refers only to this loop (see
        // `Handle::recycle`): their references are shown as the loop's own,
        // read from one of them. A full collection then does not touch
        // every spare, tens of thousands after a burst.
        if let Some(first) = st.spares.first() {
            let lp = &*first.get().loop_;
            for _ in 0..st.spares.len() {
                visit.call(lp)?;
            }
        }
        for e in st.fds.values() {
            for cb in [&e.reader, &e.writer].into_iter().flatten() {
                match cb {
                    FdCallback::Handle(h) => visit.call(h)?,
                    FdCallback::Owner(t) => visit.call(&t.obj)?,
                }
            }
            visit.call(&e.obj)?;
        }
        Ok(())
    }

    /// Breaks the cycles the collector found: drops every callback. The
    /// epoll set goes with the loop.
    fn __clear__(&self) {
        let shared = self.empty_context.peek_mut().and_then(|mut c| c.take());
        let factory = self.task_factory.peek_mut().and_then(|mut f| f.take());
        drop((shared, factory));
        let taken = self.state.peek_mut().map(|mut st| {
            st.cancelled_timers = 0;
            (
                std::mem::take(&mut st.ready),
                std::mem::take(&mut st.timers),
                std::mem::take(&mut st.fds),
                std::mem::take(&mut st.flush),
                std::mem::take(&mut st.spares),
            )
        });
        if let Some((ready, timers, fds, flush, spares)) = taken {
            drop((flush, spares));
            for h in &ready {
                Handle::settle(h);
            }
            for t in &timers {
                Handle::settle(&t.handle);
            }
            drop((ready, timers, fds));
        }
    }

    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn py_new(
        _args: &Bound<'_, PyTuple>,
        _kwargs: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> PyResult<Self> {
        let poller = Poller::new().map_err(os_error)?;
        let wake_fd = poller.wake_fd();
        Ok(Self {
            state: GilCell::new(State {
                ready: VecDeque::new(),
                timers: BinaryHeap::new(),
                cancelled_timers: 0,
                seq: 0,
                slow_callback_duration: 0.1,
                poller: Some(poller),
                fds: FxHashMap::default(),
                wake_fd,
                sleeping: false,
                wake_pending: false,
                new_interest: false,
                flush: Vec::new(),
                spares: Vec::new(),
                spare_cap: MIN_SPARES,
                batch_peak: 0,
                peak_since: poll::now_ns(),
            }),
            closed: AtomicBool::new(false),
            debug: AtomicBool::new(false),
            stopping: AtomicBool::new(false),
            running: AtomicBool::new(false),
            deferred: AtomicBool::new(false),
            empty_context: GilCell::new(None),
            task_factory: GilCell::new(None),
        })
    }

    /// `time.monotonic()`: the clock timers use.
    fn time(&self) -> f64 {
        time_now()
    }

    /// Makes `create_task` call `factory(loop, coro, **kw)`; `None`
    /// restores asyncio's `Task`.
    fn set_task_factory(&self, py: Python<'_>, factory: Option<Bound<'_, PyAny>>) -> PyResult<()> {
        if factory.as_ref().is_some_and(|f| !f.is_callable()) {
            return Err(PyTypeError::new_err(
                "task factory must be a callable or None",
            ));
        }
        let old = std::mem::replace(
            &mut *self.task_factory.borrow_mut(py)?,
            factory.map(Bound::unbind),
        );
        // Dropped with the cell released: its finaliser may call back.
        drop(old);
        Ok(())
    }

    /// The task factory, or `None`.
    fn get_task_factory(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        Ok(self
            .task_factory
            .borrow(py)?
            .as_ref()
            .map(|f| f.clone_ref(py)))
    }

    #[pyo3(signature = (delay, callback, *args, context = None))]
    fn call_later(
        slf: &Bound<'_, Self>,
        delay: &Bound<'_, PyAny>,
        callback: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
        context: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let delay = seconds(delay, "delay")?;
        let when = time_now() + delay;
        Self::call_at_f(slf, when, callback, args, context, "call_later")
    }

    #[pyo3(signature = (when, callback, *args, context = None))]
    fn call_at(
        slf: &Bound<'_, Self>,
        when: &Bound<'_, PyAny>,
        callback: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
        context: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let given_int = when.is_exact_instance_of::<PyInt>();
        let when = seconds(when, "when")?;
        let h = Self::call_at_f(slf, when, callback, args, context, "call_at")?;
        if given_int
            && when.fract() == 0.0
            && when.abs() < 9.0e15
            && let Ok(t) = h.bind(slf.py()).cast::<handle::TimerHandle>()
        {
            t.get().mark_given_int();
        }
        Ok(h)
    }

    /// Runs iterations until `stop()`. `run_forever` in Python sets up and
    /// tears down around it.
    fn _run(slf: &Bound<'_, Self>) -> PyResult<()> {
        let core = slf.get();
        core.check_closed()?;
        if core.running.swap(true, Relaxed) {
            return Err(PyRuntimeError::new_err(
                "This event loop is already running",
            ));
        }
        let mut events = poll::Events::with_capacity(1024);
        let mut ready = Vec::with_capacity(1024);
        // The first iteration polls.
        let mut last_poll = poll::PollGap::new(POLL_GAP_NS);
        let mut window = FlushWindow::new();
        let mut todo = VecDeque::new();
        let mut calls = Vec::new();
        let res = loop {
            if let Err(e) = Self::run_once(
                slf,
                &mut events,
                &mut ready,
                &mut last_poll,
                &mut window,
                &mut todo,
                &mut calls,
            ) {
                break Err(e);
            }
            if core.stopping.load(Relaxed) {
                break Ok(());
            }
        };
        core.running.store(false, Relaxed);
        core.stopping.store(false, Relaxed);
        res
    }

    /// Makes `run_forever` return after the current iteration.
    fn stop(&self) {
        self.stopping.store(true, Relaxed);
    }

    fn _is_stopping(&self) -> bool {
        self.stopping.load(Relaxed)
    }

    fn is_closed(&self) -> bool {
        self.closed.load(Relaxed)
    }

    fn _core_running(&self) -> bool {
        self.running.load(Relaxed)
    }

    /// Any object, taken by its truth (asyncio stores what it is given;
    /// aiohttp's tests call `set_debug(0)`).
    fn set_debug(&self, enabled: &Bound<'_, PyAny>) -> PyResult<()> {
        self.debug.store(enabled.is_truthy()?, Relaxed);
        Ok(())
    }

    fn get_debug(&self) -> bool {
        self.is_debug()
    }

    #[getter(debug)]
    fn debug_attr(&self) -> bool {
        self.is_debug()
    }

    #[getter]
    fn slow_callback_duration(slf: &Bound<'_, Self>) -> PyResult<f64> {
        Ok(Self::state(slf)?.slow_callback_duration)
    }

    #[setter]
    fn set_slow_callback_duration(slf: &Bound<'_, Self>, value: f64) -> PyResult<()> {
        Self::state(slf)?.slow_callback_duration = value;
        Ok(())
    }

    /// Drops every queued callback and timer, and closes epoll, the eventfd
    /// and the timerfd. `close()` in Python does the rest.
    fn _close_core(slf: &Bound<'_, Self>) -> PyResult<()> {
        let core = slf.get();
        if core.running.load(Relaxed) {
            return Err(PyRuntimeError::new_err("Cannot close a running event loop"));
        }
        core.closed.store(true, Relaxed);
        // Taken out of the state first: dropping handles can run finalizers
        // that call back into the loop.
        let (ready, timers, fds, poller, spares) = {
            let mut st = Self::state(slf)?;
            st.cancelled_timers = 0;
            st.wake_fd = -1;
            (
                std::mem::take(&mut st.ready),
                std::mem::take(&mut st.timers),
                std::mem::take(&mut st.fds),
                st.poller.take(),
                std::mem::take(&mut st.spares),
            )
        };
        drop(spares);
        for t in timers {
            t.handle.get().scheduled.store(false, Relaxed);
            Handle::settle(&t.handle);
        }
        for h in &ready {
            Handle::settle(h);
        }
        drop((ready, fds, poller));
        Ok(())
    }

    #[pyo3(signature = (fd, callback, *args))]
    fn add_reader(
        slf: &Bound<'_, Self>,
        fd: &Bound<'_, PyAny>,
        callback: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
    ) -> PyResult<Py<PyAny>> {
        Self::add_fd(slf, fd, callback, args, READ, "add_reader")
    }

    #[pyo3(signature = (fd, callback, *args))]
    fn add_writer(
        slf: &Bound<'_, Self>,
        fd: &Bound<'_, PyAny>,
        callback: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
    ) -> PyResult<Py<PyAny>> {
        Self::add_fd(slf, fd, callback, args, WRITE, "add_writer")
    }

    fn remove_reader(slf: &Bound<'_, Self>, fd: &Bound<'_, PyAny>) -> PyResult<bool> {
        Self::remove_fd(slf, fd, READ)
    }

    fn remove_writer(slf: &Bound<'_, Self>, fd: &Bound<'_, PyAny>) -> PyResult<bool> {
        Self::remove_fd(slf, fd, WRITE)
    }

    /// Raises if a transport owns `fd`, as asyncio's `_ensure_fd_no_transport`.
    /// As asyncio's, it takes any int `fileno()` gives (-1 for a closed
    /// socket), and an fd no transport can own passes.
    fn _ensure_fd_no_transport(slf: &Bound<'_, Self>, fd: &Bound<'_, PyAny>) -> PyResult<()> {
        match RawFd::try_from(int_fileno(fd)?) {
            Ok(n) => Self::ensure_no_transport(slf, n),
            Err(_) => Ok(()),
        }
    }

    /// The number of callbacks queued to run: for tests and debugging.
    fn _ready_count(slf: &Bound<'_, Self>) -> PyResult<usize> {
        Ok(Self::state(slf)?.ready.len())
    }

    /// The number of timers in the heap, cancelled ones included.
    fn _timer_count(slf: &Bound<'_, Self>) -> PyResult<usize> {
        Ok(Self::state(slf)?.timers.len())
    }

    fn _fd_count(slf: &Bound<'_, Self>) -> PyResult<usize> {
        Ok(Self::state(slf)?.fds.len())
    }
}
