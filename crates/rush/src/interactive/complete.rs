//! Tab completion at the prompt: what bash's readline completion does, over
//! the same `complete` specifications that `compgen` reads.
//!
//! The line up to the cursor is split into words as bash splits them
//! (`COMP_WORDBREAKS`: blanks, and `= : > < ; | & (` as words of their
//! own, quotes kept whole). The word under the cursor is then completed:
//! - `$NAME` from the variables, `~user` from the user database;
//! - a command name from PATH (read once per PATH and folder change),
//!   builtins, functions, aliases and keywords;
//! - an argument by the command's `complete` specification (with
//!   `COMP_WORDS`, `COMP_CWORD`, `COMP_LINE`, `COMP_POINT`), `-D`'s when it
//!   has none (bash-completion's loader, retried after it returns 124);
//! - `cd`, `pushd` and `rmdir` with no specification: directories only;
//!   otherwise, files.
//!
//! File names are quoted for the shell, so that a name with spaces or odd
//! bytes comes back as one word.

use crate::shell::Shell;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// One candidate: what replaces the word, and what the list shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub replacement: String,
    pub display: String,
}

/// The executables on PATH, read once and read again when PATH or one of
/// its folders changes (a folder's mtime moves when a file is added).
#[derive(Debug, Default)]
pub struct CommandCache {
    path: Vec<u8>,
    stamps: Vec<Option<std::time::SystemTime>>,
    names: Vec<Vec<u8>>,
}

impl CommandCache {
    /// The sorted, distinct executable names on `path`.
    pub fn names(&mut self, path: &[u8]) -> &[Vec<u8>] {
        let dirs: Vec<&[u8]> = path
            .split(|&c| c == b':')
            .filter(|d| !d.is_empty())
            .collect();
        let stamps: Vec<_> = dirs
            .iter()
            .map(|d| {
                std::fs::metadata(OsStr::from_bytes(d))
                    .and_then(|m| m.modified())
                    .ok()
            })
            .collect();
        if self.path != path || self.stamps != stamps {
            let mut names = Vec::new();
            for d in &dirs {
                let Ok(rd) = std::fs::read_dir(OsStr::from_bytes(d)) else {
                    continue;
                };
                for e in rd.flatten() {
                    let n = e.file_name().as_bytes().to_vec();
                    let full = [*d, b"/", &n].concat();
                    if is_executable(&full) {
                        names.push(n);
                    }
                }
            }
            names.sort();
            names.dedup();
            self.path = path.to_vec();
            self.stamps = stamps;
            self.names = names;
        }
        &self.names
    }
}

fn is_executable(path: &[u8]) -> bool {
    std::ffi::CString::new(path).is_ok_and(|c| crate::shell::is_executable_file(&c))
}

/// A word of the line, as completion splits it.
#[derive(Debug, Clone)]
struct Word {
    start: usize,
    text: Vec<u8>,
}

const BREAKS: &[u8] = b"=:><;|&(";
/// Words that end a command: what follows them is a command name.
const SEPARATORS: &[&[u8]] = &[b";", b"|", b"||", b"&", b"&&", b"(", b"|&", b"$(", b"`"];

/// Splits `line` into words as bash's completion does.
fn split(line: &[u8], breaks: &[u8]) -> Vec<Word> {
    let mut words = Vec::new();
    let mut cur: Option<Word> = None;
    // Adds bytes to the word being read, starting one at `at`.
    let add = |cur: &mut Option<Word>, at: usize, bytes: &[u8]| {
        cur.get_or_insert(Word {
            start: at,
            text: Vec::new(),
        })
        .text
        .extend_from_slice(bytes);
    };
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < line.len() {
        let c = line[i];
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            // Inside double quotes a backslash takes the next byte along.
            let n = if c == b'\\' && q == b'"' && i + 1 < line.len() {
                2
            } else {
                1
            };
            add(&mut cur, i, &line[i..i + n]);
            i += n;
            continue;
        }
        if c == b'\\' && i + 1 < line.len() {
            add(&mut cur, i, &line[i..i + 2]);
            i += 2;
            continue;
        }
        if c == b'\'' || c == b'"' {
            quote = Some(c);
            add(&mut cur, i, &[c]);
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            words.extend(cur.take());
            i += 1;
            continue;
        }
        if breaks.contains(&c) {
            words.extend(cur.take());
            // A run of the same break character is one word (`&&`, `>>`).
            let mut j = i + 1;
            while j < line.len() && line[j] == c {
                j += 1;
            }
            words.push(Word {
                start: i,
                text: line[i..j].to_vec(),
            });
            i = j;
            continue;
        }
        add(&mut cur, i, &[c]);
        i += 1;
    }
    words.extend(cur);
    words
}

