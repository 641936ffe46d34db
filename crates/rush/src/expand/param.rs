//! Parameter expansion: `$name`, `${…}` with every operator, arrays and
//! their elements, and the pattern and case operations on values.

use super::{Ctx, Delim, Fields, Result, Subject, epoch};
use crate::ast::{Anchor, Param, ParamOp, Part, Word};
use crate::pattern::Pattern;
use crate::shell::{Flow, Shell};
use crate::vars::{Key, Value};
use std::os::unix::ffi::OsStrExt;

impl Shell {
    /// The value of a parameter by name: special, positional, or variable.
    pub fn param_value(&self, name: &[u8]) -> Option<Vec<u8>> {
        match name {
            b"?" => Some(self.status.to_string().into_bytes()),
            b"#" => Some(self.positional.len().to_string().into_bytes()),
            b"$" => Some(self.shell_pid.to_string().into_bytes()),
            b"!" => self.last_bg.map(|p| p.to_string().into_bytes()),
            b"-" => Some(self.opts.flags_string().into_bytes()),
            b"0" => Some(self.arg0.clone()),
            b"@" | b"*" => {
                let sep = match self.vars.get(b"IFS") {
                    Some(i) => i.first().copied(),
                    None => Some(b' '),
                };
                let mut out = Vec::new();
                for (i, p) in self.positional.iter().enumerate() {
                    if i > 0
                        && let Some(s) = sep
                    {
                        out.push(s);
                    }
                    out.extend_from_slice(p);
                }
                Some(out)
            }
            n if n.first().is_some_and(u8::is_ascii_digit) => {
                let i: usize = std::str::from_utf8(n).ok()?.parse().ok()?;
                self.positional.get(i.checked_sub(1)?).cloned()
            }
            b"_" => Some(self.last_arg.clone()),
            n => match self.vars.var(n) {
                Some(v) if v.dynamic => self.dynamic_value(n)?.scalar().map(<[u8]>::to_vec),
                Some(v) => v.value.as_ref()?.scalar().map(<[u8]>::to_vec),
                None => None,
            },
        }
    }

    /// The dynamic scalars, computed: only for a name that
    /// [`Shell::is_dynamic`].
    pub(crate) fn dynamic_scalar(&self, name: &[u8]) -> Option<Vec<u8>> {
        let s = match name {
            b"LINENO" => self.line.to_string(),
            b"BASH_COMMAND" => return Some(self.bash_command()),
            b"BASH_ARGV0" => return Some(self.arg0.clone()),
            b"RANDOM" => self.random().to_string(),
            b"SRANDOM" => {
                let mut b = [0u8; 4];
                let _ = rustix::rand::getrandom(&mut b, rustix::rand::GetRandomFlags::empty());
                u32::from_ne_bytes(b).to_string()
            }
            b"BASH_SUBSHELL" => self.subshell_level.to_string(),
            b"UID" => nix::unistd::getuid().as_raw().to_string(),
            b"EUID" => nix::unistd::geteuid().as_raw().to_string(),
            b"BASHPID" => std::process::id().to_string(),
            b"SECONDS" => self.started.elapsed().as_secs().to_string(),
            // The number of the command being run in the history list, or
            // 0 while history is off.
            b"HISTCMD" if self.opts.history => (self.history.first + self.history.entries.len())
                .saturating_sub(1)
                .to_string(),
            b"HISTCMD" => "0".to_string(),
            b"HOSTNAME" => nix::unistd::gethostname()
                .ok()?
                .to_string_lossy()
                .into_owned(),
            // The user's login shell (bash sets SHELL so when it is unset).
            b"SHELL" => {
                let u = nix::unistd::User::from_uid(nix::unistd::getuid()).ok()??;
                return Some(u.shell.as_os_str().as_bytes().to_vec());
            }
            b"SHELLOPTS" => self.opts.shellopts(),
            b"BASHOPTS" => self.shopts.bashopts(),
            b"EPOCHSECONDS" => epoch().as_secs().to_string(),
            b"EPOCHREALTIME" => {
                let t = epoch();
                format!("{}.{:06}", t.as_secs(), t.subsec_micros())
            }
            _ => return None,
        };
        Some(s.into_bytes())
    }

    /// Evaluates an array subscript for `name`: a string key for an
    /// associative array, an arithmetic index otherwise (negative counts
    /// from the end).
    /// A subscript that comes as text at run time (`unset 'm[$k]'`,
    /// `printf -v 'm["k"]'`, `ref='m[k]'; ${!ref}`): an associative
    /// array's key is read as shell words and expanded (quotes removed,
    /// parameters and substitutions), as bash does; an indexed array's is
    /// left to arithmetic.
    pub fn runtime_subscript(&mut self, name: &[u8], sub: &[u8]) -> Result<Vec<u8>> {
        if !matches!(self.vars.value(name), Some(Value::Assoc(_))) {
            // An index: its `$…` and `$(…)` expand before the arithmetic
            // (`declare -n r='a[$(echo 2) + 1]'`), as in double quotes.
            if sub.iter().any(|&c| c == b'$' || c == b'`') {
                return Ok(self
                    .expand_as_double_quoted(sub)
                    .unwrap_or_else(|| sub.to_vec()));
            }
            // Otherwise only double quotes' quote removal (bash's
            // `string_quote_removal`): `"` goes, a backslash only before
            // what it quotes there, `'` stays.
            if sub.iter().any(|&c| c == b'"' || c == b'\\') {
                let mut out = Vec::with_capacity(sub.len());
                let mut i = 0;
                while i < sub.len() {
                    match sub[i] {
                        b'"' => {}
                        b'\\' if i + 1 < sub.len() => {
                            if !matches!(sub[i + 1], b'$' | b'`' | b'"' | b'\\' | b'\n') {
                                out.push(b'\\');
                            }
                            i += 1;
                            out.push(sub[i]);
                        }
                        c => out.push(c),
                    }
                    i += 1;
                }
                return Ok(out);
            }
            return Ok(sub.to_vec());
        }
        // A key: expanded as one word (quotes removed, parameters and
        // substitutions expanded, blanks kept), as bash does.
        if !sub
            .iter()
            .any(|c| matches!(c, b'\\' | b'$' | b'`' | b'\'' | b'"'))
        {
            return Ok(sub.to_vec());
        }
        match crate::parse::subscript_word(sub) {
            Ok(w) => self.expand_subscript_text(&w),
            Err(_) => Ok(sub.to_vec()),
        }
    }

