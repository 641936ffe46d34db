//! The second half of `cargo xtask conformance rush`: real bash programs
//! that no one here wrote, run by rush and by bash side by side.
//!
//! - Every bash-completion file Debian ships (the `bash-completion` and
//!   `git` packages: `/usr/share/bash-completion`) is parsed with
//!   `-O extglob -n` by both shells; a file only rush rejects is a failure.
//! - Completions are driven as the line editor drives them: `COMP_WORDS`,
//!   `COMP_CWORD`, `COMP_LINE` and `COMP_POINT` set, the function that
//!   `complete -p` names called (bash-completion's loader first), and the
//!   sorted `COMPREPLY` compared, for git's completion (in a real repository
//!   with branches, tags and a remote) and bash-completion's own functions.
//!
//! The files come from the Debian packages, installed with apt when they are
//! missing and we are root; nothing of them is committed.

use crate::cmd;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

const COMPLETIONS: &str = "/usr/share/bash-completion";

/// Command lines to complete (the cursor at the end).
pub const CASES: &[&str] = &[
    "git ",
    "git che",
    "git checkout ",
    "git checkout fe",
    "git switch ",
    "git branch --",
    "git log --on",
    "git log ma",
    "git commit --am",
    "git remote ",
    "git remote add ",
    "git push ",
    "git push origin ",
    "git tag ",
    "git merge ",
    "git rebase -i ",
    "git stash ",
    "git diff --sta",
    "git add ",
    "git config user.",
    "git config --global core.",
    "git show v",
    "git reset --",
    "git restore --",
    "git fetch ",
    "git help sta",
    "cd ",
    "cd sr",
    "ls --col",
    "kill -",
    "kill -S",
    "chmod ",
    "chown ro",
    "export PA",
    "unset BAS",
    "declare -",
    "type -",
    "set -o ",
    "shopt -s ext",
    "complete -",
    "trap ",
    "mkdir -",
    "tar -",
    "grep --col",
    "sed --",
    "find . -na",
    "cp --pre",
    "id ",
    "printf -",
    "pushd ",
    "make ",
    "ssh -",
    "env ",
    "sudo ",
    "which ",
    "man ",
    "xargs -",
    "du -",
    "head -",
];

/// The driver both shells run: it sources bash-completion, then for each
/// line completes it and prints the case and the sorted candidates.
const DRIVER: &str = r#"
. /usr/share/bash-completion/bash_completion
complete_line() {
    COMP_LINE=$1
    COMP_POINT=${#COMP_LINE}
    read -ra COMP_WORDS <<< "$COMP_LINE"
    [[ $COMP_LINE == *' ' ]] && COMP_WORDS+=('')
    COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
    local cmd=${COMP_WORDS[0]} spec func
    # bash-completion loads a command's completion on first use (-D).
    complete -p "$cmd" >/dev/null 2>&1 || _completion_loader "$cmd" 2>/dev/null
    spec=$(complete -p "$cmd" 2>/dev/null) || { echo "(no specification)"; return; }
    func=${spec##* -F }
    func=${func%% *}
    COMPREPLY=()
    "$func" "$cmd" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}" </dev/null 2>/dev/null
    printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort
}
while IFS= read -r line; do
    printf '=== %s\n' "$line"
    complete_line "$line"
done < "$1"
"#;

/// What one run compared.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub files: usize,
    pub rush_only_parse_failures: Vec<String>,
    pub cases: usize,
    pub same: usize,
    pub differing: Vec<String>,
}

/// Splits a driver's output into (case, candidates) blocks.
pub fn blocks(out: &str) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = Vec::new();
    for line in out.lines() {
        if let Some(case) = line.strip_prefix("=== ") {
            v.push((case.to_string(), String::new()));
        } else if let Some((_, body)) = v.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    v
}

fn ensure_packages() -> Result<()> {
    crate::deps::ensure(crate::deps::Task::Test, &["rush".to_string()])
}

