//! Programmable completion (bash): `complete` keeps a completion
//! specification per command, `compgen` generates candidates from one, and
//! `compopt` changes the options of one. The line editor (part 2) calls the
//! same generator; scripts such as git's completion and bash-completion's
//! core use all three when they are sourced and when they run.

use super::{Args, REGULAR, SPECIAL, emit, lossy};
use crate::ast::KEYWORDS;
use crate::compspec::{Action, CompSpec};
use crate::options::OPTION_NAMES;
use crate::quote::quote_always as quoted;
use crate::shell::{Exec, Run, Shell};
use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// The buckets of bash's table of completion specifications.
const COMPLETE_BUCKETS: u32 = 512;

/// The order `complete -p` lists in, as bash walks its table: by bucket
/// (FNV-1 of the name), newest first within one.
fn table_order(name: &[u8], seq: u64) -> (u32, std::cmp::Reverse<u64>) {
    (
        crate::assoc::hash(name) & (COMPLETE_BUCKETS - 1),
        std::cmp::Reverse(seq),
    )
}

/// The `-o` names bash knows.
const OPTIONS: [&str; 8] = [
    "bashdefault",
    "default",
    "dirnames",
    "filenames",
    "noquote",
    "nosort",
    "nospace",
    "plusdirs",
];

/// Action names for `-A`, and the letter each has, if any.
const ACTIONS: [(&str, Action, Option<u8>); 24] = [
    ("alias", Action::Alias, Some(b'a')),
    ("builtin", Action::Builtin, Some(b'b')),
    ("command", Action::Command, Some(b'c')),
    ("directory", Action::Directory, Some(b'd')),
    ("export", Action::Export, Some(b'e')),
    ("file", Action::File, Some(b'f')),
    ("group", Action::Group, Some(b'g')),
    ("job", Action::Job, Some(b'j')),
    ("keyword", Action::Keyword, Some(b'k')),
    ("service", Action::Service, Some(b's')),
    ("user", Action::User, Some(b'u')),
    ("variable", Action::Variable, Some(b'v')),
    ("arrayvar", Action::ArrayVar, None),
    ("binding", Action::Binding, None),
    ("disabled", Action::Disabled, None),
    ("enabled", Action::Enabled, None),
    ("function", Action::Function, None),
    ("helptopic", Action::HelpTopic, None),
    ("hostname", Action::Hostname, None),
    ("running", Action::Running, None),
    ("setopt", Action::SetOpt, None),
    ("shopt", Action::ShOpt, None),
    ("signal", Action::Signal, None),
    ("stopped", Action::Stopped, None),
];

/// The keys bash uses for `-D` (default), `-E` (empty line) and `-I`
/// (initial word).
const DEFAULT: &[u8] = b"_DefaultCmD_";
const EMPTY: &[u8] = b"_EmptycmD_";
const INITIAL: &[u8] = b"_InitialWorD_";

/// What the flags of `complete`, `compgen` or `compopt` said.
#[derive(Debug, Default)]
struct Parsed {
    spec: CompSpec,
    /// `+o` options (compopt).
    off: BTreeSet<&'static str>,
    print: bool,
    remove: bool,
    /// `-D`, `-E`, `-I`: the special keys named.
    special: Vec<&'static [u8]>,
    /// The operands after the options.
    rest: Vec<Vec<u8>>,
}

impl Parsed {
    /// The specifications named: `-D`, `-E`, `-I`, then the operands.
    fn names(&self) -> Vec<Vec<u8>> {
        let mut names: Vec<Vec<u8>> = self.special.iter().map(|s| s.to_vec()).collect();
        names.extend(self.rest.iter().cloned());
        names
    }
}