/// Removes the shell quoting of a word being typed (an open quote is
/// allowed).
fn dequote(w: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(w.len());
    let mut quote = None;
    let mut i = 0;
    while i < w.len() {
        let c = w[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(b'"') if c == b'\\' && i + 1 < w.len() && b"$`\"\\".contains(&w[i + 1]) => {
                i += 1;
                out.push(w[i]);
            }
            Some(_) => out.push(c),
            None if c == b'\'' || c == b'"' => quote = Some(c),
            None if c == b'\\' && i + 1 < w.len() => {
                i += 1;
                out.push(w[i]);
            }
            None => out.push(c),
        }
        i += 1;
    }
    out
}

/// Quotes a file name for the line: backslashes before the characters the
/// shell would read, or, in a word the user began with a quote, that quote.
fn quote(name: &[u8], open: Option<u8>) -> Vec<u8> {
    match open {
        Some(b'\'') => {
            let mut out = vec![b'\''];
            for &c in name {
                if c == b'\'' {
                    out.extend_from_slice(b"'\\''");
                } else {
                    out.push(c);
                }
            }
            out
        }
        Some(_) => {
            let mut out = vec![b'"'];
            for &c in name {
                if b"\"$`\\".contains(&c) {
                    out.push(b'\\');
                }
                out.push(c);
            }
            out
        }
        None => {
            let mut out = Vec::with_capacity(name.len());
            for &c in name {
                if c == b'\n' {
                    out.extend_from_slice(b"$'\\n'");
                    continue;
                }
                if b" \t'\"\\$`&|;()<>*?[]!{}#~=:,^".contains(&c) {
                    out.push(b'\\');
                }
                out.push(c);
            }
            out
        }
    }
}

/// How to finish a candidate.
#[derive(Debug, Clone, Copy, Default)]
struct Finish {
    /// Candidates are file names: quote them, mark folders with `/`.
    filenames: bool,
    nospace: bool,
    noquote: bool,
}

