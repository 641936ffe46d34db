//! `call_soon`, `call_soon_threadsafe`, `create_future` and `create_task`
//! of the loop, and `write` of the socket transport, as plain C methods.
//!
//! Every task step calls `loop.call_soon(step, context=ctx)`, and every
//! future's done callback the same. pyo3's generated wrapper matches a
//! keyword by decoding its name to UTF-8 and comparing bytes, which costs
//! about 15 ns of a 450 ns task switch here. The two `call_soon` methods
//! are installed on `LoopCore` in place of pyo3's wrappers, as
//! `METH_FASTCALL | METH_KEYWORDS` methods that compare the one keyword
//! they take by pointer first. `create_future` (one per await of a future)
//! is a `METH_NOARGS` method, without pyo3's per-call bookkeeping, and
//! `create_task` (one per task; asyncio's is Python) a vectorcall method.
//! `transport.write(data)`, one per message a protocol sends, is a
//! vectorcall method of `SocketTransport`. The work itself is a Rust
//! function ([`LoopCore::call_soon_impl`],
//! [`LoopCore::call_soon_threadsafe_impl`], [`LoopCore::create_future`],
//! [`LoopCore::create_task`], [`SocketTransport::write`]).
//!
//! As at pyo3's boundaries, a panic becomes a `PanicException`: none
//! unwinds into Python.
//!
//! pyo3 does not know that a thread that enters here is attached (its
//! trampoline is not on the stack): a `Py` dropped on these paths would
//! have its decref put off to pyo3's pool, keeping the object alive. The
//! paths a successful call takes drop `Bound`s only.

use std::ffi::CStr;
use std::panic::{AssertUnwindSafe, catch_unwind};

use pyo3::PyClass;
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyTuple, PyType};

use crate::core::LoopCore;
use crate::transport::SocketTransport;

/// A `"context"` keyword string that is not the interned one: see `parse`.
static CONTEXT_KEY: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();

/// What `callback, *args, context=None` parse to.
type Parsed<'py> = (Bound<'py, PyAny>, Bound<'py, PyTuple>, Option<Py<PyAny>>);

/// The body both methods share.
type Body = for<'py> fn(
    &Bound<'py, LoopCore>,
    &Bound<'py, PyAny>,
    &Bound<'py, PyTuple>,
    Option<Py<PyAny>>,
) -> PyResult<Py<PyAny>>;