/// Parses the flags of `who` (`complete`, `compgen` or `compopt`); on an
/// error, reports it and returns the status.
fn parse(sh: &mut Shell, who: &str, argv: Args<'_>) -> Result<Parsed, i32> {
    let mut p = Parsed::default();
    let mut i = 1;
    while i < argv.len() {
        let a = &argv[i];
        if a == b"--" {
            i += 1;
            break;
        }
        if a.len() < 2 || !(a[0] == b'-' || a[0] == b'+') {
            break;
        }
        let plus = a[0] == b'+';
        let mut j = 1;
        while j < a.len() {
            let c = a[j];
            j += 1;
            // Flags that take an argument: the rest of this word, or the next.
            let takes = matches!(
                c,
                b'o' | b'A' | b'G' | b'W' | b'F' | b'C' | b'X' | b'P' | b'S'
            );
            let arg = if takes {
                let v = if j < a.len() {
                    a[j..].to_vec()
                } else {
                    i += 1;
                    match argv.get(i) {
                        Some(v) => v.clone(),
                        None => {
                            sh.error(&format!(
                                "{who}: -{}: option requires an argument",
                                c as char
                            ));
                            return Err(2);
                        }
                    }
                };
                j = a.len();
                v
            } else {
                Vec::new()
            };
            if plus && c != b'o' {
                sh.error(&format!("{who}: +{}: invalid option", c as char));
                return Err(2);
            }
            match c {
                b'o' => {
                    let name = lossy(&arg);
                    let Some(&o) = OPTIONS.iter().find(|o| **o == name) else {
                        sh.error(&format!("{who}: {name}: invalid option name"));
                        return Err(2);
                    };
                    if plus {
                        p.off.insert(o);
                    } else {
                        p.spec.options.insert(o);
                    }
                }
                b'A' => {
                    let name = lossy(&arg);
                    let Some(&(_, action, _)) = ACTIONS.iter().find(|(n, _, _)| *n == name) else {
                        sh.error(&format!("{who}: {name}: invalid action name"));
                        return Err(2);
                    };
                    p.spec.actions.insert(action);
                }
                b'G' => p.spec.glob = Some(arg),
                b'W' => p.spec.wordlist = Some(arg),
                b'F' => p.spec.function = Some(arg),
                b'C' => p.spec.command = Some(arg),
                b'X' => p.spec.filter = Some(arg),
                b'P' => p.spec.prefix = Some(arg),
                b'S' => p.spec.suffix = Some(arg),
                b'p' if who == "complete" => p.print = true,
                b'r' if who == "complete" => p.remove = true,
                b'D' if who != "compgen" => p.special.push(DEFAULT),
                b'E' if who != "compgen" => p.special.push(EMPTY),
                b'I' if who != "compgen" => p.special.push(INITIAL),
                c => match ACTIONS.iter().find(|(_, _, l)| *l == Some(c)) {
                    Some(&(_, action, _)) if who != "compopt" => {
                        p.spec.actions.insert(action);
                    }
                    _ => {
                        sh.error(&format!("{who}: -{}: invalid option", c as char));
                        return Err(2);
                    }
                },
            }
        }
        i += 1;
    }
    p.rest = argv[i..].to_vec();
    Ok(p)
}

/// One `complete` command that recreates `spec` for `name`.
fn print_spec(name: &[u8], spec: &CompSpec) -> Vec<u8> {
    let mut out = b"complete".to_vec();
    for o in &spec.options {
        out.extend_from_slice(format!(" -o {o}").as_bytes());
    }
    for a in &spec.actions {
        if let Some(&(n, _, letter)) = ACTIONS.iter().find(|(_, x, _)| x == a) {
            match letter {
                Some(l) => out.extend_from_slice(&[b' ', b'-', l]),
                None => out.extend_from_slice(format!(" -A {n}").as_bytes()),
            }
        }
    }
    let mut flag = |f: &str, v: &Option<Vec<u8>>, quote: bool| {
        if let Some(v) = v {
            out.extend_from_slice(f.as_bytes());
            out.extend_from_slice(&if quote { quoted(v) } else { v.clone() });
        }
    };
    flag(" -G ", &spec.glob, true);
    flag(" -W ", &spec.wordlist, true);
    flag(" -P ", &spec.prefix, true);
    flag(" -S ", &spec.suffix, true);
    flag(" -X ", &spec.filter, true);
    flag(" -F ", &spec.function, false);
    flag(" -C ", &spec.command, true);
    out.push(b' ');
    out.extend_from_slice(match name {
        DEFAULT => b"-D",
        EMPTY => b"-E",
        INITIAL => b"-I",
        b"" => b"''",
        n => n,
    });
    out.push(b'\n');
    out
}

