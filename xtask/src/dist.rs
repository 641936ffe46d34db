//! `cargo xtask dist`: the packages users install, built into `target/dist`.
//!
//! pyloop: one manylinux2014 (glibc 2.17) wheel per supported CPython found
//! here, and the source distribution that `pip install` builds from. maturin
//! links the wheels with zig (PyPI's `ziglang`) against glibc 2.17's symbols,
//! so they install on any x86-64 Linux from 2014 on, not only on this
//! machine's glibc.
//!
//! The wheels are per version, not abi3: the limited C API has no
//! `PyContext_Enter`/`PyContext_Exit`, so every handle would run through
//! `Context.run`, a Python-level call, on the loop's hottest path.

use crate::cmd;
use crate::python::{self, VERSIONS};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What the dist venv needs: maturin, and zig for linking against an old glibc.
const DIST_PACKAGES: &[&str] = &["maturin>=1.7,<2", "ziglang>=0.13"];

/// The manylinux policy the wheels are built and checked for.
pub const MANYLINUX: &str = "manylinux2014";

pub fn dir() -> PathBuf {
    crate::target_dir().join("dist")
}

pub fn run(systems: &[String]) -> Result<()> {
    for s in systems {
        if s != "pyloop" {
            bail!("unknown system {s:?}: `cargo xtask dist` builds pyloop's wheels");
        }
    }
    let wheels = pyloop_wheels()?;
    for w in &wheels {
        println!("{}", w.display());
    }
    Ok(())
}

/// The supported CPythons found here, as (minor, interpreter).
fn interpreters() -> Vec<(&'static str, PathBuf)> {
    VERSIONS
        .iter()
        .filter_map(|m| python::find(m).map(|p| (*m, p)))
        .collect()
}

/// Builds pyloop's wheels (one per CPython found) and its sdist into
/// `target/dist`, replacing earlier ones. Returns the wheels, with the sdist
/// last.
pub fn pyloop_wheels() -> Result<Vec<PathBuf>> {
    let found = interpreters();
    let Some((_, first)) = found.first() else {
        bail!("no CPython 3.11 to 3.14 found: install one (pyenv or apt) to build wheels");
    };
    let py = python::venv("dist", first, DIST_PACKAGES)?;
    let bin = py.parent().context("venv interpreter has no bin folder")?;
    let out = dir();
    std::fs::create_dir_all(&out)?;
    for old in pyloop_files(&out)? {
        std::fs::remove_file(old)?;
    }
    // maturin finds zig as `python -m ziglang` through the PATH's python3,
    // which must be the dist venv's.
    let path = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))?;
    let mut build = Command::new(bin.join("maturin"));
    build
        .current_dir(crate::root().join("python"))
        .env("PATH", &path)
        .args([
            "build",
            "-q",
            "--release",
            "--zig",
            "--compatibility",
            MANYLINUX,
        ])
        .arg("--out")
        .arg(&out)
        .arg("--interpreter")
        .args(found.iter().map(|(_, p)| p));
    cmd::run(&mut build)?;
    let mut sdist = Command::new(bin.join("maturin"));
    sdist
        .current_dir(crate::root().join("python"))
        .args(["sdist", "--out"])
        .arg(&out);
    cmd::run(&mut sdist)?;
    let files = pyloop_files(&out)?;
    let wheels = files.iter().filter(|p| is_wheel(p)).count();
    if wheels != found.len() {
        bail!(
            "maturin built {wheels} wheels for {} interpreters in {}",
            found.len(),
            out.display()
        );
    }
    Ok(files)
}

fn is_wheel(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "whl")
}

/// pyloop's wheels and sdist in `dir`, wheels first, each group sorted.
fn pyloop_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.starts_with("pyloop-") && (name.ends_with(".whl") || name.ends_with(".tar.gz"))
        })
        .collect();
    files.sort_by_key(|p| (!is_wheel(p), p.clone()));
    Ok(files)
}

/// The wheel in `files` for CPython `minor` ("3.11" → a `cp311-cp311` tag,
/// "3.14t" → `cp314-cp314t`).
fn wheel_for<'a>(files: &'a [PathBuf], minor: &str) -> Option<&'a PathBuf> {
    let (version, abi) = match minor.strip_suffix('t') {
        Some(v) => (v, "t"),
        None => (minor, ""),
    };
    let tag = format!("-cp{0}-cp{0}{abi}-", version.replace('.', ""));
    files.iter().find(|p| {
        is_wheel(p)
            && p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.contains(&tag) && n.contains(MANYLINUX))
    })
}

