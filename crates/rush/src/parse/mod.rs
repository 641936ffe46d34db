//! The parser: shell text to [`ast`](crate::ast) nodes.
//!
//! Shell lexing depends on where the parser is (reserved words only in
//! command position, `)` ending a case pattern, here-doc bodies after the
//! line), so this is one recursive-descent parser over bytes, without a
//! separate token stream. Input arrives a line at a time from a [`Source`],
//! so that a script on stdin is parsed and run one complete command at a
//! time, leaving the rest of stdin unread for the commands themselves.

use crate::ast::*;
use rustc_hash::FxHashMap as HashMap;
use std::rc::Rc;

mod commands;
mod lists;
mod words;

/// Where more input comes from.
pub trait Source {
    /// Appends the next line (with its newline, if it has one) to `buf`;
    /// false at the end of input.
    fn next_line(&mut self, buf: &mut Vec<u8>) -> bool;
}

/// A text that is all there already (`-c`, a script file, a `$(…)`).
#[derive(Debug)]
pub struct Text;

impl Source for Text {
    fn next_line(&mut self, _: &mut Vec<u8>) -> bool {
        false
    }
}

/// Aliases, shared with the shell that defines them.
pub type Aliases = Rc<HashMap<Vec<u8>, Vec<u8>>>;

/// A syntax error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub line: u32,
    pub message: String,
    /// The input ended inside a construct (an interactive shell would read
    /// on).
    pub at_eof: bool,
    /// The line with the unexpected token, which bash shows after the
    /// message.
    pub offending: Option<Vec<u8>>,
    /// A compound assignment's list held a token that is not a word: bash
    /// abandons the rest of the line (status 1) and reads on from the next
    /// line, except in a POSIX shell that is not interactive.
    pub discard_line: bool,
    /// It is inside a command substitution, `$(…)`: in `-c`, `eval` and
    /// `source` text bash then leaves the shell, as after a fatal
    /// expansion error (127 at the top of `-c`, 1 elsewhere).
    pub in_comsub: bool,
}

type Result<T> = std::result::Result<T, ParseError>;

const BAD_SUBSTITUTION: &str = "bad substitution";

/// Reserved words that end a list rather than start a command.
const CLOSERS: &[&[u8]] = &[
    b"then", b"else", b"elif", b"fi", b"do", b"done", b"esac", b"}",
];

fn is_meta(c: u8) -> bool {
    matches!(
        c,
        b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')'
    )
}

/// A byte that [`Parser::read_word`] takes as itself wherever it is: not
/// a metacharacter, a quote, `$`, a backquote, or a byte that can open an
/// extended glob.
fn is_plain(c: u8) -> bool {
    !is_meta(c)
        && !matches!(
            c,
            b'\\' | b'\'' | b'"' | b'$' | b'`' | b'?' | b'*' | b'+' | b'@' | b'!'
        )
}

pub fn is_name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

pub fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Whether `s` is a valid variable name.
pub fn is_name(s: &[u8]) -> bool {
    !s.is_empty() && is_name_start(s[0]) && s.iter().all(|&c| is_name_char(c))
}

/// What ends the list being parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// The end of input (a whole program).
    Eof,
    /// A closing reserved word (`then`, `fi`, `done`, `}`, …).
    Keyword,
    /// `)` (a subshell or `$(…)`).
    Paren,
    /// A case arm: `;;`, `;&`, `;;&` or `esac`.
    CaseArm,
}

