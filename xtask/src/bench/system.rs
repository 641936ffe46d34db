//! What a benchmark system is: its peers and its drivers.

use crate::peers::Peer;

/// A benchmark driver.
#[derive(Debug, Clone)]
pub enum Driver {
    /// A binary of a workspace package, built with `--release`, and the
    /// (package, binary) pairs it measures, built beside it.
    Cargo {
        package: &'static str,
        bin: &'static str,
        also: &'static [(&'static str, &'static str)],
    },
    /// A Python script, run in a venv under `target/pyloop/` that has the
    /// release build of pyloop and `packages` installed.
    Python {
        script: &'static str,
        packages: &'static [&'static str],
    },
    /// A Node script, run with the release build of termio's addon in
    /// `node/` (built first).
    Node { script: &'static str },
}

/// One system's benchmarks.
#[derive(Debug, Clone)]
pub struct System {
    pub name: &'static str,
    /// What the system is measured against.
    pub peers: Vec<Peer>,
    pub drivers: Vec<Driver>,
}
