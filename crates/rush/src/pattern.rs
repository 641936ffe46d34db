//! Shell patterns (`*`, `?`, `[…]` with ranges and `[:class:]`, and with
//! `shopt -s extglob` bash's `?(…)`, `*(…)`, `+(…)`, `@(…)` and `!(…)`),
//! for `case`, `[[ == ]]`, `${x#p}` and friends, and pathname expansion.
//!
//! A pattern is compiled from bytes plus a mask of which bytes were quoted
//! (a quoted `*` is literal). Matching is the usual star-backtracking walk:
//! linear in practice, and never exponential, because only the last `*` is
//! ever revisited. A pattern with an extglob group is matched by a
//! recursive walk instead, which tries each split of the text.

use std::sync::atomic::{AtomicBool, Ordering};

/// `shopt -s extglob`: set by `shopt` and `-O extglob`; read by the parser
/// (which then reads `@(a|b)` as one word) and by [`Pattern::compile`].
pub static EXTGLOB: AtomicBool = AtomicBool::new(false);

/// Whether extglob is on.
pub fn extglob() -> bool {
    EXTGLOB.load(Ordering::Relaxed)
}

/// One element of a compiled pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Byte(u8),
    /// `?`
    One,
    /// `*`
    Star,
    /// `[…]`
    Class {
        negated: bool,
        items: Vec<ClassItem>,
    },
    /// An extglob group: `kind` is one of `?*+@!`, `alts` the patterns
    /// between the `|`s.
    Ext {
        kind: u8,
        alts: Vec<Vec<Tok>>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum ClassItem {
    /// A character (a code point; a byte for text that is not UTF-8).
    Char(u32),
    Range(u32, u32),
    Named(Named),
    /// An unknown `[:class:]` or `[.symbol.]`: matches nothing.
    Nothing,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Named {
    Alnum,
    Alpha,
    Blank,
    Cntrl,
    Digit,
    Graph,
    Lower,
    Print,
    Punct,
    Space,
    Upper,
    Xdigit,
    /// bash's own: `[:ascii:]` (0-127) and `[:word:]` (alnum and `_`).
    Ascii,
    Word,
}

impl Named {
    fn parse(name: &[u8]) -> Option<Self> {
        Some(match name {
            b"alnum" => Named::Alnum,
            b"alpha" => Named::Alpha,
            b"blank" => Named::Blank,
            b"cntrl" => Named::Cntrl,
            b"digit" => Named::Digit,
            b"graph" => Named::Graph,
            b"lower" => Named::Lower,
            b"print" => Named::Print,
            b"punct" => Named::Punct,
            b"space" => Named::Space,
            b"upper" => Named::Upper,
            b"xdigit" => Named::Xdigit,
            b"ascii" => Named::Ascii,
            b"word" => Named::Word,
            _ => return None,
        })
    }

    fn matches(self, c: u8) -> bool {
        match self {
            Named::Alnum => c.is_ascii_alphanumeric(),
            Named::Alpha => c.is_ascii_alphabetic(),
            Named::Blank => c == b' ' || c == b'\t',
            Named::Cntrl => c.is_ascii_control(),
            Named::Digit => c.is_ascii_digit(),
            Named::Graph => c.is_ascii_graphic(),
            Named::Lower => c.is_ascii_lowercase(),
            Named::Print => c.is_ascii_graphic() || c == b' ',
            Named::Punct => c.is_ascii_punctuation(),
            Named::Space => c.is_ascii_whitespace() || c == 11,
            Named::Upper => c.is_ascii_uppercase(),
            Named::Xdigit => c.is_ascii_hexdigit(),
            Named::Ascii => c.is_ascii(),
            Named::Word => c.is_ascii_alphanumeric() || c == b'_',
        }
    }
}

/// A compiled pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    toks: Vec<Tok>,
    /// It has an extglob group: match with the recursive walk.
    ext: bool,
    /// Compiled in lower case: subjects are lowered before matching.
    nocase: bool,
}

/// Text with a flag per byte: was it quoted?
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Marked {
    pub bytes: Vec<u8>,
    pub quoted: Vec<bool>,
}

impl Marked {
    pub fn push(&mut self, bytes: &[u8], quoted: bool) {
        self.bytes.extend_from_slice(bytes);
        self.quoted.extend(std::iter::repeat_n(quoted, bytes.len()));
    }

    /// Whether this is a pattern: an unquoted `*` or `?`, or an unquoted
    /// `[` that a `]` closes (a lone `[`, as in `[ -n x ]`, is not).
    pub fn has_magic(&self) -> bool {
        let mut open = false;
        let ext = extglob();
        for (i, (&c, &q)) in self.bytes.iter().zip(&self.quoted).enumerate() {
            if q {
                continue;
            }
            match c {
                b'*' | b'?' => return true,
                b'+' | b'@' | b'!'
                    if ext
                        && self.bytes.get(i + 1) == Some(&b'(')
                        && self.quoted.get(i + 1) == Some(&false) =>
                {
                    return true;
                }
                b'[' => open = true,
                b']' if open => return true,
                _ => {}
            }
        }
        false
    }
}

impl Pattern {
    /// Compiles text in which no byte is quoted.
    pub fn new(text: &[u8]) -> Self {
        Self::compile(text, &vec![false; text.len()])
    }

    /// Compiles `text`; bytes whose `quoted` flag is set match themselves.
    /// An unquoted backslash quotes the next byte. Extglob groups count when
    /// `shopt -s extglob` is on.
    pub fn compile(text: &[u8], quoted: &[bool]) -> Self {
        Self::compile_ext(text, quoted, extglob())
    }

    /// [`Pattern::compile`], with extglob groups or without (`[[ == ]]`
    /// always has them, as in bash).
    pub fn compile_ext(text: &[u8], quoted: &[bool], ext: bool) -> Self {
        Self::compile_with(text, quoted, ext, false)
    }

    /// [`Pattern::compile_ext`], matching without regard to ASCII case when
    /// `nocase` (`shopt -s nocasematch`, `nocaseglob`).
    pub fn compile_with(text: &[u8], quoted: &[bool], ext: bool, nocase: bool) -> Self {
        let toks = if nocase {
            compile_toks(&text.to_ascii_lowercase(), quoted, ext)
        } else {
            compile_toks(text, quoted, ext)
        };
        let ext = toks.iter().any(|t| matches!(t, Tok::Ext { .. }));
        Pattern { toks, ext, nocase }
    }

    /// Whether the pattern matches all of `s`.
    pub fn matches(&self, s: &[u8]) -> bool {
        if self.nocase && s.iter().any(u8::is_ascii_uppercase) {
            return self.matches_exact(&s.to_ascii_lowercase());
        }
        self.matches_exact(s)
    }

    fn matches_exact(&self, s: &[u8]) -> bool {
        if self.ext {
            clear_memo();
            return walk(&self.toks, s);
        }
        matches_from(&self.toks, s)
    }

    /// Whether it has no special element (a plain string).
    pub fn literal(&self) -> Option<Vec<u8>> {
        self.toks
            .iter()
            .map(|t| match t {
                Tok::Byte(b) => Some(*b),
                _ => None,
            })
            .collect()
    }

    /// For pathname expansion: a leading `.` must be matched by a literal
    /// dot.
    /// `dotglob` lifts that rule (`.` and `..` are never listed anyway).
    pub fn matches_name(&self, name: &[u8], dotglob: bool) -> bool {
        if !dotglob && name.first() == Some(&b'.') && self.toks.first() != Some(&Tok::Byte(b'.')) {
            // An extglob group first may match the dot with an
            // alternative that starts with one (`@(.x|y)`, `*(.*)`), as
            // in bash; `!(…)` never does.
            // So may a leading `*(…)` or `?(…)` matching nothing before a
            // dot (`*(bar).foo`).
            if let Some((
                Tok::Ext {
                    kind: b'*' | b'?', ..
                },
                rest,
            )) = self.toks.split_first()
                && rest.first() == Some(&Tok::Byte(b'.'))
            {
                clear_memo();
                if walk(rest, name) {
                    return true;
                }
            }
            let Some(toks) = dot_led(&self.toks) else {
                return false;
            };
            clear_memo();
            return walk(&toks, name);
        }
        self.matches(name)
    }
}

/// `toks` with its leading extglob group cut down to the alternatives
/// that start with a literal dot; `None` if it has none.
fn dot_led(toks: &[Tok]) -> Option<Vec<Tok>> {
    let Some((Tok::Ext { kind, alts }, rest)) = toks.split_first() else {
        return None;
    };
    if *kind == b'!' {
        return None;
    }
    let alts: Vec<Vec<Tok>> = alts
        .iter()
        .filter_map(|a| match a.first() {
            Some(Tok::Byte(b'.')) => Some(a.clone()),
            _ => dot_led(a),
        })
        .collect();
    if alts.is_empty() {
        return None;
    }
    let mut out = vec![Tok::Ext { kind: *kind, alts }];
    out.extend_from_slice(rest);
    Some(out)
}

fn compile_toks(text: &[u8], quoted: &[bool], ext: bool) -> Vec<Tok> {
    let mut toks = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        if quoted[i] {
            toks.push(Tok::Byte(c));
            i += 1;
            continue;
        }
        if ext
            && matches!(c, b'?' | b'*' | b'+' | b'@' | b'!')
            && text.get(i + 1) == Some(&b'(')
            && !quoted[i + 1]
            && let Some((alts, next)) = group(text, quoted, i + 2)
        {
            let alts = alts
                .into_iter()
                .map(|(a, b)| compile_toks(&text[a..b], &quoted[a..b], true))
                .collect();
            toks.push(Tok::Ext { kind: c, alts });
            i = next;
            continue;
        }
        match c {
            b'\\' if i + 1 < text.len() => {
                toks.push(Tok::Byte(text[i + 1]));
                i += 2;
            }
            b'*' => {
                if toks.last() != Some(&Tok::Star) {
                    toks.push(Tok::Star);
                }
                i += 1;
            }
            b'?' => {
                toks.push(Tok::One);
                i += 1;
            }
            b'[' => match class(text, quoted, i + 1) {
                Some((tok, next)) => {
                    toks.push(tok);
                    i = next;
                }
                None => {
                    toks.push(Tok::Byte(b'['));
                    i += 1;
                }
            },
            c => {
                toks.push(Tok::Byte(c));
                i += 1;
            }
        }
    }
    toks
}

