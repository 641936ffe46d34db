//! Commands: simple commands with their assignments and redirections,
//! compound commands, functions, and here-documents.

use super::words::{flush_quoted, list_as_text, remove_quotes};
use super::{
    CLOSERS, End, Parser, Result, Text, is_meta, is_name, is_name_char, is_name_start,
    split_assignment,
};
use crate::ast::{
    Assign, CaseArm, CaseEnd, Command, Compound, Element, Function, HereDoc, Part, RedirOp,
    RedirTarget, Redirect, Simple, Word,
};
use std::rc::Rc;

impl<'s> Parser<'s> {
    pub(super) fn command(&mut self) -> Result<Command> {
        self.enter()?;
        let r = self.command_inner();
        self.depth -= 1;
        r
    }

    pub(super) fn command_inner(&mut self) -> Result<Command> {
        self.skip_blanks();
        if let Some(kw) = self.peek_keyword() {
            match kw {
                b"function" => return self.function_keyword(),
                k if CLOSERS.contains(&k) || k == b"!" || k == b"time" => {
                    return self.unexpected();
                }
                _ => {
                    let c = self.compound()?;
                    let redirects = self.redirects()?;
                    return Ok(Command::Compound(Box::new(c), redirects));
                }
            }
        }
        if self.peek() == Some(b'(') {
            let c = self.compound()?;
            let redirects = self.redirects()?;
            return Ok(Command::Compound(Box::new(c), redirects));
        }
        // `in` is reserved where a command starts (bash).
        if self.whole_word_len(b"in").is_some() {
            return self.unexpected();
        }
        self.simple()
    }

    /// A compound command at the current position (a reserved word or `(`).
    pub(super) fn compound(&mut self) -> Result<Compound> {
        let line = self.line;
        if self.starts_with(b"((")
            && let Some(expr) = self.arith_command()?
        {
            return Ok(Compound::Arith { expr, line });
        }
        if self.eat_operator("(") {
            let body = self.body(End::Paren)?;
            self.linebreak()?;
            if !self.eat_operator(")") {
                return self.unexpected();
            }
            return Ok(Compound::Subshell(body));
        }
        let Some(kw) = self.peek_keyword() else {
            return self.unexpected();
        };
        self.eat_keyword(kw);
        match kw {
            b"{" => {
                let body = self.body(End::Keyword)?;
                self.expect_keyword(b"}")?;
                Ok(Compound::Brace(body))
            }
            b"if" => {
                let mut arms = Vec::new();
                let mut otherwise = None;
                loop {
                    let cond = self.body(End::Keyword)?;
                    self.expect_keyword(b"then")?;
                    let then = self.body(End::Keyword)?;
                    arms.push((cond, then));
                    self.linebreak()?;
                    if self.eat_keyword(b"elif") {
                        continue;
                    }
                    if self.eat_keyword(b"else") {
                        otherwise = Some(self.body(End::Keyword)?);
                    }
                    self.expect_keyword(b"fi")?;
                    break;
                }
                Ok(Compound::If { arms, otherwise })
            }
            b"while" | b"until" => {
                let cond = self.body(End::Keyword)?;
                self.expect_keyword(b"do")?;
                let body = self.body(End::Keyword)?;
                self.expect_keyword(b"done")?;
                Ok(Compound::Loop {
                    until: kw == b"until",
                    cond,
                    body,
                })
            }
            b"for" => self.for_loop(line),
            b"select" => self.select_loop(line),
            b"coproc" => self.coproc(),
            b"case" => self.case(line),
            b"[[" => self.double_bracket(line),
            _ => self.unexpected(),
        }
    }

    pub(super) fn for_loop(&mut self, line: u32) -> Result<Compound> {
        self.skip_blanks();
        if self.starts_with(b"((") {
            return self.arith_for(line);
        }
        self.name_in_words_loop(line, false)
    }

