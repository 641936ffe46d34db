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

use anyhow::{Context, Result, bail};
use floor::driver::{self, Args};
use floor::{Program, UnixRoundTrip};
use greppy::client::Client;
use greppy::protocol::{Request, Response, SearchQuery};
use latency::process::time_command;
use latency::{BoxError, Options, Run, Sample, Subject, SubjectInfo, interleave};
use std::collections::{BTreeSet, HashMap};
use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SYSTEM: &str = "greppy";

/// A daemon of the benchmark's own: its socket and indexes in `dir`.
struct Env {
    greppy: PathBuf,
    dir: PathBuf,
}

impl Env {
    fn cmd(&self) -> Command {
        let mut c = Command::new(&self.greppy);
        c.env("XDG_RUNTIME_DIR", self.dir.join("run"))
            .env("XDG_CACHE_HOME", self.dir.join("cache"))
            .env_remove("GREPPY_NO_DAEMON")
            .stdin(Stdio::null());
        c
    }

    fn socket(&self) -> PathBuf {
        self.dir.join("run/greppy/socket")
    }

    fn ok(&self, args: &[&str]) -> Result<String> {
        let o = self.cmd().args(args).output()?;
        if !o.status.success() {
            bail!(
                "greppy {args:?}: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    }

    fn start(&self) -> Result<()> {
        self.ok(&["daemon", "start"]).map(drop)
    }

    fn stop(&self) {
        let _ = self.ok(&["daemon", "stop"]);
    }

    /// A daemon with no index at all.
    fn fresh_daemon(&self) -> Result<()> {
        self.stop();
        let _ = std::fs::remove_dir_all(self.dir.join("cache"));
        self.start()
    }

    fn client(&self) -> Result<Client> {
        Client::connect(&self.socket()).map_err(Into::into)
    }

    fn pid(&self) -> Result<i32> {
        let s = std::os::unix::net::UnixStream::connect(self.socket())?;
        Ok(rustix::net::sockopt::socket_peercred(&s)?
            .pid
            .as_raw_nonzero()
            .get())
    }

    fn index(&self, path: &Path) -> Result<greppy::protocol::RootInfo> {
        Ok(self.client()?.index(path)?)
    }
}

/// zoekt, as the benchmark runs it.
struct Zoekt {
    index: PathBuf,
    search: PathBuf,
    version: String,
    dir: PathBuf,
}

/// The bytes of the files in a folder (not below it).
fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

/// A `/proc/PID/status` figure in KiB (`VmRSS`, `VmHWM`).
fn proc_kib(pid: i32, key: &str) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// User and system CPU of a process so far, in ns.
fn proc_cpu_ns(pid: i32) -> Option<(u64, u64)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces) start at 3.
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = 1_000_000_000 / rustix::param::clock_ticks_per_second();
    Some((
        f[11].parse::<u64>().ok()? * tick,
        f[12].parse::<u64>().ok()? * tick,
    ))
}

/// The corpus: `target/corpus/vendor` (made once by `cargo vendor`) and the
/// toolchain's `library/` when rustup has it, in a git repository.
fn corpus() -> Result<PathBuf> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let repo = repo.canonicalize()?;
    let dir = repo.join("target/corpus");
    let vendor = dir.join("vendor");
    let done = dir.join(".vendored");
    if !done.exists() {
        let _ = std::fs::remove_dir_all(&vendor);
        std::fs::create_dir_all(&dir)?;
        let st = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
            .args(["vendor", "--versioned-dirs", "--quiet"])
            .arg(&vendor)
            .current_dir(&repo)
            .stdout(Stdio::null())
            .status()?;
        if !st.success() {
            bail!("cargo vendor failed: {st}");
        }
        std::fs::write(&done, "")?;
    }
    // A repository of its own, as an editor's workspace is: the ignore
    // files of the checkout that holds `target/` are no parent's of it
    // (rg then applies none of them, and `--no-ignore-parent` changes
    // nothing).
    if !dir.join(".git").exists() {
        let st = Command::new("git")
            .args(["init", "-q"])
            .arg(&dir)
            .status()?;
        if !st.success() {
            bail!("git init {} failed: {st}", dir.display());
        }
    }
    let library = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .map(|s| s.join("lib/rustlib/src/rust/library"))
        .filter(|l| l.is_dir());
    if let Some(lib) = library
        && !dir.join("rust-library").exists()
    {
        let st = Command::new("cp")
            .arg("-r")
            .arg(&lib)
            .arg(dir.join("rust-library"))
            .status()?;
        if !st.success() {
            bail!("copying {} failed", lib.display());
        }
    }
    Ok(dir)
}

