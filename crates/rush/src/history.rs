//! The command history of an interactive shell: the list, `HISTCONTROL`,
//! the history file (read at start, appended to at exit under a lock so
//! that shells ending together lose no line), and `!` expansion.
//!
//! An entry may span lines (a `for` loop typed over three lines is one
//! entry). In the file, each newline inside an entry is written as a
//! backslash ending the line; an entry never ends in a backslash (the
//! parser would have asked for more), so reading it back is unambiguous.

use std::ffi::OsStr;
use std::io::{Read, Seek, Write};
use std::os::unix::ffi::OsStrExt;

/// The history list.
#[derive(Debug)]
pub struct History {
    /// The entries, oldest first.
    pub entries: Vec<Vec<u8>>,
    /// The number of the first entry (entries dropped off the front by
    /// HISTSIZE keep their numbers taken).
    pub first: usize,
    /// Entries before this index were read from the file (or already
    /// appended to it): they are not appended again.
    pub saved: usize,
    /// Bumped when the list changes other than by [`History::add`] (`history
    /// -c`, `-d`, `-r`), so that the line editor reloads its copy.
    pub generation: u64,
    /// The last entry is the line being run (the prompt added it): the
    /// first `history -s` in it replaces it.
    pub line_entry: bool,
    /// Entries added this session since the last `history -c` (bash's
    /// `history_lines_this_session`).
    pub added: usize,
    /// The last `:s/old/new/` of a history expansion, for `:&`.
    pub last_sub: std::cell::RefCell<Option<(Vec<u8>, Vec<u8>)>>,
}

impl Default for History {
    fn default() -> Self {
        // bash numbers entries from 1.
        History {
            entries: Vec::new(),
            first: 1,
            saved: 0,
            generation: 0,
            line_entry: false,
            added: 0,
            last_sub: std::cell::RefCell::new(None),
        }
    }
}

/// What `HISTCONTROL` asks.
#[derive(Debug, Default, Clone, Copy)]
pub struct Control {
    pub ignorespace: bool,
    pub ignoredups: bool,
    pub erasedups: bool,
}

impl Control {
    /// Reads a `HISTCONTROL` value (a colon-separated list).
    pub fn parse(v: &[u8]) -> Control {
        let mut c = Control::default();
        for w in v.split(|&b| b == b':') {
            match w {
                b"ignorespace" => c.ignorespace = true,
                b"ignoredups" => c.ignoredups = true,
                b"ignoreboth" => {
                    c.ignorespace = true;
                    c.ignoredups = true;
                }
                b"erasedups" => c.erasedups = true,
                _ => {}
            }
        }
        c
    }
}

impl History {
    /// The number the next entry will have (`\!` in a prompt).
    pub fn next_number(&self) -> usize {
        self.first + self.entries.len()
    }

    /// Adds an entry as `control` allows, keeping at most `size` entries.
    /// Returns whether it was added.
    pub fn add(&mut self, line: &[u8], control: Control, size: usize) -> bool {
        if line.iter().all(u8::is_ascii_whitespace) {
            return false;
        }
        if control.ignorespace && line.first() == Some(&b' ') {
            return false;
        }
        if control.ignoredups && self.entries.last().is_some_and(|l| l == line) {
            return false;
        }
        if control.erasedups {
            let before = self.entries.len();
            let saved_before = self.entries[..self.saved]
                .iter()
                .filter(|e| *e == line)
                .count();
            self.entries.retain(|e| e != line);
            if self.entries.len() != before {
                self.saved -= saved_before;
                self.generation += 1;
            }
        }
        self.entries.push(line.to_vec());
        self.added += 1;
        self.trim(size);
        true
    }

    /// Drops the oldest entries beyond `size`.
    pub fn trim(&mut self, size: usize) {
        if self.entries.len() > size {
            let extra = self.entries.len() - size;
            self.entries.drain(..extra);
            self.first += extra;
            self.saved = self.saved.saturating_sub(extra);
            self.generation += 1;
        }
    }

    /// Removes everything (`history -c`).
    pub fn clear(&mut self) {
        // Numbering starts again from 1 (bash).
        self.first = 1;
        self.entries.clear();
        self.saved = 0;
        self.added = 0;
        self.generation += 1;
    }

    /// The entry numbered `n`.
    pub fn get(&self, n: usize) -> Option<&[u8]> {
        n.checked_sub(self.first)
            .and_then(|i| self.entries.get(i))
            .map(Vec::as_slice)
    }

