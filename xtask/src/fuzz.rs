//! `cargo xtask fuzz`: the targets in `fuzz/`, run by cargo-fuzz with
//! libFuzzer and AddressSanitizer (which need the nightly toolchain).
//!
//! Each target's committed seeds are in `fuzz/corpus/<target>/`; what the
//! fuzzer finds worth keeping goes to `target/fuzz/corpus/<target>/`
//! (never committed), and a crash, timeout or leak to
//! `target/fuzz/artifacts/<target>/`, minimized there with `cargo fuzz
//! tmin`. A finding, once fixed, is committed to the seeds: the ordinary
//! `cargo test` (fuzz/tests/corpus.rs) then runs it every time.

use crate::cmd::{self, cargo};
use anyhow::{Context, Result, bail, ensure};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What a long run reached, from libFuzzer's last lines.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Reached {
    pub execs: u64,
    pub cov: u64,
    pub features: u64,
    pub corpus: u64,
}

/// The targets: `fuzz/fuzz_targets/rush_parse.rs` is `rush-parse`.
pub fn targets() -> Result<Vec<String>> {
    let dir = crate::root().join("fuzz").join("fuzz_targets");
    let mut out: Vec<String> = std::fs::read_dir(&dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".rs").map(|s| s.replace('_', "-"))
        })
        .collect();
    out.sort();
    Ok(out)
}

/// The nightly toolchain and cargo-fuzz, installed when missing.
fn ensure_tools() -> Result<()> {
    let nightly = || cmd::output(Command::new("rustup").args(["run", "nightly", "rustc", "-V"]));
    if nightly().is_none() {
        cmd::run(Command::new("rustup").args([
            "toolchain",
            "install",
            "nightly",
            "--profile",
            "minimal",
        ]))
        .context("cargo fuzz needs the nightly toolchain (AddressSanitizer is unstable)")?;
    }
    if cmd::output(cargo().args(["fuzz", "--version"])).is_none() {
        cmd::run(cargo().args(["install", "--locked", "cargo-fuzz"]))?;
    }
    Ok(())
}

fn fuzz_dir() -> PathBuf {
    crate::target_dir().join("fuzz")
}

/// `cargo +nightly fuzz <verb> …`, built with the targets' feature, ASan
/// (cargo-fuzz's default), debug assertions (so that an overflow is a
/// finding) and a target folder of its own (its flags differ from every
/// other build's).
fn cargo_fuzz(verb: &str, target: &str) -> Command {
    let mut c = Command::new("cargo");
    c.current_dir(crate::root())
        .args(["+nightly", "fuzz", verb, "--fuzz-dir", "fuzz"])
        .args(["--features", "libfuzzer", "--debug-assertions"])
        .arg("--target-dir")
        .arg(fuzz_dir().join("build"))
        .arg(target);
    // The release profile's fat LTO and single codegen unit are for the
    // binaries users run; here they would only slow every build.
    c.env("CARGO_PROFILE_RELEASE_LTO", "off")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16");
    // rustup's proxy picks nightly from `+nightly`; a RUSTUP_TOOLCHAIN
    // inherited from the cargo that runs xtask would override it.
    c.env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("CARGO")
        .env_remove("RUSTC");
    if target == "rush-vs-bash" {
        c.env("RUSH", rush_release());
    }
    c
}

/// The rush that `rush-vs-bash` runs against bash: the one users install.
fn rush_release() -> PathBuf {
    crate::target_dir().join("release").join("rush")
}

/// What a target runs besides itself, built first.
fn prepare(target: &str) -> Result<()> {
    if target == "rush-vs-bash" {
        cmd::run(
            cargo()
                .current_dir(crate::root())
                .args(["build", "--release", "-p", "rush"]),
        )?;
        ensure!(
            rush_release().is_file(),
            "{} is not there",
            rush_release().display()
        );
    }
    Ok(())
}

