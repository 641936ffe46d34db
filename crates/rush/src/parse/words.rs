//! Words: quoting, parameter expansions and their operators, command and
//! arithmetic substitution, and assignment words.

use super::{
    BAD_SUBSTITUTION, End, ParseError, Parser, Result, Text, is_meta, is_name, is_name_char,
    is_name_start, is_plain,
};
use crate::ast::{Anchor, Element, List, Param, ParamOp, Part, Word};
use std::rc::Rc;

impl<'s> Parser<'s> {
    /// Reads one word in unquoted context, or `None` if the next thing is
    /// not a word (an operator, a newline, the end).
    pub fn read_word(&mut self) -> Result<Option<Word>> {
        let mut parts = Vec::new();
        let mut lit = Vec::new();
        let mut any = false;
        // Inside an extglob group (`@(a|b c)`): how deep, as blanks, `|` and
        // the other operator characters are part of the word there.
        let mut ext_depth = 0u32;
        while let Some(c) = self.peek() {
            if self.pos < self.literal_until && is_meta(c) {
                self.bump();
                lit.push(c);
                any = true;
                continue;
            }
            if ext_depth > 0 {
                match c {
                    b'(' | b')' | b'|' | b' ' | b'\t' | b'\n' | b'<' | b'>' | b'&' | b';' => {
                        self.bump();
                        lit.push(c);
                        if c == b'(' {
                            ext_depth += 1;
                        } else if c == b')' {
                            ext_depth -= 1;
                        }
                        continue;
                    }
                    _ => {}
                }
            } else if matches!(c, b'?' | b'*' | b'+' | b'@' | b'!')
                && self.peek_at(1) == Some(b'(')
                && (self.in_dbracket > 0 || crate::pattern::extglob())
            {
                self.bump();
                self.bump();
                lit.extend_from_slice(&[c, b'(']);
                ext_depth = 1;
                any = true;
                continue;
            }
            // `<(list)` and `>(list)` (bash): process substitution.
            if matches!(c, b'<' | b'>') && self.peek_at(1) == Some(b'(') {
                self.bump();
                self.bump();
                flush_lit(&mut parts, &mut lit);
                parts.push(self.process_substitution(c == b'<')?);
                any = true;
                continue;
            }
            if is_meta(c) {
                break;
            }
            any = true;
            match c {
                b'\\' => {
                    self.bump();
                    match self.peek() {
                        Some(b'\n') => {
                            self.bump();
                        }
                        Some(c) => {
                            self.bump();
                            flush_lit(&mut parts, &mut lit);
                            parts.push(Part::Escaped(c));
                        }
                        None => lit.push(b'\\'),
                    }
                }
                b'\'' => {
                    self.bump();
                    flush_lit(&mut parts, &mut lit);
                    parts.push(Part::Single(self.single_quoted()?));
                }
                b'"' => {
                    self.bump();
                    flush_lit(&mut parts, &mut lit);
                    parts.push(Part::Double(self.double_quoted()?));
                }
                b'$' => {
                    self.bump();
                    match self.dollar(false)? {
                        Part::Lit(b) => lit.extend_from_slice(&b),
                        p => {
                            flush_lit(&mut parts, &mut lit);
                            parts.push(p);
                        }
                    }
                }
                b'`' => {
                    self.bump();
                    flush_lit(&mut parts, &mut lit);
                    parts.push(self.backtick(false)?);
                }
                _ => {
                    // With the ordinary bytes after it (no newline among
                    // them) at once, rather than one turn of this loop
                    // each, and one allocation for the lot.
                    let rest = &self.buf[self.pos..];
                    let run = 1 + rest[1..].iter().take_while(|&&b| is_plain(b)).count();
                    if lit.is_empty() {
                        lit = rest[..run].to_vec();
                    } else {
                        lit.extend_from_slice(&rest[..run]);
                    }
                    self.bump();
                    if run > 1 {
                        self.pos += run - 1;
                        self.leave_aliases();
                    }
                }
            }
        }
        flush_lit(&mut parts, &mut lit);
        if !any {
            return Ok(None);
        }
        Ok(Some(Word { parts }))
    }

    /// After `<(` or `>(`: the list up to the matching `)`.
    pub(super) fn process_substitution(&mut self, read: bool) -> Result<Part> {
        Ok(Part::ProcSubst {
            read,
            list: Rc::new(self.paren_list()?),
        })
    }

