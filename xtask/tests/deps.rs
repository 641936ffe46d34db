//! xtask's list of what the tests need is whole: every package a test
//! names in its "apt-get install PKG" message, and every program a test or
//! xtask runs by name, is in `xtask::deps` (installed by `cargo xtask test`
//! before anything is built) or is on every Debian machine.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The sources that run tests or programs: Rust, Python and JavaScript,
/// build output and installed packages left out.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "target" || name == "node_modules" {
            continue;
        }
        if p.is_dir() {
            sources(&p, out);
        } else if [".rs", ".py", ".js", ".mjs"]
            .iter()
            .any(|x| name.ends_with(x))
        {
            out.push(p);
        }
    }
}

fn all_sources() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for d in ["crates", "benches", "python", "node", "xtask/src"] {
        sources(&root().join(d), &mut files);
    }
    assert!(files.len() > 50, "{}", files.len());
    files
}

/// The packages named after each "apt install" or "apt-get install" in
/// `text` (flags skipped; a word that is not a package name ends the list).
fn apt_packages(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for marker in ["apt install ", "apt-get install "] {
        for (i, _) in text.match_indices(marker) {
            for word in text[i + marker.len()..].split([' ', '\n']) {
                if word.starts_with('-') {
                    continue;
                }
                let name = word.trim_end_matches([')', '`', '"', '\'', ',', ';', ':', '.']);
                let ok = !name.is_empty()
                    && name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                    && name
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c));
                if !ok {
                    break;
                }
                out.push(name.to_string());
                if name.len() != word.len() {
                    break;
                }
            }
        }
    }
    out
}

/// The programs `text` runs or looks for by a literal name.
fn programs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for marker in [
        "Command::new(\"",
        "CommandBuilder::new(\"",
        "which(\"",
        "on_path(\"",
        "[\"which\", \"",
        "spawn('",
        "execFileSync('",
    ] {
        let quote = marker.chars().last().unwrap();
        for (i, _) in text.match_indices(marker) {
            let rest = &text[i + marker.len()..];
            if let Some(end) = rest.find(quote) {
                out.push(rest[..end].to_string());
            }
        }
    }
    out
}

#[test]
fn the_parsers_read_what_the_tests_write() {
    assert_eq!(
        apt_packages("no Chromium: apt-get install chromium`);"),
        ["chromium"]
    );
    assert_eq!(
        apt_packages("(apt-get install -y bash-completion git) and more"),
        ["bash-completion", "git"]
    );
    assert_eq!(apt_packages("apt-get install {pkg}"), Vec::<String>::new());
    assert_eq!(
        programs("Command::new(\"rg\") shutil.which(\"strace\") spawn('/bin/sh', x)"),
        ["rg", "strace", "/bin/sh"]
    );
}

#[test]
fn every_package_a_test_names_is_in_xtasks_list() {
    let known = xtask::deps::known_packages();
    let mut named = 0;
    for f in all_sources() {
        let text = std::fs::read_to_string(&f).unwrap();
        for pkg in apt_packages(&text) {
            named += 1;
            assert!(
                known.contains(&pkg.as_str()),
                "{} names `apt-get install {pkg}`, but xtask::deps does not list {pkg}",
                f.display()
            );
        }
    }
    // greppy's msgpack, termio's Chromium, strace, valgrind, ripgrep, zsh...
    assert!(named >= 10, "{named}");
}

#[test]
fn every_program_run_by_name_is_installed_by_xtask_or_on_every_machine() {
    let mut seen = 0;
    for f in all_sources() {
        let text = std::fs::read_to_string(&f).unwrap();
        for prog in programs(&text) {
            // A name that starts `no-such-` is a test's deliberately absent
            // program: nothing installs it, and it must stay so.
            if prog.contains('/') || prog.is_empty() || prog.starts_with("no-such-") {
                continue;
            }
            seen += 1;
            assert!(
                xtask::deps::provided(&prog),
                "{} runs `{prog}`, which xtask::deps neither installs nor counts as on every machine",
                f.display()
            );
        }
    }
    assert!(seen >= 20, "{seen}");
}

#[test]
fn a_test_run_needs_every_listed_package_and_a_narrow_one_less() {
    use xtask::deps::{Task, needed};
    let all: Vec<String> = needed(Task::Test, &[])
        .into_iter()
        .map(|n| n.package)
        .collect();
    for pkg in ["python3-msgpack", "chromium", "patchelf", "ripgrep", "zsh"] {
        assert!(all.iter().any(|p| p == pkg), "{pkg} not in {all:?}");
    }
    let rush: Vec<String> = needed(Task::Test, &["rush".into()])
        .into_iter()
        .map(|n| n.package)
        .collect();
    assert!(rush.iter().any(|p| p == "zsh"), "{rush:?}");
    assert!(!rush.iter().any(|p| p == "chromium"), "{rush:?}");
    // The benchmark's peers from apt come with `bench`, as optional needs.
    let bench = needed(Task::Bench, &["rush".into()]);
    assert!(
        bench.iter().any(|n| n.package == "mksh" && n.optional),
        "{bench:?}"
    );
}
