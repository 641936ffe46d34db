//! rush: a POSIX shell with the bash extensions agents write, built for
//! per-command latency.
//!
//! The modules, in layers (ARCHITECTURE.md has them whole; a module uses
//! only those of the layers before it):
//! - [`sys`]: processes, descriptors and signals; [`ast`]: the syntax tree;
//!   [`escape`], [`pattern`], [`arith`], [`brace`], [`glob`], [`regex`]:
//!   the small languages inside words; [`parse`]: bytes to syntax tree, one
//!   complete command at a time; [`unparse`]: back to text.
//! - The state: [`vars`], [`options`], [`compspec`], [`job`], [`quote`],
//!   and [`shell::Shell`], with [`shell::Run`], the interface the layers
//!   above run commands through.
//! - [`expand`]: words to fields; [`builtins`] and [`test`].
//! - The executor (in [`shell`]), which calls builtins through one table.
//! - [`prompt`], [`interactive`]; [`input`] and [`perf`]: where commands
//!   come from, and phase timing.

pub mod arith;
pub mod assoc;
pub mod ast;
pub mod brace;
pub mod builtins;
pub mod compspec;
pub mod escape;
pub mod expand;
pub mod glob;
pub mod history;
pub mod input;
pub mod interactive;
pub mod job;
pub mod keymap;
pub mod options;
pub mod parse;
pub mod pattern;
pub mod perf;
pub mod prompt;
pub mod quote;
pub mod regex;
pub mod shell;
pub mod sys;
pub mod test;
pub mod unparse;
pub mod vars;

use shell::{Run, Shell};
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

/// Where the commands come from.
enum Input {
    Command(Vec<u8>),
    File(Vec<u8>),
    Stdin,
}

