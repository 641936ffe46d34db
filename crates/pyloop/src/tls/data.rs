//! The TLS protocol's application data, both ways: what the application
//! writes, encrypted into the transport beneath; what arrives, decrypted
//! into the application's protocol (copied or into its buffer); and the
//! flow control between the two.

use super::{
    AppState, LOG_THRESHOLD_FOR_CONNLOST_WRITES, READ_MAX, Slf, SslProtocol, State, is, ssl,
};
use crate::base::report_exception;
use crate::transport::SocketTransport;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyMemoryView, PyTuple};

impl SslProtocol {
    pub(super) fn write_appdata(
        slf: Slf<'_, '_>,
        data: Vec<Py<PyAny>>,
        ctx: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let py = slf.py();
        if matches!(
            Self::state(slf),
            State::Flushing | State::Shutdown | State::Unwrapped
        ) {
            let n = {
                let mut t = slf.borrow_mut();
                t.conn_lost += 1;
                t.conn_lost
            };
            if n > LOG_THRESHOLD_FOR_CONNLOST_WRITES {
                ssl(py)?
                    .logger
                    .bind(py)
                    .call_method1(intern!(py, "warning"), ("SSL connection is closed",))?;
            }
            return Ok(());
        }
        {
            let mut t = slf.borrow_mut();
            for d in data {
                let n = d.bind(py).len()?;
                t.write_buffer_size += n;
                t.write_backlog.push_back(d);
            }
        }
        if Self::state(slf) == State::Wrapped {
            let res = Self::do_write(slf)
                .and_then(|()| Self::process_outgoing(slf))
                .and_then(|()| Self::control_app_writing(slf, ctx.as_ref()));
            if let Err(e) = res {
                if !e.is_instance_of::<pyo3::exceptions::PyException>(py) {
                    return Err(e);
                }
                Self::fatal_error(slf, &e, "Fatal error on SSL protocol")?;
            }
        }
        Ok(())
    }

    /// Encrypts the write backlog into the outgoing BIO.
    pub(super) fn do_write(slf: Slf<'_, '_>) -> PyResult<()> {
        let py = slf.py();
        let Some(write) = slf.borrow().sslobj_write.as_ref().map(|w| w.clone_ref(py)) else {
            return Ok(());
        };
        loop {
            let Some(data) = slf.borrow().write_backlog.front().map(|d| d.clone_ref(py)) else {
                return Ok(());
            };
            let data = data.bind(py);
            let count: usize = match write.bind(py).call1((data,)) {
                Ok(n) => n.extract()?,
                Err(e) if is(py, &e, ssl(py)?.again.as_any()) => return Ok(()),
                Err(e) => return Err(e),
            };
            let len = data.len()?;
            let mut t = slf.borrow_mut();
            if count < len {
                let view = if data.is_instance_of::<PyMemoryView>() {
                    data.clone()
                } else {
                    PyMemoryView::from(data)?.into_any()
                };
                let rest = view.get_item(pyo3::types::PySlice::new(
                    py,
                    count as isize,
                    len as isize,
                    1,
                ))?;
                t.write_backlog[0] = rest.unbind();
                t.write_buffer_size -= count;
            } else {
                t.write_backlog.pop_front();
                t.write_buffer_size -= len;
            }
        }
    }

    /// Sends what the outgoing BIO holds, unless the transport beneath
    /// asked to pause.
    pub(super) fn process_outgoing(slf: Slf<'_, '_>) -> PyResult<()> {
        let py = slf.py();
        if slf.borrow().ssl_writing_paused {
            return Ok(());
        }
        let read = slf.borrow().outgoing_read.clone_ref(py);
        let data = read.bind(py).call0()?;
        slf.borrow_mut().flight = 0;
        if data.len()? == 0 {
            return Ok(());
        }
        let (core, tr) = {
            let t = slf.borrow();
            (
                t.transport_core.as_ref().map(|c| c.clone_ref(py)),
                t.transport.as_ref().map(|t| t.clone_ref(py)),
            )
        };
        match (core, tr) {
            (Some(core), _) => SocketTransport::write_from_tls(core.bind(py), &data),
            (None, Some(tr)) => tr
                .bind(py)
                .call_method1(intern!(py, "write"), (data,))
                .map(|_| ()),
            (None, None) => Ok(()),
        }
    }

