//! `bind`: the line editor's key bindings and variables, as bash's `bind`
//! sets and reports readline's. The state is [`crate::keymap`]; the
//! interactive shell applies it to its editor before each prompt.

use super::{Args, emit, getopt, lossy};
use crate::keymap::{self, Map};
use crate::shell::{Exec, Shell};
use std::os::unix::ffi::OsStrExt;

const USAGE: &str = "bind: usage: bind [-lpsvPSVX] [-m keymap] [-f filename] [-q name] [-u name] [-r keyseq] [-x keyseq:shell-command] [keyseq:readline-function or readline-command]";

pub fn bind(sh: &mut Shell, argv: Args<'_>) -> Exec {
    if !sh.opts.interactive {
        sh.error("bind: warning: line editing not enabled");
    }
    let Ok((opts, first)) = getopt(sh, argv, b"lvpVPsSXf:q:u:m:r:x:", USAGE) else {
        return Ok(2);
    };
    let has = |c: u8| opts.iter().any(|o| o.letter == c);
    let arg = |c: u8| {
        opts.iter()
            .rev()
            .find(|o| o.letter == c)
            .and_then(|o| o.arg.clone())
    };
    let vi = sh.opts.vi;
    let (map, prefix) = match arg(b'm') {
        Some(name) => match Map::by_name(&lossy(&name)) {
            Some(m) => m,
            None => {
                sh.error(&format!("bind: `{}': invalid keymap name", lossy(&name)));
                return Ok(1);
            }
        },
        None => sh.keymaps.current(vi),
    };
    let mut out = String::new();
    if has(b'l') {
        for f in keymap::FUNCTIONS {
            out.push_str(f);
            out.push('\n');
        }
    }
    if has(b'p') {
        out.push_str(&sh.keymaps.dump_functions(map, true));
    }
    if has(b'P') {
        out.push_str(&sh.keymaps.dump_functions(map, false));
    }
    if has(b's') {
        out.push_str(&sh.keymaps.dump_macros(map, true, false));
    }
    if has(b'S') {
        out.push_str(&sh.keymaps.dump_macros(map, false, false));
    }
    if has(b'v') {
        out.push_str(&sh.keymaps.dump_variables(true, vi));
    }
    if has(b'V') {
        out.push_str(&sh.keymaps.dump_variables(false, vi));
    }
    let mut status = emit(sh, "bind", out.as_bytes());
    let mut report = |sh: &mut Shell, out: String| {
        let s = emit(sh, "bind", out.as_bytes());
        if s != 0 {
            status = s;
        }
    };
    if let Some(file) = arg(b'f') {
        let before = sh.keymaps.variable("editing-mode");
        match std::fs::read(std::ffi::OsStr::from_bytes(&file)) {
            Ok(text) => {
                let term = sh.vars.get(b"TERM").map(lossy).unwrap_or_default();
                for e in sh.keymaps.read_init(&lossy(&file), &text, &term, vi, 0) {
                    sh.err_out(format!("{e}\n").as_bytes());
                }
                sync_mode(sh, before);
            }
            Err(e) => {
                let m = crate::shell::io_text(&e);
                sh.error(&format!("bind: {}: cannot read: {m}", lossy(&file)));
                return Ok(1);
            }
        }
    }
    if let Some(name) = arg(b'q') {
        let name = lossy(&name);
        if !keymap::is_function(&name) {
            sh.error(&format!("bind: `{name}': unknown function name"));
            return Ok(1);
        }
        let keys = sh.keymaps.keys_of(map, &name);
        if keys.is_empty() {
            report(sh, format!("{name} is not bound to any keys.\n"));
            return Ok(1);
        }
        // bash names five and marks the rest.
        let shown: Vec<String> = keys
            .iter()
            .take(5)
            .map(|k| format!("\"{}\"", keymap::untranslate(k)))
            .collect();
        let end = if keys.len() > 5 { "...\n" } else { ".\n" };
        report(
            sh,
            format!("{name} can be invoked via {}{end}", shown.join(", ")),
        );
    }
    if let Some(name) = arg(b'u') {
        let name = lossy(&name);
        if !keymap::is_function(&name) {
            sh.error(&format!("bind: `{name}': unknown function name"));
            return Ok(1);
        }
        sh.keymaps.unbind_function(map, &name);
    }
    if let Some(seq) = arg(b'r') {
        let seq = [prefix, &keymap::translate(&seq)].concat();
        if seq.is_empty() {
            sh.error(&format!("bind: `{}': cannot unbind", lossy(&seq)));
            return Ok(1);
        }
        sh.keymaps.unbind(map, &seq);
        return Ok(status);
    }
    if let Some(spec) = arg(b'x')
        && let Err(e) = bind_in(sh, map, prefix, |k, vi| k.bind_command(&spec, vi))
    {
        sh.error(&format!("bind: {e}"));
        return Ok(1);
    }
    if has(b'X') {
        let text = sh.keymaps.dump_macros(map, true, true);
        report(sh, text);
    }
    for a in &argv[first..] {
        let before = sh.keymaps.variable("editing-mode");
        if let Err(e) = bind_in(sh, map, prefix, |k, vi| k.parse_and_bind(a, vi)) {
            sh.err_out(format!("readline: {e}\n").as_bytes());
        }
        sync_mode(sh, before);
    }
    Ok(status)
}

/// Runs `f` with `-m`'s keymap as the current one.
fn bind_in(
    sh: &mut Shell,
    map: Map,
    prefix: &[u8],
    f: impl FnOnce(&mut keymap::Keymaps, bool) -> Result<(), String>,
) -> Result<(), String> {
    let name = match (map, prefix) {
        (Map::Emacs, b"\x1b") => "emacs-meta",
        (Map::Emacs, b"\x18") => "emacs-ctlx",
        (Map::Emacs, _) => "emacs",
        (Map::ViInsert, _) => "vi-insert",
        (Map::ViCommand, _) => "vi-command",
    };
    let saved = sh.keymaps.variable("keymap").unwrap_or_default();
    let _ = sh.keymaps.set_variable("keymap", name);
    let r = f(&mut sh.keymaps, map != Map::Emacs);
    let _ = sh.keymaps.set_variable("keymap", &saved);
    r
}

/// `set editing-mode vi` is `set -o vi`, as in bash.
fn sync_mode(sh: &mut Shell, before: Option<String>) {
    let now = sh.keymaps.variable("editing-mode");
    if now != before {
        let vi = now.as_deref() == Some("vi");
        sh.opts.vi = vi;
        sh.opts.emacs = !vi;
    }
}
