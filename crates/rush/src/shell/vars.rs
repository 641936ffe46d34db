//! Variables as the shell sees them: bash's dynamic variables, assignments
//! (with their prefix and temporary forms), arrays, and `is_set`.

use super::HASH_BUCKETS;
use super::{Flow, Shell};
use crate::ast::{Assign, Element, Part, Word};
use crate::vars::Value;
use std::ffi::CString;
use std::rc::Rc;

impl Shell {
    /// Whether `name` is (still) one of the shell's dynamic variables.
    pub fn is_dynamic(&self, name: &[u8]) -> bool {
        self.vars.var(name).is_some_and(|v| v.dynamic)
    }

    /// The value of a dynamic variable as read now: a string, or an array
    /// for the array ones. `None` for any other variable.
    pub fn dynamic_value(&self, name: &[u8]) -> Option<Value> {
        let var = self.vars.var(name)?;
        if !var.dynamic {
            return None;
        }
        let real = self.vars.resolve(name);
        let name = real.as_deref().unwrap_or(name);
        let v = self
            .special_array(name)
            .or_else(|| self.dynamic_scalar(name).map(Value::Str));
        if let Some(v) = &v
            && LISTED_AS_LAST_READ.contains(&name)
        {
            let mut seen = self.last_read.borrow_mut();
            match seen.get_mut(name) {
                Some(old) => old.clone_from(v),
                None => {
                    seen.insert(name.to_vec(), v.clone());
                }
            }
        }
        v
    }

