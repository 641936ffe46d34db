//! `cargo xtask conformance rush [--oils <path>]`: runs the Oils project's
//! shell spec tests (a suite no one here wrote) against the release build of
//! rush, and prints pass/total per spec file and in total; then the real
//! bash programs of [`crate::rush_scripts`].
//!
//! The binary is copied under a neutral name, so that none of the per-shell
//! allowances in the spec files (`## OK bash …`, `## N-I dash …`) applies:
//! only the ideal expectation counts.

use crate::cmd;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The commit the numbers in issue 4 were measured at.
pub const OILS_COMMIT: &str = "15de8fd779569e6e3a9f5fcbfc00e7df0ebe0380";

/// The POSIX-core spec files of issue 4.
pub const FILES: &[&str] = &[
    "alias",
    "arith",
    "assign",
    "background",
    "builtin-bracket",
    "builtin-cd",
    "builtin-echo",
    "builtin-eval-source",
    "builtin-getopts",
    "builtin-meta",
    "builtin-misc",
    "builtin-printf",
    "builtin-process",
    "builtin-read",
    "builtin-set",
    "builtin-special",
    "builtin-trap",
    "builtin-type",
    "builtin-vars",
    "case_",
    "command-parsing",
    "command-sub",
    "command_",
    "comments",
    "errexit",
    "exit-status",
    "glob",
    "here-doc",
    "if_",
    "loop",
    "parse-errors",
    "pipeline",
    "posix",
    "quote",
    "redirect",
    "redirect-command",
    "redirect-multi",
    "sh-func",
    "sh-options",
    "shell-grammar",
    "smoke",
    "subshell",
    "tilde",
    "toysh-posix",
    "var-op-len",
    "var-op-strip",
    "var-op-test",
    "var-sub",
    "var-sub-quote",
    "vars-special",
    "whitespace",
    "word-eval",
    "word-split",
];

/// The Oils spec files for the bash features scripts and agents use (issue
/// 16): arrays and associative arrays, `[[`, extglob, brace expansion, the
/// bash `${…}` operators, `declare`, `shopt`, the bash traps, process
/// substitution and namerefs. (`printf`, `read` and here-strings are in
/// the core files.)
pub const BASH_FILES: &[&str] = &[
    "array",
    "array-basic",
    "array-assign",
    "array-literal",
    "array-sparse",
    "array-compat",
    "array-assoc",
    "dbracket",
    "extglob-match",
    "extglob-files",
    "brace-expansion",
    "var-op-bash",
    "var-op-patsub",
    "var-op-slice",
    "assign-extended",
    "sh-options-bash",
    "builtin-trap-bash",
    "builtin-trap-err",
    "process-sub",
    "nameref",
];

/// The shells the bash files are also run with, when installed.
const PEERS: &[&str] = &["bash", "zsh", "mksh", "dash"];

/// The name the binary runs under.
const NEUTRAL: &str = "shell-under-test";

/// One spec file's outcome.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub pass: usize,
    pub total: usize,
    pub timeouts: usize,
    pub panics: usize,
}

/// Counts the result rows of the runner's text output (`case line result
/// description`, colour codes removed).
pub fn tally(output: &str) -> Tally {
    let mut t = Tally::default();
    for line in output.lines() {
        let clean = strip_ansi(line);
        let cols: Vec<&str> = clean.split('\t').map(str::trim).collect();
        let is_row =
            cols.len() >= 4 && cols[0].parse::<u32>().is_ok() && cols[1].parse::<u32>().is_ok();
        if is_row {
            t.total += 1;
            match cols[2] {
                "pass" => t.pass += 1,
                "TIME" => t.timeouts += 1,
                _ => {}
            }
        }
        if clean.contains("panicked at") {
            t.panics += 1;
        }
    }
    t
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Python 2.7, which the runner needs: `--python`, then `python2` on the
/// PATH, then pyenv's 2.7 installs.
fn python2(given: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = given {
        return Ok(p.to_path_buf());
    }
    if cmd::on_path("python2")
        && let Some(p) =
            cmd::output(Command::new("python2").args(["-c", "import sys; print(sys.executable)"]))
    {
        return Ok(PathBuf::from(p));
    }
    if let Some(root) = cmd::output(Command::new("pyenv").arg("root")) {
        let versions = Path::new(&root).join("versions");
        if let Ok(rd) = std::fs::read_dir(&versions) {
            let mut found: Vec<PathBuf> = rd
                .filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().starts_with("2.7"))
                .map(|e| e.path().join("bin/python"))
                .filter(|p| p.is_file())
                .collect();
            found.sort();
            if let Some(p) = found.pop() {
                return Ok(p);
            }
        }
    }
    bail!("the Oils runner needs Python 2.7: install it (pyenv install 2.7.18) or pass --python")
}

