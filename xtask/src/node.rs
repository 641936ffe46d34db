//! termio's Node package (`node/`): installed with npm, its addon built
//! from `crates/termio` by @napi-rs/cli, and its tests run with
//! `node --test`.

use crate::cmd;
use anyhow::{Result, bail};
use std::process::Command;

/// `npm ci` in `node/` (scripts off: the addon is built next, whatever
/// is there), the addon built (debug: the tests need no LTO), then
/// `node --test`.
pub fn test_termio() -> Result<()> {
    let dir = crate::root().join("node");
    if cmd::output(Command::new("node").arg("--version")).is_none() {
        bail!("node not found: install Node 20 or newer (Debian: apt install nodejs npm)");
    }
    cmd::run(Command::new("npm").current_dir(&dir).args([
        "ci",
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
    ]))?;
    cmd::run(
        Command::new("node")
            .current_dir(&dir)
            .arg("build.js")
            .env("TERMIO_DEBUG", "1"),
    )?;
    cmd::run(
        Command::new("node")
            .current_dir(&dir)
            .args(["--test", "test/"]),
    )
}
