//! Signals and children: `trap`, `kill` and `wait`.

use super::{Args, emit, jobs, lossy};
use crate::escape::single_quote;
use crate::shell::{Exec, Flow, Run, Shell};
use crate::sys;

pub(super) fn trap(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let mut args = &argv[1..];
    if args.first().map(Vec::as_slice) == Some(b"--") {
        args = &args[1..];
    }
    if args.is_empty() || args[0] == b"-p" {
        let mut out = Vec::new();
        let shown = |sig: i32| {
            sh.traps.get(&sig).map(Vec::as_slice).or_else(|| {
                // Signals ignored when the shell started are listed as
                // ignored, as bash lists them (`nohup sh -c 'trap -p'`).
                (sig > 0 && sys::ignored_at_start(sig)).then_some(&b""[..])
            })
        };
        // In POSIX mode every signal is listed, `-` for those with no
        // trap, by its name without `SIG` (bash).
        let posix = sh.opts.posix;
        let shown_or_default = |sig: i32| shown(sig).or(posix.then_some(&b"-"[..]));
        let mut all: Vec<(i32, &[u8])> = Vec::new();
        let mut status = 0;
        let named = args.get(1..).unwrap_or_default();
        let named = if named.first().map(Vec::as_slice) == Some(b"--") {
            &named[1..]
        } else {
            if let Some(o) = named.first().filter(|o| o.len() > 1 && o[0] == b'-') {
                sh.error(&format!("trap: {}: invalid option", lossy(&o[..2])));
                sh.usage("trap: usage: trap [-lp] [[arg] signal_spec ...]");
                return Ok(2);
            }
            named
        };
        if named.is_empty() && posix {
            let shell_own = [sys::DEBUG_TRAP, sys::ERR_TRAP, sys::RETURN_TRAP];
            for sig in (0..=64).chain(shell_own) {
                all.extend(shown_or_default(sig).map(|a| (sig, a)));
            }
        } else if named.is_empty() {
            all.extend(sh.traps.iter().map(|(s, a)| (*s, a.as_slice())));
            for &(sig, _) in sys::SIGNALS {
                if sig > 0 && !sh.traps.contains_key(&sig) && sys::ignored_at_start(sig) {
                    all.push((sig, b""));
                }
            }
            // bash's order: EXIT, the signals, then DEBUG, ERR and RETURN.
            all.sort_by_key(|&(sig, _)| match sig {
                sys::DEBUG_TRAP => 1000,
                sys::ERR_TRAP => 1001,
                sys::RETURN_TRAP => 1002,
                s => s,
            });
        } else {
            // `trap -p SIG…`: those signals only, in the order named.
            for s in named {
                match sys::signal_number(s) {
                    Some(num) => all.extend(shown_or_default(num).map(|a| (num, a))),
                    None => {
                        sh.error(&format!("trap: {}: invalid signal specification", lossy(s)));
                        status = 1;
                    }
                }
            }
        }
        for (sig, action) in all {
            out.extend_from_slice(b"trap -- ");
            if posix && action == b"-" && !sh.traps.contains_key(&sig) {
                out.push(b'-');
            } else {
                out.extend_from_slice(&single_quote(action));
            }
            out.push(b' ');
            let Some(name) = sys::signal_name(sig) else {
                out.extend_from_slice(sig.to_string().as_bytes());
                out.push(b'\n');
                continue;
            };
            if sig <= 0 || posix {
                out.extend_from_slice(name.as_bytes());
            } else {
                out.extend_from_slice(b"SIG");
                out.extend_from_slice(name.as_bytes());
            }
            out.push(b'\n');
        }
        let st = emit(sh, "trap", &out);
        return Ok(if status != 0 { status } else { st });
    }
    // Another option (`trap -1 EXIT`) is an error with the usage (bash).
    if args[0] != b"-l" && args[0].len() > 1 && args[0][0] == b'-' && argv[1] != b"--" {
        sh.error(&format!("trap: {}: invalid option", lossy(&args[0][..2])));
        sh.usage("trap: usage: trap [-lp] [[arg] signal_spec ...]");
        return Ok(2);
    }
    if args[0] == b"-l" {
        return Ok(emit(sh, "trap", sys::signal_table().as_bytes()));
    }
    // `trap N…` with a number first: reset those signals.
    let (action, sigs): (Option<&[u8]>, &[Vec<u8>]) =
        if args.len() == 1 || !args[0].is_empty() && args[0].iter().all(u8::is_ascii_digit) {
            (None, args)
        } else if args[0] == b"-" {
            (None, &args[1..])
        } else {
            (Some(&args[0]), &args[1..])
        };
    let mut status = 0;
    for s in sigs {
        let Some(num) = sys::signal_number(s) else {
            sh.error(&format!("trap: {}: invalid signal specification", lossy(s)));
            status = 1;
            continue;
        };
        // ERR, DEBUG and RETURN are the shell's own, not signals.
        if num < 0 {
            match action {
                None => {
                    sh.traps.remove(&num);
                }
                Some(a) => {
                    sh.traps.insert(num, a.to_vec());
                }
            }
            continue;
        }
        if num == libc::SIGKILL || num == libc::SIGSTOP {
            sh.traps.remove(&num);
            continue;
        }
        // A signal ignored when the shell started cannot be trapped or
        // reset (POSIX); bash says nothing and goes on.
        if num > 0 && !sh.traps.contains_key(&num) && sys::ignored_at_start(num) {
            continue;
        }
        match action {
            None => {
                sh.traps.remove(&num);
                if num != 0 {
                    let _ = sys::set_disposition(num, sys::Disposition::Default);
                }
            }
            Some(a) => {
                sh.traps.insert(num, a.to_vec());
                if num != 0 {
                    let d = if a.is_empty() {
                        sys::Disposition::Ignore
                    } else {
                        sys::Disposition::Catch
                    };
                    let _ = sys::set_disposition(num, d);
                }
            }
        }
    }
    Ok(status)
}

