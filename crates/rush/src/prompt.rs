//! Prompt strings (PS1, PS2, `${x@P}`): bash's backslash escapes, then (with `promptvars`, on by
//! default) parameter expansion, command substitution and arithmetic, as
//! inside double quotes.
//!
//! `\[` and `\]` wrap bytes that take no room on the screen (colour
//! escapes). They become readline's own markers, `\x01` and `\x02`, which
//! survive expansion; [`split`] then gives the line editor the text it
//! shows and the text it measures.

use crate::shell::Shell;

const START_IGNORE: u8 = 0x01;
const END_IGNORE: u8 = 0x02;

/// What the escapes read from the shell.
#[derive(Debug, Default)]
pub struct Facts {
    pub user: Vec<u8>,
    pub host: Vec<u8>,
    pub cwd: Vec<u8>,
    pub home: Option<Vec<u8>>,
    pub shell_name: Vec<u8>,
    pub jobs: usize,
    pub history_number: usize,
    pub command_number: usize,
    pub tty: Vec<u8>,
    pub root: bool,
    /// `PROMPT_DIRTRIM`: keep this many trailing components of `\w`.
    pub dirtrim: usize,
}

/// Decodes bash's prompt escapes. `time` formats a strftime format for now.
pub fn decode(ps: &[u8], f: &Facts, time: &dyn Fn(&[u8]) -> Vec<u8>) -> Vec<u8> {
    let mut out = Vec::with_capacity(ps.len() + 16);
    let mut i = 0;
    while i < ps.len() {
        let c = ps[i];
        if c != b'\\' || i + 1 == ps.len() {
            out.push(c);
            i += 1;
            continue;
        }
        let e = ps[i + 1];
        i += 2;
        match e {
            b'a' => out.push(0x07),
            b'e' => out.push(0x1b),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b'\\' => out.push(b'\\'),
            b'[' => out.push(START_IGNORE),
            b']' => out.push(END_IGNORE),
            b'u' => out.extend_from_slice(&f.user),
            b'h' => out.extend_from_slice(f.host.split(|&c| c == b'.').next().unwrap_or_default()),
            b'H' => out.extend_from_slice(&f.host),
            b'w' => out.extend_from_slice(&tilde_dir(f)),
            b'W' => {
                let d = tilde_dir(f);
                if d == b"/" || d == b"~" {
                    out.extend_from_slice(&d);
                } else {
                    let d = d.strip_suffix(b"/").unwrap_or(&d);
                    out.extend_from_slice(d.rsplit(|&c| c == b'/').next().unwrap_or_default());
                }
            }
            b'$' => out.push(if f.root { b'#' } else { b'$' }),
            b's' => {
                let n = f
                    .shell_name
                    .rsplit(|&c| c == b'/')
                    .next()
                    .unwrap_or_default();
                out.extend_from_slice(n.strip_prefix(b"-").unwrap_or(n));
            }
            b'v' => out.extend_from_slice(b"5.2"),
            b'V' => out.extend_from_slice(b"5.2.0"),
            b'j' => out.extend_from_slice(f.jobs.to_string().as_bytes()),
            b'!' => out.extend_from_slice(f.history_number.to_string().as_bytes()),
            b'#' => out.extend_from_slice(f.command_number.to_string().as_bytes()),
            b'l' => out.extend_from_slice(f.tty.rsplit(|&c| c == b'/').next().unwrap_or_default()),
            b't' => out.extend_from_slice(&time(b"%H:%M:%S")),
            b'T' => out.extend_from_slice(&time(b"%I:%M:%S")),
            b'@' => out.extend_from_slice(&time(b"%I:%M %p")),
            b'A' => out.extend_from_slice(&time(b"%H:%M")),
            b'd' => out.extend_from_slice(&time(b"%a %b %d")),
            b'D' if ps.get(i) == Some(&b'{') => {
                let end = ps[i..].iter().position(|&c| c == b'}').map(|p| i + p);
                match end {
                    Some(end) => {
                        let fmt = &ps[i + 1..end];
                        out.extend_from_slice(&time(if fmt.is_empty() { b"%X" } else { fmt }));
                        i = end + 1;
                    }
                    None => out.extend_from_slice(b"\\D"),
                }
            }
            b'0'..=b'7' => {
                // `\nnn`: up to three octal digits.
                let mut v = u32::from(e - b'0');
                let mut k = 0;
                while k < 2 && ps.get(i).is_some_and(|d| (b'0'..=b'7').contains(d)) {
                    v = v * 8 + u32::from(ps[i] - b'0');
                    i += 1;
                    k += 1;
                }
                out.push(v as u8);
            }
            other => {
                out.push(b'\\');
                out.push(other);
            }
        }
    }
    out
}

