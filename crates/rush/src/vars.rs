//! Shell variables: global, function-local (dynamic scope, as bash), exported
//! and readonly, and the environment built from them for each spawn.

use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;
use std::ffi::CString;

/// What a variable holds: a string, or a bash array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Str(Vec<u8>),
    /// `a=(x y)`: sparse, by index.
    Indexed(BTreeMap<i64, Vec<u8>>),
    /// `declare -A a`: by string key, in bash's order.
    Assoc(crate::assoc::Assoc),
}

impl Value {
    /// The value as a string: arrays stand for their element 0.
    pub fn scalar(&self) -> Option<&[u8]> {
        match self {
            Value::Str(s) => Some(s),
            Value::Indexed(m) => m.get(&0).map(Vec::as_slice),
            Value::Assoc(m) => m.get(b"0".as_slice()).map(Vec::as_slice),
        }
    }

    pub fn is_array(&self) -> bool {
        !matches!(self, Value::Str(_))
    }

    /// Every element, in order (a string is one element).
    pub fn elements(&self) -> Vec<Vec<u8>> {
        match self {
            Value::Str(s) => vec![s.clone()],
            Value::Indexed(m) => m.values().cloned().collect(),
            Value::Assoc(m) => m.values().cloned().collect(),
        }
    }

    /// Every key, in order (`${!a[@]}`).
    pub fn keys(&self) -> Vec<Vec<u8>> {
        match self {
            Value::Str(_) => vec![b"0".to_vec()],
            Value::Indexed(m) => m.keys().map(|k| k.to_string().into_bytes()).collect(),
            Value::Assoc(m) => m.keys().cloned().collect(),
        }
    }
}

/// An array subscript, evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    Index(i64),
    Name(Vec<u8>),
}

impl Key {
    /// A negative index that counts back past the first element (`a[-9]`
    /// of a one-element array): bash's "bad array subscript".
    pub fn before_start(&self) -> bool {
        matches!(self, Key::Index(i) if *i < 0)
    }
}

#[derive(Debug, Clone, Default)]
pub struct Var {
    /// `None`: declared (`export X`, `local X`) but unset.
    pub value: Option<Value>,
    pub exported: bool,
    pub readonly: bool,
    /// `declare -i`: assignments are evaluated as arithmetic.
    pub integer: bool,
    /// `declare -l` / `-u`: what is assigned is lowercased / uppercased.
    pub case: Option<Case>,
    /// `declare -n`: the value names another variable, which every use
    /// of this one reaches instead.
    pub nameref: bool,
    /// One of bash's dynamic variables (`RANDOM`, `SECONDS`, `PIPESTATUS`,
    /// ...): the shell computes its value when it is read. Unsetting it
    /// removes the variable, and with it what is special about it.
    pub dynamic: bool,
    /// `declare -a x` / `-A x` and no value yet: bash shows it as
    /// `declare -a x`, not `declare -a x=()`, until something is assigned.
    pub declared_only: bool,
}

/// A case attribute (`declare -l`, `declare -u`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    Lower,
    Upper,
    /// `declare -c`: the first character upper case, the rest lower.
    Capitalize,
}

impl Case {
    /// `s` in this case (Unicode's, where `s` is UTF-8; else ASCII's).
    pub fn apply(self, s: &[u8]) -> Vec<u8> {
        match (std::str::from_utf8(s), self) {
            (Ok(t), Case::Lower) => t.to_lowercase().into_bytes(),
            (Ok(t), Case::Upper) => t.to_uppercase().into_bytes(),
            (Ok(t), Case::Capitalize) => {
                let mut cs = t.chars();
                let mut out: String = cs
                    .next()
                    .map(|c| c.to_uppercase().collect())
                    .unwrap_or_default();
                out.push_str(&cs.as_str().to_lowercase());
                out.into_bytes()
            }
            (Err(_), Case::Lower) => s.to_ascii_lowercase(),
            (Err(_), Case::Upper) => s.to_ascii_uppercase(),
            (Err(_), Case::Capitalize) => {
                let mut out = s.to_ascii_lowercase();
                if let Some(c) = out.first_mut() {
                    c.make_ascii_uppercase();
                }
                out
            }
        }
    }

