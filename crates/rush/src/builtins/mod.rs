//! Builtin commands. Each takes the shell and its arguments (argv[0] is the
//! name) and returns a status, or a [`Flow`] for `break`, `return`, `exit`.

use crate::shell::{Exec, Flow, Run, Shell};
use crate::sys;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

pub use crate::escape::lossy;

mod assign;
mod bind;
mod calls;
mod complete;
mod dirs;
mod getopts;
mod history;
mod jobs;
mod limits;
mod lookup;
pub mod printf;
mod process;
pub mod read;
mod session;
mod setopt;

use assign::*;
use dirs::{cd, pwd};
use getopts::*;
use limits::*;
use lookup::*;
pub use process::reap;
use process::*;

pub use complete::generate as completions;

type Args<'a> = &'a [Vec<u8>];

/// POSIX special builtins: errors in them end a non-interactive shell and
/// their prefix assignments persist.
const SPECIAL: &[&[u8]] = &[
    b":",
    b".",
    b"break",
    b"continue",
    b"eval",
    b"exec",
    b"exit",
    b"export",
    b"readonly",
    b"return",
    b"set",
    b"shift",
    b"times",
    b"trap",
    b"unset",
];

const REGULAR: &[&[u8]] = &[
    b"alias",
    b"bg",
    b"bind",
    b"builtin",
    b"caller",
    b"compgen",
    b"complete",
    b"compopt",
    b"cd",
    b"command",
    b"declare",
    b"dirs",
    b"disown",
    b"echo",
    b"enable",
    b"false",
    b"fc",
    b"fg",
    b"getopts",
    b"hash",
    b"help",
    b"history",
    b"jobs",
    b"kill",
    b"let",
    b"local",
    b"logout",
    b"mapfile",
    b"popd",
    b"printf",
    b"pushd",
    b"pwd",
    b"read",
    b"readarray",
    b"shopt",
    b"source",
    b"suspend",
    b"test",
    b"[",
    b"true",
    b"type",
    b"typeset",
    b"ulimit",
    b"umask",
    b"unalias",
    b"wait",
];

/// The names of all builtins, special first.
pub fn names() -> impl Iterator<Item = &'static [u8]> {
    SPECIAL.iter().chain(REGULAR).copied()
}

/// Whether `name` is a special builtin; `source` is one in POSIX mode
/// (bash marks it so in its table).
pub fn is_special(name: &[u8], posix: bool) -> bool {
    SPECIAL.contains(&name) || posix && name == b"source"
}

/// Whether `name` is a builtin that `enable -n` has not turned off.
pub fn is_builtin(sh: &Shell, name: &[u8]) -> bool {
    (SPECIAL.contains(&name) || REGULAR.contains(&name))
        && (sh.disabled_builtins.is_empty() || !sh.disabled_builtins.contains(name))
}

