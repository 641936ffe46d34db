//! TLS: the SSL protocol state machine in Rust, over `ssl.SSLObject` and two
//! `ssl.MemoryBIO`s, as uvloop's `sslproto.pyx` is in Cython. The record
//! work is OpenSSL's, through the `ssl` module, so users' `SSLContext`s
//! (certificates, SNI, ALPN, client certificates, verify modes) work
//! unchanged.
//!
//! [`SslProtocol`] is the protocol of the socket transport beneath: the
//! stream transport hands it the bytes it reads directly (no Python call),
//! and it writes the encrypted bytes straight into that transport. Above,
//! the application's protocol sees an `asyncio.Transport`: the Python class
//! `pyloop.SSLTransport`, whose methods land here.
//!
//! States, as uvloop's: UNWRAPPED → DO_HANDSHAKE → WRAPPED → FLUSHING →
//! SHUTDOWN. `close()` flushes what the application wrote, sends
//! close_notify and waits for the peer's (with the shutdown timeout);
//! application data that arrives during shutdown is discarded. A
//! renegotiation is refused by OpenSSL's defaults for TLS 1.3 and by the
//! `ssl` module for 1.2 (it never enables it).
//!
//! Borrows of the protocol are never held across a call into Python:
//! writing to the transport beneath can call back `pause_writing`, and the
//! application's callbacks can call back into the transport.

use std::collections::VecDeque;

use pyo3::exceptions::{
    PyConnectionAbortedError, PyConnectionResetError, PyOSError, PyRuntimeError, PyTypeError,
    PyValueError,
};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyMemoryView, PyString, PyTuple};
use pyo3::{PyTraverseError, PyVisit};

use crate::base::{in_context, report_exception, water_marks};
use crate::transport::{DirectProtocol, SocketTransport};

mod data;
mod handshake;

/// The most one `SSLObject.read` asks for (uvloop's `SSL_READ_MAX_SIZE`).
const READ_MAX: usize = 256 * 1024;
/// What one read that discards plaintext asks for.
const VOID_READ: usize = 64 * 1024;
/// Flow-control defaults, in KiB (asyncio's constants).
const HIGH_WATER_READ_KB: usize = 256;
const HIGH_WATER_WRITE_KB: usize = 512;
const HANDSHAKE_TIMEOUT: f64 = 60.0;
const SHUTDOWN_TIMEOUT: f64 = 30.0;
const LOG_THRESHOLD_FOR_CONNLOST_WRITES: usize = 5;
/// How long a paused application has, after the peer's TCP end of file
/// (with no close_notify), to take the data still waiting for it before
/// the connection closes.
const EOF_GRACE: f64 = 1.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Unwrapped,
    DoHandshake,
    Wrapped,
    Flushing,
    Shutdown,
}

/// Where the application's protocol is: INIT -connection_made-> CON_MADE
/// [-data_received*->] [-eof_received-> EOF] -connection_lost-> CON_LOST.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AppState {
    Init,
    ConMade,
    Eof,
    ConLost,
}

/// The `ssl` module's classes and asyncio's logger, looked up once.
struct Ssl {
    memory_bio: Py<PyAny>,
    again: Py<PyTuple>,
    ssl_error: Py<PyAny>,
    zero_return: Py<PyAny>,
    certificate_error: Py<PyAny>,
    module: Py<PyAny>,
    logger: Py<PyAny>,
    timeout_error: Py<PyAny>,
    cancelled_error: Py<PyAny>,
}

static SSL: PyOnceLock<Ssl> = PyOnceLock::new();

fn ssl(py: Python<'_>) -> PyResult<&Ssl> {
    SSL.get_or_try_init(py, || {
        let m = py.import("ssl")?;
        let again = PyTuple::new(
            py,
            [
                m.getattr(intern!(py, "SSLWantReadError"))?,
                m.getattr(intern!(py, "SSLWantWriteError"))?,
            ],
        )?;
        Ok(Ssl {
            memory_bio: m.getattr(intern!(py, "MemoryBIO"))?.unbind(),
            again: again.unbind(),
            ssl_error: m.getattr(intern!(py, "SSLError"))?.unbind(),
            zero_return: m.getattr(intern!(py, "SSLZeroReturnError"))?.unbind(),
            certificate_error: m.getattr(intern!(py, "CertificateError"))?.unbind(),
            module: m.clone().into_any().unbind(),
            logger: py
                .import("asyncio.log")?
                .getattr(intern!(py, "logger"))?
                .unbind(),
            timeout_error: py
                .import("asyncio")?
                .getattr(intern!(py, "TimeoutError"))?
                .unbind(),
            cancelled_error: py
                .import("asyncio")?
                .getattr(intern!(py, "CancelledError"))?
                .unbind(),
        })
    })
}

