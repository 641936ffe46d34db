//! `SocketTransport`: asyncio's stream transport for TCP and Unix sockets,
//! and its read and write pipe transports, in Rust. The loop calls it
//! directly when its fd is ready (no handle is queued); it reads into the
//! thread's read buffer and calls the protocol, and writes straight to the fd until
//! the kernel pushes back, then buffers.
//!
//! The Python socket (or pipe file) object owns the file descriptor and is
//! closed after `connection_lost`, as in asyncio; the transport only borrows
//! the fd.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::os::fd::{BorrowedFd, RawFd};

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyBrokenPipeError, PyException, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyMemoryView};
use pyo3::{PyClass, PyTraverseError, PyVisit};
use rustix::io::Errno;
use rustix::net::{RecvFlags, SendFlags, Shutdown};

use crate::base::{self, Base, Transport};
use crate::core::{FdOwner, LoopCore};
use crate::poll::{READ, WRITE};

const READ_CHUNK: usize = 256 * 1024;

/// A protocol that takes what the transport reads straight from its read
/// buffer, with no Python call between: pyloop's TLS protocol (`tls.rs`),
/// which sits above this module (it writes through the transport). `lib.rs`
/// names that type with [`read_directly`] as the module loads.
pub(crate) trait DirectProtocol: PyClass {
    /// Bytes read from the socket.
    fn feed(slf: &Bound<'_, Self>, data: &[u8]) -> PyResult<()>;
    /// After a read's bytes were fed.
    fn incoming_ready(slf: &Bound<'_, Self>) -> PyResult<()>;
}

/// A [`DirectProtocol`] with its type erased, as `core::Owner` erases a
/// transport's.
#[derive(Debug)]
struct Direct {
    obj: Py<PyAny>,
    feed: fn(&Bound<'_, PyAny>, &[u8]) -> PyResult<()>,
    incoming_ready: fn(&Bound<'_, PyAny>) -> PyResult<()>,
}

impl Direct {
    /// `protocol` as a `T`, if it is one.
    fn of<T: DirectProtocol>(protocol: &Bound<'_, PyAny>) -> Option<Direct> {
        fn feed<T: DirectProtocol>(obj: &Bound<'_, PyAny>, data: &[u8]) -> PyResult<()> {
            // SAFETY: `obj` passed the cast to `T` in `Direct::of::<T>`,
            // which pairs it with this function of the same `T`.
            T::feed(unsafe { obj.cast_unchecked::<T>() }, data)
        }
        fn incoming_ready<T: DirectProtocol>(obj: &Bound<'_, PyAny>) -> PyResult<()> {
            // SAFETY: as in `feed`.
            T::incoming_ready(unsafe { obj.cast_unchecked::<T>() })
        }
        let obj = protocol.cast::<T>().ok()?;
        Some(Direct {
            obj: obj.clone().into_any().unbind(),
            feed: feed::<T>,
            incoming_ready: incoming_ready::<T>,
        })
    }

    fn clone_ref(&self, py: Python<'_>) -> Direct {
        Direct {
            obj: self.obj.clone_ref(py),
            feed: self.feed,
            incoming_ready: self.incoming_ready,
        }
    }
}

/// How a transport finds its protocol's [`DirectProtocol`] side: set once,
/// by [`read_directly`].
static DIRECT: std::sync::OnceLock<Detect> = std::sync::OnceLock::new();

/// `protocol` as the registered [`DirectProtocol`] type, if it is one.
type Detect = fn(&Bound<'_, PyAny>) -> Option<Direct>;

/// Makes protocols of type `T` take the bytes read directly.
pub(crate) fn read_directly<T: DirectProtocol>() {
    DIRECT.get_or_init(|| Direct::of::<T>);
}

fn direct(protocol: &Bound<'_, PyAny>) -> Option<Direct> {
    DIRECT.get().and_then(|of| of(protocol))
}

/// The buffer that a stream read lands in, before its bytes are copied into
/// a Python `bytes`.
///
/// There is one per thread (a loop runs on one thread), not one per
/// transport, so an idle connection holds no read buffer.
///
/// It starts on a page boundary. The kernel copies out of socket and pipe
/// buffers that start on one too, and a destination a few bytes past a page
/// boundary (where glibc puts a 256 KiB `malloc`: page + 16) makes that copy
/// stall on 4K aliasing. Here, receiving 100 KiB over TCP took 40-74 µs at
/// page + 8 or + 16, and 9-12 µs at page + 0 or + 64.
struct ReadBuf {
    raw: Vec<u8>,
    start: usize,
}

impl ReadBuf {
    fn new() -> Self {
        let page = rustix::param::page_size();
        let raw = vec![0u8; READ_CHUNK + page];
        let start = raw.as_ptr().align_offset(page);
        Self { raw, start }
    }

    fn get(&mut self) -> &mut [u8] {
        &mut self.raw[self.start..self.start + READ_CHUNK]
    }
}

thread_local! {
    static READ_BUF: RefCell<ReadBuf> = RefCell::new(ReadBuf::new());
}

/// `recv(2)` of up to `max` bytes (at most the read buffer's size) from a
/// stream socket, through the thread's read buffer: for `loop.sock_recv`,
/// where `socket.recv(n)` would allocate n bytes first (an mmap and page
/// faults when n is large) and then shrink them.
pub(crate) fn recv_stream<'py>(
    py: Python<'py>,
    fd: RawFd,
    max: usize,
) -> Result<Bound<'py, PyBytes>, Errno> {
    // SAFETY: the caller's socket object owns the fd for the call.
    let bfd = unsafe { BorrowedFd::borrow_raw(fd) };
    READ_BUF.with_borrow_mut(|buf| {
        let buf = buf.get();
        let want = max.min(buf.len());
        let (n, _) = rustix::net::recv(bfd, &mut buf[..want], rustix::net::RecvFlags::empty())?;
        Ok(PyBytes::new(py, &buf[..n]))
    })
}

/// What the transport carries; the three share buffering, flow control and
/// closing, as asyncio's socket and pipe transports do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A connected stream socket: `recv`/`send`, `shutdown` for EOF.
    Socket,
    /// The read end of a pipe (or a socket or character device used as
    /// one): end of file closes the transport.
    ReadPipe,
    /// The write end of a pipe: `write_eof` closes it, and when the fd is a
    /// FIFO or a socket, readiness to read means the reader has gone.
    WritePipe,
}

impl Kind {
    fn what(self) -> &'static str {
        match self {
            Kind::Socket => "socket",
            Kind::ReadPipe | Kind::WritePipe => "pipe",
        }
    }

    fn read(self, fd: BorrowedFd<'_>, buf: &mut [u8]) -> Result<usize, Errno> {
        match self {
            Kind::Socket => rustix::net::recv(fd, buf, RecvFlags::empty()).map(|(n, _)| n),
            _ => rustix::io::read(fd, buf),
        }
    }

    fn write(self, fd: BorrowedFd<'_>, buf: &[u8]) -> Result<usize, Errno> {
        match self {
            Kind::Socket => rustix::net::send(fd, buf, SendFlags::NOSIGNAL),
            _ => rustix::io::write(fd, buf),
        }
    }

    /// Writes both halves of a ring buffer in one call.
    fn write2(self, fd: BorrowedFd<'_>, a: &[u8], b: &[u8]) -> Result<usize, Errno> {
        if b.is_empty() {
            return self.write(fd, a);
        }
        let iov = [std::io::IoSlice::new(a), std::io::IoSlice::new(b)];
        match self {
            Kind::Socket => rustix::net::sendmsg(
                fd,
                &iov,
                &mut rustix::net::SendAncillaryBuffer::default(),
                SendFlags::NOSIGNAL,
            ),
            _ => rustix::io::writev(fd, &iov),
        }
    }
}

#[pyclass(module = "pyloop._pyloop", weakref)]
#[derive(Debug)]
pub struct SocketTransport {
    base: Base,
    kind: Kind,
    /// The protocol is an `asyncio.BufferedProtocol`.
    buffered: bool,
    server: Option<Py<PyAny>>,
    /// Bytes accepted by `write` that the kernel has not taken yet.
    wbuf: VecDeque<u8>,
    eof_requested: bool,
    eof_written: bool,
    /// A `loop.sendfile` in progress: `write` is refused until it ends.
    sendfile: Option<SendfileJob>,
    /// The protocol is pyloop's TLS protocol: it gets the bytes read
    /// directly, with no Python call.
    tls: Option<Direct>,
    /// `wbuf` holds writes that wait for the end of the loop's iteration
    /// (the loop's flush list has this transport), not for a writable
    /// event.
    deferred: bool,
}

/// The state of a zero-copy `loop.sendfile` on a socket transport. The
/// loop's writable events drive it: one `sendfile(2)` per event, which
/// moves what the socket buffer has room for, so a long transfer never
/// holds the loop for more than one system call at a time.
#[derive(Debug)]
struct SendfileJob {
    file: RawFd,
    /// The file offset of the next byte to send.
    offset: u64,
    /// Bytes still to send, or `None` to send up to the end of the file.
    left: Option<u64>,
    sent: u64,
    /// Resolved with the byte count, or failed; the Python side awaits it.
    fut: Py<PyAny>,
}

/// The `sendfile(2)` errors that mean this file (or socket) cannot be sent
/// with it at all, so the caller falls back to reading and writing: only
/// when nothing has been sent yet.
fn sendfile_unavailable(e: Errno) -> bool {
    matches!(
        e,
        Errno::INVAL
            | Errno::NOSYS
            | Errno::SPIPE
            | Errno::OPNOTSUPP
            | Errno::BADF
            | Errno::OVERFLOW
    )
}

/// One `sendfile(2)` from `file` at `*offset` into `out`, of at most `left`
/// bytes (no limit for `None`), retried on `EINTR`. `Ok(0)` is the end of
/// the file, or nothing left to send.
pub(crate) fn sendfile_once(
    out: BorrowedFd<'_>,
    file: BorrowedFd<'_>,
    offset: &mut u64,
    left: Option<u64>,
) -> Result<usize, Errno> {
    let want = left.unwrap_or(u64::MAX).min(0x7fff_f000) as usize;
    if want == 0 {
        return Ok(0);
    }
    loop {
        match rustix::fs::sendfile(out, file, Some(offset), want) {
            Err(Errno::INTR) => continue,
            r => return r,
        }
    }
}

/// asyncio's `SendfileNotAvailableError` for a failed first `sendfile(2)`:
/// the caller falls back to reading and writing.
pub(crate) fn sendfile_not_available(py: Python<'_>, e: Errno) -> PyResult<PyErr> {
    let cls = py
        .import("asyncio.exceptions")?
        .getattr(intern!(py, "SendfileNotAvailableError"))?;
    Ok(PyErr::from_value(
        cls.call1((format!("os.sendfile call failed: {e}"),))?,
    ))
}

pub(crate) fn errno_to_py(e: Errno) -> PyErr {
    crate::core::os_error(std::io::Error::from_raw_os_error(e.raw_os_error()))
}

fn is_buffered(protocol: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = protocol.py();
    let bp = py
        .import("asyncio")?
        .getattr(intern!(py, "BufferedProtocol"))?;
    protocol.is_instance(&bp)
}

impl Transport for SocketTransport {
    fn base(&self) -> &Base {
        &self.base
    }

