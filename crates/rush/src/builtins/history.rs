//! `history`: list, delete from and save the command history (see
//! [`crate::history`]).

use super::{Args, emit, lossy};
use crate::history::Control;
use crate::shell::{Exec, Run, Shell};

pub fn history(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let mut args = &argv[1..];
    let (size, filesize, _) = sh.history_settings();
    // One file operation at a time.
    let file_ops = args
        .iter()
        .take_while(|a| a.starts_with(b"-") && a.as_slice() != b"--")
        .filter(|a| matches!(a.as_slice(), b"-a" | b"-n" | b"-r" | b"-w"))
        .count();
    if file_ops > 1 {
        sh.error("history: cannot use more than one of -anrw");
        return Ok(1);
    }
    while let Some(a) = args.first() {
        match a.as_slice() {
            b"--" => {
                args = &args[1..];
                break;
            }
            b"-c" => {
                sh.history.clear();
                args = &args[1..];
            }
            b"-d" => {
                let Some(spec) = args.get(1) else {
                    sh.error("history: -d: option requires an argument");
                    return Ok(2);
                };
                // `N`, or a range `A-B` (bash 5.2); a negative number
                // counts back from the end.
                let dash = spec.iter().skip(1).position(|&c| c == b'-').map(|p| p + 1);
                let (a, b) = match dash {
                    Some(p) => (&spec[..p], Some(&spec[p + 1..])),
                    None => (&spec[..], None),
                };
                let h = &sh.history;
                let index = |t: &[u8]| -> Option<usize> {
                    let n: i64 = std::str::from_utf8(t).ok()?.parse().ok()?;
                    let i = if n < 0 {
                        h.entries.len().checked_sub(n.unsigned_abs() as usize)?
                    } else {
                        (n as usize).checked_sub(h.first)?
                    };
                    (i < h.entries.len()).then_some(i)
                };
                let legal =
                    |t: &[u8]| std::str::from_utf8(t).is_ok_and(|t| t.parse::<i64>().is_ok());
                // bash names the part that is out of range, or the whole
                // argument when a part is not a number.
                let out_of_range = |sh: &Shell, t: &[u8]| {
                    sh.error(&format!(
                        "history: {}: history position out of range",
                        lossy(t)
                    ));
                    Ok(1)
                };
                if !legal(a) || b.is_some_and(|b| !legal(b)) {
                    return out_of_range(sh, spec);
                }
                let Some(lo) = index(a) else {
                    return out_of_range(sh, a);
                };
                let hi = match b {
                    Some(b) => match index(b) {
                        Some(j) => j,
                        None => return out_of_range(sh, b),
                    },
                    None => lo,
                };
                let h = &mut sh.history;
                if lo <= hi {
                    h.entries.drain(lo..=hi);
                    // Entries already in the file before the cut.
                    let in_file = h.saved;
                    h.saved = in_file.min(lo) + in_file.saturating_sub(hi + 1);
                    h.generation += 1;
                }
                return Ok(0);
            }
            b"-s" => {
                let line = args[1..].join(&b' ');
                // The first `history -s` of a line typed at the prompt
                // replaces that line's entry; the next ones add (bash).
                if std::mem::take(&mut sh.history.line_entry) {
                    sh.history.entries.pop();
                }
                sh.history.add(&line, Control::default(), size);
                return Ok(0);
            }
            b"-p" => {
                let mut out = Vec::new();
                for a in &args[1..] {
                    match crate::history::expand(&sh.history, a) {
                        Ok(e) => out.extend_from_slice(&e.unwrap_or_else(|| a.clone())),
                        Err(_) => {
                            sh.error(&format!("history: {}: history expansion failed", lossy(a)));
                            return Ok(1);
                        }
                    }
                    out.push(b'\n');
                }
                return Ok(emit(sh, "history", &out));
            }
            f @ (b"-a" | b"-w" | b"-r" | b"-n") => {
                if let Some(named) = args.get(1)
                    && named.contains(&b'/')
                    && sh.opts.restricted
                {
                    sh.error(&format!("history: {}: restricted", lossy(named)));
                    return Ok(1);
                }
                let Some(path) = args.get(1).cloned().or_else(|| sh.history_file()) else {
                    return Ok(0);
                };
                let r = match f {
                    b"-a" => sh.history.append_to_file(&path, filesize),
                    b"-w" => sh.history.write_file(&path),
                    _ => {
                        sh.history.load(&path, size);
                        Ok(())
                    }
                };
                if let Err(e) = r {
                    let m = crate::shell::io_text(&e);
                    sh.error(&format!("history: {}: {m}", lossy(&path)));
                    return Ok(1);
                }
                return Ok(0);
            }
            a if a.starts_with(b"-") && a.len() > 1 && !a[1].is_ascii_digit() => {
                sh.error(&format!("history: {}: invalid option", lossy(a)));
                sh.usage("history: usage: history [-c] [-d offset] [n] or history -anrw [filename] or history -ps arg [arg...]");
                return Ok(2);
            }
            _ => break,
        }
    }
    let h = &sh.history;
    let count = match args.first() {
        Some(n) => match std::str::from_utf8(n)
            .ok()
            .and_then(|s| s.parse::<usize>().ok())
        {
            Some(n) => n,
            None => {
                sh.error(&format!("history: {}: numeric argument required", lossy(n)));
                return Ok(1);
            }
        },
        None => h.entries.len(),
    };
    let skip = h.entries.len().saturating_sub(count);
    let mut out = Vec::new();
    for (i, e) in h.entries.iter().enumerate().skip(skip) {
        out.extend_from_slice(format!("{:5}  ", h.first + i).as_bytes());
        out.extend_from_slice(e);
        out.push(b'\n');
    }
    Ok(emit(sh, "history", &out))
}