/// The alternatives of an extglob group whose text starts at `i` (after
/// `(`), as byte ranges split at the unquoted `|`s of its own level, and the
/// index after its `)`; `None` if it does not close.
fn group(text: &[u8], quoted: &[bool], mut i: usize) -> Option<(Vec<(usize, usize)>, usize)> {
    let mut alts = Vec::new();
    let mut start = i;
    let mut depth = 0u32;
    while i < text.len() {
        if !quoted[i] {
            match text[i] {
                b'\\' => i += 1,
                // Inside a bracket expression `)` and `|` are not special,
                // and one that never closes keeps the group open: bash's
                // PATSCAN, where `!([*)*` is no group at all.
                b'[' => i = bracket_end(text, quoted, i)?,
                b'(' => depth += 1,
                b')' if depth == 0 => {
                    alts.push((start, i));
                    return Some((alts, i + 1));
                }
                b')' => depth -= 1,
                b'|' if depth == 0 => {
                    alts.push((start, i));
                    start = i + 1;
                }
                _ => {}
            }
        }
        i += 1;
    }
    None
}

/// Where the bracket expression opened at `open` closes (the index of its
/// `]`), as bash's PATSCAN reads it: a `]` first (after `!` or `^`) is a
/// member, and one that ends `[:…:]`, `[.….]` or `[=…=]` closes only
/// that; `None` if it never closes. Quoted bytes (`quoted`, unquoted past
/// its end) are never special.
pub(crate) fn bracket_end(text: &[u8], quoted: &[bool], open: usize) -> Option<usize> {
    let plain = |i: usize| !quoted.get(i).copied().unwrap_or(false);
    let mut first = open + 1;
    if matches!(text.get(first), Some(b'!' | b'^')) && plain(first) {
        first += 1;
    }
    let mut class = None;
    for i in first..text.len() {
        if !plain(i) {
            continue;
        }
        match text[i] {
            b'[' if matches!(text.get(i + 1), Some(b':' | b'.' | b'=')) => {
                class = text.get(i + 1).copied();
            }
            b']' if i == first => {}
            b']' if class.is_some() && text.get(i.wrapping_sub(1)).copied() == class => {
                class = None;
            }
            b']' => return Some(i),
            _ => {}
        }
    }
    None
}

