//! The syntax tree back to shell text: for `declare -f`, `type` and
//! `$BASH_COMMAND`.
//!
//! The layout follows bash's (`name () `, `{ `, four spaces of indent, one
//! command a line), and the text reads back to the same tree, in bash and in
//! rush: quoting is kept as written, and here-document bodies follow the
//! line that names them.

use crate::ast::*;
use std::rc::Rc;

/// A function definition as `declare -f` prints it.
pub fn function(f: &Function) -> Vec<u8> {
    let mut p = Printer::default();
    p.function(f);
    p.out
}

/// One simple command on one line, as `$BASH_COMMAND` shows it (here-doc
/// bodies left out).
pub fn simple(s: &Simple) -> Vec<u8> {
    let mut p = Printer::default();
    p.simple(s);
    p.out
}

/// A compound command, as `$BASH_COMMAND` shows `[[ … ]]` and `(( … ))`.
pub fn compound(c: &Compound) -> Vec<u8> {
    let mut p = Printer::default();
    p.compound(c);
    p.out
}

/// A pipeline on one line, as `jobs` shows it.
pub fn pipeline(pl: &Pipeline) -> Vec<u8> {
    let mut p = Printer::default();
    p.pipeline(pl);
    p.heredocs.clear();
    p.out
}

/// An and-or list on one line (a background job's text).
pub fn and_or(ao: &AndOr) -> Vec<u8> {
    let mut p = Printer::default();
    p.and_or(ao);
    p.heredocs.clear();
    p.out
}

/// A word as written.
pub fn word(w: &Word) -> Vec<u8> {
    let mut p = Printer::default();
    p.word(w, false);
    p.out
}

#[derive(Default)]
struct Printer {
    out: Vec<u8>,
    indent: usize,
    /// Here-documents named on the current line, written after it ends.
    heredocs: Vec<Rc<HereDoc>>,
}

impl Printer {
    fn put(&mut self, b: &[u8]) {
        self.out.extend_from_slice(b);
    }

    /// Ends the line: pending here-document bodies, then the next line's
    /// indent.
    fn newline(&mut self) {
        self.out.push(b'\n');
        for h in std::mem::take(&mut self.heredocs) {
            let body = h.body.get().map(|w| self.heredoc_body(w, h.quoted));
            let body = body.unwrap_or_default();
            self.put(&body);
            if !body.is_empty() && !body.ends_with(b"\n") {
                self.out.push(b'\n');
            }
            self.put(&delimiter(&body));
            self.out.push(b'\n');
        }
        for _ in 0..self.indent {
            self.put(b"    ");
        }
    }

    fn function(&mut self, f: &Function) {
        self.put(&f.name);
        self.put(b" () ");
        self.newline();
        match &f.body {
            Compound::Brace(list) => self.brace(list),
            other => self.compound(other),
        }
        for r in &f.redirects {
            self.out.push(b' ');
            self.redirect(r);
        }
    }

    fn brace(&mut self, list: &List) {
        self.put(b"{ ");
        self.block(list);
        self.put(b"}");
    }

    /// A list as a block: one item a line, indented, then the closing
    /// line's indent.
    fn block(&mut self, list: &List) {
        self.indent += 1;
        for item in &list.items {
            self.newline();
            self.item(item);
        }
        self.indent -= 1;
        self.newline();
    }

    /// A list on one line (conditions, subshells): items joined by `;`.
    fn inline(&mut self, list: &List) {
        for (i, item) in list.items.iter().enumerate() {
            if i > 0 && !list.items[i - 1].background {
                self.put(b";");
            }
            if i > 0 {
                self.put(b" ");
            }
            self.item(item);
        }
    }

    fn item(&mut self, item: &Item) {
        self.and_or(&item.and_or);
        if item.background {
            self.put(b" &");
        }
    }

    fn and_or(&mut self, ao: &AndOr) {
        self.pipeline(&ao.first);
        for (c, p) in &ao.rest {
            self.put(match c {
                Connector::And => b" && ",
                Connector::Or => b" || ",
            });
            self.pipeline(p);
        }
    }

