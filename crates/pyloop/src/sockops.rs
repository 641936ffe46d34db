//! The loop's `sock_*` coroutines (`sock_recv`, `sock_sendall`,
//! `sock_accept`, `sock_connect`, ...), below their `async def` shells in
//! `_loop.py`.
//!
//! [`sock_io`] tries the operation at once. If the socket would block, it
//! registers a [`SockWait`] as the fd's reader (or writer), which retries on
//! each readiness event and settles a future; the future's done callback
//! removes the registration again, unless someone replaced it meanwhile
//! (then the handle is cancelled). Errors and cancellation follow asyncio's
//! `selector_events`: `BlockingIOError` and `InterruptedError` mean "try
//! again later", other exceptions go to the future, `SystemExit` and
//! `KeyboardInterrupt` propagate. The socket method is looked up at each try,
//! as asyncio does.

use crate::core::LoopCore;
use crate::poll::{READ, WRITE};
use pyo3::exceptions::{
    PyBlockingIOError, PyInterruptedError, PyKeyboardInterrupt, PyOSError, PyStopIteration,
    PySystemExit, PyTypeError, PyValueError,
};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyMemoryView, PyTuple};
use std::sync::Mutex;

/// What to do with the socket, one op code per `sock_*` method.
#[derive(Debug)]
enum Op {
    /// `sock.<name>(*args)`: recv, recv_into, recvfrom, recvfrom_into, sendto.
    Call(&'static str, Py<PyTuple>),
    /// `sock.recv(n)` on a plain stream socket, done here through the
    /// transports' read buffer (see `plain_stream_recv`).
    RecvStream(usize),
    /// `sock.send(view[pos:])` until all of `view` is sent.
    SendAll(Py<PyAny>, usize),
    /// `sock.accept()`, the new socket made non-blocking.
    Accept,
    /// A non-blocking `connect(address)` in progress: `SO_ERROR` says how it
    /// ended.
    Connect(Py<PyAny>),
    /// `sendfile(2)` from `file` at `offset` until `left` (or the end of
    /// the file) is sent; `sent` so far, from `start`.
    SendFile {
        out: i32,
        file: i32,
        start: u64,
        offset: u64,
        left: Option<u64>,
        sent: u64,
    },
}

impl Op {
    /// After a sendfile, success or not, the file's position is just past
    /// what was sent, as after asyncio's: from Python 3.14 on even when
    /// nothing was, before only when something was.
    fn settle_file_position(&self) {
        if let Op::SendFile {
            file, start, sent, ..
        } = *self
            && (sent > 0 || cfg!(Py_3_14))
        {
            // SAFETY: the caller holds the file open until the call ends.
            let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(file) };
            let _ = rustix::fs::seek(fd, rustix::fs::SeekFrom::Start(start + sent));
        }
    }
}

const RECV: u8 = 0;
const RECV_INTO: u8 = 1;
const RECVFROM: u8 = 2;
const RECVFROM_INTO: u8 = 3;
const SENDTO: u8 = 4;
const SENDALL: u8 = 5;
const ACCEPT: u8 = 6;
const CONNECT: u8 = 7;
const SENDFILE: u8 = 8;

static SSL_SOCKET: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// Whether `e` means "not yet": the socket would block, or a signal came.
fn would_block(py: Python<'_>, e: &PyErr) -> bool {
    e.is_instance_of::<PyBlockingIOError>(py) || e.is_instance_of::<PyInterruptedError>(py)
}

/// Whether `e` must propagate instead of settling the future.
fn fatal(py: Python<'_>, e: &PyErr) -> bool {
    e.is_instance_of::<PySystemExit>(py) || e.is_instance_of::<PyKeyboardInterrupt>(py)
}

/// asyncio's `_check_ssl_socket` and, in debug mode, its blocking check:
/// what every `sock_*` method checks first (`loop._check_nonblocking`).
#[pyfunction]
pub fn check_socket(lp: &Bound<'_, LoopCore>, sock: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = sock.py();
    let ssl_socket = SSL_SOCKET.get_or_try_init(py, || {
        PyResult::Ok(
            py.import("ssl")?
                .getattr(intern!(py, "SSLSocket"))?
                .unbind(),
        )
    })?;
    if sock.is_instance(ssl_socket.bind(py))? {
        return Err(PyTypeError::new_err("Socket cannot be of type SSLSocket"));
    }
    if lp.get().is_debug() && !sock.call_method0(intern!(py, "gettimeout"))?.eq(0)? {
        return Err(PyValueError::new_err("the socket must be non-blocking"));
    }
    Ok(())
}