/// Whether `toks` match all of `s`, trying every split: for patterns with
/// extglob groups. The splits that failed are remembered (by the tokens'
/// and the text's place), so each pair is tried once: without that,
/// `*+(*-t-|*-)x` against a long text took minutes.
fn walk(toks: &[Tok], s: &[u8]) -> bool {
    #[cfg(test)]
    WALKS.with(|w| w.set(w.get() + 1));
    let Some((first, rest)) = toks.split_first() else {
        return s.is_empty();
    };
    let split = |found: &dyn Fn() -> bool| {
        let key = (toks.as_ptr() as usize, s.as_ptr() as usize, s.len());
        if WALK_FAILED.with(|f| f.borrow().contains(&key)) {
            return false;
        }
        let ok = found();
        if !ok {
            WALK_FAILED.with(|f| f.borrow_mut().insert(key));
        }
        ok
    };
    match first {
        Tok::Star => split(&|| ends(s, 0).any(|j| walk(rest, &s[j..]))),
        Tok::Ext { kind, alts } => {
            split(&|| ends(s, 0).any(|j| ext_matches(*kind, alts, &s[..j]) && walk(rest, &s[j..])))
        }
        tok => match (s.is_empty(), tok) {
            (true, _) => false,
            (false, tok) => one_matches(tok, s, 0).is_some_and(|n| walk(rest, &s[n..])),
        },
    }
}

