//! Rows under load: pipelined and concurrent searches, a selective
//! search beside a broad one, searches during a reindex, and how the index
//! scales with the corpus.

use crate::corpus::Query;
use crate::harness::{Env, emit_values, proc_kib};
use anyhow::{Context, Result, bail};
use floor::driver;
use floor::driver::Args;
use greppy::client::Client;
use greppy::protocol::{Request, Response};
use latency::BoxError;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// `batch` searches on one connection with at most `depth` in flight.
pub(crate) fn pipelined(
    c: &mut Client,
    qs: &[Query],
    next: &mut usize,
    batch: usize,
    depth: usize,
    corpus: &Path,
) -> Result<(), BoxError> {
    let (mut sent, mut done) = (0, 0);
    while done < batch {
        while sent < batch && sent - done < depth {
            let q = &qs[*next % qs.len()];
            *next += 1;
            let id = c.id();
            c.send(&Request::Search {
                id,
                query: q.search(corpus, true),
            })?;
            sent += 1;
        }
        match c.recv()? {
            Response::Done { .. } => done += 1,
            Response::File { .. } => {}
            // Past the daemon's bound on searches in flight: an explicit
            // refusal; the client sends again.
            Response::Busy { id: Some(_) } => sent -= 1,
            other => return Err(format!("unexpected {other:?}").into()),
        }
    }
    Ok(())
}