/// Writes a suite's rows (any JSON) to `target/conformance/NAME.json`, and
/// says where.
pub fn run(
    system: &str,
    oils: Option<&Path>,
    bash: Option<&Path>,
    python: Option<&Path>,
    pyloop: crate::pyloop_conformance::Suites<'_>,
    only: &[String],
) -> Result<()> {
    if system == "pyloop" {
        if oils.is_some() || bash.is_some() {
            bail!("--oils and --bash belong to `conformance rush`");
        }
        return crate::pyloop_conformance::run(python, pyloop, only);
    }
    if pyloop.any() {
        bail!("--uvloop, --projects and --websockets belong to `conformance pyloop`");
    }
    if system != "rush" {
        bail!(
            "conformance knows `rush`, `pyloop`, `greppy`, `termio` and `fast-rm` (got {system:?})"
        );
    }
    cmd::run(cmd::cargo().args(["build", "--release", "-p", "rush", "--bin", "rush"]))?;
    match oils {
        Some(oils) => oils_specs(oils, python, only)?,
        None => println!(
            "Oils spec tests skipped: pass --oils <path>, a checkout of oils-for-unix/oils at \
             commit {}\n",
            &OILS_COMMIT[..12]
        ),
    }
    match bash {
        Some(bash) => {
            let rush = crate::target_dir().join("release/rush");
            crate::bash_suite::run(bash, &rush, only)?;
        }
        None => println!(
            "bash's own tests skipped: pass --bash <path>, a checkout or clone of bminor/bash\n"
        ),
    }
    println!("\n== real bash programs: Debian's bash-completion and git's completion\n");
    crate::rush_scripts::run(&crate::target_dir().join("release/rush"))?;
    Ok(())
}

/// How to run the Oils runner on one spec file.
struct Runner {
    python: PathBuf,
    oils: PathBuf,
    work: PathBuf,
    path_env: String,
    repo_root: String,
}

impl Runner {
    fn new(oils: &Path, python: Option<&Path>) -> Result<Runner> {
        let oils = oils
            .canonicalize()
            .with_context(|| format!("no Oils checkout at {}", oils.display()))?;
        if !oils.join("test/sh_spec.py").is_file() {
            bail!(
                "{} has no test/sh_spec.py; is it an Oils checkout?",
                oils.display()
            );
        }
        let python = python2(python)?;
        let python_dir = python.parent().map(Path::to_path_buf).unwrap_or_default();
        // As the Oils project's own spec runner (test/spec-common.sh) calls
        // it: spec/bin first on the PATH, a UTF-8 locale, and REPO_ROOT for
        // the spec/testdata files.
        let path_env = format!(
            "{}:{}:{}",
            oils.join("spec/bin").display(),
            python_dir.display(),
            std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into())
        );
        Ok(Runner {
            repo_root: format!("REPO_ROOT={}", oils.display()),
            python,
            oils,
            work: crate::target_dir().join("conformance"),
            path_env,
        })
    }

    /// Puts `program` under the neutral name; returns its path.
    fn install(&self, program: &Path) -> Result<PathBuf> {
        let bin_dir = self.work.join("bin");
        std::fs::create_dir_all(&bin_dir)?;
        let shell = bin_dir.join(NEUTRAL);
        let _ = std::fs::remove_file(&shell);
        std::fs::copy(program, &shell).with_context(|| format!("copy {}", program.display()))?;
        Ok(shell)
    }

    /// One spec file with the shell under the neutral name.
    fn file(&self, shell: &Path, f: &str) -> Result<Tally> {
        let tmp = self.work.join("tmp");
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp)?;
        let out = Command::new(&self.python)
            .current_dir(&self.oils)
            .env("PYTHONPATH", &self.oils)
            .arg(self.oils.join("test/sh_spec.py"))
            .args(["--tmp-env"])
            .arg(&tmp)
            .args(["--path-env", &self.path_env, "--timeout", "10", "-v"])
            .args([
                "--env-pair",
                "LC_ALL=C.UTF-8",
                "--env-pair",
                &self.repo_root,
            ])
            .arg(self.oils.join(format!("spec/{f}.test.sh")))
            .arg(shell)
            .output()
            .with_context(|| format!("run the Oils runner on {f}"))?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        let t = tally(&text);
        if t.total == 0 {
            bail!("no results for {f}; the runner said:\n{text}");
        }
        Ok(t)
    }
}