fn is(py: Python<'_>, e: &PyErr, cls: &Py<PyAny>) -> bool {
    e.matches(py, cls.bind(py)).unwrap_or(false)
}

/// asyncio's `add_flowcontrol_defaults`.
fn flow_limits(high: Option<i64>, low: Option<i64>, kb: usize) -> PyResult<(usize, usize)> {
    water_marks(high, low, kb * 1024)
}

fn timeout_arg(v: Option<f64>, default: f64, what: &str) -> PyResult<f64> {
    match v {
        None => Ok(default),
        Some(t) if t <= 0.0 => Err(PyValueError::new_err(format!(
            "{what} should be a positive number, got {t}"
        ))),
        Some(t) => Ok(t),
    }
}

#[pyclass(module = "pyloop._pyloop", name = "SSLProtocol", weakref)]
pub struct SslProtocol {
    loop_: Py<PyAny>,
    server_side: bool,
    server_hostname: Option<Py<PyAny>>,
    sslcontext: Py<PyAny>,
    extra: Py<PyDict>,

    write_backlog: VecDeque<Py<PyAny>>,
    write_buffer_size: usize,
    /// The bytes of the handshake's last flight still in the outgoing BIO
    /// (sent with the first read, see [`Self::do_handshake`]): not the
    /// application's, so not in its write buffer size, as in asyncio,
    /// which sends them before the application runs.
    flight: usize,

    waiter: Option<Py<PyAny>>,
    app_protocol: Option<Py<PyAny>>,
    /// The application's protocol is a buffered one (`get_buffer`).
    app_is_buffer: bool,
    app_transport: Option<Py<PyAny>>,
    app_transport_created: bool,
    /// The application transport's `is_closing()`.
    app_closed: bool,
    /// The context the application transport's callbacks run in.
    app_context: Option<Py<PyAny>>,

    /// The transport beneath, as given to `connection_made`, and its Rust
    /// core when it is pyloop's stream transport.
    transport: Option<Py<PyAny>>,
    transport_core: Option<Py<SocketTransport>>,
    handshake_timeout: f64,
    shutdown_timeout: f64,

    sslobj: Option<Py<PyAny>>,
    sslobj_read: Option<Py<PyAny>>,
    sslobj_write: Option<Py<PyAny>>,
    sslobj_pending: Option<Py<PyAny>>,
    incoming: Py<PyAny>,
    incoming_write: Py<PyAny>,
    outgoing: Py<PyAny>,
    outgoing_read: Py<PyAny>,

    state: State,
    conn_lost: usize,
    app_state: AppState,

    ssl_writing_paused: bool,
    app_reading_paused: bool,
    ssl_reading_paused: bool,
    app_writing_paused: bool,
    incoming_high: usize,
    incoming_low: usize,
    outgoing_high: usize,
    outgoing_low: usize,

    handshake_start: Option<f64>,
    handshake_timeout_handle: Option<Py<PyAny>>,
    shutdown_timeout_handle: Option<Py<PyAny>>,
    /// `get_buffer`'s buffer, for transports that are not pyloop's.
    py_buf: Option<Py<PyByteArray>>,
    /// The transport beneath reached the end of its input.
    eof_seen: bool,
}

impl std::fmt::Debug for SslProtocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SslProtocol({:?}, {:?})", self.state, self.app_state)
    }
}

type Slf<'a, 'py> = &'a Bound<'py, SslProtocol>;

/// The stream transport beneath hands this protocol the bytes it reads
/// directly (see `lib.rs`).
impl DirectProtocol for SslProtocol {
    /// Bytes read from the socket: into the incoming BIO.
    fn feed(slf: Slf<'_, '_>, data: &[u8]) -> PyResult<()> {
        let py = slf.py();
        let w = slf.borrow().incoming_write.clone_ref(py);
        // SAFETY: a read-only memoryview over `data`, which outlives it:
        // MemoryBIO.write copies the bytes and keeps no reference.
        let mv = unsafe {
            Bound::from_owned_ptr_or_err(
                py,
                ffi::PyMemoryView_FromMemory(
                    data.as_ptr() as *mut std::os::raw::c_char,
                    data.len() as ffi::Py_ssize_t,
                    ffi::PyBUF_READ,
                ),
            )?
        };
        let res = w.bind(py).call1((&mv,));
        // Release the view now, while `data` is alive.
        let _ = mv.call_method0(intern!(py, "release"));
        res.map(|_| ())
    }

    /// After bytes were fed: what the state calls for.
    fn incoming_ready(slf: Slf<'_, '_>) -> PyResult<()> {
        match SslProtocol::state(slf) {
            State::DoHandshake => SslProtocol::do_handshake(slf),
            State::Wrapped => SslProtocol::do_read(slf),
            State::Flushing => SslProtocol::do_flush(slf, None),
            State::Shutdown => SslProtocol::do_shutdown(slf, None),
            State::Unwrapped => Ok(()),
        }
    }
}