pub(super) fn kill(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let mut sig = libc::SIGTERM;
    let mut i = 1;
    if let Some(a) = argv.get(1) {
        if a == b"-l" || a == b"-L" {
            let mut out = String::new();
            let mut status = 0;
            let names = &argv[2..];
            if names.is_empty() {
                if sh.opts.posix && a == b"-l" {
                    // POSIX: the names alone, on one line.
                    let all: Vec<&str> = sys::SIGNALS.iter().map(|(_, n)| *n).collect();
                    out = all.join(" ");
                    out.push('\n');
                } else {
                    out = sys::signal_table();
                }
            }
            // A number gives its name (an exit status above 128 counts as
            // the signal that ended it), a name its number.
            for w in names {
                let text = lossy(w);
                let found = match text.parse::<i64>() {
                    Ok(n) => {
                        let n = if n > 128 { n - 128 } else { n };
                        i32::try_from(n)
                            .ok()
                            .filter(|n| (0..=64).contains(n))
                            .and_then(sys::signal_name)
                            .map(str::to_string)
                    }
                    Err(_) => sys::signal_number(w)
                        .filter(|&n| (0..=64).contains(&n))
                        .map(|n| n.to_string()),
                };
                match found {
                    Some(f) => {
                        out.push_str(&f);
                        out.push('\n');
                    }
                    None => {
                        // What came before is written first, as bash's
                        // flushed output is.
                        emit(sh, "kill", out.as_bytes());
                        out.clear();
                        sh.error(&format!("kill: {text}: invalid signal specification"));
                        status = 1;
                    }
                }
            }
            let st = emit(sh, "kill", out.as_bytes());
            return Ok(status.max(st));
        }
        // One signal: `-s name`, `-n num`, `-sname`, `-nnum` or `-name`.
        let spec: Option<&[u8]> = if a == b"-s" || a == b"-n" {
            let Some(s) = argv.get(2) else {
                sh.error(&format!("kill: {}: option requires an argument", lossy(a)));
                return Ok(1);
            };
            i = 3;
            Some(s)
        } else if a.len() > 2
            && (a.starts_with(b"-s") && a[2].is_ascii_alphabetic()
                || a.starts_with(b"-n") && a[2].is_ascii_digit())
        {
            i = 2;
            Some(&a[2..])
        } else if a.len() > 1 && a[0] == b'-' && a != b"--" {
            i = 2;
            Some(&a[1..])
        } else {
            None
        };
        if let Some(spec) = spec {
            match sys::signal_number(spec) {
                Some(s) => sig = s,
                None => {
                    sh.error(&format!(
                        "kill: {}: invalid signal specification",
                        lossy(spec)
                    ));
                    return Ok(1);
                }
            }
        }
    }
    if argv.get(i).map(Vec::as_slice) == Some(b"--") {
        i += 1;
    }
    if i >= argv.len() {
        sh.usage("kill: usage: kill [-s sigspec | -n signum | -sigspec] pid | jobspec ... or kill -l [sigspec]");
        return Ok(2);
    }
    let mut status = 0;
    for a in &argv[i..] {
        // A word that is neither a number nor a job spec (bash words it
        // so; an empty one is "not a pid").
        if !a.is_empty()
            && !a.starts_with(b"%")
            && lossy(a.strip_prefix(b"-").unwrap_or(a))
                .parse::<i32>()
                .is_err()
        {
            sh.error(&format!(
                "kill: {}: arguments must be process or job IDs",
                lossy(a)
            ));
            status = 1;
            continue;
        }
        let Some(pids) = job_pids(sh, "kill", a, "not a pid or valid job spec") else {
            status = 1;
            continue;
        };
        let mut sent = false;
        for &p in &pids {
            match sys::kill(p, sig) {
                Ok(()) => sent = true,
                Err(e) => {
                    let msg = e.to_string();
                    sh.error(&format!(
                        "kill: ({p}) - {}",
                        msg.split(" (os error").next().unwrap_or_default()
                    ));
                    status = 1;
                }
            }
        }
        // A stopped job that is sent SIGTERM or SIGHUP is continued, so
        // that it gets the signal and ends (bash); one sent SIGCONT runs
        // again, as after `bg`.
        sh.reap_jobs();
        let job = a.strip_prefix(b"%").and_then(|spec| jobs::find(sh, spec));
        if let Some(j) = job
            && sent
            && sh.jobs[j].stopped.is_some()
        {
            if matches!(sig, libc::SIGTERM | libc::SIGHUP) {
                for &p in &pids {
                    let _ = sys::kill(p, libc::SIGCONT);
                }
            }
            if matches!(sig, libc::SIGTERM | libc::SIGHUP | libc::SIGCONT) {
                sh.jobs[j].stopped = None;
            }
        }
    }
    Ok(status)
}