/// `\w`: the directory with `$HOME` shown as `~`, trimmed to
/// `PROMPT_DIRTRIM` components.
fn tilde_dir(f: &Facts) -> Vec<u8> {
    let mut d = f.cwd.clone();
    let mut tilde = false;
    if let Some(home) = f.home.as_deref().filter(|h| !h.is_empty() && *h != b"/") {
        let home = home.strip_suffix(b"/").unwrap_or(home);
        if d == home {
            return b"~".to_vec();
        }
        if d.starts_with(home) && d.get(home.len()) == Some(&b'/') {
            d = [b"~".as_slice(), &d[home.len()..]].concat();
            tilde = true;
        }
    }
    if f.dirtrim > 0 {
        let parts: Vec<&[u8]> = d.split(|&c| c == b'/').collect();
        // The leading `~` or empty root part does not count.
        let body = parts.len() - 1;
        if body > f.dirtrim {
            let head: &[u8] = if tilde { b"~/" } else { b"" };
            return [head, b".../", &parts[parts.len() - f.dirtrim..].join(&b'/')].concat();
        }
    }
    d
}

/// The text to show (with the non-printing parts) and the text to measure
/// (without them).
pub fn split(expanded: &[u8]) -> (String, String) {
    let mut shown = Vec::with_capacity(expanded.len());
    let mut measured = Vec::with_capacity(expanded.len());
    let mut hidden = false;
    for &c in expanded {
        match c {
            START_IGNORE => hidden = true,
            END_IGNORE => hidden = false,
            c => {
                shown.push(c);
                if !hidden {
                    measured.push(c);
                }
            }
        }
    }
    (
        String::from_utf8_lossy(&shown).into_owned(),
        String::from_utf8_lossy(&measured).into_owned(),
    )
}

impl Shell {
    /// Expands the prompt in `var` (PS1, PS2) as bash does: escapes, then
    /// expansion as in double quotes (errors leave the decoded text).
    pub fn prompt(&mut self, var: &[u8]) -> Vec<u8> {
        match self.vars.get(var).map(<[u8]>::to_vec) {
            Some(ps) => self.prompt_text(ps),
            None => Vec::new(),
        }
    }

    /// Expands `ps` as a prompt (also `${x@P}`).
    pub fn prompt_text(&mut self, ps: Vec<u8>) -> Vec<u8> {
        // Drawn before every command: no lookups for escapes it does not
        // use, and no parse for a prompt with nothing to expand.
        let decoded = if ps.contains(&b'\\') {
            let facts = facts(self, &ps);
            let shell: &Shell = self;
            decode(&ps, &facts, &|fmt| {
                crate::builtins::printf::format_time(shell, fmt, -1)
            })
        } else {
            ps
        };
        let plain = !decoded.iter().any(|&c| c == b'$' || c == b'`');
        if plain || !self.shopts.on("promptvars") {
            return decoded;
        }
        self.expand_as_double_quoted(&decoded).unwrap_or(decoded)
    }
}

thread_local! {
    /// The user name and host name, looked up once (bash keeps them from
    /// its start too).
    static NAMES: std::cell::OnceCell<(Vec<u8>, Vec<u8>)> = const { std::cell::OnceCell::new() };
}

