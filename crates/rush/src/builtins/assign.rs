//! The builtins that set, mark and remove variables and functions:
//! `declare` (and `typeset`), `local`, `export`, `readonly`, `unset`, `let`
//! and `shift`.

use super::{Args, emit, lossy, option_flags};
use crate::quote::{attr_flags, declare_line, exportable_function_name};
use crate::shell::{Exec, Flow, Run, Shell};
use crate::vars::Value;

pub(super) fn split_name_value(a: &[u8]) -> (&[u8], Option<&[u8]>) {
    match a.iter().position(|&c| c == b'=') {
        Some(i) => (&a[..i], Some(&a[i + 1..])),
        None => (a, None),
    }
}

pub(super) fn export(sh: &mut Shell, argv: Args<'_>) -> Exec {
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
pub(super) fn quoted_compound(name: &[u8], value: &[u8]) -> Option<crate::ast::Assign> {
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
pub(super) fn quoted_arrays(
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
pub(super) fn each_name_value(
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

pub(super) fn readonly(sh: &mut Shell, argv: Args<'_>) -> Exec {
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
pub(super) fn compat_level(sh: &Shell) -> u32 {
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

pub(super) fn unset(sh: &mut Shell, argv: Args<'_>) -> Exec {
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
            sh.set_shopt("dotglob", false);
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
pub(super) fn readonly_functions(sh: &mut Shell, names: &[Vec<u8>], who: &str) -> i32 {
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

pub(super) fn remove_function(sh: &mut Shell, name: &[u8]) -> bool {
    sh.vars.export_function(name, None);
    sh.traced.remove(name);
    sh.functions.remove(name).is_some()
}

pub(super) fn local(sh: &mut Shell, argv: Args<'_>) -> Exec {
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

/// `declare`'s attribute flags, after the value is in place.
pub(super) fn apply_attributes(
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

pub(super) fn let_(sh: &mut Shell, argv: Args<'_>) -> Exec {
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

pub(super) fn shift(sh: &mut Shell, argv: Args<'_>) -> Exec {
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
        if sh.opts.posix || sh.shopts.on("shift_verbose") {
            sh.error(&format!("shift: {n}: shift count out of range"));
        }
        return Ok(1);
    }
    sh.positional.drain(..n);
    Ok(0)
}

pub(super) fn declare(sh: &mut Shell, argv: Args<'_>) -> Exec {
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
                    if named && sh.shopts.on("extdebug") {
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
            let inheriting = local && (inherit || sh.shopts.on("localvar_inherit"));
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
