//! GNU bash's own test suite against rush: `cargo xtask conformance rush
//! --bash PATH`, with PATH a checkout (or a bare clone) of bminor/bash.
//!
//! Each `tests/run-X` script runs its `X.tests` with `THIS_SH` and diffs the
//! output against `X.right`. It is run twice, interleaved, with the same
//! `THIS_SH` path: once to this machine's bash, once to rush, each as a
//! link named `bash`, so that the messages that name the shell read alike.
//! The helper programs the tests call (`recho`, `zecho`, `printenv`,
//! `xcase`) are built from the checkout's `support/` with the machine's C
//! compiler. From a clone, the tree is taken at the commit of the bash
//! installed here (`Bash-5.2 patch 15` for bash 5.2.15), so that bash is
//! held to its own tests. Nothing of the suite is committed: it is
//! unpacked under `target/conformance/bash`.
//!
//! A file passes when its run prints no difference from the expected
//! output (`warning:` notes that the scripts print are not differences)
//! and does not time out.

use crate::cmd;
use anyhow::{Context, Result, bail};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The helper programs of `support/` that the tests run.
const HELPERS: &[&str] = &["recho", "zecho", "printenv", "xcase"];

/// The `run-*` scripts that are not tests of their own.
const NOT_TESTS: &[&str] = &["run-all", "run-minimal", "run-gprof"];

/// How long one `run-X` may take, in seconds.
const TIMEOUT: &str = "60";

/// One file's outcome for one shell.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Outcome {
    pub pass: bool,
    /// Lines of the diff against the expected output (`<` and `>`).
    pub differing: usize,
    pub timed_out: bool,
}

/// Reads a `run-X` script's output: the differing lines, and whether it
/// passed.
pub fn judge(output: &str, status: Option<i32>) -> Outcome {
    let timed_out = matches!(status, Some(124 | 137) | None);
    let mut differing = 0;
    let mut other = 0;
    for line in output.lines() {
        if line.starts_with("< ") || line.starts_with("> ") || line == "<" || line == ">" {
            differing += 1;
        } else if !line.starts_with("warning:") && !line.trim().is_empty() {
            // Diff's hunk headers and `---`, or anything else a script
            // says beyond its notes.
            other += 1;
        }
    }
    Outcome {
        pass: differing == 0 && other == 0 && !timed_out,
        differing,
        timed_out,
    }
}

/// The `run-*` scripts of `tests`, sorted, less the drivers.
fn run_scripts(tests: &Path) -> Result<Vec<String>> {
    let mut out: Vec<String> = std::fs::read_dir(tests)
        .with_context(|| format!("reading {}", tests.display()))?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("run-") && !NOT_TESTS.contains(&n.as_str()))
        .filter(|n| !n.ends_with('~') && !n.ends_with(".orig"))
        .collect();
    out.sort();
    Ok(out)
}

/// The installed bash's version, as `(minor, patch)`: `("5.2", 15)`.
fn bash_version() -> Option<(String, u32)> {
    let v = cmd::output(Command::new("bash").args([
        "-c",
        "echo ${BASH_VERSINFO[0]}.${BASH_VERSINFO[1]} ${BASH_VERSINFO[2]}",
    ]))?;
    let (minor, patch) = v.split_once(' ')?;
    Some((minor.to_string(), patch.parse().ok()?))
}

/// The commit of a bash clone that is the installed bash's release: its
/// `Bash-M.N patch P` commit, or the `bash-M.N` tag for patch 0.
fn commit_for(git_dir: &Path, minor: &str, patch: u32) -> Option<String> {
    let git = |args: &[&str]| {
        cmd::output(Command::new("git").arg("--git-dir").arg(git_dir).args(args))
            .filter(|s| !s.is_empty())
    };
    if patch == 0 {
        return git(&["rev-parse", &format!("bash-{minor}^{{commit}}")]);
    }
    let grep = format!("--grep=^Bash-{minor} patch {patch}:");
    git(&["log", "--all", "--format=%H", "-1", &grep])
}