    /// Reads the history file's entries into the list (at start, and
    /// `history -r`), keeping at most `size`.
    pub fn load(&mut self, path: &[u8], size: usize) {
        let Ok(text) = std::fs::read(OsStr::from_bytes(path)) else {
            return;
        };
        let read = parse_file(&text);
        self.entries.extend(read);
        self.trim(size);
        self.saved = self.entries.len();
        self.generation += 1;
    }

    /// Appends the entries not yet in the file to it, under an exclusive
    /// lock, then cuts the file to its last `filesize` entries (under the
    /// same lock). Concurrent shells each append their own lines: none is
    /// lost.
    pub fn append_to_file(&mut self, path: &[u8], filesize: usize) -> std::io::Result<()> {
        let new = &self.entries[self.saved.min(self.entries.len())..];
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(OsStr::from_bytes(path))?;
        rustix::fs::flock(&f, rustix::fs::FlockOperation::LockExclusive)?;
        let mut out = Vec::new();
        for e in new {
            out.extend_from_slice(&encode(e));
        }
        f.write_all(&out)?;
        self.saved = self.entries.len();
        // Keep the file to HISTFILESIZE entries.
        let mut text = Vec::new();
        f.seek(std::io::SeekFrom::Start(0))?;
        f.read_to_end(&mut text)?;
        let all = parse_file(&text);
        if all.len() > filesize {
            let mut keep = Vec::new();
            for e in &all[all.len() - filesize..] {
                keep.extend_from_slice(&encode(e));
            }
            // Rewritten in place, still under the lock: a rename would
            // leave other shells locking the old file.
            let w = std::fs::OpenOptions::new()
                .write(true)
                .open(OsStr::from_bytes(path))?;
            w.set_len(0)?;
            (&w).write_all(&keep)?;
        }
        Ok(())
    }

    /// Writes the whole list to `path` (`history -w`).
    pub fn write_file(&mut self, path: &[u8]) -> std::io::Result<()> {
        let mut out = Vec::new();
        for e in &self.entries {
            out.extend_from_slice(&encode(e));
        }
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(OsStr::from_bytes(path))?;
        rustix::fs::flock(&f, rustix::fs::FlockOperation::LockExclusive)?;
        f.set_len(0)?;
        (&f).write_all(&out)?;
        self.saved = self.entries.len();
        Ok(())
    }
}

/// An entry as the file holds it: inner newlines end a line with a
/// backslash.
fn encode(entry: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(entry.len() + 1);
    for &c in entry {
        if c == b'\n' {
            out.push(b'\\');
        }
        out.push(c);
    }
    out.push(b'\n');
    out
}

/// The entries of a history file. bash's timestamp lines (`#1700000000`)
/// are skipped.
fn parse_file(text: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut cur: Option<Vec<u8>> = None;
    for line in text.split(|&c| c == b'\n') {
        let continued = cur.is_some();
        if !continued
            && line.len() > 1
            && line[0] == b'#'
            && line[1..].iter().all(u8::is_ascii_digit)
        {
            continue;
        }
        let e = cur.get_or_insert_with(Vec::new);
        if let Some(body) = line.strip_suffix(b"\\") {
            e.extend_from_slice(body);
            e.push(b'\n');
        } else {
            e.extend_from_slice(line);
            let e = cur.take().unwrap_or_default();
            if !e.is_empty() {
                out.push(e);
            }
        }
    }
    if let Some(e) = cur.filter(|e| !e.is_empty()) {
        out.push(e);
    }
    out
}

/// `!` expansion (bash's `histexpand`). Returns the line with every event
/// replaced, `None` if it has none, or the message for an event that is not
/// found.
pub fn expand(h: &History, line: &[u8]) -> Result<Option<Vec<u8>>, String> {
    expand_line(h, line).map(|(text, _)| text)
}

