//! Simple commands: their words, functions, builtins and programs found
//! on PATH (with the hash table), and exec.

use super::redirect::reads_stdin;
use super::vars::{cannot_convert, converts_array_kind, observes_temp_env, written_as_element};
use super::{Exec, Flow, Frame, HASH_BUCKETS, Saved, Shell};
use crate::ast::{Function, Part, Redirect, Simple, Word};
use crate::options::OPTION_NAMES;
use crate::sys;
use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::rc::Rc;

impl Shell {
    pub(super) fn run_simple(&mut self, cmd: &Simple) -> Exec {
        // What an alias to nothing left: no command, the status stays.
        if cmd.words.is_empty() && cmd.assigns.is_empty() && cmd.redirects.is_empty() {
            return Ok(self.status);
        }
        // `set -k`: assignment words after the command name are
        // assignments too, for its environment (bash).
        if self.opts.keyword
            && cmd
                .words
                .iter()
                .any(|w| crate::parse::split_assignment(w).is_some())
        {
            let mut c = cmd.clone();
            c.words.clear();
            for w in &cmd.words {
                match crate::parse::split_assignment(w) {
                    Some(a) => c.assigns.push(a),
                    None => c.words.push(w.clone()),
                }
            }
            return self.run_simple(&c);
        }
        let outer = self.current_simple.replace(std::ptr::NonNull::from(cmd));
        let r = self.run_simple_now(cmd);
        self.current_simple = outer;
        r
    }

    /// `$BASH_COMMAND` as read now.
    pub fn bash_command(&self) -> Vec<u8> {
        match self.current_simple {
            // SAFETY: `current_simple` points to the command of a
            // `run_simple` call still on the stack (it is restored before
            // that call returns), whose `&Simple` borrow keeps it alive.
            Some(p) if !self.in_trap() => crate::unparse::simple(unsafe { p.as_ref() }),
            _ => self.bash_command.clone(),
        }
    }