/// What the escapes in `ps` need from the system and the shell.
fn facts(sh: &Shell, ps: &[u8]) -> Facts {
    use std::os::unix::ffi::OsStrExt;
    let uses = |e: u8| ps.windows(2).any(|w| w[0] == b'\\' && w[1] == e);
    let uid = nix::unistd::geteuid();
    let (user, host) = if uses(b'u') || uses(b'h') || uses(b'H') {
        NAMES.with(|n| {
            n.get_or_init(|| {
                let user = nix::unistd::User::from_uid(uid)
                    .ok()
                    .flatten()
                    .map(|u| u.name.into_bytes())
                    .or_else(|| sh.vars.get(b"USER").map(<[u8]>::to_vec))
                    .unwrap_or_default();
                let host = nix::unistd::gethostname()
                    .map(|h| h.as_bytes().to_vec())
                    .unwrap_or_default();
                (user, host)
            })
            .clone()
        })
    } else {
        Default::default()
    };
    let cwd = if uses(b'w') || uses(b'W') {
        sh.logical_pwd()
    } else {
        Vec::new()
    };
    let tty = if uses(b'l') {
        std::fs::read_link("/proc/self/fd/0")
            .map(|p| p.as_os_str().as_bytes().to_vec())
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    Facts {
        user,
        host,
        cwd,
        home: sh.vars.get(b"HOME").map(<[u8]>::to_vec),
        shell_name: sh.arg0.clone(),
        jobs: sh.jobs.iter().filter(|j| !j.finished()).count(),
        history_number: sh.history.next_number(),
        command_number: sh.command_number,
        tty: tty
            .strip_prefix(b"/dev/")
            .map(<[u8]>::to_vec)
            .unwrap_or(tty),
        root: uid.is_root(),
        dirtrim: sh
            .vars
            .get(b"PROMPT_DIRTRIM")
            .and_then(|v| std::str::from_utf8(v).ok()?.parse().ok())
            .unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> Facts {
        Facts {
            user: b"ada".to_vec(),
            host: b"box.example.org".to_vec(),
            cwd: b"/home/ada/src/rush".to_vec(),
            home: Some(b"/home/ada".to_vec()),
            shell_name: b"-rush".to_vec(),
            jobs: 2,
            history_number: 41,
            command_number: 7,
            tty: b"pts/3".to_vec(),
            root: false,
            dirtrim: 0,
        }
    }

    fn d(ps: &str, f: &Facts) -> String {
        String::from_utf8(decode(ps.as_bytes(), f, &|fmt| {
            format!("<{}>", String::from_utf8_lossy(fmt)).into_bytes()
        }))
        .unwrap()
    }

    #[test]
    fn escapes() {
        let f = facts();
        assert_eq!(d(r"\u@\h:\w\$ ", &f), "ada@box:~/src/rush$ ");
        assert_eq!(
            d(r"\H \W \s \j \! \# \l", &f),
            "box.example.org rush rush 2 41 7 3"
        );
        assert_eq!(
            d(r"\t|\T|\@|\A|\d|\D{%s}|\D{}", &f),
            "<%H:%M:%S>|<%I:%M:%S>|<%I:%M %p>|<%H:%M>|<%a %b %d>|<%s>|<%X>"
        );
        assert_eq!(d(r"\101\\\q", &f), "A\\\\q");
        assert_eq!(
            d(r"\[\e[1;32m\]ok\[\e[0m\] ", &f),
            "\x01\x1b[1;32m\x02ok\x01\x1b[0m\x02 "
        );
        let mut home = facts();
        home.cwd = b"/home/ada".to_vec();
        assert_eq!(d(r"\w \W", &home), "~ ~");
        let mut root = facts();
        root.cwd = b"/".to_vec();
        root.root = true;
        assert_eq!(d(r"\w \W\$", &root), "/ /#");
        let mut trim = facts();
        trim.cwd = b"/home/ada/a/b/c/d".to_vec();
        trim.dirtrim = 2;
        assert_eq!(d(r"\w", &trim), "~/.../c/d");
    }

    #[test]
    fn split_hides_marked_bytes() {
        let (shown, measured) = split(b"\x01\x1b[31m\x02red\x01\x1b[0m\x02$ ");
        assert_eq!(shown, "\x1b[31mred\x1b[0m$ ");
        assert_eq!(measured, "red$ ");
    }
}
