//! The interactive shell: a rustyline editor in front of the same parser
//! and executor that scripts use.
//!
//! Each turn of the loop: report finished jobs, run `PROMPT_COMMAND`,
//! expand PS1, read a line; when the parser needs more (an open `for`, a
//! quote, a here-document), read with PS2. The whole construct is one
//! history entry. Then `!` expansion, and the commands run.
//!
//! The editor's completion needs the shell (functions, variables,
//! `complete` specifications), and the loop needs it to run commands; the
//! two never run at once, so they share it through `Rc<RefCell<Shell>>`,
//! each borrowing it for its own step.

pub mod complete;
pub mod keys;

use crate::prompt;

use crate::parse::{Parser, Source};
use crate::shell::{Flow, Run, Shell};
use crate::sys;
use rustyline::completion::{Completer, Pair};
use rustyline::config::Configurer as _;
use rustyline::config::{BellStyle, CompletionType, Config, EditMode};
use rustyline::error::ReadlineError;
use rustyline::history::{History as _, MemHistory};
use rustyline::{Context, Editor};
use std::cell::RefCell;
use std::rc::Rc;

/// Which start-up file a non-login interactive shell reads.
#[derive(Debug, Clone)]
pub enum RcFile {
    /// `~/.rushrc`.
    Default,
    /// `--norc`.
    None,
    /// `--rcfile FILE`.
    File(Vec<u8>),
}

/// The editor's helper: completion over the shared shell.
struct Helper {
    shell: Rc<RefCell<Shell>>,
    commands: RefCell<complete::CommandCache>,
    /// A `bind -x` command the editor asked for.
    pending: keys::Pending,
}

impl Completer for Helper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let Ok(mut sh) = self.shell.try_borrow_mut() else {
            return Ok((pos, Vec::new()));
        };
        let mut cache = self.commands.borrow_mut();
        let (start, cands) = complete::complete(&mut sh, &mut cache, line, pos);
        Ok((
            start,
            cands
                .into_iter()
                .map(|c| Pair {
                    display: c.display,
                    replacement: c.replacement,
                })
                .collect(),
        ))
    }
}

impl rustyline::hint::Hinter for Helper {
    type Hint = String;
}
impl rustyline::highlight::Highlighter for Helper {}
impl rustyline::validate::Validator for Helper {}
impl rustyline::Helper for Helper {}

type Ed = Editor<Helper, MemHistory>;

/// Continuation lines for the parser, read with PS2.
struct More<'e> {
    editor: &'e mut Ed,
    /// PS2 is expanded when a continuation line is read.
    shell: &'e Rc<RefCell<Shell>>,
    /// Everything read for this command, for its history entry.
    text: Vec<u8>,
    /// Ctrl-C at PS2: the command is dropped.
    cancelled: bool,
}

impl Source for More<'_> {
    fn next_line(&mut self, buf: &mut Vec<u8>) -> bool {
        if self.cancelled {
            return false;
        }
        let ps2 = prompt::split(&self.shell.borrow_mut().prompt(b"PS2"));
        let read = read_line(self.editor, self.shell, &(ps2.1.as_str(), ps2.0.as_str()));
        match read {
            Ok(line) => {
                let mut l = line.into_bytes();
                l.push(b'\n');
                self.text.extend_from_slice(&l);
                buf.extend_from_slice(&l);
                true
            }
            Err(ReadlineError::Interrupted) => {
                self.cancelled = true;
                false
            }
            Err(_) => false,
        }
    }
}