/// A git repository with history, branches, tags and a remote, for git's
/// completion to read.
fn repo(dir: &Path) -> Result<PathBuf> {
    let r = dir.join("repo");
    let _ = std::fs::remove_dir_all(&r);
    std::fs::create_dir_all(r.join("src"))?;
    std::fs::write(r.join("src/main.c"), "int main(void) { return 0; }\n")?;
    std::fs::write(r.join("README"), "x\n")?;
    let script = "git init -q -b main . && git config user.email t@example.com && \
        git config user.name t && git add . && git commit -q -m one && \
        git branch feature && git branch fix-1 && git tag v1.0 && git tag v2.0 && \
        git remote add origin https://example.com/r.git && echo y >> README";
    cmd::run(Command::new("sh").args(["-c", script]).current_dir(&r))?;
    Ok(r)
}

fn run_driver(
    shell: &Path,
    args: &[&str],
    driver: &Path,
    cases: &Path,
    cwd: &Path,
) -> Result<String> {
    let out = Command::new(shell)
        .args(args)
        .arg(driver)
        .arg(cases)
        .current_dir(cwd)
        .env("HOME", cwd)
        .env("LC_ALL", "C.UTF-8")
        .output()
        .with_context(|| format!("run {}", shell.display()))?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs both parts with `rush` (a binary) and prints the tables.
pub fn run(rush: &Path) -> Result<Outcome> {
    ensure_packages()?;
    let mut o = Outcome::default();
    // Parsing every file.
    let mut files: Vec<PathBuf> = std::fs::read_dir(Path::new(COMPLETIONS).join("completions"))?
        .flatten()
        .map(|e| e.path())
        .collect();
    files.push(Path::new(COMPLETIONS).join("bash_completion"));
    files.sort();
    for f in &files {
        let ok = |shell: &Path| {
            Command::new(shell)
                .args(["-O", "extglob", "-n"])
                .arg(f)
                .output()
                .is_ok_and(|o| o.status.success())
        };
        o.files += 1;
        if ok(Path::new("bash")) && !ok(rush) {
            o.rush_only_parse_failures.push(f.display().to_string());
        }
    }
    println!(
        "bash-completion files parsed with -O extglob -n: {} (rush-only failures: {})",
        o.files,
        o.rush_only_parse_failures.len()
    );
    for f in &o.rush_only_parse_failures {
        println!("  rush fails: {f}");
    }
    // Completing.
    let work = crate::target_dir().join("conformance/completion");
    std::fs::create_dir_all(&work)?;
    let repo = repo(&work)?;
    let driver = work.join("driver.sh");
    std::fs::write(&driver, DRIVER)?;
    let cases = work.join("cases.txt");
    std::fs::write(&cases, CASES.join("\n") + "\n")?;
    let bash_out = run_driver(Path::new("bash"), &[], &driver, &cases, &repo)?;
    let rush_out = run_driver(rush, &[], &driver, &cases, &repo)?;
    let (b, r) = (blocks(&bash_out), blocks(&rush_out));
    println!("\n{:<28} {:>6} {:>6}  same", "completing", "bash", "rush");
    for case in CASES {
        let find = |v: &[(String, String)]| {
            v.iter()
                .find(|(c, _)| c == case)
                .map(|(_, body)| body.clone())
        };
        let (bb, rb) = (find(&b), find(&r));
        let count = |x: &Option<String>| x.as_ref().map_or(0, |s| s.lines().count());
        let same = bb.is_some() && bb == rb;
        o.cases += 1;
        if same {
            o.same += 1;
        } else {
            o.differing.push(case.to_string());
        }
        println!(
            "{:<28} {:>6} {:>6}  {}",
            format!("{case:?}"),
            count(&bb),
            count(&rb),
            if same { "yes" } else { "NO" }
        );
    }
    println!(
        "\ncompletions identical to bash's: {} of {}",
        o.same, o.cases
    );
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_blocks() {
        let b = blocks("=== git \nadd\nbranch\n=== cd \n=== ls\nx\n");
        assert_eq!(b.len(), 3);
        assert_eq!(b[0], ("git ".into(), "add\nbranch\n".into()));
        assert_eq!(b[1], ("cd ".into(), String::new()));
    }
}
