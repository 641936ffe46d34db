//! termio's Node package (`node/`): installed with npm, its addon built
//! from `crates/termio` by @napi-rs/cli, and its tests run with
//! `node --test`.

use crate::cmd;
use anyhow::{Result, bail};
use std::process::Command;

/// `npm ci` in `node/`, with scripts off: the addon is built next,
/// whatever is there.
fn install() -> Result<std::path::PathBuf> {
    let dir = crate::root().join("node");
    match crate::deps::node_major() {
        None => bail!("node not found: install Node 20 or newer (apt-get install nodejs npm)"),
        Some(m) if m < 20 => bail!("node {m} is too old: termio's package needs Node 20 or newer"),
        Some(_) => {}
    }
    cmd::run(Command::new("npm").current_dir(&dir).args([
        "ci",
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
    ]))?;
    Ok(dir)
}

/// The package installed and its addon built in debug mode (the tests
/// need no LTO), for `node --test` and node-pty's suite.
pub fn build_debug() -> Result<()> {
    let dir = install()?;
    cmd::run(
        Command::new("node")
            .current_dir(&dir)
            .arg("build.js")
            .env("TERMIO_DEBUG", "1"),
    )
}

/// The package installed and its addon built in release mode, for the
/// benchmark.
pub fn build_release() -> Result<()> {
    let dir = install()?;
    cmd::run(
        Command::new("node")
            .current_dir(&dir)
            .arg("build.js")
            .env_remove("TERMIO_DEBUG"),
    )
}

/// The package installed, the addon built (debug: the tests need no LTO),
/// then `node --test`.
pub fn test_termio() -> Result<()> {
    build_debug()?;
    let dir = crate::root().join("node");
    // Each test has two minutes (the slowest, the browser's, takes a few
    // seconds): a test that hangs fails instead of holding CI.
    cmd::run(Command::new("node").current_dir(&dir).args([
        "--test",
        "--test-timeout=120000",
        "test/",
    ]))
}
