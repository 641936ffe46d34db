//! The tools users would otherwise pick, installed where `cargo xtask bench`
//! can: pip into a private venv, `cargo install --root target/peers`, npm into
//! a private folder, `go install` into `target/peers/bin`, apt when running
//! as root. A peer that cannot be had is
//! reported on its row, never silently dropped.

use crate::cmd;
use serde::Serialize;
use std::path::PathBuf;
use std::process::Command;

/// How a peer is installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Install {
    /// Already on every machine (e.g. coreutils).
    System,
    /// A Debian package, installed only when running as root.
    Apt(&'static str),
    /// A PyPI package, into `target/peers/venv`.
    Pip(&'static str),
    /// A crates.io crate, with `cargo install --root target/peers`; the
    /// crate's name may be followed by more of `cargo install`'s words
    /// (`ripgrep --features pcre2`).
    Cargo(&'static str),
    /// An npm package with a program, into `target/peers/npm`.
    Npm(&'static str),
    /// An npm library (no program; drivers `require` it from
    /// `target/peers/npm/node_modules`), into `target/peers/npm`. Its
    /// version is its `package.json`'s.
    NpmLib(&'static str),
    /// Go packages (`module/cmd/name`), with `go install PKG@latest` into
    /// `target/peers/bin`.
    Go(&'static [&'static str]),
}

/// A peer: the program's name, how to get it, and how to ask its version.
#[derive(Debug, Clone)]
pub struct Peer {
    pub name: &'static str,
    pub program: &'static str,
    pub install: Install,
    /// Arguments that make the program print its version.
    pub version_args: &'static [&'static str],
}

/// Where a peer stands after `ensure`.
#[derive(Debug, Clone, Serialize)]
pub struct PeerStatus {
    pub name: String,
    /// The absolute program to run (an npm library's folder), when available.
    pub program: Option<PathBuf>,
    pub version: Option<String>,
    /// Why it is missing, when it is.
    pub missing: Option<String>,
}

/// The private folder peers install into.
pub fn peers_dir() -> PathBuf {
    crate::target_dir().join("peers")
}

/// Where an installed program would be found, private folders first.
fn locate(peer: &Peer) -> Option<PathBuf> {
    let private = match peer.install {
        Install::Pip(_) => Some(peers_dir().join("venv/bin").join(peer.program)),
        Install::Cargo(_) | Install::Go(_) => Some(peers_dir().join("bin").join(peer.program)),
        Install::Npm(_) => Some(peers_dir().join("npm/node_modules/.bin").join(peer.program)),
        Install::NpmLib(pkg) => {
            let manifest = peers_dir()
                .join("npm/node_modules")
                .join(pkg)
                .join("package.json");
            return manifest.is_file().then_some(manifest);
        }
        // A Debian package too new for this release may be built from its
        // source into the private folder.
        Install::System | Install::Apt(_) => Some(peers_dir().join("bin").join(peer.program)),
    };
    if let Some(p) = private.filter(|p| p.is_file()) {
        return Some(p);
    }
    // A peer that installs into the private folder is measured from there,
    // at the version it pins: a copy that happens to be on the PATH (apt's
    // rg 13 where the peer is rg 15) would change the peer between
    // machines.
    if matches!(
        peer.install,
        Install::Pip(_) | Install::Cargo(_) | Install::Go(_) | Install::Npm(_)
    ) {
        return None;
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(peer.program))
        .find(|p| p.is_file())
}

pub fn install(peer: &Peer) -> anyhow::Result<()> {
    let dir = peers_dir();
    std::fs::create_dir_all(&dir)?;
    match peer.install {
        Install::System => anyhow::bail!("{} is not on the PATH", peer.program),
        Install::Apt(pkg) => {
            // SAFETY: geteuid has no preconditions.
            if unsafe { libc::geteuid() } != 0 {
                anyhow::bail!("not root: install it with `apt-get install {pkg}`");
            }
            crate::cmd::apt_install(&[pkg])
        }
        Install::Pip(pkg) => {
            let venv = dir.join("venv");
            if !venv.join("bin/pip").is_file() {
                cmd::run(Command::new("python3").arg("-m").arg("venv").arg(&venv))?;
            }
            cmd::run(Command::new(venv.join("bin/pip")).args(["install", "-q", pkg]))
        }
        Install::Cargo(krate) => cmd::run(
            cmd::cargo()
                .args(["install", "--locked", "--root"])
                .arg(&dir)
                .args(krate.split_whitespace()),
        ),
        Install::Go(pkgs) => {
            for pkg in pkgs {
                let mut c = Command::new("go");
                c.arg("install")
                    .arg(format!("{pkg}@latest"))
                    .env("GOBIN", dir.join("bin"));
                cmd::run(&mut c).map_err(|e| {
                    anyhow::anyhow!(
                        "{e:#}; where the module proxy refuses it, build it from a \
                         checkout of its repository: `go build -o target/peers/bin/ \
                         ./cmd/...` for {pkgs:?}"
                    )
                })?;
            }
            Ok(())
        }
        Install::Npm(pkg) | Install::NpmLib(pkg) => cmd::run(
            Command::new("npm")
                .args(["install", "--no-audit", "--no-fund", "--prefix"])
                .arg(dir.join("npm"))
                .arg(pkg),
        ),
    }
}

/// The version of the Debian package a peer came from (for programs, like
/// dash, that cannot print their own).
fn package_version(peer: &Peer) -> Option<String> {
    let Install::Apt(pkg) = peer.install else {
        return None;
    };
    cmd::output(Command::new("dpkg-query").args(["-W", "-f=${Version}", pkg]))
        .filter(|v| !v.is_empty())
        .map(|v| format!("{pkg} {v}"))
}

/// [`ensure`], with the private install only: a program of the same name on
/// the PATH (a distribution's older release) does not stand in for it.
pub fn ensure_private(peer: &Peer) -> PeerStatus {
    if !peers_dir().join("bin").join(peer.program).is_file()
        && let Err(e) = install(peer)
    {
        return PeerStatus {
            name: peer.name.into(),
            program: None,
            version: None,
            missing: Some(format!("{e:#}")),
        };
    }
    ensure(peer)
}

/// Finds the peer, installing it if needed, and asks its version.
pub fn ensure(peer: &Peer) -> PeerStatus {
    let mut status = PeerStatus {
        name: peer.name.into(),
        program: None,
        version: None,
        missing: None,
    };
    let found = locate(peer).or_else(|| match install(peer) {
        Ok(()) => locate(peer),
        Err(e) => {
            status.missing = Some(format!("{e:#}"));
            None
        }
    });
    match found {
        Some(p) if matches!(peer.install, Install::NpmLib(_)) => {
            status.version = std::fs::read(&p)
                .ok()
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                .and_then(|v| v["version"].as_str().map(|v| format!("{} {v}", peer.name)))
                .or_else(|| Some("unknown".into()));
            status.program = p.parent().map(PathBuf::from);
        }
        Some(p) => {
            status.version = cmd::output(Command::new(&p).args(peer.version_args))
                .and_then(|v| v.lines().next().map(str::to_string))
                .filter(|v| !v.is_empty())
                .or_else(|| package_version(peer))
                .or_else(|| Some("unknown".into()));
            status.program = Some(p);
        }
        None if status.missing.is_none() => {
            status.missing = Some(format!("{} not found after install", peer.program));
        }
        None => {}
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A peer pinned to an install into target/peers is never taken from
    /// the PATH (Debian's rg 13 stood in for the pinned rg 15 once); a
    /// system or apt peer is.
    #[test]
    fn a_pinned_peer_is_not_taken_from_the_path() {
        let peer = |install| Peer {
            name: "sh",
            program: "sh",
            install,
            version_args: &[],
        };
        assert!(!peers_dir().join("bin/sh").exists());
        for pinned in [
            Install::Cargo("sh"),
            Install::Pip("sh"),
            Install::Go(&["sh"]),
            Install::Npm("sh"),
        ] {
            assert_eq!(locate(&peer(pinned)), None);
        }
        assert!(locate(&peer(Install::System)).is_some());
        assert!(locate(&peer(Install::Apt("dash"))).is_some());
    }

    #[test]
    fn a_system_program_is_found_with_its_version() {
        let sh = Peer {
            name: "sh",
            program: "sh",
            install: Install::System,
            version_args: &[],
        };
        let s = ensure(&sh);
        assert!(s.program.is_some(), "{s:?}");
        let ls = Peer {
            name: "ls",
            program: "ls",
            install: Install::System,
            version_args: &["--version"],
        };
        assert!(ensure(&ls).version.unwrap().contains("ls"));
    }

    #[test]
    fn a_missing_system_program_is_reported_not_hidden() {
        let p = Peer {
            name: "nope",
            program: "no-such-program-xyz",
            install: Install::System,
            version_args: &[],
        };
        let s = ensure(&p);
        assert!(s.program.is_none());
        assert!(s.missing.unwrap().contains("not on the PATH"));
    }

    /// An npm library is found by its package.json in the private folder,
    /// its version read from there, its folder given as the program.
    #[test]
    fn an_npm_library_is_found_with_its_package_version() {
        let pkg: &'static str =
            Box::leak(format!("xtask-test-lib-{}", std::process::id()).into_boxed_str());
        let dir = peers_dir().join("npm/node_modules").join(pkg);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("package.json"),
            r#"{"name":"x","version":"1.2.3"}"#,
        )
        .unwrap();
        let lib = Peer {
            name: "lib",
            program: pkg,
            install: Install::NpmLib(pkg),
            version_args: &[],
        };
        let s = ensure(&lib);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(s.version.as_deref(), Some("lib 1.2.3"), "{s:?}");
        assert_eq!(s.program.as_deref(), Some(dir.as_path()));
    }
}
