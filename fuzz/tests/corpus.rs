//! Every committed input of every target (the seeds, and each finding kept
//! as a regression input) through its check, in the ordinary `cargo test`.

use std::path::Path;

/// The input being checked, named by the panic hook.
static CURRENT: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

#[test]
fn every_committed_input_passes_its_check() {
    // A panic in one of the relay's tasks would not reach this thread:
    // abort, as libFuzzer does.
    // Written past the test harness's capture, which an abort would lose.
    std::panic::set_hook(Box::new(|info| {
        use std::io::Write;
        let current = CURRENT.lock().map(|c| c.clone()).unwrap_or_default();
        let _ = writeln!(std::io::stderr(), "{info}\nthe input: {current}");
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
            *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) =
                format!("{name}: {}", input.display());
            check(&std::fs::read(&input).expect("the input reads"));
            ran += 1;
        }
    }
    assert!(ran >= fuzz::TARGETS.len());
}