    /// `coproc [NAME] command` (bash). A NAME is taken only before a
    /// compound command (`coproc NAME { …; }`); otherwise the words are a
    /// simple command, and the name is COPROC.
    pub(super) fn coproc(&mut self) -> Result<Compound> {
        self.skip_blanks();
        let rest = &self.buf[self.pos..];
        let name_len = rest
            .iter()
            .position(|&c| !(c.is_ascii_alphanumeric() || c == b'_'))
            .unwrap_or(rest.len());
        let mut name = b"COPROC".to_vec();
        if name_len > 0 && is_name(&rest[..name_len]) {
            let after = &rest[name_len..];
            let gap = after
                .iter()
                .take_while(|&&c| c == b' ' || c == b'\t')
                .count();
            let next = &after[gap..];
            let word_len = next.iter().position(|&c| is_meta(c)).unwrap_or(next.len());
            let compound_next = gap > 0
                && (next.first() == Some(&b'(')
                    || matches!(
                        &next[..word_len],
                        b"{" | b"if" | b"while" | b"until" | b"for" | b"select" | b"case" | b"[["
                    ));
            if compound_next {
                name = rest[..name_len].to_vec();
                for _ in 0..name_len {
                    self.bump();
                }
            }
        }
        let cmd = self.command()?;
        Ok(Compound::Coproc {
            name,
            cmd: Box::new(cmd),
        })
    }

    /// `select name [in words]; do … done` (bash): `for`'s syntax.
    pub(super) fn select_loop(&mut self, line: u32) -> Result<Compound> {
        self.skip_blanks();
        self.name_in_words_loop(line, true)
    }

    pub(super) fn name_in_words_loop(&mut self, line: u32, select: bool) -> Result<Compound> {
        let start = self.pos;
        let Some(var) = self.read_word()? else {
            return self.unexpected();
        };
        // Not a name: an error when the loop runs (bash), which names the
        // word as written (`i" "`), as `declare -f` prints it.
        let var = match var.as_plain() {
            Some(v) => v.to_vec(),
            None => match self.buf.get(start..self.pos) {
                Some(raw) if self.expanding.is_empty() => raw.trim_ascii().to_vec(),
                _ => var.unquoted_text(),
            },
        };
        self.linebreak_if_then_in()?;
        let mut words = None;
        if self.eat_keyword_in() {
            let mut ws = Vec::new();
            loop {
                self.skip_blanks();
                match self.read_word()? {
                    Some(w) => ws.push(w),
                    None => break,
                }
            }
            words = Some(ws);
            self.skip_blanks();
            if !self.eat_operator(";") && self.peek() != Some(b'\n') {
                return self.unexpected();
            }
        } else {
            self.skip_blanks();
            self.eat_operator(";");
        }
        self.expect_keyword(b"do")?;
        let body = self.body(End::Keyword)?;
        self.expect_keyword(b"done")?;
        Ok(Compound::For {
            var,
            words,
            body,
            line,
            select,
        })
    }

    /// `for (( init; cond; step )) do … done`: the three expressions are
    /// split at top-level `;` and parsed as arithmetic words.
    pub(super) fn arith_for(&mut self, line: u32) -> Result<Compound> {
        self.bump();
        self.bump();
        let start = self.pos;
        let Some(all) = self.arith_text()? else {
            return self.unexpected();
        };
        let text = self.buf[start..self.pos.saturating_sub(2).max(start)].to_vec();
        // Split the word's literal text at `;` (expansions stay whole).
        let mut exprs = vec![Word::default()];
        for part in all.parts {
            match part {
                Part::Quoted(b) | Part::Lit(b) => {
                    let mut pieces = b.split(|&c| c == b';').peekable();
                    while let Some(piece) = pieces.next() {
                        if !piece.is_empty()
                            && let Some(w) = exprs.last_mut()
                        {
                            w.parts.push(Part::Quoted(piece.to_vec()));
                        }
                        if pieces.peek().is_some() {
                            exprs.push(Word::default());
                        }
                    }
                }
                other => {
                    if let Some(w) = exprs.last_mut() {
                        w.parts.push(other);
                    }
                }
            }
        }
        if exprs.len() != 3 {
            let what = if exprs.len() < 3 {
                "arithmetic expression required"
            } else {
                "`;' unexpected"
            };
            return self.error(format!(
                "syntax error: {what}\nsyntax error: `(({}))'",
                String::from_utf8_lossy(&text)
            ));
        }
        // As bash keeps them: blanks before each part dropped, those after
        // kept, and an empty part is `1`.
        for w in &mut exprs {
            while let Some(Part::Quoted(b)) = w.parts.first_mut() {
                let n = b.len() - b.trim_ascii_start().len();
                b.drain(..n);
                if !b.is_empty() {
                    break;
                }
                w.parts.remove(0);
            }
            if w.parts.is_empty() {
                w.parts.push(Part::Quoted(b"1".to_vec()));
            }
        }
        let step = exprs.pop().unwrap_or_default();
        let cond = exprs.pop().unwrap_or_default();
        let init = exprs.pop().unwrap_or_default();
        self.skip_blanks();
        self.eat_operator(";");
        self.linebreak()?;
        let body = if self.eat_keyword(b"do") {
            let b = self.body(End::Keyword)?;
            self.expect_keyword(b"done")?;
            b
        } else if self.eat_keyword(b"{") {
            let b = self.body(End::Keyword)?;
            self.expect_keyword(b"}")?;
            b
        } else {
            return self.unexpected();
        };
        Ok(Compound::ArithFor {
            init,
            cond,
            step,
            body,
            line,
        })
    }

