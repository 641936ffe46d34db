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

/// Seeds whose programs differ, and why: bash's own bugs, which rush does
/// not copy (fuzz/README.md lists them). Seeds 0..100000 were run; these
/// are all that differ.
const KNOWN: &[(u64, &str)] = &[
    (1577, QUOTED_NULL),
    (30482, QUOTED_NULL),
    (32908, QUOTED_NULL),
    (33116, QUOTED_NULL),
    (38707, EAGER_ARITH),
    (42699, QUOTED_NULL),
    (49025, EAGER_ARITH),
    (82471, QUOTED_NULL),
    (94666, QUOTED_NULL),
];

/// bash 5.2 leaves a quoted-null marker in a `case` word where a quoted
/// `${v^^}`, `${v,,}`, `${v/p/r}`, `${v#p}` or `${v:o:l}` of a set, empty
/// `v` stands beside other text: `v=; case "${v^^}"2 in 2)` does not match
/// in bash.
const QUOTED_NULL: &str = "bash's quoted null in a case word (v=; case \"${v^^}\"2 in 2) fails)";

/// bash evaluates each variable of an arithmetic expression as it reads
/// its name, before it finds the expression's syntax error: with a='w x'
/// and x='x=y[x]', `$((a))` fails in bash on x's recursion (which ends all
/// of `-c`), in rush on the syntax of 'w x'.
const EAGER_ARITH: &str =
    "bash evaluates a variable while still parsing: another error comes first";

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
    assert!(
        budget.is_none() || ran >= 50,
        "only {ran} programs in {BUDGET:?}"
    );
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
