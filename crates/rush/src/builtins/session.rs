//! The builtins about the shell itself: `enable`, `help`, `logout` and
//! `suspend`.

use super::{Args, emit, lossy};
use crate::shell::{Exec, Flow, Shell};

/// Each builtin's synopsis (as `help -s` and usage errors print it) and
/// what it does, in a line.
pub const TOPICS: &[(&str, &str, &str)] = &[
    (
        ".",
        ". filename [arguments]",
        "Run the commands of a file in this shell.",
    ),
    (":", ":", "Do nothing, successfully."),
    (
        "[",
        "[ arg... ]",
        "Evaluate a conditional expression; the last argument is `]'.",
    ),
    (
        "alias",
        "alias [-p] [name[=value] ... ]",
        "Define aliases, or print them.",
    ),
    ("bg", "bg [job_spec ...]", "Resume jobs in the background."),
    (
        "bind",
        "bind [-lpsvPSVX] [-m keymap] [-f filename] [-q name] [-u name] [-r keyseq] [-x keyseq:shell-command] [keyseq:readline-function or readline-command]",
        "Set the line editor's key bindings and variables.",
    ),
    ("break", "break [n]", "Leave the innermost n loops."),
    (
        "builtin",
        "builtin [shell-builtin [arg ...]]",
        "Run a builtin, not a function of the same name.",
    ),
    (
        "caller",
        "caller [expr]",
        "Tell where the current function or sourced file was called from.",
    ),
    (
        "cd",
        "cd [-L|[-P [-e]] [-@]] [dir]",
        "Change the working directory.",
    ),
    (
        "command",
        "command [-pVv] command [arg ...]",
        "Run a command, not a function; or tell what a name is.",
    ),
    (
        "compgen",
        "compgen [-abcdefgjksuv] [-o option] [-A action] [-G globpat] [-W wordlist] [-F function] [-C command] [-X filterpat] [-P prefix] [-S suffix] [word]",
        "Print the completions of a word.",
    ),
    (
        "complete",
        "complete [-abcdefgjksuv] [-pr] [-DEI] [-o option] [-A action] [-G globpat] [-W wordlist] [-F function] [-C command] [-X filterpat] [-P prefix] [-S suffix] [name ...]",
        "Say how the arguments of commands are completed.",
    ),
    (
        "compopt",
        "compopt [-o|+o option] [-DEI] [name ...]",
        "Change the completion options.",
    ),
    (
        "continue",
        "continue [n]",
        "Go on with the next turn of the innermost n loops.",
    ),
    (
        "declare",
        "declare [-aAfFgiIlnrtux] [name[=value] ...] or declare -p [-aAfFilnrtux] [name ...]",
        "Set variables and their attributes, or print them.",
    ),
    (
        "dirs",
        "dirs [-clpv] [+N] [-N]",
        "Print the directory stack.",
    ),
    (
        "disown",
        "disown [-h] [-ar] [jobspec ... | pid ...]",
        "Remove jobs from the job table.",
    ),
    ("echo", "echo [-neE] [arg ...]", "Write the arguments."),
    (
        "enable",
        "enable [-a] [-dnps] [-f filename] [name ...]",
        "Turn builtins on or off.",
    ),
    (
        "eval",
        "eval [arg ...]",
        "Run the arguments as shell commands.",
    ),
    (
        "exec",
        "exec [-cl] [-a name] [command [argument ...]] [redirection ...]",
        "Replace the shell with a command, or apply redirections to the shell.",
    ),
    ("exit", "exit [n]", "Leave the shell with status n."),
    (
        "export",
        "export [-fn] [name[=value] ...] or export -p",
        "Hand variables and functions to commands run from here.",
    ),
    ("false", "false", "Fail."),
    (
        "fc",
        "fc [-e ename] [-lnr] [first] [last] or fc -s [pat=rep] [command]",
        "List, edit and run commands of the history.",
    ),
    ("fg", "fg [job_spec]", "Bring a job to the foreground."),
    (
        "getopts",
        "getopts optstring name [arg ...]",
        "Parse options from the positional parameters.",
    ),
    (
        "hash",
        "hash [-lr] [-p pathname] [-dt] [name ...]",
        "Remember or show where commands are.",
    ),
    ("help", "help [-dms] [pattern ...]", "Tell about builtins."),
    (
        "history",
        "history [-c] [-d offset] [n] or history -anrw [filename] or history -ps arg [arg...]",
        "Show or change the command history.",
    ),
    (
        "jobs",
        "jobs [-lnprs] [jobspec ...] or jobs -x command [args]",
        "List the jobs.",
    ),
    (
        "kill",
        "kill [-s sigspec | -n signum | -sigspec] pid | jobspec ... or kill -l [sigspec]",
        "Send a signal to processes or jobs.",
    ),
    (
        "let",
        "let arg [arg ...]",
        "Evaluate arithmetic expressions.",
    ),
    (
        "local",
        "local [option] name[=value] ...",
        "Make variables local to a function.",
    ),
    ("logout", "logout [n]", "Leave a login shell."),
    (
        "mapfile",
        "mapfile [-d delim] [-n count] [-O origin] [-s count] [-t] [-u fd] [-C callback] [-c quantum] [array]",
        "Read lines into an indexed array.",
    ),
    (
        "popd",
        "popd [-n] [+N | -N]",
        "Remove a directory from the stack and go there.",
    ),
    (
        "printf",
        "printf [-v var] format [arguments]",
        "Write the arguments under a format.",
    ),
    (
        "pushd",
        "pushd [-n] [+N | -N | dir]",
        "Put a directory on the stack and go there.",
    ),
    ("pwd", "pwd [-LP]", "Print the working directory."),
    (
        "read",
        "read [-ers] [-a array] [-d delim] [-i text] [-n nchars] [-N nchars] [-p prompt] [-t timeout] [-u fd] [name ...]",
        "Read a line into variables.",
    ),
    (
        "readarray",
        "readarray [-d delim] [-n count] [-O origin] [-s count] [-t] [-u fd] [-C callback] [-c quantum] [array]",
        "Read lines into an indexed array.",
    ),
    (
        "readonly",
        "readonly [-aAf] [name[=value] ...] or readonly -p",
        "Make variables read-only.",
    ),
    (
        "return",
        "return [n]",
        "Leave a function or sourced file with status n.",
    ),
    (
        "set",
        "set [-abefhkmnptuvxBCEHPT] [-o option-name] [--] [-] [arg ...]",
        "Set options and positional parameters.",
    ),
    (
        "shift",
        "shift [n]",
        "Drop the first n positional parameters.",
    ),
    (
        "shopt",
        "shopt [-pqsu] [-o] [optname ...]",
        "Set or show the shell's options.",
    ),
    (
        "source",
        "source filename [arguments]",
        "Run the commands of a file in this shell.",
    ),
    (
        "suspend",
        "suspend [-f]",
        "Stop the shell until it gets SIGCONT.",
    ),
    ("test", "test [expr]", "Evaluate a conditional expression."),
    (
        "times",
        "times",
        "Print the user and system times of the shell and its children.",
    ),
    (
        "trap",
        "trap [-lp] [[arg] signal_spec ...]",
        "Run commands when signals come.",
    ),
    ("true", "true", "Succeed."),
    (
        "type",
        "type [-afptP] name [name ...]",
        "Tell what each name is as a command.",
    ),
    (
        "typeset",
        "typeset [-aAfFgiIlnrtux] name[=value] ... or typeset -p [-aAfFilnrtux] [name ...]",
        "Set variables and their attributes, or print them.",
    ),
    (
        "ulimit",
        "ulimit [-SHabcdefiklmnpqrstuvxPRT] [limit]",
        "Show or set resource limits.",
    ),
    (
        "umask",
        "umask [-p] [-S] [mode]",
        "Show or set the file creation mask.",
    ),
    ("unalias", "unalias [-a] name [name ...]", "Remove aliases."),
    (
        "unset",
        "unset [-f] [-v] [-n] [name ...]",
        "Remove variables or functions.",
    ),
    (
        "wait",
        "wait [-fn] [-p var] [id ...]",
        "Wait for jobs or processes to end.",
    ),
];

