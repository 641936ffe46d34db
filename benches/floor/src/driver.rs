//! What every Rust benchmark driver shares: its command line and the events it
//! writes for xtask.
//!
//! A driver is run by `cargo xtask bench` as
//! `DRIVER [--quick] [--scratch DIR] [--shm DIR]` and writes JSON-lines
//! [`latency::Event`]s on stdout. Anything else goes to stderr.

use latency::{Event, Run};
use serde::Deserialize;
use std::path::PathBuf;

/// A peer as xtask found it (from `XTASK_PEERS`, JSON).
#[derive(Debug, Clone, Deserialize)]
pub struct Peer {
    pub name: String,
    /// The program to run; `None` when the peer is missing.
    pub program: Option<PathBuf>,
    pub version: Option<String>,
    pub missing: Option<String>,
}

/// A driver's command line.
#[derive(Debug, Clone)]
pub struct Args {
    /// A short run for smoke checks.
    pub quick: bool,
    /// A scratch folder on the disk (not tmpfs).
    pub scratch: PathBuf,
    /// A scratch folder on tmpfs.
    pub shm: PathBuf,
    /// The peers, as xtask found and installed them.
    pub peers: Vec<Peer>,
    /// Our binaries as `cargo xtask install` builds them (from `XTASK_BINS`).
    pub bins: std::collections::BTreeMap<String, PathBuf>,
}

impl Args {
    pub fn parse() -> anyhow::Result<Self> {
        use lexopt::prelude::*;
        let mut args = Args {
            quick: false,
            scratch: std::env::temp_dir(),
            shm: PathBuf::from("/dev/shm"),
            peers: Vec::new(),
            bins: Default::default(),
        };
        if let Some(json) = std::env::var_os("XTASK_BINS") {
            args.bins = serde_json::from_str(&json.to_string_lossy())
                .map_err(|e| anyhow::anyhow!("XTASK_BINS: {e}"))?;
        }
        if let Some(json) = std::env::var_os("XTASK_PEERS") {
            args.peers = serde_json::from_str(&json.to_string_lossy())
                .map_err(|e| anyhow::anyhow!("XTASK_PEERS: {e}"))?;
        }
        let mut p = lexopt::Parser::from_env();
        while let Some(arg) = p.next()? {
            match arg {
                Long("quick") => args.quick = true,
                Long("scratch") => args.scratch = p.value()?.into(),
                Long("shm") => args.shm = p.value()?.into(),
                _ => return Err(arg.unexpected().into()),
            }
        }
        for dir in [&args.scratch, &args.shm] {
            std::fs::create_dir_all(dir)
                .map_err(|e| anyhow::anyhow!("cannot use {}: {e}", dir.display()))?;
        }
        Ok(args)
    }

    /// A peer that is available: its program and version.
    pub fn peer(&self, name: &str) -> Option<(PathBuf, String)> {
        let p = self.peers.iter().find(|p| p.name == name)?;
        Some((
            p.program.clone()?,
            p.version.clone().unwrap_or_else(|| "unknown".into()),
        ))
    }

    /// One of our binaries as users install it (`cargo xtask install`'s
    /// static build), or else the one built beside the driver.
    pub fn bin(&self, name: &str) -> anyhow::Result<PathBuf> {
        match self.bins.get(name) {
            Some(p) => Ok(p.clone()),
            None => self.sibling(name),
        }
    }

    /// A binary of this workspace, built beside the driver (`target/release`):
    /// the plain `cargo build --release` (dynamically linked) one.
    pub fn sibling(&self, bin: &str) -> anyhow::Result<PathBuf> {
        let exe = std::env::current_exe()?;
        let p = exe.parent().map(|d| d.join(bin)).unwrap_or_default();
        anyhow::ensure!(p.is_file(), "{} is not built", p.display());
        Ok(p)
    }

    /// `quick` if this is a quick run, else `full`.
    pub fn pick<T>(&self, quick: T, full: T) -> T {
        if self.quick { quick } else { full }
    }
}

pub fn plan(steps: u64) -> anyhow::Result<()> {
    Ok(Event::Plan { steps }.emit()?)
}

pub fn step(label: impl Into<String>) -> anyhow::Result<()> {
    Ok(Event::Step {
        label: label.into(),
    }
    .emit()?)
}

pub fn note(text: impl Into<String>) -> anyhow::Result<()> {
    Ok(Event::Note { text: text.into() }.emit()?)
}

/// Emits a finished run's records.
pub fn emit(run: &Run) -> anyhow::Result<()> {
    Event::emit_run(run)?;
    Ok(())
}
