//! Every committed input of every target (the seeds, and each finding kept
//! as a regression input) through its check, in the ordinary `cargo test`.

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
    let mut ran = 0;
    for (name, check) in fuzz::TARGETS {
        let inputs = fuzz::committed_inputs(name);
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
