//! Running lists, pipelines and compound commands, subshells, command
//! substitution, coprocesses and `select`.

use super::redirect::{Step, reads_stdin, step};
use super::{Coproc, Exec, Flow, Shell, cpu_times, io_text};
use crate::ast::{
    AndOr, CaseEnd, Command, Compound, Connector, List, ParamOp, Part, Pipeline, RedirOp,
    RedirTarget,
};
use crate::job::Job;
use crate::sys;
use rustc_hash::FxHashMap as HashMap;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;

impl Shell {
    pub fn run_list(&mut self, list: &List) -> Exec {
        let mut status = self.status;
        let n = list.items.len();
        let tail = self.tail_ok;
        for (i, item) in list.items.iter().enumerate() {
            self.tail_ok = tail && i + 1 == n && !item.background;
            if item.background {
                status = self.run_background(&item.and_or)?;
            } else {
                status = self.run_and_or(&item.and_or)?;
            }
            self.status = status;
            self.run_traps()?;
        }
        Ok(status)
    }

    pub(super) fn run_and_or(&mut self, ao: &AndOr) -> Exec {
        let tail = self.tail_ok;
        let has_rest = !ao.rest.is_empty();
        if has_rest {
            self.errexit_off += 1;
        }
        self.tail_ok = tail && !has_rest;
        self.compound_redirect_failed = false;
        let first = self.run_pipeline(&ao.first);
        if has_rest {
            self.errexit_off -= 1;
        }
        let mut status = first?;
        self.status = status;
        let mut last_ran_bang = ao.first.bang;
        let mut last_ran_final = !has_rest;
        let mut last_ran = &ao.first;
        for (i, (conn, p)) in ao.rest.iter().enumerate() {
            let is_last = i + 1 == ao.rest.len();
            let run = match conn {
                Connector::And => status == 0,
                Connector::Or => status != 0,
            };
            if !run {
                last_ran_final = false;
                continue;
            }
            if !is_last {
                self.errexit_off += 1;
            }
            self.tail_ok = tail && is_last;
            self.compound_redirect_failed = false;
            let r = self.run_pipeline(p);
            if !is_last {
                self.errexit_off -= 1;
            }
            status = r?;
            self.status = status;
            last_ran_bang = p.bang;
            last_ran_final = is_last;
            last_ran = p;
        }
        self.tail_ok = false;
        // A compound command the shell runs itself fails because a command
        // in it failed, which the ERR trap and `set -e` already saw (or
        // were off for): not again (bash). Its own failed redirection
        // counts.
        if status != 0
            && last_ran_final
            && !last_ran_bang
            && (self.compound_redirect_failed || !runs_in_shell(last_ran))
        {
            self.check_errexit(status)?;
        }
        Ok(status)
    }

    /// `set -e`: a failed command outside a condition ends the shell.
    pub fn check_errexit(&mut self, status: i32) -> Result<(), Flow> {
        if self.errexit_off > 0 || status == 0 {
            return Ok(());
        }
        // bash's ERR trap runs where errexit would act.
        if !self.running_traps.contains(&sys::ERR_TRAP)
            && let Some(action) = self.traps.get(&sys::ERR_TRAP).cloned()
            && !action.is_empty()
        {
            self.status = status;
            self.run_trap_action(sys::ERR_TRAP, &action)?;
        }
        if self.opts.errexit {
            return Err(Flow::Exit(status));
        }
        Ok(())
    }

    pub(super) fn run_background(&mut self, ao: &AndOr) -> Exec {
        // Under job control, a background job is a process group of its
        // own, without the terminal.
        let group = self
            .job_control()
            .then_some(sys::Pgrp { pgid: 0, tty: None });
        match sys::fork() {
            Ok(sys::Forked::Child) => {
                if let Some(g) = group {
                    g.join_from_child();
                }
                self.become_subshell();
                // Without job control, a background command ignores SIGINT
                // and SIGQUIT, and reads /dev/null unless a command around
                // it redirected standard input.
                if !self.opts.monitor {
                    let _ = sys::set_disposition(libc::SIGINT, sys::Disposition::Ignore);
                    let _ = sys::set_disposition(libc::SIGQUIT, sys::Disposition::Ignore);
                    if self.stdin_redirected == 0
                        && let Ok(null) = std::fs::File::open("/dev/null")
                    {
                        let _ = sys::dup2(null.as_raw_fd(), 0);
                    }
                }
                // The child ends after this command: it may exec it.
                self.tail_ok = true;
                // An async simple command's failure is the job's status,
                // not an error in the child: no ERR trap, no errexit
                // (bash). Inside a group they still apply.
                if ao.rest.is_empty()
                    && matches!(ao.first.commands.as_slice(), [Command::Simple(_)])
                {
                    self.errexit_off += 1;
                }
                let r = self.run_and_or(ao);
                self.exit_subshell(r)
            }
            Ok(sys::Forked::Parent(pid)) => {
                if let Some(g) = group {
                    g.join_from_parent(pid);
                }
                let text = String::from_utf8_lossy(&crate::unparse::and_or(ao)).into_owned();
                self.add_background_job(pid, text);
                self.set_pipestatus(&[0]);
                Ok(0)
            }
            Err(e) => {
                self.error(&format!("fork: {e}"));
                Ok(1)
            }
        }
    }

