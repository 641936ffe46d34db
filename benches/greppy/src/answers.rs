//! Rows about the answers themselves: ranked results, and exactness
//! against rg on the same queries.

use crate::corpus::{Query, spelled_queries, walk_sizes};
use crate::harness::{Env, SYSTEM, emit_values, proc_cpu_ns, proc_kib, process, rounds};
use anyhow::{Result, bail};
use floor::driver::Args;
use floor::{Program, UnixRoundTrip, driver};
use greppy::client::Client;
use latency::{Run, Sample, Subject, interleave};
use std::collections::BTreeSet;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Ranked search: the first `find` on an indexed tree (which builds the
/// ranked index), the ranked index's size, the daemon's memory after, one
/// query on a kept connection and from the command line, and how often
/// the definition a query spells is the first hit and in the first ten.
pub(crate) fn ranked(args: &Args, env: &Env, files: &[PathBuf], corpus: &Path) -> Result<()> {
    let qs = spelled_queries(files, args.pick(100, 500));
    if qs.is_empty() {
        bail!("no definitions to ask for in the corpus");
    }
    env.index(corpus)?;
    let find = |c: &mut Client, q: &str| {
        c.find(greppy::protocol::FindQuery {
            query: q.to_string(),
            path: corpus.as_os_str().as_bytes().to_vec(),
            limit: 10,
            ..Default::default()
        })
    };
    let mut client = env.client()?;
    let pid = env.pid()?;
    let rss0 = proc_kib(pid, "VmRSS").unwrap_or(0);
    let (u0, s0) = proc_cpu_ns(pid).unwrap_or_default();
    let t = Instant::now();
    find(&mut client, &qs[0].query)?;
    let build = t.elapsed();
    let (u1, s1) = proc_cpu_ns(pid).unwrap_or_default();
    let rss1 = proc_kib(pid, "VmRSS").unwrap_or(0);
    let ranked_bytes: u64 = std::fs::read_dir(env.dir.join("cache/greppy"))?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".find"))
        .flat_map(|e| walk_sizes(&e.path()))
        .sum();
    driver::note(format!(
        "ranked index: built by the first find in {:.1} s ({:.1} s CPU), {:.1} MiB on disk, \
         daemon RSS {:.0} MiB before, {:.0} MiB after",
        build.as_secs_f64(),
        (u1 - u0 + s1 - s0) as f64 / 1e9,
        ranked_bytes as f64 / (1 << 20) as f64,
        rss0 as f64 / 1024.0,
        rss1 as f64 / 1024.0,
    ))?;
    emit_values(
        "ranked index build (first find)",
        "ns",
        "greppy",
        &[build.as_nanos() as u64],
        &[("index_bytes", ranked_bytes.to_string())],
        None,
    )?;
    // Quality: the spelled definition first, and in the first ten.
    let (mut first, mut ten) = (0usize, 0usize);
    for q in &qs {
        let hits = find(&mut client, &q.query)?.hits;
        if hits.first().is_some_and(|h| h.name == q.name) {
            first += 1;
        }
        if hits.iter().any(|h| h.name == q.name) {
            ten += 1;
        }
    }
    driver::note(format!(
        "ranked quality: of {} queries that spell a sampled definition's name in words \
         (`retry policy` for `RetryPolicy`), a definition of that name is the first hit for \
         {first} ({:.0}%) and in the first ten for {ten} ({:.0}%)",
        qs.len(),
        100.0 * first as f64 / qs.len() as f64,
        100.0 * ten as f64 / qs.len() as f64,
    ))?;
    let mut rt = UnixRoundTrip::start(64, 64)?;
    let mut i = 0usize;
    let qs = &qs;
    let mut subjects = vec![
        Subject::new("greppy find", env!("CARGO_PKG_VERSION"), move || {
            let q = &qs[i % qs.len()];
            i += 1;
            let (s, a) = Sample::time(|| find(&mut client, &q.query));
            a?;
            Ok(s)
        }),
        Subject::new("floor: unix socket round trip", "kernel", move || {
            Ok(rt.round_trip()?)
        }),
    ];
    let run = Run::new(SYSTEM, "one ranked query on a kept connection", vec![]);
    driver::emit(&interleave(run, &mut subjects, rounds(args, 50, 300))?)?;
    drop(subjects);
    let truth = Program::new("/bin/true", &[])?;
    let truth = &truth;
    let mut i = 0usize;
    let mut subjects = vec![
        Subject::new("greppy find", env!("CARGO_PKG_VERSION"), move || {
            let q = &qs[i % qs.len()];
            i += 1;
            let mut c = env.cmd();
            c.args(["find", "--lines", "0", "--", &q.query]).arg(corpus);
            process(c)
        }),
        Subject::new("floor: posix_spawn+wait /bin/true", "kernel", move || {
            Ok(truth.posix_spawn_wait()?)
        }),
    ];
    let run = Run::new(SYSTEM, "one ranked query from the command line", vec![]);
    driver::emit(&interleave(run, &mut subjects, rounds(args, 5, 30))?)?;
    Ok(())
}

/// The (file, line) pairs of sampled queries, from the daemon and from rg.
pub(crate) fn exactness(
    args: &Args,
    env: &Env,
    rg: &Path,
    classes: &[(&'static str, Vec<Query>)],
    corpus: &Path,
) -> Result<()> {
    env.index(corpus)?;
    let mut c = env.client()?;
    let n = args.pick(100, 1000);
    let pool: Vec<&Query> = classes
        .iter()
        .filter(|(c, _)| *c != "regex without literals")
        .flat_map(|(_, v)| v.iter())
        .collect();
    let mut differ = Vec::new();
    for k in 0..n {
        let q = pool[(k * 7919) % pool.len()];
        let a = c.search(q.search(corpus, false))?;
        let ours: BTreeSet<(Vec<u8>, u64)> = a.lines.into_iter().map(|(p, l, _)| (p, l)).collect();
        let o = Command::new(rg)
            .args(["-n", "--no-heading", "--null", "--color", "never"])
            .args(q.flags())
            .arg("--")
            .arg(&q.pattern)
            .arg(corpus)
            .output()?;
        let mut theirs = BTreeSet::new();
        for line in o.stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let Some(nul) = line.iter().position(|&b| b == 0) else {
                continue;
            };
            let rest = &line[nul + 1..];
            let num: String = rest
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .map(|&b| b as char)
                .collect();
            theirs.insert((line[..nul].to_vec(), num.parse().unwrap_or(0)));
        }
        if ours != theirs {
            differ.push(q.pattern.clone());
        }
    }
    driver::note(format!(
        "exactness: {} of {n} sampled queries give the same (file, line) pairs as rg{}",
        n - differ.len(),
        if differ.is_empty() {
            String::new()
        } else {
            format!("; differ: {:?}", &differ[..differ.len().min(5)])
        }
    ))?;
    emit_values(
        "queries whose answer differs from rg's",
        "count",
        "greppy",
        &[differ.len() as u64],
        &[("queries", n.to_string())],
        None,
    )
}
