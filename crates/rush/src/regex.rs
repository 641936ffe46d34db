//! `[[ s =~ re ]]`: POSIX extended regular expressions, through the C
//! library's regcomp/regexec (the same engine bash uses).

use std::ffi::CString;

/// The regular expression of a `=~` operand: quoted characters match
/// themselves (`[[ $x =~ "a.b" ]]` matches only `a.b`), as in bash.
pub fn quote_marked(re: &crate::pattern::Marked) -> Vec<u8> {
    let (b, q) = (&re.bytes, &re.quoted);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        // A bracket expression opened by an unquoted `[` is copied as it
        // is: a backslash there would be one more character to match
        // (bash's quote_string_for_globbing for regexps).
        if c == b'[' && !q[i] {
            out.push(c);
            i += 1;
            if i < b.len() && b[i] == b'^' && !q[i] {
                out.push(b'^');
                i += 1;
            }
            if i < b.len() && b[i] == b']' && !q[i] {
                out.push(b']');
                i += 1;
            }
            while i < b.len() {
                let d = b[i];
                if d == b'[' && !q[i] && b.get(i + 1) == Some(&b':') {
                    // `[:class:]` whole.
                    let end = b[i + 2..]
                        .windows(2)
                        .position(|w| w == b":]")
                        .map_or(b.len(), |p| i + 2 + p + 2);
                    out.extend_from_slice(&b[i..end]);
                    i = end;
                    continue;
                }
                out.push(d);
                i += 1;
                if d == b']' && !q[i - 1] {
                    break;
                }
            }
            continue;
        }
        if q[i] && b"\\.[]()*+?{}|^$".contains(&c) {
            out.push(b'\\');
        }
        out.push(c);
        i += 1;
    }
    out
}

/// A regular expression that does not compile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadRegex;

/// Matches `text` against `re`: the whole match and each group, or `None`
/// if it does not match.
/// `nocase`: without regard to case (`shopt -s nocasematch`).
pub fn matches(re: &[u8], text: &[u8], nocase: bool) -> Result<Option<Vec<Vec<u8>>>, BadRegex> {
    let re = CString::new(re).map_err(|_| BadRegex)?;
    let Ok(text_c) = CString::new(text) else {
        return Ok(None);
    };
    // SAFETY: regex_t is plain data that regcomp initialises; it is freed
    // with regfree on every path after a successful regcomp.
    unsafe {
        let mut compiled: libc::regex_t = std::mem::zeroed();
        let flags = libc::REG_EXTENDED | if nocase { libc::REG_ICASE } else { 0 };
        if libc::regcomp(&mut compiled, re.as_ptr(), flags) != 0 {
            return Err(BadRegex);
        }
        // Room for the match and 15 groups (regexec marks unused ones).
        let n = 16;
        let mut groups = vec![
            libc::regmatch_t {
                rm_so: -1,
                rm_eo: -1
            };
            n
        ];
        let r = libc::regexec(&compiled, text_c.as_ptr(), n, groups.as_mut_ptr(), 0);
        libc::regfree(&mut compiled);
        if r != 0 {
            return Ok(None);
        }
        let used = groups
            .iter()
            .rposition(|g| g.rm_so >= 0)
            .map_or(0, |i| i + 1);
        Ok(Some(
            groups[..used]
                .iter()
                .map(|g| {
                    if g.rm_so < 0 {
                        Vec::new()
                    } else {
                        text[g.rm_so as usize..g.rm_eo as usize].to_vec()
                    }
                })
                .collect(),
        ))
    }
}
