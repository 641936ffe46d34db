//! The interactive rows: each shell in a real PTY with no start-up file, as
//! a person types at it. The driver writes keys to the PTY's master and
//! blocks in poll(2) until the bytes it waits for come back.
//!
//! - startup: from spawn to the first prompt drawn;
//! - prompt round trip: Enter on an empty line to the next prompt;
//! - keystroke echo: a key to its echo (then a backspace, untimed);
//! - completion: Tab after a unique prefix of one of 3,000 executables on
//!   PATH, to the completed name (the line is then cleared, untimed);
//! - git completion: bash-completion's git script sourced, Tab after
//!   `git chec` to `kout`.
//!
//! Floors: the PTY's own line discipline echoing a key (no process reads
//! it), `cat` answering an empty line, and `echo` printing the prompt
//! text as soon as it starts.

use crate::Shell;
use floor::driver;
use latency::{BoxError, Options, Run, Sample, Subject, interleave};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const PROMPT: &[u8] = b"RBPROMPT> ";
const TIMEOUT: Duration = Duration::from_secs(10);

/// A program in a PTY of its own (a new session, the PTY its terminal).
struct Pty {
    master: OwnedFd,
    child: Child,
    /// Output not yet matched.
    seen: Vec<u8>,
}

fn last_error<T>() -> io::Result<T> {
    Err(io::Error::last_os_error())
}

