//! `pyloop`: the event loop against asyncio's default loop, uvloop and rloop,
//! each in fresh processes, interleaved. The driver is Python
//! (`benches/pyloop/bench.py`); it runs in a private venv under
//! `target/pyloop/` with the release build of pyloop and the peers from PyPI.
//! The micro rows also run on CPython 3.14 and the free-threaded 3.14t
//! ([`OTHER_PYTHONS`]), each in its own venv, with the peers that have wheels
//! there.

use super::system::{Driver, System};
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

/// The CPythons the micro rows also run on, besides the driver's own.
pub const OTHER_PYTHONS: &[&str] = &["3.14", crate::source_python::FREE_THREADED];

/// A venv for each of [`OTHER_PYTHONS`] this machine has or can build,
/// with pyloop's release build and uvloop and rloop where they have a wheel
/// (none is built from source): `(name, interpreter)`. One that cannot be
/// made is left out, with a message; the driver's own rows do not need it.
pub fn other_pythons() -> Vec<(String, std::path::PathBuf)> {
    let mut found = Vec::new();
    for minor in OTHER_PYTHONS {
        match other_python(minor) {
            Ok(py) => found.push((minor.to_string(), py)),
            Err(e) => eprintln!("pyloop bench: no CPython {minor} rows: {e:#}"),
        }
    }
    found
}

fn other_python(minor: &str) -> anyhow::Result<std::path::PathBuf> {
    use anyhow::Context;
    let python = crate::python::find(minor).with_context(|| format!("no CPython {minor} found"))?;
    let py = crate::python::venv(&format!("bench-{minor}"), &python, &["maturin>=1.7,<2"])?;
    for peer in ["uvloop", "rloop"] {
        if crate::python::install_wheel_only(&py, peer).is_err() {
            eprintln!("pyloop bench: {peer} has no wheel for CPython {minor}");
        }
    }
    crate::python::install_pyloop(&py, true)?;
    Ok(py)
}

/// [`other_pythons`] as the driver reads it (`XTASK_PYLOOP_PYTHONS`).
pub fn other_pythons_json(found: &[(String, std::path::PathBuf)]) -> String {
    let list: Vec<serde_json::Value> = found
        .iter()
        .map(|(name, py)| serde_json::json!({"name": name, "python": py}))
        .collect();
    serde_json::Value::Array(list).to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_driver_reads_each_other_python_by_name_and_path() {
        let json = super::other_pythons_json(&[("3.14t".into(), "/v/bin/python".into())]);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v[0]["name"], "3.14t");
        assert_eq!(v[0]["python"], "/v/bin/python");
    }

    /// The driver asks each other interpreter for its loops' versions with
    /// `bench.py versions`; one that cannot answer gives none, so that the
    /// driver notes it and runs no rows there instead of failing.
    #[test]
    fn the_driver_reads_an_interpreters_loops_and_survives_one_that_fails() {
        use std::process::Command;
        let script = crate::root().join("benches/pyloop/bench.py");
        let out = crate::cmd::output(
            Command::new("python3")
                .arg("-P")
                .arg(&script)
                .arg("versions"),
        )
        .expect("bench.py versions runs");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(
            v["asyncio"].as_str().unwrap().starts_with("CPython 3."),
            "{v}"
        );
        let out = with_bench(
            "print(bench.other_versions('/bin/false'), bench.version('pyloop', '/bin/false'))",
        );
        assert_eq!(out.as_deref(), Some("{} None"));
    }

    /// Runs `code` in python3 after `import bench` (the driver, as a
    /// module), and gives its standard output.
    fn with_bench(code: &str) -> Option<String> {
        let dir = crate::root().join("benches/pyloop");
        let code = format!(
            "import sys; sys.argv = ['bench']; sys.path.insert(0, {dir:?}); import bench\n{code}"
        );
        crate::cmd::output(std::process::Command::new("python3").args(["-P", "-c", &code]))
    }

    /// A child's timed window starts with no collection owed from its
    /// imports: `gc.get_count()` at the workload's entry shows the middle
    /// and oldest generations empty. Before c540d37 they were not (3 and 4
    /// in the bench's venv, 2 and 4 here), and the full collection that
    /// the imports had made due fell inside the window of whichever loop
    /// allocated tracked objects first.
    #[test]
    fn a_child_pays_the_collection_its_imports_owe_before_it_times() {
        let out = with_bench(
            "import gc, types\n\
             seen = []\n\
             run = bench.w_call_soon\n\
             def probe(loop, n):\n    seen.append(gc.get_count())\n    return run(loop, n)\n\
             bench.w_call_soon = probe\n\
             bench.child(types.SimpleNamespace(workload='call_soon', loop='asyncio', n=100))\n\
             print(seen[0][1:])",
        );
        let last = out.as_deref().and_then(|o| o.lines().last());
        assert_eq!(last, Some("(0, 0)"), "{out:?}");
    }
}
