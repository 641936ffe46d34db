//! What the workloads search: the corpus (vendored once under
//! `target/corpus`), its sizes, and the queries drawn from it by class.

use anyhow::{Result, bail};
use greppy::protocol::SearchQuery;
use std::collections::{BTreeSet, HashMap};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The bytes of the files in a folder (not below it).
pub(crate) fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

/// The corpus: `target/corpus/vendor` (made once by `cargo vendor`) and the
/// toolchain's `library/` when rustup has it, in a git repository.
pub(crate) fn corpus() -> Result<PathBuf> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let repo = repo.canonicalize()?;
    let dir = repo.join("target/corpus");
    let vendor = dir.join("vendor");
    let done = dir.join(".vendored");
    if !done.exists() {
        let _ = std::fs::remove_dir_all(&vendor);
        std::fs::create_dir_all(&dir)?;
        let st = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
            .args(["vendor", "--versioned-dirs", "--quiet"])
            .arg(&vendor)
            .current_dir(&repo)
            .stdout(Stdio::null())
            .status()?;
        if !st.success() {
            bail!("cargo vendor failed: {st}");
        }
        std::fs::write(&done, "")?;
    }
    // A repository of its own, as an editor's workspace is: the ignore
    // files of the checkout that holds `target/` are no parent's of it
    // (rg then applies none of them, and `--no-ignore-parent` changes
    // nothing).
    if !dir.join(".git").exists() {
        let st = Command::new("git")
            .args(["init", "-q"])
            .arg(&dir)
            .status()?;
        if !st.success() {
            bail!("git init {} failed: {st}", dir.display());
        }
    }
    let library = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .map(|s| s.join("lib/rustlib/src/rust/library"))
        .filter(|l| l.is_dir());
    if let Some(lib) = library
        && !dir.join("rust-library").exists()
    {
        let st = Command::new("cp")
            .arg("-r")
            .arg(&lib)
            .arg(dir.join("rust-library"))
            .status()?;
        if !st.success() {
            bail!("copying {} failed", lib.display());
        }
    }
    Ok(dir)
}

/// One query: its class and rg's flags.
#[derive(Debug, Clone)]
pub(crate) struct Query {
    pub(crate) pattern: String,
    pub(crate) ignore_case: bool,
    pub(crate) word: bool,
}

impl Query {
    pub(crate) fn flags(&self) -> Vec<&str> {
        let mut v = Vec::new();
        if self.ignore_case {
            v.push("-i");
        }
        if self.word {
            v.push("-w");
        }
        v
    }

    /// The same search in zoekt's query language: content only, with
    /// case as rg's flags say (zoekt's own default is smart case).
    pub(crate) fn zoekt(&self) -> String {
        let case = if self.ignore_case { "no" } else { "yes" };
        let pattern = if self.word {
            format!(r"\b{}\b", self.pattern)
        } else {
            self.pattern.clone()
        };
        format!("case:{case} content:{pattern}")
    }

    pub(crate) fn search(&self, corpus: &Path, files: bool) -> SearchQuery {
        SearchQuery {
            pattern: self.pattern.clone(),
            path: corpus.as_os_str().as_bytes().to_vec(),
            ignore_case: self.ignore_case,
            word: self.word,
            files,
            ..SearchQuery::default()
        }
    }
}

pub(crate) fn tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|t| t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
}

/// The query classes, each a list of distinct queries drawn from the corpus.
pub(crate) fn queries(files: &[PathBuf]) -> Vec<(&'static str, Vec<Query>)> {
    // Fixed seeds: the queries are the same every run.
    let mut rng = fastrand::Rng::with_seed(14);
    let code: Vec<&PathBuf> = files
        .iter()
        .filter(|p| {
            p.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                ["rs", "c", "h", "py", "go", "js", "ts", "md", "toml"].contains(&e)
            })
        })
        .collect();
    let mut freq: HashMap<String, usize> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    for _ in 0..600.min(code.len()) {
        let p = code[rng.usize(..code.len())];
        let Ok(text) = std::fs::read_to_string(p) else {
            continue;
        };
        for t in tokens(&text) {
            let n = freq.entry(t.to_string()).or_insert(0);
            if *n == 0 {
                order.push(t.to_string());
            }
            *n += 1;
        }
    }
    let q = |p: String| Query {
        pattern: p,
        ignore_case: false,
        word: false,
    };
    let take = |f: &dyn Fn(&str, usize) -> bool, n: usize| -> Vec<String> {
        order
            .iter()
            .filter(|t| f(t, freq[*t]))
            .take(n)
            .cloned()
            .collect()
    };
    let selective = take(&|t, n| t.len() >= 12 && n <= 2, 800);
    let mut common: Vec<(String, usize)> = freq
        .iter()
        .filter(|(t, _)| (4..=8).contains(&t.len()) && t.chars().all(|c| c.is_ascii_lowercase()))
        .map(|(t, n)| (t.clone(), *n))
        .collect();
    common.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let common: Vec<String> = common.into_iter().take(300).map(|(t, _)| t).collect();
    let mid = take(&|t, n| (8..=14).contains(&t.len()) && n <= 5, 600);
    let short = take(&|t, _| (4..=8).contains(&t.len()), 300);
    let mut classes = vec![
        (
            "selective identifier",
            selective.iter().cloned().map(q).collect::<Vec<_>>(),
        ),
        ("common word", common.into_iter().map(q).collect()),
        (
            "case-insensitive (-i)",
            mid.iter()
                .take(300)
                .map(|t| Query {
                    pattern: t.to_lowercase(),
                    ignore_case: true,
                    word: false,
                })
                .collect(),
        ),
        (
            "whole word (-w)",
            short
                .into_iter()
                .map(|t| Query {
                    pattern: t,
                    ignore_case: false,
                    word: true,
                })
                .collect(),
        ),
        (
            "regex with literals",
            mid.iter()
                .skip(300)
                .enumerate()
                .map(|(i, t)| {
                    q(if i % 2 == 0 {
                        format!(r"{t}\s*\(")
                    } else {
                        format!(r"(fn|struct|enum|def|class)\s+{t}")
                    })
                })
                .collect(),
        ),
        (
            "regex without literals",
            (3..8)
                .flat_map(|k| (1..5).map(move |j| q(format!("[A-Z][a-z]{{{k}}}[0-9]{{{j}}}_"))))
                .collect(),
        ),
        (
            "no match",
            selective
                .iter()
                .take(300)
                .enumerate()
                .map(|(i, t)| q(format!("{t}_zqx{i}")))
                .collect(),
        ),
    ];
    classes.retain(|(_, v)| !v.is_empty());
    classes
}

