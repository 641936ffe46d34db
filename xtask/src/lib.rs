//! The repository's task runner. Written for a newcomer who has just cloned the
//! repository: `cargo xtask test` runs every test and `cargo xtask bench`
//! every benchmark, installing what they need on the way.

pub mod bash_suite;
pub mod bench;
pub mod cli;
pub mod cmd;
pub mod conformance;
pub mod coreutils_suite;
pub mod debian_python;
pub mod deps;
pub mod dist;
pub mod fuzz;
pub mod install;
pub mod node;
pub mod node_pty_suite;
pub mod peers;
pub mod pyloop_conformance;
pub mod python;
pub mod report;
pub mod ripgrep_suite;
pub mod run_state;
pub mod rush_scripts;
pub mod sanitize;
pub mod source_python;
pub mod table;
pub mod test;

use std::path::PathBuf;

/// The repository's root folder.
pub fn root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(PathBuf::from).unwrap_or(manifest)
}

/// `target/pyloop`: pyloop's venvs, and the CPythons xtask unpacks or
/// builds (the Python modules all keep their files here).
pub fn pyloop_dir() -> PathBuf {
    target_dir().join("pyloop")
}

/// The target triple sanitized builds name (`-Zbuild-std` needs one).
pub const SANITIZE_TARGET: &str = "x86_64-unknown-linux-gnu";

/// Writes a conformance run's rows to `target/conformance/NAME.json`, from
/// which the READMEs' tables are made.
pub fn save_rows(name: &str, rows: &impl serde::Serialize) -> anyhow::Result<()> {
    let file = target_dir().join(format!("conformance/{name}.json"));
    std::fs::write(&file, serde_json::to_vec_pretty(rows)?)?;
    println!("\nrows: {}", file.display());
    Ok(())
}

/// Cargo's target folder: `$CARGO_TARGET_DIR` or `target/` at the root.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) => root().join(d),
        None => root().join("target"),
    }
}