/// `clients` threads with a connection each, `per` searches each: every
/// search's latency, busy answers, errors, and the wall time.
pub(crate) fn concurrent(
    env: &Env,
    qs: &[Query],
    clients: usize,
    per: usize,
    corpus: &Path,
) -> Result<(Vec<u64>, usize, usize, Duration)> {
    let t = Instant::now();
    let results: Vec<(Vec<u64>, usize, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients)
            .map(|k| {
                s.spawn(move || {
                    let (mut lat, mut busy, mut errors) = (Vec::new(), 0, 0);
                    let Ok(mut c) = env.client() else {
                        return (lat, busy, per);
                    };
                    for n in 0..per {
                        let q = &qs[(k * per + n) % qs.len()];
                        let t = Instant::now();
                        match c.search(q.search(corpus, true)) {
                            Ok(_) => lat.push(t.elapsed().as_nanos() as u64),
                            Err(greppy::client::Error::Busy) => busy += 1,
                            Err(_) => errors += 1,
                        }
                    }
                    (lat, busy, errors)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let wall = t.elapsed();
    let mut lat = Vec::new();
    let (mut busy, mut errors) = (0, 0);
    for (l, b, e) in results {
        lat.extend(l);
        busy += b;
        errors += e;
    }
    Ok((lat, busy, errors, wall))
}

/// Selective searches, one at a time from one client, while `N` other
/// clients (none, 1, 4, 64) each hold two broad searches (`e`: almost
/// every line of every file, millions of answers) on their connections,
/// either reading the answers as fast as they can, asking again when
/// both are done, or reading nothing at all.
pub(crate) fn beside_broad(
    args: &Args,
    env: &Env,
    selective: &[Query],
    corpus: &Path,
) -> Result<()> {
    let broad = Query {
        pattern: "e".into(),
        ignore_case: false,
        word: false,
    };
    let per_case = args.pick(40, 200);
    let mut cases = vec![(0usize, "none")];
    for clients in [1usize, 4, 64] {
        cases.push((clients, "reading"));
        cases.push((clients, "not reading"));
    }
    let mut next = 0usize;
    for (clients, they) in cases {
        let reading = they == "reading";
        let stop = std::sync::atomic::AtomicBool::new(false);
        let (begun_tx, begun) = std::sync::mpsc::channel::<bool>();
        // Held for writing while the selective searches run: the clients
        // that read nothing wait to read it.
        let gate = std::sync::RwLock::new(());
        let lat = std::thread::scope(|s| -> Result<Vec<u64>> {
            let hold = gate.write().unwrap_or_else(|e| e.into_inner());
            for _ in 0..clients {
                let (begun_tx, gate, stop, broad) = (begun_tx.clone(), &gate, &stop, &broad);
                s.spawn(move || {
                    let Ok(mut c) = env.client() else {
                        return begun_tx.send(false);
                    };
                    let ask = |c: &mut Client| -> Result<(), greppy::client::Error> {
                        for _ in 0..2 {
                            let id = c.id();
                            c.send(&Request::Search {
                                id,
                                query: broad.search(corpus, false),
                            })?;
                        }
                        Ok(())
                    };
                    if ask(&mut c).and_then(|()| c.recv()).is_err() {
                        return begun_tx.send(false);
                    }
                    let _ = begun_tx.send(true);
                    if !reading {
                        // Holds the connection, reading nothing, until the
                        // measurement is over.
                        drop(gate.read());
                        return Ok(());
                    }
                    let mut done = 0;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        match c.recv() {
                            Ok(Response::Done { .. }) => {
                                done += 1;
                                if done % 2 == 0 && ask(&mut c).is_err() {
                                    break;
                                }
                            }
                            Ok(_) => {}
                            Err(_) => break,
                        }
                    }
                    Ok(())
                });
            }
            drop(begun_tx);
            // Each client says once whether it began (and holds its sender
            // while it runs, so the channel does not end).
            let started = begun.iter().take(clients).filter(|&ok| ok).count();
            if started < clients {
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                drop(hold);
                bail!(
                    "{} of {clients} broad clients could not start",
                    clients - started
                );
            }
            let mut c = env.client()?;
            let mut lat = Vec::with_capacity(per_case);
            for _ in 0..per_case {
                let q = &selective[next % selective.len()];
                next += 1;
                let t = Instant::now();
                c.search(q.search(corpus, true))?;
                lat.push(t.elapsed().as_nanos() as u64);
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            drop(hold);
            Ok(lat)
        })?;
        let mut sorted = lat.clone();
        sorted.sort_unstable();
        let at = |p: usize| sorted[(sorted.len() * p / 100).min(sorted.len() - 1)] as f64 / 1e6;
        driver::note(format!(
            "selective beside {clients} broad clients ({they}): p50 {:.2} ms, p99 {:.2} ms",
            at(50),
            at(99)
        ))?;
        emit_values(
            "selective search beside broad searches",
            "ns",
            "greppy",
            &lat,
            &[
                ("broad clients", clients.to_string()),
                ("they", they.into()),
            ],
            None,
        )?;
    }
    Ok(())
}

/// Searches on one connection while another asks for a full rebuild: the
/// searches' latencies, and how many failed.
pub(crate) fn during_reindex(env: &Env, qs: &[Query], corpus: &Path) -> Result<(Vec<u64>, usize)> {
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let h = s.spawn(|| {
            let (mut lat, mut failed) = (Vec::new(), 0);
            let Ok(mut c) = env.client() else {
                return (lat, usize::MAX);
            };
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let q = &qs[n % qs.len()];
                n += 1;
                let t = Instant::now();
                match c.search(q.search(corpus, true)) {
                    Ok(a) if a.scan.is_none() => lat.push(t.elapsed().as_nanos() as u64),
                    _ => failed += 1,
                }
            }
            (lat, failed)
        });
        let r = env.index(corpus);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let out = h.join().unwrap_or_default();
        r.map(|_| out)
    })
}

/// Daemon memory and index size over three corpus sizes (hard-linked
/// subsets of the corpus: the first eighth, third and all of its crates),
/// beside the daemon's memory for an empty tree: what it costs whatever
/// the tree (its runtime, its threads, the pages of its code).
pub(crate) fn scaling(args: &Args, env: &Env, corpus: &Path) -> Result<()> {
    let mut crates: Vec<PathBuf> = std::fs::read_dir(corpus.join("vendor"))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    crates.sort();
    let mut empty_rss = None;
    for (label, frac) in [("empty", 0usize), ("1/8", 8), ("1/3", 3), ("all", 1)] {
        let dir = args.scratch.join(format!("greppy-scale-{frac}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        let take = if frac == 0 {
            0
        } else {
            crates.len().div_ceil(frac)
        };
        for c in crates.iter().take(take) {
            let st = Command::new("cp").arg("-al").arg(c).arg(&dir).status()?;
            if !st.success() {
                bail!("cp -al {} failed", c.display());
            }
        }
        env.fresh_daemon()?;
        let info = env.index(&dir)?;
        let pid = env.pid()?;
        let rss = proc_kib(pid, "VmRSS").context("daemon RSS")?;
        let mib = (info.source_bytes >> 20).max(1);
        match empty_rss {
            None => {
                empty_rss = Some(rss);
                driver::note(format!(
                    "an empty tree: daemon RSS {:.1} MiB, whatever the tree holds",
                    rss as f64 / 1024.0
                ))?;
            }
            Some(floor) => driver::note(format!(
                "{label} of the corpus: {:.1} MiB of source, daemon RSS {:.1} MiB ({:.2}x; {:.2}x above an empty tree's), index {:.1} MiB ({:.2}x)",
                info.source_bytes as f64 / (1 << 20) as f64,
                rss as f64 / 1024.0,
                (rss << 10) as f64 / info.source_bytes as f64,
                (rss.saturating_sub(floor) << 10) as f64 / info.source_bytes as f64,
                info.index_bytes as f64 / (1 << 20) as f64,
                info.index_bytes as f64 / info.source_bytes as f64
            ))?,
        }
        let p = [("corpus", label.to_string())];
        emit_values(
            "daemon RSS after indexing",
            "KiB",
            "greppy",
            &[rss],
            &p,
            Some(mib),
        )?;
        emit_values(
            "index size by corpus size",
            "bytes",
            "greppy",
            &[info.index_bytes],
            &p,
            Some(mib),
        )?;
        let _ = std::fs::remove_dir_all(&dir);
    }
    env.fresh_daemon()
}