static SOCKET_TYPE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// `Some(n)` when `sock.recv(n)` can be done here instead: a plain
/// `socket.socket` (not a subclass, whose `recv` may be its own) of type
/// `SOCK_STREAM`, and one positive size.
fn plain_stream_recv(
    sock: &Bound<'_, PyAny>,
    args: &Bound<'_, PyTuple>,
) -> PyResult<Option<usize>> {
    let py = sock.py();
    let ty = SOCKET_TYPE.get_or_try_init(py, || {
        PyResult::Ok(
            py.import("socket")?
                .getattr(intern!(py, "socket"))?
                .unbind(),
        )
    })?;
    if !sock.get_type().is(ty.bind(py)) || args.len() != 1 {
        return Ok(None);
    }
    let Ok(n) = args.get_item(0)?.extract::<usize>() else {
        return Ok(None);
    };
    if n == 0 {
        return Ok(None);
    }
    // The socket's own type, not `sock.type` (an enum made per read).
    let fd: i32 = sock.call_method0(intern!(py, "fileno"))?.extract()?;
    if fd < 0 {
        return Ok(None);
    }
    // SAFETY: the socket object owns the fd and outlives this call.
    let kind =
        rustix::net::sockopt::socket_type(unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) });
    Ok((kind == Ok(rustix::net::SocketType::STREAM)).then_some(n))
}

/// The op's next try: `Ok(Some(v))` when it is done with `v`, `Ok(None)`
/// when it must wait for the socket again.
fn attempt(sock: &Bound<'_, PyAny>, op: &mut Op) -> PyResult<Option<Py<PyAny>>> {
    let py = sock.py();
    let mut step = || -> PyResult<Option<Py<PyAny>>> {
        match op {
            Op::RecvStream(n) => {
                // The fd is asked for each time: a socket closed meanwhile
                // says -1 (EBADF), where a kept number could be reused.
                let fd: i32 = sock.call_method0(intern!(py, "fileno"))?.extract()?;
                match crate::transport::recv_stream(py, fd, *n) {
                    Ok(b) => Ok(Some(b.into_any().unbind())),
                    Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => Ok(None),
                    Err(e) => Err(crate::transport::errno_to_py(e)),
                }
            }
            Op::Call(name, args) => Ok(Some(sock.getattr(*name)?.call1(args.bind(py))?.unbind())),
            Op::SendAll(view, pos) => {
                let view = view.bind(py);
                let rest =
                    view.get_item(pyo3::types::PySlice::new(py, *pos as isize, isize::MAX, 1))?;
                let n: usize = sock.call_method1(intern!(py, "send"), (rest,))?.extract()?;
                *pos += n;
                Ok((*pos >= view.len()?).then(|| py.None()))
            }
            Op::Accept => {
                let pair = sock.call_method0(intern!(py, "accept"))?;
                pair.get_item(0)?
                    .call_method1(intern!(py, "setblocking"), (false,))?;
                Ok(Some(pair.unbind()))
            }
            Op::Connect(address) => {
                let err: i32 = sock
                    .call_method1(
                        intern!(py, "getsockopt"),
                        (libc::SOL_SOCKET, libc::SO_ERROR),
                    )?
                    .extract()?;
                if err != 0 {
                    let address = address.bind(py).str()?;
                    return Err(PyOSError::new_err((
                        err,
                        format!("Connect call failed {address}"),
                    )));
                }
                Ok(Some(py.None()))
            }
            Op::SendFile {
                out,
                file,
                offset,
                left,
                sent,
                ..
            } => loop {
                // SAFETY: the socket object and the caller's file object own
                // these fds for the whole call.
                let (out, inp) = unsafe {
                    (
                        std::os::fd::BorrowedFd::borrow_raw(*out),
                        std::os::fd::BorrowedFd::borrow_raw(*file),
                    )
                };
                match crate::transport::sendfile_once(out, inp, offset, *left) {
                    Ok(0) => return Ok(Some((*sent).into_pyobject(py)?.into_any().unbind())),
                    Ok(n) => {
                        *sent += n as u64;
                        if let Some(l) = left.as_mut() {
                            *l -= n as u64;
                        }
                    }
                    Err(rustix::io::Errno::AGAIN) => return Ok(None),
                    // As asyncio's sock_sendfile: any failure before the
                    // first byte means "fall back".
                    Err(e) if *sent == 0 => {
                        return Err(crate::transport::sendfile_not_available(py, e)?);
                    }
                    Err(rustix::io::Errno::NOTCONN) => {
                        return Err(pyo3::exceptions::PyConnectionError::new_err((
                            "socket is not connected",
                            libc::ENOTCONN,
                        )));
                    }
                    Err(e) => return Err(crate::transport::errno_to_py(e)),
                }
            },
        }
    };
    match step() {
        Err(e) if would_block(py, &e) => Ok(None),
        other => other,
    }
}

