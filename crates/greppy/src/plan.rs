//! A regular expression to a trigram query: which trigrams every match must
//! contain, as an AND/OR tree. The index answers the query with the files
//! that may match; the matcher then reads only those. A plan may let too
//! many files through, never too few: whatever it cannot reason about
//! becomes "any file".
//!
//! The analysis follows Russ Cox's for Google Code Search: each piece of
//! the regex is summarised by the set of exact strings it can match, while
//! that set stays small, and otherwise by a query its matches satisfy.
//! Trigrams are taken in ASCII lower case, as the index stores them, so one
//! plan serves case-sensitive and case-insensitive searches alike.

use regex_syntax::hir::{Class, Hir, HirKind};
use std::collections::BTreeSet;

/// A trigram: three bytes, ASCII lower case.
pub type Trigram = u32;

/// What a matching file must contain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    /// Any file may match.
    All,
    Tri(Trigram),
    /// The trigram, followed somewhere in the file by this byte (matched
    /// by the index's per-posting masks, which may let more through).
    Next(Trigram, u8),
    And(Vec<Query>),
    Or(Vec<Query>),
}

impl Query {
    /// Whether a file may match, given `has(t, next)`: whether it holds
    /// trigram `t` (followed by byte `next`, if one is asked).
    pub fn admits(&self, has: &dyn Fn(Trigram, Option<u8>) -> bool) -> bool {
        match self {
            Query::All => true,
            Query::Tri(t) => has(*t, None),
            Query::Next(t, b) => has(*t, Some(*b)),
            Query::And(qs) => qs.iter().all(|q| q.admits(has)),
            Query::Or(qs) => qs.iter().any(|q| q.admits(has)),
        }
    }
}

/// The trigram of three bytes, lower-cased.
pub fn trigram(a: u8, b: u8, c: u8) -> Trigram {
    (u32::from(a.to_ascii_lowercase()) << 16)
        | (u32::from(b.to_ascii_lowercase()) << 8)
        | u32::from(c.to_ascii_lowercase())
}

/// How many exact strings a piece may stand for before it is summarised
/// by a query instead.
const MAX_SET: usize = 64;
/// How many characters a class may have to be enumerated.
const MAX_CLASS: usize = 8;

/// A piece of the regex: the strings it matches exactly (if few), and a
/// query every one of its matches satisfies.
#[derive(Debug, Clone)]
struct Info {
    exact: Option<BTreeSet<Vec<u8>>>,
    query: Query,
}

fn and(a: Query, b: Query) -> Query {
    match (a, b) {
        (Query::All, q) | (q, Query::All) => q,
        (Query::And(mut x), Query::And(y)) => {
            x.extend(y);
            Query::And(x)
        }
        (Query::And(mut x), q) | (q, Query::And(mut x)) => {
            x.push(q);
            Query::And(x)
        }
        (a, b) => Query::And(vec![a, b]),
    }
}

fn or(qs: Vec<Query>) -> Query {
    if qs.is_empty() || qs.contains(&Query::All) {
        return Query::All;
    }
    if qs.len() == 1 {
        return qs.into_iter().next().unwrap_or(Query::All);
    }
    Query::Or(qs)
}

/// The query "contains one of these strings".
fn strings(set: &BTreeSet<Vec<u8>>) -> Query {
    let mut alts = Vec::with_capacity(set.len());
    for s in set {
        if s.len() < 3 || s.contains(&b'\n') {
            return Query::All;
        }
        let mut tris: Vec<Trigram> = s.windows(3).map(|w| trigram(w[0], w[1], w[2])).collect();
        tris.sort_unstable();
        tris.dedup();
        // Each trigram but the last is followed by the string's next byte.
        let mut next: Vec<(Trigram, u8)> = s
            .windows(4)
            .map(|w| (trigram(w[0], w[1], w[2]), w[3].to_ascii_lowercase()))
            .collect();
        next.sort_unstable();
        next.dedup();
        let mut all: Vec<Query> = tris.into_iter().map(Query::Tri).collect();
        all.extend(next.into_iter().map(|(t, b)| Query::Next(t, b)));
        alts.push(Query::And(all));
    }
    or(alts)
}

