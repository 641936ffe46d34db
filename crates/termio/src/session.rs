//! A PTY session on tokio: one reader (a thread) fills the [`Ring`], many
//! viewers read it at their own cursors, and input goes straight to the
//! PTY.
//!
//! Flow control: the reader reads only while some viewer would keep all
//! of what it reads (or no viewer is attached). When every viewer is
//! behind, it stops, the PTY's buffer fills, and the child's writes block,
//! as VS Code's and ttyd's relays do; memory stays the ring's. A stalled
//! viewer costs its cursor: the others read on, and the stalled one, when
//! it reads again, is told exactly what it lost.
//!
//! The end: the child's exit is known when a thread blocked in `wait4`
//! reaps it; the session ends when the reader has also read all the
//! output there is after that (the master's EIO, or nothing more to read
//! once the child has exited: a background job may still hold the
//! terminal). So [`Event::End`] comes after every byte the child wrote.

use crate::pty::{self, Command, Pty, Size};
use crate::ring::{Read, Ring};
use rustix::fd::{AsFd, OwnedFd};
use std::collections::HashMap;
use std::io;
use std::process::ExitStatus;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::sync::Notify;

/// How a session is set up.
#[derive(Debug, Clone)]
pub struct Options {
    /// Bytes of output kept for viewers behind and for reconnects.
    pub ring: usize,
    /// Bytes read from the PTY at a time.
    pub read: usize,
    /// Plan-mode markers to look for in the output ([`crate::plan`]);
    /// none: no detector runs.
    pub plan_markers: Vec<crate::plan::Marker>,
}

/// Plan events kept for [`Session::next_plan`] at most; older ones go
/// first.
const PLAN_EVENTS: usize = 256;

impl Default for Options {
    fn default() -> Options {
        Options {
            ring: 4 << 20,
            read: 64 << 10,
            plan_markers: crate::plan::builtin(),
        }
    }
}

/// How long the start of a character waits for the rest of it before it
/// goes alone: a character cut between two reads of the PTY is whole
/// within microseconds, and bytes that only look like a character's start
/// (binary output) must not wait for good.
pub const HOLD: std::time::Duration = std::time::Duration::from_millis(10);

/// What a viewer reads next.
#[derive(Debug, PartialEq, Eq)]
pub enum Event {
    /// Output from sequence number `seq` on.
    Output { seq: u64, bytes: Vec<u8> },
    /// The bytes from `from` to `to` left the ring before this viewer read
    /// them.
    Lost { from: u64, to: u64 },
    /// The child has exited and all its output has been read: its exit
    /// code, or the signal that ended it (as a negative number).
    End { code: i32 },
}

/// A running session.
#[derive(Debug, Clone)]
pub struct Session {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// Registered with tokio for writes only: the reader is a thread of
    /// its own, and a registration for reads would wake tokio's driver at
    /// every 4 KiB the terminal hands on, for nobody.
    master: AsyncFd<OwnedFd>,
    pid: u32,
    state: Mutex<State>,
    /// Output came, or the session ended.
    more: Notify,
    /// A viewer moved on or left, or the child was reaped: the reader may
    /// have room again (with `state`).
    room: Condvar,
    /// An eventfd, readable once the child has been reaped: the reader,
    /// waiting in `poll` for output, drains what is left.
    reaped: OwnedFd,
    /// When a redraw was last asked for.
    redrawn: Mutex<Option<std::time::Instant>>,
}

#[derive(Debug)]
struct State {
    ring: Ring,
    /// Viewers' cursors, by id.
    cursors: HashMap<u64, u64>,
    /// Viewers waiting for output, by id: their cursor, and the sequence
    /// number the output's end must reach to wake them. The reader wakes
    /// them only then (or when the cursor leaves the ring), not at every
    /// read: a PTY gives at most 4 KiB a read, and a viewer that waits for
    /// a whole frame would wake 64 times for one.
    waits: HashMap<u64, (u64, u64)>,
    next_id: u64,
    /// The child's exit, once reaped.
    exit: Option<i32>,
    /// All output is read (and the child reaped).
    ended: bool,
    read: usize,
    /// Plan events not yet taken.
    plans: std::collections::VecDeque<crate::plan::Event>,
}

