//! Word expansion, in POSIX order: tilde, parameter, command substitution
//! and arithmetic, then field splitting by IFS, pathname expansion, and quote
//! removal.
//!
//! Expansion never runs a command except through command substitution, and
//! never prints except for `${x?msg}` and `set -u` errors.

use crate::ast::{Part, Word};
use crate::pattern::{Marked, Pattern};
use crate::shell::{Flow, Shell};
use std::os::unix::ffi::OsStrExt;

type Result<T> = std::result::Result<T, Flow>;

mod arithmetic;
mod param;

/// How a delimiter last ended a field, for IFS splitting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Delim {
    None,
    White,
    Other,
}

/// Collects fields, each byte marked quoted or not.
struct Fields {
    out: Vec<Marked>,
    cur: Marked,
    /// The current field exists even if empty (a quoted `""` was seen).
    started: bool,
    last: Delim,
    /// Whether unquoted expansion results are split.
    split: bool,
    ifs: Vec<u8>,
    /// Whether to record which bytes were quoted (for globbing and
    /// patterns; plain strings do without).
    marks: bool,
    /// A quoted `@`-form list (`"$@"`, `"${a[@]}"`) was expanded inside the
    /// current double quotes: if they produce nothing, no field is made.
    saw_at: bool,
    /// Expanding the word of an unquoted `${x-word}` or `${x+word}`: an
    /// unquoted `$@` there is joined with spaces and then split, as bash
    /// does (unless IFS is null).
    rhs: bool,
    /// Expanding an assignment's value: in the word of a `${x-word}` in
    /// it, tildes after each `:` expand too (bash).
    assignment: bool,
}

impl Fields {
    fn new(split: bool, ifs: Vec<u8>) -> Self {
        Fields {
            out: Vec::new(),
            cur: Marked::default(),
            started: false,
            last: Delim::None,
            split,
            ifs,
            marks: true,
            saw_at: false,
            rhs: false,
            assignment: false,
        }
    }

    /// For a single string with no splitting and no pattern: no marks.
    fn string() -> Self {
        Fields {
            marks: false,
            ..Fields::new(false, Vec::new())
        }
    }

    fn put(&mut self, b: &[u8], quoted: bool) {
        if self.marks {
            self.cur.push(b, quoted);
        } else {
            self.cur.bytes.extend_from_slice(b);
        }
    }

    /// Everything, as one string. Several fields can only come from a
    /// quoted `"$@"`, whose elements are joined with spaces (as bash does in
    /// assignments, here-docs and other one-string contexts).
    fn concat(self) -> Vec<u8> {
        let mut fields = self.done();
        if fields.len() == 1 {
            return fields.pop().map(|m| m.bytes).unwrap_or_default();
        }
        fields
            .into_iter()
            .map(|m| m.bytes)
            .collect::<Vec<_>>()
            .join(&b' ')
    }

    /// Literal text of the word itself (unquoted): never split.
    fn literal(&mut self, b: &[u8]) {
        self.put(b, false);
        self.started = true;
        self.last = Delim::None;
    }

    fn quoted(&mut self, b: &[u8]) {
        self.put(b, true);
        self.started = true;
        self.last = Delim::None;
    }

    /// The result of an expansion inside double quotes. An empty one does
    /// not make a field by itself: the enclosing quotes decide (see
    /// `Part::Double`).
    fn quoted_expansion(&mut self, b: &[u8]) {
        self.put(b, true);
        if !b.is_empty() {
            self.started = true;
        }
        self.last = Delim::None;
    }

    /// The result of an unquoted expansion: split by IFS.
    fn expansion(&mut self, b: &[u8]) {
        if !self.split {
            self.put(b, false);
            if !b.is_empty() {
                self.started = true;
            }
            return;
        }
        for &c in b {
            if self.ifs.contains(&c) {
                let white = matches!(c, b' ' | b'\t' | b'\n');
                if white {
                    if self.started {
                        self.finish();
                        self.last = Delim::White;
                    }
                } else {
                    match self.last {
                        Delim::White => {
                            self.last = Delim::Other;
                        }
                        Delim::Other | Delim::None => {
                            self.finish_always();
                            self.last = Delim::Other;
                        }
                    }
                }
            } else {
                self.put(&[c], false);
                self.started = true;
                self.last = Delim::None;
            }
        }
    }

