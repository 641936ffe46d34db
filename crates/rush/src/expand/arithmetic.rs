//! Arithmetic expansion and subscripts: `$((…))`, `((…))`'s text, and the
//! words inside array subscripts.

use super::param::quote_subscript;
use super::{Ctx, Fields, Result};
use crate::arith;
use crate::ast::{Part, Word};
use crate::shell::{Flow, Shell};
use crate::vars::Value;

impl Shell {
    /// `'…'` in arithmetic text, outside a subscript: the quotes stay, for
    /// the evaluator to refuse, and the text between is expanded as the
    /// rest is (bash 5.2 reads it as double-quoted text).
    pub(super) fn arith_single_quoted(&mut self, q: &[u8], out: &mut Vec<u8>) -> Result<()> {
        out.push(b'\'');
        match crate::parse::arith_word(q) {
            Some(w) => out.extend_from_slice(&self.expand_arith_word(&w, true)?),
            None => out.extend_from_slice(q),
        }
        out.push(b'\'');
        Ok(())
    }

    /// The text of a subscript or of arithmetic in it, expanded (no
    /// splitting).
    pub fn expand_subscript_text(&mut self, w: &Word) -> Result<Vec<u8>> {
        let mut f = Fields::string();
        self.expand_parts(&w.parts, Ctx::Quoted, &mut f, false)?;
        Ok(f.concat())
    }

    /// The text of an arithmetic expression (`$((…))`, `((…))`, `for
    /// ((…))`, `${x:off:len}`), expanded as in double quotes. Each array
    /// subscript in it (`a[…]`) is expanded here as a word of its own
    /// (single quotes quote there), and what it gives is backslash-quoted,
    /// so that the evaluator, which expands a subscript, gets it back
    /// unchanged: bash 5.2 expands subscripts once (`(( A[$key]++ ))` with
    /// `key='x],b[$(date)'` counts key `x],b[$(date)`, and runs nothing).
    pub fn expand_arith_text(&mut self, w: &Word) -> Result<Vec<u8>> {
        self.expand_arith_word(w, true)
    }