/// Completes the word before `pos` in `line`: where the replaced text
/// starts, and the candidates.
pub fn complete(
    sh: &mut Shell,
    cache: &mut CommandCache,
    line: &str,
    pos: usize,
) -> (usize, Vec<Candidate>) {
    let before = &line.as_bytes()[..pos];
    let breaks: Vec<u8> = match sh.vars.get(b"COMP_WORDBREAKS") {
        Some(b) => b.iter().copied().filter(|c| BREAKS.contains(c)).collect(),
        None => BREAKS.to_vec(),
    };
    let mut words = split(before, &breaks);
    // The cursor after a blank (or at the start) starts a new, empty word.
    if before.last().is_none_or(u8::is_ascii_whitespace)
        || words.last().is_some_and(|w| w.start + w.text.len() < pos)
    {
        words.push(Word {
            start: pos,
            text: Vec::new(),
        });
    }
    let cword = words.len() - 1;
    // The words of the command the cursor is in.
    let first = words[..cword]
        .iter()
        .rposition(|w| SEPARATORS.contains(&w.text.as_slice()))
        .map_or(0, |i| i + 1);
    // Assignments before the command name are skipped.
    let mut name_at = first;
    while name_at < cword && is_assignment(&words, name_at) {
        name_at += if words.get(name_at + 1).is_some_and(|w| w.text == b"=") {
            // `a` `=` `value`: bash split it at `=`.
            3
        } else {
            1
        };
    }
    let word = &words[cword];
    let raw = word.text.clone();
    let open = match raw.first() {
        Some(&q @ (b'\'' | b'"')) => Some(q),
        _ => None,
    };
    let cur = dequote(&raw);
    let start = word.start;

    // `$NAME`
    if let Some(prefix) = raw.strip_prefix(b"$")
        && prefix
            .iter()
            .all(|&c| crate::parse::is_name_char(c) || c == b'{')
    {
        let brace = prefix.starts_with(b"{");
        let want = if brace { &prefix[1..] } else { prefix };
        let mut names: Vec<Vec<u8>> = sh
            .visible_vars()
            .into_iter()
            .filter(|(k, v)| v.value.is_some() && k.starts_with(want))
            .map(|(k, _)| k)
            .collect();
        names.sort();
        names.dedup();
        let cands = names
            .into_iter()
            .map(|n| {
                let r = if brace {
                    format!("${{{}}}", lossy(&n))
                } else {
                    format!("${}", lossy(&n))
                };
                Candidate {
                    display: lossy(&n),
                    replacement: r,
                }
            })
            .collect();
        return (start, cands);
    }
    // `~user`
    if let Some(user) = raw.strip_prefix(b"~")
        && !user.contains(&b'/')
    {
        let mut users: Vec<Vec<u8>> = std::fs::read("/etc/passwd")
            .unwrap_or_default()
            .split(|&c| c == b'\n')
            .filter_map(|l| l.split(|&c| c == b':').next())
            .filter(|n| !n.is_empty() && n.starts_with(user))
            .map(<[u8]>::to_vec)
            .collect();
        users.sort();
        users.dedup();
        let cands = users
            .into_iter()
            .map(|u| Candidate {
                display: format!("~{}", lossy(&u)),
                replacement: format!("~{}/", lossy(&u)),
            })
            .collect();
        return (start, cands);
    }

    if cword == name_at {
        return (start, command_names(sh, cache, &cur, open));
    }

    let cmd = dequote(&words[name_at].text);
    let spec = find_spec(sh, &cmd);
    let mut finish = Finish::default();
    let mut found: Option<Vec<Vec<u8>>> = None;
    if let Some(mut spec) = spec {
        let comp_words: Vec<Vec<u8>> = words[name_at..].iter().map(|w| w.text.clone()).collect();
        let line_bytes = line.as_bytes().to_vec();
        set_comp_vars(sh, &comp_words, cword - name_at, &line_bytes, pos);
        let prev = if cword > name_at {
            dequote(&words[cword - 1].text)
        } else {
            Vec::new()
        };
        for _ in 0..2 {
            let status_before = sh.status;
            let r = crate::builtins::completions(sh, &spec, &cur, &cmd, &prev);
            let retry = sh.status == 124 && spec.function.is_some();
            sh.status = status_before;
            let got = r.unwrap_or_default();
            // bash-completion's loader returns 124 once it has defined the
            // command's real specification: use that one.
            if retry && let Some(again) = find_spec(sh, &cmd) {
                spec = again;
                continue;
            }
            found = Some(got);
            break;
        }
        finish.filenames = spec.options.contains("filenames");
        finish.nospace = spec.options.contains("nospace");
        finish.noquote = spec.options.contains("noquote");
        let cands = found.take().unwrap_or_default();
        if cands.is_empty() && spec.options.contains("dirnames") {
            found = Some(paths(&cur, true, ignore_case(sh)));
            finish.filenames = true;
        } else if cands.is_empty() && spec.options.contains("default") {
            found = Some(paths(&cur, false, ignore_case(sh)));
            finish.filenames = true;
        } else if cands.is_empty() && spec.options.contains("bashdefault") {
            found = None;
        } else {
            found = Some(cands);
        }
        unset_comp_vars(sh);
    }
    let found = match found {
        Some(f) => f,
        None => {
            finish.filenames = true;
            let dirs_only = matches!(cmd.as_slice(), b"cd" | b"pushd" | b"rmdir");
            paths(&cur, dirs_only, ignore_case(sh))
        }
    };
    (start, finish_all(found, finish, open))
}

