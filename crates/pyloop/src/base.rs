//! What the stream transport (`transport.rs`) and the datagram transport
//! (`datagram.rs`) share: their common state ([`Base`]) and the parts of
//! asyncio's transport API that work the same on both (readiness interest,
//! pausing reading, write flow control, closing, the protocol's context).
//! Each transport's `#[pymethods]` delegate here.

use std::os::fd::RawFd;

use pyo3::PyClass;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::pyclass::boolean_struct::False;
use pyo3::types::{PyDict, PyTuple};

use crate::core::{FdCallback, FdOwner, LoopCore, Owner};
use crate::poll::READ;

pub(crate) const DEFAULT_HIGH: usize = 64 * 1024;

/// The `asyncio.Transport` classes the Python layer puts in front of the
/// Rust transports that Rust itself makes (an accepted connection's, a TLS
/// connection's application side). The Python layer hands them down when
/// it is imported ([`set_transport_faces`]), so this crate never imports
/// the package above it.
pub(crate) struct Faces {
    /// `pyloop._loop.SocketTransport`: called with the Rust transport and
    /// its `extra` dict.
    pub(crate) socket_transport: Py<PyAny>,
    /// `pyloop._loop.SSLTransport`: called with the `SSLProtocol`.
    pub(crate) ssl_transport: Py<PyAny>,
}

static FACES: pyo3::sync::PyOnceLock<Faces> = pyo3::sync::PyOnceLock::new();

/// Called once by `pyloop._loop` as it is imported. A second call (a
/// reloaded module) keeps the first classes.
#[pyfunction]
pub fn set_transport_faces(py: Python<'_>, socket_transport: Py<PyAny>, ssl_transport: Py<PyAny>) {
    let _ = FACES.set(
        py,
        Faces {
            socket_transport,
            ssl_transport,
        },
    );
}

pub(crate) fn faces(py: Python<'_>) -> PyResult<&'static Faces> {
    FACES.get(py).ok_or_else(|| {
        pyo3::exceptions::PyRuntimeError::new_err(
            "pyloop._pyloop: the transport classes are not set (import pyloop, not pyloop._pyloop)",
        )
    })
}

/// The state every transport has.
#[derive(Debug)]
pub(crate) struct Base {
    pub(crate) loop_: Option<Py<LoopCore>>,
    /// The Python object that owns the fd (a socket, or a pipe's file);
    /// closed after `connection_lost`.
    pub(crate) sock: Option<Py<PyAny>>,
    pub(crate) fd: RawFd,
    pub(crate) protocol: Option<Py<PyAny>>,
    pub(crate) extra: Py<PyDict>,
    pub(crate) high: usize,
    pub(crate) low: usize,
    pub(crate) protocol_paused: bool,
    pub(crate) reading_paused: bool,
    /// The interest registered with the loop.
    pub(crate) reading: bool,
    pub(crate) writing: bool,
    pub(crate) closing: bool,
    pub(crate) conn_lost: u32,
    /// The `contextvars.Context` current when the transport was made: the
    /// protocol's callbacks run in it, as asyncio's reader handles and
    /// uvloop's transports do.
    pub(crate) context: Py<PyAny>,
}

impl Base {
    pub(crate) fn new(
        loop_: &Bound<'_, LoopCore>,
        sock: &Bound<'_, PyAny>,
        fd: RawFd,
        protocol: &Bound<'_, PyAny>,
        extra: &Bound<'_, PyDict>,
    ) -> PyResult<Self> {
        Ok(Self {
            loop_: Some(loop_.clone().unbind()),
            sock: Some(sock.clone().unbind()),
            fd,
            protocol: Some(protocol.clone().unbind()),
            extra: extra.clone().unbind(),
            high: DEFAULT_HIGH,
            low: DEFAULT_HIGH / 4,
            protocol_paused: false,
            reading_paused: false,
            reading: false,
            writing: false,
            closing: false,
            conn_lost: 0,
            context: copy_context(loop_.py())?,
        })
    }

    pub(crate) fn lp<'py>(&self, py: Python<'py>) -> Option<Bound<'py, LoopCore>> {
        self.loop_.as_ref().map(|l| l.bind(py).clone())
    }

    /// The protocol, as a `Bound`: its drop needs no look at the thread's
    /// state (a `Py`'s does), and on a path entered through `fastcall` a
    /// `Py`'s decref would be put off to pyo3's pool.
    pub(crate) fn protocol<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyAny>> {
        self.protocol.as_ref().map(|p| p.bind(py).clone())
    }

    pub(crate) fn traverse(&self, visit: &pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.loop_)?;
        visit.call(&self.sock)?;
        visit.call(&self.protocol)?;
        visit.call(&self.extra)?;
        visit.call(&self.context)
    }

    pub(crate) fn clear(&mut self) {
        self.loop_ = None;
        self.sock = None;
        self.protocol = None;
    }

    pub(crate) fn is_reading(&self) -> bool {
        !self.reading_paused && !self.closing
    }

    pub(crate) fn get_extra_info(
        &self,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        match self.extra.bind(py).get_item(name)? {
            Some(v) => Ok(v.unbind()),
            None => Ok(default.unwrap_or_else(|| py.None())),
        }
    }

    pub(crate) fn get_protocol(&self, py: Python<'_>) -> Py<PyAny> {
        self.protocol(py).map_or_else(|| py.None(), Bound::unbind)
    }

    pub(crate) fn sock(&self, py: Python<'_>) -> Py<PyAny> {
        self.sock
            .as_ref()
            .map(|s| s.clone_ref(py))
            .unwrap_or_else(|| py.None())
    }

    /// "open", "closing" or "closed", for `__repr__`.
    pub(crate) fn state(&self) -> &'static str {
        if self.fd < 0 {
            "closed"
        } else if self.closing {
            "closing"
        } else {
            "open"
        }
    }
}