    pub(super) fn run_simple_now(&mut self, cmd: &Simple) -> Exec {
        let tail = std::mem::take(&mut self.tail_ok);
        self.at_line(cmd.line);
        if !self.traps.is_empty() && !self.in_trap() {
            // For the ERR and EXIT traps, which run after the command.
            self.bash_command = crate::unparse::simple(cmd);
        }
        if self.run_debug_trap(|| crate::unparse::simple(cmd))? {
            return Ok(self.status);
        }
        self.cmdsub_status = None;
        let t0 = self.perf.as_ref().map(|_| std::time::Instant::now());
        let argv = self.expand_command_words(&cmd.words)?;
        // The function just entered no longer names messages (bash's
        // `this_command_name` moves on).
        self.fresh_call = false;
        // `$_` is the previous command's last argument while this one
        // expands, and this one's afterwards.
        self.last_arg = argv.last().cloned().unwrap_or_default();
        if argv.is_empty() {
            // Assignments (and redirections) only. The redirections come
            // first (if one fails, nothing is assigned) and stay while the
            // values expand: `x=$(cmd) 2>/dev/null` silences cmd.
            let saved = if cmd.redirects.is_empty() {
                None
            } else {
                match self.redirect(&cmd.redirects) {
                    Ok(saved) => Some(saved),
                    Err(s) => return self.redirect_flow.take().map_or(Ok(s), Err),
                }
            };
            let mut failed = None;
            for a in &cmd.assigns {
                if let Err(f) = self.assign_as(a, false, self.opts.xtrace, false) {
                    failed = Some(f);
                    break;
                }
            }
            if let Some(saved) = saved {
                self.restore(saved);
            }
            if let Some(f) = failed {
                return if self.opts.interactive { Ok(1) } else { Err(f) };
            }
            return Ok(self.cmdsub_status.unwrap_or(0));
        }
        if let (Some(p), Some(t0)) = (self.perf.as_mut(), t0) {
            p.record(crate::perf::Phase::Expand, t0.elapsed());
        }
        // Values of prefix assignments, each visible to the ones after it.
        let mut assigns = Vec::with_capacity(cmd.assigns.len());
        let mut undo = Vec::new();
        let mut refused = false;
        for a in &cmd.assigns {
            // Before a command, an element is no name to bind (bash
            // reports it and runs the command), and an array is dropped.
            if let Some(i) = &a.index {
                let shown = [a.name.as_slice(), b"[", &crate::unparse::word(i), b"]"].concat();
                self.error(&format!(
                    "`{}': not a valid identifier",
                    String::from_utf8_lossy(&shown)
                ));
                continue;
            }
            if a.array.is_some() {
                continue;
            }
            let v = self.assign_value(a)?;
            refused |= self.vars.is_readonly(&a.name);
            undo.extend(self.push_temp_vars(&[(a.name.clone(), v.clone())], true));
            assigns.push((a.name.clone(), v));
        }
        self.pop_temp_vars(undo);
        // In POSIX mode a refused prefix assignment is an assignment error:
        // the command does not run and the rest of the line is abandoned;
        // before a special builtin the shell leaves (bash).
        if refused && self.opts.posix {
            self.status = 1;
            if crate::builtins::is_special(&argv[0], true) && !self.opts.interactive {
                // bash's FORCE_EOF: 127 at the top of `-c`.
                let s = if self.opts.command_mode && !self.subshell {
                    127
                } else {
                    1
                };
                return Err(Flow::Exit(s));
            }
            return Err(Flow::Abort(1));
        }
        if self.opts.xtrace {
            self.trace(&cmd.assigns, &assigns, &argv);
        }
        let name = argv[0].clone();
        // Special builtins: errors are fatal, and in POSIX mode their
        // prefix assignments stay (in bash's own mode they last for the
        // command, as for any builtin, and so do those before `declare`,
        // `local` and `typeset`). The redirections come first, as bash
        // performs them before the assignments (`a=9 eval cmd >&$a` uses
        // the a from before).
        if crate::builtins::is_special(&name, self.opts.posix) {
            let saved = match self.redirect(&cmd.redirects) {
                Ok(s) => s,
                Err(s) => {
                    if let Some(f) = self.redirect_flow.take() {
                        return Err(f);
                    }
                    // A failed redirection ends the shell in POSIX mode
                    // only (bash).
                    return if self.opts.interactive || !self.opts.posix {
                        Ok(s)
                    } else {
                        Err(Flow::Exit(s))
                    };
                }
            };
            let mut temp = None;
            if self.opts.posix {
                for (k, v) in &assigns {
                    // They stay, exported, as bash merges its temporary
                    // environment.
                    if let Err(e) = self.vars.set(k, v.clone()) {
                        self.error(&e.to_string());
                        self.restore(saved);
                        return Err(Flow::Exit(1));
                    }
                    let _ = self.vars.export(k, None);
                    // `v=1 f` then `v=2 return` in f: v is 2 after f.
                    if self.prefix_bound.contains(&(self.func_depth, k.clone())) {
                        let _ = self.vars.set_in_caller(k, v.clone());
                    }
                }
            } else if !assigns.is_empty() {
                temp = Some(self.push_temp_vars(&assigns, false));
            }
            let exported = if temp.is_some() && observes_temp_env(&name, &argv) {
                self.export_temps(&assigns)
            } else {
                Vec::new()
            };
            if name == b"exec" && (argv.len() == 1 || argv.len() == 2 && argv[1] == b"--") {
                // `exec` alone: its redirections stay.
                self.forget(saved);
                if let Some(undo) = temp {
                    self.pop_temp_vars(undo);
                }
                return Ok(0);
            }
            if name == b"exec" {
                self.exec_env.clone_from(&assigns);
            }
            // `export v` or `readonly v` in a function called as `v=t f`:
            // v outlasts the call, in the caller's scope (bash's
            // att_propagate).
            if matches!(name.as_slice(), b"export" | b"readonly") && !self.prefix_bound.is_empty() {
                for a in argv[1..].iter().filter(|a| !a.starts_with(b"-")) {
                    let n = a.split(|&c| c == b'=').next().unwrap_or_default();
                    if self.is_prefix_bound(n) {
                        self.propagate.push((self.func_depth, n.to_vec()));
                    }
                }
            }
            let via = std::mem::replace(&mut self.via_command, false);
            let r = crate::builtins::run_builtin(self, &argv).unwrap_or(Ok(127));
            self.via_command = via;
            self.exec_env.clear();
            if let Some(mut undo) = temp {
                self.keep_promoted(&argv, &mut undo);
                self.unexport_temps(exported, &undo);
                self.pop_temp_vars(undo);
            }
            self.restore(saved);
            return r;
        }
        if let Some(f) = self.functions.get(&name).cloned() {
            return self.call_function(&f, &argv, &assigns, &cmd.redirects);
        }
        if crate::builtins::is_builtin(self, &name) {
            let saved = match self.redirect(&cmd.redirects) {
                Ok(s) => s,
                Err(s) => return self.redirect_flow.take().map_or(Ok(s), Err),
            };
            // `command exec >file`: exec alone, its redirections stay.
            if name == b"command" && argv.len() == 2 && argv[1] == b"exec" {
                self.forget(saved);
                return Ok(0);
            }
            // `z=y local z` in a function: names that were not local yet.
            let declares = self.vars.in_function()
                && !assigns.is_empty()
                && matches!(name.as_slice(), b"local" | b"declare" | b"typeset");
            // (A function call's own prefix binding, `z=42 f`, counts as
            // not local: bash keeps it in a layer of its own.)
            let fresh: Vec<bool> = if declares {
                assigns
                    .iter()
                    .map(|(k, _)| {
                        !self.vars.local_here(k)
                            || self.prefix_bound.contains(&(self.func_depth, k.clone()))
                    })
                    .collect()
            } else {
                Vec::new()
            };
            let mut old = self.push_temp_vars(&assigns, false);
            let exported = if observes_temp_env(&name, &argv) {
                self.export_temps(&assigns)
            } else {
                Vec::new()
            };
            let r = crate::builtins::run_builtin(self, &argv).unwrap_or(Ok(127));
            self.keep_promoted(&argv, &mut old);
            if declares {
                self.settle_temp_locals(&assigns, &fresh, &mut old);
            }
            self.unexport_temps(exported, &old);
            self.pop_temp_vars(old);
            self.restore(saved);
            return r;
        }
        self.run_external(&argv, &assigns, &cmd.redirects, tail)
    }

