//! ripgrep's own integration tests (`tests/` of a fetched BurntSushi/ripgrep,
//! never committed) as greppy's yardstick. The tree at the tag of the rg
//! peer's version is unpacked under `target/conformance/ripgrep/src`, its
//! `integration` test binary is built once, and then run three times: with
//! rg itself, greppy installed as `rg` (a link), and that link with
//! `GREPPY_NO_DAEMON=1`. The harness finds the program at run time (the
//! `rg` beside its `deps` folder, or `CARGO_BIN_EXE_rg` after 15.2), so the
//! same test binary tests each.

use crate::cmd;
use crate::peers::{Install, Peer};
use anyhow::{Context, Result, bail};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The rg whose tests are run: the private `cargo install` (the PATH may
/// hold a distribution's older rg, whose tests are another suite).
const RG: Peer = Peer {
    name: "rg",
    program: "rg",
    install: Install::Cargo("ripgrep --features pcre2"),
    version_args: &["--version"],
};

/// One test's outcome under each program.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub test: String,
    pub rg: Outcome,
    pub greppy: Outcome,
    pub greppy_no_daemon: Outcome,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Outcome {
    Pass,
    Fail,
    Ignored,
    /// Not reported (the run stopped before it).
    Missing,
}

/// Reads libtest's plain output: `test NAME ... ok|FAILED|ignored`.
pub fn parse(output: &str) -> BTreeMap<String, Outcome> {
    let mut out = BTreeMap::new();
    for line in output.lines() {
        let Some(rest) = line.strip_prefix("test ") else {
            continue;
        };
        let Some((name, result)) = rest.rsplit_once(" ... ") else {
            continue;
        };
        let outcome = match result.trim() {
            "ok" => Outcome::Pass,
            "FAILED" => Outcome::Fail,
            r if r.starts_with("ignored") => Outcome::Ignored,
            _ => continue,
        };
        out.insert(name.to_string(), outcome);
    }
    out
}

/// The `X.Y.Z` in `ripgrep X.Y.Z (rev …)`.
fn version_of(text: &str) -> Option<String> {
    text.split_whitespace()
        .nth(1)
        .filter(|v| v.split('.').count() == 3 && v.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .map(str::to_string)
}

/// The tree at `tag` of a checkout or clone, unpacked into `work/src`.
fn unpack(checkout: &Path, tag: &str, work: &Path) -> Result<PathBuf> {
    let src = work.join("src");
    let _ = std::fs::remove_dir_all(&src);
    std::fs::create_dir_all(&src)?;
    let git_dir = if checkout.join(".git").exists() {
        checkout.join(".git")
    } else {
        checkout.to_path_buf()
    };
    let unpacked = cmd::git_unpack(&git_dir, tag, &[], &src)?;
    if !unpacked || !src.join("tests/util.rs").is_file() {
        bail!(
            "{} is not a clone of BurntSushi/ripgrep with the tag {tag}",
            checkout.display()
        );
    }
    Ok(src)
}

/// Builds the `integration` test binary; its path.
fn build_tests(src: &Path, work: &Path) -> Result<PathBuf> {
    let out = cmd::cargo()
        .current_dir(src)
        .env("CARGO_TARGET_DIR", work.join("target"))
        .args([
            "test",
            "--test",
            "integration",
            "--no-run",
            "--features",
            "pcre2",
            "--message-format=json",
        ])
        .stderr(Stdio::inherit())
        .output()
        .context("building ripgrep's tests")?;
    if !out.status.success() {
        bail!("building ripgrep's integration tests failed");
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["target"]["name"] == "integration")
        .find_map(|v| v["executable"].as_str().map(PathBuf::from))
        .context("no integration test binary in cargo's output")
}

/// Runs the test binary with `rg` as the program under test: named by
/// `CARGO_BIN_EXE_rg` (newer harnesses read it) and linked where older
/// ones look, `rg` beside the test binary's `deps` folder.
fn run_suite(
    tests: &Path,
    rg: &Path,
    no_daemon: bool,
    only: &[String],
) -> Result<BTreeMap<String, Outcome>> {
    let slot = tests
        .parent()
        .and_then(Path::parent)
        .context("the test binary's folder")?
        .join("rg");
    let _ = std::fs::remove_file(&slot);
    std::os::unix::fs::symlink(rg, &slot)?;
    // greppy's daemon for the suite is its own (its socket and its
    // indexes of the tests' hundreds of trees under the suite's folder),
    // and is stopped after it.
    let home = slot.with_file_name("greppy-home");
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(home.join("run"))?;
    let private = |c: &mut Command| {
        c.env("XDG_RUNTIME_DIR", home.join("run"))
            .env("XDG_CACHE_HOME", home.join("cache"));
    };
    let mut c = Command::new(tests);
    private(&mut c);
    c.env("CARGO_BIN_EXE_rg", rg).env("RUST_BACKTRACE", "0");
    if no_daemon {
        c.env("GREPPY_NO_DAEMON", "1");
    } else {
        c.env_remove("GREPPY_NO_DAEMON");
    }
    c.args(only).stdin(Stdio::null()).stderr(Stdio::null());
    eprintln!("$ CARGO_BIN_EXE_rg={} {}", rg.display(), cmd::show(&c));
    let out = c.output().map(|o| o.stdout).unwrap_or_default();
    let mut stop = Command::new(crate::target_dir().join("release/greppy"));
    private(&mut stop);
    let _ = stop
        .args(["daemon", "stop"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    Ok(parse(&String::from_utf8_lossy(&out)))
}

pub fn run(checkout: &Path, only: &[String]) -> Result<()> {
    let work = crate::target_dir().join("conformance/ripgrep");
    std::fs::create_dir_all(&work)?;
    let mut rg = crate::peers::ensure_private(&RG);
    // The suite runs each test again with `--pcre2` when rg has PCRE2: an
    // rg installed without it is installed again, with it.
    let has_pcre2 = |p: &Path| {
        Command::new(p)
            .arg("--pcre2-version")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if rg.program.as_deref().is_some_and(|p| !has_pcre2(p)) {
        crate::peers::install(&RG)?;
        rg = crate::peers::ensure_private(&RG);
    }
    let (Some(rg_path), Some(version)) = (rg.program.clone(), rg.version.clone()) else {
        bail!("rg is not available: {}", rg.missing.unwrap_or_default());
    };
    let tag = version_of(&version).with_context(|| format!("no version in {version:?}"))?;
    println!("ripgrep's tests at tag {tag}, against {version}");
    let src = unpack(checkout, &tag, &work)?;
    let tests = build_tests(&src, &work)?;
    cmd::run(cmd::cargo().args(["build", "--release", "-p", "greppy", "--bin", "greppy"]))?;
    // greppy installed as `rg`: a link named rg.
    let bin = work.join("bin");
    std::fs::create_dir_all(&bin)?;
    let link = bin.join("rg");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(crate::target_dir().join("release/greppy"), &link)?;
    let by_rg = run_suite(&tests, &rg_path, false, only)?;
    let by_greppy = run_suite(&tests, &link, false, only)?;
    let by_scan = run_suite(&tests, &link, true, only)?;
    let names: std::collections::BTreeSet<&String> = by_rg
        .keys()
        .chain(by_greppy.keys())
        .chain(by_scan.keys())
        .collect();
    let get =
        |m: &BTreeMap<String, Outcome>, n: &str| m.get(n).copied().unwrap_or(Outcome::Missing);
    let rows: Vec<Row> = names
        .into_iter()
        .map(|n| Row {
            test: n.clone(),
            rg: get(&by_rg, n),
            greppy: get(&by_greppy, n),
            greppy_no_daemon: get(&by_scan, n),
        })
        .collect();
    let count = |f: fn(&Row) -> Outcome| rows.iter().filter(|r| f(r) == Outcome::Pass).count();
    println!(
        "\n== ripgrep {tag}'s integration tests ({} tests)\n",
        rows.len()
    );
    println!("{:<28} {:>8}", "program", "passed");
    println!("{:<28} {:>8}", format!("rg {tag}"), count(|r| r.rg));
    println!("{:<28} {:>8}", "greppy (daemon)", count(|r| r.greppy));
    println!(
        "{:<28} {:>8}",
        "greppy (--no-daemon)",
        count(|r| r.greppy_no_daemon)
    );
    let failing: Vec<&Row> = rows
        .iter()
        .filter(|r| {
            r.rg == Outcome::Pass
                && (r.greppy != Outcome::Pass || r.greppy_no_daemon != Outcome::Pass)
        })
        .collect();
    println!("\nrg passes and greppy fails ({}):", failing.len());
    for r in &failing {
        println!(
            "  {}{}",
            r.test,
            match (r.greppy, r.greppy_no_daemon) {
                (Outcome::Pass, _) => " (--no-daemon only)",
                (_, Outcome::Pass) => " (daemon only)",
                _ => "",
            }
        );
    }
    crate::save_rows(
        "ripgrep-suite",
        &serde_json::json!({
            "rg": version,
            "tag": tag,
            "rows": rows,
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libtest_lines_are_read() {
        let out = "running 3 tests\ntest feature::f1 ... ok\ntest regression::r2 ... FAILED\n\
                   test misc::m ... ignored, needs pcre2\nnot a test line\n";
        let m = parse(out);
        assert_eq!(m["feature::f1"], Outcome::Pass);
        assert_eq!(m["regression::r2"], Outcome::Fail);
        assert_eq!(m["misc::m"], Outcome::Ignored);
        assert_eq!(m.len(), 3);
    }

    #[test]
    fn the_version_is_the_tag() {
        assert_eq!(
            version_of("ripgrep 15.1.0 (rev abc)").as_deref(),
            Some("15.1.0")
        );
        assert_eq!(version_of("ripgrep"), None);
    }
}