    /// After `$(`, `<(` or `>(`: the list up to the matching `)`, which is
    /// eaten.
    pub(super) fn paren_list(&mut self) -> Result<List> {
        self.enter()?;
        let outer = std::mem::replace(&mut self.in_comsub, true);
        // The here-documents of the line outside are read after that line,
        // not at a newline inside (bash parses the substitution first).
        let outer_docs = std::mem::take(&mut self.pending);
        let list = self.list(End::Paren);
        // Those the substitution left open are read after the line too,
        // with a warning.
        let inner_docs = std::mem::replace(&mut self.pending, outer_docs);
        if !inner_docs.is_empty() {
            self.warnings.push((
                self.line,
                format!(
                    "warning: command substitution: {} unterminated here-document",
                    inner_docs.len()
                ),
            ));
            self.pending.extend(inner_docs);
        }
        self.in_comsub = outer;
        self.depth -= 1;
        let list = list?;
        self.linebreak()?;
        if !self.eat_operator(")") {
            if self.peek().is_none() {
                return self.eof_error("unexpected EOF while looking for matching `)'");
            }
            return self.unexpected();
        }
        Ok(list)
    }

    pub(super) fn single_quoted(&mut self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        let start = self.line;
        loop {
            match self.bump() {
                None => return self.unclosed(start, "'"),
                Some(b'\'') => return Ok(out),
                Some(c) => out.push(c),
            }
        }
    }

    /// After `"`: the parts up to the closing `"`.
    pub(super) fn double_quoted(&mut self) -> Result<Vec<Part>> {
        self.double_quoted_in(false)
    }

    /// [`Parser::double_quoted`]; with `any_escape`, a backslash quotes any
    /// character, as in double quotes nested in a `${x:+word}` that is
    /// itself in double quotes (`"${x:+"\p"}"` is `p` in bash).
    pub(super) fn double_quoted_in(&mut self, any_escape: bool) -> Result<Vec<Part>> {
        let mut parts = Vec::new();
        let mut lit = Vec::new();
        let start = self.line;
        loop {
            let Some(c) = self.bump() else {
                return self.unclosed(start, "\"");
            };
            match c {
                b'"' => break,
                b'\\' => match self.peek() {
                    Some(b'\n') => {
                        self.bump();
                    }
                    Some(c @ (b'$' | b'`' | b'"' | b'\\')) => {
                        self.bump();
                        lit.push(c);
                    }
                    Some(c) if any_escape => {
                        self.bump();
                        lit.push(c);
                    }
                    _ => lit.push(b'\\'),
                },
                b'$' | b'`' => self.quoted_expansion(c, &mut parts, &mut lit)?,
                c => lit.push(c),
            }
        }
        flush_quoted(&mut parts, &mut lit);
        Ok(parts)
    }

    /// After `$` or a backtick (`c`) in quoted text (double quotes, here-doc
    /// bodies, arithmetic): the expansion joins `parts`; a `$` that starts
    /// nothing stays in the quoted text.
    pub(super) fn quoted_expansion(
        &mut self,
        c: u8,
        parts: &mut Vec<Part>,
        lit: &mut Vec<u8>,
    ) -> Result<()> {
        let p = if c == b'$' {
            self.dollar(true)?
        } else {
            self.backtick(true)?
        };
        match p {
            Part::Lit(b) => lit.extend_from_slice(&b),
            p => {
                flush_quoted(parts, lit);
                parts.push(p);
            }
        }
        Ok(())
    }

    /// Skips backslash-newline pairs at the cursor.
    pub(super) fn skip_line_continuations(&mut self) {
        while self.peek() == Some(b'\\') && self.peek_at(1) == Some(b'\n') {
            self.bump();
            self.bump();
        }
    }

