//! A command in a new PTY and a new session.
//!
//! The child is the leader of a new session and process group, with the
//! PTY as its controlling terminal (setsid, then TIOCSCTTY), as a terminal
//! emulator starts a shell. The PTY is opened with rustix's `pty` module
//! and its peer taken with TIOCGPTPEER, so no path in `/dev/pts` is looked
//! up between the two.
//!
//! The master gives the child's output until every copy of the child's
//! side is closed, then fails with EIO: [`Pty::read`] reports that as the
//! end. Output written just before the child exits is still in the master
//! then, so a reader that reads to the end loses none of it (node-pty's
//! issue #726 is a reader that stopped at the child's exit instead).

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::io::Errno;
use rustix::process::{Pid, Signal};
use rustix::pty::OpenptFlags;
use rustix::termios::Winsize;
use std::ffi::{CString, OsString};
use std::io;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ExitStatus, Stdio};

/// A terminal's size, in characters, and in pixels where the caller
/// knows them (0: not known).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    pub rows: u16,
    pub cols: u16,
    pub width: u16,
    pub height: u16,
}

impl Size {
    /// `cols` by `rows` characters, pixels not known.
    pub fn chars(cols: u16, rows: u16) -> Size {
        Size {
            rows,
            cols,
            width: 0,
            height: 0,
        }
    }
}

impl Default for Size {
    fn default() -> Size {
        Size::chars(80, 24)
    }
}

/// What to run in the PTY.
#[derive(Debug, Clone)]
pub struct Command {
    pub program: OsString,
    pub args: Vec<OsString>,
    /// The child's working folder (the caller's if `None`).
    pub cwd: Option<PathBuf>,
    /// Variables set (or replaced) in the child's environment, which is
    /// otherwise the caller's.
    pub env: Vec<(OsString, OsString)>,
    pub size: Size,
    /// The terminal in raw mode from the start (no echo, no line editing,
    /// no output processing), as `stty raw -echo` leaves it.
    pub raw: bool,
    /// The child's environment is `env` alone, not the caller's with `env`.
    pub clear_env: bool,
    /// The user and group the child runs as (the caller's if `None`).
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    /// A start that fails (`cwd` cannot be entered, the program is not
    /// found or may not be run) is the child's to report, as node-pty's
    /// child does: it writes why to the terminal and exits with code 1,
    /// and `spawn` succeeds. Else `spawn` returns the error.
    pub start_errors_exit: bool,
}