    /// [`Shell::expand_arith_text`]; `dq`: single quotes outside a
    /// subscript are text (arithmetic's double-quote rules), not quotes
    /// (an operand of `[[ x -eq y ]]`).
    pub fn expand_arith_word(&mut self, w: &Word, dq: bool) -> Result<Vec<u8>> {
        // Double quotes in arithmetic only quote: their parts, in place.
        if w.parts.iter().any(|p| matches!(p, Part::Double(_))) {
            let mut flat = Word::default();
            for p in &w.parts {
                match p {
                    Part::Double(inner) => flat.parts.extend(inner.iter().cloned()),
                    p => flat.parts.push(p.clone()),
                }
            }
            return self.expand_arith_word(&flat, dq);
        }
        let plain = |p: &Part| match p {
            Part::Quoted(t) | Part::Lit(t) => !t.contains(&b'['),
            Part::Single(_) => false,
            _ => true,
        };
        if w.parts.iter().all(plain) {
            return self.expand_subscript_text(w);
        }
        // bash expands arithmetic text only when it has a `$`, `` ` `` or
        // `~`; otherwise it only removes quotes, and subscripts stay as
        // written (`$(( a[a[0]] ))` works; with a `$` anywhere in it, the
        // inner brackets come out quoted, and bash refuses them).
        fn expands(p: &Part) -> bool {
            match p {
                Part::Quoted(t) | Part::Lit(t) | Part::Single(t) => {
                    t.iter().any(|c| matches!(c, b'$' | b'`' | b'~'))
                }
                Part::Escaped(c) => matches!(c, b'$' | b'`' | b'~'),
                Part::Double(inner) => inner.iter().any(expands),
                _ => true,
            }
        }
        if dq && !w.parts.iter().any(expands) {
            let mut out = Vec::new();
            for p in &w.parts {
                match p {
                    Part::Single(q) => {
                        out.push(b'\'');
                        out.extend_from_slice(q);
                        out.push(b'\'');
                    }
                    p => {
                        let mut f = Fields::string();
                        self.expand_parts(std::slice::from_ref(p), Ctx::Quoted, &mut f, false)?;
                        out.extend_from_slice(&f.concat());
                    }
                }
            }
            return Ok(out);
        }
        let mut out = Vec::new();
        // Inside a subscript: its parts so far, and how deep in brackets.
        let mut sub: Option<(Vec<Part>, u32)> = None;
        for part in &w.parts {
            let text = match part {
                Part::Quoted(t) | Part::Lit(t) => t,
                Part::Single(q) => {
                    match &mut sub {
                        Some((parts, _)) => parts.push(Part::Single(q.clone())),
                        None if dq => self.arith_single_quoted(q, &mut out)?,
                        None => out.extend_from_slice(q),
                    }
                    continue;
                }
                p => {
                    match &mut sub {
                        // No process substitution in a subscript
                        // (`[[ a[7<(4+2)] -eq 0 ]]`): its text.
                        Some((parts, _)) if matches!(p, Part::ProcSubst { .. }) => {
                            let text = crate::unparse::word(&Word {
                                parts: vec![p.clone()],
                            });
                            parts.push(Part::Quoted(text));
                        }
                        Some((parts, _)) => parts.push(p.clone()),
                        None => {
                            let mut f = Fields::string();
                            self.expand_parts(std::slice::from_ref(p), Ctx::Quoted, &mut f, false)?;
                            out.extend_from_slice(&f.concat());
                        }
                    }
                    continue;
                }
            };
            let mut start = 0;
            for (i, &c) in text.iter().enumerate() {
                match (&mut sub, c) {
                    (None, b'[') => {
                        out.extend_from_slice(&text[start..i]);
                        start = i + 1;
                        sub = Some((Vec::new(), 1));
                    }
                    (Some((_, depth)), b'[') => *depth += 1,
                    (Some((parts, depth)), b']') => {
                        *depth -= 1;
                        if *depth == 0 {
                            parts.push(Part::Quoted(text[start..i].to_vec()));
                            start = i + 1;
                            let parts = std::mem::take(parts);
                            sub = None;
                            let mut f = Fields::string();
                            self.expand_parts(&parts, Ctx::Quoted, &mut f, false)?;
                            out.push(b'[');
                            quote_subscript(&f.concat(), &mut out);
                            out.push(b']');
                        }
                    }
                    _ => {}
                }
            }
            match &mut sub {
                Some((parts, _)) => parts.push(Part::Quoted(text[start..].to_vec())),
                None => out.extend_from_slice(&text[start..]),
            }
        }
        // A `[` never closed is a character.
        if let Some((parts, _)) = sub {
            out.push(b'[');
            for p in &parts {
                match p {
                    Part::Single(q) if dq => self.arith_single_quoted(q, &mut out)?,
                    Part::Single(q) => out.extend_from_slice(q),
                    p => {
                        let mut f = Fields::string();
                        self.expand_parts(std::slice::from_ref(p), Ctx::Quoted, &mut f, false)?;
                        out.extend_from_slice(&f.concat());
                    }
                }
            }
        }
        Ok(out)
    }

    /// Evaluates arithmetic, reporting errors as the shell does.
    pub fn arith(&mut self, text: &[u8]) -> Result<i64> {
        struct Env<'a>(&'a mut Shell);
        /// `a[sub]` split into the name and the subscript text.
        fn split_sub(name: &[u8]) -> Option<(&[u8], &[u8])> {
            let i = name.iter().position(|&c| c == b'[')?;
            Some((&name[..i], &name[i + 1..name.len() - 1]))
        }
        impl Env<'_> {
            /// `let` with `assoc_expand_once`: the keys of associative
            /// array `n` are taken as written.
            fn literal_keys(&self, n: &[u8]) -> bool {
                self.0.arith_cmd == Some("let")
                    && matches!(self.0.vars.value(n), Some(Value::Assoc(_)))
                    && self.0.shopts.on("assoc_expand_once")
            }

