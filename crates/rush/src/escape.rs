//! Backslash escapes, in the three dialects the shell has: `echo -e` and
//! `%b`, `printf` formats, and `$'…'` strings.

/// Which escapes apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `echo -e`: `\0NNN` octal, `\c` ends the output.
    Echo,
    /// `printf %b`: as `echo -e`, and `\NNN` octal too (bash).
    PrintfB,
    /// A `printf` format: `\NNN` octal, `\"`, `\'`, `\?`.
    Format,
    /// `$'…'`: as a format, plus `\cX` for control characters.
    AnsiC,
}

/// Appends `s` with backslash escapes decoded to `out`. Returns true if
/// `\c` stopped it (echo dialect): nothing more is to be printed.
pub fn unescape(s: &[u8], out: &mut Vec<u8>, dialect: Dialect) -> bool {
    let echo_mode = matches!(dialect, Dialect::Echo | Dialect::PrintfB);
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c != b'\\' || i + 1 >= s.len() {
            out.push(c);
            i += 1;
            continue;
        }
        let e = s[i + 1];
        i += 2;
        match e {
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'e' | b'E' => out.push(27),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(11),
            b'\\' => out.push(b'\\'),
            b'c' if echo_mode => return true,
            // `\c?` is DEL, and `\c\\` takes both backslashes (bash).
            b'c' if dialect == Dialect::AnsiC && i < s.len() => {
                out.push(if s[i] == b'?' { 0x7f } else { s[i] & 0x1f });
                if s[i] == b'\\' && s.get(i + 1) == Some(&b'\\') {
                    i += 1;
                }
                i += 1;
            }
            // echo -e knows only \0NNN; \1 to \7 stay as they are.
            b'1'..=b'7' if dialect == Dialect::Echo => {
                out.push(b'\\');
                out.push(e);
            }
            b'0'..=b'7' => {
                // echo/%b: \0NNN (up to 3 digits after the 0); format: \NNN.
                let (start, max) = if echo_mode && e == b'0' {
                    (i, 3)
                } else {
                    (i - 1, 3)
                };
                let mut v = 0u32;
                let mut j = start;
                while j < s.len() && j - start < max && (b'0'..=b'7').contains(&s[j]) {
                    v = v * 8 + u32::from(s[j] - b'0');
                    j += 1;
                }
                out.push(v as u8);
                i = j;
            }
            // `\x{HHH…}` (bash, in `$'…'` only): any number of digits, the
            // low byte of their value; the closing brace is optional.
            b'x' if dialect == Dialect::AnsiC && s.get(i) == Some(&b'{') => {
                let mut v = 0u32;
                i += 1;
                while let Some(d) = s.get(i).and_then(|&c| (c as char).to_digit(16)) {
                    v = v.wrapping_mul(16).wrapping_add(d);
                    i += 1;
                }
                if s.get(i) == Some(&b'}') {
                    i += 1;
                }
                out.push(v as u8);
            }
            b'x' => {
                let mut v = 0u32;
                let mut j = i;
                while j < s.len() && j - i < 2 && s[j].is_ascii_hexdigit() {
                    v = v * 16 + (s[j] as char).to_digit(16).unwrap_or(0);
                    j += 1;
                }
                if j == i {
                    out.extend_from_slice(b"\\x");
                } else {
                    out.push(v as u8);
                }
                i = j;
            }
            b'u' | b'U' => {
                let max = if e == b'u' { 4 } else { 8 };
                let mut v = 0u32;
                let mut j = i;
                while j < s.len() && j - i < max && s[j].is_ascii_hexdigit() {
                    v = v * 16 + (s[j] as char).to_digit(16).unwrap_or(0);
                    j += 1;
                }
                match (j > i).then(|| char::from_u32(v)).flatten() {
                    Some(ch) => {
                        let mut b = [0; 4];
                        out.extend_from_slice(ch.encode_utf8(&mut b).as_bytes());
                    }
                    None => {
                        out.push(b'\\');
                        out.push(e);
                    }
                }
                i = j;
            }
            b'"' | b'\'' | b'?' if !echo_mode => out.push(e),
            other => {
                out.push(b'\\');
                out.push(other);
            }
        }
    }
    false
}

/// Whether a value needs `$'…'` to be written on one line and read back
/// (it holds a control character), as bash decides for `${x@Q}`, `set` and
/// `declare -p`.
pub fn needs_ansi_c(v: &[u8]) -> bool {
    v.iter().any(|&c| c < 0x20 || c == 0x7f)
        || (!v.is_ascii()
            && v.utf8_chunks()
                .any(|ch| !ch.invalid().is_empty() || ch.valid().chars().any(char::is_control)))
}

/// `$'…'` quoting, in bash's spelling: `\a \b \E \f \n \r \t \v \\ \'`,
/// and octal for the other control characters and for bytes that are not
/// part of a printable UTF-8 character; other characters as they are.
pub fn ansi_c_quote(v: &[u8]) -> Vec<u8> {
    let mut out = b"$'".to_vec();
    let octal = |out: &mut Vec<u8>, c: u8| out.extend_from_slice(format!("\\{c:03o}").as_bytes());
    for chunk in v.utf8_chunks() {
        for ch in chunk.valid().chars() {
            match ch {
                '\x07' => out.extend_from_slice(b"\\a"),
                '\x08' => out.extend_from_slice(b"\\b"),
                '\x1b' => out.extend_from_slice(b"\\E"),
                '\x0c' => out.extend_from_slice(b"\\f"),
                '\n' => out.extend_from_slice(b"\\n"),
                '\r' => out.extend_from_slice(b"\\r"),
                '\t' => out.extend_from_slice(b"\\t"),
                '\x0b' => out.extend_from_slice(b"\\v"),
                '\\' => out.extend_from_slice(b"\\\\"),
                '\'' => out.extend_from_slice(b"\\'"),
                c if c.is_control() => {
                    let mut buf = [0; 4];
                    for &b in c.encode_utf8(&mut buf).as_bytes() {
                        octal(&mut out, b);
                    }
                }
                c => {
                    let mut buf = [0; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
            }
        }
        for &b in chunk.invalid() {
            octal(&mut out, b);
        }
    }
    out.push(b'\'');
    out
}

/// `'v'`, each `'` in it written `'\''`, whatever v holds (bash's
/// `sh_single_quote`, as `trap` prints actions and history's `:q` quotes).
pub fn single_quote(v: &[u8]) -> Vec<u8> {
    let mut out = vec![b'\''];
    for &c in v {
        if c == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(c);
        }
    }
    out.push(b'\'');
    out
}

/// Bytes as text for a message, invalid UTF-8 replaced.
pub fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
