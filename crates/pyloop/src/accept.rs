//! The server side of a stream socket: [`Acceptor`] is a listening socket's
//! reader and takes up to `backlog` connections per readiness event, and
//! [`make_socket_transport`] gives each connection (and each client
//! connection) its transport.
//!
//! Both were Python in `_loop.py`; they run per connection, so a server that
//! takes many short connections (TLS handshakes, HTTP without keep-alive)
//! spends its time here.

use std::os::fd::RawFd;

use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PySystemExit};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;

use crate::core::LoopCore;
use crate::core::os_error;
use crate::tls::SslProtocol;
use crate::transport::SocketTransport;

/// What `make_socket_transport` takes from Python once.
struct Names {
    /// `asyncio.trsock.TransportSocket`.
    transport_socket: Py<PyAny>,
    /// `asyncio.futures._set_result_unless_cancelled`.
    set_result_unless_cancelled: Py<PyAny>,
    /// `asyncio.constants.ACCEPT_RETRY_DELAY`.
    accept_retry_delay: Py<PyAny>,
}

static NAMES: PyOnceLock<Names> = PyOnceLock::new();

fn names(py: Python<'_>) -> PyResult<&'static Names> {
    NAMES.get_or_try_init(py, || {
        Ok(Names {
            transport_socket: py
                .import("asyncio.trsock")?
                .getattr(intern!(py, "TransportSocket"))?
                .unbind(),
            set_result_unless_cancelled: py
                .import("asyncio.futures")?
                .getattr(intern!(py, "_set_result_unless_cancelled"))?
                .unbind(),
            accept_retry_delay: py
                .import("asyncio.constants")?
                .getattr(intern!(py, "ACCEPT_RETRY_DELAY"))?
                .unbind(),
        })
    })
}

/// The transport of a connected stream socket, as asyncio's
/// `_make_socket_transport`: `extra` gets the socket, its name and its
/// peer's; TCP gets `TCP_NODELAY`; the protocol's `connection_made`, the
/// first read and `waiter`'s result are scheduled, in that order.
#[pyfunction]
#[pyo3(signature = (lp, sock, protocol, waiter = None, extra = None, server = None))]
pub fn make_socket_transport(
    lp: &Bound<'_, LoopCore>,
    sock: &Bound<'_, PyAny>,
    protocol: &Bound<'_, PyAny>,
    waiter: Option<&Bound<'_, PyAny>>,
    extra: Option<&Bound<'_, PyDict>>,
    server: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let py = lp.py();
    let info = SockInfo {
        fd: sock.call_method0(intern!(py, "fileno"))?.extract()?,
        family: sock.getattr(intern!(py, "family"))?.extract()?,
        kind: sock.getattr(intern!(py, "type"))?.extract()?,
    };
    make_transport(lp, sock, info, protocol, waiter, extra, server)
}

/// What the transport needs to know of its socket, when the caller knows
/// it already (an accepted socket's are its listening socket's).
#[derive(Debug, Clone, Copy)]
struct SockInfo {
    fd: RawFd,
    family: i32,
    kind: i32,
}

fn make_transport(
    lp: &Bound<'_, LoopCore>,
    sock: &Bound<'_, PyAny>,
    info: SockInfo,
    protocol: &Bound<'_, PyAny>,
    waiter: Option<&Bound<'_, PyAny>>,
    extra: Option<&Bound<'_, PyDict>>,
    server: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let py = lp.py();
    let n = names(py)?;
    let extra = match extra {
        Some(e) => e.copy()?,
        None => PyDict::new(py),
    };
    extra.set_item(
        intern!(py, "socket"),
        n.transport_socket.bind(py).call1((sock,))?,
    )?;
    let or_none = |r: PyResult<Bound<'_, PyAny>>| match r {
        Ok(v) => Ok(v.unbind()),
        Err(e) if e.is_instance_of::<PyOSError>(py) => Ok(py.None()),
        Err(e) => Err(e),
    };
    extra.set_item(
        intern!(py, "sockname"),
        or_none(sock.call_method0(intern!(py, "getsockname")))?,
    )?;
    if !extra.contains(intern!(py, "peername"))? {
        extra.set_item(
            intern!(py, "peername"),
            or_none(sock.call_method0(intern!(py, "getpeername")))?,
        )?;
    }
    let SockInfo { fd, family, kind } = info;
    if (family == libc::AF_INET || family == libc::AF_INET6) && kind == libc::SOCK_STREAM {
        // SAFETY: the socket object owns the fd and outlives this call.
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        // As asyncio: a socket that refuses it still gets its transport.
        let _ = rustix::net::sockopt::set_tcp_nodelay(fd, true);
    }
    let core = Bound::new(
        py,
        SocketTransport::new(
            lp,
            sock,
            protocol,
            &extra,
            server.map(|s| s.clone().unbind()),
        )?,
    )?;
    let face = crate::base::faces(py)?.socket_transport.bind(py);
    let transport = face.call1((core, &extra))?;
    if let Some(server) = server {
        server.call_method1(intern!(py, "_attach"), (&transport,))?;
    }
    lp.call_method1(
        intern!(py, "call_soon"),
        (
            protocol.getattr(intern!(py, "connection_made"))?,
            &transport,
        ),
    )?;
    lp.call_method1(
        intern!(py, "call_soon"),
        (transport.getattr(intern!(py, "_start_reading"))?,),
    )?;
    if let Some(w) = waiter.filter(|w| !w.is_none()) {
        lp.call_method1(
            intern!(py, "call_soon"),
            (n.set_result_unless_cancelled.bind(py), w, py.None()),
        )?;
    }
    Ok(transport.unbind())
}

