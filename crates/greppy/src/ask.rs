//! Asking the daemon from a process of its own (the command line, the MCP
//! server): connecting, starting the daemon where none runs, and ranked
//! answers with how a hit is printed. Below both callers, so that neither
//! reaches into the other.

use crate::client::{self, Client};
use crate::daemon;
use std::io::BufRead;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Starts `greppy daemon run` in its own session, its errors logged beside
/// the socket. With `wait`, returns once its socket answers (it says so on
/// its output), or with its error.
pub fn spawn_daemon(wait: bool) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let socket = daemon::socket_path();
    let dir = socket.parent().unwrap_or(Path::new("/tmp"));
    daemon::make_private_dir(dir)?;
    let log_path = dir.join("daemon.log");
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .with_context(|| format!("open {}", log_path.display()))?;
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.args(["daemon", "run"])
        .stdin(Stdio::null())
        .stdout(if wait { Stdio::piped() } else { Stdio::null() })
        .stderr(log);
    // SAFETY: setsid is async-signal-safe and touches no memory of ours; it
    // detaches the daemon from this terminal's signals and hangups.
    unsafe {
        cmd.pre_exec(|| rustix::process::setsid().map(drop).map_err(Into::into));
    }
    let mut child = cmd.spawn().context("start `greppy daemon run`")?;
    if wait {
        let out = child.stdout.take().context("the daemon's output")?;
        let mut line = String::new();
        std::io::BufReader::new(out).read_line(&mut line)?;
        // One that another start began meanwhile answers: that is a start.
        if line.is_empty() && Client::connect(&socket).is_err() {
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            let last = log.lines().last().unwrap_or("no message");
            anyhow::bail!("the daemon did not start: {last}");
        }
    }
    Ok(())
}

/// A connection to the daemon, started (and waited for) if none runs.
pub fn connect() -> anyhow::Result<Client> {
    let socket = daemon::socket_path();
    Ok(match Client::connect(&socket) {
        Err(client::Error::NoDaemon(..)) => {
            spawn_daemon(true)?;
            Client::connect(&socket)?
        }
        r => r?,
    })
}

/// The hits of a ranked search of `dir`, named below `dir` as given: from
/// the daemon (started if none runs), or from an index made in memory.
pub fn find(
    query: &str,
    dir: &Path,
    limit: u64,
    no_daemon: bool,
    note: impl Fn(&str),
) -> anyhow::Result<Vec<crate::rank::Hit>> {
    let abs = dir.canonicalize()?;
    let rename = |mut hits: Vec<crate::rank::Hit>| {
        for h in &mut hits {
            if let Ok(rel) = h.path.strip_prefix(&abs) {
                h.path = dir.join(rel);
            }
        }
        hits
    };
    let local = || -> anyhow::Result<Vec<crate::rank::Hit>> {
        let n = if limit == 0 { 10 } else { limit as usize };
        Ok(rename(crate::rank::find_in_walk(&abs, query, n)?))
    };
    if no_daemon {
        return local();
    }
    let mut client = match connect() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("greppy: no daemon ({e:#}); indexing in memory for this answer");
            return local();
        }
    };
    let found = client.find(crate::protocol::FindQuery {
        query: query.to_string(),
        path: abs.as_os_str().as_bytes().to_vec(),
        display: dir.as_os_str().as_bytes().to_vec(),
        limit,
        wait_ms: 0,
    })?;
    if let Some(n) = &found.note {
        note(n);
    }
    Ok(found.hits)
}

/// One hit: a heading (`path:start-end kind name [score]`), then up to
/// `lines` lines of its span; or one JSON object.
pub fn print_hit(
    out: &mut impl std::io::Write,
    shown: &Path,
    h: &crate::rank::Hit,
    lines: usize,
    json: bool,
) -> anyhow::Result<()> {
    if json {
        let v = serde_json::json!({
            "path": shown.to_string_lossy(),
            "start": h.start,
            "end": h.end,
            "score": h.score,
            "kind": h.kind,
            "name": h.name,
        });
        writeln!(out, "{v}")?;
        return Ok(());
    }
    let name = if h.name.is_empty() {
        String::new()
    } else {
        format!(" {}", h.name)
    };
    writeln!(
        out,
        "{}:{}-{} {}{name} [{:.2}]",
        shown.display(),
        h.start,
        h.end,
        h.kind,
        h.score
    )?;
    if lines > 0 {
        let text = std::fs::read(&h.path).unwrap_or_default();
        let text = String::from_utf8_lossy(&text);
        let span = (h.end - h.start + 1) as usize;
        for (i, l) in text
            .lines()
            .enumerate()
            .skip(h.start.saturating_sub(1) as usize)
            .take(span.min(lines))
        {
            writeln!(out, "{:>6}  {l}", i + 1)?;
        }
        if span > lines {
            writeln!(out, "        …")?;
        }
        writeln!(out)?;
    }
    Ok(())
}
