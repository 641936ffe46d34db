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

/// Which scratch folder a cell runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fs {
    Tmpfs,
    Disk,
}

/// The cells a run is narrowed to. A full run takes about an hour on 2
/// cores (two on a slower machine); `FAST_RM_BENCH_SIZES=100000,1000000`,
/// `FAST_RM_BENCH_SHAPES=nested` and `FAST_RM_BENCH_FS=tmpfs` (or `disk`)
/// pick the part being looked into.
#[derive(Debug, PartialEq, Eq)]
struct Selection {
    sizes: Vec<usize>,
    shapes: Vec<Shape>,
    fs: Option<Fs>,
}

impl Selection {
    /// From the variables `var` gives (the environment, in a run), with
    /// `all` the sizes of an unnarrowed run. A value that names nothing
    /// known is an error, never ignored.
    fn from_vars(all: &[usize], var: impl Fn(&str) -> Option<String>) -> anyhow::Result<Self> {
        fn list<T>(
            var: &impl Fn(&str) -> Option<String>,
            name: &str,
            parse: impl Fn(&str) -> Option<T>,
            what: &str,
        ) -> anyhow::Result<Option<Vec<T>>> {
            let Some(value) = var(name) else {
                return Ok(None);
            };
            value
                .split(',')
                .map(|v| {
                    parse(v.trim()).ok_or_else(|| anyhow::anyhow!("{name}: {v:?}: not {what}"))
                })
                .collect::<anyhow::Result<Vec<T>>>()
                .map(Some)
        }
        let sizes = list(
            &var,
            "FAST_RM_BENCH_SIZES",
            |v| v.parse().ok(),
            "a number of files",
        )?;
        let shapes = list(
            &var,
            "FAST_RM_BENCH_SHAPES",
            Shape::from_name,
            "nested, flat or deep",
        )?;
        let fs = list(
            &var,
            "FAST_RM_BENCH_FS",
            |v| match v {
                "tmpfs" => Some(Fs::Tmpfs),
                "disk" => Some(Fs::Disk),
                _ => None,
            },
            "tmpfs or disk",
        )?;
        let fs = match fs.as_deref() {
            None => None,
            Some(&[one]) => Some(one),
            Some(_) => anyhow::bail!("FAST_RM_BENCH_FS: one of tmpfs or disk"),
        };
        Ok(Self {
            sizes: sizes.unwrap_or_else(|| all.to_vec()),
            shapes: shapes.unwrap_or_else(|| vec![Shape::Nested, Shape::Flat, Shape::Deep]),
            fs,
        })
    }

    /// The (size, shape) cells of each filesystem. An empty tree has one
    /// shape; a million files, the nested one.
    fn cells(&self) -> impl Iterator<Item = (usize, Shape)> + '_ {
        self.sizes.iter().flat_map(move |&n| {
            self.shapes
                .iter()
                .filter(move |&&shape| !((n == 0 || n >= 1_000_000) && shape != Shape::Nested))
                .map(move |&shape| (n, shape))
        })
    }
}