    /// State changes on entering a forked subshell.
    pub fn become_subshell(&mut self) {
        self.subshell = true;
        self.subshell_level += 1;
        // A subshell's RANDOM goes its own way (bash reseeds it).
        self.random_state
            .set(std::process::id() ^ self.random_state.get().rotate_left(7));
        self.tail_ok = false;
        // The parent's jobs stay listed (`jobs | wc -l`), though this
        // process cannot wait for them.
        // Traps are reset in a subshell, except ignored signals, and ERR
        // with `set -E`, DEBUG and RETURN with `set -T`.
        let traps = std::mem::take(&mut self.traps);
        for (sig, action) in traps {
            let inherited = match sig {
                sys::ERR_TRAP => self.opts.errtrace,
                sys::DEBUG_TRAP | sys::RETURN_TRAP => self.functrace(),
                _ => false,
            };
            if action.is_empty() || inherited {
                self.traps.insert(sig, action);
            } else if sig != 0 {
                sys::to_default(sig);
            }
        }
        // An interactive shell's own handling of SIGINT and SIGHUP, and the
        // signals it ignores for itself, are not the child's: a Ctrl-C that
        // comes before the child execs must end it, as it would the
        // program.
        if self.opts.interactive {
            for sig in [libc::SIGINT, libc::SIGHUP] {
                if !self.traps.contains_key(&sig) {
                    sys::uncatch(sig);
                }
            }
        }
        sys::restore_shell_signals();
        self.exited = false;
    }

    /// Ends a forked subshell with the result of what it ran.
    pub fn exit_subshell(&mut self, r: Exec) -> ! {
        let status = match r {
            Ok(s) => s,
            Err(Flow::Exit(s)) | Err(Flow::Return(s)) => s,
            Err(Flow::Interrupt) => 130,
            Err(Flow::Abort(s)) => s,
            Err(Flow::Break(_) | Flow::Continue(_)) => self.status,
        };
        let status = self.finish(status);
        if let Some(p) = self.perf.as_mut() {
            p.report();
        }
        sys::exit_now(status)
    }

    pub(super) fn run_pipeline(&mut self, p: &Pipeline) -> Exec {
        let start = p.timed.then(|| (std::time::Instant::now(), cpu_times()));
        if p.timed {
            // The shell must outlive the command to report its time.
            self.tail_ok = false;
        }
        if p.bang {
            self.errexit_off += 1;
        }
        let job = self.begin_job();
        let r = if p.commands.len() == 1 {
            if p.bang {
                self.tail_ok = false;
            }
            let r = self.run_command(&p.commands[0]);
            // A compound command's own status does not go into
            // PIPESTATUS, only that of the commands it ran (bash: a
            // `case` that matched nothing leaves it as it was).
            if let Ok(s) = r
                && !runs_in_shell(p)
            {
                self.set_pipestatus(&[s]);
            }
            r
        } else {
            self.tail_ok = false;
            self.run_multi(p)
        };
        if let Some(outer) = job {
            self.end_job(outer, &|| crate::unparse::pipeline(p));
        }
        if p.bang {
            self.errexit_off -= 1;
        }
        let mut status = r?;
        if p.bang {
            status = i32::from(status == 0);
        }
        if let Some((t, before)) = start {
            let real = t.elapsed().as_micros() as u64;
            let after = cpu_times();
            let micros = |s: f64| (s.max(0.0) * 1e6).round() as u64;
            let (user, sys) = (micros(after.0 - before.0), micros(after.1 - before.1));
            // TIMEFORMAT, as bash reads it: unset, the default; empty, no
            // report at all.
            let fmt = match self.vars.get(b"TIMEFORMAT") {
                _ if p.posix_time => POSIX_TIMEFORMAT.to_vec(),
                Some(f) => f.to_vec(),
                None => DEFAULT_TIMEFORMAT.to_vec(),
            };
            if !fmt.is_empty() {
                match time_report(&fmt, real, user, sys) {
                    Ok(mut out) => {
                        out.push(b'\n');
                        self.err_out(&out);
                    }
                    Err(c) => self.error(&format!(
                        "TIMEFORMAT: `{}': invalid format character",
                        char::from(c)
                    )),
                }
            }
        }
        Ok(status)
    }

    /// `select var in items`: the menu (on stderr), PS3, a line read as
    /// `read` reads it into REPLY; `var` gets the item its number names
    /// (empty if none), then the body runs. An empty line shows the menu
    /// again. It ends at `break`, or at the end of input (status 1).
    pub(super) fn run_select(&mut self, var: &[u8], items: &[Vec<u8>], body: &List) -> Exec {
        // Nothing to choose from: bash does nothing, successfully.
        if items.is_empty() {
            return Ok(0);
        }
        let columns = self
            .vars
            .get(b"COLUMNS")
            .and_then(|c| std::str::from_utf8(c).ok()?.trim().parse().ok())
            .filter(|&c: &usize| c > 0)
            .unwrap_or(80);
        let mut status = 0;
        let mut menu = true;
        self.loop_depth += 1;
        let r = (|| {
            loop {
                if menu {
                    self.err_out(&select_menu(items, columns));
                    menu = false;
                }
                let ps3 = self.vars.get(b"PS3").unwrap_or(b"#? ").to_vec();
                self.err_out(&ps3);
                if crate::builtins::read::read(self, &[b"read".to_vec()])? != 0 {
                    let _ = self.out(b"\n");
                    return Ok(1);
                }
                let reply = self.vars.get(b"REPLY").unwrap_or_default().to_vec();
                if reply.is_empty() {
                    menu = true;
                    continue;
                }
                let chosen = std::str::from_utf8(&reply)
                    .ok()
                    .and_then(|r| r.trim().parse::<usize>().ok())
                    .and_then(|n| n.checked_sub(1))
                    .and_then(|i| items.get(i))
                    .cloned()
                    .unwrap_or_default();
                if let Err(e) = self.vars.set(var, chosen) {
                    self.error(&e.to_string());
                    return Ok(1);
                }
                match step(self.run_list(body)) {
                    Step::Done(s) => status = s,
                    Step::Break => return Ok(status),
                    Step::Continue => status = 0,
                    Step::Leave(f) => return Err(f),
                }
            }
        })();
        self.loop_depth -= 1;
        r
    }