    /// Expands a command's words. For declaration builtins (`declare`,
    /// `local`, `export`, `readonly`, `typeset`), arguments that look like
    /// assignments expand as assignments: no field splitting, no globbing,
    /// and `name=(…)` arrays are assigned here.
    pub(super) fn expand_command_words(&mut self, words: &[Word]) -> Result<Vec<Vec<u8>>, Flow> {
        let decl = words
            .first()
            .and_then(Word::as_plain)
            .filter(|w| {
                matches!(
                    *w,
                    b"declare" | b"typeset" | b"local" | b"export" | b"readonly"
                )
            })
            .filter(|w| !self.functions.contains_key(*w));
        let Some(decl) = decl else {
            // `unset a[$k]`: an argument written as an element is one
            // already expanded; `unset` takes its subscript as it is
            // (bash 5.2). A quoted one (`unset 'a[$k]'`) it expands.
            // So do read, printf -v, wait -p and test -v with
            // `assoc_expand_once` (they take such a name as written).
            if let Some(first @ (b"unset" | b"read" | b"printf" | b"wait" | b"test" | b"[")) =
                words.first().and_then(Word::as_plain)
                && !self.functions.contains_key(first)
                && words[1..].iter().any(written_as_element)
            {
                let mut out = vec![first.to_vec()];
                let mut literal = Vec::new();
                for w in &words[1..] {
                    let fields = self.expand_words(std::slice::from_ref(w))?;
                    if fields.len() == 1 && written_as_element(w) {
                        literal.push(out.len());
                    }
                    out.extend(fields);
                }
                self.literal_args = literal.iter().map(|&i| out[i].clone()).collect();
                return Ok(out);
            }
            self.literal_args.clear();
            return self.expand_words(words);
        };
        let mut out = vec![decl.to_vec()];
        for w in &words[1..] {
            let flags: Vec<u8> = out[1..]
                .iter()
                .filter(|a| a.starts_with(b"-"))
                .flat_map(|a| a[1..].to_vec())
                .collect();
            let local = match decl {
                b"local" => true,
                b"declare" | b"typeset" => self.vars.in_function() && !flags.contains(&b'g'),
                _ => false,
            };
            if let [Part::ArrayAssign(a)] = w.parts.as_slice() {
                // `declare -A a=(…)` on an indexed `a` (or `-a` on an
                // associative one) is refused by `declare` itself, below:
                // nothing is assigned.
                let global = flags.contains(&b'g') && self.vars.in_function();
                let cur = if global {
                    let scopes = self.vars.take_scopes();
                    let v = self.vars.value(&a.name).cloned();
                    self.vars.restore_scopes(scopes);
                    v
                } else {
                    self.vars.value(&a.name).cloned()
                };
                // A new local that inherits (`localvar_inherit`, `-I`) is
                // converted as the variable it inherits would be.
                let inherits = local
                    && !self.vars.local_here(&a.name)
                    && (flags.contains(&b'I') || self.shopts.on("localvar_inherit"));
                if (!local || inherits) && converts_array_kind(&flags, cur.as_ref()) {
                    let to = if flags.contains(&b'A') { b'A' } else { b'a' };
                    let msg = cannot_convert(to, &a.name);
                    // At the top level an assignment error abandons the
                    // line; in a function bash names the function and
                    // `declare` goes on to refuse it too.
                    if self.func_depth == 0 {
                        return Err(self.abandon(&msg, 1));
                    }
                    self.fn_prefixed_error(&msg);
                    out.push(a.name.clone());
                    continue;
                }
                // A local over a read-only name: bash names the function,
                // and `local` goes on to refuse it too.
                if local && self.func_depth > 0 && self.vars.local_refused(&a.name) {
                    let msg = format!("{}: readonly variable", String::from_utf8_lossy(&a.name));
                    self.fn_prefixed_error(&msg);
                    out.push(a.name.clone());
                    continue;
                }
                // `declare -g a=(…)` in a function: the global one.
                let scopes = (flags.contains(&b'g') && decl != b"local" && self.vars.in_function())
                    .then(|| self.vars.take_scopes());
                // `declare +i a=(…)`: the attribute goes before the values.
                let off: Vec<u8> = out[1..]
                    .iter()
                    .filter(|a| a.starts_with(b"+"))
                    .flat_map(|a| a[1..].to_vec())
                    .collect();
                if off.contains(&b'i') {
                    self.vars.clear_integer(&a.name);
                }
                if off.iter().any(|&c| crate::vars::Case::of_flag(c).is_some()) {
                    self.vars.set_case(&a.name, None);
                }
                let r = self.declare_array(a, &flags, local);
                if let Some(s) = scopes {
                    self.vars.restore_scopes(s);
                }
                r?;
                out.push(a.name.clone());
                continue;
            }
            match crate::parse::split_assignment(w) {
                Some(a) if a.index.is_none() => {
                    // `typeset -i x+=5`: the attribute comes first; with
                    // -a or -A, `declare` evaluates each element itself
                    // (`declare -ai a='(1 2)'`).
                    let array = flags.iter().any(|&c| matches!(c, b'a' | b'A'));
                    let v = self.assign_value_as(&a, flags.contains(&b'i') && !array, false)?;
                    let mut arg = a.name;
                    arg.push(b'=');
                    arg.extend_from_slice(&v);
                    out.push(arg);
                }
                // `declare m[k]=v`: an assignment word too, passed on as
                // `m[k]=v` with its subscript and value expanded.
                Some(a) => {
                    let idx = a
                        .index
                        .as_ref()
                        .map(|i| self.expand_string(i))
                        .transpose()?;
                    let mut arg = a.name.clone();
                    arg.push(b'[');
                    arg.extend_from_slice(&idx.unwrap_or_default());
                    arg.extend_from_slice(b"]=");
                    arg.extend_from_slice(&self.expand_assignment(&a.value)?);
                    out.push(arg);
                }
                _ => out.extend(self.expand_words(std::slice::from_ref(w))?),
            }
        }
        Ok(out)
    }

