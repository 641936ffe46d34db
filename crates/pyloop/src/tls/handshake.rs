//! The TLS protocol's handshake and shutdown: the states from
//! UNWRAPPED to WRAPPED and from FLUSHING to the peer's close_notify, their
//! timeouts, and an abort.

use super::{AppState, Slf, SslProtocol, State, VOID_READ, is, ssl};
use pyo3::exceptions::PyRuntimeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyDict;

impl SslProtocol {
    pub(super) fn start_handshake(slf: Slf<'_, '_>) -> PyResult<()> {
        let py = slf.py();
        let start = if Self::debug(slf)? {
            let lg = ssl(py)?.logger.bind(py);
            lg.call_method1(intern!(py, "debug"), ("%r starts SSL handshake", slf))?;
            Some(
                slf.borrow()
                    .loop_
                    .bind(py)
                    .call_method0(intern!(py, "time"))?
                    .extract()?,
            )
        } else {
            None
        };
        slf.borrow_mut().handshake_start = start;
        Self::set_state(slf, State::DoHandshake)?;
        let timeout = slf.borrow().handshake_timeout;
        let h = Self::call_later(slf, timeout, "_check_handshake_timeout")?;
        slf.borrow_mut().handshake_timeout_handle = Some(h);
        let wrapped = {
            let t = slf.borrow();
            let kw = PyDict::new(py);
            kw.set_item("server_side", t.server_side)?;
            kw.set_item(
                "server_hostname",
                t.server_hostname.as_ref().map(|h| h.clone_ref(py)),
            )?;
            let args = (t.incoming.clone_ref(py), t.outgoing.clone_ref(py));
            let ctx = t.sslcontext.clone_ref(py);
            drop(t);
            ctx.bind(py)
                .call_method(intern!(py, "wrap_bio"), args, Some(&kw))
        };
        match wrapped {
            Ok(obj) => {
                {
                    let mut t = slf.borrow_mut();
                    t.sslobj_read = Some(obj.getattr(intern!(py, "read"))?.unbind());
                    t.sslobj_write = Some(obj.getattr(intern!(py, "write"))?.unbind());
                    t.sslobj_pending = Some(obj.getattr(intern!(py, "pending"))?.unbind());
                    t.sslobj = Some(obj.unbind());
                }
                Self::do_handshake(slf)
            }
            Err(e) => Self::on_handshake_complete(slf, Some(e)),
        }
    }

    pub(super) fn do_handshake(slf: Slf<'_, '_>) -> PyResult<()> {
        let py = slf.py();
        let Some(obj) = slf.borrow().sslobj.as_ref().map(|o| o.clone_ref(py)) else {
            return Ok(());
        };
        match obj.bind(py).call_method0(intern!(py, "do_handshake")) {
            Ok(_) => {
                let pending: usize = slf
                    .borrow()
                    .outgoing
                    .bind(py)
                    .getattr(intern!(py, "pending"))?
                    .extract()?;
                slf.borrow_mut().flight = pending;
                // The handshake's last flight (a TLS 1.3 client's Finished,
                // a server's session tickets) goes with the first read that
                // on_handshake_complete schedules, which flushes whether or
                // not the application reads (it may pause reading in
                // connection_made): together with what connection_made and
                // the first data_received write, in one send.
                Self::on_handshake_complete(slf, None)
            }
            Err(e) if is(py, &e, ssl(py)?.again.as_any()) => Self::process_outgoing(slf),
            Err(e) if is(py, &e, &ssl(py)?.ssl_error) => Self::on_handshake_complete(slf, Some(e)),
            Err(e) => Err(e),
        }
    }