/// Runs builtin `argv[0]`, or returns `None` if there is no such builtin.
pub fn run_builtin(sh: &mut Shell, argv: Args<'_>) -> Option<Exec> {
    let name = argv.first()?.as_slice();
    Some(match name {
        b":" | b"true" => Ok(0),
        b"false" => Ok(1),
        b"." | b"source" => source(sh, argv),
        b"alias" => alias(sh, argv),
        b"unalias" => unalias(sh, argv),
        b"break" | b"continue" => break_continue(sh, argv),
        b"builtin" => builtin(sh, argv),
        b"cd" => cd(sh, argv),
        b"command" => command(sh, argv),
        b"declare" | b"typeset" => declare(sh, argv),
        b"echo" => echo(sh, argv),
        b"eval" => eval(sh, argv),
        b"exec" => exec(sh, argv),
        b"exit" => exit(sh, argv),
        b"export" => export(sh, argv),
        b"readonly" => readonly(sh, argv),
        b"getopts" => getopts(sh, argv),
        b"hash" => hash(sh, argv),
        b"jobs" => jobs::jobs(sh, argv),
        b"fg" | b"bg" => jobs::fg_bg(sh, argv),
        b"disown" => jobs::disown(sh, argv),
        b"kill" => kill(sh, argv),
        b"let" => let_(sh, argv),
        b"local" => local(sh, argv),
        b"printf" => printf::printf(sh, argv),
        b"pwd" => pwd(sh, argv),
        b"read" => read::read(sh, argv),
        b"mapfile" | b"readarray" => read::mapfile(sh, argv),
        b"return" => return_(sh, argv),
        b"set" => setopt::set(sh, argv),
        b"shift" => shift(sh, argv),
        b"shopt" => setopt::shopt(sh, argv),
        b"test" => Ok(crate::test::test(sh, &argv[1..], false)),
        b"[" => Ok(crate::test::test(sh, &argv[1..], true)),
        b"times" => times(sh),
        b"caller" => calls::caller(sh, argv),
        b"complete" => complete::complete(sh, argv),
        b"compgen" => complete::compgen(sh, argv),
        b"compopt" => complete::compopt(sh, argv),
        b"pushd" => dirs::pushd(sh, argv),
        b"popd" => dirs::popd(sh, argv),
        b"dirs" => dirs::dirs(sh, argv),
        b"trap" => trap(sh, argv),
        b"type" => type_(sh, argv),
        b"ulimit" => ulimit(sh, argv),
        b"umask" => umask(sh, argv),
        b"unset" => unset(sh, argv),
        b"wait" => wait(sh, argv),
        b"history" => history::history(sh, argv),
        b"fc" => history::fc(sh, argv),
        b"enable" => session::enable(sh, argv),
        b"help" => session::help(sh, argv),
        b"logout" => session::logout(sh, argv),
        b"suspend" => session::suspend(sh, argv),
        b"bind" => bind::bind(sh, argv),
        _ => return None,
    })
}

/// Reads a builtin's leading flag clusters (`-lp`, then `--` or the first
/// operand ends them), refusing a letter not in `known` with bash's two
/// lines; the flags seen, and the operands.
pub(super) fn options(
    sh: &mut Shell,
    argv: Args<'_>,
    known: &[u8],
    usage: &str,
) -> Result<(Vec<u8>, Vec<Vec<u8>>), ()> {
    let (flags, i) = option_flags(sh, argv, known, usage)?;
    Ok((flags, argv[i..].to_vec()))
}

/// [`options`], with the index of the first operand instead of a copy.
fn option_flags(
    sh: &mut Shell,
    argv: Args<'_>,
    known: &[u8],
    usage: &str,
) -> Result<(Vec<u8>, usize), ()> {
    let (opts, i) = getopt(sh, argv, known, usage)?;
    Ok((opts.into_iter().map(|o| o.letter).collect(), i))
}

/// One option a builtin was given, with its argument if it takes one.
pub(crate) struct Opt {
    pub letter: u8,
    pub arg: Option<Vec<u8>>,
}