    /// Newlines may come between `for name` and `in`.
    pub(super) fn linebreak_if_then_in(&mut self) -> Result<()> {
        self.linebreak()
    }

    /// `in`, as a whole word.
    pub(super) fn eat_keyword_in(&mut self) -> bool {
        self.eat_whole_word(b"in")
    }

    pub(super) fn case(&mut self, line: u32) -> Result<Compound> {
        self.skip_blanks();
        let Some(word) = self.read_word()? else {
            return self.unexpected();
        };
        self.linebreak()?;
        if !self.eat_keyword_in() {
            return self.unexpected();
        }
        let mut arms = Vec::new();
        loop {
            self.linebreak()?;
            if self.eat_keyword(b"esac") {
                break;
            }
            self.eat_operator("(");
            let mut patterns = Vec::new();
            loop {
                self.skip_blanks();
                let Some(p) = self.read_word()? else {
                    return self.unexpected();
                };
                patterns.push(p);
                self.skip_blanks();
                if self.eat_operator("|") {
                    continue;
                }
                if self.eat_operator(")") {
                    break;
                }
                return self.unexpected();
            }
            let body = self.list(End::CaseArm)?;
            self.linebreak()?;
            let end = if self.eat_operator(";;&") {
                CaseEnd::Continue
            } else if self.eat_operator(";;") {
                CaseEnd::Break
            } else if self.eat_operator(";&") {
                CaseEnd::FallThrough
            } else if self.eat_keyword(b"esac") {
                arms.push(CaseArm {
                    patterns,
                    body,
                    end: CaseEnd::Break,
                });
                break;
            } else {
                return self.unexpected();
            };
            arms.push(CaseArm {
                patterns,
                body,
                end,
            });
        }
        Ok(Compound::Case { word, arms, line })
    }

    /// `[[ … ]]`: words up to `]]`; `&&`, `||`, `(`, `)`, `<`, `>` and `!`
    /// are kept as words for the evaluator.
    pub(super) fn double_bracket(&mut self, line: u32) -> Result<Compound> {
        self.in_dbracket += 1;
        let r = self.double_bracket_words(line);
        self.in_dbracket -= 1;
        r
    }

    pub(super) fn double_bracket_words(&mut self, line: u32) -> Result<Compound> {
        let mut words = Vec::new();
        loop {
            self.linebreak()?;
            if self.starts_with(b"]]") && self.peek_at(2).is_none_or(is_meta) {
                self.bump();
                self.bump();
                break;
            }
            // The right side of `=~` is lexed by its own rules, before any
            // operator: `(a|b)` there is a regular expression.
            let regex = words.last().and_then(Word::as_plain) == Some(b"=~".as_slice());
            let procsub = matches!(self.peek(), Some(b'<' | b'>')) && self.peek_at(1) == Some(b'(');
            if !regex
                && !procsub
                && let Some(op) = self.peek_operator()
            {
                match op {
                    "&&" | "||" | "(" | ")" | "<" | ">" => {
                        self.eat_operator(op);
                        words.push(Word::literal(op.as_bytes()));
                        continue;
                    }
                    _ => return self.unexpected(),
                }
            }
            let w = if regex {
                self.regex_word()?
            } else {
                self.read_word()?
            };
            match w {
                Some(w) => words.push(w),
                None => return self.unexpected(),
            }
        }
        Ok(Compound::DoubleBracket { words, line })
    }