    /// The attribute for `declare`'s letter `l`, `u` or `c`.
    pub fn of_flag(c: u8) -> Option<Case> {
        match c {
            b'l' => Some(Case::Lower),
            b'u' => Some(Case::Upper),
            b'c' => Some(Case::Capitalize),
            _ => None,
        }
    }

    fn apply_value(self, v: Value) -> Value {
        match v {
            Value::Str(s) => Value::Str(self.apply(&s)),
            Value::Indexed(m) => {
                Value::Indexed(m.into_iter().map(|(k, v)| (k, self.apply(&v))).collect())
            }
            Value::Assoc(m) => Value::Assoc(
                m.try_map_values(|v| Ok::<_, std::convert::Infallible>(self.apply(v)))
                    .unwrap_or_default(),
            ),
        }
    }
}

impl Var {
    fn string(value: Vec<u8>, exported: bool) -> Self {
        Var {
            value: Some(Value::Str(value)),
            exported,
            readonly: false,
            integer: false,
            case: None,
            nameref: false,
            dynamic: false,
            declared_only: false,
        }
    }
}

/// Why an assignment was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOnly(pub Vec<u8>);

impl std::fmt::Display for ReadOnly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: readonly variable", String::from_utf8_lossy(&self.0))
    }
}

#[derive(Debug, Default)]
pub struct Vars {
    /// OPTIND was assigned since getopts last looked: getopts starts
    /// afresh at the argument it names (bash).
    pub optind_assigned: bool,
    globals: HashMap<Vec<u8>, Var>,
    /// One map per running function that declared locals.
    scopes: Vec<HashMap<Vec<u8>, Var>>,
    /// The environment as last built, dropped on any change to an exported
    /// variable.
    env: Option<Vec<CString>>,
    /// Set by `set -a`: every assignment exports.
    pub allexport: bool,
    /// Some variable is (or was) a nameref: names are resolved through
    /// them. Until then no lookup pays for it.
    namerefs: bool,
    /// Exported functions (`export -f`): name to the definition's text
    /// after the name (`() { … }`), each `BASH_FUNC_name%%` in the
    /// environment.
    functions: BTreeMap<Vec<u8>, Vec<u8>>,
    /// `BASH_FUNC_name%%` entries of the environment the shell started
    /// with, (name, value), for the shell to import.
    pub imported_functions: Vec<(Vec<u8>, Vec<u8>)>,
    /// Entries of the starting environment whose names are not shell
    /// names, passed on unchanged.
    foreign: Vec<CString>,
}

impl Vars {
    /// Imports the process environment.
    pub fn from_env() -> Self {
        let mut v = Vars::default();
        for (k, val) in std::env::vars_os() {
            use std::os::unix::ffi::OsStringExt;
            let k = k.into_vec();
            if !crate::parse::is_name(&k) {
                if let Some(name) = k
                    .strip_prefix(b"BASH_FUNC_")
                    .and_then(|n| n.strip_suffix(b"%%"))
                {
                    v.imported_functions.push((name.to_vec(), val.into_vec()));
                } else if let Ok(c) = CString::new([k.as_slice(), b"=", &val.into_vec()].concat()) {
                    // A name the shell cannot have (`v[0]=x`) still goes
                    // to children as it came (bash).
                    v.foreign.push(c);
                }
                continue;
            }
            v.globals.insert(k, Var::string(val.into_vec(), true));
        }
        v
    }

    /// The variable a nameref leads to (through a chain of them), if
    /// `name` is one with a target. A loop, or a chain too long, leads
    /// nowhere.
    pub fn resolve(&self, name: &[u8]) -> Option<Vec<u8>> {
        if !self.namerefs {
            return None;
        }
        let mut cur: Option<Vec<u8>> = None;
        for _ in 0..16 {
            let at = cur.as_deref().unwrap_or(name);
            match self.find_raw(at) {
                // Only a variable's name (or an element's) is followed: a
                // nameref to `#` or `1` reads as its own value (bash).
                Some(Var {
                    nameref: true,
                    value: Some(Value::Str(t)),
                    ..
                }) if crate::parse::is_name(t.split(|&c| c == b'[').next().unwrap_or_default()) => {
                    cur = Some(t.clone());
                }
                _ => return cur,
            }
        }
        None
    }