    pub(super) fn run_multi(&mut self, p: &Pipeline) -> Exec {
        let n = p.commands.len();
        let mut pids = Vec::with_capacity(n);
        let mut prev_read: Option<OwnedFd> = None;
        // `shopt -s lastpipe`: the last command runs in this shell.
        let lastpipe = !self.opts.monitor && self.shopts.on("lastpipe");
        let mut last_status = None;
        for (i, cmd) in p.commands.iter().enumerate() {
            let last = i + 1 == n;
            if last && lastpipe {
                let saved = sys::save_fd(0).ok().flatten();
                if let Some(r) = prev_read.take() {
                    let _ = sys::dup2(r.as_raw_fd(), 0);
                }
                let r = self.run_command(cmd);
                match saved {
                    Some(c) => {
                        let _ = sys::dup2(c, 0);
                        sys::close(c);
                    }
                    None => sys::close(0),
                }
                match r {
                    Ok(s) => last_status = Some(s),
                    Err(f) => {
                        // Reap the others before leaving.
                        for pid in pids {
                            let _ = sys::wait_pid(pid, false);
                        }
                        return Err(f);
                    }
                }
                break;
            }
            let (next_read, write) = if last {
                (None, None)
            } else {
                match sys::pipe() {
                    Ok((r, w)) => (Some(r), Some(w)),
                    Err(e) => {
                        self.error(&format!("pipe: {e}"));
                        return Ok(1);
                    }
                }
            };
            // bash runs the DEBUG trap for each element before it forks;
            // the child does not run it again for the same command.
            if let Command::Simple(s) = cmd {
                self.at_line(s.line);
                self.run_debug_trap(|| crate::unparse::simple(s))?;
            }
            let group = self.job_pgrp();
            match sys::fork() {
                Ok(sys::Forked::Child) => {
                    if let Some(g) = group {
                        g.join_from_child();
                    }
                    self.become_subshell();
                    // bash counts no BASH_SUBSHELL level for an element of
                    // a pipeline.
                    self.subshell_level -= 1;
                    self.debug_done = matches!(cmd, Command::Simple(_));
                    if let Some(r) = &prev_read {
                        let _ = sys::dup2(r.as_raw_fd(), 0);
                    }
                    if let Some(w) = &write {
                        let _ = sys::dup2(w.as_raw_fd(), 1);
                        if p.stderr_too.get(i).copied().unwrap_or(false) {
                            let _ = sys::dup2(w.as_raw_fd(), 2);
                        }
                    }
                    drop(prev_read);
                    drop(write);
                    drop(next_read);
                    // The child ends after this command: it may exec it.
                    self.tail_ok = true;
                    let r = self.run_command(cmd);
                    self.exit_subshell(r)
                }
                Ok(sys::Forked::Parent(pid)) => {
                    self.job_joined(pid);
                    pids.push(pid);
                }
                Err(e) => {
                    self.error(&format!("fork: {e}"));
                    break;
                }
            }
            prev_read = next_read;
            drop(write);
        }
        drop(prev_read);
        let mut statuses = Vec::with_capacity(pids.len() + 1);
        for pid in pids {
            statuses.push(self.wait_child(pid));
        }
        statuses.extend(last_status);
        let status = if self.opts.pipefail {
            statuses
                .iter()
                .rev()
                .find(|&&s| s != 0)
                .copied()
                .unwrap_or(0)
        } else {
            statuses.last().copied().unwrap_or(0)
        };
        self.set_pipestatus(&statuses);
        Ok(status)
    }

    pub fn run_command(&mut self, cmd: &Command) -> Exec {
        let procsubs = self.procsub_fds.len();
        let r = self.run_command_inner(cmd);
        if self.procsub_fds.len() > procsubs {
            // The command is done with its `<(…)` and `>(…)`: closing our
            // ends lets a writer see EPIPE and a reader see EOF.
            self.procsub_fds.truncate(procsubs);
            let mut last = self.procsub_last;
            self.procsub_pids.retain(|&pid| match sys::try_reap(pid) {
                None => true,
                Some(raw) => {
                    last = raw.map(|r| (pid, r)).or(last);
                    false
                }
            });
            self.procsub_last = last;
        }
        r
    }

    /// `<(list)` (`read`) or `>(list)`: runs the list in a child on one end
    /// of a pipe and returns the `/dev/fd/N` path of the other, which stays
    /// open (and is inherited) until the command that named it ends.
    pub fn process_substitution(&mut self, read: bool, list: &List) -> Result<Vec<u8>, Flow> {
        let (r, w) = match sys::pipe() {
            Ok(p) => p,
            Err(e) => {
                self.error(&format!("pipe: {e}"));
                return Err(Flow::Exit(1));
            }
        };
        match sys::fork() {
            Ok(sys::Forked::Child) => {
                self.become_subshell();
                let _ = sys::dup2(
                    if read { w.as_raw_fd() } else { r.as_raw_fd() },
                    i32::from(read),
                );
                drop(r);
                drop(w);
                self.tail_ok = true;
                self.xtrace_level += 1;
                let res = self.run_list(list);
                self.exit_subshell(res)
            }
            Ok(sys::Forked::Parent(pid)) => {
                let ours = if read { r } else { w };
                let fd = match sys::move_inheritable(ours, 63) {
                    Ok(fd) => fd,
                    Err(e) => {
                        self.error(&format!("process substitution: {e}"));
                        return Err(Flow::Exit(1));
                    }
                };
                let path = format!("/dev/fd/{}", fd.as_raw_fd()).into_bytes();
                self.procsub_fds.push(fd);
                self.procsub_pids.push(pid);
                self.last_bg = Some(pid);
                Ok(path)
            }
            Err(e) => {
                self.error(&format!("fork: {e}"));
                Err(Flow::Exit(1))
            }
        }
    }