    pub(super) fn call_function(
        &mut self,
        f: &Rc<Function>,
        argv: &[Vec<u8>],
        assigns: &[(Vec<u8>, Vec<u8>)],
        redirects: &[Redirect],
    ) -> Exec {
        const MAX_FUNC_DEPTH: u32 = 1000;
        // FUNCNEST (bash): a positive limit on the nesting, past which the
        // command being run is abandoned with status 1.
        if let Some(limit) = self
            .vars
            .get(b"FUNCNEST")
            .and_then(|v| std::str::from_utf8(v).ok()?.trim().parse::<u32>().ok())
            .filter(|&n| n > 0)
            && self.func_depth >= limit
        {
            self.error(&format!(
                "{}: maximum function nesting level exceeded ({limit})",
                String::from_utf8_lossy(&f.name)
            ));
            return Err(Flow::Abort(1));
        }
        if self.func_depth >= MAX_FUNC_DEPTH {
            self.error(&format!(
                "{}: maximum function nesting level exceeded ({MAX_FUNC_DEPTH})",
                String::from_utf8_lossy(&f.name)
            ));
            return Err(Flow::Exit(1));
        }
        let saved = match self.redirect(redirects) {
            Ok(s) => s,
            Err(s) => return self.redirect_flow.take().map_or(Ok(s), Err),
        };
        let saved_f = if f.redirects.is_empty() {
            None
        } else {
            match self.redirect(&f.redirects) {
                Ok(s) => Some(s),
                Err(s) => {
                    self.restore(saved);
                    return Ok(s);
                }
            }
        };
        // `f() { …; } <file`: a background command in f reads the file.
        let stdin = u32::from(reads_stdin(&f.redirects));
        self.stdin_redirected += stdin;
        let old_pos = std::mem::replace(&mut self.positional, argv[1..].to_vec());
        // A function's lines are its own, wherever it is called from.
        let line_shift = std::mem::take(&mut self.line_shift);
        let getopts_state = self.getopts_state;
        self.vars.push_scope();
        for (k, v) in assigns {
            let _ = self.vars.local(k, Some(v.clone()));
            let _ = self.vars.export(k, None);
            self.prefix_bound.push((self.func_depth + 1, k.clone()));
        }
        // A function inherits the ERR trap only with `set -E`, and the
        // DEBUG and RETURN traps only with `set -T`; the ones it does not
        // inherit are back when it returns, unless it set its own.
        let traced = !self.traced.is_empty() && self.traced.contains(&f.name);
        let hidden = self.hide_traps(traced);
        self.func_depth += 1;
        let file = self
            .function_files
            .get(&f.name)
            .cloned()
            .unwrap_or_else(|| self.current_file());
        let call_line = self.line;
        let args = self.extdebug.then(|| argv[1..].to_vec());
        self.frames.push(Frame {
            name: f.name.clone(),
            file,
            call_line,
            saved_opts: None,
            args,
        });
        // Traced (`set -T`, `declare -ft`): a DEBUG trap as the function
        // starts, on the line its body starts (bash).
        if !self.traps.is_empty() && (traced || self.functrace()) {
            self.at_line(f.body_line);
            self.run_debug_trap(|| f.name.clone())?;
        }
        self.fresh_call = true;
        let r = self.run_compound(&f.body);
        self.fresh_call = false;
        // Having run to its end, the function is at its definition's line
        // for the RETURN trap (after `return`, at the return's) (bash).
        if r.is_ok() && !self.traps.is_empty() {
            self.line = f.line;
        }
        let r = self.run_return_trap(r);
        if let Some(opts) = self.frames.pop().and_then(|f| f.saved_opts) {
            for (name, _) in OPTION_NAMES {
                let on = opts.get(name).unwrap_or(false);
                if self.opts.get(name) != Some(on) {
                    self.set_option(name, on);
                }
            }
        }
        let mut propagated = Vec::new();
        if !assigns.is_empty() {
            let depth = self.func_depth;
            self.prefix_bound.retain(|(d, _)| *d < depth);
            if !self.propagate.is_empty() {
                for (_, n) in self.propagate.extract_if(.., |(d, _)| *d >= depth) {
                    if let Some(v) = self.vars.var(&n) {
                        propagated.push((n, v.clone()));
                    }
                }
            }
        }
        self.func_depth -= 1;
        self.line_shift = line_shift;
        // Back at the call: LINENO (and an ERR trap for a failed call) is
        // the call's line again.
        self.line = call_line;
        self.unhide_traps(hidden);
        // A function with its own OPTIND has its own place in the
        // arguments too: the caller's getopts goes on where it was (bash).
        if self.vars.local_here(b"OPTIND") {
            self.getopts_state = getopts_state;
        }
        self.vars.pop_scope();
        for (n, v) in propagated {
            if let Some(value) = v.value {
                let _ = self.vars.set_value(&n, value);
            }
            let _ = self.vars.export(&n, None);
            if v.readonly {
                let _ = self.vars.readonly(&n, None);
            }
        }
        self.positional = old_pos;
        self.stdin_redirected -= stdin;
        if let Some(s) = saved_f {
            self.restore(s);
        }
        self.restore(saved);
        match r {
            Err(Flow::Return(s)) => Ok(s),
            other => other,
        }
    }

