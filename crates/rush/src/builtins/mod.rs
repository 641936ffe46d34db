//! Builtin commands. Each takes the shell and its arguments (argv[0] is the
//! name) and returns a status, or a [`Flow`] for `break`, `return`, `exit`.

use crate::shell::{Exec, Flow, OPTION_NAMES, Options, Shell};
use crate::sys;
use crate::vars::Value;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

mod bind;
mod calls;
mod complete;
mod dirs;
pub mod history;
mod jobs;
mod session;

pub use complete::{CompSpec, generate as completions};
pub use dirs::stack as dir_stack;

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

/// Reserved words, for `type` and `command -v`.
pub const KEYWORDS: &[&[u8]] = &[
    b"if",
    b"then",
    b"else",
    b"elif",
    b"fi",
    b"case",
    b"esac",
    b"for",
    b"select",
    b"coproc",
    b"while",
    b"until",
    b"do",
    b"done",
    b"in",
    b"{",
    b"}",
    b"!",
    b"[[",
    b"]]",
    b"function",
    b"time",
];

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
        b"printf" => crate::printf::printf(sh, argv),
        b"pwd" => pwd(sh, argv),
        b"read" => crate::read::read(sh, argv),
        b"mapfile" | b"readarray" => crate::read::mapfile(sh, argv),
        b"return" => return_(sh, argv),
        b"set" => set(sh, argv),
        b"shift" => shift(sh, argv),
        b"shopt" => shopt(sh, argv),
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

pub fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
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

/// A variable's attribute letters, in bash's order (`declare -p`,
/// `${x@a}`, `${x@A}`).
pub fn attr_flags(v: &crate::vars::Var) -> String {
    let mut flags = String::new();
    match v.value {
        Some(Value::Indexed(_)) => flags.push('a'),
        Some(Value::Assoc(_)) => flags.push('A'),
        _ => {}
    }
    for (on, c) in [
        (v.integer, 'i'),
        (v.nameref, 'n'),
        (v.readonly, 'r'),
        (v.exported, 'x'),
        (v.case == Some(crate::vars::Case::Capitalize), 'c'),
        (v.case == Some(crate::vars::Case::Lower), 'l'),
        (v.case == Some(crate::vars::Case::Upper), 'u'),
    ] {
        if on {
            flags.push(c);
        }
    }
    flags
}

/// `declare -x name="value"`, as bash prints variables for `declare -p`,
/// `export -p` and `readonly -p`.
pub fn declare_line(name: &[u8], v: &crate::vars::Var) -> Vec<u8> {
    let mut flags = attr_flags(v);
    if flags.is_empty() {
        flags.push('-');
    }
    let mut out = format!("declare -{flags} ").into_bytes();
    out.extend_from_slice(name);
    match &v.value {
        Some(Value::Str(s)) => {
            out.push(b'=');
            out.extend_from_slice(&double_quote(s));
        }
        // `declare -a x` and nothing assigned: no `=()` (bash).
        Some(arr) if v.declared_only && arr.keys().is_empty() => {}
        Some(arr) => {
            out.push(b'=');
            out.extend_from_slice(&array_literal(arr));
        }
        None => {}
    }
    out.push(b'\n');
    out
}

/// The variables that have every attribute in `wanted` (letters of
/// [`attr_flags`]), each as a line of `declare -p`; in POSIX mode, for
/// `readonly` and `export` (`posix_as`), as that builtin's command
/// (`readonly -a c=(…)`, `export X="1"`), as bash lists them.
fn list_vars(sh: &Shell, wanted: &str, posix_as: Option<&str>) -> Vec<u8> {
    let mut out = Vec::new();
    for (k, v) in sh.listed_vars() {
        let flags = attr_flags(&v);
        if !wanted.chars().all(|c| flags.contains(c)) {
            continue;
        }
        let line = declare_line(&k, &v);
        match posix_as.filter(|_| sh.opts.posix) {
            Some(builtin) => {
                let rest = line.splitn(3, |&c| c == b' ').nth(2).unwrap_or_default();
                out.extend_from_slice(builtin.as_bytes());
                out.push(b' ');
                if let Some(kind) = flags.chars().find(|c| matches!(c, 'a' | 'A')) {
                    out.extend_from_slice(format!("-{kind} ").as_bytes());
                }
                out.extend_from_slice(rest);
            }
            None => out.extend_from_slice(&line),
        }
    }
    out
}

/// `"value"` with `"`, `\`, `$` and `` ` `` escaped.
pub fn double_quote(s: &[u8]) -> Vec<u8> {
    if crate::escape::needs_ansi_c(s) {
        return crate::escape::ansi_c_quote(s);
    }
    let mut out = vec![b'"'];
    for &c in s {
        if matches!(c, b'"' | b'\\' | b'$' | b'`') {
            out.push(b'\\');
        }
        out.push(c);
    }
    out.push(b'"');
    out
}

/// Whether an associative array's key must be quoted to be read back, as
/// bash decides: empty, or with a blank or a character special to the
/// shell.
pub fn key_needs_quotes(k: &[u8]) -> bool {
    k.is_empty()
        || crate::escape::needs_ansi_c(k)
        || k.iter().any(|c| {
            matches!(
                c,
                b' ' | b'\t'
                    | b'\n'
                    | b'\''
                    | b'"'
                    | b'\\'
                    | b'|'
                    | b'&'
                    | b';'
                    | b'('
                    | b')'
                    | b'<'
                    | b'>'
                    | b'!'
                    | b'{'
                    | b'}'
                    | b'*'
                    | b'['
                    | b'?'
                    | b']'
                    | b'^'
                    | b'$'
                    | b'`'
            )
        })
        || matches!(k.first(), Some(b'#'))
        // A tilde where an assignment would expand it.
        || k.iter()
            .enumerate()
            .any(|(i, &c)| c == b'~' && (i == 0 || matches!(k[i - 1], b'=' | b':')))
        // `@` or `*` alone would name every element.
        || matches!(k, b"@" | b"*")
}

/// `([0]="a" [1]="b")`
fn array_literal(v: &Value) -> Vec<u8> {
    let mut out = vec![b'('];
    let keys = v.keys();
    let vals = v.elements();
    for (i, (k, val)) in keys.iter().zip(&vals).enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        out.push(b'[');
        if matches!(v, Value::Assoc(_)) && key_needs_quotes(k) {
            out.extend_from_slice(&double_quote(k));
        } else {
            out.extend_from_slice(k);
        }
        out.extend_from_slice(b"]=");
        out.extend_from_slice(&double_quote(val));
    }
    if matches!(v, Value::Assoc(_)) && !vals.is_empty() {
        out.push(b' ');
    }
    out.push(b')');
    out
}

/// Whether a function of this name may go to the environment: not a
/// path, no `=` (bash).
fn exportable_function_name(name: &[u8]) -> bool {
    !name.contains(&b'/') && !name.contains(&b'=')
}

/// Quotes a value for `set` output as bash does: `$'…'` for control
/// characters, single quotes when it holds a character special to the
/// shell (`~` only where it would expand, `#` only first), `\'` for a
/// lone single quote, else bare.
pub fn quote_value(v: &[u8]) -> Vec<u8> {
    let special = v.iter().enumerate().any(|(i, &c)| match c {
        b' ' | b'\t' | b'\n' | b'\'' | b'"' | b'\\' | b'|' | b'&' | b';' | b'(' | b')' | b'<'
        | b'>' | b'!' | b'{' | b'}' | b'*' | b'[' | b'?' | b']' | b'^' | b'$' | b'`' => true,
        b'~' => i == 0 || matches!(v[i - 1], b'=' | b':'),
        b'#' => i == 0,
        _ => false,
    });
    if v == b"'" {
        return b"\\'".to_vec();
    }
    if special || crate::escape::needs_ansi_c(v) {
        return quote_always(v);
    }
    v.to_vec()
}

/// Single quotes around any value (`${x@Q}`), or `$'…'` when it holds a
/// control character, as bash writes it.
pub fn quote_always(v: &[u8]) -> Vec<u8> {
    if crate::escape::needs_ansi_c(v) {
        return crate::escape::ansi_c_quote(v);
    }
    single_quote(v)
}

pub use crate::escape::single_quote;

/// Quoting for `set -x` lines: as `set` quotes, and `''` for an empty
/// word (bash).
pub fn quote_for_trace(v: &[u8]) -> Vec<u8> {
    if v.is_empty() {
        return b"''".to_vec();
    }
    quote_value(v)
}

// ---- control -------------------------------------------------------------

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
    if shopt_on(sh, "execfail") || sh.opts.interactive {
        Ok(status)
    } else {
        sh.exit_builtin = true;
        Err(Flow::Exit(status))
    }
}

// ---- variables -----------------------------------------------------------

fn split_name_value(a: &[u8]) -> (&[u8], Option<&[u8]>) {
    match a.iter().position(|&c| c == b'=') {
        Some(i) => (&a[..i], Some(&a[i + 1..])),
        None => (a, None),
    }
}

fn export(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let usage = "export: usage: export [-fn] [name[=value] ...] or export -p";
    // `-a`/`-A` (bash takes them though its usage does not say): a
    // `name='(…)'` argument is an array's elements.
    let Ok((flags, i)) = option_flags(sh, argv, b"fnpaA", usage) else {
        return Ok(2);
    };
    let unexport = flags.contains(&b'n');
    let print = flags.contains(&b'p');
    let functions = flags.contains(&b'f');
    let array: Vec<u8> = flags
        .iter()
        .copied()
        .filter(|c| matches!(c, b'a' | b'A'))
        .collect();
    if functions {
        // `export -f name…`: the functions go to children as bash's
        // `BASH_FUNC_name%%` variables.
        let mut status = 0;
        for name in &argv[i..] {
            if !sh.functions.contains_key(name.as_slice()) {
                sh.error(&format!("export: {}: not a function", lossy(name)));
                status = 1;
            } else if !unexport && !exportable_function_name(name) {
                sh.error(&format!("export: {}: cannot export", lossy(name)));
                status = 1;
            } else {
                sh.export_function(name, !unexport);
            }
        }
        return Ok(status);
    }
    if i >= argv.len() {
        let _ = print;
        let wanted: String = std::iter::once('x')
            .chain(array.iter().map(|&c| c as char))
            .collect();
        let out = list_vars(sh, &wanted, Some("export"));
        return Ok(emit(sh, "export", &out));
    }
    let (rest, status) = if array.is_empty() {
        (std::borrow::Cow::Borrowed(&argv[i..]), 0)
    } else {
        let (rest, status) = quoted_arrays(sh, "export", &argv[i..], &array, unexport)?;
        (std::borrow::Cow::Owned(rest), status)
    };
    for a in rest.iter() {
        sh.materialize(split_name_value(a).0);
    }
    let status = status.max(each_name_value(sh, "export", &rest, |vars, name, value| {
        if unexport {
            vars.unexport(name);
            Ok(())
        } else {
            vars.export(name, value)
        }
    }));
    Ok(status)
}

/// A `name='(…)'` argument of `declare`, `local`, `readonly` or `export`
/// with `-a` or `-A` (or, for `declare`, to an array) is a compound
/// assignment: bash reads its value again as `name=(…)` and expands it.
fn quoted_compound(name: &[u8], value: &[u8]) -> Option<crate::ast::Assign> {
    if value.len() < 2 || value[0] != b'(' || value.last() != Some(&b')') {
        return None;
    }
    let text = [name, b"=", value].concat();
    let list = crate::parse::parse(&text, Default::default()).ok()?;
    let [item] = list.items.as_slice() else {
        return None;
    };
    let [crate::ast::Command::Simple(s)] = item.and_or.first.commands.as_slice() else {
        return None;
    };
    match s.assigns.as_slice() {
        [a] if a.array.is_some() && s.words.is_empty() => Some(a.clone()),
        _ => None,
    }
}

