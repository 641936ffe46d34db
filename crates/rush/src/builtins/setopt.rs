//! `set` and `shopt`: the shell's options by letter and by name, and
//! `$SHELLOPTS` and `$BASHOPTS`.

use super::{Args, emit, lossy};
use crate::options::{OPTION_NAMES, SHOPTS};
use crate::quote::{array_literal, quote_value};
use crate::shell::{Exec, Shell};
use crate::vars::Value;

pub(super) fn set(sh: &mut Shell, argv: Args<'_>) -> Exec {
    if argv.len() == 1 {
        let mut out = Vec::new();
        for (k, v) in sh.listed_vars() {
            match v.value {
                // Declared and never assigned: not shown (bash).
                Some(_) if v.declared_only => {}
                Some(Value::Str(val)) => {
                    out.extend_from_slice(&k);
                    out.push(b'=');
                    out.extend_from_slice(&quote_value(&val));
                    out.push(b'\n');
                }
                Some(val) => {
                    out.extend_from_slice(&k);
                    out.push(b'=');
                    out.extend_from_slice(&array_literal(&val));
                    out.push(b'\n');
                }
                None => {}
            }
        }
        return Ok(emit(sh, "set", &out));
    }
    let mut i = 1;
    while i < argv.len() {
        let a = &argv[i];
        if a == b"--" {
            set_positional(sh, argv[i + 1..].to_vec());
            return Ok(0);
        }
        // `-`: the end of the options, and -x and -v off; with nothing
        // after it the positional parameters stay (bash).
        if a == b"-" {
            sh.set_option("xtrace", false);
            sh.set_option("verbose", false);
            if i + 1 < argv.len() {
                set_positional(sh, argv[i + 1..].to_vec());
            }
            return Ok(0);
        }
        // A lone `+` is an empty flag cluster: ignored.
        if a == b"+" {
            i += 1;
            continue;
        }
        if a.len() < 2 || !(a[0] == b'-' || a[0] == b'+') {
            break;
        }
        let on = a[0] == b'-';
        // A cluster such as `-euo pipefail`: each `o` takes the next
        // argument as an option name (or, with none left, lists them).
        let mut next = i + 1;
        for &c in &a[1..] {
            if c == b'o' {
                let Some(name) = argv.get(next) else {
                    print_options(sh, on);
                    return Ok(0);
                };
                next += 1;
                if !sh.set_option(&lossy(name), on) {
                    sh.error(&format!("set: {}: invalid option name", lossy(name)));
                    return Ok(2);
                }
            } else if let Err(c) = sh.set_flags(&[a[0], c]) {
                sh.error(&format!("set: {}{c}: invalid option", a[0] as char));
                sh.err_out(
                    b"set: usage: set [-abefhkmnptuvxBCEHPT] [-o option-name] [--] [-] [arg ...]\n",
                );
                // `set +r` in a restricted shell is refused after the
                // options are read, with status 1 (bash).
                return Ok(if c == 'r' { 1 } else { 2 });
            }
        }
        i = next;
    }
    if i < argv.len() {
        set_positional(sh, argv[i..].to_vec());
    }
    Ok(0)
}

/// `set`'s new positional parameters; outside a function this is noted,
/// so that a sourced file's `set --` outlasts the arguments it was given.
pub(super) fn set_positional(sh: &mut Shell, args: Vec<Vec<u8>>) {
    sh.positional = args;
    if sh.func_depth == 0 {
        sh.set_changed_args = true;
    }
}

pub(super) fn print_options(sh: &mut Shell, long: bool) {
    let mut out = String::new();
    for (name, _) in OPTION_NAMES {
        let on = sh.opts.get(name).unwrap_or(false);
        if long {
            out.push_str(&format!("{name:<15}\t{}\n", if on { "on" } else { "off" }));
        } else {
            out.push_str(&format!("set {}o {name}\n", if on { '-' } else { '+' }));
        }
    }
    emit(sh, "set", out.as_bytes());
}

