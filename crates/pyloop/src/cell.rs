//! `GilCell`: the interior mutability of the loop's and the handles' state.
//!
//! pyo3's own borrow checking of a `#[pyclass]` is an atomic counter: two
//! locked instructions per borrow, and the loop takes several per callback.
//! On a CPython with the GIL, every access here happens with the GIL held
//! (each method takes a `Python` token), so no two threads can touch a cell
//! at once, and taking and releasing the GIL orders their accesses: a plain
//! `Cell` counter is enough to catch a re-entrant borrow, as pyo3's does.
//!
//! On a free-threaded CPython (`Py_GIL_DISABLED`: 3.14t, the first that
//! pyo3 0.30 builds for), there is no such lock, and the cell is a
//! `Mutex`: threads that call
//! `call_soon_threadsafe` at once wait for each other instead of failing.
//! A re-entrant borrow, which the GIL build refuses with RuntimeError, would
//! wait for itself there; so the loop drops what it takes out of a cell
//! (which may run finalizers) after the borrow ends, and the suites, run on
//! both builds, would show a re-entrant borrow as that RuntimeError or as a
//! hang.

#[cfg(not(Py_GIL_DISABLED))]
fn in_use() -> pyo3::PyErr {
    pyo3::exceptions::PyRuntimeError::new_err(
        "pyloop: the event loop's state is in use (a re-entrant call)",
    )
}

#[cfg(not(Py_GIL_DISABLED))]
mod imp {
    use std::cell::{Cell, UnsafeCell};
    use std::ops::{Deref, DerefMut};

    use pyo3::prelude::*;

    pub(crate) struct GilCell<T> {
        /// 0: free; n > 0: n shared borrows; -1: one mutable borrow.
        flag: Cell<isize>,
        value: UnsafeCell<T>,
    }

    // SAFETY: every access to `flag` and `value` goes through a method that
    // takes a `Python` token, so the calling thread holds the GIL: accesses
    // from different threads never overlap, and the GIL's hand-over orders
    // them. (`peek` is for `__traverse__`, which CPython calls with the GIL
    // held.) Free-threaded builds use the other implementation.
    unsafe impl<T: Send> Sync for GilCell<T> {}

    impl<T> GilCell<T> {
        pub(crate) fn new(value: T) -> Self {
            Self {
                flag: Cell::new(0),
                value: UnsafeCell::new(value),
            }
        }

        pub(crate) fn borrow<'a>(&'a self, _py: Python<'_>) -> PyResult<Ref<'a, T>> {
            let f = self.flag.get();
            if f < 0 {
                return Err(super::in_use());
            }
            self.flag.set(f + 1);
            Ok(Ref { cell: self })
        }

        pub(crate) fn borrow_mut<'a>(&'a self, _py: Python<'_>) -> PyResult<RefMut<'a, T>> {
            if self.flag.get() != 0 {
                return Err(super::in_use());
            }
            self.flag.set(-1);
            Ok(RefMut { cell: self })
        }

        /// For `__traverse__`, which CPython calls with the GIL held but
        /// gives no token: the value, unless it is being changed.
        pub(crate) fn peek(&self) -> Option<Ref<'_, T>> {
            let f = self.flag.get();
            if f < 0 {
                return None;
            }
            self.flag.set(f + 1);
            Some(Ref { cell: self })
        }

        /// For `__clear__`, likewise.
        /// With the cell owned exclusively (in `Drop`): no borrow needed.
        pub(crate) fn get_mut(&mut self) -> &mut T {
            self.value.get_mut()
        }

        pub(crate) fn peek_mut(&self) -> Option<RefMut<'_, T>> {
            if self.flag.get() != 0 {
                return None;
            }
            self.flag.set(-1);
            Some(RefMut { cell: self })
        }
    }

    pub(crate) struct Ref<'a, T> {
        cell: &'a GilCell<T>,
    }

    impl<T> Deref for Ref<'_, T> {
        type Target = T;
        fn deref(&self) -> &T {
            // SAFETY: a shared borrow is registered in `flag`: no mutable one
            // exists until it ends.
            unsafe { &*self.cell.value.get() }
        }
    }

    impl<T> Drop for Ref<'_, T> {
        fn drop(&mut self) {
            self.cell.flag.set(self.cell.flag.get() - 1);
        }
    }

    pub(crate) struct RefMut<'a, T> {
        cell: &'a GilCell<T>,
    }

    impl<T> Deref for RefMut<'_, T> {
        type Target = T;
        fn deref(&self) -> &T {
            // SAFETY: this is the only borrow (flag is -1).
            unsafe { &*self.cell.value.get() }
        }
    }

    impl<T> DerefMut for RefMut<'_, T> {
        fn deref_mut(&mut self) -> &mut T {
            // SAFETY: this is the only borrow (flag is -1).
            unsafe { &mut *self.cell.value.get() }
        }
    }

    impl<T> Drop for RefMut<'_, T> {
        fn drop(&mut self) {
            self.cell.flag.set(0);
        }
    }
}

