use floor::{EpollZero, PairSendRecv, Program, UnixRoundTrip, unlinkat_per_file};

#[test]
fn spawners_run_the_program_and_report_failure() {
    let t = Program::new("/bin/true", &[]).unwrap();
    assert!(t.posix_spawn_wait().unwrap().value > 0);
    assert!(t.fork_exec_wait().unwrap().value > 0);
    let f = Program::new("/bin/false", &[]).unwrap();
    assert!(f.posix_spawn_wait().is_err());
    assert!(f.fork_exec_wait().is_err());
    let missing = Program::new("/nonexistent", &[]).unwrap();
    assert!(missing.posix_spawn_wait().is_err());
    assert!(missing.fork_exec_wait().is_err(), "exec failure exits 127");
}

#[test]
fn spawned_program_gets_its_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let p = Program::new(
        "/bin/sh",
        &["-c", "echo \"$0\" > \"$1\"", "zero", out.to_str().unwrap()],
    )
    .unwrap();
    p.posix_spawn_wait().unwrap();
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "zero\n");
}

#[test]
fn socket_round_trips_move_the_bytes() {
    let mut rt = UnixRoundTrip::start(64, 2048).unwrap();
    for _ in 0..100 {
        rt.round_trip().unwrap();
    }
    let mut pair = PairSendRecv::new(1024).unwrap();
    for _ in 0..100 {
        pair.send_recv().unwrap();
    }
}

#[test]
fn unlinkat_leaves_nothing_behind() {
    let parent = tempfile::tempdir().unwrap();
    let s = unlinkat_per_file(parent.path(), 500).unwrap();
    assert!(s.value > 0);
    assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 0);
}

#[test]
fn epoll_wait_zero_returns_at_once() {
    let mut ep = EpollZero::new().unwrap();
    assert!(ep.wait_zero().unwrap().value < 1_000_000_000);
}