    pub(super) fn on_handshake_complete(slf: Slf<'_, '_>, exc: Option<PyErr>) -> PyResult<()> {
        let py = slf.py();
        let h = slf.borrow_mut().handshake_timeout_handle.take();
        Self::cancel_handle(py, h)?;
        let obj = slf.borrow().sslobj.as_ref().map(|o| o.clone_ref(py));
        let peercert = match exc {
            Some(e) => Err(e),
            None => Self::set_state(slf, State::Wrapped).and_then(|()| match &obj {
                Some(o) => o.bind(py).call_method0(intern!(py, "getpeercert")),
                None => Err(PyRuntimeError::new_err("no SSL object")),
            }),
        };
        let peercert = match peercert {
            Ok(p) => p,
            Err(e) => {
                Self::set_state(slf, State::Unwrapped)?;
                let msg = if is(py, &e, &ssl(py)?.certificate_error) {
                    "SSL handshake failed on verifying the certificate"
                } else {
                    "SSL handshake failed"
                };
                Self::fatal_error(slf, &e, msg)?;
                return Self::wakeup_waiter(slf, Some(&e));
            }
        };
        let obj = obj.expect("wrapped");
        if Self::debug(slf)? {
            let start = slf.borrow().handshake_start.unwrap_or(0.0);
            let now: f64 = slf
                .borrow()
                .loop_
                .bind(py)
                .call_method0(intern!(py, "time"))?
                .extract()?;
            ssl(py)?.logger.bind(py).call_method1(
                "debug",
                ("%r: SSL handshake took %.1f ms", slf, (now - start) * 1e3),
            )?;
        }
        {
            let t = slf.borrow();
            let extra = t.extra.bind(py);
            extra.set_item("peercert", peercert)?;
            extra.set_item("cipher", obj.bind(py).call_method0(intern!(py, "cipher"))?)?;
            extra.set_item(
                "compression",
                obj.bind(py).call_method0(intern!(py, "compression"))?,
            )?;
            extra.set_item("ssl_object", &obj)?;
        }
        if slf.borrow().app_state == AppState::Init {
            slf.borrow_mut().app_state = AppState::ConMade;
            let tr = Self::get_app_transport(slf)?;
            Self::call_app(slf, None, "connection_made", (tr,).into_pyobject(py)?)?;
        }
        Self::wakeup_waiter(slf, None)?;
        // The application gets the transport (and may check ALPN) before
        // the first data: read in the next iteration.
        Self::call_soon_do_read(slf, None)
    }

    pub(super) fn start_shutdown(slf: Slf<'_, '_>, ctx: Option<Py<PyAny>>) -> PyResult<()> {
        let state = Self::state(slf);
        if matches!(state, State::Flushing | State::Shutdown | State::Unwrapped) {
            return Ok(());
        }
        slf.borrow_mut().app_closed = true;
        if state == State::DoHandshake {
            return Self::abort(slf, None);
        }
        Self::set_state(slf, State::Flushing)?;
        let timeout = slf.borrow().shutdown_timeout;
        let h = Self::call_later(slf, timeout, "_check_shutdown_timeout")?;
        slf.borrow_mut().shutdown_timeout_handle = Some(h);
        Self::do_flush(slf, ctx)
    }

