//! `Handle` and `TimerHandle`: a callback, its arguments and the
//! `contextvars.Context` it runs in, as returned by `call_soon` and
//! `call_later`.

use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use pyo3::{PyTraverseError, PyVisit};

use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;

use super::LoopCore;
use crate::cell::GilCell;

/// A callback the loop will run. Frozen: what changes after it is made
/// (cancellation, and the references a cancel or the collector drops) sits
/// in atomics and a [`GilCell`], so running it takes no pyo3 borrow.
#[pyclass(subclass, weakref, module = "pyloop._pyloop", frozen)]
#[derive(Debug)]
pub struct Handle {
    refs: GilCell<Refs>,
    cancelled: AtomicBool,
    /// The loop, for the exception handler and for counting cancelled timers.
    pub(crate) loop_: std::mem::ManuallyDrop<Py<LoopCore>>,
    /// The deadline of a timer, in `loop.time()` seconds; NaN for plain handles.
    pub(crate) when: f64,
    /// A timer still in the loop's heap.
    pub(crate) scheduled: AtomicBool,
    /// The context this handle copied is untracked by the collector while
    /// the handle waits in the queue (see [`Handle::settle`]).
    ctx_untracked: AtomicBool,
}

/// Tracks a context that [`Handle::create`] untracked again. CPython's
/// `context_tp_dealloc` unlinks its object from the collector's list
/// without checking, so a context must be tracked again before any
/// reference to it leaves the handle: as the handle leaves the queue, is
/// cleared or dropped, or hands the context out.
fn retrack_context(flag: &AtomicBool, ctx: Option<&Py<PyAny>>) {
    #[cfg(not(Py_GIL_DISABLED))]
    if flag.swap(false, Relaxed)
        && let Some(c) = ctx
    {
        // SAFETY: a live context that create() untracked, with the GIL held.
        unsafe {
            if ffi::PyObject_GC_IsTracked(c.as_ptr()) == 0 {
                ffi::PyObject_GC_Track(c.as_ptr().cast());
            }
        }
    }
    #[cfg(Py_GIL_DISABLED)]
    let _ = (flag, ctx);
}

impl Handle {
    /// See [`retrack_context`].
    fn retrack(&self) {
        if self.ctx_untracked.load(Relaxed)
            && let Some(r) = self.refs.peek()
        {
            retrack_context(&self.ctx_untracked, r.context.as_ref());
        }
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // pyo3 drops the handle with the GIL held (from tp_dealloc).
        self.retrack();
        // SAFETY: as above, the thread is attached: the references go as
        // Bounds, with a plain decref each (a Py's drop asks a thread-local
        // first).
        let py = unsafe { Python::assume_attached() };
        let r = self.refs.get_mut();
        for obj in [
            r.callback.take(),
            r.args.take().map(Py::into_any),
            r.context.take(),
            r.source_traceback.take(),
        ]
        .into_iter()
        .flatten()
        {
            drop(obj.into_bound(py));
        }
        // SAFETY: taken once, here, and never used after.
        drop(unsafe { std::mem::ManuallyDrop::take(&mut self.loop_) }.into_bound(py));
    }
}

/// What a handle refers to; `cancel()` and `__clear__` drop the callback and
/// its arguments.
#[derive(Debug)]
struct Refs {
    callback: Option<Py<PyAny>>,
    args: Option<Py<PyTuple>>,
    context: Option<Py<PyAny>>,
    /// In debug mode, where the handle was made (asyncio's
    /// `_source_traceback`: a `traceback.StackSummary`).
    source_traceback: Option<Py<PyAny>>,
}

/// Where [`Handle::create`] puts a callback: a new handle of a loop, or a
/// spare one (see [`Handle::recycle`]).
pub(crate) enum Slot {
    New(Py<LoopCore>),
    Spare(Py<Handle>),
}