impl State {
    /// Whether reading `n` more bytes loses none of them for some viewer.
    fn room_for(&self, n: usize) -> bool {
        let cap = self.ring.capacity() as u64;
        let end = self.ring.end() + n as u64;
        self.cursors.is_empty() || self.cursors.values().any(|&c| end - c.min(end) <= cap)
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn code_of(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .unwrap_or_else(|| -status.signal().unwrap_or(0))
}

impl Session {
    /// Starts `cmd` in a new PTY, read by a thread of its own; its input
    /// is written on the current tokio runtime (which must be running).
    pub fn spawn(cmd: &Command, opts: Options) -> io::Result<Session> {
        let (master, mut child) = Pty::spawn(cmd)?.into_parts();
        rustix::io::ioctl_fionbio(&master, true)?;
        let pid = child.id();
        // SAFETY: an OwnedFd's descriptor is open, and stays the same one,
        // for as long as the OwnedFd lives, which the AsyncFd owns.
        let master = unsafe { AsyncFd::register_with_interest(master, Interest::WRITABLE) }
            .map_err(|e| e.into_parts().1)?;
        let reaped = rustix::event::eventfd(
            0,
            rustix::event::EventfdFlags::CLOEXEC | rustix::event::EventfdFlags::NONBLOCK,
        )?;
        let inner = Arc::new(Inner {
            master,
            pid,
            state: Mutex::new(State {
                ring: Ring::new(opts.ring),
                cursors: HashMap::new(),
                waits: HashMap::new(),
                next_id: 0,
                exit: None,
                ended: false,
                read: opts.read.max(1),
                plans: std::collections::VecDeque::new(),
            }),
            more: Notify::new(),
            room: Condvar::new(),
            reaped,
            redrawn: Mutex::new(None),
        });
        // The child is reaped by a thread blocked in wait4.
        let reaped = inner.clone();
        std::thread::Builder::new()
            .name("termio-wait".into())
            .spawn(move || {
                let code = child.wait().map(code_of).unwrap_or(-1);
                lock(&reaped.state).exit = Some(code);
                // The reader looks once more for what is left, then ends.
                let _ = rustix::io::write(&reaped.reaped, &1u64.to_ne_bytes());
                reaped.room.notify_all();
                reaped.more.notify_waiters();
            })?;
        let detector =
            (!opts.plan_markers.is_empty()).then(|| crate::plan::Detector::new(opts.plan_markers));
        let reader = inner.clone();
        std::thread::Builder::new()
            .name("termio-read".into())
            .spawn(move || read(reader, detector))?;
        Ok(Session { inner })
    }

    /// The child's process id (and its process group's).
    pub fn pid(&self) -> u32 {
        self.inner.pid
    }

    /// A viewer that reads from sequence number `from` (the oldest byte
    /// still kept if `None`, or if `from` has left the ring: it is then
    /// told what it lost).
    pub fn attach(&self, from: Option<u64>) -> Viewer {
        let mut st = lock(&self.inner.state);
        let id = st.next_id;
        st.next_id += 1;
        let cursor = from.unwrap_or(st.ring.start()).min(st.ring.end());
        st.cursors.insert(id, cursor);
        Viewer {
            inner: self.inner.clone(),
            id,
        }
    }

    /// How many viewers are attached.
    pub fn viewers(&self) -> usize {
        lock(&self.inner.state).cursors.len()
    }

    /// The sequence number of the next byte of output.
    pub fn end(&self) -> u64 {
        lock(&self.inner.state).ring.end()
    }

    /// Writes `bytes` to the child's input, at once (waiting only while
    /// the terminal's input buffer is full).
    pub async fn write(&self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let mut ready = self.inner.master.writable().await?;
            match ready.try_io(|fd| Ok(rustix::io::write(fd.get_ref(), bytes)?)) {
                Ok(Ok(n)) => bytes = &bytes[n..],
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => {}
            }
        }
        Ok(())
    }

    /// Waits for the end (the child exited and all its output was read):
    /// its exit code, or a signal's number negated.
    pub async fn ended(&self) -> i32 {
        loop {
            let more = self.inner.more.notified();
            tokio::pin!(more);
            more.as_mut().enable();
            {
                let st = lock(&self.inner.state);
                if st.ended {
                    return st.exit.unwrap_or(-1);
                }
            }
            more.await;
        }
    }

    /// The next plan-mode event in the output; `None` once the session
    /// has ended and none is left.
    pub async fn next_plan(&self) -> Option<crate::plan::Event> {
        loop {
            let more = self.inner.more.notified();
            tokio::pin!(more);
            more.as_mut().enable();
            {
                let mut st = lock(&self.inner.state);
                if let Some(e) = st.plans.pop_front() {
                    return Some(e);
                }
                if st.ended {
                    return None;
                }
            }
            more.await;
        }
    }

    /// The path of the terminal's child side (`/dev/pts/N`).
    pub fn pts_name(&self) -> io::Result<String> {
        let name = rustix::pty::ptsname(self.inner.master.get_ref(), Vec::new())?;
        Ok(name.to_string_lossy().into_owned())
    }

    /// The master side's descriptor, for callers that ask it what it is
    /// (`isatty`); it stays the session's, open while the session lives.
    pub fn master_fd(&self) -> i32 {
        use std::os::fd::AsRawFd;
        self.inner.master.get_ref().as_raw_fd()
    }

    /// Sets the terminal's size.
    pub fn resize(&self, size: Size) -> io::Result<()> {
        pty::resize(self.inner.master.get_ref().as_fd(), size)
    }

    /// Sends `sig` to the child's process group.
    pub fn signal(&self, sig: rustix::process::Signal) -> io::Result<()> {
        pty::signal_group(self.inner.pid, sig)
    }

    /// Asks the program in the foreground of the terminal to draw its
    /// screen again: SIGWINCH to the terminal's foreground process group,
    /// as a resize would send (full-screen programs redraw on it; a shell
    /// draws its prompt). For a client that lost output: the bytes are
    /// gone, the program can draw what they made. At most once a second.
    pub fn redraw(&self) -> io::Result<()> {
        {
            let mut last = lock(&self.inner.redrawn);
            if last.is_some_and(|t| t.elapsed() < REDRAW_EVERY) {
                return Ok(());
            }
            *last = Some(std::time::Instant::now());
        }
        let pgrp = rustix::termios::tcgetpgrp(self.inner.master.get_ref())?;
        pty::signal_group(
            pgrp.as_raw_nonzero().get() as u32,
            rustix::process::Signal::WINCH,
        )
    }
}

/// The least time between two redraws a session asks for.
const REDRAW_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// The reader, a thread of its own: the PTY's output into the ring while
/// some viewer has room for it, until the end. A blocking loop, as the
/// terminal's own floor is: a read, and when there is nothing, `poll` on
/// the master and on the reap's eventfd; no wake-up of anyone else per
/// read (the viewers are woken when what they wait for is there).
fn read(inner: Arc<Inner>, mut detector: Option<crate::plan::Detector>) {
    use rustix::event::{PollFd, PollFlags};
    let master = inner.master.get_ref();
    let mut buf = vec![0u8; lock(&inner.state).read];
    loop {
        // Room for a whole read, for some viewer.
        let exited = {
            let mut st = lock(&inner.state);
            while !st.room_for(buf.len()) {
                st = inner.room.wait(st).unwrap_or_else(|e| e.into_inner());
            }
            st.exit.is_some()
        };
        let n = match rustix::io::read(master, &mut buf) {
            Ok(n) => n,
            Err(rustix::io::Errno::INTR) => continue,
            // Nothing now: wait for output, or for the reap (to drain
            // without waiting).
            Err(rustix::io::Errno::AGAIN) if !exited => {
                let mut fds = [
                    PollFd::new(master, PollFlags::IN),
                    PollFd::new(&inner.reaped, PollFlags::IN),
                ];
                let _ = rustix::event::poll(&mut fds, None);
                continue;
            }
            // EIO (no one holds the terminal), or EAGAIN once the child
            // is gone (a background job holds it, and has written nothing
            // more): the end.
            Err(_) => 0,
        };
        if n == 0 {
            let mut st = lock(&inner.state);
            // The terminal closed before the reap: wait for it.
            while st.exit.is_none() {
                st = inner.room.wait(st).unwrap_or_else(|e| e.into_inner());
            }
            st.ended = true;
            drop(st);
            inner.more.notify_waiters();
            return;
        }
        let plans = detector
            .as_mut()
            .map(|d| d.feed(&buf[..n]))
            .unwrap_or_default();
        let mut st = lock(&inner.state);
        st.ring.push(&buf[..n]);
        let (start, end) = (st.ring.start(), st.ring.end());
        let wake =
            !plans.is_empty() || st.waits.values().any(|&(c, want)| want <= end || c < start);
        for e in plans {
            if st.plans.len() == PLAN_EVENTS {
                st.plans.pop_front();
            }
            st.plans.push_back(e);
        }
        drop(st);
        if wake {
            inner.more.notify_waiters();
        }
    }
}

/// One reader of a session's output, at its own cursor.
#[derive(Debug)]
pub struct Viewer {
    inner: Arc<Inner>,
    id: u64,
}

impl Viewer {
    /// Its cursor: the sequence number of the next byte it reads.
    pub fn cursor(&self) -> u64 {
        lock(&self.inner.state)
            .cursors
            .get(&self.id)
            .copied()
            .unwrap_or(0)
    }