/// A builtin's leading options, read as bash's `internal_getopt` reads
/// them: `spec` lists the letters, and one followed by `:` takes an
/// argument (the rest of its word, or the next word). With `#` first in
/// `spec`, a word `-` then a digit is an operand (`fc -2`). `--` or the
/// first operand ends them; a letter not in `spec`, or a missing
/// argument, gets bash's two lines. The options, and the index of the
/// first operand.
pub(crate) fn getopt(
    sh: &mut Shell,
    argv: Args<'_>,
    spec: &[u8],
    usage: &str,
) -> Result<(Vec<Opt>, usize), ()> {
    let name = lossy(&argv[0]);
    let numbers_are_operands = spec.first() == Some(&b'#');
    let mut opts = Vec::new();
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        if a == b"--" {
            i += 1;
            break;
        }
        if a.len() < 2 || a[0] != b'-' || numbers_are_operands && a[1].is_ascii_digit() {
            break;
        }
        let mut k = 1;
        while k < a.len() {
            let c = a[k];
            let Some(at) = spec.iter().position(|&s| s == c && s != b':' && s != b'#') else {
                sh.error(&format!("{name}: -{}: invalid option", c as char));
                sh.usage(usage);
                return Err(());
            };
            if spec.get(at + 1) != Some(&b':') {
                opts.push(Opt {
                    letter: c,
                    arg: None,
                });
                k += 1;
                continue;
            }
            let arg = if k + 1 < a.len() {
                a[k + 1..].to_vec()
            } else {
                i += 1;
                let Some(next) = argv.get(i) else {
                    sh.error(&format!(
                        "{name}: -{}: option requires an argument",
                        c as char
                    ));
                    sh.usage(usage);
                    return Err(());
                };
                next.clone()
            };
            opts.push(Opt {
                letter: c,
                arg: Some(arg),
            });
            break;
        }
        i += 1;
    }
    Ok((opts, i))
}

/// Writes builtin output; a failed write is reported as bash does.
fn emit(sh: &mut Shell, name: &str, bytes: &[u8]) -> i32 {
    match sh.out(bytes) {
        Ok(()) => 0,
        // These builtins do not check their writes in bash.
        Err(_) if matches!(name, "complete" | "compgen" | "jobs" | "command" | "kill") => 0,
        Err(e) => {
            let msg = e.to_string();
            sh.error(&format!(
                "{name}: write error: {}",
                msg.split(" (os error").next().unwrap_or_default()
            ));
            1
        }
    }
}

fn break_continue(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let name = lossy(&argv[0]);
    let n = match argv.get(1) {
        None => 1,
        Some(a) => match lossy(a).parse::<i64>() {
            Ok(n) if n >= 1 => n as u32,
            // Out of range: reported, and every loop is left (bash), not
            // the shell.
            Ok(_) => {
                sh.error(&format!("{name}: {}: loop count out of range", lossy(a)));
                return Err(Flow::Break(sh.loop_depth.max(1)));
            }
            Err(_) => {
                sh.error(&format!("{name}: {}: numeric argument required", lossy(a)));
                return Err(Flow::Exit(128));
            }
        },
    };
    if sh.loop_depth == 0 {
        sh.error(&format!(
            "{name}: only meaningful in a `for', `while', or `until' loop"
        ));
        return Ok(0);
    }
    let n = n.min(sh.loop_depth);
    if argv[0] == b"break" {
        Err(Flow::Break(n))
    } else {
        Err(Flow::Continue(n))
    }
}

fn parse_status(sh: &mut Shell, name: &str, a: &[u8]) -> Result<i32, Flow> {
    match lossy(a).trim().parse::<i64>() {
        Ok(n) => Ok((n & 0xff) as i32),
        Err(_) => {
            sh.error(&format!("{name}: {}: numeric argument required", lossy(a)));
            Err(Flow::Exit(2))
        }
    }
}

fn exit(sh: &mut Shell, argv: Args<'_>) -> Exec {
    sh.exit_builtin = true;
    let status = match argv.get(1) {
        None => sh.status,
        Some(a) => parse_status(sh, "exit", a)?,
    };
    if argv.len() > 2 {
        sh.error("exit: too many arguments");
        return Ok(1);
    }
    // In a function, the EXIT trap runs where `exit` is, still inside it
    // (`$FUNCNAME` is the function's, bash).
    if sh.func_depth > 0 && !sh.opts.interactive && sh.traps.contains_key(&0) {
        return Err(Flow::Exit(sh.finish(status)));
    }
    Err(Flow::Exit(status))
}

