//! Brace expansion (bash): `a{b,c}d` becomes `abd acd`, `{1..3}` becomes
//! `1 2 3`. It runs before every other expansion, on unquoted braces only,
//! and turns one word into several.

use crate::ast::{Part, Word};

/// A word, flattened: unquoted literal bytes one by one, other parts whole.
#[derive(Debug, Clone)]
enum Tok {
    Char(u8),
    Part(Part),
}

fn flatten(w: &Word) -> Vec<Tok> {
    let mut out = Vec::new();
    for p in &w.parts {
        match p {
            Part::Lit(b) => out.extend(b.iter().map(|&c| Tok::Char(c))),
            other => out.push(Tok::Part(other.clone())),
        }
    }
    out
}

fn rebuild(toks: &[Tok]) -> Word {
    let mut parts = Vec::new();
    let mut lit = Vec::new();
    for t in toks {
        match t {
            // bash expands braces in the text before it finds names: after
            // `$v{x,y}`, `$vx` names the variable vx.
            Tok::Char(c)
                if lit.is_empty()
                    && (c.is_ascii_alphanumeric() || *c == b'_')
                    && matches!(parts.last(), Some(Part::Param(p))
                        if p.bare && p.name.first().is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')) =>
            {
                if let Some(Part::Param(p)) = parts.last_mut() {
                    p.name.push(*c);
                }
            }
            Tok::Char(c) => lit.push(*c),
            Tok::Part(p) => {
                if !lit.is_empty() {
                    parts.push(Part::Lit(std::mem::take(&mut lit)));
                }
                parts.push(p.clone());
            }
        }
    }
    if !lit.is_empty() {
        parts.push(Part::Lit(lit));
    }
    Word { parts }
}

/// Whether the word has an unquoted `{` (a cheap test before the work).
pub fn may_expand(w: &Word) -> bool {
    w.parts
        .iter()
        .any(|p| matches!(p, Part::Lit(b) if b.contains(&b'{')))
}

/// A brace expression that would make more words than rush keeps in
/// memory: an error (bash tries, and the kernel kills it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooMany;

impl std::fmt::Display for TooMany {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "brace expansion: more than {MAX_WORDS} words or {MAX_BYTES} bytes"
        )
    }
}

/// The words `w` expands to (just `w` if it has no brace expression).
pub fn expand(w: &Word) -> Result<Vec<Word>, TooMany> {
    expand_within(w, MAX_WORDS, MAX_BYTES)
}

/// [`expand`] with other limits: the fuzz target uses smaller ones, so that
/// an input that reaches them takes seconds, not minutes, under the
/// sanitizer.
pub fn expand_within(w: &Word, max_words: usize, max_bytes: usize) -> Result<Vec<Word>, TooMany> {
    let toks = flatten(w);
    let mut out = Out {
        words: Vec::new(),
        bytes: 0,
        max_words,
        max_bytes,
    };
    expand_toks(&toks, &mut out, 0)?;
    Ok(out.words)
}

/// The most words, and the most bytes of text, one word's brace
/// expressions may make. `{1..4000000}` is allowed; the limits bound the
/// memory (`{1..999999999}`, `{a,b}` thirty times over), in words and in
/// bytes (`{a,b}` twenty times over a 1 MB word).
pub const MAX_WORDS: usize = 1 << 22;
pub const MAX_BYTES: usize = 1 << 28;

struct Out {
    words: Vec<Word>,
    bytes: usize,
    max_words: usize,
    max_bytes: usize,
}

impl Out {
    fn push(&mut self, toks: &[Tok]) -> Result<(), TooMany> {
        self.bytes += toks.len();
        if self.words.len() >= self.max_words || self.bytes > self.max_bytes {
            return Err(TooMany);
        }
        self.words.push(rebuild(toks));
        Ok(())
    }
}