/// An awaitable that is already done: `await` gives `value` at once, with
/// no future and no trip through the loop.
#[pyclass(module = "pyloop._pyloop")]
#[derive(Debug)]
pub struct Ready {
    value: Option<Py<PyAny>>,
}

#[pymethods]
impl Ready {
    fn __await__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<()> {
        let v = self.value.take().unwrap_or_else(|| py.None());
        Err(PyStopIteration::new_err((v,)))
    }
}

/// The reader or writer of one pending `sock_*` call.
#[pyclass(module = "pyloop._pyloop", frozen)]
#[derive(Debug)]
pub struct SockWait {
    lp: Py<PyAny>,
    fut: Py<PyAny>,
    sock: Py<PyAny>,
    fd: Py<PyAny>,
    dir: u8,
    op: Mutex<Op>,
    handle: Mutex<Option<Py<PyAny>>>,
}

#[pymethods]
impl SockWait {
    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.lp)?;
        visit.call(&self.fut)?;
        visit.call(&self.sock)?;
        visit.call(&self.fd)?;
        if let Ok(op) = self.op.try_lock() {
            match &*op {
                Op::Call(_, args) => visit.call(args)?,
                Op::SendAll(view, _) => visit.call(view)?,
                Op::Connect(address) => visit.call(address)?,
                Op::Accept | Op::RecvStream(_) | Op::SendFile { .. } => {}
            }
        }
        if let Ok(h) = self.handle.try_lock()
            && let Some(h) = &*h
        {
            visit.call(h)?;
        }
        Ok(())
    }

    /// The readiness callback: one more try.
    fn __call__(&self, py: Python<'_>) -> PyResult<()> {
        let fut = self.fut.bind(py);
        if fut.call_method0(intern!(py, "done"))?.is_truthy()? {
            return Ok(());
        }
        let got = {
            let mut op = self.op.lock().unwrap_or_else(|e| e.into_inner());
            attempt(self.sock.bind(py), &mut op)
        };
        match got {
            Ok(None) => Ok(()),
            Ok(Some(v)) => fut.call_method1(intern!(py, "set_result"), (v,)).map(drop),
            Err(e) if fatal(py, &e) => Err(e),
            Err(e) => fut
                .call_method1(intern!(py, "set_exception"), (e.into_value(py),))
                .map(drop),
        }
    }

    /// The future's done callback: the fd is no longer watched for this
    /// call, unless another callback has replaced this one since.
    fn done(&self, py: Python<'_>, _fut: &Bound<'_, PyAny>) -> PyResult<()> {
        // A sendfile, however it ended (cancelled too), leaves the file
        // just past what it sent. This callback runs before the awaiting
        // task resumes: it was added first.
        self.op
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .settle_file_position();
        let handle = self.handle.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(h) = handle
            && h.bind(py)
                .call_method0(intern!(py, "cancelled"))?
                .is_truthy()?
        {
            return Ok(());
        }
        let lp = self.lp.bind(py);
        let name = if self.dir == READ {
            "remove_reader"
        } else {
            "remove_writer"
        };
        lp.call_method1(name, (self.fd.bind(py),)).map(drop)
    }
}