fn return_(sh: &mut Shell, argv: Args<'_>) -> Exec {
    if sh.func_depth == 0 && sh.source_depth == 0 {
        sh.error("return: can only `return' from a function or sourced script");
        // A usage error of a special builtin: status 2, and in POSIX mode
        // a script ends (bash).
        if sh.opts.posix && !sh.opts.interactive && !sh.via_command {
            return Err(Flow::Exit(2));
        }
        return Ok(2);
    }
    let status = match argv.get(1) {
        None => sh.status,
        Some(a) => match lossy(a).trim().parse::<i64>() {
            Ok(n) => (n & 0xff) as i32,
            Err(_) => {
                sh.error(&format!("return: {}: numeric argument required", lossy(a)));
                2
            }
        },
    };
    Err(Flow::Return(status))
}

fn eval(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let mut args = &argv[1..];
    match args.first().map(Vec::as_slice) {
        Some(b"--") => args = &args[1..],
        Some(a) if a.len() > 1 && a[0] == b'-' => {
            sh.error(&format!("eval: {}: invalid option", lossy(a)));
            sh.usage("eval: usage: eval [arg ...]");
            return Ok(2);
        }
        _ => {}
    }
    let text = args.join(&b' ');
    if text.is_empty() {
        return Ok(0);
    }
    let saved_tail = sh.tail_ok;
    sh.tail_ok = false;
    sh.eval_depth += 1;
    let r = sh.eval_text(&text);
    sh.eval_depth -= 1;
    sh.tail_ok = saved_tail;
    r
}

fn source(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let name = lossy(&argv[0]);
    // `source -- file`
    let dashdash = argv.get(1).map(Vec::as_slice) == Some(b"--");
    let argv: Vec<Vec<u8>> = if dashdash {
        std::iter::once(argv[0].clone())
            .chain(argv[2..].iter().cloned())
            .collect()
    } else {
        argv.to_vec()
    };
    let usage = if name == "." {
        ".: usage: . filename [arguments]"
    } else {
        "source: usage: source filename [arguments]"
    };
    let Some(file) = argv.get(1) else {
        sh.error(&format!("{name}: filename argument required"));
        sh.usage(usage);
        return Ok(2);
    };
    if !dashdash && file.len() > 1 && file[0] == b'-' {
        sh.error(&format!("{name}: {}: invalid option", lossy(&file[..2])));
        sh.usage(usage);
        return Ok(2);
    }
    if file.contains(&b'/') && sh.opts.restricted {
        sh.error(&format!("{name}: {}: restricted", lossy(file)));
        return Ok(1);
    }
    let path = if file.contains(&b'/') {
        file.clone()
    } else {
        let path = sh.vars.get(b"PATH").map(<[u8]>::to_vec).unwrap_or_default();
        let found = path.split(|&c| c == b':').find_map(|d| {
            let mut p = if d.is_empty() {
                b".".to_vec()
            } else {
                d.to_vec()
            };
            p.push(b'/');
            p.extend_from_slice(file);
            std::path::Path::new(OsStr::from_bytes(&p))
                .is_file()
                .then_some(p)
        });
        match found {
            Some(p) => p,
            // In POSIX mode the current directory is not searched (bash).
            None if sh.opts.posix => {
                sh.error(&format!("{name}: {}: file not found", lossy(file)));
                if !sh.opts.interactive && !sh.via_command {
                    return Err(Flow::Exit(1));
                }
                return Ok(1);
            }
            None => file.clone(),
        }
    };
    let text = match std::fs::read(OsStr::from_bytes(&path)) {
        Ok(t) => t,
        Err(e) => {
            let msg = e.to_string();
            sh.error(&format!(
                "{}: {}",
                lossy(file),
                msg.split(" (os error").next().unwrap_or_default()
            ));
            // A special builtin's failure: POSIX mode ends a script.
            if sh.opts.posix && !sh.opts.interactive && !sh.via_command {
                return Err(Flow::Exit(1));
            }
            return Ok(1);
        }
    };
    let args = (argv.len() > 2).then(|| argv[2..].to_vec());
    sh.frames.push(crate::shell::Frame {
        name: b"source".to_vec(),
        file: std::rc::Rc::from(path.as_slice()),
        call_line: sh.line,
        saved_opts: None,
        args: sh.extdebug.then(|| argv[2..].to_vec()),
    });
    // Without `set -T` the file does not inherit the DEBUG trap; it comes
    // back after, unless the file set its own (bash).
    let debug = if sh.opts.functrace {
        None
    } else {
        sh.traps.remove(&sys::DEBUG_TRAP)
    };
    let r = source_text(sh, &text, args);
    if let Some(a) = debug {
        sh.traps.entry(sys::DEBUG_TRAP).or_insert(a);
    }
    sh.frames.pop();
    r
}

