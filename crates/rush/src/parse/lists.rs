//! The grammar's top: programs, lists, and-or lists and pipelines.

use super::{CLOSERS, End, Parser, Result, is_meta};
use crate::ast::{AndOr, Command, Connector, Item, List, Pipeline, Simple, Word};

impl<'s> Parser<'s> {
    /// Parses everything that is left.
    pub fn program(&mut self) -> Result<List> {
        let list = self.list(End::Eof)?;
        self.skip_blanks();
        if self.peek().is_some() {
            return self.unexpected();
        }
        // Here-documents named on the last line, with no newline after it:
        // their bodies are empty, ended by the end of the input (a warning,
        // as `next_command` gives).
        for (doc, delim, line) in std::mem::take(&mut self.pending) {
            self.read_heredoc(&doc, &delim, line)?;
        }
        Ok(list)
    }

    /// Parses the next complete command: the and-or lists up to the end of
    /// a line (with the bodies of its here-docs). `None` at the end of input.
    pub fn next_command(&mut self) -> Result<Option<List>> {
        // Drop what has been run, so a long script on stdin stays small;
        // only once it is most of the buffer, so the copying stays linear.
        if self.expanding.is_empty() && self.pos >= 4096 && self.pos * 2 >= self.buf.len() {
            self.buf.drain(..self.pos);
            if let Some(end) = &mut self.alias_next {
                *end = end.saturating_sub(self.pos);
            }
            self.pos = 0;
        }
        self.linebreak()?;
        if self.peek().is_none() {
            return Ok(None);
        }
        // One item is the usual line: allocated once, not grown.
        let mut list = List {
            items: Vec::with_capacity(1),
        };
        loop {
            self.skip_blanks();
            match self.peek() {
                None => break,
                Some(b'\n') => {
                    self.newline()?;
                    break;
                }
                _ => {}
            }
            let and_or = self.and_or()?;
            self.skip_blanks();
            let background = if self.eat_operator("&") {
                true
            } else if self.eat_operator(";") || matches!(self.peek(), None | Some(b'\n')) {
                false
            } else {
                return self.unexpected();
            };
            list.items.push(Item { and_or, background });
        }
        if !self.pending.is_empty() {
            // A here-doc named on the last line, with no body.
            let pending = std::mem::take(&mut self.pending);
            for (doc, delim, line) in pending {
                self.read_heredoc(&doc, &delim, line)?;
            }
        }
        Ok(Some(list))
    }

    pub(super) fn at_list_end(&mut self, end: End) -> bool {
        match self.peek() {
            None => true,
            Some(b')') => matches!(end, End::Paren | End::CaseArm),
            Some(b';') => {
                end == End::CaseArm && (self.starts_with(b";;") || self.starts_with(b";&"))
            }
            _ => match self.peek_keyword() {
                Some(b"esac") => end == End::CaseArm || end == End::Keyword,
                Some(k) => CLOSERS.contains(&k) && end != End::Eof && end != End::Paren,
                None => self.closer_alias_ahead() && self.at_list_end(end),
            },
        }
    }

    /// If the word ahead is an alias whose text begins with a word that
    /// closes a compound command (`alias DONE='}'`), puts the text in its
    /// place, so that the list ends there as bash's does.
    pub(super) fn closer_alias_ahead(&mut self) -> bool {
        if self.aliases.is_empty() {
            return false;
        }
        let start = self.pos;
        let mut k = 0;
        while let Some(c) = self.peek_at(k) {
            if is_meta(c) || matches!(c, b'\'' | b'"' | b'\\' | b'$' | b'`') {
                break;
            }
            k += 1;
        }
        let name = &self.buf[start..start + k];
        if k == 0 || self.expanding.iter().any(|(n, _)| n == name) {
            return false;
        }
        let closes = self.aliases.get(name).is_some_and(|v| {
            let v = v.trim_ascii_start();
            let w = v.split(|&c| is_meta(c)).next().unwrap_or_default();
            CLOSERS.contains(&w)
        });
        if !closes {
            return false;
        }
        let word = Word::literal(name);
        self.pos = start + k;
        self.expand_alias(&word, start)
    }

    pub(super) fn list(&mut self, end: End) -> Result<List> {
        let mut list = List::default();
        loop {
            self.linebreak()?;
            if self.at_list_end(end) {
                break;
            }
            let and_or = self.and_or()?;
            self.skip_blanks();
            let background = if self.peek_operator() == Some("&") {
                self.bump();
                true
            } else if self.peek_operator() == Some(";") {
                self.bump();
                false
            } else {
                match self.peek() {
                    Some(b'\n') => false,
                    _ => {
                        list.items.push(Item {
                            and_or,
                            background: false,
                        });
                        break;
                    }
                }
            };
            list.items.push(Item { and_or, background });
        }
        Ok(list)
    }

    /// A list that must not be empty (the body of a compound command).
    pub(super) fn body(&mut self, end: End) -> Result<List> {
        let list = self.list(end)?;
        if list.items.is_empty() {
            return self.unexpected();
        }
        Ok(list)
    }

    pub(super) fn and_or(&mut self) -> Result<AndOr> {
        let first = self.pipeline()?;
        let mut rest = Vec::new();
        loop {
            self.skip_blanks();
            let conn = if self.eat_operator("&&") {
                Connector::And
            } else if self.eat_operator("||") {
                Connector::Or
            } else {
                break;
            };
            self.linebreak()?;
            rest.push((conn, self.pipeline()?));
        }
        Ok(AndOr { first, rest })
    }

    pub(super) fn pipeline(&mut self) -> Result<Pipeline> {
        self.skip_blanks();
        let mut timed = false;
        let mut posix_time = false;
        let mut bang = false;
        let mut prefixed = false;
        // `time [-p] [--]` and `!`, in any order and any number (bash).
        loop {
            // One look at the word per round (this runs for every pipeline).
            let keyword = self.peek_keyword();
            prefixed |= keyword.is_some_and(|k| k == b"time" || k == b"!");
            if keyword == Some(b"time") && self.eat_keyword(b"time") {
                timed = true;
                self.skip_blanks();
                if self.eat_whole_word(b"-p") {
                    posix_time = true;
                    self.skip_blanks();
                }
                if self.eat_whole_word(b"--") {
                    self.skip_blanks();
                }
            } else if keyword == Some(b"!") && self.eat_keyword(b"!") {
                bang = !bang;
                self.skip_blanks();
            } else {
                break;
            }
        }
        // `time` or `!` alone times or inverts a null command.
        let alone = prefixed && matches!(self.peek(), None | Some(b'\n' | b';'));
        let first = if alone {
            Command::Simple(Simple {
                line: self.line,
                ..Simple::default()
            })
        } else {
            self.command()?
        };
        let mut commands = vec![first];
        let mut stderr_too = Vec::with_capacity(1);
        loop {
            self.skip_blanks();
            let both = if self.eat_operator("|") {
                false
            } else if self.eat_operator("|&") {
                true
            } else {
                break;
            };
            stderr_too.push(both);
            self.linebreak()?;
            commands.push(self.command()?);
        }
        stderr_too.push(false);
        Ok(Pipeline {
            bang,
            timed,
            posix_time,
            commands,
            stderr_too,
        })
    }
}