/// The suite's tree, unpacked (from a clone) or copied (from a work tree)
/// under `work/src`.
fn unpack(checkout: &Path, work: &Path) -> Result<PathBuf> {
    let src = work.join("src");
    let _ = std::fs::remove_dir_all(&src);
    std::fs::create_dir_all(&src)?;
    if checkout.join("tests/run-all").is_file() {
        cmd::run(
            Command::new("cp")
                .arg("-a")
                .arg(checkout.join("tests"))
                .arg(checkout.join("support"))
                .arg(checkout.join("bashansi.h"))
                .arg(&src),
        )?;
        return Ok(src);
    }
    let git_dir = if checkout.join(".git").exists() {
        checkout.join(".git")
    } else {
        checkout.to_path_buf()
    };
    let rev = match bash_version() {
        Some((minor, patch)) => commit_for(&git_dir, &minor, patch).unwrap_or_else(|| {
            println!("(no commit for bash {minor}.{patch} in the clone: its newest tree)");
            "HEAD".into()
        }),
        None => "HEAD".into(),
    };
    println!("bash's tests at commit {}", &rev[..rev.len().min(12)]);
    let unpacked = cmd::git_unpack(&git_dir, &rev, &["tests", "support", "bashansi.h"], &src)?;
    if !unpacked || !src.join("tests/run-all").is_file() {
        bail!(
            "{} is neither a bash checkout nor a clone of one (no tests/run-all at {rev})",
            checkout.display()
        );
    }
    Ok(src)
}

/// Builds the helper programs into `work/bin`.
fn helpers(src: &Path, work: &Path) -> Result<PathBuf> {
    let bin = work.join("bin");
    let inc = work.join("include");
    std::fs::create_dir_all(&bin)?;
    std::fs::create_dir_all(&inc)?;
    // bashansi.h and xcase.c want configure's header; these are all it
    // needs to say.
    std::fs::write(inc.join("config.h"), "")?;
    for h in HELPERS {
        cmd::run(
            Command::new("cc")
                .args([
                    "-O",
                    "-w",
                    "-DHAVE_STDLIB_H",
                    "-DHAVE_STRING_H",
                    "-DHAVE_UNISTD_H",
                ])
                .arg("-I")
                .arg(&inc)
                .arg("-I")
                .arg(src)
                .arg("-o")
                .arg(bin.join(h))
                .arg(src.join("support").join(format!("{h}.c"))),
        )?;
    }
    Ok(bin)
}

/// A folder with `bash` linked to `program`: `THIS_SH` for that shell.
fn as_bash(work: &Path, name: &str, program: &Path) -> Result<PathBuf> {
    let dir = work.join("shells").join(name);
    std::fs::create_dir_all(&dir)?;
    let link = dir.join("bash");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(program, &link)?;
    Ok(link)
}

/// Runs one `run-X` with `this_sh`, in its own process group, bounded in
/// time.
fn run_one(tests: &Path, bin: &Path, this_sh: &Path, script: &str, tmp: &Path) -> Outcome {
    let out_file = tmp.join(format!("tstout-{script}"));
    let path = format!("{}:.:/usr/local/bin:/usr/bin:/bin", bin.display());
    let mut c = Command::new("timeout");
    c.args(["-k", "5", TIMEOUT, "sh", script])
        .current_dir(tests)
        .env_clear()
        .env("PATH", path)
        .env("THIS_SH", this_sh)
        .env("BASH_TSTOUT", &out_file)
        .env("TMPDIR", tmp)
        .env("HOME", tmp)
        .env("LANG", "C.UTF-8")
        .stdin(Stdio::null());
    let (status, out) = match cmd::contained(&mut c, true, script) {
        Ok(r) => r,
        Err(e) => {
            println!("{script}: {e:#}");
            return Outcome {
                pass: false,
                differing: 0,
                timed_out: false,
            };
        }
    };
    let _ = std::fs::remove_file(&out_file);
    judge(&String::from_utf8_lossy(&out), status.code())
}

/// An outcome in a word: `pass`, `TIMEOUT`, or `fail (N)` with the
/// differing lines.
fn show(o: &Outcome) -> String {
    match (o.pass, o.timed_out) {
        (true, _) => "pass".to_string(),
        (false, true) => "TIMEOUT".to_string(),
        (false, false) => format!("fail ({})", o.differing),
    }
}