/// Runs every workload and emits its records.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let all: &[usize] = args.pick(
        &[0, 100, 1_000, 10_000],
        &[0, 100, 1_000, 10_000, 100_000, 1_000_000],
    );
    let pick = Selection::from_vars(all, |k| std::env::var(k).ok())?;
    let tools = tools(args)?;
    let fss: [(&Path, Fs); 2] = [(&args.shm, Fs::Tmpfs), (&args.scratch, Fs::Disk)];
    let mut plan = Vec::new();
    for (dir, kind) in fss {
        if pick.fs.is_some_and(|f| f != kind) {
            continue;
        }
        let fs = machine::fs_type(dir)?;
        for (n, shape) in pick.cells() {
            plan.push((dir.to_path_buf(), fs.clone(), kind, n, shape));
        }
    }
    anyhow::ensure!(!plan.is_empty(), "FAST_RM_BENCH_*: no cell is left to run");
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
    for (dir, fs, kind, n, shape) in plan {
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
            // Thirty: a 10k cell takes some 40 ms a deletion, and with ten
            // rounds the same build came out 0.83x and 1.02x rmz in two
            // runs five minutes apart (DECISIONS.md, 2026-12-02).
            1_001..=10_000 => (1, args.pick(3, 30)),
            10_001..=100_000 => (0, args.pick(3, 9)),
            // Seven on tmpfs, where a round takes seconds: with two, the
            // median of the rounds' ratios is their mean, and one busy
            // spell decides it (0.94x rmz in the run at a4e7ce2; 1.01x over
            // ten paired rounds by hand an hour apart, DECISIONS.md). On
            // the disk a round takes minutes.
            _ if kind == Fs::Tmpfs => (0, args.pick(2, 7)),
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
            dropped: Vec::new(),
        });
    }
    // Each cell's rounds are spread over the whole run (DECISIONS.md: a busy
    // spell of this shared machine had put whole cells behind).
    driver::plan(cells.iter().map(|c| c.rounds as u64).sum())?;
    let runs = spread(&mut cells, |i, k| {
        driver::step(format!("{}, round {}", labels[i], k + 1))
            .map_err(|e| latency::Error::Io(std::io::Error::other(e.to_string())))
    })?;
    // A failed round (a subject that failed, or left the tree behind) is
    // reported, not hidden, and the rest of the run is kept.
    for (i, (cell, run)) in cells.iter().zip(&runs).enumerate() {
        for d in &cell.dropped {
            driver::note(d.note(&labels[i]))?;
        }
        if run.rounds.is_empty() {
            driver::note(format!("{}: no round succeeded, no rows", labels[i]))?;
        } else {
            driver::emit(run)?;
        }
    }
    for (dir, _) in fss {
        let _ = std::fs::remove_dir(dir.join("fast-rm-bench"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pick(vars: &[(&str, &str)]) -> anyhow::Result<Selection> {
        Selection::from_vars(&[0, 100, 1_000_000], |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn no_variable_is_the_full_run() {
        let s = pick(&[]).unwrap();
        assert_eq!(s.fs, None);
        let cells: Vec<_> = s.cells().collect();
        assert_eq!(
            cells,
            [
                (0, Shape::Nested),
                (100, Shape::Nested),
                (100, Shape::Flat),
                (100, Shape::Deep),
                (1_000_000, Shape::Nested),
            ]
        );
    }

    #[test]
    fn the_variables_narrow_the_run_to_one_cell() {
        let s = pick(&[
            ("FAST_RM_BENCH_SIZES", "100000"),
            ("FAST_RM_BENCH_SHAPES", "nested"),
            ("FAST_RM_BENCH_FS", "tmpfs"),
        ])
        .unwrap();
        assert_eq!(s.fs, Some(Fs::Tmpfs));
        assert_eq!(s.cells().collect::<Vec<_>>(), [(100_000, Shape::Nested)]);
        // Flat has no 1M cell: nothing is left, and the run says so.
        let s = pick(&[
            ("FAST_RM_BENCH_SIZES", "1000000"),
            ("FAST_RM_BENCH_SHAPES", "flat"),
        ])
        .unwrap();
        assert_eq!(s.cells().count(), 0);
    }

    #[test]
    fn a_value_that_names_nothing_is_an_error() {
        for (var, value, says) in [
            ("FAST_RM_BENCH_SIZES", "10k", "not a number of files"),
            (
                "FAST_RM_BENCH_SHAPES",
                "nested,round",
                "\"round\": not nested, flat or deep",
            ),
            ("FAST_RM_BENCH_FS", "ext4", "not tmpfs or disk"),
            ("FAST_RM_BENCH_FS", "tmpfs,disk", "one of tmpfs or disk"),
        ] {
            let e = pick(&[(var, value)]).unwrap_err().to_string();
            assert!(e.starts_with(var) && e.contains(says), "{var}={value}: {e}");
        }
    }
}