    /// Finds a command in PATH, through the hash table (a hit for an
    /// entry there), without adding to it (`type`, `command -v`, `exec`).
    pub fn find_command(&mut self, name: &[u8]) -> Option<CString> {
        self.find_command_as(name, None, false)
    }

    /// Finds a command to run, in `path` (a `PATH=` prefix, `command -p`)
    /// or, if `None`, in `$PATH` through the hash table, which remembers
    /// it (with `set -h`, the default).
    pub fn find_command_in(&mut self, name: &[u8], path: Option<&[u8]>) -> Option<CString> {
        self.find_command_as(name, path, true)
    }

    /// Remembers `path` for `name`, with `hits` uses so far.
    pub fn hash_insert(&mut self, name: &[u8], path: CString, hits: u32) {
        self.hash_seq += 1;
        let seq = self.hash_seq;
        self.hash.insert(name.to_vec(), Hashed { path, hits, seq });
    }

    pub(super) fn find_command_as(
        &mut self,
        name: &[u8],
        path: Option<&[u8]>,
        remember: bool,
    ) -> Option<CString> {
        if name.contains(&b'/') {
            return CString::new(name).ok();
        }
        if path.is_none()
            && let Some(h) = self.hash.get_mut(name)
        {
            h.hits += 1;
            return Some(h.path.clone());
        }
        let cache = remember && path.is_none() && self.opts.hashall;
        let path = match path {
            Some(p) => p.to_vec(),
            None => self
                .vars
                .get(b"PATH")
                .map(<[u8]>::to_vec)
                .unwrap_or_else(|| DEFAULT_PATH.to_vec()),
        };
        for dir in path.split(|&c| c == b':') {
            let mut full = if dir.is_empty() {
                b".".to_vec()
            } else {
                dir.to_vec()
            };
            full.push(b'/');
            full.extend_from_slice(name);
            let Ok(c) = CString::new(full) else { continue };
            if is_executable_file(&c) {
                if cache {
                    self.hash_insert(name, c.clone(), 1);
                }
                return Some(c);
            }
        }
        None
    }

