//! A CPython that neither pyenv nor the PATH has (3.14 here), from Debian's
//! own build in the unstable suite of the Debian mirror this machine already
//! uses: the package registry the machine has, where python.org and
//! python-build-standalone may be out of reach.
//!
//! Nothing is installed on the machine. apt-get runs with a private state
//! folder and only downloads; the packages are unpacked under
//! `target/pyloop/debian-cpython-<minor>/`, with the C library and the other
//! libraries the interpreter was built against (unstable's are newer than a
//! stable machine's), and the interpreter is pointed at them with patchelf.
//! Its venvs, the extension modules it loads and the programs it starts then
//! work as with any other CPython.

use crate::cmd;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What the interpreter needs from unstable, besides `python<minor>-minimal`,
/// `libpython<minor>-minimal`, `libpython<minor>-stdlib` and its test suite
/// (`libpython<minor>-testsuite`): the C library it
/// was linked against, the libraries of the standard library's extension
/// modules, and pip's wheel for its venvs.
const LIBRARIES: &[&str] = &[
    "libc6",
    "libgcc-s1",
    "libssl3t64",
    "libffi8",
    "libexpat1",
    "zlib1g",
    "libbz2-1.0",
    "liblzma5",
    "libzstd1",
    "libsqlite3-0",
    "libreadline8t64",
    "libncursesw6",
    "libtinfo6",
    "libuuid1",
    "libmpdec4",
    "python3-pip-whl",
];

/// The folder the interpreter for `minor` is unpacked into.
fn dir(minor: &str) -> PathBuf {
    crate::pyloop_dir().join(format!("debian-cpython-{minor}"))
}

/// Whether `python` is an interpreter this module unpacked.
pub fn is_ours(python: &Path) -> bool {
    python.starts_with(crate::pyloop_dir())
        && python.ancestors().any(|a| {
            a.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("debian-cpython-"))
        })
}

/// CPython `minor` ("3.14"), unpacked from Debian unstable on first use.
pub fn cpython(minor: &str) -> Result<PathBuf> {
    let root = dir(minor);
    let exe = root.join("usr/bin").join(format!("python{minor}"));
    let python = [
        format!("python{minor}-minimal"),
        format!("libpython{minor}-minimal"),
        format!("libpython{minor}-stdlib"),
        // Its own `test` package: `cargo xtask conformance pyloop --python
        // 3.14` runs its test_asyncio.
        format!("libpython{minor}-testsuite"),
    ];
    let packages: Vec<&str> = python
        .iter()
        .map(String::as_str)
        .chain(LIBRARIES.iter().copied())
        .collect();
    // The marker names the packages unpacked: a list that grew unpacks
    // again.
    let done = root.join("unpacked");
    let want = packages.join(" ");
    if std::fs::read_to_string(&done).is_ok_and(|d| d == want) && runs(&exe) {
        return Ok(exe);
    }
    for tool in ["apt-get", "dpkg-deb", "patchelf"] {
        if !cmd::on_path(tool) {
            bail!("{tool} is not installed (Debian's apt, dpkg and patchelf packages)");
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    let apt = root.join("apt");
    let debs = root.join("debs");
    for d in [
        apt.join("lists/partial"),
        apt.join("cache/archives/partial"),
        apt.join("parts"),
        debs.clone(),
    ] {
        std::fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
    }
    let mirror = mirror().context("no Debian mirror in this machine's apt sources")?;
    let keyring = Path::new("/usr/share/keyrings/debian-archive-keyring.gpg");
    let signed = if keyring.is_file() {
        format!("[signed-by={}] ", keyring.display())
    } else {
        String::new()
    };
    std::fs::write(
        apt.join("sources.list"),
        format!("deb {signed}{mirror} unstable main\n"),
    )?;
    std::fs::write(apt.join("status"), "")?;
    let apt_get = |args: &[&str]| {
        let mut c = Command::new("apt-get");
        c.current_dir(&debs).arg("-q");
        for (k, v) in [
            ("Dir::Etc::SourceList", apt.join("sources.list")),
            ("Dir::Etc::SourceParts", apt.join("parts")),
            ("Dir::State::Lists", apt.join("lists")),
            ("Dir::Cache", apt.join("cache")),
            ("Dir::State::status", apt.join("status")),
        ] {
            c.arg("-o").arg(format!("{k}={}", v.display()));
        }
        c.args(["-o", "Debug::NoLocking=1", "-o", "APT::Sandbox::User=root"]);
        c.args(args);
        c
    };
    cmd::run(&mut apt_get(&["update"]))?;
    let mut download = apt_get(&["download"]);
    download.args(&packages);
    cmd::run(&mut download)?;
    let unpacked = root.join("root");
    for deb in std::fs::read_dir(&debs)?
        .filter_map(Result::ok)
        .map(|e| e.path())
    {
        if deb.extension().is_some_and(|e| e == "deb") {
            cmd::run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&unpacked))?;
        }
    }
    let libs = unpacked.join("usr/lib/x86_64-linux-gnu");
    let bin = unpacked.join("usr/bin").join(format!("python{minor}"));
    cmd::run(
        Command::new("patchelf")
            .arg("--set-interpreter")
            .arg(libs.join("ld-linux-x86-64.so.2"))
            // An RPATH, not a RUNPATH: it also serves the libraries that
            // the extension modules loaded later need.
            .arg("--force-rpath")
            .arg("--set-rpath")
            .arg(&libs)
            .arg(&bin),
    )?;
    std::fs::create_dir_all(exe.parent().context("no bin folder")?)?;
    // The interpreter finds its standard library from where it lies, so it
    // stays in the unpacked tree; `exe` links to it.
    let _ = std::fs::remove_file(&exe);
    std::os::unix::fs::symlink(&bin, &exe)?;
    if !runs(&exe) {
        bail!(
            "Debian's CPython {minor} does not run here: {}",
            exe.display()
        );
    }
    let _ = std::fs::remove_dir_all(&debs);
    std::fs::write(&done, &want)?;
    Ok(exe)
}

