//! What the tests and benchmarks need from the machine, in one list, and
//! the one place that installs it: `cargo xtask test` and `cargo xtask bench`
//! call [`ensure`] before they build anything, and `cargo xtask deps` runs it
//! alone.
//!
//! Each need is a Debian package and a probe: the same check the test that
//! uses it makes (a program on the PATH, a file, a Python module, Node's
//! version), so that "installed" means what the test means. Where a probe
//! fails, the packages are installed with one `apt-get update` and one
//! `apt-get install` when running as root; otherwise the run stops at once
//! with the command that would fix it.
//!
//! Invariant: every package a test names in its "apt-get install PKG"
//! message, and every program a test runs by name, is in [`DEPS`] (or is
//! in [`BASE`], what every Debian machine has). `tests/deps.rs` checks it
//! by reading the tests' sources.

use crate::cmd;
use anyhow::{Result, bail};
use std::path::Path;
use std::process::Command;

/// How to tell that a need is met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// A program on the PATH.
    Program(&'static str),
    /// A file that the tests read or run by its path.
    File(&'static str),
    /// The Debian package itself is installed (C headers and libraries,
    /// which nothing runs by name).
    Installed,
    /// `python` can import `module`.
    PythonModule {
        python: &'static str,
        module: &'static str,
    },
    /// `node` on the PATH, at least this major version.
    NodeAtLeast(u32),
}

/// One need: a Debian package, how to tell it is there, and who needs it.
#[derive(Debug, Clone, Copy)]
pub struct Dep {
    pub package: &'static str,
    pub probe: Probe,
    /// The systems whose tests need it ([`EVERY`] for all).
    pub tests: &'static [&'static str],
    /// The systems whose benchmarks need it ([`EVERY`] for all).
    pub bench: &'static [&'static str],
    pub why: &'static str,
}

/// Every system.
pub const EVERY: &[&str] = &["*"];

/// Programs that every Debian machine has (the essential packages and
/// their priority-required neighbours), the Rust toolchain that runs us,
/// and Python 2.7 for Oils' runner (pyenv, conformance only): no test
/// installs them.
pub const BASE: &[&str] = &[
    "sh",
    "bash",
    "cat",
    "cp",
    "rm",
    "mv",
    "ls",
    "yes",
    "true",
    "false",
    "echo",
    "timeout",
    "date",
    "tar",
    "env",
    "grep",
    "find",
    "which",
    "sleep",
    "apt-get",
    "dpkg-deb",
    "dpkg-query",
    "dpkg",
    "cargo",
    "rustc",
    "rustup",
    "pyenv",
    "python2",
];

/// Programs that a package of [`DEPS`] provides besides the one its probe
/// looks for.
pub const ALSO: &[(&str, &str)] = &[
    ("make", "build-essential"),
    ("readelf", "build-essential"),
    ("gcc", "build-essential"),
    ("umount", "mount"),
    ("node", "nodejs"),
];

/// Whether `program` is one every machine has or one a listed package
/// (or benchmark peer) provides.
pub fn provided(program: &str) -> bool {
    BASE.contains(&program)
        || ALSO.iter().any(|(p, _)| *p == program)
        || DEPS
            .iter()
            .any(|d| matches!(d.probe, Probe::Program(p) if p == program))
        || crate::bench::systems()
            .iter()
            .flat_map(|s| s.peers.iter())
            .any(|p| p.program == program && p.install != crate::peers::Install::System)
}

const PYLOOP: &[&str] = &["pyloop"];
const RUSH: &[&str] = &["rush"];
const GREPPY: &[&str] = &["greppy"];
const TERMIO: &[&str] = &["termio"];
const FAST_RM: &[&str] = &["fast-rm"];
const NONE: &[&str] = &[];

/// The C headers CPython's build needs for the standard library modules
/// pyloop's tests import (ssl, ctypes, zlib, bz2, lzma, sqlite3, readline,
/// uuid): the free-threaded 3.14t is built from source.
const CPYTHON_HEADERS: &[&str] = &[
    "libssl-dev",
    "zlib1g-dev",
    "libffi-dev",
    "libbz2-dev",
    "liblzma-dev",
    "libsqlite3-dev",
    "libreadline-dev",
    "uuid-dev",
];

