//! `printf`, and the backslash escapes it shares with `echo -e`.
//!
//! Numbers are formatted by the C library's snprintf, so that flags, width
//! and precision behave exactly as in every other shell's printf.

use crate::escape::lossy;
use crate::escape::{Dialect, unescape};
use crate::shell::{Exec, Shell};

/// A number argument: decimal, 0x hex, 0 octal, or 'c for a character's
/// code. Returns the value and whether it parsed completely.
fn number(arg: &[u8]) -> (i64, bool) {
    if let Some(rest) = arg.strip_prefix(b"'").or_else(|| arg.strip_prefix(b"\"")) {
        let v = match std::str::from_utf8(rest) {
            Ok(s) => s.chars().next().map_or(0, |c| c as i64),
            Err(_) => rest.first().map_or(0, |&b| i64::from(b)),
        };
        return (v, true);
    }
    let t = String::from_utf8_lossy(arg);
    let t = t.trim_start();
    if t.is_empty() {
        return (0, true);
    }
    let (neg, body) = match t.as_bytes()[0] {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let (radix, digits) =
        if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
            (16, h)
        } else if body.len() > 1 && body.starts_with('0') {
            (8, &body[1..])
        } else {
            (10, body)
        };
    let end = digits
        .char_indices()
        .find(|(_, c)| !c.is_digit(radix))
        .map_or(digits.len(), |(i, _)| i);
    let v = i64::from_str_radix(&digits[..end], radix)
        .or_else(|_| u64::from_str_radix(&digits[..end], radix).map(|u| u as i64))
        .unwrap_or(0);
    let ok = end == digits.len() && end > 0;
    (if neg { v.wrapping_neg() } else { v }, ok)
}

fn float(arg: &[u8]) -> (f64, bool) {
    if arg.starts_with(b"'") || arg.starts_with(b"\"") {
        let (v, ok) = number(arg);
        return (v as f64, ok);
    }
    let t = String::from_utf8_lossy(arg);
    match t.trim().parse::<f64>() {
        Ok(v) => (v, true),
        Err(_) => {
            let (v, _) = number(arg);
            (v as f64, false)
        }
    }
}

/// Formats with the C library.
fn c_format(spec: &str, arg: CArg) -> Vec<u8> {
    let fmt = match std::ffi::CString::new(spec) {
        Ok(f) => f,
        Err(_) => return Vec::new(),
    };
    let mut buf = vec![0u8; 128];
    loop {
        // SAFETY: the format has exactly one conversion, matching the
        // argument's C type; the buffer length is passed.
        let n = unsafe {
            match arg {
                CArg::Int(v) => libc::snprintf(
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    fmt.as_ptr(),
                    v as libc::c_longlong,
                ),
                CArg::Float(v) => {
                    libc::snprintf(buf.as_mut_ptr().cast(), buf.len(), fmt.as_ptr(), v)
                }
            }
        };
        if n < 0 {
            return Vec::new();
        }
        let n = n as usize;
        if n < buf.len() {
            buf.truncate(n);
            return buf;
        }
        buf.resize(n + 1, 0);
    }
}

#[derive(Clone, Copy)]
enum CArg {
    Int(i64),
    Float(f64),
}

/// `%q`: quoted so the shell reads it back as the same word.
fn shell_quote(v: &[u8]) -> Vec<u8> {
    if v.is_empty() {
        return b"''".to_vec();
    }
    // A control character: `$'…'`, as bash's `%q` writes it.
    if crate::escape::needs_ansi_c(v) {
        return crate::escape::ansi_c_quote(v);
    }
    let mut out = Vec::with_capacity(v.len());
    for &c in v {
        if !(c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'_' | b'-' | b'.' | b'/' | b':' | b',' | b'+' | b'@' | b'%' | b'='
            ))
        {
            out.push(b'\\');
        }
        out.push(c);
    }
    out
}