/// `fc`: lists commands of the history (`-l`, with `-n` and `-r`), runs
/// one again with a substitution (`-s [pat=rep] [command]`, or `-e -`),
/// or edits a range in an editor (`-e ename`, else FCEDIT, EDITOR, vi) and
/// runs what the editor leaves. The `fc` line itself is not in the range:
/// by default listing shows the 16 commands before it, and the others
/// take the one before it.
pub fn fc(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let Ok((opts, i)) = super::getopt(sh, argv, b"#e:lnrs", FC_USAGE) else {
        return Ok(2);
    };
    let has = |c: u8| opts.iter().any(|o| o.letter == c);
    let (list, numbers, reverse, again) = (has(b'l'), !has(b'n'), has(b'r'), has(b's'));
    let editor: Option<Vec<u8>> = opts.iter().rev().find_map(|o| o.arg.clone());
    let args = &argv[i..];
    // The numbers of the commands before this `fc` line (which is the
    // last entry unless HISTIGNORE or HISTCONTROL kept it out).
    let h = &sh.history;
    let last_number = (h.first + h.entries.len()).saturating_sub(1);
    let before = last_number.saturating_sub(usize::from(h.line_entry));
    // Outside listing, 0 (or -0) names no command (bash 5.2).
    if !list
        && let Some(a) = args.iter().find(|a| !a.contains(&b'='))
        && std::str::from_utf8(a).is_ok_and(|t| t.parse::<i64>() == Ok(0))
    {
        sh.error(if again {
            "fc: no command found"
        } else {
            "fc: history specification out of range"
        });
        return Ok(1);
    }
    if again || editor.as_deref() == Some(b"-") {
        return fc_again(sh, args, before);
    }
    if h.entries.len() < 2 && !list {
        sh.error("fc: no command found");
        return Ok(1);
    }
    let default_first = if list {
        before.saturating_sub(15)
    } else {
        before
    };
    let first = match args.first() {
        // A first number past the newest lists from the oldest (bash).
        Some(a)
            if list
                && std::str::from_utf8(a)
                    .ok()
                    .and_then(|s| s.parse::<usize>().ok())
                    .is_some_and(|n| n > before) =>
        {
            sh.history.first
        }
        Some(a) => match find_entry(sh, a, before) {
            Some(n) => n,
            None => return fc_not_found(sh, a),
        },
        None => default_first,
    };
    let last = match args.get(1) {
        Some(a) => match find_entry(sh, a, before) {
            Some(n) => n,
            None => return fc_not_found(sh, a),
        },
        None if list => before,
        None => first,
    };
    let h = &sh.history;
    let lo = first.min(last).max(h.first);
    let hi = first.max(last).min(before);
    let mut range: Vec<(usize, Vec<u8>)> = (lo..=hi)
        .filter_map(|n| h.get(n).map(|l| (n, l.to_vec())))
        .collect();
    if reverse != (first > last) {
        range.reverse();
    }
    if list {
        let mut out = Vec::new();
        for (n, line) in range {
            if numbers {
                out.extend_from_slice(n.to_string().as_bytes());
            }
            out.extend_from_slice(b"\t ");
            out.extend_from_slice(&line);
            out.push(b'\n');
        }
        return Ok(emit(sh, "fc", &out));
    }
    fc_edit(sh, editor, &range)
}

