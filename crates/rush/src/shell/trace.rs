//! `set -x` tracing with PS4, and `RUSH_PERF=1`'s report.

use super::Shell;
use crate::ast::{Assign, Word};

impl Shell {
    pub fn perf_report(&mut self) {
        if let Some(p) = self.perf.as_mut() {
            p.report();
        }
    }

    /// One assignment's `set -x` line: `name=value`, `name[sub]+=value`,
    /// or `name=(…)` as written; `append` writes `+=`.
    pub(super) fn trace_assign(&mut self, a: &Assign, append: bool, value: Option<&[u8]>) {
        let mut line = self.ps4();
        line.extend_from_slice(&a.name);
        if let Some(idx) = &a.index {
            line.push(b'[');
            line.extend_from_slice(&crate::unparse::word(idx));
            line.push(b']');
        }
        line.extend_from_slice(if append { b"+=" } else { b"=" });
        match (value, &a.array) {
            // An empty value is shown as nothing (`x=`), as bash shows it.
            (Some(v), _) => {
                if !v.is_empty() {
                    line.extend_from_slice(&crate::quote::quote_for_trace(v));
                }
            }
            (None, Some(items)) => {
                line.push(b'(');
                for (k, e) in items.iter().enumerate() {
                    if k > 0 {
                        line.push(b' ');
                    }
                    if let Some(key) = &e.key {
                        line.push(b'[');
                        line.extend_from_slice(&crate::unparse::word(key));
                        line.extend_from_slice(if e.append { b"]+=" } else { b"]=" });
                    }
                    line.extend_from_slice(&crate::unparse::word(&e.value));
                }
                line.push(b')');
            }
            (None, None) => {}
        }
        line.push(b'\n');
        self.trace_out(&line);
    }

    /// A simple command's `set -x` lines: one for each prefix assignment,
    /// then the words, as bash writes them.
    pub(super) fn trace(
        &mut self,
        assigns: &[Assign],
        values: &[(Vec<u8>, Vec<u8>)],
        argv: &[Vec<u8>],
    ) {
        // A prefix assignment shows the value it gives, `+=` done (bash).
        for (a, (_, v)) in assigns.iter().zip(values) {
            self.trace_assign(a, false, Some(v));
        }
        let mut line = self.ps4();
        let mut first = true;
        for a in argv {
            if !first {
                line.push(b' ');
            }
            first = false;
            line.extend_from_slice(&crate::quote::quote_for_trace(a));
        }
        line.push(b'\n');
        self.trace_out(&line);
    }

    /// A `set -x` line: PS4 and `text`.
    pub fn trace_line(&mut self, text: &[u8]) {
        let mut line = self.ps4();
        line.extend_from_slice(text);
        line.push(b'\n');
        self.trace_out(&line);
    }

    /// `for NAME in WORDS` or `select …`, the words as written (bash).
    pub(super) fn trace_head(&mut self, what: &[u8], var: &[u8], words: &[Word]) {
        let mut text = what.to_vec();
        text.push(b' ');
        text.extend_from_slice(var);
        text.extend_from_slice(b" in");
        for w in words {
            text.push(b' ');
            text.extend_from_slice(&crate::unparse::word(w));
        }
        self.trace_line(&text);
    }

    /// `(( expr ))` under `set -x`.
    pub(super) fn trace_arith(&mut self, expr: &[u8]) {
        if !self.opts.xtrace {
            return;
        }
        let mut text = b"(( ".to_vec();
        text.extend_from_slice(expr);
        text.extend_from_slice(b" ))");
        self.trace_line(&text);
    }

    /// The prefix of a `set -x` line: PS4 expanded, its first character
    /// repeated once for each level of eval, source, trap or command
    /// substitution; nothing if PS4 is unset or empty, as in bash.
    pub(super) fn ps4(&mut self) -> Vec<u8> {
        let Some(ps4) = self.vars.get(b"PS4").map(<[u8]>::to_vec) else {
            return Vec::new();
        };
        let saved = self.opts.xtrace;
        self.opts.xtrace = false;
        let mut out = self.expand_as_double_quoted(&ps4).unwrap_or(ps4);
        self.opts.xtrace = saved;
        if self.xtrace_level > 0 && !out.is_empty() {
            // The first character, whole if it is UTF-8.
            let first = match out[0] {
                0xc0..=0xdf => 2,
                0xe0..=0xef => 3,
                0xf0..=0xf7 => 4,
                _ => 1,
            }
            .min(out.len());
            let c = out[..first].to_vec();
            for _ in 0..self.xtrace_level {
                out.splice(0..0, c.iter().copied());
            }
        }
        out
    }
}