    pub fn array_key(&mut self, name: &[u8], sub: &[u8]) -> Result<Key> {
        if let Some(Value::Assoc(_)) = self.vars.value(name) {
            return Ok(Key::Name(sub.to_vec()));
        }
        let i = self.arith(sub).inspect_err(|f| {
            // bash's array_expand_index: an error in an index throws away
            // all the text being run (`top_level_cleanup`), not just the
            // line: the rest of `-c`, of eval's or source's text.
            if matches!(f, Flow::Abort(_)) {
                self.discard_text = true;
            }
        })?;
        if i < 0 {
            let len = match self.value_of(name).as_deref() {
                Some(Value::Indexed(m)) => m.keys().next_back().map_or(0, |k| k + 1),
                Some(Value::Str(_)) => 1,
                _ => 0,
            };
            return Ok(Key::Index(len + i));
        }
        Ok(Key::Index(i))
    }

    /// One element of an array variable (or of a string, at index 0).
    pub fn element(&self, name: &[u8], key: &Key) -> Option<Vec<u8>> {
        match (self.value_of(name)?.as_ref(), key) {
            (Value::Str(s), Key::Index(0)) => Some(s.clone()),
            (Value::Str(_), _) => None,
            (Value::Indexed(m), Key::Index(i)) => m.get(i).cloned(),
            (Value::Indexed(_), Key::Name(_)) => None,
            (Value::Assoc(m), Key::Name(k)) => m.get(k).cloned(),
            (Value::Assoc(m), Key::Index(i)) => m.get(i.to_string().as_bytes()).cloned(),
        }
    }

    /// What a parameter expansion works on: one value, or a list (`$@`,
    /// `${a[@]}`), with whether it was the `*` form.
    pub(super) fn subject(&mut self, p: &Param) -> Result<(Vec<u8>, Subject)> {
        let mut name = p.name.clone();
        // An associative array's key is a word; an index is arithmetic
        // text, expanded as `$((…))`'s (bash: `${a[' ']}` is refused).
        let mut index: Option<Vec<u8>> = match &p.index {
            Some(w) if p.indirect || matches!(self.vars.value(&name), Some(Value::Assoc(_))) => {
                Some(self.expand_index_text(w)?)
            }
            Some(w) => Some(self.expand_arith_text(w)?),
            None => None,
        };
        if p.indirect {
            // ${!a[@]}: the keys.
            if let Some(i) = index.as_deref().filter(|i| matches!(*i, b"@" | b"*")) {
                let star = i == b"*";
                let keys = self.value_of(&name).map(|v| v.keys()).unwrap_or_default();
                return Ok((name, Subject::Many(keys, star)));
            }
            // `${!ref}` of a nameref is the name it refers to (bash).
            if index.is_none()
                && let Some(v) = self.vars.var_itself(&name)
                && v.nameref
            {
                let target = v.value.as_ref().and_then(Value::scalar).map(<[u8]>::to_vec);
                return Ok((name, Subject::One(target)));
            }
            // `${!a[1]}`: through the element's value.
            let value = match index.take() {
                Some(i) => {
                    let key = self.array_key(&name, &i)?;
                    self.element(&name, &key)
                }
                None => self.param_value(&name),
            };
            let Some(target) = value else {
                // A variable that is set, with that element unset: nothing
                // (with `set -u`, an error naming the expression); one
                // that is not: an error (bash).
                let exists = self
                    .vars
                    .var(&name)
                    .is_some_and(|v| v.value.is_some() && !v.declared_only);
                if exists {
                    if self.opts.nounset {
                        let msg = format!(
                            "{}: unbound variable",
                            String::from_utf8_lossy(&shown_param(p))
                        );
                        return Err(self.fatal(&msg));
                    }
                    return Ok((name, Subject::One(None)));
                }
                let msg = format!(
                    "{}: invalid indirect expansion",
                    String::from_utf8_lossy(&name)
                );
                return Err(self.expansion_error(&msg));
            };
            match target.iter().position(|&c| c == b'[') {
                Some(i) if target.ends_with(b"]") => {
                    name = target[..i].to_vec();
                    let sub = &target[i + 1..target.len() - 1];
                    index = Some(if matches!(sub, b"@" | b"*") {
                        sub.to_vec()
                    } else {
                        self.runtime_subscript(&name, sub)?
                    });
                }
                _ => {
                    let ok = crate::parse::is_name(&target)
                        || !target.is_empty() && target.iter().all(u8::is_ascii_digit)
                        // `${!*}` with no arguments: nothing (bash).
                        || target.is_empty() && matches!(p.name.as_slice(), b"*" | b"@")
                        || matches!(
                            target.as_slice(),
                            b"@" | b"*" | b"#" | b"?" | b"-" | b"$" | b"!"
                        );
                    if !ok {
                        let msg = format!(
                            "{}: invalid variable name",
                            String::from_utf8_lossy(&target)
                        );
                        return Err(self.expansion_error(&msg));
                    }
                    name = target;
                }
            }
        }
        // A nameref to an element (`declare -n r='a[2]'`): that element.
        if index.is_none()
            && let Some(t) = self.vars.resolve(&name)
            && let Some(i) = t.iter().position(|&c| c == b'[')
            && t.ends_with(b"]")
        {
            let base = t[..i].to_vec();
            let sub = &t[i + 1..t.len() - 1];
            index = Some(if matches!(sub, b"@" | b"*") {
                sub.to_vec()
            } else {
                self.runtime_subscript(&base, sub)?
            });
            name = base;
        }
        // `${A[$k]}` with k=@ is the key `@` of an associative array: only
        // a subscript written `@` or `*` means every element (bash).
        let keyed = !p.indirect
            && name == p.name
            && p.index.as_ref().is_some_and(|w| w.as_plain().is_none())
            && matches!(self.vars.value(&name), Some(Value::Assoc(_)));
        match index {
            Some(i) if matches!(i.as_slice(), b"@" | b"*") && !keyed => {
                let list = self
                    .value_of(&name)
                    .map(|v| v.elements())
                    .unwrap_or_default();
                Ok((name, Subject::Many(list, i == b"*")))
            }
            // `${#a[i]}` of an unset `a` is 0 without its index evaluated
            // (bash: `x='*'; echo ${#a[x]}` prints 0, no error).
            Some(_)
                if matches!(p.op, ParamOp::Length)
                    && !p.indirect
                    && !self.opts.nounset
                    && self.value_of(&name).is_none() =>
            {
                Ok((name, Subject::One(None)))
            }
            Some(i) => {
                let key = self.array_key(&name, &i)?;
                if key.before_start() {
                    // `${#a[-9]}` is an error that names the subscript as
                    // written and a `]` (bash); otherwise it is reported
                    // and expands as unset.
                    if let (ParamOp::Length, Some(w)) = (&p.op, &p.index) {
                        let mut shown = crate::unparse::word(w);
                        shown.push(b']');
                        let msg =
                            format!("{}: bad array subscript", String::from_utf8_lossy(&shown));
                        return Err(self.expansion_error(&msg));
                    }
                    let msg = format!("{}: bad array subscript", String::from_utf8_lossy(&name));
                    self.error(&msg);
                }
                let v = self.element(&name, &key);
                Ok((name, Subject::One(v)))
            }
            None => match name.as_slice() {
                b"@" => Ok((name, Subject::Many(self.positional.clone(), false))),
                b"*" => Ok((name, Subject::Many(self.positional.clone(), true))),
                _ => {
                    let v = self.param_value(&name);
                    Ok((name, Subject::One(v)))
                }
            },
        }
    }