    /// A variable's value as read now: a dynamic variable's computed, any
    /// other's stored.
    pub fn value_of(&self, name: &[u8]) -> Option<std::borrow::Cow<'_, Value>> {
        let var = self.vars.var(name)?;
        if var.dynamic {
            return self.dynamic_value(name).map(std::borrow::Cow::Owned);
        }
        var.value.as_ref().map(std::borrow::Cow::Borrowed)
    }

    /// Every visible variable, sorted by name, the dynamic ones with their
    /// values as read now (`set`, `declare -p`, `${!prefix@}`).
    pub fn visible_vars(&self) -> Vec<(Vec<u8>, crate::vars::Var)> {
        let mut all = self.vars.visible();
        for (k, v) in &mut all {
            if v.dynamic {
                v.value = self.dynamic_value(k);
            }
        }
        all
    }

    /// The visible variable `name` itself (not what a nameref names), a
    /// dynamic one with its value as read now (`declare -p name`).
    pub fn visible_var(&self, name: &[u8]) -> Option<crate::vars::Var> {
        let mut v = self.vars.var_itself(name)?.clone();
        if v.dynamic {
            v.value = self.dynamic_value(name);
            v.declared_only |= outside_function_funcname(name, &v);
        }
        Some(v)
    }

    /// Every visible variable as a listing shows it (`set`, `declare -p`
    /// with no names): the dynamic ones that bash computes only when read
    /// with their last value read ([`LISTED_AS_LAST_READ`]), and
    /// `FUNCNAME` outside a function declared, with no value.
    pub fn listed_vars(&self) -> Vec<(Vec<u8>, crate::vars::Var)> {
        let mut all = self.vars.visible();
        let seen = self.last_read.borrow();
        for (k, v) in &mut all {
            if !v.dynamic {
                continue;
            }
            if LISTED_AS_LAST_READ.contains(&k.as_slice()) {
                v.value = match (seen.get(k.as_slice()), v.value.take()) {
                    (Some(last), _) => Some(last.clone()),
                    (None, Some(Value::Indexed(_))) => Some(Value::Indexed(Default::default())),
                    (None, Some(Value::Assoc(_))) => Some(Value::Assoc(Default::default())),
                    (None, _) => None,
                };
                // bash's SECONDS is an integer only once read.
                if k == b"SECONDS" && v.value.is_none() {
                    v.integer = false;
                }
                continue;
            }
            v.value = self.dynamic_value(k);
            v.declared_only |= outside_function_funcname(k, v);
        }
        all
    }

    /// What an assignment to a dynamic variable does besides storing:
    /// `RANDOM=n` seeds the generator, `SECONDS=n` counts from n.
    /// HOSTNAME and SHELL are computed when read only until something is
    /// done to them: then they are plain variables with that value (bash
    /// sets them at start-up, which costs a password-file lookup here).
    pub fn materialize(&mut self, name: &[u8]) {
        if matches!(name, b"HOSTNAME" | b"SHELL") && self.is_dynamic(name) {
            let v = self.dynamic_scalar(name);
            self.vars.set_dynamic(name, false);
            if let Some(v) = v {
                let _ = self.vars.set(name, v);
            }
        }
    }

    pub fn assigned_dynamic(&mut self, name: &[u8], value: &[u8]) {
        if matches!(name, b"HOSTNAME" | b"SHELL") {
            self.materialize(name);
            return;
        }
        // Assigning POSIXLY_CORRECT, even empty, is `set -o posix` (bash).
        if name == b"POSIXLY_CORRECT" {
            self.opts.posix = true;
            return;
        }
        // Assigning IGNOREEOF, any value, turns ignoreeof on (bash).
        if name == b"IGNOREEOF" {
            self.opts.ignoreeof = true;
            return;
        }
        // Assigning GLOBIGNORE patterns turns dotglob on (bash).
        if name == b"GLOBIGNORE" {
            if !value.is_empty() {
                self.set_shopt("dotglob", true);
            }
            return;
        }
        // Every assignment passes here: the names come first, the lookup
        // only for them.
        if !matches!(name, b"RANDOM" | b"SECONDS" | b"BASH_ARGV0") || !self.is_dynamic(name) {
            return;
        }
        if name == b"BASH_ARGV0" {
            self.arg0 = value.to_vec();
            return;
        }
        let n = std::str::from_utf8(value)
            .ok()
            .and_then(|s| s.trim().parse::<i64>().ok())
            .unwrap_or(0);
        match name {
            b"RANDOM" => {
                self.random_state.set(n as u32);
                self.random_last.set(0);
            }
            b"SECONDS" => {
                let now = std::time::Instant::now();
                self.started = u64::try_from(n)
                    .ok()
                    .and_then(|s| now.checked_sub(std::time::Duration::from_secs(s)))
                    .unwrap_or(now);
            }
            _ => {}
        }
    }

    /// `PIPESTATUS`: the statuses of the last pipeline's commands (kept
    /// as numbers, and made an array only when read).
    pub fn set_pipestatus(&mut self, statuses: &[i32]) {
        self.pipestatus.clear();
        self.pipestatus.extend_from_slice(statuses);
    }

    /// `-v NAME` (`test`, `[[ ]]`): whether the variable, array element
    /// (`a[i]`, `m[key]`), positional or special parameter is set.
    pub fn is_set(&mut self, name: &[u8]) -> bool {
        self.is_set_as(name, true)
    }

    /// [`Shell::is_set`]; `as_written`: with `assoc_expand_once` a key is
    /// taken as written (`test -v`; `[[ -v ]]` expanded it once already).
    pub fn is_set_as(&mut self, name: &[u8], as_written: bool) -> bool {
        if let Some(open) = name.iter().position(|&c| c == b'[')
            && name.ends_with(b"]")
        {
            let (base, sub) = (&name[..open], &name[open + 1..name.len() - 1]);
            // Of an associative array, `@` and `*` are keys like any other
            // (bash 5.2).
            if let (b"@" | b"*", Some(Value::Assoc(m))) = (sub, self.vars.value(base)) {
                return m.contains_key(sub);
            }
            if matches!(sub, b"@" | b"*") {
                return self
                    .vars
                    .value(base)
                    .is_some_and(|v| !v.elements().is_empty());
            }
            // With `assoc_expand_once` a key is as written.
            let literal = as_written
                && self.keys_as_written()
                && matches!(self.vars.value(base), Some(Value::Assoc(_)));
            let key = if literal {
                Ok(crate::vars::Key::Name(sub.to_vec()))
            } else {
                self.runtime_subscript(base, sub)
                    .and_then(|sub| self.array_key(base, &sub))
            };
            return match key {
                Ok(key) => self.element(base, &key).is_some(),
                Err(_) => false,
            };
        }
        if name.first().is_some_and(u8::is_ascii_digit) {
            return match std::str::from_utf8(name)
                .ok()
                .and_then(|n| n.parse::<usize>().ok())
            {
                Some(0) => true,
                Some(i) => i <= self.positional.len(),
                None => false,
            };
        }
        if matches!(name, b"@" | b"*") {
            return !self.positional.is_empty();
        }
        self.param_value(name).is_some()
    }

    /// The dynamic arrays, computed (`PIPESTATUS`, `FUNCNAME`,
    /// `BASH_SOURCE`, `BASH_LINENO`, `DIRSTACK`, `GROUPS`, `BASH_ALIASES`,
    /// `BASH_CMDS`): only for a name that [`Shell::is_dynamic`].
    pub(super) fn special_array(&self, name: &[u8]) -> Option<Value> {
        let items: Vec<Vec<u8>> = match name {
            b"PIPESTATUS" => self
                .pipestatus
                .iter()
                .map(|s| s.to_string().into_bytes())
                .collect(),
            // Set only while a function runs; innermost first.
            b"FUNCNAME"
                if self
                    .frames
                    .iter()
                    .any(|f| f.name != b"main" && f.name != b"source") =>
            {
                self.frames.iter().rev().map(|f| f.name.clone()).collect()
            }
            b"FUNCNAME" => Vec::new(),
            b"BASH_SOURCE" => self.frames.iter().rev().map(|f| f.file.to_vec()).collect(),
            b"DIRSTACK" => self.directory_stack(),
            // Under extdebug: every frame's arguments, innermost frame
            // first and each frame's last argument first; and how many
            // each frame has.
            b"BASH_ARGV" => self
                .frame_args()
                .flat_map(|a| a.iter().rev().cloned())
                .collect(),
            b"BASH_ARGC" => self
                .frame_args()
                .map(|a| a.len().to_string().into_bytes())
                .collect(),
            b"BASH_LINENO" => self
                .frames
                .iter()
                .rev()
                .map(|f| f.call_line.to_string().into_bytes())
                .collect(),
            b"GROUPS" => nix::unistd::getgroups()
                .unwrap_or_default()
                .into_iter()
                .map(|g| g.as_raw().to_string().into_bytes())
                .collect(),
            b"BASH_ALIASES" => {
                // bash's alias table has 64 buckets (rush does not keep
                // the order aliases were defined in: by name within one).
                let mut all: Vec<_> = self.aliases.iter().collect();
                all.sort();
                let mut a = crate::assoc::Assoc::with_buckets(64);
                for (k, v) in all {
                    a.insert(k.to_vec(), v.to_vec());
                }
                return Some(Value::Assoc(a));
            }
            b"BASH_CMDS" => {
                // The hash table's own order.
                let mut all: Vec<_> = self.hash.iter().collect();
                all.sort_by_key(|(_, h)| h.seq);
                let mut a = crate::assoc::Assoc::with_buckets(HASH_BUCKETS);
                for (k, h) in all {
                    a.insert(k.clone(), h.path.as_bytes().to_vec());
                }
                return Some(Value::Assoc(a));
            }
            _ => return None,
        };
        Some(Value::Indexed(
            items
                .into_iter()
                .enumerate()
                .map(|(i, v)| (i as i64, v))
                .collect(),
        ))
    }

    /// Performs an assignment (`x=v`, `a[i]=v`, `a=(…)`, with `+=`), in
    /// the innermost function scope if `local`.
    pub fn assign(&mut self, a: &Assign, local: bool) -> Result<(), Flow> {
        self.assign_as(a, local, false, true)
    }

    /// [`Shell::assign`]; with `trace`, a line of `set -x` for it, as bash
    /// writes one for each assignment statement: the name, `=` or `+=`,
    /// and the value as expanded (before appending).
    pub(super) fn assign_as(
        &mut self,
        a: &Assign,
        local: bool,
        trace: bool,
        declared: bool,
    ) -> Result<(), Flow> {
        // `r=(…)` or `r[0]=x` where r names an element (`declare -n
        // r='a[@]'`): not a variable to assign an array to (bash).
        if (a.array.is_some() && !local || a.index.is_some())
            && let Some(t) = self.vars.resolve(&a.name).filter(|t| t.contains(&b'['))
        {
            self.error(&format!(
                "`{}': not a valid identifier",
                String::from_utf8_lossy(&t)
            ));
            return Err(Flow::Abort(1));
        }
        if let (Some(idx), Some(_)) = (&a.index, &a.array) {
            let msg = format!(
                "{}[{}]: cannot assign list to array member",
                String::from_utf8_lossy(&a.name),
                String::from_utf8_lossy(&crate::unparse::word(idx))
            );
            return Err(self.expansion_error(&msg));
        }
        let r = if let Some(items) = &a.array {
            if trace {
                self.trace_assign(a, a.append, None);
            }
            let value = self.array_value(&a.name, items, a.append, declared)?;
            let value = if self.vars.is_integer(&a.name) {
                // `declare -i`: each element is arithmetic.
                let mut each = |v: &Vec<u8>| -> Result<Vec<u8>, Flow> {
                    Ok(self.arith(v)?.to_string().into_bytes())
                };
                match value {
                    Value::Indexed(m) => Value::Indexed(
                        m.iter()
                            .map(|(k, v)| Ok((*k, each(v)?)))
                            .collect::<Result<_, Flow>>()?,
                    ),
                    Value::Assoc(m) => Value::Assoc(m.try_map_values(|v| each(&v.to_vec()))?),
                    other => other,
                }
            } else {
                value
            };
            if local {
                self.vars.local_value(&a.name, Some(value))
            } else {
                self.vars.set_value(&a.name, value)
            }
        } else if let Some(idx) = &a.index {
            let sub = self.expand_subscript_text(idx)?;
            // `a[]=x`, and `a[*]=x` but for an associative array: refused.
            let assoc = matches!(self.vars.value(&a.name), Some(Value::Assoc(_)));
            if sub.is_empty() || !assoc && matches!(sub.as_slice(), b"*" | b"@") {
                let msg = format!(
                    "{}[{}]: bad array subscript",
                    String::from_utf8_lossy(&a.name),
                    String::from_utf8_lossy(&crate::unparse::word(idx))
                );
                return Err(self.expansion_error(&msg));
            }
            let key = self.array_key(&a.name, &sub)?;
            if key.before_start() {
                let msg = format!(
                    "{}[{}]: bad array subscript",
                    String::from_utf8_lossy(&a.name),
                    String::from_utf8_lossy(&crate::unparse::word(idx))
                );
                return Err(self.expansion_error(&msg));
            }
            let v = self.expand_assignment(&a.value)?;
            if trace {
                self.trace_assign(a, a.append, Some(&v));
            }
            let old = a
                .append
                .then(|| self.element(&a.name, &key).unwrap_or_default());
            let integer = self.vars.is_integer(&a.name);
            let v = self.assigned(old, v, integer)?;
            // `DIRSTACK[n]=dir` changes entry n of the directory stack
            // (bash; entry 0, the current directory, stays).
            if a.name == b"DIRSTACK"
                && self.is_dynamic(&a.name)
                && let crate::vars::Key::Index(n) = key
            {
                if let Some(slot) = usize::try_from(n)
                    .ok()
                    .and_then(|n| n.checked_sub(1))
                    .and_then(|n| self.dir_stack.get_mut(n))
                {
                    *slot = v;
                }
                return Ok(());
            }
            // `BASH_CMDS[n]=path` and `BASH_ALIASES[n]=text` change the
            // tables they show (bash).
            if let crate::vars::Key::Name(k) = &key
                && matches!(a.name.as_slice(), b"BASH_CMDS" | b"BASH_ALIASES")
                && self.is_dynamic(&a.name)
            {
                if a.name == b"BASH_CMDS" {
                    if !self.restricted_hash_target("", &v) {
                        return Err(Flow::Abort(1));
                    }
                    if let Ok(c) = CString::new(v) {
                        self.hash_insert(k, c, 0);
                    }
                } else {
                    Rc::make_mut(&mut self.aliases).insert(k.clone(), v);
                }
                return Ok(());
            }
            self.vars.set_elem(&a.name, key, v)
        } else if let Some((base, sub)) = self
            .vars
            .resolve(&a.name)
            .and_then(|t| split_element(&t))
            .filter(|_| !local)
        {
            // Through a nameref to an element (`declare -n r='m[k]'; r=v`).
            let v = self.assign_value_as(a, false, trace)?;
            let sub = self.runtime_subscript(&base, &sub)?;
            let key = self.array_key(&base, &sub)?;
            self.vars.set_elem(&base, key, v)
        } else {
            let v = self.assign_value_as(a, false, trace)?;
            if local {
                self.vars.local(&a.name, Some(v))
            } else {
                self.assigned_dynamic(&a.name, &v);
                self.vars.set(&a.name, v)
            }
        };
        // Assigning to a read-only variable abandons the rest of the line
        // (bash; with `set -e` or in POSIX mode the shell leaves).
        r.map_err(|e| self.expansion_error(&e.to_string()))
    }

    /// The value of `name=(…)`.
    /// The value of `name=(…)`; `declared`: an argument of a declaration
    /// builtin (whose messages show a word single-quoted, as bash's).
    pub(super) fn array_value(
        &mut self,
        name: &[u8],
        items: &[Element],
        append: bool,
        declared: bool,
    ) -> Result<Value, Flow> {
        let integer = self.vars.is_integer(name);
        if let Some(Value::Assoc(old)) = self.vars.value(name) {
            // Replaced, the table keeps its size (bash), and so its order.
            let mut m = if append {
                old.clone()
            } else {
                crate::assoc::Assoc::with_buckets(old.buckets())
            };
            // `A=(k1 v1 k2 v2)`: when the first element is no `[key]=`,
            // the words are keys and values in turn, each expanded as a
            // subscript (bash 5.1).
            if let Some(first) = items.first()
                && first.key.is_none()
                && !first.value.unquoted_text().starts_with(b"[")
            {
                let mut words = Vec::with_capacity(items.len());
                let mut written = Vec::with_capacity(items.len());
                for e in items {
                    let mut w = Vec::new();
                    written.push(crate::unparse::word(&e.value));
                    if let Some(k) = &e.key {
                        w.push(b'[');
                        w.extend_from_slice(&self.expand_index_text(k)?);
                        w.extend_from_slice(if e.append { b"]+=" } else { b"]=" });
                    }
                    w.extend_from_slice(&self.expand_index_text(&e.value)?);
                    words.push(w);
                }
                let mut it = words.into_iter().zip(written);
                while let Some((k, shown)) = it.next() {
                    let v = it.next().map(|(v, _)| v).unwrap_or_default();
                    if k.is_empty() {
                        let msg =
                            format!("{}: bad array subscript", String::from_utf8_lossy(&shown));
                        self.error(&msg);
                        continue;
                    }
                    m.insert(k, v);
                }
                return Ok(Value::Assoc(m));
            }
            for Element {
                key,
                value: w,
                append,
            } in items
            {
                let Some(key) = key else {
                    let written = crate::unparse::word(w);
                    let shown = if declared {
                        String::from_utf8_lossy(&crate::escape::single_quote(&written)).into_owned()
                    } else {
                        String::from_utf8_lossy(&written).into_owned()
                    };
                    self.error(&format!(
                        "{}: {shown}: must use subscript when assigning associative array",
                        String::from_utf8_lossy(name)
                    ));
                    continue;
                };
                // A key is a subscript: no tilde expansion (bash).
                let k = self.expand_index_text(key)?;
                let mut v = self.expand_assignment(w)?;
                if *append {
                    v = self.assigned(Some(m.get(&k).cloned().unwrap_or_default()), v, integer)?;
                }
                m.insert(k, v);
            }
            return Ok(Value::Assoc(m));
        }
        let mut m = match (append, self.vars.value(name)) {
            (true, Some(Value::Indexed(old))) => old.clone(),
            (true, Some(Value::Str(s))) => [(0, s.clone())].into_iter().collect(),
            _ => Default::default(),
        };
        let mut next = m.keys().next_back().map_or(0, |k| k + 1);
        // bash's order: every value is expanded first, left to right; then
        // each index, with the elements assigned before it in place
        // (`a=([0]=3 [a[0]]=x)`).
        let mut values = Vec::with_capacity(items.len());
        for e in items {
            values.push(match e.key {
                Some(_) => vec![self.expand_assignment(&e.value)?],
                None => self.expand_words(std::slice::from_ref(&e.value))?,
            });
        }
        for (e, vals) in items.iter().zip(values) {
            match &e.key {
                Some(k) => {
                    // An empty index, `*` or `@`, and one before the start
                    // are refused, element by element (bash).
                    let refuse = |sh: &mut Self, why: &str| {
                        let msg = format!(
                            "[{}]={}: {why}",
                            String::from_utf8_lossy(&crate::unparse::word(k)),
                            String::from_utf8_lossy(&crate::unparse::word(&e.value))
                        );
                        sh.error(&msg);
                    };
                    let mut bad = None;
                    // An index that reads the array sees it as assigned so
                    // far, and a bad index leaves it so (bash).
                    let i = match self.expand_subscript_text(k).and_then(|mut t| {
                        // bash's internal quoting drops \x01 from these
                        // subscripts (`a=([$'1\0012']=x)` sets `a[12]`).
                        t.retain(|&c| c != 1);
                        if t.is_empty() {
                            bad = Some("bad array subscript");
                            return Ok(0);
                        }
                        if matches!(t.as_slice(), b"*" | b"@") {
                            bad = Some("cannot assign to non-numeric index");
                            return Ok(0);
                        }
                        if t.windows(name.len()).any(|w| w == name) {
                            let _ = self.vars.set_value(name, Value::Indexed(m.clone()));
                        }
                        self.arith(&t)
                    }) {
                        Ok(i) if i < 0 => {
                            let end = m.keys().next_back().map_or(0, |k| k + 1);
                            if end + i < 0 {
                                bad = Some("bad array subscript");
                            }
                            end + i
                        }
                        Ok(i) => i,
                        Err(e) => {
                            let _ = self.vars.set_value(name, Value::Indexed(m));
                            return Err(e);
                        }
                    };
                    if let Some(why) = bad {
                        refuse(self, why);
                        continue;
                    }
                    let mut v = vals.into_iter().next().unwrap_or_default();
                    if e.append {
                        v = self.assigned(
                            Some(m.get(&i).cloned().unwrap_or_default()),
                            v,
                            integer,
                        )?;
                    }
                    m.insert(i, v);
                    next = i + 1;
                }
                None => {
                    for field in vals {
                        m.insert(next, field);
                        next += 1;
                    }
                }
            }
        }
        Ok(Value::Indexed(m))
    }

    /// What an assignment of `v` stores: with `+=` (`old` given), `v`
    /// appended to `old`; for an integer variable the arithmetic value,
    /// `+=` adding.
    pub(crate) fn assigned(
        &mut self,
        old: Option<Vec<u8>>,
        v: Vec<u8>,
        integer: bool,
    ) -> Result<Vec<u8>, Flow> {
        if integer {
            let mut n = self.arith(&v)?;
            if let Some(old) = old {
                n = n.wrapping_add(self.arith(&old)?);
            }
            return Ok(n.to_string().into_bytes());
        }
        Ok(match old {
            Some(mut old) => {
                old.extend_from_slice(&v);
                old
            }
            None => v,
        })
    }

    /// `declare [flags] name=(…)` (and `local`, `readonly`, `export`): the
    /// array attributes the flags give come first, then the elements.
    pub fn declare_array(&mut self, a: &Assign, flags: &[u8], local: bool) -> Result<(), Flow> {
        if flags.contains(&b'A') && !matches!(self.vars.value(&a.name), Some(Value::Assoc(_))) {
            let empty = if local {
                Value::Assoc(Default::default())
            } else {
                self.vars.new_assoc(&a.name)
            };
            let r = if local {
                self.vars.local_value(&a.name, Some(empty))
            } else {
                self.vars.set_value(&a.name, empty)
            };
            if let Err(e) = r {
                self.error(&e.to_string());
                return Err(Flow::Exit(1));
            }
        }
        // `declare -ai a=(1+1)`: the elements are arithmetic, so
        // the attribute comes first, as in bash (on the local, for
        // `local -ai`).
        let attributes = flags
            .iter()
            .any(|&c| c == b'i' || crate::vars::Case::of_flag(c).is_some());
        if local
            && attributes
            && let Err(e) = self.vars.local_value(&a.name, None)
        {
            self.error(&e.to_string());
            return Err(Flow::Exit(1));
        }
        if flags.contains(&b'i') {
            self.vars.set_integer(&a.name);
        }
        // `declare -la a=(A)`, `-ua`: the case attribute first too.
        if let Some(case) = flags
            .iter()
            .rev()
            .find_map(|&c| crate::vars::Case::of_flag(c))
        {
            self.vars.set_case(&a.name, Some(case));
        }
        self.assign(a, local)
    }

    pub(super) fn assign_value(&mut self, a: &Assign) -> Result<Vec<u8>, Flow> {
        self.assign_value_as(a, false, false)
    }

    /// [`Shell::assign_value`]; `integer` as if the variable had the
    /// attribute (`typeset -i x+=5` adds).
    pub(super) fn assign_value_as(
        &mut self,
        a: &Assign,
        integer: bool,
        trace: bool,
    ) -> Result<Vec<u8>, Flow> {
        let v = self.expand_assignment(&a.value)?;
        if trace {
            self.trace_assign(a, a.append, Some(&v));
        }
        let old = a.append.then(|| {
            self.vars
                .get(&a.name)
                .map(<[u8]>::to_vec)
                .unwrap_or_default()
        });
        let integer = integer || self.vars.is_integer(&a.name);
        self.assigned(old, v, integer)
    }

    /// Sets assignments for the length of one builtin; returns what to put
    /// back. A read-only name is reported when `report` (the first pass
    /// over a command's prefix; bash reports it once).
    pub(super) fn push_temp_vars(
        &mut self,
        assigns: &[(Vec<u8>, Vec<u8>)],
        report: bool,
    ) -> Vec<(Vec<u8>, Option<Vec<u8>>)> {
        let mut old = Vec::with_capacity(assigns.len());
        for (k, v) in assigns {
            old.push((k.clone(), self.vars.get(k).map(<[u8]>::to_vec)));
            if let Err(e) = self.vars.set(k, v.clone())
                && report
            {
                self.error(&e.to_string());
            }
        }
        old
    }

    /// The arguments extdebug kept, innermost frame first, the shell's
    /// own last (`BASH_ARGV`, `BASH_ARGC`).
    pub(super) fn frame_args(&self) -> impl Iterator<Item = &Vec<Vec<u8>>> {
        self.frames
            .iter()
            .rev()
            .filter_map(|f| f.args.as_ref())
            .chain(&self.main_args)
    }

    /// Whether `name` is bound by the running function's call (`v=t f`).
    pub fn is_prefix_bound(&self, name: &[u8]) -> bool {
        self.func_depth > 0
            && self
                .prefix_bound
                .iter()
                .any(|(d, n)| *d == self.func_depth && n == name)
    }

    /// An assignment error met while a declaration's words expand: bash
    /// names the function first when it is the function's first command.
    pub(super) fn fn_prefixed_error(&mut self, msg: &str) {
        match self.frames.last().filter(|_| self.fresh_call) {
            Some(f) => {
                let text = format!("{}: {msg}", String::from_utf8_lossy(&f.name));
                self.error(&text);
            }
            None => self.error(msg),
        }
    }

    /// A builtin's prefix assignments are exported while it runs, as
    /// bash's temporary environment is (`V=1 declare -p V` shows `-x`);
    /// returns the names that were not exported before.
    pub(super) fn export_temps(&mut self, assigns: &[(Vec<u8>, Vec<u8>)]) -> Vec<Vec<u8>> {
        let mut turned = Vec::new();
        for (k, _) in assigns {
            if self.vars.var(k).is_some_and(|v| !v.exported) && self.vars.export(k, None).is_ok() {
                turned.push(k.clone());
            }
        }
        turned
    }

    /// Takes the export back from those of `names` whose prefix value is
    /// still to be undone (those the builtin did not keep).
    pub(super) fn unexport_temps(
        &mut self,
        names: Vec<Vec<u8>>,
        undo: &[(Vec<u8>, Option<Vec<u8>>)],
    ) {
        for n in names {
            if undo.iter().any(|(k, _)| *k == n) {
                self.vars.unexport(&n);
            }
        }
    }

    /// `V=1 export V`, `V=1 readonly V`, `V=1 declare -r V` (or `-x`) at
    /// the top level: the prefix variable stays, exported, with what the
    /// builtin gave it (bash promotes it from the temporary environment).
    pub(super) fn keep_promoted(
        &mut self,
        argv: &[Vec<u8>],
        undo: &mut Vec<(Vec<u8>, Option<Vec<u8>>)>,
    ) {
        if undo.is_empty() || self.vars.in_function() {
            return;
        }
        let promotes = match argv[0].as_slice() {
            b"export" | b"readonly" => true,
            b"declare" | b"typeset" => argv[1..].iter().any(|a| {
                a.len() > 1 && a[0] == b'-' && a[1..].iter().any(|c| matches!(c, b'r' | b'x'))
            }),
            _ => false,
        };
        if !promotes {
            return;
        }
        for a in &argv[1..] {
            if a.starts_with(b"-") || a.starts_with(b"+") {
                continue;
            }
            let name = a.split(|&c| c == b'=').next().unwrap_or_default();
            if let Some(i) = undo.iter().position(|(k, _)| k == name) {
                undo.remove(i);
                let _ = self.vars.export(name, None);
            }
        }
    }

    /// `z=y local z`: the new local starts with the prefix value (bash),
    /// and the prefix assignment is undone in the caller's scope, not on
    /// the local.
    pub(super) fn settle_temp_locals(
        &mut self,
        assigns: &[(Vec<u8>, Vec<u8>)],
        fresh: &[bool],
        undo: &mut Vec<(Vec<u8>, Option<Vec<u8>>)>,
    ) {
        for ((k, v), &was_fresh) in assigns.iter().zip(fresh) {
            if !was_fresh || !self.vars.local_here(k) {
                continue;
            }
            if self.vars.local_unset_here(k) {
                let _ = self.vars.local(k, Some(v.clone()));
            }
            if let Some(i) = undo.iter().position(|(n, _)| n == k) {
                let (_, prev) = undo.remove(i);
                // The call's own binding of the name is simply replaced.
                if self.prefix_bound.contains(&(self.func_depth, k.clone())) {
                    continue;
                }
                match prev {
                    Some(p) => {
                        let _ = self.vars.set_in_caller(k, p);
                    }
                    None => self.vars.unset_in_caller(k),
                }
            }
        }
    }

    #[inline]
    pub(super) fn pop_temp_vars(&mut self, old: Vec<(Vec<u8>, Option<Vec<u8>>)>) {
        if old.is_empty() {
            return;
        }
        self.pop_temp_vars_now(old);
    }

    pub(super) fn pop_temp_vars_now(&mut self, old: Vec<(Vec<u8>, Option<Vec<u8>>)>) {
        for (k, v) in old.into_iter().rev() {
            let _ = match v {
                Some(v) => self.vars.set(&k, v),
                None => self.vars.unset(&k),
            };
        }
    }
}

