//! The daemon's life as the command line sees it: starts at once from
//! several commands, and a daemon of an older protocol version, left
//! running across an upgrade, replaced (the command line scans meanwhile).

mod common;

use common::Daemon;
use greppy::protocol::{self, Response};
use std::io::{BufRead, Read, Write};
use std::os::unix::process::ExitStatusExt;

/// Not a test of its own: the older daemon, run as a child process by
/// `an_older_daemon_is_replaced` (which sets `GREPPY_OLD_DAEMON` to its
/// socket). It refuses every greeting as a daemon of version 1 did, until
/// it is killed.
#[test]
#[ignore = "run as a child of an_older_daemon_is_replaced"]
fn old_daemon() {
    let Some(socket) = std::env::var_os("GREPPY_OLD_DAEMON") else {
        return;
    };
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    println!("listening");
    std::io::stdout().flush().unwrap();
    for s in listener.incoming() {
        let mut s = s.unwrap();
        let mut len = [0u8; 4];
        if s.read_exact(&mut len).is_err() {
            continue;
        }
        let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
        let _ = s.read_exact(&mut body);
        let message = format!(
            "protocol version {}; this daemon speaks 1",
            protocol::VERSION
        );
        let _ = s.write_all(&protocol::encode(&Response::Error { id: None, message }));
    }
}

#[test]
fn an_older_daemon_is_replaced() {
    let (_t, root) = common::repo();
    common::write(&root, "src/a.rs", "fn upgrade_needle() {}\n");
    let d = Daemon {
        dir: tempfile::tempdir().unwrap(),
    };
    let run = d.socket().parent().unwrap().to_path_buf();
    std::fs::create_dir_all(&run).unwrap();
    std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let mut old = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "old_daemon", "--include-ignored", "--nocapture"])
        .env("GREPPY_OLD_DAEMON", d.socket())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Its word that it listens (a blocking read).
    let mut ready = String::new();
    let mut out = std::io::BufReader::new(old.stdout.take().unwrap());
    while !ready.contains("listening") {
        ready.clear();
        assert!(
            out.read_line(&mut ready).unwrap() > 0,
            "the old daemon ended"
        );
    }
    let o = d.output(&["-n", "upgrade_needle"], &root);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "src/a.rs:1:fn upgrade_needle() {}\n"
    );
    assert!(err.contains("another version"), "{err}");
    assert!(err.contains("a new one started"), "{err}");
    // The old one was stopped (SIGTERM); the new one answers.
    assert_eq!(old.wait().unwrap().signal(), Some(15));
    let o = d.cmd().args(["daemon", "start"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = d.output(&["-n", "upgrade_needle"], &root);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(!err.contains("another version"), "{err}");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "src/a.rs:1:fn upgrade_needle() {}\n"
    );
}

/// Four `greppy daemon start` at once: one daemon starts, and every command
/// says so (one whose own daemon found another answering succeeds too).
#[test]
fn starts_at_once_all_succeed() {
    for _ in 0..5 {
        let d = Daemon {
            dir: tempfile::tempdir().unwrap(),
        };
        let starts: Vec<_> = (0..4)
            .map(|_| d.cmd().args(["daemon", "start"]).spawn().unwrap())
            .collect();
        for mut s in starts {
            assert!(s.wait().unwrap().success());
        }
        // One daemon answers.
        assert!(d.pid() > 0);
    }
}
