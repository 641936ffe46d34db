//! What every Rust benchmark driver shares: its command line and the events it
//! writes for xtask.
//!
//! A driver is run by `cargo xtask bench` as
//! `DRIVER [--quick] [--scratch DIR] [--shm DIR]` and writes JSON-lines
//! [`latency::Event`]s on stdout. Anything else goes to stderr.

use latency::{Event, Run};
use std::path::PathBuf;

/// A driver's command line.
#[derive(Debug, Clone)]
pub struct Args {
    /// A short run for smoke checks.
    pub quick: bool,
    /// A scratch folder on the disk (not tmpfs).
    pub scratch: PathBuf,
    /// A scratch folder on tmpfs.
    pub shm: PathBuf,
}

impl Args {
    pub fn parse() -> anyhow::Result<Self> {
        use lexopt::prelude::*;
        let mut args = Args {
            quick: false,
            scratch: std::env::temp_dir(),
            shm: PathBuf::from("/dev/shm"),
        };
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