    fn find(&self, name: &[u8]) -> Option<&Var> {
        match self.resolve(name) {
            Some(t) => self.find_raw(&t),
            None => self.find_raw(name),
        }
    }

    fn find_mut(&mut self, name: &[u8]) -> Option<&mut Var> {
        match self.resolve(name) {
            Some(t) => self.find_raw_mut(&t),
            None => self.find_raw_mut(name),
        }
    }

    /// The variable `name` itself, not what a nameref leads to.
    pub fn var_itself(&self, name: &[u8]) -> Option<&Var> {
        self.find_raw(name)
    }

    /// `declare -n name[=target]` (`+n`: no longer a nameref). In a
    /// function, without `-g`, the name is a local.
    pub fn set_nameref(
        &mut self,
        name: &[u8],
        target: Option<Vec<u8>>,
        on: bool,
        local: bool,
    ) -> Result<(), ReadOnly> {
        self.namerefs |= on;
        let in_scope = local && self.scopes.last().is_some_and(|s| s.contains_key(name));
        let var = if local && !in_scope {
            match self.scopes.last_mut() {
                Some(s) => s.entry(name.to_vec()).or_default(),
                None => self.globals.entry(name.to_vec()).or_default(),
            }
        } else if self.find_raw(name).is_some() {
            self.find_raw_mut(name).expect("found above")
        } else {
            self.globals.entry(name.to_vec()).or_default()
        };
        if var.readonly && target.is_some() {
            return Err(ReadOnly(name.to_vec()));
        }
        var.nameref = on;
        if let Some(t) = target {
            var.value = Some(Value::Str(t));
        }
        Ok(())
    }

    /// `declare r[1]=v` of a nameref `r`: the reference is dropped, value
    /// and all, so that `r` becomes an array of its own (bash).
    pub fn drop_nameref(&mut self, name: &[u8]) {
        if let Some(v) = self.find_raw_mut(name) {
            v.nameref = false;
            v.value = None;
        }
    }

    /// Makes `name` one of the shell's computed variables, or a plain one.
    pub fn set_dynamic(&mut self, name: &[u8], on: bool) {
        if let Some(v) = self.find_mut(name) {
            v.dynamic = on;
        }
    }

    /// `declare -nx name`: the reference itself is exported.
    pub fn export_itself(&mut self, name: &[u8]) {
        if let Some(v) = self.find_raw_mut(name) {
            v.exported = true;
            self.env = None;
        }
    }

    /// Defines a global variable whole, attributes and all (the shell's
    /// own variables at start-up).
    pub fn define(&mut self, name: &[u8], var: Var) {
        if var.exported || self.globals.get(name).is_some_and(|v| v.exported) {
            self.env = None;
        }
        self.globals.insert(name.to_vec(), var);
    }

    /// `unset -n name`: the nameref itself goes.
    pub fn unset_itself(&mut self, name: &[u8]) -> Result<(), ReadOnly> {
        let saved = std::mem::replace(&mut self.namerefs, false);
        let r = self.unset(name);
        self.namerefs = saved;
        r
    }

    /// What the shell unsets for itself (getopts' OPTARG): the variable
    /// itself, readonly or not, as bash's `unbind_variable_noref`.
    pub fn unset_internal(&mut self, name: &[u8]) {
        if let Some(v) = self.find_raw_mut(name) {
            v.readonly = false;
            v.nameref = false;
        }
        let _ = self.unset_itself(name);
    }

    fn find_raw(&self, name: &[u8]) -> Option<&Var> {
        for s in self.scopes.iter().rev() {
            if let Some(v) = s.get(name) {
                return Some(v);
            }
        }
        self.globals.get(name)
    }

    fn find_raw_mut(&mut self, name: &[u8]) -> Option<&mut Var> {
        for s in self.scopes.iter_mut().rev() {
            if let Some(v) = s.get_mut(name) {
                return Some(v);
            }
        }
        self.globals.get_mut(name)
    }

    pub fn get(&self, name: &[u8]) -> Option<&[u8]> {
        self.find(name)?.value.as_ref()?.scalar()
    }

    pub fn value(&self, name: &[u8]) -> Option<&Value> {
        self.find(name)?.value.as_ref()
    }

    pub fn var(&self, name: &[u8]) -> Option<&Var> {
        self.find(name)
    }

