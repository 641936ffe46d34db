//! Reading and running text: scripts a command at a time, `eval`, the
//! history a script keeps, syntax errors, and the end of the shell.

use super::{Exec, Flow, Shell};
use crate::ast::List;
use crate::parse::{ParseError, Parser, Source};
use crate::sys;

impl Shell {
    /// Reads and runs commands from `src` one at a time until the end, an
    /// `exit`, or a fatal error. Returns the status to exit with.
    pub fn run_source(&mut self, first: &[u8], src: &mut dyn Source, tail_exec: bool) -> i32 {
        let mut parser = Parser::new(first, src, self.parser_aliases());
        loop {
            self.update_aliases(&mut parser);
            parser.set_posix(self.opts.posix);
            // A script's history (`set -o history`): `!` expansion of the
            // line about to be read (`set -H`), and the lines recorded.
            let script_history = self.opts.history && !self.opts.interactive;
            if script_history && self.opts.histexpand && !self.script_history_expand(&mut parser) {
                continue;
            }
            let mut before = parser.position();
            let before_line = parser.line();
            let t0 = self.perf.as_ref().map(|_| std::time::Instant::now());
            let mut cmd = parser.next_command();
            // The later lines of a multi-line command are `!`-expanded too
            // (bash expands each line as it reads it): when one changes,
            // the command is read again.
            if script_history
                && self.opts.histexpand
                && matches!(cmd, Ok(Some(_)))
                && self.expand_later_lines(&mut parser, before.0)
            {
                parser.rewind(before.0, before_line);
                before.1 = parser.position().1;
                cmd = parser.next_command();
            }
            if let (Some(p), Some(t0)) = (self.perf.as_mut(), t0) {
                p.record(crate::perf::Phase::Parse, t0.elapsed());
            }
            if parser.has_warnings() {
                let warnings = parser.take_warnings();
                self.parse_warnings(warnings);
            }
            match cmd {
                Ok(None) => return self.status,
                Ok(Some(list)) => {
                    // `set -o history` in a script: each command line
                    // read is recorded, as bash does (the interactive
                    // shell records what was typed itself).
                    if script_history {
                        let after = parser.position();
                        if after.1 == before.1 {
                            let text = parser.text(before.0, after.0).to_vec();
                            self.record_history_lines(&text);
                        } else {
                            // An alias changed the text: the command as
                            // rush prints it.
                            self.record_history(&list);
                        }
                    }
                    if self.opts.noexec {
                        continue;
                    }
                    // In -c mode, a last command that is external may replace
                    // the shell.
                    self.tail_ok = tail_exec && parser.at_end() && self.traps.is_empty();
                    self.discard_text = false;
                    let r = self.run_list(&list);
                    self.tail_ok = false;
                    match r {
                        Ok(s) => self.status = s,
                        Err(Flow::Exit(s)) => {
                            self.status = s;
                            return s;
                        }
                        Err(Flow::Return(s)) => {
                            // `return` at the top level of a script.
                            self.status = s;
                            if self.source_depth > 0 {
                                return s;
                            }
                            return s;
                        }
                        Err(Flow::Interrupt) => {
                            self.status = 130;
                            return 130;
                        }
                        Err(Flow::Abort(s)) => {
                            self.status = s;
                            if std::mem::take(&mut self.discard_text)
                                && self.opts.command_mode
                                && !self.opts.interactive
                            {
                                return s;
                            }
                            if !self.opts.interactive {
                                parser.resume_lines_at(self.line);
                            }
                        }
                        Err(Flow::Break(_) | Flow::Continue(_)) => {}
                    }
                }
                Err(e) if e.discard_line && (self.opts.interactive || !self.opts.posix) => {
                    self.syntax_error(&e);
                    self.status = 1;
                    parser.discard_line();
                }
                Err(e) => {
                    self.syntax_error(&e);
                    self.status = if e.discard_line {
                        1
                    } else if e.in_comsub && self.opts.command_mode && !self.opts.interactive {
                        // bash reads `-c` text as it reads eval's.
                        127
                    } else {
                        2
                    };
                    return self.status;
                }
            }
        }
    }

    /// Reports a syntax error as bash does: where the text came from (a
    /// file's name or the shell's, `-c` or `eval` before the line), then
    /// the line with the unexpected token.
    /// The name errors start with outside an interactive shell: the file
    /// being run (the innermost function's or sourced file's, the
    /// script's), or else `$0`.
    pub fn script_name(&self) -> &[u8] {
        match self.frames.last() {
            Some(f) => &f.file,
            None => &self.arg0,
        }
    }

    /// Prints the parser's warnings (`here-document … delimited by
    /// end-of-file`) as bash does, each with its line.
    pub fn parse_warnings(&mut self, warnings: Vec<(u32, String)>) {
        for (line, msg) in warnings {
            let text = if self.opts.interactive {
                format!("{}: {msg}\n", self.name)
            } else {
                format!(
                    "{}: line {line}: {msg}\n",
                    String::from_utf8_lossy(self.script_name())
                )
            };
            self.err_out(text.as_bytes());
        }
    }

