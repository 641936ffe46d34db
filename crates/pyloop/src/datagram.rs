//! `DatagramTransport`: asyncio's datagram transport, for UDP and Unix
//! datagram sockets, in Rust. The loop calls it directly when its socket is
//! ready, as it does the stream transport.
//!
//! - Receiving: one `recvmmsg` per readable event takes up to
//!   [`BATCH`] UDP datagrams (a Unix socket: one `recvfrom` of up to 256 KiB,
//!   asyncio's `max_size`). Each goes to `datagram_received`; what arrives
//!   while reading is paused waits in the transport, in order.
//! - Sending: `sendto` sends at once and queues only what the kernel
//!   refuses (`EAGAIN`), with water marks over the queued bytes (asyncio's
//!   flow control). The queue drains with `sendmmsg`, up to [`BATCH`]
//!   datagrams per system call.
//! - Errors: an `OSError` from a send or a receive goes to the protocol's
//!   `error_received`, and the transport stays open (asyncio's semantics).
//! - Addresses: the peer's address is built once per distinct sender (the
//!   last one is cached), and a destination given as the same object as
//!   last time is not parsed again. Numeric IPv4/IPv6 tuples and Unix paths
//!   are converted here; anything else (a host name) goes through the
//!   socket object's own `sendto`.

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::mem::{MaybeUninit, size_of};
use std::net::{Ipv4Addr, Ipv6Addr};
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;

use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyMemoryView, PyString, PyTuple};
use pyo3::{PyTraverseError, PyVisit};

use crate::base::{self, Base, Transport, call_soon_in_context};
use crate::core::{FdOwner, LoopCore, os_error};
use crate::poll::{READ, WRITE};

/// Datagrams per `recvmmsg` or `sendmmsg`.
pub(crate) const BATCH: usize = 16;
/// A UDP datagram's largest payload fits in one slot.
const SLOT: usize = 65536;
/// asyncio's `max_size` for a datagram read (a Unix datagram can be larger
/// than UDP's).
const UNIX_MAX: usize = 256 * 1024;

/// A value of one of libc's plain C structs (or an array of them), all
/// zeroes.
fn zeroed<T: Copy>() -> T {
    // SAFETY: only used for libc's C structs (sockaddr_storage, iovec,
    // mmsghdr) and arrays of them, for which all zeroes (null pointers,
    // zero lengths) is a valid value.
    unsafe { MaybeUninit::zeroed().assume_init() }
}

/// A socket address in the kernel's form.
#[derive(Clone, Copy)]
struct SockAddr {
    storage: libc::sockaddr_storage,
    len: libc::socklen_t,
}

impl std::fmt::Debug for SockAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "SockAddr(family {}, {} bytes)",
            self.storage.ss_family, self.len
        )
    }
}

impl SockAddr {
    fn zeroed() -> Self {
        Self {
            storage: zeroed(),
            len: 0,
        }
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `len` never exceeds the storage's size.
        unsafe {
            std::slice::from_raw_parts(
                (&raw const self.storage).cast::<u8>(),
                (self.len as usize).min(size_of::<libc::sockaddr_storage>()),
            )
        }
    }

    fn v4(ip: Ipv4Addr, port: u16) -> Self {
        let mut a = Self::zeroed();
        // SAFETY: sockaddr_storage is large enough and aligned for any
        // sockaddr type.
        let sin = unsafe { &mut *(&raw mut a.storage).cast::<libc::sockaddr_in>() };
        sin.sin_family = libc::AF_INET as libc::sa_family_t;
        sin.sin_port = port.to_be();
        sin.sin_addr.s_addr = u32::from(ip).to_be();
        a.len = size_of::<libc::sockaddr_in>() as libc::socklen_t;
        a
    }

    fn v6(ip: Ipv6Addr, port: u16, flowinfo: u32, scope_id: u32) -> Self {
        let mut a = Self::zeroed();
        // SAFETY: as in `v4`.
        let sin6 = unsafe { &mut *(&raw mut a.storage).cast::<libc::sockaddr_in6>() };
        sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
        sin6.sin6_port = port.to_be();
        sin6.sin6_flowinfo = flowinfo.to_be();
        sin6.sin6_addr.s6_addr = ip.octets();
        sin6.sin6_scope_id = scope_id;
        a.len = size_of::<libc::sockaddr_in6>() as libc::socklen_t;
        a
    }

