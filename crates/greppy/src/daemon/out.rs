//! The way answers go to a client: a connection's queue of frames, its
//! batching and its bound, so that a client that reads slowly holds its
//! own searches and no one else's.

use super::{State, lock, long};
use crate::protocol;
use crate::protocol::Response;
use std::sync::{Arc, Mutex};
use tokio::sync::{Notify, mpsc};

impl State {}

/// The most bytes of output in one `printed` answer: a file's output may be
/// larger than a frame may be.
pub(super) const PRINT_FRAME: usize = 256 << 10;

/// The most bytes of queued answers gathered into one write.
pub(super) const WRITE_BATCH: usize = 64 << 10;

/// The most bytes of answers queued for a connection's writer: a client
/// that reads nothing holds no more of the daemon's memory than this (and
/// what its searches gathered before they found no room), and its
/// searches wait, holding no thread, until it reads.
pub(super) const QUEUED_BYTES: usize = 1 << 20;

/// Searches waiting for room are woken once the queue is below this.
pub(super) const ROOM_AT: usize = QUEUED_BYTES / 2;

/// A connection's way out. Whoever has answers writes them to the socket
/// itself, at once, when nothing is queued before them and the socket
/// takes them whole (the common case: a search's thread writes its own
/// answer, with no hop to another thread). While one thread writes,
/// another's answers wait in a buffer that the writing thread writes next,
/// before it leaves: one write for both, and no thread waits on a lock
/// while another is in a system call. What the socket does not take is
/// queued for the connection's writer task, which waits until the socket
/// can take more; while anything is queued, every answer goes through the
/// queue, in order. The queue holds at most [`QUEUED_BYTES`]: past that,
/// a search is refused ([`Put::Full`]) and waits for room without a
/// thread ([`crate::searchers::Step::Wait`]); other writers wait.
#[derive(Clone)]
pub(super) struct Out {
    pub(super) sink: Arc<Sink>,
    pub(super) tx: mpsc::UnboundedSender<Vec<u8>>,
}

/// The socket's write half, and who writes to it.
pub(super) struct Sink {
    pub(super) wr: tokio::net::unix::OwnedWriteHalf,
    pub(super) state: Mutex<SinkState>,
    /// Room again, for writers that wait in async code...
    pub(super) room: Notify,
    /// ...and for those that wait on a thread.
    pub(super) room_now: std::sync::Condvar,
}

#[derive(Default)]
pub(super) struct SinkState {
    /// Writes queued for the writer task and not yet written whole...
    pub(super) queued: usize,
    /// ...and their bytes.
    pub(super) bytes: usize,
    /// A thread is writing to the socket now.
    pub(super) writing: bool,
    /// Answers that came while it writes: it writes them next.
    pub(super) pending: Vec<u8>,
    /// Searches waiting for room ([`crate::searchers::Gate`]).
    pub(super) waiting: Vec<Box<dyn FnOnce() + Send>>,
    /// The writer has ended: nothing more goes out.
    pub(super) closed: bool,
}

/// What became of answers handed to [`Out::put`].
pub(super) enum Put {
    /// Written, or queued.
    Sent,
    /// The queue is full: the caller keeps them, and waits for room.
    Full(Vec<u8>),
    /// The connection is gone.
    Closed,
}

