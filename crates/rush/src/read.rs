//! `read`: one line from stdin (or `-u fd`), split by IFS into variables.
//!
//! Input is read a byte at a time so that nothing past the line is taken
//! from a shared stdin (a script on stdin, or a pipe other commands read).
//! A timeout (`-t`) blocks in poll with that timeout: an event wait, not a
//! sleep.

use crate::builtins::lossy;
use crate::shell::{Exec, Shell};

pub fn read(sh: &mut Shell, argv: &[Vec<u8>]) -> Exec {
    let mut raw = false;
    let mut prompt = None;
    let mut delim = b'\n';
    let mut nchars: Option<usize> = None;
    let mut exact = false;
    let mut fd = 0;
    let mut timeout: Option<f64> = None;
    let mut array = None;
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        if a.len() < 2 || a[0] != b'-' {
            break;
        }
        if a == b"--" {
            i += 1;
            break;
        }
        let mut j = 1;
        while j < a.len() {
            let c = a[j];
            j += 1;
            // Options with a value take the rest of the word or the next one.
            let mut value = || -> Option<Vec<u8>> {
                if j < a.len() {
                    let v = a[j..].to_vec();
                    j = a.len();
                    Some(v)
                } else {
                    i += 1;
                    argv.get(i).cloned()
                }
            };
            match c {
                b'r' => raw = true,
                b's' | b'e' => {}
                b'p' => prompt = value(),
                b'd' => delim = value().and_then(|v| v.first().copied()).unwrap_or(0),
                b'n' | b'N' => {
                    exact = c == b'N';
                    nchars = value().and_then(|v| lossy(&v).parse().ok());
                }
                b'u' => fd = value().and_then(|v| lossy(&v).parse().ok()).unwrap_or(0),
                b't' => timeout = value().and_then(|v| lossy(&v).parse().ok()),
                b'a' => array = value(),
                _ => {
                    sh.error(&format!("read: -{}: invalid option", c as char));
                    return Ok(2);
                }
            }
        }
        i += 1;
    }
    let names: Vec<Vec<u8>> = match &array {
        Some(a) => vec![a.clone()],
        None => argv[i..].to_vec(),
    };
    for n in &names {
        if !crate::parse::is_name(n) {
            sh.error(&format!("read: `{}': not a valid identifier", lossy(n)));
            return Ok(1);
        }
    }
    if let Some(p) = prompt {
        // SAFETY: isatty on an fd number.
        if unsafe { libc::isatty(0) } == 1 {
            sh.err_out(&p);
        }
    }
    if timeout == Some(0.0) {
        // -t 0: is input available?
        return Ok(i32::from(!ready(fd, 0)));
    }
    // The line, with a flag per byte: escaped by a backslash?
    let mut line: Vec<u8> = Vec::new();
    let mut escaped: Vec<bool> = Vec::new();
    let mut eof = false;
    let mut pending_backslash = false;
    loop {
        if nchars.is_some_and(|n| line.len() >= n) {
            break;
        }
        if let Some(t) = timeout
            && !ready(fd, (t * 1000.0) as i32)
        {
            return Ok(142);
        }
        let mut b = [0u8; 1];
        // SAFETY: reading one byte into a valid buffer.
        let n = unsafe { libc::read(fd, b.as_mut_ptr().cast(), 1) };
        if n < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                if crate::sys::trap_pending() {
                    sh.run_traps()?;
                }
                continue;
            }
            let e = std::io::Error::last_os_error();
            sh.error(&format!(
                "read: read error: {fd}: {}",
                e.to_string().split(" (os error").next().unwrap_or_default()
            ));
            return Ok(1);
        }
        if n == 0 {
            eof = true;
            break;
        }
        let c = b[0];
        if pending_backslash {
            pending_backslash = false;
            if c == b'\n' {
                // Line continuation.
                continue;
            }
            line.push(c);
            escaped.push(true);
            continue;
        }
        if c == delim && !exact {
            break;
        }
        if c == b'\\' && !raw {
            pending_backslash = true;
            continue;
        }
        line.push(c);
        escaped.push(false);
    }
    let ifs = sh.ifs();
    let status = i32::from(eof);
    if names.is_empty() {
        // REPLY gets the line as is (no IFS trimming).
        let _ = sh.vars.set(b"REPLY", line);
        return Ok(status);
    }
    if exact {
        // -N: the characters as read, no splitting; other names are emptied.
        let _ = sh.vars.set(&names[0], line);
        for n in &names[1..] {
            let _ = sh.vars.set(n, Vec::new());
        }
        return Ok(status);
    }
    if let Some(a) = array {
        let fields = split(&line, &escaped, &ifs, usize::MAX);
        let m = fields
            .into_iter()
            .enumerate()
            .map(|(k, v)| (k as i64, v))
            .collect();
        if let Err(e) = sh.vars.set_value(&a, crate::vars::Value::Indexed(m)) {
            sh.error(&e.to_string());
            return Ok(1);
        }
        return Ok(status);
    }
    let fields = split(&line, &escaped, &ifs, names.len());
    for (k, name) in names.iter().enumerate() {
        let v = fields.get(k).cloned().unwrap_or_default();
        if let Err(e) = sh.vars.set(name, v) {
            sh.error(&e.to_string());
            return Ok(1);
        }
    }
    Ok(status)
}

/// Whether `fd` has input within `ms` milliseconds.
fn ready(fd: i32, ms: i32) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: poll on one valid pollfd.
    unsafe { libc::poll(&mut p, 1, ms) > 0 }
}