/// Whether `exe` starts and has the modules pyloop's tests use.
fn runs(exe: &Path) -> bool {
    cmd::output(Command::new(exe).args(["-c", "import ssl, ctypes, sqlite3, venv"])).is_some()
}

/// A venv made from one of these interpreters: Debian's venv module takes
/// pip from a system folder, so the venv is made without it and pip is
/// installed there from Debian's pip wheel.
pub fn venv(python: &Path, venv: &Path) -> Result<()> {
    cmd::run(
        Command::new(python)
            .args(["-m", "venv", "--without-pip"])
            .arg(venv),
    )?;
    let root = python
        .ancestors()
        .find(|a| a.join("root").is_dir())
        .context("not an unpacked Debian CPython")?;
    let wheels = root.join("root/usr/share/python-wheels");
    let pip = std::fs::read_dir(&wheels)
        .with_context(|| format!("reading {}", wheels.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("pip-") && n.ends_with(".whl"))
        })
        .with_context(|| format!("no pip wheel in {}", wheels.display()))?;
    // A wheel is a zip that Python can run from: its pip installs itself.
    cmd::run(
        Command::new(venv.join("bin/python"))
            .arg(pip.join("pip"))
            .args(["install", "-q", "--disable-pip-version-check", "--no-index"])
            .arg(&pip),
    )
}

/// The machine's Debian mirror: the first `deb` source of its apt sources
/// that is not a security suite (one-line `sources.list` or deb822
/// `.sources` files).
fn mirror() -> Option<String> {
    let mut files = vec![PathBuf::from("/etc/apt/sources.list")];
    if let Ok(rd) = std::fs::read_dir("/etc/apt/sources.list.d") {
        let mut more: Vec<PathBuf> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
        more.sort();
        files.extend(more);
    }
    files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok().map(|t| (f.clone(), t)))
        .find_map(|(f, text)| {
            if f.extension().is_some_and(|e| e == "sources") {
                mirror_deb822(&text)
            } else {
                mirror_one_line(&text)
            }
        })
}

fn mirror_one_line(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("deb ")?.trim_start();
        // Options in brackets ("[arch=amd64 signed-by=…]") come first.
        let rest = match rest.strip_prefix('[') {
            Some(r) => &r[r.find(']')? + 1..],
            None => rest,
        };
        let mut words = rest.split_whitespace();
        let (uri, suite) = (words.next()?, words.next()?);
        (!suite.contains("security")).then(|| uri.to_string())
    })
}

fn mirror_deb822(text: &str) -> Option<String> {
    text.split("\n\n").find_map(|stanza| {
        let field = |name: &str| {
            stanza.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.trim()
                    .eq_ignore_ascii_case(name)
                    .then(|| v.trim().to_string())
            })
        };
        let types = field("Types")?;
        let suites = field("Suites")?;
        if !types.split_whitespace().any(|t| t == "deb") || suites.contains("security") {
            return None;
        }
        field("URIs")?.split_whitespace().next().map(str::to_string)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_mirror_in_either_format() {
        let deb822 = "Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\n\
                      Components: main\n\nTypes: deb\nURIs: http://mirror.example/debian-security\n\
                      Suites: bookworm-security\nComponents: main\n";
        assert_eq!(
            mirror_deb822(deb822).as_deref(),
            Some("http://mirror.example/debian")
        );
        let security_first = "Types: deb\nURIs: http://s.example/ds\nSuites: bookworm-security\n\n\
                              Types: deb-src deb\nURIs: http://m.example/d\nSuites: bookworm\n";
        assert_eq!(
            mirror_deb822(security_first).as_deref(),
            Some("http://m.example/d")
        );
        let one_line = "# comment\ndeb http://s.example/ds bookworm-security main\n\
                        deb [arch=amd64 signed-by=/k.gpg] http://m.example/d bookworm main\n";
        assert_eq!(
            mirror_one_line(one_line).as_deref(),
            Some("http://m.example/d")
        );
        assert_eq!(
            mirror_one_line("deb-src http://m.example/d bookworm main\n"),
            None
        );
    }
}
