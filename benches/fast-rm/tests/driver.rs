//! The driver as a process: the floor's child (`--floor SHAPE N TARGET`),
//! and a run that meets a failing subject.

use std::process::Command;

const DRIVER: &str = env!("CARGO_BIN_EXE_fast-rm-bench");

/// Runs the floor's child on `target`, which must not exist yet.
fn floor(shape: &str, n: &str, target: &std::path::Path) -> std::process::Output {
    Command::new(DRIVER)
        .args(["--floor", shape, n])
        .arg(target)
        .output()
        .unwrap()
}

#[test]
fn the_floor_child_builds_removes_and_prints_nanoseconds() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t");
    let out = floor("nested", "500", &target);
    assert!(out.status.success(), "{out:?}");
    let ns: u64 = String::from_utf8(out.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(ns > 0);
    assert!(!target.exists(), "the floor removes the whole tree");
}

#[test]
fn the_floor_child_takes_a_target_that_is_not_utf8() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    // Inside a folder whose name is not UTF-8: a lossy copy of the path
    // would name a folder that does not exist.
    let parent = dir.path().join(std::ffi::OsStr::from_bytes(b"d\xff"));
    std::fs::create_dir(&parent).unwrap();
    let target = parent.join("t");
    let out = floor("flat", "50", &target);
    assert!(out.status.success(), "{out:?}");
    assert!(
        !target.exists(),
        "removed under its own name, not a lossy one"
    );
    assert_eq!(std::fs::read_dir(&parent).unwrap().count(), 0);
}

#[test]
fn the_floor_child_refuses_bad_arguments() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["--floor", "round", "5", "x"][..],
        &["--floor", "flat", "many", "x"],
        &["--floor", "flat"],
    ] {
        let out = Command::new(DRIVER)
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}: a clear error");
        assert!(out.stdout.is_empty());
    }
}

/// A subject that fails costs its rounds, not the run: the failures are
/// reported as notes, the cell without a good round has no rows, and the
/// driver ends well, so a long run keeps everything else it measured.
#[test]
fn a_failing_subject_is_reported_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let (scratch, shm) = (dir.path().join("disk"), dir.path().join("shm"));
    let out = Command::new(DRIVER)
        .arg("--quick")
        .arg("--scratch")
        .arg(&scratch)
        .arg("--shm")
        .arg(&shm)
        .env("XTASK_BINS", r#"{"fast-rm": "/bin/false"}"#)
        .env_remove("XTASK_PEERS")
        .env("FAST_RM_BENCH_SIZES", "0")
        .env("FAST_RM_BENCH_SHAPES", "nested")
        .env("FAST_RM_BENCH_FS", "disk")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let failed = stdout
        .lines()
        .filter(|l| l.contains("FAILED: nested 0 files on") && l.contains("that round is left out"))
        .count();
    // Two warm-up rounds and the quick run's ten.
    assert_eq!(failed, 12, "{stdout}");
    assert!(stdout.contains("no round succeeded, no rows"), "{stdout}");
    assert!(!stdout.contains(r#""event":"record""#), "{stdout}");
}
