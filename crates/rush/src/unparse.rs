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
    let mut p = Printer::one_line();
    p.simple(s);
    p.out
}

/// A compound command, as `$BASH_COMMAND` shows `[[ … ]]` and `(( … ))`.
pub fn compound(c: &Compound) -> Vec<u8> {
    let mut p = Printer::one_line();
    p.compound(c);
    p.out
}

/// A pipeline on one line, as `jobs` shows it.
pub fn pipeline(pl: &Pipeline) -> Vec<u8> {
    let mut p = Printer::one_line();
    p.pipeline(pl, true);
    p.out
}

/// An and-or list on one line (a background job's text).
pub fn and_or(ao: &AndOr) -> Vec<u8> {
    let mut p = Printer::one_line();
    p.and_or(ao, true);
    p.out
}

/// A word as written.
pub fn word(w: &Word) -> Vec<u8> {
    let mut p = Printer::default();
    p.word(w, false);
    p.out
}

/// The printer follows bash's `print_cmd.c` state for state, so that
/// `declare -f` and `type` print what bash prints: a newline and `;`
/// between commands inside a function, `;` after the last command of a
/// loop or `if` body, `elif` as a nested `if`, and here-document bodies
/// after the connector that follows their command.
#[derive(Default)]
struct Printer {
    out: Vec<u8>,
    /// Spaces before a command that starts a line.
    indent: usize,
    /// Commands to print without their indent (bash's `skip_this_indent`).
    skip: u32,
    /// Inside a function's body: commands a line each.
    in_function: u32,
    /// Inside a connection (`;`, `&&`, `|`): here-document bodies wait for
    /// its connector.
    connection: u32,
    /// Here-documents whose bodies wait for the next connector.
    deferred: Vec<Rc<HereDoc>>,
    /// Printing a pattern or a replacement of `${…}`, where single quotes
    /// quote also inside double quotes (`"${x#'*'}"`); in a value
    /// (`"${x-'a'}"`) they are characters.
    quoting_word: bool,
    /// Printing a value or a replacement of `${…}` in double quotes, where
    /// double quotes inside read a backslash before any character as an
    /// escape (`"${x="\q"}"` is `q`).
    escaping_word: bool,
    /// Inside such double quotes.
    escaping_double: bool,
    /// The `2>&1` of a `|&` after the command, printed after the
    /// redirections that a reserved word as its name puts first.
    lead_stderr: bool,
    /// The command just printed ended with here-document bodies (no `;`).
    was_heredoc: bool,
    /// Leave here-document bodies out (one-line forms).
    no_bodies: bool,
}

const INDENT: usize = 4;

impl Printer {
    fn one_line() -> Self {
        Printer {
            no_bodies: true,
            ..Printer::default()
        }
    }

    fn put(&mut self, b: &[u8]) {
        self.out.extend_from_slice(b);
    }

    fn spaces(&mut self, n: usize) {
        self.out.resize(self.out.len() + n, b' ');
    }

    /// A newline, the indent, then `text`.
    fn newline(&mut self, text: &[u8]) {
        self.out.push(b'\n');
        self.spaces(self.indent);
        self.put(text);
    }

    /// `;` unless the text ends with `&` or a newline.
    fn semicolon(&mut self) {
        if !matches!(self.out.last(), Some(b'&' | b'\n')) {
            self.out.push(b';');
        }
    }

    fn heredoc_bodies(&mut self, docs: Vec<Rc<HereDoc>>) {
        self.out.push(b'\n');
        for h in docs {
            let body = match h.text.get() {
                Some(t) => t.clone(),
                None => h
                    .body
                    .get()
                    .map(|w| self.heredoc_body(w, h.quoted))
                    .unwrap_or_default(),
            };
            self.put(&body);
            // A body that the end of the input closed has no newline of
            // its own (it runs as if it had one); the delimiter needs a
            // line to itself.
            if !body.is_empty() && !body.ends_with(b"\n") {
                self.out.push(b'\n');
            }
            self.put(&h.delim);
            self.out.push(b'\n');
        }
        self.was_heredoc = true;
    }

    /// The connector `c` (a lone `;` is not printed), then the bodies of
    /// the here-documents waiting for it.
    fn deferred_heredocs(&mut self, c: &[u8]) {
        let shown = !c.is_empty() && c != b";";
        if shown {
            self.put(c);
        }
        if !self.deferred.is_empty() {
            let docs = std::mem::take(&mut self.deferred);
            self.heredoc_bodies(docs);
            if shown {
                self.out.push(b' ');
            }
        }
    }