    /// After `$`. A `$` that starts nothing is returned as a literal.
    pub(super) fn dollar(&mut self, dq: bool) -> Result<Part> {
        // A line continuation after the `$` is no part of the word:
        // `$\<newline>{x}` is `${x}`, `$\<newline>"…"` is `$"…"` (bash).
        self.skip_line_continuations();
        let Some(c) = self.peek() else {
            return Ok(Part::Lit(b"$".to_vec()));
        };
        match c {
            b'{' => {
                self.bump();
                self.enter()?;
                let start = (self.pos, self.line);
                let outer = std::mem::replace(&mut self.brace_start, self.line);
                // Those decoded from here on (one just before, by the word
                // around: `"${x-${$'y'}}"`).
                let decoded = self
                    .extquotes
                    .iter()
                    .rposition(|e| e.0 < start.0)
                    .map_or(0, |i| i + 1);
                // Found bad before, read inside a word around it that then
                // ended sooner: not read again (each word around it read it
                // once more, exponential in their number).
                let key = (self.pos, self.buf.len(), dq, self.dq_param);
                let r = if !self.bad_braces.is_empty() && self.bad_braces.contains(&key) {
                    self.error(BAD_SUBSTITUTION)
                } else {
                    self.brace_param(dq)
                };
                let r = match r {
                    Err(e) if e.message == BAD_SUBSTITUTION => {
                        self.bad_braces.insert(key);
                        (self.pos, self.line) = start;
                        let mut r = self.skip_bad_brace(dq);
                        // Kept as written for `declare -f`: the `$'…'`
                        // decoded into the text reads otherwise
                        // (`"${$'$''}"'}"` is found as `${$'}"'}`).
                        if let Ok(Part::BadSubst(b)) = &mut r {
                            for (at, written, len) in self.extquotes.drain(decoded..).rev() {
                                let Some(at) = (at + 2).checked_sub(start.0) else {
                                    continue;
                                };
                                if at + len <= b.written.len() {
                                    b.written.splice(at..at + len, written);
                                }
                            }
                        }
                        r
                    }
                    r => r,
                };
                self.extquotes.truncate(decoded);
                self.brace_start = outer;
                self.depth -= 1;
                r
            }
            b'(' => {
                self.bump();
                self.skip_line_continuations();
                if self.peek() == Some(b'(') {
                    let save = (self.pos, self.line);
                    self.bump();
                    if let Some(w) = self.arith_text()? {
                        return Ok(Part::Arith(w));
                    }
                    (self.pos, self.line) = save;
                }
                // The commands inside read words of their own: the word
                // around keeps its blanks (`a[$(echo 1) + 1]=x`).
                let outer = std::mem::take(&mut self.literal_until);
                let list = self.paren_list().map_err(|e| ParseError {
                    in_comsub: true,
                    ..e
                });
                self.literal_until = outer;
                Ok(Part::CommandSub(Rc::new(list?), None))
            }
            // `$[expr]`: bash's old spelling of `$((expr))`.
            b'[' => {
                self.bump();
                let w = self.arith_until(b'[', b']')?.unwrap_or_default();
                Ok(Part::Arith(w))
            }
            b'\'' if !dq => {
                self.bump();
                Ok(Part::Single(self.ansi_c()?))
            }
            b'"' if !dq => {
                self.bump();
                Ok(Part::Double(self.double_quoted()?))
            }
            c if is_name_start(c) => {
                let mut name = Vec::new();
                while let Some(c) = self.peek().filter(|&c| is_name_char(c)) {
                    self.bump();
                    name.push(c);
                }
                let mut p = param(name, ParamOp::Plain);
                if let Part::Param(p) = &mut p {
                    p.bare = true;
                }
                Ok(p)
            }
            c if c.is_ascii_digit()
                || matches!(c, b'@' | b'*' | b'#' | b'?' | b'-' | b'$' | b'!') =>
            {
                self.bump();
                let mut p = param(vec![c], ParamOp::Plain);
                if let Part::Param(p) = &mut p {
                    p.bare = true;
                }
                Ok(p)
            }
            _ => Ok(Part::Lit(b"$".to_vec())),
        }
    }

    /// After `$((` (or `((`): the expression up to the matching `))`, or
    /// `None` if the parentheses close apart (`$( (a) )`), leaving the
    /// position for the caller to restore.
    pub(super) fn arith_text(&mut self) -> Result<Option<Word>> {
        self.arith_until(b'(', b')')
    }

    /// The body of `$((…))` (closed by `))`) or of `$[…]` (closed by `]`),
    /// nesting on `open`.
    pub(super) fn arith_until(&mut self, open: u8, close: u8) -> Result<Option<Word>> {
        let start = self.line;
        let mut parts = Vec::new();
        let mut lit = Vec::new();
        let mut depth = 0u32;
        loop {
            let Some(c) = self.bump() else {
                return self.unclosed(start, if close == b']' { "]" } else { ")" });
            };
            match c {
                c if c == open => {
                    depth += 1;
                    lit.push(c);
                }
                c if c == close => {
                    if depth == 0 {
                        if close == b']' {
                            break;
                        }
                        if self.peek() == Some(b')') {
                            self.bump();
                            break;
                        }
                        return Ok(None);
                    }
                    depth -= 1;
                    lit.push(c);
                }
                // As in double quotes: `\$`, `` \` `` and `\\` are the
                // characters themselves.
                b'\\' => match self.peek() {
                    Some(b'\n') => {
                        self.bump();
                    }
                    Some(e @ (b'$' | b'`' | b'\\')) => {
                        self.bump();
                        lit.push(e);
                    }
                    _ => lit.push(c),
                },
                b'$' | b'`' => self.quoted_expansion(c, &mut parts, &mut lit)?,
                // Kept as a part of its own: the printer writes the quotes
                // back (`$((1")"+2))`), `for ((…))` does not split at a
                // quoted `;`, and the evaluator takes them out.
                b'"' => {
                    flush_quoted(&mut parts, &mut lit);
                    parts.push(Part::Double(self.double_quoted()?));
                }
                // Single quotes are not quoting here: bash 5.2 hands them
                // to the evaluator, which refuses them; but they quote in
                // an array subscript ([`Shell::expand_arith_text`]).
                b'\'' => {
                    flush_quoted(&mut parts, &mut lit);
                    parts.push(Part::Single(self.single_quoted()?));
                }
                c => lit.push(c),
            }
        }
        flush_quoted(&mut parts, &mut lit);
        Ok(Some(Word { parts }))
    }