/// Runs the interactive shell until `exit` or end of input; returns the
/// status to exit with.
pub fn run(sh: Shell, rc: RcFile, login: bool, monitor: bool) -> i32 {
    let shell = Rc::new(RefCell::new(sh));
    start(&mut shell.borrow_mut(), &rc, login, monitor);
    let config = Config::builder()
        .completion_type(CompletionType::List)
        .bell_style(BellStyle::None)
        .auto_add_history(false)
        .bracketed_paste(true)
        .max_history_size(usize::MAX >> 1)
        .map(|b| b.build());
    let mut editor = match config.and_then(Ed::with_config) {
        Ok(e) => e,
        Err(e) => {
            let _ = sys::write_all(2, format!("rush: line editor: {e}\n").as_bytes());
            return 1;
        }
    };
    // No synchronized-update brackets around each redraw: three writes
    // a keystroke instead of one, for terminals that do not tear anyway on
    // a one-line edit.
    editor.enable_synchronized_output(false);
    editor.set_helper(Some(Helper {
        shell: shell.clone(),
        commands: RefCell::new(complete::CommandCache::default()),
        pending: keys::Pending::default(),
    }));
    let mut applied = keys::Applied::default();
    let mut synced = (u64::MAX, 0usize);
    let mut eofs = 0;
    let status = loop {
        let ps1 = {
            let mut sh = shell.borrow_mut();
            before_prompt(&mut sh, &mut editor, &mut synced, &mut applied);
            prompt::split(&sh.prompt(b"PS1"))
        };
        let read = read_line(&mut editor, &shell, &(ps1.1.as_str(), ps1.0.as_str()));
        if sys::is_pending(libc::SIGHUP) {
            // The terminal hung up (or someone sent SIGHUP): leave.
            break 128 + libc::SIGHUP;
        }
        let line = match read {
            Ok(l) => {
                eofs = 0;
                l
            }
            Err(ReadlineError::Interrupted) => {
                shell.borrow_mut().status = 130;
                continue;
            }
            Err(ReadlineError::Eof) => {
                let sh = shell.borrow();
                if sh.opts.ignoreeof {
                    eofs += 1;
                    let limit = sh
                        .vars
                        .get(b"IGNOREEOF")
                        .and_then(|v| std::str::from_utf8(v).ok()?.parse().ok())
                        .unwrap_or(10);
                    if eofs <= limit {
                        sh.err_out(b"Use \"exit\" to leave the shell.\n");
                        continue;
                    }
                }
                if !sh.jobs.iter().any(|j| j.stopped.is_some()) || eofs > 0 {
                    sh.err_out(b"exit\n");
                    break sh.status;
                }
                sh.err_out(b"There are stopped jobs.\n");
                eofs = 1;
                continue;
            }
            Err(e) => {
                let _ = sys::write_all(2, format!("rush: line editor: {e}\n").as_bytes());
                break shell.borrow().status;
            }
        };
        if let Some(status) = turn(&shell, &mut editor, line) {
            break status;
        }
    };
    let mut sh = match Rc::try_unwrap(shell) {
        Ok(c) => c.into_inner(),
        Err(rc) => {
            // The editor's helper still holds it: drop the editor first.
            drop(editor);
            return leave(&mut rc.borrow_mut(), status);
        }
    };
    leave(&mut sh, status)
}

/// Reads a line with the editor. A `bind -x` key ends the read with its
/// request: the command runs with READLINE_LINE, READLINE_POINT and
/// READLINE_MARK (characters) set, and the read goes on from the line and
/// point it left.
fn read_line<P: rustyline::Prompt + ?Sized>(
    editor: &mut Ed,
    shell: &Rc<RefCell<Shell>>,
    prompt: &P,
) -> rustyline::Result<String> {
    let Some(pending) = editor.helper().map(|h| h.pending.clone()) else {
        return Err(ReadlineError::Eof);
    };
    let mut initial: Option<(String, usize)> = None;
    loop {
        sys::editor_reading(true);
        // A hang-up that came before the flag was set is seen here; one
        // after it makes the editor return (see `sys::editor_reading`).
        let read = if sys::is_pending(libc::SIGHUP) {
            Err(ReadlineError::Interrupted)
        } else {
            match &initial {
                Some((line, at)) => editor.readline_with_initial(prompt, line.split_at(*at)),
                None => editor.readline(prompt),
            }
        };
        sys::editor_reading(false);
        let request = pending.lock().ok().and_then(|mut p| p.take());
        let Some((cmd, line, at)) = request else {
            return read;
        };
        // The accepted line is taken off the screen again, as bash clears
        // the line before the command runs.
        let _ = sys::write_all(1, b"\x1b[1A\r\x1b[J");
        let mut sh = shell.borrow_mut();
        initial = Some(run_bound_command(&mut sh, &cmd, line, at));
    }
}