    fn base_mut(&mut self) -> &mut Base {
        &mut self.base
    }

    fn buffered(&self) -> usize {
        self.wbuf.len()
    }
}

impl FdOwner for SocketTransport {
    fn ready(slf: &Bound<'_, Self>, readable: bool, writable: bool) -> PyResult<()> {
        Self::on_ready(slf, readable, writable)
    }

    fn flush(slf: &Bound<'_, Self>) -> PyResult<()> {
        Self::flush_deferred(slf)
    }
}

impl SocketTransport {
    /// A stream socket's transport, for Rust callers (`accept.rs`).
    pub(crate) fn new(
        lp: &Bound<'_, LoopCore>,
        sock: &Bound<'_, PyAny>,
        protocol: &Bound<'_, PyAny>,
        extra: &Bound<'_, PyDict>,
        server: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        Self::py_new(lp, sock, protocol, extra, server, "socket")
    }

    fn fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the socket object owns the fd and outlives every use: the
        // transport drops its readiness interest before it closes the socket.
        unsafe { BorrowedFd::borrow_raw(self.base.fd) }
    }

    /// Called by the loop when the socket is ready; runs the protocol's
    /// callbacks in the transport's context.
    fn on_ready(slf: &Bound<'_, Self>, readable: bool, writable: bool) -> PyResult<()> {
        base::with_context(slf, || {
            let mut res = Ok(());
            if readable {
                res = Self::read_ready(slf);
            }
            if writable && res.is_ok() {
                res = Self::write_ready(slf);
            }
            res
        })
    }