/// What the tests and benchmarks need, beyond the peers that each
/// benchmark system declares (`bench::System::peers`, added by [`needed`]).
pub const DEPS: &[Dep] = &[
    Dep {
        package: "build-essential",
        probe: Probe::Program("cc"),
        tests: EVERY,
        bench: EVERY,
        why: "the C compiler and linker (and make, readelf) that cargo, pyloop's CPython build and node-gyp use",
    },
    Dep {
        package: "git",
        probe: Probe::Program("git"),
        tests: EVERY,
        bench: EVERY,
        why: "rush's tests complete git's commands in a real repository; reports name the revision",
    },
    Dep {
        package: "python3",
        probe: Probe::Program("python3"),
        tests: EVERY,
        bench: EVERY,
        why: "pyloop's venvs, greppy's Python client, termio's flood writer",
    },
    Dep {
        package: "python3-venv",
        probe: Probe::PythonModule {
            python: "python3",
            module: "ensurepip",
        },
        tests: PYLOOP,
        bench: EVERY,
        why: "the private venvs under target/ that pytest, maturin and the Python peers run in",
    },
    Dep {
        package: "bsdutils",
        probe: Probe::Program("script"),
        tests: &["fast-rm", "rush"],
        bench: NONE,
        why: "script(1) gives fast-rm's and rush's tests a real terminal",
    },
    Dep {
        package: "mount",
        probe: Probe::Program("mount"),
        tests: FAST_RM,
        bench: NONE,
        why: "fast-rm's --one-file-system tests mount a tmpfs",
    },
    Dep {
        package: "strace",
        probe: Probe::Program("strace"),
        tests: &["fast-rm", "rush", "pyloop"],
        bench: NONE,
        why: "tests that count system calls: no fork for rush -c, no sleeping waits, a question written whole",
    },
    Dep {
        package: "zsh",
        probe: Probe::Program("zsh"),
        tests: RUSH,
        bench: NONE,
        why: "rush's interactive tests run zsh beside it in a PTY",
    },
    Dep {
        package: "bash-completion",
        probe: Probe::File("/usr/share/bash-completion/bash_completion"),
        tests: RUSH,
        bench: NONE,
        why: "rush's tests source Debian's bash-completion, a real program no one here wrote",
    },
    Dep {
        package: "git",
        probe: Probe::File("/usr/share/bash-completion/completions/git"),
        tests: RUSH,
        bench: NONE,
        why: "git's own completion script, driven by rush's completion",
    },
    Dep {
        package: "ripgrep",
        probe: Probe::Program("rg"),
        tests: GREPPY,
        bench: NONE,
        why: "greppy's answers are compared with ripgrep's, byte for byte",
    },
    Dep {
        package: "python3-msgpack",
        probe: Probe::PythonModule {
            python: "/usr/bin/python3",
            module: "msgpack",
        },
        tests: GREPPY,
        bench: NONE,
        why: "greppy's Python client is tested with Debian's msgpack",
    },
    Dep {
        package: "valgrind",
        probe: Probe::Program("valgrind"),
        tests: PYLOOP,
        bench: NONE,
        why: "a loop runs under valgrind (it once segfaulted there)",
    },
    Dep {
        package: "patchelf",
        probe: Probe::Program("patchelf"),
        tests: PYLOOP,
        bench: PYLOOP,
        why: "CPython 3.14 from Debian unstable, unpacked under target/, pointed at its own libc",
    },
    Dep {
        package: "golang-go",
        probe: Probe::Program("go"),
        tests: PYLOOP,
        bench: &["pyloop", "greppy"],
        why: "fetches CPython's source for the free-threaded 3.14t; builds zoekt for greppy's benchmark",
    },
    Dep {
        package: "nodejs",
        probe: Probe::NodeAtLeast(20),
        tests: TERMIO,
        bench: TERMIO,
        why: "termio's Node package (Node 20 or newer)",
    },
    Dep {
        package: "npm",
        probe: Probe::Program("npm"),
        tests: TERMIO,
        bench: TERMIO,
        why: "@napi-rs/cli builds termio's addon; ws and playwright-core for its tests",
    },
    Dep {
        package: "chromium",
        probe: Probe::File("/usr/bin/chromium"),
        tests: TERMIO,
        bench: NONE,
        why: "termio's browser tests drive a real Chromium with playwright-core",
    },
];

/// What a run is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    Test,
    Bench,
}