impl Info {
    fn exact(set: BTreeSet<Vec<u8>>) -> Self {
        Info {
            exact: Some(set),
            query: Query::All,
        }
    }

    fn anything() -> Self {
        Info {
            exact: None,
            query: Query::All,
        }
    }

    /// The query alone, the exact set folded in.
    fn finish(self) -> Query {
        match self.exact {
            Some(set) => and(self.query, strings(&set)),
            None => self.query,
        }
    }
}

fn lower(b: &[u8]) -> Vec<u8> {
    b.to_ascii_lowercase()
}

fn analyse(h: &Hir) -> Info {
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => Info::exact(BTreeSet::from([Vec::new()])),
        HirKind::Literal(l) => Info::exact(BTreeSet::from([lower(&l.0)])),
        HirKind::Class(Class::Unicode(c)) => {
            let n: usize = c
                .ranges()
                .iter()
                .map(|r| (r.end() as usize) - (r.start() as usize) + 1)
                .sum();
            if n > MAX_CLASS {
                return Info::anything();
            }
            let mut set = BTreeSet::new();
            for r in c.ranges() {
                for ch in r.start()..=r.end() {
                    let mut buf = [0u8; 4];
                    set.insert(lower(ch.encode_utf8(&mut buf).as_bytes()));
                }
            }
            Info::exact(set)
        }
        HirKind::Class(Class::Bytes(c)) => {
            let n: usize = c
                .ranges()
                .iter()
                .map(|r| usize::from(r.end()) - usize::from(r.start()) + 1)
                .sum();
            if n > MAX_CLASS {
                return Info::anything();
            }
            let set = c
                .ranges()
                .iter()
                .flat_map(|r| r.start()..=r.end())
                .map(|b| vec![b.to_ascii_lowercase()])
                .collect();
            Info::exact(set)
        }
        HirKind::Capture(c) => analyse(&c.sub),
        HirKind::Repetition(r) => {
            if r.min == 0 {
                return Info::anything();
            }
            let sub = analyse(&r.sub);
            if r.min == 1 && r.max == Some(1) {
                return sub;
            }
            // At least one copy: whatever one copy needs.
            Info {
                exact: None,
                query: sub.finish(),
            }
        }
        HirKind::Concat(parts) => {
            let mut query = Query::All;
            // The exact strings of the run of pieces since the last one
            // that had none; `whole`: that run is the entire concatenation.
            let mut run: BTreeSet<Vec<u8>> = BTreeSet::from([Vec::new()]);
            let mut whole = true;
            for p in parts {
                let info = analyse(p);
                match info.exact {
                    Some(set) if run.len() * set.len() <= MAX_SET => {
                        run = run
                            .iter()
                            .flat_map(|a| set.iter().map(move |b| [a.as_slice(), b].concat()))
                            .collect();
                    }
                    Some(set) => {
                        query = and(query, strings(&run));
                        run = set;
                        whole = false;
                    }
                    None => {
                        query = and(query, strings(&run));
                        query = and(query, info.query);
                        run = BTreeSet::from([Vec::new()]);
                        whole = false;
                    }
                }
            }
            if whole {
                Info::exact(run)
            } else {
                Info {
                    exact: None,
                    query: and(query, strings(&run)),
                }
            }
        }
        HirKind::Alternation(alts) => {
            let infos: Vec<Info> = alts.iter().map(analyse).collect();
            if infos.iter().all(|i| i.exact.is_some()) {
                let union: BTreeSet<Vec<u8>> = infos
                    .iter()
                    .flat_map(|i| i.exact.iter().flatten().cloned())
                    .collect();
                if union.len() <= MAX_SET {
                    return Info::exact(union);
                }
            }
            Info {
                exact: None,
                query: or(infos.into_iter().map(Info::finish).collect()),
            }
        }
    }
}

/// The query for a parsed regex.
pub fn plan(h: &Hir) -> Query {
    analyse(h).finish()
}