/// [`expand`], and whether a `:p` modifier asked for the line to be
/// printed and not run.
pub fn expand_line(h: &History, line: &[u8]) -> Result<(Option<Vec<u8>>, bool), String> {
    // `^old^new^`: the last command with the first `old` replaced.
    if let Some(rest) = line.strip_prefix(b"^") {
        let rest = rest.strip_suffix(b"\n").unwrap_or(rest);
        let mut parts = rest.splitn(3, |&c| c == b'^');
        let old = parts.next().unwrap_or_default();
        let new = parts.next().unwrap_or_default();
        let tail = parts.next().unwrap_or_default();
        let Some(last) = h.entries.last() else {
            return Err("^: event not found".into());
        };
        let Some(at) = find(last, old).filter(|_| !old.is_empty()) else {
            return Err(format!(
                "^{}^{}: substitution failed",
                lossy(old),
                lossy(new)
            ));
        };
        let mut out = [&last[..at], new, &last[at + old.len()..], tail].concat();
        if line.ends_with(b"\n") {
            out.push(b'\n');
        }
        return Ok((Some(out), false));
    }
    let mut out = Vec::with_capacity(line.len());
    let mut changed = false;
    let mut i = 0;
    let mut single = false;
    let mut state = ModState {
        last_sub: &h.last_sub,
        print_only: false,
    };
    // Inside `$'…'`, where a backslash quotes the next byte, `\'` too.
    let mut ansi_c = false;
    while i < line.len() {
        let c = line[i];
        if ansi_c {
            let n = if c == b'\\' { 2 } else { 1 };
            out.extend_from_slice(&line[i..(i + n).min(line.len())]);
            ansi_c = c != b'\'';
            i += n;
            continue;
        }
        if c == b'\'' && !single && i > 0 && line[i - 1] == b'$' {
            ansi_c = true;
            out.push(c);
            i += 1;
            continue;
        }
        if c == b'\'' {
            single = !single;
        }
        if c == b'\\' && !single && i + 1 < line.len() {
            out.extend_from_slice(&line[i..i + 2]);
            i += 2;
            continue;
        }
        // The history comment character at the start of a word: the rest
        // of the line is a comment, not expanded (bash).
        if c == b'#' && !single && (i == 0 || line[i - 1].is_ascii_whitespace()) {
            out.extend_from_slice(&line[i..]);
            break;
        }
        // `[!` (a bracket's negation), `${!` (indirection) and `$!` are
        // not history expansion (bash).
        let shell_syntax =
            i > 0 && (line[i - 1] == b'[' || line[i - 1] == b'$' || line[..i].ends_with(b"${"));
        if c != b'!' || single || shell_syntax {
            out.push(c);
            i += 1;
            continue;
        }
        let next = line.get(i + 1).copied();
        // `!` before a blank, `=`, `(` or the end stays as it is.
        if matches!(next, None | Some(b' ' | b'\t' | b'\n' | b'=' | b'(' | b'"')) {
            out.push(c);
            i += 1;
            continue;
        }
        // `!:…` is the last command's words (`!!:…`).
        let (event, len, matched) = if next == Some(b':') {
            let last = h.entries.last().cloned();
            (
                last.ok_or_else(|| "!!: event not found".to_string())?,
                0,
                None,
            )
        } else {
            event(h, &line[i + 1..])?
        };
        i += 1 + len;
        // Word designators: `:n`, `:$`, `:^`, `:*`, `:n-m`, `:n*`, `:n-`,
        // `:%`, or `$ ^ * %` right after the event; then modifiers.
        let (words, wlen) = designator(
            &event,
            &line[i..],
            len == 0 || matched.is_some(),
            matched.as_deref(),
        )?;
        i += wlen;
        let (words, mlen) = modifiers(words, &line[i..], &mut state)?;
        i += mlen;
        out.extend_from_slice(&words);
        changed = true;
    }
    Ok((changed.then_some(out), state.print_only))
}

/// What one line's modifiers carry from one `!` to the next: the last
/// substitution (`:&`), and `:p` (print, do not run).
struct ModState<'h> {
    last_sub: &'h std::cell::RefCell<Option<(Vec<u8>, Vec<u8>)>>,
    print_only: bool,
}

