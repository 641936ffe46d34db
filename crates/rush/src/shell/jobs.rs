//! Job control as the shell runs it: starting a pipeline in a process
//! group of its own, giving it the terminal and taking it back, waiting
//! with WUNTRACED, and the job table's notices (see [`crate::job`] for the
//! state and the invariant).

use crate::job::{Group, Job, Terminal, one_line, signal_desc, state_text};
use crate::shell::Shell;
use crate::sys;
use std::os::fd::{AsRawFd, IntoRawFd};

impl Shell {
    /// Takes the terminal for job control, as bash does at start: waits to
    /// be in the foreground (stopping itself with SIGTTIN until then),
    /// becomes a process group of its own and makes it the terminal's
    /// foreground group. False if there is no terminal.
    pub fn take_terminal(&mut self) -> bool {
        if self.jc.is_some() {
            return true;
        }
        let Ok(tty) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
        else {
            return false;
        };
        let Ok(tty) = sys::move_cloexec(tty.into(), 255) else {
            return false;
        };
        let fd = tty.as_raw_fd();
        // SAFETY: process-group calls on this process and its terminal.
        unsafe {
            loop {
                let fg = libc::tcgetpgrp(fd);
                if fg < 0 {
                    return false;
                }
                if fg == libc::getpgrp() {
                    break;
                }
                libc::kill(-libc::getpgrp(), libc::SIGTTIN);
            }
        }
        sys::ignore_for_shell(&[libc::SIGTSTP, libc::SIGTTIN, libc::SIGTTOU]);
        // SAFETY: as above.
        let pgid = unsafe {
            let pid = libc::getpid();
            if libc::getpgrp() != pid {
                libc::setpgid(0, pid);
            }
            libc::tcsetpgrp(fd, pid);
            pid
        };
        self.jc = Some(Terminal {
            fd: tty.into_raw_fd(),
            pgid,
            modes: sys::Modes::get(fd),
        });
        true
    }

    /// Whether the pipelines this shell starts are jobs of their own.
    pub fn job_control(&self) -> bool {
        self.opts.monitor && !self.subshell
    }

    /// Starts a foreground job; returns the one it replaces, for
    /// [`Shell::end_job`].
    pub fn begin_job(&mut self) -> Option<Option<Group>> {
        if !self.job_control() {
            return None;
        }
        Some(self.group.replace(Group::default()))
    }

    /// Where the next child of the foreground job goes.
    pub fn job_pgrp(&self) -> Option<sys::Pgrp> {
        let g = self.group.as_ref()?;
        if !self.job_control() {
            return None;
        }
        Some(sys::Pgrp {
            pgid: g.pgid,
            tty: self.jc.as_ref().map(|t| t.fd),
        })
    }

    /// The parent's side of a new child of the foreground job.
    pub fn job_joined(&mut self, pid: i32) {
        let Some(pg) = self.job_pgrp() else {
            return;
        };
        pg.join_from_parent(pid);
        if let Some(g) = &mut self.group {
            if g.pgid == 0 {
                g.pgid = pid;
                if let Some(t) = &self.jc {
                    // SAFETY: handing the terminal to our child's group;
                    // SIGTTOU is ignored by the shell.
                    unsafe { libc::tcsetpgrp(t.fd, pid) };
                }
            }
            g.pids.push(pid);
        }
    }

    /// Waits for `pid`, a child the shell started in the foreground: its
    /// status, or 128 + the signal if its job stopped.
    pub fn wait_child(&mut self, pid: i32) -> i32 {
        let in_job =
            self.group.as_ref().is_some_and(|g| g.pids.contains(&pid)) && self.job_control();
        if !in_job {
            return match sys::wait_pid(pid, false) {
                Ok(sys::Waited::Done(raw)) => sys::status_of(raw),
                _ => 127,
            };
        }
        if let Some(sig) = self.group.as_ref().and_then(|g| g.stopped) {
            return 128 + sig;
        }
        // A hang-up while the job runs is passed on to it by the signal
        // handler (the shell leaves once it has ended, see `run_traps`);
        // one that came before is passed on here.
        let pgid = self.group.as_ref().map_or(0, |g| g.pgid);
        if self.opts.interactive {
            sys::forward_hangup_to(pgid);
            if sys::is_pending(libc::SIGHUP) {
                let _ = sys::kill(-pgid, libc::SIGHUP);
                let _ = sys::kill(-pgid, libc::SIGCONT);
            }
        }
        let event = sys::wait_untraced(pid);
        sys::forward_hangup_to(0);
        match event {
            Ok(sys::Event::Done(raw)) => {
                if let Some(g) = &mut self.group {
                    g.done.insert(pid, raw);
                }
                sys::status_of(raw)
            }
            Ok(sys::Event::Stopped(sig)) => {
                if let Some(g) = &mut self.group {
                    g.stopped = Some(sig);
                }
                128 + sig
            }
            Ok(sys::Event::Continued) | Err(_) => 127,
        }
    }