    /// Runs an external command by name (for `command`); with
    /// `default_path`, found in the default PATH (`command -p`).
    pub(super) fn run_external_argv(&mut self, argv: &[Vec<u8>], default_path: bool) -> Exec {
        if default_path {
            let p = vec![(b"PATH".to_vec(), DEFAULT_PATH.to_vec())];
            return self.run_external(argv, &p, &[], false);
        }
        self.run_external(argv, &[], &[], false)
    }

    pub(super) fn run_external(
        &mut self,
        argv: &[Vec<u8>],
        assigns: &[(Vec<u8>, Vec<u8>)],
        redirects: &[Redirect],
        tail: bool,
    ) -> Exec {
        let name = &argv[0];
        if self.opts.restricted && name.contains(&b'/') {
            self.error(&format!(
                "{}: restricted: cannot specify `/' in command names",
                String::from_utf8_lossy(name)
            ));
            return Ok(1);
        }
        // `PATH=dir cmd` looks cmd up in that PATH.
        let prefix_path = assigns
            .iter()
            .rev()
            .find(|(k, _)| k == b"PATH")
            .map(|(_, v)| v.clone());
        let Some(path) = self.find_command_in(name, prefix_path.as_deref()) else {
            // Redirections are still performed (and may fail first), and
            // the message goes where they send stderr (`cmd 2>/dev/null`).
            let saved = match self.redirect(redirects) {
                Ok(saved) => saved,
                Err(s) => return Ok(s),
            };
            self.error(&format!(
                "{}: command not found",
                String::from_utf8_lossy(name)
            ));
            self.restore(saved);
            return Ok(127);
        };
        let cargv: Vec<CString> = argv
            .iter()
            .map(|a| CString::new(a.as_slice()).unwrap_or_default())
            .collect();
        // An exported SHELLOPTS goes to the child with the options as
        // they are now (it is computed, never stored).
        let with_opts;
        let assigns = if self.vars.var(b"SHELLOPTS").is_some_and(|v| v.exported) {
            with_opts = [
                assigns,
                &[(b"SHELLOPTS".to_vec(), self.opts.shellopts().into_bytes())],
            ]
            .concat();
            &with_opts
        } else {
            assigns
        };
        let env = self.vars.environment(assigns);
        let saved = match self.redirect(redirects) {
            Ok(s) => s,
            Err(s) => return Ok(s),
        };
        if tail && !self.in_trap() && self.traps.is_empty() {
            // Nothing follows: become the command (no fork).
            self.perf_report();
            let e = sys::exec(&path, &cargv, &env);
            self.restore(Saved::default());
            return Ok(self.exec_failed(name, &path, e, &cargv, &env));
        }
        let t0 = self.perf.as_ref().map(|_| std::time::Instant::now());
        let spawned = sys::spawn(&path, &cargv, &env, self.job_pgrp());
        if let (Some(p), Some(t0)) = (self.perf.as_mut(), t0) {
            p.record(crate::perf::Phase::Spawn, t0.elapsed());
        }
        let spawned = match spawned {
            Ok(pid) => Ok(pid),
            // Reported, or run as a script, with the redirections still
            // in place.
            Err(e) => Err(self.exec_failed(name, &path, e, &cargv, &env)),
        };
        self.restore(saved);
        match spawned {
            Ok(pid) => {
                self.job_joined(pid);
                let t1 = self.perf.as_ref().map(|_| std::time::Instant::now());
                let status = self.wait_child(pid);
                if let (Some(p), Some(t1)) = (self.perf.as_mut(), t1) {
                    p.record(crate::perf::Phase::Wait, t1.elapsed());
                }
                Ok(status)
            }
            Err(status) => Ok(status),
        }
    }