/// For `readonly -a` and `export -a`: assigns each `name='(…)'` argument
/// as an array (`flags` holds the `a`/`A` given, none: no such
/// arguments) and gives it the builtin's attribute unless `plain`. The
/// other arguments, for the usual path, and the status so far.
fn quoted_arrays(
    sh: &mut Shell,
    builtin: &str,
    args: &[Vec<u8>],
    flags: &[u8],
    plain: bool,
) -> Result<(Vec<Vec<u8>>, i32), Flow> {
    let mut rest = Vec::new();
    let mut status = 0;
    for a in args {
        let (name, value) = split_name_value(a);
        let compound = (!flags.is_empty() && crate::parse::is_name(name))
            .then(|| value.and_then(|v| quoted_compound(name, v)))
            .flatten();
        let Some(assign) = compound else {
            rest.push(a.clone());
            continue;
        };
        if sh.vars.is_readonly(name) {
            sh.error(&format!("{builtin}: {}: readonly variable", lossy(name)));
            status = 1;
            continue;
        }
        sh.declare_array(&assign, flags, false)?;
        if !plain {
            rest.push(name.to_vec());
        }
    }
    Ok((rest, status))
}

/// For `export` and `readonly`: applies `f` to each `name[=value]`
/// argument, reporting bad names and readonly errors; the status.
fn each_name_value(
    sh: &mut Shell,
    builtin: &str,
    args: &[Vec<u8>],
    mut f: impl FnMut(
        &mut crate::vars::Vars,
        &[u8],
        Option<Vec<u8>>,
    ) -> Result<(), crate::vars::ReadOnly>,
) -> i32 {
    let mut status = 0;
    for a in args {
        let (name, value) = split_name_value(a);
        if !crate::parse::is_name(name) {
            sh.error(&format!(
                "{builtin}: `{}': not a valid identifier",
                lossy(a)
            ));
            status = 1;
            continue;
        }
        if let Err(e) = f(&mut sh.vars, name, value.map(<[u8]>::to_vec)) {
            sh.error(&e.to_string());
            status = 1;
        }
    }
    status
}

fn readonly(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let mut array = Vec::new();
    let mut funcs = false;
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        match a.as_slice() {
            b"-p" => {}
            b"-f" => funcs = true,
            o if o.len() > 1 && o[0] == b'-' && !matches!(o, b"-a" | b"-A") => {
                let c = o[1..]
                    .iter()
                    .find(|&&c| !matches!(c, b'a' | b'A' | b'f' | b'p' | b'n'))
                    .copied();
                // `-n` is accepted and changes nothing (bash: it neither
                // sets nor removes the attribute).
                if o.contains(&b'n') && c.is_none() {
                    return Ok(0);
                }
                if let Some(c) = c {
                    sh.error(&format!("readonly: -{}: invalid option", c as char));
                    sh.usage("readonly: usage: readonly [-aAf] [name[=value] ...] or readonly -p");
                    return Ok(2);
                }
                for &c in &o[1..] {
                    match c {
                        b'f' => funcs = true,
                        b'a' | b'A' => array.push(c),
                        _ => {}
                    }
                }
            }
            b"-a" => array.push(b'a'),
            b"-A" => array.push(b'A'),
            b"--" => {
                i += 1;
                break;
            }
            _ => break,
        }
        i += 1;
    }
    // `readonly -f name…`: the functions become read-only; alone, the
    // read-only functions are listed.
    if funcs {
        return Ok(readonly_functions(sh, &argv[i..], "readonly"));
    }
    if i >= argv.len() {
        let wanted: String = std::iter::once('r')
            .chain(array.iter().map(|&c| c as char))
            .collect();
        let out = list_vars(sh, &wanted, Some("readonly"));
        return Ok(emit(sh, "readonly", &out));
    }
    let (rest, status) = if array.is_empty() {
        (std::borrow::Cow::Borrowed(&argv[i..]), 0)
    } else {
        let (rest, status) = quoted_arrays(sh, "readonly", &argv[i..], &array, false)?;
        (std::borrow::Cow::Owned(rest), status)
    };
    for a in rest.iter() {
        sh.materialize(split_name_value(a).0);
    }
    let status = status.max(each_name_value(
        sh,
        "readonly",
        &rest,
        |vars, name, value| vars.readonly(name, value),
    ));
    Ok(status)
}

/// The bash version behaviour asked for with `BASH_COMPAT` (`51` or
/// `5.1`), or this one's (52).
fn compat_level(sh: &Shell) -> u32 {
    let Some(v) = sh.vars.get(b"BASH_COMPAT") else {
        return 52;
    };
    let digits: String = String::from_utf8_lossy(v)
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    digits
        .parse()
        .ok()
        .filter(|&n| (31..=52).contains(&n))
        .unwrap_or(52)
}

fn unset(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let mut functions = false;
    let mut vars_only = false;
    // `unset -n`: a nameref itself, not what it names.
    let mut refs = false;
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        match a.as_slice() {
            b"--" => {
                i += 1;
                break;
            }
            o if o.len() > 1 && o[0] == b'-' => {
                for &c in &o[1..] {
                    match c {
                        b'f' => functions = true,
                        b'v' => vars_only = true,
                        b'n' => refs = true,
                        c => {
                            sh.error(&format!("unset: -{}: invalid option", c as char));
                            sh.usage("unset: usage: unset [-f] [-v] [-n] [name ...]");
                            return Ok(2);
                        }
                    }
                }
            }
            _ => break,
        }
        i += 1;
    }
    if functions && vars_only {
        sh.error("unset: cannot simultaneously unset a function and a variable");
        return Ok(1);
    }
    let mut status = 0;
    let literal = std::mem::take(&mut sh.literal_args);
    for name in &argv[i..] {
        let is_function = functions || sh.vars.var(name).is_none() && !vars_only;
        if is_function && sh.readonly_functions.contains(name.as_slice()) {
            sh.error(&format!(
                "unset: {}: cannot unset: readonly function",
                lossy(name)
            ));
            status = 1;
            continue;
        }
        if functions {
            remove_function(sh, name);
            continue;
        }
        // `unset 'a[i]'`
        if let Some(open) = name.iter().position(|&c| c == b'[')
            && name.ends_with(b"]")
            && crate::parse::is_name(&name[..open])
        {
            let (n, sub) = (&name[..open], &name[open + 1..name.len() - 1]);
            let all = matches!(sub, b"*" | b"@");
            // bash: nothing to do (and nothing evaluated) for a variable
            // that is not set; `*` or `@` of an indexed array removes every
            // element, of a string is refused; a string's element 0 is
            // the variable.
            match sh.vars.value(n) {
                None => continue,
                Some(Value::Indexed(_)) if all => {
                    // Before bash 5.2 (`BASH_COMPAT=51`) that unset the
                    // array; now it empties it.
                    let r = if compat_level(sh) <= 51 {
                        sh.vars.unset(n)
                    } else {
                        sh.vars.set_value(n, Value::Indexed(Default::default()))
                    };
                    if let Err(e) = r {
                        sh.error(&format!(
                            "unset: {}: cannot unset: readonly variable",
                            lossy(&e.0)
                        ));
                        status = 1;
                    }
                    continue;
                }
                Some(Value::Str(_)) if all => {
                    sh.error(&format!("unset: {}: not an array variable", lossy(n)));
                    status = 1;
                    continue;
                }
                _ => {}
            }
            let sub_text = sub;
            // Written as an element, or with `assoc_expand_once` for a
            // key: the subscript as it is.
            let sub = if literal.contains(name)
                || sh.keys_as_written() && matches!(sh.vars.value(n), Some(Value::Assoc(_)))
            {
                sub.to_vec()
            } else {
                sh.runtime_subscript(n, sub)?
            };
            let key = sh.array_key(n, &sub)?;
            if matches!(sh.vars.value(n), Some(Value::Str(_))) {
                if key != crate::vars::Key::Index(0) {
                    sh.error(&format!("unset: {}: not an array variable", lossy(n)));
                    status = 1;
                } else if let Err(e) = sh.vars.unset(n) {
                    sh.error(&format!(
                        "unset: {}: cannot unset: readonly variable",
                        lossy(&e.0)
                    ));
                    status = 1;
                }
                continue;
            }
            if key.before_start() {
                sh.error(&format!(
                    "unset: [{}]: bad array subscript",
                    lossy(sub_text)
                ));
                status = 1;
                continue;
            }
            if let Err(e) = sh.vars.unset_elem(n, &key) {
                sh.error(&format!(
                    "unset: {}: cannot unset: readonly variable",
                    lossy(&e.0)
                ));
                status = 1;
            }
            continue;
        }
        if !crate::parse::is_name(name) {
            // Without `-v` it may name a function (`unset /bin/sh`, bash).
            if !vars_only {
                remove_function(sh, name);
                continue;
            }
            sh.error(&format!("unset: `{}': not a valid identifier", lossy(name)));
            status = 1;
            continue;
        }
        if sh.vars.var(name).is_none() && !vars_only && remove_function(sh, name) {
            continue;
        }
        let r = if refs {
            sh.vars.unset_itself(name)
        } else {
            sh.vars.unset(name)
        };
        // The function's own prefix binding (`v=t f`) stays exported when
        // unset, as bash's temporary environment does.
        if r.is_ok() && sh.is_prefix_bound(name) {
            let _ = sh.vars.export(name, None);
        }
        // Unsetting POSIXLY_CORRECT leaves POSIX mode (bash).
        if r.is_ok() && name == b"POSIXLY_CORRECT" {
            sh.opts.posix = false;
        }
        // Unsetting IGNOREEOF turns ignoreeof off (bash).
        if r.is_ok() && name == b"IGNOREEOF" {
            sh.opts.ignoreeof = false;
        }
        // Unsetting GLOBIGNORE turns dotglob off (bash).
        if r.is_ok() && name == b"GLOBIGNORE" {
            set_shopt(sh, "dotglob", false);
        }
        if let Err(e) = r {
            sh.error(&format!(
                "unset: {}: cannot unset: readonly variable",
                lossy(&e.0)
            ));
            status = 1;
        }
    }
    Ok(status)
}

/// Removes the function `name` with its attributes (exported, traced), so
/// that children no longer see it and a new definition starts plain.
/// Whether there was one.
/// `readonly -f names` / `declare -fr names`: those functions become
/// read-only (a name that is no function is an error); with no names, the
/// read-only functions are listed as `declare -fr name`.
fn readonly_functions(sh: &mut Shell, names: &[Vec<u8>], who: &str) -> i32 {
    if names.is_empty() {
        let mut all: Vec<&Vec<u8>> = sh.readonly_functions.iter().collect();
        all.sort();
        let mut out = Vec::new();
        for n in all {
            out.extend_from_slice(b"declare -fr ");
            out.extend_from_slice(n);
            out.push(b'\n');
        }
        return emit(sh, who, &out);
    }
    let mut status = 0;
    for n in names {
        if sh.functions.contains_key(n.as_slice()) {
            sh.readonly_functions.insert(n.clone());
        } else {
            sh.error(&format!("{who}: {}: not a function", lossy(n)));
            status = 1;
        }
    }
    status
}

fn remove_function(sh: &mut Shell, name: &[u8]) -> bool {
    sh.vars.export_function(name, None);
    sh.traced.remove(name);
    sh.functions.remove(name).is_some()
}