pub struct Parser<'s> {
    buf: Vec<u8>,
    pos: usize,
    line: u32,
    src: &'s mut dyn Source,
    eof: bool,
    aliases: Aliases,
    /// Aliases being expanded, with the end of their text in `buf`.
    expanding: Vec<(Vec<u8>, usize)>,
    /// Where the text of the last alias that ended in a blank ends: the word
    /// that follows it is checked for an alias too.
    alias_next: Option<usize>,
    /// Here-docs named on the current line, waiting for their bodies.
    pending: Vec<(Rc<HereDoc>, Vec<u8>, u32)>,
    /// Nesting of `$(…)`, backticks and the like, to bound recursion.
    depth: u32,
    /// Inside `[[ … ]]`, where extglob groups are read whatever `shopt` says.
    in_dbracket: u32,
    /// Reading `name[ … ]=` before a command: blanks and operator
    /// characters before this position are part of the word (bash).
    literal_until: usize,
    /// The line of the innermost `${` being read, for its EOF error.
    brace_start: u32,
    /// Reading a here-document's body.
    in_heredoc: bool,
    /// Reading the offset of `${x:off:len}`, where `?`…`:` nest.
    slice_offset: bool,
    /// Inside `$(…)`, `<(…)` or `>(…)`, where a here-document's line that
    /// starts with its delimiter and has a `)` after it ends the document
    /// (bash's compatibility rule: `x=$(cat <<EOF … EOF)`).
    in_comsub: bool,
    /// Warnings found while reading (a here-document ended by the end of
    /// the input), with their lines, for the shell to print.
    warnings: Vec<(u32, String)>,
    /// A line as written before aliases were expanded in it, for error
    /// messages (bash shows the line as written).
    unaliased_line: Option<(u32, Vec<u8>)>,
    /// Reading a `${…}` inside the word of one in double quotes, where
    /// `$'…'` is still turned into text as in double quotes.
    dq_param: bool,
    /// The `$'…'` names decoded into the text (`"${$'x'}"`): where, the
    /// text as written, and the length of the decoded text, so that a bad
    /// substitution is kept as written.
    extquotes: Vec<(usize, Vec<u8>, usize)>,
    /// Where each `${…}` found a bad substitution starts (with the text's
    /// length then, which a decoded `$'…'` changes, and whether double
    /// quotes were around it): read once, not again inside each word
    /// around it (a subscript that no `]` closes is read to the end).
    bad_braces: std::collections::HashSet<(usize, usize, bool, bool)>,
    /// The next word read is the subscript of `${name[…]}`.
    in_subscript: bool,
    /// The shell is in POSIX mode: single quotes in a double-quoted
    /// `${x-word}` are plain text even for finding its end.
    posix: bool,
}

impl std::fmt::Debug for Parser<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parser")
            .field("pos", &self.pos)
            .field("line", &self.line)
            .finish_non_exhaustive()
    }
}

/// How deep constructs may nest before the parser refuses (a stack guard).
const MAX_DEPTH: u32 = 1000;

/// `text` as one word, blanks and operator characters in it text: an
/// array subscript that comes as text at run time (`unset 'a[$k]'`,
/// arithmetic's `a[…]`), which bash expands as one word.
pub fn subscript_word(text: &[u8]) -> std::result::Result<Word, ParseError> {
    let mut src = Text;
    let mut p = Parser::new(text, &mut src, Rc::new(Default::default()));
    p.literal_until = text.len();
    let mut w = p.read_word()?.unwrap_or_default();
    // What the word reader leaves (a `)` it stops at): text too.
    while p.pos < text.len() {
        let c = p.bump().unwrap_or_default();
        w.parts.push(Part::Lit(vec![c]));
        if let Some(more) = p.read_word()? {
            w.parts.extend(more.parts);
        }
    }
    Ok(w)
}

/// `text` read as the inside of `$((…))`, if it can be.
pub fn arith_word(text: &[u8]) -> Option<Word> {
    let mut t = text.to_vec();
    t.extend_from_slice(b"))");
    let mut src = Text;
    let mut p = Parser::new(&t, &mut src, Rc::new(Default::default()));
    let w = p.arith_until(b'(', b')').ok()??;
    (p.pos == t.len()).then_some(w)
}

/// The words of `text`, as the shell reads words (quotes, expansions),
/// separated by blanks and newlines: for `compgen -W`.
pub fn words(text: &[u8]) -> std::result::Result<Vec<Word>, ParseError> {
    let mut src = Text;
    let mut p = Parser::new(text, &mut src, Rc::new(Default::default()));
    let mut out = Vec::new();
    loop {
        while matches!(p.peek(), Some(b' ' | b'\t' | b'\n')) {
            p.bump();
        }
        match p.read_word()? {
            Some(w) => out.push(w),
            None if p.peek().is_none() => return Ok(out),
            // An operator character: take it as text.
            None => {
                let c = p.bump().unwrap_or_default();
                out.push(Word::literal(&[c]));
            }
        }
    }
}