/// A transport class: a `#[pyclass]` with a [`Base`].
pub(crate) trait Transport: PyClass<Frozen = False> + FdOwner {
    fn base(&self) -> &Base;
    fn base_mut(&mut self) -> &mut Base;
    /// Bytes accepted for writing that the kernel has not taken yet.
    fn buffered(&self) -> usize;
}

/// Turns the loop's interest in reading (`dir` READ) or writing on or off.
pub(crate) fn set_interest<T: Transport>(slf: &Bound<'_, T>, dir: u8, on: bool) -> PyResult<()> {
    let (lp, fd) = {
        let mut t = slf.borrow_mut();
        let b = t.base_mut();
        let flag = if dir == READ {
            &mut b.reading
        } else {
            &mut b.writing
        };
        if *flag == on {
            return Ok(());
        }
        *flag = on;
        (b.lp(slf.py()), b.fd)
    };
    let Some(lp) = lp else { return Ok(()) };
    let cb = on.then(|| FdCallback::Owner(Owner::new(slf)));
    LoopCore::transport_fd(&lp, fd, dir, cb)
}

/// Starts reading, unless `pause_reading()` came first or it is closing:
/// a transport's `_start_reading`, scheduled after `connection_made`.
pub(crate) fn start_reading<T: Transport>(slf: &Bound<'_, T>) -> PyResult<()> {
    let (paused, closing) = {
        let t = slf.borrow();
        (t.base().reading_paused, t.base().closing)
    };
    if paused || closing {
        return Ok(());
    }
    set_interest(slf, READ, true)
}

/// Runs `f` in the transport's context, where every protocol callback runs,
/// whoever triggered it (`pause_writing` from a `write()` in another task,
/// say).
pub(crate) fn with_context<T: Transport, R>(
    slf: &Bound<'_, T>,
    f: impl FnOnce() -> PyResult<R>,
) -> PyResult<R> {
    // A Bound: its drop needs no look at the thread's state, as a Py's does.
    let ctx = slf.borrow().base().context.bind(slf.py()).clone();
    in_context(slf.py(), ctx.as_unbound(), f)
}