/// bash's refusal to change an array's kind: `name: cannot convert
/// indexed to associative array` (`to`: the `A` or `a` asked for).
pub fn cannot_convert(to: u8, name: &[u8]) -> String {
    let (from, to) = if to == b'A' {
        ("indexed", "associative")
    } else {
        ("associative", "indexed")
    };
    format!(
        "{}: cannot convert {from} to {to} array",
        String::from_utf8_lossy(name)
    )
}

/// A word written `name[…]`, unquoted: bash's parser marks it an array
/// reference, which `unset` does not expand again.
pub(super) fn written_as_element(w: &Word) -> bool {
    let (Some(Part::Lit(first)), Some(Part::Lit(last))) = (w.parts.first(), w.parts.last()) else {
        return false;
    };
    let Some(open) = first.iter().position(|&c| c == b'[') else {
        return false;
    };
    crate::parse::is_name(&first[..open]) && last.ends_with(b"]")
}

/// `FUNCNAME` outside any function: declared, with no value (bash shows
/// `declare -a FUNCNAME`).
pub(super) fn outside_function_funcname(name: &[u8], v: &crate::vars::Var) -> bool {
    name == b"FUNCNAME" && v.value.as_ref().is_some_and(|a| a.keys().is_empty())
}

/// The dynamic variables that bash computes only when they are read:
/// `set`, `declare -p` and the like show the value last read, or none
/// before the first read (an array: empty).
pub(super) const LISTED_AS_LAST_READ: &[&[u8]] = &[
    b"RANDOM",
    b"SRANDOM",
    b"SECONDS",
    b"LINENO",
    b"BASHPID",
    b"EPOCHSECONDS",
    b"EPOCHREALTIME",
    b"HISTCMD",
    b"BASH_COMMAND",
    b"BASH_SUBSHELL",
    b"BASH_ARGV0",
    b"DIRSTACK",
    b"GROUPS",
    b"BASH_ALIASES",
    b"BASH_CMDS",
];