    /// A Unix socket path; a leading NUL is Linux's abstract namespace.
    fn unix(path: &[u8]) -> Option<Self> {
        let mut a = Self::zeroed();
        // SAFETY: as in `v4`.
        let sun = unsafe { &mut *(&raw mut a.storage).cast::<libc::sockaddr_un>() };
        if path.len() >= sun.sun_path.len() {
            return None;
        }
        sun.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (d, s) in sun.sun_path.iter_mut().zip(path) {
            *d = *s as libc::c_char;
        }
        let base = std::mem::offset_of!(libc::sockaddr_un, sun_path);
        // An abstract name has no terminating NUL; a path has one.
        let extra = usize::from(path.first() != Some(&0));
        a.len = (base + path.len() + extra) as libc::socklen_t;
        Some(a)
    }

    /// The address as Python's `socket` module gives it.
    fn to_py(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        if self.len == 0 {
            return Ok(py.None());
        }
        match self.storage.ss_family as libc::c_int {
            libc::AF_INET => {
                // SAFETY: the family says what the storage holds.
                let sin = unsafe { &*(&raw const self.storage).cast::<libc::sockaddr_in>() };
                let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
                Ok((ip.to_string(), u16::from_be(sin.sin_port))
                    .into_pyobject(py)?
                    .into_any()
                    .unbind())
            }
            libc::AF_INET6 => {
                // SAFETY: as above.
                let sin6 = unsafe { &*(&raw const self.storage).cast::<libc::sockaddr_in6>() };
                let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
                Ok((
                    ipv6_host(ip, sin6.sin6_scope_id),
                    u16::from_be(sin6.sin6_port),
                    u32::from_be(sin6.sin6_flowinfo),
                    sin6.sin6_scope_id,
                )
                    .into_pyobject(py)?
                    .into_any()
                    .unbind())
            }
            libc::AF_UNIX => {
                let base = std::mem::offset_of!(libc::sockaddr_un, sun_path);
                let raw = &self.bytes()[base.min(self.len as usize)..];
                if raw.is_empty() {
                    return Ok(py.None());
                }
                if raw[0] == 0 {
                    return Ok(PyBytes::new(py, raw).into_any().unbind());
                }
                let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
                Ok(OsStr::from_bytes(&raw[..end])
                    .into_pyobject(py)?
                    .into_any()
                    .unbind())
            }
            f => Err(PyOSError::new_err(format!(
                "datagram from an address of family {f}"
            ))),
        }
    }
}

/// An IPv6 host as glibc's `getnameinfo(NI_NUMERICHOST)` writes it, which is
/// what Python's `socket` module returns: an IPv4-compatible address as
/// `::a.b.c.d`, and a link-local one with `%interface`.
fn ipv6_host(ip: Ipv6Addr, scope_id: u32) -> String {
    let seg = ip.segments();
    let mut host = if seg[..6] == [0; 6] && seg[6] != 0 {
        let [a, b, c, d] = ip.octets()[12..] else {
            unreachable!("16 octets")
        };
        format!("::{a}.{b}.{c}.{d}")
    } else {
        ip.to_string()
    };
    let link_local = seg[0] & 0xffc0 == 0xfe80 || (seg[0] & 0xff0f) == 0xff02;
    if scope_id != 0 && link_local {
        let mut name = [0 as libc::c_char; libc::IF_NAMESIZE];
        // SAFETY: the buffer has IF_NAMESIZE bytes, as if_indextoname needs.
        let p = unsafe { libc::if_indextoname(scope_id, name.as_mut_ptr()) };
        if p.is_null() {
            host.push_str(&format!("%{scope_id}"));
        } else {
            // SAFETY: if_indextoname wrote a NUL-terminated name.
            let n = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) };
            host.push('%');
            host.push_str(&n.to_string_lossy());
        }
    }
    host
}

/// The buffers of one `recvmmsg`.
struct RecvBatch {
    data: Vec<u8>,
    names: [SockAddr; BATCH],
    lens: [usize; BATCH],
}

impl RecvBatch {
    fn new() -> Self {
        Self {
            data: vec![0u8; BATCH * SLOT],
            names: [SockAddr::zeroed(); BATCH],
            lens: [0; BATCH],
        }
    }