/// The character boundaries of `s` from `from` to its end, both included.
fn ends(s: &[u8], from: usize) -> impl Iterator<Item = usize> + '_ {
    let mut next = Some(from);
    std::iter::from_fn(move || {
        let j = next?;
        next = (j < s.len()).then(|| j + char_len(s, j));
        Some(j)
    })
}

/// Whether all of `s` matches an extglob group.
fn ext_matches(kind: u8, alts: &[Vec<Tok>], s: &[u8]) -> bool {
    let any = |s: &[u8]| alts.iter().any(|a| walk(a, s));
    match kind {
        b'@' => any(s),
        b'?' => s.is_empty() || any(s),
        b'!' => !any(s),
        b'*' => s.is_empty() || repeated(alts, s),
        _ => repeated(alts, s),
    }
}

thread_local! {
    /// Repetitions known not to match during one [`Pattern::matches`]:
    /// (group, start of the text, its length). Without it `*(a|aa)` against
    /// a long run of `a`s that fails at the end takes exponential time.
    static FAILED: std::cell::RefCell<rustc_hash::FxHashSet<(usize, usize, usize)>> =
        Default::default();
    /// Splits [`walk`] found not to match: (tokens, start of the text, its
    /// length).
    static WALK_FAILED: std::cell::RefCell<rustc_hash::FxHashSet<(usize, usize, usize)>> =
        Default::default();
}