const FC_USAGE: &str =
    "fc: usage: fc [-e ename] [-lnr] [first] [last] or fc -s [pat=rep] [command]";

/// The history number an `fc` operand names: a number (negative counts
/// back from the `fc` line), or the latest command that starts with it.
fn find_entry(sh: &Shell, spec: &[u8], before: usize) -> Option<usize> {
    let h = &sh.history;
    if let Some(n) = std::str::from_utf8(spec)
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
    {
        let n = if n < 0 {
            (before + 1).checked_sub(n.unsigned_abs() as usize)?
        } else {
            n as usize
        };
        return Some(n.clamp(h.first, before.max(h.first)));
    }
    (h.first..=before)
        .rev()
        .find(|&n| h.get(n).is_some_and(|l| l.starts_with(spec)))
}

/// A number outside the history is out of range; a prefix that no
/// command starts with finds no command (bash's two messages).
fn fc_not_found(sh: &Shell, spec: &[u8]) -> Exec {
    if std::str::from_utf8(spec).is_ok_and(|s| s.parse::<i64>().is_ok()) {
        sh.error("fc: history specification out of range");
    } else {
        sh.error("fc: no command found");
    }
    Ok(1)
}

/// `fc -s [pat=rep ...] [command]`: the command (the one before by
/// default), each `pat` replaced everywhere by its `rep` in turn, printed
/// and run; it takes the place of the `fc` line in the history.
fn fc_again(sh: &mut Shell, args: &[Vec<u8>], before: usize) -> Exec {
    let subs = args.iter().take_while(|a| a.contains(&b'=')).count();
    let (subst, rest) = args.split_at(subs);
    let h = &sh.history;
    let n = match rest.first() {
        Some(spec) => find_entry(sh, spec, before),
        None => (before >= h.first && h.get(before).is_some()).then_some(before),
    };
    let Some(mut line) = n.and_then(|n| sh.history.get(n)).map(<[u8]>::to_vec) else {
        sh.error("fc: no command found");
        return Ok(1);
    };
    for s in subst {
        let eq = s.iter().position(|&c| c == b'=').unwrap_or(s.len());
        let (pat, rep) = (&s[..eq], &s[eq + 1..]);
        if let Some(replaced) = crate::history::replace(&line, pat, rep, true) {
            line = replaced;
        }
    }
    replace_fc_line(sh, &line);
    let mut shown = line.clone();
    shown.push(b'\n');
    crate::sys::write_all(2, &shown).ok();
    sh.eval_text(&line)
}

/// The `fc` line's history entry (when it has one) becomes `line`, the
/// command it runs.
fn replace_fc_line(sh: &mut Shell, line: &[u8]) {
    let (size, _, _) = sh.history_settings();
    if std::mem::take(&mut sh.history.line_entry) {
        sh.history.entries.pop();
    }
    sh.history.add(line, Control::default(), size);
}

/// Writes `range` to a file, runs the editor on it, then prints and runs
/// what the file holds when the editor succeeds.
fn fc_edit(sh: &mut Shell, editor: Option<Vec<u8>>, range: &[(usize, Vec<u8>)]) -> Exec {
    let editor = editor
        .or_else(|| sh.vars.get(b"FCEDIT").map(<[u8]>::to_vec))
        .or_else(|| sh.vars.get(b"EDITOR").map(<[u8]>::to_vec))
        .unwrap_or_else(|| b"vi".to_vec());
    let mut text = Vec::new();
    for (_, line) in range {
        text.extend_from_slice(line);
        text.push(b'\n');
    }
    // Removed when this returns, whatever happens.
    let path = match tempfile::Builder::new()
        .prefix("rush-fc-")
        .tempfile()
        .and_then(|f| std::fs::write(f.path(), &text).map(|()| f.into_temp_path()))
    {
        Ok(p) => p,
        Err(e) => {
            sh.error(&format!("fc: cannot open temporary file: {e}"));
            return Ok(1);
        }
    };
    let quoted = crate::quote::quote_value(path.as_os_str().as_encoded_bytes());
    let command = [editor.as_slice(), b" ", &quoted].concat();
    let status = sh.eval_text(&command)?;
    let edited = std::fs::read(&path).unwrap_or_default();
    drop(path);
    if status != 0 {
        return Ok(status);
    }
    replace_fc_line(sh, edited.strip_suffix(b"\n").unwrap_or(&edited));
    crate::sys::write_all(2, &edited).ok();
    sh.eval_text(&edited)
}