    pub(super) fn do_read(slf: Slf<'_, '_>) -> PyResult<()> {
        let py = slf.py();
        if Self::state(slf) != State::Wrapped {
            return Ok(());
        }
        let res = (|| -> PyResult<()> {
            if !slf.borrow().app_reading_paused {
                if slf.borrow().app_is_buffer {
                    Self::do_read_buffered(slf)?;
                } else {
                    Self::do_read_copied(slf)?;
                }
                if !slf.borrow().write_backlog.is_empty() {
                    Self::do_write(slf)?;
                }
                Self::process_outgoing(slf)?;
                Self::control_app_writing(slf, None)?;
                // The peer's end of file came while reading was paused:
                // now that the application has what was left, finish.
                if slf.borrow().eof_seen
                    && Self::state(slf) == State::Wrapped
                    && !slf.borrow().app_reading_paused
                    && Self::pending(slf)? == 0
                {
                    return Self::finish_after_eof(slf);
                }
            }
            if slf.borrow().app_reading_paused {
                // What the handshake left in the outgoing BIO goes anyway.
                Self::process_outgoing(slf)?;
            }
            Self::control_ssl_reading(slf)
        })();
        match res {
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyException>(py) => {
                Self::fatal_error(slf, &e, "Fatal error on SSL protocol")
            }
            r => r,
        }
    }

    pub(super) fn pending(slf: Slf<'_, '_>) -> PyResult<usize> {
        let py = slf.py();
        let (inc, pend) = {
            let t = slf.borrow();
            (
                t.incoming.clone_ref(py),
                t.sslobj_pending.as_ref().map(|p| p.clone_ref(py)),
            )
        };
        let a: usize = inc.bind(py).getattr(intern!(py, "pending"))?.extract()?;
        let b: usize = match pend {
            Some(p) => p.bind(py).call0()?.extract()?,
            None => 0,
        };
        Ok(a + b)
    }

    pub(super) fn do_read_copied(slf: Slf<'_, '_>) -> PyResult<()> {
        let py = slf.py();
        let Some(read) = slf.borrow().sslobj_read.as_ref().map(|r| r.clone_ref(py)) else {
            return Ok(());
        };
        let mut chunks: Vec<Bound<'_, PyAny>> = Vec::new();
        let mut eof = false;
        loop {
            let pending = Self::pending(slf)?;
            if pending == 0 {
                break;
            }
            // Ask for no more than can be there: `SSLObject.read(n)` makes an
            // n-byte bytes object before it shrinks it to what one record
            // held, and 256 KiB each time is an mmap, page faults and an
            // munmap per record. (The plaintext is never more than the
            // ciphertext waiting plus what OpenSSL holds decrypted.)
            match read.bind(py).call1((pending.min(READ_MAX),)) {
                Ok(c) => {
                    if c.len()? == 0 {
                        eof = true;
                        break;
                    }
                    chunks.push(c);
                }
                Err(e) if is(py, &e, ssl(py)?.again.as_any()) => break,
                Err(e) => return Err(e),
            }
        }
        match chunks.len() {
            0 => {}
            1 => {
                let c = chunks.pop().expect("one");
                Self::call_app(slf, None, "data_received", (c,).into_pyobject(py)?)?;
            }
            _ => {
                let total: usize = chunks.iter().map(|c| c.len().unwrap_or(0)).sum();
                let joined = PyBytes::new_with(py, total, |buf| {
                    let mut at = 0;
                    for c in &chunks {
                        let b = c.cast::<PyBytes>()?.as_bytes();
                        buf[at..at + b.len()].copy_from_slice(b);
                        at += b.len();
                    }
                    Ok(())
                })?;
                Self::call_app(slf, None, "data_received", (joined,).into_pyobject(py)?)?;
            }
        }
        if eof {
            Self::call_eof_received(slf, None)?;
            Self::start_shutdown(slf, None)?;
        }
        Ok(())
    }