#[cfg(test)]
thread_local! {
    /// Calls of [`walk`], for the tests of its bounds.
    static WALKS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Forgets the failures remembered for the last match (the texts' places
/// mean nothing for the next).
fn clear_memo() {
    FAILED.with(|f| f.borrow_mut().clear());
    WALK_FAILED.with(|f| f.borrow_mut().clear());
}

/// One or more of the alternatives, one after another, make all of `s`.
fn repeated(alts: &[Vec<Tok>], s: &[u8]) -> bool {
    let key = (alts.as_ptr() as usize, s.as_ptr() as usize, s.len());
    if FAILED.with(|f| f.borrow().contains(&key)) {
        return false;
    }
    let ok = ends(s, 0).skip(1).any(|k| {
        alts.iter().any(|a| walk(a, &s[..k])) && (k == s.len() || repeated(alts, &s[k..]))
    });
    if !ok {
        FAILED.with(|f| f.borrow_mut().insert(key));
    }
    ok
}

/// Parses a bracket expression starting after `[` at `i`; returns the token
/// and the index after `]`, or `None` if it does not close.
fn class(text: &[u8], quoted: &[bool], mut i: usize) -> Option<(Tok, usize)> {
    let mut negated = false;
    if i < text.len() && !quoted[i] && matches!(text[i], b'!' | b'^') {
        negated = true;
        i += 1;
    }
    let mut items = Vec::new();
    let mut first = true;
    loop {
        if i >= text.len() {
            return None;
        }
        let c = text[i];
        if c == b']' && !quoted[i] && !first {
            return Some((Tok::Class { negated, items }, i + 1));
        }
        first = false;
        // [:class:]; an unknown name matches nothing (bash).
        if c == b'['
            && !quoted[i]
            && text.get(i + 1) == Some(&b':')
            && let Some(end) = text[i + 2..].windows(2).position(|w| w == b":]")
        {
            let name = &text[i + 2..i + 2 + end];
            items.push(Named::parse(name).map_or(ClassItem::Nothing, ClassItem::Named));
            i += end + 4;
            continue;
        }
        let (lo, next) = element(text, quoted, i);
        // a range lo-hi (a `-` before `]`, or a quoted one, is literal)
        if next + 1 < text.len()
            && text[next] == b'-'
            && !quoted[next]
            && (text[next + 1] != b']' || quoted[next + 1])
        {
            let (hi, after) = element(text, quoted, next + 1);
            items.push(match (lo, hi) {
                (Some(lo), Some(hi)) => ClassItem::Range(lo, hi),
                _ => ClassItem::Nothing,
            });
            i = after;
        } else {
            items.push(lo.map_or(ClassItem::Nothing, ClassItem::Char));
            i = next;
        }
    }
}

/// One character of a bracket expression at `i`: plain, escaped, a
/// collating symbol `[.x.]` (a character or one of POSIX's names for
/// one) or an equivalence class `[=x=]`. `None` for a symbol that names no
/// single character (`[.yyz.]`), which matches nothing. The index after.
fn element(text: &[u8], quoted: &[bool], i: usize) -> (Option<u32>, usize) {
    let c = text[i];
    if c == b'\\' && !quoted[i] && i + 1 < text.len() {
        let (ch, n) = decode(text, i + 1);
        return (Some(ch), i + 1 + n);
    }
    if c == b'['
        && !quoted[i]
        && let Some(&d @ (b'.' | b'=')) = text.get(i + 1)
        && let Some(end) = text[i + 2..].windows(2).position(|w| w == [d, b']'])
    {
        let name = &text[i + 2..i + 2 + end];
        let after = i + end + 4;
        let (ch, n) = if name.is_empty() {
            (0, 0)
        } else {
            decode(name, 0)
        };
        if n == name.len() && n > 0 {
            return (Some(ch), after);
        }
        let named = (d == b'.').then(|| collating_symbol(name)).flatten();
        return (named.map(u32::from), after);
    }
    let (ch, n) = decode(text, i);
    (Some(ch), i + n)
}

/// The character POSIX's portable character set names `name` (`space`,
/// `hyphen`, `tab`, `NUL`…), for `[.name.]`.
fn collating_symbol(name: &[u8]) -> Option<u8> {
    // The control characters by their ASCII names, 0 to 31.
    const CONTROL: [&str; 32] = [
        "NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "HT", "LF", "VT", "FF", "CR",
        "SO", "SI", "DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB",
        "ESC", "FS", "GS", "RS", "US",
    ];
    let name = std::str::from_utf8(name).ok()?;
    if let Some(i) = CONTROL.iter().position(|&n| n == name) {
        return u8::try_from(i).ok();
    }
    Some(match name {
        "alert" => 7,
        "backspace" => 8,
        "tab" => b'\t',
        "newline" => b'\n',
        "vertical-tab" => 11,
        "form-feed" => 12,
        "carriage-return" => b'\r',
        "IS4" => 28,
        "IS3" => 29,
        "IS2" => 30,
        "IS1" => 31,
        "space" => b' ',
        "exclamation-mark" => b'!',
        "quotation-mark" => b'"',
        "number-sign" => b'#',
        "dollar-sign" => b'$',
        "percent-sign" => b'%',
        "ampersand" => b'&',
        "apostrophe" => b'\'',
        "left-parenthesis" => b'(',
        "right-parenthesis" => b')',
        "asterisk" => b'*',
        "plus-sign" => b'+',
        "comma" => b',',
        "hyphen" | "hyphen-minus" | "minus" | "dash" => b'-',
        "period" | "full-stop" => b'.',
        "slash" | "solidus" => b'/',
        "zero" => b'0',
        "one" => b'1',
        "two" => b'2',
        "three" => b'3',
        "four" => b'4',
        "five" => b'5',
        "six" => b'6',
        "seven" => b'7',
        "eight" => b'8',
        "nine" => b'9',
        "colon" => b':',
        "semicolon" => b';',
        "less-than-sign" => b'<',
        "equals-sign" => b'=',
        "greater-than-sign" => b'>',
        "question-mark" => b'?',
        "commercial-at" => b'@',
        "left-square-bracket" => b'[',
        "backslash" | "reverse-solidus" => b'\\',
        "right-square-bracket" => b']',
        "circumflex" | "circumflex-accent" => b'^',
        "underscore" | "low-line" => b'_',
        "grave-accent" => b'`',
        "left-brace" | "left-curly-bracket" => b'{',
        "vertical-line" => b'|',
        "right-brace" | "right-curly-bracket" => b'}',
        "tilde" => b'~',
        "DEL" => 127,
        _ => return None,
    })
}

/// The length of the UTF-8 character at `s[i]`, or 1 if there is none
/// there (bytes that are not UTF-8 match one by one).
fn char_len(s: &[u8], i: usize) -> usize {
    let b = s[i];
    let n = match b {
        0x00..=0x7f => return 1,
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return 1,
    };
    if i + n <= s.len() && s[i + 1..i + n].iter().all(|&c| c & 0xc0 == 0x80) {
        n
    } else {
        1
    }
}

/// The character at `s[i]` and its length in bytes.
fn decode(s: &[u8], i: usize) -> (u32, usize) {
    let n = char_len(s, i);
    if n == 1 {
        return (u32::from(s[i]), 1);
    }
    let mut v = u32::from(s[i]) & (0x7f >> n);
    for &c in &s[i + 1..i + n] {
        v = (v << 6) | u32::from(c & 0x3f);
    }
    (v, n)
}

fn class_matches(negated: bool, items: &[ClassItem], c: u32) -> bool {
    let hit = items.iter().any(|it| match *it {
        ClassItem::Char(b) => b == c,
        ClassItem::Range(lo, hi) => lo <= c && c <= hi,
        ClassItem::Named(n) => u8::try_from(c).is_ok_and(|b| n.matches(b)),
        ClassItem::Nothing => false,
    });
    hit != negated
}

/// Whether `tok` matches at `s[i]`; the number of bytes it takes.
fn one_matches(tok: &Tok, s: &[u8], i: usize) -> Option<usize> {
    match tok {
        Tok::Byte(b) => (*b == s[i]).then_some(1),
        Tok::One => Some(char_len(s, i)),
        Tok::Class { negated, items } => {
            let (c, n) = decode(s, i);
            class_matches(*negated, items, c).then_some(n)
        }
        Tok::Star | Tok::Ext { .. } => unreachable!("handled by the callers"),
    }
}

fn matches_from(toks: &[Tok], s: &[u8]) -> bool {
    let (mut p, mut i) = (0usize, 0usize);
    // Where to resume after the last star: (token after it, text position).
    let mut back: Option<(usize, usize)> = None;
    loop {
        if p < toks.len() {
            if toks[p] == Tok::Star {
                back = Some((p + 1, i));
                p += 1;
                continue;
            }
            if i < s.len()
                && let Some(n) = one_matches(&toks[p], s, i)
            {
                p += 1;
                i += n;
                continue;
            }
        } else if i == s.len() {
            return true;
        }
        match back {
            Some((bp, bi)) if bi < s.len() => {
                // The star takes one more character.
                let next = bi + char_len(s, bi);
                back = Some((bp, next));
                p = bp;
                i = next;
            }
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An extglob pattern with stars inside and outside a repeated group,
    /// against a text it does not match: each split is tried once (found
    /// by the rush-pattern fuzz target; it ran past libFuzzer's 10 s).
    #[test]
    fn nested_stars_in_a_repeated_group_take_polynomial_time() {
        let p = Pattern::compile_with(b"*+(*-t-|*-)|x", &[false; 13], true, false);
        let s = b"??(1/*?((\xff\xff)0/--".repeat(6);
        WALKS.with(|w| w.set(0));
        assert!(!p.matches(&s));
        let calls = WALKS.with(std::cell::Cell::get);
        assert!(
            calls < 2_000_000,
            "{calls} calls of walk for {} bytes",
            s.len()
        );
    }

    #[test]
    fn basics() {
        assert!(Pattern::new(b"*.rs").matches(b"main.rs"));
        assert!(!Pattern::new(b"*.rs").matches(b"main.rsx"));
        assert!(Pattern::new(b"a?c").matches(b"abc"));
        assert!(Pattern::new(b"[a-c]x").matches(b"bx"));
        assert!(Pattern::new(b"[!a-c]x").matches(b"dx"));
        assert!(!Pattern::new(b"[!a-c]x").matches(b"ax"));
        assert!(Pattern::new(b"[[:digit:]]*").matches(b"1abc"));
        assert!(Pattern::new(b"[]]").matches(b"]"));
        assert!(Pattern::new(b"[a-]").matches(b"-"));
        assert!(Pattern::new(b"[").matches(b"["));
        assert!(Pattern::new(b"\\*").matches(b"*"));
        assert!(!Pattern::new(b"\\*").matches(b"x"));
        assert!(Pattern::new(b"*a*b*c*").matches(b"xxaxxbxxcxx"));
        assert!(Pattern::new(b"").matches(b""));
        assert!(Pattern::new(b"*").matches(b""));
    }

    #[test]
    fn one_character_is_a_whole_utf8_character() {
        assert!(Pattern::new("?".as_bytes()).matches("μ".as_bytes()));
        assert!(Pattern::new("[μ]x".as_bytes()).matches("μx".as_bytes()));
        assert!(Pattern::new("[α-ω]".as_bytes()).matches("μ".as_bytes()));
        assert!(Pattern::new("*?".as_bytes()).matches("aμ".as_bytes()));
        assert!(!Pattern::new("??".as_bytes()).matches("μ".as_bytes()));
        // Bytes that are not UTF-8 still match one by one.
        assert!(Pattern::new(b"?").matches(b"\xff"));
    }

    #[test]
    fn quoted_bytes_are_literal() {
        let p = Pattern::compile(b"a*", &[false, true]);
        assert!(p.matches(b"a*"));
        assert!(!p.matches(b"ab"));
    }

    #[test]
    fn a_lone_bracket_is_not_a_pattern() {
        let m = |s: &str| {
            let mut m = Marked::default();
            m.push(s.as_bytes(), false);
            m
        };
        assert!(!m("[").has_magic(), "as in `[ -n x ]`");
        assert!(!m("a]").has_magic());
        assert!(m("[ab]").has_magic());
        assert!(m("*").has_magic());
        let mut q = Marked::default();
        q.push(b"*", true);
        assert!(!q.has_magic());
    }

    #[test]
    fn dot_files_need_a_dot() {
        assert!(!Pattern::new(b"*").matches_name(b".hidden", false));
        assert!(Pattern::new(b".*").matches_name(b".hidden", false));
        assert!(Pattern::new(b"*").matches_name(b".hidden", true));
    }
}