    /// The text of a subscript (expanded, quotes removed).
    pub(crate) fn expand_index_text(&mut self, w: &Word) -> Result<Vec<u8>> {
        if let Some(p) = w.as_plain() {
            return Ok(p.to_vec());
        }
        self.expand_subscript_text(w)
    }

    /// Emits a list the way `$@` and `$*` are emitted.
    pub(super) fn emit_list(&mut self, list: &[Vec<u8>], star: bool, ctx: Ctx, f: &mut Fields) {
        match (ctx, star) {
            (Ctx::Quoted, true) => {
                let sep = match self.vars.get(b"IFS") {
                    Some(i) => i.first().copied(),
                    None => Some(b' '),
                };
                let mut joined = Vec::new();
                for (i, a) in list.iter().enumerate() {
                    if i > 0
                        && let Some(s) = sep
                    {
                        joined.push(s);
                    }
                    joined.extend_from_slice(a);
                }
                f.quoted(&joined);
            }
            (Ctx::Quoted, false) => {
                for (i, a) in list.iter().enumerate() {
                    if i > 0 {
                        f.finish_always();
                    }
                    f.quoted(a);
                }
            }
            (Ctx::Unquoted, _) => {
                // Where the list is not split into fields (assignments,
                // `${x=word}`), `$*` is joined with IFS's first character
                // and `$@` with a space; in the word of an unquoted
                // `${x-word}` both are joined so and then split (bash).
                let joined = !f.split || f.rhs && !f.ifs.is_empty();
                let sep: Option<u8> = if star && joined {
                    match self.vars.get(b"IFS") {
                        Some(i) => i.first().copied(),
                        None => Some(b' '),
                    }
                } else {
                    Some(b' ')
                };
                // Split, the elements are joined with IFS's first
                // character and then split (bash), which differs from
                // splitting each where an element starts or ends with a
                // separator: ("a'" b) with IFS="'" is a, "", b. With IFS
                // empty each stays a field.
                let ifs0 = f.ifs.first().copied();
                // IFS made null inside the word (`${IFS=}$*`): each element
                // is a field of its own, not split (bash).
                let null_now = !joined
                    && ifs0.is_some()
                    && self.vars.get(b"IFS").is_some_and(|v| v.is_empty());
                if null_now {
                    for (i, a) in list.iter().enumerate() {
                        if i > 0 {
                            f.finish();
                            f.last = Delim::White;
                        }
                        if !a.is_empty() {
                            f.quoted(a);
                        }
                    }
                    return;
                }
                for (i, a) in list.iter().enumerate() {
                    if i > 0 {
                        if !joined {
                            match ifs0 {
                                Some(c) => f.expansion(&[c]),
                                None => {
                                    f.finish();
                                    f.last = Delim::White;
                                }
                            }
                        } else if let Some(sep) = sep {
                            f.expansion(&[sep]);
                        }
                    }
                    f.expansion(a);
                }
            }
        }
    }

