//! `cargo xtask sanitize`: the code that holds `unsafe` blocks, run where a
//! checker sees each access it makes.
//!
//! - `miri`: the modules Miri can interpret (no system calls, no FFI):
//!   termio's ring, pyloop's `GilCell`, and the committed fuzz inputs of the
//!   pure targets (greppy's index read from bytes and its frame decoder,
//!   termio's ring, UTF-8 framing and plan detector: `fuzz/tests/miri.rs`).
//! - `address`: the rest (system calls, FFI) under AddressSanitizer: the
//!   unit and integration tests of rush, fast-rm, greppy, termio and
//!   latency (whose integration tests run the sanitized binaries), and
//!   pyloop's pytest suite on CPython 3.11 with the extension built with
//!   ASan (the runtime preloaded from the C compiler, as CPython itself is
//!   not built with it).
//! - `thread`: pyloop's pytest suite on a free-threaded CPython built with
//!   ThreadSanitizer (`./configure --disable-gil --with-thread-sanitizer`:
//!   built here from the pinned source as `source_python.rs` builds 3.14t,
//!   or given with `--python`), the extension built with TSan, with
//!   CPython's own suppressions (`Tools/tsan/suppressions_free_threading.txt`,
//!   or `--suppressions`). Not in `all`: the CPython build alone takes
//!   about 20 minutes here.
//!
//! Both need the nightly toolchain (installed when missing, with Miri and
//! the standard library's source). Not part of `cargo xtask test`: the
//! sanitized build compiles every crate and the standard library again.

use crate::cmd::{self, cargo};
use anyhow::{Context, Result, bail};
use std::path::PathBuf;
use std::process::Command;

use crate::SANITIZE_TARGET as TARGET;

/// Which checker: `miri`, `address`, both (`all`), or `thread`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Checker {
    Miri,
    Address,
    All,
    Thread,
}

/// `thread`'s CPython and suppressions file.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ThreadArgs {
    pub python: Option<PathBuf>,
    pub suppressions: Option<PathBuf>,
}

pub fn run(which: Checker, thread: &ThreadArgs) -> Result<()> {
    nightly(&["miri", "rust-src"])?;
    let mut failed = Vec::new();
    let mut step = |name: &str, r: Result<()>| {
        if let Err(e) = r {
            eprintln!("{name}: {e:#}");
            failed.push(name.to_string());
        }
    };
    if matches!(which, Checker::Miri | Checker::All) {
        step("miri", miri());
    }
    if matches!(which, Checker::Address | Checker::All) {
        step("address (Rust tests)", address_rust());
        step("address (pyloop)", address_pyloop());
    }
    if which == Checker::Thread {
        step("thread (pyloop)", thread_pyloop(thread));
    }
    if !failed.is_empty() {
        bail!("sanitizer runs failed: {}", failed.join(", "));
    }
    Ok(())
}

/// The nightly toolchain with `components`, installed when missing.
fn nightly(components: &[&str]) -> Result<()> {
    let has = |c: &str| {
        cmd::output(Command::new("rustup").args(["component", "list", "--toolchain", "nightly"]))
            .is_some_and(|out| {
                out.lines()
                    .any(|l| l.starts_with(c) && l.ends_with("(installed)"))
            })
    };
    if components.iter().all(|c| has(c)) {
        return Ok(());
    }
    cmd::run(
        Command::new("rustup")
            .args(["toolchain", "install", "nightly", "--profile", "minimal"])
            .arg("--component")
            .arg(components.join(",")),
    )
    .context("the sanitizers and Miri need the nightly toolchain")
}

fn miri() -> Result<()> {
    let miri = |args: &[&str]| {
        let mut c = cargo();
        c.current_dir(crate::root())
            .args(["+nightly", "miri", "test"])
            .args(args)
            // The fuzz inputs are read from the source tree.
            .env("MIRIFLAGS", "-Zmiri-disable-isolation");
        c
    };
    cmd::run(&mut miri(&["-p", "termio", "--lib", "ring::"]))?;
    cmd::run(&mut miri(&["-p", "pyloop", "--lib", "cell::"]))?;
    cmd::run(&mut miri(&["-p", "fuzz", "--test", "miri"]))
}

/// `ASAN_OPTIONS` for every sanitized run: leaks are not checked (the
/// shell and CPython keep what they allocate until exit, by design), nor
/// is the one-definition rule (tree-sitter's grammars each define a
/// `map`, which the linker keeps apart).
const ASAN_OPTIONS: &str = "detect_leaks=0:detect_odr_violation=0";

/// Tests left out under AddressSanitizer, and why: they measure the
/// memory the process holds, which the sanitizer's shadow memory and
/// quarantine multiply, or hold work to a time bound that its slowdown
/// (with a debug build) exceeds on a loaded machine.
const ADDRESS_SKIP_RUST: &[(&str, &str)] = &[
    ("an_empty_tree_costs_next_to_no_memory", "measures RSS"),
    ("the_daemon_gives_back_what_a_build_used", "measures RSS"),
    (
        "a_stalled_client_keeps_memory_bounded_and_others_receive",
        "measures RSS",
    ),
    (
        "a_burst_of_frames_is_decoded_in_linear_time",
        "a 10 s bound on decoding 1M frames",
    ),
];

