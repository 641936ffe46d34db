//! GNU coreutils' own rm tests as fast-rm's yardstick: `tests/rm/*` of a
//! fetched coreutils at the tag of the GNU rm installed here, with the
//! gnulib `tests/init.sh` that tag's gnulib submodule pins (neither is
//! committed). Each test runs twice for each program, as root and as an
//! unprivileged user (`nobody`; many tests skip themselves as root, and a
//! few need root): once with GNU rm, once with fast-rm installed as `rm`,
//! first on PATH, as coreutils' own `make check` puts its freshly built
//! `src/rm` there. Every other program the tests use is the system's.

use crate::cmd;
use anyhow::{Context, Result, bail};
use serde::Serialize;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// What the tests source or read besides `tests/rm` (from coreutils).
const SUPPORT: [&str; 9] = [
    "init.cfg",
    // r-root.sh finds the line of `excise` in it, for a breakpoint.
    "src/remove.c",
    "tests/rm",
    "tests/lang-default",
    "tests/envvar-check",
    "tests/Coreutils.pm",
    "tests/CuSkip.pm",
    "tests/CuTmpdir.pm",
    "tests/other-fs-tmpdir",
];

/// The unprivileged user the second pass runs as.
const NOBODY: u32 = 65534;

/// A test's longest run; past it, the test counts as failed.
const TIMEOUT: Duration = Duration::from_secs(300);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Pass,
    Fail,
    Skip,
}

impl Outcome {
    /// Automake's convention: 0 passes, 77 skips, anything else fails
    /// (99 is a hard error).
    pub fn of(code: Option<i32>) -> Outcome {
        match code {
            Some(0) => Outcome::Pass,
            Some(77) => Outcome::Skip,
            _ => Outcome::Fail,
        }
    }

