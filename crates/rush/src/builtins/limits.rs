//! `umask` and `ulimit`.

use super::{Args, emit, getopt, lossy};
use crate::shell::{Exec, Shell};

pub(super) const UMASK_USAGE: &str = "umask: usage: umask [-p] [-S] [mode]";

pub(super) fn umask(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let Ok((opts, i)) = getopt(sh, argv, b"Sp", UMASK_USAGE) else {
        return Ok(2);
    };
    let symbolic = opts.iter().any(|o| o.letter == b'S');
    let portable = opts.iter().any(|o| o.letter == b'p');
    // SAFETY: umask is read by setting it and putting it back.
    let cur = unsafe {
        let m = libc::umask(0o022);
        libc::umask(m);
        m
    } as u32;
    let show = |m: u32| {
        let perm = |shift: u32| {
            let bits = (!m >> shift) & 7;
            [(4, 'r'), (2, 'w'), (1, 'x')]
                .iter()
                .filter(|(b, _)| bits & b != 0)
                .map(|(_, c)| *c)
                .collect::<String>()
        };
        format!("u={},g={},o={}\n", perm(6), perm(3), perm(0))
    };
    let Some(spec) = argv.get(i) else {
        let mut out = String::new();
        if portable {
            out.push_str(if symbolic { "umask -S " } else { "umask " });
        }
        if symbolic {
            out.push_str(&show(cur));
        } else {
            out.push_str(&format!("{cur:04o}\n"));
        }
        return Ok(emit(sh, "umask", out.as_bytes()));
    };
    // A leading digit means octal (bash: `09` is out of range).
    let new = if spec.first().is_some_and(u8::is_ascii_digit) {
        let octal = spec.iter().try_fold(0u32, |n, &c| {
            (b'0'..=b'7')
                .contains(&c)
                .then(|| n * 8 + u32::from(c - b'0'))
                .filter(|&n| n <= 0o7777)
        });
        match octal {
            Some(m) => m,
            None => {
                sh.error(&format!(
                    "umask: {}: octal number out of range",
                    lossy(spec)
                ));
                return Ok(1);
            }
        }
    } else {
        match symbolic_mode(spec, !cur & 0o777) {
            Ok(bits) => !bits & 0o777,
            Err(msg) => {
                sh.error(&format!("umask: {msg}"));
                return Ok(1);
            }
        }
    };
    // SAFETY: setting the process umask.
    unsafe {
        libc::umask(new as libc::mode_t);
    }
    if symbolic {
        return Ok(emit(sh, "umask", show(new).as_bytes()));
    }
    Ok(0)
}

/// Applies a symbolic mode (`u=rwx,g+w,o-r`) to permission bits, as
/// bash's `umask` reads one; the error names the character it stopped at.
pub(super) fn symbolic_mode(spec: &[u8], mut bits: u32) -> Result<u32, String> {
    let mut s = spec.iter().copied().peekable();
    loop {
        let mut who = 0u32;
        while let Some(c @ (b'u' | b'g' | b'o' | b'a')) = s.peek().copied() {
            s.next();
            who |= match c {
                b'u' => 0o700,
                b'g' => 0o070,
                b'o' => 0o007,
                _ => 0o777,
            };
        }
        let op = s.next().unwrap_or(0);
        if !matches!(op, b'=' | b'+' | b'-') {
            return Err(format!("`{}': invalid symbolic mode operator", op as char));
        }
        let mut perm = 0u32;
        while let Some(c @ (b'r' | b'w' | b'x')) = s.peek().copied() {
            s.next();
            perm |= match c {
                b'r' => 0o444,
                b'w' => 0o222,
                _ => 0o111,
            };
        }
        let end = match s.next() {
            None => true,
            Some(b',') => false,
            Some(c) => return Err(format!("`{}': invalid symbolic mode character", c as char)),
        };
        if who != 0 {
            perm &= who;
        }
        match op {
            b'+' => bits |= perm,
            b'-' => bits &= !perm,
            _ => {
                let who = if who == 0 { 0o777 } else { who };
                bits = (bits & !who) | perm;
            }
        }
        if end {
            return Ok(bits);
        }
    }
}