impl<'s> Parser<'s> {
    pub fn new(text: &[u8], src: &'s mut dyn Source, aliases: Aliases) -> Self {
        Parser {
            buf: text.to_vec(),
            pos: 0,
            line: 1,
            src,
            eof: false,
            aliases,
            expanding: Vec::new(),
            alias_next: None,
            pending: Vec::new(),
            depth: 0,
            in_dbracket: 0,
            literal_until: 0,
            brace_start: 1,
            unaliased_line: None,
            dq_param: false,
            extquotes: Vec::new(),
            bad_braces: Default::default(),
            in_subscript: false,
            posix: false,
            in_heredoc: false,
            slice_offset: false,
            in_comsub: false,
            warnings: Vec::new(),
        }
    }

    /// Starts counting lines at `line` (for `eval` and `source` errors).
    pub fn with_line(mut self, line: u32) -> Self {
        self.line = line;
        self
    }

    pub fn line(&self) -> u32 {
        self.line
    }

    /// Follows the shell's POSIX mode (see [`Parser::posix`]'s field).
    pub fn set_posix(&mut self, on: bool) {
        self.posix = on;
    }

    /// After an error that abandons the rest of its line
    /// ([`ParseError::discard_line`]): forgets the construct being read and
    /// goes on at the next line, as bash's jump to the top level does.
    pub fn discard_line(&mut self) {
        while let Some(c) = self.bump() {
            if c == b'\n' {
                break;
            }
        }
        self.pending.clear();
        self.depth = 0;
        self.in_dbracket = 0;
        self.literal_until = 0;
        self.in_heredoc = false;
        self.slice_offset = false;
        self.in_comsub = false;
        self.dq_param = false;
    }

    /// After a command was abandoned by an error (bash's jump to the top
    /// level), lines count on from the line of the command that failed:
    /// bash's reader and executor share one line counter, and the jump
    /// does not give the reader its own back. Messages and `$LINENO`
    /// after such an error agree with bash's.
    pub fn resume_lines_at(&mut self, failed: u32) {
        let after_newline = self.pos > 0 && self.buf.get(self.pos - 1) == Some(&b'\n');
        self.line = failed + u32::from(after_newline);
    }

    pub fn aliases_ref(&self) -> &Aliases {
        &self.aliases
    }

    /// Whether only blanks, comments and newlines are left.
    /// Whether the text read so far is all parsed (blanks aside), without
    /// reading more: the interactive shell asks before the parser would
    /// prompt for another line.
    /// Where the parser is in its text, and how long the text is (which
    /// an alias's expansion changes).
    pub fn position(&self) -> (usize, usize) {
        (self.pos, self.buf.len())
    }

    /// Goes back to a position between commands (where nothing is
    /// pending), to read the command there again after its text changed.
    pub fn rewind(&mut self, pos: usize, line: u32) {
        self.pos = pos;
        self.line = line;
        self.expanding.clear();
        self.alias_next = None;
        self.pending.clear();
        self.literal_until = 0;
    }

    /// The text between two positions.
    pub fn text(&self, from: usize, to: usize) -> &[u8] {
        &self.buf[from.min(self.buf.len())..to.min(self.buf.len())]
    }

    /// The line that starts at `from` (at or after the parser's
    /// position), read in first if need be: where it starts and ends
    /// (before its newline); `None` at the end of the input.
    pub fn line_at(&mut self, from: usize) -> Option<(usize, usize)> {
        let k = from.checked_sub(self.pos)?;
        self.peek_at(k)?;
        let rest = &self.buf[from..];
        let end = from + rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
        Some((from, end))
    }

    /// Puts `line` in place of the text from `start` to `end` (history
    /// expansion of a script's line, before it is parsed).
    pub fn replace_text(&mut self, start: usize, end: usize, line: &[u8]) {
        self.buf.splice(start..end, line.iter().copied());
    }

    pub fn used_up(&self) -> bool {
        self.buf[self.pos..]
            .iter()
            .all(|&c| c == b' ' || c == b'\t' || c == b'\n')
    }

    pub fn at_end(&mut self) -> bool {
        let save = (self.pos, self.line);
        loop {
            self.skip_blanks();
            if self.peek() == Some(b'\n') {
                self.bump();
            } else {
                break;
            }
        }
        let end = self.peek().is_none();
        (self.pos, self.line) = save;
        end
    }