/// The rows as a Markdown table, for the README.
pub fn markdown(rows: &[Row]) -> String {
    let mut out = String::from("| file | bash | rush |\n|---|---|---|\n");
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            r.file,
            show(&r.bash),
            show(&r.rush)
        ));
    }
    let pass = |f: fn(&Row) -> bool| rows.iter().filter(|r| f(r)).count();
    out.push_str(&format!(
        "| **passed (of {})** | **{}** | **{}** |\n",
        rows.len(),
        pass(|r| r.bash.pass),
        pass(|r| r.rush.pass)
    ));
    out
}

/// One file's outcomes, bash's and rush's.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub file: String,
    pub bash: Outcome,
    pub rush: Outcome,
}

/// Runs the suite with bash and `rush`, prints the table, and writes it to
/// `target/conformance/bash-suite.json`.
pub fn run(checkout: &Path, rush: &Path, only: &[String]) -> Result<()> {
    let work = crate::target_dir().join("conformance/bash");
    std::fs::create_dir_all(&work)?;
    let src = unpack(checkout, &work)?;
    let bin = helpers(&src, &work)?;
    let bash = cmd::output(Command::new("bash").args(["-c", "command -v bash"]))
        .map(PathBuf::from)
        .context("no bash on the PATH to run beside rush")?;
    let shells = [
        ("bash", as_bash(&work, "bash", &bash)?),
        ("rush", as_bash(&work, "rush", rush)?),
    ];
    let tmp = work.join("tmp");
    let tests = src.join("tests");
    let mut rows = Vec::new();
    println!(
        "\n== bash's own tests ({}), bash and rush each as `bash`\n",
        tests.display()
    );
    println!("{:<22} {:>12} {:>12}", "file", "bash", "rush");
    for script in run_scripts(&tests)? {
        let file = script.trim_start_matches("run-").to_string();
        if !only.is_empty() && !only.contains(&file) {
            continue;
        }
        let mut outcomes = Vec::new();
        for (_, this_sh) in &shells {
            let _ = std::fs::remove_dir_all(&tmp);
            std::fs::create_dir_all(&tmp)?;
            outcomes.push(run_one(&tests, &bin, this_sh, &script, &tmp));
        }
        println!(
            "{file:<22} {:>12} {:>12}",
            show(&outcomes[0]),
            show(&outcomes[1])
        );
        let rush_outcome = outcomes.pop().context("two shells")?;
        let bash_outcome = outcomes.pop().context("two shells")?;
        rows.push(Row {
            file,
            bash: bash_outcome,
            rush: rush_outcome,
        });
    }
    let count = |f: fn(&Row) -> bool| rows.iter().filter(|r| f(r)).count();
    println!(
        "{:<22} {:>12} {:>12}",
        format!("TOTAL ({})", rows.len()),
        count(|r| r.bash.pass),
        count(|r| r.rush.pass)
    );
    let only_bash: Vec<&str> = rows
        .iter()
        .filter(|r| r.bash.pass && !r.rush.pass)
        .map(|r| r.file.as_str())
        .collect();
    let only_rush: Vec<&str> = rows
        .iter()
        .filter(|r| r.rush.pass && !r.bash.pass)
        .map(|r| r.file.as_str())
        .collect();
    println!("bash passes and rush fails: {}", only_bash.join(" "));
    println!("rush passes and bash fails: {}", only_rush.join(" "));
    println!("\n{}", markdown(&rows));
    let version = cmd::output(Command::new(&bash).args(["-c", "echo $BASH_VERSION"]));
    crate::save_rows(
        "bash-suite",
        &serde_json::json!({ "bash": version, "rows": rows }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_fails_and_notes_do_not() {
        let notes =
            "warning: all of these tests will fail if arrays have not\nwarning: been compiled\n";
        assert!(judge(notes, Some(0)).pass);
        let diff = "warning: x\n44d43\n< ./alias6.sub: line 5: warning: setlocale\n";
        assert_eq!(
            judge(diff, Some(1)),
            Outcome {
                pass: false,
                differing: 1,
                timed_out: false
            }
        );
        let changed = "3c3\n< a\n---\n> b\n";
        assert_eq!(judge(changed, Some(1)).differing, 2);
        assert!(judge("", Some(124)).timed_out);
        assert!(!judge("", Some(124)).pass);
    }
}
