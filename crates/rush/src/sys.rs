//! Processes, descriptors and signals: the only module that talks to the
//! kernel about them. Everything blocks on the kernel (wait4, read); nothing
//! sleeps or polls.

use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
use nix::sys::wait::WaitPidFlag;
use nix::unistd::Pid;
use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The lowest fd the shell keeps its own descriptors at (saved fds,
/// here-doc pipes), out of the way of the 0–9 scripts use.
pub const FIRST_PRIVATE_FD: RawFd = 10;

/// Writes all of `buf` to `fd`, retrying on EINTR and short writes.
pub fn write_all(fd: RawFd, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        // SAFETY: the caller names an fd; writing to a closed or foreign fd is
        // an error the kernel reports, not undefined behaviour.
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        match rustix::io::write(fd, buf) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => buf = &buf[n..],
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Reads `fd` to its end.
pub fn read_to_end(fd: &OwnedFd, out: &mut Vec<u8>) -> io::Result<()> {
    let mut buf = [0u8; 8192];
    loop {
        match rustix::io::read(fd, &mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// A pipe whose ends are close-on-exec.
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let (mut r, mut w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    // With stdin, stdout or stderr closed (`exec 0<&-`), a pipe end would
    // take that number, and be closed when the child moves its pipe there:
    // it leaves the three standard numbers free.
    if r.as_raw_fd() < 3 {
        r = move_cloexec(r, 3)?;
    }
    if w.as_raw_fd() < 3 {
        w = move_cloexec(w, 3)?;
    }
    Ok((r, w))
}

/// `dup2(from, to)`, leaving `to` inheritable.
pub fn dup2(from: RawFd, to: RawFd) -> io::Result<()> {
    if from == to {
        // dup2 would keep FD_CLOEXEC; clear it so the fd is inherited.
        // SAFETY: fcntl on an fd number; errors are reported.
        let r = unsafe { libc::fcntl(from, libc::F_SETFD, 0) };
        return if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        };
    }
    loop {
        // SAFETY: dup2 on fd numbers; the kernel checks them.
        let r = unsafe { libc::dup2(from, to) };
        if r >= 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

/// A close-on-exec copy of `fd` at or above [`FIRST_PRIVATE_FD`], or `None`
/// if `fd` is not open.
pub fn save_fd(fd: RawFd) -> io::Result<Option<RawFd>> {
    // SAFETY: fcntl on an fd number; EBADF means "not open".
    let r = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, FIRST_PRIVATE_FD) };
    if r >= 0 {
        return Ok(Some(r));
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EBADF) {
        Ok(None)
    } else {
        Err(e)
    }
}

pub fn close(fd: RawFd) {
    // SAFETY: closing an fd number the shell owns (or a dead one: EBADF).
    unsafe {
        libc::close(fd);
    }
}

/// Whether `fd` is open.
pub fn is_open(fd: RawFd) -> bool {
    // SAFETY: F_GETFD only reads the flags.
    unsafe { libc::fcntl(fd, libc::F_GETFD) >= 0 }
}

/// Moves an fd the shell opened out of the 0–9 range scripts use, close-on-exec.
pub fn to_private(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() >= FIRST_PRIVATE_FD {
        return Ok(fd);
    }
    // SAFETY: duplicating a valid owned fd.
    let r = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, FIRST_PRIVATE_FD) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: r is a new fd that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(r) })
}

/// How a child ended, as a shell status: the exit code, or 128 + signal.
pub fn status_of(raw: i32) -> i32 {
    if libc::WIFEXITED(raw) {
        libc::WEXITSTATUS(raw)
    } else if libc::WIFSIGNALED(raw) {
        128 + libc::WTERMSIG(raw)
    } else if libc::WIFSTOPPED(raw) {
        128 + libc::WSTOPSIG(raw)
    } else {
        raw
    }
}

/// The result of a blocking wait.
#[derive(Debug, Clone, Copy)]
pub enum Waited {
    /// The child ended with this raw wait status.
    Done(i32),
    /// A trapped signal arrived first (only when asked to stop for one).
    Interrupted,
    /// The child stopped, by this signal (only from
    /// [`wait_pid_or_stop`]).
    Stopped(i32),
}

/// Waits for `pid` (blocking in wait4). If `stop_on_trap`, a trapped signal
/// ends the wait early; otherwise the wait resumes after it.
pub fn wait_pid(pid: i32, stop_on_trap: bool) -> io::Result<Waited> {
    wait4_loop(pid, 0, stop_on_trap)
}

/// [`wait_pid`] that also returns when the child stops (`wait` under job
/// control: a stopped job would never end).
pub fn wait_pid_or_stop(pid: i32, stop_on_trap: bool) -> io::Result<Waited> {
    wait4_loop(pid, libc::WUNTRACED, stop_on_trap)
}

fn wait4_loop(pid: i32, flags: i32, stop_on_trap: bool) -> io::Result<Waited> {
    let mut status = 0;
    loop {
        // SAFETY: wait4 with valid out-pointers.
        let r = unsafe { libc::wait4(pid, &mut status, flags, std::ptr::null_mut()) };
        if r >= 0 && libc::WIFSTOPPED(status) {
            return Ok(Waited::Stopped(libc::WSTOPSIG(status)));
        }
        if r >= 0 {
            return Ok(Waited::Done(status));
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
        if stop_on_trap && trap_pending() {
            return Ok(Waited::Interrupted);
        }
    }
}

/// Reaps `pid` if it has finished: `None` while it runs, else its raw
/// status (`None` inside, 0, if it is not our child any more).
pub fn try_reap(pid: i32) -> Option<Option<i32>> {
    match nix::sys::wait::waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG)) {
        Ok(nix::sys::wait::WaitStatus::StillAlive) => None,
        Ok(ws) => Some(Some(raw_status(ws))),
        Err(_) => Some(None),
    }
}