    /// One `recvmmsg` (`udp`) or `recvfrom` (Unix): the number of
    /// datagrams received, or the error.
    fn recv(&mut self, fd: RawFd, udp: bool) -> std::io::Result<usize> {
        if !udp {
            let want = UNIX_MAX.min(self.data.len());
            let name = &mut self.names[0];
            name.len = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            // SAFETY: the buffer and the address storage are valid for the
            // lengths given.
            let n = unsafe {
                libc::recvfrom(
                    fd,
                    self.data.as_mut_ptr().cast(),
                    want,
                    libc::MSG_DONTWAIT,
                    (&raw mut name.storage).cast(),
                    &mut name.len,
                )
            };
            if n < 0 {
                return Err(std::io::Error::last_os_error());
            }
            self.lens[0] = n as usize;
            return Ok(1);
        }
        let mut iovs: [libc::iovec; BATCH] = zeroed();
        let mut hdrs: [libc::mmsghdr; BATCH] = zeroed();
        let base = self.data.as_mut_ptr();
        for i in 0..BATCH {
            // SAFETY: slot i lies within `data` (BATCH * SLOT bytes).
            iovs[i].iov_base = unsafe { base.add(i * SLOT) }.cast();
            iovs[i].iov_len = SLOT;
            let h = &mut hdrs[i].msg_hdr;
            h.msg_name = (&raw mut self.names[i].storage).cast();
            h.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            h.msg_iov = &raw mut iovs[i];
            h.msg_iovlen = 1;
        }
        // SAFETY: every header points at live buffers of the lengths given.
        let n = unsafe {
            libc::recvmmsg(
                fd,
                hdrs.as_mut_ptr(),
                BATCH as libc::c_uint,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
            )
        };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let n = n as usize;
        for (i, h) in hdrs.iter().enumerate().take(n) {
            self.lens[i] = h.msg_len as usize;
            self.names[i].len = h.msg_hdr.msg_namelen;
        }
        Ok(n)
    }

    fn datagram(&self, i: usize) -> &[u8] {
        &self.data[i * SLOT..i * SLOT + self.lens[i]]
    }
}

thread_local! {
    static RECV: std::cell::RefCell<Option<Box<RecvBatch>>> = const { std::cell::RefCell::new(None) };
}

/// Where a queued datagram goes.
#[derive(Debug)]
enum Dest {
    /// The connected peer.
    Peer,
    Addr(SockAddr),
    /// An address only the socket object understands (a host name): sent
    /// through its `sendto`.
    Py(Py<PyAny>),
}

#[pyclass(module = "pyloop._pyloop", weakref)]
#[derive(Debug)]
pub struct DatagramTransport {
    base: Base,
    family: libc::c_int,
    /// The remote address given to `create_datagram_endpoint`: `sendto`
    /// accepts only it (or None).
    address: Option<Py<PyAny>>,
    /// The socket has a peer: datagrams go with `send`.
    connected: bool,
    queue: VecDeque<(Vec<u8>, Dest)>,
    queued: usize,
    /// Datagrams received in a batch after the protocol paused reading:
    /// delivered when it resumes.
    held: VecDeque<(Py<PyAny>, Py<PyAny>)>,
    /// The last sender's address, raw and as Python has it.
    src_cache: Option<(Vec<u8>, Py<PyAny>)>,
    /// The last destination object `sendto` was given, and what it means.
    dest_cache: Option<(Py<PyAny>, SockAddr)>,
}

fn would_block(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EAGAIN | libc::EINTR | libc::ENOBUFS)
    )
}

impl Transport for DatagramTransport {
    fn base(&self) -> &Base {
        &self.base
    }

    fn base_mut(&mut self) -> &mut Base {
        &mut self.base
    }

    fn buffered(&self) -> usize {
        self.queued
    }
}

impl FdOwner for DatagramTransport {
    fn ready(slf: &Bound<'_, Self>, readable: bool, writable: bool) -> PyResult<()> {
        Self::on_ready(slf, readable, writable)
    }

    /// A datagram transport defers no write.
    fn flush(_: &Bound<'_, Self>) -> PyResult<()> {
        Ok(())
    }
}