/// Runs the shell with `args` (without argv[0]) and returns the exit status.
pub fn main_with(arg0: Vec<u8>, args: Vec<OsString>) -> i32 {
    // The binary skips the Rust runtime's start-up (see main.rs), so SIGPIPE
    // is as the parent left it, which is what children must inherit.
    let args: Vec<Vec<u8>> = args.into_iter().map(OsStringExt::into_vec).collect();
    let mut sh = Shell::new(arg0.clone());
    sh.set_bash_path(&arg0);
    sh.shopts = options::Shopts::new();
    // POSIXLY_CORRECT in the environment: POSIX mode (bash).
    // So is being invoked as `sh` (bash's "act like sh").
    let base = arg0.rsplit(|&c| c == b'/').next().unwrap_or_default();
    if sh.vars.get(b"POSIXLY_CORRECT").is_some() || base.strip_prefix(b"-").unwrap_or(base) == b"sh"
    {
        sh.opts.posix = true;
    }
    let mut command = None;
    let mut force_stdin = false;
    // A login shell: `-l`, `--login`, or an argv[0] that starts with `-`
    // (how login(1) and sshd start a shell).
    let mut login = arg0.first() == Some(&b'-');
    let mut profiles = true;
    let mut rc = interactive::RcFile::Default;
    // `+m` turns job control off in an interactive shell.
    let mut monitor = true;
    // `-r`, `--restricted`, or started as `rbash`: restricted once the
    // start-up files have run (bash).
    let mut restricted = base.strip_prefix(b"-").unwrap_or(base) == b"rbash";
    let mut i = 0;
    // Options, then operands.
    while i < args.len() {
        let a = &args[i];
        if a == b"--" || a == b"-" {
            i += 1;
            break;
        }
        if a.len() < 2 || !(a[0] == b'-' || a[0] == b'+') {
            break;
        }
        // bash's long options.
        if a.starts_with(b"--") {
            match a.as_slice() {
                b"--help" => {
                    let _ = sys::write_all(1, HELP.as_bytes());
                    return 0;
                }
                b"--version" => {
                    let _ = sys::write_all(1, version().as_bytes());
                    return 0;
                }
                b"--login" => login = true,
                b"--noprofile" => profiles = false,
                b"--norc" => rc = interactive::RcFile::None,
                // rustyline has no plain mode of its own; accepted, as bash.
                b"--noediting" => {}
                // The file an interactive shell reads instead of ~/.rushrc.
                b"--rcfile" | b"--init-file" => {
                    i += 1;
                    let Some(f) = args.get(i) else {
                        return usage_error(&format!(
                            "{}: option requires an argument",
                            String::from_utf8_lossy(a)
                        ));
                    };
                    rc = interactive::RcFile::File(f.clone());
                }
                b"--posix" => {
                    sh.set_option("posix", true);
                }
                b"--verbose" => {
                    sh.set_option("verbose", true);
                }
                b"--restricted" => restricted = true,
                _ => {
                    return usage_error(&format!("{}: invalid option", String::from_utf8_lossy(a)));
                }
            }
            i += 1;
            continue;
        }
        let on = a[0] == b'-';
        // A cluster such as `-euo pipefail` or `-lc`: each `o` and `O` takes
        // the next argument as its option name.
        let mut next = i + 1;
        for &c in &a[1..] {
            match c {
                b'c' if on => command = Some(()),
                b's' if on => force_stdin = true,
                b'l' if on => login = true,
                b'i' => sh.opts.interactive = on,
                b'm' => {
                    monitor = on;
                    sh.opts.monitor = on;
                }
                b'r' if on => restricted = true,
                b'o' | b'O' => {
                    let Some(name) = args.get(next) else {
                        return usage_error(&format!(
                            "{}{}: option requires an argument",
                            a[0] as char, c as char
                        ));
                    };
                    next += 1;
                    let name = String::from_utf8_lossy(name);
                    let known = if c == b'o' {
                        sh.set_option(&name, on)
                    } else {
                        sh.set_shopt(&name, on)
                    };
                    if !known {
                        let kind = if c == b'o' { "option" } else { "shell option" };
                        return usage_error(&format!("{name}: invalid {kind} name"));
                    }
                }
                c => {
                    if sh.set_flags(&[a[0], c]).is_err() {
                        return usage_error(&format!(
                            "{}{}: invalid option",
                            a[0] as char, c as char
                        ));
                    }
                }
            }
        }
        i = next;
    }
    if login {
        sh.set_shopt_forced("login_shell", true);
    }
    if restricted {
        sh.set_shopt_forced("restricted_shell", true);
        sh.drop_imported_functions();
    }
    let operands = &args[i..];
    let input = if command.is_some() {
        let Some(text) = operands.first() else {
            let _ = sys::write_all(2, b"rush: -c: option requires an argument\n");
            return 2;
        };
        if let Some(name) = operands.get(1) {
            sh.arg0 = name.clone();
            sh.positional = operands[2..].to_vec();
        } else {
            sh.arg0 = arg0;
        }
        sh.opts.command_mode = true;
        Input::Command(text.clone())
    } else if force_stdin || operands.is_empty() {
        // bash's rule: interactive with no operands and a terminal on
        // stdin and stderr, or with -i.
        if !sh.opts.interactive && sys::is_tty(0) && sys::is_tty(2) {
            sh.opts.interactive = true;
        }
        sh.positional = operands.to_vec();
        sh.opts.stdin_mode = true;
        sh.top_file = std::rc::Rc::from(&b"main"[..]);
        Input::Stdin
    } else {
        sh.arg0 = operands[0].clone();
        sh.positional = operands[1..].to_vec();
        // A script runs in bash's `main` frame, named after its file.
        sh.frames.push(shell::Frame {
            name: b"main".to_vec(),
            file: std::rc::Rc::from(operands[0].as_slice()),
            call_line: 0,
            saved_opts: None,
            args: None,
        });
        Input::File(operands[0].clone())
    };
    if sh.opts.interactive {
        interactive::defaults(&mut sh);
    }
    // `$_` starts as the shell's own name.
    sh.last_arg = sh.arg0.clone();
    if login && profiles {
        read_profiles(&mut sh);
    }
    // An interactive shell reads its rc file first (interactive::start).
    if restricted && !(matches!(input, Input::Stdin) && sh.opts.interactive) {
        sh.make_restricted(true);
    }
    let status = match input {
        Input::Command(text) => {
            let mut src = parse::Text;
            sh.run_source(&text, &mut src, true)
        }
        Input::File(path) => {
            use std::os::unix::ffi::OsStrExt;
            match std::fs::read(std::ffi::OsStr::from_bytes(&path)) {
                Ok(text) => {
                    let mut src = parse::Text;
                    sh.run_source(&text, &mut src, false)
                }
                Err(e) => {
                    let m = e.to_string();
                    let msg = format!(
                        "{}: {}: {}\n",
                        sh.name,
                        String::from_utf8_lossy(&path),
                        m.split(" (os error").next().unwrap_or_default()
                    );
                    let _ = sys::write_all(2, msg.as_bytes());
                    return if e.kind() == std::io::ErrorKind::NotFound {
                        127
                    } else {
                        126
                    };
                }
            }
        }
        Input::Stdin if sh.opts.interactive => {
            sh.top_file = std::rc::Rc::from(&b"main"[..]);
            return interactive::run(sh, rc, login, monitor);
        }
        Input::Stdin => {
            let mut src = input::FdLines::new(0);
            sh.run_source(b"", &mut src, false)
        }
    };
    let status = sh.finish(status);
    sh.perf_report();
    // The process ends now: freeing every variable, function and array
    // one by one would only cost time (a twentieth of sourcing a 20k-line
    // rc file). No part of the shell needs its drop to run: output is
    // unbuffered and descriptors close with the process.
    std::mem::forget(sh);
    status
}