/// Moves `fd` to the highest free descriptor from 10 to `max`, closed on
/// exec (bash's place for a coprocess's ends), or else above `max`.
pub fn move_high_cloexec(fd: OwnedFd, max: RawFd) -> io::Result<OwnedFd> {
    let Some(free) = (FIRST_PRIVATE_FD..=max).rev().find(|&n| !is_open(n)) else {
        return move_cloexec(fd, max);
    };
    // SAFETY: F_DUPFD_CLOEXEC on a descriptor we own; `free` is the lowest
    // free one at or above itself, so the new descriptor is `free`.
    let r = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, free) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: r is a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(r) })
}

/// Moves `fd` to the lowest free descriptor at or above `min`, closed on
/// exec, and closes the original.
pub fn move_cloexec(fd: OwnedFd, min: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: F_DUPFD_CLOEXEC on a descriptor we own returns a new one we
    // then own.
    let r = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, min) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: r is a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(r) })
}

/// Moves `fd` to the lowest free descriptor at or above `min`, inherited by
/// children (no close-on-exec), and closes the original. bash puts process
/// substitutions at 63 and below, out of the way of the user's own numbers.
pub fn move_inheritable(fd: OwnedFd, min: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: F_DUPFD on a descriptor we own returns a new one we then own.
    let r = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD, min) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: r is a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(r) })
}

/// Reaps any finished children without blocking: (pid, raw status).
pub fn reap_any() -> Vec<(i32, i32)> {
    let mut out = Vec::new();
    loop {
        match nix::sys::wait::waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
            Ok(nix::sys::wait::WaitStatus::StillAlive) | Err(_) => return out,
            Ok(ws) => {
                if let Some(pid) = ws.pid() {
                    out.push((pid.as_raw(), raw_status(ws)));
                }
            }
        }
    }
}

/// Waits for any child (blocking); `None` when there are none.
pub fn wait_any(stop_on_trap: bool, untraced: bool) -> Option<Waited2> {
    let mut status = 0;
    let flags = if untraced { libc::WUNTRACED } else { 0 };
    loop {
        // SAFETY: wait4 with valid out-pointers.
        let r = unsafe { libc::wait4(-1, &mut status, flags, std::ptr::null_mut()) };
        if r > 0 {
            return Some(Waited2::Done(r, status));
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return None;
        }
        if stop_on_trap && trap_pending() {
            return Some(Waited2::Interrupted);
        }
    }
}

