//! What the steps of one `cargo xtask test` run share: the notes said
//! again in its summary, and the packages its `cargo test` ran on. Below
//! the steps (`test`, `python`, ...), which all write here.

use crate::cmd::cargo;
use std::sync::Mutex;

/// What a step did not cover, said again in the summary (a CPython that
/// is not here, say).
static NOTES: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Adds a line to the summary.
pub fn note(line: String) {
    eprintln!("{line}");
    NOTES.lock().unwrap_or_else(|e| e.into_inner()).push(line);
}

/// The packages `cargo test` ran on (`--workspace`, or `-p` each): a
/// later step that needs a test build's binary asks cargo for that same
/// build, which is then already done (a `cargo build` would unify other
/// features, without the dev-dependencies', and build much of it again).
static SCOPE: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// `cargo test --no-run` over the packages the run tests: the binaries
/// in `target/debug` as the tests used them.
pub fn test_build() -> std::process::Command {
    let mut c = cargo();
    c.args(["test", "-q", "--no-run"])
        .args(SCOPE.lock().unwrap_or_else(|e| e.into_inner()).iter());
    c
}

/// Sets the packages the run's `cargo test` runs on.
pub fn set_scope(scope: &[String]) {
    *SCOPE.lock().unwrap_or_else(|e| e.into_inner()) = scope.to_vec();
}

/// The notes so far.
pub fn notes() -> Vec<String> {
    NOTES.lock().unwrap_or_else(|e| e.into_inner()).clone()
}