/// pytest's tests left out under a sanitizer (`address`, `thread`), and why.
const SKIP_PYTEST: &[(&str, &str, &str)] = &[
    (
        "address",
        "tests/test_loop.py::test_a_loop_runs_under_valgrind",
        "valgrind cannot run a process with the ASan runtime preloaded",
    ),
    (
        "thread",
        "tests/test_loop.py::test_a_loop_runs_under_valgrind",
        "valgrind cannot run a process with the TSan runtime",
    ),
    (
        "thread",
        "tests/test_loop.py::test_sock_recv_of_a_large_size_maps_no_memory_per_call",
        "counts mmap calls, which the TSan runtime makes too",
    ),
    (
        "thread",
        "tests/test_tls.py::test_reading_small_records_maps_no_memory_per_record",
        "counts mmap calls, which the TSan runtime makes too",
    ),
    (
        "thread",
        "tests/test_loop.py::test_uvicorn_serves_on_pyloop",
        "starts uvicorn within a time limit that TSan's slowdown nearly reaches (63 s alone, a timeout under load)",
    ),
];

fn address_rust() -> Result<()> {
    let mut c = cargo();
    c.current_dir(crate::root())
        .args(["+nightly", "test", "-Zbuild-std", "--target", TARGET])
        .arg("--target-dir")
        .arg(crate::target_dir().join("address"))
        .args(["-p", "rush", "-p", "fast-rm", "-p", "greppy"])
        .args(["-p", "termio", "-p", "latency"])
        .args(["--lib", "--tests", "--no-fail-fast", "--"])
        .env("RUSTFLAGS", "-Zsanitizer=address")
        .env("ASAN_OPTIONS", ASAN_OPTIONS);
    for (test, why) in ADDRESS_SKIP_RUST {
        eprintln!("left out under ASan: {test} ({why})");
        c.args(["--skip", test]);
    }
    cmd::run(&mut c)
}

/// pyloop's pytest suite, with the tests `sanitizer` cannot run left out.
fn pytest(sanitizer: &str, py: &std::path::Path) -> Command {
    let mut c = Command::new(py.with_file_name("pytest"));
    c.current_dir(crate::root().join("python"))
        .args(["-q", "-p", "no:cacheprovider", "tests"]);
    for (_, test, why) in SKIP_PYTEST.iter().filter(|(s, ..)| *s == sanitizer) {
        eprintln!("left out under {sanitizer}: {test} ({why})");
        c.args(["--deselect", test]);
    }
    c
}

/// The C compiler's AddressSanitizer runtime, which an uninstrumented
/// CPython must load first for an instrumented extension to find it.
fn asan_runtime() -> Result<PathBuf> {
    let out = cmd::output(Command::new("cc").arg("-print-file-name=libasan.so"))
        .context("no C compiler to find libasan.so (apt install gcc)")?;
    let path = PathBuf::from(out.trim());
    if !path.is_absolute() || !path.exists() {
        bail!("the C compiler has no libasan.so (GCC's AddressSanitizer runtime)");
    }
    Ok(path)
}

fn address_pyloop() -> Result<()> {
    let runtime = asan_runtime()?;
    let python =
        crate::python::find("3.11").context("CPython 3.11 not found (pyenv install 3.11)")?;
    let py = crate::python::venv("address-3.11", &python, crate::python::TEST_PACKAGES)?;
    crate::python::install_pyloop_sanitized(&py, "address")?;
    cmd::run(
        pytest("address", &py)
            .env("LD_PRELOAD", runtime)
            .env("ASAN_OPTIONS", ASAN_OPTIONS),
    )
}

/// GCC's libtsan (which a CPython built by GCC links) predates LLVM's
/// `__tsan_memcpy`, `__tsan_memmove` and `__tsan_memset`, which rustc's
/// instrumentation calls: this preloaded library forwards them to the libc
/// functions, which the runtime intercepts and checks. With a runtime that
/// has them (clang's), the forwarding changes nothing.
const TSAN_MEM_SHIM: &str = "#include <string.h>
void *__tsan_memcpy(void *d, const void *s, size_t n) { return memcpy(d, s, n); }
void *__tsan_memmove(void *d, const void *s, size_t n) { return memmove(d, s, n); }
void *__tsan_memset(void *d, int c, size_t n) { return memset(d, c, n); }
";

fn thread_pyloop(args: &ThreadArgs) -> Result<()> {
    // By default, CPython's source at the pinned tag, built here with
    // ThreadSanitizer (about 20 minutes on two cores), and its suppressions.
    let (python, suppressions) = match &args.python {
        Some(p) => (p.clone(), args.suppressions.clone()),
        None => {
            let (p, s) = crate::source_python::cpython_tsan()?;
            (p, Some(args.suppressions.clone().unwrap_or(s)))
        }
    };
    let dir = crate::target_dir().join("thread");
    std::fs::create_dir_all(&dir)?;
    let source = dir.join("tsan-mem.c");
    std::fs::write(&source, TSAN_MEM_SHIM)?;
    let shim = dir.join("libtsan-mem.so");
    cmd::run(
        Command::new("cc")
            .args(["-O1", "-fno-builtin", "-shared", "-fPIC", "-o"])
            .arg(&shim)
            .arg(&source),
    )?;
    let py = crate::python::venv("thread", &python, crate::python::TEST_PACKAGES)?;
    crate::python::install_pyloop_sanitized(&py, "thread")?;
    // Reports go to standard error; the run fails (exit 66) if there is any.
    let mut options = String::from("halt_on_error=0 second_deadlock_stack=1");
    if let Some(s) = &suppressions {
        options.push_str(&format!(" suppressions={}", s.display()));
    }
    cmd::run(
        pytest("thread", &py)
            .env("LD_PRELOAD", &shim)
            .env("TSAN_OPTIONS", options),
    )
}