pub fn printf(sh: &mut Shell, argv: &[Vec<u8>]) -> Exec {
    let mut i = 1;
    let mut var = None;
    if argv.get(1).map(Vec::as_slice) == Some(b"-v") {
        match argv.get(2) {
            Some(v) => var = Some(v.clone()),
            None => {
                sh.error("printf: -v: option requires an argument");
                return Ok(2);
            }
        }
        i = 3;
    }
    if argv.get(i).map(Vec::as_slice) == Some(b"--") {
        i += 1;
    }
    let Some(format) = argv.get(i) else {
        sh.usage("printf: usage: printf [-v var] format [arguments]");
        return Ok(2);
    };
    let args = &argv[i + 1..];
    let mut out = Vec::new();
    let mut status = 0;
    let mut next = 0usize;
    loop {
        let start = next;
        let stop = format_once(sh, format, args, &mut next, &mut out, &mut status);
        if stop || next >= args.len() || next == start {
            break;
        }
    }
    match var {
        Some(v) => {
            // `printf -v a[i]` sets one element.
            if !crate::shell::is_ref(sh, &v) {
                sh.error(&format!("printf: `{}': not a valid identifier", lossy(&v)));
                return Ok(2);
            }
            if !sh.set_ref(&v, out)? {
                return Ok(1);
            }
            Ok(status)
        }
        None => match sh.out(&out) {
            Ok(()) => Ok(status),
            Err(e) => {
                let m = e.to_string();
                sh.error(&format!(
                    "printf: write error: {}",
                    m.split(" (os error").next().unwrap_or_default()
                ));
                Ok(1)
            }
        },
    }
}