/// A need of this run, with whether missing it stops the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    pub package: String,
    pub probe: Probe,
    pub why: String,
    /// A benchmark's peer: its row says so when it cannot be had, so a
    /// failed install does not stop the run.
    pub optional: bool,
}

/// The systems a test or bench argument names (a cargo package of a
/// system counts as the system; anything else needs only what every
/// system does).
fn system_of(arg: &str) -> &str {
    arg.strip_suffix("-bench").unwrap_or(arg)
}

/// The needs of `task` for `systems` (all when empty), each package once
/// per probe.
pub fn needed(task: Task, systems: &[String]) -> Vec<Need> {
    let wants = |users: &[&str]| {
        users == EVERY
            || systems.is_empty()
            || systems.iter().any(|s| users.contains(&system_of(s)))
    };
    let mut out: Vec<Need> = Vec::new();
    for dep in DEPS {
        let users = match task {
            Task::Test => dep.tests,
            Task::Bench => dep.bench,
        };
        if !users.is_empty() && wants(users) {
            push(&mut out, dep.package, dep.probe, dep.why, false);
        }
    }
    if task == Task::Bench {
        for system in crate::bench::systems() {
            if !wants(&[system.name]) {
                continue;
            }
            for peer in &system.peers {
                if let crate::peers::Install::Apt(pkg) = peer.install {
                    let why = format!("{}'s benchmark peer {}", system.name, peer.name);
                    push(&mut out, pkg, Probe::Program(peer.program), &why, true);
                }
            }
        }
    }
    if wants(PYLOOP) {
        for h in CPYTHON_HEADERS {
            let why = "C headers for CPython 3.14t, built from source";
            push(&mut out, h, Probe::Installed, why, false);
        }
    }
    out
}

/// Every Debian package named here, peers included.
pub fn known_packages() -> Vec<&'static str> {
    let mut out: Vec<&str> = DEPS.iter().map(|d| d.package).collect();
    out.extend(CPYTHON_HEADERS);
    for system in crate::bench::systems() {
        for peer in system.peers {
            if let crate::peers::Install::Apt(pkg) = peer.install {
                out.push(pkg);
            }
        }
    }
    out
}

fn push(out: &mut Vec<Need>, package: &str, probe: Probe, why: &str, optional: bool) {
    if let Some(n) = out
        .iter_mut()
        .find(|n| n.package == package && n.probe == probe)
    {
        n.optional &= optional;
        return;
    }
    out.push(Need {
        package: package.into(),
        probe,
        why: why.into(),
        optional,
    });
}

impl Probe {
    /// Whether the need is met on this machine.
    pub fn met(self, package: &str) -> bool {
        match self {
            Probe::Program(p) => cmd::on_path(p),
            Probe::File(f) => Path::new(f).is_file(),
            Probe::Installed => cmd::output(Command::new("dpkg-query").args([
                "-W",
                "-f=${db:Status-Status}",
                package,
            ]))
            .is_some_and(|s| s == "installed"),
            Probe::PythonModule { python, module } => Command::new(python)
                .args(["-c", &format!("import {module}")])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success()),
            Probe::NodeAtLeast(major) => node_major().is_some_and(|m| m >= major),
        }
    }

    /// What the probe looks for, for the table and the errors.
    pub fn describe(self) -> String {
        match self {
            Probe::Program(p) => format!("`{p}` on the PATH"),
            Probe::File(f) => f.to_string(),
            Probe::Installed => "the package".into(),
            Probe::PythonModule { python, module } => format!("`import {module}` in {python}"),
            Probe::NodeAtLeast(m) => format!("node {m} or newer"),
        }
    }
}

/// The major version of `node` on the PATH.
pub fn node_major() -> Option<u32> {
    let v = cmd::output(Command::new("node").arg("--version"))?;
    v.trim()
        .trim_start_matches('v')
        .split('.')
        .next()?
        .parse()
        .ok()
}

/// The needs not met here.
pub fn missing(needs: &[Need]) -> Vec<&Need> {
    needs.iter().filter(|n| !n.probe.met(&n.package)).collect()
}

/// The distinct packages of `needs`, in order.
fn packages<'a>(needs: impl IntoIterator<Item = &'a Need>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for n in needs {
        if !out.contains(&n.package.as_str()) {
            out.push(&n.package);
        }
    }
    out
}