    /// Ends the foreground job begun by [`Shell::begin_job`]: takes the
    /// terminal back, keeps or restores its modes, and puts a stopped job
    /// in the table (reporting it).
    pub fn end_job(&mut self, outer: Option<Group>, text: &dyn Fn() -> Vec<u8>) {
        let Some(g) = std::mem::replace(&mut self.group, outer) else {
            return;
        };
        if g.pids.is_empty() {
            return;
        }
        self.ran_job = true;
        let killed_by = g
            .pids
            .last()
            .and_then(|p| g.done.get(p))
            .filter(|&&raw| libc::WIFSIGNALED(raw))
            .map(|&raw| libc::WTERMSIG(raw));
        if let Some(t) = &mut self.jc {
            // SAFETY: taking the terminal back for the shell's group.
            unsafe { libc::tcsetpgrp(t.fd, t.pgid) };
            if g.stopped.is_some() || killed_by.is_some() {
                if let Some(m) = &t.modes {
                    m.set(t.fd);
                }
            } else {
                t.modes = sys::Modes::get(t.fd).or(t.modes);
            }
        }
        if let Some(sig) = g.stopped {
            let id = self.next_job_id();
            let mut command = String::from_utf8_lossy(&text()).into_owned();
            command = one_line(&command);
            let job = Job {
                id,
                pids: g.pids,
                done: g.done,
                command,
                pgid: g.pgid,
                stopped: Some(sig),
                foreground: true,
                notified: true,
                waited: false,
            };
            self.jobs.push(job);
            let line = self.job_line(self.jobs.len() - 1, false);
            self.err_out(format!("\n{line}").as_bytes());
            return;
        }
        // A job killed by SIGINT interrupts the shell's own loop, as if the
        // shell had got the signal (bash).
        if killed_by == Some(libc::SIGINT) && self.opts.interactive {
            sys::raise_pending(libc::SIGINT);
        }
        if let Some(sig) = killed_by.filter(|&s| s != libc::SIGINT && s != libc::SIGPIPE)
            && self.opts.interactive
        {
            let raw = g
                .pids
                .last()
                .and_then(|p| g.done.get(p))
                .copied()
                .unwrap_or(0);
            let mut msg = signal_desc(sig);
            if libc::WCOREDUMP(raw) {
                msg.push_str(" (core dumped)");
            }
            msg.push('\n');
            self.err_out(msg.as_bytes());
        }
    }

    /// Sends SIGHUP to every job (and SIGCONT to stopped ones, so that
    /// they see it), as a shell whose terminal hung up does.
    pub fn hang_up_jobs(&mut self) {
        for j in &self.jobs {
            if j.finished() {
                continue;
            }
            let target = if j.pgid > 0 { -j.pgid } else { j.pids[0] };
            let _ = sys::kill(target, libc::SIGHUP);
            if j.stopped.is_some() {
                let _ = sys::kill(target, libc::SIGCONT);
            }
        }
    }

    pub fn next_job_id(&self) -> usize {
        self.jobs.iter().map(|j| j.id).max().unwrap_or(0) + 1
    }

    /// The index of the current job (`%+`): the last stopped one, or the
    /// last started.
    pub fn current_job(&self) -> Option<usize> {
        self.jobs
            .iter()
            .rposition(|j| j.stopped.is_some())
            .or_else(|| self.jobs.len().checked_sub(1))
    }

    /// The previous job (`%-`).
    pub fn previous_job(&self) -> Option<usize> {
        let cur = self.current_job()?;
        let stopped_before = self.jobs[..cur].iter().rposition(|j| j.stopped.is_some());
        stopped_before.or_else(|| (0..self.jobs.len()).rev().find(|&i| i != cur))
    }

