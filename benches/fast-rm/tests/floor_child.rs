//! The floor runs in a child process (the driver as `--floor SHAPE N TARGET`).

use std::process::Command;

const DRIVER: &str = env!("CARGO_BIN_EXE_fast-rm-bench");

#[test]
fn the_floor_child_builds_removes_and_prints_nanoseconds() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t");
    let out = Command::new(DRIVER)
        .args(["--floor", "nested", "500"])
        .arg(&target)
        .output()
        .unwrap();
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
