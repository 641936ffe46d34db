//! A short mutation smoke of every target in the ordinary `cargo test`:
//! each target's committed inputs, mutated at random (bytes flipped,
//! inserted, deleted, repeated, two inputs spliced) with a fixed seed, for
//! about ten seconds each, the targets shared among the CPUs (on two, about
//! 75 s in all). It is not libFuzzer: no coverage guides it and no
//! sanitizer watches it (the libFuzzer build takes longer than CI has; see
//! `fuzz/README.md`), but a check that a parser change breaks on inputs
//! near the seeds fails here, in CI.
//!
//! `FUZZ_SMOKE_SECONDS=60 cargo test -p fuzz --test smoke` runs longer;
//! `FUZZ_SMOKE_SEED` picks other mutations; `FUZZ_SMOKE_ONLY=rush-unparse`
//! runs one target. The input being checked is
//! kept in `target/fuzz/smoke/<target>` while it runs, so one that aborts
//! the test can be run again.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Seconds for each target.
fn budget() -> Duration {
    let s = std::env::var("FUZZ_SMOKE_SECONDS")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(10.0);
    Duration::from_secs_f64(s)
}

/// The rush-vs-bash check runs two shells an input: fewer of them.
fn budget_for(target: &str) -> Duration {
    if target == "rush-vs-bash" {
        budget() / 2
    } else {
        budget()
    }
}

fn seed() -> u64 {
    std::env::var("FUZZ_SMOKE_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed)
}

/// One random change to `input`, drawing on `other` for splices.
fn mutate(rng: &mut fastrand::Rng, input: &mut Vec<u8>, other: &[u8]) {
    const LIMIT: usize = 65536;
    match rng.u8(..6) {
        0 if !input.is_empty() => {
            let i = rng.usize(..input.len());
            input[i] ^= 1 << rng.u8(..8);
        }
        1 if input.len() < LIMIT => {
            let i = rng.usize(..=input.len());
            // Bytes that matter to the parsers more often than others.
            const ODD: &[u8] = b"\0\n\"'`$(){}[]<>|&;#\\*?!=+-0123456789 \xff\xc3";
            let b = if rng.bool() {
                ODD[rng.usize(..ODD.len())]
            } else {
                rng.u8(..)
            };
            input.insert(i, b);
        }
        2 if !input.is_empty() => {
            let a = rng.usize(..input.len());
            let b = (a + rng.usize(1..=16)).min(input.len());
            input.drain(a..b);
        }
        3 if !input.is_empty() && input.len() < LIMIT => {
            let a = rng.usize(..input.len());
            let b = (a + rng.usize(1..=32)).min(input.len());
            let piece = input[a..b].to_vec();
            let at = rng.usize(..=input.len());
            for _ in 0..rng.usize(1..=4) {
                input.splice(at..at, piece.iter().copied());
            }
        }
        4 if !other.is_empty() => {
            let cut = rng.usize(..=input.len());
            let from = rng.usize(..other.len());
            input.truncate(cut);
            input.extend_from_slice(&other[from..]);
            input.truncate(LIMIT);
        }
        _ => {
            if let Some(last) = input.last_mut() {
                *last = rng.u8(..);
            } else {
                input.push(rng.u8(..));
            }
        }
    }
}

#[test]
fn every_target_survives_mutations_of_its_seeds() {
    // A panic in one of the relay's tasks would not reach this thread:
    // abort, as libFuzzer does; the input is in target/fuzz/smoke/.
    // Written past the test harness's capture, which an abort would lose.
    std::panic::set_hook(Box::new(|info| {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "{info}\nthe input is kept in target/fuzz/smoke/ under the target's name"
        );
        std::process::abort();
    }));
    fuzz::shgen::rush_for_test(env!("CARGO"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let kept = root.join("../target/fuzz/smoke");
    std::fs::create_dir_all(&kept).expect("target/fuzz/smoke");
    let only = std::env::var("FUZZ_SMOKE_ONLY").ok();
    if let Some(o) = &only {
        assert!(
            fuzz::TARGETS.iter().any(|(n, _)| n == o),
            "FUZZ_SMOKE_ONLY: no target {o}"
        );
    }
    // The targets are shared among the CPUs: each thread takes the next
    // target not yet taken, so a slow one does not hold up the rest.
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((name, check)) = fuzz::TARGETS.get(i) else {
                        return;
                    };
                    if only.as_deref().is_none_or(|o| o == *name) {
                        smoke(i, name, *check, &kept);
                    }
                }
            });
        }
    });
}

/// Mutates `name`'s committed inputs and checks them for its budget.
fn smoke(i: usize, name: &str, check: fuzz::Check, kept: &Path) {
    // Each target its own sequence: the same inputs in the same order
    // whatever the others took.
    let mut rng = fastrand::Rng::with_seed(seed() ^ (i as u64) << 32);
    let seeds: Vec<Vec<u8>> = fuzz::committed_inputs(name)
        .iter()
        .map(|p| std::fs::read(p).expect("a seed reads"))
        .collect();
    assert!(!seeds.is_empty(), "{name} has no seed");
    let start = Instant::now();
    let mut runs = 0u64;
    while start.elapsed() < budget_for(name) {
        let mut input = seeds[rng.usize(..seeds.len())].clone();
        let other = &seeds[rng.usize(..seeds.len())];
        for _ in 0..rng.usize(1..=8) {
            mutate(&mut rng, &mut input, other);
        }
        std::fs::write(kept.join(name), &input).expect("the input is kept");
        check(&input);
        runs += 1;
    }
    eprintln!("{name}: {runs} mutated inputs");
    assert!(runs > 0, "{name} ran no input");
}