    pub(super) fn run_command_inner(&mut self, cmd: &Command) -> Exec {
        match cmd {
            Command::Simple(s) => self.run_simple(s),
            Command::Compound(c, redirects) => {
                self.tail_ok = false;
                if redirects.is_empty() {
                    return self.run_compound(c);
                }
                let saved = match self.redirect(redirects) {
                    Ok(s) => s,
                    Err(status) => {
                        if let Some(f) = self.redirect_flow.take() {
                            return Err(f);
                        }
                        // The compound's own failure: `set -e` and the ERR
                        // trap apply to it (see `run_and_or`).
                        self.compound_redirect_failed = true;
                        return Ok(status);
                    }
                };
                let stdin = reads_stdin(redirects);
                self.stdin_redirected += u32::from(stdin);
                let r = self.run_compound(c);
                self.stdin_redirected -= u32::from(stdin);
                self.restore(saved);
                r
            }
            Command::Function(f) => {
                self.tail_ok = false;
                // In POSIX mode a function's name must be a name, and not
                // a special builtin's; a script ends on either (bash).
                if self.opts.posix {
                    let msg = if !crate::parse::is_name(&f.name) {
                        Some("not a valid identifier")
                    } else if crate::builtins::is_special(&f.name, true) {
                        Some("is a special builtin")
                    } else {
                        None
                    };
                    if let Some(m) = msg {
                        self.line = f.end_line;
                        self.error(&format!("`{}': {m}", String::from_utf8_lossy(&f.name)));
                        return if self.opts.interactive {
                            Err(Flow::Abort(2))
                        } else {
                            Err(Flow::Exit(2))
                        };
                    }
                }
                if self.readonly_functions.contains(&f.name) {
                    self.line = f.end_line;
                    self.error(&format!(
                        "{}: readonly function",
                        String::from_utf8_lossy(&f.name)
                    ));
                    return Ok(1);
                }
                let file = self.current_file();
                self.function_files.insert(f.name.clone(), file);
                self.functions.insert(f.name.clone(), f.clone());
                if self.vars.is_exported_function(&f.name) {
                    self.export_function(&f.name, true);
                }
                Ok(0)
            }
        }
    }

    pub(super) fn run_compound(&mut self, c: &Compound) -> Exec {
        match c {
            Compound::Brace(list) => self.run_list(list),
            Compound::Subshell(list) => self.run_subshell(list),
            Compound::If { arms, otherwise } => {
                for (cond, body) in arms {
                    self.errexit_off += 1;
                    let r = self.run_list(cond);
                    self.errexit_off -= 1;
                    if r? == 0 {
                        return self.run_list(body);
                    }
                }
                match otherwise {
                    Some(body) => self.run_list(body),
                    None => Ok(0),
                }
            }
            Compound::Loop { until, cond, body } => self.run_loop(*until, cond, body),
            Compound::For {
                var,
                words,
                body,
                line,
                select,
            } => {
                self.at_line(*line);
                // A name that is no identifier fails the loop when it runs
                // (bash), and ends a POSIX-mode script.
                if !crate::parse::is_name(var) {
                    self.error(&format!(
                        "`{}': not a valid identifier",
                        String::from_utf8_lossy(var)
                    ));
                    if self.opts.posix && !self.opts.interactive {
                        return Err(Flow::Exit(2));
                    }
                    return Ok(1);
                }
                let items = match words {
                    Some(ws) => self.expand_words(ws)?,
                    None => self.positional.clone(),
                };
                if *select {
                    if self.opts.xtrace
                        && let Some(ws) = words
                    {
                        self.trace_head(b"select", var, ws);
                    }
                    return self.run_select(var, &items, body);
                }
                let mut status = 0;
                self.loop_depth += 1;
                let r = (|| {
                    for item in items {
                        // bash runs the DEBUG trap for the `for` line before
                        // each round.
                        self.at_line(*line);
                        self.run_debug_trap(|| crate::unparse::compound(c))?;
                        if self.opts.xtrace
                            && let Some(ws) = words
                        {
                            self.trace_head(b"for", var, ws);
                        }
                        if let Err(e) = self.vars.set(var, item) {
                            self.error(&e.to_string());
                            return Ok(1);
                        }
                        match step(self.run_list(body)) {
                            Step::Done(s) => status = s,
                            Step::Break => break,
                            Step::Continue => status = 0,
                            Step::Leave(f) => return Err(f),
                        }
                    }
                    Ok(status)
                })();
                self.loop_depth -= 1;
                r
            }
            Compound::Case { word, arms, line } => {
                self.at_line(*line);
                self.run_debug_trap(|| crate::unparse::compound(c))?;
                if self.opts.xtrace {
                    // bash shows the word as written.
                    let mut text = b"case ".to_vec();
                    text.extend_from_slice(&crate::unparse::word(word));
                    text.extend_from_slice(b" in");
                    self.trace_line(&text);
                }
                let subject = self.expand_string(word)?;
                let mut status = 0;
                let mut i = 0;
                let mut fall = false;
                while i < arms.len() {
                    let arm = &arms[i];
                    let mut hit = fall;
                    if !hit {
                        for p in &arm.patterns {
                            let pat = self.expand_match_pattern(p)?;
                            if pat.matches(&subject) {
                                hit = true;
                                break;
                            }
                        }
                    }
                    if hit {
                        status = self.run_list(&arm.body)?;
                        match arm.end {
                            CaseEnd::Break => return Ok(status),
                            CaseEnd::FallThrough => fall = true,
                            CaseEnd::Continue => fall = false,
                        }
                    }
                    i += 1;
                }
                Ok(status)
            }
            Compound::ArithFor {
                init,
                cond,
                step: step_word,
                body,
                line,
            } => {
                // bash runs the DEBUG trap before each of the three parts.
                let debug = |sh: &mut Self| {
                    sh.at_line(*line);
                    sh.run_debug_trap(|| crate::unparse::compound(c))
                };
                debug(self)?;
                let t = self.expand_arith_text(init)?;
                self.trace_arith(&t);
                if self.arith_command("((", &t)?.is_none() {
                    return Ok(1);
                }
                let mut status = 0;
                self.loop_depth += 1;
                let r = (|| loop {
                    debug(self)?;
                    let c = self.expand_arith_text(cond)?;
                    self.trace_arith(&c);
                    match self.arith_command("((", &c)? {
                        None => return Ok(1),
                        Some(0) => return Ok(status),
                        Some(_) => {}
                    }
                    match step(self.run_list(body)) {
                        Step::Done(s) => status = s,
                        Step::Break => return Ok(status),
                        Step::Continue => {}
                        Step::Leave(f) => return Err(f),
                    }
                    debug(self)?;
                    let t = self.expand_arith_text(step_word)?;
                    self.trace_arith(&t);
                    if self.arith_command("((", &t)?.is_none() {
                        return Ok(1);
                    }
                })();
                self.loop_depth -= 1;
                r
            }
            Compound::Arith { expr, line } => {
                self.at_line(*line);
                self.run_debug_trap(|| crate::unparse::compound(c))?;
                let text = self.expand_arith_text(expr)?;
                if self.opts.xtrace {
                    self.trace_arith(&text);
                }
                Ok(match self.arith_command("((", &text)? {
                    Some(v) => i32::from(v == 0),
                    None => 1,
                })
            }
            Compound::Coproc { name, cmd } => self.run_coproc(name, cmd),
            Compound::DoubleBracket { words, line } => {
                self.at_line(*line);
                self.run_debug_trap(|| crate::unparse::compound(c))?;
                crate::test::double_bracket(self, words)
            }
        }
    }