    pub fn syntax_error(&mut self, e: &ParseError) {
        self.line = e.line;
        // What the parser refuses that is not a syntax error (`for
        // bad-name`) is reported as any other error (bash).
        if !e.message.starts_with("syntax error") && !e.message.starts_with("unexpected EOF") {
            self.error(&e.message);
            return;
        }
        let who = String::from_utf8_lossy(self.script_name()).into_owned();
        let prefix = if self.opts.interactive {
            format!("{}: ", self.name)
        } else {
            let within = if self.eval_depth > 0 {
                "eval: "
            } else if self.opts.command_mode && self.source_depth == 0 {
                "-c: "
            } else {
                ""
            };
            format!("{who}: {within}line {}: ", e.line)
        };
        // A message of two lines (`for ((…))`) has the prefix on each.
        let mut text = Vec::new();
        for m in e.message.split('\n') {
            text.extend_from_slice(format!("{prefix}{m}\n").as_bytes());
        }
        if let Some(line) = &e.offending {
            text.extend_from_slice(prefix.as_bytes());
            text.push(b'`');
            text.extend_from_slice(line);
            text.extend_from_slice(b"'\n");
        }
        let _ = sys::write_all(2, &text);
    }

    /// Runs the EXIT trap (once) and returns the status to exit with.
    pub(super) fn finish(&mut self, status: i32) -> i32 {
        if self.exited {
            return status;
        }
        self.exited = true;
        if let Some(action) = self.traps.get(&0).cloned() {
            self.status = status;
            let saved = self.status;
            self.running_traps.push(0);
            let r = self.eval_text(&action);
            self.running_traps.pop();
            if let Err(Flow::Exit(s)) = r {
                return s;
            }
            return saved;
        }
        status
    }

    /// Adds a command line read from a script to the history (`set -o
    /// history`), as the shell prints it.
    pub(super) fn record_history(&mut self, list: &List) {
        let mut line = Vec::new();
        for (i, item) in list.items.iter().enumerate() {
            if i > 0 {
                line.extend_from_slice(b"; ");
            }
            line.extend(crate::unparse::and_or(&item.and_or));
            if item.background {
                line.extend_from_slice(b" &");
            }
        }
        self.add_history_entry(&line);
    }

    /// Records the lines a script's command was read from, as bash does
    /// with `cmdhist`: a comment line before the command is an entry of
    /// its own; the command's lines are one entry, each joined to the one
    /// before with `; `, or a space after a line that ends where no `;`
    /// may follow (`do`, `then`, `{`, `|`, …), or a newline inside a
    /// here-document.
    pub(super) fn record_history_lines(&mut self, text: &[u8]) {
        let mut entry: Vec<u8> = Vec::new();
        let heredoc = text.windows(2).any(|w| w == b"<<");
        for line in text.split(|&c| c == b'\n') {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            if entry.is_empty() {
                if line.trim_ascii_start().starts_with(b"#") {
                    self.add_history_entry(line);
                    continue;
                }
                entry.extend_from_slice(line);
                continue;
            }
            let prev = entry.trim_ascii_end();
            let last_word = prev
                .rsplit(|c| c.is_ascii_whitespace())
                .next()
                .unwrap_or_default();
            let sep: &[u8] = if heredoc {
                b"\n"
            } else if prev.ends_with(b";")
                || prev.ends_with(b"&")
                || prev.ends_with(b"|")
                || prev.ends_with(b"(")
                || matches!(
                    last_word,
                    b"do" | b"then" | b"else" | b"elif" | b"{" | b"in" | b"case" | b"!"
                )
            {
                b" "
            } else {
                b"; "
            };
            entry.extend_from_slice(sep);
            entry.extend_from_slice(line);
        }
        if !entry.is_empty() {
            // A here-document's last line keeps its newline (bash).
            if heredoc {
                entry.push(b'\n');
            }
            self.add_history_entry(&entry);
        }
    }

    pub(super) fn add_history_entry(&mut self, line: &[u8]) {
        let (size, _, control) = self.history_settings();
        self.history.line_entry =
            !self.history_ignored(line) && self.history.add(line, control, size);
    }

    /// `!` expansion of a script's next lines (`set -o history` and `set
    /// -H`), as bash does as it reads each: blank and comment lines up to
    /// and including the next command's first line. An expanded line is
    /// printed to standard error and replaces the line; one that fails,
    /// or asks only to be printed (`:p`), is reported and dropped, and
    /// `false` is returned.
    pub(super) fn script_history_expand(&mut self, parser: &mut Parser<'_>) -> bool {
        let mut at = parser.position().0;
        while let Some((start, end)) = parser.line_at(at) {
            let line = parser.text(start, end).to_vec();
            let content = line.trim_ascii_start();
            let last = !(content.is_empty() || content.starts_with(b"#"));
            if line.contains(&b'!') || line.starts_with(b"^") {
                match crate::history::expand_line(&self.history, &line) {
                    Ok((Some(expanded), print_only)) => {
                        self.err_out(&[&expanded[..], b"\n"].concat());
                        if print_only {
                            self.add_history_entry(&expanded);
                            parser.replace_text(start, end, b"");
                            return false;
                        }
                        parser.replace_text(start, end, &expanded);
                    }
                    Ok((None, _)) => {}
                    Err(msg) => {
                        self.error(&msg);
                        parser.replace_text(start, end, b"");
                        self.status = 1;
                        return false;
                    }
                }
            }
            if last {
                break;
            }
            let Some((_, end)) = parser.line_at(start) else {
                break;
            };
            at = end + 1;
        }
        true
    }