pub fn complete(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let p = match parse(sh, "complete", argv) {
        Ok(p) => p,
        Err(s) => return Ok(s),
    };
    let names = p.names();
    let nothing_set = p.spec == CompSpec::default();
    if p.remove {
        if names.is_empty() {
            sh.completions.clear();
            return Ok(0);
        }
        let mut status = 0;
        for n in &names {
            if sh.completions.remove(n).is_none() {
                sh.error(&format!(
                    "complete: {}: no completion specification",
                    lossy(n)
                ));
                status = 1;
            }
        }
        return Ok(status);
    }
    if p.print || (nothing_set && names.is_empty()) {
        let mut status = 0;
        let mut out = Vec::new();
        let listed: Vec<Vec<u8>> = if names.is_empty() {
            let mut all: Vec<(&Vec<u8>, &CompSpec)> = sh.completions.iter().collect();
            all.sort_by_key(|(n, s)| table_order(n, s.seq));
            all.into_iter().map(|(n, _)| n.clone()).collect()
        } else {
            names
        };
        for n in &listed {
            match sh.completions.get(n) {
                Some(spec) => out.extend_from_slice(&print_spec(n, spec)),
                None => {
                    sh.error(&format!(
                        "complete: {}: no completion specification",
                        lossy(n)
                    ));
                    status = 1;
                }
            }
        }
        let s = emit(sh, "complete", &out);
        return Ok(status.max(s));
    }
    if names.is_empty() {
        sh.usage("complete: usage: complete [-abcdefgjksuv] [-pr] [-DEI] [-o option] [-A action] [-G globpat] [-W wordlist] [-F function] [-C command] [-X filterpat] [-P prefix] [-S suffix] [name ...]");
        return Ok(2);
    }
    for n in names {
        // A name keeps its place in the table when given a new one.
        let seq = match sh.completions.get(&n) {
            Some(old) => old.seq,
            None => {
                sh.comp_seq += 1;
                sh.comp_seq
            }
        };
        sh.completions.insert(
            n,
            CompSpec {
                seq,
                ..p.spec.clone()
            },
        );
    }
    Ok(0)
}

pub fn compopt(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let p = match parse(sh, "compopt", argv) {
        Ok(p) => p,
        Err(s) => return Ok(s),
    };
    let names = p.names();
    let apply = |spec: &mut CompSpec| {
        spec.options.extend(p.spec.options.iter().copied());
        spec.options.retain(|o| !p.off.contains(o));
    };
    if names.is_empty() {
        // It would change the completion being generated; there is none
        // until the line editor (part 2) runs completion functions.
        sh.error("compopt: not currently executing completion function");
        return Ok(1);
    }
    let mut status = 0;
    for n in names {
        match sh.completions.get_mut(&n) {
            Some(spec) => apply(spec),
            None => {
                sh.error(&format!(
                    "compopt: {}: no completion specification",
                    lossy(&n)
                ));
                status = 1;
            }
        }
    }
    Ok(status)
}

pub fn compgen(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let p = match parse(sh, "compgen", argv) {
        Ok(p) => p,
        Err(s) => return Ok(s),
    };
    let word = p.rest.first().cloned().unwrap_or_default();
    for (set, f) in [
        (p.spec.function.is_some(), 'F'),
        (p.spec.command.is_some(), 'C'),
    ] {
        if set {
            sh.error(&format!(
                "compgen: warning: -{f} option may not work as you expect"
            ));
        }
    }
    // Outside completion the command is `compgen` itself, as in bash.
    let found = generate(sh, &p.spec, &word, b"compgen", b"")?;
    if found.is_empty() {
        return Ok(1);
    }
    let mut out = Vec::new();
    for f in found {
        out.extend_from_slice(&f);
        out.push(b'\n');
    }
    Ok(emit(sh, "compgen", &out))
}