    /// After `` ` ``: the text up to the closing backtick, with its escapes
    /// undone, parsed as a program.
    pub(super) fn backtick(&mut self, dq: bool) -> Result<Part> {
        let mut text = Vec::new();
        let line = self.line;
        let start = self.pos;
        loop {
            let Some(c) = self.bump() else {
                return self.unclosed(line, "`");
            };
            match c {
                b'`' => break,
                b'\\' => match self.peek() {
                    Some(c @ (b'$' | b'`' | b'\\')) => {
                        self.bump();
                        text.push(c);
                    }
                    Some(b'"') if dq => {
                        self.bump();
                        text.push(b'"');
                    }
                    // A line continuation goes before the text is parsed,
                    // even inside its single quotes (bash).
                    Some(b'\n') => {
                        self.bump();
                    }
                    _ => text.push(b'\\'),
                },
                c => text.push(c),
            }
        }
        self.enter()?;
        let mut src = Text;
        let mut p = Parser::new(&text, &mut src, self.aliases.clone()).with_line(line);
        p.depth = self.depth;
        let list = p.program();
        self.warnings.append(&mut p.warnings);
        self.depth -= 1;
        // As written, for `declare -f`, which prints backquotes as bash
        // does: unchanged.
        let written = self.buf.get(start..self.pos - 1).map(Rc::from);
        Ok(Part::CommandSub(Rc::new(list?), written))
    }

    /// After `$'`: the ANSI-C quoted string, decoded.
    pub(super) fn ansi_c(&mut self) -> Result<Vec<u8>> {
        let mut raw = Vec::new();
        let start = self.line;
        loop {
            match self.bump() {
                None => return self.unclosed(start, "'"),
                Some(b'\'') => break,
                Some(b'\\') => {
                    raw.push(b'\\');
                    if let Some(c) = self.bump() {
                        raw.push(c);
                    }
                }
                Some(c) => raw.push(c),
            }
        }
        let mut out = Vec::with_capacity(raw.len());
        crate::escape::unescape(&raw, &mut out, crate::escape::Dialect::AnsiC);
        // A NUL ends the string (bash: `$'ab\0cd'` is `ab`).
        if let Some(end) = out.iter().position(|&c| c == 0) {
            out.truncate(end);
        }
        Ok(out)
    }