    /// New aliases take effect from the next command read.
    pub fn set_aliases(&mut self, aliases: Aliases) {
        self.aliases = aliases;
    }

    // ---- bytes -------------------------------------------------------------

    fn fill(&mut self) -> bool {
        if self.eof {
            return false;
        }
        let before = self.buf.len();
        if self.src.next_line(&mut self.buf) && self.buf.len() > before {
            true
        } else {
            self.eof = true;
            false
        }
    }

    #[inline]
    fn peek(&mut self) -> Option<u8> {
        self.peek_at(0)
    }

    #[inline]
    fn peek_at(&mut self, k: usize) -> Option<u8> {
        while self.pos + k >= self.buf.len() {
            if !self.fill() {
                return None;
            }
        }
        Some(self.buf[self.pos + k])
    }

    fn bump(&mut self) -> Option<u8> {
        let c = self.peek()?;
        // An alias's newlines are not lines of the input (bash).
        if c == b'\n'
            && self
                .expanding
                .last()
                .is_none_or(|(_, end)| self.pos >= *end)
        {
            self.line += 1;
        }
        self.pos += 1;
        self.leave_aliases();
        Some(c)
    }

    /// An alias stays in use until a byte after its text is read: the word
    /// that ends its text (`alias a=a`) must not expand it again.
    fn leave_aliases(&mut self) {
        while let Some((_, end)) = self.expanding.last() {
            if self.pos > *end {
                self.expanding.pop();
            } else {
                break;
            }
        }
    }

    fn starts_with(&mut self, s: &[u8]) -> bool {
        for (i, &c) in s.iter().enumerate() {
            if self.peek_at(i) != Some(c) {
                return false;
            }
        }
        true
    }

    fn error<T>(&self, message: impl Into<String>) -> Result<T> {
        Err(ParseError {
            line: self.line,
            message: message.into(),
            at_eof: false,
            offending: None,
            discard_line: false,
            in_comsub: false,
        })
    }

    fn eof_error<T>(&self, message: impl Into<String>) -> Result<T> {
        Err(ParseError {
            line: self.line,
            message: message.into(),
            at_eof: true,
            offending: None,
            discard_line: false,
            in_comsub: false,
        })
    }

    /// The input ended inside a quoted or bracketed pair that opened on
    /// line `start`: bash names that line, not the last one.
    fn unclosed<T>(&self, start: u32, close: &str) -> Result<T> {
        Err(ParseError {
            line: start,
            message: format!("unexpected EOF while looking for matching `{close}'"),
            at_eof: true,
            offending: None,
            discard_line: false,
            in_comsub: false,
        })
    }

    /// "syntax error near unexpected token `x'", naming what is next.
    fn unexpected<T>(&mut self) -> Result<T> {
        self.unexpected_at_end(false)
    }

    /// [`Parser::unexpected`]; with `newline_at_end`, the end of the input
    /// is the newline that bash reads there (`echo >` at the end of a
    /// script or string lacks its target before the newline).
    fn unexpected_at_end<T>(&mut self, newline_at_end: bool) -> Result<T> {
        // A reserved word with a line continuation in or after it: bash
        // names the word, on the line after the continuation.
        let continued = match (self.keyword_at(), self.whole_word_len(b"in")) {
            (Some((w, raw)), _) if raw != w.len() => {
                for _ in 0..raw {
                    self.bump();
                }
                Some(String::from_utf8_lossy(w).into_owned())
            }
            (_, Some(raw)) if raw != 2 => {
                for _ in 0..raw {
                    self.bump();
                }
                Some("in".to_string())
            }
            _ => None,
        };
        let tok = match (continued, self.peek()) {
            (Some(word), _) => word,
            (None, None) if newline_at_end => "newline".to_string(),
            (None, None) => return self.eof_error("syntax error: unexpected end of file"),
            (None, Some(b'\n')) => "newline".to_string(),
            (None, Some(_)) => match self.peek_operator() {
                Some(op) => op.to_string(),
                None => {
                    let start = self.pos;
                    let mut end = start;
                    while end < self.buf.len() && !is_meta(self.buf[end]) {
                        end += 1;
                    }
                    String::from_utf8_lossy(&self.buf[start..end.max(start + 1)]).into_owned()
                }
            },
        };
        let mut e = self.error(format!("syntax error near unexpected token `{tok}'"));
        if let Err(e) = &mut e {
            e.offending = Some(match &self.unaliased_line {
                Some((line, text)) if *line == self.line => text.clone(),
                _ => self.current_line_text(),
            });
        }
        e
    }