impl DatagramTransport {
    fn udp(&self) -> bool {
        self.family != libc::AF_UNIX
    }

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

    /// The sender's address as a Python object, from the cache when it is
    /// the last sender's.
    fn source(slf: &Bound<'_, Self>, addr: &SockAddr) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        if let Some((raw, obj)) = &slf.borrow().src_cache
            && raw.as_slice() == addr.bytes()
        {
            return Ok(obj.clone_ref(py));
        }
        let obj = (*addr).to_py(py)?;
        slf.borrow_mut().src_cache = Some((addr.bytes().to_vec(), obj.clone_ref(py)));
        Ok(obj)
    }

    fn read_ready(slf: &Bound<'_, Self>) -> PyResult<()> {
        let py = slf.py();
        let (fd, udp) = {
            let t = slf.borrow();
            if t.base.conn_lost > 0 || t.base.closing || t.base.protocol.is_none() {
                return Ok(());
            }
            (t.base.fd, t.udp())
        };
        let got = RECV.with_borrow_mut(|b| {
            let b = b.get_or_insert_with(|| Box::new(RecvBatch::new()));
            match b.recv(fd, udp) {
                Ok(n) => {
                    let mut out = Vec::with_capacity(n);
                    for i in 0..n {
                        let data = PyBytes::new(py, b.datagram(i)).into_any().unbind();
                        let addr = Self::source(slf, &b.names[i])?;
                        out.push((data, addr));
                    }
                    PyResult::Ok(Ok(out))
                }
                Err(e) => Ok(Err(e)),
            }
        })?;
        match got {
            Ok(datagrams) => Self::deliver(slf, datagrams.into_iter()),
            Err(e) if would_block(&e) => Ok(()),
            Err(e) => Self::error_received(slf, os_error(e)),
        }
    }

    /// Gives each datagram to the protocol, in order, until it pauses
    /// reading or the transport closes; the rest wait in `held`.
    fn deliver(
        slf: &Bound<'_, Self>,
        mut datagrams: impl Iterator<Item = (Py<PyAny>, Py<PyAny>)>,
    ) -> PyResult<()> {
        let py = slf.py();
        for (data, addr) in datagrams.by_ref() {
            let (proto, stop) = {
                let t = slf.borrow();
                (
                    t.base.protocol.as_ref().map(|p| p.clone_ref(py)),
                    t.base.closing || t.base.conn_lost > 0,
                )
            };
            let Some(proto) = proto else { return Ok(()) };
            if stop {
                return Ok(());
            }
            if slf.borrow().base.reading_paused {
                slf.borrow_mut().held.push_back((data, addr));
                continue;
            }
            if let Err(e) = proto
                .bind(py)
                .call_method1(intern!(py, "datagram_received"), (data, addr))
            {
                base::report(slf, e, "Exception in datagram_received() of the protocol")?;
            }
        }
        Ok(())
    }

    fn error_received(slf: &Bound<'_, Self>, e: PyErr) -> PyResult<()> {
        let py = slf.py();
        let Some(proto) = slf.borrow().base.protocol.as_ref().map(|p| p.clone_ref(py)) else {
            return Ok(());
        };
        if let Err(err) = proto
            .bind(py)
            .call_method1(intern!(py, "error_received"), (e.value(py),))
        {
            base::report(slf, err, "Exception in error_received() of the protocol")?;
        }
        Ok(())
    }