/// The outcome of running a callback that raised.
pub(crate) enum Failure {
    /// An `Exception`: reported to the loop's exception handler.
    Report(PyErr),
    /// A `BaseException` such as `KeyboardInterrupt` or `SystemExit`: ends
    /// `run_forever`, as in asyncio.
    Propagate(PyErr),
}

impl Handle {
    pub(crate) fn create(
        py: Python<'_>,
        slot: Slot,
        callback: Py<PyAny>,
        args: Py<PyTuple>,
        context: Option<Py<PyAny>>,
        when: f64,
        queued: bool,
    ) -> PyResult<Py<Handle>> {
        let (context, untracked) = Self::own_context(py, context, queued)?;
        let (h, fresh) = match slot {
            Slot::Spare(h) => {
                let hh = h.get();
                {
                    let mut r = hh.refs.borrow_mut(py)?;
                    r.callback = Some(callback);
                    r.args = Some(args);
                    r.context = context;
                }
                hh.ctx_untracked.store(untracked, Relaxed);
                // Cleared when it became a spare, and again here, should
                // anything have reached it since.
                hh.cancelled.store(false, Relaxed);
                (h, false)
            }
            Slot::New(loop_) => {
                let handle = Handle {
                    refs: GilCell::new(Refs {
                        callback: Some(callback),
                        args: Some(args),
                        context,
                        source_traceback: None,
                    }),
                    cancelled: AtomicBool::new(false),
                    loop_: std::mem::ManuallyDrop::new(loop_),
                    when,
                    scheduled: AtomicBool::new(false),
                    ctx_untracked: AtomicBool::new(untracked),
                };
                let h = if when.is_nan() {
                    Py::new(py, handle)?
                } else {
                    let init = PyClassInitializer::from(handle).add_subclass(TimerHandle::new());
                    Py::new(py, init)?.into_bound(py).into_super().unbind()
                };
                (h, true)
            }
        };
        // A new handle is tracked by its allocation, and untracked here
        // only behind a long queue (see `LoopCore::new_handle`). A spare is
        // untracked, and stays so while it waits, whatever the queue: the
        // loop's traverse shows a queued handle's references either way,
        // and `settle` tracks one that someone else holds as it leaves.
        #[cfg(not(Py_GIL_DISABLED))]
        if fresh && queued {
            // SAFETY: a live GC object, tracked, with the GIL held. (pyo3's
            // dealloc untracks with PyObject_GC_UnTrack, which allows an
            // untracked object; the context is tracked again before it can
            // be freed: see retrack_context.)
            unsafe { ffi::PyObject_GC_UnTrack(h.as_ptr().cast()) };
        }
        #[cfg(Py_GIL_DISABLED)]
        let _ = (fresh, queued);
        Ok(h)
    }

