//! The benchmark report: `results.json` (machine-readable), `report.md`
//! (tables and charts) and SVG charts, all under `target/bench/`.

use crate::cmd;
use crate::peers::PeerStatus;
use anyhow::{Context, Result};
use latency::Record;
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The facts every report states.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    pub cpus: usize,
    pub cpu_model: Option<String>,
    pub kernel: String,
    /// Filesystem of the disk scratch folder, and of the tmpfs one.
    pub disk_fs: String,
    pub shm_fs: String,
    pub git_revision: String,
    pub rustc: Option<String>,
    pub date: Option<String>,
}

impl Machine {
    pub fn probe(scratch: &Path, shm: &Path) -> Self {
        let fs = |p: &Path| {
            let _ = std::fs::create_dir_all(p);
            latency::machine::fs_type(p).unwrap_or_else(|e| format!("unknown ({e})"))
        };
        let git = |args: &[&str]| {
            cmd::output(Command::new("git").arg("-C").arg(crate::root()).args(args))
        };
        let mut rev = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
        if git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty()) {
            rev.push_str("-dirty");
        }
        Self {
            cpus: latency::machine::cpus(),
            cpu_model: latency::machine::cpu_model(),
            kernel: latency::machine::kernel(),
            disk_fs: fs(scratch),
            shm_fs: fs(shm),
            git_revision: rev,
            rustc: cmd::output(Command::new("rustc").arg("--version")),
            date: cmd::output(Command::new("date").args(["-u", "+%Y-%m-%dT%H:%M:%SZ"])),
        }
    }
}

/// What running one system's drivers gave: its records, its notes and its
/// peers (a driver's output, which the report gathers).
#[derive(Debug, Default)]
pub struct Outcome {
    pub records: Vec<Record>,
    pub notes: Vec<String>,
    pub peers: Vec<PeerStatus>,
}

#[derive(Debug, Serialize)]
struct SystemResult {
    name: String,
    peers: Vec<PeerStatus>,
    notes: Vec<String>,
}

/// Everything one `cargo xtask bench` run found.
#[derive(Debug, Serialize)]
pub struct Report {
    pub machine: Machine,
    pub quick: bool,
    systems: Vec<SystemResult>,
    pub records: Vec<Record>,
}

impl Report {
    pub fn new(machine: Machine, quick: bool) -> Self {
        Self {
            machine,
            quick,
            systems: Vec::new(),
            records: Vec::new(),
        }
    }

    pub fn add(&mut self, system: &str, outcome: Outcome) {
        self.systems.push(SystemResult {
            name: system.into(),
            peers: outcome.peers,
            notes: outcome.notes,
        });
        self.records.extend(outcome.records);
    }

