//! `read`: one line from stdin (or `-u fd`), split by IFS into variables.
//!
//! Input is read a byte at a time so that nothing past the line is taken
//! from a shared stdin (a script on stdin, or a pipe other commands read).
//! A timeout (`-t`) blocks in poll with that timeout: an event wait, not a
//! sleep.

use crate::escape::lossy;
use crate::shell::{Exec, Run, Shell};

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
                b't' => {
                    let v = value().unwrap_or_default();
                    match lossy(&v).parse::<f64>() {
                        Ok(t) if t >= 0.0 => timeout = Some(t),
                        _ => {
                            sh.error(&format!(
                                "read: {}: invalid timeout specification",
                                lossy(&v)
                            ));
                            return Ok(1);
                        }
                    }
                }
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
        let ok = if array.is_some() {
            crate::parse::is_name(n)
        } else {
            crate::shell::is_ref(sh, n)
        };
        if !ok {
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
        if !sh.set_ref(&names[0], line)? {
            return Ok(1);
        }
        for n in &names[1..] {
            if !sh.set_ref(n, Vec::new())? {
                return Ok(1);
            }
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
        if !sh.set_ref(name, v)? {
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
/// rest, with trailing IFS whitespace removed, or the one field left
/// without its delimiter.
fn split(line: &[u8], escaped: &[bool], ifs: &[u8], n: usize) -> Vec<Vec<u8>> {
    let is_ws = |c: u8, e: bool| !e && ifs.contains(&c) && matches!(c, b' ' | b'\t' | b'\n');
    let is_other = |c: u8, e: bool| !e && ifs.contains(&c) && !matches!(c, b' ' | b'\t' | b'\n');
    // Where the field at `i` ends, and where the delimiter after it
    // (whitespace, at most one other IFS char, whitespace) ends.
    let field_end = |mut i: usize| {
        while i < line.len() && !is_ws(line[i], escaped[i]) && !is_other(line[i], escaped[i]) {
            i += 1;
        }
        i
    };
    let delim_end = |mut i: usize| {
        while i < line.len() && is_ws(line[i], escaped[i]) {
            i += 1;
        }
        if i < line.len() && is_other(line[i], escaped[i]) {
            i += 1;
            while i < line.len() && is_ws(line[i], escaped[i]) {
                i += 1;
            }
        }
        i
    };
    let mut out = Vec::new();
    let mut i = 0;
    // Leading IFS whitespace.
    while i < line.len() && is_ws(line[i], escaped[i]) {
        i += 1;
    }
    while i < line.len() {
        if out.len() + 1 == n {
            // One field left, with at most its delimiter after it: the
            // field (bash: "a:" with IFS=: is a).
            let j = field_end(i);
            if delim_end(j) == line.len() {
                out.push(line[i..j].to_vec());
                return out;
            }
            // Otherwise the rest, minus trailing IFS whitespace.
            let mut end = line.len();
            while end > i && is_ws(line[end - 1], escaped[end - 1]) {
                end -= 1;
            }
            out.push(line[i..end].to_vec());
            return out;
        }
        let end = field_end(i);
        out.push(line[i..end].to_vec());
        i = delim_end(end);
    }
    out
}

/// `mapfile` / `readarray`: lines of stdin (or `-u fd`) into an indexed
/// array (`MAPFILE` by default), as bash's: `-t` drops the delimiter, `-d`
/// sets it, `-n` caps the count (0: all), `-s` skips lines first, `-O`
/// starts at an index and keeps the array's other elements, `-C cmd` is
/// evaluated every `-c` lines (5000) with the index and the line.
pub fn mapfile(sh: &mut Shell, argv: &[Vec<u8>]) -> Exec {
    let name0 = lossy(&argv[0]);
    let usage = format!(
        "{name0}: usage: {name0} [-d delim] [-n count] [-O origin] [-s count] [-t] [-u fd] \
         [-C callback] [-c quantum] [array]"
    );
    let Ok((opts, i)) = crate::builtins::getopt(sh, argv, b"d:u:n:O:tC:c:s:", &usage) else {
        return Ok(2);
    };
    let mut strip = false;
    let mut delim = b'\n';
    let (mut count, mut skip, mut origin, mut quantum) = (0usize, 0usize, None, 5000usize);
    let mut callback = None;
    let mut fd = 0;
    for o in opts {
        let arg = o.arg.unwrap_or_default();
        let num = || lossy(&arg).trim().parse::<usize>().ok();
        let bad = |sh: &mut Shell, what: &str| {
            sh.error(&format!("{name0}: {}: {what}", lossy(&arg)));
            Ok(1)
        };
        match o.letter {
            b't' => strip = true,
            b'd' => delim = arg.first().copied().unwrap_or(0),
            b'n' => match num() {
                Some(n) => count = n,
                None => return bad(sh, "invalid line count"),
            },
            b's' => match num() {
                Some(n) => skip = n,
                None => return bad(sh, "invalid line count"),
            },
            b'O' => match num() {
                Some(n) => origin = Some(n),
                None => return bad(sh, "invalid array origin"),
            },
            b'c' => match num().filter(|&n| n > 0) {
                Some(n) => quantum = n,
                None => return bad(sh, "invalid callback quantum"),
            },
            b'C' => callback = Some(arg),
            _ => match lossy(&arg).trim().parse::<i32>().ok().filter(|&n| n >= 0) {
                Some(n) if crate::sys::is_open(n) => fd = n,
                Some(n) => {
                    sh.error(&format!(
                        "{name0}: {n}: invalid file descriptor: Bad file descriptor"
                    ));
                    return Ok(1);
                }
                None => return bad(sh, "invalid file descriptor specification"),
            },
        }
    }
    let name = argv.get(i).cloned().unwrap_or_else(|| b"MAPFILE".to_vec());
    if name.is_empty() {
        sh.error(&format!("{name0}: empty array variable name"));
        return Ok(2);
    }
    if !crate::parse::is_name(&name) {
        sh.error(&format!(
            "{name0}: `{}': not a valid identifier",
            lossy(&name)
        ));
        return Ok(1);
    }
    if matches!(sh.vars.value(&name), Some(crate::vars::Value::Assoc(_))) {
        sh.error(&format!("{name0}: {}: not an indexed array", lossy(&name)));
        return Ok(1);
    }
    // Read all of it (a byte at a time would be needlessly slow here: the
    // whole input is wanted, up to the count).
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    let mut lines = 0usize;
    loop {
        if count != 0 && lines >= count + skip {
            break;
        }
        // With a count, read a byte at a time so as to leave the rest.
        let want = if count == 0 { buf.len() } else { 1 };
        // SAFETY: reading into a valid buffer of the given length.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), want) };
        if n < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            let e = std::io::Error::last_os_error();
            sh.error(&format!(
                "{name0}: read error: {}",
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
    // Without -O the array starts empty; with it, its other elements stay.
    let keep = match (origin, sh.vars.value(&name)) {
        (Some(_), Some(crate::vars::Value::Indexed(m))) => m.clone(),
        (Some(_), Some(crate::vars::Value::Str(v))) => [(0, v.clone())].into_iter().collect(),
        _ => Default::default(),
    };
    if let Err(e) = sh.vars.set_value(&name, crate::vars::Value::Indexed(keep)) {
        sh.error(&e.to_string());
        return Ok(1);
    }
    let start = origin.unwrap_or(0);
    for (n, piece) in data
        .split_inclusive(|&c| c == delim)
        .skip(skip)
        .take(if count == 0 { usize::MAX } else { count })
        .enumerate()
    {
        let index = start + n;
        let mut v = piece.to_vec();
        // A NUL cannot be in a bash value: `-d ''` drops it as `-t` would.
        if (strip || delim == 0) && v.last() == Some(&delim) {
            v.pop();
        }
        if let Some(cb) = &callback
            && (n + 1) % quantum == 0
        {
            let mut text = cb.clone();
            text.extend_from_slice(format!(" {index} ").as_bytes());
            text.extend_from_slice(&crate::quote::quote_always(&v));
            sh.eval_text(&text)?;
        }
        let key = crate::vars::Key::Index(i64::try_from(index).unwrap_or(i64::MAX));
        if let Err(e) = sh.vars.set_elem(&name, key, v) {
            sh.error(&e.to_string());
            return Ok(1);
        }
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
        let c = |line: &str, n: usize| -> Vec<String> {
            let e = vec![false; line.len()];
            split(line.as_bytes(), &e, b": ", n)
                .into_iter()
                .map(|f| String::from_utf8(f).unwrap())
                .collect()
        };
        assert_eq!(c("::", 2), ["", ""]);
        assert_eq!(c(" : : ", 2), ["", ""]);
        assert_eq!(c("a:", 1), ["a"]);
        assert_eq!(c("a::", 1), ["a::"]);
    }
}