    pub(super) fn run_loop(&mut self, until: bool, cond: &List, body: &List) -> Exec {
        let mut status = 0;
        self.loop_depth += 1;
        let r = (|| loop {
            self.errexit_off += 1;
            let c = self.run_list(cond);
            self.errexit_off -= 1;
            match step(c) {
                Step::Done(c) if (c == 0) == until => return Ok(status),
                Step::Done(_) => {}
                Step::Break => return Ok(status),
                Step::Continue => continue,
                Step::Leave(f) => return Err(f),
            }
            match step(self.run_list(body)) {
                Step::Done(s) => status = s,
                Step::Break => return Ok(status),
                Step::Continue => {}
                Step::Leave(f) => return Err(f),
            }
        })();
        self.loop_depth -= 1;
        r
    }

    /// `coproc NAME cmd`: `cmd` in the background, its input from a pipe
    /// whose write end is `NAME[1]`, its output to one whose read end is
    /// `NAME[0]` (close-on-exec, at 63 and 60, as bash puts them);
    /// `NAME_PID` and `$!` are its pid. When it is reaped, NAME and
    /// NAME_PID are unset and the ends closed ([`Shell::coproc_done`]).
    pub(super) fn run_coproc(&mut self, name: &[u8], cmd: &Command) -> Exec {
        let pipes = sys::pipe().and_then(|to| Ok((to, sys::pipe()?)));
        let ((to_read, to_write), (from_read, from_write)) = match pipes {
            Ok(p) => p,
            Err(e) => {
                self.error(&format!("coproc: pipe: {e}"));
                return Ok(1);
            }
        };
        match sys::fork() {
            Ok(sys::Forked::Child) => {
                self.become_subshell();
                let _ = sys::dup2(to_read.as_raw_fd(), 0);
                let _ = sys::dup2(from_write.as_raw_fd(), 1);
                drop((to_read, to_write, from_read, from_write));
                // The shell's other coprocesses' ends are not this one's.
                for c in std::mem::take(&mut self.coprocs) {
                    close_coproc_ends(&c);
                }
                let r = self.run_command(cmd);
                self.exit_subshell(r)
            }
            Ok(sys::Forked::Parent(pid)) => {
                drop((to_read, from_write));
                // Where bash puts them: the read end at 63, the write end
                // at 60 (or the highest free below).
                let ends = (
                    sys::move_high_cloexec(from_read, 63),
                    sys::move_high_cloexec(to_write, 60),
                );
                let (read_end, write_end) = match ends {
                    (Ok(r), Ok(w)) => (r, w),
                    (Err(e), _) | (_, Err(e)) => {
                        self.error(&format!("coproc: {e}"));
                        return Ok(1);
                    }
                };
                let fds = [read_end.as_raw_fd(), write_end.as_raw_fd()];
                let value = crate::vars::Value::Indexed(
                    fds.iter()
                        .enumerate()
                        .map(|(k, fd)| (k as i64, fd.to_string().into_bytes()))
                        .collect(),
                );
                let pid_var = [name, b"_PID"].concat();
                if let Err(e) = self
                    .vars
                    .set_value(name, value)
                    .and_then(|()| self.vars.set(&pid_var, pid.to_string().into_bytes()))
                {
                    self.error(&e.to_string());
                }
                let keep = |fd: OwnedFd| {
                    let id = file_id(fd.as_raw_fd()).unwrap_or_default();
                    (std::os::fd::IntoRawFd::into_raw_fd(fd), id)
                };
                self.coprocs.push(Coproc {
                    pid,
                    name: name.to_vec(),
                    fds: [keep(read_end), keep(write_end)],
                });
                let text = format!("coproc {}", String::from_utf8_lossy(name));
                self.add_background_job(pid, text);
                Ok(0)
            }
            Err(e) => {
                self.error(&format!("fork: {e}"));
                Ok(1)
            }
        }
    }