    /// After a failed exec or spawn: run the file as a script (ENOEXEC), or
    /// report and return 126/127.
    pub(super) fn exec_failed(
        &mut self,
        name: &[u8],
        path: &CStr,
        e: nix::Error,
        argv: &[CString],
        env: &[CString],
    ) -> i32 {
        let shown = String::from_utf8_lossy(name);
        match e {
            nix::Error::ENOEXEC => {
                // A script without #!: run it with this shell.
                let self_exe = std::env::current_exe().ok();
                if let Some(exe) =
                    self_exe.and_then(|p| CString::new(p.as_os_str().as_bytes()).ok())
                {
                    let mut args = vec![CString::new("rush").unwrap_or_default()];
                    // bash's child resets the shell options, all but
                    // globskipdots (on by default).
                    if !self.shopts.on("globskipdots") {
                        args.push(CString::new("+O").unwrap_or_default());
                        args.push(CString::new("globskipdots").unwrap_or_default());
                    }
                    args.push(path.to_owned());
                    args.extend(argv[1..].iter().cloned());
                    match sys::spawn(&exe, &args, env, self.job_pgrp()) {
                        Ok(pid) => {
                            self.job_joined(pid);
                            return self.wait_child(pid);
                        }
                        Err(_) => return 126,
                    }
                }
                126
            }
            nix::Error::ENOENT => {
                self.error(&format!("{shown}: No such file or directory"));
                127
            }
            nix::Error::EACCES | nix::Error::EISDIR | nix::Error::EPERM => {
                let msg = if std::path::Path::new(std::ffi::OsStr::from_bytes(path.to_bytes()))
                    .is_dir()
                {
                    "Is a directory".to_string()
                } else {
                    io::Error::from(e)
                        .to_string()
                        .split(" (os error")
                        .next()
                        .unwrap_or("")
                        .to_string()
                };
                self.error(&format!("{shown}: {msg}"));
                126
            }
            e => {
                let msg = io::Error::from(e).to_string();
                self.error(&format!(
                    "{shown}: {}",
                    msg.split(" (os error").next().unwrap_or("")
                ));
                126
            }
        }
    }
}