    pub fn is_readonly(&self, name: &[u8]) -> bool {
        self.find(name).is_some_and(|v| v.readonly)
    }

    /// Sets a variable where it lives (the innermost scope that has it, else
    /// the globals).
    pub fn set(&mut self, name: &[u8], value: Vec<u8>) -> Result<(), ReadOnly> {
        if name == b"OPTIND" {
            self.optind_assigned = true;
        }
        // Setting an array by its bare name sets element 0.
        if let Some(Var {
            value: Some(Value::Indexed(_) | Value::Assoc(_)),
            ..
        }) = self.find(name)
        {
            let key = match self.find(name).and_then(|v| v.value.as_ref()) {
                Some(Value::Assoc(_)) => Key::Name(b"0".to_vec()),
                _ => Key::Index(0),
            };
            return self.set_elem(name, key, value);
        }
        self.set_value(name, Value::Str(value))
    }

    /// Sets a whole value (a string or an array).
    pub fn set_value(&mut self, name: &[u8], value: Value) -> Result<(), ReadOnly> {
        let allexport = self.allexport;
        match self.find_mut(name) {
            Some(v) => {
                if v.readonly {
                    return Err(ReadOnly(name.to_vec()));
                }
                v.value = Some(match v.case {
                    Some(c) => c.apply_value(value),
                    None => value,
                });
                v.declared_only = false;
                if allexport {
                    v.exported = true;
                }
                if v.exported {
                    self.env = None;
                }
            }
            None => {
                let name = self.resolve(name).unwrap_or_else(|| name.to_vec());
                self.globals.insert(
                    name,
                    Var {
                        value: Some(value),
                        exported: allexport,
                        readonly: false,
                        integer: false,
                        case: None,
                        nameref: false,
                        dynamic: false,
                        declared_only: false,
                    },
                );
                if allexport {
                    self.env = None;
                }
            }
        }
        Ok(())
    }

    /// `declare -a name` with no value: bash's "declared, not assigned".
    pub fn mark_declared_only(&mut self, name: &[u8]) {
        if let Some(v) = self.find_mut(name) {
            v.declared_only = true;
        }
    }

    /// Sets one element; a string variable becomes an array with the string
    /// at index 0.
    pub fn set_elem(&mut self, name: &[u8], key: Key, value: Vec<u8>) -> Result<(), ReadOnly> {
        let mut cur = match self.find(name) {
            Some(v) if v.readonly => return Err(ReadOnly(name.to_vec())),
            Some(v) => v.value.clone(),
            None => None,
        };
        match (&mut cur, key) {
            (Some(Value::Assoc(m)), Key::Name(k)) => {
                m.insert(k, value);
            }
            (Some(Value::Assoc(m)), Key::Index(i)) => {
                m.insert(i.to_string().into_bytes(), value);
            }
            (Some(Value::Indexed(m)), Key::Index(i)) => {
                m.insert(i, value);
            }
            (Some(Value::Indexed(m)), Key::Name(k)) => {
                let i = String::from_utf8_lossy(&k).trim().parse().unwrap_or(0);
                m.insert(i, value);
            }
            (slot, key) => {
                let mut m = BTreeMap::new();
                if let Some(Value::Str(s)) = slot.take() {
                    m.insert(0, s);
                }
                let i = match key {
                    Key::Index(i) => i,
                    Key::Name(k) => String::from_utf8_lossy(&k).trim().parse().unwrap_or(0),
                };
                m.insert(i, value);
                *slot = Some(Value::Indexed(m));
            }
        }
        self.set_value(name, cur.expect("set above"))
    }