    fn flush_deferred(&mut self) {
        if !self.deferred.is_empty() {
            self.deferred_heredocs(b"");
        }
    }

    /// The top-level definition, as `declare -f` prints it.
    fn function(&mut self, f: &Function) {
        if is_reserved(&f.name) {
            self.put(b"function ");
        }
        self.put(&f.name);
        self.put(b" () \n");
        self.indent += INDENT;
        self.put(b"{ \n");
        self.function_body(f);
        self.indent -= INDENT;
        self.function_end(f);
    }

    /// A definition inside another function's body.
    fn nested_function(&mut self, f: &Function) {
        self.put(b"function ");
        self.put(&f.name);
        self.put(b" () \n");
        self.spaces(self.indent);
        self.put(b"{ \n");
        self.indent += INDENT;
        self.function_body(f);
        self.indent -= INDENT;
        self.function_end(f);
    }

    fn function_body(&mut self, f: &Function) {
        self.in_function += 1;
        match &f.body {
            Compound::Brace(list) => self.list(list),
            // A body that is not a group is printed in one, with the
            // redirections of the definition as its own (bash).
            other => {
                self.start();
                self.compound(other);
                if !f.redirects.is_empty() {
                    self.out.push(b' ');
                    self.redirects(&f.redirects);
                }
            }
        }
        self.flush_deferred();
        self.in_function -= 1;
    }

    fn function_end(&mut self, f: &Function) {
        if f.redirects.is_empty() || !matches!(f.body, Compound::Brace(_)) {
            self.newline(b"}");
            self.was_heredoc = false;
        } else {
            self.newline(b"} ");
            self.redirects(&f.redirects);
        }
    }

    /// Where a command starts: its indent, unless told to skip it.
    fn start(&mut self) {
        if self.skip > 0 {
            self.skip -= 1;
        } else {
            self.spaces(self.indent);
        }
    }

    /// A list: its first command takes the indent (or skips it), the
    /// others follow their connectors.
    fn list(&mut self, list: &List) {
        let n = list.items.len();
        if n == 0 {
            return;
        }
        if n > 1 {
            self.connection += 1;
        }
        for (i, item) in list.items.iter().enumerate() {
            // After a connector on the same line, `skip` is set.
            self.start();
            // In the background, the bodies come after the `&` (bash puts
            // those of `a || b <<E &` before it: a line starting with `&`).
            // A lone job in the background is connected to its `&` as a
            // list's commands are to each other: its bodies wait for it.
            let lone_job = n == 1 && item.background;
            self.connection += u32::from(lone_job);
            self.and_or(&item.and_or, !item.background);
            self.connection -= u32::from(lone_job);
            let last = i + 1 == n;
            if item.background {
                self.deferred_heredocs(b" &");
                if !last {
                    self.out.push(b' ');
                    self.skip += 1;
                }
            } else if !last {
                if self.deferred.is_empty() {
                    if !self.was_heredoc {
                        self.out.push(b';');
                    } else {
                        self.was_heredoc = false;
                    }
                } else {
                    let c: &[u8] = if self.in_function > 0 { b"" } else { b";" };
                    self.deferred_heredocs(c);
                }
                if self.in_function > 0 {
                    self.out.push(b'\n');
                } else {
                    self.out.push(b' ');
                    self.skip += 1;
                }
            }
        }
        if n > 1 {
            self.flush_deferred();
            self.connection -= 1;
        }
    }

    /// A list on one line whatever the context (command substitutions).
    fn inline(&mut self, list: &List) {
        let saved = (
            std::mem::take(&mut self.in_function),
            std::mem::take(&mut self.indent),
        );
        self.skip += 1;
        self.list(list);
        (self.in_function, self.indent) = saved;
    }

    /// `flush`: print the here-document bodies after it (not when `&`
    /// follows).
    fn and_or(&mut self, ao: &AndOr, flush: bool) {
        if !ao.rest.is_empty() {
            self.connection += 1;
        }
        // A pipeline followed by `&&` or `||` leaves its here-document
        // bodies to be printed after the operator: bash prints them before
        // it (`cat <<E | cat\nbody\nE\n || echo x`), which does not read
        // back, since a line cannot start with `||`.
        self.pipeline(&ao.first, flush && ao.rest.is_empty());
        for (c, p) in &ao.rest {
            self.deferred_heredocs(match c {
                Connector::And => b" && ",
                Connector::Or => b" || ",
            });
            self.pipeline(p, false);
        }
        if !ao.rest.is_empty() {
            if flush {
                self.flush_deferred();
            }
            self.connection -= 1;
        }
    }

