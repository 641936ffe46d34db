//! The checks behind the fuzz targets, one function a target, each taking
//! the fuzzer's bytes. `fuzz_targets/` wraps each for libFuzzer
//! (`cargo xtask fuzz`); `tests/corpus.rs` runs each over its committed
//! inputs in the ordinary `cargo test`. A check fails by panicking.

mod greppy;
mod rush;
pub mod shgen;
mod termio;

pub use crate::greppy::{greppy_flags, greppy_frames, greppy_index, greppy_plan};
pub use crate::rush::{rush_arith, rush_brace, rush_parse, rush_pattern, rush_unparse};
pub use crate::shgen::rush_vs_bash;
pub use crate::termio::{
    HOST, ORIGIN, TOKEN, termio_detector, termio_messages, termio_ring, termio_upgrade, termio_utf8,
};

/// A target's check: it panics on a finding.
pub type Check = fn(&[u8]);

/// Every target: its name (as `cargo xtask fuzz` and `fuzz/corpus/` know
/// it) and its check.
pub const TARGETS: &[(&str, Check)] = &[
    ("rush-parse", rush_parse),
    ("rush-unparse", rush_unparse),
    ("rush-arith", rush_arith),
    ("rush-pattern", rush_pattern),
    ("rush-brace", rush_brace),
    ("rush-vs-bash", rush_vs_bash),
    ("greppy-frames", greppy_frames),
    ("greppy-index", greppy_index),
    ("greppy-plan", greppy_plan),
    ("greppy-flags", greppy_flags),
    ("termio-upgrade", termio_upgrade),
    ("termio-messages", termio_messages),
    ("termio-ring", termio_ring),
    ("termio-detector", termio_detector),
    ("termio-utf8", termio_utf8),
];

/// The committed inputs of `target` (`fuzz/corpus/<target>/`), sorted by
/// name: what `tests/corpus.rs`, `tests/smoke.rs` and `tests/miri.rs` run.
pub fn committed_inputs(target: &str) -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target);
    let mut inputs: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("an entry").path())
        .collect();
    inputs.sort();
    inputs
}
