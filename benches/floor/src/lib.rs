//! The physical floor: the cheapest way this machine can do what our tools do
//! (spawn a process, cross a socket, unlink a file, ask epoll). Every system's
//! benchmark puts its numbers beside these, and the `floor` driver measures
//! them on their own.

pub mod bench;
pub mod driver;

use latency::Sample;
use latency::process::wait4;
use std::ffi::CString;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::time::Instant;

unsafe extern "C" {
    static environ: *const *const libc::c_char;
}

/// A program and its arguments, prepared before the clock starts.
#[derive(Debug)]
pub struct Program {
    path: CString,
    args: Vec<CString>,
}

impl Program {
    pub fn new(path: &str, args: &[&str]) -> io::Result<Self> {
        let c = |s: &str| CString::new(s).map_err(io::Error::other);
        let mut all = vec![c(path)?];
        for a in args {
            all.push(c(a)?);
        }
        Ok(Self {
            path: c(path)?,
            args: all,
        })
    }

    fn argv(&self) -> Vec<*const libc::c_char> {
        self.args
            .iter()
            .map(|a| a.as_ptr())
            .chain([std::ptr::null()])
            .collect()
    }

    /// `posix_spawn` plus `wait4`: what a lean shell pays per external command.
    pub fn posix_spawn_wait(&self) -> io::Result<Sample> {
        let argv = self.argv();
        let start = Instant::now();
        let mut pid: libc::pid_t = 0;
        // SAFETY: path and argv are NUL-terminated and outlive the call; null
        // file actions and attributes are allowed; environ is the process's.
        let rc = unsafe {
            libc::posix_spawn(
                &mut pid,
                self.path.as_ptr(),
                std::ptr::null(),
                std::ptr::null(),
                argv.as_ptr().cast(),
                environ.cast(),
            )
        };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        finish(pid, start)
    }

    /// `fork`, `execv` and `wait4`: the classic way.
    pub fn fork_exec_wait(&self) -> io::Result<Sample> {
        let argv = self.argv();
        let start = Instant::now();
        // SAFETY: the child calls only async-signal-safe functions (execv,
        // _exit) on memory prepared before the fork.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            // SAFETY: see above; `_exit` never returns.
            unsafe {
                libc::execv(self.path.as_ptr(), argv.as_ptr());
                libc::_exit(127);
            }
        }
        finish(pid, start)
    }
}

fn finish(pid: libc::pid_t, start: Instant) -> io::Result<Sample> {
    let (status, _) = wait4(pid)?;
    let sample = Sample::duration(start.elapsed());
    if !status.success() {
        return Err(io::Error::other(format!("child exited with {status}")));
    }
    Ok(sample)
}

/// A Unix-socket server on one connection that answers each `request`-byte
/// message with a `reply`-byte one: the floor for a daemon round trip.
#[derive(Debug)]
pub struct UnixRoundTrip {
    client: UnixStream,
    request: Vec<u8>,
    reply: Vec<u8>,
    server: Option<std::thread::JoinHandle<io::Result<()>>>,
    _dir: tempfile::TempDir,
}

impl UnixRoundTrip {
    pub fn start(request: usize, reply: usize) -> io::Result<Self> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("floor.sock");
        let listener = UnixListener::bind(&path)?;
        let server = std::thread::spawn(move || -> io::Result<()> {
            let (mut conn, _) = listener.accept()?;
            let mut req = vec![0u8; request];
            let rep = vec![b'r'; reply];
            loop {
                match conn.read_exact(&mut req) {
                    Ok(()) => conn.write_all(&rep)?,
                    Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
                    Err(e) => return Err(e),
                }
            }
        });
        let client = UnixStream::connect(&path)?;
        Ok(Self {
            client,
            request: vec![b'q'; request],
            reply: vec![0; reply],
            server: Some(server),
            _dir: dir,
        })
    }

    /// One request and its whole reply.
    pub fn round_trip(&mut self) -> io::Result<Sample> {
        let start = Instant::now();
        self.client.write_all(&self.request)?;
        self.client.read_exact(&mut self.reply)?;
        Ok(Sample::duration(start.elapsed()))
    }
}