    /// The context a new handle runs in: `context`, or a copy of the
    /// current one, hidden from the collector while the handle is `queued`
    /// (then `true` is returned with it; see `retrack_context`).
    ///
    /// A copy of an empty context is not kept: `None` stands for it, and
    /// the handle runs in its loop's empty context (see
    /// [`enter_empty_context`]).
    /// A callback scheduled where no context variable is set (any thread's
    /// `call_soon_threadsafe`, a program that sets none) then costs no
    /// context of its own, to make, to keep apart from the collector, and
    /// to free: most of the memory a burst of them takes.
    fn own_context(
        py: Python<'_>,
        context: Option<Py<PyAny>>,
        queued: bool,
    ) -> PyResult<(Option<Py<PyAny>>, bool)> {
        match context {
            Some(c) if !c.is_none(py) => return Ok((Some(c), false)),
            // An explicit None, released as a Bound (see `fastcall`).
            Some(c) => drop(c.into_bound(py)),
            None => {}
        }
        // SAFETY: called with the GIL held; returns a new reference or NULL
        // with an exception set, which from_owned_ptr_or_err takes.
        // A Bound: dropped here, it is a plain decref. (A Py's drop, on a
        // thread that entered only through `fastcall`, would be put off to
        // pyo3's pool of deferred decrefs, and the context kept alive.)
        let copy = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyContext_CopyCurrent())? };
        if context_is_empty(&copy) {
            return Ok((None, false));
        }
        #[cfg(not(Py_GIL_DISABLED))]
        {
            if queued {
                // SAFETY: a context only this handle refers to, with the GIL
                // held; retrack_context tracks it again before it can go.
                unsafe { ffi::PyObject_GC_UnTrack(copy.as_ptr().cast()) };
                return Ok((Some(copy.unbind()), true));
            }
        }
        let _ = queued;
        Ok((Some(copy.unbind()), false))
    }

    /// A handle that has run (or was cancelled), kept by the loop to carry
    /// its next callback, if nothing else can see it: a plain `Handle` (not
    /// a timer, nor a Python subclass's), with no other reference and no
    /// weak reference. Its references are dropped; it keeps only its loop.
    /// Otherwise it is dropped here and `None` returned.
    ///
    /// Making and freeing a handle per callback (pyo3's allocation, the
    /// collector's linking and unlinking) is most of what a task switch
    /// costs the loop: a spare costs neither.
    pub(crate) fn recycle(h: Bound<'_, Handle>) -> Option<Py<Handle>> {
        #[cfg(not(Py_GIL_DISABLED))]
        {
            let py = h.py();
            let p = h.as_ptr();
            // SAFETY: a live object, with the GIL held; the weak reference
            // list sits at the type's tp_weaklistoffset (Handle is a
            // `weakref` class), a pointer that is NULL when there are none.
            let alone = h.is_exact_instance_of::<Handle>()
                && only_reference(h.as_unbound())
                && unsafe {
                    let ty = ffi::Py_TYPE(p);
                    (*ty).tp_weaklistoffset > 0
                        && (*p
                            .cast::<u8>()
                            .offset((*ty).tp_weaklistoffset)
                            .cast::<*mut ffi::PyObject>())
                        .is_null()
                };
            let hh = h.get();
            if alone && !hh.ctx_untracked.load(Relaxed) {
                let taken = hh.refs.borrow_mut(py).ok().map(|mut r| {
                    [
                        r.callback.take(),
                        r.args.take().map(Py::into_any),
                        r.context.take(),
                        r.source_traceback.take(),
                    ]
                });
                if let Some([a, b, c, d]) = taken {
                    // Dropped with the handle still held: a finalizer they
                    // run cannot reach it. As Bounds: a plain decref each
                    // (one by one: an array iterator's drop costs more).
                    let release = |o: Option<Py<PyAny>>| drop(o.map(|o| o.into_bound(py)));
                    release(a);
                    release(b);
                    release(c);
                    release(d);
                    hh.cancelled.store(false, Relaxed);
                    if only_reference(h.as_unbound()) {
                        // A spare is never tracked: the loop's traverse
                        // shows the one reference each holds, to the loop,
                        // without touching them (see `LoopCore::__traverse__`).
                        // SAFETY: a live GC object, with the GIL held;
                        // untracked only if it is tracked.
                        unsafe {
                            if ffi::PyObject_GC_IsTracked(p) != 0 {
                                ffi::PyObject_GC_UnTrack(p.cast());
                            }
                        }
                        return Some(h.unbind());
                    }
                }
            }
        }
        drop(h);
        None
    }

    /// For the loop's `__traverse__`: a handle that the collector does not
    /// track (see [`Handle::settle`]) has its references shown as the
    /// loop's own; a tracked one is shown itself.
    pub(crate) fn traverse_queued(
        h: &Py<Handle>,
        visit: &PyVisit<'_>,
    ) -> Result<(), PyTraverseError> {
        // SAFETY: a live object; CPython calls tp_traverse with the GIL held.
        if unsafe { ffi::PyObject_GC_IsTracked(h.as_ptr()) } != 0 {
            return visit.call(h);
        }
        let h = h.get();
        visit.call(&*h.loop_)?;
        if let Some(r) = h.refs.peek() {
            visit.call(&r.callback)?;
            visit.call(&r.args)?;
            visit.call(&r.context)?;
            visit.call(&r.source_traceback)?;
        }
        Ok(())
    }

    /// Called as a handle leaves the ready queue or the timer heap.
    ///
    /// While a handle waits there, the loop holds it, so it is not garbage,
    /// and the collector need not track it: `call_soon`, `call_later` and
    /// `call_soon_threadsafe` untrack it, and the loop's `__traverse__`
    /// shows its references as the loop's own. A burst of queued callbacks
    /// then costs the collector little: the context each one copies is
    /// untracked too until it runs (see `retrack_context`). As it leaves, a handle that someone else still
    /// refers to is tracked again, so a cycle through it is collected as
    /// with asyncio's handles.
    pub(crate) fn settle(h: &Py<Handle>) {
        let hh = h.get();
        hh.retrack();
        #[cfg(not(Py_GIL_DISABLED))]
        // SAFETY: a live object, with the GIL held (the loop's thread, or
        // the collector's clear). It is tracked only if it is untracked, as
        // PyObject_GC_Track requires.
        unsafe {
            let p = h.as_ptr();
            // The reference count first: a handle only the loop holds (a
            // task step's, whose caller dropped it) is the common case.
            if ffi::Py_REFCNT(p) > 1 && ffi::PyObject_GC_IsTracked(p) == 0 {
                ffi::PyObject_GC_Track(p.cast());
            }
        }
        #[cfg(Py_GIL_DISABLED)]
        let _ = h;
    }

    /// `handle.cancel()`: the callback will not run, and its references
    /// are dropped (after the borrow, since dropping them can run Python).
    pub(crate) fn cancel_handle(slf: &Bound<'_, Handle>) -> PyResult<()> {
        let py = slf.py();
        let h = slf.get();
        if h.cancelled.swap(true, Relaxed) {
            return Ok(());
        }
        if h.scheduled.load(Relaxed)
            && let Ok(mut st) = h.loop_.get().state.borrow_mut(py)
        {
            st.timer_cancelled();
        }
        let taken = {
            let mut r = h.refs.borrow_mut(py)?;
            (r.callback.take(), r.args.take())
        };
        drop(taken);
        Ok(())
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Relaxed)
    }

    pub(crate) fn set_source_traceback(&self, py: Python<'_>, tb: Py<PyAny>) -> PyResult<()> {
        self.refs.borrow_mut(py)?.source_traceback = Some(tb);
        Ok(())
    }

    /// Runs the callback in its context. Cancelled handles do nothing.
    pub(crate) fn run(slf: &Bound<'_, Handle>) -> Result<(), Failure> {
        let py = slf.py();
        let h = slf.get();
        if h.is_cancelled() {
            return Ok(());
        }
        // Bound, not Py, clones: dropping a Bound is a plain decref, where a
        // Py's drop first asks a thread-local whether the thread is attached.
        let (cb, args, ctx) = {
            let r = h.refs.borrow(py).map_err(Failure::Report)?;
            match (&r.callback, &r.args) {
                (Some(cb), Some(args)) => {
                    // The callback may keep its context (a contextvars.Token
                    // does).
                    retrack_context(&h.ctx_untracked, r.context.as_ref());
                    (
                        cb.bind(py).clone(),
                        args.bind(py).clone(),
                        r.context.as_ref().map(|c| c.bind(py).clone()),
                    )
                }
                _ => return Ok(()),
            }
        };
        let shared = ctx.is_none();
        let ctx = match ctx {
            Some(ctx) => {
                // SAFETY: ctx is a contextvars.Context (from
                // PyContext_CopyCurrent or checked by the caller); Enter and
                // Exit are paired below.
                if unsafe { ffi::PyContext_Enter(ctx.as_ptr()) } != 0 {
                    return Err(Failure::Report(PyErr::fetch(py)));
                }
                ctx
            }
            None => enter_empty_context(py, &h.loop_).map_err(Failure::Report)?,
        };
        // No arguments and one argument (a task's step, a future's
        // set_result) are the common calls: vectorcall them without the
        // tuple.
        let res = match args.len() {
            0 => cb.call0(),
            // SAFETY: index 0 exists.
            1 => cb.call1((unsafe { args.get_borrowed_item_unchecked(0) },)),
            _ => cb.call1(args),
        };
        // SAFETY: paired with the Enter above, on the same thread.
        let exit = unsafe { ffi::PyContext_Exit(ctx.as_ptr()) };
        if exit != 0 {
            return Err(Failure::Report(PyErr::fetch(py)));
        }
        match res {
            Ok(_) => Ok(()),
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyException>(py) => {
                if shared {
                    // The exception handler runs in the handle's context
                    // (`get_context`), as asyncio's does from 3.12 on: the
                    // one the callback ran in, with what it set there. One
                    // left with a variable set is not shared again.
                    let mut r = h.refs.borrow_mut(py).map_err(Failure::Report)?;
                    r.context.get_or_insert_with(|| ctx.unbind());
                }
                Err(Failure::Report(e))
            }
            Err(e) => Err(Failure::Propagate(e)),
        }
    }

    /// Reports `err` raised by this handle's callback to the loop's
    /// exception handler, as asyncio's `Handle._run` does.
    pub(crate) fn report(slf: &Bound<'_, Handle>, err: PyErr) -> PyResult<()> {
        let py = slf.py();
        let lp = slf.get().loop_.clone_ref(py);
        let repr = slf.repr()?;
        let ctx = PyDict::new(py);
        ctx.set_item(
            "message",
            format!("Exception in callback {}", repr_body(&repr)),
        )?;
        ctx.set_item("exception", err.value(py))?;
        ctx.set_item("handle", slf)?;
        let tb = slf
            .get()
            .refs
            .borrow(py)?
            .source_traceback
            .as_ref()
            .map(|t| t.clone_ref(py));
        if let Some(tb) = tb {
            ctx.set_item("source_traceback", tb)?;
        }
        lp.bind(py)
            .call_method1(intern!(py, "call_exception_handler"), (ctx,))?;
        Ok(())
    }
}