    fn pipeline(&mut self, p: &Pipeline) {
        if p.timed {
            self.put(if p.posix_time { b"time -p " } else { b"time " });
        }
        if p.bang {
            self.put(b"! ");
        }
        for (i, c) in p.commands.iter().enumerate() {
            if i > 0 {
                let both = p.stderr_too.get(i - 1).copied().unwrap_or(false);
                self.put(if both { b" |& " } else { b" | " });
            }
            self.command(c);
        }
    }

    fn command(&mut self, c: &Command) {
        match c {
            Command::Simple(s) => self.simple(s),
            Command::Compound(c, redirects) => {
                self.compound(c);
                for r in redirects {
                    self.out.push(b' ');
                    self.redirect(r);
                }
            }
            Command::Function(f) => self.function(f),
        }
    }

    fn simple(&mut self, s: &Simple) {
        let mut first = true;
        let mut sep = |p: &mut Self| {
            if !std::mem::take(&mut first) {
                p.out.push(b' ');
            }
        };
        for a in &s.assigns {
            sep(self);
            self.assign(a);
        }
        for w in &s.words {
            sep(self);
            self.word(w, false);
        }
        for r in &s.redirects {
            sep(self);
            self.redirect(r);
        }
    }

    fn assign(&mut self, a: &Assign) {
        self.put(&a.name);
        if let Some(i) = &a.index {
            self.put(b"[");
            self.word(i, false);
            self.put(b"]");
        }
        self.put(if a.append { b"+=" } else { b"=" });
        match &a.array {
            Some(elems) => {
                self.put(b"(");
                for (i, (key, value)) in elems.iter().enumerate() {
                    if i > 0 {
                        self.put(b" ");
                    }
                    if let Some(k) = key {
                        self.put(b"[");
                        self.word(k, false);
                        self.put(b"]=");
                    }
                    self.word(value, false);
                }
                self.put(b")");
            }
            None => self.word(&a.value, false),
        }
    }

    fn redirect(&mut self, r: &Redirect) {
        if let Some(fd) = r.fd {
            self.put(fd.to_string().as_bytes());
        }
        let (op, spaced): (&[u8], bool) = match r.op {
            RedirOp::In => (b"<", true),
            RedirOp::Out => (b">", true),
            RedirOp::Clobber => (b">|", true),
            RedirOp::Append => (b">>", true),
            RedirOp::ReadWrite => (b"<>", true),
            RedirOp::DupIn => (b"<&", false),
            RedirOp::DupOut => (b">&", false),
            RedirOp::HereDoc => (b"<<", false),
            RedirOp::HereString => (b"<<<", true),
            RedirOp::OutErr => (b"&>", true),
            RedirOp::AppendOutErr => (b"&>>", true),
        };
        self.put(op);
        match &r.target {
            RedirTarget::Word(w) => {
                if spaced {
                    self.put(b" ");
                }
                self.word(w, false);
            }
            RedirTarget::HereDoc(h) => {
                let body = h
                    .body
                    .get()
                    .map(|w| self.heredoc_body(w, h.quoted))
                    .unwrap_or_default();
                let delim = delimiter(&body);
                if h.quoted {
                    self.put(b"'");
                    self.put(&delim);
                    self.put(b"'");
                } else {
                    self.put(&delim);
                }
                self.heredocs.push(h.clone());
            }
        }
    }

    fn heredoc_body(&self, w: &Word, quoted: bool) -> Vec<u8> {
        let mut p = Printer::default();
        p.raw(&w.parts, !quoted);
        p.out
    }

    /// Parts whose quotes are implied by where they stand (arithmetic,
    /// subscripts, here-document bodies): quoted text is written bare, with
    /// `\`, `$` and backquotes escaped if `escape`.
    fn raw(&mut self, parts: &[Part], escape: bool) {
        for part in parts {
            match part {
                Part::Lit(b) | Part::Single(b) => self.put(b),
                Part::Quoted(b) if escape => {
                    for &c in b {
                        if matches!(c, b'\\' | b'$' | b'`') {
                            self.out.push(b'\\');
                        }
                        self.out.push(c);
                    }
                }
                Part::Quoted(b) => self.put(b),
                Part::Double(inner) => self.raw(inner, escape),
                other => self.part(other, true),
            }
        }
    }

