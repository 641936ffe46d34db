//! The fast-rm workloads, as the driver runs them: for each filesystem,
//! shape and size, every subject deletes a freshly built copy of the same
//! tree, interleaved, and the target must be gone afterwards.

use crate::{Listing, Shape, build};
use floor::driver::{self, Args};
use latency::process::time_command;
use latency::{BoxError, Cell, Run, Sample, Subject, machine, spread};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const SYSTEM: &str = "fast-rm";

/// One command-line subject: its name, version and argv before the target.
struct Tool {
    name: String,
    version: String,
    argv: Vec<String>,
    /// Only measured where start-up matters (up to this many files).
    up_to: usize,
}

fn tools(args: &Args) -> anyhow::Result<Vec<Tool>> {
    let version = env!("CARGO_PKG_VERSION");
    let mut out = vec![Tool {
        name: "fast-rm".into(),
        version: version.into(),
        argv: vec![args.bin("fast-rm")?.display().to_string()],
        up_to: usize::MAX,
    }];
    // The same code linked dynamically, as `cargo install --path` builds it.
    if let Ok(dynamic) = args.sibling("fast-rm") {
        out.push(Tool {
            name: "fast-rm (dynamic, cargo install)".into(),
            version: version.into(),
            argv: vec![dynamic.display().to_string()],
            up_to: 100,
        });
    }
    let peers: [(&str, &str, &[&str], &[&str]); 3] = [
        ("rm", "rm -r", &["-r"], &[]),
        ("find", "find -delete", &[], &["-delete"]),
        ("rmz", "rmz", &[], &[]),
    ];
    for (peer, label, before, after) in peers {
        match args.peer(peer) {
            Some((program, version)) => {
                let mut argv = vec![program.display().to_string()];
                argv.extend(before.iter().map(|s| s.to_string()));
                argv.push("{}".into());
                argv.extend(after.iter().map(|s| s.to_string()));
                out.push(Tool {
                    name: label.into(),
                    version,
                    argv,
                    up_to: usize::MAX,
                });
            }
            None => driver::note(format!("{label}: peer missing, no row"))?,
        }
    }
    Ok(out)
}

fn command(tool: &Tool, target: &Path) -> Command {
    let mut c = Command::new(&tool.argv[0]);
    let mut placed = false;
    for a in &tool.argv[1..] {
        if a == "{}" {
            c.arg(target);
            placed = true;
        } else {
            c.arg(a);
        }
    }
    if !placed {
        c.arg(target);
    }
    c.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

fn gone(target: &Path) -> bool {
    std::fs::symlink_metadata(target).is_err()
}

/// Builds the tree, then runs `tool` on it and checks that it is gone.
fn delete_with(tool: &Tool, target: &Path, shape: Shape, n: usize) -> Result<Sample, BoxError> {
    build(target, shape, n)?;
    let t = time_command(&mut command(tool, target))?;
    if !t.status.success() || !gone(target) {
        let _ = std::fs::remove_dir_all(target);
        return Err(format!(
            "{} failed on {} ({})",
            tool.name,
            target.display(),
            t.status
        )
        .into());
    }
    Ok(t.sample())
}

/// The floor: the same tree, listed beforehand, removed by `unlinkat` alone,
/// in a child process (this driver run as `--floor SHAPE N TARGET`), so that
/// the listing of a million entries does not raise the driver's resident
/// high-water mark, which every later child's `ru_maxrss` would inherit.
fn delete_floor(target: &Path, shape: Shape, n: usize) -> Result<Sample, BoxError> {
    let out = Command::new(std::env::current_exe()?)
        .arg("--floor")
        .arg(shape.name())
        .arg(n.to_string())
        .arg(target)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let _ = std::fs::remove_dir_all(target);
        return Err(format!("the floor failed on {} ({})", target.display(), out.status).into());
    }
    if !gone(target) {
        return Err("the floor left the target behind".into());
    }
    let ns: u64 = text
        .trim()
        .parse()
        .map_err(|e| format!("the floor printed {text:?}: {e}"))?;
    Ok(Sample::ns(ns))
}

/// The floor's child: builds the tree, lists it, then prints how many
/// nanoseconds the `unlinkat` loop took.
pub fn floor_child(args: &[std::ffi::OsString]) -> anyhow::Result<()> {
    let [shape, n, target] = args else {
        anyhow::bail!("usage: --floor SHAPE N TARGET");
    };
    let shape = shape
        .to_str()
        .and_then(Shape::from_name)
        .ok_or_else(|| anyhow::anyhow!("no shape {shape:?}"))?;
    let n: usize = n
        .to_str()
        .ok_or_else(|| anyhow::anyhow!("not a count: {n:?}"))?
        .parse()
        .map_err(|e| anyhow::anyhow!("not a count: {n:?}: {e}"))?;
    // The target as given, bytes and all (a path need not be UTF-8).
    let target = Path::new(target);
    build(target, shape, n)?;
    let listing = Listing::of(target)?;
    let (sample, res) = Sample::time(|| listing.remove());
    res?;
    println!("{}", sample.value);
    Ok(())
}