/// Real programs no one here wrote, read-only beside the seeds: for the
/// shell's parser, the completion scripts Debian's bash-completion ships.
fn extra_corpora(target: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if target == "rush-unparse" {
        out.push(crate::root().join("fuzz/corpus/rush-parse"));
    }
    if target == "rush-parse" || target == "rush-unparse" {
        for d in ["/usr/share/bash-completion/completions"] {
            if Path::new(d).is_dir() {
                out.push(PathBuf::from(d));
            }
        }
    }
    out
}

/// Seconds one input may take. The rush-brace target expands with limits
/// of 65,536 words and 8 MiB (rush's own are 64 times larger), so an input
/// that reaches them takes a few seconds under AddressSanitizer: linear
/// work, not a hang.
fn timeout(target: &str) -> u32 {
    match target {
        "rush-brace" => 30,
        // Each shell may run a program for 10 s (`timeout -s KILL`).
        "rush-vs-bash" => 30,
        _ => 10,
    }
}

/// Runs `target` for `seconds`; a finding is minimized and reported as an
/// error. What the run reached comes back.
pub fn run_target(target: &str, seconds: u64) -> Result<Reached> {
    let corpus = fuzz_dir().join("corpus").join(target);
    let artifacts = fuzz_dir().join("artifacts").join(target);
    std::fs::create_dir_all(&corpus)?;
    std::fs::create_dir_all(&artifacts)?;
    let seeds = crate::root().join("fuzz").join("corpus").join(target);
    let log = fuzz_dir().join(format!("{target}.log"));
    prepare(target)?;
    let mut c = cargo_fuzz("run", target);
    c.arg(&corpus).arg(&seeds).args(extra_corpora(target));
    c.arg("--")
        .arg(format!("-max_total_time={seconds}"))
        // A time bound per input: a pattern or parser that backtracks
        // without end is a finding.
        .arg(format!("-timeout={}", timeout(target)))
        .arg("-rss_limit_mb=4096")
        .arg("-max_len=65536")
        .arg("-print_final_stats=1")
        .arg(format!("-artifact_prefix={}/", artifacts.display()));
    eprintln!("$ {}  (log: {})", cmd::show(&c), log.display());
    let file = std::fs::File::create(&log)?;
    let status = c
        .stdout(Stdio::inherit())
        .stderr(file)
        .status()
        .with_context(|| format!("cannot run {}", cmd::show(&c)))?;
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let reached = reached(&text);
    if status.success() {
        return Ok(reached);
    }
    // The last lines say what went wrong.
    let tail: Vec<&str> = text.lines().rev().take(40).collect();
    for l in tail.iter().rev() {
        eprintln!("{l}");
    }
    let found = newest_artifact(&artifacts);
    match found {
        Some(input) => {
            let min = minimize(target, &input);
            bail!(
                "{target}: a finding, {}{}; once fixed, commit it to fuzz/corpus/{target}/ \
                 so that cargo test runs it",
                input.display(),
                min.map(|m| format!(" (minimized: {})", m.display()))
                    .unwrap_or_default()
            )
        }
        None => bail!(
            "{target}: cargo fuzz failed ({status}); see {}",
            log.display()
        ),
    }
}