/// A listening socket's reader: takes up to `backlog` connections per
/// event, with `accept4(2)` (non-blocking and close-on-exec from the start,
/// with no Python `socket.accept` and no `setblocking` call). A TLS
/// server's connection gets pyloop's `SSLProtocol` at once, and the
/// handshake's outcome goes to a [`TlsAccepted`] callback: no task per
/// connection. Out of descriptors or memory, it reports the error and
/// stops accepting for `ACCEPT_RETRY_DELAY` seconds instead of spinning on
/// a socket that stays readable.
#[pyclass(module = "pyloop._pyloop", frozen)]
#[derive(Debug)]
pub struct Acceptor {
    lp: Py<PyAny>,
    protocol_factory: Py<PyAny>,
    sock: Py<PyAny>,
    server: Py<PyAny>,
    backlog: usize,
    /// The listening socket's descriptor, family, type and protocol, read
    /// once: every accepted socket shares them.
    fd: RawFd,
    family: i32,
    kind: i32,
    proto: i32,
    /// `socket.socket`, the class `socket.accept` gives its connections.
    socket_class: Py<PyAny>,
}

#[pymethods]
impl Acceptor {
    #[new]
    fn py_new(
        lp: Py<PyAny>,
        protocol_factory: Py<PyAny>,
        sock: Bound<'_, PyAny>,
        server: Py<PyAny>,
        backlog: usize,
    ) -> PyResult<Self> {
        let py = sock.py();
        Ok(Acceptor {
            lp,
            protocol_factory,
            fd: sock.call_method0(intern!(py, "fileno"))?.extract()?,
            family: sock.getattr(intern!(py, "family"))?.extract()?,
            kind: sock.getattr(intern!(py, "type"))?.extract()?,
            proto: sock.getattr(intern!(py, "proto"))?.extract()?,
            socket_class: py
                .import("socket")?
                .getattr(intern!(py, "socket"))?
                .unbind(),
            sock: sock.unbind(),
            server,
            backlog,
        })
    }

    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.lp)?;
        visit.call(&self.protocol_factory)?;
        visit.call(&self.sock)?;
        visit.call(&self.server)?;
        visit.call(&self.socket_class)
    }

    fn __call__(&self, py: Python<'_>) -> PyResult<()> {
        let lp = self.lp.bind(py);
        let server = self.server.bind(py);
        let ssl_context = server.getattr(intern!(py, "_ssl_context"))?;
        let tls = (!ssl_context.is_none()).then_some(&ssl_context);
        for _ in 0..self.backlog.max(1) {
            // SAFETY: accept4 on the listening socket, which the server
            // keeps open while this reader is registered; no address wanted.
            let fd = unsafe {
                libc::accept4(
                    self.fd,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                )
            };
            if fd < 0 {
                let e = std::io::Error::last_os_error();
                match e.raw_os_error().unwrap_or(0) {
                    libc::EINTR => continue,
                    libc::EAGAIN | libc::ECONNABORTED => return Ok(()),
                    libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM => {
                        return self.back_off(py, os_error(e));
                    }
                    _ => return Err(os_error(e)),
                }
            }
            let conn =
                match self
                    .socket_class
                    .bind(py)
                    .call1((self.family, self.kind, self.proto, fd))
                {
                    Ok(c) => c,
                    Err(e) => {
                        // SAFETY: the descriptor accept4 just gave, owned by no one.
                        unsafe { libc::close(fd) };
                        return Err(e);
                    }
                };
            let info = SockInfo {
                fd,
                family: self.family,
                kind: self.kind,
            };
            let made = (|| {
                let protocol = self.protocol_factory.bind(py).call0()?;
                match tls {
                    None => {
                        make_transport(lp.cast()?, &conn, info, &protocol, None, None, Some(server))
                            .map(|_| ())
                    }
                    Some(ctx) => self.start_tls(py, &conn, info, &protocol, ctx),
                }
            })();
            if let Err(e) = made {
                if e.is_instance_of::<PySystemExit>(py)
                    || e.is_instance_of::<PyKeyboardInterrupt>(py)
                {
                    return Err(e);
                }
                conn.call_method0(intern!(py, "close"))?;
                report_creation_error(lp, e.into_value(py).into_bound(py).into_any(), None, None)?;
            }
        }
        Ok(())
    }
}

