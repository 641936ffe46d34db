//! Job control's state (`set -m`, on in an interactive shell): the job
//! table's [`Job`], the [`Terminal`] the shell controls jobs on and the
//! process [`Group`] being built, and the words `jobs` prints. What the
//! shell does with them (process groups, handing the terminal over and
//! taking it back, waiting with WUNTRACED) is `shell/jobs.rs`.
//!
//! Invariant: the shell itself never reads the terminal while a job owns
//! it, and every path that gives the terminal away (`Shell::end_job`)
//! takes it back before returning.

use crate::sys;
use rustc_hash::FxHashMap as HashMap;
use std::os::fd::RawFd;

/// A background job.
#[derive(Debug, Clone)]
pub struct Job {
    pub id: usize,
    pub pids: Vec<i32>,
    /// Raw wait statuses of the pids that finished.
    pub done: HashMap<i32, i32>,
    pub command: String,
    /// Its process group (job control), or 0.
    pub pgid: i32,
    /// Stopped, by this signal.
    pub stopped: Option<i32>,
    /// Started in the foreground (then stopped): `jobs` shows no `&`.
    pub foreground: bool,
    /// Its last change was reported (the notice before a prompt).
    pub notified: bool,
    /// `wait` returned its status (an interactive shell keeps it listed
    /// until reported).
    pub waited: bool,
}

impl Job {
    pub fn finished(&self) -> bool {
        self.pids.iter().all(|p| self.done.contains_key(p))
    }

    /// The job's status: its last process's.
    pub fn status(&self) -> Option<i32> {
        let last = self.pids.last()?;
        self.done.get(last).map(|&s| sys::status_of(s))
    }
}

/// The terminal the shell controls jobs on.
#[derive(Debug)]
pub struct Terminal {
    /// The shell's own descriptor for it (close-on-exec, 255 and up).
    pub fd: RawFd,
    /// The shell's process group.
    pub pgid: i32,
    /// The modes the shell keeps: put back after a job that stopped or was
    /// killed leaves them changed.
    pub modes: Option<sys::Modes>,
}

/// The processes of the job being started in the foreground.
#[derive(Debug, Default, Clone)]
pub struct Group {
    /// 0 until the first process is created.
    pub pgid: i32,
    pub pids: Vec<i32>,
    pub done: HashMap<i32, i32>,
    /// The job stopped (by this signal): the rest of it is not waited for.
    pub stopped: Option<i32>,
}

/// The state of a job, as `jobs` prints it.
pub fn state_text(j: &Job) -> String {
    if let Some(sig) = j.stopped {
        // bash names the signal only for a job stopped by reading or
        // writing the terminal from the background.
        return match sig {
            libc::SIGTTIN => "Stopped(SIGTTIN)".into(),
            libc::SIGTTOU => "Stopped(SIGTTOU)".into(),
            _ => "Stopped".into(),
        };
    }
    if !j.finished() {
        return "Running".into();
    }
    let last = j
        .pids
        .last()
        .and_then(|p| j.done.get(p))
        .copied()
        .unwrap_or(0);
    if libc::WIFSIGNALED(last) {
        let mut t = signal_desc(libc::WTERMSIG(last));
        if libc::WCOREDUMP(last) {
            t.push_str(" (core dumped)");
        }
        t
    } else {
        match libc::WEXITSTATUS(last) {
            0 => "Done".into(),
            n => format!("Exit {n}"),
        }
    }
}

/// The C library's description of a signal ("Terminated", "Killed").
pub fn signal_desc(sig: i32) -> String {
    // SAFETY: strsignal returns a pointer to a static or thread-local
    // string, read at once.
    unsafe {
        let p = libc::strsignal(sig);
        if p.is_null() {
            return format!("Signal {sig}");
        }
        std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

/// A job's text on one line (a compound command's newlines become `; `).
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, l) in s.lines().enumerate() {
        let l = l.trim();
        if l.is_empty() {
            continue;
        }
        if i > 0 && !out.is_empty() {
            let joinable = out.ends_with("do")
                || out.ends_with("then")
                || out.ends_with('{')
                || out.ends_with("else");
            out.push_str(if joinable { " " } else { "; " });
        }
        out.push_str(l);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_line() {
        assert_eq!(
            super::one_line("for i in 1 2\ndo\n    sleep $i\ndone"),
            "for i in 1 2; do sleep $i; done"
        );
    }
}