const HELP_USAGE: &str = "help: usage: help [-dms] [pattern ...]";
const ENABLE_USAGE: &str = "enable: usage: enable [-a] [-dnps] [-f filename] [name ...]";

/// `help [-dms] [pattern ...]`: each builtin whose name matches a pattern
/// (a glob), with its synopsis and what it does.
pub fn help(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let Ok((flags, patterns)) = super::options(sh, argv, b"dms", HELP_USAGE) else {
        return Ok(2);
    };
    let (short, synopsis, manual) = (
        flags.contains(&b'd'),
        flags.contains(&b's'),
        flags.contains(&b'm'),
    );
    let mut out = String::new();
    if patterns.is_empty() {
        out.push_str(
            "rush, a shell that runs bash's scripts. These builtins are defined;\n\
             `help name' tells more about one, and `help -s name' gives its synopsis.\n\n",
        );
        for (_, syn, _) in TOPICS {
            out.push_str(&format!(" {syn}\n"));
        }
        // bash does not check this write.
        let _ = sh.out(out.as_bytes());
        return Ok(0);
    }
    let mut status = 0;
    for p in &patterns {
        let pattern = crate::pattern::Pattern::new(p);
        let hits: Vec<_> = TOPICS
            .iter()
            .filter(|(name, _, _)| pattern.matches(name.as_bytes()))
            .collect();
        if hits.is_empty() {
            let p = lossy(p);
            sh.error(&format!(
                "help: no help topics match `{p}'.  Try `help help' or `man -k {p}' or `info {p}'."
            ));
            status = 1;
        }
        for (name, syn, what) in hits {
            if short {
                out.push_str(&format!("{name} - {what}\n"));
            } else if synopsis {
                out.push_str(&format!("{name}: {syn}\n"));
            } else if manual {
                out.push_str(&format!(
                    "NAME\n    {name} - {what}\n\nSYNOPSIS\n    {syn}\n\n"
                ));
            } else {
                out.push_str(&format!("{name}: {syn}\n    {what}\n"));
            }
        }
    }
    emit(sh, "help", out.as_bytes());
    Ok(status)
}