/// This process's peak resident set (VmHWM), in KiB.
fn own_peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs every workload and emits its records.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let tools = tools(args)?;
    let all: &[usize] = args.pick(
        &[0, 100, 1_000, 10_000],
        &[0, 100, 1_000, 10_000, 100_000, 1_000_000],
    );
    // FAST_RM_BENCH_SIZES=100000,1000000 runs only those sizes (a full run
    // takes about 120 minutes on 2 cores; this picks the part you need).
    let chosen: Vec<usize> = match std::env::var("FAST_RM_BENCH_SIZES") {
        Ok(list) => list
            .split(',')
            .map(|n| {
                n.trim()
                    .parse()
                    .map_err(|e| anyhow::anyhow!("FAST_RM_BENCH_SIZES: {n:?}: {e}"))
            })
            .collect::<anyhow::Result<_>>()?,
        Err(_) => all.to_vec(),
    };
    let sizes = &chosen[..];
    // FAST_RM_BENCH_SHAPES=nested and FAST_RM_BENCH_FS=tmpfs (or disk) narrow
    // it further, to one cell when looking into one.
    let shapes = match std::env::var("FAST_RM_BENCH_SHAPES") {
        Ok(list) => list
            .split(',')
            .map(|s| {
                Shape::from_name(s.trim()).ok_or_else(|| {
                    anyhow::anyhow!("FAST_RM_BENCH_SHAPES: {s:?}: not nested, flat or deep")
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?,
        Err(_) => vec![Shape::Nested, Shape::Flat, Shape::Deep],
    };
    let fs_only = std::env::var("FAST_RM_BENCH_FS").ok();
    if let Some(f) = fs_only
        .as_deref()
        .filter(|f| !["tmpfs", "disk"].contains(f))
    {
        anyhow::bail!("FAST_RM_BENCH_FS: {f:?}: not tmpfs or disk");
    }
    let fss: [(&Path, &str); 2] = [(&args.shm, "tmpfs"), (&args.scratch, "disk")];
    let mut plan = Vec::new();
    for (dir, kind) in fss {
        if fs_only.as_deref().is_some_and(|f| f != kind) {
            continue;
        }
        let fs = machine::fs_type(dir)?;
        for &n in sizes {
            for &shape in &shapes {
                // An empty tree has one shape; a million files, the nested one.
                if (n == 0 || n >= 1_000_000) && shape != Shape::Nested {
                    continue;
                }
                plan.push((dir.to_path_buf(), fs.clone(), n, shape));
            }
        }
    }
    if let Some(kib) = own_peak_rss_kib() {
        driver::note(format!(
            "peak RSS is the child's ru_maxrss, which counts the driver's own {:.1} MiB \
             resident before exec: rows at that value used no more than that",
            kib as f64 / 1024.0
        ))?;
    }
    let kernel = machine::kernel();
    let mut cells = Vec::new();
    let mut labels = Vec::new();
    for (dir, fs, n, shape) in plan {
        let work = dir.join("fast-rm-bench");
        std::fs::create_dir_all(&work)?;
        let target: PathBuf = work.join("target");
        if target.exists() {
            std::fs::remove_dir_all(&target)?;
        }
        let mut subjects: Vec<Subject<'_>> = tools
            .iter()
            .filter(|tool| n <= tool.up_to)
            .map(|tool| {
                let target = target.clone();
                Subject::new(&tool.name, &tool.version, move || {
                    delete_with(tool, &target, shape, n)
                })
            })
            .collect();
        subjects.push(Subject::new(
            "floor: unlinkat loop (in-process)",
            kernel.clone(),
            move || delete_floor(&target, shape, n),
        ));
        let (warmup, rounds) = match n {
            0..=100 => (2, args.pick(10, 40)),
            101..=1_000 => (2, args.pick(5, 20)),
            1_001..=10_000 => (1, args.pick(3, 10)),
            10_001..=100_000 => (0, args.pick(3, 9)),
            _ => (0, 2),
        };
        labels.push(format!("{} {n} files on {fs}", shape.name()));
        cells.push(Cell {
            run: Run::new(SYSTEM, &format!("delete {}", shape.name()), vec![])
                .param("fs", fs)
                .size(n as u64),
            subjects,
            warmup,
            rounds,
        });
    }
    // Each cell's rounds are spread over the whole run (DECISIONS.md: a busy
    // spell of this shared machine had put whole cells behind).
    driver::plan(cells.iter().map(|c| c.rounds as u64).sum())?;
    let runs = spread(&mut cells, |i, k| {
        driver::step(format!("{}, round {}", labels[i], k + 1))
            .map_err(|e| latency::Error::Io(std::io::Error::other(e.to_string())))
    })?;
    for run in &runs {
        driver::emit(run)?;
    }
    for (dir, _) in fss {
        let _ = std::fs::remove_dir(dir.join("fast-rm-bench"));
    }
    Ok(())
}