/// `loop.call_soon(cb[, arg])`, with the handle in the transport's context.
pub(crate) fn call_soon<T: Transport>(
    slf: &Bound<'_, T>,
    cb: Bound<'_, PyAny>,
    arg: Option<Py<PyAny>>,
) -> PyResult<()> {
    let py = slf.py();
    let (lp, ctx) = {
        let t = slf.borrow();
        (t.base().lp(py), t.base().context.clone_ref(py))
    };
    match lp {
        Some(lp) => call_soon_in_context(&lp, &ctx, cb, arg),
        None => Ok(()),
    }
}

/// Schedules `_call_connection_lost(exc)`.
pub(crate) fn schedule_lost<T: Transport>(slf: &Bound<'_, T>, exc: Py<PyAny>) -> PyResult<()> {
    let cb = slf
        .as_any()
        .getattr(intern!(slf.py(), "_call_connection_lost"))?;
    call_soon(slf, cb, Some(exc))
}

pub(crate) fn pause_reading<T: Transport>(slf: &Bound<'_, T>) -> PyResult<()> {
    {
        let mut t = slf.borrow_mut();
        let b = t.base_mut();
        if b.closing || b.reading_paused {
            return Ok(());
        }
        b.reading_paused = true;
    }
    set_interest(slf, READ, false)
}

/// Marks reading resumed; false if it was not paused (or is closing).
pub(crate) fn unpause_reading<T: Transport>(slf: &Bound<'_, T>) -> bool {
    let mut t = slf.borrow_mut();
    let b = t.base_mut();
    if b.closing || !b.reading_paused {
        return false;
    }
    b.reading_paused = false;
    true
}

/// An exception from a protocol callback that does not end the transport:
/// an `Exception` goes to the loop's exception handler; a `BaseException`
/// (KeyboardInterrupt, SystemExit) propagates out of the loop.
pub(crate) fn report<T: Transport>(slf: &Bound<'_, T>, e: PyErr, msg: &str) -> PyResult<()> {
    let py = slf.py();
    if !e.is_instance_of::<PyException>(py) {
        return Err(e);
    }
    let (lp, proto) = {
        let t = slf.borrow();
        (t.base().lp(py), t.base().protocol(py))
    };
    match lp {
        Some(lp) => report_exception(lp.as_any(), msg, &e, Some(slf.as_any()), proto.as_ref()),
        None => Ok(()),
    }
}

/// Calls the protocol's `pause_writing` when the buffer goes over the high
/// water mark.
pub(crate) fn maybe_pause_protocol<T: Transport>(slf: &Bound<'_, T>) -> PyResult<()> {
    let py = slf.py();
    let proto = {
        let mut t = slf.borrow_mut();
        let size = t.buffered();
        let b = t.base_mut();
        if b.protocol_paused || size <= b.high {
            return Ok(());
        }
        b.protocol_paused = true;
        b.protocol(py)
    };
    if let Some(p) = proto
        && let Err(e) = with_context(slf, || p.call_method0(intern!(py, "pause_writing")))
    {
        report(slf, e, "protocol.pause_writing() failed")?;
    }
    Ok(())
}

/// Calls the protocol's `resume_writing` when the buffer drains to the low
/// water mark.
pub(crate) fn maybe_resume_protocol<T: Transport>(slf: &Bound<'_, T>) -> PyResult<()> {
    let py = slf.py();
    let proto = {
        let mut t = slf.borrow_mut();
        let size = t.buffered();
        let b = t.base_mut();
        if !b.protocol_paused || size > b.low {
            return Ok(());
        }
        b.protocol_paused = false;
        b.protocol(py)
    };
    if let Some(p) = proto
        && let Err(e) = with_context(slf, || p.call_method0(intern!(py, "resume_writing")))
    {
        report(slf, e, "protocol.resume_writing() failed")?;
    }
    Ok(())
}

pub(crate) fn set_write_buffer_limits<T: Transport>(
    slf: &Bound<'_, T>,
    high: Option<i64>,
    low: Option<i64>,
) -> PyResult<()> {
    let (high, low) = water_marks(high, low, DEFAULT_HIGH)?;
    {
        let mut t = slf.borrow_mut();
        let b = t.base_mut();
        b.high = high;
        b.low = low;
    }
    maybe_pause_protocol(slf)
}