fn expand_toks(toks: &[Tok], out: &mut Out, depth: u32) -> Result<(), TooMany> {
    if depth > 64 {
        return out.push(toks);
    }
    // The first `{` with a valid brace expression after it.
    for open in 0..toks.len() {
        if !matches!(toks[open], Tok::Char(b'{')) {
            continue;
        }
        let Some((close, items)) = parse_braces(toks, open, out.max_words)? else {
            continue;
        };
        let mut each = |item: &mut dyn Iterator<Item = Tok>| {
            let mut next = toks[..open].to_vec();
            next.extend(item);
            next.extend_from_slice(&toks[close + 1..]);
            expand_toks(&next, out, depth + 1)
        };
        match items {
            Items::List(ranges) => {
                for (a, b) in ranges {
                    each(&mut toks[a..b].iter().cloned())?;
                }
            }
            Items::Numbers { a, b, step, width } => {
                let mut v = a;
                loop {
                    each(
                        &mut format!("{v:0width$}")
                            .into_bytes()
                            .into_iter()
                            .map(Tok::Char),
                    )?;
                    let next = if a <= b {
                        v.checked_add(step).filter(|&n| n <= b)
                    } else {
                        v.checked_sub(step).filter(|&n| n >= b)
                    };
                    match next {
                        Some(n) if v != b => v = n,
                        _ => break,
                    }
                }
            }
            // A backslash in the range (`{Z..a}`) quotes nothing and is
            // removed: an empty word, as in bash.
            Items::Chars(range) => {
                for c in range {
                    each(&mut std::iter::once(match c {
                        b'\\' => Tok::Part(Part::Single(Vec::new())),
                        c => Tok::Char(c),
                    }))?;
                }
            }
        }
        return Ok(());
    }
    out.push(toks)
}

/// What a brace expression stands for, made one item at a time.
enum Items {
    /// A comma list: each item's tokens, as ranges of the word's.
    List(Vec<(usize, usize)>),
    /// `{a..b..step}`, each number `width` digits at least.
    Numbers {
        a: i64,
        b: i64,
        step: i64,
        width: usize,
    },
    /// `{x..y..step}` of letters.
    Chars(Vec<u8>),
}

/// The matching `}` of the `{` at `open`, and the alternatives inside: a
/// comma list (at least two items) or a sequence.
fn parse_braces(
    toks: &[Tok],
    open: usize,
    max_words: usize,
) -> Result<Option<(usize, Items)>, TooMany> {
    let mut depth = 0;
    let mut commas = Vec::new();
    let mut close = None;
    for (i, t) in toks.iter().enumerate().skip(open + 1) {
        match t {
            Tok::Char(b'{') => depth += 1,
            Tok::Char(b'}') if depth == 0 => {
                close = Some(i);
                break;
            }
            Tok::Char(b'}') => depth -= 1,
            Tok::Char(b',') if depth == 0 => commas.push(i),
            _ => {}
        }
    }
    let Some(close) = close else {
        return Ok(None);
    };
    if commas.is_empty() {
        return Ok(sequence(&toks[open + 1..close], max_words)?.map(|items| (close, items)));
    }
    let mut items = Vec::new();
    let mut start = open + 1;
    for c in commas.into_iter().chain(std::iter::once(close)) {
        items.push((start, c));
        start = c + 1;
    }
    Ok(Some((close, Items::List(items))))
}