/// The pids a `kill`/`wait` operand names (`%job` or a pid); reports a bad
/// one and returns `None`.
pub(super) fn job_pids(
    sh: &mut Shell,
    builtin: &str,
    a: &[u8],
    not_a_pid: &str,
) -> Option<Vec<i32>> {
    if let Some(spec) = a.strip_prefix(b"%") {
        let pids = jobs::find(sh, spec).map(|i| sh.jobs[i].pids.clone());
        if pids.is_none() {
            sh.error(&format!("{builtin}: {}: no such job", lossy(a)));
        }
        return pids;
    }
    match lossy(a).parse::<i32>() {
        Ok(p) => Some(vec![p]),
        Err(_) => {
            sh.error(&format!("{builtin}: `{}': {not_a_pid}", lossy(a)));
            None
        }
    }
}

/// Records finished background children in the job table.
pub fn reap(sh: &mut Shell) {
    sh.reap_jobs();
}

/// Records that `pid` ended with `raw`.
pub(super) fn job_done(sh: &mut Shell, pid: i32, raw: i32) {
    if sh.traps.contains_key(&libc::SIGCHLD) {
        sh.chld_reaped += 1;
    }
    for j in &mut sh.jobs {
        if j.pids.contains(&pid) {
            j.done.insert(pid, raw);
            if j.finished() {
                j.stopped = None;
                j.notified = false;
            }
        }
    }
    sh.coproc_done(pid);
}

