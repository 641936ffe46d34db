//! rush: a POSIX shell with the bash extensions agents write, built for
//! per-command latency.
//!
//! Layers, each using only those above it:
//! - [`ast`]: the syntax tree.
//! - [`parse`]: bytes to syntax tree, one complete command at a time.
//! - [`arith`], [`brace`], [`pattern`], [`glob`], [`regex`], [`escape`]: the small
//!   languages inside words.
//! - [`expand`]: words to fields.
//! - [`shell`]: state and execution; [`builtins`] (with [`printf`], [`read`]
//!   and [`test`]) run inside it.
//! - [`sys`]: processes, descriptors and signals.
//! - [`input`], [`perf`]: where commands come from, and phase timing.

pub mod arith;
pub mod ast;
pub mod brace;
pub mod builtins;
pub mod escape;
pub mod expand;
pub mod glob;
pub mod input;
pub mod parse;
pub mod pattern;
pub mod perf;
pub mod printf;
pub mod read;
pub mod regex;
pub mod shell;
pub mod sys;
pub mod test;
pub mod vars;

use shell::Shell;
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
    builtins::init_shopts(&mut sh);
    let mut command = None;
    let mut force_stdin = false;
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
        let on = a[0] == b'-';
        if a == b"--help" {
            let _ = sys::write_all(1, USAGE.as_bytes());
            return 0;
        }
        if a == b"--version" {
            let _ = sys::write_all(
                1,
                format!("rush {}\n", env!("CARGO_PKG_VERSION")).as_bytes(),
            );
            return 0;
        }
        for &c in &a[1..] {
            match c {
                b'c' if on => command = Some(()),
                b's' if on => force_stdin = true,
                b'i' => sh.opts.interactive = on,
                b'o' => {
                    i += 1;
                    let Some(name) = args.get(i) else {
                        let _ = sys::write_all(2, b"rush: -o: option requires an argument\n");
                        return 2;
                    };
                    if !builtins::set_option(&mut sh, &String::from_utf8_lossy(name), on) {
                        let msg = format!(
                            "rush: {}: invalid option name\n",
                            String::from_utf8_lossy(name)
                        );
                        let _ = sys::write_all(2, msg.as_bytes());
                        return 2;
                    }
                }
                c => {
                    if builtins::set_flags(&mut sh, &[a[0], c]).is_err() {
                        let msg = format!(
                            "rush: {}{}: invalid option\n{USAGE}",
                            a[0] as char, c as char
                        );
                        let _ = sys::write_all(2, msg.as_bytes());
                        return 2;
                    }
                }
            }
        }
        i += 1;
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
        sh.positional = operands.to_vec();
        sh.opts.stdin_mode = true;
        Input::Stdin
    } else {
        sh.arg0 = operands[0].clone();
        sh.positional = operands[1..].to_vec();
        Input::File(operands[0].clone())
    };
    // `$_` starts as the shell's own name.
    sh.last_arg = sh.arg0.clone();
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
                        "rush: {}: {}\n",
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
        Input::Stdin => {
            let mut src = input::FdLines::new(0);
            sh.run_source(b"", &mut src, false)
        }
    };
    let status = sh.finish(status);
    sh.perf_report();
    status
}

const USAGE: &str = "Usage: rush [-abCefhmnuvx] [-o option] [-c command [name [arg ...]] | -s [arg ...] | file [arg ...]]\n";