            /// The key of `n[sub]`: the subscript expanded and evaluated
            /// as bash does, outside the arithmetic command (an error in
            /// it is not the command's: no `((:` before it, and it
            /// abandons the command, the line in a script).
            fn key(&mut self, n: &[u8], sub: &[u8]) -> arith::Result<crate::vars::Key> {
                let literal = self.literal_keys(n);
                let saved = (self.0.arith_cmd.take(), self.0.arith_name.take());
                let r = if literal {
                    Ok(crate::vars::Key::Name(sub.to_vec()))
                } else {
                    self.0
                        .runtime_subscript(n, sub)
                        .and_then(|sub| self.0.array_key(n, &sub))
                };
                (self.0.arith_cmd, self.0.arith_name) = saved;
                r.map_err(|flow| {
                    self.0.arith_flow = Some(flow);
                    arith::Error::reported()
                })
            }
        }
        impl arith::Env for Env<'_> {
            fn get(&mut self, name: &[u8]) -> arith::Result<Option<Vec<u8>>> {
                match split_sub(name) {
                    Some((n, sub)) => {
                        let key = self.key(n, sub)?;
                        if key.before_start() {
                            let msg =
                                format!("{}: bad array subscript", String::from_utf8_lossy(n));
                            self.0.error(&msg);
                            return Ok(None);
                        }
                        Ok(self.0.element(n, &key))
                    }
                    None => Ok(self.0.param_value(name)),
                }
            }
            fn set(&mut self, name: &[u8], value: i64) -> arith::Result<()> {
                let v = value.to_string().into_bytes();
                let r = match split_sub(name) {
                    Some((n, sub)) => match self.key(n, sub)? {
                        // bash reports it and goes on with the value.
                        key if key.before_start() => {
                            let msg =
                                format!("{}: bad array subscript", String::from_utf8_lossy(name));
                            self.0.error(&msg);
                            return Ok(());
                        }
                        key => self.0.vars.set_elem(n, key, v),
                    },
                    None => self.0.vars.set(name, v),
                };
                r.map_err(|e| arith::Error::new(e.to_string()))
            }
            fn pin(&mut self, name: &[u8]) -> arith::Result<Vec<u8>> {
                let Some((n, sub)) = split_sub(name) else {
                    return Ok(name.to_vec());
                };
                if self.literal_keys(n) {
                    return Ok(name.to_vec());
                }
                Ok(match self.key(n, sub)? {
                    crate::vars::Key::Index(i) => [n, format!("[{i}]").as_bytes()].concat(),
                    // The key, quoted so that it reads back as itself.
                    crate::vars::Key::Name(k) => {
                        let mut out = n.to_vec();
                        out.push(b'[');
                        quote_subscript(&k, &mut out);
                        out.push(b']');
                        out
                    }
                })
            }
        }
        let nounset = self.opts.nounset;
        if nounset {
            // Names in the expression must be set.
            let mut i = 0;
            while i < text.len() {
                if crate::parse::is_name_start(text[i])
                    && (i == 0 || !text[i - 1].is_ascii_alphanumeric())
                {
                    let s = i;
                    while i < text.len() && crate::parse::is_name_char(text[i]) {
                        i += 1;
                    }
                    let name = &text[s..i];
                    if self.param_value(name).is_none() {
                        let msg = format!("{}: unbound variable", String::from_utf8_lossy(name));
                        return Err(self.fatal(&msg));
                    }
                } else {
                    i += 1;
                }
            }
        }
        match arith::eval(text, &mut Env(self)) {
            Ok(v) => Ok(v),
            // Reported where it happened (a subscript's error).
            Err(e) if e.reported => {
                self.arith_cmd = None;
                self.subscript_failed = true;
                Err(self.arith_flow.take().unwrap_or(Flow::Abort(1)))
            }
            Err(e) => match self.arith_cmd.take() {
                Some(cmd) => {
                    self.error(&format!("{cmd}: {}", e.message));
                    Err(Flow::Abort(1))
                }
                None => {
                    let msg = match &self.arith_name {
                        Some(n) => format!("{}: {}", String::from_utf8_lossy(n), e.message),
                        None => e.message,
                    };
                    Err(self.expansion_error(&msg))
                }
            },
        }
    }
}