    pub(super) fn emit_subject(&mut self, s: &Subject, ctx: Ctx, f: &mut Fields) {
        match s {
            Subject::One(v) => {
                let v = v.clone().unwrap_or_default();
                self.push_value(&v, ctx, f);
            }
            Subject::Many(list, star) => self.emit_list(list, *star, ctx, f),
        }
    }

    pub(super) fn expand_param(&mut self, p: &Param, ctx: Ctx, f: &mut Fields) -> Result<()> {
        if let ParamOp::Names { star } = p.op {
            let names: Vec<Vec<u8>> = self
                .visible_vars()
                .into_iter()
                .filter(|(k, v)| k.starts_with(&p.name) && v.value.is_some())
                .map(|(k, _)| k)
                .collect();
            f.saw_at |= ctx == Ctx::Quoted && !star;
            self.emit_list(&names, star, ctx, f);
            return Ok(());
        }
        let (name, subject) = self.subject(p)?;
        if ctx == Ctx::Quoted && matches!(subject, Subject::Many(_, false)) {
            f.saw_at = true;
        }
        let (set, null) = match &subject {
            Subject::One(v) => (v.is_some(), v.as_ref().is_none_or(Vec::is_empty)),
            // A list is null when it joins to nothing: `$*` with IFS
            // empty joins ("" "") to "", `$@` with spaces to " ".
            Subject::Many(list, star) => (
                !list.is_empty(),
                list.is_empty()
                    || list.iter().all(Vec::is_empty)
                        && (list.len() <= 1
                            || *star && self.vars.get(b"IFS").is_some_and(<[u8]>::is_empty)),
            ),
        };
        let check_unset = |sh: &mut Shell, subject: &Subject| -> Result<()> {
            if let Subject::One(None) = subject
                && sh.opts.nounset
            {
                let shown = if p.indirect {
                    shown_param(p)
                } else {
                    let mut shown = name.clone();
                    if let Some(w) = &p.index {
                        shown.push(b'[');
                        shown.extend_from_slice(&w.unquoted_text());
                        shown.push(b']');
                    }
                    shown
                };
                let msg = format!("{}: unbound variable", String::from_utf8_lossy(&shown));
                return Err(sh.fatal(&msg));
            }
            Ok(())
        };
        // Applies a string function to the value, or to each element.
        let map = |subject: &Subject, fun: &dyn Fn(&[u8]) -> Vec<u8>| -> Subject {
            match subject {
                Subject::One(v) => Subject::One(Some(fun(v.as_deref().unwrap_or_default()))),
                Subject::Many(list, star) => {
                    Subject::Many(list.iter().map(|x| fun(x)).collect(), *star)
                }
            }
        };
        match &p.op {
            ParamOp::Plain => {
                check_unset(self, &subject)?;
                self.emit_subject(&subject, ctx, f);
            }
            // `${#a[i]}` with `set -u`: an error (naming only the
            // variable) when it is not a set array; a missing element of
            // one is 0 (bash).
            ParamOp::Length if p.index.is_some() && !p.indirect && self.opts.nounset => {
                let array = self.vars.var(&name).is_some_and(|v| {
                    !v.declared_only && v.value.as_ref().is_some_and(Value::is_array)
                });
                if !array {
                    let msg = format!("{}: unbound variable", String::from_utf8_lossy(&name));
                    return Err(self.fatal(&msg));
                }
                let n = match &subject {
                    Subject::Many(list, _) => list.len(),
                    Subject::One(v) => char_len(v.as_deref().unwrap_or_default()),
                };
                self.push_value(n.to_string().as_bytes(), ctx, f);
            }
            ParamOp::Length => {
                let n = match &subject {
                    Subject::Many(list, _) => list.len(),
                    Subject::One(v) => {
                        check_unset(self, &subject)?;
                        char_len(v.as_deref().unwrap_or_default())
                    }
                };
                self.push_value(n.to_string().as_bytes(), ctx, f);
            }
            ParamOp::Default { colon, word } | ParamOp::Alternative { colon, word } => {
                let is_default = matches!(p.op, ParamOp::Default { .. });
                let use_word = if is_default {
                    !set || (*colon && null)
                } else {
                    set && !(*colon && null)
                };
                if use_word {
                    let rhs = std::mem::replace(&mut f.rhs, ctx == Ctx::Unquoted);
                    let r = self.expand_sub_word(word, ctx, f);
                    f.rhs = rhs;
                    r?;
                    if ctx == Ctx::Quoted && is_default {
                        // `"${@:-}"`: the word stands in for the list, and
                        // makes a field even when empty.
                        f.quoted(b"");
                    }
                } else if is_default {
                    self.emit_subject(&subject, ctx, f);
                }
            }
            ParamOp::Assign { colon, word } => {
                if !set || (*colon && null) {
                    if !crate::parse::is_name(&name) {
                        let msg = format!(
                            "${}: cannot assign in this way",
                            String::from_utf8_lossy(&name)
                        );
                        return Err(self.expansion_error(&msg));
                    }
                    // The word as `${x:-word}` reads it (a leading tilde
                    // expands), made one string.
                    let mut sf = Fields::string();
                    self.expand_sub_word(word, ctx, &mut sf)?;
                    let mut v = sf.concat();
                    // The value as stored, after the variable's attributes
                    // (`declare -i`, `-u`, `-l`) are applied, is what
                    // expands (bash).
                    if self.vars.is_integer(&name) {
                        v = self.arith(&v)?.to_string().into_bytes();
                    }
                    let r = match &p.index {
                        Some(w) => {
                            let i = self.expand_index_text(w)?;
                            let key = self.array_key(&name, &i)?;
                            if key.before_start() {
                                let msg = format!(
                                    "{}[{}]: bad array subscript",
                                    String::from_utf8_lossy(&name),
                                    String::from_utf8_lossy(&i)
                                );
                                return Err(self.expansion_error(&msg));
                            }
                            self.vars
                                .set_elem(&name, key.clone(), v.clone())
                                .map(|()| self.element(&name, &key))
                        }
                        None => self
                            .vars
                            .set(&name, v.clone())
                            .map(|()| self.vars.get(&name).map(<[u8]>::to_vec)),
                    };
                    match r {
                        Err(e) => return Err(self.expansion_error(&e.to_string())),
                        Ok(stored) => v = stored.unwrap_or(v),
                    }
                    self.push_value(&v, ctx, f);
                } else {
                    self.emit_subject(&subject, ctx, f);
                }
            }
            ParamOp::Error { colon, word } => {
                if !set || (*colon && null) {
                    let msg = self.expand_string_in(word, ctx)?;
                    let msg = if !msg.is_empty() {
                        String::from_utf8_lossy(&msg).into_owned()
                    } else if *colon {
                        "parameter null or not set".to_string()
                    } else {
                        "parameter not set".to_string()
                    };
                    let full = format!("{}: {msg}", String::from_utf8_lossy(&name));
                    return Err(self.fatal(&full));
                }
                self.emit_subject(&subject, ctx, f);
            }
            ParamOp::TrimPrefix { longest, pattern } | ParamOp::TrimSuffix { longest, pattern } => {
                check_unset(self, &subject)?;
                let pat = self.expand_pattern(pattern)?;
                let prefix = matches!(p.op, ParamOp::TrimPrefix { .. });
                let out = map(&subject, &|v| trim(v, &pat, prefix, *longest).to_vec());
                self.emit_subject(&out, ctx, f);
            }
            ParamOp::Replace {
                all,
                anchor,
                pattern,
                with,
                ..
            } => {
                check_unset(self, &subject)?;
                let pat = self.expand_match_pattern(pattern)?;
                let rep = self.replacement(with)?;
                let out = map(&subject, &|v| replace(v, &pat, &rep, *all, *anchor));
                self.emit_subject(&out, ctx, f);
            }
            ParamOp::Slice { offset, length } => {
                check_unset(self, &subject)?;
                let off_text = self.expand_arith_text(offset)?;
                // bash names the parameter in an error in either number.
                let outer = self.arith_name.replace(name.clone());
                let off = self.arith(&off_text);
                let len = match (&off, length) {
                    (Ok(_), Some(l)) => match self.expand_arith_text(l) {
                        Ok(t) => Some(self.arith(&t)),
                        Err(e) => Some(Err(e)),
                    },
                    _ => None,
                };
                self.arith_name = outer;
                let off = off?;
                let len = len.transpose()?;
                match &subject {
                    Subject::One(v) => {
                        let r = slice_chars(v.as_deref().unwrap_or_default(), off, len);
                        self.push_value(&r, ctx, f);
                    }
                    // `${s[@]:off:len}` of a string: its characters, as
                    // `${s:off:len}` (bash).
                    Subject::Many(list, _)
                        if p.index.is_some()
                            && matches!(self.vars.value(&name), Some(Value::Str(_))) =>
                    {
                        let v = list.first().map(Vec::as_slice).unwrap_or_default();
                        let r = slice_chars(v, off, len);
                        self.push_value(&r, ctx, f);
                    }
                    // `${a[@]:off:len}` of an indexed array: the offset is an
                    // index, not a position (sparse arrays: bash).
                    Subject::Many(_, star)
                        if p.index.is_some()
                            && matches!(self.vars.value(&name), Some(Value::Indexed(_))) =>
                    {
                        if len.is_some_and(|l| l < 0) {
                            let msg = format!(
                                "{}: substring expression < 0",
                                String::from_utf8_lossy(&length_text(length))
                            );
                            return Err(self.expansion_error(&msg));
                        }
                        let Some(Value::Indexed(m)) = self.vars.value(&name) else {
                            unreachable!("matched above")
                        };
                        let end = m.keys().next_back().map_or(0, |k| k + 1);
                        let start = if off < 0 { end + off } else { off };
                        let sliced: Vec<Vec<u8>> = if start < 0 {
                            Vec::new()
                        } else {
                            let take = match len {
                                Some(l) if l >= 0 => l as usize,
                                _ => usize::MAX,
                            };
                            m.range(start..)
                                .map(|(_, v)| v.clone())
                                .take(take)
                                .collect()
                        };
                        self.emit_list(&sliced, *star, ctx, f);
                    }
                    Subject::Many(list, star) => {
                        // For $@ and $*, offset 0 is $0.
                        let items = if p.index.is_none() {
                            let mut items = vec![self.arg0.clone()];
                            items.extend(list.iter().cloned());
                            items
                        } else {
                            list.clone()
                        };
                        let sliced = slice_items(&items, off, len);
                        self.emit_list(&sliced, *star, ctx, f);
                    }
                }
            }
            ParamOp::Names { .. } => unreachable!("handled above"),
            // `${x@P}`: the value expanded as a prompt string.
            ParamOp::Transform(b'P') => {
                check_unset(self, &subject)?;
                let out = match subject {
                    Subject::One(v) => Subject::One(Some(self.prompt_text(v.unwrap_or_default()))),
                    Subject::Many(list, star) => Subject::Many(
                        list.into_iter().map(|x| self.prompt_text(x)).collect(),
                        star,
                    ),
                };
                self.emit_subject(&out, ctx, f);
            }
            // `${a[@]@K}`: keys and values, as `declare -p` writes them, in
            // one word; `@k`: each key and value a word of its own.
            ParamOp::Transform(op @ (b'K' | b'k'))
                if matches!(subject, Subject::Many(..))
                    && self.vars.value(&name).is_some_and(Value::is_array) =>
            {
                let v = self
                    .vars
                    .value(&name)
                    .cloned()
                    .unwrap_or(Value::Str(Vec::new()));
                let assoc = matches!(v, Value::Assoc(_));
                let pairs: Vec<(Vec<u8>, Vec<u8>)> =
                    v.keys().into_iter().zip(v.elements()).collect();
                let out = if *op == b'k' {
                    let star = matches!(subject, Subject::Many(_, true));
                    Subject::Many(pairs.into_iter().flat_map(|(k, v)| [k, v]).collect(), star)
                } else {
                    let mut text = Vec::new();
                    for (i, (k, v)) in pairs.iter().enumerate() {
                        if i > 0 {
                            text.push(b' ');
                        }
                        if assoc && crate::quote::key_needs_quotes(k) {
                            text.extend_from_slice(&crate::quote::double_quote(k));
                        } else {
                            text.extend_from_slice(k);
                        }
                        text.push(b' ');
                        text.extend_from_slice(&crate::quote::double_quote(v));
                    }
                    if assoc && !pairs.is_empty() {
                        text.push(b' ');
                    }
                    Subject::One(Some(text))
                };
                self.emit_subject(&out, ctx, f);
            }
            // `${x@A}`: an assignment that recreates x: `set -- …` for the
            // positional parameters, `declare -a a=(…)` for a whole array,
            // `declare -FLAGS x` for an unset x with attributes (bash).
            ParamOp::Transform(b'A')
                if matches!(name.as_slice(), b"@" | b"*")
                    || matches!(subject, Subject::One(None))
                    || matches!(subject, Subject::Many(..))
                        && self.vars.value(&name).is_some_and(Value::is_array) =>
            {
                let out = if matches!(name.as_slice(), b"@" | b"*") {
                    let args = &self.positional;
                    (!args.is_empty()).then(|| {
                        let mut o = b"set --".to_vec();
                        for a in args {
                            o.push(b' ');
                            o.extend_from_slice(&crate::quote::quote_always(a));
                        }
                        o
                    })
                } else {
                    match self.vars.var(&name) {
                        Some(v) if matches!(subject, Subject::Many(..)) => {
                            let mut line = crate::quote::declare_line(&name, v);
                            line.pop();
                            Some(line)
                        }
                        Some(v) => {
                            let flags = crate::quote::attr_flags(v);
                            (!flags.is_empty()).then(|| {
                                let mut o = format!("declare -{flags} ").into_bytes();
                                o.extend_from_slice(
                                    &self.vars.resolve(&name).unwrap_or_else(|| name.clone()),
                                );
                                o
                            })
                        }
                        None => None,
                    }
                };
                self.emit_subject(&Subject::One(out), ctx, f);
            }
            // `${x@Q}` (and `@K`, `@k` of a string) of an unset x is
            // nothing, not `''`.
            ParamOp::Transform(b'Q' | b'K' | b'k') if matches!(subject, Subject::One(None)) => {
                check_unset(self, &subject)?;
                self.emit_subject(&subject, ctx, f);
            }
            ParamOp::Transform(op) => {
                check_unset(self, &subject)?;
                let attrs = self
                    .vars
                    .var(&name)
                    .map(crate::quote::attr_flags)
                    .unwrap_or_default();
                let op = *op;
                let shown = self.vars.resolve(&name).unwrap_or_else(|| name.clone());
                let out = map(&subject, &|v| match op {
                    b'Q' | b'K' | b'k' => crate::quote::quote_always(v),
                    b'E' => {
                        let mut o = Vec::new();
                        crate::escape::unescape(v, &mut o, crate::escape::Dialect::AnsiC);
                        o
                    }
                    b'U' => change_case(v, true, true),
                    b'L' => change_case(v, false, true),
                    b'u' => change_case(v, true, false),
                    b'A' => {
                        let mut o = if attrs.is_empty() {
                            Vec::new()
                        } else {
                            format!("declare -{attrs} ").into_bytes()
                        };
                        o.extend_from_slice(&shown);
                        o.push(b'=');
                        o.extend_from_slice(&crate::quote::quote_always(v));
                        o
                    }
                    _ => attrs.clone().into_bytes(),
                });
                self.emit_subject(&out, ctx, f);
            }
            ParamOp::Case {
                upper,
                all,
                pattern,
            } => {
                check_unset(self, &subject)?;
                let out = if pattern.parts.is_empty() {
                    map(&subject, &|v| change_case(v, *upper, *all))
                } else {
                    // Only the characters the pattern matches change.
                    let pat = self.expand_pattern(pattern)?;
                    map(&subject, &|v| change_matching_case(v, *upper, *all, &pat))
                };
                self.emit_subject(&out, ctx, f);
            }
        }
        Ok(())
    }