/// Parses a vectorcall's arguments as `name(callback, *args, context=None)`.
///
/// # Safety
/// `args` holds `nargs` positional arguments followed by one per name in
/// `kwnames` (a tuple of str, or NULL), as the vectorcall protocol gives.
unsafe fn parse<'py>(
    py: Python<'py>,
    name: &str,
    args: *const *mut ffi::PyObject,
    nargsf: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> PyResult<Parsed<'py>> {
    // SAFETY: the count the caller passed, with the offset flag masked off.
    let nargs = unsafe { ffi::PyVectorcall_NARGS(nargsf as usize) } as usize;
    // SAFETY: as the caller promises, `args` has `nargs` live references.
    let pos = unsafe { std::slice::from_raw_parts(args, nargs) };
    let mut callback = None;
    let mut context = None;
    if !kwnames.is_null() {
        // SAFETY: the vectorcall protocol's kwnames is a tuple of str.
        let names = unsafe { Borrowed::from_ptr(py, kwnames).cast_unchecked::<PyTuple>() };
        let interned = intern!(py, "context").as_ptr();
        let seen = CONTEXT_KEY
            .get(py)
            .map_or(std::ptr::null_mut(), |k| k.as_ptr());
        // What every task step and future callback passes: one keyword,
        // `context`, found by pointer without iterating the names.
        if nargs > 0 && names.len() == 1 {
            // SAFETY: a tuple of one str (checked just above).
            let key = unsafe { ffi::PyTuple_GET_ITEM(kwnames, 0) };
            if key == interned || key == seen {
                // SAFETY: the keyword's value follows the positional ones,
                // and the first positional is the callback.
                let (cb, ctx) = unsafe {
                    (
                        Bound::from_borrowed_ptr(py, *args),
                        Bound::from_borrowed_ptr(py, *args.add(nargs)),
                    )
                };
                return Ok((cb, args_tuple(py, &pos[1..])?, Some(ctx.unbind())));
            }
        }
        for (i, key) in names.iter().enumerate() {
            // SAFETY: the value of keyword i follows the positional ones.
            let v = unsafe { Bound::from_borrowed_ptr(py, *args.add(nargs + i)) };
            let p = key.as_ptr();
            let is = |lit: &CStr| key_is(&key, lit);
            if p == interned || p == seen {
                context = Some(v.unbind());
            } else if is(c"context") {
                // The first "context" key that is not the interned string
                // (asyncio's C tasks and futures pass their own) is kept,
                // so that it too compares by pointer from then on. Kept,
                // its address cannot be another string's.
                let _ = CONTEXT_KEY.set(py, key.clone().unbind());
                context = Some(v.unbind());
            } else if nargs == 0 && is(c"callback") {
                // `callback` may be named when no other argument follows it.
                callback = Some(v);
            } else if is(c"callback") {
                return Err(arg_error(name, ArgError::Twice("callback")));
            } else {
                return Err(arg_error(name, ArgError::Unknown(&key)));
            }
        }
    }
    let (callback, rest) = match (pos.split_first(), callback) {
        // SAFETY: borrowed references the caller holds for the call.
        (Some((first, rest)), _) => (unsafe { Bound::from_borrowed_ptr(py, *first) }, rest),
        (None, Some(cb)) => (cb, &[][..]),
        (None, None) => {
            return Err(arg_error(name, ArgError::Missing("callback")));
        }
    };
    Ok((callback, args_tuple(py, rest)?, context))
}

/// The callback's arguments as a tuple: made directly (pyo3's
/// `PyTuple::new` takes an iterator, with checks and a panic path that
/// cost more than these few pointers do).
fn args_tuple<'py>(py: Python<'py>, items: &[*mut ffi::PyObject]) -> PyResult<Bound<'py, PyTuple>> {
    if items.is_empty() {
        return Ok(PyTuple::empty(py));
    }
    // SAFETY: with the GIL held. PyTuple_New returns a new tuple of
    // `items.len()` empty slots, or NULL with an exception set; each slot
    // is filled once, with a new reference to a live object (the caller's
    // borrowed arguments).
    unsafe {
        let t = Bound::from_owned_ptr_or_err(py, ffi::PyTuple_New(items.len() as ffi::Py_ssize_t))?;
        for (i, &p) in items.iter().enumerate() {
            ffi::Py_INCREF(p);
            ffi::PyTuple_SET_ITEM(t.as_ptr(), i as ffi::Py_ssize_t, p);
        }
        Ok(t.cast_into_unchecked())
    }
}

/// Runs `body` for a vectorcall on `slf`, turning an error or a panic into
/// a raised exception and NULL.
///
/// # Safety
/// Called by CPython through a method descriptor of `LoopCore`, with the
/// GIL held: `slf` is a `LoopCore` (or a subclass's instance), and the
/// arguments follow the vectorcall protocol.
unsafe fn enter(
    name: &str,
    body: Body,
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargsf: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    let work = |slf: &Bound<'_, LoopCore>| {
        // SAFETY: as this function's caller promises.
        let (callback, rest, context) = unsafe { parse(slf.py(), name, args, nargsf, kwnames) }?;
        body(slf, &callback, &rest, context).map(Py::into_ptr)
    };
    // SAFETY: as this function's caller promises.
    unsafe { boundary(slf, work) }
}

