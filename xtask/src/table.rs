//! `cargo xtask table`: the last benchmark run's figures as a short
//! markdown table, for a README. It reads `target/bench/results.json` (what
//! `cargo xtask bench` wrote), so that no figure in a README is typed by
//! hand: a README's table is this command's output, pasted.

use crate::report::{drop_empty_columns, fmt_value, markdown_table};
use anyhow::{Context, Result};
use serde_json::Value;
use std::fmt::Write as _;

/// Which of a system's records a table shows; an empty list keeps all.
#[derive(Debug, Default)]
pub struct Only {
    /// Workloads whose names start with one of these.
    pub workloads: Vec<String>,
    /// Records of these sizes.
    pub sizes: Vec<u64>,
    /// Records of these subjects (exact names).
    pub subjects: Vec<String>,
}

impl Only {
    fn keeps(&self, workload: &str, size: Option<u64>, subject: &str) -> bool {
        (self.workloads.is_empty() || self.workloads.iter().any(|w| workload.starts_with(w)))
            && (self.sizes.is_empty() || size.is_some_and(|s| self.sizes.contains(&s)))
            && (self.subjects.is_empty() || self.subjects.iter().any(|s| s == subject))
    }
}

/// The table of `system`'s records that `only` keeps, with the run's
/// revision and date.
pub fn render(results: &Value, system: &str, only: &Only) -> Result<String> {
    let records = results["records"]
        .as_array()
        .context("results.json has no records")?;
    let mut rows = vec![
        [
            "workload",
            "size",
            "subject",
            "version",
            "n",
            "p50",
            "p99",
            "p99.9",
            "vs reference",
        ]
        .map(String::from)
        .to_vec(),
    ];
    // The parameters of each record, as `k=v` words.
    let params_of = |r: &Value| -> String {
        r["params"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default()
    };
    // A workload of one name and size run with different parameters (fast-rm
    // on tmpfs and on disk) shows them in its label; otherwise they are in
    // report.md.
    let mut variants: std::collections::HashMap<
        (String, String),
        std::collections::HashSet<String>,
    > = std::collections::HashMap::new();
    for r in records
        .iter()
        .filter(|r| r["system"].as_str() == Some(system))
    {
        variants
            .entry((
                r["workload"].as_str().unwrap_or_default().to_string(),
                r["size"].to_string(),
            ))
            .or_default()
            .insert(params_of(r));
    }
    let mut last_group = String::new();
    for r in records {
        let text = |k: &str| r[k].as_str().unwrap_or_default().to_string();
        let workload = text("workload");
        if text("system") != system || !only.keeps(&workload, r["size"].as_u64(), &text("subject"))
        {
            continue;
        }
        let unit = text("unit");
        let size = r["size"].as_u64().map_or(String::new(), |s| s.to_string());
        let s = &r["summary"];
        let v = |k: &str| s[k].as_f64().map_or("-".into(), |x| fmt_value(x, &unit));
        let params = params_of(r);
        let group = format!("{workload} ({params}) {size}");
        let label = if group == last_group {
            String::new()
        } else {
            last_group = group;
            let key = (workload.clone(), r["size"].to_string());
            if variants.get(&key).is_some_and(|v| v.len() > 1) {
                format!("{workload} ({params})")
            } else {
                workload
            }
        };
        let ratio = match r["ratio"].as_object() {
            Some(q) => format!(
                "{:.2}x {}",
                q.get("median").and_then(Value::as_f64).unwrap_or(f64::NAN),
                q.get("reference").and_then(Value::as_str).unwrap_or("?")
            ),
            None => String::new(),
        };
        rows.push(vec![
            label,
            size,
            text("subject"),
            text("subject_version"),
            s["count"].as_u64().map_or("-".into(), |c| c.to_string()),
            v("p50"),
            v("p99"),
            v("p999"),
            ratio,
        ]);
    }
    if rows.len() == 1 {
        anyhow::bail!("the last run has no records of {system} that match");
    }
    let m = &results["machine"];
    let mut out = format!(
        "From `cargo xtask bench{}` at {}, {} ({} CPUs):\n\n",
        if results["quick"].as_bool() == Some(true) {
            " --quick"
        } else {
            ""
        },
        m["git_revision"].as_str().unwrap_or("?"),
        m["date"].as_str().unwrap_or("?"),
        m["cpus"].as_u64().unwrap_or(0),
    );
    out.push_str(&markdown_table(&drop_empty_columns(rows)));
    Ok(out)
}

/// `benches/<system>/RESULTS.md`: the whole table of `system` in the run
/// `results` holds, with the machine, the peers' versions and the run's
/// notes. Written by `cargo xtask bench` after each full run.
pub fn results_page(results: &Value, system: &str) -> Result<String> {
    let m = &results["machine"];
    let text = |v: &Value| v.as_str().unwrap_or("?").to_string();
    let mut out = format!(
        "# {system}: the last full benchmark run\n\n\
         Written by `cargo xtask bench {system}` from its `results.json`;\n\
         do not edit (the next full run replaces it). Each workload ran its\n\
         subjects interleaved, round by round; `vs reference` is the median\n\
         of the rounds' ratios (above 1 is slower). Every round, chart and\n\
         note is in `target/bench/report.md` of the run.\n\n"
    );
    let facts = [
        [
            "CPUs".to_string(),
            format!(
                "{} ({})",
                m["cpus"].as_u64().unwrap_or(0),
                text(&m["cpu_model"])
            ),
        ],
        ["kernel".into(), text(&m["kernel"])],
        [
            "filesystems (disk, tmpfs)".into(),
            format!("{}, {}", text(&m["disk_fs"]), text(&m["shm_fs"])),
        ],
        ["rustc".into(), text(&m["rustc"])],
    ];
    let mut rows = vec![vec!["machine".to_string(), String::new()]];
    rows.extend(facts.iter().map(|f| f.to_vec()));
    out.push_str(&markdown_table(&rows));
    out.push('\n');
    out.push_str(&render(results, system, &Only::default())?);
    let sys = results["systems"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"].as_str() == Some(system)));
    if let Some(sys) = sys {
        let peers = sys["peers"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        if !peers.is_empty() {
            out.push_str("\nPeers:\n\n");
            for p in peers {
                let state = match (p["version"].as_str(), p["missing"].as_str()) {
                    (Some(v), _) => v.to_string(),
                    (None, Some(why)) => format!("missing ({why})"),
                    _ => "?".into(),
                };
                let _ = writeln!(out, "- {}: {state}", text(&p["name"]));
            }
        }
        let notes = sys["notes"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        if !notes.is_empty() {
            out.push_str("\nNotes of the run:\n\n");
            for n in notes {
                let _ = writeln!(out, "- {}", text(n));
            }
        }
    }
    Ok(out)
}

/// `cargo xtask table SYSTEM [WORKLOAD...] [--sizes ...] [--subjects ...]`:
/// prints the table.
pub fn run(system: &str, only: &Only) -> Result<()> {
    let path = crate::target_dir().join("bench/results.json");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("reading {} (run cargo xtask bench first)", path.display()))?;
    let results: Value = serde_json::from_str(&text)?;
    print!("{}", render(&results, system, only)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Only, render, results_page};

    fn workloads(w: &[&str]) -> Only {
        Only {
            workloads: w.iter().map(|s| s.to_string()).collect(),
            ..Only::default()
        }
    }

    #[test]
    fn a_results_page_has_the_machine_the_table_the_peers_and_the_notes() {
        let results = serde_json::json!({
            "quick": false,
            "machine": {"git_revision": "abc123", "date": "2026-11-30T04:00:00Z", "cpus": 2,
                        "cpu_model": "Some CPU", "kernel": "6.1", "disk_fs": "ext4",
                        "shm_fs": "tmpfs", "rustc": "rustc 1.95.0"},
            "systems": [{"name": "rush", "notes": ["dash was fastest at start-up"],
                         "peers": [{"name": "dash", "version": "0.5.12"},
                                   {"name": "mksh", "missing": "not in apt"}]}],
            "records": [
                {"system": "rush", "workload": "start-up", "params": {},
                 "subject": "rush", "subject_version": "0.1.0", "unit": "ns",
                 "summary": {"count": 9, "p50": 900_000.0, "p99": 1_000_000.0, "p999": 1_000_000.0}},
                {"system": "rush", "workload": "start-up", "params": {},
                 "subject": "dash", "subject_version": "0.5.12", "unit": "ns",
                 "summary": {"count": 9, "p50": 800_000.0, "p99": 900_000.0, "p999": 900_000.0},
                 "ratio": {"median": 0.89, "reference": "rush"}}
            ]
        });
        let page = results_page(&results, "rush").unwrap();
        assert!(
            page.starts_with("# rush: the last full benchmark run\n"),
            "{page}"
        );
        assert!(page.contains("| CPUs "), "{page}");
        assert!(page.contains("2 (Some CPU)"), "{page}");
        assert!(page.contains("ext4, tmpfs"), "{page}");
        assert!(
            page.contains("From `cargo xtask bench` at abc123"),
            "{page}"
        );
        assert!(page.contains("0.89x rush"), "{page}");
        assert!(page.contains("- dash: 0.5.12\n"), "{page}");
        assert!(page.contains("- mksh: missing (not in apt)\n"), "{page}");
        assert!(page.contains("- dash was fastest at start-up\n"), "{page}");
        assert!(results_page(&results, "greppy").is_err());
    }

    #[test]
    fn a_table_of_the_chosen_workloads_with_ratios_and_the_run() {
        let results = serde_json::json!({
            "quick": false,
            "machine": {"git_revision": "abc123", "date": "2026-11-30T04:00:00Z", "cpus": 2},
            "records": [
                {"system": "termio", "workload": "relay: time per MiB", "params": {"file": "256 MiB"},
                 "subject": "termio", "subject_version": "0.1.0", "unit": "ns",
                 "summary": {"count": 5, "p50": 6_000_000.0, "p99": 7_000_000.0, "p999": 7_000_000.0}},
                {"system": "termio", "workload": "relay: time per MiB", "params": {"file": "256 MiB"},
                 "subject": "floor", "subject_version": "python3", "unit": "ns",
                 "summary": {"count": 5, "p50": 5_000_000.0, "p99": 6_000_000.0, "p999": 6_000_000.0},
                 "ratio": {"median": 0.83, "reference": "termio"}},
                {"system": "termio", "workload": "echo: idle", "params": {},
                 "subject": "termio", "subject_version": "0.1.0", "unit": "ns",
                 "summary": {"count": 1000, "p50": 1_000_000.0, "p99": 2_000_000.0, "p999": 3_000_000.0}},
                {"system": "termio", "workload": "relay: time per MiB", "params": {"file": "1 MiB"},
                 "subject": "termio", "subject_version": "0.1.0", "unit": "ns",
                 "summary": {"count": 5, "p50": 6_000_000.0, "p99": 7_000_000.0, "p999": 7_000_000.0}},
                {"system": "greppy", "workload": "relay: time per MiB", "params": {},
                 "subject": "x", "subject_version": "1", "unit": "ns",
                 "summary": {"count": 1, "p50": 1.0, "p99": 1.0, "p999": 1.0}}
            ]
        });
        let t = render(&results, "termio", &workloads(&["relay"])).unwrap();
        assert!(
            t.starts_with("From `cargo xtask bench` at abc123, 2026-11-30T04:00:00Z (2 CPUs):"),
            "{t}"
        );
        // Run with two files: each group says which.
        assert!(t.contains("| relay: time per MiB (file=256 MiB) |"), "{t}");
        assert!(t.contains("| relay: time per MiB (file=1 MiB) "), "{t}");
        // No size in these records: no size column.
        assert!(!t.contains("size"), "{t}");
        assert!(t.contains("6.00 ms"), "{t}");
        assert!(t.contains("0.83x termio"), "{t}");
        // The second row of a group does not repeat the workload.
        assert_eq!(t.matches("relay: time per MiB").count(), 2, "{t}");
        assert!(!t.contains("echo: idle") && !t.contains("| x "), "{t}");
        assert!(render(&results, "rush", &Only::default()).is_err());
        // One set of parameters: the name alone.
        let t = render(&results, "termio", &workloads(&["echo"])).unwrap();
        assert!(t.contains("| echo: idle "), "{t}");
    }

    #[test]
    fn a_table_of_chosen_sizes_and_subjects() {
        let rec = |size: u64, subject: &str| {
            serde_json::json!({"system": "fast-rm", "workload": "delete nested", "params": {},
                "size": size, "subject": subject, "subject_version": "1", "unit": "ns",
                "summary": {"count": 3, "p50": 1e6, "p99": 1e6, "p999": 1e6}})
        };
        let results = serde_json::json!({
            "machine": {"git_revision": "abc123", "date": "d", "cpus": 2},
            "records": [rec(100, "fast-rm"), rec(100, "rmz"), rec(100_000, "fast-rm"),
                        rec(100_000, "find -delete"), rec(100_000, "rm -r")]
        });
        let only = Only {
            sizes: vec![100_000],
            subjects: vec!["fast-rm".into(), "rm -r".into()],
            ..Only::default()
        };
        let t = render(&results, "fast-rm", &only).unwrap();
        assert_eq!(t.matches("| 100000 ").count(), 2, "{t}");
        assert!(t.contains("| rm -r "), "{t}");
        assert!(
            !t.contains("| 100 ") && !t.contains("find") && !t.contains("rmz"),
            "{t}"
        );
        // A subject is matched whole, not by prefix.
        let only = Only {
            subjects: vec!["rm".into()],
            ..Only::default()
        };
        assert!(render(&results, "fast-rm", &only).is_err());
    }
}