/// The candidates `spec` gives for `word`, in bash's order: the actions, the
/// glob, the word list, the function's COMPREPLY and the command's lines;
/// then the filter, then prefix and suffix. `cmd` and `prev` are the
/// command's name and the word before, for `-F` and `-C`.
pub fn generate(
    sh: &mut Shell,
    spec: &CompSpec,
    word: &[u8],
    cmd: &[u8],
    prev: &[u8],
) -> Result<Vec<Vec<u8>>, crate::shell::Flow> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    for &a in &spec.actions {
        out.extend(action(sh, a, word));
    }
    if let Some(g) = &spec.glob {
        let field = crate::pattern::Marked {
            bytes: g.clone(),
            quoted: vec![false; g.len()],
        };
        out.extend(crate::glob::expand(&field, crate::glob::How::default()));
    }
    if let Some(list) = &spec.wordlist {
        for w in wordlist(sh, list)? {
            if w.starts_with(word) {
                out.push(w);
            }
        }
    }
    if let Some(f) = &spec.function {
        out.extend(run_function(sh, f, cmd, word, prev)?);
    }
    if let Some(c) = &spec.command {
        // `-C`: the command's output lines, read as `$(command cmd word
        // prev)` would.
        let text = [
            b"\"$(".as_slice(),
            c,
            b" ",
            &quoted(cmd),
            b" ",
            &quoted(word),
            b" ",
            &quoted(prev),
            b")\"",
        ]
        .concat();
        if let Ok(words) = crate::parse::words(&text) {
            for w in &words {
                let got = sh.expand_string(w)?;
                out.extend(
                    got.split(|&c| c == b'\n')
                        .filter(|l| !l.is_empty())
                        .map(<[u8]>::to_vec),
                );
            }
        }
    }
    if let Some(x) = &spec.filter {
        // `&` stands for the word; a leading `!` keeps the matches instead.
        let (keep, pat) = match x.strip_prefix(b"!") {
            Some(rest) => (true, rest),
            None => (false, x.as_slice()),
        };
        let mut text = Vec::new();
        for &c in pat {
            if c == b'&' {
                text.extend_from_slice(word);
            } else {
                text.push(c);
            }
        }
        let pat = crate::pattern::Pattern::new(&text);
        out.retain(|c| pat.matches(c) == keep);
    }
    if spec.prefix.is_some() || spec.suffix.is_some() {
        let (pre, suf) = (
            spec.prefix.clone().unwrap_or_default(),
            spec.suffix.clone().unwrap_or_default(),
        );
        out = out
            .into_iter()
            .map(|c| [pre.as_slice(), &c, &suf].concat())
            .collect();
    }
    // `-o plusdirs`: directories come last, past the filter and without
    // prefix or suffix, as in bash.
    if spec.options.contains("plusdirs") {
        out.extend(paths(word, true));
    }
    Ok(out)
}

/// `-W`: the list read as shell words, each expanded to one string.
fn wordlist(sh: &mut Shell, list: &[u8]) -> Result<Vec<Vec<u8>>, crate::shell::Flow> {
    let words = match crate::parse::words(list) {
        Ok(w) => w,
        // Unbalanced quotes and the like: plain blank-separated words.
        Err(_) => crate::parse::words(
            &list
                .iter()
                .map(|&c| if c == b'\'' || c == b'"' { b' ' } else { c })
                .collect::<Vec<u8>>(),
        )
        .unwrap_or_default(),
    };
    let mut out = Vec::with_capacity(words.len());
    for w in &words {
        out.extend(sh.expand_words(std::slice::from_ref(w))?);
    }
    Ok(out)
}

/// `-F`: calls the function as completion does, with `$1` the command, `$2`
/// the word and `$3` the word before, and returns its `COMPREPLY`.
fn run_function(
    sh: &mut Shell,
    name: &[u8],
    cmd: &[u8],
    word: &[u8],
    prev: &[u8],
) -> Result<Vec<Vec<u8>>, crate::shell::Flow> {
    let Some(f) = sh.functions.get(name).cloned() else {
        sh.error(&format!("compgen: {}: function not found", lossy(name)));
        return Ok(Vec::new());
    };
    let _ = sh.vars.unset(b"COMPREPLY");
    let argv = [name.to_vec(), cmd.to_vec(), word.to_vec(), prev.to_vec()];
    sh.call_function(&f, &argv, &[], &[])?;
    Ok(sh
        .vars
        .value(b"COMPREPLY")
        .map(crate::vars::Value::elements)
        .unwrap_or_default())
}