impl Pty {
    fn spawn(mut cmd: Command) -> io::Result<Pty> {
        use std::os::unix::process::CommandExt;
        // SAFETY: posix_openpt/grantpt/unlockpt/ptsname_r on the fd we
        // own; the buffer is large enough and NUL-terminated by the call.
        let (master, slave) = unsafe {
            let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
            if m < 0 {
                return last_error();
            }
            let master = OwnedFd::from_raw_fd(m);
            if libc::grantpt(m) != 0 || libc::unlockpt(m) != 0 {
                return last_error();
            }
            let mut name = [0 as libc::c_char; 128];
            if libc::ptsname_r(m, name.as_mut_ptr(), name.len()) != 0 {
                return last_error();
            }
            let s = libc::open(
                name.as_ptr(),
                libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
            );
            if s < 0 {
                return last_error();
            }
            let ws = libc::winsize {
                ws_row: 40,
                ws_col: 120,
                ws_xpixel: 0,
                ws_ypixel: 0,
            };
            libc::ioctl(m, libc::TIOCSWINSZ, &ws);
            (master, OwnedFd::from_raw_fd(s))
        };
        let fd = slave.as_raw_fd();
        cmd.stdin(Stdio::from(slave.try_clone()?))
            .stdout(Stdio::from(slave.try_clone()?))
            .stderr(Stdio::from(slave));
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setsid() < 0 || libc::ioctl(fd, libc::TIOCSCTTY, 0) < 0 {
                    return last_error();
                }
                Ok(())
            });
        }
        let child = cmd.spawn()?;
        // SAFETY: fcntl on our fd.
        unsafe {
            let m = master.as_raw_fd();
            libc::fcntl(
                m,
                libc::F_SETFL,
                libc::fcntl(m, libc::F_GETFL) | libc::O_NONBLOCK,
            );
        }
        Ok(Pty {
            master,
            child,
            seen: Vec::new(),
        })
    }

    fn send(&mut self, keys: &[u8]) -> io::Result<()> {
        let mut rest = keys;
        while !rest.is_empty() {
            // SAFETY: writing from a valid buffer.
            let n =
                unsafe { libc::write(self.master.as_raw_fd(), rest.as_ptr().cast(), rest.len()) };
            if n < 0 {
                return last_error();
            }
            rest = &rest[n as usize..];
        }
        Ok(())
    }

    /// Reads what is there, waiting up to `wait` in poll for the first byte.
    fn read_some(&mut self, wait: Duration) -> io::Result<bool> {
        let mut p = libc::pollfd {
            fd: self.master.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll on one valid pollfd.
        let n = unsafe { libc::poll(&mut p, 1, wait.as_millis().min(i32::MAX as u128) as i32) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(false)
            } else {
                Err(e)
            };
        }
        if n == 0 {
            return Ok(false);
        }
        let mut buf = [0u8; 16384];
        loop {
            // SAFETY: reading into a valid buffer.
            let r =
                unsafe { libc::read(self.master.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if r <= 0 {
                // EAGAIN: all read; EIO: the program left.
                return Ok(true);
            }
            self.seen.extend_from_slice(&buf[..r as usize]);
        }
    }

    /// Blocks until `needle` has been written; drops the output up to it.
    fn wait_for(&mut self, needle: &[u8]) -> Result<Instant, BoxError> {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(at) = find(&self.seen, needle) {
                let t = Instant::now();
                self.seen.drain(..at + needle.len());
                return Ok(t);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!(
                    "{:?} not seen in {TIMEOUT:?}; got {:?}",
                    String::from_utf8_lossy(needle),
                    String::from_utf8_lossy(&self.seen)
                )
                .into());
            }
            self.read_some(left)?;
        }
    }

    /// Reads until nothing more comes for `quiet`, and forgets it.
    fn settle(&mut self, quiet: Duration) -> io::Result<()> {
        while self.read_some(quiet)? {}
        self.seen.clear();
        Ok(())
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// How each shell is started with no start-up file, and its prompt set.
fn shell_command(s: &Shell, home: &Path, path: &str) -> Command {
    let mut c = Command::new(&s.path);
    let base = s.name.split_whitespace().next().unwrap_or("");
    match base {
        "rush" => c.args(["--norc", "-i"]),
        "bash" => c.args(["--norc", "--noprofile", "-i"]),
        "zsh" => c.args(["-f", "-i"]),
        _ => c.arg("-i"),
    };
    c.env_clear()
        .env("PATH", path)
        .env("HOME", home)
        .env("TERM", "xterm")
        .env("LANG", "C.UTF-8")
        .env("PS1", String::from_utf8_lossy(PROMPT).as_ref())
        .env("HISTFILE", home.join("history"))
        .env("INPUTRC", "/dev/null");
    // mksh and dash, as root, set their own PS1 over the environment's:
    // their ENV file (read by an interactive shell) sets it instead.
    if matches!(base, "mksh" | "dash") {
        c.env("ENV", home.join("env.sh"));
    }
    c
}

/// A shell in a PTY at its first prompt (zsh told not to mark lines
/// without a newline, and to use emacs keys).
fn start_shell(s: &Shell, home: &Path, path: &str) -> Result<Pty, BoxError> {
    let mut p = Pty::spawn(shell_command(s, home, path))?;
    p.wait_for(PROMPT)?;
    if s.name == "zsh" {
        p.send(b"unsetopt prompt_sp; bindkey -e\r")?;
        p.wait_for(PROMPT)?;
    }
    p.settle(Duration::from_millis(20))?;
    Ok(p)
}

fn rounds(args: &driver::Args, quick: usize, full: usize) -> Options {
    let r = args.pick(quick, full);
    Options {
        warmup: r.div_ceil(10).max(2),
        rounds: r,
        min_rounds: r,
        budget: None,
    }
}

/// The shells with line editing (dash has none: no completion rows).
fn editing(shells: &[Shell]) -> Vec<Shell> {
    shells
        .iter()
        .filter(|s| s.name != "dash")
        .cloned()
        .collect()
}

/// A folder of 3,000 executables, one of them with a unique prefix.
fn many_commands(dir: &Path) -> anyhow::Result<String> {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin3000");
    std::fs::create_dir_all(&bin)?;
    for i in 0..3000 {
        let name = if i == 1234 {
            "zzuniquecmd".to_string()
        } else {
            format!("cmd{i:04}")
        };
        let p = bin.join(name);
        std::fs::write(&p, "#!/bin/sh\n")?;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(format!("{}:/usr/bin:/bin", bin.display()))
}

/// A key to its echo; then a backspace (untimed) puts the line back.
fn keystroke(p: &mut Pty) -> Result<Sample, BoxError> {
    let t0 = Instant::now();
    p.send(b"a")?;
    let t = p.wait_for(b"a")?;
    p.send(b"\x7f")?;
    p.settle(Duration::from_millis(5))?;
    Ok(Sample::duration(t - t0))
}

/// One completion row: in each live shell, type `typed.0`, then time Tab
/// until `typed.1` (the completed rest) is drawn; Ctrl-U clears the line
/// for the next round.
fn tab_row(
    args: &driver::Args,
    live: &mut [(Shell, Pty)],
    typed: (&'static [u8], &'static [u8]),
    name: &str,
    full_rounds: usize,
) -> anyhow::Result<()> {
    let mut subjects: Vec<Subject<'_>> = live
        .iter_mut()
        .map(|(s, p)| {
            Subject::new(s.name.clone(), s.version.clone(), move || {
                p.send(typed.0)?;
                p.wait_for(typed.0)?;
                p.settle(Duration::from_millis(2))?;
                let t0 = Instant::now();
                p.send(b"\t")?;
                let t = p.wait_for(typed.1)?;
                p.send(b"\x15")?;
                p.settle(Duration::from_millis(5))?;
                Ok(Sample::duration(t - t0))
            })
        })
        .collect();
    let run = Run::new(crate::SYSTEM, name, vec![]);
    driver::emit(&interleave(
        run,
        &mut subjects,
        rounds(args, 20, full_rounds),
    )?)?;
    Ok(())
}

pub fn run(args: &driver::Args, shells: &[Shell]) -> anyhow::Result<()> {
    let dir = args.scratch.join("rush-bench-interactive");
    let home = dir.join("home");
    std::fs::create_dir_all(&home)?;
    std::fs::write(
        home.join("env.sh"),
        format!("PS1='{}'\n", String::from_utf8_lossy(PROMPT)),
    )?;
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into());
    // Only the installed rush: the dynamic build is the same code.
    let shells: Vec<Shell> = shells
        .iter()
        .filter(|s| !s.name.contains("dynamic"))
        .cloned()
        .collect();

    // Startup: spawn to the first prompt.
    driver::step("interactive startup")?;
    let mut subjects: Vec<Subject<'_>> = shells
        .iter()
        .map(|s| {
            let (s, home, path) = (s.clone(), home.clone(), path.clone());
            Subject::new(s.name.clone(), s.version.clone(), move || {
                let t0 = Instant::now();
                let mut p = Pty::spawn(shell_command(&s, &home, &path))?;
                let t = p.wait_for(PROMPT)?;
                Ok(Sample::duration(t - t0))
            })
        })
        .collect();
    subjects.push(Subject::new(
        "floor: echo of the prompt in a PTY",
        "kernel",
        || {
            let t0 = Instant::now();
            let mut c = Command::new("/bin/echo");
            c.arg(String::from_utf8_lossy(PROMPT).as_ref());
            let mut p = Pty::spawn(c)?;
            let t = p.wait_for(PROMPT)?;
            Ok(Sample::duration(t - t0))
        },
    ));
    let run = Run::new(
        crate::SYSTEM,
        "interactive startup (spawn to first prompt)",
        vec![],
    );
    driver::emit(&interleave(run, &mut subjects, rounds(args, 20, 100))?)?;
    drop(subjects);

    // Prompt round trip and keystroke echo, in long-lived shells.
    driver::step("prompt round trip")?;
    let mut live = Vec::new();
    for s in &shells {
        match start_shell(s, &home, &path) {
            Ok(p) => live.push((s.clone(), p)),
            Err(e) => driver::note(format!("{}: {e}; no interactive rows", s.name))?,
        }
    }
    {
        let mut subjects: Vec<Subject<'_>> = live
            .iter_mut()
            .map(|(s, p)| {
                Subject::new(s.name.clone(), s.version.clone(), move || {
                    let t0 = Instant::now();
                    p.send(b"\r")?;
                    let t = p.wait_for(PROMPT)?;
                    Ok(Sample::duration(t - t0))
                })
            })
            .collect();
        let mut cat = Pty::spawn(Command::new("cat"))?;
        cat.settle(Duration::from_millis(20))?;
        subjects.push(Subject::new(
            "floor: cat answers an empty line",
            "kernel",
            move || {
                let t0 = Instant::now();
                cat.send(b"\r")?;
                // The line discipline's echo, then cat's own newline.
                cat.wait_for(b"\r\n")?;
                let t = cat.wait_for(b"\r\n")?;
                Ok(Sample::duration(t - t0))
            },
        ));
        let run = Run::new(
            crate::SYSTEM,
            "prompt round trip (Enter on an empty line)",
            vec![],
        );
        driver::emit(&interleave(run, &mut subjects, rounds(args, 50, 1000))?)?;
    }

    driver::step("keystroke echo")?;
    {
        let mut subjects: Vec<Subject<'_>> = live
            .iter_mut()
            .map(|(s, p)| Subject::new(s.name.clone(), s.version.clone(), move || keystroke(p)))
            .collect();
        let mut cat = Pty::spawn(Command::new("cat"))?;
        cat.settle(Duration::from_millis(20))?;
        subjects.push(Subject::new(
            "floor: the PTY's own echo",
            "kernel",
            move || keystroke(&mut cat),
        ));
        let run = Run::new(crate::SYSTEM, "keystroke echo at the prompt", vec![]);
        driver::emit(&interleave(run, &mut subjects, rounds(args, 50, 1000))?)?;
    }
    drop(live);

    // Completion of a PATH prefix among 3,000 executables.
    driver::step("completion of a command among 3,000")?;
    let many = many_commands(&dir)?;
    let editors = editing(&shells);
    let mut live = Vec::new();
    for s in &editors {
        live.push((
            s.clone(),
            start_shell(s, &home, &many).map_err(|e| anyhow::anyhow!("{}: {e}", s.name))?,
        ));
    }
    tab_row(
        args,
        &mut live,
        (b"zzuni", b"quecmd"),
        "completion: Tab on a command prefix, 3,000 on PATH",
        300,
    )?;
    drop(live);

    // bash-completion's git completion, loaded and used.
    let git = Path::new("/usr/share/bash-completion/completions/git");
    driver::step("git completion")?;
    if git.is_file() {
        let mut live = Vec::new();
        for s in shells
            .iter()
            .filter(|s| s.name == "rush" || s.name == "bash")
        {
            let fail = |e: BoxError| anyhow::anyhow!("{}: {e}", s.name);
            let mut p = start_shell(s, &home, &path).map_err(fail)?;
            p.send(format!("source {}; echo lo$((1+1))aded\r", git.display()).as_bytes())?;
            p.wait_for(b"lo2aded").map_err(fail)?;
            p.wait_for(PROMPT).map_err(fail)?;
            p.settle(Duration::from_millis(20))?;
            live.push((s.clone(), p));
        }
        tab_row(
            args,
            &mut live,
            (b"git chec", b"kout"),
            "git completion: Tab after `git chec` (bash-completion's script)",
            200,
        )?;
    } else {
        driver::note("git completion: /usr/share/bash-completion/completions/git missing; no row")?;
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
