//! The index changes which files are read, never the answer: over 1,000
//! sampled queries (identifiers, case-insensitive, whole words, literal
//! strings, regexes with and without literals, patterns that match
//! nothing), the (file, line) pairs found through the index equal a full
//! scan's, and those equal ripgrep's on the same tree.

use fastrand::Rng;
use greppy::index::Index;
use greppy::plan::plan_pattern;
use greppy::search::{self, Filters, Pattern};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One of `v`, at random.
fn pick<'a, T>(rng: &mut Rng, v: &'a [T]) -> &'a T {
    &v[rng.usize(..v.len())]
}

fn vocabulary(rng: &mut Rng) -> Vec<String> {
    let syl = [
        "ret", "ry", "po", "li", "cy", "han", "dle", "con", "fig", "par", "se", "buf", "fer",
        "sock", "et", "time", "out", "load", "save", "err", "or", "node", "tree", "walk", "idx",
    ];
    let mut words = BTreeSet::new();
    while words.len() < 400 {
        let n = 2 + rng.u64(..) % 3;
        let mut w = String::new();
        for i in 0..n {
            let s = *pick(rng, &syl);
            if i > 0 && rng.u64(..).is_multiple_of(3) {
                w.push('_');
            }
            if i > 0 && rng.u64(..).is_multiple_of(4) {
                let mut c = s.chars();
                let first = c.next().unwrap().to_ascii_uppercase();
                w.push(first);
                w.push_str(c.as_str());
            } else {
                w.push_str(s);
            }
        }
        words.insert(w);
    }
    words.into_iter().collect()
}

fn corpus(root: &Path, words: &[String], rng: &mut Rng) {
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".gitignore"), "ignored/\n").unwrap();
    for f in 0..300 {
        let dir = root
            .join(format!("d{}", f % 10))
            .join(format!("s{}", f % 3));
        std::fs::create_dir_all(&dir).unwrap();
        let mut text = String::new();
        for _ in 0..(30 + rng.u64(..) % 50) {
            let line = match rng.u64(..) % 6 {
                0 => format!(
                    "fn {}({}: u32) -> {} {{",
                    pick(rng, words),
                    pick(rng, words),
                    pick(rng, words)
                ),
                1 => format!(
                    "    let {} = {}::{}({});",
                    pick(rng, words),
                    pick(rng, words).to_uppercase(),
                    pick(rng, words),
                    rng.u64(..) % 100000
                ),
                2 => format!(
                    "    // TODO {} {} {}",
                    pick(rng, words),
                    pick(rng, words),
                    pick(rng, words)
                ),
                3 => format!(
                    "    {}.{}(\"{} {}\");",
                    pick(rng, words),
                    pick(rng, words),
                    pick(rng, words),
                    pick(rng, words)
                ),
                4 => String::new(),
                _ => format!("}} // {}", rng.u64(..) % 10000),
            };
            text.push_str(&line);
            text.push('\n');
        }
        std::fs::write(dir.join(format!("f{f}.rs")), text).unwrap();
    }
    // What the index cannot speak for, and what rg leaves out.
    let mut big = String::new();
    while big.len() < 2_200_000 {
        big.push_str(&format!("{} {}\n", pick(rng, words), rng.u64(..)));
    }
    std::fs::write(root.join("big.txt"), big).unwrap();
    std::fs::write(
        root.join("blob.bin"),
        format!("{}\x00{}\n", words[0], words[1]),
    )
    .unwrap();
    std::fs::create_dir_all(root.join("ignored")).unwrap();
    std::fs::write(root.join("ignored/x.rs"), format!("{}\n", words[2])).unwrap();
    std::fs::write(root.join(".hidden.rs"), format!("{}\n", words[3])).unwrap();
}

fn queries(words: &[String], rng: &mut Rng) -> Vec<Pattern> {
    let p = |pattern: String| Pattern {
        pattern,
        ..Pattern::default()
    };
    let mut out = Vec::new();
    for _ in 0..300 {
        out.push(p(pick(rng, words).clone()));
    }
    for _ in 0..150 {
        out.push(Pattern {
            ignore_case: true,
            ..p(pick(rng, words).to_uppercase())
        });
    }
    for _ in 0..150 {
        out.push(Pattern {
            word: true,
            ..p(pick(rng, words).clone())
        });
    }
    for _ in 0..100 {
        out.push(Pattern {
            fixed: true,
            ..p(format!("{}(", pick(rng, words)))
        });
    }
    for i in 0..150 {
        let (a, b) = (pick(rng, words).clone(), pick(rng, words).clone());
        out.push(p(match i % 5 {
            0 => format!(r"{a}\w*"),
            1 => format!("{a}|{b}"),
            2 => format!(r"fn\s+{a}"),
            3 => format!(r"{a}\(\d+\)"),
            _ => format!("[a-f]{a}"),
        }));
    }
    let no_literals = [
        r"\d{4}",
        r"[A-Z]{3}_\d",
        r"^\s+$",
        r"\(\d\)",
        r"[xyz]{3}",
        r"\w+::\w+\(\d{5}\)",
    ];
    for i in 0..50 {
        out.push(p(no_literals[i % no_literals.len()].to_string()));
    }
    for i in 0..100 {
        out.push(p(format!("zq{i}xy_never")));
    }
    out
}