    /// After `${` that [`Parser::brace_param`] could not read: bash reports
    /// a malformed `${…}` only when it is expanded (zsh's `${(k)x}` behind
    /// an `if [[ -n $ZSH_VERSION ]]` must not stop a bash script), so this
    /// skips to the matching `}` and keeps the text for that error.
    pub(super) fn skip_bad_brace(&mut self, dq: bool) -> Result<Part> {
        let from = self.pos;
        let mut text = b"${".to_vec();
        let mut depth = 0u32;
        let mut quote = None;
        loop {
            let Some(c) = self.bump() else {
                return self.unclosed(self.brace_start, "}");
            };
            // In double quotes bash has already turned `$'t'` into `'t'`.
            if (dq || self.dq_param) && quote.is_none() && c == b'$' && self.peek() == Some(b'\'') {
                self.bump();
                let s = self.ansi_c()?;
                text.push(b'\'');
                for &b in &s {
                    if b == b'\'' {
                        text.extend_from_slice(b"'\\''");
                    } else {
                        text.push(b);
                    }
                }
                text.push(b'\'');
                continue;
            }
            text.push(c);
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(b'\''), _) => {}
                (_, b'\\') => {
                    if let Some(n) = self.bump() {
                        text.push(n);
                    }
                }
                (Some(_), _) => {}
                (None, b'\'') if !dq => quote = Some(b'\''),
                (None, b'"') => quote = Some(b'"'),
                (None, b'{') => depth += 1,
                (None, b'}') if depth == 0 => {
                    let mut written = b"${".to_vec();
                    written.extend_from_slice(&self.buf[from..self.pos]);
                    return Ok(Part::BadSubst(Box::new(crate::ast::BadSubst {
                        message: text,
                        written,
                    })));
                }
                (None, b'}') => depth -= 1,
                _ => {}
            }
        }
    }

    /// After `${`: line continuations in the name and the operator are no
    /// part of them (`${HO\<newline>ME}` is `${HOME}`, bash), taken out of
    /// the text so the lookahead that reads them sees them joined.
    pub(super) fn join_brace_head(&mut self) {
        let mut k = 0;
        loop {
            match self.peek_at(k) {
                Some(b'\\') if self.peek_at(k + 1) == Some(b'\n') => {
                    self.buf.drain(self.pos + k..self.pos + k + 2);
                    self.line += 1;
                }
                Some(c)
                    if is_name_char(c)
                        || matches!(
                            c,
                            b'#' | b'!'
                                | b'@'
                                | b'*'
                                | b'?'
                                | b'-'
                                | b'$'
                                | b':'
                                | b'='
                                | b'+'
                                | b'%'
                                | b'/'
                                | b'^'
                                | b','
                        ) =>
                {
                    k += 1;
                }
                _ => break,
            }
        }
    }

    /// `"${$'x1'%t}"`: inside double quotes bash turns a `$'…'` where a
    /// name goes into its text as it reads (extquote), so the name is `x1`.
    pub(super) fn extquote_name(&mut self) -> Result<()> {
        if self.peek() == Some(b'$') && self.peek_at(1) == Some(b'\'') {
            let start = self.pos;
            self.bump();
            self.bump();
            let text = self.ansi_c()?;
            let len = text.len();
            let written = self.buf.splice(start..self.pos, text).collect();
            self.extquotes.push((start, written, len));
            self.pos = start;
        }
        Ok(())
    }

    /// After a `$` in the word of a `${…}`: a `${` there is read with
    /// double quotes' extquote if the outer one is in double quotes.
    pub(super) fn dollar_in_param_word(&mut self, dq: bool, lit_quoted: bool) -> Result<Part> {
        let outer = self.dq_param;
        if dq && self.peek() == Some(b'{') {
            self.bump();
            self.extquote_name()?;
            self.pos -= 1;
            self.dq_param = true;
        }
        let r = self.dollar(lit_quoted);
        self.dq_param = outer;
        r
    }

    /// After `${`.
    pub(super) fn brace_param(&mut self, dq: bool) -> Result<Part> {
        let bad = |p: &mut Self| p.error(BAD_SUBSTITUTION);
        self.join_brace_head();
        if dq {
            self.extquote_name()?;
        }
        let mut length = false;
        let mut indirect = false;
        // `${#}` is `$#`; `${#x}` is a length. `${#-}`, `${#?}`, `${##}`
        // and `${#@}` are lengths only when `}` follows: `${#?word}` is `$#`
        // with an operator. `${#%}`, `${#:}`, `${#=}`, `${#+}` and `${#/}`
        // are errors (bash).
        if self.peek() == Some(b'#')
            && matches!(self.peek_at(1), Some(b'%' | b':' | b'=' | b'+' | b'/'))
            && self.peek_at(2) == Some(b'}')
        {
            return bad(self);
        }
        if self.peek() == Some(b'#') && !matches!(self.peek_at(1), Some(b'}')) {
            let next = self.peek_at(1);
            if next.is_some_and(|c| {
                is_name_char(c) || matches!(c, b'@' | b'*' | b'#' | b'?' | b'-' | b'$' | b'!')
            }) && !(matches!(next, Some(b'-' | b'?' | b'#' | b'@'))
                && self.peek_at(2) != Some(b'}'))
            {
                self.bump();
                length = true;
            }
        } else if self.peek() == Some(b'!')
            && (self.peek_at(1).is_some_and(|c| c.is_ascii_digit())
                || matches!(self.peek_at(1), Some(b'#' | b'*' | b'@'))
                    && self.peek_at(2) == Some(b'}'))
        {
            // `${!#}`, `${!1}`, `${!1#a}`, `${!1:-d}`, `${!*}`: indirection
            // through a positional or special parameter, with any operator
            // after it.
            self.bump();
            indirect = true;
        } else if self.peek() == Some(b'!') && self.peek_at(1).is_some_and(is_name_start) {
            self.bump();
            indirect = true;
            // `${!prefix*}` and `${!prefix@}`
            let mut k = 0;
            while self.peek_at(k).is_some_and(is_name_char) {
                k += 1;
            }
            if let (Some(c @ (b'*' | b'@')), Some(b'}')) = (self.peek_at(k), self.peek_at(k + 1)) {
                let name = self.buf[self.pos..self.pos + k].to_vec();
                for _ in 0..k + 2 {
                    self.bump();
                }
                return Ok(param(name, ParamOp::Names { star: c == b'*' }));
            }
        }
        let mut name = Vec::new();
        match self.peek() {
            Some(c) if is_name_start(c) => {
                while let Some(c) = self.peek().filter(|&c| is_name_char(c)) {
                    self.bump();
                    name.push(c);
                }
            }
            Some(c) if c.is_ascii_digit() => {
                while let Some(c) = self.peek().filter(u8::is_ascii_digit) {
                    self.bump();
                    name.push(c);
                }
            }
            Some(c @ (b'@' | b'*' | b'#' | b'?' | b'-' | b'$' | b'!')) => {
                self.bump();
                name.push(c);
            }
            None => return self.unclosed(self.brace_start, "}"),
            _ => return bad(self),
        }
        let mut index = None;
        if self.peek() == Some(b'[') && is_name(&name) {
            self.bump();
            // The subscript is read as if unquoted, also inside double
            // quotes: "${m['k']}" and "${m["k"]}" name the key k (bash).
            let outer = std::mem::replace(&mut self.in_subscript, true);
            let w = self.param_word(false, b"]", false);
            self.in_subscript = outer;
            // No `]` that closes it: the `${…}` ends at its `}`, a bad
            // substitution when it runs (`${d[}`, bash), whatever the text
            // after it (bash parses a `$(…)` as it finds the `}`, so an
            // error in one stands).
            if w.as_ref().is_err_and(|e| !e.in_comsub) {
                return bad(self);
            }
            index = Some(w?);
            if self.bump() != Some(b']') {
                return bad(self);
            }
        }
        let p = |op| Param {
            name: name.clone(),
            index: index.clone(),
            indirect,
            op,
            bare: false,
        };
        if length {
            if self.bump() != Some(b'}') {
                return bad(self);
            }
            return Ok(Part::Param(Box::new(p(ParamOp::Length))));
        }
        let Some(c) = self.bump() else {
            return self.unclosed(self.brace_start, "}");
        };
        let op = match c {
            b'}' => return Ok(Part::Param(Box::new(p(ParamOp::Plain)))),
            b':' => match self.peek() {
                Some(b'-') | Some(b'=') | Some(b'?') | Some(b'+') => {
                    let c = self.bump().unwrap_or_default();
                    let word = self.param_word(dq, b"}", false)?;
                    value_op(c, true, word)
                }
                _ => {
                    self.slice_offset = true;
                    let offset = self.param_word(dq, b":}", false);
                    self.slice_offset = false;
                    let offset = offset?;
                    // `${x:}`: no offset at all is a bad substitution (bash;
                    // `${x: }` and `${x::2}` have offset 0).
                    if offset.parts.is_empty() && self.peek() == Some(b'}') {
                        return bad(self);
                    }
                    let length = if self.peek() == Some(b':') {
                        self.bump();
                        Some(self.param_word(dq, b"}", false)?)
                    } else {
                        None
                    };
                    ParamOp::Slice { offset, length }
                }
            },
            b'-' | b'=' | b'?' | b'+' => {
                let word = self.param_word(dq, b"}", false)?;
                value_op(c, false, word)
            }
            b'#' | b'%' => {
                let longest = self.peek() == Some(c);
                if longest {
                    self.bump();
                }
                let pattern = self.param_word(dq, b"}", true)?;
                if c == b'#' {
                    ParamOp::TrimPrefix { longest, pattern }
                } else {
                    ParamOp::TrimSuffix { longest, pattern }
                }
            }
            b'/' => {
                let (all, anchor) = match self.peek() {
                    Some(b'/') => {
                        self.bump();
                        (true, Anchor::None)
                    }
                    Some(b'#') => {
                        self.bump();
                        (false, Anchor::Start)
                    }
                    Some(b'%') => {
                        self.bump();
                        (false, Anchor::End)
                    }
                    _ => (false, Anchor::None),
                };
                // After `//` a pattern cannot be empty: a `/` right after it
                // is its first character (`${x////c}` replaces `/`). After
                // `/#` and `/%` an empty pattern is an anchor
                // (`${a[@]/#/prefix-}`).
                let pattern = if all && self.peek() == Some(b'/') {
                    self.bump();
                    let mut rest = self.param_word(dq, b"/}", true)?;
                    rest.parts.insert(0, Part::Lit(b"/".to_vec()));
                    rest
                } else {
                    self.param_word(dq, b"/}", true)?
                };
                let slash = self.peek() == Some(b'/');
                let with = if slash {
                    self.bump();
                    self.param_word_in(dq, b"}", false, true)?
                } else {
                    Word::default()
                };
                ParamOp::Replace {
                    all,
                    anchor,
                    pattern,
                    with,
                    slash,
                }
            }
            b'@' if matches!(
                self.peek(),
                Some(b'Q' | b'E' | b'P' | b'U' | b'u' | b'L' | b'A' | b'a' | b'K' | b'k')
            ) && self.peek_at(1) == Some(b'}') =>
            {
                let op = self.bump().unwrap_or_default();
                ParamOp::Transform(op)
            }
            b'^' | b',' => {
                let all = self.peek() == Some(c);
                if all {
                    self.bump();
                }
                ParamOp::Case {
                    upper: c == b'^',
                    all,
                    pattern: self.param_word(dq, b"}", true)?,
                }
            }
            _ => return bad(self),
        };
        match self.bump() {
            Some(b'}') => Ok(Part::Param(Box::new(p(op)))),
            None => self.unclosed(self.brace_start, "}"),
            Some(_) => bad(self),
        }
    }

    /// The word inside `${…}` after an operator, up to (not including) an
    /// unnested byte of `stops`. Quotes work inside it even within double
    /// quotes; `pattern` words keep quoting apart from literal text (for
    /// matching).
    pub(super) fn param_word(&mut self, dq: bool, stops: &[u8], pattern: bool) -> Result<Word> {
        self.param_word_in(dq, stops, pattern, false)
    }

    /// [`Parser::param_word`]; with `any_escape` (the replacement of
    /// `${x/p/r}`), a backslash quotes any character and single quotes
    /// quote also inside double quotes, as bash 5.2 removes them there.
    pub(super) fn param_word_in(
        &mut self,
        dq: bool,
        stops: &[u8],
        pattern: bool,
        any_escape: bool,
    ) -> Result<Word> {
        let mut parts = Vec::new();
        let mut lit = Vec::new();
        // Inside double quotes the text of a value is quoted, but the text
        // of a pattern keeps its special characters ("${x#?}").
        let lit_quoted = dq && !pattern;
        let mut questions = 0u32;
        // Inside double quotes, a value's single quotes are text, but bash
        // finds the end of the `${…}` with them as quotes: between two,
        // a `}` is text and a `"` is dropped (`"${x-'"'a}"` is `''a`).
        let mut in_single = false;
        // Brackets nest in a subscript (`${a[a[0]]}`).
        let mut brackets = 0u32;
        let nest = std::mem::take(&mut self.in_subscript);
        loop {
            let Some(c) = self.peek() else {
                return self.unclosed(self.brace_start, "}");
            };
            if in_single {
                match c {
                    b'\'' => {
                        self.bump();
                        in_single = false;
                        lit.push(c);
                        continue;
                    }
                    b'"' => {
                        self.bump();
                        continue;
                    }
                    // A backslash does not quote the closing quote: bash
                    // reads `"${x='\'}"` as `'\'`; other escapes stay
                    // escapes (`'\$'` is `'$'`).
                    b'\\' if self.peek_at(1) == Some(b'\'') => {
                        self.bump();
                        lit.push(c);
                        continue;
                    }
                    _ => {}
                }
            }
            // The offset of `${x:off:len}` is arithmetic: a `:` that
            // closes a `?` is part of it (`${x:1 ? 4 : 2}`).
            if self.slice_offset && c == b'?' {
                questions += 1;
            } else if self.slice_offset && c == b':' && questions > 0 {
                questions -= 1;
                self.bump();
                lit.push(c);
                continue;
            }
            // The first unquoted stop ends the word: bash counts no braces
            // here (`${x%%[{(]*}`, `${x:-a{b}c}` is `a{b` then `c}`).
            if nest {
                match c {
                    b'[' => brackets += 1,
                    b']' if brackets > 0 => {
                        brackets -= 1;
                        self.bump();
                        lit.push(c);
                        continue;
                    }
                    _ => {}
                }
            }
            if stops.contains(&c) && !in_single {
                break;
            }
            self.bump();
            match c {
                b'\\' => match self.bump() {
                    Some(b'\n') => {}
                    Some(e) => {
                        if dq
                            && !pattern
                            && !any_escape
                            && !matches!(e, b'$' | b'`' | b'"' | b'\\' | b'}')
                        {
                            lit.push(b'\\');
                            lit.push(e);
                        } else {
                            flush_word_lit(&mut parts, &mut lit, lit_quoted);
                            parts.push(Part::Escaped(e));
                        }
                    }
                    None => lit.push(b'\\'),
                },
                b'\'' if !dq || pattern || any_escape => {
                    flush_word_lit(&mut parts, &mut lit, lit_quoted);
                    parts.push(Part::Single(self.single_quoted()?));
                }
                b'\'' if !self.posix => {
                    in_single = true;
                    lit.push(c);
                }
                b'"' => {
                    flush_word_lit(&mut parts, &mut lit, lit_quoted);
                    parts.push(Part::Double(self.double_quoted_in(lit_quoted)?));
                }
                // `$'…'` is ANSI-C quoting inside `${…}` also within
                // double quotes (bash's extquote, on by default); in a
                // here-document only in patterns and replacements.
                b'$' if dq
                    && self.peek() == Some(b'\'')
                    && (!self.in_heredoc || pattern || any_escape) =>
                {
                    self.bump();
                    flush_word_lit(&mut parts, &mut lit, lit_quoted);
                    parts.push(Part::Single(self.ansi_c()?));
                }
                b'$' => match self.dollar_in_param_word(dq, lit_quoted)? {
                    Part::Lit(b) => lit.extend_from_slice(&b),
                    p => {
                        flush_word_lit(&mut parts, &mut lit, lit_quoted);
                        parts.push(p);
                    }
                },
                b'`' => {
                    flush_word_lit(&mut parts, &mut lit, lit_quoted);
                    parts.push(self.backtick(dq)?);
                }
                c => lit.push(c),
            }
        }
        flush_word_lit(&mut parts, &mut lit, lit_quoted);
        Ok(Word { parts })
    }
}