    /// `pid`, started in the background: `$!`, and a job to wait for.
    pub(super) fn add_background_job(&mut self, pid: i32, command: String) {
        self.last_bg = Some(pid);
        let id = self.next_job_id();
        let pgid = if self.job_control() { pid } else { 0 };
        self.jobs.push(Job {
            id,
            pids: vec![pid],
            done: HashMap::default(),
            command,
            pgid,
            stopped: None,
            foreground: false,
            notified: true,
            waited: false,
        });
        // An interactive shell says which job and process it started.
        if self.opts.interactive && !self.subshell {
            self.err_out(format!("[{id}] {pid}\n").as_bytes());
        }
    }

    /// A redirection closed or moved `fd`: if it was a coprocess's end,
    /// its element of NAME becomes -1 (bash).
    pub(super) fn coproc_end_closed(&mut self, fd: RawFd) {
        if self.coprocs.is_empty() {
            return;
        }
        let mut hit = None;
        for c in &self.coprocs {
            if let Some(i) = c.fds.iter().position(|(f, _)| *f == fd) {
                hit = Some((c.name.clone(), i));
            }
        }
        if let Some((name, i)) = hit {
            let _ = self
                .vars
                .set_elem(&name, crate::vars::Key::Index(i as i64), b"-1".to_vec());
        }
    }

    /// A coprocess was reaped: its variables go, and its ends are closed
    /// (unless the user moved them).
    pub(super) fn coproc_done(&mut self, pid: i32) {
        if let Some(k) = self.coprocs.iter().position(|c| c.pid == pid) {
            let c = self.coprocs.remove(k);
            close_coproc_ends(&c);
            let _ = self.vars.unset(&c.name);
            let _ = self.vars.unset(&[c.name.as_slice(), b"_PID"].concat());
        }
    }

    pub(super) fn run_subshell(&mut self, list: &List) -> Exec {
        let group = self.job_pgrp();
        match sys::fork() {
            Ok(sys::Forked::Child) => {
                if let Some(g) = group {
                    g.join_from_child();
                }
                self.become_subshell();
                self.tail_ok = true;
                self.exit_builtin = false;
                let r = self.run_list(list);
                // bash: when the subshell's whole body is one `!` pipeline,
                // the `!` applies to the status of an error that abandoned
                // it too (`( ! echo $((1/0)) )` exits 0), though not to
                // `exit`'s or a failed `exec`'s (`execute_in_subshell`'s
                // `invert`).
                let r = match r {
                    Err(Flow::Abort(_) | Flow::Exit(_))
                        if !self.exit_builtin && is_one_inverted_pipeline(list) =>
                    {
                        Ok(0)
                    }
                    r => r,
                };
                self.exit_subshell(r)
            }
            Ok(sys::Forked::Parent(pid)) => {
                self.job_joined(pid);
                Ok(self.wait_child(pid))
            }
            Err(e) => {
                self.error(&format!("fork: {e}"));
                Ok(1)
            }
        }
    }

    /// `$(…)`: runs `list` with its output captured; trailing newlines go.
    pub fn command_sub(&mut self, list: &List) -> Result<Vec<u8>, Flow> {
        let mut out = Vec::new();
        if let Some(status) = self.command_sub_in_process(list, &mut out)? {
            self.cmdsub_status = Some(status);
            self.status = status;
        } else {
            let (r, w) = match sys::pipe() {
                Ok(p) => p,
                Err(e) => {
                    self.error(&format!("pipe: {e}"));
                    return Ok(Vec::new());
                }
            };
            match sys::fork() {
                Ok(sys::Forked::Child) => {
                    drop(r);
                    self.become_subshell();
                    // bash: a command substitution does not inherit `set -e`,
                    // unless `shopt -s inherit_errexit` or POSIX mode.
                    if !self.opts.posix && !self.shopts.on("inherit_errexit") {
                        self.opts.errexit = false;
                    }
                    let _ = sys::dup2(w.as_raw_fd(), 1);
                    drop(w);
                    self.tail_ok = true;
                    self.xtrace_level += 1;
                    // bash reads the text again when it runs it, from the
                    // line of the command it is in (its line as bash
                    // counts it: where the token after the first word ends).
                    if let Some(first) = first_line(list) {
                        let shift = i64::from(self.line) - i64::from(first);
                        self.line_shift = i32::try_from(shift).unwrap_or(0);
                    }
                    let res = self.run_list(list);
                    self.exit_subshell(res)
                }
                Ok(sys::Forked::Parent(pid)) => {
                    drop(w);
                    let _ = sys::read_to_end(&r, &mut out);
                    drop(r);
                    let status = match sys::wait_pid(pid, false) {
                        Ok(sys::Waited::Done(raw)) => sys::status_of(raw),
                        _ => 127,
                    };
                    self.cmdsub_status = Some(status);
                    self.status = status;
                }
                Err(e) => {
                    self.error(&format!("fork: {e}"));
                    return Ok(Vec::new());
                }
            }
        }
        while out.last() == Some(&b'\n') {
            out.pop();
        }
        Ok(out)
    }