    /// Ends the current field if it exists.
    fn finish(&mut self) {
        if self.started {
            self.out.push(std::mem::take(&mut self.cur));
            self.started = false;
        }
    }

    /// Ends the current field, even if empty (a non-white IFS delimiter).
    fn finish_always(&mut self) {
        self.out.push(std::mem::take(&mut self.cur));
        self.started = false;
    }

    fn done(mut self) -> Vec<Marked> {
        self.finish();
        self.out
    }
}

/// What a parameter expansion works on.
#[derive(Debug, Clone)]
enum Subject {
    One(Option<Vec<u8>>),
    /// The list, and whether it is the `*` form.
    Many(Vec<Vec<u8>>, bool),
}

/// The context a part is expanded in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ctx {
    /// Unquoted in a command word.
    Unquoted,
    /// Inside double quotes (or a here-doc).
    Quoted,
}

impl Shell {
    /// Expands command words into fields: the full POSIX sequence.
    pub fn expand_words(&mut self, words: &[Word]) -> Result<Vec<Vec<u8>>> {
        if self.opts.braceexpand && words.iter().any(crate::brace::may_expand) {
            let mut braced = Vec::with_capacity(words.len());
            for w in words {
                match crate::brace::expand(w) {
                    Ok(more) => braced.extend(more),
                    Err(e) => return Err(self.expansion_error(&e.to_string())),
                }
            }
            return self.expand_words_unbraced(&braced);
        }
        self.expand_words_unbraced(words)
    }

    fn expand_words_unbraced(&mut self, words: &[Word]) -> Result<Vec<Vec<u8>>> {
        let mut out = Vec::with_capacity(words.len());
        for w in words {
            // Fast path: a plain word needs no machinery. (A `(` in a plain
            // word is an extglob group: `+(a)c` is a pattern.)
            if let Some(p) = w.as_plain()
                && !p
                    .iter()
                    .any(|c| matches!(c, b'*' | b'?' | b'[' | b'~' | b'('))
            {
                out.push(p.to_vec());
                continue;
            }
            let ifs = self.ifs();
            let mut f = Fields::new(true, ifs);
            match self.assignment_like_argument(w) {
                Some(parts) => self.expand_parts(&parts, Ctx::Unquoted, &mut f, true)?,
                None => self.expand_parts(&w.parts, Ctx::Unquoted, &mut f, true)?,
            }
            for field in f.done() {
                self.glob_into(field, &mut out)?;
            }
        }
        Ok(out)
    }