/// Whether a context (a live `contextvars.Context`) holds no variables.
/// Its type's length slot is called directly: `PyObject_Length` reaches it
/// through two generic functions (about 40 instructions a call).
fn context_is_empty(c: &Bound<'_, PyAny>) -> bool {
    // SAFETY: a live object, with the GIL held; a context's length cannot
    // fail. The slot is read from the object's own type.
    unsafe {
        let p = c.as_ptr();
        let m = (*ffi::Py_TYPE(p)).tp_as_mapping;
        match m.as_ref().and_then(|m| m.mp_length) {
            Some(len) => len(p) == 0,
            None => ffi::PyObject_Length(p) == 0,
        }
    }
}

/// Enters, and returns, an empty context for a handle made where the
/// current context was empty (see `Handle::own_context`): its loop's shared
/// one while that is still empty, as no callback run in it has left a
/// variable set. Otherwise (a callback left one set, or the shared context
/// is entered already: a callback that runs another handle itself) a new
/// empty context, which becomes the shared one in the first case. Either
/// way the callback sees what asyncio's copy would give it: no variables.
/// The caller exits it.
fn enter_empty_context<'py>(py: Python<'py>, lp: &Py<LoopCore>) -> PyResult<Bound<'py, PyAny>> {
    let shared = lp
        .get()
        .empty_context
        .borrow(py)?
        .as_ref()
        .map(|c| c.bind(py).clone());
    if let Some(c) = shared
        && context_is_empty(&c)
    {
        // SAFETY: a live context, with the GIL held; Enter fails only if the
        // context is entered already, and the caller exits it.
        if unsafe { ffi::PyContext_Enter(c.as_ptr()) } == 0 {
            return Ok(c);
        }
        let _ = PyErr::take(py);
        return enter_new_context(py);
    }
    let c = enter_new_context(py)?;
    let old = lp
        .get()
        .empty_context
        .borrow_mut(py)?
        .replace(c.clone().unbind());
    // Dropped after the borrow: the values it holds may run finalizers.
    drop(old);
    Ok(c)
}