fn local(sh: &mut Shell, argv: Args<'_>) -> Exec {
    if !sh.vars.in_function() {
        sh.error("local: can only be used in a function");
        return Ok(1);
    }
    // `local` or `local -p` alone: the function's locals, as `declare -p`
    // writes them (bash).
    if argv[1..].iter().all(|a| a == b"-p") {
        let mut out = Vec::new();
        for (name, v) in sh.vars.locals_sorted() {
            out.extend_from_slice(&declare_line(name, v));
        }
        return Ok(emit(sh, "local", &out));
    }
    // `local -` (bash 4.4): the `set` options come back as they are now
    // when the function returns.
    if argv[1..].iter().any(|a| a == b"-") {
        let opts = sh.opts.clone();
        if let Some(f) = sh.frames.iter_mut().rev().find(|f| f.name != b"source") {
            f.saved_opts.get_or_insert(opts);
        }
        let rest: Vec<Vec<u8>> = argv.iter().filter(|a| *a != b"-").cloned().collect();
        if rest.len() == 1 {
            return Ok(0);
        }
        return declare(sh, &rest);
    }
    // Inside a function, `declare` makes locals, with the same flags.
    declare(sh, argv)
}

fn declare(sh: &mut Shell, argv: Args<'_>) -> Exec {
    // Messages name the builtin as called: declare, typeset or local.
    let who = lossy(&argv[0]);
    let mut export_ = false;
    // `+x`: no longer exported.
    let mut unexport = false;
    let mut readonly_ = false;
    let mut global = false;
    let mut integer = false;
    // `+a`/`+A`: refused for arrays (bash).
    let mut destroy_array = false;
    // `+i`: no longer integer.
    let mut not_integer = false;
    // `-l`/`-u` set a case (`Some(Some(c))`); `+l`/`+u` clear it.
    let mut case: Option<Option<crate::vars::Case>> = None;
    let mut kind = None;
    // `-n` / `+n`: make (or unmake) namerefs.
    let mut nameref: Option<bool> = None;
    let mut print = false;
    // `+r`: refused for what is read-only.
    let mut plus_r = false;
    let mut funcs = false;
    let mut bodies = false;
    // `-t` / `+t`: a function's trace attribute (it sees DEBUG and RETURN
    // traps as with `set -T`).
    let mut trace: Option<bool> = None;
    let mut inherit = false;
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        if a == b"--" {
            i += 1;
            break;
        }
        if a.len() > 1 && (a[0] == b'-' || a[0] == b'+') {
            for &c in &a[1..] {
                match c {
                    b'x' => {
                        export_ = a[0] == b'-';
                        unexport = a[0] == b'+';
                    }
                    b'r' if a[0] == b'+' => plus_r = true,
                    b'r' => readonly_ = true,
                    b'i' => {
                        integer = a[0] == b'-';
                        not_integer = a[0] == b'+';
                    }
                    b'l' | b'u' | b'c' => {
                        case = Some(crate::vars::Case::of_flag(c).filter(|_| a[0] == b'-'));
                    }
                    b'a' | b'A' if a[0] == b'+' => destroy_array = true,
                    b'a' => kind = Some(Value::Indexed(Default::default())),
                    b'A' => kind = Some(Value::Assoc(Default::default())),
                    b'g' => global = true,
                    b'n' => nameref = Some(a[0] == b'-'),
                    b'p' => print = true,
                    b'f' => {
                        funcs = true;
                        bodies = true;
                    }
                    b'F' => funcs = true,
                    b't' => trace = Some(a[0] == b'-'),
                    // `-I`: a new local starts with the value of the name
                    // where the function was called.
                    b'I' => inherit = true,
                    c => {
                        let name = lossy(&argv[0]);
                        sh.error(&format!("{name}: -{}: invalid option", c as char));
                        sh.usage(&format!(
                            "{name}: usage: {name} [-aAfFgiIlnrtux] [name[=value] ...] or {name} -p [-aAfFilnrtux] [name ...]"
                        ));
                        return Ok(2);
                    }
                }
            }
            i += 1;
        } else {
            break;
        }
    }
    // Functions take no value attributes (bash names the one it refuses).
    if funcs {
        let bad = if nameref == Some(true) {
            Some("-n")
        } else if integer {
            Some("-i")
        } else {
            match kind {
                Some(Value::Assoc(_)) => Some("-A"),
                Some(Value::Indexed(_)) => Some("-a"),
                _ => None,
            }
        };
        if let Some(o) = bad {
            sh.error(&format!("{who}: {o}: invalid option"));
            return Ok(1);
        }
        // Nor are they made by an assignment.
        if argv[i..].iter().any(|a| a.contains(&b'=')) {
            sh.error(&format!("{who}: cannot use `-f' to make functions"));
            return Ok(1);
        }
    }
    // `declare -fx name…`: export the functions (bash's `+fx` leaves
    // them exported).
    if funcs && export_ && i < argv.len() {
        let mut status = 0;
        for name in &argv[i..] {
            if sh.functions.contains_key(name.as_slice()) && !exportable_function_name(name) {
                sh.error(&format!("{who}: {}: cannot export", lossy(name)));
                status = 1;
            } else if !sh.export_function(name, true) {
                status = 1;
            }
        }
        return Ok(status);
    }
    // `declare -fr name…`: read-only functions; `declare -f +r` of one is
    // refused.
    if funcs && plus_r && i < argv.len() {
        let mut status = 0;
        for name in &argv[i..] {
            if sh.readonly_functions.contains(name.as_slice()) {
                sh.error(&format!("{who}: {}: readonly function", lossy(name)));
                status = 1;
            }
        }
        return Ok(status);
    }
    if funcs && readonly_ && (i < argv.len() || !bodies) {
        return Ok(readonly_functions(sh, &argv[i..], "declare"));
    }
    // `declare -ft name…`: the attribute, nothing printed.
    if funcs
        && let Some(on) = trace
        && i < argv.len()
    {
        let mut status = 0;
        for name in &argv[i..] {
            if !sh.functions.contains_key(name.as_slice()) {
                status = 1;
            } else if on {
                sh.traced.insert(name.clone());
            } else {
                sh.traced.remove(name.as_slice());
            }
        }
        return Ok(status);
    }
    if funcs {
        let mut names: Vec<&Vec<u8>> = sh.functions.keys().collect();
        names.sort();
        let targets: Vec<Vec<u8>> = if i < argv.len() {
            argv[i..].to_vec()
        } else {
            // `declare -xf`, `-xF`: only the exported ones.
            names
                .into_iter()
                .filter(|n| !export_ || sh.vars.function_exported(n))
                .cloned()
                .collect()
        };
        let named = i < argv.len();
        let mut status = 0;
        let mut out = Vec::new();
        for n in targets {
            match sh.functions.get(&n) {
                // `declare -f`: the definitions, as text bash and rush read.
                Some(f) if bodies => {
                    out.extend_from_slice(&crate::unparse::function(f));
                    out.push(b'\n');
                }
                // `declare -F name` prints the name (with `extdebug`, its
                // line and file too); `declare -F`, each as a command.
                Some(f) => {
                    if !named {
                        out.extend_from_slice(b"declare -f");
                        if sh.readonly_functions.contains(&n) {
                            out.push(b'r');
                        }
                        if sh.vars.function_exported(&n) {
                            out.push(b'x');
                        }
                        out.push(b' ');
                    }
                    out.extend_from_slice(&n);
                    if named && shopt_on(sh, "extdebug") {
                        // Where it was defined, in BASH_SOURCE's words
                        // (`environment` for -c, `main` for stdin).
                        let file = sh.function_files.get(&n).cloned();
                        let file = file.as_deref().unwrap_or(b"main");
                        out.extend_from_slice(format!(" {} ", f.line).as_bytes());
                        out.extend_from_slice(file);
                    }
                    out.push(b'\n');
                }
                None => {
                    // With `-p` the missing one is named (bash).
                    if print {
                        sh.error(&format!("{who}: {}: not found", lossy(&n)));
                    }
                    status = 1;
                }
            }
        }
        emit(sh, "declare", &out);
        return Ok(status);
    }
    if i >= argv.len() || print {
        let mut out = Vec::new();
        let mut status = 0;
        if i >= argv.len() {
            // `declare -pa`, `-r`, `-ar`: only those with every attribute
            // asked for.
            let wanted: String = argv[1..i]
                .iter()
                .filter(|a| a.starts_with(b"-"))
                .flat_map(|a| a[1..].iter())
                .map(|&c| c as char)
                .filter(|c| "aAinrxclu".contains(*c))
                .collect();
            out = list_vars(sh, &wanted, None);
        }
        // Named ones in the order given, as bash prints them.
        for a in argv.get(i..).unwrap_or_default() {
            match sh.visible_var(a) {
                Some(v) => out.extend_from_slice(&declare_line(a, &v)),
                None => {
                    // What came before is written first (bash writes as
                    // it goes).
                    emit(sh, "declare", &std::mem::take(&mut out));
                    sh.error(&format!("{who}: {}: not found", lossy(a)));
                    status = 1;
                }
            }
        }
        emit(sh, "declare", &out);
        return Ok(status);
    }
    // `-g` in a function: the names are the global ones, whatever the
    // function has made local (bash).
    let scopes = (global && sh.vars.in_function()).then(|| sh.vars.take_scopes());
    let mut names = || -> Exec {
        let mut status = 0;
        for a in &argv[i..] {
            let (name, value) = split_name_value(a);
            let local = sh.vars.in_function() && !global;
            // New locals inherit the caller's variable (`localvar_inherit`,
            // `local -I`); whether this one is new is checked where it
            // matters, since the steps below may make it.
            let inheriting = local && (inherit || shopt_on(sh, "localvar_inherit"));
            if not_integer {
                let base = name.split(|&c| c == b'[').next().unwrap_or_default();
                sh.vars.clear_integer(base);
            }
            if destroy_array {
                let base = name.split(|&c| c == b'[').next().unwrap_or_default();
                if sh.vars.value(base).is_some_and(Value::is_array) {
                    sh.error(&format!(
                        "{}: {}: cannot destroy array variables in this way",
                        lossy(&argv[0]),
                        lossy(base)
                    ));
                    status = 1;
                    continue;
                }
            }
            // `declare name[sub]=value`: one element (bash); `declare -A
            // name[sub]` declares the array.
            // With `assoc_expand_once` the subscript ends at the first `]`
            // (bash: `declare A[x[y]=1` is key `x[y`).
            let first_close = sh.keys_as_written()
                && name.iter().position(|&c| c == b']') == Some(name.len().wrapping_sub(1));
            if let Some(open) = name.iter().position(|&c| c == b'[')
                && (first_close && crate::parse::is_name(&name[..open])
                    || !sh.keys_as_written() && crate::shell::split_element(name).is_some())
                && nameref.is_none()
            {
                let (base, sub) = (&name[..open], &name[open + 1..name.len() - 1]);
                // bash: with -a or -A given, a value in parentheses is the
                // whole array's (`declare -a e[10]='(x)'` is `e=(x)`); an
                // array that exists takes an element otherwise; a new one
                // takes the text as its element, with a warning.
                if value.is_some() && sh.vars.var_itself(base).is_some_and(|v| v.nameref) {
                    sh.error(&format!(
                        "warning: {}: removing nameref attribute",
                        lossy(base)
                    ));
                    sh.vars.drop_nameref(base);
                }
                let array_exists = sh.vars.value(base).is_some_and(Value::is_array);
                let creating = kind.is_some();
                let parenthesized =
                    value.is_some_and(|v| v.len() >= 2 && v.starts_with(b"(") && v.ends_with(b")"));
                if parenthesized && !array_exists && !creating {
                    sh.error(&format!(
                        "warning: {}: quoted compound array assignment deprecated",
                        lossy(a)
                    ));
                }
                let whole = parenthesized && creating;
                let flag = if matches!(kind, Some(Value::Assoc(_))) {
                    b'A'
                } else {
                    b'a'
                };
                if kind.is_some() && crate::shell::converts_array_kind(&[flag], sh.vars.value(base))
                {
                    sh.error(&format!(
                        "{who}: {}",
                        crate::shell::cannot_convert(flag, base)
                    ));
                    status = 1;
                    continue;
                }
                // The variable becomes an array of the kind asked (an
                // indexed one if none), its string at element 0.
                let existed = if local {
                    sh.vars.local_here(base)
                } else {
                    sh.vars.value(base).is_some()
                };
                if !sh.vars.value(base).is_some_and(Value::is_array)
                    || local && !sh.vars.local_here(base)
                {
                    let new = if flag == b'A' {
                        sh.vars.new_assoc(base)
                    } else {
                        sh.vars.new_indexed(base)
                    };
                    let new = if local && !existed {
                        match kind.clone() {
                            Some(k) => k,
                            None => Value::Indexed(Default::default()),
                        }
                    } else {
                        new
                    };
                    let r = if local {
                        sh.vars.local_value(base, Some(new))
                    } else {
                        sh.vars.set_value(base, new)
                    };
                    if let Err(e) = r {
                        sh.error(&format!("{who}: {e}"));
                        status = 1;
                        continue;
                    }
                    if value.is_none() && !existed {
                        sh.vars.mark_declared_only(base);
                    }
                }
                // The attributes come before the value (bash: `declare -r
                // c[1]=5` is refused, `declare -i n[0]=1+2` is 3).
                apply_attributes(sh, base, export_, unexport, integer, case, readonly_);
                let Some(v) = value else {
                    continue;
                };
                if whole && let Some(assign) = quoted_compound(base, v) {
                    if sh.vars.is_readonly(base) {
                        sh.error(&format!("{who}: {}: readonly variable", lossy(base)));
                        status = 1;
                        continue;
                    }
                    sh.declare_array(&assign, &[], local)?;
                    continue;
                }
                if sub.is_empty() {
                    sh.error(&format!("{}: bad array subscript", lossy(name)));
                    status = 1;
                    continue;
                }
                let sub_text = sub;
                let sub = if sh.keys_as_written()
                    && matches!(sh.vars.value(base), Some(Value::Assoc(_)))
                {
                    sub.to_vec()
                } else {
                    sh.runtime_subscript(base, sub)?
                };
                let key = sh.array_key(base, &sub)?;
                if key.before_start() {
                    sh.error(&format!(
                        "{}[{}]: bad array subscript",
                        lossy(base),
                        lossy(sub_text)
                    ));
                    status = 1;
                    continue;
                }
                let is_integer = sh.vars.is_integer(base);
                let v = sh.assigned(None, v.to_vec(), is_integer)?;
                if let Err(e) = sh.vars.set_elem(base, key, v) {
                    sh.error(&e.to_string());
                    status = 1;
                }
                continue;
            }
            if !crate::parse::is_name(name) {
                sh.error(&format!("{who}: `{}': not a valid identifier", lossy(a)));
                status = 1;
                continue;
            }
            // `+r` cannot take the attribute away.
            if plus_r && sh.vars.is_readonly(name) {
                sh.error(&format!("{who}: {}: readonly variable", lossy(name)));
                status = 1;
                continue;
            }
            if let Some(on) = nameref {
                // The target must be a variable's name (or an element's): the
                // one given, or the value the variable has already.
                let existing = sh
                    .vars
                    .var_itself(name)
                    .and_then(|v| v.value.as_ref())
                    .and_then(Value::scalar)
                    .filter(|v| !v.is_empty())
                    .map(<[u8]>::to_vec);
                if let Some(t) = value.map(<[u8]>::to_vec).or(existing).filter(|_| on) {
                    let t = t.as_slice();
                    let base = t.split(|&c| c == b'[').next().unwrap_or_default();
                    if !crate::parse::is_name(base) || t == name {
                        sh.error(&format!(
                            "{who}: `{}': invalid variable name for name reference",
                            lossy(t)
                        ));
                        status = 1;
                        continue;
                    }
                }
                if on && kind.is_some() {
                    sh.error(&format!(
                        "{who}: {}: reference variable cannot be an array",
                        lossy(name)
                    ));
                    status = 1;
                    continue;
                }
                if let Err(e) = sh
                    .vars
                    .set_nameref(name, value.map(<[u8]>::to_vec), on, local)
                {
                    sh.error(&format!("{who}: {e}"));
                    status = 1;
                    continue;
                }
                // `-x` exports the reference itself; `-r` is ignored with
                // `-n`, as bash does.
                if export_ {
                    sh.vars.export_itself(name);
                }
                continue;
            }
            // `declare -a a='(1 2)'`: the elements, read and expanded again.
            if let Some(v) = value
                && (kind.is_some()
                    || matches!(
                        sh.vars.value(name),
                        Some(Value::Indexed(_) | Value::Assoc(_))
                    ))
                && let Some(assign) = quoted_compound(name, v)
            {
                if sh.vars.is_readonly(name) {
                    sh.error(&format!(
                        "{}: {}: readonly variable",
                        lossy(&argv[0]),
                        lossy(name)
                    ));
                    status = 1;
                    continue;
                }
                let flags: Vec<u8> = argv[1..i]
                    .iter()
                    .filter(|a| a.starts_with(b"-"))
                    .flat_map(|a| a[1..].to_vec())
                    .collect();
                sh.declare_array(&assign, &flags, local)?;
                apply_attributes(sh, name, export_, unexport, integer, case, readonly_);
                continue;
            }
            let value_owned;
            let value = match value {
                Some(v) if integer => {
                    value_owned = match sh.arith(v) {
                        Ok(n) => n.to_string().into_bytes(),
                        Err(_) => {
                            status = 1;
                            continue;
                        }
                    };
                    Some(value_owned.as_slice())
                }
                Some(v) => match case {
                    Some(Some(c)) => {
                        value_owned = c.apply(v);
                        Some(value_owned.as_slice())
                    }
                    _ => Some(v),
                },
                None => None,
            };
            // -a / -A on a name that is not yet that kind of array.
            if let Some(k) = &kind {
                let flag = if matches!(k, Value::Assoc(_)) {
                    b'A'
                } else {
                    b'a'
                };
                // A new local that inherits (`localvar_inherit`, `-I`) is
                // converted as a global would be.
                let inherits = inheriting && !sh.vars.local_here(name);
                // A local of this function is converted as a global would be.
                if (!local || inherits || sh.vars.local_here(name))
                    && crate::shell::converts_array_kind(&[flag], sh.vars.value(name))
                {
                    // The local still comes into being, with what it
                    // inherits (bash).
                    if inherits {
                        let v = sh.vars.value(name).cloned();
                        let _ = sh.vars.local_value(name, v);
                    }
                    sh.error(&format!(
                        "{who}: {}",
                        crate::shell::cannot_convert(flag, name)
                    ));
                    status = 1;
                    continue;
                }
                let same = matches!(
                    (sh.vars.value(name), k),
                    (Some(Value::Indexed(_)), Value::Indexed(_))
                        | (Some(Value::Assoc(_)), Value::Assoc(_))
                );
                // With a value (`declare -a h=x`), the new array holds it at 0.
                if !same {
                    // An inheriting local is converted (its string at 0);
                    // a local made over an existing one starts empty.
                    let existed = local && sh.vars.local_here(name);
                    let inherits = inheriting && !existed;
                    let r = if inherits {
                        let v = if matches!(k, Value::Assoc(_)) {
                            sh.vars.new_assoc(name)
                        } else {
                            sh.vars.new_indexed(name)
                        };
                        sh.vars.local_value(name, Some(v))
                    } else if local {
                        sh.vars.local_value(name, Some(k.clone()))
                    } else if matches!(k, Value::Assoc(_)) {
                        let v = sh.vars.new_assoc(name);
                        sh.vars.set_value(name, v)
                    } else {
                        let v = sh.vars.new_indexed(name);
                        sh.vars.set_value(name, v)
                    };
                    if let Err(e) = r {
                        sh.error(&format!("{who}: {e}"));
                        status = 1;
                        continue;
                    }
                    if value.is_none() {
                        if !existed && !inherits {
                            sh.vars.mark_declared_only(name);
                        }
                        // The other attributes (`declare -Ar`) still apply.
                        apply_attributes(sh, name, export_, unexport, integer, case, readonly_);
                        continue;
                    }
                }
            }
            // An inheriting local array of the kind it inherits: made here,
            // with the inherited elements.
            if inheriting && kind.is_some() && !sh.vars.local_here(name) {
                let v = sh.vars.value(name).cloned();
                let _ = sh.vars.local_value(name, v);
            }
            let r = if local && kind.is_some() && value.is_some() && sh.vars.local_here(name) {
                // The local array made above takes the value at 0.
                sh.vars.set(name, value.unwrap_or_default().to_vec())
            } else if local {
                // `shopt -s localvar_inherit`: a new local starts with the value
                // the name had where the function was called.
                match value {
                    // The whole value, an array's too.
                    None if inheriting && !sh.vars.local_here(name) => {
                        let v = sh.vars.value(name).cloned();
                        sh.vars.local_value(name, v)
                    }
                    v => sh.vars.local(name, v.map(<[u8]>::to_vec)),
                }
            } else if let Some(v) = value {
                sh.vars.set(name, v.to_vec())
            } else {
                // `declare name`: declared, with no value (`declare -p` shows it).
                sh.vars.declare(name);
                Ok(())
            };
            if let Err(e) = r {
                sh.error(&format!("{who}: {e}"));
                status = 1;
                continue;
            }
            apply_attributes(sh, name, export_, unexport, integer, case, readonly_);
        }
        Ok(status)
    };
    let r = names();
    if let Some(s) = scopes {
        sh.vars.restore_scopes(s);
    }
    r
}