    fn records_of<'a>(&'a self, system: &'a str) -> impl Iterator<Item = &'a Record> + 'a {
        self.records.iter().filter(move |r| r.system == system)
    }

    /// One system's table, as aligned markdown, with its notes.
    pub fn system_table(&self, system: &str) -> String {
        let mut rows = vec![
            [
                "workload",
                "params",
                "size",
                "subject",
                "version",
                "n",
                "p50",
                "p90",
                "p99",
                "p99.9",
                "max",
                "vs reference",
                "user",
                "sys",
                "peak RSS",
            ]
            .map(String::from)
            .to_vec(),
        ];
        let compared: Vec<(&str, &str)> = self
            .records_of(system)
            .filter_map(|r| {
                r.ratio
                    .as_ref()
                    .map(|q| (r.workload.as_str(), q.reference.as_str()))
            })
            .collect();
        for r in self.records_of(system) {
            let s = &r.summary;
            let v = |x: u64| fmt_value(x as f64, &r.unit);
            let res = r.resources.unwrap_or(latency::Resources {
                user_ns_p50: None,
                sys_ns_p50: None,
                max_rss_kib_p50: None,
                max_rss_kib_max: None,
            });
            let opt_ns = |x: Option<u64>| x.map_or("-".into(), |x| fmt_value(x as f64, "ns"));
            rows.push(vec![
                r.workload.clone(),
                fmt_params(r),
                r.size.map_or("-".into(), |s| s.to_string()),
                r.subject.clone(),
                r.subject_version.clone(),
                s.count.to_string(),
                v(s.p50),
                v(s.p90),
                v(s.p99),
                v(s.p999),
                v(s.max),
                match &r.ratio {
                    Some(q) => format!("{:.2}x {}", q.median, q.reference),
                    None if compared.contains(&(r.workload.as_str(), r.subject.as_str())) => {
                        "reference".into()
                    }
                    None => "-".into(),
                },
                opt_ns(res.user_ns_p50),
                opt_ns(res.sys_ns_p50),
                res.max_rss_kib_max
                    .map_or("-".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0)),
            ]);
        }
        let mut out = format!(
            "### {system}\n\n{}",
            markdown_table(&drop_empty_columns(rows))
        );
        if let Some(sys) = self.systems.iter().find(|s| s.name == system) {
            for p in &sys.peers {
                match (&p.version, &p.missing) {
                    (Some(v), _) => writeln!(out, "\n- peer {}: {v}", p.name).ok(),
                    (None, Some(why)) => writeln!(out, "\n- peer {}: MISSING ({why})", p.name).ok(),
                    _ => None,
                };
            }
            for n in &sys.notes {
                let _ = writeln!(out, "\n- note: {n}");
            }
        }
        out
    }

    /// Writes `results.json`, `report.md` and the charts into `dir`; returns
    /// the path of `report.md`.
    pub fn write(&self, dir: &Path) -> Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        let json = serde_json::to_string_pretty(self)?;
        std::fs::write(dir.join("results.json"), json)?;

        let m = &self.machine;
        let mut md = String::from("# Benchmark report\n\n");
        let _ = writeln!(
            md,
            "Made by `cargo xtask bench`{}. Each workload ran its subjects interleaved \
             (A B A B … after a warm-up); `vs reference` is the median of the per-round \
             ratios (subject time / reference time; above 1 is slower). Times are \
             HDR-histogram percentiles (3 significant figures).\n",
            if self.quick {
                " --quick (a short smoke run: few rounds)"
            } else {
                ""
            }
        );
        let facts = [
            ["git revision".to_string(), m.git_revision.clone()],
            ["date".into(), m.date.clone().unwrap_or_default()],
            [
                "CPUs".into(),
                format!("{} ({})", m.cpus, m.cpu_model.clone().unwrap_or_default()),
            ],
            ["kernel".into(), m.kernel.clone()],
            ["disk scratch filesystem".into(), m.disk_fs.clone()],
            ["tmpfs scratch filesystem".into(), m.shm_fs.clone()],
            ["rustc".into(), m.rustc.clone().unwrap_or_default()],
        ];
        let mut rows = vec![vec!["machine".to_string(), String::new()]];
        rows.extend(facts.iter().map(|f| f.to_vec()));
        md.push_str(&markdown_table(&rows));
        md.push('\n');

        for sys in &self.systems {
            md.push_str(&self.system_table(&sys.name));
            md.push('\n');
            let recs: Vec<&Record> = self.records_of(&sys.name).collect();
            for chart in charts::draw_all(&sys.name, &recs, dir)
                .with_context(|| format!("charts of {}", sys.name))?
            {
                let _ = writeln!(md, "![{}]({})\n", chart.title, chart.file);
            }
        }
        let path = dir.join("report.md");
        std::fs::write(&path, md)?;
        Ok(path)
    }
}

pub mod charts;

