//! Every committed input of every target (the seeds, and each finding kept
//! as a regression input) through its check, in the ordinary `cargo test`.

use std::path::Path;

#[test]
fn every_committed_input_passes_its_check() {
    // A panic in one of the relay's tasks would not reach this thread:
    // abort, as libFuzzer does.
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default(info);
        std::process::abort();
    }));
    // rush-vs-bash runs the rush binary, which it finds beside this test.
    fuzz::shgen::rush_for_test(env!("CARGO"));
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut ran = 0;
    for (name, check) in fuzz::TARGETS {
        let dir = corpus.join(name);
        let mut inputs: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("an entry").path())
            .collect();
        inputs.sort();
        assert!(!inputs.is_empty(), "{name} has no seed");
        for input in inputs {
            eprintln!("{name}: {}", input.display());
            check(&std::fs::read(&input).expect("the input reads"));
            ran += 1;
        }
    }
    assert!(ran >= fuzz::TARGETS.len());
}