/// The search path when PATH is unset, and for `command -p`.
pub const DEFAULT_PATH: &[u8] = b"/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";

pub(crate) fn is_executable_file(path: &CStr) -> bool {
    match rustix::fs::stat(path) {
        Ok(st) => {
            rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::RegularFile
                && rustix::fs::access(path, rustix::fs::Access::EXEC_OK).is_ok()
        }
        Err(_) => false,
    }
}

/// A command's path in the hash table (`hash`).
#[derive(Debug, Clone)]
pub struct Hashed {
    pub path: CString,
    /// Times it was looked up since it was remembered (bash's hits).
    pub hits: u32,
    /// When it was remembered, for bash's order.
    pub seq: u64,
}

/// The order bash lists its hash table in: by bucket (FNV-1 of the name,
/// C's signed chars), newest first within one.
pub fn hash_order(name: &[u8], seq: u64) -> (u32, std::cmp::Reverse<u64>) {
    (
        crate::assoc::hash(name) & (HASH_BUCKETS - 1),
        std::cmp::Reverse(seq),
    )
}

impl Shell {
    /// Whether `path` may go into the command hash table (`hash -p`,
    /// `BASH_CMDS[name]=`): anything, unless the shell is restricted, where it
    /// must be a name without `/` that `PATH` finds (bash).
    pub fn restricted_hash_target(&mut self, who: &str, path: &[u8]) -> bool {
        if !self.opts.restricted {
            return true;
        }
        let problem = if path.contains(&b'/') {
            "restricted"
        } else if self.find_command(path).is_none() {
            "not found"
        } else {
            return true;
        };
        self.error(&format!("{who}{}: {problem}", crate::escape::lossy(path)));
        false
    }
}