    /// One datagram, now. `Ok(false)`: the kernel refused it for now.
    fn send_now(slf: &Bound<'_, Self>, data: &[u8], dest: &Dest) -> PyResult<Result<bool, PyErr>> {
        let py = slf.py();
        let fd = slf.borrow().base.fd;
        let r = match dest {
            Dest::Py(addr) => {
                let sock = slf.borrow().base.sock.as_ref().map(|s| s.clone_ref(py));
                let Some(sock) = sock else {
                    return Ok(Ok(true));
                };
                return match sock
                    .bind(py)
                    .call_method1(intern!(py, "sendto"), (PyBytes::new(py, data), addr))
                {
                    Ok(_) => Ok(Ok(true)),
                    Err(e) if e.is_instance_of::<pyo3::exceptions::PyBlockingIOError>(py) => {
                        Ok(Ok(false))
                    }
                    Err(e) if e.is_instance_of::<PyOSError>(py) => Ok(Err(e)),
                    Err(e) => Err(e),
                };
            }
            // SAFETY: `data` is valid for its length.
            Dest::Peer => unsafe {
                libc::send(fd, data.as_ptr().cast(), data.len(), libc::MSG_DONTWAIT)
            },
            // SAFETY: as above, and the address is valid for `len` bytes.
            Dest::Addr(a) => unsafe {
                libc::sendto(
                    fd,
                    data.as_ptr().cast(),
                    data.len(),
                    libc::MSG_DONTWAIT,
                    (&raw const a.storage).cast(),
                    a.len,
                )
            },
        };
        if r >= 0 {
            return Ok(Ok(true));
        }
        let e = std::io::Error::last_os_error();
        if would_block(&e) {
            Ok(Ok(false))
        } else {
            Ok(Err(os_error(e)))
        }
    }

    /// What `addr` means for this socket.
    fn dest(slf: &Bound<'_, Self>, addr: Option<&Bound<'_, PyAny>>) -> PyResult<Dest> {
        let py = slf.py();
        let (connected, family) = {
            let t = slf.borrow();
            (t.connected, t.family)
        };
        let Some(addr) = addr.filter(|a| !a.is_none()) else {
            return Ok(Dest::Peer);
        };
        if connected {
            return Ok(Dest::Peer);
        }
        if let Some((obj, a)) = &slf.borrow().dest_cache
            && obj.bind(py).is(addr)
        {
            return Ok(Dest::Addr(*a));
        }
        let parsed = match family {
            libc::AF_INET => parse_v4(addr),
            libc::AF_INET6 => parse_v6(addr),
            libc::AF_UNIX => parse_unix(addr),
            _ => None,
        };
        match parsed {
            Some(a) => {
                slf.borrow_mut().dest_cache = Some((addr.clone().unbind(), a));
                Ok(Dest::Addr(a))
            }
            None => Ok(Dest::Py(addr.clone().unbind())),
        }
    }

    fn write_ready(slf: &Bound<'_, Self>) -> PyResult<()> {
        loop {
            if slf.borrow().queue.is_empty() {
                break;
            }
            // A run of datagrams the kernel can take in one sendmmsg.
            let sent = {
                let t = slf.borrow();
                let run: Vec<&(Vec<u8>, Dest)> = t
                    .queue
                    .iter()
                    .take(BATCH)
                    .take_while(|(_, d)| !matches!(d, Dest::Py(_)))
                    .collect();
                if run.is_empty() {
                    None
                } else {
                    Some(send_batch(t.base.fd, &run))
                }
            };
            match sent {
                Some(Ok(n)) => {
                    let mut t = slf.borrow_mut();
                    for _ in 0..n {
                        if let Some((d, _)) = t.queue.pop_front() {
                            t.queued -= d.len();
                        }
                    }
                }
                Some(Err(e)) if would_block(&e) => break,
                Some(Err(e)) => {
                    // The first datagram of the run failed: it is dropped,
                    // and the protocol hears of it (asyncio's semantics).
                    {
                        let mut t = slf.borrow_mut();
                        if let Some((d, _)) = t.queue.pop_front() {
                            t.queued -= d.len();
                        }
                    }
                    Self::error_received(slf, os_error(e))?;
                    return Ok(());
                }
                None => {
                    let (data, dest) = {
                        let mut t = slf.borrow_mut();
                        let Some((d, dest)) = t.queue.pop_front() else {
                            break;
                        };
                        t.queued -= d.len();
                        (d, dest)
                    };
                    match Self::send_now(slf, &data, &dest)? {
                        Ok(true) => {}
                        Ok(false) => {
                            let mut t = slf.borrow_mut();
                            t.queued += data.len();
                            t.queue.push_front((data, dest));
                            break;
                        }
                        Err(e) => {
                            Self::error_received(slf, e)?;
                            return Ok(());
                        }
                    }
                }
            }
        }
        base::maybe_resume_protocol(slf)?;
        if slf.borrow().queue.is_empty() {
            base::set_interest(slf, WRITE, false)?;
            let (closing, lost) = {
                let t = slf.borrow();
                (t.base.closing, t.base.conn_lost)
            };
            if closing && lost == 0 {
                slf.borrow_mut().base.conn_lost += 1;
                base::schedule_lost(slf, slf.py().None())?;
            }
        }
        Ok(())
    }