    pub(super) fn do_read_buffered(slf: Slf<'_, '_>) -> PyResult<()> {
        let py = slf.py();
        let Some(read) = slf.borrow().sslobj_read.as_ref().map(|r| r.clone_ref(py)) else {
            return Ok(());
        };
        let mut total_pending = Self::pending(slf)?;
        let buf = Self::call_app(
            slf,
            None,
            "get_buffer",
            (total_pending + 256,).into_pyobject(py)?,
        )?;
        let size = buf.len()?;
        if size == 0 {
            return Ok(());
        }
        let view = PyMemoryView::from(&buf)?;
        let mut total = 0usize;
        let mut last: Option<usize> = None;
        while total_pending > 0 {
            let target = if total == 0 {
                view.clone().into_any()
            } else {
                view.get_item(pyo3::types::PySlice::new(
                    py,
                    total as isize,
                    size as isize,
                    1,
                ))?
            };
            let n: usize = match read.bind(py).call1((size - total, target)) {
                Ok(n) => n.extract()?,
                Err(e) if is(py, &e, ssl(py)?.again.as_any()) => break,
                Err(e) => return Err(e),
            };
            last = Some(n);
            total += n;
            if n == 0 {
                break;
            }
            if total == size {
                // The application's buffer is full: go on next iteration.
                Self::call_soon_do_read(slf, None)?;
                break;
            }
            total_pending = Self::pending(slf)?;
        }
        drop(view);
        if total > 0 {
            Self::call_app(slf, None, "buffer_updated", (total,).into_pyobject(py)?)?;
        }
        if last == Some(0) {
            Self::call_eof_received(slf, None)?;
            Self::start_shutdown(slf, None)?;
        }
        Ok(())
    }

    pub(super) fn call_eof_received(slf: Slf<'_, '_>, ctx: Option<&Py<PyAny>>) -> PyResult<()> {
        let py = slf.py();
        if slf.borrow().app_state != AppState::ConMade {
            return Ok(());
        }
        slf.borrow_mut().app_state = AppState::Eof;
        match Self::call_app(slf, ctx, "eof_received", PyTuple::empty(py)) {
            Ok(keep) => {
                if keep.is_truthy()? {
                    ssl(py)?.logger.bind(py).call_method1(
                        "warning",
                        ("returning true from eof_received() has no effect when using ssl",),
                    )?;
                }
                Ok(())
            }
            Err(e)
                if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py)
                    || e.is_instance_of::<pyo3::exceptions::PySystemExit>(py) =>
            {
                Err(e)
            }
            Err(e) => Self::fatal_error(slf, &e, "Error calling eof_received()"),
        }
    }

    pub(super) fn write_buffer_size(slf: Slf<'_, '_>) -> PyResult<usize> {
        let py = slf.py();
        let (out, n, flight) = {
            let t = slf.borrow();
            (t.outgoing.clone_ref(py), t.write_buffer_size, t.flight)
        };
        let pending: usize = out.bind(py).getattr(intern!(py, "pending"))?.extract()?;
        Ok(pending.saturating_sub(flight) + n)
    }

    pub(super) fn control_app_writing(slf: Slf<'_, '_>, ctx: Option<&Py<PyAny>>) -> PyResult<()> {
        let py = slf.py();
        let size = Self::write_buffer_size(slf)?;
        let (paused, high, low) = {
            let t = slf.borrow();
            (t.app_writing_paused, t.outgoing_high, t.outgoing_low)
        };
        let (call, msg) = if size >= high && !paused {
            slf.borrow_mut().app_writing_paused = true;
            ("pause_writing", "protocol.pause_writing() failed")
        } else if size <= low && paused {
            slf.borrow_mut().app_writing_paused = false;
            ("resume_writing", "protocol.resume_writing() failed")
        } else {
            return Ok(());
        };
        match Self::call_app(slf, ctx, call, PyTuple::empty(py)) {
            Ok(_) => Ok(()),
            Err(e)
                if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py)
                    || e.is_instance_of::<pyo3::exceptions::PySystemExit>(py) =>
            {
                Err(e)
            }
            Err(e) => {
                let (lp, tr) = {
                    let t = slf.borrow();
                    (
                        t.loop_.clone_ref(py),
                        t.app_transport.as_ref().map(|t| t.clone_ref(py)),
                    )
                };
                let tr = tr.as_ref().map(|t| t.bind(py));
                report_exception(lp.bind(py), msg, &e, tr, Some(slf.as_any()))
            }
        }
    }

    pub(super) fn control_ssl_reading(slf: Slf<'_, '_>) -> PyResult<()> {
        let py = slf.py();
        let inc = slf.borrow().incoming.clone_ref(py);
        let size: usize = inc.bind(py).getattr(intern!(py, "pending"))?.extract()?;
        let (paused, high, low) = {
            let t = slf.borrow();
            (t.ssl_reading_paused, t.incoming_high, t.incoming_low)
        };
        let call = if size >= high && !paused {
            slf.borrow_mut().ssl_reading_paused = true;
            "pause_reading"
        } else if size <= low && paused {
            slf.borrow_mut().ssl_reading_paused = false;
            "resume_reading"
        } else {
            return Ok(());
        };
        if let Some(t) = Self::transport(slf) {
            t.bind(py).call_method0(call)?;
        }
        Ok(())
    }
}
