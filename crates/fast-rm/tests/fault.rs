//! Fault injection: while fast-rm runs, another thread keeps swapping
//! directories of the target for symlinks to a canary outside it. Whatever
//! the interleaving, the canary must survive.

mod common;

use common::{Canary, fast_rm, nested, scratch};
use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

fn swap_loop(t: &Path, canary: &Path, stop: &AtomicBool, swaps: &AtomicUsize) {
    let dirs: Vec<_> = (0..8).map(|i| t.join(format!("d{i}"))).collect();
    while !stop.load(Ordering::Relaxed) {
        for d in &dirs {
            let aside = d.with_extension("aside");
            // Directory out, symlink in; then back. Errors just mean the
            // deleter got there first.
            if fs::rename(d, &aside).is_ok() {
                if symlink(canary, d).is_ok() {
                    swaps.fetch_add(1, Ordering::Relaxed);
                    std::thread::yield_now();
                    let _ = fs::remove_file(d);
                }
                let _ = fs::rename(&aside, d);
            }
            // Files are swapped for links to the canary's files, too.
            let f = d.join("f0");
            if fs::remove_file(&f).is_ok() {
                let _ = symlink(canary.join("precious"), &f);
            }
        }
    }
}

#[test]
fn swapping_directories_for_symlinks_never_reaches_outside() {
    let mut total_swaps = 0;
    for s in scratch() {
        let base = s.path();
        let canary = Canary::plant(&base.join("canary"));
        for round in 0..16 {
            let t = base.join(format!("t{round}"));
            nested(&t, 64, 800);
            // nested() makes d0..d7 at the top, each with e-subdirectories.
            let stop = Arc::new(AtomicBool::new(false));
            let swaps = Arc::new(AtomicUsize::new(0));
            let (t2, c2, st2, sw2) = (t.clone(), canary.dir.clone(), stop.clone(), swaps.clone());
            let swapper = std::thread::spawn(move || swap_loop(&t2, &c2, &st2, &sw2));
            let threads = if round % 2 == 0 { "2" } else { "4" };
            let out = fast_rm()
                .current_dir(base)
                .args(["-j", threads, "-f"])
                .arg(&t)
                .output()
                .unwrap();
            stop.store(true, Ordering::Relaxed);
            swapper.join().unwrap();
            total_swaps += swaps.load(Ordering::Relaxed);
            canary.assert_intact();
            // Whatever the swapper put back is ours to clean.
            let _ = fs::remove_dir_all(&t);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!stderr.contains("canary"), "round {round}: {stderr}");
        }
    }
    assert!(total_swaps > 0, "the swapper never got a swap in");
}
