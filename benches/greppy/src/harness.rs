//! What every row uses: the environment (the binaries, the daemon, the
//! peers), a peer process timed whole, a row's rounds, and its events.

use anyhow::{Result, bail};
use floor::driver::{self, Args};
use greppy::client::Client;
use latency::process::time_command;
use latency::{BoxError, Options, Run, Sample, SubjectInfo};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub(crate) const SYSTEM: &str = "greppy";

/// A daemon of the benchmark's own: its socket and indexes in `dir`.
pub(crate) struct Env {
    pub(crate) greppy: PathBuf,
    pub(crate) dir: PathBuf,
}

impl Env {
    pub(crate) fn cmd(&self) -> Command {
        let mut c = Command::new(&self.greppy);
        c.env("XDG_RUNTIME_DIR", self.dir.join("run"))
            .env("XDG_CACHE_HOME", self.dir.join("cache"))
            .env_remove("GREPPY_NO_DAEMON")
            .stdin(Stdio::null());
        c
    }

    pub(crate) fn socket(&self) -> PathBuf {
        self.dir.join("run/greppy/socket")
    }

    pub(crate) fn ok(&self, args: &[&str]) -> Result<String> {
        let o = self.cmd().args(args).output()?;
        if !o.status.success() {
            bail!(
                "greppy {args:?}: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    }

    pub(crate) fn start(&self) -> Result<()> {
        self.ok(&["daemon", "start"]).map(drop)
    }

    pub(crate) fn stop(&self) {
        let _ = self.ok(&["daemon", "stop"]);
    }

    /// A daemon with no index at all.
    pub(crate) fn fresh_daemon(&self) -> Result<()> {
        self.stop();
        let _ = std::fs::remove_dir_all(self.dir.join("cache"));
        self.start()
    }

    pub(crate) fn client(&self) -> Result<Client> {
        Client::connect(&self.socket()).map_err(Into::into)
    }

    pub(crate) fn pid(&self) -> Result<i32> {
        let s = std::os::unix::net::UnixStream::connect(self.socket())?;
        Ok(rustix::net::sockopt::socket_peercred(&s)?
            .pid
            .as_raw_nonzero()
            .get())
    }

    pub(crate) fn index(&self, path: &Path) -> Result<greppy::protocol::RootInfo> {
        Ok(self.client()?.index(path)?)
    }
}

/// zoekt, as the benchmark runs it.
pub(crate) struct Zoekt {
    pub(crate) index: PathBuf,
    pub(crate) search: PathBuf,
    pub(crate) version: String,
    pub(crate) dir: PathBuf,
}

/// A `/proc/PID/status` figure in KiB (`VmRSS`, `VmHWM`).
pub(crate) fn proc_kib(pid: i32, key: &str) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// User and system CPU of a process so far, in ns.
pub(crate) fn proc_cpu_ns(pid: i32) -> Option<(u64, u64)> {
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

/// A whole process, timed with wait4; exit 1 (nothing found) is a success.
pub(crate) fn process(mut c: Command) -> Result<Sample, BoxError> {
    c.stdout(Stdio::null()).stderr(Stdio::null());
    let t = time_command(&mut c)?;
    match t.status.code() {
        Some(0 | 1) => Ok(t.sample()),
        _ => Err(format!("{c:?}: {}", t.status).into()),
    }
}

pub(crate) fn rounds(args: &Args, quick: usize, full: usize) -> Options {
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
pub(crate) fn emit_values(
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
pub(crate) fn emit_values_of(
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