/// Runs a `bind -x` command on the line being edited; the line and the
/// point (a byte offset) it leaves.
fn run_bound_command(sh: &mut Shell, cmd: &[u8], line: String, at: usize) -> (String, usize) {
    let chars = |s: &str, bytes: usize| s[..bytes.min(s.len())].chars().count();
    let point = chars(&line, at);
    let _ = sh.vars.export(b"READLINE_LINE", Some(line.into_bytes()));
    let _ = sh
        .vars
        .export(b"READLINE_POINT", Some(point.to_string().into_bytes()));
    let _ = sh.vars.export(b"READLINE_MARK", Some(b"0".to_vec()));
    let status = sh.status;
    let _ = crate::builtins::source_text(sh, cmd, None);
    sh.status = status;
    let line = sh
        .vars
        .get(b"READLINE_LINE")
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .unwrap_or_default();
    let point = sh
        .vars
        .get(b"READLINE_POINT")
        .and_then(|p| std::str::from_utf8(p).ok()?.trim().parse::<usize>().ok())
        .unwrap_or(point);
    for v in [&b"READLINE_LINE"[..], b"READLINE_POINT", b"READLINE_MARK"] {
        let _ = sh.vars.unset(v);
    }
    let at = line
        .char_indices()
        .nth(point)
        .map_or(line.len(), |(i, _)| i);
    (line, at)
}

/// One command read and run. `Some(status)` when the shell should exit.
fn turn(shell: &Rc<RefCell<Shell>>, editor: &mut Ed, line: String) -> Option<i32> {
    let mut first = line.into_bytes();
    first.push(b'\n');
    let aliases = shell.borrow().parser_aliases();
    let mut more = More {
        editor,
        shell,
        text: first.clone(),
        cancelled: false,
    };
    // The whole input first (bash reads a complete command before running
    // any of it), then history, then the commands.
    let (mut lists, mut error) = parse_all(Parser::new(&first, &mut more, aliases), true);
    let cancelled = more.cancelled;
    let text = more.text;
    let mut sh = shell.borrow_mut();
    if cancelled {
        sh.status = 130;
        return None;
    }
    // `!` expansion works on the text; the expanded text is parsed again.
    let mut text = text;
    if sh.opts.histexpand && text.contains(&b'!') || text.starts_with(b"^") {
        match crate::history::expand_line(&sh.history, &text) {
            // `:p`: shown and remembered, not run (bash).
            Ok((Some(expanded), true)) => {
                let _ = sys::write_all(1, &expanded);
                if sh.opts.history {
                    let (size, _, control) = sh.history_settings();
                    let entry = expanded.strip_suffix(b"\n").unwrap_or(&expanded);
                    sh.history.add(entry, control, size);
                }
                return None;
            }
            Ok((Some(expanded), false)) => {
                // bash shows the command it runs.
                let _ = sys::write_all(1, &expanded);
                text = expanded;
                let mut src = crate::parse::Text;
                (lists, error) =
                    parse_all(Parser::new(&text, &mut src, sh.parser_aliases()), false);
            }
            Ok((None, _)) => {}
            Err(msg) => {
                sh.error(&msg);
                sh.status = 1;
                return None;
            }
        }
    }
    if sh.opts.history {
        let (size, _, control) = sh.history_settings();
        let entry = text.strip_suffix(b"\n").unwrap_or(&text).to_vec();
        sh.history.line_entry =
            !sh.history_ignored(&entry) && sh.history.add(&entry, control, size);
    }
    sh.command_number += 1;
    // A syntax error: the complete commands read before it run (there are
    // some only when it is on a continuation line), then it is reported.
    if let Some(e) = error {
        let r = run_lists(&mut sh, &lists);
        sh.syntax_error(&e);
        sh.status = 2;
        return r;
    }
    let started = std::time::Instant::now();
    let cpu = crate::shell::cpu_times();
    let shown = text.strip_suffix(b"\n").unwrap_or(&text).to_vec();
    let r = run_lists(&mut sh, &lists);
    report_time(&mut sh, &shown, started, cpu);
    r
}

/// Runs what was read; `Some(status)` when the shell should exit.
fn run_lists(sh: &mut Shell, lists: &[crate::ast::List]) -> Option<i32> {
    for list in lists {
        let r = sh.run_list(list);
        match r {
            Ok(s) => sh.status = s,
            Err(Flow::Exit(s)) => {
                if sh.jobs.iter().any(|j| j.stopped.is_some()) && !sh.exit_warned {
                    sh.exit_warned = true;
                    sh.err_out(b"There are stopped jobs.\n");
                    return None;
                }
                return Some(s);
            }
            Err(Flow::Interrupt) => {
                sh.err_out(b"\n");
                sh.status = 130;
                break;
            }
            Err(Flow::Abort(s)) => {
                sh.status = s;
                sh.discard_text = false;
                break;
            }
            Err(Flow::Return(s)) => sh.status = s,
            Err(Flow::Break(_) | Flow::Continue(_)) => {}
        }
    }
    sh.exit_warned = false;
    None
}