fn is_assignment(words: &[Word], i: usize) -> bool {
    let t = &words[i].text;
    if words.get(i + 1).is_some_and(|w| w.text == b"=") {
        return crate::parse::is_name(t);
    }
    t.iter()
        .position(|&c| c == b'=')
        .is_some_and(|p| p > 0 && crate::parse::is_name(&t[..p]))
}

/// The specification for `cmd`: its own, by its base name, or `-D`'s.
fn find_spec(sh: &Shell, cmd: &[u8]) -> Option<crate::compspec::CompSpec> {
    let base = cmd.rsplit(|&c| c == b'/').next().unwrap_or(cmd);
    sh.completions
        .get(cmd)
        .or_else(|| sh.completions.get(base))
        .or_else(|| sh.completions.get(b"-D".as_slice()))
        .cloned()
}

fn set_comp_vars(sh: &mut Shell, words: &[Vec<u8>], cword: usize, line: &[u8], pos: usize) {
    use crate::vars::Value;
    let arr = words
        .iter()
        .enumerate()
        .map(|(i, w)| (i as i64, w.clone()))
        .collect();
    let _ = sh.vars.set_value(b"COMP_WORDS", Value::Indexed(arr));
    let _ = sh.vars.set(b"COMP_CWORD", cword.to_string().into_bytes());
    let _ = sh.vars.set(b"COMP_LINE", line.to_vec());
    let _ = sh.vars.set(b"COMP_POINT", pos.to_string().into_bytes());
    let _ = sh.vars.set(b"COMP_TYPE", b"9".to_vec());
    let _ = sh.vars.set(b"COMP_KEY", b"9".to_vec());
}

fn unset_comp_vars(sh: &mut Shell) {
    for v in [
        &b"COMP_WORDS"[..],
        b"COMP_CWORD",
        b"COMP_LINE",
        b"COMP_POINT",
        b"COMP_TYPE",
        b"COMP_KEY",
    ] {
        let _ = sh.vars.unset(v);
    }
}

/// Command names that start with `cur`: builtins, keywords, functions,
/// aliases and PATH's executables; paths if it holds a `/`.
fn command_names(
    sh: &mut Shell,
    cache: &mut CommandCache,
    cur: &[u8],
    open: Option<u8>,
) -> Vec<Candidate> {
    if cur.contains(&b'/') {
        let found = paths(cur, false, ignore_case(sh))
            .into_iter()
            .filter(|p| is_executable(p) || is_dir(p))
            .collect();
        return finish_all(
            found,
            Finish {
                filenames: true,
                ..Finish::default()
            },
            open,
        );
    }
    let mut names: Vec<Vec<u8>> = crate::builtins::names()
        .chain(crate::ast::KEYWORDS.iter().copied())
        .filter(|n| n.starts_with(cur))
        .map(<[u8]>::to_vec)
        .collect();
    names.extend(sh.functions.keys().filter(|n| n.starts_with(cur)).cloned());
    names.extend(sh.aliases.keys().filter(|n| n.starts_with(cur)).cloned());
    let path = sh.vars.get(b"PATH").map(<[u8]>::to_vec).unwrap_or_default();
    let all = cache.names(&path);
    let from = all.partition_point(|n| n.as_slice() < cur);
    names.extend(
        all[from..]
            .iter()
            .take_while(|n| n.starts_with(cur))
            .cloned(),
    );
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|n| Candidate {
            display: lossy(&n),
            replacement: format!("{} ", lossy(&quote(&n, open))),
        })
        .collect()
}

fn is_dir(p: &[u8]) -> bool {
    std::path::Path::new(OsStr::from_bytes(p)).is_dir()
}

/// readline's `completion-ignore-case` (`bind 'set completion-ignore-case
/// on'`): file names match without regard to case.
fn ignore_case(sh: &Shell) -> bool {
    sh.keymaps.is_on("completion-ignore-case")
}