impl Out {
    /// The way out through `wr`, and its writer task, for the caller to
    /// spawn (it ends when every clone of the [`Out`] is gone, and gives
    /// the socket back).
    pub(super) fn open(
        wr: tokio::net::unix::OwnedWriteHalf,
    ) -> (Out, impl Future<Output = Arc<Sink>> + Send + 'static) {
        let (tx, rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let sink = Arc::new(Sink {
            wr,
            state: Mutex::new(SinkState::default()),
            room: Notify::new(),
            room_now: std::sync::Condvar::new(),
        });
        let writer = Out::writer(sink.clone(), rx);
        (Out { sink, tx }, writer)
    }

    /// Writes what of `bytes` the socket takes now if nothing is queued
    /// (or leaves them to the thread writing now), and queues the rest;
    /// with `refuse`, gives them all back instead if the queue is full.
    pub(super) fn put(&self, bytes: Vec<u8>, refuse: bool) -> Put {
        let mut st = lock(&self.sink.state);
        if st.closed {
            return Put::Closed;
        }
        if refuse && st.bytes >= QUEUED_BYTES {
            return Put::Full(bytes);
        }
        if st.queued > 0 {
            return self.queue(st, bytes);
        }
        if st.writing {
            st.pending.extend_from_slice(&bytes);
            return Put::Sent;
        }
        st.writing = true;
        let mut out = bytes;
        loop {
            drop(st);
            let mut at = 0;
            while at < out.len() {
                match self.sink.wr.try_write(&out[at..]) {
                    Ok(n) if n > 0 => at += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    // Full, or broken: the writer task waits, or finds out.
                    _ => break,
                }
            }
            st = lock(&self.sink.state);
            if at < out.len() {
                out.drain(..at);
                out.append(&mut st.pending);
                st.writing = false;
                return self.queue(st, out);
            }
            if st.pending.is_empty() {
                st.writing = false;
                return Put::Sent;
            }
            out.clear();
            std::mem::swap(&mut out, &mut st.pending);
        }
    }

    /// Queues `bytes` for the writer task, counted while `st` is held.
    pub(super) fn queue(
        &self,
        mut st: std::sync::MutexGuard<'_, SinkState>,
        bytes: Vec<u8>,
    ) -> Put {
        st.queued += 1;
        st.bytes += bytes.len();
        // The writer takes them in the order they were counted.
        let sent = self.tx.send(bytes);
        drop(st);
        if sent.is_err() {
            Put::Closed
        } else {
            Put::Sent
        }
    }

    /// Writes or queues `bytes`, waiting while the queue is full. From
    /// async code; a connection that is gone drops them.
    pub(super) async fn send(&self, bytes: Vec<u8>) {
        loop {
            let room = self.sink.room.notified();
            tokio::pin!(room);
            room.as_mut().enable();
            {
                let st = lock(&self.sink.state);
                if st.closed || st.bytes < QUEUED_BYTES {
                    break;
                }
            }
            room.await;
        }
        self.put(bytes, false);
    }

    /// [`Out::send`] from a thread that may block; whether the connection
    /// is still there.
    pub(super) fn blocking_send(&self, bytes: Vec<u8>) -> bool {
        let mut st = lock(&self.sink.state);
        while !st.closed && st.bytes >= QUEUED_BYTES {
            st = long(|| self.sink.room_now.wait(st)).unwrap_or_else(|e| e.into_inner());
        }
        drop(st);
        !matches!(self.put(bytes, false), Put::Closed)
    }

    /// The writer task: writes what is queued, several writes in one, as
    /// the socket can take them, and wakes whoever waits for room; ends
    /// when every [`Out`] is gone or the socket fails, and gives the socket
    /// back. (The socket is shared with the threads that write at once, so
    /// it is written through `&self`: `writable` and `try_write`, not
    /// `AsyncWrite`.)
    pub(super) async fn writer(
        sink: Arc<Sink>,
        mut rx: mpsc::UnboundedReceiver<Vec<u8>>,
    ) -> Arc<Sink> {
        'out: while let Some(mut out) = rx.recv().await {
            let mut n = 1;
            while out.len() < WRITE_BATCH {
                match rx.try_recv() {
                    Ok(more) => {
                        out.extend_from_slice(&more);
                        n += 1;
                    }
                    Err(_) => break,
                }
            }
            let mut at = 0;
            while at < out.len() {
                if sink.wr.writable().await.is_err() {
                    break 'out;
                }
                match sink.wr.try_write(&out[at..]) {
                    Ok(0) => break 'out,
                    Ok(k) => at += k,
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
                        ) => {}
                    Err(_) => break 'out,
                }
            }
            let mut st = lock(&sink.state);
            st.queued -= n;
            st.bytes -= out.len();
            if st.bytes < ROOM_AT {
                let waiting = std::mem::take(&mut st.waiting);
                drop(st);
                Out::room(&sink, waiting);
            }
        }
        let mut st = lock(&sink.state);
        st.closed = true;
        let waiting = std::mem::take(&mut st.waiting);
        drop(st);
        Out::room(&sink, waiting);
        sink
    }

    /// Wakes whoever waits for room.
    pub(super) fn room(sink: &Sink, waiting: Vec<Box<dyn FnOnce() + Send>>) {
        sink.room.notify_waiters();
        sink.room_now.notify_all();
        waiting.into_iter().for_each(|wake| wake());
    }
}