/// A new, empty context.
fn new_context(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    // SAFETY: with the GIL held; a new reference or NULL with an exception
    // set.
    unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyContext_New()) }
}

/// A new, empty context, entered.
fn enter_new_context(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let c = new_context(py)?;
    // SAFETY: with the GIL held; Enter cannot fail on a context no one has
    // entered, and the caller exits it.
    if unsafe { ffi::PyContext_Enter(c.as_ptr()) } != 0 {
        return Err(PyErr::fetch(py));
    }
    Ok(c)
}

/// Whether the caller's reference to `h` is its only one (a plain read of
/// the count, with the GIL held): see [`Handle::recycle`].
pub(crate) fn only_reference(h: &Py<Handle>) -> bool {
    // SAFETY: a live object, with the GIL held.
    unsafe { ffi::Py_REFCNT(h.as_ptr()) == 1 }
}

fn repr_body(repr: &Bound<'_, pyo3::types::PyString>) -> String {
    let s = repr.to_string();
    // "<Handle cb(args)>" → "cb(args)", as asyncio's message has it.
    s.strip_prefix("<Handle ")
        .or_else(|| s.strip_prefix("<TimerHandle "))
        .and_then(|s| s.strip_suffix('>'))
        .map(str::to_owned)
        .unwrap_or(s)
}