/// Applies the modifiers at the start of `s` (`:h :t :r :e :q :x :p
/// :s/old/new/ :& :g… :a…`) to `text`; the result and the bytes taken.
fn modifiers(
    mut text: Vec<u8>,
    s: &[u8],
    st: &mut ModState<'_>,
) -> Result<(Vec<u8>, usize), String> {
    let mut i = 0;
    while s.get(i) == Some(&b':') {
        let Some(&m) = s.get(i + 1) else { break };
        let (global, m, at) = match m {
            b'g' | b'a' | b'G' => match s.get(i + 2) {
                Some(&n @ (b's' | b'&')) => (true, n, i + 2),
                _ => {
                    return Err(format!(
                        "{}: unrecognized history modifier",
                        lossy(&s[i..i + 2])
                    ));
                }
            },
            _ => (false, m, i + 1),
        };
        match m {
            b'h' => {
                if let Some(p) = text.iter().rposition(|&c| c == b'/') {
                    text.truncate(p);
                }
            }
            b't' => {
                if let Some(p) = text.iter().rposition(|&c| c == b'/') {
                    text.drain(..=p);
                }
            }
            b'r' | b'e' => {
                let base = text.iter().rposition(|&c| c == b'/').map_or(0, |p| p + 1);
                let dot = text[base..]
                    .iter()
                    .rposition(|&c| c == b'.')
                    .map(|p| base + p);
                match (m, dot) {
                    (b'r', Some(d)) => text.truncate(d),
                    (b'e', Some(d)) => {
                        text.drain(..d);
                    }
                    (b'e', None) => text.clear(),
                    _ => {}
                }
            }
            b'q' => text = crate::escape::single_quote(&text),
            b'x' => {
                let words: Vec<Vec<u8>> = text
                    .split(|c| c.is_ascii_whitespace())
                    .filter(|w| !w.is_empty())
                    .map(crate::escape::single_quote)
                    .collect();
                text = words.join(&b' ');
            }
            b'p' => st.print_only = true,
            b's' => {
                let Some(&delim) = s.get(at + 1) else {
                    return Err("s: no previous substitution".into());
                };
                let mut k = at + 2;
                let part = |k: &mut usize| {
                    let mut v = Vec::new();
                    while let Some(&c) = s.get(*k) {
                        if c == delim || c == b'\n' {
                            *k += 1;
                            break;
                        }
                        if c == b'\\' && s.get(*k + 1) == Some(&delim) {
                            v.push(delim);
                            *k += 2;
                            continue;
                        }
                        v.push(c);
                        *k += 1;
                    }
                    v
                };
                let old = part(&mut k);
                let new = part(&mut k);
                let old = if old.is_empty() {
                    st.last_sub
                        .borrow()
                        .as_ref()
                        .map(|(o, _)| o.clone())
                        .unwrap_or_default()
                } else {
                    old
                };
                *st.last_sub.borrow_mut() = Some((old.clone(), new.clone()));
                text = substitute(&text, &old, &new, global)?;
                i = k;
                continue;
            }
            b'&' => {
                let Some((old, new)) = st.last_sub.borrow().clone() else {
                    return Err(":&: no previous substitution".into());
                };
                text = substitute(&text, &old, &new, global)?;
            }
            c if c.is_ascii_alphabetic() => {
                return Err(format!(":{}: unrecognized history modifier", c as char));
            }
            _ => break,
        }
        i = at + 1;
    }
    Ok((text, i))
}

/// `old` replaced by `new` (where `&` in `new` is `old`), once or
/// everywhere.
fn substitute(text: &[u8], old: &[u8], new: &[u8], global: bool) -> Result<Vec<u8>, String> {
    let mut with = Vec::new();
    let mut k = 0;
    while k < new.len() {
        match new[k] {
            b'\\' if new.get(k + 1) == Some(&b'&') => {
                with.push(b'&');
                k += 2;
            }
            b'&' => {
                with.extend_from_slice(old);
                k += 1;
            }
            c => {
                with.push(c);
                k += 1;
            }
        }
    }
    replace(text, old, &with, global).ok_or_else(|| format!("{}: substitution failed", lossy(old)))
}

/// `text` with `old` replaced by `with`, the first time or everywhere;
/// `None` when `old` is empty or not there (history's `:s`, `fc -s`).
pub fn replace(text: &[u8], old: &[u8], with: &[u8], global: bool) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut rest = text;
    let mut done = false;
    while let Some(at) = find(rest, old).filter(|_| !old.is_empty()) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(with);
        rest = &rest[at + old.len()..];
        done = true;
        if !global {
            break;
        }
    }
    out.extend_from_slice(rest);
    done.then_some(out)
}

/// The event after `!`: its text, how many bytes it took, and for
/// `!?str?` the word that held `str` (`%`).
type Event = (Vec<u8>, usize, Option<Vec<u8>>);

