//! `jobs`, `fg`, `bg` and `disown`, over the job table (see
//! [`crate::job`]).

use super::{Args, emit, lossy};
use crate::shell::{Exec, Shell};

/// The job a `%spec` names (without the `%`): `%n`, `%+`/`%%`/`%`, `%-`,
/// `%string` (the job whose command starts with it), `%?string` (contains
/// it). Its index in the table.
pub fn find(sh: &Shell, spec: &[u8]) -> Option<usize> {
    match spec {
        b"" | b"%" | b"+" => sh.current_job(),
        b"-" => sh.previous_job(),
        _ if spec.iter().all(u8::is_ascii_digit) => {
            let id: usize = lossy(spec).parse().ok()?;
            sh.jobs.iter().position(|j| j.id == id)
        }
        _ => {
            let (contains, text) = match spec.strip_prefix(b"?") {
                Some(t) => (true, t),
                None => (false, spec),
            };
            let text = lossy(text);
            sh.jobs.iter().rposition(|j| {
                if contains {
                    j.command.contains(&text)
                } else {
                    j.command.starts_with(&text)
                }
            })
        }
    }
}

/// The job an operand names (`%spec`, or a pid of one of its processes),
/// reporting a bad one.
fn operand(sh: &mut Shell, builtin: &str, a: &[u8]) -> Option<usize> {
    let found = match a.strip_prefix(b"%") {
        Some(spec) => find(sh, spec),
        None => lossy(a)
            .parse::<i32>()
            .ok()
            .and_then(|pid| sh.jobs.iter().position(|j| j.pids.contains(&pid))),
    };
    if found.is_none() {
        sh.error(&format!("{builtin}: {}: no such job", lossy(a)));
    }
    found
}

pub fn jobs(sh: &mut Shell, argv: Args<'_>) -> Exec {
    sh.reap_jobs();
    // A shell that is not interactive forgets its ended jobs unreported
    // (bash).
    if !sh.opts.interactive && !sh.subshell {
        sh.jobs.retain(|j| !j.finished());
    }
    let Ok((flags, ops)) = super::options(
        sh,
        argv,
        b"lnprs",
        "jobs: usage: jobs [-lnprs] [jobspec ...] or jobs -x command [args]",
    ) else {
        return Ok(2);
    };
    let on = |c: u8| flags.contains(&c);
    let (long, pids_only, running, stopped) = (on(b'l'), on(b'p'), on(b'r'), on(b's'));
    let mut which = Vec::new();
    let mut status = 0;
    if ops.is_empty() {
        which.extend(0..sh.jobs.len());
    } else {
        for a in &ops {
            match operand(sh, "jobs", a) {
                Some(i) => which.push(i),
                None => status = 1,
            }
        }
    }
    let mut out = String::new();
    for i in which {
        let j = &sh.jobs[i];
        if (running && (j.stopped.is_some() || j.finished())) || (stopped && j.stopped.is_none()) {
            continue;
        }
        if pids_only {
            let pid = if j.pgid > 0 {
                j.pgid
            } else {
                j.pids.first().copied().unwrap_or(0)
            };
            out.push_str(&format!("{pid}\n"));
            continue;
        }
        out.push_str(&sh.job_line(i, long));
        sh.jobs[i].notified = true;
    }
    if !sh.subshell {
        sh.jobs.retain(|j| !j.finished() || !j.notified);
    }
    let s = emit(sh, "jobs", out.as_bytes());
    Ok(if s != 0 { s } else { status })
}

/// `fg [%job]` and `bg [%job ...]`.
pub fn fg_bg(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let name = lossy(&argv[0]);
    if !sh.job_control() {
        sh.error(&format!("{name}: no job control"));
        return Ok(1);
    }
    sh.reap_jobs();
    let ops: Vec<Vec<u8>> = argv[1..]
        .iter()
        .filter(|a| a.as_slice() != b"--")
        .cloned()
        .collect();
    let picks: Vec<Option<usize>> = if ops.is_empty() {
        let cur = sh.current_job();
        if cur.is_none() {
            sh.error(&format!("{name}: current: no such job"));
            return Ok(1);
        }
        vec![cur]
    } else {
        ops.iter().map(|a| operand(sh, &name, a)).collect()
    };
    if name == "fg" {
        let Some(i) = picks[0] else {
            return Ok(1);
        };
        if sh.jobs[i].finished() {
            sh.error("fg: job has terminated");
            sh.jobs.remove(i);
            return Ok(1);
        }
        return Ok(sh.foreground(i));
    }
    let mut status = 0;
    for p in picks {
        let Some(i) = p else {
            status = 1;
            continue;
        };
        if sh.jobs[i].finished() {
            sh.error("bg: job has terminated");
            status = 1;
            continue;
        }
        if sh.jobs[i].stopped.is_none() {
            let id = sh.jobs[i].id;
            sh.error(&format!("bg: job {id} already in background"));
            continue;
        }
        sh.background(i);
    }
    Ok(status)
}

/// `disown [-ah] [-r] [%job ...]`: forgets jobs (the shell sends them no
/// SIGHUP at exit and `jobs` no longer lists them).
pub fn disown(sh: &mut Shell, argv: Args<'_>) -> Exec {
    sh.reap_jobs();
    // `-h` keeps the job but spares it the SIGHUP a hang-up sends: rush
    // forgets it instead, which spares it too (`jobs` then no longer
    // lists it).
    let Ok((flags, ops)) = super::options(
        sh,
        argv,
        b"ahr",
        "disown: usage: disown [-h] [-ar] [jobspec ... | pid ...]",
    ) else {
        return Ok(2);
    };
    let (all, running_only) = (flags.contains(&b'a'), flags.contains(&b'r'));
    if all || running_only {
        sh.jobs
            .retain(|j| running_only && !all && j.stopped.is_some());
        return Ok(0);
    }
    if ops.is_empty() {
        match sh.current_job() {
            Some(i) => {
                sh.jobs.remove(i);
                return Ok(0);
            }
            None => {
                sh.error("disown: current: no such job");
                return Ok(1);
            }
        }
    }
    let mut status = 0;
    let mut drop_ids = Vec::new();
    for a in &ops {
        match operand(sh, "disown", a) {
            Some(i) => drop_ids.push(sh.jobs[i].id),
            None => status = 1,
        }
    }
    sh.jobs.retain(|j| !drop_ids.contains(&j.id));
    Ok(status)
}