/// The boundary every method here runs its work inside: `work` gets the
/// loop, and its result, error or panic becomes what CPython takes (a new
/// reference, or NULL with the exception raised; a panic as a
/// `PanicException`).
///
/// # Safety
/// Called by CPython through a method descriptor of `T`, with the GIL
/// held: `slf` is a `T` (or a subclass's instance).
#[inline(always)]
unsafe fn boundary<T: PyClass>(
    slf: *mut ffi::PyObject,
    work: impl FnOnce(&Bound<'_, T>) -> PyResult<*mut ffi::PyObject>,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls methods with the thread attached.
    let py = unsafe { Python::assume_attached() };
    let res = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the descriptor checked that self is a T.
        let slf = unsafe { Bound::from_borrowed_ptr(py, slf).cast_into_unchecked::<T>() };
        work(&slf)
    }));
    let err = match res {
        Ok(Ok(v)) => return v,
        Ok(Err(e)) => e,
        Err(payload) => pyo3::panic::PanicException::new_err(panic_message(&*payload)),
    };
    err.restore(py);
    std::ptr::null_mut()
}

/// `loop.create_future()`, as a `METH_NOARGS` method: a future per await
/// is made here, and pyo3's wrapper (its thread-local count of attached
/// calls, read and written per call) cost more than the work.
///
/// # Safety
/// Called by CPython through LoopCore's method descriptor, with the GIL
/// held: `slf` is a `LoopCore` (or a subclass's instance).
unsafe extern "C" fn create_future(
    slf: *mut ffi::PyObject,
    _noargs: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: as this function's caller promises.
    unsafe { boundary(slf, |slf| LoopCore::create_future(slf).map(Bound::into_ptr)) }
}

/// `loop.create_task(coro, *, name=None, context=None)` (from Python 3.14
/// on `create_task(coro, **kwargs)`), as a `METH_FASTCALL | METH_KEYWORDS`
/// method: asyncio's is a Python method, a frame (and another for its
/// `_check_closed`) per task.
///
/// # Safety
/// Called by CPython through LoopCore's method descriptor, with the GIL
/// held: `slf` is a `LoopCore` (or a subclass's instance), and the
/// arguments follow the vectorcall protocol.
unsafe extern "C" fn create_task(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargsf: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    let work = |slf: &Bound<'_, LoopCore>| {
        let py = slf.py();
        // SAFETY: the count the caller passed, with the offset flag masked.
        let nargs = unsafe { ffi::PyVectorcall_NARGS(nargsf as usize) } as usize;
        if nargs > 1 {
            return Err(arg_error("create_task", ArgError::TooMany(nargs)));
        }
        // SAFETY: as the caller promises, `args` has `nargs` live references.
        let mut coro = (nargs == 1).then(|| unsafe { Bound::from_borrowed_ptr(py, *args) });
        let (mut name, mut context) = (None, None);
        // From Python 3.14 on, asyncio's `create_task(coro, **kwargs)` hands
        // every keyword to the task factory or to `Task` (`eager_start`
        // among them), not only `name` and `context`.
        #[cfg(Py_3_14)]
        if !kwnames.is_null() {
            // SAFETY: the vectorcall protocol's kwnames is a tuple of str.
            let names = unsafe { Borrowed::from_ptr(py, kwnames).cast_unchecked::<PyTuple>() };
            let kwargs = pyo3::types::PyDict::new(py);
            for (i, key) in names.iter().enumerate() {
                // SAFETY: the value of keyword i follows the positional ones.
                let v = unsafe { Bound::from_borrowed_ptr(py, *args.add(nargs + i)) };
                if key_is(&key, c"coro") {
                    if coro.is_some() {
                        return Err(arg_error("create_task", ArgError::Twice("coro")));
                    }
                    coro = Some(v);
                } else {
                    kwargs.set_item(key, v)?;
                }
            }
            let Some(coro) = coro else {
                return Err(arg_error("create_task", ArgError::Missing("coro")));
            };
            return LoopCore::create_task_with(slf, &coro, &kwargs).map(Bound::into_ptr);
        }
        if !kwnames.is_null() {
            // SAFETY: the vectorcall protocol's kwnames is a tuple of str.
            let names = unsafe { Borrowed::from_ptr(py, kwnames).cast_unchecked::<PyTuple>() };
            for (i, key) in names.iter().enumerate() {
                // SAFETY: the value of keyword i follows the positional ones.
                let v = unsafe { Bound::from_borrowed_ptr(py, *args.add(nargs + i)) };
                let slot = if key.is(intern!(py, "name")) || key_is(&key, c"name") {
                    &mut name
                } else if key.is(intern!(py, "context")) || key_is(&key, c"context") {
                    &mut context
                } else if key_is(&key, c"coro") {
                    if coro.is_some() {
                        return Err(arg_error("create_task", ArgError::Twice("coro")));
                    }
                    &mut coro
                } else {
                    return Err(arg_error("create_task", ArgError::Unknown(&key)));
                };
                *slot = Some(v);
            }
        }
        let Some(coro) = coro else {
            return Err(arg_error("create_task", ArgError::Missing("coro")));
        };
        // `name=None` and `context=None` are as if not given.
        let name = name.filter(|n| !n.is_none());
        let context = context.filter(|c| !c.is_none());
        LoopCore::create_task(slf, &coro, name, context).map(Bound::into_ptr)
    };
    // SAFETY: as this function's caller promises.
    unsafe { boundary(slf, work) }
}