    /// The text of the line the parser is in (without its newline; for an
    /// unexpected newline, the line it ends).
    fn current_line_text(&self) -> Vec<u8> {
        let pos = self.pos.min(self.buf.len());
        let start = self.buf[..pos]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |i| i + 1);
        let end = self.buf[pos..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(self.buf.len(), |i| pos + i);
        self.buf[start..end].to_vec()
    }

    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.error("nesting too deep");
        }
        Ok(())
    }

    // ---- blanks, comments, operators ---------------------------------------

    /// Skips blanks, line continuations and a comment (not the newline).
    fn skip_blanks(&mut self) {
        loop {
            match self.peek() {
                Some(b' ' | b'\t') => {
                    self.bump();
                }
                Some(b'\\') if self.peek_at(1) == Some(b'\n') => {
                    self.bump();
                    self.bump();
                }
                Some(b'#') => {
                    while !matches!(self.peek(), None | Some(b'\n')) {
                        self.bump();
                    }
                }
                _ => return,
            }
        }
    }

    fn peek_operator(&mut self) -> Option<&'static str> {
        let c = self.peek()?;
        if !matches!(c, b'&' | b'|' | b';' | b'<' | b'>' | b'(' | b')') {
            return None;
        }
        // The longest operator starting here (operators never span lines,
        // so the bytes are in the buffer once the first one is).
        let rest = &self.buf[self.pos..];
        let at = |i: usize| rest.get(i).copied();
        Some(match (c, at(1), at(2)) {
            (b'&', Some(b'&'), _) => "&&",
            (b'&', Some(b'>'), Some(b'>')) => "&>>",
            (b'&', Some(b'>'), _) => "&>",
            (b'&', ..) => "&",
            (b'|', Some(b'|'), _) => "||",
            (b'|', Some(b'&'), _) => "|&",
            (b'|', ..) => "|",
            (b';', Some(b';'), Some(b'&')) => ";;&",
            (b';', Some(b';'), _) => ";;",
            (b';', Some(b'&'), _) => ";&",
            (b';', ..) => ";",
            (b'<', Some(b'<'), Some(b'<')) => "<<<",
            (b'<', Some(b'<'), Some(b'-')) => "<<-",
            (b'<', Some(b'<'), _) => "<<",
            (b'<', Some(b'&'), _) => "<&",
            (b'<', Some(b'>'), _) => "<>",
            (b'<', ..) => "<",
            (b'>', Some(b'>'), _) => ">>",
            (b'>', Some(b'&'), _) => ">&",
            (b'>', Some(b'|'), _) => ">|",
            (b'>', ..) => ">",
            (b'(', ..) => "(",
            _ => ")",
        })
    }

    fn eat_operator(&mut self, op: &str) -> bool {
        if self.peek_operator() == Some(op) {
            for _ in 0..op.len() {
                self.bump();
            }
            true
        } else {
            false
        }
    }

    /// Consumes a newline and then reads the bodies of the here-docs the
    /// line named.
    fn newline(&mut self) -> Result<()> {
        self.bump();
        let pending = std::mem::take(&mut self.pending);
        for (doc, delim, line) in pending {
            self.read_heredoc(&doc, &delim, line)?;
        }
        Ok(())
    }

    /// Skips blanks, comments and newlines.
    fn linebreak(&mut self) -> Result<()> {
        loop {
            self.skip_blanks();
            if self.peek() == Some(b'\n') {
                self.newline()?;
            } else {
                return Ok(());
            }
        }
    }

    /// The reserved word at the current position, if there is one (it must
    /// be a whole word).
    fn peek_keyword(&mut self) -> Option<&'static [u8]> {
        self.keyword_at().map(|(w, _)| *w)
    }

    /// [`Parser::peek_keyword`], and how many bytes of the input it takes:
    /// line continuations inside or after it are no part of the word
    /// (`f\⏎i` and `fi\⏎` are `fi`, as in bash).
    fn keyword_at(&mut self) -> Option<(&'static &'static [u8], usize)> {
        const WORDS: &[&[u8]] = &[
            b"if",
            b"then",
            b"else",
            b"elif",
            b"fi",
            b"do",
            b"done",
            b"case",
            b"esac",
            b"while",
            b"until",
            b"for",
            b"select",
            b"coproc",
            b"{",
            b"}",
            b"!",
            b"[[",
            b"function",
            b"time",
        ];
        let first = self.peek()?;
        if !(first.is_ascii_lowercase() || matches!(first, b'{' | b'}' | b'!' | b'[')) {
            return None;
        }
        // The word at the cursor (the whole line is in the buffer).
        let rest = &self.buf[self.pos..];
        let len = rest.iter().position(|&c| is_meta(c)).unwrap_or(rest.len());
        if len > 9 {
            return None;
        }
        // A process substitution goes on with the word: `do<(…)` is one.
        let substitution = |p: &mut Self, k: usize| {
            matches!(p.peek_at(k), Some(b'<' | b'>')) && p.peek_at(k + 1) == Some(b'(')
        };
        if rest[..len].last() != Some(&b'\\') {
            let word = &rest[..len];
            let found = WORDS.iter().find(|w| **w == word)?;
            return (!substitution(self, len)).then_some((found, len));
        }
        // A backslash before the newline: read on past continuations.
        let mut word = Vec::new();
        let mut k = 0;
        loop {
            match self.peek_at(k) {
                Some(b'\\') if self.peek_at(k + 1) == Some(b'\n') => k += 2,
                Some(c) if !is_meta(c) && word.len() < 9 => {
                    word.push(c);
                    k += 1;
                }
                Some(c) if !is_meta(c) => return None,
                _ => break,
            }
        }
        if substitution(self, k) {
            return None;
        }
        WORDS.iter().find(|w| **w == word).map(|w| (w, k))
    }

    /// Takes the word `w` if it is the whole word at the cursor, line
    /// continuations in or after it no part of it (`time -p\⏎`).
    fn eat_whole_word(&mut self, w: &[u8]) -> bool {
        let Some(k) = self.whole_word_len(w) else {
            return false;
        };
        for _ in 0..k {
            self.bump();
        }
        true
    }

    /// How many bytes the word `w` takes if it is the whole word at the
    /// cursor, line continuations in or after it counted.
    fn whole_word_len(&mut self, w: &[u8]) -> Option<usize> {
        let mut k = 0;
        let skip = |p: &mut Self, k: &mut usize| {
            while p.peek_at(*k) == Some(b'\\') && p.peek_at(*k + 1) == Some(b'\n') {
                *k += 2;
            }
        };
        for &c in w {
            skip(self, &mut k);
            if self.peek_at(k) != Some(c) {
                return None;
            }
            k += 1;
        }
        skip(self, &mut k);
        self.peek_at(k).is_none_or(is_meta).then_some(k)
    }

    fn eat_keyword(&mut self, w: &[u8]) -> bool {
        match self.keyword_at() {
            Some((k, raw)) if *k == w => {
                for _ in 0..raw {
                    self.bump();
                }
                true
            }
            _ => false,
        }
    }

    fn expect_keyword(&mut self, w: &[u8]) -> Result<()> {
        self.linebreak()?;
        if self.eat_keyword(w) {
            Ok(())
        } else {
            self.unexpected()
        }
    }
}