    /// Removes one element of an array (or the string, for index 0).
    pub fn unset_elem(&mut self, name: &[u8], key: &Key) -> Result<(), ReadOnly> {
        let Some(v) = self.find_mut(name) else {
            return Ok(());
        };
        if v.readonly {
            return Err(ReadOnly(name.to_vec()));
        }
        match (&mut v.value, key) {
            (Some(Value::Indexed(m)), Key::Index(i)) => {
                m.remove(i);
            }
            (Some(Value::Assoc(m)), Key::Name(k)) => {
                m.remove(k);
            }
            (Some(Value::Assoc(m)), Key::Index(i)) => {
                m.remove(i.to_string().as_bytes());
            }
            (Some(Value::Str(_)), Key::Index(0)) => v.value = None,
            _ => {}
        }
        Ok(())
    }
    pub fn unset(&mut self, name: &[u8]) -> Result<(), ReadOnly> {
        let target = self.resolve(name);
        let name = target.as_deref().unwrap_or(name);
        let innermost = self.scopes.len();
        for (depth, s) in self.scopes.iter_mut().enumerate().rev() {
            if let Some(v) = s.get(name) {
                if v.readonly {
                    return Err(ReadOnly(name.to_vec()));
                }
                if depth + 1 == innermost {
                    // The running function's own local stays local, unset
                    // and without attributes: an assignment after the unset
                    // is still local (bash).
                    s.insert(name.to_vec(), Var::default());
                } else {
                    // A caller's local is removed, revealing the variable
                    // of an outer scope (bash).
                    s.remove(name);
                }
                self.env = None;
                return Ok(());
            }
        }
        if let Some(v) = self.globals.get(name) {
            if v.readonly {
                return Err(ReadOnly(name.to_vec()));
            }
            if v.exported {
                self.env = None;
            }
            self.globals.remove(name);
        }
        Ok(())
    }

    pub fn export(&mut self, name: &[u8], value: Option<Vec<u8>>) -> Result<(), ReadOnly> {
        if let Some(value) = value {
            self.set(name, value)?;
        }
        self.declare_with(name, |v| v.exported = true);
        self.env = None;
        Ok(())
    }

    /// Declares `name` (unset, global) if it does not exist yet: `declare
    /// name` with no value.
    pub fn declare(&mut self, name: &[u8]) {
        self.declare_with(name, |_| {});
    }

    /// Sets an attribute of `name`, declaring it (unset, global) if it does
    /// not exist yet.
    fn declare_with(&mut self, name: &[u8], attribute: impl Fn(&mut Var)) {
        match self.find_mut(name) {
            Some(v) => attribute(v),
            None => {
                let mut v = Var::default();
                attribute(&mut v);
                self.globals.insert(name.to_vec(), v);
            }
        }
    }

    /// Whether assignments to `name` are arithmetic (`declare -i`).
    pub fn is_integer(&self, name: &[u8]) -> bool {
        self.find(name).is_some_and(|v| v.integer)
    }

    /// `declare -i name`: declares it if needed.
    /// `declare +i`.
    pub fn clear_integer(&mut self, name: &[u8]) {
        if let Some(v) = self.find_mut(name) {
            v.integer = false;
        }
    }

    pub fn set_integer(&mut self, name: &[u8]) {
        self.declare_with(name, |v| v.integer = true);
    }

    /// `declare -l` / `-u` (`None`: `+l`, `+u`): for what is assigned
    /// from now on.
    pub fn set_case(&mut self, name: &[u8], case: Option<Case>) {
        self.declare_with(name, |v| v.case = case);
    }

    /// `export -n`
    pub fn unexport(&mut self, name: &[u8]) {
        if let Some(v) = self.find_mut(name) {
            v.exported = false;
            self.env = None;
        }
    }

    pub fn readonly(&mut self, name: &[u8], value: Option<Vec<u8>>) -> Result<(), ReadOnly> {
        if let Some(value) = value {
            self.set(name, value)?;
        }
        self.declare_with(name, |v| v.readonly = true);
        Ok(())
    }

    /// Enters a function: a new scope for `local`.
    /// Whether `name` is a local of the innermost function scope.
    pub fn local_here(&self, name: &[u8]) -> bool {
        self.scopes.last().is_some_and(|s| s.contains_key(name))
    }

    /// The innermost function's locals, sorted by name (`local` alone).
    pub fn locals_sorted(&self) -> Vec<(&[u8], &Var)> {
        let mut v: Vec<(&[u8], &Var)> = self
            .scopes
            .last()
            .map(|s| s.iter().map(|(k, v)| (k.as_slice(), v)).collect())
            .unwrap_or_default();
        v.sort_by(|a, b| a.0.cmp(b.0));
        v
    }

    pub fn push_scope(&mut self) {
        self.scopes.push(HashMap::default());
    }

