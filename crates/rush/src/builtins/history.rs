//! `history`: list, delete from and save the command history (see
//! [`crate::history`]).

use super::{Args, emit, lossy};
use crate::history::Control;
use crate::shell::{Exec, Shell};

/// `HISTSIZE`, `HISTFILESIZE` (default: HISTSIZE) and `HISTCONTROL`, as
/// the shell holds them now.
pub fn settings(sh: &Shell) -> (usize, usize, Control) {
    let num = |name: &[u8]| -> Option<usize> {
        let v = sh.vars.get(name)?;
        let n: i64 = std::str::from_utf8(v).ok()?.trim().parse().ok()?;
        // A negative size means no limit.
        Some(if n < 0 { usize::MAX } else { n as usize })
    };
    let size = num(b"HISTSIZE").unwrap_or(500);
    let filesize = num(b"HISTFILESIZE").unwrap_or(size);
    let control = sh
        .vars
        .get(b"HISTCONTROL")
        .map(Control::parse)
        .unwrap_or_default();
    (size, filesize, control)
}

/// `HISTFILE`, if set and not empty.
pub fn file(sh: &Shell) -> Option<Vec<u8>> {
    sh.vars
        .get(b"HISTFILE")
        .filter(|f| !f.is_empty())
        .map(<[u8]>::to_vec)
}

pub fn history(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let mut args = &argv[1..];
    let (size, filesize, _) = settings(sh);
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
                let n: Option<i64> = std::str::from_utf8(spec).ok().and_then(|s| s.parse().ok());
                let h = &mut sh.history;
                // A negative offset counts back from the end.
                let index = n.and_then(|n| {
                    if n < 0 {
                        h.entries.len().checked_sub(n.unsigned_abs() as usize)
                    } else {
                        (n as usize).checked_sub(h.first)
                    }
                });
                match index.filter(|&i| i < h.entries.len()) {
                    Some(i) => {
                        h.entries.remove(i);
                        if i < h.saved {
                            h.saved -= 1;
                        }
                        h.generation += 1;
                    }
                    None => {
                        sh.error(&format!(
                            "history: {}: history position out of range",
                            lossy(spec)
                        ));
                        return Ok(1);
                    }
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
                        Err(m) => {
                            sh.error(&format!("history: {m}"));
                            return Ok(1);
                        }
                    }
                    out.push(b'\n');
                }
                return Ok(emit(sh, "history", &out));
            }
            f @ (b"-a" | b"-w" | b"-r" | b"-n") => {
                let Some(path) = args.get(1).cloned().or_else(|| file(sh)) else {
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
                sh.error("history: usage: history [-c] [-d offset] [n] or history -anrw [filename] or history -ps arg [arg...]");
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