/// The names an action gives that start with `word`.
fn action(sh: &mut Shell, a: Action, word: &[u8]) -> Vec<Vec<u8>> {
    let starts = |n: &[u8]| n.starts_with(word);
    let names = |it: &mut dyn Iterator<Item = Vec<u8>>| -> Vec<Vec<u8>> {
        let mut v: Vec<Vec<u8>> = it.filter(|n| starts(n)).collect();
        v.sort();
        v.dedup();
        v
    };
    let builtins = || SPECIAL.iter().chain(REGULAR).map(|b| b.to_vec());
    match a {
        Action::Alias => names(&mut sh.aliases.keys().cloned()),
        Action::Builtin | Action::Enabled | Action::HelpTopic => {
            let mut all: Vec<Vec<u8>> = builtins().collect();
            all.extend(["compgen", "complete", "compopt"].map(|s| s.as_bytes().to_vec()));
            names(&mut all.into_iter())
        }
        Action::Disabled | Action::Binding | Action::Service => Vec::new(),
        Action::Keyword => names(&mut KEYWORDS.iter().map(|k| k.to_vec())),
        Action::Function => names(&mut sh.functions.keys().cloned()),
        Action::Variable => names(
            &mut sh
                .visible_vars()
                .into_iter()
                .filter(|(_, v)| v.value.is_some())
                .map(|(k, _)| k),
        ),
        Action::Export => names(
            &mut sh
                .visible_vars()
                .into_iter()
                .filter(|(_, v)| v.exported && v.value.is_some())
                .map(|(k, _)| k),
        ),
        Action::ArrayVar => names(
            &mut sh
                .visible_vars()
                .into_iter()
                .filter(|(_, v)| {
                    matches!(
                        v.value,
                        Some(crate::vars::Value::Indexed(_) | crate::vars::Value::Assoc(_))
                    )
                })
                .map(|(k, _)| k),
        ),
        Action::SetOpt => names(&mut OPTION_NAMES.iter().map(|(n, _)| n.as_bytes().to_vec())),
        Action::ShOpt => names(&mut crate::options::names().map(|n| n.as_bytes().to_vec())),
        Action::Signal => names_unsorted(signal_names(), word),
        Action::Job | Action::Running | Action::Stopped => {
            names(&mut sh.jobs.iter().map(|j| j.command.as_bytes().to_vec()))
        }
        Action::User => names(&mut database("/etc/passwd").into_iter()),
        Action::Group => names(&mut database("/etc/group").into_iter()),
        Action::Hostname => names(&mut hostnames(sh).into_iter()),
        Action::Directory => paths(word, true),
        Action::File => paths(word, false),
        Action::Command => {
            let mut all: Vec<Vec<u8>> = builtins().collect();
            all.extend(KEYWORDS.iter().map(|k| k.to_vec()));
            all.extend(sh.functions.keys().cloned());
            all.extend(sh.aliases.keys().cloned());
            if word.contains(&b'/') {
                all.extend(paths(word, false).into_iter().filter(|p| is_executable(p)));
            } else {
                let path = sh.vars.get(b"PATH").map(<[u8]>::to_vec).unwrap_or_default();
                for dir in path.split(|&c| c == b':').filter(|d| !d.is_empty()) {
                    let Ok(rd) = std::fs::read_dir(OsStr::from_bytes(dir)) else {
                        continue;
                    };
                    for e in rd.flatten() {
                        let n = e.file_name().as_bytes().to_vec();
                        if n.starts_with(word) && is_executable(&[dir, b"/", &n].concat()) {
                            all.push(n);
                        }
                    }
                }
            }
            // Not deduplicated: bash lists a command once per PATH folder
            // that has it.
            let mut all: Vec<Vec<u8>> = all.into_iter().filter(|n| starts(n)).collect();
            all.sort();
            all
        }
    }
}

