//! Timing a whole child process: wall time, plus user and system CPU and peak
//! RSS from the `rusage` that `wait4` returns. The parent blocks in `wait4`;
//! nothing polls.

use crate::runner::Sample;
use std::io;
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

/// What one run of a child process cost.
#[derive(Debug, Clone, Copy)]
pub struct ProcessTiming {
    pub status: ExitStatus,
    pub wall: Duration,
    pub user: Duration,
    pub system: Duration,
    /// Peak resident set size in KiB (`ru_maxrss`).
    pub max_rss_kib: u64,
}

impl ProcessTiming {
    /// This timing as a runner sample (wall time is the measured value).
    pub fn sample(&self) -> Sample {
        Sample {
            value: crate::hist::duration_ns(self.wall),
            user_ns: Some(crate::hist::duration_ns(self.user)),
            sys_ns: Some(crate::hist::duration_ns(self.system)),
            max_rss_kib: Some(self.max_rss_kib),
        }
    }
}

/// Spawns `cmd`, waits for it with `wait4`, and returns its timing. The wall
/// clock spans spawn to reap. Standard streams are whatever `cmd` was given.
pub fn time_command(cmd: &mut Command) -> io::Result<ProcessTiming> {
    let start = Instant::now();
    let child = cmd.spawn()?;
    let pid = libc::pid_t::try_from(child.id()).map_err(io::Error::other)?;
    let (status, usage) = wait4(pid)?;
    let wall = start.elapsed();
    // The child is reaped; dropping the handle only closes its pipes.
    drop(child);
    Ok(ProcessTiming {
        status,
        wall,
        user: timeval(usage.ru_utime),
        system: timeval(usage.ru_stime),
        max_rss_kib: u64::try_from(usage.ru_maxrss).unwrap_or(0),
    })
}

/// Blocks in `wait4(pid)` until the child exits, retrying on EINTR.
pub fn wait4(pid: libc::pid_t) -> io::Result<(ExitStatus, libc::rusage)> {
    use std::os::unix::process::ExitStatusExt;
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: all-zero is a valid `rusage` (plain integers and timevals).
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: both pointers are to live, writable locals of the right type.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            return Ok((ExitStatus::from_raw(status), usage));
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

fn timeval(tv: libc::timeval) -> Duration {
    let secs = u64::try_from(tv.tv_sec).unwrap_or(0);
    let micros = u32::try_from(tv.tv_usec).unwrap_or(0);
    Duration::from_secs(secs) + Duration::from_micros(u64::from(micros))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_a_real_child() {
        let t = time_command(Command::new("/bin/sh").args(["-c", "exit 3"])).unwrap();
        assert_eq!(t.status.code(), Some(3));
        assert!(t.wall > Duration::ZERO);
        assert!(t.max_rss_kib > 0, "a real process has a resident set");
    }

    #[test]
    fn cpu_time_is_attributed_to_the_child() {
        // A busy loop in the child must show as user time.
        let t = time_command(
            Command::new("/bin/sh")
                .args(["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"]),
        )
        .unwrap();
        assert!(t.status.success());
        assert!(t.user + t.system > Duration::from_millis(5), "{t:?}");
        assert!(t.wall >= t.user.min(t.wall));
    }

    #[test]
    fn missing_program_is_an_error() {
        assert!(time_command(&mut Command::new("/nonexistent/program")).is_err());
    }
}