    /// Waits until at least `min` bytes (at most the ring's size) are
    /// there to read, the cursor has left the window, or the session has
    /// ended.
    pub async fn ready(&self, min: u64) {
        loop {
            let more = self.inner.more.notified();
            tokio::pin!(more);
            more.as_mut().enable();
            {
                let mut st = lock(&self.inner.state);
                let c = st.cursors.get(&self.id).copied().unwrap_or(0);
                let min = min.min(st.ring.capacity() as u64).max(1);
                if st.ended || c < st.ring.start() || st.ring.end().saturating_sub(c) >= min {
                    st.waits.remove(&self.id);
                    return;
                }
                st.waits.insert(self.id, (c, c + min));
            }
            more.await;
        }
    }

    /// The next output (at most `max` bytes, ending on a UTF-8 boundary,
    /// unless the start of a character has waited [`HOLD`] for its rest),
    /// what it lost, or the end; waits while there is nothing new.
    pub async fn next(&mut self, max: usize) -> Event {
        // Set while the only bytes to read are a character's start.
        let mut held: Option<tokio::time::Instant> = None;
        loop {
            let more = self.inner.more.notified();
            tokio::pin!(more);
            more.as_mut().enable();
            {
                let mut st = lock(&self.inner.state);
                let cursor = st.cursors.get(&self.id).copied().unwrap_or(0);
                let overdue = held.is_some_and(|t| t.elapsed() >= HOLD);
                let (event, next) = match st.ring.read(cursor, max) {
                    Read::Bytes {
                        first,
                        second,
                        next,
                    } => (
                        Some(Event::Output {
                            seq: cursor,
                            bytes: [first, second].concat(),
                        }),
                        next,
                    ),
                    Read::Lost { from, to } => (Some(Event::Lost { from, to }), to),
                    // The end: what is left goes as it is (a character
                    // the child left cut in two, say).
                    Read::Empty if (st.ended || overdue) && cursor < st.ring.end() => {
                        let (first, second) = st.ring.rest(cursor);
                        let bytes = [first, second].concat();
                        (Some(Event::Output { seq: cursor, bytes }), st.ring.end())
                    }
                    Read::Empty if st.ended => {
                        let code = st.exit.unwrap_or(-1);
                        return Event::End { code };
                    }
                    Read::Empty => {
                        if cursor < st.ring.end() && held.is_none() {
                            held = Some(tokio::time::Instant::now());
                        }
                        (None, cursor)
                    }
                };
                if let Some(event) = event {
                    st.cursors.insert(self.id, next);
                    st.waits.remove(&self.id);
                    drop(st);
                    self.inner.room.notify_one();
                    return event;
                }
                // Any byte past what is there wakes it.
                let want = st.ring.end().max(cursor) + 1;
                st.waits.insert(self.id, (cursor, want));
            }
            match held {
                Some(t) => drop(tokio::time::timeout_at(t + HOLD, more).await),
                None => more.await,
            }
        }
    }
}

impl Drop for Viewer {
    fn drop(&mut self) {
        let mut st = lock(&self.inner.state);
        st.cursors.remove(&self.id);
        st.waits.remove(&self.id);
        drop(st);
        self.inner.room.notify_one();
    }
}