    /// `flush`: print the here-document bodies of a pipeline of several
    /// commands after it (not when an operator follows).
    fn pipeline(&mut self, p: &Pipeline, flush: bool) {
        if p.timed {
            self.put(if p.posix_time { b"time -p " } else { b"time " });
        }
        if p.bang {
            self.put(b"! ");
        }
        let many = p.commands.len() > 1;
        if many {
            self.connection += 1;
        }
        for (i, c) in p.commands.iter().enumerate() {
            if i > 0 {
                self.deferred_heredocs(b" |");
                self.out.push(b' ');
            }
            // bash keeps `|&` as a `2>&1` on the command before `|`: after
            // its redirections, which a reserved word as the command's
            // name puts first (it reads back as a written `2>&1`, printed
            // the same).
            let stderr_too = p.stderr_too.get(i).copied().unwrap_or(false);
            let leading = matches!(c, Command::Simple(s) if keyword_first(s));
            if stderr_too && leading {
                self.lead_stderr = true;
            }
            self.command(c);
            if stderr_too && !leading {
                self.put(b" 2>&1");
                // A redirection, as bash keeps it: printing it forgets
                // bodies printed before (`<<E & x |& y` then `;`).
                self.was_heredoc = false;
            }
        }
        if many {
            if flush {
                self.flush_deferred();
            }
            self.connection -= 1;
        }
    }

    fn command(&mut self, c: &Command) {
        match c {
            Command::Simple(s) => self.simple(s),
            Command::Compound(c, redirects) => {
                self.compound(c);
                if !redirects.is_empty() {
                    self.out.push(b' ');
                    self.redirects(redirects);
                }
            }
            Command::Function(f) => self.nested_function(f),
        }
    }

    /// A body one level in (loops, `if`, `case` arms).
    fn body(&mut self, list: &List) {
        self.indent += INDENT;
        self.list(list);
        self.flush_deferred();
        self.indent -= INDENT;
    }