/// `NAME=value`, `NAME+=value` or `NAME[sub]=value` at the start of a
/// word.
pub fn split_assignment(word: &Word) -> Option<Assign> {
    let Some(Part::Lit(first)) = word.parts.first() else {
        return None;
    };
    let name_end = first
        .iter()
        .position(|&c| !is_name_char(c))
        .unwrap_or(first.len());
    let name = &first[..name_end];
    if !is_name(name) {
        return None;
    }
    // Where the value starts: (part index, byte offset in that Lit part).
    let (index, append, at) = if first.get(name_end) == Some(&b'[') {
        let mut sub = Vec::new();
        let mut depth = 0u32;
        let mut found = None;
        'parts: for (pi, part) in word.parts.iter().enumerate() {
            let Part::Lit(b) = part else {
                sub.push(part.clone());
                continue;
            };
            let start = if pi == 0 { name_end + 1 } else { 0 };
            let mut lit = Vec::new();
            for k in start..b.len() {
                match b[k] {
                    b'[' => depth += 1,
                    b']' if depth > 0 => depth -= 1,
                    b']' => {
                        let rest = &b[k + 1..];
                        let (app, skip) = if rest.starts_with(b"+=") {
                            (true, 2)
                        } else if rest.starts_with(b"=") {
                            (false, 1)
                        } else {
                            return None;
                        };
                        if !lit.is_empty() {
                            sub.push(Part::Lit(std::mem::take(&mut lit)));
                        }
                        found = Some((app, pi, k + 1 + skip));
                        break 'parts;
                    }
                    _ => {}
                }
                lit.push(b[k]);
            }
            if !lit.is_empty() {
                sub.push(Part::Lit(lit));
            }
        }
        let (app, pi, off) = found?;
        (Some(Word { parts: sub }), app, (pi, off))
    } else if first[name_end..].starts_with(b"+=") {
        (None, true, (0, name_end + 2))
    } else if first[name_end..].starts_with(b"=") {
        (None, false, (0, name_end + 1))
    } else {
        return None;
    };
    let mut parts = Vec::with_capacity(word.parts.len());
    if let Part::Lit(b) = &word.parts[at.0]
        && at.1 < b.len()
    {
        parts.push(Part::Lit(b[at.1..].to_vec()));
    }
    parts.extend(word.parts[at.0 + 1..].iter().cloned());
    Some(Assign {
        name: name.to_vec(),
        index,
        append,
        value: Word { parts },
        array: None,
    })
}

