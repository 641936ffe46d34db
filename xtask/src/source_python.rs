//! A free-threaded CPython (3.14t, `--disable-gil`), built here from
//! CPython's own source at a release tag: no registry this machine reaches
//! has a free-threaded build (pyenv cannot download, python-build-standalone
//! is out of reach, Debian has none), but one of them has the source.
//!
//! The Go module proxy serves any tag of a public repository as a module
//! version, so `github.com/python/cpython@v3.14.7+incompatible` is CPython's
//! tree at its `v3.14.7` tag. `go mod download` fetches it into a private
//! module cache under `target/`, checking it against Go's checksum database,
//! and this module checks it against the hash pinned below as well. It is
//! then configured and built with the machine's C compiler (two to five
//! minutes on two cores) and installed under
//! `target/pyloop/cpython-3.14t/root`. Nothing is installed on the machine.

use crate::cmd;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The `python::VERSIONS` name of the free-threaded build.
pub const FREE_THREADED: &str = "3.14t";

/// The tag built, as a Go module version, and the module hash Go reports
/// for it (`go mod download -json`'s `Sum`): a different tree is refused.
const MODULE: &str = "github.com/python/cpython";
const VERSION: &str = "v3.14.7+incompatible";
const SUM: &str = "h1:VAY+1Ox2/E68BOZZvT06dMumxgyvcJLzKZgCkEEZamY=";

/// Files of the tree that the build runs as programs: a module zip keeps no
/// file modes, so they are made executable again.
const SCRIPTS: &[&str] = &["configure", "install-sh", "config.guess", "config.sub"];

/// Prints the standard library modules, of those pyloop's tests and their
/// tools import, that the build left out (nothing when all are there).
const CHECK_MODULES: &str = "import importlib\n\
    names = ['ssl', '_ctypes', 'zlib', 'bz2', 'lzma', 'sqlite3', 'readline', '_uuid']\n\
    out = []\n\
    for n in names:\n    \
        try: importlib.import_module(n)\n    \
        except ImportError: out.append(n)\n\
    print(' '.join(out))";

/// The free-threaded interpreter, built on first use.
pub fn cpython() -> Result<PathBuf> {
    build(&format!("cpython-{FREE_THREADED}"), &[], &[])
}

/// CPython's suppressions for ThreadSanitizer on a free-threaded build (the
/// races it knows of in its own C code), kept beside the TSan build.
const TSAN_SUPPRESSIONS: &str = "Tools/tsan/suppressions_free_threading.txt";

/// The free-threaded interpreter built with ThreadSanitizer
/// (`--with-thread-sanitizer`), on first use, and CPython's suppressions
/// file for it: for `cargo xtask sanitize thread`.
pub fn cpython_tsan() -> Result<(PathBuf, PathBuf)> {
    let name = format!("cpython-{FREE_THREADED}-tsan");
    let python = build(&name, &["--with-thread-sanitizer"], &[TSAN_SUPPRESSIONS])?;
    let suppressions = crate::pyloop_dir()
        .join(name)
        .join(Path::new(TSAN_SUPPRESSIONS).file_name().unwrap_or_default());
    Ok((python, suppressions))
}

