//! The fd table and the interface the core calls transports through:
//! [`FdOwner`], which the transports above implement, and what the table
//! holds for each fd (a handle of `add_reader`/`add_writer`, or an owner).

use super::handle::Handle;
use super::{LoopCore, State, fileno};
use crate::poll::{READ, WRITE};
use pyo3::PyClass;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyTuple};
use std::os::fd::RawFd;
use std::sync::atomic::Ordering::Relaxed;

/// A transport with its type erased: the object, and its type's
/// [`FdOwner`] functions, made for that type only (see [`Owner::new`]).
/// What the core asks of a transport that owns its fd: the interface the
/// core defines and the transports (`transport.rs`, `datagram.rs`), above
/// it, implement. The core calls it directly on readiness, with no handle
/// and no queue.
pub(crate) trait FdOwner: PyClass {
    /// The fd was found readable and/or writable.
    fn ready(slf: &Bound<'_, Self>, readable: bool, writable: bool) -> PyResult<()>;

    /// The end of the loop's iteration: sends what a write deferred with
    /// [`LoopCore::defer_write`].
    fn flush(slf: &Bound<'_, Self>) -> PyResult<()>;
}

#[derive(Debug)]
pub(crate) struct Owner {
    pub(super) obj: Py<PyAny>,
    ready: fn(&Bound<'_, PyAny>, bool, bool) -> PyResult<()>,
    flush: fn(&Bound<'_, PyAny>) -> PyResult<()>,
}

impl Owner {
    pub(crate) fn new<T: FdOwner>(t: &Bound<'_, T>) -> Self {
        fn ready<T: FdOwner>(obj: &Bound<'_, PyAny>, r: bool, w: bool) -> PyResult<()> {
            // SAFETY: `obj` came from a `Bound<T>` in `Owner::new`, which
            // pairs it with this function of the same `T`.
            T::ready(unsafe { obj.cast_unchecked::<T>() }, r, w)
        }
        fn flush<T: FdOwner>(obj: &Bound<'_, PyAny>) -> PyResult<()> {
            // SAFETY: as in `ready`.
            T::flush(unsafe { obj.cast_unchecked::<T>() })
        }
        Owner {
            obj: t.clone().into_any().unbind(),
            ready: ready::<T>,
            flush: flush::<T>,
        }
    }

    pub(super) fn clone_ref(&self, py: Python<'_>) -> Self {
        Owner {
            obj: self.obj.clone_ref(py),
            ready: self.ready,
            flush: self.flush,
        }
    }

    /// Calls its `ready`, releasing the reference as a `Bound`.
    pub(super) fn call_ready(self, py: Python<'_>, r: bool, w: bool) -> PyResult<()> {
        let obj = self.obj.into_bound(py);
        (self.ready)(&obj, r, w)
    }

    /// Calls its `flush`, likewise.
    pub(super) fn call_flush(self, py: Python<'_>) -> PyResult<()> {
        let obj = self.obj.into_bound(py);
        (self.flush)(&obj)
    }
}

/// What runs when a file descriptor is ready.
#[derive(Debug)]
pub(crate) enum FdCallback {
    /// A handle from `add_reader`/`add_writer`: queued on the ready queue.
    Handle(Py<Handle>),
    /// A transport: called directly.
    Owner(Owner),
}

impl FdCallback {
    /// The transport behind it, if it is one.
    pub(super) fn transport(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        match self {
            FdCallback::Handle(_) => None,
            FdCallback::Owner(t) => Some(t.obj.clone_ref(py)),
        }
    }

    /// Drops it as a `Bound`: no `Py` is dropped on the paths that
    /// `fastcall` enters (see ARCHITECTURE.md).
    pub(super) fn release(self, py: Python<'_>) {
        match self {
            FdCallback::Handle(h) => drop(h.into_bound(py)),
            FdCallback::Owner(t) => drop(t.obj.into_bound(py)),
        }
    }

    pub(super) fn clone_ref(&self, py: Python<'_>) -> Self {
        match self {
            FdCallback::Handle(h) => FdCallback::Handle(h.clone_ref(py)),
            FdCallback::Owner(t) => FdCallback::Owner(t.clone_ref(py)),
        }
    }
}

#[derive(Debug, Default)]
pub(super) struct FdEntry {
    pub(super) reader: Option<FdCallback>,
    pub(super) writer: Option<FdCallback>,
    /// The interest registered with epoll (READ | WRITE).
    pub(super) mask: u8,
    /// The object the last `add_reader` or `add_writer` of this fd was
    /// given (a socket, say), when it was not a plain int: once it is
    /// closed, its `fileno()` is -1, and `remove_reader(obj)` finds the
    /// registration by the object itself, as asyncio's selector does.
    pub(super) obj: Option<Py<PyAny>>,
}

/// What `State::set_fd` took out of the fd table. Dropping a callback or
/// an object may run a finalizer that calls the loop, so the caller holds
/// this until its borrow of the state has ended, then calls `settle`.
#[derive(Default)]
#[must_use]
pub(crate) struct Taken {
    /// The callback the new one replaced.
    old: Option<FdCallback>,
    /// The object the fd was registered with, once no callback is left.
    obj: Option<Py<PyAny>>,
    /// The fd's whole entry, when epoll refused the change.
    entry: Option<FdEntry>,
    /// epoll's refusal.
    error: Option<PyErr>,
}

impl Taken {
    /// Drops what was taken, outside the borrow. Returns the replaced
    /// callback for the caller to cancel or release, or epoll's error (the
    /// replaced callback then goes with the rest, as in asyncio).
    pub(super) fn settle(self, py: Python<'_>) -> PyResult<Option<FdCallback>> {
        drop(self.obj.map(|o| o.into_bound(py)));
        if let Some(e) = self.entry {
            for cb in [e.reader, e.writer].into_iter().flatten() {
                cb.release(py);
            }
            drop(e.obj.map(|o| o.into_bound(py)));
        }
        match self.error {
            Some(err) => {
                if let Some(old) = self.old {
                    old.release(py);
                }
                Err(err)
            }
            None => Ok(self.old),
        }
    }
}

/// A failed system call as Python's own socket calls raise it:
/// `OSError(errno, strerror)`, which is the errno's subclass
/// (`ConnectionResetError`, ...) with `errno` and `strerror` set.
/// (pyo3's `From<io::Error>` gives the subclass without `errno`.)
pub(crate) fn os_error(e: std::io::Error) -> PyErr {
    let Some(code) = e.raw_os_error() else {
        return PyErr::from(e);
    };
    let text = e.to_string();
    let suffix = format!(" (os error {code})");
    let strerror = text.strip_suffix(&suffix).unwrap_or(&text);
    PyOSError::new_err((code, strerror.to_owned()))
}

impl State {
    /// Sets the callback for one direction of `fd` and updates epoll.
    /// What it takes out of the table is in the `Taken` it returns, for the
    /// caller to settle after its borrow of the state. If epoll refuses the
    /// change, the fd is forgotten, as asyncio's selector forgets it, and
    /// its whole entry is in the `Taken` with the error.
    pub(crate) fn set_fd(&mut self, fd: RawFd, dir: u8, cb: Option<FdCallback>) -> Taken {
        let entry = self.fds.entry(fd).or_default();
        let old = if dir == READ {
            std::mem::replace(&mut entry.reader, cb)
        } else {
            std::mem::replace(&mut entry.writer, cb)
        };
        let new = (entry.reader.is_some() as u8 * READ) | (entry.writer.is_some() as u8 * WRITE);
        let before = entry.mask;
        let mut taken = Taken {
            old,
            ..Taken::default()
        };
        if new == 0 {
            taken.obj = self.fds.remove(&fd).and_then(|e| e.obj);
        } else {
            entry.mask = new;
        }
        self.new_interest |= new & !before != 0;
        if before != new
            && let Some(p) = self.poller.as_ref()
            && let Err(e) = p.update(fd, before, new)
        {
            // Keep the table in step with epoll: nothing registered.
            taken.entry = self.fds.remove(&fd);
            taken.error = Some(os_error(e));
        }
        taken
    }

    /// Whether `fd` has a reader (`dir` READ) or a writer (WRITE).
    pub(super) fn has_callback(&self, fd: RawFd, dir: u8) -> bool {
        self.fds.get(&fd).is_some_and(|e| {
            if dir == READ {
                e.reader.is_some()
            } else {
                e.writer.is_some()
            }
        })
    }

    /// The transport registered for `fd`, if a transport owns it.
    pub(super) fn transport_of(&self, py: Python<'_>, fd: RawFd) -> Option<Py<PyAny>> {
        let e = self.fds.get(&fd)?;
        [&e.reader, &e.writer]
            .into_iter()
            .flatten()
            .find_map(|cb| cb.transport(py))
    }
}

impl LoopCore {
    /// Raises if a transport owns `fd`, as asyncio's `_ensure_fd_no_transport`.
    /// The transport's repr is taken after the borrow ends.
    pub(super) fn ensure_no_transport(slf: &Bound<'_, Self>, fd: RawFd) -> PyResult<()> {
        let py = slf.py();
        let owner = Self::state(slf)?.transport_of(py, fd);
        match owner {
            Some(t) => Err(PyRuntimeError::new_err(format!(
                "File descriptor {fd} is used by transport {}",
                t.bind(py).repr()?
            ))),
            None => Ok(()),
        }
    }

    pub(super) fn call_at_f(
        slf: &Bound<'_, Self>,
        when: f64,
        callback: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
        context: Option<Py<PyAny>>,
        what: &str,
    ) -> PyResult<Py<PyAny>> {
        let debug = Self::check_open_and_thread(slf)?;
        let h = Self::new_handle(slf, callback, args, context, when, what, debug)?;
        Self::state(slf)?.schedule_timer(slf.py(), &h, when)?;
        Ok(h.into_any())
    }

    pub(super) fn add_fd(
        slf: &Bound<'_, Self>,
        fd: &Bound<'_, PyAny>,
        callback: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
        dir: u8,
        what: &str,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let core = slf.get();
        core.check_closed()?;
        let fdn = Self::fd_of(slf, fd)?;
        Self::ensure_no_transport(slf, fdn)?;
        let h = Self::new_handle(slf, callback, args, None, f64::NAN, what, core.is_debug())?;
        let hh = h.clone_ref(py);
        let (taken, old_obj) = {
            let mut st = Self::state(slf)?;
            let taken = st.set_fd(fdn, dir, Some(FdCallback::Handle(hh)));
            let obj = (!fd.is_instance_of::<PyInt>()).then(|| fd.clone().unbind());
            let old_obj = st
                .fds
                .get_mut(&fdn)
                .and_then(|e| std::mem::replace(&mut e.obj, obj));
            (taken, old_obj)
        };
        // Dropped after the borrow, as Bounds: finalizers may run.
        drop(old_obj.map(|o| o.into_bound(py)));
        if let Some(FdCallback::Handle(old)) = taken.settle(py)? {
            Handle::cancel_handle(old.bind(py))?;
        }
        Ok(h.into_any())
    }

    /// The fd of an `add_reader`/`remove_reader` argument: its `fileno()`,
    /// or, for an object whose `fileno()` is no longer valid (a closed
    /// socket's is -1), the fd it was registered with, found by identity,
    /// as asyncio's selector finds it (`_fileobj_lookup`).
    pub(super) fn fd_of(slf: &Bound<'_, Self>, fd: &Bound<'_, PyAny>) -> PyResult<RawFd> {
        match fileno(fd) {
            Ok(n) => Ok(n),
            Err(e) if e.is_instance_of::<PyValueError>(slf.py()) => {
                let st = Self::state(slf)?;
                st.fds
                    .iter()
                    .find(|(_, en)| en.obj.as_ref().is_some_and(|o| o.is(fd)))
                    .map(|(&n, _)| n)
                    .ok_or(e)
            }
            Err(e) => Err(e),
        }
    }

    pub(super) fn remove_fd(
        slf: &Bound<'_, Self>,
        fd: &Bound<'_, PyAny>,
        dir: u8,
    ) -> PyResult<bool> {
        let py = slf.py();
        let fdn = Self::fd_of(slf, fd)?;
        if slf.get().closed.load(Relaxed) {
            return Ok(false);
        }
        Self::ensure_no_transport(slf, fdn)?;
        let taken = {
            let mut st = Self::state(slf)?;
            if !st.has_callback(fdn, dir) {
                return Ok(false);
            }
            st.set_fd(fdn, dir, None)
        };
        if let Some(FdCallback::Handle(old)) = taken.settle(py)? {
            Handle::cancel_handle(old.bind(py))?;
        }
        Ok(true)
    }

    /// For transports: register (`cb` is the transport) or drop (`None`)
    /// their own readiness interest.
    pub(crate) fn transport_fd(
        slf: &Bound<'_, Self>,
        fd: RawFd,
        dir: u8,
        cb: Option<FdCallback>,
    ) -> PyResult<()> {
        let py = slf.py();
        if slf.get().closed.load(Relaxed) {
            if let Some(cb) = cb {
                cb.release(py);
            }
            return Ok(());
        }
        let taken = {
            let mut lp = Self::state(slf)?;
            let has = lp.has_callback(fd, dir);
            if !has && cb.is_none() {
                return Ok(());
            }
            lp.set_fd(fd, dir, cb)
        };
        if let Some(old) = taken.settle(py)? {
            old.release(py);
        }
        Ok(())
    }
}
