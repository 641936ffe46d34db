//! `pyloop`: the event loop against asyncio's default loop, uvloop and rloop,
//! each in fresh processes, interleaved. The driver is Python
//! (`benches/pyloop/bench.py`); it runs in a private venv under
//! `target/pyloop/` with the release build of pyloop and the peers from PyPI.

use super::{Driver, System};
use crate::peers::{Install, Peer};

pub fn system() -> System {
    System {
        name: "pyloop",
        // The loops are Python packages, installed into the driver's venv
        // (the driver reports their versions and says which are missing),
        // as are the HTTP servers run on them; wrk loads the servers, and
        // valgrind's callgrind counts the micro rows' instructions.
        peers: vec![
            Peer {
                name: "wrk",
                program: "wrk",
                install: Install::Apt("wrk"),
                version_args: &["-v"],
            },
            Peer {
                name: "valgrind",
                program: "valgrind",
                install: Install::Apt("valgrind"),
                version_args: &["--version"],
            },
        ],
        drivers: vec![Driver::Python {
            script: "benches/pyloop/bench.py",
            packages: &[
                "maturin>=1.7,<2",
                "uvloop",
                "rloop",
                "uvicorn",
                "httptools",
                "aiohttp",
            ],
        }],
    }
}

/// The venv interpreter the driver runs with, pyloop (release) installed.
pub fn prepare(packages: &[&str]) -> anyhow::Result<std::path::PathBuf> {
    use anyhow::Context;
    let python = crate::python::find("3.11")
        .or_else(|| crate::python::find("3.12"))
        .or_else(|| crate::python::find("3.13"))
        .context("no CPython 3.11-3.13 found for the pyloop benchmark")?;
    let py = crate::python::venv("bench", &python, packages)?;
    crate::python::install_pyloop(&py, true)?;
    Ok(py)
}