/// One query: its class and rg's flags.
#[derive(Debug, Clone)]
struct Query {
    pattern: String,
    ignore_case: bool,
    word: bool,
}

impl Query {
    fn flags(&self) -> Vec<&str> {
        let mut v = Vec::new();
        if self.ignore_case {
            v.push("-i");
        }
        if self.word {
            v.push("-w");
        }
        v
    }

    /// The same search in zoekt's query language: content only, with
    /// case as rg's flags say (zoekt's own default is smart case).
    fn zoekt(&self) -> String {
        let case = if self.ignore_case { "no" } else { "yes" };
        let pattern = if self.word {
            format!(r"\b{}\b", self.pattern)
        } else {
            self.pattern.clone()
        };
        format!("case:{case} content:{pattern}")
    }

    fn search(&self, corpus: &Path, files: bool) -> SearchQuery {
        SearchQuery {
            pattern: self.pattern.clone(),
            path: corpus.as_os_str().as_bytes().to_vec(),
            ignore_case: self.ignore_case,
            word: self.word,
            files,
            ..SearchQuery::default()
        }
    }
}

fn tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|t| t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
}

/// The query classes, each a list of distinct queries drawn from the corpus.
fn queries(files: &[PathBuf]) -> Vec<(&'static str, Vec<Query>)> {
    // Fixed seeds: the queries are the same every run.
    let mut rng = fastrand::Rng::with_seed(14);
    let code: Vec<&PathBuf> = files
        .iter()
        .filter(|p| {
            p.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                ["rs", "c", "h", "py", "go", "js", "ts", "md", "toml"].contains(&e)
            })
        })
        .collect();
    let mut freq: HashMap<String, usize> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    for _ in 0..600.min(code.len()) {
        let p = code[rng.usize(..code.len())];
        let Ok(text) = std::fs::read_to_string(p) else {
            continue;
        };
        for t in tokens(&text) {
            let n = freq.entry(t.to_string()).or_insert(0);
            if *n == 0 {
                order.push(t.to_string());
            }
            *n += 1;
        }
    }
    let q = |p: String| Query {
        pattern: p,
        ignore_case: false,
        word: false,
    };
    let take = |f: &dyn Fn(&str, usize) -> bool, n: usize| -> Vec<String> {
        order
            .iter()
            .filter(|t| f(t, freq[*t]))
            .take(n)
            .cloned()
            .collect()
    };
    let selective = take(&|t, n| t.len() >= 12 && n <= 2, 800);
    let mut common: Vec<(String, usize)> = freq
        .iter()
        .filter(|(t, _)| (4..=8).contains(&t.len()) && t.chars().all(|c| c.is_ascii_lowercase()))
        .map(|(t, n)| (t.clone(), *n))
        .collect();
    common.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let common: Vec<String> = common.into_iter().take(300).map(|(t, _)| t).collect();
    let mid = take(&|t, n| (8..=14).contains(&t.len()) && n <= 5, 600);
    let short = take(&|t, _| (4..=8).contains(&t.len()), 300);
    let mut classes = vec![
        (
            "selective identifier",
            selective.iter().cloned().map(q).collect::<Vec<_>>(),
        ),
        ("common word", common.into_iter().map(q).collect()),
        (
            "case-insensitive (-i)",
            mid.iter()
                .take(300)
                .map(|t| Query {
                    pattern: t.to_lowercase(),
                    ignore_case: true,
                    word: false,
                })
                .collect(),
        ),
        (
            "whole word (-w)",
            short
                .into_iter()
                .map(|t| Query {
                    pattern: t,
                    ignore_case: false,
                    word: true,
                })
                .collect(),
        ),
        (
            "regex with literals",
            mid.iter()
                .skip(300)
                .enumerate()
                .map(|(i, t)| {
                    q(if i % 2 == 0 {
                        format!(r"{t}\s*\(")
                    } else {
                        format!(r"(fn|struct|enum|def|class)\s+{t}")
                    })
                })
                .collect(),
        ),
        (
            "regex without literals",
            (3..8)
                .flat_map(|k| (1..5).map(move |j| q(format!("[A-Z][a-z]{{{k}}}[0-9]{{{j}}}_"))))
                .collect(),
        ),
        (
            "no match",
            selective
                .iter()
                .take(300)
                .enumerate()
                .map(|(i, t)| q(format!("{t}_zqx{i}")))
                .collect(),
        ),
    ];
    classes.retain(|(_, v)| !v.is_empty());
    classes
}