    /// The word of `${x:-word}`: unquoted text in it is split like an
    /// expansion result when the whole is unquoted.
    pub(super) fn expand_sub_word(&mut self, w: &Word, ctx: Ctx, f: &mut Fields) -> Result<()> {
        let tilded;
        let w = if f.assignment && ctx == Ctx::Unquoted {
            tilded = Word {
                parts: self.assignment_tildes(&w.parts),
            };
            &tilded
        } else {
            w
        };
        for (i, part) in w.parts.iter().enumerate() {
            match part {
                // `${x:-~/dir}`: a tilde at the start of the word expands.
                Part::Lit(b) if i == 0 && ctx == Ctx::Unquoted && b.first() == Some(&b'~') => {
                    let end = b.iter().position(|&c| c == b'/').unwrap_or(b.len());
                    match (end < b.len() || w.parts.len() == 1, self.tilde(&b[..end])) {
                        (true, Some(home)) => {
                            f.quoted(&home);
                            f.expansion(&b[end..]);
                        }
                        _ => f.expansion(b),
                    }
                }
                Part::Lit(b) => match ctx {
                    Ctx::Quoted => f.quoted(b),
                    Ctx::Unquoted => {
                        // Literal text keeps its glob characters active and
                        // is split at IFS characters.
                        f.expansion(b);
                    }
                },
                other => self.expand_parts(std::slice::from_ref(other), ctx, f, false)?,
            }
        }
        Ok(())
    }