/// node-pty's start in the child: `chdir`, then `execvp`'s search for the
/// program, checked in the child before the exec, everything it needs
/// made before the fork (the child allocates nothing).
#[derive(Debug)]
struct StartCheck {
    cwd: Option<CString>,
    /// Where `execvp` looks for the program, in order.
    candidates: Vec<CString>,
    /// The message for each error the start may meet, by what failed and
    /// the error's number.
    messages: Vec<(&'static str, i32, Vec<u8>)>,
}

/// The errors a start reports by name (others by what failed alone).
const START_ERRORS: [i32; 6] = [
    libc::ENOENT,
    libc::ENOTDIR,
    libc::EACCES,
    libc::ELOOP,
    libc::ENAMETOOLONG,
    libc::EPERM,
];

impl StartCheck {
    fn new(cmd: &Command) -> io::Result<StartCheck> {
        use std::os::unix::ffi::OsStrExt;
        let c =
            |b: &[u8]| CString::new(b).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e));
        let cwd = match &cmd.cwd {
            Some(d) => Some(c(d.as_os_str().as_bytes())?),
            None => None,
        };
        let program = cmd.program.as_bytes();
        let candidates = if program.contains(&b'/') {
            vec![c(program)?]
        } else {
            // The child's PATH, as execvp reads it; glibc's default without.
            let path = cmd
                .env
                .iter()
                .rev()
                .find(|(k, _)| k == "PATH")
                .map(|(_, v)| v.clone())
                .or_else(|| (!cmd.clear_env).then(|| std::env::var_os("PATH")).flatten())
                .unwrap_or_else(|| "/bin:/usr/bin".into());
            let mut out = Vec::new();
            for dir in path.as_bytes().split(|&b| b == b':') {
                let dir = if dir.is_empty() { b".".as_slice() } else { dir };
                let mut p = dir.to_vec();
                p.push(b'/');
                p.extend_from_slice(program);
                out.push(c(&p)?);
            }
            out
        };
        let mut messages = Vec::new();
        for what in ["chdir(2) failed.", "execvp(3) failed."] {
            for e in START_ERRORS {
                let text = io::Error::from_raw_os_error(e).to_string();
                let text = text.split(" (os error").next().unwrap_or(&text);
                messages.push((what, e, format!("{what}: {text}\n").into_bytes()));
            }
            messages.push((what, 0, format!("{what}\n").into_bytes()));
        }
        Ok(StartCheck {
            cwd,
            candidates,
            messages,
        })
    }

    /// In the child, before the exec: enters `cwd` and finds the program,
    /// or writes why not to the terminal and exits with code 1.
    fn check(&self) {
        if let Some(dir) = &self.cwd
            && let Err(e) = rustix::process::chdir(dir.as_c_str())
        {
            self.fail("chdir(2) failed.", e.raw_os_error());
        }
        let mut denied = false;
        for p in &self.candidates {
            match rustix::fs::access(p.as_c_str(), rustix::fs::Access::EXEC_OK) {
                Ok(()) => return,
                Err(e) if e == rustix::io::Errno::ACCESS => denied = true,
                Err(_) => {}
            }
        }
        let e = if denied { libc::EACCES } else { libc::ENOENT };
        self.fail("execvp(3) failed.", e);
    }

    fn fail(&self, what: &str, errno: i32) -> ! {
        let message = self
            .messages
            .iter()
            .find(|(w, e, _)| *w == what && *e == errno)
            .or_else(|| self.messages.iter().find(|(w, e, _)| *w == what && *e == 0));
        if let Some((_, _, m)) = message {
            // SAFETY: descriptor 2 is the PTY's peer by now (and stays
            // open until the exit below).
            let _ = rustix::io::write(unsafe { BorrowedFd::borrow_raw(2) }, m);
        }
        // SAFETY: `_exit` ends the forked child at once, running nothing
        // of the parent's (no atexit handler, no flush).
        unsafe { libc::_exit(1) }
    }
}

impl Command {
    /// `program` with no arguments, in a 24x80 terminal.
    pub fn new(program: impl Into<OsString>) -> Command {
        Command {
            program: program.into(),
            args: Vec::new(),
            cwd: None,
            env: Vec::new(),
            size: Size::default(),
            raw: false,
            clear_env: false,
            uid: None,
            gid: None,
            start_errors_exit: false,
        }
    }

    /// Adds an argument.
    pub fn arg(mut self, a: impl Into<OsString>) -> Command {
        self.args.push(a.into());
        self
    }
}

/// A running command in its PTY.
#[derive(Debug)]
pub struct Pty {
    master: OwnedFd,
    child: Child,
}