pub(super) fn param(name: Vec<u8>, op: ParamOp) -> Part {
    Part::Param(Box::new(Param {
        name,
        index: None,
        indirect: false,
        op,
        bare: false,
    }))
}

pub(super) fn value_op(c: u8, colon: bool, word: Word) -> ParamOp {
    match c {
        b'-' => ParamOp::Default { colon, word },
        b'=' => ParamOp::Assign { colon, word },
        b'?' => ParamOp::Error { colon, word },
        _ => ParamOp::Alternative { colon, word },
    }
}

pub(super) fn flush_lit(parts: &mut Vec<Part>, lit: &mut Vec<u8>) {
    if lit.is_empty() {
        return;
    }
    let part = Part::Lit(std::mem::take(lit));
    // Most words are one part: allocated at its size, not grown.
    if parts.is_empty() {
        *parts = vec![part];
    } else {
        parts.push(part);
    }
}

/// The elements of `name=(…)` and the text after the `)` as one word, the
/// parentheses and blanks as text: `a=(4*3)/2` assigns `(4*3)/2`.
pub(super) fn list_as_text(items: Vec<Element>, rest: Word) -> Word {
    let mut parts = vec![Part::Lit(b"(".to_vec())];
    for (i, e) in items.into_iter().enumerate() {
        if i > 0 {
            parts.push(Part::Lit(b" ".to_vec()));
        }
        if let Some(k) = e.key {
            parts.push(Part::Lit(b"[".to_vec()));
            parts.extend(k.parts);
            parts.push(Part::Lit(if e.append {
                b"]+=".to_vec()
            } else {
                b"]=".to_vec()
            }));
        }
        parts.extend(e.value.parts);
    }
    parts.push(Part::Lit(b")".to_vec()));
    parts.extend(rest.parts);
    Word { parts }
}