/// Runs a file's text as `source` does (the login profiles too), with
/// `args`, if given, as the positional parameters meanwhile.
pub fn source_text(sh: &mut Shell, text: &[u8], args: Option<Vec<Vec<u8>>>) -> Exec {
    let saved_pos = args.map(|a| std::mem::replace(&mut sh.positional, a));
    let saved_changed = std::mem::replace(&mut sh.set_changed_args, false);
    sh.source_depth += 1;
    let saved_line = sh.line;
    sh.line = 1;
    let saved_tail = sh.tail_ok;
    sh.tail_ok = false;
    let r = sh.eval_text(text);
    // Run to its end, the file is at the `.` command's line for the
    // RETURN trap (bash).
    if r.is_ok() {
        sh.line = saved_line;
    }
    // The file's own frame is gone when the trap runs: FUNCNAME is the
    // caller's (bash).
    let frame = if sh.frames.last().is_some_and(|f| f.name == b"source") {
        sh.frames.pop()
    } else {
        None
    };
    let r = sh.run_return_trap(r);
    if let Some(f) = frame {
        sh.frames.push(f);
    }
    sh.tail_ok = saved_tail;
    sh.line = saved_line;
    sh.source_depth -= 1;
    // The caller's parameters come back, unless the file set its own with
    // `set` outside a function (bash).
    if let Some(p) = saved_pos
        && !(sh.set_changed_args && sh.func_depth == 0)
    {
        sh.positional = p;
    }
    sh.set_changed_args = saved_changed;
    match r {
        Err(Flow::Return(s)) => Ok(s),
        r => r,
    }
}

