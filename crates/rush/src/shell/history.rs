//! The command history as the shell keeps it: its settings from
//! `HISTSIZE`, `HISTFILESIZE`, `HISTCONTROL` and `HISTFILE`, what
//! `HISTIGNORE` keeps out, and `set -o history` loading the file.

use crate::history::Control;
use crate::shell::Shell;

impl Shell {
    /// `HISTSIZE`, `HISTFILESIZE` (default: HISTSIZE) and `HISTCONTROL`, as
    /// the shell holds them now.
    pub fn history_settings(&self) -> (usize, usize, Control) {
        let num = |name: &[u8]| -> Option<usize> {
            let v = self.vars.get(name)?;
            let n: i64 = std::str::from_utf8(v).ok()?.trim().parse().ok()?;
            // A negative size means no limit.
            Some(if n < 0 { usize::MAX } else { n as usize })
        };
        let size = num(b"HISTSIZE").unwrap_or(500);
        let filesize = num(b"HISTFILESIZE").unwrap_or(size);
        let control = self
            .vars
            .get(b"HISTCONTROL")
            .map(Control::parse)
            .unwrap_or_default();
        (size, filesize, control)
    }

    /// `HISTFILE`, if set and not empty.
    pub fn history_file(&self) -> Option<Vec<u8>> {
        self.vars
            .get(b"HISTFILE")
            .filter(|f| !f.is_empty())
            .map(<[u8]>::to_vec)
    }

    /// Whether `HISTIGNORE` keeps `line` out of the history: one of its
    /// colon-separated patterns matches the whole line (`\:` is a colon in a
    /// pattern), or `&`, the entry before, is the same line.
    pub fn history_ignored(&self, line: &[u8]) -> bool {
        let Some(list) = self.vars.get(b"HISTIGNORE").filter(|v| !v.is_empty()) else {
            return false;
        };
        // Split at each colon that is not backslash-quoted.
        let mut pats: Vec<Vec<u8>> = Vec::new();
        let mut cur = Vec::new();
        let mut i = 0;
        while i < list.len() {
            match list[i] {
                b'\\' if list.get(i + 1) == Some(&b':') => {
                    cur.push(b':');
                    i += 1;
                }
                b':' => pats.push(std::mem::take(&mut cur)),
                c => cur.push(c),
            }
            i += 1;
        }
        pats.push(cur);
        pats.iter().filter(|p| !p.is_empty()).any(|p| {
            if p == b"&" {
                self.history.entries.last().is_some_and(|e| e == line)
            } else {
                crate::pattern::Pattern::compile(p, &vec![false; p.len()]).matches(line)
            }
        })
    }

    /// `set -o history` turning history on when no line has been added this
    /// session reads HISTFILE (HISTSIZE and HISTFILESIZE set first if they are
    /// not), as bash does; a script that turns history on sees its file.
    pub fn enable_history(&mut self) {
        if self.history.added > 0 {
            return;
        }
        if self.vars.get(b"HISTSIZE").is_none() {
            let _ = self.vars.set(b"HISTSIZE", b"500".to_vec());
        }
        if self.vars.get(b"HISTFILESIZE").is_none() {
            let size = self
                .vars
                .get(b"HISTSIZE")
                .map(<[u8]>::to_vec)
                .unwrap_or_default();
            let _ = self.vars.set(b"HISTFILESIZE", size);
        }
        let (size, _, _) = self.history_settings();
        if let Some(f) = self.history_file() {
            self.history.load(&f, size);
        }
    }
}