    /// A job as `jobs` and the notices print it.
    pub fn job_line(&self, i: usize, long: bool) -> String {
        let j = &self.jobs[i];
        let mark = if Some(i) == self.current_job() {
            '+'
        } else if Some(i) == self.previous_job() {
            '-'
        } else {
            ' '
        };
        let state = state_text(j);
        let amp = if j.stopped.is_none() && !j.finished() && !j.foreground {
            " &"
        } else {
            ""
        };
        if long {
            let pid = j.pids.first().copied().unwrap_or(0);
            format!("[{}]{mark} {pid} {state:<24}{}{amp}\n", j.id, j.command)
        } else {
            format!("[{}]{mark}  {state:<24}{}{amp}\n", j.id, j.command)
        }
    }

    /// Before a prompt: records what changed in the background, reports
    /// jobs that ended or stopped since the last notice, and forgets the
    /// ended ones.
    pub fn notify_jobs(&mut self) {
        // Nothing in the background: no system call (this runs before every
        // prompt).
        if self.jobs.is_empty() && self.coprocs.is_empty() {
            return;
        }
        self.reap_jobs();
        let mut out = String::new();
        for i in 0..self.jobs.len() {
            if !self.jobs[i].notified {
                out.push_str(&self.job_line(i, false));
                self.jobs[i].notified = true;
            }
        }
        self.jobs.retain(|j| !j.finished());
        if !out.is_empty() {
            self.err_out(out.as_bytes());
        }
    }

    /// Records ends, stops and continues of background children.
    pub fn reap_jobs(&mut self) {
        for (pid, ev) in sys::reap_events() {
            // A process substitution that ended stays known to `wait $!`.
            if let sys::Event::Done(raw) = ev
                && let Some(k) = self.procsub_pids.iter().position(|&p| p == pid)
            {
                self.procsub_pids.remove(k);
                self.procsub_last = Some((pid, raw));
                continue;
            }
            for j in &mut self.jobs {
                if !j.pids.contains(&pid) {
                    continue;
                }
                match ev {
                    sys::Event::Done(raw) => {
                        if self.traps.contains_key(&libc::SIGCHLD) {
                            self.chld_reaped += 1;
                        }
                        j.done.insert(pid, raw);
                        if j.finished() {
                            j.stopped = None;
                            j.notified = false;
                        }
                    }
                    sys::Event::Stopped(sig) => {
                        if j.stopped.is_none() {
                            j.notified = false;
                        }
                        j.stopped = Some(sig);
                    }
                    sys::Event::Continued => j.stopped = None,
                }
            }
            self.coproc_done_if_ended(pid, ev);
        }
    }

    fn coproc_done_if_ended(&mut self, pid: i32, ev: sys::Event) {
        if matches!(ev, sys::Event::Done(_)) {
            self.coproc_done(pid);
        }
    }

    /// `fg`: gives the job the terminal, continues it and waits for it.
    pub fn foreground(&mut self, i: usize) -> i32 {
        let mut job = self.jobs.remove(i);
        let cmd = job.command.clone();
        let outer = self.group.replace(Group {
            pgid: job.pgid,
            pids: job.pids.clone(),
            done: std::mem::take(&mut job.done),
            stopped: None,
        });
        if let Some(t) = &self.jc {
            // SAFETY: handing the terminal to the job's group.
            unsafe { libc::tcsetpgrp(t.fd, job.pgid) };
        }
        let _ = sys::kill(-job.pgid, libc::SIGCONT);
        // The command is shown once the job has the terminal: a Ctrl-C
        // typed after it goes to the job.
        let _ = self.out(format!("{cmd}\n").as_bytes());
        let mut status = 0;
        for pid in job.pids.clone() {
            let done = self.group.as_ref().and_then(|g| g.done.get(&pid).copied());
            status = match done {
                Some(raw) => sys::status_of(raw),
                None => self.wait_child(pid),
            };
        }
        let text = cmd.clone().into_bytes();
        self.end_job(outer, &|| text.clone());
        status
    }

    /// `bg`: continues a stopped job in the background.
    pub fn background(&mut self, i: usize) {
        let mark = if Some(i) == self.current_job() {
            '+'
        } else {
            ' '
        };
        let j = &mut self.jobs[i];
        j.stopped = None;
        j.foreground = false;
        let _ = sys::kill(-j.pgid, libc::SIGCONT);
        let line = format!("[{}]{mark} {} &\n", j.id, j.command);
        let _ = self.out(line.as_bytes());
    }
}