#[cfg(Py_GIL_DISABLED)]
mod imp {
    use std::sync::{Mutex, MutexGuard, TryLockError};

    use pyo3::prelude::*;
    use pyo3::sync::MutexExt;

    pub(crate) struct GilCell<T>(Mutex<T>);

    pub(crate) type Ref<'a, T> = MutexGuard<'a, T>;
    pub(crate) type RefMut<'a, T> = MutexGuard<'a, T>;

    impl<T> GilCell<T> {
        pub(crate) fn new(value: T) -> Self {
            Self(Mutex::new(value))
        }

        /// Waits for the lock detached from the interpreter, so that a
        /// thread waiting here never holds up a stop-the-world pause (the
        /// collector's) that the thread holding the lock may be waiting for.
        fn lock(&self, py: Python<'_>) -> MutexGuard<'_, T> {
            // A panic while the state was held cannot leave it half-changed
            // in a way that matters more than losing the loop: carry on.
            self.0
                .lock_py_attached(py)
                .unwrap_or_else(|e| e.into_inner())
        }

        pub(crate) fn borrow<'a>(&'a self, py: Python<'_>) -> PyResult<Ref<'a, T>> {
            Ok(self.lock(py))
        }

        pub(crate) fn borrow_mut<'a>(&'a self, py: Python<'_>) -> PyResult<RefMut<'a, T>> {
            Ok(self.lock(py))
        }

        pub(crate) fn peek(&self) -> Option<Ref<'_, T>> {
            match self.0.try_lock() {
                Ok(g) => Some(g),
                Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
                Err(TryLockError::WouldBlock) => None,
            }
        }

        pub(crate) fn peek_mut(&self) -> Option<RefMut<'_, T>> {
            self.peek()
        }

        /// With the cell owned exclusively (in `Drop`): no lock needed.
        pub(crate) fn get_mut(&mut self) -> &mut T {
            self.0.get_mut().unwrap_or_else(|e| e.into_inner())
        }
    }
}

pub(crate) use imp::{GilCell, RefMut};

impl<T: std::fmt::Debug> std::fmt::Debug for GilCell<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.peek() {
            Some(v) => v.fmt(f),
            None => f.write_str("<in use>"),
        }
    }
}

/// The borrow rules, with no interpreter: these run under Miri (which
/// checks every access through the `UnsafeCell` against Rust's aliasing
/// rules) as well as in `cargo test`:
///
/// ```sh
/// cargo +nightly miri test -p pyloop --lib cell::
/// ```
///
/// (The free-threaded build's cell is a `Mutex`, with no `unsafe`.)
#[cfg(all(test, not(Py_GIL_DISABLED)))]
mod tests {
    use super::GilCell;
    use pyo3::Python;

    fn py() -> Python<'static> {
        // SAFETY: the token is a marker; nothing here calls into CPython
        // (a refused borrow makes a lazy error that is only dropped).
        unsafe { Python::assume_attached() }
    }

    #[test]
    fn shared_borrows_exclude_a_mutable_one_and_end_on_drop() {
        let cell = GilCell::new(vec![1, 2, 3]);
        let a = cell.borrow(py()).expect("free");
        let b = cell.peek().expect("shared with shared");
        assert_eq!(a.len() + b.len(), 6);
        assert!(cell.peek_mut().is_none());
        drop((a, b));
        {
            let mut m = cell.borrow_mut(py()).expect("free again");
            m.push(4);
            assert!(cell.peek().is_none());
            assert!(cell.borrow(py()).is_err());
            assert!(cell.borrow_mut(py()).is_err());
        }
        let mut m = cell.peek_mut().expect("free after the mutable borrow");
        m.push(5);
        drop(m);
        assert_eq!(format!("{cell:?}"), "[1, 2, 3, 4, 5]");
        let mut cell = cell;
        cell.get_mut().clear();
        assert_eq!(cell.borrow(py()).expect("free").len(), 0);
    }

    #[test]
    fn a_reference_taken_through_a_borrow_stays_valid_while_others_read() {
        let cell = GilCell::new(String::from("loop"));
        let r1 = cell.borrow(py()).expect("free");
        let s: &str = &r1;
        let r2 = cell.borrow(py()).expect("shared");
        assert_eq!(s, &*r2);
        drop(r2);
        assert_eq!(s, "loop");
    }
}