    /// Runs a command substitution without forking when it is one simple
    /// command naming a builtin that only prints (`pwd`, `echo`, `printf`
    /// without -v). Returns its status, or `None` if it needs a subshell.
    pub(super) fn command_sub_in_process(
        &mut self,
        list: &List,
        out: &mut Vec<u8>,
    ) -> Result<Option<i32>, Flow> {
        let [item] = list.items.as_slice() else {
            return Ok(None);
        };
        if item.background || !item.and_or.rest.is_empty() {
            return Ok(None);
        }
        let p = &item.and_or.first;
        let [Command::Simple(s)] = p.commands.as_slice() else {
            return Ok(None);
        };
        // `$(< file)`: the file's contents, read by the shell (bash).
        if let (false, true, true, [r]) = (
            p.bang,
            s.assigns.is_empty(),
            s.words.is_empty(),
            s.redirects.as_slice(),
        ) && r.op == RedirOp::In
            && r.fd.unwrap_or(0) == 0
            && r.var.is_none()
            && let RedirTarget::Word(w) = &r.target
        {
            self.subshell_level += 1;
            let target = self.expand_redirect_target(w);
            self.subshell_level -= 1;
            let path = match target {
                Ok(path) => path,
                Err(msg) => {
                    if let Some(m) = msg {
                        self.error(&m);
                    }
                    return Ok(Some(1));
                }
            };
            return Ok(Some(
                match std::fs::read(std::ffi::OsStr::from_bytes(&path)) {
                    Ok(bytes) => {
                        out.extend_from_slice(&bytes);
                        0
                    }
                    Err(e) => {
                        self.error(&format!(
                            "{}: {}",
                            String::from_utf8_lossy(&path),
                            io_text(&e)
                        ));
                        1
                    }
                },
            ));
        }
        if p.bang || !s.assigns.is_empty() || !s.redirects.is_empty() || s.words.is_empty() {
            return Ok(None);
        }
        let Some(name) = s.words[0].as_plain() else {
            return Ok(None);
        };
        if !matches!(
            name,
            b"pwd" | b"echo" | b"printf" | b"true" | b"false" | b":"
        ) || self.functions.contains_key(name)
            || !crate::builtins::is_builtin(self, name)
            || self.opts.xtrace
        {
            return Ok(None);
        }
        // Arguments must expand without side effects of their own.
        if s.words[1..]
            .iter()
            .any(|w| !w.parts.iter().all(is_pure_part))
        {
            return Ok(None);
        }
        // The words expand as they would in the forked subshell.
        self.subshell_level += 1;
        let args = self.expand_words(&s.words);
        self.subshell_level -= 1;
        let args = args?;
        if args.first().map(Vec::as_slice) == Some(b"printf".as_slice())
            && args.get(1).is_some_and(|a| a.starts_with(b"-v"))
        {
            return Ok(None);
        }
        let old = self.capture.replace(Vec::new());
        let r = crate::builtins::run_builtin(self, &args);
        let captured = std::mem::replace(&mut self.capture, old).unwrap_or_default();
        out.extend_from_slice(&captured);
        match r {
            Some(Ok(s)) => Ok(Some(s)),
            Some(Err(Flow::Exit(s))) => Ok(Some(s)),
            Some(Err(_)) => Ok(Some(1)),
            None => Ok(None),
        }
    }

    /// Enters the command at `line` of its text (for messages and LINENO).
    pub(super) fn at_line(&mut self, line: u32) {
        self.line = line.saturating_add_signed(self.line_shift);
    }

    /// Arithmetic for a command (`((`, `for ((`, `[[`, `let`): an error
    /// names the command and is that command's failure (`None`), not the
    /// end of the line (bash).
    pub(super) fn arith_command(
        &mut self,
        cmd: &'static str,
        text: &[u8],
    ) -> Result<Option<i64>, Flow> {
        let outer = self.arith_cmd.replace(cmd);
        self.subscript_failed = false;
        let r = self.arith(text);
        self.arith_cmd = outer;
        match r {
            Ok(v) => Ok(Some(v)),
            // An error in a subscript abandons more than the command.
            Err(Flow::Abort(_)) if !std::mem::take(&mut self.subscript_failed) => Ok(None),
            Err(f) => Err(f),
        }
    }
}

/// Closes a coprocess's ends that are still the pipes they were.
pub(super) fn close_coproc_ends(c: &Coproc) {
    for &(fd, id) in &c.fds {
        if file_id(fd) == Some(id) {
            // SAFETY: `fd` is the coprocess's pipe end, which the shell
            // opened and nothing else owns.
            unsafe { libc::close(fd) };
        }
    }
}

/// The (device, inode) of what `fd` is open on.
pub(super) fn file_id(fd: RawFd) -> Option<(u64, u64)> {
    // SAFETY: fstat fills the struct it is given, on an fd number.
    let st = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        (libc::fstat(fd, &mut st) == 0).then_some(st)?
    };
    Some((st.st_dev, st.st_ino))
}

