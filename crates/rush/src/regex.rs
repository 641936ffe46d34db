//! `[[ s =~ re ]]`: POSIX extended regular expressions, through the C
//! library's regcomp/regexec (the same engine bash uses).

use std::ffi::CString;

/// The regular expression of a `=~` operand: quoted characters match
/// themselves (`[[ $x =~ "a.b" ]]` matches only `a.b`), as in bash.
pub fn quote_marked(re: &crate::pattern::Marked) -> Vec<u8> {
    let mut out = Vec::with_capacity(re.bytes.len());
    for (&c, &quoted) in re.bytes.iter().zip(&re.quoted) {
        if quoted && b"\\.[]()*+?{}|^$".contains(&c) {
            out.push(b'\\');
        }
        out.push(c);
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