impl SslProtocol {
    fn debug(slf: Slf<'_, '_>) -> PyResult<bool> {
        slf.borrow()
            .loop_
            .bind(slf.py())
            .call_method0(intern!(slf.py(), "get_debug"))?
            .is_truthy()
    }

    fn set_state(slf: Slf<'_, '_>, new: State) -> PyResult<()> {
        let mut t = slf.borrow_mut();
        use State::*;
        let allowed = matches!(
            (t.state, new),
            (_, Unwrapped)
                | (Unwrapped, DoHandshake)
                | (DoHandshake, Wrapped)
                | (Wrapped, Flushing)
                | (Wrapped, Shutdown)
                | (Flushing, Shutdown)
        );
        if !allowed {
            return Err(PyRuntimeError::new_err(format!(
                "cannot switch state from {:?} to {new:?}",
                t.state
            )));
        }
        t.state = new;
        Ok(())
    }

    fn state(slf: Slf<'_, '_>) -> State {
        slf.borrow().state
    }

    /// A protocol with `get_buffer` that is not a plain `asyncio.Protocol`
    /// gets its data through its buffer (uvloop's rule).
    fn set_app_protocol_inner(&mut self, p: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = p.py();
        let plain = p.is_instance(&py.import("asyncio")?.getattr(intern!(py, "Protocol"))?)?;
        self.app_is_buffer = p.hasattr(intern!(py, "get_buffer"))? && !plain;
        self.app_protocol = Some(p.clone().unbind());
        Ok(())
    }

    fn app_protocol(slf: Slf<'_, '_>) -> Option<Py<PyAny>> {
        slf.borrow()
            .app_protocol
            .as_ref()
            .map(|p| p.clone_ref(slf.py()))
    }

    fn wakeup_waiter(slf: Slf<'_, '_>, exc: Option<&PyErr>) -> PyResult<()> {
        let py = slf.py();
        let Some(w) = slf.borrow_mut().waiter.take() else {
            return Ok(());
        };
        let w = w.bind(py);
        if !w.call_method0(intern!(py, "cancelled"))?.is_truthy()?
            && !w.call_method0(intern!(py, "done"))?.is_truthy()?
        {
            match exc {
                Some(e) => w.call_method1(intern!(py, "set_exception"), (e.value(py),))?,
                None => w.call_method1(intern!(py, "set_result"), (py.None(),))?,
            };
        }
        Ok(())
    }

    fn get_app_transport(slf: Slf<'_, '_>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        if let Some(t) = &slf.borrow().app_transport {
            return Ok(t.clone_ref(py));
        }
        if slf.borrow().app_transport_created {
            return Err(PyRuntimeError::new_err(
                "Creating _SSLProtocolTransport twice",
            ));
        }
        let face = crate::base::faces(py)?.ssl_transport.bind(py);
        let t = face.call1((slf,))?.unbind();
        let mut me = slf.borrow_mut();
        me.app_transport = Some(t.clone_ref(py));
        me.app_transport_created = true;
        if me.app_context.is_none() {
            me.app_context = Some(crate::base::copy_context(py)?);
        }
        Ok(t)
    }

    /// The app transport's context, copied (each callback gets its own).
    fn app_context(slf: Slf<'_, '_>) -> PyResult<Option<Py<PyAny>>> {
        let py = slf.py();
        match &slf.borrow().app_context {
            Some(c) => Ok(Some(c.bind(py).call_method0(intern!(py, "copy"))?.unbind())),
            None => Ok(None),
        }
    }