/// Parses every command of the input; with `stop_at_end`, only what has
/// been read (the parser would otherwise prompt for another line).
fn parse_all(
    mut parser: Parser<'_>,
    stop_at_end: bool,
) -> (Vec<crate::ast::List>, Option<crate::parse::ParseError>) {
    let mut lists = Vec::new();
    loop {
        if stop_at_end && parser.used_up() {
            return (lists, None);
        }
        match parser.next_command() {
            Ok(Some(l)) => lists.push(l),
            Ok(None) => return (lists, None),
            Err(e) => return (lists, Some(e)),
        }
    }
}

/// `RUSH_REPORTTIME`: a command that ran longer than this many seconds
/// reports its time when it ends, as zsh's REPORTTIME does.
fn report_time(sh: &mut Shell, text: &[u8], started: std::time::Instant, cpu: (f64, f64)) {
    let Some(limit) = sh
        .vars
        .get(b"RUSH_REPORTTIME")
        .and_then(|v| std::str::from_utf8(v).ok()?.trim().parse::<f64>().ok())
    else {
        return;
    };
    let real = started.elapsed().as_secs_f64();
    if real < limit {
        return;
    }
    let after = crate::shell::cpu_times();
    let (user, system) = (after.0 - cpu.0, after.1 - cpu.1);
    let pct = if real > 0.0 {
        (user + system) / real * 100.0
    } else {
        0.0
    };
    let line = format!(
        "{}  {user:.2}s user {system:.2}s system {pct:.0}% cpu {real:.3} total\n",
        String::from_utf8_lossy(text)
    );
    sh.err_out(line.as_bytes());
}

/// What runs before each prompt.
fn before_prompt(
    sh: &mut Shell,
    editor: &mut Ed,
    synced: &mut (u64, usize),
    applied: &mut keys::Applied,
) {
    sh.notify_jobs();
    // A job that left the terminal in raw mode does not spoil the editor.
    if std::mem::take(&mut sh.ran_job)
        && let Some(t) = &sh.jc
        && let Some(m) = &t.modes
        && !sys::Modes::get(t.fd).is_some_and(|now| now.same(m))
    {
        m.set(t.fd);
    }
    if let Some(cmd) = sh.vars.get(b"PROMPT_COMMAND").map(<[u8]>::to_vec)
        && !cmd.is_empty()
    {
        let status = sh.status;
        let _ = crate::builtins::source_text(sh, &cmd, None);
        sh.status = status;
    }
    editor.set_edit_mode(if sh.opts.vi {
        EditMode::Vi
    } else {
        EditMode::Emacs
    });
    // What `bind` and the inputrc file changed.
    if let Some(pending) = editor.helper().map(|h| h.pending.clone()) {
        keys::apply(sh, editor, applied, &pending);
    }
    // The editor's history follows the shell's list (`history -c`, `-d`,
    // `-r`, HISTSIZE).
    let h = &sh.history;
    if synced.0 != h.generation || synced.1 != h.entries.len() {
        let eh = editor.history_mut();
        if synced.0 != h.generation || eh.len() > h.entries.len() {
            let _ = eh.clear();
            for e in &h.entries {
                let _ = eh.add(&String::from_utf8_lossy(e));
            }
        } else {
            for e in &h.entries[eh.len()..] {
                let _ = eh.add(&String::from_utf8_lossy(e));
            }
        }
        *synced = (h.generation, h.entries.len());
    }
}

