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

/// The words `w` expands to (just `w` if it has no brace expression).
pub fn expand(w: &Word) -> Vec<Word> {
    let toks = flatten(w);
    let mut out = Vec::new();
    expand_toks(&toks, &mut out, 0);
    out.iter().map(|t| rebuild(t)).collect()
}

/// The most words one brace expression may produce (a guard against
/// `{1..999999999}`).
const MAX_WORDS: usize = 1 << 20;

fn expand_toks(toks: &[Tok], out: &mut Vec<Vec<Tok>>, depth: u32) {
    if depth > 64 || out.len() >= MAX_WORDS {
        out.push(toks.to_vec());
        return;
    }
    // The first `{` with a valid brace expression after it.
    for open in 0..toks.len() {
        if !matches!(toks[open], Tok::Char(b'{')) {
            continue;
        }
        let Some((close, items)) = parse_braces(toks, open) else {
            continue;
        };
        for item in items {
            let mut next = toks[..open].to_vec();
            next.extend(item);
            next.extend_from_slice(&toks[close + 1..]);
            expand_toks(&next, out, depth + 1);
        }
        return;
    }
    out.push(toks.to_vec());
}

/// The matching `}` of the `{` at `open`, and the alternatives inside: a
/// comma list (at least two items) or a sequence.
fn parse_braces(toks: &[Tok], open: usize) -> Option<(usize, Vec<Vec<Tok>>)> {
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
    let close = close?;
    if commas.is_empty() {
        return sequence(&toks[open + 1..close]).map(|items| (close, items));
    }
    let mut items = Vec::new();
    let mut start = open + 1;
    for c in commas.into_iter().chain(std::iter::once(close)) {
        items.push(toks[start..c].to_vec());
        start = c + 1;
    }
    Some((close, items))
}

/// `a..e`, `1..10`, `1..10..2`, `05..10`.
fn sequence(inner: &[Tok]) -> Option<Vec<Vec<Tok>>> {
    let text: Vec<u8> = inner
        .iter()
        .map(|t| match t {
            Tok::Char(c) => Some(*c),
            Tok::Part(_) => None,
        })
        .collect::<Option<_>>()?;
    let text = std::str::from_utf8(&text).ok()?;
    let fields: Vec<&str> = text.split("..").collect();
    if !(2..=3).contains(&fields.len()) {
        return None;
    }
    let step: i64 = match fields.get(2) {
        Some(s) => s.parse().ok()?,
        None => 1,
    };
    let chars = |t: Vec<u8>| -> Vec<Tok> { t.into_iter().map(Tok::Char).collect() };
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
        let step = step.unsigned_abs().max(1) as i64;
        let mut out = Vec::new();
        let mut v = a;
        loop {
            out.push(chars(format!("{v:0width$}").into_bytes()));
            if v == b || out.len() >= MAX_WORDS {
                break;
            }
            let next = if a <= b { v + step } else { v - step };
            if (a <= b && next > b) || (a > b && next < b) {
                break;
            }
            v = next;
        }
        return Some(out);
    }
    let (a, b) = (fields[0].as_bytes(), fields[1].as_bytes());
    if a.len() == 1 && b.len() == 1 && a[0].is_ascii_alphabetic() && b[0].is_ascii_alphabetic() {
        let step = step.unsigned_abs().max(1) as usize;
        let (x, y) = (a[0], b[0]);
        let range: Vec<u8> = if x <= y {
            (x..=y).step_by(step).collect()
        } else {
            (y..=x).rev().step_by(step).collect()
        };
        // A backslash in the range (`{Z..a}`) quotes nothing and is
        // removed: an empty word, as in bash.
        let tok = |c| match c {
            b'\\' => Tok::Part(Part::Single(Vec::new())),
            c => Tok::Char(c),
        };
        return Some(range.into_iter().map(|c| vec![tok(c)]).collect());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        expand(&Word::literal(s.as_bytes()))
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
    }
}
