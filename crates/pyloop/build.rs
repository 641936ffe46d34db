//! Tells the crate which CPython it is built for: `Py_GIL_DISABLED` on a
//! free-threaded one, where `cell::GilCell` is a mutex (see there).
//!
//! Built by cargo alone (`cargo test`, not maturin), pyo3 links the
//! `libpython` of the CPython it found, and the unit tests that embed an
//! interpreter (`fastcall`'s boundary) run it: pyo3-build-config puts its
//! directory on the run path, so that the loader finds that library and not
//! whichever one the system has, if any. maturin's build of the extension
//! module (which sets `PYO3_BUILD_EXTENSION_MODULE`) links no `libpython`
//! and gets no run path: the wheels carry no path of the machine that built
//! them.

fn main() {
    pyo3_build_config::use_pyo3_cfgs();
    pyo3_build_config::add_libpython_rpath_link_args();
}
