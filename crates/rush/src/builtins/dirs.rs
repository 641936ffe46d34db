//! The directory stack: `pushd`, `popd`, `dirs` (bash), and `DIRSTACK`.
//!
//! Entry 0 is always the current directory (`$PWD`); the shell keeps the
//! rest in [`Shell::dir_stack`], top first.

use super::{Args, emit, lossy};
use crate::shell::{Exec, Shell};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// The number after `+` or `-` (`legal_number`: digits, with blanks
/// around); `None` if it is not one.
fn number(arg: &[u8]) -> Option<usize> {
    let t = arg.get(1..)?.trim_ascii();
    if t.is_empty() || !t.iter().all(u8::is_ascii_digit) {
        return None;
    }
    lossy(t).parse().ok()
}

const PUSHD_USAGE: &str = "pushd: usage: pushd [-n] [+N | -N | dir]";
const POPD_USAGE: &str = "popd: usage: popd [-n] [+N | -N]";
const DIRS_USAGE: &str = "dirs: usage: dirs [-clpv] [+N] [-N]";

/// A `+N`/`-N` that is not a number, or an unknown option: bash's two
/// messages, each with the usage line.
fn bad_arg(sh: &mut Shell, who: &str, arg: &[u8], number: bool, usage: &str) -> Exec {
    let what = if number {
        "invalid number"
    } else {
        "invalid option"
    };
    sh.error(&format!("{who}: {}: {what}", lossy(arg)));
    sh.err_out(format!("{usage}\n").as_bytes());
    Ok(2)
}

/// bash's `pushd_error`: an empty stack, or an index out of its range.
fn stack_error(sh: &mut Shell, who: &str, arg: &[u8]) -> Exec {
    if sh.dir_stack.is_empty() {
        sh.error(&format!("{who}: directory stack empty"));
    } else {
        out_of_range(sh, who, arg)?;
    }
    Ok(1)
}

/// `~` for `$HOME` at the start of a path, as `dirs` shows it without `-l`.
fn tilde(sh: &Shell, dir: &[u8]) -> Vec<u8> {
    match sh.vars.get(b"HOME") {
        Some(home) if !home.is_empty() && home != b"/" && dir.starts_with(home) => {
            let rest = &dir[home.len()..];
            if rest.is_empty() || rest[0] == b'/' {
                return [b"~", rest].concat();
            }
            dir.to_vec()
        }
        _ => dir.to_vec(),
    }
}

/// Changes to `dir` in the name of `who`; false (the error said) if not.
fn go(sh: &mut Shell, who: &str, dir: &[u8]) -> bool {
    let argv = [b"cd".to_vec(), b"--".to_vec(), dir.to_vec()];
    matches!(cd_as(sh, who, &argv), Ok(0))
}

/// Prints the stack as `dirs` does with no options.
fn show(sh: &mut Shell, who: &str) -> i32 {
    let line: Vec<Vec<u8>> = sh.directory_stack().iter().map(|d| tilde(sh, d)).collect();
    let mut out = line.join(&b' ');
    out.push(b'\n');
    emit(sh, who, &out)
}

fn out_of_range(sh: &mut Shell, who: &str, arg: &[u8]) -> Exec {
    sh.error(&format!(
        "{who}: {}: directory stack index out of range",
        lossy(arg)
    ));
    Ok(1)
}

pub fn pushd(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let mut args = &argv[1..];
    let mut no_cd = false;
    let mut rotate = None;
    let skip = args.first().map(Vec::as_slice) == Some(b"--");
    if skip {
        args = &args[1..];
    }
    let all = sh.directory_stack();
    if args.is_empty() && !skip || skip && args.is_empty() {
        // Swap the top two.
        let Some(next) = sh.dir_stack.first().cloned() else {
            sh.error("pushd: no other directory");
            return Ok(1);
        };
        if !go(sh, "pushd", &next) {
            return Ok(1);
        }
        sh.dir_stack[0] = all[0].clone();
        return Ok(show(sh, "pushd"));
    }
    while !skip && let Some(a) = args.first() {
        match a.as_slice() {
            b"-n" => no_cd = true,
            b"--" => {
                args = &args[1..];
                break;
            }
            // `pushd -` is `cd -`.
            b"-" => break,
            [b'+' | b'-', ..] => {
                let Some(n) = number(a) else {
                    return bad_arg(sh, "pushd", a, true, PUSHD_USAGE);
                };
                let offset = sh.dir_stack.len();
                let n = if a[0] == b'-' {
                    offset.checked_sub(n)
                } else {
                    Some(n)
                };
                match n.filter(|&n| n <= offset) {
                    Some(n) => rotate = Some(n),
                    None => return stack_error(sh, "pushd", a),
                }
            }
            _ => break,
        }
        args = &args[1..];
    }
    if let Some(n) = rotate {
        // Rotate so that entry n is on top.
        if n == 0 {
            return Ok(if no_cd || go(sh, "pushd", &all[0]) {
                if no_cd { 0 } else { show(sh, "pushd") }
            } else {
                1
            });
        }
        let mut rotated = all[n..].to_vec();
        rotated.extend_from_slice(&all[..n]);
        if !no_cd && !go(sh, "pushd", &rotated[0]) {
            return Ok(1);
        }
        sh.dir_stack = rotated[1..].to_vec();
        return Ok(if no_cd { 0 } else { show(sh, "pushd") });
    }
    let Some(dir) = args.first() else {
        return Ok(0);
    };
    if no_cd {
        sh.dir_stack.insert(0, dir.clone());
    } else {
        if !go(sh, "pushd", dir) {
            return Ok(1);
        }
        sh.dir_stack.insert(0, all[0].clone());
    }
    Ok(show(sh, "pushd"))
}