/// What is wrong with a call's arguments, for [`arg_error`].
enum ArgError<'a, 'py> {
    /// The argument came by position and by keyword.
    Twice(&'a str),
    /// A keyword the method does not take.
    Unknown(&'a Bound<'py, PyAny>),
    /// The required argument was not given.
    Missing(&'a str),
    /// This many positional arguments, where the method takes one.
    TooMany(usize),
}

/// The `TypeError` for a call of `func` with such arguments, worded as
/// CPython words it for a function of Python's.
fn arg_error(func: &str, e: ArgError<'_, '_>) -> PyErr {
    PyTypeError::new_err(match e {
        ArgError::Twice(arg) => format!("{func}() got multiple values for argument '{arg}'"),
        ArgError::Unknown(key) => format!("{func}() got an unexpected keyword argument '{key}'"),
        ArgError::Missing(arg) => {
            format!("{func}() missing 1 required positional argument: '{arg}'")
        }
        ArgError::TooMany(n) => format!("{func}() takes 1 positional argument but {n} were given"),
    })
}

/// Whether keyword `key` (a str) is `lit`, compared by its characters.
fn key_is(key: &Bound<'_, PyAny>, lit: &CStr) -> bool {
    // SAFETY: a str (a vectorcall keyword name), and a NUL-terminated
    // ASCII literal.
    unsafe { ffi::PyUnicode_CompareWithASCIIString(key.as_ptr(), lit.as_ptr()) == 0 }
}

/// The message of a panic's payload: `panic!`'s text, as pyo3 gives it at
/// its own boundaries.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic in pyloop".to_owned())
}

/// One of the two methods: its name and its body.
trait Method {
    const NAME: &'static str;
    const BODY: Body;
}

struct CallSoon;
impl Method for CallSoon {
    const NAME: &'static str = "call_soon";
    const BODY: Body = LoopCore::call_soon_impl;
}

struct CallSoonThreadsafe;
impl Method for CallSoonThreadsafe {
    const NAME: &'static str = "call_soon_threadsafe";
    const BODY: Body = LoopCore::call_soon_threadsafe_impl;
}

/// The C function of method `M`.
unsafe extern "C" fn method<M: Method>(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargsf: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls this through LoopCore's method descriptor.
    unsafe { enter(M::NAME, M::BODY, slf, args, nargsf, kwnames) }
}

/// `transport.write(data)`, as a vectorcall method of `SocketTransport`: a
/// server makes one per response, and pyo3's wrapper (arguments matched
/// against a description, its per-call bookkeeping) cost about as much as
/// the write's own checks and copy into the buffer. `data` may be named,
/// as asyncio's transports allow.
///
/// # Safety
/// Called by CPython through SocketTransport's method descriptor, with the
/// GIL held: `slf` is a `SocketTransport`, and the arguments follow the
/// vectorcall protocol.
unsafe extern "C" fn transport_write(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargsf: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    let work = |t: &Bound<'_, SocketTransport>| {
        let py = t.py();
        // SAFETY: the count the caller passed, with the offset flag masked.
        let nargs = unsafe { ffi::PyVectorcall_NARGS(nargsf as usize) } as usize;
        let nkw = if kwnames.is_null() {
            0
        } else {
            // SAFETY: the vectorcall protocol's kwnames is a tuple of str.
            unsafe { ffi::PyTuple_GET_SIZE(kwnames) as usize }
        };
        if nargs > 1 {
            return Err(arg_error("write", ArgError::TooMany(nargs)));
        }
        for i in 0..nkw {
            // SAFETY: kwnames is a tuple of nkw str.
            let key = unsafe { Borrowed::from_ptr(py, ffi::PyTuple_GET_ITEM(kwnames, i as _)) };
            if !key_is(&key, c"data") {
                return Err(arg_error("write", ArgError::Unknown(&key)));
            }
            if nargs + i > 0 {
                return Err(arg_error("write", ArgError::Twice("data")));
            }
        }
        if nargs + nkw == 0 {
            return Err(arg_error("write", ArgError::Missing("data")));
        }
        // SAFETY: one argument, by position or keyword, is at args[0].
        let data = unsafe { Bound::from_borrowed_ptr(py, *args) };
        SocketTransport::write(t, &data).map(|()| py.None().into_ptr())
    };
    // SAFETY: as this function's caller promises.
    unsafe { boundary(slf, work) }
}