/// A whole process, timed with wait4; exit 1 (nothing found) is a success.
fn process(mut c: Command) -> Result<Sample, BoxError> {
    c.stdout(Stdio::null()).stderr(Stdio::null());
    let t = time_command(&mut c)?;
    match t.status.code() {
        Some(0 | 1) => Ok(t.sample()),
        _ => Err(format!("{c:?}: {}", t.status).into()),
    }
}

fn rounds(args: &Args, quick: usize, full: usize) -> Options {
    let n = args.pick(quick, full);
    Options {
        warmup: n.div_ceil(10).max(1),
        rounds: n,
        min_rounds: n,
        budget: None,
    }
}

/// Emits a run made of values measured outside `interleave` (one subject,
/// one round per value).
fn emit_values(
    workload: &str,
    unit: &str,
    subject: &str,
    values: &[u64],
    params: &[(&str, String)],
    size: Option<u64>,
) -> Result<()> {
    let ours = (subject, env!("CARGO_PKG_VERSION"));
    emit_values_of(workload, unit, ours, values, params, size)
}

/// [`emit_values`] for any subject: (name, version).
fn emit_values_of(
    workload: &str,
    unit: &str,
    (subject, version): (&str, &str),
    values: &[u64],
    params: &[(&str, String)],
    size: Option<u64>,
) -> Result<()> {
    let mut run = Run::new(
        SYSTEM,
        workload,
        vec![SubjectInfo {
            name: subject.into(),
            version: version.into(),
        }],
    );
    for (k, v) in params {
        run = run.param(k, v.clone());
    }
    if let Some(s) = size {
        run = run.size(s);
    }
    run.unit = unit.into();
    run.rounds = values.iter().map(|&v| vec![Sample::ns(v)]).collect();
    driver::emit(&run)
}