    fn compound(&mut self, c: &Compound) {
        match c {
            Compound::Brace(list) => {
                self.put(b"{ ");
                if self.in_function > 0 {
                    self.out.push(b'\n');
                    self.indent += INDENT;
                } else {
                    self.skip += 1;
                }
                self.list(list);
                self.flush_deferred();
                if self.in_function > 0 {
                    self.out.push(b'\n');
                    self.indent -= INDENT;
                    self.spaces(self.indent);
                } else {
                    self.semicolon();
                    self.out.push(b' ');
                }
                self.put(b"}");
            }
            Compound::Subshell(list) => {
                self.put(b"( ");
                self.skip += 1;
                self.list(list);
                self.flush_deferred();
                self.put(b" )");
            }
            Compound::If { arms, otherwise } => self.if_arms(arms, otherwise.as_ref()),
            Compound::Loop { until, cond, body } => {
                self.put(if *until { b"until " } else { b"while " });
                self.skip += 1;
                self.list(cond);
                self.flush_deferred();
                self.semicolon();
                self.put(b" do\n");
                self.body(body);
                self.semicolon();
                self.newline(b"done");
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
                self.put(b" in ");
                match words {
                    Some(ws) => {
                        for (i, w) in ws.iter().enumerate() {
                            if i > 0 {
                                self.put(b" ");
                            }
                            self.word(w, false);
                        }
                    }
                    None => self.put(b"\"$@\""),
                }
                self.put(b";");
                self.newline(b"do\n");
                self.body(body);
                self.semicolon();
                self.newline(b"done");
            }
            Compound::Case { word, arms, .. } => {
                self.put(b"case ");
                self.word(word, false);
                self.put(b" in ");
                self.indent += INDENT;
                for arm in arms {
                    self.newline(b"");
                    for (i, p) in arm.patterns.iter().enumerate() {
                        if i > 0 {
                            self.put(b" | ");
                        }
                        self.word(p, false);
                    }
                    self.put(b")\n");
                    self.body(&arm.body);
                    self.newline(match arm.end {
                        CaseEnd::Break => b";;",
                        CaseEnd::FallThrough => b";&",
                        CaseEnd::Continue => b";;&",
                    });
                }
                self.indent -= INDENT;
                self.newline(b"esac");
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
                    self.put(&p.out);
                }
                self.put(b"))");
                self.newline(b"do\n");
                self.body(body);
                self.semicolon();
                self.newline(b"done");
            }
            Compound::Coproc { name, cmd } => {
                self.put(b"coproc ");
                self.put(name);
                self.put(b" ");
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

    /// `if`; an `elif` is printed as the `if` of an `else`, as bash does.
    fn if_arms(&mut self, arms: &[(List, List)], otherwise: Option<&List>) {
        let Some(((cond, then), rest)) = arms.split_first() else {
            return;
        };
        self.put(b"if ");
        self.skip += 1;
        self.list(cond);
        self.flush_deferred();
        self.semicolon();
        self.put(b" then\n");
        self.body(then);
        if !rest.is_empty() || otherwise.is_some() {
            self.semicolon();
            self.newline(b"else\n");
            if rest.is_empty() {
                if let Some(e) = otherwise {
                    self.body(e);
                }
            } else {
                self.indent += INDENT;
                self.spaces(self.indent);
                self.if_arms(rest, otherwise);
                self.indent -= INDENT;
            }
        }
        self.semicolon();
        self.newline(b"fi");
    }

    fn redirects(&mut self, rs: &[Redirect]) {
        self.was_heredoc = false;
        let mut docs = Vec::new();
        for (i, r) in rs.iter().enumerate() {
            if i > 0 {
                self.out.push(b' ');
            }
            if let RedirTarget::HereDoc(h) = &r.target {
                docs.push(h.clone());
            }
            self.redirect(r);
        }
        if docs.is_empty() || self.no_bodies {
            return;
        }
        if self.connection > 0 {
            self.deferred.extend(docs);
        } else {
            self.heredoc_bodies(docs);
        }
    }

    fn simple(&mut self, s: &Simple) {
        let mut first = true;
        let mut sep = |p: &mut Self| {
            if !std::mem::take(&mut first) {
                p.out.push(b' ');
            }
        };
        // bash prints a command's redirections after its words, so
        // `</dev/null do` (the command `do`) comes out as `do < /dev/null`,
        // which reads back as the reserved word. A redirection before the
        // word keeps it a command word; rush prints it there, only then.
        let keyword_first = keyword_first(s);
        if keyword_first {
            // A here-document's body follows the whole command.
            sep(self);
            self.connection += 1;
            self.redirects(&s.redirects);
            self.connection -= 1;
            if std::mem::take(&mut self.lead_stderr) {
                self.put(b" 2>&1");
            }
        }
        for a in &s.assigns {
            sep(self);
            self.assign(a);
        }
        for w in &s.words {
            sep(self);
            self.word(w, false);
        }
        if !s.redirects.is_empty() && !keyword_first {
            sep(self);
            self.redirects(&s.redirects);
        }
        if keyword_first && self.connection == 0 {
            self.flush_deferred();
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
                for (i, e) in elems.iter().enumerate() {
                    if i > 0 {
                        self.put(b" ");
                    }
                    if let Some(k) = &e.key {
                        self.put(b"[");
                        self.word(k, false);
                        self.put(if e.append { b"]+=" } else { b"]=" });
                    }
                    self.word(&e.value, false);
                }
                self.put(b")");
            }
            None => self.word(&a.value, false),
        }
    }

    fn redirect(&mut self, r: &Redirect) {
        // bash writes the fd of a duplication to a number, a move or a
        // close even when it is the default (`>&2` is `1>&2`).
        let numeric_dup = matches!(r.op, RedirOp::DupIn | RedirOp::DupOut)
            && matches!(&r.target, RedirTarget::Word(w) if w.as_plain().is_some_and(|t| {
                let t = t.strip_suffix(b"-").unwrap_or(t);
                t.iter().all(u8::is_ascii_digit)
            }));
        if let Some(name) = &r.var {
            self.put(b"{");
            self.put(name);
            self.put(b"}");
        }
        match r.fd {
            _ if r.var.is_some() => {}
            Some(fd) => self.put(fd.to_string().as_bytes()),
            None if numeric_dup => self.put(if r.op == RedirOp::DupIn { b"0" } else { b"1" }),
            // bash names the descriptor of `<>`: `0<> f`.
            None if r.op == RedirOp::ReadWrite => self.put(b"0"),
            None => {}
        }
        let (op, spaced): (&[u8], bool) = match r.op {
            RedirOp::In => (b"<", true),
            RedirOp::Out => (b">", true),
            RedirOp::Clobber => (b">|", true),
            RedirOp::Append => (b">>", true),
            RedirOp::ReadWrite => (b"<>", true),
            // A close is `N>&-` whichever way it was written.
            RedirOp::DupIn if matches!(&r.target, RedirTarget::Word(w) if w.as_plain() == Some(b"-")) => {
                (b">&", false)
            }
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
                if h.strip_tabs {
                    self.put(b"-");
                }
                if h.quoted {
                    single(&mut self.out, &h.delim);
                } else {
                    self.put(&h.delim);
                }
            }
        }
    }

