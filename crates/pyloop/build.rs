//! Tells the crate which CPython it is built for: `Py_GIL_DISABLED` on a
//! free-threaded one, where `cell::GilCell` is a mutex (see there).

fn main() {
    pyo3_build_config::use_pyo3_cfgs();
}
