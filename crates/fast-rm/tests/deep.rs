//! Trees deeper than PATH_MAX, and large trees, removed completely.

mod common;

use common::{Canary, fast_rm, nested, rm, scratch};
use rustix::fs::{AtFlags, CWD, Mode, OFlags, mkdirat, openat};
use std::fs;
use std::os::fd::OwnedFd;
use std::path::Path;

/// Builds a chain of `depth` directories named `name` below `root`, through
/// directory descriptors (no path is ever longer than one name), with a file
/// in every tenth one.
fn deep_chain(root: &Path, depth: usize, name: &str) {
    fs::create_dir_all(root).unwrap();
    let mut fd: OwnedFd =
        rustix::fs::open(root, OFlags::DIRECTORY | OFlags::RDONLY, Mode::empty()).unwrap();
    for i in 0..depth {
        mkdirat(&fd, name, Mode::from_bits_truncate(0o755)).unwrap();
        fd = openat(&fd, name, OFlags::DIRECTORY | OFlags::RDONLY, Mode::empty()).unwrap();
        if i % 10 == 0 {
            drop(
                openat(
                    &fd,
                    "file",
                    OFlags::CREATE | OFlags::WRONLY,
                    Mode::from_bits_truncate(0o644),
                )
                .unwrap(),
            );
        }
    }
}

fn gone(p: &Path) -> bool {
    rustix::fs::statat(CWD, p, AtFlags::SYMLINK_NOFOLLOW).is_err()
}

#[test]
fn long_names_deeper_than_path_max_are_removed() {
    for s in scratch() {
        let canary = Canary::plant(&s.path().join("canary"));
        let name = "n".repeat(200);
        deep_chain(&s.path().join("t"), 60, &name); // about 12 KB of path
        let r = rm(s.path(), &["--json", "t"]);
        assert_eq!(r.code, 0, "{r:?}");
        assert!(gone(&s.path().join("t")));
        let j: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(j["dirs"], 61);
        assert_eq!(j["files"], 6);
        canary.assert_intact();
    }
}

#[test]
fn thousands_of_levels_under_a_low_descriptor_limit_are_removed() {
    for s in scratch() {
        deep_chain(&s.path().join("t"), 3000, "d");
        // More levels than the soft limit of open files: fast-rm raises it.
        let out = std::process::Command::new("sh")
            .current_dir(s.path())
            .arg("-c")
            .arg("ulimit -Sn 256 && exec \"$0\" t")
            .arg(fast_rm().get_program())
            .output()
            .unwrap();
        let r: common::Run = out.into();
        assert_eq!(r.code, 0, "{r:?}");
        assert!(gone(&s.path().join("t")));
    }
}

#[test]
fn a_nested_tree_of_100k_entries_leaves_nothing() {
    for s in scratch() {
        let t = s.path().join("t");
        nested(&t, 1000, 98_000);
        let r = rm(s.path(), &["--json", "t"]);
        assert_eq!(r.code, 0, "{r:?}");
        let j: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(j["files"], 98_000 + 1000);
        assert!(gone(&t));
        assert_eq!(fs::read_dir(s.path()).unwrap().count(), 0, "zero leftovers");
    }
}

#[test]
fn a_flat_directory_larger_than_one_batch_leaves_nothing() {
    for s in scratch() {
        let t = s.path().join("t");
        fs::create_dir(&t).unwrap();
        // More names than one unlink batch holds (65,536).
        for i in 0..70_000 {
            fs::write(t.join(format!("f{i}")), b"").unwrap();
        }
        let r = rm(s.path(), &["--json", "t"]);
        assert_eq!(r.code, 0, "{r:?}");
        let j: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(
            (j["files"].as_u64(), j["dirs"].as_u64()),
            (Some(70_000), Some(1))
        );
        assert!(gone(&t));
    }
}

#[test]
fn big_directories_unlinked_in_parallel_beside_other_work_leave_nothing() {
    // Directories of more than 4,096 files are unlinked by every thread at
    // once; a thread waiting for the others may be handed another
    // directory to scan meanwhile, which must not need the buffers the
    // first scan holds.
    fn files(dir: &Path, n: u64) -> u64 {
        fs::create_dir_all(dir).unwrap();
        for i in 0..n {
            fs::write(dir.join(format!("f{i}")), b"").unwrap();
        }
        n
    }
    fn build(t: &Path) -> u64 {
        let mut n = 0;
        for d in 0..6 {
            n += files(&t.join(format!("big{d}")), 5_000);
            for k in 0..100 {
                n += files(&t.join(format!("small{d}/{k}")), 3);
            }
        }
        n
    }
    for s in scratch() {
        let t = s.path().join("t");
        for threads in ["2", "4"] {
            let n = build(&t);
            let r = rm(s.path(), &["--json", "-j", threads, "t"]);
            assert_eq!(r.code, 0, "-j {threads}: {r:?}");
            let j: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
            assert_eq!(j["files"], n, "-j {threads}");
            assert!(gone(&t));
        }
    }
}