/// A login shell reads `/etc/profile`, then the first of
/// `~/.bash_profile`, `~/.bash_login` and `~/.profile` that exists, as bash
/// does (rush runs bash's start-up files). `--noprofile` skips them.
fn read_profiles(sh: &mut Shell) {
    use std::os::unix::ffi::OsStrExt;
    let home = sh.vars.get(b"HOME").map(<[u8]>::to_vec);
    let mut files = vec![b"/etc/profile".to_vec()];
    if let Some(home) = home {
        let user = [&b".bash_profile"[..], b".bash_login", b".profile"]
            .iter()
            .map(|f| [home.as_slice(), b"/", f].concat())
            .find(|p| std::path::Path::new(std::ffi::OsStr::from_bytes(p)).is_file());
        files.extend(user);
    }
    for f in files {
        if let Ok(text) = std::fs::read(std::ffi::OsStr::from_bytes(&f)) {
            let _ = builtins::source_text(sh, &text, None);
        }
    }
}

fn version() -> String {
    format!(
        "rush {} (bash {} compatible)\n",
        env!("CARGO_PKG_VERSION"),
        shell::BASH_VERSION
    )
}

/// Reports a bad invocation as bash does (the message, then the usage) and
/// returns the status to exit with.
fn usage_error(msg: &str) -> i32 {
    let _ = sys::write_all(2, format!("rush: {msg}\n{USAGE}").as_bytes());
    2
}

const USAGE: &str =
    "Usage: rush [option ...] [-c command [name [arg ...]] | -s [arg ...] | file [arg ...]]\n";

const HELP: &str = "\
Usage: rush [option ...] [-c command [name [arg ...]] | -s [arg ...] | file [arg ...]]

rush runs the command string (-c), the script file, or the commands on
standard input. Options:

  -c               read commands from the first operand
  -s               read commands from standard input (operands are $1 …)
  -i               interactive (also with no operands and a terminal on
                   stdin and stderr): line editing, history, completion,
                   job control
  -l, --login      a login shell: read /etc/profile, then the first of
                   ~/.bash_profile, ~/.bash_login and ~/.profile
  -abCeEfhnTuvx    set's single-letter options (+ turns them off)
  -o NAME, +o NAME set's long options (set -o lists them)
  -O NAME, +O NAME shopt options (shopt lists them)
  -r, --restricted a restricted shell (as rbash) once the start-up files
                   have run: no cd, no / in command names, no output
                   redirections, no exec; set +r cannot undo it
  --noprofile      do not read the login files
  --norc           an interactive shell reads no ~/.rushrc
  --rcfile FILE, --init-file FILE
                   an interactive shell reads FILE instead of ~/.rushrc
  --noediting      accepted, as bash
  --posix          set -o posix
  --verbose        set -v
  --version        print the version
  --help           print this help
";