    pub fn pop_scope(&mut self) {
        if let Some(s) = self.scopes.pop()
            && (s.values().any(|v| v.exported) || s.keys().any(|k| self.is_exported(k)))
        {
            self.env = None;
        }
    }

    fn is_exported(&self, name: &[u8]) -> bool {
        self.find(name).is_some_and(|v| v.exported)
    }

    /// Sets `name` as the caller of the innermost function would see it
    /// (under that function's scope).
    pub fn set_in_caller(&mut self, name: &[u8], value: Vec<u8>) -> Result<(), ReadOnly> {
        let Some(top) = self.scopes.pop() else {
            return self.set(name, value);
        };
        let r = self.set(name, value);
        self.scopes.push(top);
        r
    }

    /// Unsets `name` as the caller of the innermost function sees it.
    pub fn unset_in_caller(&mut self, name: &[u8]) {
        let Some(top) = self.scopes.pop() else {
            let _ = self.unset(name);
            return;
        };
        let _ = self.unset(name);
        self.scopes.push(top);
    }

    /// Whether `name` is declared in the innermost scope with no value.
    pub fn local_unset_here(&self, name: &[u8]) -> bool {
        self.scopes
            .last()
            .and_then(|s| s.get(name))
            .is_some_and(|v| v.value.is_none())
    }

    /// Takes the function scopes away, leaving only the globals visible
    /// (`declare -g`); [`Vars::restore_scopes`] puts them back.
    pub fn take_scopes(&mut self) -> Vec<HashMap<Vec<u8>, Var>> {
        self.env = None;
        std::mem::take(&mut self.scopes)
    }

    pub fn restore_scopes(&mut self, scopes: Vec<HashMap<Vec<u8>, Var>>) {
        // Scopes made meanwhile (a function run by an expansion) are gone.
        self.scopes = scopes;
        self.env = None;
    }

    /// `declare -A name`: a new associative array, or, for a variable
    /// that exists, that variable converted as bash converts one (its
    /// string at key `0`, in a table of 128 buckets, which orders keys
    /// differently from a new one's 1024).
    pub fn new_assoc(&self, name: &[u8]) -> Value {
        match self.var(name) {
            Some(v) => {
                let mut a = crate::assoc::Assoc::with_buckets(128);
                if let Some(s) = v.value.as_ref().and_then(Value::scalar) {
                    a.insert(b"0".to_vec(), s.to_vec());
                }
                Value::Assoc(a)
            }
            None => Value::Assoc(Default::default()),
        }
    }

    /// `declare -a name`: a new indexed array, or the variable's string
    /// as its element 0 (bash).
    pub fn new_indexed(&self, name: &[u8]) -> Value {
        let mut m = BTreeMap::new();
        if let Some(s) = self.value(name).and_then(Value::scalar) {
            m.insert(0, s.to_vec());
        }
        Value::Indexed(m)
    }

    pub fn in_function(&self) -> bool {
        !self.scopes.is_empty()
    }

    /// `local name[=value]`: declares `name` in the innermost scope. Without
    /// a value, a new local starts unset, as in bash (`local x` then `$x`
    /// is empty).
    pub fn local(&mut self, name: &[u8], value: Option<Vec<u8>>) -> Result<(), ReadOnly> {
        self.local_value(name, value.map(Value::Str))
    }

    /// Whether `local name` is refused: a read-only global (or read-only
    /// local of this function) cannot be made local; a caller's read-only
    /// local can be (bash).
    pub fn local_refused(&self, name: &[u8]) -> bool {
        let innermost = self.scopes.len();
        match self
            .scopes
            .iter()
            .enumerate()
            .rev()
            .find_map(|(d, s)| s.get(name).map(|v| (d, v)))
        {
            Some((d, v)) => v.readonly && d + 1 == innermost,
            None => self.globals.get(name).is_some_and(|v| v.readonly),
        }
    }