    fn call_app<'py>(
        slf: Slf<'_, 'py>,
        ctx: Option<&Py<PyAny>>,
        name: &str,
        args: Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let Some(p) = Self::app_protocol(slf) else {
            return Ok(py.None().into_bound(py));
        };
        let p = p.into_bound(py);
        match ctx {
            None => p.call_method1(name, args),
            Some(c) => in_context(py, c, || p.call_method1(name, args)),
        }
    }

    fn call_later(slf: Slf<'_, '_>, delay: f64, method: &str) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let cb = slf.getattr(method)?;
        Ok(slf
            .borrow()
            .loop_
            .bind(py)
            .call_method1(intern!(py, "call_later"), (delay, cb))?
            .unbind())
    }

    fn call_soon_do_read(slf: Slf<'_, '_>, ctx: Option<Py<PyAny>>) -> PyResult<()> {
        let py = slf.py();
        let cb = slf.getattr(intern!(py, "_do_read"))?;
        let lp = slf.borrow().loop_.clone_ref(py);
        let kw = PyDict::new(py);
        if let Some(c) = ctx {
            kw.set_item("context", c)?;
        }
        lp.bind(py)
            .call_method(intern!(py, "call_soon"), (cb,), Some(&kw))?;
        Ok(())
    }

    fn cancel_handle(py: Python<'_>, h: Option<Py<PyAny>>) -> PyResult<()> {
        if let Some(h) = h {
            h.bind(py).call_method0(intern!(py, "cancel"))?;
        }
        Ok(())
    }

    fn transport(slf: Slf<'_, '_>) -> Option<Py<PyAny>> {
        slf.borrow()
            .transport
            .as_ref()
            .map(|t| t.clone_ref(slf.py()))
    }

    fn fatal_error(slf: Slf<'_, '_>, exc: &PyErr, msg: &str) -> PyResult<()> {
        let py = slf.py();
        let (app_tr, tr) = {
            let t = slf.borrow();
            (
                t.app_transport.as_ref().map(|t| t.clone_ref(py)),
                t.transport.as_ref().map(|t| t.clone_ref(py)),
            )
        };
        if let Some(a) = &app_tr {
            a.bind(py)
                .call_method1(intern!(py, "_force_close"), (exc.value(py),))?;
        } else if let Some(t) = &tr {
            t.bind(py)
                .call_method1(intern!(py, "_force_close"), (exc.value(py),))?;
        }
        if exc.is_instance_of::<PyOSError>(py) {
            if Self::debug(slf)? {
                let kw = PyDict::new(py);
                kw.set_item("exc_info", exc.value(py))?;
                ssl(py)?.logger.bind(py).call_method(
                    intern!(py, "debug"),
                    ("%r: %s", slf, msg),
                    Some(&kw),
                )?;
            }
        } else if !is(py, exc, &ssl(py)?.cancelled_error) {
            let lp = slf.borrow().loop_.clone_ref(py);
            let tr = tr.as_ref().map(|t| t.bind(py));
            report_exception(lp.bind(py), msg, exc, tr, Some(slf.as_any()))?;
        }
        Ok(())
    }
}