/// `sock_<op>(sock, *args)`: the op now if the socket is ready, else a
/// future settled when it is. Always an awaitable.
#[pyfunction]
#[pyo3(signature = (lp, sock, op, *args))]
pub fn sock_io(
    lp: &Bound<'_, PyAny>,
    sock: &Bound<'_, PyAny>,
    op: u8,
    args: &Bound<'_, PyTuple>,
) -> PyResult<Py<PyAny>> {
    let py = lp.py();
    let core = lp.cast::<LoopCore>()?;
    check_socket(core, sock)?;
    let (mut op, dir) = match op {
        RECV => match plain_stream_recv(sock, args)? {
            Some(n) => (Op::RecvStream(n), READ),
            None => (Op::Call("recv", args.clone().unbind()), READ),
        },
        RECV_INTO => (Op::Call("recv_into", args.clone().unbind()), READ),
        RECVFROM => (Op::Call("recvfrom", args.clone().unbind()), READ),
        RECVFROM_INTO => (Op::Call("recvfrom_into", args.clone().unbind()), READ),
        SENDTO => (Op::Call("sendto", args.clone().unbind()), WRITE),
        SENDALL => {
            let data = args.get_item(0)?;
            let n = match sock.call_method1(intern!(py, "send"), (&data,)) {
                Ok(n) => n.extract::<usize>()?,
                Err(e) if would_block(py, &e) => 0,
                Err(e) => return Err(e),
            };
            let view = PyMemoryView::from(&data)?;
            if n >= view.len()? {
                return ready(py, py.None());
            }
            (Op::SendAll(view.into_any().unbind(), n), WRITE)
        }
        ACCEPT => (Op::Accept, READ),
        SENDFILE => {
            let (file, offset, count): (i32, u64, Option<u64>) = args.extract()?;
            let out: i32 = sock.call_method0(intern!(py, "fileno"))?.extract()?;
            (
                Op::SendFile {
                    out,
                    file,
                    start: offset,
                    offset,
                    left: count,
                    sent: 0,
                },
                WRITE,
            )
        }
        CONNECT => {
            let address = args.get_item(0)?;
            match sock.call_method1(intern!(py, "connect"), (&address,)) {
                Ok(_) => return ready(py, py.None()),
                Err(e) if would_block(py, &e) => {}
                Err(e) => return Err(e),
            }
            (Op::Connect(address.unbind()), WRITE)
        }
        _ => return Err(PyValueError::new_err(format!("unknown socket op {op}"))),
    };
    if !matches!(op, Op::SendAll(..) | Op::Connect(_)) {
        let got = attempt(sock, &mut op);
        if !matches!(got, Ok(None)) {
            op.settle_file_position();
        }
        if let Some(v) = got? {
            return ready(py, v);
        }
    }
    let fd = sock.call_method0(intern!(py, "fileno"))?;
    let fut = lp.call_method0(intern!(py, "create_future"))?;
    lp.call_method1(intern!(py, "_ensure_fd_no_transport"), (&fd,))?;
    let wait = Bound::new(
        py,
        SockWait {
            lp: lp.clone().unbind(),
            fut: fut.clone().unbind(),
            sock: sock.clone().unbind(),
            fd: fd.clone().unbind(),
            dir,
            op: Mutex::new(op),
            handle: Mutex::new(None),
        },
    )?;
    let add = if dir == READ {
        "add_reader"
    } else {
        "add_writer"
    };
    let handle = lp.call_method1(add, (&fd, &wait))?;
    *wait.get().handle.lock().unwrap_or_else(|e| e.into_inner()) = Some(handle.unbind());
    fut.call_method1(
        intern!(py, "add_done_callback"),
        (wait.getattr(intern!(py, "done"))?,),
    )?;
    Ok(fut.unbind())
}

fn ready(py: Python<'_>, value: Py<PyAny>) -> PyResult<Py<PyAny>> {
    Ok(Bound::new(py, Ready { value: Some(value) })?
        .into_any()
        .unbind())
}