/// `declare`'s attribute flags, after the value is in place.
fn apply_attributes(
    sh: &mut Shell,
    name: &[u8],
    export_: bool,
    unexport: bool,
    integer: bool,
    case: Option<Option<crate::vars::Case>>,
    readonly_: bool,
) {
    sh.materialize(name);
    if export_ {
        let _ = sh.vars.export(name, None);
    }
    if unexport {
        sh.vars.unexport(name);
    }
    if integer {
        sh.vars.set_integer(name);
    }
    if let Some(c) = case {
        sh.vars.set_case(name, c);
    }
    if readonly_ {
        let _ = sh.vars.readonly(name, None);
    }
}

fn let_(sh: &mut Shell, argv: Args<'_>) -> Exec {
    if argv.len() < 2 {
        sh.error("let: expression expected");
        return Ok(1);
    }
    let mut last = 0;
    for a in &argv[1..] {
        last = match sh.arith_command("let", a) {
            Ok(Some(v)) => v,
            Ok(None) | Err(Flow::Exit(_)) => return Ok(1),
            Err(f) => return Err(f),
        };
    }
    Ok(i32::from(last == 0))
}

fn shift(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let argv = if argv.get(1).is_some_and(|a| a == b"--") {
        &argv[1..]
    } else {
        argv
    };
    // Too many arguments abandon the command line, a bad count fails the
    // command; neither ends the shell (bash).
    if argv.len() > 2 {
        return Err(sh.abandon("shift: too many arguments", 1));
    }
    let n = match argv.get(1) {
        None => 1,
        Some(a) => match lossy(a).trim().parse::<i64>() {
            Ok(n) if n >= 0 => n as usize,
            Ok(_) => {
                sh.error(&format!("shift: {}: shift count out of range", lossy(a)));
                return Ok(1);
            }
            _ => {
                sh.error(&format!("shift: {}: numeric argument required", lossy(a)));
                return Ok(1);
            }
        },
    };
    if n > sh.positional.len() {
        // POSIX mode reports it as `shift_verbose` does (bash).
        if sh.opts.posix || shopt_on(sh, "shift_verbose") {
            sh.error(&format!("shift: {n}: shift count out of range"));
        }
        return Ok(1);
    }
    sh.positional.drain(..n);
    Ok(0)
}