    /// The right side of `=~`, as bash lexes it: `|` and parentheses are
    /// part of the word, and inside parentheses so are blanks and the other
    /// operator characters (`(a b|c&d)`). A blank, or another operator
    /// character, outside them ends the word; so does a `)` that no `(` of
    /// the word opened (it closes a `[[ ( … ) ]]` group).
    pub(super) fn regex_word(&mut self) -> Result<Option<Word>> {
        fn lit(parts: &mut Vec<Part>, c: u8) {
            match parts.last_mut() {
                Some(Part::Lit(l)) => l.push(c),
                _ => parts.push(Part::Lit(vec![c])),
            }
        }
        let mut parts = Vec::new();
        let mut depth = 0usize;
        loop {
            match self.peek() {
                Some(b'(') => {
                    depth += 1;
                    self.bump();
                    lit(&mut parts, b'(');
                }
                Some(b')') if depth > 0 => {
                    depth -= 1;
                    self.bump();
                    lit(&mut parts, b')');
                }
                Some(c @ (b'|' | b' ' | b'\t' | b'\n' | b'<' | b'>' | b'&' | b';'))
                    if depth > 0 || c == b'|' =>
                {
                    self.bump();
                    lit(&mut parts, c);
                }
                Some(c) if !is_meta(c) => match self.read_word()? {
                    Some(w) => {
                        for p in w.parts {
                            match (parts.last_mut(), p) {
                                (Some(Part::Lit(l)), Part::Lit(b)) => l.extend_from_slice(&b),
                                (_, p) => parts.push(p),
                            }
                        }
                    }
                    None => break,
                },
                _ => break,
            }
        }
        if depth > 0 {
            return self.unexpected();
        }
        Ok((!parts.is_empty()).then_some(Word { parts }))
    }

    /// `(( expr ))`, or `None` (position unchanged) if this is really a
    /// subshell inside a subshell.
    pub(super) fn arith_command(&mut self) -> Result<Option<Word>> {
        let save = (self.pos, self.line);
        self.bump();
        self.bump();
        match self.arith_text()? {
            Some(w) => Ok(Some(w)),
            None => {
                (self.pos, self.line) = save;
                Ok(None)
            }
        }
    }

    /// `function name [()] body` (bash).
    pub(super) fn function_keyword(&mut self) -> Result<Command> {
        self.eat_keyword(b"function");
        self.skip_blanks();
        let Some(name) = self.read_word()? else {
            return self.unexpected();
        };
        let name = name.unquoted_text();
        self.skip_blanks();
        if self.starts_with(b"()") {
            self.bump();
            self.bump();
        } else if self.peek() == Some(b'(') {
            self.bump();
            self.skip_blanks();
            if !self.eat_operator(")") {
                return self.unexpected();
            }
        }
        self.function_body(name)
    }

    pub(super) fn function_body(&mut self, name: Vec<u8>) -> Result<Command> {
        let line = self.line;
        self.linebreak()?;
        let starts_compound = self.peek() == Some(b'(')
            || matches!(
                self.peek_keyword(),
                Some(b"{" | b"if" | b"while" | b"until" | b"for" | b"select" | b"case" | b"[[")
            );
        if !starts_compound {
            return self.unexpected();
        }
        let body_line = self.line;
        let body = self.compound()?;
        let redirects = self.redirects()?;
        Ok(Command::Function(Rc::new(Function {
            name,
            body,
            redirects,
            line,
            body_line,
            end_line: self.line,
        })))
    }

    pub(super) fn redirects(&mut self) -> Result<Vec<Redirect>> {
        let mut out = Vec::new();
        loop {
            self.skip_blanks();
            match self.redirect()? {
                Some(r) => out.push(r),
                None => return Ok(out),
            }
        }
    }