    fn compound(&mut self, c: &Compound) {
        match c {
            Compound::Brace(list) => self.brace(list),
            Compound::Subshell(list) => {
                self.put(b"( ");
                self.inline(list);
                self.put(b" )");
            }
            Compound::If { arms, otherwise } => {
                for (i, (cond, body)) in arms.iter().enumerate() {
                    self.put(if i == 0 { b"if " } else { b"elif " });
                    self.inline(cond);
                    self.put(b"; then");
                    self.block(body);
                }
                if let Some(e) = otherwise {
                    self.put(b"else");
                    self.block(e);
                }
                self.put(b"fi");
            }
            Compound::Loop { until, cond, body } => {
                self.put(if *until { b"until " } else { b"while " });
                self.inline(cond);
                self.put(b"; do");
                self.block(body);
                self.put(b"done");
            }
            Compound::For {
                var,
                words,
                body,
                select,
                ..
            } => {
                self.put(if *select { b"select " } else { b"for " });
                self.put(var);
                if let Some(ws) = words {
                    self.put(b" in");
                    for w in ws {
                        self.put(b" ");
                        self.word(w, false);
                    }
                }
                self.put(b"; do");
                self.block(body);
                self.put(b"done");
            }
            Compound::Case { word, arms, .. } => {
                self.put(b"case ");
                self.word(word, false);
                self.put(b" in");
                self.indent += 1;
                for arm in arms {
                    self.newline();
                    for (i, p) in arm.patterns.iter().enumerate() {
                        if i > 0 {
                            self.put(b" | ");
                        }
                        self.word(p, false);
                    }
                    self.put(b")");
                    self.block(&arm.body);
                    self.put(match arm.end {
                        CaseEnd::Break => b";;",
                        CaseEnd::FallThrough => b";&",
                        CaseEnd::Continue => b";;&",
                    });
                }
                self.indent -= 1;
                self.newline();
                self.put(b"esac");
            }
            Compound::Arith { expr, .. } => {
                self.put(b"((");
                self.raw(&expr.parts, false);
                self.put(b"))");
            }
            Compound::ArithFor {
                init,
                cond,
                step,
                body,
                ..
            } => {
                self.put(b"for ((");
                for (i, w) in [init, cond, step].into_iter().enumerate() {
                    let mut p = Printer::default();
                    p.raw(&w.parts, false);
                    if i > 0 {
                        self.put(b"; ");
                    }
                    self.put(p.out.trim_ascii());
                }
                self.put(b")); do");
                self.block(body);
                self.put(b"done");
            }
            Compound::Coproc { name, cmd } => {
                self.put(b"coproc ");
                if name.as_slice() != b"COPROC" {
                    self.put(name);
                    self.put(b" ");
                }
                self.command(cmd);
            }
            Compound::DoubleBracket { words, .. } => {
                self.put(b"[[");
                for w in words {
                    self.put(b" ");
                    self.word(w, false);
                }
                self.put(b" ]]");
            }
        }
    }

    /// A word; `dq`: inside double quotes.
    fn word(&mut self, w: &Word, dq: bool) {
        for (i, part) in w.parts.iter().enumerate() {
            // `$x` followed by a name character needs braces: `${x}y`.
            if let Part::Param(p) = part
                && plain_param(p)
                && w.parts.get(i + 1).is_some_and(starts_with_name_char)
            {
                self.put(b"${");
                self.put(&p.name);
                self.put(b"}");
                continue;
            }
            self.part(part, dq);
        }
    }

    fn part(&mut self, part: &Part, dq: bool) {
        match part {
            Part::Lit(b) => self.put(b),
            Part::Escaped(c) => {
                self.out.push(b'\\');
                self.out.push(*c);
            }
            Part::Single(b) => single(&mut self.out, b),
            Part::Quoted(b) => {
                if !dq {
                    self.out.push(b'"');
                }
                for &c in b {
                    if matches!(c, b'\\' | b'$' | b'`' | b'"') {
                        self.out.push(b'\\');
                    }
                    self.out.push(c);
                }
                if !dq {
                    self.out.push(b'"');
                }
            }
            Part::Double(parts) => {
                self.out.push(b'"');
                self.word(
                    &Word {
                        parts: parts.clone(),
                    },
                    true,
                );
                self.out.push(b'"');
            }
            Part::Param(p) => self.param(p, dq),
            Part::CommandSub(list) => {
                self.put(b"$(");
                self.inline(list);
                self.put(b")");
            }
            Part::Arith(w) => {
                self.put(b"$((");
                self.raw(&w.parts, false);
                self.put(b"))");
            }
            Part::ArrayAssign(a) => self.assign(a),
            Part::BadSubst(b) => self.put(b),
            Part::ProcSubst { read, list } => {
                self.put(if *read { b"<(" } else { b">(" });
                self.inline(list);
                self.put(b")");
            }
        }
    }