// ---- set and shopt -------------------------------------------------------

/// Applies one `-x`/`+x` style cluster; returns false on an unknown letter.
pub fn set_flags(sh: &mut Shell, cluster: &[u8]) -> Result<(), char> {
    let on = cluster[0] == b'-';
    for &c in &cluster[1..] {
        let c = c as char;
        // `set -r` makes the shell restricted, and nothing turns it off.
        if c == 'r' {
            if on {
                sh.make_restricted(false);
            } else if sh.opts.restricted {
                return Err(c);
            }
            continue;
        }
        let Some(name) = Options::letter(c) else {
            return Err(c);
        };
        set_option(sh, name, on);
    }
    Ok(())
}

pub fn set_option(sh: &mut Shell, name: &str, on: bool) -> bool {
    match sh.opts.get_mut(name) {
        Some(b) => {
            let was = std::mem::replace(b, on);
            match name {
                "history" if on && !was => history::enable(sh),
                "allexport" => sh.vars.allexport = on,
                "verbose" => crate::input::VERBOSE.store(on, std::sync::atomic::Ordering::Relaxed),
                // One editing mode at a time: turning one on turns the
                // other off (bash).
                "vi" if on => sh.opts.emacs = false,
                "emacs" if on => sh.opts.vi = false,
                // bash keeps POSIXLY_CORRECT with the mode.
                "posix" if on => {
                    let _ = sh.vars.set(b"POSIXLY_CORRECT", b"y".to_vec());
                }
                "posix" => {
                    let _ = sh.vars.unset(b"POSIXLY_CORRECT");
                }
                // bash keeps IGNOREEOF with the option: 10 when set.
                "ignoreeof" if on => {
                    let _ = sh.vars.set(b"IGNOREEOF", b"10".to_vec());
                }
                "ignoreeof" => {
                    let _ = sh.vars.unset(b"IGNOREEOF");
                }
                _ => {}
            }
            true
        }
        None => false,
    }
}

fn set(sh: &mut Shell, argv: Args<'_>) -> Exec {
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
            set_option(sh, "xtrace", false);
            set_option(sh, "verbose", false);
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
                if !set_option(sh, &lossy(name), on) {
                    sh.error(&format!("set: {}: invalid option name", lossy(name)));
                    return Ok(2);
                }
            } else if let Err(c) = set_flags(sh, &[a[0], c]) {
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
fn set_positional(sh: &mut Shell, args: Vec<Vec<u8>>) {
    sh.positional = args;
    if sh.func_depth == 0 {
        sh.set_changed_args = true;
    }
}

fn print_options(sh: &mut Shell, long: bool) {
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

/// Every option bash 5.2's `shopt` knows, in bash's order (which `shopt`
/// lists keep), with bash's default for a non-interactive shell. Which of
/// them change what rush does is listed in the crate's README.
const SHOPTS: &[(&str, bool)] = &[
    ("autocd", false),
    ("assoc_expand_once", false),
    ("cdable_vars", false),
    ("cdspell", false),
    ("checkhash", false),
    ("checkjobs", false),
    ("checkwinsize", true),
    ("cmdhist", true),
    ("compat31", false),
    ("compat32", false),
    ("compat40", false),
    ("compat41", false),
    ("compat42", false),
    ("compat43", false),
    ("compat44", false),
    ("complete_fullquote", true),
    ("direxpand", false),
    ("dirspell", false),
    ("dotglob", false),
    ("execfail", false),
    ("expand_aliases", false),
    ("extdebug", false),
    ("extglob", false),
    ("extquote", true),
    ("failglob", false),
    ("force_fignore", true),
    ("globasciiranges", true),
    ("globskipdots", true),
    ("globstar", false),
    ("gnu_errfmt", false),
    ("histappend", false),
    ("histreedit", false),
    ("histverify", false),
    ("hostcomplete", true),
    ("huponexit", false),
    ("inherit_errexit", false),
    ("interactive_comments", true),
    ("lastpipe", false),
    ("lithist", false),
    ("localvar_inherit", false),
    ("localvar_unset", false),
    ("login_shell", false),
    ("mailwarn", false),
    ("no_empty_cmd_completion", false),
    ("nocaseglob", false),
    ("nocasematch", false),
    ("noexpand_translation", false),
    ("nullglob", false),
    ("patsub_replacement", true),
    ("progcomp", true),
    ("progcomp_alias", false),
    ("promptvars", true),
    ("restricted_shell", false),
    ("shift_verbose", false),
    ("sourcepath", true),
    ("varredir_close", false),
    ("xpg_echo", false),
];

/// Every `shopt` name, in bash's order.
pub fn shopt_names() -> impl Iterator<Item = &'static str> {
    SHOPTS.iter().map(|(n, _)| *n)
}

/// `$SHELLOPTS`: the `set -o` options that are on, colon-separated.
pub fn shellopts(sh: &Shell) -> String {
    let on: Vec<&str> = OPTION_NAMES
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| sh.opts.get(n) == Some(true))
        .collect();
    on.join(":")
}

/// `$BASHOPTS`: the `shopt` options that are on, colon-separated.
pub fn bashopts(sh: &Shell) -> String {
    let on: Vec<&str> = SHOPTS
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| sh.shopts.contains(*n))
        .collect();
    on.join(":")
}

/// Turns a `shopt` option on or off; false if there is no such option.
/// Read-only options (`login_shell`, `restricted_shell`) stay as they are,
/// silently, as in bash.
pub fn set_shopt(sh: &mut Shell, name: &str, on: bool) -> bool {
    if matches!(name, "login_shell" | "restricted_shell") {
        return true;
    }
    set_shopt_forced(sh, name, on)
}

/// [`set_shopt`], read-only options included (for the shell's own start).
pub fn set_shopt_forced(sh: &mut Shell, name: &str, on: bool) -> bool {
    if !SHOPTS.iter().any(|(k, _)| *k == name) {
        return false;
    }
    if on {
        sh.shopts.insert(name.to_string());
    } else {
        sh.shopts.remove(name);
    }
    if name == "extglob" {
        // The parser and the pattern compiler read it from here.
        crate::pattern::EXTGLOB.store(on, std::sync::atomic::Ordering::Relaxed);
    }
    // `extdebug` sets `-T` and `-E` with it (and clears them); `set +T`
    // afterwards stops the tracing (bash).
    if name == "extdebug" {
        sh.extdebug = on;
        sh.opts.functrace = on;
        sh.opts.errtrace = on;
        if on && sh.main_args.is_none() && sh.func_depth == 0 {
            sh.main_args = Some(sh.positional.clone());
        }
    }
    true
}

/// Whether a `shopt` option is on.
pub fn shopt_on(sh: &Shell, name: &str) -> bool {
    sh.shopts.contains(name)
}

pub fn init_shopts(sh: &mut Shell) {
    for (n, on) in SHOPTS {
        if *on {
            sh.shopts.insert((*n).to_string());
        }
    }
}