    /// A redirection at the current position, if there is one.
    pub(super) fn redirect(&mut self) -> Result<Option<Redirect>> {
        let save = (self.pos, self.line);
        let mut fd = None;
        // `{name}` right before the operator (bash).
        let mut var = None;
        if self.peek() == Some(b'{') {
            let k = 1 + self.name_ahead_at(1);
            if k > 1
                && self.peek_at(k) == Some(b'}')
                && matches!(self.peek_at(k + 1), Some(b'<' | b'>'))
            {
                var = Some(self.buf[self.pos + 1..self.pos + k].to_vec());
                for _ in 0..=k {
                    self.bump();
                }
            }
        }
        let mut digits = 0;
        while let Some(c) = self.peek_at(digits) {
            if c.is_ascii_digit() {
                digits += 1;
            } else {
                break;
            }
        }
        // Digits that end an alias's text are a word of their own
        // (`alias foo='echo 0'; foo>&2` prints 0).
        let alias_ends_here = |p: &Self| p.expanding.iter().any(|(_, e)| *e == p.pos + digits);
        if var.is_none()
            && digits > 0
            && matches!(self.peek_at(digits), Some(b'<' | b'>'))
            && !alias_ends_here(self)
        {
            let text = &self.buf[self.pos..self.pos + digits];
            let n: i64 = std::str::from_utf8(text)
                .ok()
                .and_then(|t| t.parse().ok())
                .unwrap_or(i64::MAX);
            for _ in 0..digits {
                self.bump();
            }
            fd = Some(i32::try_from(n).unwrap_or(i32::MAX));
        }
        // `<(…)` and `>(…)` are process substitutions, words, not redirections.
        if fd.is_none() && matches!(self.peek(), Some(b'<' | b'>')) && self.peek_at(1) == Some(b'(')
        {
            return Ok(None);
        }
        let op = match self.peek_operator() {
            Some("<") => RedirOp::In,
            Some(">") => RedirOp::Out,
            Some(">|") => RedirOp::Clobber,
            Some(">>") => RedirOp::Append,
            Some("<>") => RedirOp::ReadWrite,
            Some("<&") => RedirOp::DupIn,
            Some(">&") => RedirOp::DupOut,
            Some("<<") | Some("<<-") => RedirOp::HereDoc,
            Some("<<<") => RedirOp::HereString,
            Some("&>") if fd.is_none() => RedirOp::OutErr,
            Some("&>>") if fd.is_none() => RedirOp::AppendOutErr,
            _ => {
                (self.pos, self.line) = save;
                return Ok(None);
            }
        };
        let strip_tabs = self.peek_operator() == Some("<<-");
        let text = self.peek_operator().unwrap_or_default();
        self.eat_operator(text);
        self.skip_blanks();
        let word_start = self.pos;
        let Some(word) = self.read_word()? else {
            return self.unexpected_at_end(true);
        };
        let target = if op == RedirOp::HereDoc {
            // bash's limit on the here-documents one line may start.
            if self.pending.len() >= 16 {
                return self.error("maximum here-document count exceeded");
            }
            // The delimiter is the word as written, quotes removed, with
            // nothing expanded (`<<EO`x`F` ends at a line EO`x`F).
            let delim = match self.buf.get(word_start..self.pos) {
                Some(raw) if self.expanding.is_empty() => remove_quotes(raw),
                _ => word.unquoted_text(),
            };
            let doc = Rc::new(HereDoc {
                quoted: word.has_quotes(),
                strip_tabs,
                body: Default::default(),
                text: Default::default(),
                delim: delim.clone(),
            });
            self.pending.push((doc.clone(), delim, self.line));
            RedirTarget::HereDoc(doc)
        } else {
            RedirTarget::Word(word)
        };
        Ok(Some(Redirect {
            fd,
            op,
            target,
            var,
        }))
    }

    /// Reads a here-doc body up to its delimiter line. The end of the input
    /// ends it too, with a warning (bash), and so does, inside `$(…)`, a
    /// line that starts with the delimiter and has a `)` after it: the
    /// rest of that line is read again as the shell's.
    pub(super) fn read_heredoc(&mut self, doc: &HereDoc, delim: &[u8], started: u32) -> Result<()> {
        let mut body = Vec::new();
        let body_line = self.line;
        let mut last_line = self.line;
        loop {
            if self.peek().is_none() {
                self.warn_unended_heredoc(last_line, started, delim);
                break;
            }
            let at = (self.pos, self.line);
            last_line = self.line;
            let mut line = Vec::new();
            let mut ended = false;
            loop {
                match self.bump() {
                    None => {
                        ended = true;
                        break;
                    }
                    // With an unquoted delimiter, a backslash-newline joins
                    // lines before the delimiter is looked for (bash).
                    Some(b'\n')
                        if !doc.quoted
                            && line.iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 1 =>
                    {
                        line.pop();
                    }
                    Some(b'\n') => break,
                    Some(c) => line.push(c),
                }
            }
            // With `<<-`, the line is compared before its tabs go too, for
            // a delimiter that starts with a tab (bash).
            if doc.strip_tabs && line == delim {
                break;
            }
            let mut content: &[u8] = &line;
            if doc.strip_tabs {
                while let [b'\t', rest @ ..] = content {
                    content = rest;
                }
            }
            if content == delim {
                break;
            }
            if self.in_comsub
                && let Some(rest) = content.strip_prefix(delim)
                && rest.contains(&b')')
            {
                let skipped = line.len() - content.len() + delim.len();
                (self.pos, self.line) = (at.0 + skipped, at.1);
                self.warn_unended_heredoc(last_line, started, delim);
                break;
            }
            body.extend_from_slice(content);
            // A last line without its newline gets one (bash).
            body.push(b'\n');
            if ended {
                self.warn_unended_heredoc(last_line, started, delim);
                break;
            }
        }
        let _ = doc.text.set(body.clone());
        let word = if doc.quoted {
            Word {
                parts: vec![Part::Quoted(body)],
            }
        } else {
            let mut src = Text;
            let mut p = Parser::new(&body, &mut src, self.aliases.clone()).with_line(body_line);
            p.depth = self.depth;
            p.in_heredoc = true;
            let word = p.heredoc_word();
            self.warnings.append(&mut p.warnings);
            match word {
                Ok(w) => w,
                Err(e) => {
                    let mut lines = Vec::new();
                    for m in e.message.split('\n') {
                        lines.push(format!("line {}: {m}", e.line).into_bytes());
                    }
                    if let Some(o) = &e.offending {
                        let mut l = format!("line {}: `", e.line).into_bytes();
                        l.extend_from_slice(o);
                        l.push(b'\'');
                        lines.push(l);
                    }
                    Word {
                        parts: vec![Part::Unparsed(Box::new(crate::ast::Unparsed {
                            text: body,
                            error: lines,
                        }))],
                    }
                }
            }
        };
        let _ = doc.body.set(word);
        Ok(())
    }

