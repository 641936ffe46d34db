//! The driver as xtask runs it: every stdout line is an event, and every
//! workload yields records.

use latency::Event;
use std::process::Command;

#[test]
fn quick_run_emits_a_plan_steps_and_records() {
    let scratch = tempfile::tempdir().unwrap();
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_floor"))
        .arg("--quick")
        .arg("--scratch")
        .arg(scratch.path())
        .arg("--shm")
        .arg(shm.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<Event> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| Event::parse(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let Event::Plan { steps } = events[0] else {
        panic!("first comes the plan")
    };
    let announced = events
        .iter()
        .filter(|e| matches!(e, Event::Step { .. }))
        .count();
    assert_eq!(announced as u64, steps);
    let records: Vec<_> = events
        .iter()
        .filter_map(|e| {
            if let Event::Record(r) = e {
                Some(r)
            } else {
                None
            }
        })
        .collect();
    for w in [
        "spawn /bin/true",
        "unlinkat per file",
        "epoll_wait(0) on an empty set",
    ] {
        assert!(records.iter().any(|r| r.workload == w), "no record for {w}");
    }
    let fork = records
        .iter()
        .find(|r| r.subject == "fork+exec+wait4")
        .unwrap();
    assert_eq!(fork.ratio.as_ref().unwrap().reference, "posix_spawn+wait4");
    let fss: Vec<_> = records.iter().filter_map(|r| r.params.get("fs")).collect();
    assert!(fss.iter().any(|f| *f == "tmpfs"), "{fss:?}");
    // The scratch folders are left empty.
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0);
    assert_eq!(std::fs::read_dir(shm.path()).unwrap().count(), 0);
}

#[test]
fn bad_arguments_are_a_clear_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_floor"))
        .arg("--frobnicate")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("frobnicate"));
    assert!(out.stdout.is_empty());
}