/// One pass over the format. Returns true if output must stop (`\c` in %b).
fn format_once(
    sh: &mut Shell,
    f: &[u8],
    args: &[Vec<u8>],
    next: &mut usize,
    out: &mut Vec<u8>,
    status: &mut i32,
) -> bool {
    let take = |next: &mut usize| -> Option<&Vec<u8>> {
        let a = args.get(*next);
        if a.is_some() {
            *next += 1;
        }
        a
    };
    let mut i = 0;
    while i < f.len() {
        let c = f[i];
        if c == b'\\' {
            // One escape at a time.
            let mut j = i + 1;
            if j < f.len() {
                match f[j] {
                    b'0'..=b'7' => {
                        let s = j;
                        while j < f.len() && j - s < 3 && (b'0'..=b'7').contains(&f[j]) {
                            j += 1;
                        }
                    }
                    b'x' => {
                        j += 1;
                        let s = j;
                        while j < f.len() && j - s < 2 && f[j].is_ascii_hexdigit() {
                            j += 1;
                        }
                        if j == s {
                            sh.error("printf: missing hex digit for \\x");
                        }
                    }
                    b'u' | b'U' => {
                        let max = if f[j] == b'u' { 4 } else { 8 };
                        j += 1;
                        let s = j;
                        while j < f.len() && j - s < max && f[j].is_ascii_hexdigit() {
                            j += 1;
                        }
                    }
                    _ => j += 1,
                }
            }
            unescape(&f[i..j], out, Dialect::Format);
            i = j;
            continue;
        }
        if c != b'%' {
            out.push(c);
            i += 1;
            continue;
        }
        // Where this conversion starts, for messages and for printing it
        // as text when its time format is bad.
        let start = i;
        i += 1;
        if f.get(i) == Some(&b'%') {
            out.push(b'%');
            i += 1;
            continue;
        }
        let mut spec = String::from("%");
        while let Some(&fl) = f.get(i) {
            if matches!(fl, b'-' | b'+' | b' ' | b'#' | b'0') {
                spec.push(fl as char);
                i += 1;
            } else {
                break;
            }
        }
        // width
        if f.get(i) == Some(&b'*') {
            i += 1;
            let w = take(next).map_or(0, |a| number(a).0);
            spec.push_str(&w.to_string());
        } else {
            while let Some(&d) = f.get(i).filter(|d| d.is_ascii_digit()) {
                spec.push(d as char);
                i += 1;
            }
        }
        let mut precision = None;
        if f.get(i) == Some(&b'.') {
            i += 1;
            spec.push('.');
            let mut p = String::new();
            if f.get(i) == Some(&b'*') {
                i += 1;
                let v = take(next).map_or(0, |a| number(a).0);
                p = v.to_string();
            } else {
                while let Some(&d) = f.get(i).filter(|d| d.is_ascii_digit()) {
                    p.push(d as char);
                    i += 1;
                }
            }
            if p.is_empty() {
                p.push('0');
            }
            precision = p.parse::<usize>().ok();
            spec.push_str(&p);
        }
        // Length modifiers are accepted and ignored.
        while let Some(&m) = f.get(i) {
            if matches!(m, b'h' | b'l' | b'L' | b'j' | b'z' | b't') {
                i += 1;
            } else {
                break;
            }
        }
        let Some(&conv) = f.get(i) else {
            sh.error(&format!(
                "printf: `{}': missing format character",
                lossy(&f[start..])
            ));
            *status = 1;
            return true;
        };
        i += 1;
        // `%(fmt)T` (bash): a time, formatted by strftime.
        if conv == b'(' {
            // The `)` that closes it: parentheses inside nest (bash).
            let mut depth = 1;
            let close = f[i..].iter().position(|&c| {
                match c {
                    b'(' => depth += 1,
                    b')' => depth -= 1,
                    _ => {}
                }
                depth == 0
            });
            let after = close.and_then(|e| f.get(i + e + 1)).copied();
            let Some(end) = close.filter(|_| after == Some(b'T')) else {
                // bash warns, prints the `%` and reads on from the `(`.
                sh.error(&format!(
                    "printf: warning: `{}': invalid time format specification",
                    after.unwrap_or(0) as char
                ));
                out.push(b'%');
                i = start + 1;
                continue;
            };
            let fmt = &f[i..i + end];
            i += end + 2;
            let arg = take(next);
            let secs = match arg.filter(|a| !a.is_empty()) {
                None => -1,
                Some(a) => {
                    let (v, ok) = number(a);
                    if !ok {
                        sh.error(&format!("printf: {}: invalid number", lossy(a)));
                        *status = 1;
                    }
                    v
                }
            };
            let mut text = format_time(sh, fmt, secs);
            if let Some(p) = precision {
                text.truncate(p);
            }
            pad(&spec, text, None, out);
            continue;
        }
        match conv {
            b's' | b'b' | b'q' | b'c' => {
                let arg = take(next).cloned().unwrap_or_default();
                let mut text = match conv {
                    b'b' => {
                        let mut t = Vec::new();
                        if missing_hex_digit(&arg) {
                            sh.error("printf: missing hex digit for \\x");
                        }
                        let stop = unescape(&arg, &mut t, Dialect::PrintfB);
                        if stop {
                            pad(&spec, t, None, out);
                            return true;
                        }
                        t
                    }
                    b'q' => shell_quote(&arg),
                    b'c' => arg.first().map(|&b| vec![b]).unwrap_or_default(),
                    _ => arg,
                };
                if let (Some(p), b's' | b'b') = (precision, conv) {
                    text.truncate(p);
                }
                pad(&spec, text, None, out);
            }
            b'd' | b'i' | b'o' | b'u' | b'x' | b'X' => {
                let arg = take(next);
                let (v, ok) = arg.map_or((0, true), |a| number(a));
                if !ok {
                    let a = arg.map(|a| lossy(a)).unwrap_or_default();
                    sh.error(&format!("printf: {a}: invalid number"));
                    *status = 1;
                }
                let conv = if conv == b'i' { 'd' } else { conv as char };
                out.extend_from_slice(&c_format(&format!("{spec}ll{conv}"), CArg::Int(v)));
            }
            b'e' | b'E' | b'f' | b'F' | b'g' | b'G' | b'a' | b'A' => {
                let arg = take(next);
                let (v, ok) = arg.map_or((0.0, true), |a| float(a));
                if !ok {
                    let a = arg.map(|a| lossy(a)).unwrap_or_default();
                    sh.error(&format!("printf: {a}: invalid number"));
                    *status = 1;
                }
                out.extend_from_slice(&c_format(
                    &format!("{spec}{}", conv as char),
                    CArg::Float(v),
                ));
            }
            // `%n`: the number of bytes written so far goes into the
            // variable named by the argument.
            b'n' => {
                if let Some(name) = take(next).cloned() {
                    // A plain name only (bash).
                    if !crate::parse::is_name(&name) {
                        sh.error(&format!(
                            "printf: `{}': not a valid identifier",
                            lossy(&name)
                        ));
                        *status = 1;
                        return true;
                    }
                    let count = out.len().to_string().into_bytes();
                    if !matches!(sh.set_ref(&name, count), Ok(true)) {
                        *status = 1;
                        return true;
                    }
                }
            }
            other => {
                sh.error(&format!(
                    "printf: `{}': invalid format character",
                    other as char
                ));
                *status = 1;
                return true;
            }
        }
    }
    false
}