    fn read_ready(slf: &Bound<'_, Self>) -> PyResult<()> {
        let py = slf.py();
        let (closing, buffered, kind) = {
            let t = slf.borrow();
            (
                t.base.closing || t.base.protocol.is_none(),
                t.buffered,
                t.kind,
            )
        };
        if closing {
            return Ok(());
        }
        if kind == Kind::WritePipe {
            // The reader closed its end (a write pipe is watched for reading
            // only for this): unsent data is lost, as asyncio reports it.
            let exc = if slf.borrow().wbuf.is_empty() {
                None
            } else {
                Some(PyBrokenPipeError::new_err(()).into_value(py).into_any())
            };
            return Self::force_close(slf, exc);
        }
        if buffered {
            return Self::read_ready_buffered(slf);
        }
        let tls = slf.borrow().tls.as_ref().map(|t| t.clone_ref(py));
        if let Some(tls) = tls {
            return Self::read_ready_direct(slf, tls);
        }
        let res = {
            let t = slf.borrow();
            // Only the read and the copy into `bytes` run under the buffer's
            // borrow: no Python code, so no other read can start meanwhile.
            READ_BUF.with_borrow_mut(|buf| {
                let buf = buf.get();
                t.kind
                    .read(t.fd(), buf)
                    .map(|n| PyBytes::new(py, &buf[..n]))
            })
        };
        match res {
            Err(Errno::AGAIN | Errno::INTR) => Ok(()),
            Err(e) => Self::read_error(slf, e),
            Ok(data) if data.as_bytes().is_empty() => Self::read_eof(slf),
            Ok(data) => {
                // A Bound: its drop needs no look at the thread's state.
                let proto = slf
                    .borrow()
                    .base
                    .protocol
                    .as_ref()
                    .map(|p| p.bind(py).clone());
                if let Some(p) = proto
                    && let Err(e) = p.call_method1(intern!(py, "data_received"), (data,))
                {
                    return Self::fail_or_raise(
                        slf,
                        e,
                        "Fatal error: protocol.data_received() call failed.",
                    );
                }
                Ok(())
            }
        }
    }

    /// Reads for a [`DirectProtocol`] (pyloop's TLS protocol: the bytes go
    /// into its incoming BIO straight from the read buffer).
    fn read_ready_direct(slf: &Bound<'_, Self>, tls: Direct) -> PyResult<()> {
        let tls_obj = tls.obj.into_bound(slf.py());
        let res = {
            let t = slf.borrow();
            READ_BUF.with_borrow_mut(|buf| {
                let buf = buf.get();
                match t.kind.read(t.fd(), buf) {
                    // MemoryBIO.write is C code: no Python runs while the
                    // read buffer is borrowed.
                    Ok(n) if n > 0 => Ok((tls.feed)(&tls_obj, &buf[..n]).map(|()| n)),
                    r => Ok(Ok(r?)),
                }
            })
        };
        match res {
            Err(Errno::AGAIN | Errno::INTR) => Ok(()),
            Err(e) => Self::read_error(slf, e),
            Ok(Ok(0)) => Self::read_eof(slf),
            Ok(r) => match r.and_then(|_| (tls.incoming_ready)(&tls_obj)) {
                Ok(()) => Ok(()),
                Err(e) => Self::fail_or_raise(
                    slf,
                    e,
                    "Fatal error: protocol.buffer_updated() call failed.",
                ),
            },
        }
    }

    /// `write()` for pyloop's TLS protocol, which hands over `bytes`.
    pub(crate) fn write_from_tls(slf: &Bound<'_, Self>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        Self::write(slf, data)
    }