    /// Expands a word to one string: no field splitting, no globbing (for
    /// assignments, here-docs, `case` words, redirection targets).
    pub fn expand_string(&mut self, w: &Word) -> Result<Vec<u8>> {
        if let Some(p) = w.as_plain()
            && !p.starts_with(b"~")
        {
            return Ok(p.to_vec());
        }
        let mut f = Fields::string();
        self.expand_parts(&w.parts, Ctx::Unquoted, &mut f, true)?;
        let fields = f.done();
        if fields.len() == 1 {
            return Ok(fields
                .into_iter()
                .next()
                .map(|m| m.bytes)
                .unwrap_or_default());
        }
        let mut out = Vec::new();
        for (i, m) in fields.into_iter().enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            out.extend_from_slice(&m.bytes);
        }
        Ok(out)
    }

    /// Expands the value of an assignment: like [`Shell::expand_string`],
    /// with tildes also after each unquoted `:`.
    pub fn expand_assignment(&mut self, w: &Word) -> Result<Vec<u8>> {
        let mut f = Fields::string();
        f.assignment = true;
        // Most values have no tilde: their parts are expanded as they are,
        // not copied first.
        if w.parts
            .iter()
            .any(|p| matches!(p, Part::Lit(b) if b.contains(&b'~')))
        {
            let parts = self.assignment_tildes(&w.parts);
            self.expand_parts(&parts, Ctx::Unquoted, &mut f, false)?;
        } else {
            self.expand_parts(&w.parts, Ctx::Unquoted, &mut f, false)?;
        }
        Ok(f.concat())
    }

    /// An assignment value's parts with each unquoted tilde prefix at the
    /// start or after a `:` replaced by its directory (quoted).
    fn assignment_tildes(&self, word: &[Part]) -> Vec<Part> {
        let mut parts = Vec::with_capacity(word.len());
        for (i, p) in word.iter().enumerate() {
            match p {
                Part::Lit(b) if b.contains(&b'~') => {
                    let mut segs = b.split(|&c| c == b':').peekable();
                    let mut first = true;
                    let mut text = Vec::new();
                    while let Some(seg) = segs.next() {
                        if !first {
                            text.push(b':');
                        }
                        let at_start = i == 0 || !first;
                        let ends_here = segs.peek().is_some() || i + 1 == word.len();
                        let slash = seg.iter().position(|&c| c == b'/');
                        let prefix = &seg[..slash.unwrap_or(seg.len())];
                        let whole = ends_here || slash.is_some();
                        match (at_start && whole, self.tilde(prefix)) {
                            (true, Some(home)) => {
                                if !text.is_empty() {
                                    parts.push(Part::Lit(std::mem::take(&mut text)));
                                }
                                parts.push(Part::Quoted(home));
                                text.extend_from_slice(&seg[prefix.len()..]);
                            }
                            _ => text.extend_from_slice(seg),
                        }
                        first = false;
                    }
                    if !text.is_empty() {
                        parts.push(Part::Lit(text));
                    }
                }
                p => parts.push(p.clone()),
            }
        }
        parts
    }

    /// bash (not in POSIX mode) expands tildes after the `=` and each `:`
    /// of an argument that looks like an assignment (`echo PATH=~/bin`):
    /// the word's parts so rewritten, if it is one.
    fn assignment_like_argument(&self, w: &Word) -> Option<Vec<Part>> {
        if self.opts.posix {
            return None;
        }
        let Some(Part::Lit(first)) = w.parts.first() else {
            return None;
        };
        let eq = first.iter().position(|&c| c == b'=')?;
        let name = &first[..eq];
        let valid = name
            .first()
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
            && name.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_');
        if !valid
            || !w
                .parts
                .iter()
                .any(|p| matches!(p, Part::Lit(b) if b.contains(&b'~')))
        {
            return None;
        }
        let mut value = vec![Part::Lit(first[eq + 1..].to_vec())];
        value.extend(w.parts[1..].iter().cloned());
        let mut parts = vec![Part::Lit(first[..=eq].to_vec())];
        parts.extend(self.assignment_tildes(&value));
        Some(parts)
    }

    /// Expands a pattern word (`case`, `${x#p}`): quoted bytes are marked so
    /// that they match literally.
    pub fn expand_pattern(&mut self, w: &Word) -> Result<Pattern> {
        let all = self.expand_marked(w)?;
        Ok(Pattern::compile(&all.bytes, &all.quoted))
    }

    /// [`Shell::expand_pattern`] for `case` and `${x/p/r}`, which follow
    /// `shopt -s nocasematch` (bash).
    pub fn expand_match_pattern(&mut self, w: &Word) -> Result<Pattern> {
        let all = self.expand_marked(w)?;
        let nocase = self.shopts.on("nocasematch");
        Ok(Pattern::compile_with(
            &all.bytes,
            &all.quoted,
            crate::pattern::extglob(),
            nocase,
        ))
    }

    /// Expands a word to one string with each byte marked quoted or not,
    /// for the languages where quoting makes characters literal (patterns,
    /// `=~` regular expressions).
    pub fn expand_marked(&mut self, w: &Word) -> Result<Marked> {
        let mut f = Fields::new(false, Vec::new());
        self.expand_parts(&w.parts, Ctx::Unquoted, &mut f, true)?;
        let mut all = Marked::default();
        // Several fields ("${a[@]}", "$@") are joined with a space, as
        // bash joins them in a pattern or a regular expression.
        for (i, m) in f.done().into_iter().enumerate() {
            if i > 0 {
                all.push(b" ", true);
            }
            all.bytes.extend_from_slice(&m.bytes);
            all.quoted.extend_from_slice(&m.quoted);
        }
        Ok(all)
    }

    /// The expansion of a here-doc body (already parsed as quoted parts).
    pub fn expand_heredoc(&mut self, w: &Word) -> Result<Vec<u8>> {
        let mut f = Fields::string();
        self.expand_parts(&w.parts, Ctx::Quoted, &mut f, false)?;
        Ok(f.concat())
    }

    pub fn ifs(&self) -> Vec<u8> {
        match self.vars.get(b"IFS") {
            Some(v) => v.to_vec(),
            None => b" \t\n".to_vec(),
        }
    }

    fn expand_parts(
        &mut self,
        parts: &[Part],
        ctx: Ctx,
        f: &mut Fields,
        word_start: bool,
    ) -> Result<()> {
        for (i, part) in parts.iter().enumerate() {
            match part {
                Part::Lit(b) => {
                    if i == 0 && word_start && b.first() == Some(&b'~') && ctx == Ctx::Unquoted {
                        let end = b.iter().position(|&c| c == b'/').unwrap_or(b.len());
                        let whole = end < b.len() || parts.len() == 1;
                        if whole && let Some(home) = self.tilde(&b[..end]) {
                            f.quoted(&home);
                            f.literal(&b[end..]);
                            continue;
                        }
                    }
                    if ctx == Ctx::Quoted {
                        f.quoted(b);
                    } else {
                        f.literal(b);
                    }
                }
                Part::Escaped(c) => f.quoted(&[*c]),
                Part::Single(b) | Part::Quoted(b) => f.quoted(b),
                Part::Double(inner) => {
                    // `""` and `"$x"` make a field even when empty; `"$@"`
                    // and `"${a[@]}"` of no elements make none, as in bash,
                    // even beside other empty expansions (`"$@$x"`).
                    let outer = std::mem::take(&mut f.saw_at);
                    self.expand_parts(inner, Ctx::Quoted, f, false)?;
                    if !f.started && !f.saw_at {
                        f.quoted(b"");
                    }
                    f.saw_at = outer;
                }
                Part::Param(p) => self.expand_param(p, ctx, f)?,
                Part::CommandSub(list, _) => {
                    let out = self.command_sub(list)?;
                    self.push_value(&out, ctx, f);
                }
                Part::Arith(w) => {
                    let text = self.expand_arith_text(w)?;
                    let v = self.arith(&text)?;
                    self.push_value(v.to_string().as_bytes(), ctx, f);
                }
                // `eval a=(…)`, `let x=(…)`: one word, its parts expanded
                // and not split, for the builtin to read again (bash).
                Part::ArrayAssign(a) => {
                    let mut text = a.name.clone();
                    if let Some(i) = &a.index {
                        text.push(b'[');
                        text.extend_from_slice(&self.expand_assignment(i)?);
                        text.push(b']');
                    }
                    text.extend_from_slice(if a.append { b"+=(" } else { b"=(" });
                    for (n, e) in a.array.iter().flatten().enumerate() {
                        if n > 0 {
                            text.push(b' ');
                        }
                        if let Some(k) = &e.key {
                            text.push(b'[');
                            text.extend_from_slice(&self.expand_assignment(k)?);
                            text.extend_from_slice(if e.append { b"]+=" } else { b"]=" });
                        }
                        text.extend_from_slice(&self.expand_assignment(&e.value)?);
                    }
                    text.push(b')');
                    f.literal(&text);
                }
                Part::ProcSubst { read, list } => {
                    let path = self.process_substitution(*read, list)?;
                    f.quoted(&path);
                }
                Part::BadSubst(b) => {
                    let msg = format!("{}: bad substitution", String::from_utf8_lossy(&b.message));
                    return Err(self.expansion_error(&msg));
                }
                Part::Unparsed(u) => {
                    let lines = &u.error;
                    let who = self.script_name().to_vec();
                    let mut text = Vec::new();
                    for l in lines {
                        text.extend_from_slice(&who);
                        text.extend_from_slice(b": command substitution: ");
                        text.extend_from_slice(l);
                        text.push(b'\n');
                    }
                    self.err_out(&text);
                    return Err(Flow::Abort(1));
                }
            }
        }
        Ok(())
    }

    fn push_value(&mut self, v: &[u8], ctx: Ctx, f: &mut Fields) {
        match ctx {
            Ctx::Quoted => f.quoted_expansion(v),
            Ctx::Unquoted => f.expansion(v),
        }
    }

    /// `~`, `~user`, `~+`, `~-`: the directory, if known.
    fn tilde(&self, prefix: &[u8]) -> Option<Vec<u8>> {
        let user = prefix.strip_prefix(b"~")?;
        match user {
            b"" => match self.vars.get(b"HOME") {
                Some(h) => Some(h.to_vec()),
                None => nix::unistd::User::from_uid(nix::unistd::getuid())
                    .ok()
                    .flatten()
                    .map(|u| u.dir.as_os_str().as_bytes().to_vec()),
            },
            b"+" => self.vars.get(b"PWD").map(<[u8]>::to_vec),
            b"-" => self.vars.get(b"OLDPWD").map(<[u8]>::to_vec),
            // `~N`, `~+N`, `~-N`: an entry of the directory stack, as
            // `dirs +N` or `dirs -N` names it (bash).
            [b'0'..=b'9' | b'+' | b'-', rest @ ..]
                if !rest.is_empty() || user[0].is_ascii_digit() =>
            {
                let (from_right, digits) = match user[0] {
                    b'+' => (false, rest),
                    b'-' => (true, rest),
                    _ => (false, user),
                };
                if !digits.iter().all(u8::is_ascii_digit) {
                    return None;
                }
                let n: usize = std::str::from_utf8(digits).ok()?.parse().ok()?;
                let all = self.directory_stack();
                let i = if from_right {
                    all.len().checked_sub(n + 1)?
                } else {
                    n
                };
                all.get(i).cloned()
            }
            name => {
                let name = std::str::from_utf8(name).ok()?;
                nix::unistd::User::from_name(name)
                    .ok()
                    .flatten()
                    .map(|u| u.dir.as_os_str().as_bytes().to_vec())
            }
        }
    }

    /// Pathname expansion of one field, appending the results.
    fn glob_into(&mut self, field: Marked, out: &mut Vec<Vec<u8>>) -> Result<()> {
        if self.opts.noglob || !field.has_magic() {
            out.push(field.bytes);
            return Ok(());
        }
        let on = |sh: &Shell, name| sh.shopts.on(name);
        // GLOBIGNORE: names that match one of its patterns are dropped
        // (assigning it turned dotglob on, as in bash), and so are `.`
        // and `..`.
        let ignore: Vec<crate::pattern::Pattern> = self
            .vars
            .get(b"GLOBIGNORE")
            .filter(|v| !v.is_empty())
            .map(|v| {
                split_ignorespec(v)
                    .into_iter()
                    .map(crate::pattern::Pattern::new)
                    .collect()
            })
            .unwrap_or_default();
        let how = crate::glob::How {
            dotglob: on(self, "dotglob"),
            nocase: on(self, "nocaseglob"),
            globstar: on(self, "globstar"),
            skipdots: on(self, "globskipdots"),
        };
        let mut matches = crate::glob::expand(&field, how);
        if !ignore.is_empty() {
            matches.retain(|m| {
                let base = m.rsplit(|&c| c == b'/').next().unwrap_or(m);
                base != b"." && base != b".." && !ignore.iter().any(|p| p.matches(m))
            });
        }
        if matches.is_empty() {
            // failglob: an error; nullglob: the pattern disappears.
            if on(self, "failglob") {
                let msg = format!("no match: {}", String::from_utf8_lossy(&field.bytes));
                return Err(self.abandon(&msg, 1));
            }
            if !on(self, "nullglob") {
                out.push(field.bytes);
            }
        } else {
            out.extend(matches);
        }
        Ok(())
    }
}

/// GLOBIGNORE's patterns: split at `:`, but not inside a bracket
/// expression or an extglob group (bash's `split_ignorespec`).
fn split_ignorespec(v: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let (mut start, mut i, mut parens) = (0, 0, 0u32);
    while i < v.len() {
        match v[i] {
            b'\\' => i += 1,
            // To the `]` that closes it, if one does.
            b'[' => i = crate::pattern::bracket_end(v, &[], i).unwrap_or(i),
            b'(' => parens += 1,
            b')' => parens = parens.saturating_sub(1),
            b':' if parens == 0 => {
                out.push(&v[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out.push(&v[start..]);
    out.retain(|p| !p.is_empty());
    out
}

/// The time since the Unix epoch (`EPOCHSECONDS`, `EPOCHREALTIME`).
pub(crate) fn epoch() -> std::time::Duration {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
}
