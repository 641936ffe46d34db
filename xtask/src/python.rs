//! Python for pyloop: finding CPython 3.11–3.14, private venvs under
//! `target/pyloop/`, and building and installing the pyloop wheel into them
//! with maturin (the same build `pip install ./python` runs).

use crate::cmd;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The CPython versions pyloop supports; "3.14t" is 3.14's free-threaded
/// build.
pub const VERSIONS: &[&str] = &["3.11", "3.12", "3.13", "3.14", "3.14t"];

/// What the tests need in a venv besides pyloop.
/// uvicorn: a real server that takes pyloop as its loop factory.
/// hypothesis: the schedules of tests/test_fuzz_transports.py.
pub const TEST_PACKAGES: &[&str] = &[
    "maturin>=1.7,<2",
    "pytest>=8",
    "uvicorn>=0.36",
    "hypothesis>=6",
];

/// Where the venvs and the interpreters xtask builds live.
pub fn dir() -> PathBuf {
    crate::pyloop_dir()
}

/// A CPython `minor` ("3.11"): pyenv's newest 3.11.x, else `python3.11` on
/// the PATH, else `python3` if it is that version, else (for the newest,
/// which a machine's pyenv may list but not be able to download) Debian's
/// build, unpacked under `target/pyloop` ([`crate::debian_python`]), and
/// for the free-threaded "3.14t" a build from CPython's source
/// ([`crate::source_python`]).
pub fn find(minor: &str) -> Option<PathBuf> {
    let exe = format!("python{minor}");
    if let Some(p) = find_pyenv(minor) {
        return Some(p);
    }
    if let Some(p) = which(&exe) {
        return Some(p);
    }
    let v = cmd::output(
        Command::new("python3").args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"]),
    );
    if v.as_deref() == Some(minor) {
        return which("python3");
    }
    if minor == crate::source_python::FREE_THREADED {
        return match crate::source_python::cpython() {
            Ok(p) => Some(p),
            Err(e) => {
                eprintln!("CPython {minor} from source: {e:#}");
                None
            }
        };
    }
    if minor != NEWEST {
        return None;
    }
    match crate::debian_python::cpython(minor) {
        Ok(p) => Some(p),
        Err(e) => {
            eprintln!("CPython {minor} from Debian: {e:#}");
            None
        }
    }
}

/// The newest CPython pyloop supports, which may come from Debian.
pub const NEWEST: &str = "3.14";

fn find_pyenv(minor: &str) -> Option<PathBuf> {
    let exe = format!("python{minor}");
    let pyenv_root = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pyenv")))?;
    let versions = pyenv_root.join("versions");
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir(&versions)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let patch = name.strip_prefix(minor)?.strip_prefix('.')?.parse().ok()?;
            let p = e.path().join("bin").join(&exe);
            p.is_file().then_some((patch, p))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, p)| p)
}

/// An exact CPython version ("3.11.7") from pyenv, or `python3` if it is it.
pub fn find_exact(version: &str) -> Option<PathBuf> {
    let minor = version.rsplit_once('.').map(|(m, _)| m)?;
    let exe = format!("python{minor}");
    let pyenv_root = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pyenv")))?;
    let p = pyenv_root
        .join("versions")
        .join(version)
        .join("bin")
        .join(exe);
    if p.is_file() {
        return Some(p);
    }
    let v = cmd::output(
        Command::new("python3").args(["-c", "import platform; print(platform.python_version())"]),
    )?;
    (v == version).then(|| which("python3")).flatten()
}

/// `program` on the PATH, skipping pyenv's shims (which fail for versions
/// that are installed but not selected).
fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|d| !d.ends_with("shims"))
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// A venv made from `python` at `target/pyloop/<name>`, with `packages`
/// installed. Returns the venv's interpreter.
pub fn venv(name: &str, python: &Path, packages: &[&str]) -> Result<PathBuf> {
    let venv = dir().join(name);
    let py = venv.join("bin/python");
    if !py.is_file() {
        std::fs::create_dir_all(dir())?;
        if crate::debian_python::is_ours(python) {
            crate::debian_python::venv(python, &venv)?;
        } else {
            cmd::run(Command::new(python).args(["-m", "venv"]).arg(&venv))?;
        }
    }
    if !packages.is_empty() {
        cmd::run(
            Command::new(&py)
                .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
                .args(packages),
        )?;
    }
    Ok(py)
}

/// Installs `package` into the venv of `py` from a built wheel only: never
/// built from source (uvloop's and rloop's sources need a toolchain, and a
/// free-threaded CPython may have no wheel of them at all). Fails if there
/// is no wheel for this interpreter.
pub fn install_wheel_only(py: &Path, package: &str) -> Result<()> {
    cmd::run(Command::new(py).args([
        "-m",
        "pip",
        "install",
        "-q",
        "--disable-pip-version-check",
        "--only-binary",
        package,
        package,
    ]))
}

/// Builds the pyloop wheel for the venv's interpreter and installs it there.
/// `release` builds with the release profile (what users get from pip);
/// otherwise the dev profile, which builds in a fraction of the time.
pub fn install_pyloop(py: &Path, release: bool) -> Result<()> {
    install_pyloop_built(py, release, None)
}

/// [`install_pyloop`] built with a sanitizer (`address`, `thread`): the
/// nightly toolchain, the standard library rebuilt with the same flag (a
/// sanitizer's flags must match in every crate), the dev profile.
pub fn install_pyloop_sanitized(py: &Path, sanitizer: &str) -> Result<()> {
    install_pyloop_built(py, false, Some(sanitizer))
}