/// `cargo xtask test`'s wheel step: builds the dist wheels, and for each
/// CPython installs its wheel into a new, empty venv (no maturin, no source
/// tree on the path) and runs pyloop's pytest suite against it there.
pub fn test_wheels() -> Result<()> {
    let files = pyloop_wheels()?;
    let mut failed = Vec::new();
    for (minor, python) in interpreters() {
        eprintln!("\n-- the {minor} wheel in a clean venv");
        let step = || -> Result<()> {
            let wheel = wheel_for(&files, minor)
                .with_context(|| format!("no {MANYLINUX} wheel for CPython {minor}"))?;
            let name = format!("wheel-{minor}");
            let _ = std::fs::remove_dir_all(python::dir().join(&name));
            let py = python::venv(&name, &python, &[])?;
            let mut install = Command::new(&py);
            install
                .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
                .arg(wheel)
                .args(
                    python::TEST_PACKAGES
                        .iter()
                        .filter(|p| !p.starts_with("maturin")),
                );
            cmd::run(&mut install)?;
            let venv = py.parent().and_then(Path::parent).context("no venv")?;
            let file = cmd::output(
                Command::new(&py)
                    .current_dir(venv)
                    .args(["-c", "import pyloop._pyloop as m; print(m.__file__)"]),
            )
            .context("pyloop does not import from the wheel")?;
            if !Path::new(&file).starts_with(venv) {
                bail!("pyloop imported from {file}, not from the wheel in the venv");
            }
            let dynamic = cmd::output(Command::new("readelf").args(["-d", &file]))
                .context("reading the extension's dynamic section with readelf")?;
            let leaks = machine_bound(&dynamic);
            if !leaks.is_empty() {
                bail!("the {minor} wheel's extension depends on the build machine: {leaks:?}");
            }
            cmd::run(
                Command::new(py.with_file_name("pytest"))
                    .current_dir(crate::root().join("python"))
                    .args(["-q", "-p", "no:cacheprovider", "tests"]),
            )
        };
        if let Err(e) = step() {
            eprintln!("{e:#}");
            failed.push(minor);
        }
    }
    if !failed.is_empty() {
        bail!("pyloop's wheel failed on CPython {}", failed.join(", "));
    }
    Ok(())
}

/// The entries of `readelf -d` output that tie an extension module to the
/// machine that built it: a run path (RPATH or RUNPATH), or a `libpython`
/// it needs (CPython gives an extension its symbols; the module links none).
fn machine_bound(readelf: &str) -> Vec<&str> {
    readelf
        .lines()
        .map(str::trim)
        .filter(|l| l.contains("(RPATH)") || l.contains("(RUNPATH)") || l.contains("[libpython"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_each_versions_manylinux_wheel() {
        let files: Vec<PathBuf> = [
            "pyloop-0.1.0-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
            "pyloop-0.1.0-cp312-cp312-linux_x86_64.whl",
            "pyloop-0.1.0-cp314-cp314-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
            "pyloop-0.1.0-cp314-cp314t-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
            "pyloop-0.1.0.tar.gz",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(wheel_for(&files, "3.11"), Some(&files[0]));
        // A wheel for this machine's glibc alone is not a dist wheel.
        assert_eq!(wheel_for(&files, "3.12"), None);
        assert_eq!(wheel_for(&files, "3.13"), None);
        // The free-threaded build's wheel and the other 3.14's are apart.
        assert_eq!(wheel_for(&files, "3.14"), Some(&files[2]));
        assert_eq!(wheel_for(&files, "3.14t"), Some(&files[3]));
    }

    #[test]
    fn a_run_path_or_libpython_binds_an_extension_to_its_build_machine() {
        let clean = "\
 0x0000000000000001 (NEEDED)             Shared library: [libc.so.6]
 0x000000000000000e (SONAME)             Library soname: [_pyloop.so]";
        assert!(machine_bound(clean).is_empty());
        let cargo_built = "\
 0x0000000000000001 (NEEDED)             Shared library: [libpython3.11.so.1.0]
 0x0000000000000001 (NEEDED)             Shared library: [libc.so.6]
 0x000000000000001d (RUNPATH)            Library runpath: [/opt/python/lib]
 0x000000000000000f (RPATH)              Library rpath: [/opt/python/lib]";
        let found = machine_bound(cargo_built);
        assert_eq!(found.len(), 3);
        assert!(found[0].ends_with("[libpython3.11.so.1.0]"));
        assert!(found[1].contains("RUNPATH") && found[2].contains("RPATH"));
    }
}