/// Whether `pattern` is a plain word: letters, digits and underscores (the
/// common search), which as a regex means itself.
pub fn plain_word(pattern: &str) -> bool {
    !pattern.is_empty()
        && pattern
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Parses `pattern` as the matcher will (literal with `fixed`, case folding
/// with `ignore_case`) and plans it; `None` if it does not parse (the
/// matcher reports that error).
pub fn plan_pattern(pattern: &str, fixed: bool, ignore_case: bool) -> Option<Query> {
    // A literal with its case kept, or a plain word, parses to itself:
    // planned with no parse.
    if !ignore_case && (fixed || plain_word(pattern)) {
        return Some(Info::exact(BTreeSet::from([lower(pattern.as_bytes())])).finish());
    }
    plan_parsed(pattern, fixed, ignore_case)
}

/// [`plan_pattern`] by parsing the pattern, always.
fn plan_parsed(pattern: &str, fixed: bool, ignore_case: bool) -> Option<Query> {
    let text = if fixed {
        regex_syntax::escape(pattern)
    } else {
        pattern.to_string()
    };
    let hir = regex_syntax::ParserBuilder::new()
        .case_insensitive(ignore_case)
        .utf8(false)
        .build()
        .parse(&text)
        .ok()?;
    Some(plan(&hir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Query {
        let b = s.as_bytes();
        Query::Tri(trigram(b[0], b[1], b[2]))
    }

    fn next(s: &str, n: u8) -> Query {
        let b = s.as_bytes();
        Query::Next(trigram(b[0], b[1], b[2]), n)
    }

    /// A literal or a plain word planned with no parse is planned as the
    /// parse plans it.
    #[test]
    fn a_word_planned_without_a_parse_is_planned_as_parsed() {
        let long = "x_".repeat(300);
        let patterns = [
            "get_attestation",
            "ab",
            "abc",
            "ABCDEF",
            "a1_b2_c3",
            long.as_str(),
            "",
            "RetryPolicy::new(",
            "a.b[",
            "line\nbreak",
            "caf\u{e9}_retry",
            "\u{212A}elvin",
            "tab\there",
        ];
        for p in patterns {
            for fixed in [false, true] {
                let parsed = plan_parsed(p, fixed, false);
                if fixed || parsed.is_some() {
                    assert_eq!(plan_pattern(p, fixed, false), parsed, "{p:?} fixed {fixed}");
                }
                // With case folded, always parsed.
                assert_eq!(plan_pattern(p, fixed, true), plan_parsed(p, fixed, true));
            }
        }
    }

    #[test]
    fn literals_need_their_trigrams() {
        // Both trigrams, and "abc" followed by "d".
        assert_eq!(
            plan_pattern("abcd", false, false),
            Some(Query::And(vec![t("abc"), t("bcd"), next("abc", b'd')]))
        );
        assert_eq!(plan_pattern("ab", false, false), Some(Query::All));
        // Case does not change the plan: the index is lower case.
        assert_eq!(
            plan_pattern("ABCD", false, true),
            plan_pattern("abcd", false, false)
        );
    }

    #[test]
    fn alternation_and_classes() {
        let q = plan_pattern("foo|bar", false, false).unwrap();
        assert_eq!(
            q,
            Query::Or(vec![Query::And(vec![t("bar")]), Query::And(vec![t("foo")])])
        );
        // A small class expands: [ab]cd is "acd" or "bcd".
        let q = plan_pattern("[ab]cd", false, false).unwrap();
        assert_eq!(
            q,
            Query::Or(vec![Query::And(vec![t("acd")]), Query::And(vec![t("bcd")])])
        );
        // A large one cannot.
        assert_eq!(plan_pattern(r"\w+", false, false), Some(Query::All));
    }

    #[test]
    fn optional_parts_constrain_nothing() {
        assert_eq!(plan_pattern("(abc)?", false, false), Some(Query::All));
        let q = plan_pattern(r"abc\w*def", false, false).unwrap();
        assert_eq!(q, Query::And(vec![t("abc"), t("def")]));
        assert_eq!(plan_pattern("[", false, false), None);
        assert_eq!(
            plan_pattern("a.b[", true, false),
            Some(Query::And(vec![t(".b["), t("a.b"), next("a.b", b'[')]))
        );
    }
}
