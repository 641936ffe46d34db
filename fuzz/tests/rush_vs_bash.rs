//! The differential test: programs from `fuzz::shgen`'s grammar, a fixed
//! run of seeds, each run by rush and by bash in an empty folder; their
//! outputs and statuses must be the same, or the seed is on the list of
//! known differences below (which changes whenever the grammar does).

use fuzz::shgen::{Gen, run, rush_for_test};
use std::time::{Duration, Instant};

/// Seeds tried, and the time they may take in all. A longer run:
/// `RUSH_VS_BASH_SEEDS=400..100400 cargo test -p fuzz --test rush_vs_bash`
/// (no time limit then).
const SEEDS: u64 = 400;
const BUDGET: Duration = Duration::from_secs(60);

/// The seeds to run: `RUSH_VS_BASH_SEEDS=FROM..TO`, or the first [`SEEDS`]
/// within [`BUDGET`].
fn seeds() -> (std::ops::Range<u64>, Option<Duration>) {
    let Ok(v) = std::env::var("RUSH_VS_BASH_SEEDS") else {
        return (0..SEEDS, Some(BUDGET));
    };
    let (a, b) = v
        .split_once("..")
        .unwrap_or_else(|| panic!("RUSH_VS_BASH_SEEDS={v:?}: want FROM..TO"));
    let n = |x: &str| -> u64 { x.trim().parse().unwrap_or_else(|e| panic!("{x:?}: {e}")) };
    (n(a)..n(b), None)
}

/// Seeds whose programs differ, and why. Each is a difference to fix.
const KNOWN: &[(u64, &str)] = &[];

#[test]
fn rush_and_bash_agree_on_generated_programs() {
    let rush = rush_for_test(env!("CARGO"));
    let bash = std::path::Path::new("/bin/bash");
    let start = Instant::now();
    let mut differ = Vec::new();
    let mut stale = Vec::new();
    let mut ran = 0;
    let (range, budget) = seeds();
    for seed in range {
        if budget.is_some_and(|b| start.elapsed() > b) {
            break;
        }
        let program = Gen::new(seed).program();
        let dir = tempfile::tempdir().expect("a folder");
        let ours = run(&rush, &program, dir.path());
        let theirs = run(bash, &program, dir.path());
        ran += 1;
        let known = KNOWN.iter().any(|(s, _)| *s == seed);
        if ours == theirs && known {
            stale.push(seed);
        }
        if ours != theirs && !known {
            differ.push(format!(
                "seed {seed}:\n{program}--- rush ({:?}):\n{}--- bash ({:?}):\n{}",
                ours.status, ours.stdout, theirs.status, theirs.stdout
            ));
        }
    }
    assert!(ran >= 50, "only {ran} programs in {BUDGET:?}");
    assert!(
        stale.is_empty(),
        "seeds {stale:?} agree now: take them off the list of known differences"
    );
    assert!(
        differ.is_empty(),
        "{} of {ran} programs differ:\n\n{}",
        differ.len(),
        differ.join("\n")
    );
}