pub(super) fn flush_quoted(parts: &mut Vec<Part>, lit: &mut Vec<u8>) {
    if !lit.is_empty() {
        parts.push(Part::Quoted(std::mem::take(lit)));
    }
}

pub(super) fn flush_word_lit(parts: &mut Vec<Part>, lit: &mut Vec<u8>, dq: bool) {
    if dq {
        flush_quoted(parts, lit);
    } else {
        flush_lit(parts, lit);
    }
}

/// Quote removal on a word's text as written, nothing expanded: a
/// here-document's delimiter. `\c` is c; single quotes keep what they
/// hold; in double quotes `\` goes only before `$`, `` ` ``, `"` and `\`.
pub(super) fn remove_quotes(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        match raw[i] {
            // A line continuation is no part of the word.
            b'\\' if raw.get(i + 1) == Some(&b'\n') => i += 2,
            b'\\' if i + 1 < raw.len() => {
                out.push(raw[i + 1]);
                i += 2;
            }
            b'\'' => {
                let end = raw[i + 1..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map_or(raw.len(), |p| i + 1 + p);
                out.extend_from_slice(&raw[i + 1..end]);
                i = end + 1;
            }
            b'"' => {
                i += 1;
                while i < raw.len() && raw[i] != b'"' {
                    if raw[i] == b'\\' && matches!(raw.get(i + 1), Some(b'$' | b'`' | b'"' | b'\\'))
                    {
                        i += 1;
                    }
                    out.push(raw[i]);
                    i += 1;
                }
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}