    pub(super) fn warn_unended_heredoc(&mut self, line: u32, started: u32, delim: &[u8]) {
        self.warnings.push((
            line,
            format!(
                "warning: here-document at line {started} delimited by end-of-file (wanted `{}')",
                String::from_utf8_lossy(delim)
            ),
        ));
    }

    /// The warnings found so far, to print; they are gone from the parser.
    pub fn take_warnings(&mut self) -> Vec<(u32, String)> {
        std::mem::take(&mut self.warnings)
    }

    /// Whether there are warnings to take.
    pub fn has_warnings(&self) -> bool {
        !self.warnings.is_empty()
    }

    /// An unquoted here-doc body: `$`, backticks and `\` before `$`, `` ` ``,
    /// `\` and newline are special; everything else is quoted text.
    pub(super) fn heredoc_word(&mut self) -> Result<Word> {
        let mut parts = Vec::new();
        let mut lit = Vec::new();
        while let Some(c) = self.peek() {
            match c {
                b'\\' => {
                    self.bump();
                    match self.peek() {
                        Some(b'\n') => {
                            self.bump();
                        }
                        Some(c @ (b'$' | b'`' | b'\\')) => {
                            self.bump();
                            lit.push(c);
                        }
                        _ => lit.push(b'\\'),
                    }
                }
                b'$' | b'`' => {
                    self.bump();
                    self.quoted_expansion(c, &mut parts, &mut lit)?;
                }
                _ => {
                    self.bump();
                    lit.push(c);
                }
            }
        }
        flush_quoted(&mut parts, &mut lit);
        Ok(Word {
            parts: vec![Part::Double(parts)],
        })
    }

