//! pyloop: a drop-in asyncio event loop for CPython, written in Rust.
//!
//! This crate is the extension module `pyloop._pyloop`. It holds the hot
//! parts of the loop: the ready queue, the timer heap, the epoll/timerfd/
//! eventfd core and the socket transports. The Python package in `python/`
//! derives `pyloop.Loop` from [`core::LoopCore`] and `asyncio.AbstractEventLoop`
//! and adds the API that is not on a hot path (servers, executors, signals).
//!
//! A Rust panic never aborts the Python process: pyo3 turns a panic at any
//! `#[pymethods]` boundary into `pyo3_runtime.PanicException` (as `fastcall`
//! does at its hand-written methods), and the release profile keeps
//! unwinding on.

mod accept;
mod base;
mod cell;
pub mod core;
pub mod datagram;
mod fastcall;
mod poll;
mod sockops;
pub mod tls;
pub mod transport;

use pyo3::prelude::*;

/// `gil_used = false`: the module is safe without the GIL, so importing it
/// into a free-threaded CPython leaves the GIL off (see `cell.rs`, and
/// `python/tests/test_threads.py`, which runs there).
#[pymodule(gil_used = false)]
fn _pyloop(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<core::LoopCore>()?;
    m.add_class::<core::handle::Handle>()?;
    m.add_class::<core::handle::TimerHandle>()?;
    m.add_class::<transport::SocketTransport>()?;
    fastcall::install(m.py())?;
    m.add_class::<datagram::DatagramTransport>()?;
    m.add_class::<tls::SslProtocol>()?;
    transport::read_directly::<tls::SslProtocol>();
    m.add_class::<sockops::Ready>()?;
    m.add_class::<accept::Acceptor>()?;
    m.add_function(wrap_pyfunction!(accept::make_socket_transport, m)?)?;
    m.add_class::<sockops::SockWait>()?;
    m.add_function(wrap_pyfunction!(sockops::sock_io, m)?)?;
    m.add_function(wrap_pyfunction!(sockops::check_socket, m)?)?;
    m.add_function(wrap_pyfunction!(base::set_transport_faces, m)?)?;
    Ok(())
}