#[pymethods]
impl SslProtocol {
    #[new]
    #[pyo3(signature = (loop_, app_protocol, sslcontext, waiter, server_side = false,
                        server_hostname = None, call_connection_made = true,
                        ssl_handshake_timeout = None, ssl_shutdown_timeout = None))]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn py_new(
        loop_: &Bound<'_, PyAny>,
        app_protocol: &Bound<'_, PyAny>,
        sslcontext: Option<Bound<'_, PyAny>>,
        waiter: Option<Py<PyAny>>,
        server_side: bool,
        server_hostname: Option<Bound<'_, PyAny>>,
        call_connection_made: bool,
        ssl_handshake_timeout: Option<f64>,
        ssl_shutdown_timeout: Option<f64>,
    ) -> PyResult<Self> {
        let py = loop_.py();
        let s = ssl(py)?;
        let handshake_timeout = timeout_arg(
            ssl_handshake_timeout,
            HANDSHAKE_TIMEOUT,
            "ssl_handshake_timeout",
        )?;
        let shutdown_timeout = timeout_arg(
            ssl_shutdown_timeout,
            SHUTDOWN_TIMEOUT,
            "ssl_shutdown_timeout",
        )?;
        let hostname = server_hostname.filter(|h| !h.is_none() && h.is_truthy().unwrap_or(false));
        let sslcontext = match sslcontext.filter(|c| c.is_truthy().unwrap_or(false)) {
            Some(c) => c,
            None => {
                if server_side {
                    return Err(PyValueError::new_err(
                        "Server side SSL needs a valid SSLContext",
                    ));
                }
                // Looked up now, as asyncio does (tests patch it).
                let c = s
                    .module
                    .bind(py)
                    .call_method0(intern!(py, "create_default_context"))?;
                if hostname.is_none() {
                    c.setattr(intern!(py, "check_hostname"), false)?;
                }
                c
            }
        };
        let extra = PyDict::new(py);
        extra.set_item("sslcontext", &sslcontext)?;
        let incoming = s.memory_bio.bind(py).call0()?;
        let outgoing = s.memory_bio.bind(py).call0()?;
        let (ih, il) = flow_limits(None, None, HIGH_WATER_READ_KB)?;
        let (oh, ol) = flow_limits(None, None, HIGH_WATER_WRITE_KB)?;
        let mut me = Self {
            loop_: loop_.clone().unbind(),
            server_side,
            server_hostname: if server_side {
                None
            } else {
                hostname.map(Bound::unbind)
            },
            sslcontext: sslcontext.unbind(),
            extra: extra.unbind(),
            write_backlog: VecDeque::new(),
            write_buffer_size: 0,
            flight: 0,
            waiter,
            app_protocol: None,
            app_is_buffer: false,
            app_transport: None,
            app_transport_created: false,
            app_closed: false,
            app_context: None,
            transport: None,
            transport_core: None,
            handshake_timeout,
            shutdown_timeout,
            sslobj: None,
            sslobj_read: None,
            sslobj_write: None,
            sslobj_pending: None,
            incoming_write: incoming.getattr(intern!(py, "write"))?.unbind(),
            incoming: incoming.unbind(),
            outgoing_read: outgoing.getattr(intern!(py, "read"))?.unbind(),
            outgoing: outgoing.unbind(),
            state: State::Unwrapped,
            conn_lost: 0,
            app_state: if call_connection_made {
                AppState::Init
            } else {
                AppState::ConMade
            },
            ssl_writing_paused: false,
            app_reading_paused: false,
            ssl_reading_paused: false,
            app_writing_paused: false,
            incoming_high: ih,
            incoming_low: il,
            outgoing_high: oh,
            outgoing_low: ol,
            handshake_start: None,
            handshake_timeout_handle: None,
            shutdown_timeout_handle: None,
            py_buf: None,
            eof_seen: false,
        };
        me.set_app_protocol_inner(app_protocol)?;
        Ok(me)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.loop_)?;
        visit.call(&self.server_hostname)?;
        visit.call(&self.sslcontext)?;
        visit.call(&self.extra)?;
        for d in &self.write_backlog {
            visit.call(d)?;
        }
        visit.call(&self.waiter)?;
        visit.call(&self.app_protocol)?;
        visit.call(&self.app_transport)?;
        visit.call(&self.app_context)?;
        visit.call(&self.transport)?;
        visit.call(&self.transport_core)?;
        visit.call(&self.sslobj)?;
        visit.call(&self.sslobj_read)?;
        visit.call(&self.sslobj_write)?;
        visit.call(&self.sslobj_pending)?;
        visit.call(&self.incoming)?;
        visit.call(&self.incoming_write)?;
        visit.call(&self.outgoing)?;
        visit.call(&self.outgoing_read)?;
        visit.call(&self.handshake_timeout_handle)?;
        visit.call(&self.shutdown_timeout_handle)
    }

    fn __clear__(&mut self) {
        self.write_backlog.clear();
        self.waiter = None;
        self.app_protocol = None;
        self.app_transport = None;
        self.app_context = None;
        self.transport = None;
        self.transport_core = None;
        self.sslobj = None;
        self.sslobj_read = None;
        self.sslobj_write = None;
        self.sslobj_pending = None;
        self.handshake_timeout_handle = None;
        self.shutdown_timeout_handle = None;
    }

    fn __repr__(&self) -> String {
        format!("<pyloop.SSLProtocol {:?} {:?}>", self.state, self.app_state)
    }

    /// The application's transport (made on first use, as asyncio's
    /// `SSLProtocol` makes it in `__init__`); None once the connection is
    /// lost.
    #[getter]
    fn _app_transport(slf: &Bound<'_, Self>) -> PyResult<Option<Py<PyAny>>> {
        if slf.borrow().app_transport_created && slf.borrow().app_transport.is_none() {
            return Ok(None);
        }
        Self::get_app_transport(slf).map(Some)
    }

    #[pyo3(signature = (context = None))]
    fn _get_app_transport(
        slf: &Bound<'_, Self>,
        context: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        if let Some(c) = context.filter(|c| !c.is_none(slf.py())) {
            slf.borrow_mut().app_context = Some(c);
        }
        Self::get_app_transport(slf)
    }

    /// The socket transport beneath is connected: start the handshake.
    fn connection_made(slf: &Bound<'_, Self>, transport: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = slf.py();
        let core = match transport.getattr(intern!(py, "_core")) {
            Ok(c) => c.cast::<SocketTransport>().ok().map(|c| c.clone().unbind()),
            Err(_) => None,
        };
        {
            let mut t = slf.borrow_mut();
            t.transport = Some(transport.clone().unbind());
            t.transport_core = core;
            if t.app_context.is_none() {
                t.app_context = Some(crate::base::copy_context(py)?);
            }
        }
        Self::start_handshake(slf)
    }

    fn connection_lost(slf: &Bound<'_, Self>, exc: Py<PyAny>) -> PyResult<()> {
        let py = slf.py();
        let out = {
            let mut t = slf.borrow_mut();
            t.write_backlog.clear();
            t.write_buffer_size = 0;
            t.flight = 0;
            t.conn_lost += 1;
            t.app_closed = true;
            // asyncio makes the app transport in `__init__` and drops it
            // here; one made lazily must not appear after the loss either
            // (`start_tls` on a transport closed before the upgrade returns
            // None, as in asyncio).
            t.app_transport_created = true;
            t.outgoing_read.clone_ref(py)
        };
        out.bind(py).call0()?;
        let (state, app_state) = {
            let t = slf.borrow();
            (t.state, t.app_state)
        };
        if state != State::DoHandshake && matches!(app_state, AppState::ConMade | AppState::Eof) {
            slf.borrow_mut().app_state = AppState::ConLost;
            if let Some(p) = Self::app_protocol(slf) {
                let cb = p.bind(py).getattr(intern!(py, "connection_lost"))?;
                let lp = slf.borrow().loop_.clone_ref(py);
                lp.bind(py)
                    .call_method1(intern!(py, "call_soon"), (cb, &exc))?;
            }
        }
        Self::set_state(slf, State::Unwrapped)?;
        let (handles, dropped) = {
            let mut t = slf.borrow_mut();
            (
                (
                    t.shutdown_timeout_handle.take(),
                    t.handshake_timeout_handle.take(),
                ),
                (
                    t.transport.take(),
                    t.transport_core.take(),
                    t.app_transport.take(),
                    t.app_protocol.take(),
                ),
            )
        };
        let err = if exc.is_none(py) {
            None
        } else {
            Some(PyErr::from_value(exc.bind(py).clone()))
        };
        Self::wakeup_waiter(slf, err.as_ref())?;
        Self::cancel_handle(py, handles.0)?;
        Self::cancel_handle(py, handles.1)?;
        drop(dropped);
        Ok(())
    }

    /// A buffered protocol's `get_buffer`, for a transport that is not
    /// pyloop's own (pyloop's transport hands over its bytes with `feed`).
    #[pyo3(signature = (n = -1))]
    fn get_buffer(slf: &Bound<'_, Self>, n: isize) -> PyResult<Py<PyByteArray>> {
        let want = if n <= 0 {
            READ_MAX
        } else {
            (n as usize).min(READ_MAX)
        };
        let py = slf.py();
        let reuse = slf
            .borrow()
            .py_buf
            .as_ref()
            .filter(|b| b.bind(py).len() >= want)
            .map(|b| b.clone_ref(py));
        let buf = match reuse {
            Some(b) => b,
            None => {
                let b = PyByteArray::new(py, &vec![0u8; want]).unbind();
                slf.borrow_mut().py_buf = Some(b.clone_ref(py));
                b
            }
        };
        Ok(buf)
    }

    /// `nbytes` of the buffer from `get_buffer` hold what was read.
    fn buffer_updated(slf: &Bound<'_, Self>, nbytes: usize) -> PyResult<()> {
        let py = slf.py();
        let Some(buf) = slf.borrow().py_buf.as_ref().map(|b| b.clone_ref(py)) else {
            return Err(PyRuntimeError::new_err(
                "buffer_updated() before get_buffer()",
            ));
        };
        // SAFETY: with the GIL held and no Python code running until the
        // copy in `feed` is done, the bytearray cannot change size.
        let data = unsafe { buf.bind(py).as_bytes() };
        let n = nbytes.min(data.len());
        let data = data[..n].to_vec();
        Self::feed(slf, &data)?;
        Self::incoming_ready(slf)
    }

    /// Bytes from a transport that is not pyloop's own.
    fn data_received(slf: &Bound<'_, Self>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let b = pyo3::buffer::PyBuffer::<u8>::get(data)?;
        let v = b.to_vec(slf.py())?;
        Self::feed(slf, &v)?;
        Self::incoming_ready(slf)
    }

    fn eof_received(slf: &Bound<'_, Self>) -> PyResult<bool> {
        let py = slf.py();
        let res = (|| -> PyResult<()> {
            if Self::debug(slf)? {
                ssl(py)?
                    .logger
                    .bind(py)
                    .call_method1(intern!(py, "debug"), ("%r received EOF", slf))?;
            }
            slf.borrow_mut().eof_seen = true;
            match Self::state(slf) {
                State::DoHandshake => Self::on_handshake_complete(
                    slf,
                    Some(PyConnectionResetError::new_err(
                        "the peer closed during the TLS handshake",
                    )),
                ),
                // Data the application has not taken yet (its reading is
                // paused) is still delivered if it resumes within
                // EOF_GRACE, as CPython's asyncio delivers it: the transport
                // stays open, and `_do_read` finishes after it. Otherwise it
                // gets connection_lost(None) then, and the undelivered data
                // is dropped, as uvloop drops it at once.
                State::Wrapped => {
                    // What is left goes to the application first; `_do_read`
                    // finishes once it has it all.
                    Self::do_read(slf)?;
                    if Self::state(slf) == State::Wrapped {
                        let timeout = slf.borrow().shutdown_timeout.min(EOF_GRACE);
                        let h = Self::call_later(slf, timeout, "_check_shutdown_timeout")?;
                        slf.borrow_mut().shutdown_timeout_handle = Some(h);
                    }
                    Ok(())
                }
                State::Flushing => Self::finish_after_eof(slf),
                State::Shutdown => Self::on_shutdown_complete(slf, None),
                State::Unwrapped => Ok(()),
            }
        })();
        if let Err(e) = res {
            if let Some(t) = Self::transport(slf) {
                t.bind(py).call_method0(intern!(py, "close"))?;
            }
            return Err(e);
        }
        // True keeps the transport beneath open: it is closed here, once
        // what is pending has gone.
        Ok(Self::state(slf) == State::Wrapped)
    }

    fn pause_writing(slf: &Bound<'_, Self>) {
        slf.borrow_mut().ssl_writing_paused = true;
    }

    fn resume_writing(slf: &Bound<'_, Self>) -> PyResult<()> {
        slf.borrow_mut().ssl_writing_paused = false;
        match Self::state(slf) {
            State::Wrapped => {
                Self::process_outgoing(slf)?;
                Self::control_app_writing(slf, None)
            }
            State::Flushing => Self::do_flush(slf, None),
            State::Shutdown => Self::do_shutdown(slf, None),
            _ => Ok(()),
        }
    }

    fn _check_handshake_timeout(slf: &Bound<'_, Self>) -> PyResult<()> {
        if Self::state(slf) == State::DoHandshake {
            let t = slf.borrow().handshake_timeout;
            let e = PyConnectionAbortedError::new_err(format!(
                "SSL handshake is taking longer than {t} seconds: aborting the connection"
            ));
            Self::fatal_error(slf, &e, "Fatal error on transport")?;
        }
        Ok(())
    }

    fn _check_shutdown_timeout(slf: &Bound<'_, Self>) -> PyResult<()> {
        let py = slf.py();
        if Self::state(slf) == State::Wrapped && slf.borrow().eof_seen {
            slf.borrow_mut().shutdown_timeout_handle = None;
            return Self::finish_after_eof(slf);
        }
        if matches!(Self::state(slf), State::Flushing | State::Shutdown)
            && let Some(t) = Self::transport(slf)
        {
            let e = ssl(py)?
                .timeout_error
                .bind(py)
                .call1(("SSL shutdown timed out",))?;
            t.bind(py).call_method1(intern!(py, "_force_close"), (e,))?;
        }
        Ok(())
    }

    fn _do_read(slf: &Bound<'_, Self>) -> PyResult<()> {
        Self::do_read(slf)
    }

    // The application transport's side (pyloop.SSLTransport calls these).

    #[pyo3(signature = (name, default = None))]
    fn _get_extra_info(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        // The protocol itself, for tests; uvloop's name for it is taken too,
        // so that uvloop's own TLS tests can reach it.
        if let Ok(s) = name.cast::<PyString>()
            && matches!(s.to_str()?, "pyloop.sslproto" | "uvloop.sslproto")
        {
            return Ok(slf.clone().into_any().unbind());
        }
        if let Some(v) = slf.borrow().extra.bind(py).get_item(name)? {
            return Ok(v.unbind());
        }
        match Self::transport(slf) {
            Some(t) => Ok(t
                .bind(py)
                .call_method1(intern!(py, "get_extra_info"), (name, default))?
                .unbind()),
            None => Ok(default.unwrap_or_else(|| py.None())),
        }
    }

    fn _set_app_protocol(slf: &Bound<'_, Self>, protocol: &Bound<'_, PyAny>) -> PyResult<()> {
        slf.borrow_mut().set_app_protocol_inner(protocol)
    }

    fn _get_app_protocol(&self, py: Python<'_>) -> Py<PyAny> {
        self.app_protocol
            .as_ref()
            .map(|p| p.clone_ref(py))
            .unwrap_or_else(|| py.None())
    }

    fn _is_closing(&self) -> bool {
        self.app_closed
    }

    /// Whether the transport beneath is closing (the peer or a fatal error
    /// closed it): the TLS transport is closing then too, as from Python
    /// 3.14 on in asyncio.
    fn _is_transport_closing(slf: &Bound<'_, Self>) -> PyResult<bool> {
        let py = slf.py();
        match Self::transport(slf) {
            Some(t) => t
                .bind(py)
                .call_method0(intern!(py, "is_closing"))?
                .is_truthy(),
            None => Ok(false),
        }
    }

    fn _mark_closed(&mut self) {
        self.app_closed = true;
    }

    fn _close(slf: &Bound<'_, Self>) -> PyResult<()> {
        slf.borrow_mut().app_closed = true;
        let ctx = Self::app_context(slf)?;
        Self::start_shutdown(slf, ctx)
    }

    fn _is_reading(&self) -> bool {
        !self.app_reading_paused
    }

    fn _pause_reading(&mut self) {
        self.app_reading_paused = true;
    }

    fn _resume_reading(slf: &Bound<'_, Self>) -> PyResult<()> {
        if !slf.borrow().app_reading_paused {
            return Ok(());
        }
        slf.borrow_mut().app_reading_paused = false;
        if Self::state(slf) == State::Wrapped {
            let ctx = Self::app_context(slf)?;
            Self::call_soon_do_read(slf, ctx)?;
        }
        Ok(())
    }

    #[pyo3(signature = (high = None, low = None))]
    fn _set_write_buffer_limits(
        slf: &Bound<'_, Self>,
        high: Option<i64>,
        low: Option<i64>,
    ) -> PyResult<()> {
        let (h, l) = flow_limits(high, low, HIGH_WATER_WRITE_KB)?;
        {
            let mut t = slf.borrow_mut();
            t.outgoing_high = h;
            t.outgoing_low = l;
        }
        let ctx = Self::app_context(slf)?;
        Self::control_app_writing(slf, ctx.as_ref())
    }

    fn _get_write_buffer_limits(&self) -> (usize, usize) {
        (self.outgoing_low, self.outgoing_high)
    }

    fn _get_write_buffer_size(slf: &Bound<'_, Self>) -> PyResult<usize> {
        Self::write_buffer_size(slf)
    }

    #[pyo3(signature = (high = None, low = None))]
    fn _set_read_buffer_limits(
        slf: &Bound<'_, Self>,
        high: Option<i64>,
        low: Option<i64>,
    ) -> PyResult<()> {
        let (h, l) = flow_limits(high, low, HIGH_WATER_READ_KB)?;
        {
            let mut t = slf.borrow_mut();
            t.incoming_high = h;
            t.incoming_low = l;
        }
        Self::control_ssl_reading(slf)
    }

    fn _get_read_buffer_limits(&self) -> (usize, usize) {
        (self.incoming_low, self.incoming_high)
    }

    fn _get_read_buffer_size(slf: &Bound<'_, Self>) -> PyResult<usize> {
        let py = slf.py();
        let inc = slf.borrow().incoming.clone_ref(py);
        inc.bind(py).getattr(intern!(py, "pending"))?.extract()
    }

    #[getter]
    fn _app_writing_paused(&self) -> bool {
        self.app_writing_paused
    }

    /// The `ssl.SSLContext` the connection uses (asyncio's `SSLProtocol`
    /// attribute, which aiohttp's tests read).
    #[getter]
    fn _sslcontext(&self, py: Python<'_>) -> Py<PyAny> {
        self.sslcontext.clone_ref(py)
    }

    fn _write(slf: &Bound<'_, Self>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        if !(data.is_instance_of::<PyBytes>()
            || data.is_instance_of::<PyByteArray>()
            || data.is_instance_of::<PyMemoryView>())
        {
            return Err(PyTypeError::new_err(format!(
                "data: expecting a bytes-like instance, got {}",
                data.get_type().name()?
            )));
        }
        if data.len()? == 0 {
            return Ok(());
        }
        // A bytearray or memoryview may change after write() returns: keep
        // a copy of what it holds now.
        let item = if data.is_instance_of::<PyBytes>() {
            data.clone().unbind()
        } else {
            let b = pyo3::buffer::PyBuffer::<u8>::get(data)?;
            PyBytes::new(slf.py(), &b.to_vec(slf.py())?)
                .into_any()
                .unbind()
        };
        let ctx = Self::app_context(slf)?;
        Self::write_appdata(slf, vec![item], ctx)
    }

    fn _writelines(slf: &Bound<'_, Self>, list: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = slf.py();
        let mut items = Vec::new();
        for item in list.try_iter()? {
            let item = item?;
            let b = pyo3::buffer::PyBuffer::<u8>::get(&item)?;
            items.push(PyBytes::new(py, &b.to_vec(py)?).into_any().unbind());
        }
        let ctx = Self::app_context(slf)?;
        Self::write_appdata(slf, items, ctx)
    }

    fn _abort(slf: &Bound<'_, Self>, exc: Py<PyAny>) -> PyResult<()> {
        slf.borrow_mut().app_closed = true;
        let exc = if exc.is_none(slf.py()) {
            None
        } else {
            Some(exc)
        };
        Self::abort(slf, exc)
    }

    /// For tests: data in the write backlog, as if written while the
    /// handshake ran.
    #[pyo3(name = "_test__append_write_backlog")]
    fn test_append_write_backlog(slf: &Bound<'_, Self>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let n = data.len()?;
        let mut t = slf.borrow_mut();
        t.write_backlog.push_back(data.clone().unbind());
        t.write_buffer_size += n;
        Ok(())
    }
}
