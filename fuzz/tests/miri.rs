//! The committed inputs of the targets whose code holds `unsafe` blocks or
//! byte layouts that Miri can run (no system calls, no FFI): greppy's
//! index read from bytes (its layout), its frame decoder, termio's ring
//! and UTF-8 framing and plan detector. Only under Miri; the ordinary run
//! already replays every input in `corpus.rs`:
//!
//! ```sh
//! MIRIFLAGS=-Zmiri-disable-isolation cargo +nightly miri test -p fuzz --test miri
//! ```

const UNDER_MIRI: &[&str] = &[
    "greppy-index",
    "greppy-frames",
    "termio-ring",
    "termio-utf8",
    "termio-detector",
];

#[test]
#[cfg_attr(not(miri), ignore = "runs under Miri only (cargo +nightly miri test)")]
fn the_committed_inputs_under_miri() {
    for name in UNDER_MIRI {
        let (_, check) = fuzz::TARGETS
            .iter()
            .find(|(n, _)| n == name)
            .expect("a target");
        for input in fuzz::committed_inputs(name) {
            eprintln!("{name}: {}", input.display());
            check(&std::fs::read(&input).expect("the input reads"));
        }
    }
}