/// `enable [-a] [-dnps] [-f filename] [name ...]`: turns builtins off
/// (`-n`: the name then finds a function or a program) and on again, or
/// lists them. Loadable builtins (`-f`, `-d`) are not supported.
pub fn enable(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let Ok((flags, names)) = super::options(sh, argv, b"adfnps", ENABLE_USAGE) else {
        return Ok(2);
    };
    if flags.contains(&b'f') {
        let file = names.first().map(|f| lossy(f)).unwrap_or_default();
        sh.error(&format!(
            "enable: cannot open shared object {file}: loadable builtins are not supported"
        ));
        return Ok(1);
    }
    if flags.contains(&b'd') {
        sh.error("enable: -d: loadable builtins are not supported");
        return Ok(1);
    }
    let (all, disable, special) = (
        flags.contains(&b'a'),
        flags.contains(&b'n'),
        flags.contains(&b's'),
    );
    if names.is_empty() {
        let mut list: Vec<&[u8]> = super::names()
            // bash's table marks `source` special too (it acts as one in
            // POSIX mode).
            .filter(|n| !special || super::is_special(n, true))
            .collect();
        list.sort_unstable();
        let mut out = Vec::new();
        for n in list {
            let off = sh.disabled_builtins.contains(n);
            if all || off == disable {
                out.extend_from_slice(if off { b"enable -n " } else { b"enable " });
                out.extend_from_slice(n);
                out.push(b'\n');
            }
        }
        return Ok(emit(sh, "enable", &out));
    }
    let mut status = 0;
    for n in &names {
        if !super::names().any(|b| b == n.as_slice()) {
            sh.error(&format!("enable: {}: not a shell builtin", lossy(n)));
            status = 1;
        } else if disable {
            sh.disabled_builtins.insert(n.clone());
        } else {
            sh.disabled_builtins.remove(n);
        }
    }
    Ok(status)
}

/// `logout [n]`: `exit` for a login shell.
pub fn logout(sh: &mut Shell, argv: Args<'_>) -> Exec {
    if !sh.shopts.on("login_shell") {
        sh.error("logout: not login shell: use `exit'");
        return Ok(1);
    }
    super::exit(sh, argv)
}

/// `suspend [-f]`: stops the shell until a SIGCONT; a login shell only
/// with `-f`.
pub fn suspend(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let force = argv.get(1).is_some_and(|a| a == b"-f");
    if !sh.opts.monitor {
        sh.error("suspend: cannot suspend: no job control");
        return Ok(1);
    }
    if sh.shopts.on("login_shell") && !force {
        sh.error("suspend: cannot suspend a login shell");
        return Ok(1);
    }
    // The whole process group, as bash: SIGSTOP cannot be ignored.
    if let Err(e) = crate::sys::kill(0, libc::SIGSTOP) {
        sh.error(&format!("suspend: {e}"));
        return Err(Flow::Abort(1));
    }
    Ok(0)
}
