//! The server side of a stream socket: [`Acceptor`] is a listening socket's
//! reader and takes up to `backlog` connections per readiness event, and
//! [`make_socket_transport`] gives each connection (and each client
//! connection) its transport.
//!
//! Both were Python in `_loop.py`; they run per connection, so a server that
//! takes many short connections (TLS handshakes, HTTP without keep-alive)
//! spends its time here.

use pyo3::exceptions::{
    PyBlockingIOError, PyConnectionAbortedError, PyInterruptedError, PyKeyboardInterrupt,
    PyOSError, PySystemExit,
};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;

use crate::core::LoopCore;
use crate::transport::SocketTransport;

/// What `make_socket_transport` takes from Python once.
struct Names {
    /// `asyncio.trsock.TransportSocket`.
    transport_socket: Py<PyAny>,
    /// `pyloop._loop.SocketTransport`, the `asyncio.Transport` face.
    facade: Py<PyAny>,
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
                .getattr("TransportSocket")?
                .unbind(),
            facade: py
                .import("pyloop._loop")?
                .getattr("SocketTransport")?
                .unbind(),
            set_result_unless_cancelled: py
                .import("asyncio.futures")?
                .getattr("_set_result_unless_cancelled")?
                .unbind(),
            accept_retry_delay: py
                .import("asyncio.constants")?
                .getattr("ACCEPT_RETRY_DELAY")?
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
    let family: i32 = sock.getattr(intern!(py, "family"))?.extract()?;
    let kind: i32 = sock.getattr(intern!(py, "type"))?.extract()?;
    if (family == libc::AF_INET || family == libc::AF_INET6) && kind == libc::SOCK_STREAM {
        let fd: i32 = sock.call_method0(intern!(py, "fileno"))?.extract()?;
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
    let transport = n.facade.bind(py).call1((core, &extra))?;
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
/// event. A TLS server's connections go to `loop._accept_tls_connection`
/// (a task per handshake). Out of descriptors or memory, it reports the
/// error and stops accepting for `ACCEPT_RETRY_DELAY` seconds instead of
/// spinning on a socket that stays readable.
#[pyclass(module = "pyloop._pyloop", frozen)]
#[derive(Debug)]
pub struct Acceptor {
    lp: Py<PyAny>,
    protocol_factory: Py<PyAny>,
    sock: Py<PyAny>,
    server: Py<PyAny>,
    backlog: usize,
}

#[pymethods]
impl Acceptor {
    #[new]
    fn py_new(
        lp: Py<PyAny>,
        protocol_factory: Py<PyAny>,
        sock: Py<PyAny>,
        server: Py<PyAny>,
        backlog: usize,
    ) -> Self {
        Acceptor {
            lp,
            protocol_factory,
            sock,
            server,
            backlog,
        }
    }

    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.lp)?;
        visit.call(&self.protocol_factory)?;
        visit.call(&self.sock)?;
        visit.call(&self.server)
    }

    fn __call__(&self, py: Python<'_>) -> PyResult<()> {
        let lp = self.lp.bind(py);
        let sock = self.sock.bind(py);
        let server = self.server.bind(py);
        let tls = !server.getattr(intern!(py, "_ssl_context"))?.is_none();
        for _ in 0..self.backlog.max(1) {
            let pair = match sock.call_method0(intern!(py, "accept")) {
                Ok(p) => p,
                Err(e)
                    if e.is_instance_of::<PyBlockingIOError>(py)
                        || e.is_instance_of::<PyInterruptedError>(py)
                        || e.is_instance_of::<PyConnectionAbortedError>(py) =>
                {
                    return Ok(());
                }
                Err(e) if out_of_resources(py, &e) => return self.back_off(py, e),
                Err(e) => return Err(e),
            };
            let conn = pair.get_item(0)?;
            let addr = pair.get_item(1)?;
            conn.call_method1(intern!(py, "setblocking"), (false,))?;
            if tls {
                let coro = lp.call_method1(
                    intern!(py, "_accept_tls_connection"),
                    (self.protocol_factory.bind(py), &conn, &addr, server),
                )?;
                lp.call_method1(intern!(py, "create_task"), (coro,))?;
                continue;
            }
            let made = (|| {
                let protocol = self.protocol_factory.bind(py).call0()?;
                let extra = PyDict::new(py);
                extra.set_item(intern!(py, "peername"), &addr)?;
                make_socket_transport(
                    lp.cast::<LoopCore>()?,
                    &conn,
                    &protocol,
                    None,
                    Some(&extra),
                    Some(server),
                )
            })();
            if let Err(e) = made {
                if e.is_instance_of::<PySystemExit>(py)
                    || e.is_instance_of::<PyKeyboardInterrupt>(py)
                {
                    return Err(e);
                }
                conn.call_method0(intern!(py, "close"))?;
                let ctx = PyDict::new(py);
                ctx.set_item(
                    "message",
                    "Error on transport creation for incoming connection",
                )?;
                ctx.set_item("exception", e.into_value(py))?;
                lp.call_method1(intern!(py, "call_exception_handler"), (ctx,))?;
            }
        }
        Ok(())
    }
}

fn out_of_resources(py: Python<'_>, e: &PyErr) -> bool {
    e.is_instance_of::<PyOSError>(py)
        && e.value(py)
            .getattr("errno")
            .and_then(|v| v.extract::<i32>())
            .is_ok_and(|n| {
                matches!(
                    n,
                    libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM
                )
            })
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