/// The Oils spec files: the core files with the release build of rush,
/// then the bash-feature files with rush and each installed peer.
fn oils_specs(oils: &Path, python: Option<&Path>, only: &[String]) -> Result<()> {
    let runner = Runner::new(oils, python)?;
    let rush = crate::target_dir().join("release/rush");
    let pick = |list: &[&'static str]| -> Vec<&'static str> {
        list.iter()
            .copied()
            .filter(|f| only.is_empty() || only.iter().any(|o| o == f))
            .collect()
    };
    let files = pick(FILES);
    if !files.is_empty() {
        let shell = runner.install(&rush)?;
        let mut sum = Tally::default();
        println!(
            "{:<22} {:>9} {:>9} {:>7}",
            "spec file", "pass", "total", "timeouts"
        );
        for f in files {
            let t = runner.file(&shell, f)?;
            println!(
                "{f:<22} {:>9} {:>9} {:>7}{}",
                t.pass,
                t.total,
                t.timeouts,
                if t.panics > 0 {
                    format!("  PANICS: {}", t.panics)
                } else {
                    String::new()
                }
            );
            sum.pass += t.pass;
            sum.total += t.total;
            sum.timeouts += t.timeouts;
            sum.panics += t.panics;
        }
        println!(
            "{:<22} {:>9} {:>9} {:>7}   ({} panics)",
            "TOTAL", sum.pass, sum.total, sum.timeouts, sum.panics
        );
    }
    let files = pick(BASH_FILES);
    if files.is_empty() {
        return Ok(());
    }
    // The bash-feature files: rush and the peers side by side.
    let mut shells = vec![("rush".to_string(), rush)];
    for p in PEERS {
        match which(p) {
            Some(path) => shells.push((p.to_string(), path)),
            None => println!("({p} not installed: no column)"),
        }
    }
    println!("\n== bash features: passes per shell (the same neutral name for each)\n");
    print!("{:<18} {:>6}", "spec file", "cases");
    for (name, _) in &shells {
        print!(" {name:>6}");
    }
    println!();
    let mut results: Vec<Vec<Tally>> = vec![Vec::new(); shells.len()];
    for (k, (_, program)) in shells.iter().enumerate() {
        let shell = runner.install(program)?;
        for f in &files {
            results[k].push(runner.file(&shell, f)?);
        }
    }
    for (i, f) in files.iter().enumerate() {
        print!("{f:<18} {:>6}", results[0][i].total);
        for r in &results {
            print!(" {:>6}", r[i].pass);
        }
        println!();
    }
    print!(
        "{:<18} {:>6}",
        "TOTAL",
        results[0].iter().map(|t| t.total).sum::<usize>()
    );
    for r in &results {
        print!(" {:>6}", r.iter().map(|t| t.pass).sum::<usize>());
    }
    println!();
    let rush_panics: usize = results[0].iter().map(|t| t.panics).sum();
    let rush_timeouts: usize = results[0].iter().map(|t| t.timeouts).sum();
    println!("(rush: {rush_timeouts} timeouts, {rush_panics} panics)");
    Ok(())
}

/// A program on the PATH.
fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_rows_and_ignores_the_rest() {
        let out = "case\tline\tx\t\n  0\t 14\t\u{1b}[32mpass\u{1b}[0m\tOne\n  1\t 18\tFAIL\tTwo\n 12\t300\tTIME\tThree\n\tFAIL\t1\nthread 'main' panicked at src/x.rs\n";
        assert_eq!(
            tally(out),
            Tally {
                pass: 1,
                total: 3,
                timeouts: 1,
                panics: 1
            }
        );
    }
}