/// The newest file libFuzzer left in `dir` (crash-, timeout-, oom-,
/// leak-…).
fn newest_artifact(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_name().to_string_lossy().starts_with("minimized-"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max()
        .map(|(_, p)| p)
}

/// `cargo fuzz tmin`: the smallest input that still fails, beside the
/// finding, for a crash or a leak. (A timeout or an out-of-memory input
/// is left as found: each try of it takes the whole limit.)
fn minimize(target: &str, input: &Path) -> Option<PathBuf> {
    let name = input.file_name()?.to_string_lossy().into_owned();
    if !(name.starts_with("crash-") || name.starts_with("leak-")) {
        return None;
    }
    let dir = input.parent()?;
    let mut c = cargo_fuzz("tmin", target);
    c.arg(input)
        .args(["-r", "2000", "--"])
        .arg("-max_total_time=120")
        .arg(format!("-artifact_prefix={}/", dir.display()));
    c.stdin(Stdio::null());
    let out = c.output().ok()?;
    let text = String::from_utf8_lossy(&out.stderr);
    // "Minimized artifact:" then the path on a line of its own.
    text.lines()
        .map(str::trim)
        .filter(|l| l.contains("minimized-from-") && !l.contains(' '))
        .map(PathBuf::from)
        .next_back()
}

/// Executions, coverage, features and corpus size from libFuzzer's output:
/// `stat::number_of_executed_units: N`, and its last `#N … cov: C ft: F
/// corp: K/…` line.
pub fn reached(log: &str) -> Reached {
    let mut r = Reached::default();
    for line in log.lines() {
        if let Some(n) = line.strip_prefix("stat::number_of_executed_units:") {
            r.execs = n.trim().parse().unwrap_or(r.execs);
        }
        if !line.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        for pair in words.windows(2) {
            let value = || pair[1].split('/').next().and_then(|v| v.parse().ok());
            match pair[0] {
                "cov:" => r.cov = value().unwrap_or(r.cov),
                "ft:" => r.features = value().unwrap_or(r.features),
                "corp:" => r.corpus = value().unwrap_or(r.corpus),
                _ => {}
            }
        }
    }
    r
}

/// `cargo xtask fuzz`.
pub fn run(target: Option<&str>, list: bool, seconds: u64) -> Result<()> {
    let all = targets()?;
    if list {
        for t in &all {
            println!("{t}");
        }
        return Ok(());
    }
    let chosen: Vec<&String> = match target {
        Some(t) => {
            let Some(found) = all.iter().find(|x| *x == t) else {
                bail!(
                    "no fuzz target {t:?}; `cargo xtask fuzz --list` lists them: {}",
                    all.join(", ")
                );
            };
            vec![found]
        }
        None => all.iter().collect(),
    };
    ensure_tools()?;
    let mut failed = Vec::new();
    let mut rows = Vec::new();
    for t in chosen {
        match run_target(t, seconds) {
            Ok(r) => rows.push((t.clone(), r)),
            Err(e) => {
                eprintln!("{e:#}");
                failed.push(t.clone());
            }
        }
    }
    println!("| target | seconds | executions | coverage (edges) | features | corpus |");
    println!("|---|---|---|---|---|---|");
    for (t, r) in &rows {
        println!(
            "| {t} | {seconds} | {} | {} | {} | {} |",
            r.execs, r.cov, r.features, r.corpus
        );
    }
    if !failed.is_empty() {
        bail!("findings in {}", failed.join(", "));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_libfuzzer_reached() {
        let log = "INFO: Seed: 1\n\
                   #2\tINITED cov: 10 ft: 12 corp: 1/1b exec/s: 0 rss: 30Mb\n\
                   #4096\tpulse  cov: 210 ft: 480 corp: 33/1021b lim: 43 exec/s: 2048 rss: 41Mb\n\
                   #8192\tDONE   cov: 215 ft: 490 corp: 35/1100b lim: 80 exec/s: 2730 rss: 42Mb\n\
                   Done 8192 runs in 3 second(s)\n\
                   stat::number_of_executed_units: 8192\n\
                   stat::average_exec_per_sec:     2730\n";
        assert_eq!(
            reached(log),
            Reached {
                execs: 8192,
                cov: 215,
                features: 490,
                corpus: 35
            }
        );
    }

    #[test]
    fn every_target_has_seeds() {
        let all = targets().unwrap();
        assert!(all.len() >= 14, "{all:?}");
        for t in &all {
            let seeds = crate::root().join("fuzz/corpus").join(t);
            let n = std::fs::read_dir(&seeds)
                .map(|d| d.count())
                .unwrap_or_else(|e| panic!("{}: {e}", seeds.display()));
            assert!(n > 0, "{t} has no seed");
        }
    }
}