fn fmt_params(r: &Record) -> String {
    if r.params.is_empty() {
        return "-".into();
    }
    r.params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A value with three significant figures and a readable unit.
pub fn fmt_value(v: f64, unit: &str) -> String {
    if unit != "ns" {
        return format!("{} {unit}", sig3(v));
    }
    let (x, u) = match v {
        v if v >= 1e9 => (v / 1e9, "s"),
        v if v >= 1e6 => (v / 1e6, "ms"),
        v if v >= 1e3 => (v / 1e3, "µs"),
        v => (v, "ns"),
    };
    format!("{} {u}", sig3(x))
}

fn sig3(x: f64) -> String {
    match x.abs() {
        a if a >= 100.0 => format!("{x:.0}"),
        a if a >= 10.0 => format!("{x:.1}"),
        _ => format!("{x:.2}"),
    }
}

/// Removes the columns in which no row but the header has a value.
/// `rows` without the columns (after the header) that hold nothing but
/// `-` or nothing.
pub fn drop_empty_columns(rows: Vec<Vec<String>>) -> Vec<Vec<String>> {
    let cols = rows.first().map_or(0, Vec::len);
    let keep: Vec<bool> = (0..cols)
        .map(|c| {
            rows.iter()
                .skip(1)
                .any(|r| r.get(c).is_some_and(|v| v != "-" && !v.is_empty()))
        })
        .collect();
    rows.into_iter()
        .map(|r| {
            r.into_iter()
                .zip(&keep)
                .filter(|(_, k)| **k)
                .map(|(v, _)| v)
                .collect()
        })
        .collect()
}

/// A markdown table whose columns are padded so that it reads in a terminal.
pub fn markdown_table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |r: &Vec<String>| {
        let cells: Vec<String> = (0..cols)
            .map(|c| {
                let s = r.get(c).map_or("", String::as_str);
                format!("{s}{}", " ".repeat(width[c] - s.chars().count()))
            })
            .collect();
        format!("| {} |\n", cells.join(" | "))
    };
    let mut out = String::new();
    for (i, r) in rows.iter().enumerate() {
        out.push_str(&line(r));
        if i == 0 {
            let dashes: Vec<String> = width.iter().map(|w| "-".repeat(*w)).collect();
            out.push_str(&format!("|-{}-|\n", dashes.join("-|-")));
        }
    }
    out
}

/// The distinct sizes of a set of records.
pub fn sizes(records: &[&Record]) -> BTreeSet<u64> {
    records.iter().filter_map(|r| r.size).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_well() {
        assert_eq!(fmt_value(651.0, "ns"), "651 ns");
        assert_eq!(fmt_value(2725.0, "ns"), "2.73 µs");
        assert_eq!(fmt_value(847_359.0, "ns"), "847 µs");
        assert_eq!(fmt_value(12_345_678.0, "ns"), "12.3 ms");
        assert_eq!(fmt_value(1.5e9, "ns"), "1.50 s");
        assert_eq!(fmt_value(42.0, "B"), "42.0 B");
    }

    #[test]
    fn writes_json_markdown_and_charts() {
        let dir = std::env::temp_dir().join(format!("xtask-report-{}", std::process::id()));
        let subjects = ["ours", "peer"]
            .map(|s| latency::SubjectInfo {
                name: s.into(),
                version: "9.9".into(),
            })
            .to_vec();
        let mut run = latency::Run::new("sys", "spawn", subjects);
        run.rounds = (1..30u64)
            .map(|k| vec![latency::Sample::ns(k * 10), latency::Sample::ns(k * 25)])
            .collect();
        let mut report = Report::new(Machine::probe(&dir, Path::new("/dev/shm")), true);
        let outcome = Outcome {
            records: run.records().unwrap(),
            notes: vec!["a note".into()],
            peers: vec![PeerStatus {
                name: "gone".into(),
                program: None,
                version: None,
                missing: Some("not installable here".into()),
            }],
        };
        report.add("sys", outcome);
        let md_path = report.write(&dir).unwrap();
        let md = std::fs::read_to_string(md_path).unwrap();
        assert!(md.contains("2.50x ours"), "{md}");
        assert!(md.contains("peer gone: MISSING (not installable here)"));
        assert!(md.contains("note: a note"));
        assert!(md.contains("![sys: spawn](sys-spawn.svg)"));
        assert!(dir.join("sys-spawn.svg").is_file());
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).unwrap();
        assert_eq!(json["records"].as_array().unwrap().len(), 2);
        assert_eq!(json["machine"]["shm_fs"], "tmpfs");
        assert!(json["machine"]["cpus"].as_u64().unwrap() >= 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn empty_columns_go() {
        let rows = vec![
            vec!["a".to_string(), "b".into(), "c".into()],
            vec!["1".into(), "-".into(), "3".into()],
        ];
        assert_eq!(
            drop_empty_columns(rows),
            vec![vec!["a", "c"], vec!["1", "3"]]
        );
    }

    #[test]
    fn tables_align() {
        let t = markdown_table(&[
            vec!["a".into(), "bb".into()],
            vec!["ccc".into(), "d".into()],
        ]);
        assert_eq!(t, "| a   | bb |\n|-----|----|\n| ccc | d  |\n");
    }
}
