//! Running the benchmarks: builds the drivers, installs the peers, runs
//! each system's drivers with a progress display, and writes the report.

use super::{Driver, System, pyloop, systems};
use crate::cmd;
use crate::peers;
use crate::report::{Machine, Outcome, Report};
use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use latency::Event;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn select(names: &[String]) -> Result<Vec<System>> {
    let all = systems();
    if names.is_empty() {
        return Ok(all);
    }
    names
        .iter()
        .map(|n| {
            all.iter().find(|s| s.name == n).cloned().with_context(|| {
                let known: Vec<_> = all.iter().map(|s| s.name).collect();
                format!("unknown system {n:?}; known: {}", known.join(", "))
            })
        })
        .collect()
}

pub fn run(names: &[String], quick: bool) -> Result<()> {
    let systems = select(names)?;
    crate::deps::ensure(crate::deps::Task::Bench, names)?;
    let out_dir = crate::target_dir().join("bench");
    let scratch = out_dir.join("scratch");
    std::fs::create_dir_all(&scratch)?;
    let shm = shm_scratch();
    let _cleanup = RemoveOnDrop(shm.clone());

    // Build every Rust driver in one cargo call.
    let mut build = cmd::cargo();
    build.args(["build", "--release"]);
    for s in &systems {
        for d in &s.drivers {
            if let Driver::Cargo { package, bin, also } = d {
                build.args(["-p", package, "--bin", bin]);
                for (p, b) in *also {
                    build.args(["-p", p, "--bin", b]);
                }
            }
        }
    }
    if build.get_args().any(|a| a == "-p") {
        cmd::run(&mut build)?;
    }
    // What the drivers measure is what `cargo xtask install` installs: the
    // statically linked builds. The dynamic ones stay in target/release.
    let measured: Vec<(&str, &str)> = systems
        .iter()
        .flat_map(|s| s.drivers.iter())
        .flat_map(|d| match d {
            Driver::Cargo { also, .. } => also.iter().copied(),
            Driver::Python { .. } | Driver::Node { .. } => [].iter().copied(),
        })
        .collect();
    let bins: std::collections::BTreeMap<String, PathBuf> = if measured.is_empty() {
        Default::default()
    } else {
        crate::install::build_static(&measured)?
            .into_iter()
            .collect()
    };
    let bins = serde_json::to_string(&bins)?;

    let machine = Machine::probe(&scratch, &shm);
    let mut report = Report::new(machine, quick);
    let mut failed = Vec::new();
    for system in &systems {
        let mut outcome = Outcome {
            peers: system.peers.iter().map(peers::ensure).collect(),
            ..Outcome::default()
        };
        for p in &outcome.peers {
            if let Some(why) = &p.missing {
                outcome
                    .notes
                    .push(format!("peer {} is missing: {why}", p.name));
            }
        }
        for driver in &system.drivers {
            let args = DriverArgs {
                quick,
                scratch: scratch.clone(),
                shm: shm.clone(),
                peers: serde_json::to_string(&outcome.peers)?,
                bins: bins.clone(),
            };
            run_driver(system.name, driver, &args, &mut outcome)?;
        }
        failed.extend(failed_rounds(system.name, &outcome.notes));
        report.add(system.name, outcome);
        println!("{}", report.system_table(system.name));
    }
    let written = report.write(&out_dir)?;
    println!("Report: {}", written.display());
    if !quick {
        // The record of the last full run, beside each system's workloads:
        // the tables READMEs point to, written here, never by hand.
        let results = serde_json::to_value(&report)?;
        for system in &systems {
            let page = crate::table::results_page(&results, system.name)?;
            let path = crate::root()
                .join("benches")
                .join(system.name)
                .join("RESULTS.md");
            std::fs::write(&path, page).with_context(|| format!("writing {}", path.display()))?;
            println!("Results: {}", path.display());
        }
    }
    // The other rounds' figures are written; a failed one still fails the run.
    if !failed.is_empty() {
        bail!(
            "{} round(s) failed and were left out of the tables:\n{}",
            failed.len(),
            failed.join("\n")
        );
    }
    Ok(())
}

/// The notes of `system` that report a round a driver dropped because a
/// subject failed in it.
fn failed_rounds(system: &str, notes: &[String]) -> Vec<String> {
    notes
        .iter()
        .filter(|n| n.starts_with(latency::Dropped::NOTE_PREFIX))
        .map(|n| format!("  {system}: {n}"))
        .collect()
}

/// Removes a scratch folder however the run ends.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A tmpfs scratch folder: `/dev/shm` where it exists.
fn shm_scratch() -> PathBuf {
    let base = PathBuf::from("/dev/shm");
    let base = if base.is_dir() {
        base
    } else {
        std::env::temp_dir()
    };
    base.join(format!("xtask-bench-{}", std::process::id()))
}