pub fn run(args: &Args) -> Result<()> {
    let greppy = args.bin("greppy")?;
    let env = Env {
        greppy,
        dir: args.scratch.join("greppy-bench"),
    };
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

/// A ranked query and the definition it spells.
struct Spelled {
    query: String,
    name: String,
}

/// Queries as a person types a definition they half remember: the words
/// of a sampled definition's name, lowercased, apart (`RetryPolicy`:
/// `retry policy`). Names of one word or under 8 characters are left out.
fn spelled_queries(files: &[PathBuf], n: usize) -> Vec<Spelled> {
    let code: Vec<&PathBuf> = files
        .iter()
        .filter(|f| greppy::chunk::Lang::of(f).is_some())
        .collect();
    let mut rng = fastrand::Rng::with_seed(0x05ee_df1d);
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    let mut tries = 0;
    while out.len() < n && tries < n * 50 && !code.is_empty() {
        tries += 1;
        let f = code[rng.usize(..code.len())];
        let Ok(bytes) = std::fs::read(f) else {
            continue;
        };
        if bytes.len() > greppy::chunk::MAX_PARSED {
            continue;
        }
        let defs: Vec<_> = greppy::chunk::chunks(f, &bytes)
            .into_iter()
            .filter(|c| c.is_definition() && c.name.len() >= 8)
            .collect();
        if defs.is_empty() {
            continue;
        }
        let d = &defs[rng.usize(..defs.len())];
        let words = greppy::rank::identifier_words(&d.name);
        if words.len() < 2 || !seen.insert(d.name.clone()) {
            continue;
        }
        out.push(Spelled {
            query: words.join(" "),
            name: d.name.clone(),
        });
    }
    out
}

/// Ranked search: the first `find` on an indexed tree (which builds the
/// ranked index), the ranked index's size, the daemon's memory after, one
/// query on a kept connection and from the command line, and how often
/// the definition a query spells is the first hit and in the first ten.
fn ranked(args: &Args, env: &Env, files: &[PathBuf], corpus: &Path) -> Result<()> {
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

/// The bytes of the files under `dir`.
fn walk_sizes(dir: &Path) -> Vec<u64> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => out.extend(walk_sizes(&e.path())),
                Ok(m) => out.push(m.len()),
                Err(_) => {}
            }
        }
    }
    out
}

/// The least that any trigram index of `root` does: walk it as rg does,
/// read every file, and for each file without a NUL byte mark each of its
/// windows' trigram in a bitmap and list the distinct ones, on every core.
/// No case folding, masks, filters, copies or posting lists.
fn trigram_floor(root: &Path) -> u64 {
    let files = greppy::search::walk_tree(root).files;
    let next = std::sync::atomic::AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut bits = vec![0u64; 1 << 18];
                    let mut seen: Vec<u32> = Vec::new();
                    let mut distinct = 0u64;
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(path) = files.get(i) else {
                            return distinct;
                        };
                        let Ok(text) = std::fs::read(path) else {
                            continue;
                        };
                        if text.contains(&0) {
                            continue;
                        }
                        let mut t = 0u32;
                        for (i, &b) in text.iter().enumerate() {
                            t = ((t << 8) | u32::from(b)) & 0xff_ffff;
                            let (w, bit) = ((t >> 6) as usize, 1u64 << (t & 63));
                            if i >= 2 && bits[w] & bit == 0 {
                                bits[w] |= bit;
                                seen.push(t);
                            }
                        }
                        distinct += seen.len() as u64;
                        for t in seen.drain(..) {
                            bits[(t >> 6) as usize] = 0;
                        }
                    }
                })
            })
            .collect();
        workers.into_iter().filter_map(|w| w.join().ok()).sum()
    })
}

/// Reads `regions` of `path` (all of it without them) into `buf`, as a
/// search reads a candidate.
fn read_parts(path: &Path, regions: Option<&greppy::index::Regions>, buf: &mut [u8]) {
    use std::os::unix::fs::FileExt;
    let Ok(f) = std::fs::File::open(path) else {
        return;
    };
    match regions {
        Some(r) => {
            for p in &r.parts {
                let n = usize::try_from(p.end - p.start).map_or(buf.len(), |n| n.min(buf.len()));
                let _ = f.read_at(&mut buf[..n], p.start);
            }
        }
        None => {
            let mut at = 0u64;
            while let Ok(n) = f.read_at(buf, at) {
                if n == 0 {
                    break;
                }
                at += n as u64;
            }
        }
    }
}

/// `batch` searches on one connection with at most `depth` in flight.
fn pipelined(
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
fn concurrent(
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
fn beside_broad(args: &Args, env: &Env, selective: &[Query], corpus: &Path) -> Result<()> {
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
fn during_reindex(env: &Env, qs: &[Query], corpus: &Path) -> Result<(Vec<u64>, usize)> {
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
fn scaling(args: &Args, env: &Env, corpus: &Path) -> Result<()> {
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

/// The (file, line) pairs of sampled queries, from the daemon and from rg.
fn exactness(
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