impl crate::searchers::Gate for Out {
    fn when_room(&self, wake: Box<dyn FnOnce() + Send>) {
        let mut st = lock(&self.sink.state);
        if st.closed || st.bytes < ROOM_AT {
            drop(st);
            return wake();
        }
        st.waiting.push(wake);
    }
}

/// A request's answers on their way out: encoded here, on the request's
/// own thread, and gathered, so that a search's matches and its `done` go
/// in one write and wake the client once, not once per answer (a selective
/// search has about 20 matching lines). What is gathered goes out
/// ([`Out`]) when it passes [`WRITE_BATCH`] bytes, at the end, and when a
/// search moves on to its next chunk of files at least
/// [`Limits::stream_every`] after its last write: a long search streams,
/// and a quick one of many files still wakes its client once.
pub(super) struct Answers {
    pub(super) out: Out,
    pub(super) buf: Vec<u8>,
    /// The connection is gone (the client went away).
    pub(super) closed: bool,
    /// When what was gathered last went out (or the request began).
    pub(super) sent: std::time::Instant,
    pub(super) every: std::time::Duration,
    /// A search's: what finds no room stays in `buf`, and the search
    /// waits ([`Answers::blocked`]). Else the thread waits for room.
    pub(super) waits_for_room: bool,
    /// What was gathered found no room.
    pub(super) blocked: bool,
}

impl Answers {
    pub(super) fn new(out: Out, every: std::time::Duration, waits_for_room: bool) -> Answers {
        Answers {
            out,
            buf: Vec::new(),
            closed: false,
            sent: std::time::Instant::now(),
            every,
            waits_for_room,
            blocked: false,
        }
    }

    /// At a chunk's end, with more to come: sends what is gathered if the
    /// last write was `every` ago or longer; whether the client is still
    /// there.
    pub(super) fn between_chunks(&mut self) -> bool {
        if self.sent.elapsed() >= self.every {
            return self.flush();
        }
        !self.closed
    }

    /// Adds `m`; whether the client is still there.
    pub(super) fn push(&mut self, m: &Response) -> bool {
        protocol::encode_into(m, &mut self.buf);
        if self.buf.len() >= WRITE_BATCH {
            return self.flush();
        }
        !self.closed
    }

    /// Sends what is gathered (a thread waits while the connection's
    /// queue is full; a search keeps it, [`Answers::blocked`]); whether
    /// the client is still there.
    pub(super) fn flush(&mut self) -> bool {
        if !self.buf.is_empty() && !self.closed {
            let bytes = std::mem::take(&mut self.buf);
            self.blocked = false;
            if self.waits_for_room {
                match self.out.put(bytes, true) {
                    Put::Sent => {}
                    Put::Full(bytes) => {
                        self.buf = bytes;
                        self.blocked = true;
                    }
                    Put::Closed => self.closed = true,
                }
            } else {
                self.closed = !self.out.blocking_send(bytes);
            }
            self.sent = std::time::Instant::now();
        }
        !self.closed
    }

    /// What was gathered waits for room: the search should wait
    /// ([`crate::searchers::Step::Wait`]).
    pub(super) fn blocked(&self) -> bool {
        self.blocked && !self.closed
    }
}