/// Files (or folders) whose path starts with `word` (in any case with
/// `fold`), sorted; names that begin with `.` only when the word's last
/// part does.
fn paths(word: &[u8], dirs_only: bool, fold: bool) -> Vec<Vec<u8>> {
    let (dir, base) = match word.iter().rposition(|&c| c == b'/') {
        Some(i) => (&word[..=i], &word[i + 1..]),
        None => (&b""[..], word),
    };
    let expanded: Vec<u8> = match dir.strip_prefix(b"~") {
        Some(rest) if rest.is_empty() || rest.starts_with(b"/") => {
            let home = std::env::var_os("HOME").unwrap_or_default();
            [home.as_bytes(), rest].concat()
        }
        _ => dir.to_vec(),
    };
    let read_from: &[u8] = if expanded.is_empty() { b"." } else { &expanded };
    let Ok(rd) = std::fs::read_dir(OsStr::from_bytes(read_from)) else {
        return Vec::new();
    };
    let mut out: Vec<Vec<u8>> = rd
        .flatten()
        .map(|e| e.file_name().as_bytes().to_vec())
        .filter(|n| {
            let starts = if fold {
                n.len() >= base.len() && n[..base.len()].eq_ignore_ascii_case(base)
            } else {
                n.starts_with(base)
            };
            starts && (base.starts_with(b".") || !n.starts_with(b"."))
        })
        .map(|n| [dir, &n].concat())
        .filter(|p| !dirs_only || is_dir(&expand_tilde(p)))
        .collect();
    out.sort();
    out
}

fn expand_tilde(p: &[u8]) -> Vec<u8> {
    match p.strip_prefix(b"~") {
        Some(rest) if rest.is_empty() || rest.starts_with(b"/") => {
            let home = std::env::var_os("HOME").unwrap_or_default();
            [home.as_bytes(), rest].concat()
        }
        _ => p.to_vec(),
    }
}

/// Turns raw candidates into replacements: quoted, `/` after folders, a
/// space after a finished word.
fn finish_all(found: Vec<Vec<u8>>, f: Finish, open: Option<u8>) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = found
        .into_iter()
        .map(|c| {
            let dir = f.filenames && is_dir(&expand_tilde(&c));
            let mut r = if f.filenames && !f.noquote {
                // A leading `~/` stays unquoted, so that it still expands.
                match c.strip_prefix(b"~/") {
                    Some(rest) if open.is_none() => [b"~/".as_slice(), &quote(rest, None)].concat(),
                    _ => quote(&c, open),
                }
            } else {
                c.clone()
            };
            if dir {
                r.push(b'/');
            } else {
                if let Some(q) = open {
                    r.push(q);
                }
                if !f.nospace {
                    r.push(b' ');
                }
            }
            let display = if f.filenames {
                let t = c.strip_suffix(b"/").unwrap_or(&c);
                let base = t.rsplit(|&b| b == b'/').next().unwrap_or(t);
                let mut d = lossy(base);
                if dir {
                    d.push('/');
                }
                d
            } else {
                lossy(&c)
            };
            Candidate {
                replacement: lossy(&r),
                display,
            }
        })
        .collect();
    out.dedup();
    out
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(line: &str) -> Vec<String> {
        split(line.as_bytes(), BREAKS)
            .into_iter()
            .map(|w| lossy(&w.text))
            .collect()
    }

    #[test]
    fn splits_as_bash() {
        assert_eq!(
            texts("git log --format=on"),
            ["git", "log", "--format", "=", "on"]
        );
        assert_eq!(
            texts("ls 'a b' c\\ d && x"),
            ["ls", "'a b'", "c\\ d", "&&", "x"]
        );
        assert_eq!(texts("echo \"open"), ["echo", "\"open"]);
    }

    #[test]
    fn quoting() {
        assert_eq!(quote(b"a b", None), b"a\\ b");
        assert_eq!(quote(b"it's", Some(b'\'')), b"'it'\\''s");
        assert_eq!(quote(b"x$y", Some(b'"')), b"\"x\\$y");
        assert_eq!(dequote(b"'a b"), b"a b");
        assert_eq!(dequote(b"c\\ d"), b"c d");
    }
}