#[pymethods]
impl Handle {
    /// Shows the garbage collector what the handle refers to, so that a
    /// cycle through it (an object that keeps the handle of its own bound
    /// method) is collected, as with asyncio's handles.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&*self.loop_)?;
        let Some(r) = self.refs.peek() else {
            return Ok(());
        };
        visit.call(&r.callback)?;
        visit.call(&r.args)?;
        visit.call(&r.context)?;
        visit.call(&r.source_traceback)
    }

    /// Breaks the cycles the collector found. The handle will not run.
    fn __clear__(&self) {
        self.retrack();
        let taken = self.refs.peek_mut().map(|mut r| {
            (
                r.callback.take(),
                r.args.take(),
                r.context.take(),
                r.source_traceback.take(),
            )
        });
        drop(taken);
    }

    #[getter]
    fn _source_traceback(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        Ok(self
            .refs
            .borrow(py)?
            .source_traceback
            .as_ref()
            .map(|t| t.clone_ref(py)))
    }

    /// Cancels the callback: it will not run. Releases its references.
    fn cancel(slf: &Bound<'_, Self>) -> PyResult<()> {
        Self::cancel_handle(slf)
    }

    fn cancelled(&self) -> bool {
        self.is_cancelled()
    }

    /// The handle's context. One made where the current context was empty
    /// gets its own empty context here, kept from then on: what it is
    /// given (a variable set through it) is then what it runs with.
    fn get_context(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.retrack();
        let mut r = self.refs.borrow_mut(py)?;
        if let Some(c) = r.context.as_ref() {
            return Ok(c.clone_ref(py));
        }
        let c = new_context(py)?.unbind();
        r.context = Some(c.clone_ref(py));
        Ok(c)
    }

    #[getter]
    fn _callback(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        Ok(self
            .refs
            .borrow(py)?
            .callback
            .as_ref()
            .map(|c| c.clone_ref(py)))
    }

    #[getter]
    fn _args(&self, py: Python<'_>) -> PyResult<Option<Py<PyTuple>>> {
        Ok(self.refs.borrow(py)?.args.as_ref().map(|c| c.clone_ref(py)))
    }

    #[getter]
    fn _loop(&self, py: Python<'_>) -> Py<LoopCore> {
        self.loop_.clone_ref(py)
    }

    /// Runs the callback now, reporting an exception to the loop's handler.
    fn _run(slf: &Bound<'_, Handle>) -> PyResult<()> {
        match Handle::run(slf) {
            Ok(()) => Ok(()),
            Err(Failure::Report(e)) => Handle::report(slf, e),
            Err(Failure::Propagate(e)) => Err(e),
        }
    }

    fn __repr__(slf: &Bound<'_, Handle>) -> PyResult<String> {
        let py = slf.py();
        let name = if slf.is_instance_of::<TimerHandle>() {
            "TimerHandle"
        } else {
            "Handle"
        };
        let h = slf.get();
        let mut parts = Vec::new();
        if h.is_cancelled() {
            parts.push("cancelled".to_owned());
        }
        if !h.when.is_nan() {
            parts.push(format!("when={}", h.when));
        }
        let (cb, args) = {
            let r = h.refs.borrow(py)?;
            (
                r.callback.as_ref().map(|c| c.clone_ref(py)),
                r.args.as_ref().map(|a| a.clone_ref(py)),
            )
        };
        if let (Some(cb), Some(args)) = (cb, args) {
            let helpers = py.import("asyncio.format_helpers")?;
            let src = helpers.call_method1(intern!(py, "_format_callback_source"), (cb, args))?;
            parts.push(src.extract::<String>()?);
        }
        Ok(format!("<{name} {}>", parts.join(" ")))
    }
}

