//! greppy: what a local client sends (frames), what is read from disk
//! (index files), what any pattern plans to, and the command line.

use grep_matcher::Matcher;
use greppy::index::{BlockTest, Index};
use greppy::plan::{Query, plan_pattern};
use greppy::protocol::{Decoder, MAX_FRAME, Request, Response};
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

/// Bytes from a client, arriving in pieces of the sizes the first byte
/// picks: each frame decodes to a message or an error (which ends the
/// connection), and what the decoder holds stays within one frame's
/// limit.
pub fn greppy_frames(data: &[u8]) {
    let Some((&piece, bytes)) = data.split_first() else {
        return;
    };
    let piece = piece as usize % 64 + 1;
    for answers in [false, true] {
        let mut d = Decoder::new(MAX_FRAME);
        'conn: for chunk in bytes.chunks(piece) {
            d.push(chunk);
            loop {
                let r = if answers {
                    d.decode::<Response>().map(|m| m.is_some())
                } else {
                    d.decode::<Request>().map(|m| m.is_some())
                };
                match r {
                    Ok(true) => {}
                    Ok(false) => break,
                    Err(_) => break 'conn,
                }
            }
            assert!(
                d.pending() <= MAX_FRAME + 4 + piece,
                "the decoder holds too much"
            );
        }
    }
}

/// A few plans to ask an index with.
fn queries() -> Vec<Query> {
    [
        "fn",
        "needle",
        "a.*b",
        "(foo|bar)baz",
        "[0-9]+x",
        "(?i)Hello",
    ]
    .iter()
    .filter_map(|p| plan_pattern(p, false, false))
    .collect()
}

/// Any bytes as an index file (the seeds are real ones): opening gives an
/// error or an index, and every question to that index is answered
/// without a panic or a read out of bounds.
pub fn greppy_index(data: &[u8]) {
    let Ok(idx) = Index::from_vec(data.to_vec()) else {
        return;
    };
    let _ = (idx.len(), idx.trigrams(), idx.bytes(), idx.source_bytes());
    let _ = (idx.built_at(), idx.is_empty(), idx.files().count());
    let qs = queries();
    for q in &qs {
        let ids = idx.candidate_ids(q);
        assert!(ids.iter().all(|&i| (i as usize) < idx.len()));
    }
    for id in 0..idx.len().min(64) {
        let path = idx.file(id).to_path_buf();
        let _ = idx.find(&path);
        let _ = idx.under(path.parent().unwrap_or(&path));
        let size = idx.size(id);
        let _ = idx.keeps(id);
        let _ = idx.kept(id, 0..size.min(1 << 16));
        let _ = idx.kept(id, size / 2..size);
        for q in &qs {
            let test = BlockTest::new(q);
            if let Some(regions) = idx.regions(id, &test) {
                for r in regions.parts.iter().take(8) {
                    let _ = idx.kept(id, r.start..r.end);
                }
            }
        }
    }
}

/// rg's default matcher for a pattern, as greppy's full search builds it
/// for `-F` and `-i` alone: line by line, Unicode on.
fn matcher(pattern: &str, fixed: bool, ignore_case: bool) -> Option<grep_regex::RegexMatcher> {
    grep_regex::RegexMatcherBuilder::new()
        .multi_line(true)
        .fixed_strings(fixed)
        .unicode(true)
        .octal(false)
        .case_insensitive(ignore_case)
        .line_terminator(Some(b'\n'))
        .dot_matches_new_line(false)
        .build(pattern)
        .ok()
}

/// No false negatives: a pattern (first byte: flags; then the pattern, a
/// NUL, a file's content). If the pattern matches the content, the index
/// of that one file names it as a candidate, and the line that matches
/// lies in a region the blocks let through.
pub fn greppy_plan(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let Some(nul) = rest.iter().position(|&b| b == 0) else {
        return;
    };
    let Ok(pattern) = std::str::from_utf8(&rest[..nul]) else {
        return;
    };
    let content = &rest[nul + 1..];
    let (fixed, ignore_case) = (flags & 1 != 0, flags & 2 != 0);
    let Some(m) = matcher(pattern, fixed, ignore_case) else {
        return;
    };
    // rg searches up to the first NUL (and reports nothing if it comes in
    // the first page): what it could report lies before it.
    let searched = match content.iter().position(|&b| b == 0) {
        Some(n) if n < 4096 => return,
        Some(n) => &content[..n],
        None => content,
    };
    let Ok(Some(found)) = m.find(searched) else {
        return;
    };
    let Some(q) = plan_pattern(pattern, fixed, ignore_case) else {
        panic!("{pattern:?} compiles but does not plan");
    };
    let dir = tempfile::tempdir().expect("a scratch folder");
    let file = dir.path().join("f");
    std::fs::write(&file, content).expect("the file is written");
    let idx = Index::build(vec![file]);
    assert_eq!(
        idx.candidate_ids(&q),
        vec![0],
        "{pattern:?} (fixed {fixed}, ignore case {ignore_case}) matches, but the index says no"
    );
    if let Some(regions) = idx.regions(0, &BlockTest::new(&q)) {
        let at = found.start() as u64;
        assert!(
            regions
                .parts
                .iter()
                .any(|r| r.start <= at && at < r.end.max(r.start + 1)),
            "{pattern:?}: the match at {at} lies in no region the blocks let through"
        );
    }
}

/// Any command line (arguments separated by NULs, not necessarily UTF-8)
/// is parsed, resolved and planned, or refused with an error: no panic.
pub fn greppy_flags(data: &[u8]) {
    let mut args: Vec<OsString> = vec!["greppy".into()];
    args.extend(
        data.split(|&b| b == 0)
            .map(|a| OsString::from_vec(a.to_vec())),
    );
    let Ok(mut cli) = <greppy::flags::Cli as clap::Parser>::try_parse_from(args) else {
        return;
    };
    if cli.resolve().is_err() {
        return;
    }
    let _ = cli.filters();
    let _ = cli.rg.engine();
    let pattern = cli.pattern();
    let _ = plan_pattern(&pattern, cli.fixed_given, cli.ignore_case);
}