/// Reads the event after `!`.
fn event(h: &History, s: &[u8]) -> Result<Event, String> {
    let last = || {
        h.entries
            .last()
            .cloned()
            .ok_or_else(|| "!!: event not found".to_string())
    };
    match s[0] {
        b'!' => Ok((last()?, 1, None)),
        // `!$`, `!^`, `!*`: the last command; the designator is read next
        // (by backing up one byte).
        b'$' | b'^' | b'*' => Ok((last()?, 0, None)),
        b'#' => Err("!#: not supported".into()),
        b'?' => {
            let end = s[1..]
                .iter()
                .position(|&c| c == b'?' || c == b'\n')
                .map_or(s.len(), |p| p + 1);
            let needle = &s[1..end];
            let took = if s.get(end) == Some(&b'?') {
                end + 1
            } else {
                end
            };
            let e = h
                .entries
                .iter()
                .rev()
                .find(|e| find(e, needle).is_some())
                .ok_or_else(|| format!("!{}: event not found", lossy(&s[..took])))?;
            // The word that holds the last match in the line (`%`).
            let word = split_words(e)
                .into_iter()
                .rev()
                .find(|w| find(w, needle).is_some());
            Ok((e.clone(), took, word))
        }
        b'-' | b'0'..=b'9' => {
            let neg = s[0] == b'-';
            let digits = s[usize::from(neg)..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
            let took = usize::from(neg) + digits;
            let n: usize = std::str::from_utf8(&s[usize::from(neg)..took])
                .ok()
                .and_then(|d| d.parse().ok())
                .unwrap_or(0);
            let entry = if neg {
                h.next_number().checked_sub(n).and_then(|k| h.get(k))
            } else {
                h.get(n)
            };
            entry
                .map(|e| (e.to_vec(), took, None))
                .ok_or_else(|| format!("!{}: event not found", lossy(&s[..took])))
        }
        _ => {
            let took = s
                .iter()
                .position(|&c| {
                    c.is_ascii_whitespace() || c == b':' || c == b';' || c == b'|' || c == b'&'
                })
                .unwrap_or(s.len());
            let prefix = &s[..took];
            h.entries
                .iter()
                .rev()
                .find(|e| e.starts_with(prefix))
                .map(|e| (e.clone(), took, None))
                .ok_or_else(|| format!("!{}: event not found", lossy(prefix)))
        }
    }
}

/// Applies a word designator at the start of `s` to `event`; returns the
/// text and how many bytes of `s` it took. `bare` allows `$`, `^`, `*`,
/// `%` without a colon (`!$`); `matched` is the word `!?str?` found.
fn designator(
    event: &[u8],
    s: &[u8],
    bare: bool,
    matched: Option<&[u8]>,
) -> Result<(Vec<u8>, usize), String> {
    let spec_len = |t: &[u8]| {
        t.iter()
            .take_while(|c| c.is_ascii_digit() || matches!(c, b'$' | b'^' | b'*' | b'-' | b'%'))
            .count()
    };
    let (spec, took) = match s.first() {
        Some(b':')
            if s.get(1)
                .is_some_and(|c| c.is_ascii_digit() || b"$^*-%".contains(c)) =>
        {
            let len = spec_len(&s[1..]);
            (&s[1..1 + len], 1 + len)
        }
        Some(b'$' | b'^' | b'*' | b'%') if bare => (&s[..1], 1),
        _ => return Ok((event.to_vec(), 0)),
    };
    if spec == b"%" {
        return Ok((matched.unwrap_or_default().to_vec(), took));
    }
    let words = split_words(event);
    let last = words.len().saturating_sub(1);
    let index = |t: &[u8]| -> Option<usize> {
        match t {
            b"$" => Some(last),
            b"^" => Some(1),
            _ => std::str::from_utf8(t).ok()?.parse().ok(),
        }
    };
    let bad = || format!("{}: bad word specifier", lossy(spec));
    let (from, to) = if spec == b"*" {
        (1, last)
    } else if let Some(n) = spec.strip_suffix(b"*") {
        // `n*`: from word n to the last.
        (index(n).ok_or_else(bad)?, last)
    } else {
        match spec.iter().position(|&c| c == b'-') {
            Some(p) => {
                let a = if p == 0 {
                    0
                } else {
                    index(&spec[..p]).ok_or_else(bad)?
                };
                // `n-`: as `n*`, without the last word.
                let b = if p + 1 == spec.len() {
                    last.checked_sub(1).ok_or_else(bad)?
                } else {
                    index(&spec[p + 1..]).ok_or_else(bad)?
                };
                (a, b)
            }
            None => {
                let n = index(spec).ok_or_else(bad)?;
                (n, n)
            }
        }
    };
    if (spec == b"*" || spec.ends_with(b"*")) && from > last {
        return Ok((Vec::new(), took));
    }
    if from > to || to >= words.len() {
        return Err(bad());
    }
    Ok((words[from..=to].join(&b' '), took))
}

/// A command's words as history expansion sees them: split at blanks,
/// with quoted parts kept whole.
fn split_words(s: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    let mut quote = None;
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == b'\'' || c == b'"' => quote = Some(c),
            None if c == b'\\' && i + 1 < s.len() => {
                cur.push(c);
                i += 1;
                cur.push(s[i]);
                i += 1;
                continue;
            }
            None if c.is_ascii_whitespace() => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                i += 1;
                continue;
            }
            None => {}
        }
        cur.push(c);
        i += 1;
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(lines: &[&str]) -> History {
        let mut h = History::default();
        for l in lines {
            h.add(l.as_bytes(), Control::default(), 500);
        }
        h
    }

    fn ex(h: &History, line: &str) -> Result<Option<String>, String> {
        expand(h, line.as_bytes()).map(|o| o.map(|v| String::from_utf8(v).unwrap()))
    }

    #[test]
    fn events() {
        let h = hist(&["echo one two three", "ls -l /tmp", "git status"]);
        assert_eq!(ex(&h, "!!").unwrap().unwrap(), "git status");
        assert_eq!(ex(&h, "sudo !!").unwrap().unwrap(), "sudo git status");
        assert_eq!(ex(&h, "!1").unwrap().unwrap(), "echo one two three");
        assert_eq!(ex(&h, "!-2").unwrap().unwrap(), "ls -l /tmp");
        assert_eq!(ex(&h, "!ec").unwrap().unwrap(), "echo one two three");
        assert_eq!(ex(&h, "!?-l?").unwrap().unwrap(), "ls -l /tmp");
        assert_eq!(ex(&h, "cat !$").unwrap().unwrap(), "cat status");
        assert_eq!(ex(&h, "!ec:2").unwrap().unwrap(), "two");
        assert_eq!(ex(&h, "x !1:*").unwrap().unwrap(), "x one two three");
        assert_eq!(ex(&h, "x !1:1-2").unwrap().unwrap(), "x one two");
        assert_eq!(ex(&h, "^status^log").unwrap().unwrap(), "git log");
        assert_eq!(ex(&h, "echo hi").unwrap(), None);
        assert_eq!(ex(&h, "echo '!!' \\!! ! !=").unwrap(), None);
        assert_eq!(ex(&h, "!nope").unwrap_err(), "!nope: event not found");
        assert_eq!(ex(&h, "!99").unwrap_err(), "!99: event not found");
    }

    #[test]
    fn control() {
        let mut h = History::default();
        let c = Control::parse(b"ignoreboth:erasedups");
        assert!(h.add(b"a", c, 10));
        assert!(!h.add(b"a", c, 10));
        assert!(!h.add(b" secret", c, 10));
        assert!(h.add(b"b", c, 10));
        assert!(h.add(b"a", c, 10));
        assert_eq!(h.entries, vec![b"b".to_vec(), b"a".to_vec()]);
        for i in 0..20 {
            h.add(format!("c{i}").as_bytes(), Control::default(), 5);
        }
        assert_eq!(h.entries.len(), 5);
        assert_eq!(h.get(h.next_number() - 1), Some(&b"c19"[..]));
    }

    #[test]
    fn file_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hist");
        let p = path.as_os_str().as_bytes();
        let mut a = History::default();
        a.add(
            b"for i in 1 2\ndo echo \"$i\"\ndone",
            Control::default(),
            100,
        );
        a.add(b"echo a\\\nb", Control::default(), 100);
        a.append_to_file(p, 100).unwrap();
        let mut b = History::default();
        b.load(p, 100);
        assert_eq!(b.entries, a.entries);
        // Two shells appending: both keep their lines; the file is cut to
        // its last entries.
        b.add(b"from b", Control::default(), 100);
        a.add(b"from a", Control::default(), 100);
        a.append_to_file(p, 3).unwrap();
        b.append_to_file(p, 3).unwrap();
        let mut c = History::default();
        c.load(p, 100);
        assert_eq!(
            c.entries,
            vec![
                b"echo a\\\nb".to_vec(),
                b"from a".to_vec(),
                b"from b".to_vec()
            ]
        );
    }
}