    /// `local` with any kind of value.
    pub fn local_value(&mut self, name: &[u8], value: Option<Value>) -> Result<(), ReadOnly> {
        if name == b"OPTIND" {
            self.optind_assigned = true;
        }
        if self.local_refused(name) {
            return Err(ReadOnly(name.to_vec()));
        }
        let exported_outside = self.is_exported(name);
        let Some(scope) = self.scopes.last_mut() else {
            return self.set_value(name, value.unwrap_or(Value::Str(Vec::new())));
        };
        let allexport = self.allexport;
        let entry = scope.entry(name.to_vec()).or_insert_with(|| Var {
            value: None,
            exported: exported_outside,
            readonly: false,
            integer: false,
            case: None,
            nameref: false,
            dynamic: false,
            declared_only: false,
        });
        if allexport && value.is_some() {
            entry.exported = true;
        }
        if let Some(value) = value {
            let value = match entry.case {
                Some(c) => c.apply_value(value),
                None => value,
            };
            // A string given to a local that is an array already goes to
            // its element 0 (`local -a a=(); local a=0`, bash).
            match (&mut entry.value, value) {
                (Some(Value::Indexed(m)), Value::Str(s)) => {
                    m.insert(0, s);
                }
                (Some(Value::Assoc(m)), Value::Str(s)) => {
                    m.insert(b"0".to_vec(), s);
                }
                (slot, value) => *slot = Some(value),
            }
            entry.declared_only = false;
        }
        if entry.exported {
            self.env = None;
        }
        Ok(())
    }

    /// Every visible variable, sorted by name (for `set` and `export -p`).
    pub fn visible(&self) -> Vec<(Vec<u8>, Var)> {
        let mut all: HashMap<&[u8], &Var> = HashMap::default();
        for (k, v) in &self.globals {
            all.insert(k, v);
        }
        for s in &self.scopes {
            for (k, v) in s {
                all.insert(k, v);
            }
        }
        let mut out: Vec<(Vec<u8>, Var)> = all
            .into_iter()
            .map(|(k, v)| (k.to_vec(), v.clone()))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// Exports a function (`export -f`) with the text of its definition
    /// after the name, or stops exporting it (`None`).
    /// Whether the function `name` is exported.
    pub fn function_exported(&self, name: &[u8]) -> bool {
        self.functions.contains_key(name)
    }

    pub fn export_function(&mut self, name: &[u8], text: Option<Vec<u8>>) {
        match text {
            Some(t) => self.functions.insert(name.to_vec(), t),
            None => self.functions.remove(name),
        };
        self.env = None;
    }

    /// Whether the function `name` is exported.
    pub fn is_exported_function(&self, name: &[u8]) -> bool {
        self.functions.contains_key(name)
    }

    /// The environment for a child, with `extra` assignments on top.
    pub fn environment(&mut self, extra: &[(Vec<u8>, Vec<u8>)]) -> Vec<CString> {
        if self.env.is_none() {
            // A local with no value (`local V`, or unset) leaves the outer
            // value in the environment, though `$V` is empty (bash).
            let mut all: HashMap<&[u8], &Var> = HashMap::default();
            for (k, v) in self.scopes.iter().rev().flatten().chain(&self.globals) {
                if v.value.is_some() {
                    all.entry(k).or_insert(v);
                }
            }
            let mut all: Vec<(&[u8], &Var)> = all.into_iter().collect();
            all.sort_by(|a, b| a.0.cmp(b.0));
            let mut env = Vec::new();
            for (k, v) in all {
                if let (true, Some(Value::Str(value))) = (v.exported, &v.value) {
                    let kv = [k, b"=", value].concat();
                    if let Ok(c) = CString::new(kv) {
                        env.push(c);
                    }
                }
            }
            env.extend(self.foreign.iter().cloned());
            for (name, text) in &self.functions {
                let kv = [b"BASH_FUNC_", name.as_slice(), b"%%=", text].concat();
                if let Ok(c) = CString::new(kv) {
                    env.push(c);
                }
            }
            self.env = Some(env);
        }
        let base = self.env.as_ref().expect("just built");
        if extra.is_empty() {
            return base.clone();
        }
        let mut env: Vec<CString> = base
            .iter()
            .filter(|kv| {
                let b = kv.as_bytes();
                !extra
                    .iter()
                    .any(|(k, _)| b.len() > k.len() && b.starts_with(k) && b[k.len()] == b'=')
            })
            .cloned()
            .collect();
        for (k, v) in extra {
            let mut kv = k.clone();
            kv.push(b'=');
            kv.extend_from_slice(v);
            if let Ok(c) = CString::new(kv) {
                env.push(c);
            }
        }
        env
    }
}
