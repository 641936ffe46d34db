//! The code map's rule (ARCHITECTURE.md): in every crate, the files' `use
//! crate::` arrows point one way, with no circle but the one pair that
//! ARCHITECTURE.md names deliberate; and no source file is too long to hold.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The circles ARCHITECTURE.md names deliberate: (crate's `src`, modules).
const DELIBERATE: &[(&str, &[&str])] = &[("crates/pyloop/src", &["core", "core::handle"])];

/// Every `src` directory of a crate in the workspace.
fn source_dirs() -> Vec<PathBuf> {
    let root = root();
    let mut out = vec![root.join("xtask/src"), root.join("fuzz/src")];
    for group in ["crates", "benches"] {
        for e in std::fs::read_dir(root.join(group)).unwrap().flatten() {
            let src = e.path().join("src");
            if src.is_dir() {
                out.push(src);
            }
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// A file's module path (`shell::exec`; the root is `crate`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    if parts.is_empty() {
        "crate".into()
    } else {
        parts.join("::")
    }
}

/// The paths after each `prefix` (`crate::`, `super::`) in `text`.
fn paths_after<'a>(text: &'a str, prefix: &str) -> Vec<Vec<&'a str>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(prefix) {
        let before = rest[..i].chars().next_back();
        rest = &rest[i + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        let path: Vec<&str> = rest[..end]
            .split("::")
            .take_while(|s| s.starts_with(|c: char| c.is_ascii_lowercase() || c == '_'))
            .collect();
        out.push(path);
    }
    out
}

/// Each module's arrows to the other modules of its crate.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let texts: BTreeMap<String, String> = files
        .iter()
        .map(|f| (module_of(src, f), std::fs::read_to_string(f).unwrap()))
        .collect();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, text) in &texts {
        // A file's unit tests may use anything.
        let text = text.split("#[cfg(test)]\nmod tests").next().unwrap();
        let arrows = g.entry(m.clone()).or_default();
        for path in paths_after(text, "crate::") {
            for k in (1..=path.len()).rev() {
                let cand = path[..k].join("::");
                if texts.contains_key(&cand) {
                    if &cand != m {
                        arrows.insert(cand);
                    }
                    break;
                }
            }
        }
        if let Some((parent, _)) = m.rsplit_once("::") {
            for path in paths_after(text, "super::") {
                let sibling = path.first().map(|s| format!("{parent}::{s}"));
                match sibling {
                    Some(s) if texts.contains_key(&s) && &s != m => arrows.insert(s),
                    _ => arrows.insert(parent.to_string()),
                };
            }
        } else if m != "crate" {
            for path in paths_after(text, "super::") {
                if path.first().is_some_and(|s| texts.contains_key(*s)) {
                    arrows.insert(path[0].to_string());
                }
            }
        }
    }
    g
}

/// The strongly connected components of more than one module (Tarjan).
fn circles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    struct State<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<BTreeSet<String>>,
    }
    fn strong<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                strong(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                comp.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !s.index.contains_key(v.as_str()) {
            strong(&mut s, v);
        }
    }
    s.out
}

#[test]
fn no_crate_has_a_circle_of_imports_but_the_deliberate_one() {
    let root = root();
    let mut found = Vec::new();
    for src in source_dirs() {
        let rel = src
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        for c in circles(&graph(&src)) {
            let allowed = DELIBERATE.iter().any(|(dir, mods)| {
                *dir == rel && c == mods.iter().map(|m| m.to_string()).collect()
            });
            if !allowed {
                found.push(format!("{rel}: {c:?}"));
            }
        }
    }
    assert!(found.is_empty(), "circles of imports: {found:#?}");
}

/// The check finds a circle where there is one: two files of a made-up
/// crate that use each other, and a child that uses its parent's sibling.
#[test]
fn the_check_finds_a_circle_of_two_files() {
    let dir = std::env::temp_dir().join(format!("layers-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("b")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod b;\nmod c;\n").unwrap();
    std::fs::write(src.join("a.rs"), "use crate::b::Thing;\n").unwrap();
    std::fs::write(src.join("b/mod.rs"), "mod inner;\npub struct Thing;\n").unwrap();
    std::fs::write(src.join("b/inner.rs"), "use crate::a;\n").unwrap();
    std::fs::write(
        src.join("c.rs"),
        "// crate::a in a comment is still an arrow\n",
    )
    .unwrap();
    let g = graph(&src);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(g["a"], BTreeSet::from(["b".to_string()]));
    assert_eq!(g["b::inner"], BTreeSet::from(["a".to_string()]));
    let found = circles(&g);
    assert!(found.is_empty(), "{found:?}");
    let mut g = g;
    g.get_mut("b").unwrap().insert("a".into());
    assert_eq!(
        circles(&g),
        vec![BTreeSet::from(["a".to_string(), "b".to_string()])]
    );
}

/// Files a reader can hold: no source file over 1,500 lines (tests, in
/// `tests/`, may be longer).
#[test]
fn no_source_file_is_over_1500_lines() {
    let root = root();
    let mut long = Vec::new();
    for src in source_dirs() {
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for f in files {
            let n = std::fs::read_to_string(&f).unwrap().lines().count();
            if n > 1500 {
                long.push(format!("{}: {n}", f.strip_prefix(&root).unwrap().display()));
            }
        }
    }
    assert!(long.is_empty(), "files over 1,500 lines: {long:#?}");
}