    fn force_close(slf: &Bound<'_, Self>, exc: Option<Py<PyAny>>) -> PyResult<()> {
        if slf.borrow().base.conn_lost > 0 {
            return Ok(());
        }
        if !slf.borrow().queue.is_empty() {
            {
                let mut t = slf.borrow_mut();
                t.queue.clear();
                t.queued = 0;
            }
            base::set_interest(slf, WRITE, false)?;
        }
        slf.borrow_mut().base.closing = true;
        base::set_interest(slf, READ, false)?;
        {
            let mut t = slf.borrow_mut();
            t.held.clear();
            t.base.conn_lost += 1;
        }
        base::schedule_lost(slf, exc.unwrap_or_else(|| slf.py().None()))
    }

    fn fatal_error(slf: &Bound<'_, Self>, e: PyErr, msg: &str) -> PyResult<()> {
        base::log_fatal(slf, &e, msg)?;
        Self::force_close(slf, Some(e.value(slf.py()).clone().into_any().unbind()))
    }
}

/// One `sendmmsg` of `run` (no `Dest::Py` in it): how many the kernel took.
fn send_batch(fd: RawFd, run: &[&(Vec<u8>, Dest)]) -> std::io::Result<usize> {
    let mut iovs: [libc::iovec; BATCH] = zeroed();
    let mut hdrs: [libc::mmsghdr; BATCH] = zeroed();
    let n = run.len().min(BATCH);
    for i in 0..n {
        let (data, dest) = run[i];
        iovs[i].iov_base = data.as_ptr() as *mut libc::c_void;
        iovs[i].iov_len = data.len();
        let h = &mut hdrs[i].msg_hdr;
        if let Dest::Addr(a) = dest {
            h.msg_name = (&raw const a.storage) as *mut libc::c_void;
            h.msg_namelen = a.len;
        }
        h.msg_iov = &raw mut iovs[i];
        h.msg_iovlen = 1;
    }
    // SAFETY: every header points at live buffers and addresses (borrowed
    // from the queue for the duration of the call).
    let r = unsafe { libc::sendmmsg(fd, hdrs.as_mut_ptr(), n as libc::c_uint, libc::MSG_DONTWAIT) };
    if r < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
}

/// `(host, port)` with a numeric IPv4 host ('' and '<broadcast>' too).
fn parse_v4(addr: &Bound<'_, PyAny>) -> Option<SockAddr> {
    let t = addr.cast::<PyTuple>().ok()?;
    if t.len() != 2 {
        return None;
    }
    let host = t.get_item(0).ok()?;
    let host = host.cast::<PyString>().ok()?.to_str().ok()?;
    let port: u16 = t.get_item(1).ok()?.extract().ok()?;
    let ip = match host {
        "" => Ipv4Addr::UNSPECIFIED,
        "<broadcast>" => Ipv4Addr::BROADCAST,
        h => h.parse().ok()?,
    };
    Some(SockAddr::v4(ip, port))
}

/// `(host, port[, flowinfo[, scope_id]])` with a numeric IPv6 host.
fn parse_v6(addr: &Bound<'_, PyAny>) -> Option<SockAddr> {
    let t = addr.cast::<PyTuple>().ok()?;
    if !(2..=4).contains(&t.len()) {
        return None;
    }
    let host = t.get_item(0).ok()?;
    let host = host.cast::<PyString>().ok()?.to_str().ok()?;
    let ip: Ipv6Addr = if host.is_empty() {
        Ipv6Addr::UNSPECIFIED
    } else {
        host.parse().ok()?
    };
    let port: u16 = t.get_item(1).ok()?.extract().ok()?;
    let flowinfo: u32 = match t.get_item(2) {
        Ok(v) => v.extract().ok()?,
        Err(_) => 0,
    };
    let scope: u32 = match t.get_item(3) {
        Ok(v) => v.extract().ok()?,
        Err(_) => 0,
    };
    if flowinfo > 0xfffff {
        return None;
    }
    Some(SockAddr::v6(ip, port, flowinfo, scope))
}

