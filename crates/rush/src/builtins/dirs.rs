//! The directory stack: `pushd`, `popd`, `dirs` (bash), and `DIRSTACK`.
//!
//! Entry 0 is always the current directory (`$PWD`); the shell keeps the
//! rest in [`Shell::dir_stack`], top first.

use super::{Args, cd_as, emit, lossy};
use crate::shell::{Exec, Shell};

/// The whole stack: the current directory, then the saved ones.
pub fn stack(sh: &Shell) -> Vec<Vec<u8>> {
    let pwd = sh.vars.get(b"PWD").map(<[u8]>::to_vec).unwrap_or_else(|| {
        use std::os::unix::ffi::OsStrExt;
        std::env::current_dir()
            .map(|p| p.as_os_str().as_bytes().to_vec())
            .unwrap_or_default()
    });
    std::iter::once(pwd)
        .chain(sh.dir_stack.iter().cloned())
        .collect()
}

/// `+N` / `-N`: an index into a stack of `len` entries, from the left or
/// from the right. `None` for anything else; `Some(Err)` if out of range.
fn index(arg: &[u8], len: usize) -> Option<Result<usize, ()>> {
    let (from_left, digits) = match arg.split_first()? {
        (b'+', d) => (true, d),
        (b'-', d) => (false, d),
        _ => return None,
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n: usize = lossy(digits).parse().ok()?;
    Some(match (from_left, n < len) {
        (_, false) => Err(()),
        (true, true) => Ok(n),
        (false, true) => Ok(len - 1 - n),
    })
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
    let line: Vec<Vec<u8>> = stack(sh).iter().map(|d| tilde(sh, d)).collect();
    let mut out = line.join(&b' ');
    out.push(b'\n');
    emit(sh, who, &out)
}

fn usage(sh: &mut Shell, who: &str, arg: &[u8]) -> Exec {
    sh.error(&format!("{who}: {}: invalid argument", lossy(arg)));
    Ok(2)
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
    while let Some(a) = args.first() {
        match a.as_slice() {
            b"-n" => no_cd = true,
            b"--" => {
                args = &args[1..];
                break;
            }
            _ => break,
        }
        args = &args[1..];
    }
    let all = stack(sh);
    match args {
        [] => {
            // Swap the top two.
            let Some(next) = sh.dir_stack.first().cloned() else {
                sh.error("pushd: no other directory");
                return Ok(1);
            };
            if !no_cd && !go(sh, "pushd", &next) {
                return Ok(1);
            }
            sh.dir_stack[0] = all[0].clone();
        }
        [a] if index(a, all.len()).is_some() => {
            let Some(Ok(n)) = index(a, all.len()) else {
                return out_of_range(sh, "pushd", a);
            };
            // Rotate so that entry n is on top.
            let mut rotated = all[n..].to_vec();
            rotated.extend_from_slice(&all[..n]);
            if !no_cd && n != 0 && !go(sh, "pushd", &rotated[0]) {
                return Ok(1);
            }
            sh.dir_stack = rotated[1..].to_vec();
        }
        [dir] => {
            if dir.len() > 1 && dir[0] == b'-' {
                return usage(sh, "pushd", dir);
            }
            if no_cd {
                sh.dir_stack.insert(0, dir.clone());
            } else {
                if !go(sh, "pushd", dir) {
                    return Ok(1);
                }
                sh.dir_stack.insert(0, all[0].clone());
            }
        }
        _ => {
            sh.error("pushd: too many arguments");
            return Ok(2);
        }
    }
    Ok(show(sh, "pushd"))
}

pub fn popd(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let mut no_cd = false;
    let mut which = None;
    for a in &argv[1..] {
        match a.as_slice() {
            b"-n" => no_cd = true,
            b"--" => {}
            a if which.is_none() && (a.starts_with(b"+") || a.starts_with(b"-")) => {
                which = Some(a.to_vec());
            }
            a => return usage(sh, "popd", a),
        }
    }
    if sh.dir_stack.is_empty() {
        sh.error("popd: directory stack empty");
        return Ok(1);
    }
    let all = stack(sh);
    let n = match &which {
        None => 0,
        Some(a) => match index(a, all.len()) {
            Some(Ok(n)) => n,
            Some(Err(())) => return out_of_range(sh, "popd", a),
            None => return usage(sh, "popd", a),
        },
    };
    if n == 0 {
        if no_cd {
            // -n: the entry below the current directory goes instead.
            sh.dir_stack.remove(0);
        } else {
            let next = sh.dir_stack[0].clone();
            if !go(sh, "popd", &next) {
                return Ok(1);
            }
            sh.dir_stack.remove(0);
        }
    } else {
        sh.dir_stack.remove(n - 1);
    }
    Ok(show(sh, "popd"))
}

pub fn dirs(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let (mut long, mut lines, mut verbose) = (false, false, false);
    let mut which = None;
    for a in &argv[1..] {
        match a.as_slice() {
            b"-c" => {
                sh.dir_stack.clear();
                return Ok(0);
            }
            b"-l" => long = true,
            b"-p" => lines = true,
            b"-v" => {
                lines = true;
                verbose = true;
            }
            a if index(a, usize::MAX).is_some() => which = Some(a.to_vec()),
            a => return usage(sh, "dirs", a),
        }
    }
    let all = stack(sh);
    let shown = |sh: &Shell, d: &[u8]| if long { d.to_vec() } else { tilde(sh, d) };
    let mut out = Vec::new();
    if let Some(a) = which {
        let Some(Ok(n)) = index(&a, all.len()) else {
            if sh.dir_stack.is_empty() {
                sh.error("dirs: directory stack empty");
                return Ok(1);
            }
            return out_of_range(sh, "dirs", &a);
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