    pub(super) fn expand_string_in(&mut self, w: &Word, ctx: Ctx) -> Result<Vec<u8>> {
        let mut f = Fields::string();
        self.expand_parts(&w.parts, ctx, &mut f, false)?;
        Ok(f.concat())
    }

    /// The replacement word of `${x/p/r}`. With `patsub_replacement` (on by
    /// default, as in bash 5.2), an `&` that is not quoted inside the
    /// braces, its own or from an expansion there, stands for the match;
    /// `\&`, `"&"` and `'&'` are literal.
    pub(super) fn replacement(&mut self, with: &Word) -> Result<Rep> {
        // A leading tilde prefix expands, as in bash (`${x//~/~root}`).
        let tilded;
        let with = match with.parts.first() {
            Some(Part::Lit(b)) if b.first() == Some(&b'~') => {
                let end = b.iter().position(|&c| c == b'/').unwrap_or(b.len());
                match (
                    end < b.len() || with.parts.len() == 1,
                    self.tilde(&b[..end]),
                ) {
                    (true, Some(home)) => {
                        let mut parts = vec![Part::Quoted(home)];
                        if end < b.len() {
                            parts.push(Part::Lit(b[end..].to_vec()));
                        }
                        parts.extend(with.parts[1..].iter().cloned());
                        tilded = Word { parts };
                        &tilded
                    }
                    _ => with,
                }
            }
            _ => with,
        };
        if !self.shopts.on("patsub_replacement") {
            return Ok(Rep {
                text: self.expand_string_in(with, Ctx::Quoted)?,
                amps: Vec::new(),
            });
        }
        let mut rep = Rep::default();
        for part in &with.parts {
            let active = matches!(
                part,
                Part::Lit(_)
                    | Part::Quoted(_)
                    | Part::Param(_)
                    | Part::CommandSub(..)
                    | Part::Arith(_)
            );
            let text = match part {
                Part::Lit(b) | Part::Quoted(b) => b.clone(),
                p => self.expand_string_in(
                    &Word {
                        parts: vec![p.clone()],
                    },
                    Ctx::Quoted,
                )?,
            };
            if active {
                let base = rep.text.len();
                rep.amps.extend(
                    text.iter()
                        .enumerate()
                        .filter(|(_, c)| **c == b'&')
                        .map(|(i, _)| base + i),
                );
            }
            rep.text.extend_from_slice(&text);
        }
        Ok(rep)
    }
}

