//! Options as the shell applies them: what turning one on or off does to
//! the rest of the shell (the history, `POSIXLY_CORRECT`, `extdebug`'s
//! traps). The options themselves are state, in [`crate::options`].

use crate::options::Options;
use crate::shell::Shell;

impl Shell {
    /// `set -o NAME` / `set +o NAME`, with what the option brings along;
    /// false if there is no such option.
    pub fn set_option(&mut self, name: &str, on: bool) -> bool {
        match self.opts.get_mut(name) {
            Some(b) => {
                let was = std::mem::replace(b, on);
                match name {
                    "history" if on && !was => self.enable_history(),
                    "allexport" => self.vars.allexport = on,
                    "verbose" => {
                        crate::input::VERBOSE.store(on, std::sync::atomic::Ordering::Relaxed);
                    }
                    // One editing mode at a time: turning one on turns the
                    // other off (bash).
                    "vi" if on => self.opts.emacs = false,
                    "emacs" if on => self.opts.vi = false,
                    // bash keeps POSIXLY_CORRECT with the mode.
                    "posix" if on => {
                        let _ = self.vars.set(b"POSIXLY_CORRECT", b"y".to_vec());
                    }
                    "posix" => {
                        let _ = self.vars.unset(b"POSIXLY_CORRECT");
                    }
                    // bash keeps IGNOREEOF with the option: 10 when set.
                    "ignoreeof" if on => {
                        let _ = self.vars.set(b"IGNOREEOF", b"10".to_vec());
                    }
                    "ignoreeof" => {
                        let _ = self.vars.unset(b"IGNOREEOF");
                    }
                    _ => {}
                }
                true
            }
            None => false,
        }
    }

    /// Turns a `shopt` option on or off; false if there is no such option.
    /// Read-only options (`login_shell`, `restricted_shell`) stay as they are,
    /// silently, as in bash.
    pub fn set_shopt(&mut self, name: &str, on: bool) -> bool {
        if matches!(name, "login_shell" | "restricted_shell") {
            return true;
        }
        self.set_shopt_forced(name, on)
    }

    /// [`Shell::set_shopt`], read-only options included (for the shell's own start).
    pub fn set_shopt_forced(&mut self, name: &str, on: bool) -> bool {
        if !self.shopts.set(name, on) {
            return false;
        }
        if name == "extglob" {
            // The parser and the pattern compiler read it from here.
            crate::pattern::EXTGLOB.store(on, std::sync::atomic::Ordering::Relaxed);
        }
        // `extdebug` sets `-T` and `-E` with it (and clears them); `set +T`
        // afterwards stops the tracing (bash).
        if name == "extdebug" {
            self.extdebug = on;
            self.opts.functrace = on;
            self.opts.errtrace = on;
            if on && self.main_args.is_none() && self.func_depth == 0 {
                self.main_args = Some(self.positional.clone());
            }
        }
        true
    }

    /// Applies one `-x`/`+x` style cluster; returns false on an unknown letter.
    pub fn set_flags(&mut self, cluster: &[u8]) -> Result<(), char> {
        let on = cluster[0] == b'-';
        for &c in &cluster[1..] {
            let c = c as char;
            // `set -r` makes the shell restricted, and nothing turns it off.
            if c == 'r' {
                if on {
                    self.make_restricted(false);
                } else if self.opts.restricted {
                    return Err(c);
                }
                continue;
            }
            let Some(name) = Options::letter(c) else {
                return Err(c);
            };
            self.set_option(name, on);
        }
        Ok(())
    }
}
