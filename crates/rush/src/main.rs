//! The `rush` binary: hands its arguments to the library and exits with
//! the status it returns.
//!
//! `no_main`: the C runtime calls `main` directly, skipping the Rust
//! runtime's start-up (it reads `/proc/self/maps` to place a stack guard,
//! installs SIGSEGV/SIGBUS handlers on an alternate stack and ignores
//! SIGPIPE, which the shell would then have to undo). That is about 17
//! system calls saved on every `rush -c`. `std::env::args_os` still works:
//! glibc hands the arguments to Rust's initialiser.
#![no_main]

use std::os::unix::ffi::OsStringExt;

#[unsafe(no_mangle)]
extern "C" fn main(
    _argc: std::ffi::c_int,
    _argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    let run = || {
        let mut args = std::env::args_os();
        let arg0 = args
            .next()
            .map(OsStringExt::into_vec)
            .unwrap_or_else(|| b"rush".to_vec());
        rush::main_with(arg0, args.collect())
    };
    // A bug must not unwind into C: report it and exit like a failed shell.
    let status = std::panic::catch_unwind(run).unwrap_or(70);
    // Flush nothing: rush writes with write(2), unbuffered.
    status & 0xff
}