/// Waits (blocking) for any child; `Err` carries the status of a trapped
/// signal that ended the wait.
pub(super) fn wait_one(sh: &mut Shell) -> Result<Option<i32>, Result<i32, Flow>> {
    // Under job control a job that stops ends the wait for it.
    match sys::wait_any(true, sh.opts.monitor) {
        Some(sys::Waited2::Done(pid, raw)) if libc::WIFSTOPPED(raw) => {
            if let Some(j) = sh.jobs.iter_mut().find(|j| j.pids.contains(&pid)) {
                j.stopped = Some(libc::WSTOPSIG(raw));
                j.notified = false;
            }
            Ok(Some(pid))
        }
        Some(sys::Waited2::Done(pid, raw)) => {
            job_done(sh, pid, raw);
            Ok(Some(pid))
        }
        Some(sys::Waited2::Interrupted) => {
            // A child's end runs the SIGCHLD trap and the wait goes on
            // (bash); any other trapped signal ends it.
            let child = sys::only_child_pending();
            let sig = pending_signal();
            if let Err(f) = sh.run_traps() {
                return Err(Err(f));
            }
            if child {
                return Ok(Some(0));
            }
            Err(Ok(128 + sig))
        }
        None => Ok(None),
    }
}

pub(super) fn wait(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let mut next = false;
    // `-p var`: the pid whose status is returned goes to var.
    let mut pid_var: Option<Vec<u8>> = None;
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        match a.as_slice() {
            b"-n" => next = true,
            // Waiting for termination is what wait does here anyway.
            b"-f" => {}
            b"-p" | b"-np" | b"-fp" | b"-nfp" | b"-fnp" => {
                next |= a.contains(&b'n');
                let Some(v) = argv.get(i + 1) else {
                    sh.error("wait: -p: option requires an argument");
                    sh.usage("wait: usage: wait [-fn] [-p var] [id ...]");
                    return Ok(2);
                };
                if !crate::shell::is_ref(sh, v) {
                    sh.error(&format!("wait: `{}': not a valid identifier", lossy(v)));
                    return Ok(2);
                }
                pid_var = Some(v.clone());
                i += 1;
            }
            b"-nf" | b"-fn" => next = true,
            b"--" => {
                i += 1;
                break;
            }
            a if a.len() > 1 && a[0] == b'-' && !a[1].is_ascii_digit() => {
                sh.error(&format!("wait: {}: invalid option", lossy(a)));
                return Ok(2);
            }
            _ => break,
        }
        i += 1;
    }
    let args = &argv[i..];
    if let Some(v) = &pid_var {
        let _ = sh.vars.unset(v);
    }
    // The pid whose status is returned, for `-p`.
    let mut returned_pid: Option<i32> = None;
    // The jobs named by the operands, for the table below.
    let mut named: Vec<usize> = Vec::new();
    // Jobs that stopped since the last look are known as stopped.
    sh.reap_jobs();
    // `wait -n id…`: only those jobs count.
    let mut among: Option<Vec<usize>> = None;
    if next && !args.is_empty() {
        let mut ids = Vec::new();
        for a in args {
            if let Some(pids) = job_pids(sh, "wait", a, "not a pid or valid job spec")
                && let Some(j) = sh
                    .jobs
                    .iter()
                    .find(|j| pids.iter().any(|p| j.pids.contains(p)))
            {
                ids.push(j.id);
            }
        }
        if ids.is_empty() {
            return Ok(127);
        }
        named.extend(&ids);
        among = Some(ids);
    }
    let status = if next {
        // The next job to finish.
        let counts = |j: &crate::job::Job| among.as_ref().is_none_or(|ids| ids.contains(&j.id));
        loop {
            if let Some(k) = sh
                .jobs
                .iter()
                .position(|j| j.finished() && !j.waited && counts(j))
            {
                sh.jobs[k].waited = true;
                returned_pid = sh.jobs[k].pids.last().copied();
                break sh.jobs[k].status().unwrap_or(0);
            }
            if sh.jobs.iter().filter(|j| counts(j)).all(|j| j.waited) {
                break 127;
            }
            match wait_one(sh) {
                Ok(Some(_)) => {}
                Ok(None) => {
                    sh.jobs.clear();
                    break 127;
                }
                Err(r) => return r,
            }
        }
    } else if args.is_empty() {
        // Every background job that runs (a stopped one would never end).
        while sh.jobs.iter().any(|j| !j.finished() && j.stopped.is_none()) {
            match wait_one(sh) {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(r) => return r,
            }
        }
        0
    } else {
        let mut status = 0;
        for a in args {
            let pids = if a.starts_with(b"%") || lossy(a).parse::<i32>().is_ok() {
                job_pids(sh, "wait", a, "not a pid or valid job spec")
            } else {
                sh.error(&format!(
                    "wait: `{}': not a pid or valid job spec",
                    lossy(a)
                ));
                status = 2;
                continue;
            };
            let Some(pids) = pids else {
                status = 127;
                continue;
            };
            for pid in pids {
                returned_pid = Some(pid);
                // A process substitution (`wait $!` after `>(…)`, bash 5.1).
                if let Some(k) = sh.procsub_pids.iter().position(|&p| p == pid) {
                    sh.procsub_pids.remove(k);
                    status = match sys::wait_pid(pid, false) {
                        Ok(sys::Waited::Done(raw)) => sys::status_of(raw),
                        _ => 127,
                    };
                    continue;
                }
                if let Some((_, raw)) = sh.procsub_last.filter(|&(p, _)| p == pid) {
                    status = sys::status_of(raw);
                    continue;
                }
                let Some(job) = sh.jobs.iter().find(|j| j.pids.contains(&pid)).cloned() else {
                    sh.error(&format!("wait: pid {pid} is not a child of this shell"));
                    status = 127;
                    continue;
                };
                named.push(job.id);
                if let Some(&raw) = job.done.get(&pid) {
                    status = sys::status_of(raw);
                    continue;
                }
                // A stopped job would never end: bash warns and gives
                // 128 + the signal that stopped it.
                if let Some(sig) = job.stopped {
                    sh.error(&format!("warning: wait_for_job: job {} is stopped", job.id));
                    status = 128 + sig;
                    break;
                }
                let waited = loop {
                    let w = if sh.opts.monitor {
                        sys::wait_pid_or_stop(pid, true)
                    } else {
                        sys::wait_pid(pid, true)
                    };
                    // Another child's end runs the SIGCHLD trap; the wait
                    // goes on (bash).
                    if matches!(w, Ok(sys::Waited::Interrupted)) && sys::only_child_pending() {
                        sh.run_traps()?;
                        continue;
                    }
                    break w;
                };
                match waited {
                    Ok(sys::Waited::Done(raw)) => {
                        status = sys::status_of(raw);
                        job_done(sh, pid, raw);
                    }
                    Ok(sys::Waited::Stopped(sig)) => {
                        if let Some(j) = sh.jobs.iter_mut().find(|j| j.pids.contains(&pid)) {
                            j.stopped = Some(sig);
                            j.notified = false;
                        }
                        status = 128 + sig;
                        break;
                    }
                    Ok(sys::Waited::Interrupted) => {
                        let sig = pending_signal();
                        sh.run_traps()?;
                        return Ok(128 + sig);
                    }
                    Err(_) => status = 127,
                }
            }
        }
        status
    };
    // Waited-for jobs leave the table (those named, or every finished one
    // for a bare `wait`: a job that ended unnamed keeps its status for
    // its own `wait`); an interactive shell still reports them (`jobs`,
    // the notice before the next prompt), as bash does.
    let waited_for =
        |j: &crate::job::Job| j.finished() && (args.is_empty() || named.contains(&j.id));
    if sh.opts.interactive && !sh.subshell {
        for j in &mut sh.jobs {
            j.waited |= waited_for(j);
        }
    } else {
        sh.jobs.retain(|j| !waited_for(j));
        // A job that ended during this wait, unnamed, keeps its status
        // for `wait pid`, but `wait -n` no longer counts it (bash has
        // taken it off its job table).
        for j in &mut sh.jobs {
            j.waited |= j.finished();
        }
    }
    if let (Some(v), Some(pid)) = (&pid_var, returned_pid) {
        sh.set_ref(v, pid.to_string().into_bytes())?;
    }
    sh.set_pipestatus(&[status]);
    Ok(status)
}

/// The signal behind an interrupted wait (for its 128+n status).
pub(super) fn pending_signal() -> i32 {
    sys::last_signal()
}
