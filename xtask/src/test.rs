//! `cargo xtask test`: every check and test of the repository, in order, with
//! a summary at the end. It keeps going after a failure so that one run shows
//! everything that is wrong.

use crate::cmd::{self, cargo};
use anyhow::{Result, bail};
use std::time::Instant;

/// The systems `test` knows, and the cargo packages that hold their tests.
const SYSTEMS: &[(&str, &[&str])] = &[
    ("floor", &["floor", "latency"]),
    ("fast-rm", &["fast-rm", "fast-rm-bench"]),
    ("rush", &["rush", "rush-bench"]),
    ("greppy", &["greppy"]),
    ("termio", &["termio"]),
    ("pyloop", &["pyloop"]),
    ("xtask", &["xtask"]),
    ("fuzz", &["fuzz"]),
];

/// One step of the run: a command, or work done here.
enum Step {
    Command(std::process::Command),
    Fn(fn() -> Result<()>),
}

fn packages(systems: &[String]) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for s in systems {
        match SYSTEMS.iter().find(|(name, _)| name == s) {
            Some((_, pkgs)) => out.extend(pkgs.iter().map(|p| p.to_string())),
            None => match crate::cmd::output(cargo().args(["pkgid", "-p", s])) {
                Some(_) => out.push(s.clone()),
                None => bail!("unknown system or package {s:?}"),
            },
        }
    }
    Ok(out)
}

pub fn run(systems: &[String]) -> Result<()> {
    let pkgs = packages(systems)?;
    crate::deps::ensure(crate::deps::Task::Test, systems)?;
    let scope: Vec<String> = if pkgs.is_empty() {
        vec!["--workspace".into()]
    } else {
        pkgs.iter()
            .flat_map(|p| ["-p".to_string(), p.clone()])
            .collect()
    };
    let mut steps: Vec<(&str, Step)> = Vec::new();
    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--check"]);
    steps.push(("rustfmt", Step::Command(fmt)));
    let mut clippy = cargo();
    clippy
        .arg("clippy")
        .args(&scope)
        .args(["--all-targets", "--", "-D", "warnings"]);
    steps.push(("clippy", Step::Command(clippy)));
    // termio's Node addon is behind a feature: linted with it too.
    if pkgs.is_empty() || pkgs.iter().any(|p| p == "termio") {
        let mut node = cargo();
        node.args([
            "clippy",
            "-p",
            "termio",
            "--features",
            "node",
            "--all-targets",
        ])
        .args(["--", "-D", "warnings"]);
        steps.push(("clippy: termio's Node addon", Step::Command(node)));
    }
    crate::run_state::set_scope(&scope);
    let mut test = cargo();
    test.arg("test").args(&scope);
    steps.push(("cargo test", Step::Command(test)));

    // The statically linked release build that `cargo xtask install` makes
    // must keep building.
    if pkgs.is_empty()
        || pkgs
            .iter()
            .any(|p| crate::install::BINARIES.iter().any(|(b, _)| b == p))
    {
        let mut install = cargo();
        install.args(["run", "-q", "-p", "xtask", "--", "install", "--root"]);
        install.arg(crate::target_dir().join("install-check"));
        steps.push((
            "static release build (cargo xtask install)",
            Step::Command(install),
        ));
    }

    // pyloop's behaviour is tested from Python, on every supported CPython
    // found here.
    if pkgs.is_empty() || pkgs.iter().any(|p| p == "pyloop") {
        steps.push((
            "pyloop: pytest on its dev build, CPython 3.11 and 3.14t",
            Step::Fn(crate::python::test_pyloop),
        ));
        steps.push((
            "pyloop: clippy for a free-threaded CPython 3.14t",
            Step::Fn(crate::python::lint_pyloop_free_threaded),
        ));
        steps.push((
            "pyloop: the manylinux wheels (cargo xtask dist), each tested in a clean venv",
            Step::Fn(crate::dist::test_wheels),
        ));
    }

    // greppy's MCP server, through the protocol's official Python SDK.
    if pkgs.is_empty() || pkgs.iter().any(|p| p == "greppy") {
        steps.push((
            "greppy: MCP through the official Python SDK (mcp from PyPI)",
            Step::Fn(crate::python::test_greppy_mcp),
        ));
    }

    // termio's Node package: its addon built from the crate, its API
    // tested from Node.
    if pkgs.is_empty() || pkgs.iter().any(|p| p == "termio") {
        steps.push((
            "termio: node --test (the addon built by @napi-rs/cli)",
            Step::Fn(crate::node::test_termio),
        ));
    }

    let mut results = Vec::new();
    for (name, step) in steps {
        eprintln!("\n== {name}");
        let start = Instant::now();
        let res = match step {
            Step::Command(mut c) => cmd::run(&mut c),
            Step::Fn(f) => f(),
        };
        let ok = res.map_err(|e| eprintln!("{e:#}")).is_ok();
        results.push((name, ok, start.elapsed()));
    }
    eprintln!("\n== summary");
    for (name, ok, t) in &results {
        eprintln!(
            "{:>6}  {name} ({:.1} s)",
            if *ok { "ok" } else { "FAILED" },
            t.as_secs_f64()
        );
    }
    for n in crate::run_state::notes() {
        eprintln!("  note: {n}");
    }
    let failed = results.iter().filter(|(_, ok, _)| !ok).count();
    if failed > 0 {
        bail!("{failed} of {} steps failed", results.len());
    }
    Ok(())
}