/// What every driver is told.
#[derive(Debug, Clone)]
struct DriverArgs {
    quick: bool,
    scratch: PathBuf,
    shm: PathBuf,
    /// The peers' `PeerStatus`es as JSON, for `XTASK_PEERS`.
    peers: String,
    /// Our binaries (name -> path) as JSON, for `XTASK_BINS`.
    bins: String,
}

fn driver_command(driver: &Driver, args: &DriverArgs) -> Result<Command> {
    let mut c = match driver {
        Driver::Cargo { bin, .. } => Command::new(crate::target_dir().join("release").join(bin)),
        Driver::Python { script, packages } => {
            let py = pyloop::prepare(packages)?;
            let others = pyloop::other_pythons();
            let mut c = Command::new(py);
            c.env("XTASK_PYLOOP_PYTHONS", pyloop::other_pythons_json(&others));
            // -P: the repository's python/ folder must not shadow the
            // installed package.
            c.arg("-P").arg(crate::root().join(script));
            c
        }
        Driver::Node { script } => {
            crate::node::build_release()?;
            let mut c = Command::new("node");
            c.arg(crate::root().join(script));
            c
        }
    };
    if args.quick {
        c.arg("--quick");
    }
    c.arg("--scratch")
        .arg(&args.scratch)
        .arg("--shm")
        .arg(&args.shm)
        .env("XTASK_PEERS", &args.peers)
        .env("XTASK_BINS", &args.bins);
    Ok(c)
}

fn run_driver(system: &str, driver: &Driver, args: &DriverArgs, out: &mut Outcome) -> Result<()> {
    let mut c = driver_command(driver, args)?;
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c
        .spawn()
        .with_context(|| format!("cannot start {}", cmd::show(&c)))?;
    let bar = ProgressBar::new(0).with_prefix(system.to_string());
    bar.set_style(
        ProgressStyle::with_template("{prefix:>8} [{bar:30}] {pos}/{len} {elapsed:>4} {msg}")
            .expect("constant template")
            .progress_chars("=> "),
    );
    // The driver's stderr is shown above the bar, line by line.
    let stderr = child.stderr.take().expect("piped");
    let err_bar = bar.clone();
    let err_thread = std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            // A hidden bar (no terminal) prints nothing: write the line itself.
            if err_bar.is_hidden() {
                eprintln!("{line}");
            } else {
                err_bar.println(line);
            }
        }
    });
    let stdout = child.stdout.take().expect("piped");
    let mut steps = 0;
    let mut parse_error = None;
    for line in BufReader::new(stdout).lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        match Event::parse(&line) {
            Ok(Event::Plan { steps }) => bar.set_length(steps),
            Ok(Event::Step { label }) => {
                if steps > 0 {
                    bar.inc(1);
                }
                steps += 1;
                bar.set_message(label);
            }
            Ok(Event::Record(r)) => out.records.push(*r),
            Ok(Event::Run(run)) => out.records.extend(run.records()?),
            Ok(Event::Note { text }) => out.notes.push(text),
            Err(e) => {
                parse_error.get_or_insert(format!("bad line from driver: {e}: {line:.200}"));
            }
        }
    }
    let status = child.wait()?;
    let _ = err_thread.join();
    bar.inc(1);
    bar.finish_and_clear();
    if !status.success() {
        bail!("benchmark driver `{}` failed: {status}", cmd::show(&c));
    }
    if let Some(e) = parse_error {
        bail!("{e}");
    }
    Ok(())
}

/// `cargo xtask bench --micro`: the criterion benchmarks inside the crates.
pub fn micro(names: &[String], quick: bool) -> Result<()> {
    let mut c = cmd::cargo();
    c.arg("bench");
    if names.is_empty() {
        c.arg("--workspace");
    } else {
        for n in names {
            c.args(["-p", n]);
        }
    }
    // Only the `[[bench]]` targets: libtest would reject criterion's flags.
    c.args(["--bench", "*", "--"]);
    if quick {
        c.arg("--quick");
    }
    cmd::run(&mut c)
}

#[cfg(test)]
mod tests {
    use super::failed_rounds;

    #[test]
    fn a_dropped_rounds_note_fails_the_run_and_other_notes_do_not() {
        let dropped = latency::Dropped {
            round: Some(2),
            error: latency::Error::NoSubjects,
        };
        let notes = vec![
            "peer rmz is missing: no cargo".to_string(),
            dropped.note("nested 1000 files on tmpfs"),
        ];
        assert_eq!(
            failed_rounds("fast-rm", &notes),
            ["  fast-rm: FAILED: nested 1000 files on tmpfs, round 3: \
              a run needs at least one subject; that round is left out"]
        );
        assert!(failed_rounds("fast-rm", &notes[..1]).is_empty());
    }
}