fn shopt(sh: &mut Shell, argv: Args<'_>) -> Exec {
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
                    if !set_option(sh, n, on) {
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
                if !set_shopt(sh, n, on) {
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
                } else if !sh.shopts.contains(n) {
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

fn list_shopts(sh: &Shell, names: &[String], only: Option<bool>, as_commands: bool) -> Vec<u8> {
    let mut out = String::new();
    // Named options in the order named; all of them in the table's.
    let named: Vec<&str> = names
        .iter()
        .filter_map(|x| SHOPTS.iter().find(|(n, _)| n == x).map(|(n, _)| *n))
        .collect();
    let all: Vec<&str> = SHOPTS.iter().map(|(n, _)| *n).collect();
    for n in if names.is_empty() { &all } else { &named } {
        let on = sh.shopts.contains(*n);
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

// ---- aliases -------------------------------------------------------------

fn alias(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let mut args = &argv[1..];
    while let Some(a) = args.first() {
        match a.as_slice() {
            b"-p" => args = &args[1..],
            b"--" => {
                args = &args[1..];
                break;
            }
            o if o.len() > 1 && o[0] == b'-' => {
                let c = o[1..].iter().find(|&&c| c != b'p').copied().unwrap_or(b'p');
                sh.error(&format!("alias: -{}: invalid option", c as char));
                sh.usage("alias: usage: alias [-p] [name[=value] ... ]");
                return Ok(2);
            }
            _ => break,
        }
    }
    let print = |k: &[u8], v: &[u8], out: &mut Vec<u8>| {
        out.extend_from_slice(b"alias ");
        out.extend_from_slice(k);
        out.push(b'=');
        out.extend_from_slice(&quote_always(v));
        out.push(b'\n');
    };
    let mut out = Vec::new();
    if args.is_empty() {
        let mut all: Vec<_> = sh.aliases.iter().collect();
        all.sort();
        for (k, v) in all {
            print(k, v, &mut out);
        }
        return Ok(emit(sh, "alias", &out));
    }
    let mut status = 0;
    for a in args {
        match a.iter().position(|&c| c == b'=') {
            Some(i) if i > 0 => {
                let name = &a[..i];
                if name.iter().any(|&c| {
                    matches!(
                        c,
                        b'/' | b'$'
                            | b'`'
                            | b'='
                            | b' '
                            | b'\t'
                            | b'\n'
                            | b'('
                            | b')'
                            | b'<'
                            | b'>'
                            | b'&'
                            | b'|'
                            | b';'
                            | b'"'
                            | b'\''
                    )
                }) {
                    sh.error(&format!("alias: `{}': invalid alias name", lossy(name)));
                    status = 1;
                    continue;
                }
                std::rc::Rc::make_mut(&mut sh.aliases).insert(name.to_vec(), a[i + 1..].to_vec());
            }
            _ => match sh.aliases.get(a.as_slice()) {
                Some(v) => {
                    let v = v.clone();
                    print(a, &v, &mut out);
                }
                None => {
                    sh.error(&format!("alias: {}: not found", lossy(a)));
                    status = 1;
                }
            },
        }
    }
    emit(sh, "alias", &out);
    Ok(status)
}

fn unalias(sh: &mut Shell, argv: Args<'_>) -> Exec {
    if argv.len() < 2 {
        sh.usage("unalias: usage: unalias [-a] name [name ...]");
        return Ok(2);
    }
    if let Some(o) = argv[1..]
        .iter()
        .take_while(|a| *a != b"--")
        .find(|a| a.len() > 1 && a[0] == b'-' && a[1..].iter().any(|&c| c != b'a'))
    {
        let c = o[1..].iter().find(|&&c| c != b'a').copied().unwrap_or(b'a');
        sh.error(&format!("unalias: -{}: invalid option", c as char));
        sh.usage("unalias: usage: unalias [-a] name [name ...]");
        return Ok(2);
    }
    let mut status = 0;
    for a in &argv[1..] {
        if a == b"-a" {
            std::rc::Rc::make_mut(&mut sh.aliases).clear();
            continue;
        }
        if a == b"--" {
            continue;
        }
        if std::rc::Rc::make_mut(&mut sh.aliases)
            .remove(a.as_slice())
            .is_none()
        {
            sh.error(&format!("unalias: {}: not found", lossy(a)));
            status = 1;
        }
    }
    Ok(status)
}

// ---- commands and lookup -------------------------------------------------

fn builtin(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let argv = if argv.get(1).map(Vec::as_slice) == Some(b"--") {
        &argv[1..]
    } else {
        argv
    };
    let Some(name) = argv.get(1) else {
        return Ok(0);
    };
    if !is_builtin(sh, name) {
        sh.error(&format!("builtin: {}: not a shell builtin", lossy(name)));
        return Ok(1);
    }
    run_builtin(sh, &argv[1..]).unwrap_or(Ok(1))
}

/// How a name resolves, for `type` and `command -v`.
enum Kind {
    Alias(Vec<u8>),
    Keyword,
    Function,
    Builtin,
    /// A file, and whether it came from the hash table.
    File(Vec<u8>, bool),
}

/// What `name` is, as `type` and `command -v` see it: aliases only while
/// they are expanded (bash), a remembered path before a PATH search
/// (unless `all`). With `files_only` (`type -P`), only the file.
fn resolve(sh: &mut Shell, name: &[u8], all: bool, files_only: bool) -> Vec<Kind> {
    let mut out = Vec::new();
    if files_only {
        // A remembered path is answered as it is, there or not (bash).
        let hashed = !name.contains(&b'/') && sh.hash.contains_key(name);
        if let Some(p) = sh.find_command(name)
            && (hashed || std::path::Path::new(OsStr::from_bytes(p.as_bytes())).is_file())
        {
            out.push(Kind::File(p.into_bytes(), false));
        }
        return out;
    }
    if let Some(v) = sh.parser_aliases().get(name) {
        out.push(Kind::Alias(v.clone()));
    }
    if KEYWORDS.contains(&name) {
        out.push(Kind::Keyword);
    }
    if sh.functions.contains_key(name) {
        out.push(Kind::Function);
    }
    if is_builtin(sh, name) {
        out.push(Kind::Builtin);
    }
    if all && !name.contains(&b'/') {
        let path = sh.vars.get(b"PATH").map(<[u8]>::to_vec).unwrap_or_default();
        for d in path.split(|&c| c == b':') {
            let mut p = if d.is_empty() {
                b".".to_vec()
            } else {
                d.to_vec()
            };
            p.push(b'/');
            p.extend_from_slice(name);
            if let Ok(c) = std::ffi::CString::new(p.clone())
                && rustix::fs::access(c.as_c_str(), rustix::fs::Access::EXEC_OK).is_ok()
                && std::path::Path::new(OsStr::from_bytes(&p)).is_file()
            {
                out.push(Kind::File(p, false));
            }
        }
    } else if out.is_empty() || all {
        let hashed = !name.contains(&b'/') && sh.hash.contains_key(name);
        if let Some(p) = sh.find_command(name)
            && (hashed
                || std::path::Path::new(OsStr::from_bytes(p.as_bytes())).is_file()
                    && rustix::fs::access(p.as_c_str(), rustix::fs::Access::EXEC_OK).is_ok())
        {
            out.push(Kind::File(p.into_bytes(), hashed));
        }
    }
    out
}

fn command(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let mut i = 1;
    let mut verbose = None;
    let mut default_path = false;
    while let Some(a) = argv.get(i) {
        match a.as_slice() {
            b"-p" => default_path = true,
            b"-v" => verbose = Some(false),
            b"-V" => verbose = Some(true),
            b"-pv" | b"-vp" => {
                default_path = true;
                verbose = Some(false);
            }
            b"-pV" | b"-Vp" => {
                default_path = true;
                verbose = Some(true);
            }
            b"--" => {
                i += 1;
                break;
            }
            o if o.len() > 1 && o[0] == b'-' => {
                let c = o[1..]
                    .iter()
                    .find(|&&c| !matches!(c, b'p' | b'v' | b'V'))
                    .copied()
                    .unwrap_or(b'p');
                sh.error(&format!("command: -{}: invalid option", c as char));
                sh.usage("command: usage: command [-pVv] command [arg ...]");
                return Ok(2);
            }
            _ => break,
        }
        i += 1;
    }
    if default_path && sh.refuse_restricted(Some(b"command: -p")) {
        return Ok(1);
    }
    let args = &argv[i..];
    if args.is_empty() {
        return Ok(0);
    }
    if let Some(long) = verbose {
        let mut status = 0;
        let mut out = Vec::new();
        for name in args {
            let kinds = resolve(sh, name, false, false);
            match kinds.first() {
                None => {
                    if long {
                        sh.error(&format!("command: {}: not found", lossy(name)));
                    }
                    status = 1;
                }
                Some(k) => {
                    if long {
                        describe(sh, name, k, &mut out);
                    } else {
                        match k {
                            Kind::Alias(v) => {
                                out.extend_from_slice(b"alias ");
                                out.extend_from_slice(name);
                                out.push(b'=');
                                out.extend_from_slice(&quote_always(v));
                            }
                            Kind::File(p, _) => out.extend_from_slice(p),
                            _ => out.extend_from_slice(name),
                        }
                        out.push(b'\n');
                    }
                }
            }
        }
        emit(sh, "command", &out);
        return Ok(status);
    }
    if is_builtin(sh, &args[0]) {
        let via = std::mem::replace(&mut sh.via_command, true);
        let r = run_builtin(sh, args);
        sh.via_command = via;
        if let Some(r) = r {
            return r;
        }
    }
    sh.run_external_argv(args, default_path)
}

fn describe(sh: &Shell, name: &[u8], k: &Kind, out: &mut Vec<u8>) {
    out.extend_from_slice(name);
    match k {
        // bash prints the definition after the kind.
        Kind::Function if sh.functions.contains_key(name) => {
            out.extend_from_slice(b" is a function\n");
            out.extend_from_slice(&crate::unparse::function(&sh.functions[name]));
        }
        Kind::Alias(v) => {
            out.extend_from_slice(b" is aliased to `");
            out.extend_from_slice(v);
            out.push(b'\'');
        }
        Kind::Keyword => out.extend_from_slice(b" is a shell keyword"),
        Kind::Function => out.extend_from_slice(b" is a function"),
        Kind::Builtin => {
            if is_special(name, sh.opts.posix) {
                out.extend_from_slice(b" is a special shell builtin");
            } else {
                out.extend_from_slice(b" is a shell builtin");
            }
        }
        Kind::File(p, true) => {
            out.extend_from_slice(b" is hashed (");
            out.extend_from_slice(p);
            out.push(b')');
        }
        Kind::File(p, false) => {
            out.extend_from_slice(b" is ");
            out.extend_from_slice(p);
        }
    }
    out.push(b'\n');
}

const TYPE_USAGE: &str = "type: usage: type [-afptP] name [name ...]";

fn type_(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let mut i = 1;
    let mut terse = false;
    let mut all = false;
    let mut path_only = false;
    let mut force_path = false;
    let mut no_functions = false;
    while let Some(a) = argv.get(i) {
        if a.len() < 2 || a[0] != b'-' {
            break;
        }
        if a == b"--" {
            i += 1;
            break;
        }
        // The obsolescent long forms bash still takes.
        let letters: &[u8] = match a.as_slice() {
            b"-type" | b"--type" => b"t",
            b"-path" | b"--path" => b"p",
            b"-all" | b"--all" => b"a",
            a => &a[1..],
        };
        for &c in letters {
            match c {
                b't' => terse = true,
                b'a' => all = true,
                b'p' => path_only = true,
                b'P' => {
                    path_only = true;
                    force_path = true;
                }
                b'f' => no_functions = true,
                _ => {
                    sh.error(&format!("type: -{}: invalid option", c as char));
                    sh.usage(TYPE_USAGE);
                    return Ok(2);
                }
            }
        }
        i += 1;
    }
    let mut status = 0;
    let mut out = Vec::new();
    for name in &argv[i..] {
        let mut kinds = resolve(sh, name, all, force_path);
        if no_functions {
            kinds.retain(|k| !matches!(k, Kind::Function));
        }
        // `type -p`: the file, only if that is what would run.
        if path_only && !force_path && !all {
            kinds.truncate(1);
        }
        let kinds: Vec<&Kind> = if path_only {
            kinds
                .iter()
                .filter(|k| matches!(k, Kind::File(..)))
                .collect()
        } else {
            kinds.iter().collect()
        };
        if kinds.is_empty() {
            if !terse && !path_only {
                sh.error(&format!("type: {}: not found", lossy(name)));
            }
            status = 1;
            continue;
        }
        let shown = if all { &kinds[..] } else { &kinds[..1] };
        for k in shown {
            if path_only {
                if let Kind::File(p, _) = k {
                    out.extend_from_slice(p);
                    out.push(b'\n');
                }
            } else if terse {
                out.extend_from_slice(match k {
                    Kind::Alias(_) => b"alias".as_slice(),
                    Kind::Keyword => b"keyword",
                    Kind::Function => b"function",
                    Kind::Builtin => b"builtin",
                    Kind::File(..) => b"file",
                });
                out.push(b'\n');
            } else {
                describe(sh, name, k, &mut out);
            }
        }
    }
    emit(sh, "type", &out);
    Ok(status)
}

/// Whether `path` may go into the command hash table (`hash -p`,
/// `BASH_CMDS[name]=`): anything, unless the shell is restricted, where it
/// must be a name without `/` that `PATH` finds (bash).
pub fn restricted_hash_target(sh: &mut Shell, who: &str, path: &[u8]) -> bool {
    if !sh.opts.restricted {
        return true;
    }
    let problem = if path.contains(&b'/') {
        "restricted"
    } else if sh.find_command(path).is_none() {
        "not found"
    } else {
        return true;
    };
    sh.error(&format!("{who}{}: {problem}", lossy(path)));
    false
}

fn hash(sh: &mut Shell, argv: Args<'_>) -> Exec {
    if !sh.opts.hashall {
        sh.error("hash: hashing disabled");
        return Ok(1);
    }
    let Ok((opts, i)) = getopt(sh, argv, b"dlp:rt", HASH_USAGE) else {
        return Ok(2);
    };
    let has = |c: u8| opts.iter().any(|o| o.letter == c);
    let (delete, portable, expunge, targets) = (has(b'd'), has(b'l'), has(b'r'), has(b't'));
    let pathname = opts.iter().rev().find_map(|o| o.arg.clone());
    if let Some(p) = &pathname
        && !restricted_hash_target(sh, "hash: ", p)
    {
        return Ok(1);
    }
    let names = &argv[i..];
    if names.is_empty() && (delete || targets) {
        let flag = if delete { "-d" } else { "-t" };
        sh.error(&format!("hash: {flag}: option requires an argument"));
        return Ok(1);
    }
    if names.is_empty() && !expunge {
        let mut all: Vec<_> = sh.hash.iter().collect();
        all.sort_by_key(|(n, h)| crate::shell::hash_order(n, h.seq));
        let mut out = Vec::new();
        if all.is_empty() {
            if !sh.opts.posix {
                out.extend_from_slice(b"hash: hash table empty\n");
            }
        } else if !portable {
            out.extend_from_slice(b"hits\tcommand\n");
        }
        for (n, h) in all {
            if portable {
                out.extend_from_slice(b"builtin hash -p ");
                out.extend_from_slice(h.path.as_bytes());
                out.push(b' ');
                out.extend_from_slice(n);
            } else {
                out.extend_from_slice(format!("{:4}\t", h.hits).as_bytes());
                out.extend_from_slice(h.path.as_bytes());
            }
            out.push(b'\n');
        }
        return Ok(emit(sh, "hash", &out));
    }
    if expunge {
        sh.hash.clear();
    }
    let mut status = 0;
    if targets {
        // The remembered paths (each after its name when there are more).
        let mut out = Vec::new();
        for a in names {
            let Some(h) = sh.hash.get_mut(a.as_slice()) else {
                sh.error(&format!("hash: {}: not found", lossy(a)));
                status = 1;
                continue;
            };
            h.hits += 1;
            if portable {
                out.extend_from_slice(b"builtin hash -p ");
                out.extend_from_slice(h.path.as_bytes());
                out.push(b' ');
                out.extend_from_slice(a);
            } else {
                if names.len() > 1 {
                    out.extend_from_slice(a);
                    out.push(b'\t');
                }
                out.extend_from_slice(h.path.as_bytes());
            }
            out.push(b'\n');
        }
        emit(sh, "hash", &out);
        return Ok(status);
    }
    for a in names {
        if a.contains(&b'/') {
            continue;
        }
        if let Some(p) = &pathname {
            if std::path::Path::new(OsStr::from_bytes(p)).is_dir() {
                sh.error(&format!("hash: {}: Is a directory", lossy(p)));
                status = 1;
            } else if let Ok(c) = std::ffi::CString::new(p.clone()) {
                sh.hash_insert(a, c, 0);
            }
        } else if delete {
            if sh.hash.remove(a.as_slice()).is_none() {
                sh.error(&format!("hash: {}: not found", lossy(a)));
                status = 1;
            }
        } else if !is_builtin(sh, a) && !sh.functions.contains_key(a.as_slice()) {
            sh.hash.remove(a.as_slice());
            match sh.find_command(a) {
                Some(c) => sh.hash_insert(a, c, 0),
                None => {
                    sh.error(&format!("hash: {}: not found", lossy(a)));
                    status = 1;
                }
            }
        }
    }
    Ok(status)
}

const HASH_USAGE: &str = "hash: usage: hash [-lr] [-p pathname] [-dt] [name ...]";

// ---- directories ---------------------------------------------------------

/// Makes `path` absolute against `base` and removes `.`, `..` and doubled
/// slashes textually (cd's logical mode). `None` when what a `..` would
/// remove is not a directory (bash checks: `cd nosuch/..` fails).
fn logical(base: &[u8], path: &[u8]) -> Option<Vec<u8>> {
    let mut full = if path.starts_with(b"/") {
        Vec::new()
    } else {
        base.to_vec()
    };
    if !path.starts_with(b"/") {
        full.push(b'/');
    }
    full.extend_from_slice(path);
    let mut parts: Vec<&[u8]> = Vec::new();
    for c in full.split(|&c| c == b'/') {
        match c {
            b"" | b"." => {}
            b".." => {
                if !parts.is_empty() {
                    let so_far: Vec<u8> =
                        parts.iter().flat_map(|p| [&b"/"[..], p].concat()).collect();
                    if !std::path::Path::new(OsStr::from_bytes(&so_far)).is_dir() {
                        return None;
                    }
                }
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    let mut out = Vec::new();
    for p in parts {
        out.push(b'/');
        out.extend_from_slice(p);
    }
    if out.is_empty() {
        out.push(b'/');
    }
    Some(out)
}

fn cd(sh: &mut Shell, argv: Args<'_>) -> Exec {
    cd_as(sh, "cd", argv)
}

/// `cd`, with errors in the name of `who` (`pushd` and `popd` change
/// directory through it).
pub(crate) fn cd_as(sh: &mut Shell, who: &str, argv: Args<'_>) -> Exec {
    if sh.refuse_restricted(Some(who.as_bytes())) {
        return Ok(1);
    }
    let mut i = 1;
    let mut physical = false;
    while let Some(a) = argv.get(i) {
        match a.as_slice() {
            b"-P" => physical = true,
            b"-L" => physical = false,
            b"--" => {
                i += 1;
                break;
            }
            b"-" => break,
            a if a.len() > 1 && a[0] == b'-' => {
                sh.error(&format!("cd: {}: invalid option", lossy(a)));
                return Ok(2);
            }
            _ => break,
        }
        i += 1;
    }
    if argv.len() > i + 1 {
        sh.error("cd: too many arguments");
        return Ok(1);
    }
    let mut print = false;
    let target = match argv.get(i) {
        None => match sh.vars.get(b"HOME") {
            Some(h) if !h.is_empty() => h.to_vec(),
            _ => {
                sh.error("cd: HOME not set");
                return Ok(1);
            }
        },
        Some(a) if a == b"-" => match sh.vars.get(b"OLDPWD") {
            Some(o) => {
                print = true;
                o.to_vec()
            }
            None => {
                sh.error("cd: OLDPWD not set");
                return Ok(1);
            }
        },
        Some(a) => a.clone(),
    };
    if target.is_empty() {
        return Ok(0);
    }
    // CDPATH for relative names not starting with . or ..
    let mut dest = target.clone();
    if !target.starts_with(b"/")
        && !target.starts_with(b".")
        && let Some(cdpath) = sh.vars.get(b"CDPATH").map(<[u8]>::to_vec)
    {
        for d in cdpath.split(|&c| c == b':') {
            if d.is_empty() {
                continue;
            }
            let mut cand = d.to_vec();
            cand.push(b'/');
            cand.extend_from_slice(&target);
            if std::path::Path::new(OsStr::from_bytes(&cand)).is_dir() {
                dest = cand;
                print = true;
                break;
            }
        }
    }
    let mut old = sh.logical_pwd();
    if old.is_empty() {
        old = b"/".to_vec();
    }
    // Where the logical path cannot be made, the path as given is tried.
    let new_logical = logical(&old, &dest);
    let go = match (&new_logical, physical) {
        (Some(l), false) => l.clone(),
        _ => dest.clone(),
    };
    let physical = physical || new_logical.is_none();
    let new_logical = new_logical.unwrap_or_else(|| dest.clone());
    if let Err(e) = std::env::set_current_dir(OsStr::from_bytes(&go)) {
        // The logical path may not exist where the physical one does.
        if physical || std::env::set_current_dir(OsStr::from_bytes(&dest)).is_err() {
            let msg = e.to_string();
            sh.error(&format!(
                "{who}: {}: {}",
                lossy(&target),
                msg.split(" (os error").next().unwrap_or_default()
            ));
            return Ok(1);
        }
    }
    let new_pwd = if physical {
        std::env::current_dir()
            .map(|p| p.as_os_str().as_bytes().to_vec())
            .unwrap_or(new_logical)
    } else {
        new_logical
    };
    let _ = sh.vars.export(b"OLDPWD", Some(old));
    let _ = sh.vars.export(b"PWD", Some(new_pwd.clone()));
    if print {
        let mut line = new_pwd;
        line.push(b'\n');
        return Ok(emit(sh, "cd", &line));
    }
    Ok(0)
}

fn pwd(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let physical = argv[1..].iter().any(|a| a == b"-P");
    let mut p = if physical {
        None
    } else {
        // $PWD, unless it names another directory than the current one
        // (a removed directory still reports its old name, as in bash).
        sh.vars.get(b"PWD").map(<[u8]>::to_vec).filter(|p| {
            use std::os::unix::fs::MetadataExt;
            let here = std::fs::metadata(".");
            p.starts_with(b"/")
                && match (std::fs::metadata(OsStr::from_bytes(p)), here) {
                    (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
                    // Gone (removed under us): the shell's own record stands.
                    _ => true,
                }
        })
    };
    if p.is_none() {
        match std::env::current_dir() {
            Ok(d) => p = Some(d.as_os_str().as_bytes().to_vec()),
            Err(e) => {
                let m = e.to_string();
                sh.error(&format!(
                    "pwd: error retrieving current directory: {}",
                    m.split(" (os error").next().unwrap_or_default()
                ));
                return Ok(1);
            }
        }
    }
    let mut line = p.unwrap_or_default();
    line.push(b'\n');
    Ok(emit(sh, "pwd", &line))
}

// ---- output --------------------------------------------------------------

fn echo(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let mut newline = true;
    let mut escapes = shopt_on(sh, "xpg_echo");
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

// ---- traps and processes -------------------------------------------------

fn trap(sh: &mut Shell, argv: Args<'_>) -> Exec {
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

fn kill(sh: &mut Shell, argv: Args<'_>) -> Exec {
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
fn job_pids(sh: &mut Shell, builtin: &str, a: &[u8], not_a_pid: &str) -> Option<Vec<i32>> {
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
fn job_done(sh: &mut Shell, pid: i32, raw: i32) {
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
fn wait_one(sh: &mut Shell) -> Result<Option<i32>, Result<i32, Flow>> {
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

fn wait(sh: &mut Shell, argv: Args<'_>) -> Exec {
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
        let counts = |j: &crate::shell::Job| among.as_ref().is_none_or(|ids| ids.contains(&j.id));
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
        |j: &crate::shell::Job| j.finished() && (args.is_empty() || named.contains(&j.id));
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
fn pending_signal() -> i32 {
    sys::last_signal()
}

const UMASK_USAGE: &str = "umask: usage: umask [-p] [-S] [mode]";

fn umask(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let Ok((opts, i)) = getopt(sh, argv, b"Sp", UMASK_USAGE) else {
        return Ok(2);
    };
    let symbolic = opts.iter().any(|o| o.letter == b'S');
    let portable = opts.iter().any(|o| o.letter == b'p');
    // SAFETY: umask is read by setting it and putting it back.
    let cur = unsafe {
        let m = libc::umask(0o022);
        libc::umask(m);
        m
    } as u32;
    let show = |m: u32| {
        let perm = |shift: u32| {
            let bits = (!m >> shift) & 7;
            [(4, 'r'), (2, 'w'), (1, 'x')]
                .iter()
                .filter(|(b, _)| bits & b != 0)
                .map(|(_, c)| *c)
                .collect::<String>()
        };
        format!("u={},g={},o={}\n", perm(6), perm(3), perm(0))
    };
    let Some(spec) = argv.get(i) else {
        let mut out = String::new();
        if portable {
            out.push_str(if symbolic { "umask -S " } else { "umask " });
        }
        if symbolic {
            out.push_str(&show(cur));
        } else {
            out.push_str(&format!("{cur:04o}\n"));
        }
        return Ok(emit(sh, "umask", out.as_bytes()));
    };
    // A leading digit means octal (bash: `09` is out of range).
    let new = if spec.first().is_some_and(u8::is_ascii_digit) {
        let octal = spec.iter().try_fold(0u32, |n, &c| {
            (b'0'..=b'7')
                .contains(&c)
                .then(|| n * 8 + u32::from(c - b'0'))
                .filter(|&n| n <= 0o7777)
        });
        match octal {
            Some(m) => m,
            None => {
                sh.error(&format!(
                    "umask: {}: octal number out of range",
                    lossy(spec)
                ));
                return Ok(1);
            }
        }
    } else {
        match symbolic_mode(spec, !cur & 0o777) {
            Ok(bits) => !bits & 0o777,
            Err(msg) => {
                sh.error(&format!("umask: {msg}"));
                return Ok(1);
            }
        }
    };
    // SAFETY: setting the process umask.
    unsafe {
        libc::umask(new as libc::mode_t);
    }
    if symbolic {
        return Ok(emit(sh, "umask", show(new).as_bytes()));
    }
    Ok(0)
}

/// Applies a symbolic mode (`u=rwx,g+w,o-r`) to permission bits, as
/// bash's `umask` reads one; the error names the character it stopped at.
fn symbolic_mode(spec: &[u8], mut bits: u32) -> Result<u32, String> {
    let mut s = spec.iter().copied().peekable();
    loop {
        let mut who = 0u32;
        while let Some(c @ (b'u' | b'g' | b'o' | b'a')) = s.peek().copied() {
            s.next();
            who |= match c {
                b'u' => 0o700,
                b'g' => 0o070,
                b'o' => 0o007,
                _ => 0o777,
            };
        }
        let op = s.next().unwrap_or(0);
        if !matches!(op, b'=' | b'+' | b'-') {
            return Err(format!("`{}': invalid symbolic mode operator", op as char));
        }
        let mut perm = 0u32;
        while let Some(c @ (b'r' | b'w' | b'x')) = s.peek().copied() {
            s.next();
            perm |= match c {
                b'r' => 0o444,
                b'w' => 0o222,
                _ => 0o111,
            };
        }
        let end = match s.next() {
            None => true,
            Some(b',') => false,
            Some(c) => return Err(format!("`{}': invalid symbolic mode character", c as char)),
        };
        if who != 0 {
            perm &= who;
        }
        match op {
            b'+' => bits |= perm,
            b'-' => bits &= !perm,
            _ => {
                let who = if who == 0 { 0o777 } else { who };
                bits = (bits & !who) | perm;
            }
        }
        if end {
            return Ok(bits);
        }
    }
}

fn ulimit(sh: &mut Shell, argv: Args<'_>) -> Exec {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let mut which = b'f';
    let mut hard = false;
    let mut soft = true;
    let mut all = false;
    let mut value = None;
    let mut operands = false;
    for a in &argv[1..] {
        if a == b"--" && !operands {
            operands = true;
        } else if !operands && a.len() >= 2 && a[0] == b'-' {
            for &c in &a[1..] {
                match c {
                    b'H' => {
                        hard = true;
                        soft = false;
                    }
                    b'S' => {
                        soft = true;
                        hard = false;
                    }
                    b'a' => all = true,
                    c => which = c,
                }
            }
        } else {
            value = Some(a.clone());
        }
    }
    let table: &[(u8, Resource, u64, &str)] = &[
        (
            b'c',
            Resource::RLIMIT_CORE,
            512,
            "core file size          (blocks, -c)",
        ),
        (
            b'd',
            Resource::RLIMIT_DATA,
            1024,
            "data seg size           (kbytes, -d)",
        ),
        (
            b'f',
            Resource::RLIMIT_FSIZE,
            512,
            "file size               (blocks, -f)",
        ),
        (
            b'l',
            Resource::RLIMIT_MEMLOCK,
            1024,
            "max locked memory       (kbytes, -l)",
        ),
        (
            b'm',
            Resource::RLIMIT_RSS,
            1024,
            "max memory size         (kbytes, -m)",
        ),
        (
            b'n',
            Resource::RLIMIT_NOFILE,
            1,
            "open files                      (-n)",
        ),
        (
            b's',
            Resource::RLIMIT_STACK,
            1024,
            "stack size              (kbytes, -s)",
        ),
        (
            b't',
            Resource::RLIMIT_CPU,
            1,
            "cpu time               (seconds, -t)",
        ),
        (
            b'u',
            Resource::RLIMIT_NPROC,
            1,
            "max user processes              (-u)",
        ),
        (
            b'v',
            Resource::RLIMIT_AS,
            1024,
            "virtual memory          (kbytes, -v)",
        ),
    ];
    let show = |v: u64, unit: u64| {
        if v == libc::RLIM_INFINITY {
            "unlimited".to_string()
        } else {
            (v / unit).to_string()
        }
    };
    if all {
        let mut out = String::new();
        for (_, r, unit, label) in table {
            if let Ok((s, h)) = getrlimit(*r) {
                out.push_str(&format!(
                    "{label} {}\n",
                    show(if hard { h } else { s }, *unit)
                ));
            }
        }
        return Ok(emit(sh, "ulimit", out.as_bytes()));
    }
    let Some(&(_, res, unit, _)) = table.iter().find(|(c, ..)| *c == which) else {
        sh.error(&format!("ulimit: -{}: invalid option", which as char));
        return Ok(2);
    };
    let Ok((s, h)) = getrlimit(res) else {
        return Ok(1);
    };
    match value {
        None => {
            let out = format!("{}\n", show(if hard { h } else { s }, unit));
            Ok(emit(sh, "ulimit", out.as_bytes()))
        }
        Some(v) => {
            let n = if v == b"unlimited" {
                libc::RLIM_INFINITY
            } else {
                match lossy(&v).parse::<u64>() {
                    Ok(n) => n.saturating_mul(unit),
                    Err(_) => {
                        sh.error(&format!("ulimit: {}: invalid number", lossy(&v)));
                        return Ok(1);
                    }
                }
            };
            let (ns, nh) = match (soft, hard) {
                (true, false) if argv[1..].iter().any(|a| a.contains(&b'S')) => (n, h),
                (false, true) => (s.min(n), n),
                _ => (n, if n > h { n } else { h.min(n.max(h)) }),
            };
            let nh = if hard || !argv[1..].iter().any(|a| a.contains(&b'S')) && n > h {
                n
            } else {
                nh
            };
            match setrlimit(res, ns, nh) {
                Ok(()) => Ok(0),
                Err(e) => {
                    sh.error(&format!(
                        "ulimit: {}: cannot modify limit: {}",
                        which as char,
                        std::io::Error::from(e)
                    ));
                    Ok(1)
                }
            }
        }
    }
}

// ---- getopts -------------------------------------------------------------

/// A getopts diagnostic as bash writes it: `$0: message`, with no line
/// (and none with OPTERR=0).
fn getopts_error(sh: &Shell, msg: &str) {
    if sh.vars.get(b"OPTERR") == Some(b"0") {
        return;
    }
    sh.err_out(format!("{}: {msg}\n", String::from_utf8_lossy(&sh.arg0)).as_bytes());
}

fn getopts(sh: &mut Shell, argv: Args<'_>) -> Exec {
    if argv.len() >= 2 && argv[1].len() > 1 && argv[1][0] == b'-' && argv[1] != b"--" {
        sh.error(&format!("getopts: {}: invalid option", lossy(&argv[1])));
        sh.usage("getopts: usage: getopts optstring name [arg ...]");
        return Ok(2);
    }
    let argv = if argv.get(1).is_some_and(|a| a == b"--") {
        &argv[1..]
    } else {
        argv
    };
    if argv.len() < 3 {
        sh.usage("getopts: usage: getopts optstring name [arg ...]");
        return Ok(2);
    }
    let name = argv[2].clone();
    if !crate::parse::is_name(&name) {
        sh.error(&format!(
            "getopts: `{}': not a valid identifier",
            lossy(&name)
        ));
        // The option is still taken (OPTIND moves on), as in bash; only
        // the variable is not set.
        getopts_parse(sh, argv, false)?;
        return Ok(1);
    }
    getopts_parse(sh, argv, true)
}

/// getopts, its arguments checked: the next option into `argv[2]`
/// (unless not `bind`: a name bash refuses still takes the option).
fn getopts_parse(sh: &mut Shell, argv: &[Vec<u8>], bind: bool) -> Exec {
    let optstring = argv[1].clone();
    let name = argv[2].clone();
    let args: Vec<Vec<u8>> = if argv.len() > 3 {
        argv[3..].to_vec()
    } else {
        sh.positional.clone()
    };
    let silent = optstring.first() == Some(&b':');
    let optind: usize = sh
        .vars
        .get(b"OPTIND")
        .and_then(|v| lossy(v).parse().ok())
        .unwrap_or(1)
        .max(1);
    // OPTIND past the arguments (`set --` between two loops, or set by
    // hand): the end, just after the last (bash; with no arguments, 1).
    let optind_seen = optind;
    let optind = optind.min(args.len() + 1);
    // Reset the position inside a cluster when OPTIND was changed or
    // assigned.
    if sh.getopts_state.0 != optind || std::mem::take(&mut sh.vars.optind_assigned) {
        sh.getopts_state = (optind, 1);
    }
    let (mut ind, mut pos) = sh.getopts_state;
    let set = |sh: &mut Shell, k: &[u8], v: Vec<u8>| {
        if !bind && k == name.as_slice() {
            return;
        }
        if let Err(e) = sh.vars.set(k, v) {
            sh.error(&e.to_string());
        }
        // getopts' own OPTIND is no reset.
        sh.vars.optind_assigned = false;
    };
    let Some(arg) = args.get(ind - 1) else {
        set(sh, &name, b"?".to_vec());
        sh.vars.unset_internal(b"OPTARG");
        if ind != optind_seen {
            set(sh, b"OPTIND", ind.to_string().into_bytes());
        }
        return Ok(1);
    };
    if pos == 1 {
        if arg == b"--" {
            ind += 1;
            set(sh, b"OPTIND", ind.to_string().into_bytes());
            sh.getopts_state = (ind, 1);
            set(sh, &name, b"?".to_vec());
            return Ok(1);
        }
        if arg.len() < 2 || arg[0] != b'-' {
            set(sh, &name, b"?".to_vec());
            sh.vars.unset_internal(b"OPTARG");
            return Ok(1);
        }
    }
    let c = arg[pos];
    pos += 1;
    let spec = optstring.iter().position(|&o| o == c && o != b':');
    let takes_arg = spec.is_some_and(|i| optstring.get(i + 1) == Some(&b':'));
    let mut status = 0;
    if spec.is_none() {
        if silent {
            set(sh, b"OPTARG", vec![c]);
        } else {
            getopts_error(sh, &format!("illegal option -- {}", c as char));
            sh.vars.unset_internal(b"OPTARG");
        }
        set(sh, &name, b"?".to_vec());
    } else if takes_arg {
        if pos < arg.len() {
            set(sh, b"OPTARG", arg[pos..].to_vec());
            pos = arg.len();
        } else if let Some(next) = args.get(ind) {
            set(sh, b"OPTARG", next.clone());
            ind += 1;
        } else {
            if silent {
                set(sh, &name, b":".to_vec());
                set(sh, b"OPTARG", vec![c]);
            } else {
                getopts_error(sh, &format!("option requires an argument -- {}", c as char));
                set(sh, &name, b"?".to_vec());
                sh.vars.unset_internal(b"OPTARG");
            }
            ind += 1;
            sh.getopts_state = (ind, 1);
            set(sh, b"OPTIND", ind.to_string().into_bytes());
            return Ok(0);
        }
        set(sh, &name, vec![c]);
    } else {
        set(sh, &name, vec![c]);
        // A flag without an argument leaves OPTARG empty (set).
        set(sh, b"OPTARG", Vec::new());
    }
    if pos >= arg.len() {
        ind += 1;
        pos = 1;
    }
    sh.getopts_state = (ind, pos);
    set(sh, b"OPTIND", ind.to_string().into_bytes());
    if status != 0 {
        status = 1;
    }
    Ok(status)
}

// ---- [[ ]] ---------------------------------------------------------------

/// `[[ … ]]`: operands expand without splitting or globbing; the right side
/// of `==` and `!=` is a pattern, of `=~` a regular expression.
pub fn double_bracket(sh: &mut Shell, words: &[crate::ast::Word]) -> Exec {
    let mut p = crate::test::Cond::new(sh, words);
    match p.or() {
        Ok(v) => {
            if p.i < words.len() {
                let w = lossy(&words[p.i].unquoted_text());
                p.sh.error(&format!(
                    "syntax error in conditional expression: unexpected token `{w}'"
                ));
                return Ok(2);
            }
            Ok(i32::from(!v))
        }
        Err(Ok(status)) => Ok(status),
        Err(Err(flow)) => Err(flow),
    }
}
