//! The daemon out of file descriptors: `accept` fails with `EMFILE`, and the
//! daemon must neither exit nor spin, and must serve the waiting client once
//! descriptors are free again. Its own test binary: it lowers the process's
//! descriptor limit, which no other test may share.

mod common;

use greppy::daemon::Limits;
use greppy::protocol::{self, Decoder, Request, Response};
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::time::Duration;

fn hello(s: &mut UnixStream) -> Option<Response> {
    s.write_all(&protocol::encode(&Request::Hello {
        version: protocol::VERSION,
        client: "test".into(),
    }))
    .ok()?;
    let mut d = Decoder::new(1 << 20);
    let mut buf = [0u8; 4096];
    loop {
        if let Some(m) = d.decode::<Response>().unwrap() {
            return Some(m);
        }
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => d.push(&buf[..n]),
        }
    }
}

#[test]
fn a_daemon_out_of_descriptors_waits_and_serves_the_client_after() {
    let mut srv = common::Server::start(Limits::default());
    let (rt, socket) = (&srv.rt, &srv.socket);

    // A low limit, so that filling the table is quick; then fill it but
    // for one descriptor: the client's socket takes that, and the daemon's
    // accept finds none.
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    limit.current = Some(limit.current.unwrap_or(4096).min(4096));
    setrlimit(Resource::Nofile, limit).unwrap();
    let mut filler: Vec<OwnedFd> = Vec::new();
    while let Ok(fd) = rustix::fs::open(
        "/dev/null",
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    ) {
        filler.push(fd);
    }
    // One descriptor for the client.
    filler.pop();
    let mut client = UnixStream::connect(socket).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    // The daemon tries to accept and fails: it must still be there a
    // while later (before the fix it returned at once).
    let gone = rt.block_on(async {
        tokio::time::timeout(Duration::from_millis(300), &mut srv.served)
            .await
            .is_ok()
    });
    assert!(!gone, "the daemon exited on EMFILE");
    drop(filler);
    // Descriptors are free again: the waiting client is served.
    assert!(
        matches!(hello(&mut client), Some(Response::Hello { .. })),
        "the waiting client was not served"
    );
    assert!(!srv.served.is_finished());
    let mut other = UnixStream::connect(socket).unwrap();
    other
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    assert!(matches!(hello(&mut other), Some(Response::Hello { .. })));
}