/// A Unix socket path (`str`, or `bytes` for an abstract name).
fn parse_unix(addr: &Bound<'_, PyAny>) -> Option<SockAddr> {
    if let Ok(b) = addr.cast::<PyBytes>() {
        return SockAddr::unix(b.as_bytes());
    }
    let path: std::path::PathBuf = addr.cast::<PyString>().ok()?.extract().ok()?;
    SockAddr::unix(path.as_os_str().as_bytes())
}

#[pymethods]
impl DatagramTransport {
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.base.loop_)?;
        visit.call(&self.base.sock)?;
        visit.call(&self.base.protocol)?;
        visit.call(&self.base.extra)?;
        visit.call(&self.address)?;
        visit.call(&self.base.context)?;
        for (d, a) in &self.held {
            visit.call(d)?;
            visit.call(a)?;
        }
        for (_, d) in &self.queue {
            if let Dest::Py(a) = d {
                visit.call(a)?;
            }
        }
        if let Some((_, a)) = &self.src_cache {
            visit.call(a)?;
        }
        if let Some((a, _)) = &self.dest_cache {
            visit.call(a)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.base.loop_ = None;
        self.base.sock = None;
        self.base.protocol = None;
        self.address = None;
        self.held.clear();
        self.queue.clear();
        self.src_cache = None;
        self.dest_cache = None;
    }

    /// `address` is the remote address `create_datagram_endpoint` was
    /// given, if any; `extra` must hold `peername`.
    #[new]
    #[pyo3(signature = (loop_, sock, protocol, extra, address = None))]
    fn py_new(
        loop_: &Bound<'_, LoopCore>,
        sock: &Bound<'_, PyAny>,
        protocol: &Bound<'_, PyAny>,
        extra: &Bound<'_, PyDict>,
        address: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        let py = loop_.py();
        let fd: RawFd = sock.call_method0(intern!(py, "fileno"))?.extract()?;
        if fd < 0 {
            return Err(PyValueError::new_err("the socket is closed"));
        }
        let family: libc::c_int = sock.getattr(intern!(py, "family"))?.extract()?;
        // A socketpair's peer name is '' (Unix, unnamed): connected all
        // the same.
        let connected = match extra.get_item("peername")? {
            Some(p) => !p.is_none() && (p.is_truthy()? || family == libc::AF_UNIX),
            None => false,
        };
        Ok(Self {
            base: Base::new(loop_, sock, fd, protocol, extra)?,
            family,
            address: address.filter(|a| !a.is_none(py)),
            connected,
            queue: VecDeque::new(),
            queued: 0,
            held: VecDeque::new(),
            src_cache: None,
            dest_cache: None,
        })
    }

    /// Calls the protocol's `connection_made(transport)` in the transport's
    /// context, then starts reading (as the loop's first callbacks).
    fn _start(slf: &Bound<'_, Self>, facade: Py<PyAny>) -> PyResult<()> {
        let py = slf.py();
        let (lp, ctx, proto) = {
            let t = slf.borrow();
            (
                t.base.lp(py),
                t.base.context.clone_ref(py),
                t.base.protocol.as_ref().map(|p| p.clone_ref(py)),
            )
        };
        let (Some(lp), Some(proto)) = (lp, proto) else {
            return Ok(());
        };
        call_soon_in_context(
            &lp,
            &ctx,
            proto.bind(py).getattr(intern!(py, "connection_made"))?,
            Some(facade),
        )?;
        call_soon_in_context(&lp, &ctx, slf.getattr(intern!(py, "_start_reading"))?, None)
    }

    fn _start_reading(slf: &Bound<'_, Self>) -> PyResult<()> {
        base::start_reading(slf)
    }

    #[pyo3(signature = (data, addr = None))]
    fn sendto(
        slf: &Bound<'_, Self>,
        data: &Bound<'_, PyAny>,
        addr: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let py = slf.py();
        if !(data.is_instance_of::<PyBytes>()
            || data.is_instance_of::<PyByteArray>()
            || data.is_instance_of::<PyMemoryView>())
        {
            return Err(PyTypeError::new_err(format!(
                "data argument must be a bytes-like object, not '{}'",
                data.get_type().name()?
            )));
        }
        let address = slf.borrow().address.as_ref().map(|a| a.clone_ref(py));
        let addr = match &address {
            Some(fixed) => {
                if let Some(a) = addr
                    && !a.is_none()
                    && !a.eq(fixed)?
                {
                    return Err(PyValueError::new_err(format!(
                        "Invalid address: must be None or {}",
                        fixed.bind(py).repr()?
                    )));
                }
                Some(fixed.bind(py).clone())
            }
            None => addr.cloned(),
        };
        {
            let mut t = slf.borrow_mut();
            if t.base.conn_lost > 0 && t.address.is_some() {
                if t.base.conn_lost >= 5 {
                    py.import("asyncio.log")?
                        .getattr(intern!(py, "logger"))?
                        .call_method1(
                            intern!(py, "warning"),
                            ("socket.send() raised exception.",),
                        )?;
                }
                t.base.conn_lost += 1;
                return Ok(());
            }
        }
        let buf = pyo3::buffer::PyBuffer::<u8>::get(data)?;
        let bytes = buf.to_vec(py)?;
        let dest = Self::dest(slf, addr.as_ref())?;
        if slf.borrow().queue.is_empty() {
            match Self::send_now(slf, &bytes, &dest) {
                Ok(Ok(true)) => return Ok(()),
                Ok(Ok(false)) => base::set_interest(slf, WRITE, true)?,
                Ok(Err(e)) => return Self::error_received(slf, e),
                Err(e) => {
                    return Self::fatal_error(slf, e, "Fatal write error on datagram transport");
                }
            }
        }
        {
            let mut t = slf.borrow_mut();
            t.queued += bytes.len();
            t.queue.push_back((bytes, dest));
        }
        base::maybe_pause_protocol(slf)
    }

    fn close(slf: &Bound<'_, Self>) -> PyResult<()> {
        if slf.borrow().base.closing {
            return Ok(());
        }
        slf.borrow_mut().base.closing = true;
        base::set_interest(slf, READ, false)?;
        slf.borrow_mut().held.clear();
        if slf.borrow().queue.is_empty() {
            slf.borrow_mut().base.conn_lost += 1;
            base::schedule_lost(slf, slf.py().None())?;
        }
        Ok(())
    }

    fn abort(slf: &Bound<'_, Self>) -> PyResult<()> {
        Self::force_close(slf, None)
    }

    fn _force_close(slf: &Bound<'_, Self>, exc: Py<PyAny>) -> PyResult<()> {
        Self::force_close(slf, Some(exc))
    }

    fn _fatal_error(slf: &Bound<'_, Self>, exc: &Bound<'_, PyAny>, message: &str) -> PyResult<()> {
        Self::fatal_error(slf, PyErr::from_value(exc.clone()), message)
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
        if !base::unpause_reading(slf) {
            return Ok(());
        }
        // Datagrams held back by the pause come first.
        let held: Vec<_> = slf.borrow_mut().held.drain(..).collect();
        if !held.is_empty() {
            base::with_context(slf, || Self::deliver(slf, held.into_iter()))?;
        }
        if slf.borrow().base.reading_paused {
            return Ok(());
        }
        base::set_interest(slf, READ, true)
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
        self.queued
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

    fn set_protocol(&mut self, protocol: Py<PyAny>) {
        self.base.protocol = Some(protocol);
    }

    #[getter]
    fn _sock(&self, py: Python<'_>) -> Py<PyAny> {
        self.base.sock(py)
    }

    #[getter]
    fn _closed(&self) -> bool {
        self.base.sock.is_none()
    }

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
        // Taken out, and dropped after the borrow: dropping the protocol
        // can drop the Python transport, whose __del__ looks at this one.
        let (sock, dropped) = {
            let mut t = slf.borrow_mut();
            t.base.fd = -1;
            let dropped = (
                t.base.protocol.take(),
                t.base.loop_.take(),
                std::mem::take(&mut t.held),
                t.src_cache.take(),
                t.dest_cache.take(),
            );
            (t.base.sock.take(), dropped)
        };
        if let Some(s) = sock {
            s.bind(py).call_method0(intern!(py, "close"))?;
        }
        drop(dropped);
        res
    }

    fn __repr__(&self) -> String {
        let state = self.base.state();
        format!("<pyloop.DatagramTransport fd={} {state}>", self.base.fd)
    }
}