/// The names that start with `word`, in the order given.
fn names_unsorted(all: Vec<Vec<u8>>, word: &[u8]) -> Vec<Vec<u8>> {
    all.into_iter().filter(|n| n.starts_with(word)).collect()
}

/// What `trap` and `kill` take, in bash's order: `EXIT`, the signals by
/// number (`SIGJUNK(n)` for the two that glibc keeps, then the real-time
/// ones), and the shell's `DEBUG`, `ERR` and `RETURN`.
fn signal_names() -> Vec<Vec<u8>> {
    let mut out = vec![b"EXIT".to_vec()];
    let rtmin = libc::SIGRTMIN();
    let rtmax = libc::SIGRTMAX();
    for n in 1..=rtmax {
        let name = if let Some(name) = crate::sys::signal_name(n) {
            format!("SIG{name}")
        } else if n < rtmin {
            format!("SIGJUNK({n})")
        } else if n == rtmin {
            "SIGRTMIN".into()
        } else if n == rtmax {
            "SIGRTMAX".into()
        } else if n - rtmin <= (rtmax - rtmin) / 2 {
            format!("SIGRTMIN+{}", n - rtmin)
        } else {
            format!("SIGRTMAX-{}", rtmax - n)
        };
        out.push(name.into_bytes());
    }
    out.extend([b"DEBUG".to_vec(), b"ERR".to_vec(), b"RETURN".to_vec()]);
    out
}

/// Whether the shell would run `path` (as it finds commands).
fn is_executable(path: &[u8]) -> bool {
    std::ffi::CString::new(path).is_ok_and(|c| crate::shell::is_executable_file(&c))
}

/// Files (or only directories) whose path starts with `word`, sorted; the
/// folder part of the word is kept.
fn paths(word: &[u8], dirs_only: bool) -> Vec<Vec<u8>> {
    let (dir, base) = match word.iter().rposition(|&c| c == b'/') {
        Some(i) => (&word[..=i], &word[i + 1..]),
        None => (&b""[..], word),
    };
    let read_from: &[u8] = if dir.is_empty() { b"." } else { dir };
    let Ok(rd) = std::fs::read_dir(OsStr::from_bytes(read_from)) else {
        return Vec::new();
    };
    let mut out: Vec<Vec<u8>> = rd
        .flatten()
        .map(|e| e.file_name().as_bytes().to_vec())
        // Hidden names too, as readline's match-hidden-files (on by
        // default) has it.
        .filter(|n| n.starts_with(base))
        .map(|n| [dir, &n].concat())
        .filter(|p| !dirs_only || std::path::Path::new(OsStr::from_bytes(p)).is_dir())
        .collect();
    out.sort();
    out
}

/// The first field of each line of a colon-separated database file
/// (`/etc/passwd`, `/etc/group`).
fn database(file: &str) -> Vec<Vec<u8>> {
    std::fs::read(file)
        .unwrap_or_default()
        .split(|&c| c == b'\n')
        .filter(|l| !l.is_empty() && !l.starts_with(b"#"))
        .filter_map(|l| l.split(|&c| c == b':').next().map(<[u8]>::to_vec))
        .collect()
}

/// Host names from `$HOSTFILE`, or `/etc/hosts`.
fn hostnames(sh: &Shell) -> Vec<Vec<u8>> {
    let file = sh
        .vars
        .get(b"HOSTFILE")
        .filter(|f| !f.is_empty())
        .map_or_else(|| b"/etc/hosts".to_vec(), <[u8]>::to_vec);
    let text = std::fs::read(OsStr::from_bytes(&file)).unwrap_or_default();
    let mut out = Vec::new();
    for line in text.split(|&c| c == b'\n') {
        let line = line.split(|&c| c == b'#').next().unwrap_or_default();
        out.extend(
            line.split(|c| c.is_ascii_whitespace())
                .filter(|w| !w.is_empty())
                .skip(1)
                .map(<[u8]>::to_vec),
        );
    }
    out
}