    pub(super) fn simple(&mut self) -> Result<Command> {
        let mut cmd = Simple {
            line: self.line,
            // Room for a usual command's words, allocated once.
            words: Vec::with_capacity(4),
            ..Simple::default()
        };
        // bash's line for a simple command is where the token after its
        // first element ends (its parser's lookahead): `cmd \` then `arg`
        // on the next line runs on that line.
        let mut elements = 0u32;
        loop {
            self.skip_blanks();
            let fix_line = elements == 1;
            if fix_line {
                cmd.line = self.line;
            }
            elements += 1;
            if let Some(r) = self.redirect()? {
                cmd.redirects.push(r);
                continue;
            }
            // `name=(…)`: before a command, or as an argument of a
            // declaration builtin.
            let decl = cmd.words.first().and_then(Word::as_plain).is_some_and(|w| {
                matches!(
                    w,
                    b"declare"
                        | b"typeset"
                        | b"local"
                        | b"export"
                        | b"readonly"
                        | b"alias"
                        | b"eval"
                        | b"let"
                )
            });
            if (cmd.words.is_empty() || decl)
                && let Some(mut a) = self.array_assignment()?
            {
                if cmd.words.is_empty() {
                    // `a=(4*3)/2`: text follows the `)`, so the whole is a
                    // string assigned (bash).
                    if self.peek().is_some_and(|c| !is_meta(c))
                        && let Some(rest) = self.read_word()?
                    {
                        a.value = list_as_text(a.array.take().unwrap_or_default(), rest);
                    }
                    cmd.assigns.push(a);
                } else {
                    let mut parts = vec![Part::ArrayAssign(Box::new(a))];
                    // What follows the `)` with no blank is the same word
                    // (`let y=(1+2)*3`).
                    if self.peek().is_some_and(|c| !is_meta(c))
                        && let Some(rest) = self.read_word()?
                    {
                        parts.extend(rest.parts);
                    }
                    cmd.words.push(Word { parts });
                }
                if fix_line {
                    cmd.line = self.line;
                }
                continue;
            }
            let start = self.pos;
            if cmd.words.is_empty() {
                self.literal_until = self.spaced_subscript().map_or(0, |k| self.pos + k);
            }
            let word = self.read_word();
            self.literal_until = 0;
            let Some(word) = word? else {
                break;
            };
            if fix_line {
                cmd.line = self.line;
            }
            if cmd.words.is_empty() {
                if let Some(a) = split_assignment(&word) {
                    cmd.assigns.push(a);
                    continue;
                }
                if self.expand_alias(&word, start) {
                    // The alias text is now in the input: read it afresh.
                    if cmd.assigns.is_empty() && cmd.redirects.is_empty() {
                        // An alias to nothing or to a comment leaves no
                        // command (bash; run, it changes nothing).
                        self.skip_blanks();
                        if matches!(self.peek(), None | Some(b'\n')) {
                            return Ok(Command::Simple(cmd));
                        }
                        return self.command_inner();
                    }
                    continue;
                }
                // `name ( )`: a function definition.
                if cmd.assigns.is_empty() && cmd.redirects.is_empty() {
                    self.skip_blanks();
                    if self.peek() == Some(b'(') {
                        self.bump();
                        self.skip_blanks();
                        // Not `name ()`: bash names the token after the `(`.
                        if !self.eat_operator(")") {
                            return self.unexpected();
                        }
                        let Some(name) = word.as_plain().map(<[u8]>::to_vec) else {
                            return self.unexpected();
                        };
                        return self.function_body(name);
                    }
                }
            } else if self.alias_next.is_some_and(|end| start >= end) {
                self.alias_next = None;
                if self.expand_alias(&word, start) {
                    // The first word of its text may be an alias too
                    // (`alias foo='echo ' bar=baz baz=quux; foo bar`).
                    self.alias_next.get_or_insert(start);
                    continue;
                }
            }
            cmd.words.push(word);
        }
        if cmd.words.is_empty() && cmd.assigns.is_empty() && cmd.redirects.is_empty() {
            return self.unexpected();
        }
        if matches!(self.peek(), Some(b'(')) {
            return self.unexpected();
        }
        Ok(Command::Simple(cmd))
    }

    /// `name=(…)` or `name+=(…)` at the current position (bash arrays).
    /// The length of the name at the read position (0 if none), without
    /// reading past it.
    pub(super) fn name_ahead(&mut self) -> usize {
        self.name_ahead_at(0)
    }

    /// [`Parser::name_ahead`], `offset` bytes past the read position.
    pub(super) fn name_ahead_at(&mut self, offset: usize) -> usize {
        let mut k = 0;
        while self.peek_at(offset + k).is_some_and(|c| {
            if k == 0 {
                is_name_start(c)
            } else {
                is_name_char(c)
            }
        }) {
            k += 1;
        }
        k
    }

    /// `name[ … ]=` or `name[ … ]+=` ahead, with blanks or operator
    /// characters inside the brackets (`a[i + 1]=x`): bash reads it as one
    /// assignment word. The offset of the closing `]`.
    pub(super) fn spaced_subscript(&mut self) -> Option<usize> {
        let k = self.name_ahead();
        if k == 0 {
            return None;
        }
        self.spaced_bracket_at(k)
    }

    /// [`Parser::spaced_subscript`] for the `[…]` at `k` bytes ahead (at
    /// 0 for `[key]=value` inside `name=(…)`).
    pub(super) fn spaced_bracket_at(&mut self, k: usize) -> Option<usize> {
        if self.peek_at(k) != Some(b'[') {
            return None;
        }
        let (k, spaced) = self.bracket_close_at(k)?;
        let after = match self.peek_at(k + 1)? {
            b'+' => self.peek_at(k + 2)?,
            c => c,
        };
        (after == b'=' && spaced).then_some(k)
    }