    fn heredoc_body(&self, w: &Word, quoted: bool) -> Vec<u8> {
        let mut p = Printer::default();
        if quoted {
            // The body as it is: one quoted part.
            for part in &w.parts {
                match part {
                    Part::Quoted(b) | Part::Lit(b) => p.put(b),
                    other => p.part(other, true),
                }
            }
        } else {
            p.raw(&w.parts, true);
        }
        p.out
    }

    /// Parts whose quotes are implied by where they stand: here-document
    /// bodies (`escape`: quoted text bare, `\`, `$` and backquotes
    /// escaped), arithmetic and subscripts (their text bare, quotes
    /// written in it kept, as bash keeps them).
    fn raw(&mut self, parts: &[Part], escape: bool) {
        for part in parts {
            match part {
                // In arithmetic and subscripts quotes are text bash keeps
                // (and its evaluator takes out, or refuses: `$((''))`).
                Part::Single(b) if !escape => single(&mut self.out, b),
                // Written as it was read: in double quotes' own escapes
                // (`$(( "\\" ))`).
                Part::Double(_) if !escape => self.part(part, false),
                Part::Lit(b) | Part::Single(b) => self.put(b),
                // The text as read, with the escapes it was read with: a
                // body's and arithmetic's (`\\`, `\$` and `` \` `` stand for
                // the character).
                Part::Quoted(b) => {
                    for &c in b {
                        if matches!(c, b'\\' | b'$' | b'`') {
                            self.out.push(b'\\');
                        }
                        self.out.push(c);
                    }
                }
                Part::Double(inner) => self.raw(inner, escape),
                other => self.part(other, true),
            }
        }
    }