impl Acceptor {
    /// The server side of TLS for one connection: `protocol` gets its
    /// transport once the handshake is done, as asyncio's
    /// `_accept_connection2` does it, without its task.
    fn start_tls(
        &self,
        py: Python<'_>,
        conn: &Bound<'_, PyAny>,
        info: SockInfo,
        protocol: &Bound<'_, PyAny>,
        ctx: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let lp = self.lp.bind(py);
        let server = self.server.bind(py);
        let waiter = lp.call_method0(intern!(py, "create_future"))?;
        let ssl_protocol = Bound::new(
            py,
            SslProtocol::py_new(
                lp,
                protocol,
                Some(ctx.clone()),
                Some(waiter.clone().unbind()),
                true,
                None,
                true,
                server
                    .getattr(intern!(py, "_ssl_handshake_timeout"))?
                    .extract()?,
                server
                    .getattr(intern!(py, "_ssl_shutdown_timeout"))?
                    .extract()?,
            )?,
        )?;
        make_transport(
            lp.cast()?,
            conn,
            info,
            ssl_protocol.as_any(),
            None,
            None,
            Some(server),
        )?;
        let transport = ssl_protocol.getattr(intern!(py, "_app_transport"))?;
        let watch = TlsAccepted {
            lp: self.lp.clone_ref(py),
            protocol: protocol.clone().unbind(),
            transport: transport.unbind(),
        };
        waiter.call_method1(intern!(py, "add_done_callback"), (watch,))?;
        Ok(())
    }
}

/// The end of a TLS server's handshake, as a done callback of its waiter:
/// a failed one closes the connection (and is reported to the loop's
/// exception handler in debug mode), and the server goes on.
#[pyclass(module = "pyloop._pyloop", frozen)]
#[derive(Debug)]
pub struct TlsAccepted {
    lp: Py<PyAny>,
    protocol: Py<PyAny>,
    transport: Py<PyAny>,
}

#[pymethods]
impl TlsAccepted {
    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.lp)?;
        visit.call(&self.protocol)?;
        visit.call(&self.transport)
    }

    fn __call__(&self, waiter: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = waiter.py();
        let exc = if waiter.call_method0(intern!(py, "cancelled"))?.is_truthy()? {
            py.import("asyncio")?
                .getattr(intern!(py, "CancelledError"))?
                .call0()?
        } else {
            waiter.call_method0(intern!(py, "exception"))?
        };
        if exc.is_none() {
            return Ok(());
        }
        let transport = self.transport.bind(py);
        transport.call_method0(intern!(py, "close"))?;
        if exc.is_instance_of::<PySystemExit>() || exc.is_instance_of::<PyKeyboardInterrupt>() {
            return Err(PyErr::from_value(exc));
        }
        // As asyncio's loop: a failed handshake is the peer's doing (a
        // scanner, a client that distrusts the certificate), reported only
        // in debug mode.
        let lp = self.lp.bind(py);
        if lp.call_method0(intern!(py, "is_closed"))?.is_truthy()?
            || !lp.call_method0(intern!(py, "get_debug"))?.is_truthy()?
        {
            return Ok(());
        }
        report_creation_error(lp, exc, Some(self.protocol.bind(py)), Some(transport))
    }
}

/// `loop.call_exception_handler(...)` for a connection the server could not
/// set up.
fn report_creation_error(
    lp: &Bound<'_, PyAny>,
    exc: Bound<'_, PyAny>,
    protocol: Option<&Bound<'_, PyAny>>,
    transport: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let py = lp.py();
    let ctx = PyDict::new(py);
    ctx.set_item(
        "message",
        "Error on transport creation for incoming connection",
    )?;
    ctx.set_item("exception", exc)?;
    if let Some(p) = protocol {
        ctx.set_item("protocol", p)?;
    }
    if let Some(t) = transport {
        ctx.set_item("transport", t)?;
    }
    lp.call_method1(intern!(py, "call_exception_handler"), (ctx,))?;
    Ok(())
}

impl Acceptor {
    /// Out of descriptors or memory: report it, stop accepting, and try
    /// again after `ACCEPT_RETRY_DELAY`.
    fn back_off(&self, py: Python<'_>, e: PyErr) -> PyResult<()> {
        let lp = self.lp.bind(py);
        let sock = self.sock.bind(py);
        let n = names(py)?;
        let ctx = PyDict::new(py);
        ctx.set_item("message", "socket.accept() out of system resource")?;
        ctx.set_item("exception", e.into_value(py))?;
        ctx.set_item("socket", n.transport_socket.bind(py).call1((sock,))?)?;
        lp.call_method1(intern!(py, "call_exception_handler"), (ctx,))?;
        lp.call_method1(
            intern!(py, "remove_reader"),
            (sock.call_method0(intern!(py, "fileno"))?,),
        )?;
        lp.call_method1(
            intern!(py, "call_later"),
            (
                n.accept_retry_delay.bind(py),
                lp.getattr(intern!(py, "_start_serving"))?,
                self.protocol_factory.bind(py),
                sock,
                self.server.bind(py),
                self.backlog,
            ),
        )?;
        Ok(())
    }
}