    fn read_ready_buffered(slf: &Bound<'_, Self>) -> PyResult<()> {
        let py = slf.py();
        let Some(proto) = slf.borrow().base.protocol.as_ref().map(|p| p.clone_ref(py)) else {
            return Ok(());
        };
        let proto = proto.bind(py);
        let buf = match proto.call_method1(intern!(py, "get_buffer"), (-1,)) {
            Ok(b) => b,
            Err(e) => {
                return Self::fail_or_raise(
                    slf,
                    e,
                    "Fatal error: protocol.get_buffer() call failed.",
                );
            }
        };
        let pybuf = match PyBuffer::<u8>::get(&buf) {
            Ok(b) if b.readonly() => {
                return Self::fatal_error(
                    slf,
                    PyTypeError::new_err("get_buffer() returned a read-only buffer"),
                    "Fatal error: protocol.get_buffer() call failed.",
                );
            }
            Ok(b) if b.item_count() == 0 => {
                return Self::fatal_error(
                    slf,
                    PyRuntimeError::new_err("get_buffer() returned an empty buffer"),
                    "Fatal error: protocol.get_buffer() call failed.",
                );
            }
            Ok(b) if !b.is_c_contiguous() => {
                return Self::fatal_error(
                    slf,
                    PyTypeError::new_err("get_buffer() returned a non-contiguous buffer"),
                    "Fatal error: protocol.get_buffer() call failed.",
                );
            }
            Ok(b) => b,
            Err(e) => {
                return Self::fatal_error(
                    slf,
                    e,
                    "Fatal error: protocol.get_buffer() call failed.",
                );
            }
        };
        let (fd, kind) = {
            let t = slf.borrow();
            (t.base.fd, t.kind)
        };
        // SAFETY: the buffer is writable, C-contiguous and `item_count` bytes
        // long; it stays alive (pybuf holds it) during the recv, and the GIL
        // is held so no Python code can resize it meanwhile.
        let slice = unsafe {
            std::slice::from_raw_parts_mut(pybuf.buf_ptr() as *mut u8, pybuf.item_count())
        };
        // SAFETY: as in `fd()`.
        let bfd = unsafe { BorrowedFd::borrow_raw(fd) };
        let res = kind.read(bfd, slice);
        drop(pybuf);
        match res {
            Err(Errno::AGAIN | Errno::INTR) => Ok(()),
            Err(e) => Self::read_error(slf, e),
            Ok(0) => Self::read_eof(slf),
            Ok(n) => match proto.call_method1(intern!(py, "buffer_updated"), (n,)) {
                Ok(_) => Ok(()),
                Err(e) => Self::fail_or_raise(
                    slf,
                    e,
                    "Fatal error: protocol.buffer_updated() call failed.",
                ),
            },
        }
    }

    fn read_error(slf: &Bound<'_, Self>, e: Errno) -> PyResult<()> {
        let msg = format!("Fatal read error on {} transport", slf.borrow().kind.what());
        Self::fatal_error(slf, errno_to_py(e), &msg)
    }

    fn read_eof(slf: &Bound<'_, Self>) -> PyResult<()> {
        let py = slf.py();
        base::set_interest(slf, READ, false)?;
        let Some(proto) = slf.borrow().base.protocol.as_ref().map(|p| p.clone_ref(py)) else {
            return Ok(());
        };
        if slf.borrow().kind == Kind::ReadPipe {
            // A pipe's end of file ends the transport: eof_received, then
            // connection_lost, whatever eof_received returns (as asyncio).
            base::call_soon(
                slf,
                proto.bind(py).getattr(intern!(py, "eof_received"))?,
                None,
            )?;
            return Self::do_close(slf);
        }
        match proto.bind(py).call_method0(intern!(py, "eof_received")) {
            Ok(keep) => {
                if !keep.is_truthy()? {
                    Self::do_close(slf)?;
                }
                Ok(())
            }
            Err(e) => {
                Self::fail_or_raise(slf, e, "Fatal error: protocol.eof_received() call failed.")
            }
        }
    }

    /// An exception from a protocol method: `Exception`s close the transport
    /// and go to the exception handler; `BaseException`s (SystemExit,
    /// KeyboardInterrupt) propagate out of the loop, as in asyncio.
    fn fail_or_raise(slf: &Bound<'_, Self>, e: PyErr, msg: &str) -> PyResult<()> {
        if e.is_instance_of::<PyException>(slf.py()) {
            Self::fatal_error(slf, e, msg)
        } else {
            Err(e)
        }
    }

    fn fatal_error(slf: &Bound<'_, Self>, e: PyErr, msg: &str) -> PyResult<()> {
        base::log_fatal(slf, &e, msg)?;
        Self::force_close(slf, Some(e.value(slf.py()).clone().into_any().unbind()))
    }

    fn force_close(slf: &Bound<'_, Self>, exc: Option<Py<PyAny>>) -> PyResult<()> {
        let py = slf.py();
        {
            let t = slf.borrow();
            if t.base.conn_lost > 0 {
                return Ok(());
            }
        }
        if !slf.borrow().wbuf.is_empty() {
            slf.borrow_mut().wbuf.clear();
            base::set_interest(slf, WRITE, false)?;
        }
        if !slf.borrow().base.closing {
            slf.borrow_mut().base.closing = true;
            base::set_interest(slf, READ, false)?;
        }
        slf.borrow_mut().base.conn_lost += 1;
        Self::sendfile_abandon(slf)?;
        base::schedule_lost(slf, exc.unwrap_or_else(|| py.None()))
    }