/// The number of characters (UTF-8 when valid, bytes otherwise).
pub(super) fn char_len(v: &[u8]) -> usize {
    match std::str::from_utf8(v) {
        Ok(s) => s.chars().count(),
        Err(_) => v.len(),
    }
}

/// Byte offsets of character starts, plus the end.
pub(super) fn char_bounds(v: &[u8]) -> Vec<usize> {
    match std::str::from_utf8(v) {
        Ok(s) => s
            .char_indices()
            .map(|(i, _)| i)
            .chain(std::iter::once(v.len()))
            .collect(),
        Err(_) => (0..=v.len()).collect(),
    }
}

pub(super) fn trim<'v>(v: &'v [u8], pat: &Pattern, prefix: bool, longest: bool) -> &'v [u8] {
    // A literal pattern needs no search (and shortest = longest).
    if let Some(lit) = pat.literal() {
        return if prefix {
            v.strip_prefix(lit.as_slice()).unwrap_or(v)
        } else {
            v.strip_suffix(lit.as_slice()).unwrap_or(v)
        };
    }
    let bounds = char_bounds(v);
    if prefix {
        let order: Box<dyn Iterator<Item = &usize>> = if longest {
            Box::new(bounds.iter().rev())
        } else {
            Box::new(bounds.iter())
        };
        for &i in order {
            if pat.matches(&v[..i]) {
                return &v[i..];
            }
        }
    } else {
        let order: Box<dyn Iterator<Item = &usize>> = if longest {
            Box::new(bounds.iter())
        } else {
            Box::new(bounds.iter().rev())
        };
        for &i in order {
            if pat.matches(&v[i..]) {
                return &v[..i];
            }
        }
    }
    v
}

/// The replacement of `${x/p/r}`: text, and where in it the matched text
/// goes (`&`, with `shopt -s patsub_replacement`, bash 5.2's default).
#[derive(Debug, Default)]
pub(super) struct Rep {
    text: Vec<u8>,
    /// Offsets in `text` of the `&`s that stand for the match.
    amps: Vec<usize>,
}

impl Rep {
    fn put(&self, out: &mut Vec<u8>, matched: &[u8]) {
        let mut from = 0;
        for &a in &self.amps {
            out.extend_from_slice(&self.text[from..a]);
            out.extend_from_slice(matched);
            from = a + 1;
        }
        out.extend_from_slice(&self.text[from..]);
    }
}