fn exec(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let mut args = &argv[1..];
    let mut arg0 = None;
    // `-c`: an empty environment; `-l`: a login program (a `-` before its
    // name, as `login` gives it).
    let (mut clear, mut login) = (false, false);
    loop {
        match args.first().map(Vec::as_slice) {
            Some(b"--") => {
                args = &args[1..];
                break;
            }
            Some(b"-a") if args.len() > 1 => {
                arg0 = Some(args[1].clone());
                args = &args[2..];
            }
            Some(o)
                if o.len() > 1
                    && o[0] == b'-'
                    && o[1..].iter().all(|c| matches!(c, b'c' | b'l')) =>
            {
                clear |= o.contains(&b'c');
                login |= o.contains(&b'l');
                args = &args[1..];
            }
            // Another option is refused with the usage, and the shell goes
            // on (bash).
            Some(b"-a") => {
                sh.error("exec: -a: option requires an argument");
                sh.usage(
                    "exec: usage: exec [-cl] [-a name] [command [argument ...]] [redirection ...]",
                );
                return Ok(2);
            }
            Some(o) if o.len() > 1 && o[0] == b'-' => {
                let c = o[1..]
                    .iter()
                    .find(|&&c| !matches!(c, b'c' | b'l'))
                    .copied()
                    .unwrap_or(b'a');
                sh.error(&format!("exec: -{}: invalid option", c as char));
                sh.usage(
                    "exec: usage: exec [-cl] [-a name] [command [argument ...]] [redirection ...]",
                );
                return Ok(2);
            }
            _ => break,
        }
    }
    if args.is_empty() {
        // Redirections on `exec` alone stay: handled by the caller.
        return Ok(0);
    }
    if sh.refuse_restricted(Some(b"exec")) {
        return Ok(1);
    }
    let name = &args[0];
    let Some(path) = sh.find_command(name) else {
        sh.error(&format!("exec: {}: not found", lossy(name)));
        return exec_failed(sh, 127);
    };
    let mut cargv: Vec<std::ffi::CString> = args
        .iter()
        .map(|a| std::ffi::CString::new(a.as_slice()).unwrap_or_default())
        .collect();
    let mut name0 = arg0.unwrap_or_else(|| name.clone());
    if login {
        name0.insert(0, b'-');
    }
    cargv[0] = std::ffi::CString::new(name0).unwrap_or_default();
    // `V=1 exec prog`: the prefix assignments go to prog's environment.
    let extra = std::mem::take(&mut sh.exec_env);
    let env = if clear {
        Vec::new()
    } else {
        sh.vars.environment(&extra)
    };
    sh.perf_report();
    let mut e = sys::exec(&path, &cargv, &env);
    if e == nix::Error::ENOEXEC {
        // A script without #!: this shell runs it, in place of this one.
        if let Ok(me) = std::env::current_exe() {
            let me = std::ffi::CString::new(me.as_os_str().as_bytes()).unwrap_or_default();
            let mut script = vec![
                std::ffi::CString::new("rush").unwrap_or_default(),
                path.clone(),
            ];
            script.extend(cargv[1..].iter().cloned());
            e = sys::exec(&me, &script, &env);
        }
    }
    let msg = std::io::Error::from(e).to_string();
    sh.error(&format!(
        "exec: {}: {}",
        lossy(name),
        msg.split(" (os error").next().unwrap_or_default()
    ));
    exec_failed(sh, if e == nix::Error::ENOENT { 127 } else { 126 })
}

/// A failed `exec` ends a non-interactive shell, unless `shopt -s execfail`.
fn exec_failed(sh: &mut Shell, status: i32) -> Exec {
    if sh.shopts.on("execfail") || sh.opts.interactive {
        Ok(status)
    } else {
        sh.exit_builtin = true;
        Err(Flow::Exit(status))
    }
}

fn echo(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let mut newline = true;
    let mut escapes = sh.shopts.on("xpg_echo");
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        if a.len() >= 2 && a[0] == b'-' && a[1..].iter().all(|c| matches!(c, b'n' | b'e' | b'E')) {
            for &c in &a[1..] {
                match c {
                    b'n' => newline = false,
                    b'e' => escapes = true,
                    _ => escapes = false,
                }
            }
            i += 1;
        } else {
            break;
        }
    }
    let mut out = Vec::with_capacity(64);
    for (k, a) in argv[i..].iter().enumerate() {
        if k > 0 {
            out.push(b' ');
        }
        if escapes {
            if crate::escape::unescape(a, &mut out, crate::escape::Dialect::Echo) {
                return Ok(emit(sh, "echo", &out));
            }
        } else {
            out.extend_from_slice(a);
        }
    }
    if newline {
        out.push(b'\n');
    }
    Ok(emit(sh, "echo", &out))
}

fn times(sh: &mut Shell) -> Exec {
    let fmt = |t: libc::timeval| {
        let secs = t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        format!("{}m{:.3}s", (secs / 60.0) as u64, secs % 60.0)
    };
    // SAFETY: getrusage fills the struct it is given.
    let usage = |who| unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut u);
        u
    };
    let me = usage(libc::RUSAGE_SELF);
    let kids = usage(libc::RUSAGE_CHILDREN);
    let out = format!(
        "{} {}\n{} {}\n",
        fmt(me.ru_utime),
        fmt(me.ru_stime),
        fmt(kids.ru_utime),
        fmt(kids.ru_stime)
    );
    Ok(emit(sh, "times", out.as_bytes()))
}