/// asyncio's rule for `set_write_buffer_limits(high, low)` (and the TLS
/// read limits): `(high, low)`, from `default_high` when neither is given.
pub(crate) fn water_marks(
    high: Option<i64>,
    low: Option<i64>,
    default_high: usize,
) -> PyResult<(usize, usize)> {
    let high = match (high, low) {
        (Some(h), _) => h,
        (None, Some(l)) => 4 * l,
        (None, None) => default_high as i64,
    };
    let low = low.unwrap_or(high / 4);
    if !(high >= low && low >= 0) {
        return Err(PyValueError::new_err(format!(
            "high ({high}) must be >= low ({low}) must be >= 0"
        )));
    }
    Ok((high as usize, low as usize))
}

/// Logs (in debug mode) an `OSError` that ends the transport, or reports
/// any other exception to the loop's handler; the caller then closes.
pub(crate) fn log_fatal<T: Transport>(slf: &Bound<'_, T>, e: &PyErr, msg: &str) -> PyResult<()> {
    let py = slf.py();
    let (lp, proto) = {
        let t = slf.borrow();
        (t.base().lp(py), t.base().protocol(py))
    };
    let Some(lp) = lp else { return Ok(()) };
    if e.is_instance_of::<pyo3::exceptions::PyOSError>(py) {
        if lp.get().is_debug() {
            let logger = py.import("asyncio.log")?.getattr(intern!(py, "logger"))?;
            logger.call_method1(intern!(py, "debug"), ("%r: %s", slf, msg))?;
        }
        Ok(())
    } else {
        report_exception(lp.as_any(), msg, e, Some(slf.as_any()), proto.as_ref())
    }
}

/// Runs `f` in `ctx` (a `contextvars.Context`). If the context is entered
/// already, `f` runs inside it as it is.
pub(crate) fn in_context<R>(
    py: Python<'_>,
    ctx: &Py<PyAny>,
    f: impl FnOnce() -> PyResult<R>,
) -> PyResult<R> {
    // SAFETY: ctx is a contextvars.Context (from PyContext_CopyCurrent);
    // an Enter that succeeds is paired with the Exit below, on this thread.
    // One that fails (the context is entered already) sets a RuntimeError,
    // which is cleared.
    let entered = unsafe { ffi::PyContext_Enter(ctx.as_ptr()) } == 0;
    if !entered {
        drop(PyErr::take(py));
    }
    let res = f();
    // SAFETY: paired with the successful Enter above.
    if entered && unsafe { ffi::PyContext_Exit(ctx.as_ptr()) } != 0 {
        return Err(PyErr::fetch(py));
    }
    res
}

/// `lp.call_soon(cb[, arg], context=ctx)`.
pub(crate) fn call_soon_in_context(
    lp: &Bound<'_, LoopCore>,
    ctx: &Py<PyAny>,
    cb: Bound<'_, PyAny>,
    arg: Option<Py<PyAny>>,
) -> PyResult<()> {
    let py = lp.py();
    let mut items = vec![cb.unbind()];
    items.extend(arg);
    let all = PyTuple::new(py, items)?;
    let kw = PyDict::new(py);
    kw.set_item("context", ctx)?;
    lp.call_method(intern!(py, "call_soon"), all, Some(&kw))?;
    Ok(())
}

/// The `contextvars.Context` current now, copied.
pub(crate) fn copy_context(py: Python<'_>) -> PyResult<Py<PyAny>> {
    // SAFETY: with the GIL held; a new reference, or NULL with an exception
    // set, which from_owned_ptr_or_err takes.
    Ok(unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyContext_CopyCurrent())?.unbind() })
}

/// `loop.call_exception_handler({...})` for an exception a transport's
/// protocol raised.
pub(crate) fn report_exception(
    lp: &Bound<'_, PyAny>,
    msg: &str,
    e: &PyErr,
    transport: Option<&Bound<'_, PyAny>>,
    protocol: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let py = lp.py();
    let ctx = PyDict::new(py);
    ctx.set_item("message", msg)?;
    ctx.set_item("exception", e.value(py))?;
    ctx.set_item("transport", transport)?;
    ctx.set_item("protocol", protocol)?;
    lp.call_method1(intern!(py, "call_exception_handler"), (ctx,))?;
    Ok(())
}