/// Parses a whole text (for `-c`, `eval`, `source`, and tests).
pub fn parse(text: &[u8], aliases: Aliases) -> std::result::Result<List, ParseError> {
    let mut src = Text;
    Parser::new(text, &mut src, aliases).program()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A here-document named on the last line of a whole text, with no
    /// newline after it, is read (empty) with bash's warning, as a script's
    /// is: `program` left it unread, so a delimiter spanning lines
    /// (`` <<`a⏎b` ``) went unnoticed by the fuzz check that skips
    /// documents the end of the input closes (libFuzzer's rush-unparse).
    #[test]
    fn a_here_document_at_the_end_of_a_text_is_ended_with_a_warning() {
        for text in [&b"cat <<E"[..], b"cat <<`a\nb`", b"cat <<E; echo"] {
            let mut src = Text;
            let mut p = Parser::new(text, &mut src, Default::default());
            let list = p.program().expect("parses");
            assert_eq!(list.items.len(), 1 + usize::from(text.ends_with(b"echo")));
            let warnings = p.take_warnings();
            assert_eq!(warnings.len(), 1, "{warnings:?}");
            assert!(warnings[0].1.contains("delimited by end-of-file"));
        }
    }

    /// A subscript that no `]` closes is read to its end once, not once
    /// for each `${…}` around it: lines of `p=${W[[C-1]} x` took
    /// exponential time (a release build: 18 lines 0.28 s, 50 more than an
    /// hour; these 22 lines 11 s in a debug build, now under 1 ms). Found
    /// by libFuzzer's rush-unparse run as a timeout.
    #[test]
    fn unclosed_subscripts_are_read_once() {
        let text = "p=${W[[C-1]} x\n".repeat(22);
        let start = std::time::Instant::now();
        let list = parse(text.as_bytes(), Default::default()).expect("it parses");
        assert_eq!(list.items.len(), 22);
        assert!(
            start.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }

    /// A `${…}` found a bad substitution is not read again from inside
    /// each word around it: four copies of this fuzz input (mutated
    /// completion scripts: `${COMP_WORD[[COMP_CWORD-1]}` and the like) took
    /// 3.4 s in a release build, and grew faster than the text; now 10 ms.
    /// Found by libFuzzer's rush-unparse run as a timeout.
    #[test]
    fn bad_substitutions_are_read_once() {
        let one = include_bytes!("../../../../fuzz/corpus/rush-unparse/bad-braces-read-once");
        let mut text = Vec::new();
        for _ in 0..4 {
            text.extend_from_slice(one);
            text.push(b'\n');
        }
        let start = std::time::Instant::now();
        let _ = parse(&text, Default::default());
        assert!(
            start.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }
}
