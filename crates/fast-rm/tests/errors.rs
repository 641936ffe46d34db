//! Errors, exit codes, and a tree that changes under our feet.

mod common;

use common::{Canary, fast_rm, give_away, is_root, nested, rm, scratch};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

#[test]
fn missing_paths_fail_unless_forced() {
    let s = tempfile::tempdir().unwrap();
    fs::write(s.path().join("here"), b"").unwrap();
    let r = rm(s.path(), &["missing", "here"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr,
        "fast-rm: cannot remove 'missing': No such file or directory\n"
    );
    assert!(!s.path().join("here").exists(), "the rest is still removed");
    let r = rm(s.path(), &["-f", "missing", "also/missing"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
}

#[test]
fn operands_and_usage() {
    let s = tempfile::tempdir().unwrap();
    let r = rm(s.path(), &[]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("missing operand"));
    assert_eq!(rm(s.path(), &["-f"]).code, 0);
    let r = rm(s.path(), &["--frobnicate", "x"]);
    assert_eq!(r.code, 1, "usage errors exit 1, as rm's do");
    assert!(r.stderr.contains("--frobnicate"));
    let r = rm(s.path(), &["-j", "0", "x"]);
    assert_eq!(r.code, 1);
    let r = rm(s.path(), &["--help"]);
    assert_eq!(r.code, 0);
    for flag in [
        "--dry-run",
        "--one-file-system",
        "--preserve-root",
        "--progress",
        "--json",
        "-I",
    ] {
        assert!(r.stdout.contains(flag), "help mentions {flag}");
    }
    // -r, -R and --recursive are accepted and change nothing.
    fs::create_dir_all(s.path().join("a/b")).unwrap();
    assert_eq!(
        rm(s.path(), &["-r", "-R", "--recursive", "-v", "a"]).code,
        0
    );
    assert!(!s.path().join("a").exists());
}

/// Runs fast-rm as an unprivileged user when we are root, so that
/// permissions bite.
fn as_nobody(base: &Path, args: &[&str]) -> common::Run {
    let mut c = fast_rm();
    c.current_dir(base).args(args);
    if is_root() {
        c.uid(65534).gid(65534);
    }
    c.output().unwrap().into()
}

#[test]
fn permission_errors_are_reported_the_rest_goes_and_the_exit_is_1() {
    for s in scratch() {
        let base = s.path();
        fs::set_permissions(base, fs::Permissions::from_mode(0o755)).unwrap();
        let t = base.join("t");
        nested(&t.join("free"), 10, 50);
        fs::create_dir_all(t.join("locked/inner")).unwrap();
        fs::write(t.join("locked/a"), b"").unwrap();
        fs::write(t.join("locked/inner/b"), b"").unwrap();
        give_away(base);
        // `locked` may not be written to: its entries cannot be removed.
        fs::set_permissions(t.join("locked"), fs::Permissions::from_mode(0o555)).unwrap();
        let r = as_nobody(base, &["t"]);
        fs::set_permissions(t.join("locked"), fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(r.code, 1, "{r:?}");
        assert!(
            r.stderr
                .contains("cannot remove 't/locked/a': Permission denied"),
            "{}",
            r.stderr
        );
        assert!(
            !r.stderr.contains("'t'"),
            "ancestors fail silently: {}",
            r.stderr
        );
        assert!(!t.join("free").exists(), "everything else is removed");
        assert!(t.join("locked/a").exists());
        // `inner` itself is writable, so its contents went.
        assert!(!t.join("locked/inner/b").exists());
    }
}

#[test]
fn an_unreadable_empty_directory_is_still_removed() {
    let s = tempfile::tempdir().unwrap();
    let base = s.path();
    fs::set_permissions(base, fs::Permissions::from_mode(0o755)).unwrap();
    fs::create_dir_all(base.join("t/sealed")).unwrap();
    give_away(base);
    fs::set_permissions(base.join("t/sealed"), fs::Permissions::from_mode(0o000)).unwrap();
    let r = as_nobody(base, &["t"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!base.join("t").exists());
}

#[test]
fn entries_that_vanish_mid_run_count_as_removed() {
    for s in scratch() {
        for round in 0..6 {
            let t = s.path().join(format!("t{round}"));
            nested(&t, 40, 1500);
            // A second deleter races us on the same subtrees.
            let t2 = t.clone();
            let other = std::thread::spawn(move || {
                for d in fs::read_dir(&t2).into_iter().flatten().flatten() {
                    let _ = fs::remove_dir_all(d.path());
                }
            });
            let r = rm(s.path(), &[t.file_name().unwrap().to_str().unwrap()]);
            other.join().unwrap();
            assert_eq!(r.code, 0, "round {round}: {r:?}");
            assert!(!t.exists());
        }
    }
}

#[test]
fn a_directory_that_refills_is_scanned_again() {
    for s in scratch() {
        for round in 0..6 {
            let t = s.path().join(format!("t{round}"));
            nested(&t, 20, 2000);
            let busy = t.join("d0/e0");
            let stop = Arc::new(AtomicBool::new(false));
            let (b2, stop2) = (busy.clone(), stop.clone());
            // A writer keeps adding files until the directory is gone, at
            // most 64 of them: as many as fast-rm scans a directory again,
            // so that however the two interleave, it is removed. (With 300
            // files and 8 scans, it failed now and then on a loaded
            // machine.)
            let writer = std::thread::spawn(move || {
                for i in 0..64 {
                    if stop2.load(Ordering::Relaxed)
                        || fs::write(b2.join(format!("new{i}")), b"").is_err()
                    {
                        break;
                    }
                }
            });
            let r = rm(s.path(), &[t.file_name().unwrap().to_str().unwrap()]);
            stop.store(true, Ordering::Relaxed);
            writer.join().unwrap();
            assert_eq!(r.code, 0, "round {round}: {r:?}");
            assert!(!t.exists());
        }
    }
}

#[test]
fn the_json_summary_names_failures() {
    let s = tempfile::tempdir().unwrap();
    fs::write(s.path().join("f"), b"").unwrap();
    let r = rm(s.path(), &["--json", "f", "nope"]);
    assert_eq!(r.code, 1);
    let j: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(j["files"], 1);
    assert_eq!(j["errors"], 1);
    assert_eq!(j["ok"], false);
    assert_eq!(j["failures"][0]["path"], "nope");
    assert!(j["elapsed_ms"].as_f64().unwrap() >= 0.0);
    assert!(j["bytes"].is_null());
}

#[test]
fn threads_setting_does_not_change_the_outcome() {
    for s in scratch() {
        for threads in ["1", "2", "8"] {
            let t = s.path().join("t");
            let canary = Canary::plant(&s.path().join("c"));
            nested(&t, 100, 5000);
            let r = rm(s.path(), &["-j", threads, "--json", "t"]);
            assert_eq!(r.code, 0, "{r:?}");
            let j: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
            assert_eq!(j["files"], 5000 + 100, "-j {threads}");
            assert_eq!(j["dirs"].as_u64().unwrap(), 1 + 100 + 10, "-j {threads}");
            assert!(!t.exists());
            canary.assert_intact();
        }
    }
}

/// The failures, without the order the threads met them in.
fn sorted_lines(s: &str) -> Vec<&str> {
    let mut l: Vec<&str> = s.lines().collect();
    l.sort_unstable();
    l
}

#[test]
fn a_dry_run_predicts_permission_failures() {
    for s in scratch() {
        let base = s.path();
        fs::set_permissions(base, fs::Permissions::from_mode(0o755)).unwrap();
        let t = base.join("t");
        nested(&t.join("free"), 5, 20);
        fs::create_dir_all(t.join("ro/inner")).unwrap();
        fs::write(t.join("ro/a"), b"").unwrap();
        fs::write(t.join("ro/b"), b"").unwrap();
        fs::write(t.join("ro/inner/c"), b"").unwrap();
        give_away(base);
        fs::set_permissions(t.join("ro"), fs::Permissions::from_mode(0o555)).unwrap();
        let dry = as_nobody(base, &["-n", "--json", "t"]);
        let real = as_nobody(base, &["--json", "t"]);
        fs::set_permissions(t.join("ro"), fs::Permissions::from_mode(0o755)).unwrap();
        if is_root() || !rustix::process::geteuid().is_root() {
            let d: serde_json::Value = serde_json::from_str(&dry.stdout).unwrap();
            let r: serde_json::Value = serde_json::from_str(&real.stdout).unwrap();
            for k in ["files", "dirs", "errors"] {
                assert_eq!(
                    d[k], r[k],
                    "{k}: dry {} vs real {}",
                    dry.stdout, real.stdout
                );
            }
            assert_eq!(d["errors"], 3, "a, b and inner: {}", dry.stderr);
            assert_eq!((dry.code, real.code), (1, 1));
            // The same messages, in rm's words, and only those.
            assert_eq!(sorted_lines(&dry.stderr), sorted_lines(&real.stderr));
            assert!(
                dry.stderr
                    .contains("fast-rm: cannot remove 't/ro/a': Permission denied\n"),
                "{}",
                dry.stderr
            );
        }
    }
}

#[test]
fn a_dry_run_predicts_the_sticky_bit() {
    if !is_root() {
        eprintln!("skipped: needs root to own files that nobody may not remove");
        return;
    }
    let s = tempfile::tempdir().unwrap();
    let base = s.path();
    fs::set_permissions(base, fs::Permissions::from_mode(0o777)).unwrap();
    // Like /tmp: everyone may write, but only owners may remove.
    let shared = base.join("shared");
    fs::create_dir(&shared).unwrap();
    fs::set_permissions(&shared, fs::Permissions::from_mode(0o1777)).unwrap();
    fs::write(shared.join("roots"), b"").unwrap();
    fs::write(shared.join("mine"), b"").unwrap();
    std::os::unix::fs::lchown(shared.join("mine"), Some(65534), Some(65534)).unwrap();
    let dry = as_nobody(base, &["-n", "shared/roots", "shared/mine"]);
    assert_eq!(dry.code, 1);
    assert_eq!(
        dry.stderr,
        "fast-rm: cannot remove 'shared/roots': Operation not permitted\n\
         fast-rm: dry run: would remove 1 files and 0 directories, 1 errors\n"
    );
    let real = as_nobody(base, &["shared/roots", "shared/mine"]);
    assert_eq!(real.code, 1);
    assert_eq!(
        real.stderr,
        "fast-rm: cannot remove 'shared/roots': Operation not permitted\n"
    );
    assert!(shared.join("roots").exists() && !shared.join("mine").exists());
}

/// `-d` on a directory that is not empty says so, as rm does (it looks
/// before it removes), even where the kernel's rmdir would answer
/// "Permission denied" first: its parent is not writable. Found by
/// tests/random_trees.rs.
#[test]
fn dash_d_on_a_full_directory_says_not_empty_whatever_its_parent() {
    for s in scratch() {
        let base = s.path();
        fs::set_permissions(base, fs::Permissions::from_mode(0o755)).unwrap();
        fs::create_dir_all(base.join("ro/full/x")).unwrap();
        fs::create_dir_all(base.join("ro/empty")).unwrap();
        give_away(base);
        fs::set_permissions(base.join("ro"), fs::Permissions::from_mode(0o555)).unwrap();
        let r = as_nobody(base, &["-d", "ro/full", "ro/empty"]);
        fs::set_permissions(base.join("ro"), fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(r.code, 1, "{r:?}");
        let expected = if is_root() {
            "fast-rm: cannot remove 'ro/full': Directory not empty\n\
             fast-rm: cannot remove 'ro/empty': Permission denied\n"
        } else {
            // Not root: the parent's mode does not stop its owner... only
            // the first line is certain.
            "fast-rm: cannot remove 'ro/full': Directory not empty\n"
        };
        assert!(r.stderr.starts_with(expected), "{}", r.stderr);
        assert!(base.join("ro/full/x").is_dir() && base.join("ro/empty").is_dir());
    }
}

/// More that tests/random_trees.rs found, as `nobody`: `-d` refuses a
/// directory it cannot read ("Directory not empty", as rm, which does not
/// try), and `--preserve-root=all` words a parent it cannot stat as rm
/// does.
#[test]
fn unreadable_directories_under_d_and_preserve_root_all() {
    if !is_root() {
        return;
    }
    for s in scratch() {
        let base = s.path();
        fs::set_permissions(base, fs::Permissions::from_mode(0o755)).unwrap();
        fs::create_dir(base.join("shut")).unwrap();
        give_away(base);
        fs::set_permissions(base.join("shut"), fs::Permissions::from_mode(0o000)).unwrap();
        let r = as_nobody(base, &["-d", "shut"]);
        assert_eq!(r.code, 1, "{r:?}");
        assert_eq!(
            r.stderr,
            "fast-rm: cannot remove 'shut': Directory not empty\n"
        );
        assert!(base.join("shut").is_dir());
        let r = as_nobody(base, &["-r", "--preserve-root=all", "shut"]);
        assert_eq!(r.code, 1, "{r:?}");
        assert_eq!(
            r.stderr,
            "fast-rm: failed to stat 'shut/..': skipping 'shut'\n"
        );
        fs::set_permissions(base.join("shut"), fs::Permissions::from_mode(0o755)).unwrap();
    }
}