/// A `Handle` with a deadline, as returned by `call_later` and `call_at`.
#[pyclass(extends = Handle, module = "pyloop._pyloop", frozen)]
#[derive(Debug)]
pub struct TimerHandle {
    /// `call_at` was given an `int`: asyncio's `when()` gives back what it
    /// was given (aiohttp's timeouts pass `ceil(...)`, and its tests check
    /// the type).
    given_int: AtomicBool,
}

impl TimerHandle {
    pub(crate) fn new() -> Self {
        TimerHandle {
            given_int: AtomicBool::new(false),
        }
    }

    pub(crate) fn mark_given_int(&self) {
        self.given_int.store(true, Relaxed);
    }

    fn deadline(slf: &PyRef<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let when = slf.as_super().when;
        if slf.given_int.load(Relaxed) {
            // Integral and within f64's exact range: it came from an int.
            return Ok((when as i64).into_pyobject(py)?.into_any().unbind());
        }
        Ok(when.into_pyobject(py)?.into_any().unbind())
    }
}

#[pymethods]
impl TimerHandle {
    /// The absolute deadline, in `loop.time()` seconds, as `call_at` was
    /// given it (an `int` stays one).
    fn when(slf: PyRef<'_, Self>) -> PyResult<Py<PyAny>> {
        Self::deadline(&slf)
    }

    /// The same, as asyncio's `TimerHandle` attribute (which aiohttp's
    /// tests read).
    #[getter]
    fn _when(slf: PyRef<'_, Self>) -> PyResult<Py<PyAny>> {
        Self::deadline(&slf)
    }

    fn __lt__(slf: PyRef<'_, Self>, other: PyRef<'_, Self>) -> bool {
        slf.as_super().when < other.as_super().when
    }

    fn __le__(slf: PyRef<'_, Self>, other: PyRef<'_, Self>) -> bool {
        slf.as_super().when <= other.as_super().when
    }

    fn __gt__(slf: PyRef<'_, Self>, other: PyRef<'_, Self>) -> bool {
        slf.as_super().when > other.as_super().when
    }

    fn __ge__(slf: PyRef<'_, Self>, other: PyRef<'_, Self>) -> bool {
        slf.as_super().when >= other.as_super().when
    }
}

pub(crate) fn closed_error() -> PyErr {
    PyRuntimeError::new_err("Event loop is closed")
}