    /// The offset of the `]` that closes the `[` at `k` bytes ahead (on
    /// the same line, quotes skipped), and whether blanks or operator
    /// characters come between.
    pub(super) fn bracket_close_at(&mut self, mut k: usize) -> Option<(usize, bool)> {
        if self.peek_at(k) != Some(b'[') {
            return None;
        }
        k += 1;
        let mut depth = 1;
        let mut spaced = false;
        while k < 4096 {
            let c = self.peek_at(k)?;
            match c {
                b'\\' => k += 1,
                b'\'' | b'"' => {
                    k += 1;
                    while self.peek_at(k)? != c {
                        if c == b'"' && self.peek_at(k)? == b'\\' {
                            k += 1;
                        }
                        k += 1;
                    }
                }
                b'[' => depth += 1,
                b']' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some((k, spaced));
                    }
                }
                b'\n' => return None,
                c if is_meta(c) => spaced = true,
                _ => {}
            }
            k += 1;
        }
        None
    }

    pub(super) fn array_assignment(&mut self) -> Result<Option<Assign>> {
        let mut k = self.name_ahead();
        if k == 0 {
            return Ok(None);
        }
        // `name[sub]=(…)`: read as an assignment, refused when it runs
        // ("cannot assign list to array member", bash).
        let mut index = None;
        if self.peek_at(k) == Some(b'[')
            && let Some((close, _)) = self.bracket_close_at(k)
            && matches!(
                (
                    self.peek_at(close + 1),
                    self.peek_at(close + 2),
                    self.peek_at(close + 3)
                ),
                (Some(b'='), Some(b'('), _) | (Some(b'+'), Some(b'='), Some(b'('))
            )
        {
            let sub = self.buf[self.pos + k + 1..self.pos + close].to_vec();
            index = Some(Word::literal(&sub));
            k = close + 1;
        }
        let append = self.peek_at(k) == Some(b'+');
        let eq = k + usize::from(append);
        if self.peek_at(eq) != Some(b'=') || self.peek_at(eq + 1) != Some(b'(') {
            return Ok(None);
        }
        let name_len = self.name_ahead();
        let name = self.buf[self.pos..self.pos + name_len].to_vec();
        let start_line = self.line;
        for _ in 0..eq + 2 {
            self.bump();
        }
        let mut items = Vec::new();
        loop {
            self.linebreak()?;
            if self.eat_operator(")") {
                break;
            }
            // `[foo bar]=v`: the blanks in the key are part of the word.
            self.literal_until = self.spaced_bracket_at(0).map_or(0, |k| self.pos + k);
            let w = self.read_word();
            self.literal_until = 0;
            let Some(w) = w? else {
                let mut e = if self.peek().is_none() {
                    self.unclosed(start_line, ")")
                } else {
                    self.unexpected()
                };
                if let Err(e) = &mut e {
                    e.discard_line = true;
                }
                return e;
            };
            // `[key]=value`
            let keyed = match w.parts.first() {
                Some(Part::Lit(b)) if b.starts_with(b"[") => {
                    let mut probe = w.clone();
                    if let Some(Part::Lit(b)) = probe.parts.first_mut() {
                        b.splice(0..0, b"x".iter().copied());
                    }
                    split_assignment(&probe).and_then(|a| a.index.map(|i| (i, a.value, a.append)))
                }
                _ => None,
            };
            items.push(match keyed {
                Some((key, value, append)) => Element {
                    key: Some(key),
                    append,
                    value,
                },
                None => Element {
                    key: None,
                    append: false,
                    value: w,
                },
            });
        }
        Ok(Some(Assign {
            name,
            index,
            append,
            value: Word::default(),
            array: Some(items),
        }))
    }

    /// If `word` (which started at `start`) is an alias not already being
    /// expanded, puts its text in its place and says so.
    pub(super) fn expand_alias(&mut self, word: &Word, start: usize) -> bool {
        let Some(name) = word.as_plain() else {
            return false;
        };
        if self.expanding.iter().any(|(n, _)| n == name) {
            return false;
        }
        let Some(value) = self.aliases.get(name).cloned() else {
            return false;
        };
        let name = name.to_vec();
        if self
            .unaliased_line
            .as_ref()
            .is_none_or(|(l, _)| *l != self.line)
        {
            self.unaliased_line = Some((self.line, self.current_line_text()));
        }
        let old_len = self.pos - start;
        self.buf.splice(start..self.pos, value.iter().copied());
        let grow = value.len() as isize - old_len as isize;
        let shift = |end: &mut usize| *end = (*end as isize + grow) as usize;
        for (_, end) in &mut self.expanding {
            shift(end);
        }
        if let Some(end) = &mut self.alias_next
            && *end > start
        {
            shift(end);
        }
        self.pos = start;
        self.expanding.push((name, start + value.len()));
        if value.last().is_some_and(|c| matches!(c, b' ' | b'\t')) {
            self.alias_next = Some(start + value.len());
        }
        true
    }
}