pub fn popd(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let mut no_cd = false;
    // bash's `which`, signed, and the word that gave it.
    let mut which: i64 = 0;
    let mut from_left = true;
    let mut word: Vec<u8> = Vec::new();
    for a in &argv[1..] {
        match a.as_slice() {
            b"-n" => no_cd = true,
            b"--" => break,
            [c @ (b'+' | b'-'), ..] => {
                let Some(n) = number(a) else {
                    return bad_arg(sh, "popd", a, true, POPD_USAGE);
                };
                from_left = *c == b'+';
                which = i64::try_from(n).unwrap_or(i64::MAX);
                word = a.clone();
            }
            [] => break,
            a => {
                sh.error(&format!("popd: {}: invalid argument", lossy(a)));
                sh.err_out(format!("{POPD_USAGE}\n").as_bytes());
                return Ok(2);
            }
        }
    }
    let offset = sh.dir_stack.len() as i64;
    if which > offset || offset == 0 && which == 0 {
        return stack_error(sh, "popd", &word);
    }
    // bash's list is bottom first: entry `offset` is the top.
    if from_left && which == 0 || !from_left && which == offset {
        if !no_cd {
            let next = sh.dir_stack[0].clone();
            if !go(sh, "popd", &next) {
                return Ok(1);
            }
        }
        sh.dir_stack.remove(0);
    } else {
        let i = if from_left { offset - which } else { which };
        if i < 0 || i > offset {
            return stack_error(sh, "popd", &word);
        }
        // bash's index i (from the bottom) is our offset - 1 - i.
        let k = usize::try_from(offset - 1 - i).unwrap_or(0);
        sh.dir_stack.remove(k);
    }
    Ok(show(sh, "popd"))
}

pub fn dirs(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let (mut long, mut lines, mut verbose, mut clear) = (false, false, false, false);
    // The entry asked for, top first, and the digits that asked.
    let mut which: Option<Option<usize>> = None;
    let mut digits: Vec<u8> = Vec::new();
    for a in &argv[1..] {
        match a.as_slice() {
            b"-c" => clear = true,
            b"-l" => long = true,
            b"-p" => lines = true,
            b"-v" => {
                lines = true;
                verbose = true;
            }
            b"--" => break,
            [c @ (b'+' | b'-'), ..] => {
                let Some(n) = number(a) else {
                    return bad_arg(sh, "dirs", a, true, DIRS_USAGE);
                };
                digits = a[1..].to_vec();
                let len = sh.dir_stack.len() + 1;
                which = Some(if *c == b'+' {
                    (n < len).then_some(n)
                } else {
                    len.checked_sub(n + 1)
                });
            }
            a => return bad_arg(sh, "dirs", a, false, DIRS_USAGE),
        }
    }
    if clear {
        sh.dir_stack.clear();
        return Ok(0);
    }
    let all = sh.directory_stack();
    let shown = |sh: &Shell, d: &[u8]| if long { d.to_vec() } else { tilde(sh, d) };
    let mut out = Vec::new();
    if let Some(which) = which {
        let Some(n) = which else {
            return stack_error(sh, "dirs", &digits);
        };
        if verbose {
            out.extend_from_slice(format!("{n:2}  ").as_bytes());
        }
        out.extend_from_slice(&shown(sh, &all[n]));
        out.push(b'\n');
        return Ok(emit(sh, "dirs", &out));
    }
    for (i, d) in all.iter().enumerate() {
        if verbose {
            out.extend_from_slice(format!("{i:2}  ").as_bytes());
        } else if i > 0 && !lines {
            out.push(b' ');
        }
        out.extend_from_slice(&shown(sh, d));
        if lines {
            out.push(b'\n');
        }
    }
    if !lines {
        out.push(b'\n');
    }
    Ok(emit(sh, "dirs", &out))
}

/// Makes `path` absolute against `base` and removes `.`, `..` and doubled
/// slashes textually (cd's logical mode). `None` when what a `..` would
/// remove is not a directory (bash checks: `cd nosuch/..` fails).
pub(super) fn logical(base: &[u8], path: &[u8]) -> Option<Vec<u8>> {
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

pub(super) fn cd(sh: &mut Shell, argv: Args<'_>) -> Exec {
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

pub(super) fn pwd(sh: &mut Shell, argv: Args<'_>) -> Exec {
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
