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

    // ---- bytes --------------------------------------------------------

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

    // ---- blanks, comments, operators -----------------------------------

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

    // ---- programs and lists --------------------------------------------

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

    fn at_list_end(&mut self, end: End) -> bool {
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
    fn closer_alias_ahead(&mut self) -> bool {
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

    fn list(&mut self, end: End) -> Result<List> {
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
    fn body(&mut self, end: End) -> Result<List> {
        let list = self.list(end)?;
        if list.items.is_empty() {
            return self.unexpected();
        }
        Ok(list)
    }

    fn and_or(&mut self) -> Result<AndOr> {
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

    fn pipeline(&mut self) -> Result<Pipeline> {
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

    // ---- commands ------------------------------------------------------

    fn command(&mut self) -> Result<Command> {
        self.enter()?;
        let r = self.command_inner();
        self.depth -= 1;
        r
    }

    fn command_inner(&mut self) -> Result<Command> {
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
    fn compound(&mut self) -> Result<Compound> {
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

    fn for_loop(&mut self, line: u32) -> Result<Compound> {
        self.skip_blanks();
        if self.starts_with(b"((") {
            return self.arith_for(line);
        }
        self.name_in_words_loop(line, false)
    }

    /// `coproc [NAME] command` (bash). A NAME is taken only before a
    /// compound command (`coproc NAME { …; }`); otherwise the words are a
    /// simple command, and the name is COPROC.
    fn coproc(&mut self) -> Result<Compound> {
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
    fn select_loop(&mut self, line: u32) -> Result<Compound> {
        self.skip_blanks();
        self.name_in_words_loop(line, true)
    }

    fn name_in_words_loop(&mut self, line: u32, select: bool) -> Result<Compound> {
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
    fn arith_for(&mut self, line: u32) -> Result<Compound> {
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
    fn linebreak_if_then_in(&mut self) -> Result<()> {
        self.linebreak()
    }

    /// `in`, as a whole word.
    fn eat_keyword_in(&mut self) -> bool {
        self.eat_whole_word(b"in")
    }

    fn case(&mut self, line: u32) -> Result<Compound> {
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
    fn double_bracket(&mut self, line: u32) -> Result<Compound> {
        self.in_dbracket += 1;
        let r = self.double_bracket_words(line);
        self.in_dbracket -= 1;
        r
    }

    fn double_bracket_words(&mut self, line: u32) -> Result<Compound> {
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
    fn regex_word(&mut self) -> Result<Option<Word>> {
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
    fn arith_command(&mut self) -> Result<Option<Word>> {
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
    fn function_keyword(&mut self) -> Result<Command> {
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

    fn function_body(&mut self, name: Vec<u8>) -> Result<Command> {
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

    fn redirects(&mut self) -> Result<Vec<Redirect>> {
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
    fn redirect(&mut self) -> Result<Option<Redirect>> {
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
    fn read_heredoc(&mut self, doc: &HereDoc, delim: &[u8], started: u32) -> Result<()> {
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

    fn warn_unended_heredoc(&mut self, line: u32, started: u32, delim: &[u8]) {
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
    fn heredoc_word(&mut self) -> Result<Word> {
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

    fn simple(&mut self) -> Result<Command> {
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
    fn name_ahead(&mut self) -> usize {
        self.name_ahead_at(0)
    }

    /// [`Parser::name_ahead`], `offset` bytes past the read position.
    fn name_ahead_at(&mut self, offset: usize) -> usize {
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
    fn spaced_subscript(&mut self) -> Option<usize> {
        let k = self.name_ahead();
        if k == 0 {
            return None;
        }
        self.spaced_bracket_at(k)
    }

    /// [`Parser::spaced_subscript`] for the `[…]` at `k` bytes ahead (at
    /// 0 for `[key]=value` inside `name=(…)`).
    fn spaced_bracket_at(&mut self, k: usize) -> Option<usize> {
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
    fn bracket_close_at(&mut self, mut k: usize) -> Option<(usize, bool)> {
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

    fn array_assignment(&mut self) -> Result<Option<Assign>> {
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
    fn expand_alias(&mut self, word: &Word, start: usize) -> bool {
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

    // ---- words ---------------------------------------------------------

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
    fn process_substitution(&mut self, read: bool) -> Result<Part> {
        Ok(Part::ProcSubst {
            read,
            list: Rc::new(self.paren_list()?),
        })
    }

    /// After `$(`, `<(` or `>(`: the list up to the matching `)`, which is
    /// eaten.
    fn paren_list(&mut self) -> Result<List> {
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

    fn single_quoted(&mut self) -> Result<Vec<u8>> {
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
    fn double_quoted(&mut self) -> Result<Vec<Part>> {
        self.double_quoted_in(false)
    }

    /// [`Parser::double_quoted`]; with `any_escape`, a backslash quotes any
    /// character, as in double quotes nested in a `${x:+word}` that is
    /// itself in double quotes (`"${x:+"\p"}"` is `p` in bash).
    fn double_quoted_in(&mut self, any_escape: bool) -> Result<Vec<Part>> {
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
    fn quoted_expansion(&mut self, c: u8, parts: &mut Vec<Part>, lit: &mut Vec<u8>) -> Result<()> {
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
    fn skip_line_continuations(&mut self) {
        while self.peek() == Some(b'\\') && self.peek_at(1) == Some(b'\n') {
            self.bump();
            self.bump();
        }
    }

    /// After `$`. A `$` that starts nothing is returned as a literal.
    fn dollar(&mut self, dq: bool) -> Result<Part> {
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
    fn arith_text(&mut self) -> Result<Option<Word>> {
        self.arith_until(b'(', b')')
    }

    /// The body of `$((…))` (closed by `))`) or of `$[…]` (closed by `]`),
    /// nesting on `open`.
    fn arith_until(&mut self, open: u8, close: u8) -> Result<Option<Word>> {
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
    fn backtick(&mut self, dq: bool) -> Result<Part> {
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
    fn ansi_c(&mut self) -> Result<Vec<u8>> {
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
    fn skip_bad_brace(&mut self, dq: bool) -> Result<Part> {
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
    fn join_brace_head(&mut self) {
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
    fn extquote_name(&mut self) -> Result<()> {
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
    fn dollar_in_param_word(&mut self, dq: bool, lit_quoted: bool) -> Result<Part> {
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
    fn brace_param(&mut self, dq: bool) -> Result<Part> {
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
    fn param_word(&mut self, dq: bool, stops: &[u8], pattern: bool) -> Result<Word> {
        self.param_word_in(dq, stops, pattern, false)
    }

    /// [`Parser::param_word`]; with `any_escape` (the replacement of
    /// `${x/p/r}`), a backslash quotes any character and single quotes
    /// quote also inside double quotes, as bash 5.2 removes them there.
    fn param_word_in(
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

fn param(name: Vec<u8>, op: ParamOp) -> Part {
    Part::Param(Box::new(Param {
        name,
        index: None,
        indirect: false,
        op,
        bare: false,
    }))
}

fn value_op(c: u8, colon: bool, word: Word) -> ParamOp {
    match c {
        b'-' => ParamOp::Default { colon, word },
        b'=' => ParamOp::Assign { colon, word },
        b'?' => ParamOp::Error { colon, word },
        _ => ParamOp::Alternative { colon, word },
    }
}

fn flush_lit(parts: &mut Vec<Part>, lit: &mut Vec<u8>) {
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
fn list_as_text(items: Vec<Element>, rest: Word) -> Word {
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

fn flush_quoted(parts: &mut Vec<Part>, lit: &mut Vec<u8>) {
    if !lit.is_empty() {
        parts.push(Part::Quoted(std::mem::take(lit)));
    }
}

fn flush_word_lit(parts: &mut Vec<Part>, lit: &mut Vec<u8>, dq: bool) {
    if dq {
        flush_quoted(parts, lit);
    } else {
        flush_lit(parts, lit);
    }
}

/// Quote removal on a word's text as written, nothing expanded: a
/// here-document's delimiter. `\c` is c; single quotes keep what they
/// hold; in double quotes `\` goes only before `$`, `` ` ``, `"` and `\`.
fn remove_quotes(raw: &[u8]) -> Vec<u8> {
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
        let one = include_bytes!("../../../fuzz/corpus/rush-unparse/bad-braces-read-once");
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