/// Builds the tagged tree under `target/pyloop/<name>` with `configure`'s
/// `--disable-gil` and `flags`, unless built already; `keep`: files of
/// the source tree copied beside the install before the tree is removed.
fn build(name: &str, flags: &[&str], keep: &[&str]) -> Result<PathBuf> {
    let root = crate::pyloop_dir().join(name);
    let python = root.join("root/bin/python3.14t");
    let marker = root.join("built");
    if python.is_file() && std::fs::read_to_string(&marker).ok().as_deref() == Some(VERSION) {
        return Ok(python);
    }
    eprintln!(
        "building CPython {FREE_THREADED} ({VERSION}) from source under {}",
        root.display()
    );
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).with_context(|| format!("creating {}", root.display()))?;
    let src = download(&root)?;
    for s in SCRIPTS {
        make_executable(&src.join(s))?;
    }
    let prefix = root.join("root");
    cmd::run(
        Command::new(src.join("configure"))
            .current_dir(&src)
            .arg("--disable-gil")
            .args(flags)
            .arg(format!("--prefix={}", prefix.display()))
            .arg("--without-ensurepip")
            .stdout(std::process::Stdio::null()),
    )
    .context("configuring CPython")?;
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    cmd::run(
        Command::new("make")
            .current_dir(&src)
            .arg(format!("-j{jobs}"))
            .stdout(std::process::Stdio::null()),
    )
    .context("building CPython")?;
    cmd::run(
        Command::new("make")
            .current_dir(&src)
            .arg("install")
            .stdout(std::process::Stdio::null()),
    )
    .context("installing CPython")?;
    if !python.is_file() {
        bail!("the CPython build made no {}", python.display());
    }
    let gil = cmd::output(Command::new(&python).args([
        "-c",
        "import sysconfig; print(sysconfig.get_config_var('Py_GIL_DISABLED'))",
    ]));
    if gil.as_deref() != Some("1") {
        bail!("{} is not a free-threaded build", python.display());
    }
    // CPython leaves out a module whose C library's headers are missing,
    // and says so only in the build's output: the tests need these.
    let missing = cmd::output(Command::new(&python).args(["-c", CHECK_MODULES]));
    if missing.as_deref() != Some("") {
        bail!(
            "the CPython build lacks modules the tests use: {} \
             (install the C headers: libssl-dev, libffi-dev, zlib1g-dev, libbz2-dev, \
             liblzma-dev, libsqlite3-dev, libreadline-dev, uuid-dev)",
            missing.unwrap_or_default()
        );
    }
    for k in keep {
        let from = src.join(k);
        let to = root.join(Path::new(k).file_name().unwrap_or_default());
        std::fs::copy(&from, &to).with_context(|| format!("copying {}", from.display()))?;
    }
    // The source and its build take about a gigabyte; the install is all
    // that is used from here on.
    let _ = std::fs::remove_dir_all(&src);
    std::fs::write(&marker, VERSION)?;
    Ok(python)
}

/// Downloads the tagged tree with `go mod download` into a module cache of
/// its own under `root`, checks its hash, and returns where it is (moved out
/// of the cache, which is then removed).
fn download(root: &Path) -> Result<PathBuf> {
    let cache = root.join("modcache");
    let out = Command::new("go")
        .current_dir(root)
        .args(["mod", "download", "-json"])
        .arg(format!("{MODULE}@{VERSION}"))
        .env("GOMODCACHE", &cache)
        // Writable files, so that the cache can be removed; no go.mod here.
        .env("GOFLAGS", "-modcacherw")
        .env("GO111MODULE", "on")
        .output()
        .context("running `go mod download` (Go fetches CPython's source)")?;
    let text = String::from_utf8_lossy(&out.stdout);
    let info: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("`go mod download` printed no JSON: {text}"))?;
    if let Some(e) = info.get("Error").and_then(|e| e.as_str()) {
        bail!("`go mod download {MODULE}@{VERSION}`: {e}");
    }
    if !out.status.success() {
        bail!(
            "`go mod download` failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let sum = info.get("Sum").and_then(|s| s.as_str()).unwrap_or("");
    if sum != SUM {
        bail!("CPython's source {VERSION} has hash {sum:?}, not the pinned {SUM}");
    }
    let tree = info
        .get("Dir")
        .and_then(|d| d.as_str())
        .context("`go mod download` named no folder")?;
    let src = root.join("src");
    std::fs::rename(tree, &src).with_context(|| format!("moving {tree} to {}", src.display()))?;
    std::fs::remove_dir_all(&cache).with_context(|| format!("removing {}", cache.display()))?;
    Ok(src)
}

fn make_executable(p: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut perm = std::fs::metadata(p)
        .with_context(|| format!("CPython's source has no {}", p.display()))?
        .permissions();
    perm.set_mode(perm.mode() | 0o755);
    std::fs::set_permissions(p, perm).with_context(|| format!("chmod {}", p.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_module_check_is_valid_python_and_names_what_is_missing() {
        // Any CPython runs it; the one the tests run with has these modules.
        let out = cmd::output(Command::new("python3").args(["-c", CHECK_MODULES]));
        assert_eq!(out.as_deref(), Some(""));
        let missing = CHECK_MODULES.replace("'_uuid'", "'_uuid', 'no_such_module'");
        let out = cmd::output(Command::new("python3").args(["-c", &missing]));
        assert_eq!(out.as_deref(), Some("no_such_module"));
    }
}