#[cfg(not(Py_3_14))]
const CREATE_TASK_DOC: &CStr = c"create_task($self, coro, *, name=None, context=None)\n--\n\n\
    Schedules the coroutine as a task of this loop, made by the task factory \
    if one is set, and returns it.";
#[cfg(Py_3_14)]
const CREATE_TASK_DOC: &CStr = c"create_task($self, coro, **kwargs)\n--\n\n\
    Schedules the coroutine as a task of this loop, made by the task factory \
    if one is set (given the keywords), else by asyncio.Task (name, context, \
    eager_start), and returns it.";

/// A method to install: its name, its docstring (with the signature line
/// `inspect` reads), its C function and its calling convention.
type MethodDef = (&'static CStr, &'static CStr, ffi::PyMethodDefPointer, i32);

/// Installs the methods above on `LoopCore` and `SocketTransport`, in
/// place of pyo3's wrappers of the same names.
pub(crate) fn install(py: Python<'_>) -> PyResult<()> {
    let fast = ffi::METH_FASTCALL | ffi::METH_KEYWORDS;
    let core: [MethodDef; 4] = [
        (
            c"call_soon",
            c"call_soon($self, callback, *args, context=None)\n--\n\n\
              Arranges for callback to be called soon, in the given context \
              or a copy of the current one.",
            ffi::PyMethodDefPointer {
                PyCFunctionFastWithKeywords: method::<CallSoon>,
            },
            fast,
        ),
        (
            c"call_soon_threadsafe",
            c"call_soon_threadsafe($self, callback, *args, context=None)\n--\n\n\
              Like call_soon(), from any thread: wakes the loop if it sleeps.",
            ffi::PyMethodDefPointer {
                PyCFunctionFastWithKeywords: method::<CallSoonThreadsafe>,
            },
            fast,
        ),
        (
            c"create_future",
            c"create_future($self, /)\n--\n\n\
              An asyncio.Future attached to this loop.",
            ffi::PyMethodDefPointer {
                PyCFunction: create_future,
            },
            ffi::METH_NOARGS,
        ),
        (
            c"create_task",
            CREATE_TASK_DOC,
            ffi::PyMethodDefPointer {
                PyCFunctionFastWithKeywords: create_task,
            },
            fast,
        ),
    ];
    let transport: [MethodDef; 1] = [(
        c"write",
        c"write($self, data)\n--\n\n\
          Writes the bytes-like data: now, at the end of the loop's \
          iteration, or when the socket can take it.",
        ffi::PyMethodDefPointer {
            PyCFunctionFastWithKeywords: transport_write,
        },
        fast,
    )];
    install_on(&py.get_type::<LoopCore>(), &core)?;
    install_on(&py.get_type::<SocketTransport>(), &transport)
}