/// [`wait_any`]'s result.
#[derive(Debug, Clone, Copy)]
pub enum Waited2 {
    Done(i32, i32),
    Interrupted,
}

fn raw_status(ws: nix::sys::wait::WaitStatus) -> i32 {
    use nix::sys::wait::WaitStatus;
    match ws {
        WaitStatus::Exited(_, c) => (c & 0xff) << 8,
        WaitStatus::Signaled(_, s, core) => (s as i32) | if core { 0x80 } else { 0 },
        _ => 0,
    }
}

/// What a fork returned.
#[derive(Debug)]
pub enum Forked {
    Child,
    Parent(i32),
}

/// Forks the shell. The shell is single-threaded, so the child may go on
/// running Rust code.
///
/// Every signal is blocked across the fork, so that the child's pending
/// flags can be cleared (they are the parent's) before any signal of its
/// own is handled; a signal that then comes before the child has put its
/// handlers back to the default is not lost (see [`uncatch`]).
pub fn fork() -> io::Result<Forked> {
    let all = nix::sys::signal::SigSet::all();
    let old = all.thread_swap_mask(nix::sys::signal::SigmaskHow::SIG_BLOCK)?;
    // SAFETY: rush never starts a thread, so the child is a faithful copy.
    let forked = match unsafe { nix::unistd::fork() } {
        Ok(nix::unistd::ForkResult::Child) => {
            in_child();
            Ok(Forked::Child)
        }
        Ok(nix::unistd::ForkResult::Parent { child }) => Ok(Forked::Parent(child.as_raw())),
        Err(e) => Err(e.into()),
    };
    let _ = old.thread_set_mask();
    forked
}

/// Leaves the process at once, without running destructors (for forked
/// children, whose parent owns everything they inherited).
pub fn exit_now(status: i32) -> ! {
    // SAFETY: _exit ends the process; nothing after it runs.
    unsafe { libc::_exit(status & 0xff) }
}

/// What the spawned child needs, in memory it shares with the parent until
/// it execs (CLONE_VM).
struct ChildArgs {
    path: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    /// The signal mask to restore before exec (the parent's).
    mask: libc::sigset_t,
    /// Signals with a handler in the parent: back to default before the
    /// mask is lifted (a handler must not run in the child).
    reset: u64,
    /// Set by the child when exec fails.
    errno: libc::c_int,
    /// Job control: the process group to join (0: a new one, led by the
    /// child; -1: the parent's), and the terminal to hand that group (-1:
    /// none, a background job).
    pgid: libc::pid_t,
    tty: libc::c_int,
}

extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` points at the parent's ChildArgs, alive until this
    // child execs or exits (CLONE_VFORK suspends the parent until then).
    // Only async-signal-safe calls are made.
    unsafe {
        let a = &mut *arg.cast::<ChildArgs>();
        if a.pgid >= 0 {
            // Every signal is blocked here, SIGTTOU too: taking the
            // terminal from the background cannot stop the child.
            libc::setpgid(0, a.pgid);
            if a.tty >= 0 {
                libc::tcsetpgrp(a.tty, libc::getpgrp());
            }
        }
        for sig in 1..64 {
            if a.reset & (1u64 << sig) != 0 {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(sig, &sa, std::ptr::null_mut());
            }
        }
        libc::sigprocmask(libc::SIG_SETMASK, &a.mask, std::ptr::null_mut());
        libc::execve(a.path, a.argv, a.envp);
        a.errno = *libc::__errno_location();
        libc::_exit(127)
    }
}

/// The child's stack, allocated once and reused: the parent is suspended
/// while the child runs on it, and the child is gone (exec'd or exited)
/// before `clone` returns.
struct ChildStack(std::cell::UnsafeCell<[u128; 4096]>);

// SAFETY: rush is single-threaded; the stack is only used inside `spawn`.
unsafe impl Sync for ChildStack {}

static CHILD_STACK: ChildStack = ChildStack(std::cell::UnsafeCell::new([0; 4096]));

/// Starts `path` in a new process and returns its pid, as posix_spawn does
/// (clone with CLONE_VM|CLONE_VFORK: no copy of the shell's memory), but
/// without glibc's loop over every signal in the child: only the signals
/// the shell catches are reset (exec resets handlers anyway; ignored
/// signals stay ignored, as POSIX wants).
pub fn spawn(
    path: &CStr,
    argv: &[CString],
    env: &[CString],
    group: Option<Pgrp>,
) -> nix::Result<i32> {
    let argv_ptrs: Vec<*const libc::c_char> = argv
        .iter()
        .map(|a| a.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    let env_ptrs: Vec<*const libc::c_char> = env
        .iter()
        .map(|a| a.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    // SAFETY: sigset_t is plain data; the calls below fill it.
    let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers to sigsets.
    unsafe {
        libc::sigfillset(&mut all);
        libc::sigprocmask(libc::SIG_BLOCK, &all, &mut old);
    }
    let mut args = ChildArgs {
        path: path.as_ptr(),
        argv: argv_ptrs.as_ptr(),
        envp: env_ptrs.as_ptr(),
        mask: old,
        reset: CAUGHT.load(Ordering::SeqCst) | JOB_IGNORED.load(Ordering::SeqCst),
        errno: 0,
        pgid: group.map_or(-1, |g| g.pgid),
        tty: group.and_then(|g| g.tty).unwrap_or(-1),
    };
    // SAFETY: the stack is ours alone (single thread, see ChildStack); its
    // top is 16-byte aligned; the child only reads `args`, which outlives
    // it, and the parent resumes only once the child has exec'd or exited.
    let pid = unsafe {
        let base = CHILD_STACK.0.get().cast::<u8>();
        let top = base.add(std::mem::size_of::<[u128; 4096]>());
        libc::clone(
            child_main,
            top.cast(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            (&raw mut args).cast(),
        )
    };
    let clone_errno = nix::errno::Errno::last_raw();
    // SAFETY: restoring the mask saved above.
    unsafe {
        libc::sigprocmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
    }
    if pid < 0 {
        return Err(nix::Error::from_raw(clone_errno));
    }
    if args.errno != 0 {
        // The child could not exec: reap it and report why.
        let _ = wait_pid(pid, false);
        return Err(nix::Error::from_raw(args.errno));
    }
    Ok(pid)
}

/// A job's process group, for [`spawn`] and forked children.
#[derive(Debug, Clone, Copy)]
pub struct Pgrp {
    /// The group to join; 0 makes a new one led by the child.
    pub pgid: i32,
    /// The terminal to give the group (a foreground job).
    pub tty: Option<RawFd>,
}

impl Pgrp {
    /// In a forked child: joins the group and, for a foreground job, takes
    /// the terminal (SIGTTOU blocked meanwhile, as the child is still in
    /// the background when it asks).
    pub fn join_from_child(self) {
        // SAFETY: setpgid/tcsetpgrp/sigprocmask on this process, with
        // valid sigsets.
        unsafe {
            libc::setpgid(0, self.pgid);
            if let Some(tty) = self.tty {
                let mut set: libc::sigset_t = std::mem::zeroed();
                let mut old: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, libc::SIGTTOU);
                libc::sigprocmask(libc::SIG_BLOCK, &set, &mut old);
                libc::tcsetpgrp(tty, libc::getpgrp());
                libc::sigprocmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            }
        }
        // The shell ignores the job-control signals for itself; its jobs
        // must not.
        restore_shell_signals();
    }

    /// In the parent, after the fork: the same group (whichever of the two
    /// runs first).
    pub fn join_from_parent(self, pid: i32) {
        // SAFETY: setpgid on our own child.
        unsafe { libc::setpgid(pid, if self.pgid == 0 { pid } else { self.pgid }) };
    }
}

/// In a forked child of the shell: the signals the shell ignores for
/// itself go back to their default (its jobs must not ignore them).
pub fn restore_shell_signals() {
    let ignored = JOB_IGNORED.swap(0, Ordering::SeqCst);
    for s in 1..64 {
        if ignored & (1 << s) != 0 {
            let _ = set_disposition(s, Disposition::Default);
        }
    }
}

/// Puts `sig` back to its default if the shell catches it (a signal that
/// was ignored at start stays ignored).
pub fn uncatch(sig: i32) {
    if CAUGHT.load(Ordering::SeqCst) & (1 << sig) != 0 {
        to_default(sig);
    }
}

/// Puts `sig` back to its default action, in a forked child.
///
/// `sig` may have come between the fork and this call, and been caught by
/// the handler the child inherited (a hang-up sent to a job just started):
/// it is raised again, now with its default action, as if the child had
/// not caught it.
pub fn to_default(sig: i32) {
    let _ = set_disposition(sig, Disposition::Default);
    if let Some(flag) = usize::try_from(sig).ok().and_then(|s| PENDING.get(s))
        && flag.swap(false, Ordering::SeqCst)
    {
        // SAFETY: raise on this process.
        unsafe { libc::raise(sig) };
    }
}

/// Signals an interactive shell ignores for itself (SIGTSTP, SIGTTIN,
/// SIGTTOU, and SIGQUIT and SIGTERM): its children get them back at
/// their default.
static JOB_IGNORED: AtomicU64 = AtomicU64::new(0);

/// Ignores the job-control signals in the shell (`set -m` with a terminal,
/// and SIGQUIT/SIGTERM when interactive), remembering to reset them in
/// children.
pub fn ignore_for_shell(sigs: &[i32]) {
    for &s in sigs {
        // A signal ignored at start is left as it is (and stays ignored in
        // children, as POSIX wants).
        if ignored_at_start(s) {
            continue;
        }
        if set_disposition(s, Disposition::Ignore).is_ok() {
            JOB_IGNORED.fetch_or(1 << s, Ordering::SeqCst);
        }
    }
}

/// What a wait under job control saw.
#[derive(Debug, Clone, Copy)]
pub enum Event {
    /// Ended, with this raw wait status.
    Done(i32),
    /// Stopped by this signal.
    Stopped(i32),
    /// Continued (SIGCONT).
    Continued,
}

/// Waits (blocking in wait4, with WUNTRACED) until `pid` ends or stops.
pub fn wait_untraced(pid: i32) -> io::Result<Event> {
    let mut status = 0;
    loop {
        // SAFETY: wait4 with valid out-pointers.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WUNTRACED, std::ptr::null_mut()) };
        if r >= 0 {
            return Ok(if libc::WIFSTOPPED(status) {
                Event::Stopped(libc::WSTOPSIG(status))
            } else {
                Event::Done(status)
            });
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

/// Reaps what changed in any child without blocking: ends, stops and
/// continues (for job notices).
pub fn reap_events() -> Vec<(i32, Event)> {
    let mut out = Vec::new();
    loop {
        let mut status = 0;
        // SAFETY: wait4 with valid out-pointers.
        let r = unsafe {
            libc::wait4(
                -1,
                &mut status,
                libc::WNOHANG | libc::WUNTRACED | libc::WCONTINUED,
                std::ptr::null_mut(),
            )
        };
        if r <= 0 {
            return out;
        }
        let ev = if libc::WIFSTOPPED(status) {
            Event::Stopped(libc::WSTOPSIG(status))
        } else if libc::WIFCONTINUED(status) {
            Event::Continued
        } else {
            Event::Done(status)
        };
        out.push((r, ev));
    }
}

/// Whether `sig` arrived and was not yet taken.
pub fn is_pending(sig: i32) -> bool {
    usize::try_from(sig)
        .ok()
        .and_then(|s| PENDING.get(s))
        .is_some_and(|f| f.load(Ordering::SeqCst))
}

/// Marks `sig` as arrived, as if its handler had run (an interactive shell
/// acts on a foreground job's SIGINT as on its own).
pub fn raise_pending(sig: i32) {
    if let Some(flag) = usize::try_from(sig).ok().and_then(|s| PENDING.get(s)) {
        flag.store(true, Ordering::SeqCst);
        LAST.store(sig, Ordering::SeqCst);
        ANY_PENDING.store(true, Ordering::SeqCst);
    }
}

/// The terminal's modes, to put back after a job leaves them changed.
#[derive(Clone, Copy)]
pub struct Modes(libc::termios);

impl std::fmt::Debug for Modes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Modes")
    }
}

impl Modes {
    pub fn get(fd: RawFd) -> Option<Modes> {
        // SAFETY: tcgetattr fills the zeroed termios it is given.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            (libc::tcgetattr(fd, &mut t) == 0).then_some(Modes(t))
        }
    }

    /// Whether the two set the same modes.
    pub fn same(&self, other: &Modes) -> bool {
        let (a, b) = (&self.0, &other.0);
        a.c_iflag == b.c_iflag
            && a.c_oflag == b.c_oflag
            && a.c_cflag == b.c_cflag
            && a.c_lflag == b.c_lflag
            && a.c_cc == b.c_cc
    }

    pub fn set(&self, fd: RawFd) {
        // SAFETY: tcsetattr reads the termios it is given.
        unsafe { libc::tcsetattr(fd, libc::TCSADRAIN, &self.0) };
    }
}

/// Replaces the process with `path`. Returns only on failure.
pub fn exec(path: &CStr, argv: &[CString], env: &[CString]) -> nix::Error {
    reset_signals_for_exec();
    match nix::unistd::execve(path, argv, env) {
        Err(e) => e,
        Ok(never) => match never {},
    }
}

// ---- signals and traps ------------------------------------------------------

/// Signals 1..=64 that arrived and have a trap waiting to run.
static PENDING: [AtomicBool; 65] = [const { AtomicBool::new(false) }; 65];
static ANY_PENDING: AtomicBool = AtomicBool::new(false);
/// Signals with a handler installed (bit n = signal n).
static CAUGHT: AtomicU64 = AtomicU64::new(0);
/// The last trapped signal that arrived.
static LAST: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// The number of the last trapped signal that arrived.
pub fn last_signal() -> i32 {
    LAST.load(Ordering::SeqCst)
}

/// Set while the line editor reads: a hang-up then also raises SIGINT,
/// which makes the editor return (it restarts its read after any other
/// signal).
static EDITOR_READING: AtomicBool = AtomicBool::new(false);

/// Marks the line editor as reading (or not), for [`EDITOR_READING`].
pub fn editor_reading(on: bool) {
    EDITOR_READING.store(on, Ordering::SeqCst);
}

extern "C" fn on_signal(sig: libc::c_int) {
    if let Some(flag) = usize::try_from(sig).ok().and_then(|s| PENDING.get(s)) {
        flag.store(true, Ordering::SeqCst);
        LAST.store(sig, Ordering::SeqCst);
        ANY_PENDING.store(true, Ordering::SeqCst);
    }
    if sig == libc::SIGHUP && EDITOR_READING.load(Ordering::SeqCst) {
        // The terminal is gone: standard input becomes /dev/null, so the
        // editor's next read ends at once, even if the SIGINT below comes
        // before it has put in its own handler (which makes it return).
        // SAFETY: open, dup2, close and raise are async-signal-safe; the
        // path is a NUL-terminated literal.
        unsafe {
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
            if null >= 0 {
                libc::dup2(null, 0);
                libc::close(null);
            }
            libc::raise(libc::SIGINT);
        }
    }
    let fg = FOREGROUND_GROUP.load(Ordering::SeqCst);
    if sig == libc::SIGHUP && fg > 0 {
        // Passed on from here, not after the wait: a flag checked before
        // wait4 blocks could miss a signal that comes just after the check.
        // SAFETY: kill is async-signal-safe.
        unsafe {
            libc::kill(-fg, libc::SIGHUP);
            libc::kill(-fg, libc::SIGCONT);
        }
    }
}

/// The process group of the foreground job the shell waits for (0: none):
/// a hang-up is passed on to it at once.
static FOREGROUND_GROUP: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// Sets (or clears, with 0) the group a hang-up is passed on to.
pub fn forward_hangup_to(pgid: i32) {
    FOREGROUND_GROUP.store(pgid, Ordering::SeqCst);
}

pub fn trap_pending() -> bool {
    ANY_PENDING.load(Ordering::SeqCst)
}

/// Whether SIGCHLD is the only signal that arrived since the last
/// [`take_pending`] (a child's end, which does not end `wait`).
pub fn only_child_pending() -> bool {
    (1..PENDING.len()).all(|s| (s == libc::SIGCHLD as usize) == PENDING[s].load(Ordering::SeqCst))
}

/// Takes the signals that arrived since the last call, lowest first.
pub fn take_pending() -> Vec<i32> {
    if !ANY_PENDING.swap(false, Ordering::SeqCst) {
        return Vec::new();
    }
    (1..PENDING.len())
        .filter(|&s| PENDING[s].swap(false, Ordering::SeqCst))
        .map(|s| s as i32)
        .collect()
}

/// What the shell does with a signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    Default,
    Ignore,
    /// Run the trap at the next safe point.
    Catch,
}

/// Sets what happens on `sig`. Caught signals interrupt blocking waits
/// (no SA_RESTART), so that `wait` can return for a trap.
pub fn set_disposition(sig: i32, d: Disposition) -> io::Result<()> {
    let signal = Signal::try_from(sig).map_err(io::Error::from)?;
    let handler = match d {
        Disposition::Default => SigHandler::SigDfl,
        Disposition::Ignore => SigHandler::SigIgn,
        Disposition::Catch => SigHandler::Handler(on_signal),
    };
    let action = SigAction::new(handler, SaFlags::empty(), SigSet::empty());
    // SAFETY: the handler only stores to atomics, which is async-signal-safe.
    unsafe { sigaction(signal, &action) }.map_err(io::Error::from)?;
    let bit = 1u64 << (sig as u64 % 64);
    if d == Disposition::Catch {
        CAUGHT.fetch_or(bit, Ordering::SeqCst);
    } else {
        CAUGHT.fetch_and(!bit, Ordering::SeqCst);
    }
    Ok(())
}

/// Whether `sig` is ignored now. For a signal the shell has not trapped
/// (nor ignored for a background job), that is whether it was ignored when
/// the shell started: such signals cannot be trapped or reset (POSIX), and
/// `trap -p` lists them.
pub fn ignored_at_start(sig: i32) -> bool {
    if !(1..65).contains(&sig) {
        return false;
    }
    // SAFETY: a query: with no new action, sigaction only writes the
    // current one into `old`, which is a valid, zeroed sigaction.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

/// The signals a spawned child must see at their default: those the shell
/// catches.
pub fn caught_signals() -> SigSet {
    let mut set = SigSet::empty();
    let bits = CAUGHT.load(Ordering::SeqCst);
    for s in 1..64 {
        if bits & (1 << s) != 0
            && let Ok(sig) = Signal::try_from(s)
        {
            set.add(sig);
        }
    }
    set
}

/// Caught signals go back to default before an exec (ignored ones stay
/// ignored, as POSIX requires).
fn reset_signals_for_exec() {
    for s in caught_signals().iter() {
        let _ = set_disposition(s as i32, Disposition::Default);
    }
    restore_shell_signals();
}

/// In a fresh child: pending traps belong to the parent.
fn in_child() {
    take_pending();
}

/// The pseudo-signal of bash's `trap … ERR`: run after a command fails
/// where `set -e` would stop.
pub const ERR_TRAP: i32 = -1;
/// `trap … DEBUG`: before each simple command, `[[ ]]` and `(( ))`.
pub const DEBUG_TRAP: i32 = -2;
/// `trap … RETURN`: when a function or a sourced file returns.
pub const RETURN_TRAP: i32 = -3;

/// The number of a signal name (`INT`, `SIGINT`, `int`) or number.
pub fn signal_number(name: &[u8]) -> Option<i32> {
    let s = std::str::from_utf8(name).ok()?;
    if let Ok(n) = s.parse::<i32>() {
        return (0..=64).contains(&n).then_some(n);
    }
    let upper = s.to_ascii_uppercase();
    let bare = upper.strip_prefix("SIG").unwrap_or(&upper);
    if bare == "EXIT" {
        return Some(0);
    }
    match bare {
        "ERR" => return Some(ERR_TRAP),
        "DEBUG" => return Some(DEBUG_TRAP),
        "RETURN" => return Some(RETURN_TRAP),
        _ => {}
    }
    SIGNALS
        .iter()
        .find(|(_, n)| *n == bare)
        .map(|(num, _)| *num)
}

/// The name of a signal without `SIG` (`EXIT` for 0).
pub fn signal_name(num: i32) -> Option<&'static str> {
    if num == 0 {
        return Some("EXIT");
    }
    match num {
        ERR_TRAP => return Some("ERR"),
        DEBUG_TRAP => return Some("DEBUG"),
        RETURN_TRAP => return Some("RETURN"),
        _ => {}
    }
    SIGNALS.iter().find(|(n, _)| *n == num).map(|(_, s)| *s)
}

pub const SIGNALS: &[(i32, &str)] = &[
    (libc::SIGHUP, "HUP"),
    (libc::SIGINT, "INT"),
    (libc::SIGQUIT, "QUIT"),
    (libc::SIGILL, "ILL"),
    (libc::SIGTRAP, "TRAP"),
    (libc::SIGABRT, "ABRT"),
    (libc::SIGBUS, "BUS"),
    (libc::SIGFPE, "FPE"),
    (libc::SIGKILL, "KILL"),
    (libc::SIGUSR1, "USR1"),
    (libc::SIGSEGV, "SEGV"),
    (libc::SIGUSR2, "USR2"),
    (libc::SIGPIPE, "PIPE"),
    (libc::SIGALRM, "ALRM"),
    (libc::SIGTERM, "TERM"),
    (libc::SIGSTKFLT, "STKFLT"),
    (libc::SIGCHLD, "CHLD"),
    (libc::SIGCONT, "CONT"),
    (libc::SIGSTOP, "STOP"),
    (libc::SIGTSTP, "TSTP"),
    (libc::SIGTTIN, "TTIN"),
    (libc::SIGTTOU, "TTOU"),
    (libc::SIGURG, "URG"),
    (libc::SIGXCPU, "XCPU"),
    (libc::SIGXFSZ, "XFSZ"),
    (libc::SIGVTALRM, "VTALRM"),
    (libc::SIGPROF, "PROF"),
    (libc::SIGWINCH, "WINCH"),
    (libc::SIGIO, "IO"),
    (libc::SIGPWR, "PWR"),
    (libc::SIGSYS, "SYS"),
    // The real-time signals, named as bash names them (glibc keeps 32
    // and 33 for itself).
    (34, "RTMIN"),
    (35, "RTMIN+1"),
    (36, "RTMIN+2"),
    (37, "RTMIN+3"),
    (38, "RTMIN+4"),
    (39, "RTMIN+5"),
    (40, "RTMIN+6"),
    (41, "RTMIN+7"),
    (42, "RTMIN+8"),
    (43, "RTMIN+9"),
    (44, "RTMIN+10"),
    (45, "RTMIN+11"),
    (46, "RTMIN+12"),
    (47, "RTMIN+13"),
    (48, "RTMIN+14"),
    (49, "RTMIN+15"),
    (50, "RTMAX-14"),
    (51, "RTMAX-13"),
    (52, "RTMAX-12"),
    (53, "RTMAX-11"),
    (54, "RTMAX-10"),
    (55, "RTMAX-9"),
    (56, "RTMAX-8"),
    (57, "RTMAX-7"),
    (58, "RTMAX-6"),
    (59, "RTMAX-5"),
    (60, "RTMAX-4"),
    (61, "RTMAX-3"),
    (62, "RTMAX-2"),
    (63, "RTMAX-1"),
    (64, "RTMAX"),
];

/// The signal table as `kill -l` and `trap -l` print it (bash): five
/// `N) SIGNAME` a line, separated by tabs.
pub fn signal_table() -> String {
    let mut out = String::new();
    for (i, (n, name)) in SIGNALS.iter().enumerate() {
        out.push_str(&format!("{n:2}) SIG{name}"));
        out.push(if i % 5 == 4 { '\n' } else { '\t' });
    }
    if !SIGNALS.len().is_multiple_of(5) {
        out.push('\n');
    }
    out
}

/// Sends `sig` to `pid` (a negative pid names a process group).
/// Whether `fd` is a terminal.
pub fn is_tty(fd: RawFd) -> bool {
    // SAFETY: isatty only queries the fd number.
    unsafe { libc::isatty(fd) == 1 }
}

pub fn kill(pid: i32, sig: i32) -> io::Result<()> {
    // SAFETY: kill with numbers; the kernel checks them.
    let r = unsafe { libc::kill(pid, sig) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}