/// The one command that installs `pkgs`.
pub fn install_command(pkgs: &[&str], root: bool) -> String {
    format!(
        "{}apt-get install -y {}",
        if root { "" } else { "sudo " },
        pkgs.join(" ")
    )
}

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// Checks every need of `task` for `systems` and installs what is missing
/// (root, Debian), or stops with the command that would. A benchmark peer
/// that cannot be installed is left for its row to report.
pub fn ensure(task: Task, systems: &[String]) -> Result<()> {
    let needs = needed(task, systems);
    let lacking = missing(&needs);
    if lacking.is_empty() {
        return Ok(());
    }
    let pkgs = packages(lacking.iter().copied());
    eprintln!("\n== what the {task:?} run needs and this machine lacks");
    for n in &lacking {
        eprintln!("  {:<18} {} ({})", n.package, n.probe.describe(), n.why);
    }
    if !cmd::on_path("apt-get") {
        bail!(
            "this is not a Debian or Ubuntu machine (no apt-get): install the equivalents of {}",
            pkgs.join(" ")
        );
    }
    if !is_root() {
        bail!(
            "missing packages; install them with:\n  {}",
            install_command(&pkgs, false)
        );
    }
    if cmd::apt_install(&pkgs).is_err() {
        // One package the release lacks fails the whole command: try each
        // alone, so that the others still come.
        for p in &pkgs {
            let _ = cmd::apt_install(&[p]);
        }
    }
    let still: Vec<&Need> = missing(&needs)
        .into_iter()
        .filter(|n| !n.optional)
        .collect();
    if !still.is_empty() {
        let lines: Vec<String> = still
            .iter()
            .map(|n| format!("  {}: {} ({})", n.package, n.probe.describe(), n.why))
            .collect();
        bail!(
            "still missing after `{}`:\n{}",
            install_command(&pkgs, true),
            lines.join("\n")
        );
    }
    Ok(())
}

/// `cargo xtask deps`: prints every need with its state; installs what is
/// missing unless `check`, where it exits non-zero instead.
pub fn run(check: bool, bench: bool, systems: &[String]) -> Result<()> {
    let mut tasks = vec![Task::Test];
    if bench {
        tasks.push(Task::Bench);
    }
    let mut needs: Vec<Need> = Vec::new();
    for t in &tasks {
        for n in needed(*t, systems) {
            push(&mut needs, &n.package, n.probe, &n.why, n.optional);
        }
    }
    let mut lacking = Vec::new();
    for n in &needs {
        let ok = n.probe.met(&n.package);
        println!(
            "{:>7}  {:<18} {:<48} {}{}",
            if ok { "ok" } else { "MISSING" },
            n.package,
            n.probe.describe(),
            n.why,
            if n.optional { " (optional)" } else { "" }
        );
        if !ok {
            lacking.push(n);
        }
    }
    if lacking.is_empty() {
        println!("nothing is missing");
        return Ok(());
    }
    let pkgs = packages(lacking.iter().copied());
    if check {
        bail!(
            "{} missing; `cargo xtask deps` installs them, or: {}",
            pkgs.len(),
            install_command(&pkgs, is_root())
        );
    }
    for t in tasks {
        ensure(t, systems)?;
    }
    println!("installed: {}", pkgs.join(" "));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_install_command_is_one_line_with_sudo_when_not_root() {
        assert_eq!(
            install_command(&["zsh", "ripgrep"], false),
            "sudo apt-get install -y zsh ripgrep"
        );
        assert_eq!(install_command(&["zsh"], true), "apt-get install -y zsh");
    }

    #[test]
    fn a_package_with_two_probes_is_installed_once() {
        // git: its program, and its completion script.
        let needs = needed(Task::Test, &["rush".into()]);
        let git: Vec<&Need> = needs.iter().filter(|n| n.package == "git").collect();
        assert_eq!(git.len(), 2, "{needs:?}");
        assert_eq!(packages(git).len(), 1);
    }

    #[test]
    fn probes_see_what_is_here_and_what_is_not() {
        assert!(Probe::Program("sh").met("dash"));
        assert!(!Probe::Program("no-such-program-xyz").met("x"));
        assert!(Probe::File("/bin/sh").met("dash"));
        assert!(!Probe::Installed.met("no-such-package-xyz"));
    }
}