/// Splits a line for `read` into at most `n` fields: the last takes the
/// rest, with trailing IFS whitespace removed.
fn split(line: &[u8], escaped: &[bool], ifs: &[u8], n: usize) -> Vec<Vec<u8>> {
    let is_ws = |c: u8, e: bool| !e && ifs.contains(&c) && matches!(c, b' ' | b'\t' | b'\n');
    let is_other = |c: u8, e: bool| !e && ifs.contains(&c) && !matches!(c, b' ' | b'\t' | b'\n');
    let mut out = Vec::new();
    let mut i = 0;
    // Leading IFS whitespace.
    while i < line.len() && is_ws(line[i], escaped[i]) {
        i += 1;
    }
    while i < line.len() {
        if out.len() + 1 == n {
            // The rest, minus trailing IFS whitespace.
            let mut end = line.len();
            while end > i && is_ws(line[end - 1], escaped[end - 1]) {
                end -= 1;
            }
            out.push(line[i..end].to_vec());
            return out;
        }
        let start = i;
        while i < line.len() && !is_ws(line[i], escaped[i]) && !is_other(line[i], escaped[i]) {
            i += 1;
        }
        out.push(line[start..i].to_vec());
        // The delimiter: whitespace, at most one other IFS char, whitespace.
        while i < line.len() && is_ws(line[i], escaped[i]) {
            i += 1;
        }
        if i < line.len() && is_other(line[i], escaped[i]) {
            i += 1;
            while i < line.len() && is_ws(line[i], escaped[i]) {
                i += 1;
            }
        }
    }
    out
}

/// `mapfile` / `readarray`: lines of stdin (or `-u fd`) into an indexed
/// array (`MAPFILE` by default). `-t` drops the delimiter, `-d` sets it,
/// `-n` caps the count, `-s` skips lines first.
pub fn mapfile(sh: &mut Shell, argv: &[Vec<u8>]) -> Exec {
    let mut strip = false;
    let mut delim = b'\n';
    let mut count = usize::MAX;
    let mut skip = 0usize;
    let mut fd = 0;
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        if a.len() < 2 || a[0] != b'-' {
            break;
        }
        let value = |i: &mut usize| -> Option<Vec<u8>> {
            *i += 1;
            argv.get(*i).cloned()
        };
        match a.as_slice() {
            b"-t" => strip = true,
            b"-d" => delim = value(&mut i).and_then(|v| v.first().copied()).unwrap_or(0),
            b"-n" => {
                count = value(&mut i)
                    .and_then(|v| lossy(&v).parse().ok())
                    .unwrap_or(0);
            }
            b"-s" => {
                skip = value(&mut i)
                    .and_then(|v| lossy(&v).parse().ok())
                    .unwrap_or(0);
            }
            b"-u" => {
                fd = value(&mut i)
                    .and_then(|v| lossy(&v).parse().ok())
                    .unwrap_or(0);
            }
            b"--" => {
                i += 1;
                break;
            }
            other => {
                sh.error(&format!("mapfile: {}: invalid option", lossy(other)));
                return Ok(2);
            }
        }
        i += 1;
    }
    let name = argv.get(i).cloned().unwrap_or_else(|| b"MAPFILE".to_vec());
    if !crate::parse::is_name(&name) {
        sh.error(&format!(
            "mapfile: `{}': not a valid identifier",
            lossy(&name)
        ));
        return Ok(1);
    }
    // Read all of it (a byte at a time would be needlessly slow here: the
    // whole input is wanted, up to the count).
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    let mut lines = 0usize;
    loop {
        if count != usize::MAX && lines >= count + skip {
            break;
        }
        // With a count, read a byte at a time so as to leave the rest.
        let want = if count == usize::MAX { buf.len() } else { 1 };
        // SAFETY: reading into a valid buffer of the given length.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), want) };
        if n < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            let e = std::io::Error::last_os_error();
            sh.error(&format!(
                "mapfile: read error: {}",
                e.to_string().split(" (os error").next().unwrap_or_default()
            ));
            return Ok(1);
        }
        if n == 0 {
            break;
        }
        let got = &buf[..n as usize];
        lines += got.iter().filter(|&&c| c == delim).count();
        data.extend_from_slice(got);
    }
    let mut m = std::collections::BTreeMap::new();
    let mut k = 0i64;
    for (idx, piece) in data.split_inclusive(|&c| c == delim).enumerate() {
        if idx < skip {
            continue;
        }
        if m.len() >= count {
            break;
        }
        let mut v = piece.to_vec();
        if strip && v.last() == Some(&delim) {
            v.pop();
        }
        m.insert(k, v);
        k += 1;
    }
    if let Err(e) = sh.vars.set_value(&name, crate::vars::Value::Indexed(m)) {
        sh.error(&e.to_string());
        return Ok(1);
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::split;

    fn s(line: &str, n: usize) -> Vec<String> {
        let e = vec![false; line.len()];
        split(line.as_bytes(), &e, b" \t\n", n)
            .into_iter()
            .map(|f| String::from_utf8(f).unwrap())
            .collect()
    }

    #[test]
    fn splitting() {
        assert_eq!(s("  a  b  c  ", 2), ["a", "b  c"]);
        assert_eq!(s("a b", 3), ["a", "b"]);
        assert_eq!(s("   ", 1), Vec::<String>::new());
    }
}