    /// A word; `dq`: inside double quotes.
    fn word(&mut self, w: &Word, dq: bool) {
        for (i, part) in w.parts.iter().enumerate() {
            // `$x` followed by a name character needs braces: `${x}y`
            // (`$$y` and `$1y` do not).
            if let Part::Param(p) = part
                && plain_param(p)
                && p.name
                    .first()
                    .is_some_and(|&c| c.is_ascii_alphabetic() || c == b'_')
                && w.parts
                    .get(i + 1)
                    .is_some_and(|n| self.starts_with_name_char(n, dq))
            {
                self.put(b"${");
                self.put(&p.name);
                self.put(b"}");
                continue;
            }
            // A backslash at the very end of the input stays a literal
            // backslash; printed before a blank it would escape it. Printed
            // escaped, it means the same wherever it goes.
            if let Part::Lit(b) = part
                && !dq
                && i + 1 == w.parts.len()
                && b.iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 1
            {
                self.put(b);
                self.put(b"\\");
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
            // `$'…'` inside `"${x=…}"`: its text, decoded, as bash prints
            // it (single quotes there are characters: `"${x='a'}"` is
            // `'a'`), with the escapes of a word in `"${…}"` (bash's own
            // text leaves a `}` or `"` bare, and does not read back).
            // A quote in it would be one to match when read back: `$'…'`.
            Part::Single(b) if self.single_bare(b, dq) => {
                for &c in b {
                    if matches!(c, b'\\' | b'$' | b'`' | b'"' | b'}') {
                        self.out.push(b'\\');
                    }
                    self.out.push(c);
                }
            }
            Part::Single(b) => single(&mut self.out, b),
            Part::Quoted(b) => {
                if !dq {
                    self.out.push(b'"');
                }
                for (i, &c) in b.iter().enumerate() {
                    // A backslash before a character it does not escape in
                    // double quotes is written bare, as read: `\'` must
                    // stay, since in `"${x=…}"` a quote after `\\` would
                    // be one to match (bash).
                    let bare = c == b'\\'
                        && !self.escaping_double
                        && b.get(i + 1).is_some_and(|n| {
                            !matches!(n, b'\\' | b'$' | b'`' | b'"' | b'\n' | b'}')
                        });
                    if matches!(c, b'\\' | b'$' | b'`' | b'"') && !bare {
                        self.out.push(b'\\');
                    }
                    self.out.push(c);
                }
                if !dq {
                    self.out.push(b'"');
                }
            }
            Part::Double(parts) => {
                let outer = self.escaping_double;
                self.escaping_double = dq && self.escaping_word;
                self.out.push(b'"');
                self.word(
                    &Word {
                        parts: parts.clone(),
                    },
                    true,
                );
                self.out.push(b'"');
                self.escaping_double = outer;
            }
            Part::Param(p) => self.param(p, dq),
            Part::CommandSub(_, Some(written)) => {
                self.put(b"`");
                self.put(written);
                self.put(b"`");
            }
            Part::CommandSub(list, None) => {
                self.put(b"$(");
                // A body that starts with a subshell: `$( (` (bash), since
                // `$((` reads as arithmetic.
                let at = self.out.len();
                self.inline(list);
                if self.out.get(at) == Some(&b'(') {
                    self.out.insert(at, b' ');
                }
                self.put(b")");
            }
            Part::Arith(w) => {
                self.put(b"$((");
                self.raw(&w.parts, false);
                self.put(b"))");
            }
            Part::ArrayAssign(a) => self.assign(a),
            // As written: the message's text has `$'…'` decoded, which in
            // double quotes does not read back (`"${=$'"'}"`).
            Part::BadSubst(b) => self.put(&b.written),
            Part::Unparsed(u) => self.put(&u.text),
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
        let outer = (self.quoting_word, self.escaping_word, self.escaping_double);
        let pattern = matches!(
            p.op,
            ParamOp::TrimPrefix { .. } | ParamOp::TrimSuffix { .. } | ParamOp::Case { .. }
        );
        self.quoting_word = pattern || matches!(p.op, ParamOp::Replace { .. });
        self.escaping_word = dq && !pattern;
        self.escaping_double = false;
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
                slash,
            } => {
                self.put(if *all { b"//" } else { b"/" });
                self.put(match anchor {
                    Anchor::None => b"",
                    Anchor::Start => b"#",
                    Anchor::End => b"%",
                });
                self.escaping_word = false;
                self.word(pattern, dq);
                // As written: `${x/}` printed `${x//}` read back as `//`.
                if *slash {
                    self.put(b"/");
                    self.escaping_word = dq;
                    self.word(with, dq);
                }
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
        (self.quoting_word, self.escaping_word, self.escaping_double) = outer;
        self.put(b"}");
    }

    /// Whether `$'…'` with the text `b` is printed decoded, bare: in a
    /// value of `"${…}"`.
    fn single_bare(&self, b: &[u8], dq: bool) -> bool {
        dq && !self.quoting_word && !b.contains(&b'\'')
    }

    /// Whether `p` is printed starting with a name character (or `[`).
    fn starts_with_name_char(&self, p: &Part, dq: bool) -> bool {
        let first = match p {
            Part::Lit(b) | Part::Quoted(b) => b.first(),
            Part::Single(b) if self.single_bare(b, dq) => b.first(),
            _ => None,
        };
        first.is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'[')
    }

    fn op_word(&mut self, a: &[u8], b: &[u8], w: &Word, dq: bool) {
        self.put(a);
        self.put(b);
        self.word(w, dq);
    }
}

/// A parameter written as `$name`: written so (bash prints `${x}` as
/// written), with no operator, index or indirection, and a name that needs
/// no braces (`$10` does).
fn plain_param(p: &Param) -> bool {
    p.bare
        && matches!(p.op, ParamOp::Plain)
        && p.index.is_none()
        && !p.indirect
        && (p.name.len() == 1 || !p.name[0].is_ascii_digit())
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

/// A simple command whose name is a reserved word, with redirections: they
/// are printed before its words, which keeps the name a command word.
fn keyword_first(s: &Simple) -> bool {
    s.assigns.is_empty()
        && !s.redirects.is_empty()
        && s.words
            .first()
            .and_then(|w| w.as_plain())
            .is_some_and(is_reserved)
}

/// bash's reserved words: a function so named is printed with `function`.
fn is_reserved(name: &[u8]) -> bool {
    crate::ast::KEYWORDS.contains(&name)
}