impl Drop for UnixRoundTrip {
    fn drop(&mut self) {
        let _ = self.client.shutdown(std::net::Shutdown::Both);
        if let Some(s) = self.server.take() {
            let _ = s.join();
        }
    }
}

/// A connected socketpair: send `n` bytes on one end and receive them on the
/// other, in one thread.
#[derive(Debug)]
pub struct PairSendRecv {
    a: UnixStream,
    b: UnixStream,
    out: Vec<u8>,
    inp: Vec<u8>,
}

impl PairSendRecv {
    pub fn new(n: usize) -> io::Result<Self> {
        let (a, b) = UnixStream::pair()?;
        Ok(Self {
            a,
            b,
            out: vec![b'x'; n],
            inp: vec![0; n],
        })
    }

    pub fn send_recv(&mut self) -> io::Result<Sample> {
        let start = Instant::now();
        self.a.write_all(&self.out)?;
        self.b.read_exact(&mut self.inp)?;
        Ok(Sample::duration(start.elapsed()))
    }
}

/// Creates `n` empty files in a fresh directory under `parent` (not timed),
/// then removes them with `unlinkat` in a tight loop and returns the mean cost
/// per file. The directory is gone afterwards.
pub fn unlinkat_per_file(parent: &Path, n: usize) -> io::Result<Sample> {
    use rustix::fs::{AtFlags, Mode, OFlags, openat, unlinkat};
    let dir = tempfile::Builder::new()
        .prefix("floor-unlink")
        .tempdir_in(parent)?;
    let dirfd: OwnedFd = rustix::fs::open(
        dir.path(),
        OFlags::DIRECTORY | OFlags::RDONLY,
        Mode::empty(),
    )?;
    let names: Vec<CString> = (0..n)
        .map(|i| CString::new(format!("f{i:07}")).expect("no NUL"))
        .collect();
    for name in &names {
        drop(openat(
            dirfd.as_fd(),
            name.as_c_str(),
            OFlags::CREATE | OFlags::WRONLY | OFlags::CLOEXEC,
            Mode::from_bits_truncate(0o644),
        )?);
    }
    let start = Instant::now();
    for name in &names {
        unlinkat(dirfd.as_fd(), name.as_c_str(), AtFlags::empty())?;
    }
    let total = start.elapsed();
    Ok(Sample::ns(
        u64::try_from(total.as_nanos() / n.max(1) as u128).unwrap_or(u64::MAX),
    ))
}

/// An empty epoll set, asked for events with a zero timeout.
pub struct EpollZero {
    ep: OwnedFd,
    events: Vec<rustix::event::epoll::Event>,
}

impl std::fmt::Debug for EpollZero {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EpollZero")
            .field("ep", &self.ep)
            .finish_non_exhaustive()
    }
}

impl EpollZero {
    pub fn new() -> io::Result<Self> {
        let ep = rustix::event::epoll::create(rustix::event::epoll::CreateFlags::CLOEXEC)?;
        Ok(Self {
            ep,
            events: Vec::with_capacity(16),
        })
    }

    pub fn wait_zero(&mut self) -> io::Result<Sample> {
        let zero = rustix::time::Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        self.events.clear();
        let start = Instant::now();
        rustix::event::epoll::wait(
            &self.ep,
            rustix::buffer::spare_capacity(&mut self.events),
            Some(&zero),
        )?;
        Ok(Sample::duration(start.elapsed()))
    }
}

/// Two reads of the monotonic clock: the cost every timed sample includes.
pub fn clock_pair() -> Sample {
    let start = Instant::now();
    Sample::duration(start.elapsed())
}