/// Whether `declare` flags ask to turn an indexed array into an
/// associative one or back, which bash refuses.
pub fn converts_array_kind(flags: &[u8], cur: Option<&Value>) -> bool {
    (flags.contains(&b'A') && matches!(cur, Some(Value::Indexed(_))))
        || (flags.contains(&b'a') && matches!(cur, Some(Value::Assoc(_))))
}

/// Whether builtin `name` can see that its prefix assignments are
/// exported (bash's temporary environment): those that run commands or
/// print attributes. For the rest, exporting them would only cost a
/// rebuilt environment (`IFS= read` in a loop). Declarations that assign
/// decide about exporting themselves.
pub(super) fn observes_temp_env(name: &[u8], argv: &[Vec<u8>]) -> bool {
    match name {
        b"eval" | b"." | b"source" | b"command" | b"builtin" | b"fc" | b"mapfile"
        | b"readarray" | b"compgen" => true,
        b"declare" | b"typeset" => argv[1..]
            .iter()
            .any(|a| a.starts_with(b"-") && a.contains(&b'p')),
        _ => false,
    }
}

/// `name[sub]` split into the name and the subscript text.
pub(crate) fn split_element(t: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    split_element_as(t, false)
}

/// [`split_element`]; `as_written` (`assoc_expand_once`): the subscript
/// runs from the first `[` to the last `]`, whatever is between.
pub(crate) fn split_element_as(t: &[u8], as_written: bool) -> Option<(Vec<u8>, Vec<u8>)> {
    let open = t.iter().position(|&c| c == b'[')?;
    let end = if as_written {
        (t.len() > open + 2 && t.ends_with(b"]")).then_some(t.len() - 1)?
    } else {
        subscript_end(t, open)?
    };
    if !crate::parse::is_name(&t[..open]) || end + 1 != t.len() {
        return None;
    }
    Some((t[..open].to_vec(), t[open + 1..t.len() - 1].to_vec()))
}