    /// Reads and discards application data; a close_notify seen for the
    /// first time calls `eof_received`.
    pub(super) fn do_read_into_void(slf: Slf<'_, '_>, ctx: Option<&Py<PyAny>>) -> PyResult<()> {
        let py = slf.py();
        let Some(read) = slf.borrow().sslobj_read.as_ref().map(|r| r.clone_ref(py)) else {
            return Ok(());
        };
        let mut close_notify = false;
        loop {
            // Under glibc's mmap threshold: see do_read_copied.
            match read.bind(py).call1((VOID_READ,)) {
                Ok(b) => {
                    if !b.is_truthy()? {
                        close_notify = true;
                        break;
                    }
                }
                Err(e) if is(py, &e, ssl(py)?.again.as_any()) => break,
                Err(e) if is(py, &e, &ssl(py)?.zero_return) => {
                    close_notify = true;
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        if close_notify {
            Self::call_eof_received(slf, ctx)?;
        }
        Ok(())
    }

    pub(super) fn do_flush(slf: Slf<'_, '_>, ctx: Option<Py<PyAny>>) -> PyResult<()> {
        let res = Self::do_read_into_void(slf, ctx.as_ref())
            .and_then(|()| Self::do_write(slf))
            .and_then(|()| Self::process_outgoing(slf))
            .and_then(|()| Self::control_ssl_reading(slf));
        match res {
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyException>(slf.py()) => {
                Self::on_shutdown_complete(slf, Some(e))
            }
            Err(e) => Err(e),
            Ok(()) => {
                if Self::write_buffer_size(slf)? == 0 {
                    Self::set_state(slf, State::Shutdown)?;
                    Self::do_shutdown(slf, ctx)?;
                }
                Ok(())
            }
        }
    }

    pub(super) fn do_shutdown(slf: Slf<'_, '_>, ctx: Option<Py<PyAny>>) -> PyResult<()> {
        let py = slf.py();
        let res = (|| -> PyResult<()> {
            Self::do_read_into_void(slf, ctx.as_ref())?;
            let obj = slf.borrow().sslobj.as_ref().map(|o| o.clone_ref(py));
            let Some(obj) = obj else { return Ok(()) };
            match obj.bind(py).call_method0(intern!(py, "unwrap")) {
                Err(e) if is(py, &e, ssl(py)?.again.as_any()) => Self::process_outgoing(slf),
                Err(e) => Err(e),
                Ok(_) => {
                    Self::process_outgoing(slf)?;
                    if Self::write_buffer_size(slf)? == 0 {
                        Self::on_shutdown_complete(slf, None)?;
                    }
                    Ok(())
                }
            }
        })();
        match res {
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyException>(py) => {
                Self::on_shutdown_complete(slf, Some(e))
            }
            r => r,
        }
    }

    pub(super) fn on_shutdown_complete(slf: Slf<'_, '_>, exc: Option<PyErr>) -> PyResult<()> {
        let py = slf.py();
        match exc {
            Some(e) => {
                let h = slf.borrow_mut().shutdown_timeout_handle.take();
                Self::cancel_handle(py, h)?;
                Self::fatal_error(slf, &e, "Error occurred during shutdown")
            }
            None => {
                Self::keep_shutdown_timeout(slf)?;
                if let Some(t) = Self::transport(slf) {
                    t.bind(py).call_method0(intern!(py, "close"))?;
                }
                Ok(())
            }
        }
    }

    /// The transport beneath closes once its buffer drains, which a peer
    /// that does not read delays forever: the shutdown timeout stays armed
    /// (or is armed, where the peer began the shutdown) until
    /// `connection_lost`, and then aborts it with `TimeoutError`, as
    /// Python 3.14's asyncio does (before, a close could wait forever).
    pub(super) fn keep_shutdown_timeout(slf: Slf<'_, '_>) -> PyResult<()> {
        if slf.borrow().shutdown_timeout_handle.is_none() {
            let timeout = slf.borrow().shutdown_timeout;
            let h = Self::call_later(slf, timeout, "_check_shutdown_timeout")?;
            slf.borrow_mut().shutdown_timeout_handle = Some(h);
        }
        Ok(())
    }

    /// The peer closed its side without close_notify (a TCP end of file).
    /// What the application wrote is still encrypted and sent (the peer
    /// may read on), the application gets `eof_received()` (as with
    /// CPython's asyncio), and the transport closes once its buffer drains.
    /// No close_notify goes out: the peer cannot answer it.
    pub(super) fn finish_after_eof(slf: Slf<'_, '_>) -> PyResult<()> {
        let py = slf.py();
        Self::do_write(slf)?;
        slf.borrow_mut().ssl_writing_paused = false;
        Self::process_outgoing(slf)?;
        // A close's shutdown timer goes on; one of the EOF grace (the
        // application's reading was paused) is replaced by the shutdown's.
        if Self::state(slf) != State::Flushing {
            let h = slf.borrow_mut().shutdown_timeout_handle.take();
            Self::cancel_handle(py, h)?;
        }
        Self::set_state(slf, State::Shutdown)?;
        Self::keep_shutdown_timeout(slf)?;
        Self::call_eof_received(slf, None)?;
        if let Some(t) = Self::transport(slf) {
            t.bind(py).call_method0(intern!(py, "close"))?;
        }
        Ok(())
    }

    pub(super) fn abort(slf: Slf<'_, '_>, exc: Option<Py<PyAny>>) -> PyResult<()> {
        let py = slf.py();
        Self::set_state(slf, State::Unwrapped)?;
        if let Some(t) = Self::transport(slf) {
            t.bind(py).call_method1(
                intern!(py, "_force_close"),
                (exc.unwrap_or_else(|| py.None()),),
            )?;
        }
        Ok(())
    }
}
