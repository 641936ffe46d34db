//! What the integration tests share.

use rustix::fd::OwnedFd;
use std::time::Duration;

/// A process to watch through its pidfd.
pub struct Watched(OwnedFd);

impl Watched {
    /// Watches process `pid` (which must exist now).
    pub fn new(pid: i32) -> Watched {
        let pid = rustix::process::Pid::from_raw(pid).expect("a positive pid");
        Watched(rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).unwrap())
    }

    /// Whether the process exits within `time`, blocking in `poll` on its
    /// pidfd (no polling loop).
    pub fn exits_within(&self, time: Duration) -> bool {
        let mut fds = [rustix::event::PollFd::new(
            &self.0,
            rustix::event::PollFlags::IN,
        )];
        let timeout = rustix::time::Timespec {
            tv_sec: time.as_secs() as i64,
            tv_nsec: i64::from(time.subsec_nanos()),
        };
        rustix::event::poll(&mut fds, Some(&timeout)).unwrap() == 1
    }
}