fn install_pyloop_built(py: &Path, release: bool, sanitizer: Option<&str>) -> Result<()> {
    let venv = py
        .parent()
        .and_then(Path::parent)
        .context("venv interpreter has no venv")?;
    let wheels = venv.join("wheels");
    let _ = std::fs::remove_dir_all(&wheels);
    let maturin = venv.join("bin/maturin");
    let mut build = Command::new(&maturin);
    build
        .current_dir(crate::root().join("python"))
        .args(["build", "-q", "--interpreter"])
        .arg(py)
        .arg("--out")
        .arg(&wheels);
    if release {
        build.arg("--release");
    }
    if let Some(s) = sanitizer {
        build
            .env("RUSTUP_TOOLCHAIN", "nightly")
            .env("RUSTFLAGS", format!("-Zsanitizer={s}"))
            .env("CARGO_UNSTABLE_BUILD_STD", "std")
            .env("CARGO_TARGET_DIR", crate::target_dir().join(s))
            .args(["--target", crate::SANITIZE_TARGET]);
    }
    cmd::run(&mut build)?;
    let wheel = std::fs::read_dir(&wheels)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"));
    let Some(wheel) = wheel else {
        bail!("maturin built no wheel in {}", wheels.display());
    };
    cmd::run(
        Command::new(py)
            .args([
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                "--force-reinstall",
                "--no-deps",
            ])
            .arg(&wheel),
    )
}

/// The CPythons that pytest runs on with pyloop's dev build (debug
/// assertions, overflow checks): the oldest, whose code lacks 3.12's paths,
/// and the free-threaded one, whose code lacks the GIL's. The wheels step
/// runs the same suite on the release build for every one of `VERSIONS`;
/// a dev build for each of them too cost CI five minutes for no code path
/// the two do not already take.
pub const DEBUG_VERSIONS: &[&str] = &["3.11", "3.14t"];

/// `cargo xtask test`'s pyloop step: for each CPython of `DEBUG_VERSIONS`
/// found, build pyloop (dev profile) into a venv and run `python/tests` with
/// pytest.
pub fn test_pyloop() -> Result<()> {
    let mut ran = 0;
    let mut failed = Vec::new();
    for minor in DEBUG_VERSIONS {
        let Some(python) = find(minor) else {
            crate::run_state::note(format!(
                "CPython {minor} not found: pyloop is not tested on it (pyenv install {minor})"
            ));
            continue;
        };
        eprintln!("\n-- pyloop on CPython {minor} ({})", python.display());
        let step = || -> Result<()> {
            let py = venv(&format!("test-{minor}"), &python, TEST_PACKAGES)?;
            install_pyloop(&py, false)?;
            // bin/pytest, not `python -m pytest`, so that the source folder
            // python/pyloop (no extension module in it) is not on sys.path.
            let pytest = py.with_file_name("pytest");
            cmd::run(
                Command::new(pytest)
                    .current_dir(crate::root().join("python"))
                    .args(["-q", "-p", "no:cacheprovider", "tests"]),
            )
        };
        ran += 1;
        if let Err(e) = step() {
            eprintln!("{e:#}");
            failed.push(*minor);
        }
    }
    if ran == 0 {
        bail!(
            "neither CPython 3.11 nor 3.14t found: install one (pyenv) to test pyloop's dev build"
        );
    }
    if !failed.is_empty() {
        bail!("pyloop tests failed on CPython {}", failed.join(", "));
    }
    Ok(())
}

/// `cargo xtask test`'s free-threaded step: lints pyloop as built for a
/// free-threaded CPython 3.14t (`Py_GIL_DISABLED`), which this machine need
/// not have: pyo3 reads the interpreter's description from a config file
/// instead of asking one. So the code behind `cfg(Py_GIL_DISABLED)` (the
/// mutex `GilCell`, no untracking, no spare handles) keeps compiling, and
/// clean under clippy. pyo3 0.30 builds no free-threaded CPython before
/// 3.14.
pub fn lint_pyloop_free_threaded() -> Result<()> {
    let dir = crate::target_dir().join("pyloop/free-threaded-3.14t");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let config = dir.join("pyo3-config.txt");
    std::fs::write(
        &config,
        "implementation=CPython\nversion=3.14\nshared=true\nabi3=false\n\
         lib_name=python3.14t\npointer_width=64\nbuild_flags=Py_GIL_DISABLED\n\
         suppress_build_script_link_lines=false\n",
    )
    .with_context(|| format!("writing {}", config.display()))?;
    cmd::run(
        cmd::cargo()
            .args(["clippy", "-p", "pyloop", "--lib", "--", "-D", "warnings"])
            .env("PYO3_CONFIG_FILE", &config)
            .env("CARGO_TARGET_DIR", dir.join("target")),
    )
}

/// The MCP SDK the greppy test speaks through: the protocol's official
/// Python SDK, at the version the test was written against.
const MCP_SDK: &str = "mcp==2.3.0";

/// greppy's MCP server tested through the protocol's official Python SDK
/// (`crates/greppy/tests/mcp_sdk.py`): a client with roots, and the tools
/// kept to them. In a venv under `target/pyloop/greppy-mcp`.
pub fn test_greppy_mcp() -> Result<()> {
    let python = ["3.11", "3.12", "3.13"]
        .iter()
        .find_map(|m| find(m))
        .context("no CPython 3.11-3.13 for the MCP SDK")?;
    let py = venv("greppy-mcp", &python, &[MCP_SDK])?;
    cmd::run(&mut crate::run_state::test_build())?;
    cmd::run(
        Command::new(py)
            .arg(crate::root().join("crates/greppy/tests/mcp_sdk.py"))
            .arg(crate::target_dir().join("debug/greppy")),
    )
}
