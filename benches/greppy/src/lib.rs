//! The greppy workloads, on a real corpus: `cargo vendor` of this workspace
//! (hundreds of MB of real Rust and C) in `target/corpus`, plus the Rust
//! toolchain's `library/` where rustup has it. Queries rotate over more
//! than 2,000 distinct patterns drawn from the corpus, by class, so that no
//! answer is a cache hit.
//!
//! Peers: rg (`rg PATTERN DIR`), zoekt (`zoekt-index`, then `zoekt QUERY`
//! on its index) and GNU `grep -r`, each a whole process, interleaved with
//! greppy's command line; the floors are `/bin/true` and a Unix-socket
//! round trip.

use anyhow::{Result, bail};
use floor::driver::{self, Args};
use floor::{Program, UnixRoundTrip};
use greppy::protocol::SearchQuery;
use latency::{Run, Sample, Subject, interleave};
use std::collections::HashMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod answers;
mod corpus;
mod harness;
mod load;

use harness::{
    Env, SYSTEM, Zoekt, emit_values, emit_values_of, proc_cpu_ns, proc_kib, process, rounds,
};

use answers::{exactness, ranked};
use corpus::{Query, corpus, dir_bytes, queries, read_parts, trigram_floor};
use load::{beside_broad, concurrent, during_reindex, pipelined, scaling};

pub fn run(args: &Args) -> Result<()> {
    let greppy = args.bin("greppy")?;
    let env = Env {
        greppy,
        dir: args.scratch.join("greppy-bench"),
    };
    // A daemon that an interrupted run left behind listens in this
    // directory: stopped first, or removing its socket would leave it
    // running where no one can reach it.
    env.stop();
    let _ = std::fs::remove_dir_all(&env.dir);
    std::fs::create_dir_all(&env.dir)?;
    let result = run_all(args, &env);
    env.stop();
    result
}