/// Whether `s` has a `\x` with no hex digit after it, which bash's
/// printf reports (and prints as it is).
fn missing_hex_digit(s: &[u8]) -> bool {
    let mut i = 0;
    while i + 1 < s.len() {
        if s[i] == b'\\' {
            if s[i + 1] == b'x' && !s.get(i + 2).is_some_and(u8::is_ascii_hexdigit) {
                return true;
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    false
}

unsafe extern "C" {
    /// POSIX: reads `TZ` again (the libc crate has no binding for it).
    fn tzset();
}

/// `%(fmt)T`: `secs` since the epoch (-1: now, -2: when the shell
/// started) in local time, through strftime; an empty format is `%X`. The
/// shell's `TZ`, if it has one (`TZ=UTC printf …` too), is the C library's
/// while it converts.
pub(crate) fn format_time(sh: &Shell, fmt: &[u8], secs: i64) -> Vec<u8> {
    let now = || crate::expand::epoch().as_secs() as i64;
    let t = match secs {
        -1 => now(),
        -2 => now() - sh.started.elapsed().as_secs() as i64,
        t => t,
    };
    let fmt = if fmt.is_empty() {
        b"%X".as_slice()
    } else {
        fmt
    };
    let Ok(cfmt) = std::ffi::CString::new(fmt) else {
        return Vec::new();
    };
    let tz = sh.vars.get(b"TZ").map(<[u8]>::to_vec);
    let old_tz = std::env::var_os("TZ");
    if let Some(tz) = &tz {
        use std::os::unix::ffi::OsStrExt;
        // SAFETY: rush runs one thread, so nothing reads the environment
        // while it changes.
        unsafe { std::env::set_var("TZ", std::ffi::OsStr::from_bytes(tz)) };
    }
    // SAFETY: tzset, localtime_r and strftime with valid pointers and a
    // buffer whose size is passed.
    let out = unsafe {
        tzset();
        let mut tm: libc::tm = std::mem::zeroed();
        let tt = t as libc::time_t;
        libc::localtime_r(&tt, &mut tm);
        let mut buf = vec![0u8; 256 + fmt.len() * 16];
        let n = libc::strftime(buf.as_mut_ptr().cast(), buf.len(), cfmt.as_ptr(), &tm);
        buf.truncate(n);
        buf
    };
    if tz.is_some() {
        // SAFETY: as above.
        unsafe {
            match old_tz {
                Some(v) => std::env::set_var("TZ", v),
                None => std::env::remove_var("TZ"),
            }
            tzset();
        }
    }
    out
}

/// Pads `text` to the width in `spec` (honouring `-`).
fn pad(spec: &str, text: Vec<u8>, _p: Option<usize>, out: &mut Vec<u8>) {
    let flags_end = spec[1..]
        .find(|c: char| !matches!(c, '-' | '+' | ' ' | '#' | '0'))
        .map_or(spec.len(), |i| i + 1);
    let left = spec[1..flags_end].contains('-');
    let width: usize = spec[flags_end..]
        .split('.')
        .next()
        .and_then(|w| w.parse().ok())
        .unwrap_or(0);
    let n = std::str::from_utf8(&text).map_or(text.len(), |s| s.chars().count());
    let fill = width.saturating_sub(n);
    if !left {
        out.extend(std::iter::repeat_n(b' ', fill));
    }
    out.extend_from_slice(&text);
    if left {
        out.extend(std::iter::repeat_n(b' ', fill));
    }
}