    /// `!` expansion of the lines after the first of the command just
    /// read from `start` (see [`Shell::script_history_expand`]); whether
    /// any changed. A failed one is reported and left as it was.
    pub(super) fn expand_later_lines(&mut self, parser: &mut Parser<'_>, start: usize) -> bool {
        let end = parser.position().0;
        let text = parser.text(start, end).to_vec();
        // A here-document's body is not expanded (bash): a command with
        // one is left as it was.
        let heredoc = (0..text.len().saturating_sub(2)).any(|i| {
            text[i..].starts_with(b"<<") && text[i + 2] != b'<' && (i == 0 || text[i - 1] != b'<')
        });
        if heredoc {
            return false;
        }
        // From the line after the command's first line.
        let mut at = start;
        let mut seen_command = false;
        let mut changed = false;
        let mut edits: Vec<(usize, usize, Vec<u8>)> = Vec::new();
        for line in text.split(|&c| c == b'\n') {
            let line_start = at;
            at += line.len() + 1;
            let content = line.trim_ascii_start();
            if !seen_command {
                seen_command = !(content.is_empty() || content.starts_with(b"#"));
                continue;
            }
            if !line.contains(&b'!') && !line.starts_with(b"^") {
                continue;
            }
            match crate::history::expand(&self.history, line) {
                Ok(Some(expanded)) => {
                    self.err_out(&[&expanded[..], b"\n"].concat());
                    edits.push((line_start, line_start + line.len(), expanded));
                    changed = true;
                }
                Ok(None) => {}
                Err(msg) => self.error(&msg),
            }
        }
        // From the end, so that earlier positions hold.
        for (a, b, new) in edits.into_iter().rev() {
            parser.replace_text(a, b, &new);
        }
        changed
    }

    /// Parses and runs `text` (eval, traps, source'd files), command by
    /// command.
    pub(super) fn eval_text(&mut self, text: &[u8]) -> Exec {
        let mut src = crate::parse::Text;
        let mut parser =
            Parser::new(text, &mut src, self.parser_aliases()).with_line(self.line.max(1));
        self.xtrace_level += 1;
        let r = self.eval_parsed(text, &mut parser);
        self.xtrace_level -= 1;
        r
    }

    pub(super) fn eval_parsed(&mut self, text: &[u8], parser: &mut Parser<'_>) -> Exec {
        let mut status = 0;
        loop {
            self.update_aliases(parser);
            parser.set_posix(self.opts.posix);
            let cmd = parser.next_command();
            if parser.has_warnings() {
                let warnings = parser.take_warnings();
                self.parse_warnings(warnings);
            }
            match cmd {
                Ok(None) => return Ok(status),
                Ok(Some(list)) => {
                    if self.opts.noexec {
                        continue;
                    }
                    status = match self.run_list(&list) {
                        // An expansion error abandons the command; the
                        // text goes on with the next one (bash's DISCARD
                        // in eval, source and traps), unless it threw
                        // away all text ([`Shell::discard_text`]).
                        Err(Flow::Abort(s)) if !self.discard_text => s,
                        r => r?,
                    };
                    self.status = status;
                }
                Err(e) if e.discard_line && !self.opts.posix => {
                    self.syntax_error(&e);
                    status = 1;
                    self.status = status;
                    parser.discard_line();
                }
                Err(mut e) => {
                    // bash reads a string with a newline at its end: an
                    // error at the end is on the line after.
                    if e.at_eof && e.message.starts_with("syntax error") {
                        e.line += eof_lines(text);
                    }
                    // In eval, source and traps a syntax error is the
                    // command's failure (status 2), not the shell's end;
                    // but one inside `$(…)` ends a shell that is not
                    // interactive, as a fatal expansion error does.
                    self.syntax_error(&e);
                    if e.in_comsub && !self.opts.interactive {
                        return Err(if self.opts.command_mode && !self.subshell {
                            Flow::Exit(127)
                        } else {
                            Flow::Exit(1)
                        });
                    }
                    return Ok(2);
                }
            }
        }
    }
}

/// How many lines bash counts past the end of an eval'd text that ends
/// inside a construct: it reads the text with a newline added (one line
/// on), and a backslash before that newline continues the line (one more);
/// a text that ends with its own newline adds none, unless that newline
/// is a continuation.
pub(super) fn eof_lines(text: &[u8]) -> u32 {
    let (body, newline) = match text.strip_suffix(b"\n") {
        Some(b) => (b, true),
        None => (text, false),
    };
    let backslashes = body.iter().rev().take_while(|&&c| c == b'\\').count();
    match (newline, backslashes % 2 == 1) {
        (true, false) => 0,
        (true, true) | (false, false) => 1,
        (false, true) => 2,
    }
}
