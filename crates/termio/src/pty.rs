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
use std::ffi::OsString;
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
        if let Some(dir) = &cmd.cwd {
            c.current_dir(dir);
        }
        // SAFETY: between fork and exec the closure makes two system calls
        // and touches no memory the parent's other threads may hold: no
        // allocation, no lock.
        unsafe {
            c.pre_exec(|| {
                rustix::process::setsid()?;
                // Standard input is the PTY's peer by now.
                rustix::process::ioctl_tiocsctty(BorrowedFd::borrow_raw(0))?;
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