fn run_all(args: &Args, env: &Env) -> Result<()> {
    let corpus_dir = corpus()?;
    let corpus = corpus_dir.as_path();
    let tree = greppy::search::walk_tree(corpus);
    let bytes: u64 = tree
        .files
        .iter()
        .filter_map(|f| f.metadata().ok())
        .map(|m| m.len())
        .sum();
    let mut langs: HashMap<String, usize> = HashMap::new();
    for f in &tree.files {
        let e = f
            .extension()
            .map_or("(none)".into(), |e| e.to_string_lossy().into_owned());
        *langs.entry(e).or_default() += 1;
    }
    let mut langs: Vec<_> = langs.into_iter().collect();
    langs.sort_by_key(|l| std::cmp::Reverse(l.1));
    let top: Vec<String> = langs
        .iter()
        .take(8)
        .map(|(e, n)| format!(".{e} {n}"))
        .collect();
    driver::note(format!(
        "corpus: {} ({} files rg searches, {:.0} MiB; by extension: {})",
        corpus.display(),
        tree.files.len(),
        bytes as f64 / (1 << 20) as f64,
        top.join(", ")
    ))?;
    let classes = queries(&tree.files);
    let distinct: usize = classes.iter().map(|(_, v)| v.len()).sum();
    driver::note(format!(
        "{distinct} distinct queries: {}",
        classes
            .iter()
            .map(|(c, v)| format!("{c} {}", v.len()))
            .collect::<Vec<_>>()
            .join(", ")
    ))?;
    let rg = args.peer("rg");
    let grep = args.peer("grep");
    // zoekt: its index builder, its search command beside it, and the
    // folder its index goes to.
    let zoekt = args.peer("zoekt").map(|(index, v)| Zoekt {
        search: index.with_file_name("zoekt"),
        index,
        version: v,
        dir: env.dir.join("zoekt"),
    });
    driver::plan(4 + 2 * classes.len() as u64 + 10)?;

    // 1. Index build from scratch, against one rg scan of the same tree.
    driver::step("index build")?;
    let mut subjects = vec![Subject::new(
        "greppy index",
        env!("CARGO_PKG_VERSION"),
        || {
            env.fresh_daemon()?;
            let pid = env.pid()?;
            let (u0, s0) = proc_cpu_ns(pid).unwrap_or_default();
            let t = Instant::now();
            env.index(corpus)?;
            let wall = t.elapsed();
            let (u1, s1) = proc_cpu_ns(pid).unwrap_or_default();
            Ok(Sample {
                user_ns: Some(u1 - u0),
                sys_ns: Some(s1 - s0),
                max_rss_kib: proc_kib(pid, "VmHWM"),
                ..Sample::duration(wall)
            })
        },
    )];
    if let Some((p, v)) = &rg {
        let p = p.clone();
        subjects.push(Subject::new("rg: one scan", v.clone(), move || {
            let mut c = Command::new(&p);
            c.args(["-c", "--", "zqxj_no_such_text_zqxj"]).arg(corpus);
            process(c)
        }));
    }
    subjects.push(Subject::new(
        "floor: walk, read and mark every trigram",
        "this machine",
        || {
            let t = Instant::now();
            // Its count of distinct trigrams is used, so that no marking
            // is left out as dead code.
            std::hint::black_box(trigram_floor(corpus));
            Ok(Sample::duration(t.elapsed()))
        },
    ));
    if let Some(z) = &zoekt {
        subjects.push(Subject::new("zoekt-index", z.version.clone(), || {
            let _ = std::fs::remove_dir_all(&z.dir);
            let mut c = Command::new(&z.index);
            c.args(["-disable_ctags", "-index"]).arg(&z.dir).arg(corpus);
            process(c)
        }));
    }
    let run = Run::new(SYSTEM, "index build from scratch", vec![]);
    driver::emit(&interleave(run, &mut subjects, rounds(args, 1, 3))?)?;
    drop(subjects);
    if let Some(z) = &zoekt {
        let bytes = dir_bytes(&z.dir);
        emit_values_of(
            "index size on disk",
            "bytes",
            ("zoekt", &z.version),
            &[bytes],
            &[],
            None,
        )?;
        driver::note(format!(
            "zoekt's index: {:.1} MiB; zoekt indexes every file under 2 MiB that is \
             not binary, .gitignore or not",
            bytes as f64 / (1 << 20) as f64
        ))?;
    }
    let info = env.index(corpus)?;
    emit_values(
        "index size on disk",
        "bytes",
        "greppy",
        &[info.index_bytes],
        &[("source_bytes", info.source_bytes.to_string())],
        None,
    )?;
    driver::note(format!(
        "index: {} files, {:.1} MiB of source, index {:.1} MiB ({:.2}x the source)",
        info.files,
        info.source_bytes as f64 / (1 << 20) as f64,
        info.index_bytes as f64 / (1 << 20) as f64,
        info.index_bytes as f64 / info.source_bytes.max(1) as f64
    ))?;

    // 2. One query end to end from a process, per class.
    let truth = Program::new("/bin/true", &[])?;
    for (class, qs) in &classes {
        driver::step(format!("command line: {class}"))?;
        let mut subjects: Vec<Subject<'_>> = Vec::new();
        let mut i = 0usize;
        subjects.push(Subject::new(
            "greppy",
            env!("CARGO_PKG_VERSION"),
            move || {
                let q = &qs[i % qs.len()];
                i += 1;
                let mut c = env.cmd();
                c.args(q.flags()).arg("--").arg(&q.pattern).arg(corpus);
                process(c)
            },
        ));
        if let Some(z) = &zoekt {
            let mut i = 0usize;
            subjects.push(Subject::new("zoekt", z.version.clone(), move || {
                let q = &qs[i % qs.len()];
                i += 1;
                let mut c = Command::new(&z.search);
                c.arg("-index_dir").arg(&z.dir).arg(q.zoekt());
                process(c)
            }));
        }
        for (name, peer, extra) in [
            ("rg", &rg, &[][..]),
            ("grep -r", &grep, &["-r", "-n", "-E"][..]),
        ] {
            if let Some((p, v)) = peer {
                let p = p.clone();
                let mut i = 0usize;
                subjects.push(Subject::new(name.to_string(), v.clone(), move || {
                    let q = &qs[i % qs.len()];
                    i += 1;
                    let mut c = Command::new(&p);
                    c.args(extra)
                        .args(q.flags())
                        .arg("--")
                        .arg(&q.pattern)
                        .arg(corpus);
                    process(c)
                }));
            }
        }
        let truth = &truth;
        subjects.push(Subject::new(
            "floor: posix_spawn+wait /bin/true",
            "kernel",
            move || Ok(truth.posix_spawn_wait()?),
        ));
        let slow = *class == "regex without literals";
        let opts = if slow {
            rounds(args, 2, 5)
        } else {
            rounds(args, 5, 30)
        };
        let run =
            Run::new(SYSTEM, "one query from the command line", vec![]).param("class", *class);
        driver::emit(&interleave(run, &mut subjects, opts)?)?;
    }

    // 2b. Callers' own command lines: an editor's workspace search (VS
    // Code's flags, run in the tree on `.`), an agent's content search
    // (`--max-columns 500`), and a search the index cannot narrow
    // (`-c e`: nearly every file matches), greppy against rg.
    let selective = &classes[0].1;
    let vscode = |q: &Query| -> Vec<String> {
        [
            "--hidden",
            "--ignore-case",
            "-g",
            "!**/.git",
            "--max-filesize",
            "1000000",
            "--no-ignore-parent",
            "--follow",
            "--crlf",
            "--auto-hybrid-regex",
            "--regexp",
            &q.pattern,
            "--no-config",
            "--no-ignore-global",
            "--json",
            "--before-context",
            "1",
            "--",
            ".",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let agent = |q: &Query| -> Vec<String> {
        ["-n", "--max-columns", "500", "--", &q.pattern]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    let unselective = |_: &Query| -> Vec<String> { vec!["-c".into(), "e".into()] };
    type Line<'a> = &'a dyn Fn(&Query) -> Vec<String>;
    let callers: [(&str, Line<'_>, bool); 3] = [
        ("editor: VS Code's workspace search", &vscode, true),
        ("agent: --max-columns 500", &agent, false),
        (
            "unselective: -c e (every file matches)",
            &unselective,
            false,
        ),
    ];
    for (name, line, in_tree) in callers {
        driver::step(format!("command line: {name}"))?;
        let mut subjects: Vec<Subject<'_>> = Vec::new();
        let mut i = 0usize;
        subjects.push(Subject::new(
            "greppy",
            env!("CARGO_PKG_VERSION"),
            move || {
                let q = &selective[i % selective.len()];
                i += 1;
                let mut c = env.cmd();
                c.args(line(q));
                if in_tree {
                    c.current_dir(corpus);
                } else {
                    c.arg(corpus);
                }
                process(c)
            },
        ));
        if let Some((p, v)) = &rg {
            let p = p.clone();
            let mut i = 0usize;
            subjects.push(Subject::new("rg", v.clone(), move || {
                let q = &selective[i % selective.len()];
                i += 1;
                let mut c = Command::new(&p);
                c.args(line(q)).stdin(Stdio::null());
                if in_tree {
                    c.current_dir(corpus);
                } else {
                    c.arg(corpus);
                }
                process(c)
            }));
        }
        let opts = if name.starts_with("unselective") {
            rounds(args, 2, 8)
        } else {
            rounds(args, 5, 30)
        };
        let run = Run::new(SYSTEM, "one query from the command line", vec![]).param("class", name);
        driver::emit(&interleave(run, &mut subjects, opts)?)?;
    }

    // 3. One query on a kept connection, per class.
    for (class, qs) in &classes {
        driver::step(format!("kept connection: {class}"))?;
        let mut client = env.client()?;
        let mut rt = UnixRoundTrip::start(64, 64)?;
        let mut i = 0usize;
        let mut subjects = vec![
            Subject::new("greppy", env!("CARGO_PKG_VERSION"), move || {
                let q = &qs[i % qs.len()];
                i += 1;
                let (s, a) = Sample::time(|| client.search(q.search(corpus, false)));
                let a = a?;
                if a.scan.is_some() {
                    return Err("the daemon asked for a scan".into());
                }
                Ok(s)
            }),
            Subject::new("floor: unix socket round trip", "kernel", move || {
                Ok(rt.round_trip()?)
            }),
        ];
        let slow = *class == "regex without literals";
        let opts = if slow {
            rounds(args, 3, 20)
        } else {
            rounds(args, 100, 1000)
        };
        let run = Run::new(SYSTEM, "one query on a kept connection", vec![]).param("class", *class);
        driver::emit(&interleave(run, &mut subjects, opts)?)?;
    }

    // 4. Throughput on one connection, sequential and pipelined.
    driver::step("throughput on one connection")?;
    let selective = &classes[0].1;
    let batch = 256usize;
    let mut subjects: Vec<Subject<'_>> = Vec::new();
    for depth in [1usize, 8, 64] {
        let mut client = env.client()?;
        let mut next = 0usize;
        subjects.push(Subject::new(
            format!("greppy, depth {depth}"),
            env!("CARGO_PKG_VERSION"),
            move || {
                let t = Instant::now();
                pipelined(&mut client, selective, &mut next, batch, depth, corpus)?;
                Ok(Sample::ns(t.elapsed().as_nanos() as u64 / batch as u64))
            },
        ));
    }
    // The floor of answering from the files as they are: reading, on one
    // thread, the parts of each candidate that the index says may match
    // (open, read, close; no matching), as the daemon must.
    let mut reads: Vec<Vec<(PathBuf, Option<greppy::index::Regions>)>> = Vec::new();
    {
        let mut client = env.client()?;
        for q in selective {
            let a = client.search(SearchQuery {
                candidates: true,
                regions: true,
                ..q.search(corpus, true)
            })?;
            let files = a
                .files
                .into_iter()
                .map(|p| PathBuf::from(OsString::from_vec(p)));
            reads.push(files.zip(a.regions).collect());
        }
    }
    let mut next = 0usize;
    let mut buf = vec![0u8; 4 << 20];
    subjects.push(Subject::new(
        "floor: reading the candidates, one thread",
        "kernel",
        move || {
            let t = Instant::now();
            for _ in 0..batch {
                let files = &reads[next % reads.len()];
                next += 1;
                for (path, regions) in files {
                    read_parts(path, regions.as_ref(), &mut buf);
                }
            }
            Ok(Sample::ns(t.elapsed().as_nanos() as u64 / batch as u64))
        },
    ));
    let run = Run::new(SYSTEM, "time per query on one connection", vec![])
        .param("queries per round", batch.to_string());
    driver::emit(&interleave(run, &mut subjects, rounds(args, 5, 30))?)?;
    drop(subjects);

    // 5. Concurrent clients: rounds of 8,192 searches, each round from
    // new connections, pooled. (One round lasts about a third of a second
    // at 64 clients; its p99 is its slowest 82 searches, and on this shared
    // machine one stall of a few milliseconds anywhere in it holds all 64
    // searches in flight: single rounds of one build gave 3.5 to 5.4 ms.
    // Each round's p99 is in the notes.)
    driver::step("concurrent clients")?;
    for clients in [1usize, 8, 64, 256] {
        let total = args.pick(1024, 8192).max(clients);
        let per = total / clients;
        let (mut lat, mut busy, mut errors, mut wall) = (Vec::new(), 0, 0, Duration::ZERO);
        let mut p99s = Vec::new();
        for _ in 0..args.pick(1, 4) {
            let (mut l, b, e, w) = concurrent(env, selective, clients, per, corpus)?;
            l.sort_unstable();
            if let Some(&p) = l.get(l.len() * 99 / 100) {
                p99s.push(format!("{:.2}", p as f64 / 1e6));
            }
            lat.extend(l);
            (busy, errors, wall) = (busy + b, errors + e, wall + w);
        }
        driver::note(format!(
            "{clients} clients: {} queries in {:.2} s ({:.0}/s), {busy} busy, {errors} errors; \
             p99 of each round: {} ms",
            lat.len(),
            wall.as_secs_f64(),
            lat.len() as f64 / wall.as_secs_f64(),
            p99s.join(", ")
        ))?;
        emit_values(
            "latency with concurrent clients",
            "ns",
            "greppy",
            &lat,
            &[("clients", clients.to_string())],
            Some(clients as u64),
        )?;
    }

    // 5b. One client must not hold up the others.
    driver::step("selective searches beside broad ones")?;
    beside_broad(args, env, selective, corpus)?;

    // 6. Freshness: an edit until a search finds it.
    driver::step("freshness")?;
    let edit_dir = corpus.join("greppy-fresh");
    std::fs::create_dir_all(&edit_dir)?;
    let edit = edit_dir.join("edit.rs");
    let mut client = env.client()?;
    let mut lat = Vec::new();
    let mut retries = 0;
    for n in 0..args.pick(30, 200) {
        let token = format!("fresh_edit_token_{n}_{}", std::process::id());
        let t = Instant::now();
        std::fs::write(&edit, format!("const T: &str = \"{token}\";\n"))?;
        let mut tries = 0;
        loop {
            let q = Query {
                pattern: token.clone(),
                ignore_case: false,
                word: false,
            };
            let a = client.search(q.search(corpus, true))?;
            if !a.files.is_empty() {
                break;
            }
            tries += 1;
            if tries > 1000 {
                bail!("edit {n} never found");
            }
        }
        retries += tries;
        lat.push(t.elapsed().as_nanos() as u64);
    }
    driver::note(format!(
        "freshness: {} edits, {retries} searches that missed the edit before one found it",
        lat.len()
    ))?;
    emit_values(
        "edit until a search finds it",
        "ns",
        "greppy",
        &lat,
        &[],
        None,
    )?;
    let _ = std::fs::remove_dir_all(&edit_dir);

    driver::step("searches during a full reindex")?;
    let (lat, failed) = during_reindex(env, selective, corpus)?;
    driver::note(format!(
        "during a full reindex: {} searches, {failed} failed",
        lat.len()
    ))?;
    emit_values(
        "search during a full reindex",
        "ns",
        "greppy",
        &lat,
        &[],
        None,
    )?;

    // 7. Memory and index size at three corpus sizes.
    driver::step("scaling")?;
    scaling(args, env, corpus)?;

    // 8. Restart to first answer.
    driver::step("restart to first answer")?;
    env.index(corpus)?;
    let mut lat = Vec::new();
    for n in 0..args.pick(3, 10) {
        env.stop();
        let q = &selective[n % selective.len()];
        let t = Instant::now();
        env.start()?;
        let o = env
            .cmd()
            .arg("-l")
            .arg("--")
            .arg(&q.pattern)
            .arg(corpus)
            .output()?;
        lat.push(t.elapsed().as_nanos() as u64);
        if String::from_utf8_lossy(&o.stderr).contains("scan") {
            bail!("the restarted daemon did not answer from its index");
        }
    }
    emit_values("restart to first answer", "ns", "greppy", &lat, &[], None)?;

    // 9. Exactness on the whole corpus.
    driver::step("exactness against rg")?;
    if let Some((rg, _)) = &rg {
        exactness(args, env, rg, &classes, corpus)?;
    }

    // 10. Ranked search (`greppy find`).
    driver::step("ranked search")?;
    ranked(args, env, &tree.files, corpus)?;
    Ok(())
}