/// What every interactive shell has, also `rush -i -c …`: emacs editing
/// mode, history and `!` expansion on, HISTFILE, HISTSIZE and
/// HISTFILESIZE set (bash's defaults, with rush's own file).
pub fn defaults(sh: &mut Shell) {
    sh.opts.interactive = true;
    // PS1 and PS2 only in an interactive shell, and from the environment
    // when it has them (bash).
    if sh.vars.get(b"PS1").is_none() {
        let _ = sh.vars.set(b"PS1", br"\s-\v\$ ".to_vec());
    }
    if sh.vars.get(b"PS2").is_none() {
        let _ = sh.vars.set(b"PS2", b"> ".to_vec());
    }
    sh.shopts.set("expand_aliases", true);
    sh.opts.history = true;
    sh.opts.histexpand = true;
    if !sh.opts.emacs && !sh.opts.vi {
        sh.opts.emacs = true;
    }
    // HOME, or the user's home in the password database.
    let home = sh.vars.get(b"HOME").map(<[u8]>::to_vec).or_else(|| {
        use std::os::unix::ffi::OsStrExt;
        nix::unistd::User::from_uid(nix::unistd::getuid())
            .ok()
            .flatten()
            .map(|u| u.dir.as_os_str().as_bytes().to_vec())
    });
    if let Some(home) = home
        && sh.vars.get(b"HISTFILE").is_none()
    {
        let _ = sh
            .vars
            .set(b"HISTFILE", [home.as_slice(), b"/.rush_history"].concat());
    }
    for v in [&b"HISTSIZE"[..], b"HISTFILESIZE"] {
        if sh.vars.get(v).is_none() {
            let _ = sh.vars.set(v, b"500".to_vec());
        }
    }
}

/// Sets up an interactive shell: signals, job control, history, start-up
/// files.
fn start(sh: &mut Shell, rc: &RcFile, login: bool, monitor: bool) {
    defaults(sh);
    // Ctrl-C interrupts what the shell runs itself; SIGQUIT and SIGTERM do
    // not end it.
    let _ = sys::set_disposition(libc::SIGINT, sys::Disposition::Catch);
    // A hang-up is noted, so that the jobs get it too before the shell
    // leaves (unless it was ignored at start, as under nohup).
    if !sys::ignored_at_start(libc::SIGHUP) {
        let _ = sys::set_disposition(libc::SIGHUP, sys::Disposition::Catch);
    }
    sys::ignore_for_shell(&[libc::SIGQUIT, libc::SIGTERM]);
    // Job control, unless `+m`: only with a terminal to control.
    sh.opts.monitor = monitor && sh.take_terminal();
    // The inputrc file, before the start-up files (whose `bind` commands
    // come after it in bash too).
    keys::read_inputrc(sh);
    // Start-up files, as bash reads its own: a login shell read the
    // profiles already; another reads ~/.rushrc (or --rcfile). ENV, as
    // POSIX asks of an interactive shell, comes after.
    if !login {
        let file = match rc {
            RcFile::None => None,
            RcFile::File(f) => Some(f.clone()),
            RcFile::Default => sh.vars.get(b"HOME").map(|h| [h, b"/.rushrc"].concat()),
        };
        if let Some(f) = file {
            source_file(sh, &f);
        }
    }
    if let Some(env) = sh.vars.get(b"ENV").map(<[u8]>::to_vec)
        && !env.is_empty()
        && let Some(path) = sh.expand_as_double_quoted(&env)
    {
        source_file(sh, &path);
    }
    if sh.shopts.on("restricted_shell") {
        sh.make_restricted(true);
    }
    let (size, _, _) = sh.history_settings();
    if let Some(f) = sh.history_file() {
        sh.history.load(&f, size);
    }
}

fn source_file(sh: &mut Shell, path: &[u8]) {
    use std::os::unix::ffi::OsStrExt;
    if let Ok(text) = std::fs::read(std::ffi::OsStr::from_bytes(path)) {
        let _ = crate::builtins::source_text(sh, &text, None);
    }
}

/// Leaving: the history is appended to its file, then the EXIT trap runs.
fn leave(sh: &mut Shell, status: i32) -> i32 {
    if let Some(f) = sh.history_file() {
        let (_, filesize, _) = sh.history_settings();
        if let Err(e) = sh.history.append_to_file(&f, filesize) {
            let m = crate::shell::io_text(&e);
            sh.error(&format!("history: {}: {m}", String::from_utf8_lossy(&f)));
        }
    }
    sh.reap_jobs();
    if sys::is_pending(libc::SIGHUP) {
        // The terminal hung up: every job gets SIGHUP.
        sh.hang_up_jobs();
    } else {
        // Stopped jobs would stay stopped for ever: bash sends them SIGHUP
        // and SIGCONT.
        sh.jobs.retain(|j| j.stopped.is_some());
        sh.hang_up_jobs();
    }
    let status = sh.finish(status);
    if sys::is_pending(libc::SIGHUP) {
        // Ended by the hang-up, as the parent should see it (bash too).
        let _ = sys::set_disposition(libc::SIGHUP, sys::Disposition::Default);
        // SAFETY: raise on this process.
        unsafe { libc::raise(libc::SIGHUP) };
    }
    status
}
