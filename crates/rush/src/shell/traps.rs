//! Traps: the signals that came, and the EXIT, ERR, DEBUG and RETURN
//! actions.

use super::{Exec, Flow, Shell};
use crate::sys;

impl Shell {
    /// Runs trap actions for signals that arrived.
    #[inline]
    pub(super) fn run_traps(&mut self) -> Result<(), Flow> {
        // The usual case, no signal caught, without a call.
        if !sys::trap_pending() {
            return Ok(());
        }
        self.run_pending_traps()
    }

    pub(super) fn run_pending_traps(&mut self) -> Result<(), Flow> {
        if self.running_traps.iter().any(|&t| t > 0) {
            return Ok(());
        }
        let mut interrupted = false;
        for sig in sys::take_pending() {
            if let Some(action) = self.traps.get(&sig).cloned() {
                // SIGCHLD's action runs once for each child that ended,
                // however many signals the kernel merged (bash).
                let times = if sig == libc::SIGCHLD {
                    self.reap_jobs();
                    std::mem::take(&mut self.chld_reaped).max(1)
                } else {
                    1
                };
                for _ in 0..times {
                    // A signal's action counts its own lines (bash).
                    let line = std::mem::replace(&mut self.line, 1);
                    let r = self.run_trap_action(sig, &action);
                    self.line = line;
                    r?;
                }
            } else if sig == libc::SIGINT && self.opts.interactive && !self.subshell {
                interrupted = true;
            } else if sig == libc::SIGHUP && self.opts.interactive && !self.subshell {
                // The terminal hung up: the jobs get SIGHUP too, and the
                // shell leaves (bash).
                self.hang_up_jobs();
                return Err(Flow::Exit(128 + libc::SIGHUP));
            }
        }
        if interrupted {
            return Err(Flow::Interrupt);
        }
        Ok(())
    }

    /// Whether functions, command substitutions and subshells inherit the
    /// DEBUG and RETURN traps: `set -T` (which `shopt -s extdebug` sets).
    pub(super) fn functrace(&self) -> bool {
        self.opts.functrace
    }

    /// Takes away the traps a function does not inherit (see
    /// [`Shell::call_function`]).
    pub(super) fn hide_traps(&mut self, traced: bool) -> Vec<(i32, Vec<u8>)> {
        if self.traps.is_empty() {
            return Vec::new();
        }
        let mut hidden = Vec::new();
        let mut take = |sh: &mut Self, sig| {
            if let Some(a) = sh.traps.remove(&sig) {
                hidden.push((sig, a));
            }
        };
        if !self.opts.errtrace {
            take(self, sys::ERR_TRAP);
        }
        if !self.functrace() && !traced {
            take(self, sys::DEBUG_TRAP);
            take(self, sys::RETURN_TRAP);
        }
        hidden
    }

    pub(super) fn unhide_traps(&mut self, hidden: Vec<(i32, Vec<u8>)>) {
        for (sig, action) in hidden {
            self.traps.entry(sig).or_insert(action);
        }
    }

    /// Whether a trap's action is running.
    pub fn in_trap(&self) -> bool {
        !self.running_traps.is_empty()
    }

    /// Runs the RETURN trap, if set, as a function or sourced file ends with
    /// `r`; `$?` in it is the status being returned.
    pub(super) fn run_return_trap(&mut self, r: Exec) -> Exec {
        if self.in_trap() || self.traps.is_empty() {
            return r;
        }
        let Some(action) = self.traps.get(&sys::RETURN_TRAP).cloned() else {
            return r;
        };
        if !matches!(r, Ok(_) | Err(Flow::Return(_))) {
            return r;
        }
        // `$?` in the trap is the last command's, not the returned status
        // (bash).
        self.run_trap_action(sys::RETURN_TRAP, &action)?;
        r
    }

    /// Runs the DEBUG trap, if set, before a command whose text `text`
    /// gives (`$BASH_COMMAND`). `$?` is kept for the command. With `shopt
    /// -s extdebug`, a trap that returns non-zero skips the command (the
    /// answer is true), and one that returns 2 in a function or a sourced
    /// file returns from it (bash).
    pub fn run_debug_trap(&mut self, text: impl FnOnce() -> Vec<u8>) -> Result<bool, Flow> {
        if self.traps.is_empty()
            || std::mem::take(&mut self.debug_done)
            || self.running_traps.contains(&sys::DEBUG_TRAP)
        {
            return Ok(false);
        }
        let Some(action) = self.traps.get(&sys::DEBUG_TRAP).cloned() else {
            return Ok(false);
        };
        self.bash_command = text();
        let status = self.run_trap_action(sys::DEBUG_TRAP, &action)?;
        if status == 0 || !self.shopts.on("extdebug") {
            return Ok(false);
        }
        if status == 2 && (self.func_depth > 0 || self.source_depth > 0) {
            return Err(Flow::Return(self.status));
        }
        Ok(true)
    }

    /// Runs a trap's action: `$?` in it is the status as it stands, and is
    /// that again afterwards; only an `exit` in it leaves. The answer is
    /// the action's own status.
    pub(super) fn run_trap_action(&mut self, trap: i32, action: &[u8]) -> Result<i32, Flow> {
        let status = self.status;
        self.running_traps.push(trap);
        let r = self.eval_text(action);
        self.running_traps.pop();
        let own = self.status;
        self.status = status;
        match r {
            Err(Flow::Exit(s)) => Err(Flow::Exit(s)),
            Err(Flow::Return(s)) => Ok(s),
            _ => Ok(own),
        }
    }
}
