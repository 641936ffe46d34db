//! The documents tell the truth about the tree: every command in a README's
//! shell blocks names things that exist, and no document points outside the
//! repository.

use clap::Parser;
use std::path::{Path, PathBuf};
use xtask::cli::Cli;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Every Markdown file of the repository (not build output).
fn markdown(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name == "target" || name == "node_modules" {
            continue;
        }
        if p.is_dir() {
            markdown(&p, out);
        } else if name.ends_with(".md") {
            out.push(p);
        }
    }
}

/// The lines of the ```sh blocks of a Markdown text, comments removed.
fn shell_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            inside = !inside && (t == "```sh" || t == "```bash");
            continue;
        }
        if inside {
            let code = t.split(" #").next().unwrap_or("").trim();
            if !code.is_empty() && !code.starts_with('#') {
                out.push(code.to_string());
            }
        }
    }
    out
}

#[test]
fn no_document_points_outside_the_repository() {
    let mut files = Vec::new();
    markdown(&root(), &mut files);
    assert!(files.len() > 5, "{files:?}");
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(
            !text.contains("../shared"),
            "{} names ../shared",
            f.display()
        );
    }
}

#[test]
fn readme_commands_name_what_exists() {
    let root = root();
    let mut files = Vec::new();
    markdown(&root, &mut files);
    let mut checked = 0;
    for f in files.iter().filter(|f| f.ends_with("README.md")) {
        let text = std::fs::read_to_string(f).unwrap();
        for line in shell_lines(&text) {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["cargo", "install", "--path", p, ..] => {
                    assert!(
                        root.join(p).join("Cargo.toml").is_file(),
                        "{}: {line}",
                        f.display()
                    );
                }
                ["pip", "install", p, ..] if p.starts_with("./") => {
                    assert!(
                        root.join(p).join("pyproject.toml").is_file(),
                        "{}: {line}",
                        f.display()
                    );
                }
                ["npm", "install", p, ..] if p.starts_with("./") => {
                    assert!(
                        root.join(p).join("package.json").is_file(),
                        "{}: {line}",
                        f.display()
                    );
                }
                ["cargo", "xtask", args @ ..] => {
                    let argv = std::iter::once("xtask").chain(args.iter().copied());
                    if let Err(e) = Cli::try_parse_from(argv) {
                        assert_eq!(
                            e.kind(),
                            clap::error::ErrorKind::DisplayHelp,
                            "{}: {line}: {e}",
                            f.display()
                        );
                    }
                }
                _ => continue,
            }
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} commands found");
}

/// A crate's README is for its users: what, install, use, a short table,
/// what is missing. The rest has a place of its own (issue 57).
#[test]
fn crate_readmes_are_short() {
    for e in std::fs::read_dir(root().join("crates")).unwrap().flatten() {
        let readme = e.path().join("README.md");
        let Ok(text) = std::fs::read_to_string(&readme) else {
            continue;
        };
        let lines = text.lines().count();
        assert!(
            lines <= 300,
            "{} has {lines} lines: move runs' notes to DECISIONS.md and full tables to benches/<system>/RESULTS.md",
            readme.display()
        );
    }
}

/// Every benchmark system keeps the tables of its last full run beside its
/// workloads, and the READMEs that point there find them.
#[test]
fn every_system_has_its_results_page() {
    for system in xtask::bench::systems() {
        let page = root().join("benches").join(system.name).join("RESULTS.md");
        let text =
            std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        assert!(
            text.starts_with(&format!("# {}: the last full benchmark run", system.name)),
            "{}",
            page.display()
        );
    }
}