/// Directories of each of `sizes` entries below `t` (one name in three
/// 240 bytes long or more, one entry in fifty a directory holding a file);
/// returns every path made, `t` last.
fn sized_dirs(t: &Path, sizes: &[usize]) -> Vec<std::path::PathBuf> {
    let mut made = Vec::new();
    for (k, &n) in sizes.iter().enumerate() {
        let d = t.join(format!("s{n}"));
        fs::create_dir_all(&d).unwrap();
        made.push(d.clone());
        for i in 0..n {
            let name = match i % 3 {
                0 => format!("{i}-{}", "x".repeat(240)),
                _ => format!("f{i}"),
            };
            let p = d.join(name);
            if (i + k) % 50 == 0 {
                fs::create_dir(&p).unwrap();
                fs::write(p.join("inner"), b"x").unwrap();
                made.push(p.join("inner"));
            } else {
                fs::write(&p, b"x").unwrap();
            }
            made.push(p);
        }
    }
    made.push(t.to_path_buf());
    made
}

#[test]
fn directories_of_every_size_around_one_read_and_one_batch_leave_nothing() {
    // On tmpfs the names of each `getdents64` read (about 256 short ones,
    // 30 long ones) are unlinked before the next read until a directory
    // has given 1,024 entries, and batched after. A directory of any size,
    // read and emptied in turns, with subdirectories among its files,
    // must go whole, each entry said once.
    let sizes = [
        0, 1, 29, 30, 31, 255, 256, 257, 511, 1023, 1024, 1025, 1300, 4500,
    ];
    for s in scratch() {
        let canary = Canary::plant(&s.path().join("canary"));
        let t = s.path().join("t");
        for threads in ["1", "2"] {
            let made = sized_dirs(&t, &sizes);
            let r = rm(s.path(), &["-v", "-j", threads, "t"]);
            assert_eq!(r.code, 0, "-j {threads}: {}", r.stderr);
            let mut said: Vec<&str> = r
                .stdout
                .lines()
                .map(|l| l.split('\'').nth(1).expect("a quoted path"))
                .collect();
            said.sort_unstable();
            let mut want: Vec<String> = made
                .iter()
                .map(|p| p.strip_prefix(s.path()).unwrap().display().to_string())
                .collect();
            want.sort_unstable();
            assert_eq!(said, want, "-j {threads}: each entry said once");
            assert!(gone(&t));
            canary.assert_intact();
        }
    }
}

/// The `getdents64` and `unlinkat` calls of fast-rm removing `t` (run in
/// `dir`), in order, as `(is a read, returned bytes or status)`.
fn reads_and_unlinks(dir: &Path, t: &str) -> Vec<(bool, i64)> {
    let log = dir.join("trace");
    let out = std::process::Command::new("strace")
        .current_dir(dir)
        .args(["-f", "-qq", "-e", "trace=getdents64,unlinkat", "-o"])
        .arg(&log)
        .arg(fast_rm().get_program())
        .args(["-j", "1", t])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let trace = fs::read_to_string(&log).unwrap();
    fs::remove_file(&log).unwrap();
    trace
        .lines()
        .filter_map(|l| {
            let read = l.contains("getdents64(");
            let ret = l.rsplit("= ").next()?.split_whitespace().next()?;
            (read || l.contains("unlinkat(")).then(|| (read, ret.parse().unwrap_or(-1)))
        })
        .collect()
}

#[test]
fn on_tmpfs_a_small_directory_is_unlinked_read_by_read_and_a_large_one_in_batches() {
    if !common::strace_works() {
        return;
    }
    for s in scratch() {
        let on_tmpfs = s.path().starts_with("/dev/shm");
        for (n, files) in [("small", 600), ("large", 3000)] {
            let t = s.path().join(n);
            fs::create_dir(&t).unwrap();
            for i in 0..files {
                fs::write(t.join(format!("f{i}")), b"").unwrap();
            }
            let calls = reads_and_unlinks(s.path(), n);
            assert!(gone(&t));
            let reads: Vec<usize> = (0..calls.len()).filter(|&i| calls[i].0).collect();
            let unlinks_after_last_read = calls.len() - 1 - reads.last().unwrap();
            let first_unlink = calls.iter().position(|c| !c.0).unwrap();
            match (on_tmpfs, n) {
                // 8 KiB a read (about 340 of these short names), each
                // read's names gone before the next.
                (true, "small") => {
                    assert!(reads.len() >= 3, "{n}: {} reads", reads.len());
                    assert!(
                        first_unlink < reads[1],
                        "{n}: unlinked before the second read"
                    );
                }
                // Read by read for the first 1,024, then one batch after the
                // last read: the rest (less at most one read's names).
                (true, _) => {
                    assert!(
                        first_unlink < reads[1],
                        "{n}: unlinked before the second read"
                    );
                    assert!(
                        unlinks_after_last_read >= files - 1024 - 300,
                        "{n}: {unlinks_after_last_read} unlinks after the last read"
                    );
                }
                // On a disk every name is read (128 KiB a read) before the first unlink.
                (false, _) => {
                    assert!(
                        first_unlink > *reads.last().unwrap(),
                        "{n} on disk: {calls:?}"
                    );
                }
            }
        }
    }
}