/// `a..e`, `1..10`, `1..10..2`, `05..10`; too many numbers is an error
/// before any is made.
fn sequence(inner: &[Tok], max_words: usize) -> Result<Option<Items>, TooMany> {
    let Some(text) = inner
        .iter()
        .map(|t| match t {
            Tok::Char(c) => Some(*c),
            Tok::Part(_) => None,
        })
        .collect::<Option<Vec<u8>>>()
    else {
        return Ok(None);
    };
    let Ok(text) = std::str::from_utf8(&text) else {
        return Ok(None);
    };
    let fields: Vec<&str> = text.split("..").collect();
    if !(2..=3).contains(&fields.len()) {
        return Ok(None);
    }
    let step: i64 = match fields.get(2).map(|s| s.parse()) {
        Some(Ok(s)) => s,
        Some(Err(_)) => return Ok(None),
        None => 1,
    };
    if let (Ok(a), Ok(b)) = (fields[0].parse::<i64>(), fields[1].parse::<i64>()) {
        let pad = |s: &str| {
            let d = s.trim_start_matches('-');
            if d.len() > 1 && d.starts_with('0') {
                s.len()
            } else {
                0
            }
        };
        let width = pad(fields[0]).max(pad(fields[1]));
        let step = step.unsigned_abs().clamp(1, i64::MAX as u64) as i64;
        let count = (i128::from(a) - i128::from(b)).unsigned_abs() / step as u128 + 1;
        if count > max_words as u128 {
            return Err(TooMany);
        }
        return Ok(Some(Items::Numbers { a, b, step, width }));
    }
    let (a, b) = (fields[0].as_bytes(), fields[1].as_bytes());
    if a.len() == 1 && b.len() == 1 && a[0].is_ascii_alphabetic() && b[0].is_ascii_alphabetic() {
        let step = step.unsigned_abs().clamp(1, usize::MAX as u64) as usize;
        let (x, y) = (a[0], b[0]);
        let range: Vec<u8> = if x <= y {
            (x..=y).step_by(step).collect()
        } else {
            (y..=x).rev().step_by(step).collect()
        };
        return Ok(Some(Items::Chars(range)));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        expand(&Word::literal(s.as_bytes()))
            .unwrap()
            .iter()
            .map(|w| String::from_utf8(w.unquoted_text()).unwrap())
            .collect()
    }

    #[test]
    fn lists_and_sequences() {
        assert_eq!(words("a{b,c}d"), ["abd", "acd"]);
        assert_eq!(words("{a,b}{1,2}"), ["a1", "a2", "b1", "b2"]);
        assert_eq!(words("x{a,{b,c}}"), ["xa", "xb", "xc"]);
        assert_eq!(words("file{,.bak}"), ["file", "file.bak"]);
        assert_eq!(words("{1..3}"), ["1", "2", "3"]);
        assert_eq!(words("{3..1}"), ["3", "2", "1"]);
        assert_eq!(words("{1..10..4}"), ["1", "5", "9"]);
        assert_eq!(words("{08..10}"), ["08", "09", "10"]);
        assert_eq!(words("{a..c}"), ["a", "b", "c"]);
        assert_eq!(words("{a}"), ["{a}"]);
        assert_eq!(words("{}"), ["{}"]);
        assert_eq!(words("{a,b"), ["{a,b"]);
        assert_eq!(words("-{a,b}"), ["-a", "-b"]);
        assert_eq!(
            words("{9223372036854775806..9223372036854775807..5}"),
            ["9223372036854775806"]
        );
    }

    /// Found by libFuzzer (rush-brace): the word limit counted words, not
    /// the memory each item took, so `{{00..313333333}}` grew past 2 GB.
    /// Now a sequence too long is refused before any item is made, and
    /// products (`{a,b}{a,b}…`) stop at the limit with an error.
    #[test]
    fn too_many_words_is_an_error_not_a_truncation() {
        let w = |s: &str| Word::literal(s.as_bytes());
        let big = |s: &str| expand(&w(s)).map(|w| w.len());
        assert_eq!(big("-{{00..313333333}}"), Err(TooMany));
        assert_eq!(big("{1..99999999999}"), Err(TooMany));
        assert_eq!(
            big("{-9223372036854775808..9223372036854775807}"),
            Err(TooMany)
        );
        // The same rules with small limits (the real ones take seconds).
        let small = |s: &str| expand_within(&w(s), 1024, 16384).map(|w| w.len());
        assert_eq!(small(&"{a,b}".repeat(10)), Ok(1024));
        assert_eq!(small(&"{a,b}".repeat(11)), Err(TooMany));
        assert_eq!(small("{1..1024}"), Ok(1024));
        assert_eq!(small("{1..1025}"), Err(TooMany));
        assert_eq!(small(&format!("{{a,b}}{}", "x".repeat(9000))), Err(TooMany));
    }
}
