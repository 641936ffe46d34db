//! `test`, `[` and `[[ … ]]`.

use crate::ast::Word;
use crate::escape::lossy;
use crate::shell::{Flow, Run, Shell};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};

/// `test` and `[`: status 0 (true), 1 (false) or 2 (error).
pub fn test(sh: &mut Shell, args: &[Vec<u8>], bracket: bool) -> i32 {
    let name = if bracket { "[" } else { "test" };
    let args = if bracket {
        match args.split_last() {
            Some((last, rest)) if last == b"]" => rest,
            _ => {
                sh.error("[: missing `]'");
                return 2;
            }
        }
    } else {
        args
    };
    let args: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
    match eval_posix(&args, &mut |q| ask(sh, q)) {
        Ok(v) => i32::from(!v),
        Err(msg) => {
            sh.error(&format!("{name}: {msg}"));
            2
        }
    }
}

fn is_unary(op: &[u8]) -> bool {
    matches!(
        op,
        b"-a"
            | b"-b"
            | b"-c"
            | b"-d"
            | b"-e"
            | b"-f"
            | b"-g"
            | b"-h"
            | b"-k"
            | b"-L"
            | b"-n"
            | b"-N"
            | b"-O"
            | b"-G"
            | b"-p"
            | b"-r"
            | b"-s"
            | b"-S"
            | b"-t"
            | b"-u"
            | b"-w"
            | b"-x"
            | b"-z"
            | b"-o"
            | b"-v"
    )
}

fn is_binary(op: &[u8]) -> bool {
    matches!(
        op,
        b"=" | b"=="
            | b"!="
            | b"<"
            | b">"
            | b"-eq"
            | b"-ne"
            | b"-lt"
            | b"-le"
            | b"-gt"
            | b"-ge"
            | b"-nt"
            | b"-ot"
            | b"-ef"
    )
}

