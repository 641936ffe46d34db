//! What a name is and where it runs from: `alias`, `unalias`, `builtin`,
//! `command`, `type` and `hash`.

use super::{Args, emit, getopt, is_builtin, is_special, lossy, run_builtin};
use crate::ast::KEYWORDS;
use crate::quote::quote_always;
use crate::shell::{Exec, Run, Shell};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

pub(super) fn alias(sh: &mut Shell, argv: Args<'_>) -> Exec {
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

pub(super) fn unalias(sh: &mut Shell, argv: Args<'_>) -> Exec {
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

pub(super) fn builtin(sh: &mut Shell, argv: Args<'_>) -> Exec {
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
pub(super) enum Kind {
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
pub(super) fn resolve(sh: &mut Shell, name: &[u8], all: bool, files_only: bool) -> Vec<Kind> {
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

pub(super) fn command(sh: &mut Shell, argv: Args<'_>) -> Exec {
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

pub(super) fn describe(sh: &Shell, name: &[u8], k: &Kind, out: &mut Vec<u8>) {
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

pub(super) const TYPE_USAGE: &str = "type: usage: type [-afptP] name [name ...]";

pub(super) fn type_(sh: &mut Shell, argv: Args<'_>) -> Exec {
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

pub(super) fn hash(sh: &mut Shell, argv: Args<'_>) -> Exec {
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
        && !sh.restricted_hash_target("hash: ", p)
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

pub(super) const HASH_USAGE: &str = "hash: usage: hash [-lr] [-p pathname] [-dt] [name ...]";