impl Pty {
    /// Starts `cmd` in a new PTY, as the leader of a new session whose
    /// controlling terminal the PTY is.
    pub fn spawn(cmd: &Command) -> io::Result<Pty> {
        let master =
            rustix::pty::openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)?;
        rustix::pty::grantpt(&master)?;
        rustix::pty::unlockpt(&master)?;
        rustix::termios::tcsetwinsize(&master, winsize(cmd.size))?;
        let peer = rustix::pty::ioctl_tiocgptpeer(
            &master,
            OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC,
        )?;
        if cmd.raw {
            let mut t = rustix::termios::tcgetattr(&peer)?;
            t.make_raw();
            rustix::termios::tcsetattr(&peer, rustix::termios::OptionalActions::Now, &t)?;
        }
        let mut c = std::process::Command::new(&cmd.program);
        if cmd.clear_env {
            c.env_clear();
        }
        if let Some(uid) = cmd.uid {
            c.uid(uid);
        }
        if let Some(gid) = cmd.gid {
            c.gid(gid);
        }
        c.args(&cmd.args)
            .envs(cmd.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::from(peer.try_clone()?))
            .stdout(Stdio::from(peer.try_clone()?))
            .stderr(Stdio::from(peer));
        let start = if cmd.start_errors_exit {
            Some(StartCheck::new(cmd)?)
        } else {
            None
        };
        if let Some(dir) = &cmd.cwd
            && start.is_none()
        {
            c.current_dir(dir);
        }
        // SAFETY: between fork and exec the closure makes system calls
        // (and, with `start`, reads what was made before the fork) and
        // touches no memory the parent's other threads may hold: no
        // allocation, no lock.
        unsafe {
            c.pre_exec(move || {
                rustix::process::setsid()?;
                // Standard input is the PTY's peer by now.
                rustix::process::ioctl_tiocsctty(BorrowedFd::borrow_raw(0))?;
                if let Some(s) = &start {
                    s.check();
                }
                Ok(())
            });
        }
        let child = c.spawn()?;
        // The child has its copies of the peer; ours are closed (dropped
        // with `c`), so the master reports the end when the child's are.
        drop(c);
        Ok(Pty { master, child })
    }

    /// The master side: the child's output comes out of it, its input goes
    /// in.
    pub fn master(&self) -> BorrowedFd<'_> {
        self.master.as_fd()
    }

    /// The child's process id, which is also its process group's and its
    /// session's.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Reads the child's output into `buf`: how many bytes, or 0 at the
    /// end (every copy of the child's side closed). Blocks while there is
    /// none.
    pub fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match rustix::io::read(&self.master, &mut *buf) {
                Ok(n) => return Ok(n),
                Err(Errno::INTR) => continue,
                // Linux's master reports the peer's last close as EIO.
                Err(Errno::IO) => return Ok(0),
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Writes all of `bytes` to the child's input.
    pub fn write_all(&self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            match rustix::io::write(&self.master, bytes) {
                Ok(n) => bytes = &bytes[n..],
                Err(Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Sets the terminal's size (the child's foreground group gets
    /// SIGWINCH).
    pub fn resize(&self, size: Size) -> io::Result<()> {
        resize(self.master(), size)
    }

    /// Sends `sig` to the child's whole process group.
    pub fn signal_group(&self, sig: Signal) -> io::Result<()> {
        signal_group(self.pid(), sig)
    }

    /// Waits for the child to exit (blocking in `wait4`), and reaps it.
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        self.child.wait()
    }

    /// The master and the child, to be driven apart (the master by an
    /// event loop, the child by a thread that waits for it).
    pub fn into_parts(self) -> (OwnedFd, Child) {
        (self.master, self.child)
    }
}

/// Sets the terminal behind `master` to `size`.
pub fn resize(master: BorrowedFd<'_>, size: Size) -> io::Result<()> {
    Ok(rustix::termios::tcsetwinsize(master, winsize(size))?)
}

/// Sends `sig` to process group `pgid` (a PTY child's pid); a group that
/// is gone is no error.
pub fn signal_group(pgid: u32, sig: Signal) -> io::Result<()> {
    let pid = Pid::from_raw(pgid as i32).ok_or(io::ErrorKind::InvalidInput)?;
    match rustix::process::kill_process_group(pid, sig) {
        Ok(()) | Err(Errno::SRCH) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

fn winsize(s: Size) -> Winsize {
    Winsize {
        ws_row: s.rows,
        ws_col: s.cols,
        ws_xpixel: s.width,
        ws_ypixel: s.height,
    }
}
