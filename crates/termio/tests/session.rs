//! Sessions on tokio with real children: output, input, viewers, flow
//! control, the end.

mod common;

use std::time::Duration;
use termio::pty::Command;
use termio::session::{Event, Options, Session, Viewer};

/// A ring of 256 KiB, read 16 KiB at a time: 8 MiB of output overruns it.
fn small_ring() -> Options {
    Options {
        ring: 256 << 10,
        read: 16 << 10,
        ..Options::default()
    }
}

fn sh(script: &str) -> Command {
    Command::new("/bin/sh").arg("-c").arg(script)
}

/// Everything a viewer reads up to the end: the bytes, what it was told it
/// lost, and the exit code.
async fn drain(v: &mut Viewer) -> (Vec<u8>, Vec<(u64, u64)>, i32) {
    let (mut out, mut lost) = (Vec::new(), Vec::new());
    loop {
        match v.next(64 << 10).await {
            Event::Output { seq, bytes } => {
                assert_eq!(seq, v.cursor() - bytes.len() as u64);
                out.extend_from_slice(&bytes);
            }
            Event::Lost { from, to } => lost.push((from, to)),
            Event::End { code } => return (out, lost, code),
        }
    }
}

/// The child's output, then its exit code, after all of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_then_the_end() {
    for _ in 0..5 {
        let s = Session::spawn(
            &sh("head -c 65536 /dev/zero | tr '\\0' x; exit 4"),
            Options::default(),
        )
        .unwrap();
        let (out, lost, code) = drain(&mut s.attach(Some(0))).await;
        assert_eq!((out.len(), lost.len(), code), (65536, 0, 4));
    }
}

/// Input goes to the child at once; a viewer that attaches later from a
/// sequence number gets exactly the bytes from there (a reconnect).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_and_a_reconnect_from_a_sequence_number() {
    let mut cmd = Command::new("cat");
    cmd.raw = true;
    let s = Session::spawn(&cmd, Options::default()).unwrap();
    let mut first = s.attach(Some(0));
    s.write(b"hello ").await.unwrap();
    let mut got = Vec::new();
    while got.len() < 6 {
        match first.next(1024).await {
            Event::Output { bytes, .. } => got.extend_from_slice(&bytes),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(got, b"hello ");
    s.write("wörld".as_bytes()).await.unwrap();
    // A viewer that had the first 3 bytes comes back for the rest.
    let mut again = s.attach(Some(3));
    let mut rest = Vec::new();
    while rest.len() < "lo wörld".len() {
        match again.next(1024).await {
            Event::Output { bytes, .. } => rest.extend_from_slice(&bytes),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(rest, "lo wörld".as_bytes());
    s.signal(rustix::process::Signal::HUP).unwrap();
    let (_, _, code) = drain(&mut again).await;
    assert_eq!(code, -1);
}

/// With its only viewer stalled, the session stops reading and the child's
/// writes block: nothing is lost, and the end does not come until the
/// viewer reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_only_viewer_holds_the_child_back() {
    let opts = small_ring();
    let s = Session::spawn(&sh("head -c 8388608 /dev/zero; exit 0"), opts).unwrap();
    let mut v = s.attach(Some(0));
    // The viewer reads nothing: in half a second the child does not exit
    // (waited for off the runtime's workers).
    let watched = common::Watched::new(s.pid() as i32);
    let exited = tokio::task::block_in_place(|| watched.exits_within(Duration::from_millis(500)));
    assert!(!exited, "the child finished with its only viewer stalled");
    assert!(
        s.end() <= 256 << 10,
        "read {} bytes past the stalled viewer",
        s.end()
    );
    let (out, lost, code) = drain(&mut v).await;
    assert_eq!((out.len(), lost, code), (8 << 20, vec![], 0));
}

/// A stalled viewer does not hold back one that reads: that one gets all,
/// and the stalled one is told exactly which bytes it lost, then reads on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_viewer_loses_bytes_and_is_told_which() {
    let opts = small_ring();
    let s = Session::spawn(&sh("head -c 8388608 /dev/zero; exit 0"), opts).unwrap();
    let mut stalled = s.attach(Some(0));
    let mut reader = s.attach(Some(0));
    let (out, lost, code) = drain(&mut reader).await;
    assert_eq!((out.len(), lost, code), (8 << 20, vec![], 0));
    let (rest, lost, _) = drain(&mut stalled).await;
    assert_eq!(lost.len(), 1);
    let (from, to) = lost[0];
    assert_eq!(from, 0);
    assert_eq!(to + rest.len() as u64, 8 << 20);
    assert!(rest.len() <= 256 << 10);
}

/// Bytes that only look like the start of a character (a lone 0xE2, then
/// nothing more while the child runs on) go after a short hold, not never.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_character_start_is_not_held_for_good() {
    let s = Session::spawn(&sh("printf 'ab\\342'; exec cat"), Options::default()).unwrap();
    let mut v = s.attach(Some(0));
    let mut got = Vec::new();
    while got.len() < 3 {
        match v.next(1024).await {
            Event::Output { bytes, .. } => got.extend_from_slice(&bytes),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(got, b"ab\xE2");
    s.signal(rustix::process::Signal::HUP).unwrap();
}

/// The output's plan-mode markers, escapes and all, come as plan events,
/// with the plan's text; then none once the session has ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_markers_in_the_output_come_as_events() {
    use termio::plan::{Event as P, Kind};
    let script = "printf '\\033[2mplan \\033[1mmode\\033[0m on\\r\\n'; \
                  printf \"Here is Claude's plan:\\r\\n1. Retry\\r\\nWould you like to proceed?\\r\\n\"";
    let s = Session::spawn(&sh(script), Options::default()).unwrap();
    let mut got = Vec::new();
    while let Some(e) = s.next_plan().await {
        got.push(e);
    }
    let marker = |kind| P::Marker {
        agent: "claude-code",
        kind,
    };
    assert_eq!(
        got,
        [
            marker(Kind::Entered),
            marker(Kind::PlanStart),
            P::Plan {
                agent: "claude-code",
                text: "1. Retry".into()
            },
            marker(Kind::PlanEnd),
        ]
    );
    assert_eq!(s.ended().await, 0);
}