    fn do_close(slf: &Bound<'_, Self>) -> PyResult<()> {
        let py = slf.py();
        if slf.borrow().base.closing {
            return Ok(());
        }
        slf.borrow_mut().base.closing = true;
        base::set_interest(slf, READ, false)?;
        // Buffered bytes, and a sendfile in progress, are sent first.
        if slf.borrow().wbuf.is_empty() && slf.borrow().sendfile.is_none() {
            slf.borrow_mut().base.conn_lost += 1;
            base::set_interest(slf, WRITE, false)?;
            base::schedule_lost(slf, py.None())?;
        }
        Ok(())
    }

    /// Whether a send that succeeded leaves [`Self::after_send`] nothing to
    /// do: the buffer is empty, and no paused protocol, sendfile, close,
    /// end of file or writable interest waits on it.
    fn settled(&self) -> bool {
        self.wbuf.is_empty()
            && !self.base.protocol_paused
            && self.sendfile.is_none()
            && !self.base.writing
            && !self.base.closing
            && !self.eof_requested
    }

    /// Sends what the buffer holds, until it is empty or the kernel takes
    /// no more (then `Ok` too); an error other than `EAGAIN` stops it.
    fn send_buffered(&mut self) -> Result<(), Errno> {
        while !self.wbuf.is_empty() {
            let (a, b) = self.wbuf.as_slices();
            match self.kind.write2(self.fd(), a, b) {
                Ok(n) => {
                    self.wbuf.drain(..n);
                }
                Err(Errno::INTR) => {}
                Err(Errno::AGAIN) => break,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn write_ready(slf: &Bound<'_, Self>) -> PyResult<()> {
        let res = {
            let mut t = slf.borrow_mut();
            if t.base.conn_lost > 0 || t.base.fd < 0 {
                return Ok(());
            }
            t.send_buffered()
        };
        Self::after_send(slf, res)
    }

    /// What follows a send of the buffer: the error reported, a paused
    /// protocol resumed, a sendfile carried on, writable events dropped once
    /// the buffer is empty, and a close or `write_eof` that waited for it.
    fn after_send(slf: &Bound<'_, Self>, res: Result<(), Errno>) -> PyResult<()> {
        if let Err(e) = res {
            base::set_interest(slf, WRITE, false)?;
            slf.borrow_mut().wbuf.clear();
            return Self::write_error(slf, e);
        }
        if slf.borrow().settled() {
            return Ok(());
        }
        base::maybe_resume_protocol(slf)?;
        if slf.borrow().wbuf.is_empty() && slf.borrow().sendfile.is_some() {
            return Self::sendfile_step(slf);
        }
        if slf.borrow().wbuf.is_empty() {
            base::set_interest(slf, WRITE, false)?;
            let (closing, eof) = {
                let t = slf.borrow();
                (t.base.closing, t.eof_requested)
            };
            if closing {
                // A write pipe still watches for its reader going away.
                base::set_interest(slf, READ, false)?;
                slf.borrow_mut().base.conn_lost += 1;
                base::schedule_lost(slf, slf.py().None())?;
            } else if eof {
                let _ = rustix::net::shutdown(slf.borrow().fd(), Shutdown::Write);
            }
        }
        Ok(())
    }

    /// The end of the loop's iteration: sends what `write` deferred, and
    /// waits for writable events for what the kernel does not take.
    fn flush_deferred(slf: &Bound<'_, Self>) -> PyResult<()> {
        let res = {
            let mut t = slf.borrow_mut();
            if !std::mem::take(&mut t.deferred) || t.base.conn_lost > 0 || t.base.fd < 0 {
                return Ok(());
            }
            let res = t.send_buffered();
            // The usual end: all of it went and nothing waits on that, so
            // no Python runs and no context is entered.
            if res.is_ok() && t.settled() {
                return Ok(());
            }
            res
        };
        base::with_context(slf, || {
            Self::after_send(slf, res)?;
            let pending = {
                let t = slf.borrow();
                !t.wbuf.is_empty() && t.base.conn_lost == 0 && t.base.fd >= 0
            };
            if pending {
                base::set_interest(slf, WRITE, true)?;
            }
            Ok(())
        })
    }

    fn write_error(slf: &Bound<'_, Self>, e: Errno) -> PyResult<()> {
        let msg = format!(
            "Fatal write error on {} transport",
            slf.borrow().kind.what()
        );
        Self::fatal_error(slf, errno_to_py(e), &msg)
    }

    /// One `sendfile(2)` call of the job in progress; the job ends when the
    /// count is sent, at the end of the file, or on an error. Otherwise the
    /// next writable event calls this again.
    fn sendfile_step(slf: &Bound<'_, Self>) -> PyResult<()> {
        let py = slf.py();
        let res = {
            let mut t = slf.borrow_mut();
            if t.base.fd < 0 {
                return Ok(());
            }
            // SAFETY: the socket object owns the fd; see `fd()`.
            let sock = unsafe { BorrowedFd::borrow_raw(t.base.fd) };
            let Some(job) = t.sendfile.as_mut() else {
                return Ok(());
            };
            if job
                .fut
                .bind(py)
                .call_method0(intern!(py, "done"))?
                .is_truthy()?
            {
                // Cancelled: the awaiting side ends the job.
                Ok(None)
            } else {
                // SAFETY: the file object, which the caller holds open until
                // the job ends, owns this fd.
                let file = unsafe { BorrowedFd::borrow_raw(job.file) };
                let mut off = job.offset;
                match sendfile_once(sock, file, &mut off, job.left) {
                    Ok(n) => {
                        job.offset = off;
                        job.sent += n as u64;
                        if let Some(l) = job.left.as_mut() {
                            *l -= n as u64;
                        }
                        if n == 0 || job.left == Some(0) {
                            Ok(Some(Ok(job.sent)))
                        } else {
                            Ok(None)
                        }
                    }
                    Err(Errno::AGAIN) => Ok(None),
                    Err(e) => Ok(Some(Err((e, job.sent)))),
                }
            }
        };
        let fut = match res {
            Ok(None) => return base::set_interest(slf, WRITE, true),
            Ok(Some(outcome)) => {
                let fut = slf.borrow().sendfile.as_ref().map(|j| j.fut.clone_ref(py));
                (fut, outcome)
            }
            Err(e) => return Err(e),
        };
        base::set_interest(slf, WRITE, false)?;
        let (Some(fut), outcome) = fut else {
            return Ok(());
        };
        let fut = fut.bind(py);
        if fut.call_method0(intern!(py, "done"))?.is_truthy()? {
            return Ok(());
        }
        match outcome {
            Ok(sent) => {
                fut.call_method1(intern!(py, "set_result"), (sent,))?;
            }
            Err((e, 0)) if sendfile_unavailable(e) => {
                let exc = sendfile_not_available(py, e)?;
                fut.call_method1(intern!(py, "set_exception"), (exc.value(py),))?;
            }
            Err((e, _)) => {
                fut.call_method1(intern!(py, "set_exception"), (errno_to_py(e).value(py),))?;
            }
        }
        Ok(())
    }

    /// The connection is going away with a sendfile job in progress: its
    /// future fails with `ConnectionError`.
    fn sendfile_abandon(slf: &Bound<'_, Self>) -> PyResult<()> {
        let py = slf.py();
        let fut = match slf.borrow().sendfile.as_ref() {
            Some(j) => j.fut.clone_ref(py),
            None => return Ok(()),
        };
        let fut = fut.bind(py);
        if !fut.call_method0(intern!(py, "done"))?.is_truthy()? {
            let exc = pyo3::exceptions::PyConnectionError::new_err(
                "the connection was closed during sendfile",
            );
            fut.call_method1(intern!(py, "set_exception"), (exc.value(py),))?;
        }
        Ok(())
    }

    /// `write(data)`, installed by `fastcall` as a `METH_O` method.
    pub(crate) fn write(slf: &Bound<'_, Self>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = slf.py();
        let as_bytes = data.cast::<PyBytes>().ok();
        if !(as_bytes.is_some()
            || data.is_instance_of::<PyByteArray>()
            || data.is_instance_of::<PyMemoryView>())
        {
            return Err(PyTypeError::new_err(format!(
                "data argument must be a bytes-like object, not '{}'",
                data.get_type().name()?
            )));
        }
        {
            let t = slf.borrow();
            if t.kind == Kind::ReadPipe {
                return Err(PyRuntimeError::new_err(
                    "a read pipe transport cannot write",
                ));
            }
            if t.eof_written || t.eof_requested {
                return Err(PyRuntimeError::new_err(
                    "Cannot call write() after write_eof()",
                ));
            }
            if t.sendfile.is_some() {
                return Err(PyRuntimeError::new_err(
                    "unable to write; sendfile is in progress",
                ));
            }
        }
        // A `bytes` is read in place (it cannot change); anything else
        // through the buffer protocol, which takes a boxed view and a
        // release.
        let buf = match as_bytes {
            Some(_) => None,
            None => Some(PyBuffer::<u8>::get(data)?),
        };
        let bytes: std::borrow::Cow<'_, [u8]> = match &buf {
            None => std::borrow::Cow::Borrowed(as_bytes.as_ref().map_or(&[], |b| b.as_bytes())),
            Some(buf) if buf.is_c_contiguous() => {
                // SAFETY: a C-contiguous buffer of item_count bytes, alive
                // while `buf` is, and the GIL is held so it cannot change
                // under us.
                std::borrow::Cow::Borrowed(unsafe {
                    std::slice::from_raw_parts(buf.buf_ptr() as *const u8, buf.item_count())
                })
            }
            Some(buf) => std::borrow::Cow::Owned(buf.to_vec(py)?),
        };
        if bytes.is_empty() {
            return Ok(());
        }
        {
            let mut t = slf.borrow_mut();
            if t.base.conn_lost > 0 || (t.kind == Kind::WritePipe && t.base.closing) {
                if t.base.conn_lost >= 5 {
                    let msg = match t.kind {
                        Kind::Socket => "socket.send() raised exception.",
                        _ => "pipe closed by peer or os.write(pipe, data) raised exception.",
                    };
                    py.import("asyncio.log")?
                        .getattr(intern!(py, "logger"))?
                        .call_method1(intern!(py, "warning"), (msg,))?;
                }
                t.base.conn_lost += 1;
                return Ok(());
            }
        }
        let mut rest: &[u8] = &bytes;
        let (empty, deferred) = {
            let t = slf.borrow();
            (t.wbuf.is_empty(), t.deferred)
        };
        if empty || deferred {
            // While the loop runs callbacks, a write that keeps the buffer
            // under its high-water mark waits for the end of the iteration,
            // where all of them leave in one system call: a response's
            // headers and body, say, in one segment instead of two. Staying
            // under the mark, the protocol sees no pause it would not have.
            let fits = {
                let t = slf.borrow();
                t.kind == Kind::Socket && t.wbuf.len() + rest.len() <= t.base.high
            };
            if fits {
                if deferred {
                    slf.borrow_mut().wbuf.extend(rest);
                    return Ok(());
                }
                let lp = slf.borrow().base.lp(py);
                if let Some(lp) = lp
                    && LoopCore::defer_write(&lp, slf)
                {
                    let mut t = slf.borrow_mut();
                    t.deferred = true;
                    t.wbuf.extend(rest);
                    return Ok(());
                }
            } else if deferred {
                // Too much to wait: what waits goes now, with this, as
                // the end of the iteration would send it.
                slf.borrow_mut().wbuf.extend(rest);
                drop(buf);
                Self::flush_deferred(slf)?;
                return base::maybe_pause_protocol(slf);
            }
        }
        if slf.borrow().wbuf.is_empty() {
            let res = loop {
                let t = slf.borrow();
                match t.kind.write(t.fd(), rest) {
                    Err(Errno::INTR) => continue,
                    r => break r,
                }
            };
            match res {
                Ok(n) => {
                    rest = &rest[n..];
                    if rest.is_empty() {
                        return Ok(());
                    }
                }
                Err(Errno::AGAIN) => {}
                Err(e) => return Self::write_error(slf, e),
            }
            base::set_interest(slf, WRITE, true)?;
        }
        slf.borrow_mut().wbuf.extend(rest);
        drop(buf);
        base::maybe_pause_protocol(slf)
    }
}

#[pymethods]
impl SocketTransport {
    /// Shows the garbage collector the transport's references: a protocol
    /// that keeps its transport forms a cycle, which is collected when both
    /// are dropped unclosed, as asyncio's transports are.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        self.base.traverse(&visit)?;
        visit.call(&self.server)?;
        if let Some(job) = &self.sendfile {
            visit.call(&job.fut)?;
        }
        visit.call(self.tls.as_ref().map(|d| &d.obj))
    }

    /// Breaks the cycles the collector found. The socket object, dropped
    /// here, closes the fd.
    fn __clear__(&mut self) {
        self.base.clear();
        self.server = None;
        self.tls = None;
        self.sendfile = None;
    }

    #[new]
    /// `kind` is "socket", "read_pipe" or "write_pipe"; `sock` is the
    /// object that owns the fd (a socket, or a pipe's file object).
    #[pyo3(signature = (loop_, sock, protocol, extra, server = None, kind = "socket"))]
    fn py_new(
        loop_: &Bound<'_, LoopCore>,
        sock: &Bound<'_, PyAny>,
        protocol: &Bound<'_, PyAny>,
        extra: &Bound<'_, PyDict>,
        server: Option<Py<PyAny>>,
        kind: &str,
    ) -> PyResult<Self> {
        let kind = match kind {
            "socket" => Kind::Socket,
            "read_pipe" => Kind::ReadPipe,
            "write_pipe" => Kind::WritePipe,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "unknown transport kind {kind:?}"
                )));
            }
        };
        let fd: RawFd = sock.call_method0(intern!(sock.py(), "fileno"))?.extract()?;
        if fd < 0 {
            return Err(PyValueError::new_err(format!(
                "the {} is closed",
                kind.what()
            )));
        }
        Ok(Self {
            base: Base::new(loop_, sock, fd, protocol, extra)?,
            kind,
            buffered: is_buffered(protocol)?,
            server,
            wbuf: VecDeque::new(),
            eof_requested: false,
            eof_written: false,
            sendfile: None,
            deferred: false,
            tls: direct(protocol),
        })
    }

    /// Starts reading, unless `pause_reading()` came first or it is closing.
    fn _start_reading(slf: &Bound<'_, Self>) -> PyResult<()> {
        base::start_reading(slf)
    }

    fn writelines(slf: &Bound<'_, Self>, list: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = slf.py();
        let mut all = Vec::new();
        for item in list.try_iter()? {
            let item = item?;
            let b = PyBuffer::<u8>::get(&item)?;
            all.extend(b.to_vec(py)?);
        }
        Self::write(slf, PyBytes::new(py, &all).as_any())
    }

    fn write_eof(slf: &Bound<'_, Self>) -> PyResult<()> {
        if slf.borrow().kind != Kind::Socket {
            // A pipe has no half close: its end of file is closing it, once
            // the buffer is written.
            return Self::do_close(slf);
        }
        let pending = {
            let mut t = slf.borrow_mut();
            if t.base.closing || t.eof_written || t.eof_requested {
                return Ok(());
            }
            t.eof_written = true;
            if t.wbuf.is_empty() {
                false
            } else {
                t.eof_requested = true;
                true
            }
        };
        if !pending {
            let _ = rustix::net::shutdown(slf.borrow().fd(), Shutdown::Write);
        }
        Ok(())
    }

    fn can_write_eof(&self) -> bool {
        true
    }

    /// Starts a zero-copy `sendfile(2)` of `file` (a file descriptor) from
    /// `offset`, `count` bytes or to the end of the file, once the write
    /// buffer is empty; `fut` gets the byte count or the error. Until
    /// `_sendfile_stop`, `write` is refused. Reading is the caller's to
    /// pause.
    #[pyo3(signature = (file, offset, count, fut))]
    fn _sendfile_start(
        slf: &Bound<'_, Self>,
        file: RawFd,
        offset: u64,
        count: Option<u64>,
        fut: Py<PyAny>,
    ) -> PyResult<()> {
        {
            let mut t = slf.borrow_mut();
            if t.kind != Kind::Socket {
                return Err(PyRuntimeError::new_err("sendfile needs a socket transport"));
            }
            if t.sendfile.is_some() {
                return Err(PyRuntimeError::new_err("sendfile is in progress"));
            }
            if t.base.conn_lost > 0 || t.base.fd < 0 {
                return Err(pyo3::exceptions::PyConnectionError::new_err(
                    "the connection is closed",
                ));
            }
            t.sendfile = Some(SendfileJob {
                file,
                offset,
                left: count,
                sent: 0,
                fut,
            });
        }
        if slf.borrow().wbuf.is_empty() {
            base::with_context(slf, || Self::sendfile_step(slf))
        } else {
            // write_ready drains the buffer first, then goes on with it.
            Ok(())
        }
    }

    /// Ends the sendfile job, whatever its state, and returns the bytes it
    /// sent.
    fn _sendfile_stop(slf: &Bound<'_, Self>) -> PyResult<u64> {
        let job = slf.borrow_mut().sendfile.take();
        let Some(job) = job else { return Ok(0) };
        let (empty, fd) = {
            let t = slf.borrow();
            (t.wbuf.is_empty(), t.base.fd)
        };
        if empty && fd >= 0 {
            base::set_interest(slf, WRITE, false)?;
            // A close() during the job waited for it.
            let (closing, lost) = {
                let t = slf.borrow();
                (t.base.closing, t.base.conn_lost)
            };
            if closing && lost == 0 {
                base::set_interest(slf, READ, false)?;
                slf.borrow_mut().base.conn_lost += 1;
                base::schedule_lost(slf, slf.py().None())?;
            }
        }
        Ok(job.sent)
    }

    #[getter]
    fn _protocol_paused(&self) -> bool {
        self.base.protocol_paused
    }

    fn close(slf: &Bound<'_, Self>) -> PyResult<()> {
        Self::do_close(slf)
    }

    fn abort(slf: &Bound<'_, Self>) -> PyResult<()> {
        // Writes that wait for the end of the iteration get the one try
        // they would have had in `write` (a goodbye before a reset); what
        // the kernel does not take is lost, as buffered data is.
        {
            let mut t = slf.borrow_mut();
            if std::mem::take(&mut t.deferred) && t.base.conn_lost == 0 && t.base.fd >= 0 {
                let (a, b) = t.wbuf.as_slices();
                if let Ok(n) = t.kind.write2(t.fd(), a, b) {
                    t.wbuf.drain(..n);
                }
            }
        }
        Self::force_close(slf, None)
    }

    /// Closes at once with `exc` as the cause: what asyncio's SSL protocol
    /// calls on a fatal TLS error or a shutdown timeout.
    fn _force_close(slf: &Bound<'_, Self>, exc: Py<PyAny>) -> PyResult<()> {
        Self::force_close(slf, Some(exc))
    }

    fn is_closing(&self) -> bool {
        self.base.closing
    }

    fn is_reading(&self) -> bool {
        self.base.is_reading()
    }

    fn pause_reading(slf: &Bound<'_, Self>) -> PyResult<()> {
        base::pause_reading(slf)
    }

    fn resume_reading(slf: &Bound<'_, Self>) -> PyResult<()> {
        if base::unpause_reading(slf) {
            base::set_interest(slf, READ, true)?;
        }
        Ok(())
    }

    #[pyo3(signature = (high = None, low = None))]
    fn set_write_buffer_limits(
        slf: &Bound<'_, Self>,
        high: Option<i64>,
        low: Option<i64>,
    ) -> PyResult<()> {
        base::set_write_buffer_limits(slf, high, low)
    }

    fn get_write_buffer_limits(&self) -> (usize, usize) {
        (self.base.low, self.base.high)
    }

    fn get_write_buffer_size(&self) -> usize {
        self.wbuf.len()
    }

    #[pyo3(signature = (name, default = None))]
    fn get_extra_info(
        &self,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        self.base.get_extra_info(py, name, default)
    }

    fn get_protocol(&self, py: Python<'_>) -> Py<PyAny> {
        self.base.get_protocol(py)
    }

    fn set_protocol(&mut self, protocol: &Bound<'_, PyAny>) -> PyResult<()> {
        self.buffered = is_buffered(protocol)?;
        self.tls = direct(protocol);
        self.base.protocol = Some(protocol.clone().unbind());
        Ok(())
    }

    #[getter]
    fn _sock(&self, py: Python<'_>) -> Py<PyAny> {
        self.base.sock(py)
    }

    #[getter]
    fn _loop(&self, py: Python<'_>) -> Option<Py<LoopCore>> {
        self.base.loop_.as_ref().map(|l| l.clone_ref(py))
    }

    /// Calls `protocol.connection_lost(exc)`, then closes the socket and lets
    /// go of the protocol, the loop and the server.
    fn _call_connection_lost(slf: &Bound<'_, Self>, exc: Py<PyAny>) -> PyResult<()> {
        let py = slf.py();
        let proto = slf.borrow().base.protocol.as_ref().map(|p| p.clone_ref(py));
        let res = match proto {
            Some(p) => p
                .bind(py)
                .call_method1(intern!(py, "connection_lost"), (exc,))
                .map(|_| ()),
            None => Ok(()),
        };
        // The protocol and the loop are dropped after the borrow: dropping
        // the protocol can drop a Python transport whose __del__ looks at
        // this one.
        let (sock, server, dropped) = {
            let mut t = slf.borrow_mut();
            t.base.fd = -1;
            (
                t.base.sock.take(),
                t.server.take(),
                (t.base.protocol.take(), t.base.loop_.take()),
            )
        };
        if let Some(s) = sock {
            s.bind(py).call_method0(intern!(py, "close"))?;
        }
        if let Some(s) = server {
            s.bind(py).call_method0(intern!(py, "_detach"))?;
        }
        drop(dropped);
        res
    }

    fn __repr__(&self) -> String {
        let state = self.base.state();
        let class = match self.kind {
            Kind::Socket => "SocketTransport",
            Kind::ReadPipe => "ReadPipeTransport",
            Kind::WritePipe => "WritePipeTransport",
        };
        format!("<pyloop.{class} fd={} {state}>", self.base.fd)
    }
}