/// User and system CPU seconds of the shell and its waited-for children.
/// `select`'s menu, laid out as bash lays it out: numbered items in as
/// many columns as fit in `columns`, filled down each column, padded with
/// tabs and spaces to the widest item.
pub(super) fn select_menu(items: &[Vec<u8>], columns: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let width = |w: &[u8]| String::from_utf8_lossy(w).chars().count();
    let digits = |n: usize| n.to_string().len();
    let n = items.len();
    let index_len = digits(n);
    // The width of a column: the widest item, its number and ") ", and 2.
    let max = items.iter().map(|w| width(w)).max().unwrap_or(0) + index_len + 4;
    let cols = (columns / max).max(1);
    let mut rows = n.div_ceil(cols);
    // What fits on one line goes one item a line.
    if rows == 1 {
        rows = n;
    }
    let first_len = digits(rows);
    for row in 0..rows {
        let mut ind = row;
        let mut pos = 0;
        loop {
            let len = if pos == 0 { first_len } else { index_len };
            out.extend_from_slice(format!("{:>len$}) ", ind + 1).as_bytes());
            out.extend_from_slice(&items[ind]);
            let end = pos + width(&items[ind]) + len + 2;
            ind += rows;
            if ind >= n {
                break;
            }
            // Pad to the next column, with tabs as far as they go.
            let (mut from, to) = (end, pos + max);
            while from < to {
                if to / 8 > from / 8 {
                    out.push(b'\t');
                    from += 8 - from % 8;
                } else {
                    out.push(b' ');
                    from += 1;
                }
            }
            pos += max;
        }
        out.push(b'\n');
    }
    out
}

/// `time`'s report when TIMEFORMAT is unset.
pub(super) const DEFAULT_TIMEFORMAT: &[u8] = b"\nreal\t%3lR\nuser\t%3lU\nsys\t%3lS";
/// `time -p`'s report (POSIX).
pub(super) const POSIX_TIMEFORMAT: &[u8] = b"real %2R\nuser %2U\nsys %2S";

/// A `time` report in TIMEFORMAT's language (bash's): `%[p][l]R`, `U`
/// and `S` are the real, user and system times in seconds with `p` (0-3,
/// 3 if left out) digits after the point, truncated, `l` in the long form
/// `MmS.FFFs`; `%P` is (user + system) / real as a percentage with two
/// digits; `%%` is a `%`, and a `%` that ends the format stands for
/// itself. Times are in microseconds. Any other character after the `%`
/// is an error (the character, NUL for the format's end), and then, as in
/// bash, nothing is reported.
pub(super) fn time_report(fmt: &[u8], real: u64, user: u64, sys: u64) -> Result<Vec<u8>, u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < fmt.len() {
        if fmt[i] != b'%' {
            out.push(fmt[i]);
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        let mut places = 3;
        if let Some(d) = fmt.get(i).filter(|c| c.is_ascii_digit()) {
            places = u32::from(d - b'0').min(3);
            i += 1;
        }
        let long = fmt.get(i) == Some(&b'l');
        if long {
            i += 1;
        }
        let value = match fmt.get(i) {
            Some(b'R') => Some(real),
            Some(b'U') => Some(user),
            Some(b'S') => Some(sys),
            _ => None,
        };
        match (value, fmt.get(i)) {
            (Some(us), _) => {
                let (whole, frac) = (us / 1_000_000, us % 1_000_000);
                let (mins, secs) = if long {
                    (whole / 60, whole % 60)
                } else {
                    (0, whole)
                };
                if long {
                    out.extend_from_slice(format!("{mins}m").as_bytes());
                }
                out.extend_from_slice(secs.to_string().as_bytes());
                if places > 0 {
                    let digits = frac / 10u64.pow(6 - places);
                    out.extend_from_slice(format!(".{digits:0w$}", w = places as usize).as_bytes());
                }
                if long {
                    out.push(b's');
                }
                i += 1;
            }
            (None, Some(b'P')) if start + 1 == i => {
                let pct = if real == 0 {
                    100.0
                } else {
                    (user + sys) as f64 * 100.0 / real as f64
                };
                out.extend_from_slice(format!("{pct:.2}").as_bytes());
                i += 1;
            }
            (None, Some(b'%')) if start + 1 == i => {
                out.push(b'%');
                i += 1;
            }
            (None, None) if start + 1 == i => out.push(b'%'),
            (None, c) => return Err(c.copied().unwrap_or(0)),
        }
    }
    Ok(out)
}

/// A part whose expansion runs nothing (no command substitution).
pub(super) fn is_pure_part(p: &Part) -> bool {
    match p {
        Part::CommandSub(..) => false,
        Part::Double(inner) => inner.iter().all(is_pure_part),
        Part::Arith(_) => false,
        Part::Param(p) => matches!(p.op, ParamOp::Plain | ParamOp::Length),
        _ => true,
    }
}

/// Whether `list` is one `! pipeline` and nothing else (not in the
/// background).
pub(super) fn is_one_inverted_pipeline(list: &List) -> bool {
    match list.items.as_slice() {
        [item] => !item.background && item.and_or.rest.is_empty() && item.and_or.first.bang,
        _ => false,
    }
}

/// Whether `p` is one compound command the shell runs itself (`{ }`, `if`,
/// loops, `case`), whose status is that of a command inside it.
pub(super) fn runs_in_shell(p: &Pipeline) -> bool {
    matches!(
        p.commands.as_slice(),
        [Command::Compound(c, _)] if matches!(
            **c,
            Compound::Brace(_)
                | Compound::If { .. }
                | Compound::Loop { .. }
                | Compound::For { .. }
                | Compound::Case { .. }
                | Compound::ArithFor { .. }
        )
    )
}

/// The line of the first command of `list`, if it records one.
pub(super) fn first_line(list: &List) -> Option<u32> {
    match list.items.first()?.and_or.first.commands.first()? {
        Command::Simple(s) => Some(s.line),
        Command::Compound(c, _) => match &**c {
            Compound::For { line, .. }
            | Compound::Case { line, .. }
            | Compound::Arith { line, .. }
            | Compound::ArithFor { line, .. }
            | Compound::DoubleBracket { line, .. } => Some(*line),
            _ => None,
        },
        Command::Function(_) => None,
    }
}