    fn param(&mut self, p: &Param, dq: bool) {
        if plain_param(p) {
            self.put(b"$");
            self.put(&p.name);
            return;
        }
        self.put(b"${");
        match p.op {
            ParamOp::Length => self.put(b"#"),
            ParamOp::Names { .. } => self.put(b"!"),
            _ if p.indirect => self.put(b"!"),
            _ => {}
        }
        self.put(&p.name);
        if let Some(i) = &p.index {
            self.put(b"[");
            self.raw(&i.parts, false);
            self.put(b"]");
        }
        let colon = |c: bool| -> &'static [u8] { if c { b":" } else { b"" } };
        match &p.op {
            ParamOp::Plain | ParamOp::Length => {}
            ParamOp::Default { colon: c, word } => self.op_word(colon(*c), b"-", word, dq),
            ParamOp::Assign { colon: c, word } => self.op_word(colon(*c), b"=", word, dq),
            ParamOp::Error { colon: c, word } => self.op_word(colon(*c), b"?", word, dq),
            ParamOp::Alternative { colon: c, word } => self.op_word(colon(*c), b"+", word, dq),
            ParamOp::TrimPrefix { longest, pattern } => {
                self.op_word(if *longest { b"##" } else { b"#" }, b"", pattern, dq);
            }
            ParamOp::TrimSuffix { longest, pattern } => {
                self.op_word(if *longest { b"%%" } else { b"%" }, b"", pattern, dq);
            }
            ParamOp::Replace {
                all,
                anchor,
                pattern,
                with,
            } => {
                self.put(if *all { b"//" } else { b"/" });
                self.put(match anchor {
                    Anchor::None => b"",
                    Anchor::Start => b"#",
                    Anchor::End => b"%",
                });
                self.word(pattern, dq);
                self.put(b"/");
                self.word(with, dq);
            }
            ParamOp::Slice { offset, length } => {
                self.put(b":");
                self.word(offset, dq);
                if let Some(l) = length {
                    self.put(b":");
                    self.word(l, dq);
                }
            }
            ParamOp::Case {
                upper,
                all,
                pattern,
            } => {
                let c = if *upper { b'^' } else { b',' };
                self.out.push(c);
                if *all {
                    self.out.push(c);
                }
                self.word(pattern, dq);
            }
            ParamOp::Transform(c) => {
                self.out.push(b'@');
                self.out.push(*c);
            }
            ParamOp::Names { star } => self.put(if *star { b"*" } else { b"@" }),
        }
        self.put(b"}");
    }

    fn op_word(&mut self, a: &[u8], b: &[u8], w: &Word, dq: bool) {
        self.put(a);
        self.put(b);
        self.word(w, dq);
    }
}

/// A parameter written as `$name`: no operator, index or indirection, and a
/// name that needs no braces (`$10` does).
fn plain_param(p: &Param) -> bool {
    matches!(p.op, ParamOp::Plain)
        && p.index.is_none()
        && !p.indirect
        && (p.name.len() == 1 || !p.name[0].is_ascii_digit())
}

fn starts_with_name_char(p: &Part) -> bool {
    let first = match p {
        Part::Lit(b) | Part::Quoted(b) => b.first(),
        _ => None,
    };
    first.is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'[')
}

/// Single-quoted text: `'…'` (control characters as they are, as bash's
/// `declare -f` prints them), or `$'…'` when it holds a quote.
fn single(out: &mut Vec<u8>, b: &[u8]) {
    if b.contains(&b'\'') {
        out.extend_from_slice(&crate::escape::ansi_c_quote(b));
        return;
    }
    out.push(b'\'');
    out.extend_from_slice(b);
    out.push(b'\'');
}

/// A here-document delimiter that no line of the body equals.
fn delimiter(body: &[u8]) -> Vec<u8> {
    let mut d = b"EOF".to_vec();
    while body.split(|&c| c == b'\n').any(|l| l == d.as_slice()) {
        d.push(b'_');
    }
    d
}