pub(super) fn shopt(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let mut mode = None;
    let mut print = false;
    let mut quiet = false;
    let mut set_o = false;
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        if a.len() < 2 || a[0] != b'-' {
            break;
        }
        for &c in &a[1..] {
            match c {
                b's' | b'u' if mode == Some(c == b'u') => {
                    sh.error("shopt: cannot set and unset shell options simultaneously");
                    return Ok(1);
                }
                b's' => mode = Some(true),
                b'u' => mode = Some(false),
                b'p' => print = true,
                b'q' => quiet = true,
                b'o' => set_o = true,
                _ => {
                    sh.error(&format!("shopt: -{}: invalid option", c as char));
                    sh.err_out(b"shopt: usage: shopt [-pqsu] [-o] [optname ...]\n");
                    return Ok(2);
                }
            }
        }
        i += 1;
    }
    let names: Vec<String> = argv[i..].iter().map(|a| lossy(a)).collect();
    let mut status = 0;
    if set_o {
        let listed: Vec<String> = if names.is_empty() {
            OPTION_NAMES.iter().map(|(n, _)| (*n).to_string()).collect()
        } else {
            names.clone()
        };
        let mut out = String::new();
        for n in &listed {
            match mode {
                // `shopt -s -o` alone lists the options that are on, `-u`
                // those that are off.
                Some(on) if names.is_empty() => {
                    if sh.opts.get(n) == Some(on) {
                        if print {
                            out.push_str(&format!("set {}o {n}\n", if on { '-' } else { '+' }));
                        } else if !quiet {
                            out.push_str(&format!("{n:<15}\t{}\n", if on { "on" } else { "off" }));
                        }
                    }
                }
                Some(on) => {
                    if !sh.set_option(n, on) {
                        sh.error(&format!("shopt: {n}: invalid option name"));
                        status = 1;
                    }
                }
                None => match sh.opts.get(n) {
                    // `shopt -po noglob` prints what restores it (scripts
                    // save it and run it later); `shopt -o` a table.
                    Some(on) => {
                        if !on {
                            status = 1;
                        }
                        if print {
                            out.push_str(&format!("set {}o {n}\n", if on { '-' } else { '+' }));
                        } else if !quiet {
                            out.push_str(&format!("{n:<15}\t{}\n", if on { "on" } else { "off" }));
                        }
                    }
                    None => {
                        sh.error(&format!("shopt: {n}: invalid option name"));
                        status = 1;
                    }
                },
            }
        }
        if !out.is_empty() {
            emit(sh, "shopt", out.as_bytes());
        }
        return Ok(status);
    }
    let known = |n: &str| SHOPTS.iter().any(|(k, _)| *k == n);
    match mode {
        Some(on) => {
            for n in &names {
                if !sh.set_shopt(n, on) {
                    sh.error(&format!("shopt: {n}: invalid shell option name"));
                    status = 1;
                }
            }
            if names.is_empty() || print {
                let list = list_shopts(sh, &[], Some(on), print);
                emit(sh, "shopt", &list);
            }
        }
        None => {
            for n in &names {
                if !known(n) {
                    sh.error(&format!("shopt: {n}: invalid shell option name"));
                    status = 1;
                } else if !sh.shopts.on(n) {
                    status = 1;
                }
            }
            if !quiet {
                let list = list_shopts(sh, &names, None, print);
                emit(sh, "shopt", &list);
            }
        }
    }
    Ok(status)
}

pub(super) fn list_shopts(
    sh: &Shell,
    names: &[String],
    only: Option<bool>,
    as_commands: bool,
) -> Vec<u8> {
    let mut out = String::new();
    // Named options in the order named; all of them in the table's.
    let named: Vec<&str> = names
        .iter()
        .filter_map(|x| SHOPTS.iter().find(|(n, _)| n == x).map(|(n, _)| *n))
        .collect();
    let all: Vec<&str> = SHOPTS.iter().map(|(n, _)| *n).collect();
    for n in if names.is_empty() { &all } else { &named } {
        let on = sh.shopts.on(n);
        if only.is_some_and(|o| o != on) {
            continue;
        }
        if as_commands {
            out.push_str(&format!("shopt {} {n}\n", if on { "-s" } else { "-u" }));
        } else {
            out.push_str(&format!("{n:<15}\t{}\n", if on { "on" } else { "off" }));
        }
    }
    out.into_bytes()
}