/// POSIX's rules by argument count, then a general parser beyond four.
/// `set`: whether a variable is set (for `-v`).
/// What `test` asks the shell: whether a variable is set (`-v`), or a
/// `set -o` option is on (`-o`).
#[derive(Debug)]
pub enum Query<'a> {
    Var(&'a [u8]),
    Option(&'a [u8]),
}

type IsSet<'f> = &'f mut dyn FnMut(Query<'_>) -> bool;

/// The shell's answer to a [`Query`].
fn ask(sh: &mut Shell, q: Query<'_>) -> bool {
    match q {
        Query::Var(n) => sh.is_set(n),
        Query::Option(n) => sh.opts.get(&String::from_utf8_lossy(n)) == Some(true),
    }
}

fn eval_posix(a: &[&[u8]], set: IsSet<'_>) -> Result<bool, String> {
    match a.len() {
        0 => Ok(false),
        1 => Ok(!a[0].is_empty()),
        2 => {
            if a[0] == b"!" {
                return Ok(a[1].is_empty());
            }
            if is_unary(a[0]) {
                return unary(a[0], a[1], set);
            }
            Err(format!("{}: unary operator expected", lossy(a[0])))
        }
        3 => {
            if is_binary(a[1]) {
                return binary(a[0], a[1], a[2]);
            }
            if a[1] == b"-a" {
                return Ok(!a[0].is_empty() && !a[2].is_empty());
            }
            if a[1] == b"-o" {
                return Ok(!a[0].is_empty() || !a[2].is_empty());
            }
            if a[0] == b"!" {
                return eval_posix(&a[1..], set).map(|v| !v);
            }
            if a[0] == b"(" && a[2] == b")" {
                return Ok(!a[1].is_empty());
            }
            Err(format!("{}: binary operator expected", lossy(a[1])))
        }
        4 => {
            if a[0] == b"!" {
                return eval_posix(&a[1..], set).map(|v| !v);
            }
            if a[0] == b"(" && a[3] == b")" {
                return eval_posix(&a[1..3], set);
            }
            general(a, set)
        }
        _ => general(a, set),
    }
}

fn general(a: &[&[u8]], set: IsSet<'_>) -> Result<bool, String> {
    let mut p = Plain { a, i: 0, set };
    let v = p.or()?;
    if p.i < a.len() {
        return Err(format!("{}: unexpected argument", lossy(a[p.i])));
    }
    Ok(v)
}

struct Plain<'a, 'f> {
    a: &'a [&'a [u8]],
    i: usize,
    set: IsSet<'f>,
}

impl Plain<'_, '_> {
    fn or(&mut self) -> Result<bool, String> {
        let mut v = self.and()?;
        while self.a.get(self.i) == Some(&b"-o".as_slice()) {
            self.i += 1;
            let r = self.and()?;
            v = v || r;
        }
        Ok(v)
    }

    fn and(&mut self) -> Result<bool, String> {
        let mut v = self.not()?;
        while self.a.get(self.i) == Some(&b"-a".as_slice()) {
            self.i += 1;
            let r = self.not()?;
            v = v && r;
        }
        Ok(v)
    }

    fn not(&mut self) -> Result<bool, String> {
        if self.a.get(self.i) == Some(&b"!".as_slice()) {
            self.i += 1;
            return self.not().map(|v| !v);
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<bool, String> {
        let Some(&t) = self.a.get(self.i) else {
            return Err("argument expected".into());
        };
        if t == b"(" {
            self.i += 1;
            let v = self.or()?;
            if self.a.get(self.i) != Some(&b")".as_slice()) {
                return Err("`)' expected".into());
            }
            self.i += 1;
            return Ok(v);
        }
        if let (Some(&op), Some(&r)) = (self.a.get(self.i + 1), self.a.get(self.i + 2))
            && is_binary(op)
        {
            self.i += 3;
            return binary(t, op, r);
        }
        if is_unary(t)
            && let Some(&x) = self.a.get(self.i + 1)
        {
            self.i += 2;
            return unary(t, x, self.set);
        }
        self.i += 1;
        Ok(!t.is_empty())
    }
}

fn int(s: &[u8]) -> Result<i64, String> {
    let t = String::from_utf8_lossy(s);
    t.trim()
        .parse::<i64>()
        .map_err(|_| format!("{t}: integer expression expected"))
}

fn meta(path: &[u8], follow: bool) -> Option<std::fs::Metadata> {
    let p = OsStr::from_bytes(path);
    if follow {
        std::fs::metadata(p).ok()
    } else {
        std::fs::symlink_metadata(p).ok()
    }
}

fn access(path: &[u8], mode: rustix::fs::Access) -> bool {
    rustix::fs::access(OsStr::from_bytes(path), mode).is_ok()
}

pub fn unary(op: &[u8], x: &[u8], set: IsSet<'_>) -> Result<bool, String> {
    use rustix::fs::Access;
    Ok(match op {
        b"-n" => !x.is_empty(),
        b"-z" => x.is_empty(),
        b"-e" | b"-a" => meta(x, true).is_some(),
        b"-f" => meta(x, true).is_some_and(|m| m.is_file()),
        b"-d" => meta(x, true).is_some_and(|m| m.is_dir()),
        b"-b" => meta(x, true).is_some_and(|m| m.file_type().is_block_device()),
        b"-c" => meta(x, true).is_some_and(|m| m.file_type().is_char_device()),
        b"-p" => meta(x, true).is_some_and(|m| m.file_type().is_fifo()),
        b"-S" => meta(x, true).is_some_and(|m| m.file_type().is_socket()),
        b"-h" | b"-L" => meta(x, false).is_some_and(|m| m.file_type().is_symlink()),
        b"-s" => meta(x, true).is_some_and(|m| m.len() > 0),
        b"-g" => meta(x, true).is_some_and(|m| m.permissions().mode() & 0o2000 != 0),
        b"-u" => meta(x, true).is_some_and(|m| m.permissions().mode() & 0o4000 != 0),
        b"-k" => meta(x, true).is_some_and(|m| m.permissions().mode() & 0o1000 != 0),
        b"-O" => meta(x, true).is_some_and(|m| m.uid() == nix::unistd::geteuid().as_raw()),
        b"-G" => meta(x, true).is_some_and(|m| m.gid() == nix::unistd::getegid().as_raw()),
        b"-N" => meta(x, true).is_some_and(|m| m.mtime() >= m.atime()),
        b"-r" => access(x, Access::READ_OK),
        b"-w" => access(x, Access::WRITE_OK),
        b"-x" => access(x, Access::EXEC_OK),
        b"-t" => {
            let fd = int(x)?;
            // SAFETY: isatty on an fd number.
            i32::try_from(fd).is_ok_and(|fd| unsafe { libc::isatty(fd) } == 1)
        }
        b"-o" => set(Query::Option(x)),
        b"-v" => set(Query::Var(x)),
        _ => return Err(format!("{}: unary operator expected", lossy(op))),
    })
}

pub fn binary(l: &[u8], op: &[u8], r: &[u8]) -> Result<bool, String> {
    Ok(match op {
        b"=" | b"==" => l == r,
        b"!=" => l != r,
        b"<" => l < r,
        b">" => l > r,
        b"-eq" => int(l)? == int(r)?,
        b"-ne" => int(l)? != int(r)?,
        b"-lt" => int(l)? < int(r)?,
        b"-le" => int(l)? <= int(r)?,
        b"-gt" => int(l)? > int(r)?,
        b"-ge" => int(l)? >= int(r)?,
        b"-nt" | b"-ot" => {
            let (a, b) = (meta(l, true), meta(r, true));
            let t = |m: &std::fs::Metadata| (m.mtime(), m.mtime_nsec());
            match op {
                b"-nt" => match (a, b) {
                    (Some(a), Some(b)) => t(&a) > t(&b),
                    (Some(_), None) => true,
                    _ => false,
                },
                _ => match (a, b) {
                    (Some(a), Some(b)) => t(&a) < t(&b),
                    (None, Some(_)) => true,
                    _ => false,
                },
            }
        }
        b"-ef" => match (meta(l, true), meta(r, true)) {
            (Some(a), Some(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        },
        _ => return Err(format!("{}: binary operator expected", lossy(op))),
    })
}

/// The `[[ … ]]` evaluator. Errors are a status (2) or a flow.
#[allow(missing_debug_implementations)]
pub struct Cond<'s, 'w> {
    pub sh: &'s mut Shell,
    pub words: &'w [Word],
    pub i: usize,
    /// An odd number of `!` stands right before the term being read
    /// (shown in its `set -x` line, as bash shows it).
    negated: bool,
}

/// `set -x`'s form of an operand: `''` if empty.
fn shown(v: &[u8]) -> &[u8] {
    if v.is_empty() { b"''" } else { v }
}

/// `set -x`'s form of a pattern operand: quoted characters with a
/// backslash before each, as bash prepares them for matching.
fn shown_pattern(m: &crate::pattern::Marked) -> Vec<u8> {
    let mut out = Vec::with_capacity(m.bytes.len());
    for (&b, &q) in m.bytes.iter().zip(&m.quoted) {
        if q {
            out.push(b'\\');
        }
        out.push(b);
    }
    if out.is_empty() {
        out.extend_from_slice(b"''");
    }
    out
}

type CondResult = Result<bool, Result<i32, Flow>>;

impl<'s, 'w> Cond<'s, 'w> {
    pub fn new(sh: &'s mut Shell, words: &'w [Word]) -> Self {
        Cond {
            sh,
            words,
            i: 0,
            negated: false,
        }
    }

    /// A term's `set -x` line: `[[ [!] parts… ]]`.
    fn trace(&mut self, parts: &[&[u8]]) {
        if !self.sh.opts.xtrace {
            return;
        }
        let mut text = b"[[ ".to_vec();
        if self.negated {
            text.extend_from_slice(b"! ");
        }
        for p in parts {
            text.extend_from_slice(p);
            text.push(b' ');
        }
        text.extend_from_slice(b"]]");
        self.sh.trace_line(&text);
    }

    fn peek_op(&self) -> Option<Vec<u8>> {
        let w = self.words.get(self.i)?;
        w.as_plain().map(<[u8]>::to_vec)
    }

    fn syntax(&mut self, msg: &str) -> CondResult {
        self.sh.error(msg);
        Err(Ok(2))
    }

    pub fn or(&mut self) -> CondResult {
        let mut v = self.and()?;
        while self.peek_op().as_deref() == Some(b"||") {
            self.i += 1;
            if v {
                self.skip(false);
            } else {
                v = self.and()?;
            }
        }
        Ok(v)
    }

    /// Steps over one operand without evaluating it (short circuit): up to
    /// the next `||` (or also `&&`, if `and_too`) at this nesting level.
    fn skip(&mut self, and_too: bool) {
        let mut depth = 0i32;
        while self.i < self.words.len() {
            match self.peek_op().as_deref() {
                Some(b"(") => depth += 1,
                Some(b")") if depth == 0 => return,
                Some(b")") => depth -= 1,
                Some(b"||") if depth == 0 => return,
                Some(b"&&") if depth == 0 && and_too => return,
                _ => {}
            }
            self.i += 1;
        }
    }

    fn and(&mut self) -> CondResult {
        let mut v = self.not()?;
        while self.peek_op().as_deref() == Some(b"&&") {
            self.i += 1;
            if !v {
                // Skip one operand group.
                self.skip(true);
            } else {
                v = self.not()?;
            }
        }
        Ok(v)
    }

    fn not(&mut self) -> CondResult {
        let mut negated = false;
        while self.peek_op().as_deref() == Some(b"!") {
            self.i += 1;
            negated = !negated;
        }
        self.negated = negated && self.peek_op().as_deref() != Some(b"(");
        let v = self.primary();
        self.negated = false;
        v.map(|v| v != negated)
    }

    fn expand(&mut self, i: usize) -> Result<Vec<u8>, Result<i32, Flow>> {
        self.sh.expand_string(&self.words[i]).map_err(Err)
    }

    fn primary(&mut self) -> CondResult {
        if self.i >= self.words.len() {
            return self.syntax("syntax error in conditional expression");
        }
        if self.peek_op().as_deref() == Some(b"(") {
            self.i += 1;
            let v = self.or()?;
            if self.peek_op().as_deref() != Some(b")") {
                return self.syntax("syntax error in conditional expression: expected `)'");
            }
            self.i += 1;
            return Ok(v);
        }
        // Binary?
        if let Some(op) = self
            .words
            .get(self.i + 1)
            .and_then(|w| w.as_plain())
            .map(<[u8]>::to_vec)
            && (is_binary(&op) || op == b"=~")
            && self.i + 2 < self.words.len()
        {
            let arith = matches!(
                op.as_slice(),
                b"-eq" | b"-ne" | b"-lt" | b"-le" | b"-gt" | b"-ge"
            );
            let l = if arith {
                Vec::new()
            } else {
                self.expand(self.i)?
            };
            let ri = self.i + 2;
            self.i += 3;
            return match op.as_slice() {
                b"==" | b"=" | b"!=" => {
                    // The right side is a pattern with extglob groups,
                    // whatever `shopt` says (bash).
                    let m = self.sh.expand_marked(&self.words[ri]).map_err(Err)?;
                    self.trace(&[shown(&l), &op, &shown_pattern(&m)]);
                    let nocase = self.sh.shopts.on("nocasematch");
                    let pat =
                        crate::pattern::Pattern::compile_with(&m.bytes, &m.quoted, true, nocase);
                    let m = pat.matches(&l);
                    Ok(if op == b"!=" { !m } else { m })
                }
                b"=~" => {
                    let re = self.sh.expand_marked(&self.words[ri]).map_err(Err)?;
                    self.trace(&[shown(&l), &op, &shown_pattern(&re)]);
                    let re = crate::regex::quote_marked(&re);
                    let nocase = self.sh.shopts.on("nocasematch");
                    match crate::regex::matches(&re, &l, nocase) {
                        Ok(Some(groups)) => {
                            let m = groups
                                .into_iter()
                                .enumerate()
                                .map(|(i, g)| (i as i64, g))
                                .collect();
                            let _ = self
                                .sh
                                .vars
                                .set_value(b"BASH_REMATCH", crate::vars::Value::Indexed(m));
                            Ok(true)
                        }
                        Ok(None) => {
                            let _ = self.sh.vars.set_value(
                                b"BASH_REMATCH",
                                crate::vars::Value::Indexed(Default::default()),
                            );
                            Ok(false)
                        }
                        Err(crate::regex::BadRegex) => Err(Ok(2)),
                    }
                }
                b"-eq" | b"-ne" | b"-lt" | b"-le" | b"-gt" | b"-ge" => {
                    // Arithmetic operands: their subscripts expanded once
                    // (bash 5.2).
                    let li = ri - 2;
                    let l = self
                        .sh
                        .expand_arith_word(&self.words[li], false)
                        .map_err(Err)?;
                    let r = self
                        .sh
                        .expand_arith_word(&self.words[ri], false)
                        .map_err(Err)?;
                    self.trace(&[shown(&l), &op, shown(&r)]);
                    // Left first; a fault there leaves the right unread.
                    let Some(a) = self.sh.arith_command("[[", &l).map_err(Err)? else {
                        return Err(Ok(1));
                    };
                    let Some(b) = self.sh.arith_command("[[", &r).map_err(Err)? else {
                        return Err(Ok(1));
                    };
                    Ok(match op.as_slice() {
                        b"-eq" => a == b,
                        b"-ne" => a != b,
                        b"-lt" => a < b,
                        b"-le" => a <= b,
                        b"-gt" => a > b,
                        _ => a >= b,
                    })
                }
                _ => {
                    let r = self.expand(ri)?;
                    self.trace(&[shown(&l), &op, shown(&r)]);
                    match binary(&l, &op, &r) {
                        Ok(v) => Ok(v),
                        Err(m) => self.syntax(&m),
                    }
                }
            };
        }
        if let Some(op) = self.peek_op()
            && is_unary(&op)
            && self.i + 1 < self.words.len()
        {
            // `-v a[sub]`: the subscript expanded once here, and again
            // (giving it back) where the element is looked up (bash 5.2).
            let x = if op == b"-v" {
                self.sh
                    .expand_arith_word(&self.words[self.i + 1], false)
                    .map_err(Err)?
            } else {
                self.expand(self.i + 1)?
            };
            self.i += 2;
            self.trace(&[&op, shown(&x)]);
            let sh = &mut *self.sh;
            let mut ask = |q: Query<'_>| match q {
                Query::Var(n) => sh.is_set_as(n, false),
                q => ask(sh, q),
            };
            return match unary(&op, &x, &mut ask) {
                Ok(v) => Ok(v),
                Err(m) => self.syntax(&m),
            };
        }
        let v = self.expand(self.i)?;
        self.i += 1;
        self.trace(&[b"-n", shown(&v)]);
        Ok(!v.is_empty())
    }
}

/// `[[ … ]]`: operands expand without splitting or globbing; the right side
/// of `==` and `!=` is a pattern, of `=~` a regular expression.
pub fn double_bracket(sh: &mut Shell, words: &[crate::ast::Word]) -> crate::shell::Exec {
    let mut p = Cond::new(sh, words);
    match p.or() {
        Ok(v) => {
            if p.i < words.len() {
                let w = crate::escape::lossy(&words[p.i].unquoted_text());
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