/// Puts `methods` on `ty`, with signatures that `inspect.signature` reads.
fn install_on(ty: &Bound<'_, PyType>, methods: &[MethodDef]) -> PyResult<()> {
    let py = ty.py();
    for &(name, doc, meth, flags) in methods {
        // The descriptor keeps a pointer to its definition for as long as
        // the type lives: the definition is leaked, once per module load.
        let def = Box::leak(Box::new(ffi::PyMethodDef {
            ml_name: name.as_ptr(),
            ml_meth: meth,
            ml_flags: flags,
            ml_doc: doc.as_ptr(),
        }));
        // SAFETY: a live type object and a definition that outlives it;
        // returns a new reference or NULL with an exception set.
        let descr = unsafe {
            Bound::from_owned_ptr_or_err(py, ffi::PyDescr_NewMethod(ty.as_type_ptr(), def))
        }
        .map_err(|e| PyRuntimeError::new_err(format!("installing {name:?}: {e}")))?;
        ty.setattr(name.to_string_lossy().as_ref(), descr)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::panic_message;
    use std::panic::catch_unwind;

    /// What a panic on the vectorcall paths says in its `PanicException`:
    /// the panic's own text, whether a literal or formatted.
    #[test]
    fn a_panic_becomes_its_message() {
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let literal = catch_unwind(|| panic!("a literal")).unwrap_err();
        let n = 3;
        let formatted = catch_unwind(|| panic!("formatted {n}")).unwrap_err();
        let other = catch_unwind(|| std::panic::panic_any(7_u8)).unwrap_err();
        std::panic::set_hook(hook);
        assert_eq!(panic_message(&*literal), "a literal");
        assert_eq!(panic_message(&*formatted), "formatted 3");
        assert_eq!(panic_message(&*other), "panic in pyloop");
    }
}

#[cfg(test)]
mod boundary_tests {
    use super::boundary;
    use pyo3::ffi;
    use pyo3::prelude::*;
    #[cfg(not(Py_3_12))]
    use std::ptr::null_mut;

    #[pyclass]
    struct Probe;

    /// A panic inside a method's work reaches Python as a `PanicException`
    /// carrying the panic's text, and the method returns NULL: no unwind
    /// crosses into CPython.
    #[test]
    fn a_panic_in_the_work_becomes_a_panic_exception() {
        Python::initialize();
        Python::attach(|py| {
            let probe = Bound::new(py, Probe).unwrap();
            let hook = std::panic::take_hook();
            std::panic::set_hook(Box::new(|_| {}));
            // SAFETY: the thread is attached, and `probe` is a Probe.
            let ret = unsafe {
                boundary::<Probe>(probe.as_ptr(), |_| -> PyResult<*mut ffi::PyObject> {
                    panic!("the work broke")
                })
            };
            std::panic::set_hook(hook);
            assert!(ret.is_null());
            // Read raw: pyo3's `PyErr::take` resumes the panic when it
            // fetches a PanicException, as it would for a caller in Rust.
            #[cfg(Py_3_12)]
            // SAFETY: the thread is attached and an exception is set: this
            // hands over a new reference to it.
            let value = unsafe { Bound::from_owned_ptr(py, ffi::PyErr_GetRaisedException()) };
            #[cfg(not(Py_3_12))]
            // SAFETY: the thread is attached and an exception is set; each
            // out-pointer receives a new reference or NULL, owned below.
            let value = unsafe {
                let (mut ty, mut value, mut tb) = (null_mut(), null_mut(), null_mut());
                ffi::PyErr_Fetch(&mut ty, &mut value, &mut tb);
                ffi::PyErr_NormalizeException(&mut ty, &mut value, &mut tb);
                drop(Bound::<PyAny>::from_owned_ptr_or_opt(py, ty));
                drop(Bound::<PyAny>::from_owned_ptr_or_opt(py, tb));
                Bound::<PyAny>::from_owned_ptr(py, value)
            };
            assert!(value.is_instance_of::<pyo3::panic::PanicException>());
            assert_eq!(value.to_string(), "the work broke");
        });
    }
}