pub(super) fn replace(v: &[u8], pat: &Pattern, rep: &Rep, all: bool, anchor: Anchor) -> Vec<u8> {
    let bounds = char_bounds(v);
    match anchor {
        Anchor::Start => {
            for &e in bounds.iter().rev() {
                if pat.matches(&v[..e]) {
                    let mut out = Vec::new();
                    rep.put(&mut out, &v[..e]);
                    out.extend_from_slice(&v[e..]);
                    return out;
                }
            }
            v.to_vec()
        }
        Anchor::End => {
            for &s in &bounds {
                if pat.matches(&v[s..]) {
                    let mut out = v[..s].to_vec();
                    rep.put(&mut out, &v[s..]);
                    return out;
                }
            }
            v.to_vec()
        }
        Anchor::None => {
            let mut out = Vec::new();
            let mut bi = 0;
            let mut replaced = false;
            while bi + 1 < bounds.len() || (bi < bounds.len() && bounds[bi] < v.len()) {
                let s = bounds[bi];
                if replaced && !all {
                    out.extend_from_slice(&v[s..]);
                    return out;
                }
                // Longest match starting at s.
                let mut hit = None;
                for &e in bounds[bi..].iter().rev() {
                    if e > s && pat.matches(&v[s..e]) {
                        hit = Some(e);
                        break;
                    }
                }
                match hit {
                    Some(e) => {
                        rep.put(&mut out, &v[s..e]);
                        replaced = true;
                        bi = bounds.iter().position(|&b| b == e).unwrap_or(bounds.len());
                    }
                    None => {
                        let next = bounds.get(bi + 1).copied().unwrap_or(v.len());
                        out.extend_from_slice(&v[s..next]);
                        bi += 1;
                    }
                }
                if bi >= bounds.len() || bounds[bi] >= v.len() {
                    break;
                }
            }
            out
        }
    }
}

pub(super) fn slice_chars(v: &[u8], off: i64, len: Option<i64>) -> Vec<u8> {
    let bounds = char_bounds(v);
    let n = bounds.len() as i64 - 1;
    let start = if off < 0 {
        (n + off).max(0)
    } else {
        off.min(n)
    };
    if off < 0 && n + off < 0 {
        return Vec::new();
    }
    let end = match len {
        None => n,
        Some(l) if l < 0 => (n + l).max(start),
        Some(l) => (start + l).min(n),
    };
    if end <= start {
        return Vec::new();
    }
    v[bounds[start as usize]..bounds[end as usize]].to_vec()
}

pub(super) fn slice_items(items: &[Vec<u8>], off: i64, len: Option<i64>) -> Vec<Vec<u8>> {
    let n = items.len() as i64;
    let start = if off < 0 { n + off } else { off };
    if start < 0 || start >= n {
        return Vec::new();
    }
    let end = match len {
        None => n,
        Some(l) if l < 0 => n + l,
        Some(l) => (start + l).min(n),
    };
    if end <= start {
        return Vec::new();
    }
    items[start as usize..end as usize].to_vec()
}

/// `${x^^}`, `${x,}`, `${x@U}` …: the first character (or all) in upper or
/// lower case; Unicode for UTF-8 text (bash in a UTF-8 locale), ASCII
/// otherwise. A character whose other case is longer (ß) stays.
pub(super) fn change_case(v: &[u8], upper: bool, all: bool) -> Vec<u8> {
    let Ok(t) = std::str::from_utf8(v) else {
        let mut v = v.to_vec();
        let n = if all { v.len() } else { v.len().min(1) };
        for c in &mut v[..n] {
            *c = if upper {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            };
        }
        return v;
    };
    let mut out = String::with_capacity(t.len());
    for (i, c) in t.chars().enumerate() {
        if i > 0 && !all {
            out.push_str(&t[t.char_indices().nth(1).map_or(t.len(), |(k, _)| k)..]);
            break;
        }
        let mut other: Vec<char> = if upper {
            c.to_uppercase().collect()
        } else {
            c.to_lowercase().collect()
        };
        if other.len() != 1 {
            other = vec![c];
        }
        out.extend(other);
    }
    out.into_bytes()
}

/// The text of a slice's length, for messages.
pub(super) fn length_text(length: &Option<Word>) -> Vec<u8> {
    length
        .as_ref()
        .map(|w| crate::unparse::word(w).trim_ascii().to_vec())
        .unwrap_or_default()
}

/// `${x,,pattern}`: the case change for the characters (the first only,
/// without `all`) that `pat` matches on their own.
pub(super) fn change_matching_case(v: &[u8], upper: bool, all: bool, pat: &Pattern) -> Vec<u8> {
    let Ok(t) = std::str::from_utf8(v) else {
        return v.to_vec();
    };
    let mut out = String::with_capacity(t.len());
    for (i, c) in t.chars().enumerate() {
        let mut buf = [0u8; 4];
        let one = c.encode_utf8(&mut buf);
        if (all || i == 0) && pat.matches(one.as_bytes()) {
            out.push_str(&String::from_utf8_lossy(&change_case(
                one.as_bytes(),
                upper,
                true,
            )));
        } else {
            out.push(c);
        }
    }
    out.into_bytes()
}

/// `${!name[sub]}` as written, for bash's messages: `!name[sub]`.
pub(super) fn shown_param(p: &Param) -> Vec<u8> {
    let mut shown = vec![b'!'];
    shown.extend_from_slice(&p.name);
    if let Some(w) = &p.index {
        shown.push(b'[');
        shown.extend_from_slice(&w.unquoted_text());
        shown.push(b']');
    }
    shown
}

/// A subscript's expanded text with a backslash before each character that
/// would start another expansion or end the subscript (bash's `abstab`),
/// so that expanding it again gives it back.
pub(super) fn quote_subscript(text: &[u8], out: &mut Vec<u8>) {
    for &c in text {
        if matches!(c, b'[' | b']' | b'$' | b'`' | b'~' | b'\\' | b'\'' | b'"') {
            out.push(b'\\');
        }
        out.push(c);
    }
}