/// Where the `]` that closes the `[` at `open` is (brackets nest, a
/// backslash quotes), as bash finds it: `A[]]` is `A[]` and a `]` after,
/// so not one element.
pub(crate) fn subscript_end(t: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0u32;
    let mut i = open;
    while i < t.len() {
        match t[i] {
            b'\\' => i += 1,
            // Quotes hide brackets, and must close (`a[80's]` is no name).
            q @ (b'\'' | b'"') => {
                i += 1 + t.get(i + 1..)?.iter().position(|&c| c == q)?;
            }
            b'[' => depth += 1,
            b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// A name a builtin may assign (`read`, `printf -v`): `name` or
/// `name[subscript]`.
pub fn is_ref(sh: &Shell, target: &[u8]) -> bool {
    crate::parse::is_name(target) || split_element_as(target, sh.name_as_written(target)).is_some()
}

impl Shell {
    /// `assoc_expand_once`: a subscript that comes as text is taken as
    /// written, from the first `[` to the last `]`, and not expanded.
    pub fn keys_as_written(&self) -> bool {
        self.shopts.on("assoc_expand_once")
    }

    /// A builtin's argument naming an element, written unquoted as one
    /// (`read A[$k]`), with `assoc_expand_once`: taken as written.
    pub fn name_as_written(&self, target: &[u8]) -> bool {
        self.keys_as_written() && self.literal_args.iter().any(|a| a == target)
    }

    /// Sets `name` or one element (`name[sub]`) as a builtin's result, as
    /// `read` and `printf -v` do; an error is reported and gives `false`.
    pub fn set_ref(&mut self, target: &[u8], value: Vec<u8>) -> Result<bool, Flow> {
        let as_written = self.name_as_written(target);
        let r = match split_element_as(target, as_written) {
            Some((name, sub)) => {
                let assoc = matches!(self.vars.value(&name), Some(Value::Assoc(_)));
                // Every element is no place to put one value.
                if !assoc && matches!(sub.as_slice(), b"@" | b"*") {
                    let msg = format!("{}: bad array subscript", String::from_utf8_lossy(target));
                    self.error(&msg);
                    return Ok(false);
                }
                let sub = if as_written && assoc {
                    sub
                } else {
                    self.runtime_subscript(&name, &sub)?
                };
                let key = self.array_key(&name, &sub)?;
                if key.before_start() {
                    let msg = format!("{}: bad array subscript", String::from_utf8_lossy(target));
                    self.error(&msg);
                    return Ok(false);
                }
                self.vars.set_elem(&name, key, value)
            }
            None => self.vars.set(target, value),
        };
        if let Err(e) = r {
            self.error(&e.to_string());
            return Ok(false);
        }
        Ok(true)
    }
}

impl Shell {
    /// The whole stack: the current directory, then the saved ones.
    pub fn directory_stack(&self) -> Vec<Vec<u8>> {
        let pwd = self
            .vars
            .get(b"PWD")
            .map(<[u8]>::to_vec)
            .unwrap_or_else(|| {
                use std::os::unix::ffi::OsStrExt;
                std::env::current_dir()
                    .map(|p| p.as_os_str().as_bytes().to_vec())
                    .unwrap_or_default()
            });
        std::iter::once(pwd)
            .chain(self.dir_stack.iter().cloned())
            .collect()
    }
}