fn rg(root: &Path, q: &Pattern) -> Option<BTreeSet<(PathBuf, u64)>> {
    let mut c = Command::new("rg");
    c.args(["-n", "--no-heading", "--with-filename", "--color", "never"]);
    if q.fixed {
        c.arg("-F");
    }
    if q.ignore_case {
        c.arg("-i");
    }
    if q.word {
        c.arg("-w");
    }
    let out = c.arg("-e").arg(&q.pattern).arg(root).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    Some(
        text.lines()
            .filter_map(|l| {
                let mut it = l.splitn(3, ':');
                Some((PathBuf::from(it.next()?), it.next()?.parse().ok()?))
            })
            .collect(),
    )
}

#[test]
fn index_answers_equal_a_scan_and_ripgrep() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // A fixed seed: the test is the same every run.
    let mut rng = Rng::with_seed(0x9e3779b97f4a7c15);
    let words = vocabulary(&mut rng);
    corpus(root, &words, &mut rng);
    let (files, errors) = search::walk(&[root.to_path_buf()], &Filters::default()).unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    // Built, saved and mapped again: the queries use what a restarted
    // process would read.
    let saved = dir.path().join("greppy.idx");
    Index::build(files.clone()).save(&saved).unwrap();
    let index = Index::open(&saved).unwrap();
    let have_rg = Command::new("rg").arg("--version").output().is_ok();
    let qs = queries(&words, &mut rng);
    assert!(qs.len() >= 1000);
    let (mut read, mut matched, mut selective) = (0usize, 0usize, 0usize);
    let (mut region_bytes, mut blocked_bytes) = (0u64, 0u64);
    for (i, q) in qs.iter().enumerate() {
        let plan = plan_pattern(&q.pattern, q.fixed, q.ignore_case).unwrap();
        let candidates = index.candidates(&plan);
        if i < 300 {
            read += candidates.len();
            selective += 1;
        }
        let via_index = search::lines(candidates, q).unwrap();
        let scanned =
            search::lines(files.iter().map(PathBuf::as_path).collect::<Vec<_>>(), q).unwrap();
        assert_eq!(via_index, scanned, "query {q:?}, plan {plan:?}");
        // As the daemon reads them: a large file only where its blocks
        // may hold a match.
        let matcher = q.matcher().unwrap();
        let mut via_regions = Vec::new();
        for id in index.candidate_ids(&plan) {
            let path = index.file(id as usize);
            let regions = index.regions(id as usize, &greppy::index::BlockTest::new(&plan));
            if let Some(r) = &regions
                && i < 300
            {
                region_bytes += r.parts.iter().map(|p| p.end - p.start).sum::<u64>();
                blocked_bytes += index.size(id as usize);
            }
            for (n, _) in search::file_lines(&matcher, path, regions.as_ref(), None) {
                via_regions.push((path.to_path_buf(), n));
            }
        }
        assert_eq!(
            via_regions, scanned,
            "query {q:?} by regions, plan {plan:?}"
        );
        if i < 300 {
            matched += scanned
                .iter()
                .map(|(p, _)| p)
                .collect::<BTreeSet<_>>()
                .len();
        }
        if have_rg {
            let got: BTreeSet<(PathBuf, u64)> = scanned.into_iter().collect();
            assert_eq!(Some(got), rg(root, q), "rg and greppy differ on {q:?}");
        }
    }
    // The index is worth having: for an identifier it reads little more
    // than the files that match (all of a word's trigrams can occur
    // without the word), plus the two files it cannot speak for.
    let (r, m) = (
        read as f64 / selective as f64,
        matched as f64 / selective as f64,
    );
    eprintln!(
        "per identifier: {r:.1} files read, {m:.1} match, of {}",
        files.len()
    );
    assert!(
        r <= 1.5 * m + 2.0,
        "{r:.1} files read for {m:.1} that match"
    );
    // The large file's lines are words of the same small vocabulary, so
    // most of its blocks may match most words: what its regions save is
    // measured on the benchmark's corpus, and here they are only exact.
    eprintln!("of large candidate files, {region_bytes} of {blocked_bytes} bytes read");
    assert!(blocked_bytes > 0 && region_bytes <= blocked_bytes);
}
