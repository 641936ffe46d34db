//! The floor runs in a child process (the driver as `--floor SHAPE N TARGET`).

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