/// A ranked query and the definition it spells.
pub(crate) struct Spelled {
    pub(crate) query: String,
    pub(crate) name: String,
}

/// Queries as a person types a definition they half remember: the words
/// of a sampled definition's name, lowercased, apart (`RetryPolicy`:
/// `retry policy`). Names of one word or under 8 characters are left out.
pub(crate) fn spelled_queries(files: &[PathBuf], n: usize) -> Vec<Spelled> {
    let code: Vec<&PathBuf> = files
        .iter()
        .filter(|f| greppy::chunk::Lang::of(f).is_some())
        .collect();
    let mut rng = fastrand::Rng::with_seed(0x05ee_df1d);
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    let mut tries = 0;
    while out.len() < n && tries < n * 50 && !code.is_empty() {
        tries += 1;
        let f = code[rng.usize(..code.len())];
        let Ok(bytes) = std::fs::read(f) else {
            continue;
        };
        if bytes.len() > greppy::chunk::MAX_PARSED {
            continue;
        }
        let defs: Vec<_> = greppy::chunk::chunks(f, &bytes)
            .into_iter()
            .filter(|c| c.is_definition() && c.name.len() >= 8)
            .collect();
        if defs.is_empty() {
            continue;
        }
        let d = &defs[rng.usize(..defs.len())];
        let words = greppy::rank::identifier_words(&d.name);
        if words.len() < 2 || !seen.insert(d.name.clone()) {
            continue;
        }
        out.push(Spelled {
            query: words.join(" "),
            name: d.name.clone(),
        });
    }
    out
}

/// The bytes of the files under `dir`.
pub(crate) fn walk_sizes(dir: &Path) -> Vec<u64> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => out.extend(walk_sizes(&e.path())),
                Ok(m) => out.push(m.len()),
                Err(_) => {}
            }
        }
    }
    out
}

/// The least that any trigram index of `root` does: walk it as rg does,
/// read every file, and for each file without a NUL byte mark each of its
/// windows' trigram in a bitmap and list the distinct ones, on every core.
/// No case folding, masks, filters, copies or posting lists.
pub(crate) fn trigram_floor(root: &Path) -> u64 {
    let files = greppy::search::walk_tree(root).files;
    let next = std::sync::atomic::AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut bits = vec![0u64; 1 << 18];
                    let mut seen: Vec<u32> = Vec::new();
                    let mut distinct = 0u64;
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(path) = files.get(i) else {
                            return distinct;
                        };
                        let Ok(text) = std::fs::read(path) else {
                            continue;
                        };
                        if text.contains(&0) {
                            continue;
                        }
                        let mut t = 0u32;
                        for (i, &b) in text.iter().enumerate() {
                            t = ((t << 8) | u32::from(b)) & 0xff_ffff;
                            let (w, bit) = ((t >> 6) as usize, 1u64 << (t & 63));
                            if i >= 2 && bits[w] & bit == 0 {
                                bits[w] |= bit;
                                seen.push(t);
                            }
                        }
                        distinct += seen.len() as u64;
                        for t in seen.drain(..) {
                            bits[(t >> 6) as usize] = 0;
                        }
                    }
                })
            })
            .collect();
        workers.into_iter().filter_map(|w| w.join().ok()).sum()
    })
}

/// Reads `regions` of `path` (all of it without them) into `buf`, as a
/// search reads a candidate.
pub(crate) fn read_parts(path: &Path, regions: Option<&greppy::index::Regions>, buf: &mut [u8]) {
    use std::os::unix::fs::FileExt;
    let Ok(f) = std::fs::File::open(path) else {
        return;
    };
    match regions {
        Some(r) => {
            for p in &r.parts {
                let n = usize::try_from(p.end - p.start).map_or(buf.len(), |n| n.min(buf.len()));
                let _ = f.read_at(&mut buf[..n], p.start);
            }
        }
        None => {
            let mut at = 0u64;
            while let Ok(n) = f.read_at(buf, at) {
                if n == 0 {
                    break;
                }
                at += n as u64;
            }
        }
    }
}