    fn word(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "FAIL",
            Outcome::Skip => "skip",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
struct Row {
    test: String,
    user: &'static str,
    gnu: Outcome,
    fast_rm: Outcome,
}

/// The installed GNU rm's version, from `rm --version`'s first line.
pub fn gnu_version(first_line: &str) -> Option<&str> {
    first_line
        .strip_prefix("rm (GNU coreutils) ")
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

fn git_dir(checkout: &Path) -> PathBuf {
    if checkout.join(".git").exists() {
        checkout.join(".git")
    } else {
        checkout.to_path_buf()
    }
}

/// `chmod -R a+rX`: everything readable, folders searchable.
fn readable_by_all(path: &Path) -> Result<()> {
    let meta = std::fs::symlink_metadata(path)?;
    if meta.file_type().is_symlink() {
        return Ok(());
    }
    let mode = meta.permissions().mode();
    let add = if meta.is_dir() || mode & 0o111 != 0 {
        0o555
    } else {
        0o444
    };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode | add))?;
    if meta.is_dir() {
        for e in std::fs::read_dir(path)? {
            readable_by_all(&e?.path())?;
        }
    }
    Ok(())
}

/// Makes the tree for one program and user: `src/rm`, and a TMPDIR.
fn build_dir(dir: &Path, rm: &Path, user: Option<u32>) -> Result<()> {
    std::fs::create_dir_all(dir.join("src"))?;
    std::fs::create_dir_all(dir.join("tmp"))?;
    // The Perl tests make their folders under tests/rm of the build.
    std::fs::create_dir_all(dir.join("tests/rm"))?;
    // What the tests ask of the build's config.h: both programs use the
    // openat family.
    std::fs::create_dir_all(dir.join("lib"))?;
    std::fs::write(dir.join("lib/config.h"), "#define HAVE_OPENAT 1\n")?;
    std::fs::copy(rm, dir.join("src/rm")).with_context(|| format!("copying {}", rm.display()))?;
    if let Some(uid) = user {
        for p in [
            dir,
            &dir.join("src"),
            &dir.join("tmp"),
            &dir.join("src/rm"),
            &dir.join("tests"),
            &dir.join("tests/rm"),
        ] {
            std::os::unix::fs::chown(p, Some(uid), Some(uid))?;
        }
    }
    Ok(())
}

/// Runs one test; its outcome and the end of what it printed.
fn run_one(
    src: &Path,
    build: &Path,
    test: &str,
    version: &str,
    user: Option<u32>,
) -> Result<(Outcome, String)> {
    let perl = test.ends_with(".pl") || test.ends_with(".xpl");
    // `timeout` ends a test that hangs (status 124: failed).
    let mut c = Command::new("timeout");
    c.args(["-k", "10"]).arg(TIMEOUT.as_secs().to_string());
    if perl {
        c.arg("perl");
        if test.ends_with(".xpl") {
            c.arg("-T");
        }
        c.arg("-w")
            .arg(format!("-I{}", src.join("tests").display()))
            .args(["-MCuSkip", "-MCoreutils"])
            .arg(format!("-MCuTmpdir qw({test})"))
            .arg("--")
            .arg(src.join(test));
    } else {
        // As coreutils' TESTS_ENVIRONMENT: descriptor 9 is stderr, the
        // locale and the environment are made plain, then the test runs.
        c.arg("/bin/sh")
            .arg("-c")
            .arg(
                "exec 9>&2; . \"$srcdir/tests/lang-default\"; \
                 . \"$srcdir/tests/envvar-check\"; exec /bin/sh \"$1\"",
            )
            .arg("sh")
            .arg(src.join(test));
    }
    let path = format!(
        "{}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
        build.join("src").display()
    );
    c.current_dir(build)
        .env_clear()
        .env("PATH", path)
        .env("HOME", build)
        .env("TMPDIR", build.join("tmp"))
        .env("srcdir", src)
        .env("top_srcdir", src)
        .env("abs_srcdir", src)
        .env("abs_top_srcdir", src)
        .env("abs_top_builddir", build)
        .env("built_programs", "rm")
        .env("VERSION", version)
        .env("PACKAGE_VERSION", version)
        .env("fail", "0")
        .env("host_os", "linux-gnu")
        .env("CU_TEST_NAME", format!("tests,{}", test.replace('/', "-")))
        .env("EXEEXT", "")
        .env("PERL", "perl")
        .env("SHELL", "/bin/sh")
        .env("PREFERABLY_POSIX_SHELL", "/bin/sh")
        .env("CC", "cc")
        .env("AWK", "awk")
        .env("EGREP", "grep -E")
        .env("MAKE", "make")
        .env("CONFIG_HEADER", build.join("lib/config.h"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(uid) = user {
        c.uid(uid).gid(uid);
    }
    let out = c.output().with_context(|| format!("running {test}"))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let tail: Vec<&str> = text.lines().rev().take(12).collect();
    let tail = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
    Ok((Outcome::of(out.status.code()), tail))
}

pub fn run(coreutils: &Path, gnulib: &Path, only: &[String]) -> Result<()> {
    let gnu_rm = PathBuf::from("/usr/bin/rm");
    let line = cmd::output(Command::new(&gnu_rm).arg("--version")).unwrap_or_default();
    let version = gnu_version(line.lines().next().unwrap_or(""))
        .context("/usr/bin/rm is not GNU rm")?
        .to_string();
    let tag = format!("v{version}");
    let work = crate::target_dir().join("conformance/coreutils-rm");
    let _ = std::fs::remove_dir_all(&work);
    let src = work.join("coreutils");
    std::fs::create_dir_all(&src)?;
    let cu = git_dir(coreutils);
    if !cmd::git_unpack(&cu, &tag, &SUPPORT, &src)? || !src.join("tests/rm").is_dir() {
        bail!(
            "{} is not a clone of coreutils/coreutils with the tag {tag} (the GNU rm here)",
            coreutils.display()
        );
    }
    // The gnulib commit that the tag pins, and its tests/init.sh.
    let tree = cmd::output(
        Command::new("git")
            .arg("--git-dir")
            .arg(&cu)
            .args(["ls-tree", &tag, "gnulib"]),
    )
    .unwrap_or_default();
    let pinned = tree
        .split_whitespace()
        .nth(2)
        .context("the tag has no gnulib submodule")?
        .to_string();
    let init = Command::new("git")
        .arg("--git-dir")
        .arg(git_dir(gnulib))
        .args(["show", &format!("{pinned}:tests/init.sh")])
        .output()?;
    if !init.status.success() {
        bail!(
            "{} is not a clone of coreutils/gnulib with the commit {pinned}",
            gnulib.display()
        );
    }
    std::fs::write(src.join("tests/init.sh"), &init.stdout)?;
    // Readable by the unprivileged pass.
    readable_by_all(&work)?;
    let mut tests: Vec<String> = std::fs::read_dir(src.join("tests/rm"))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sh") || n.ends_with(".pl") || n.ends_with(".xpl"))
        .filter(|n| only.is_empty() || only.iter().any(|o| n.starts_with(o.as_str())))
        .map(|n| format!("tests/rm/{n}"))
        .collect();
    tests.sort();
    cmd::run(crate::cmd::cargo().args(["build", "--release", "-p", "fast-rm"]))?;
    let fast_rm = crate::target_dir().join("release/fast-rm");
    let ours = cmd::output(Command::new(&fast_rm).arg("--version")).unwrap_or_default();
    let ours = ours.split_whitespace().last().unwrap_or("").to_string();
    let root = nix::unistd::geteuid().is_root();
    let users: Vec<(&'static str, Option<u32>)> = if root {
        vec![("root", None), ("nobody", Some(NOBODY))]
    } else {
        vec![("user", None)]
    };
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for (name, user) in &users {
        let dirs = [
            work.join(format!("gnu-{name}")),
            work.join(format!("fast-rm-{name}")),
        ];
        build_dir(&dirs[0], &gnu_rm, *user)?;
        build_dir(&dirs[1], &fast_rm, *user)?;
        for d in &dirs {
            std::fs::set_permissions(d.join("tmp"), std::fs::Permissions::from_mode(0o1777))?;
        }
        for t in &tests {
            let (gnu, _) = run_one(&src, &dirs[0], t, &version, *user)?;
            let (mine, tail) = run_one(&src, &dirs[1], t, &ours, *user)?;
            println!(
                "{t:<40} {name:<7} GNU rm {:<5} fast-rm {}",
                gnu.word(),
                mine.word()
            );
            if gnu == Outcome::Pass && mine != Outcome::Pass {
                notes.push(format!("{t} ({name}):\n{tail}"));
            }
            rows.push(Row {
                test: t.clone(),
                user: name,
                gnu,
                fast_rm: mine,
            });
        }
    }
    let count = |f: &dyn Fn(&Row) -> bool| rows.iter().filter(|r| f(r)).count();
    println!(
        "\n== GNU coreutils {version}'s tests/rm ({} tests, as {})\n",
        tests.len(),
        users.iter().map(|u| u.0).collect::<Vec<_>>().join(" and ")
    );
    println!("{:<28}{:>8}{:>8}{:>8}", "program", "pass", "fail", "skip");
    for (label, get) in [
        (
            format!("GNU rm {version}"),
            (|r: &Row| r.gnu) as fn(&Row) -> Outcome,
        ),
        ("fast-rm, as rm".to_string(), |r: &Row| r.fast_rm),
    ] {
        println!(
            "{label:<28}{:>8}{:>8}{:>8}",
            count(&|r| get(r) == Outcome::Pass),
            count(&|r| get(r) == Outcome::Fail),
            count(&|r| get(r) == Outcome::Skip)
        );
    }
    println!("\nGNU rm passes and fast-rm does not ({}):", notes.len());
    for n in &notes {
        println!("\n-- {n}");
    }
    crate::save_rows("coreutils-rm", &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_follow_automake() {
        assert_eq!(Outcome::of(Some(0)), Outcome::Pass);
        assert_eq!(Outcome::of(Some(77)), Outcome::Skip);
        assert_eq!(Outcome::of(Some(1)), Outcome::Fail);
        assert_eq!(Outcome::of(Some(99)), Outcome::Fail);
        assert_eq!(Outcome::of(None), Outcome::Fail);
    }

    #[test]
    fn the_version_comes_from_rms_first_line() {
        assert_eq!(gnu_version("rm (GNU coreutils) 9.1"), Some("9.1"));
        assert_eq!(gnu_version("rm (uutils coreutils) 0.0.27"), None);
    }
}