pub(super) fn ulimit(sh: &mut Shell, argv: Args<'_>) -> Exec {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let mut which = b'f';
    let mut hard = false;
    let mut soft = true;
    let mut all = false;
    let mut value = None;
    let mut operands = false;
    for a in &argv[1..] {
        if a == b"--" && !operands {
            operands = true;
        } else if !operands && a.len() >= 2 && a[0] == b'-' {
            for &c in &a[1..] {
                match c {
                    b'H' => {
                        hard = true;
                        soft = false;
                    }
                    b'S' => {
                        soft = true;
                        hard = false;
                    }
                    b'a' => all = true,
                    c => which = c,
                }
            }
        } else {
            value = Some(a.clone());
        }
    }
    let table: &[(u8, Resource, u64, &str)] = &[
        (
            b'c',
            Resource::RLIMIT_CORE,
            512,
            "core file size          (blocks, -c)",
        ),
        (
            b'd',
            Resource::RLIMIT_DATA,
            1024,
            "data seg size           (kbytes, -d)",
        ),
        (
            b'f',
            Resource::RLIMIT_FSIZE,
            512,
            "file size               (blocks, -f)",
        ),
        (
            b'l',
            Resource::RLIMIT_MEMLOCK,
            1024,
            "max locked memory       (kbytes, -l)",
        ),
        (
            b'm',
            Resource::RLIMIT_RSS,
            1024,
            "max memory size         (kbytes, -m)",
        ),
        (
            b'n',
            Resource::RLIMIT_NOFILE,
            1,
            "open files                      (-n)",
        ),
        (
            b's',
            Resource::RLIMIT_STACK,
            1024,
            "stack size              (kbytes, -s)",
        ),
        (
            b't',
            Resource::RLIMIT_CPU,
            1,
            "cpu time               (seconds, -t)",
        ),
        (
            b'u',
            Resource::RLIMIT_NPROC,
            1,
            "max user processes              (-u)",
        ),
        (
            b'v',
            Resource::RLIMIT_AS,
            1024,
            "virtual memory          (kbytes, -v)",
        ),
    ];
    let show = |v: u64, unit: u64| {
        if v == libc::RLIM_INFINITY {
            "unlimited".to_string()
        } else {
            (v / unit).to_string()
        }
    };
    if all {
        let mut out = String::new();
        for (_, r, unit, label) in table {
            if let Ok((s, h)) = getrlimit(*r) {
                out.push_str(&format!(
                    "{label} {}\n",
                    show(if hard { h } else { s }, *unit)
                ));
            }
        }
        return Ok(emit(sh, "ulimit", out.as_bytes()));
    }
    let Some(&(_, res, unit, _)) = table.iter().find(|(c, ..)| *c == which) else {
        sh.error(&format!("ulimit: -{}: invalid option", which as char));
        return Ok(2);
    };
    let Ok((s, h)) = getrlimit(res) else {
        return Ok(1);
    };
    match value {
        None => {
            let out = format!("{}\n", show(if hard { h } else { s }, unit));
            Ok(emit(sh, "ulimit", out.as_bytes()))
        }
        Some(v) => {
            let n = if v == b"unlimited" {
                libc::RLIM_INFINITY
            } else {
                match lossy(&v).parse::<u64>() {
                    Ok(n) => n.saturating_mul(unit),
                    Err(_) => {
                        sh.error(&format!("ulimit: {}: invalid number", lossy(&v)));
                        return Ok(1);
                    }
                }
            };
            let (ns, nh) = match (soft, hard) {
                (true, false) if argv[1..].iter().any(|a| a.contains(&b'S')) => (n, h),
                (false, true) => (s.min(n), n),
                _ => (n, if n > h { n } else { h.min(n.max(h)) }),
            };
            let nh = if hard || !argv[1..].iter().any(|a| a.contains(&b'S')) && n > h {
                n
            } else {
                nh
            };
            match setrlimit(res, ns, nh) {
                Ok(()) => Ok(0),
                Err(e) => {
                    sh.error(&format!(
                        "ulimit: {}: cannot modify limit: {}",
                        which as char,
                        std::io::Error::from(e)
                    ));
                    Ok(1)
                }
            }
        }
    }
}
