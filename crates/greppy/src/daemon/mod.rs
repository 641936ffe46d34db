//! The daemon: a Unix socket that speaks [`crate::protocol`], answering
//! searches from a fresh index per root ([`crate::live`]).
//!
//! Bounds, each answered explicitly, never by a silent drop:
//! - connections past [`Limits::connections`] get `busy` and are closed;
//! - searches in flight past [`Limits::searches`] (or past
//!   [`Limits::per_connection`] on one connection) wait for a slot, and
//!   get `busy` with their id if none comes within [`Limits::slot_wait`];
//! - a connection's answers not yet written are at most [`QUEUED_BYTES`]
//!   (beside what each of its searches gathered since its last write):
//!   its searches then wait, holding no thread, until it reads;
//! - a frame over [`Limits::frame`], or one that does not decode, gets
//!   `error` and closes that connection only; so does a frame that has not
//!   arrived whole within [`Limits::frame_time`] of its first byte;
//! - at most [`Limits::roots`] roots are kept (the least recently used
//!   one is forgotten first);
//! - out of file descriptors (or memory), accepting pauses until a
//!   connection ends or 100 ms pass, and the daemon goes on: it neither
//!   exits nor spins on the readable listener.
//!
//! A peer of another uid (SO_PEERCRED) is refused. A search streams its
//! matches as they are found, many may be in flight on one connection, and
//! a client that goes away cancels its searches. Searches run in turns,
//! the connections taking turns ([`crate::searchers`]): one client that
//! asks for much, reading it or not, holds up no other.
//!
//! A search the index cannot answer exactly (the tree is still being
//! indexed; a folder the walk does not enter; a glob that lets ignored
//! files in) gets `scan`, and the client scans: an answer is never
//! wrong for want of an index.

use crate::index::BlockTest;
use crate::live::{Phase, Root, Snapshot};
use crate::protocol::{self, Decoder, FindQuery, Request, Response, RootInfo, SearchQuery};
use crate::rank::{self, Changes, Ranked};
use crate::search::{self, FileFilter, Filters, Pattern};
use crate::searchers::{Place, Searchers};
use crate::store::Store;
use rustc_hash::FxHashMap;
use std::ffi::OsStr;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{Notify, Semaphore};

mod out;
mod schedule;
mod work;

use out::*;
use schedule::*;
use work::*;

/// Runs `f`, which may block or run long, from a task on a runtime
/// worker: the worker's other tasks move to another thread meanwhile
/// (tokio's `block_in_place`). On any other thread it just runs `f`.
fn long<R>(f: impl FnOnce() -> R) -> R {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

/// How long a search waits for reported changes to be applied before it
/// answers from the snapshot it has (saying it is not fresh).
pub const FRESH_WAIT: std::time::Duration = std::time::Duration::from_millis(50);

/// How long a ranked search waits for a tree's first index.
const FIND_BUILD_WAIT: std::time::Duration = std::time::Duration::from_secs(600);

/// What the daemon bounds.
#[derive(Debug, Clone)]
pub struct Limits {
    pub connections: usize,
    /// Searches (and finds, and index builds) in flight in all...
    pub searches: usize,
    /// ...and on one connection.
    pub per_connection: usize,
    pub frame: usize,
    pub roots: usize,
    /// How long a frame may take to arrive once it has begun: a client
    /// that stops mid-frame (or trickles) loses its connection, not the
    /// daemon a slot forever.
    pub frame_time: std::time::Duration,
    /// How long a request waits for one of the [`Limits::searches`] slots
    /// before it is answered `busy`. Meanwhile its connection reads no
    /// further request (one waits per connection at most, so the wait
    /// holds no more than the connections' bound does), and the waiting
    /// requests get their slots in the order they came.
    pub slot_wait: std::time::Duration,
    /// How often a search sends what it has found so far, at the end of a
    /// chunk of files ([`Answers`]). (Sent at every chunk's end, a quick
    /// search of a few hundred candidates woke its client once a chunk.
    /// Once a millisecond, in three interleaved pairs of 64 clients in a
    /// closed loop, three rounds of 8,192 selective `-l` searches each:
    /// p99 4.50 against 4.83 ms at the median of the nine rounds, the
    /// same searches a second.)
    pub stream_every: std::time::Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connections: 512,
            searches: 256,
            per_connection: 32,
            frame: protocol::MAX_FRAME,
            roots: 16,
            frame_time: std::time::Duration::from_secs(10),
            slot_wait: std::time::Duration::from_secs(1),
            stream_every: std::time::Duration::from_millis(1),
        }
    }
}

/// The socket of this user's daemon: `$XDG_RUNTIME_DIR/greppy/socket`, or
/// under `/tmp` in a folder named for the uid.
pub fn socket_path() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d).join("greppy/socket"),
        None => PathBuf::from(format!(
            "/tmp/greppy-{}/socket",
            rustix::process::getuid().as_raw()
        )),
    }
}

/// Makes `dir` (and its parents) if it is not there; `dir` itself 0700.
pub fn make_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

/// Binds the socket: its folder made 0700, the socket 0600. A socket file
/// that no daemon answers on is replaced; one that answers is an error.
pub fn bind(path: &Path) -> std::io::Result<UnixListener> {
    use std::os::unix::fs::PermissionsExt;
    if let Some(dir) = path.parent() {
        make_private_dir(dir)?;
    }
    if path.exists() {
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AddrInUse,
                format!("a daemon already answers on {}", path.display()),
            ));
        }
        std::fs::remove_file(path)?;
    }
    let listener = UnixListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

#[derive(Debug)]
struct State {
    limits: Limits,
    uid: u32,
    connections: Arc<Semaphore>,
    searches: Arc<Semaphore>,
    /// The threads that run searches, the connections taking turns.
    searchers: Searchers,
    /// The next connection's number (for the searchers' turns).
    next_conn: std::sync::atomic::AtomicU64,
    /// The roots, the most recently used last.
    roots: Mutex<Vec<Arc<Root>>>,
    /// The ranked indexes of the roots that have been asked a ranked
    /// question, by root.
    ranked: Mutex<FxHashMap<PathBuf, Arc<Ranked>>>,
    store: Option<Store>,
    shutdown: Notify,
    /// A connection ended: a paused accept may try again.
    connection_ended: Notify,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn path_of(bytes: &[u8]) -> PathBuf {
    PathBuf::from(OsStr::from_bytes(bytes))
}

/// How long accepting pauses when the process is out of descriptors and
/// no connection ends meanwhile.
const ACCEPT_PAUSE: std::time::Duration = std::time::Duration::from_millis(100);

/// `accept` failed for want of descriptors or memory, not for a fault of
/// the listener.
fn out_of_resources(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
    )
}

/// Serves connections on `listener` until a `shutdown` request (or the
/// listener fails). With a `store`, the roots of the last run are kept
/// again, from their saved indexes, and new indexes are saved there.
/// Searches wait for every change made before them (see [`crate::live`]).
pub async fn serve(
    listener: UnixListener,
    limits: Limits,
    store: Option<Store>,
) -> std::io::Result<()> {
    let mut roots = Vec::new();
    if let Some(s) = &store {
        for r in s.roots().into_iter().filter(|r| r.is_dir()) {
            if roots.len() < limits.roots {
                let file = s.index_file(&r);
                roots.push(Arc::new(Root::start(r, Some(file))));
            }
        }
    }
    let state = Arc::new(State {
        uid: rustix::process::geteuid().as_raw(),
        connections: Arc::new(Semaphore::new(limits.connections)),
        searches: Arc::new(Semaphore::new(limits.searches)),
        searchers: Searchers::new(searchers()),
        next_conn: Default::default(),
        roots: Mutex::new(roots),
        ranked: Mutex::default(),
        store,
        shutdown: Notify::new(),
        connection_ended: Notify::new(),
        limits,
    });
    // Set while accepting is paused after the process ran out of
    // descriptors (or memory): the listener stays readable, and trying
    // again at once would spin.
    let mut paused: Option<std::pin::Pin<Box<tokio::time::Sleep>>> = None;
    loop {
        tokio::select! {
            r = listener.accept(), if paused.is_none() => match r {
                Ok((stream, _)) => {
                    let state = state.clone();
                    tokio::spawn(async move {
                        state.clone().connection(stream).await;
                        state.connection_ended.notify_waiters();
                    });
                }
                // Out of descriptors or memory: the daemon goes on with the
                // connections it has, and the waiting client is taken when
                // one of them ends (or, at the latest, after the pause).
                Err(e) if out_of_resources(&e) => {
                    eprintln!("greppy: accept: {e}; pausing {ACCEPT_PAUSE:?}");
                    paused = Some(Box::pin(tokio::time::sleep(ACCEPT_PAUSE)));
                }
                // The client went away before it was taken.
                Err(e) if matches!(e.raw_os_error(), Some(libc::ECONNABORTED | libc::EINTR)) => {}
                Err(e) => return Err(e),
            },
            () = async { paused.as_mut().expect("guarded").await }, if paused.is_some() => {
                paused = None;
            }
            () = state.connection_ended.notified(), if paused.is_some() => {
                paused = None;
            }
            () = state.shutdown.notified() => {
                // Indexes still being written are finished first.
                let roots = lock(&state.roots).clone();
                tokio::task::spawn_blocking(move || roots.iter().for_each(|r| r.flush()))
                    .await
                    .ok();
                return Ok(());
            }
        }
    }
}

/// Runs a daemon in this thread on `socket` until it is told to stop, then
/// removes the socket. `ready` is called once the socket answers.
pub fn run(socket: &Path, store: Option<Store>, ready: impl FnOnce()) -> anyhow::Result<()> {
    // Two workers per core. They read requests and write answers, and
    // run a search only when no other is pending (the rest wait for the
    // search threads, `crate::searchers`). Chosen when every search ran on
    // them: with one per core (as the runtime had, two), a core went idle
    // about a fifth of the time under 64 pipelined searches (a worker
    // parked while the other held the new searches, or was preempted by
    // the client it woke). On two cores, in interleaved runs of 16,384
    // `-l` searches: three workers against two, 1.1x the searches per
    // second pipelined (two runs of three) and at 64 clients (both); four
    // against three, ahead in all four runs; eight against four, level.
    // One client's sequential searches: the same.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2 * cores())
        .thread_name("greppy-io")
        .on_thread_start(crate::policy::join)
        .on_thread_stop(crate::policy::leave)
        .enable_all()
        .build()?;
    // The daemon holds no folder of the user's open as its own.
    std::env::set_current_dir("/")?;
    use std::os::unix::fs::MetadataExt;
    let mut bound = None;
    let r = rt.block_on(async {
        let listener = bind(socket)?;
        bound = std::fs::metadata(socket).ok().map(|m| (m.dev(), m.ino()));
        ready();
        serve(listener, Limits::default(), store).await
    });
    // Only the socket this daemon bound is removed: not another's (when
    // bind failed because one answers, or a new daemon has replaced it).
    let same = std::fs::metadata(socket).ok().map(|m| (m.dev(), m.ino()));
    if bound.is_some() && same == bound {
        let _ = std::fs::remove_file(socket);
    }
    // Dropping the runtime closes every connection: a client waiting for
    // the end (`greppy daemon stop`) sees it now.
    rt.shutdown_background();
    Ok(r?)
}

/// The root a folder belongs in when no root holds it: the top of its git
/// work tree, else the folder itself. `None` for `/`, which is not indexed.
/// Who asks for a root ([`State::root_for`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Make {
    Search,
    Index,
}

fn new_root_for(dir: &Path) -> Option<PathBuf> {
    let top = dir
        .ancestors()
        .find(|a| a.join(".git").exists())
        .unwrap_or(dir);
    // A folder the walk from the top would not enter (ignored, hidden) is
    // its own root: rg searches it when it is named.
    let top = if walk_enters(top, dir) { top } else { dir };
    (top.parent().is_some()).then(|| top.to_path_buf())
}

/// Whether rg's walk of `dir` with the query's walk flags takes what the
/// index and what lies beside it take (see [`Snapshot`]): `--hidden` with
/// every folder named `.git` left out by the globs (they are not indexed),
/// `--follow` with no symbolic link to follow, `--no-ignore-parent` with
/// no ignore rules above `dir` that rg would apply, `--no-ignore-global`
/// with no global gitignore. Else the search is a scan.
fn walks_as_indexed(
    q: &SearchQuery,
    snap: &Snapshot,
    dir: &Path,
    display: &Path,
    filter: &FileFilter,
) -> bool {
    if q.hidden {
        let gits = snap
            .hidden
            .gits
            .range::<Path, _>((std::ops::Bound::Included(dir), std::ops::Bound::Unbounded))
            .take_while(|g| g.starts_with(dir));
        for g in gits {
            let (shown, _) = shown_name(g, dir, display);
            if !filter.excludes_dir(display, Path::new(OsStr::from_bytes(&shown))) {
                return false;
            }
        }
    }
    !(q.follow && snap.links_under(dir, q.hidden)
        || q.no_ignore_parent && parent_rules(dir)
        || q.no_ignore_global && global_rules())
}

/// Whether rg's walk of `dir` would apply ignore rules from the folders
/// above it, as the `ignore` crate reads them: `.ignore` and `.rgignore`
/// always, `.gitignore` and `.git/info/exclude` up to the first folder
/// holding `.git` (from `dir` itself). A file of comments alone holds no
/// rule.
fn parent_rules(dir: &Path) -> bool {
    let rules = |f: PathBuf| {
        std::fs::read(f).is_ok_and(|b| {
            b.split(|&c| c == b'\n')
                .any(|l| !l.trim_ascii().is_empty() && !l.starts_with(b"#"))
        })
    };
    let mut saw_git = dir.join(".git").exists();
    for a in dir.ancestors().skip(1) {
        if rules(a.join(".ignore")) || rules(a.join(search::RGIGNORE)) {
            return true;
        }
        if !saw_git && (rules(a.join(".gitignore")) || rules(a.join(".git/info/exclude"))) {
            return true;
        }
        saw_git |= a.join(".git").exists();
    }
    false
}

/// Whether git's global excludes file (`core.excludesFile`, or
/// `$XDG_CONFIG_HOME/git/ignore`) holds a rule.
fn global_rules() -> bool {
    let (g, _) = ignore::gitignore::Gitignore::global();
    g.num_ignores() + g.num_whitelists() > 0
}

/// Whether a walk from `top` enters `dir` (a folder at or below it): no
/// folder on the way is ignored or hidden.
fn walk_enters(top: &Path, dir: &Path) -> bool {
    dir.ancestors().take_while(|a| *a != top).all(|a| {
        a.parent()
            .is_some_and(|p| search::walk_children(p, false).get(a) == Some(&search::Entry::Dir))
    })
}

fn info(root: &Root) -> RootInfo {
    let s = root.status();
    RootInfo {
        root: s.root.as_os_str().as_bytes().to_vec(),
        phase: match s.phase {
            Phase::Building => "building",
            Phase::CatchingUp => "catching_up",
            Phase::Watching => "watching",
            Phase::Rebuilding => "rebuilding",
        }
        .to_string(),
        files: s.files,
        source_bytes: s.source_bytes,
        index_bytes: s.index_bytes,
        changes: s.changes,
        updated_ms: s.updated_ns / 1_000_000,
        fresh: s.fresh,
        error: s.watch_error,
    }
}

/// Writes one message directly (before the connection's writer exists).
async fn say(stream: &mut UnixStream, msg: &Response) {
    let _ = stream.write_all(&protocol::encode(msg)).await;
}

impl State {
    async fn connection(self: Arc<Self>, mut stream: UnixStream) {
        match stream.peer_cred() {
            Ok(c) if c.uid() == self.uid => {}
            _ => {
                let message = "refused: the peer is another user".to_string();
                return say(&mut stream, &Response::Error { id: None, message }).await;
            }
        }
        let Ok(_permit) = self.connections.clone().try_acquire_owned() else {
            return say(&mut stream, &Response::Busy { id: None }).await;
        };
        let conn = self.next_conn.fetch_add(1, Ordering::Relaxed);
        let mine = Arc::new(Semaphore::new(self.limits.per_connection));
        let (mut rd, wr) = stream.into_split();
        let (out, writer) = Out::open(wr);
        let writer = tokio::spawn(writer);
        let cancels: Cancels = Arc::default();
        let mut decoder = Decoder::new(self.limits.frame);
        let mut greeted = false;
        let mut shutdown = false;
        let mut buf = vec![0u8; 64 << 10];
        'read: loop {
            let read = if decoder.pending() > 0 {
                match tokio::time::timeout(self.limits.frame_time, rd.read(&mut buf)).await {
                    Ok(r) => r,
                    Err(_) => {
                        let message = format!(
                            "a frame did not arrive whole within {} ms",
                            self.limits.frame_time.as_millis()
                        );
                        out.send(protocol::encode(&Response::Error { id: None, message }))
                            .await;
                        break;
                    }
                }
            } else {
                rd.read(&mut buf).await
            };
            let n = match read {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            decoder.push(&buf[..n]);
            loop {
                let req = match decoder.decode::<Request>() {
                    Ok(Some(r)) => r,
                    Ok(None) => break,
                    Err(e) => {
                        out.send(protocol::encode(&Response::Error {
                            id: None,
                            message: e.to_string(),
                        }))
                        .await;
                        break 'read;
                    }
                };
                match req {
                    Request::Hello { version, .. } if version == protocol::VERSION => {
                        greeted = true;
                        let server = format!("greppy {}", env!("CARGO_PKG_VERSION"));
                        out.send(protocol::encode(&Response::Hello { version, server }))
                            .await;
                    }
                    Request::Hello { version, .. } => {
                        let message = format!(
                            "protocol version {version}; this daemon speaks {}",
                            protocol::VERSION
                        );
                        out.send(protocol::encode(&Response::Error { id: None, message }))
                            .await;
                        break 'read;
                    }
                    _ if !greeted => {
                        let message = "the first message must be hello".to_string();
                        out.send(protocol::encode(&Response::Error { id: None, message }))
                            .await;
                        break 'read;
                    }
                    Request::Cancel { id } => {
                        if let Some(flag) =
                            cancels.lock().unwrap_or_else(|e| e.into_inner()).get(&id)
                        {
                            flag.store(true, Ordering::Relaxed);
                        }
                    }
                    Request::Search { id, query } => {
                        let Some(slot) = self.slot(id, &mine, &out).await else {
                            continue;
                        };
                        let flag = Arc::new(AtomicBool::new(false));
                        lock(&cancels).insert(id, flag.clone());
                        let cancels = cancels.clone();
                        self.search(conn, (id, query), slot, (flag, cancels), &out);
                    }
                    Request::Find { id, query } => {
                        if let Some(slot) = self.slot(id, &mine, &out).await {
                            self.run(slot, &out, move |state, out| state.find(id, &query, out));
                        }
                    }
                    Request::Index { id, path } => {
                        if let Some(slot) = self.slot(id, &mine, &out).await {
                            self.run(slot, &out, move |state, _| state.index(id, &path_of(&path)));
                        }
                    }
                    Request::Status { id } => {
                        let roots = lock(&self.roots).clone();
                        let roots = roots.iter().map(|r| info(r)).collect();
                        out.send(protocol::encode(&Response::Status { id, roots }))
                            .await;
                    }
                    Request::Forget { id, path } => {
                        out.send(protocol::encode(&self.forget(id, &path_of(&path))))
                            .await;
                    }
                    Request::Shutdown { id } => {
                        // The daemon stops once this `ok` is written.
                        out.send(protocol::encode(&Response::Ok { id })).await;
                        shutdown = true;
                        break 'read;
                    }
                }
            }
        }
        // The client is gone (or broke the protocol): its searches stop.
        for flag in cancels.lock().unwrap_or_else(|e| e.into_inner()).values() {
            flag.store(true, Ordering::Relaxed);
        }
        drop(out);
        let wr = writer.await;
        if shutdown {
            self.shutdown.notify_one();
            // The connection stays open until the daemon exits, so that
            // the client that stopped it sees the end only then.
            let _open = (rd, wr);
            std::future::pending::<()>().await;
        }
    }

    /// Whether this search is the only one pending.
    fn alone(&self) -> bool {
        self.searchers.pending() <= 1
    }

    /// One of the slots for requests that run on a blocking thread or as
    /// searches: one of the connection's own (`mine`,
    /// [`Limits::per_connection`]), then one of the daemon's
    /// ([`Limits::searches`]), waiting for them, in turn, for at most
    /// [`Limits::slot_wait`] in all; else `busy` to the client. (Answered
    /// `busy` at once, 256 clients in a closed loop got 6,977 `busy` of
    /// 8,192 searches once the daemon read requests as they came: it had
    /// read them so slowly before that the 64 slots were seldom all
    /// taken.) A connection's own bound keeps one client that asks a lot
    /// from taking every slot.
    async fn slot(&self, id: u64, mine: &Arc<Semaphore>, out: &Out) -> Option<Slot> {
        let both = async {
            let own = mine.clone().acquire_owned().await.ok()?;
            let all = self.searches.clone().acquire_owned().await.ok()?;
            Some(Slot {
                _own: own,
                _all: all,
            })
        };
        match tokio::time::timeout(self.limits.slot_wait, both).await {
            Ok(Some(slot)) => Some(slot),
            _ => {
                out.send(protocol::encode(&Response::Busy { id: Some(id) }))
                    .await;
                None
            }
        }
    }

    /// Runs `work` (a find, or an index build) on a blocking thread,
    /// streaming through `to` (the thread waits while the client does not
    /// read), and sends its last answer once `slot` is free again.
    fn run(
        self: &Arc<Self>,
        slot: Slot,
        to: &Out,
        work: impl FnOnce(&State, &mut Answers) -> Response + Send + 'static,
    ) {
        let (state, to) = (self.clone(), to.clone());
        drop(tokio::task::spawn_blocking(move || {
            let mut out = Answers::new(to, state.limits.stream_every, false);
            let last = work(&state, &mut out);
            protocol::encode_into(&last, &mut out.buf);
            drop(slot);
            out.flush();
        }));
    }

    /// Starts search `id` of connection `conn` ([`SearchTask`]): in the
    /// searchers' queue, where connections take turns
    /// ([`crate::searchers`]), or, when no other search is pending, as a
    /// task of its own on the worker that read the request, which runs it
    /// next with no hand-off to another thread (the parts that may block
    /// or run long leave the worker through [`long`]). Not on the
    /// connection's own loop, so that the searches pipelined on one
    /// connection share the cores. It streams through `to`, and sends its
    /// last answer once `slot` is free again and a search no longer counts
    /// as pending: a client that waits for that answer may send its next
    /// request at once, and one client's next search runs where it is
    /// read, as its last did.
    fn search(
        self: &Arc<Self>,
        conn: u64,
        (id, query): (u64, SearchQuery),
        slot: Slot,
        (cancel, cancels): (Arc<AtomicBool>, Cancels),
        to: &Out,
    ) {
        let state = self.clone();
        let answers = Answers::new(to.clone(), self.limits.stream_every, true);
        let place = self.searchers.take(conn, move |pending| {
            Box::new(SearchTask {
                state,
                id,
                query,
                cancel,
                cancels,
                answers,
                slot: Some(slot),
                pending: Some(pending),
                stage: Stage::Start,
            })
        });
        if let Place::Here(runner, task) = place {
            drop(tokio::spawn(async move { runner.drive(task) }));
        }
    }

    /// The canonical path of `asked` if it names a root's folder itself
    /// (the common search): one `stat`, where canonicalizing reads every
    /// component's link. `None`: canonicalize it.
    fn root_named(&self, asked: &Path) -> Option<PathBuf> {
        if !asked.is_absolute() {
            return None;
        }
        let meta = std::fs::metadata(asked).ok()?;
        let roots = lock(&self.roots);
        roots
            .iter()
            .find(|r| r.is(&meta))
            .map(|r| r.path().to_path_buf())
    }

    /// The root that holds `dir`, and whether it is new. With `Make::Search`
    /// a root is made only where none holds `dir` (a folder inside a root
    /// that its walk does not enter is left to a scan, as rg's rules say);
    /// with `Make::Index` also there.
    fn root_for(&self, dir: &Path, make: Make) -> Option<(Arc<Root>, bool)> {
        let mut roots = lock(&self.roots);
        // A root whose folder was deleted is forgotten.
        let before = roots.len();
        roots.retain(|r| {
            let keep = !r.is_gone();
            if !keep {
                self.drop_index(r);
            }
            keep
        });
        if roots.len() != before {
            self.save_roots(&roots);
        }
        // The deepest root that holds `dir` and whose walk enters it (its
        // snapshot knows; a root still building has none yet, and the walk
        // is asked).
        let held = roots
            .iter()
            .enumerate()
            .filter(|(_, r)| dir.starts_with(r.path()))
            .filter(|(_, r)| {
                r.snapshot()
                    .map_or_else(|| walk_enters(r.path(), dir), |s| s.covers(dir))
            })
            .max_by_key(|(_, r)| r.path().as_os_str().len())
            .map(|(i, _)| i);
        if let Some(i) = held {
            let r = roots.remove(i);
            roots.push(r.clone());
            return Some((r, false));
        }
        let inside = roots.iter().any(|r| dir.starts_with(r.path()));
        if make == Make::Search && inside {
            return None;
        }
        let top = new_root_for(dir)?;
        let file = self.store.as_ref().map(|s| s.index_file(&top));
        let root = Arc::new(Root::start(top, file));
        roots.push(root.clone());
        while roots.len() > self.limits.roots {
            let old = roots.remove(0);
            self.drop_index(&old);
        }
        self.save_roots(&roots);
        Some((root, true))
    }

    fn drop_index(&self, root: &Root) {
        let ranked = lock(&self.ranked).remove(root.path());
        drop(ranked);
        if let Some(s) = &self.store {
            let _ = std::fs::remove_file(s.index_file(root.path()));
            let _ = std::fs::remove_dir_all(s.find_dir(root.path()));
        }
    }

    /// The ranked index of `root`, opened (or made) on first use.
    fn ranked_for(&self, root: &Root) -> anyhow::Result<Arc<Ranked>> {
        let mut all = lock(&self.ranked);
        if let Some(r) = all.get(root.path()) {
            return Ok(r.clone());
        }
        let dir = self.store.as_ref().map(|s| s.find_dir(root.path()));
        let r = Arc::new(Ranked::open(root.path().to_path_buf(), dir.as_deref())?);
        all.insert(root.path().to_path_buf(), r.clone());
        Ok(r)
    }

    /// Runs one ranked search (on a blocking thread), streaming its hits;
    /// returns its last answer (`done` or `error`).
    fn find(&self, id: u64, q: &FindQuery, out: &mut Answers) -> Response {
        let fail = |message: String| Response::Error {
            id: Some(id),
            message,
        };
        let asked = path_of(&q.path);
        let dir = match self
            .root_named(&asked)
            .map_or_else(|| asked.canonicalize(), Ok)
        {
            Ok(d) => d,
            Err(e) => return fail(format!("{}: {e}", asked.display())),
        };
        let limit = match q.limit {
            0 => 10,
            n => n.min(1000) as usize,
        };
        let mut fresh = true;
        let mut note = None;
        let hits = match self.root_for(&dir, Make::Search) {
            // A folder no root's walk enters (hidden, ignored): its own
            // walk, indexed for this answer only.
            None => rank::find_in_walk(&dir, &q.query, limit),
            Some((root, _)) => {
                // A tree not indexed yet, or catching up after a restart,
                // is waited for: a ranked answer reads the tree anyway.
                let wait = match q.wait_ms {
                    0 if matches!(root.phase(), Phase::Watching | Phase::Rebuilding) => FRESH_WAIT,
                    0 => FIND_BUILD_WAIT,
                    ms => std::time::Duration::from_millis(ms),
                };
                fresh = root.wait_fresh(wait, true);
                let synced = self.ranked_for(&root).and_then(|ranked| {
                    // The changes are read before the snapshot, which then
                    // holds them all.
                    let (changes, cursor) = root.changes_since(ranked.cursor());
                    let snap = root.snapshot().ok_or_else(|| {
                        anyhow::anyhow!("{} is still being indexed", root.path().display())
                    })?;
                    let changes = changes.map_or(Changes::All, Changes::Paths);
                    ranked.sync(&*snap, changes, cursor)?;
                    Ok(ranked)
                });
                if !fresh {
                    note = Some(format!(
                        "{}: changes are still being indexed; this answer may miss some",
                        root.path().display()
                    ));
                }
                synced.and_then(|r| r.find(&q.query, &dir, limit))
            }
        };
        let hits = match hits {
            Ok(h) => h,
            Err(e) => return fail(format!("{e:#}")),
        };
        let display = if q.display.is_empty() {
            dir.clone()
        } else {
            path_of(&q.display)
        };
        let matches = hits.len() as u64;
        for h in hits {
            let shown = match h.path.strip_prefix(&dir) {
                Ok(rel) if !rel.as_os_str().is_empty() => display.join(rel),
                _ => display.clone(),
            };
            let m = Response::Hit {
                id,
                path: shown.into_os_string().into_vec(),
                start: h.start,
                end: h.end,
                score: h.score,
                kind: h.kind,
                name: h.name,
            };
            if !out.push(&m) {
                break;
            }
        }
        Response::Done {
            id,
            matches,
            fresh,
            cancelled: false,
            errors: Vec::new(),
            note,
        }
    }

    fn save_roots(&self, roots: &[Arc<Root>]) {
        if let Some(s) = &self.store
            && let Err(e) = s.set_roots(roots.iter().map(|r| r.path()))
        {
            eprintln!("greppy: {e:#}");
        }
    }

    /// `index`: (re)builds the root holding `path` and waits for it.
    fn index(&self, id: u64, path: &Path) -> Response {
        let started = std::time::Instant::now();
        let error = |message: String| Response::Error {
            id: Some(id),
            message,
        };
        let dir = match path.canonicalize() {
            Ok(d) if d.is_dir() => d,
            Ok(_) => return error(format!("{}: not a folder", path.display())),
            Err(e) => return error(format!("{}: {e}", path.display())),
        };
        let Some((root, new)) = self.root_for(&dir, Make::Index) else {
            return error(format!("{}: greppy does not index /", dir.display()));
        };
        if !new {
            root.rebuild();
        }
        root.wait_ready();
        Response::Indexed {
            id,
            root: info(&root),
            millis: started.elapsed().as_millis() as u64,
        }
    }

    /// `forget`: drops the root holding `path` and deletes its index.
    fn forget(&self, id: u64, path: &Path) -> Response {
        let dir = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let mut roots = lock(&self.roots);
        let Some(i) = roots.iter().position(|r| dir.starts_with(r.path())) else {
            return Response::Error {
                id: Some(id),
                message: format!("{}: not indexed", path.display()),
            };
        };
        let root = roots.remove(i);
        self.drop_index(&root);
        self.save_roots(&roots);
        Response::Ok { id }
    }

    /// Runs one search (on a blocking thread), streaming its matches;
    /// returns its last answer (`done`, `scan` or `error`).
    /// A search's first turn: the candidates it reads, as a [`Reading`]
    /// for its next turns; or its last answer (an error, `scan`, or
    /// `done` with nothing to read).
    fn begin(&self, id: u64, q: &SearchQuery) -> Result<Reading, Box<Response>> {
        let fail = |message: String| {
            Box::new(Response::Error {
                id: Some(id),
                message,
            })
        };
        let scan = |reason: Option<String>| Box::new(Response::Scan { id, reason });
        let pattern = Pattern {
            pattern: q.pattern.clone(),
            fixed: q.fixed,
            ignore_case: q.ignore_case,
            smart_case: q.smart_case,
            word: q.word,
            // `-U` is scanned by the command line, not asked of the daemon.
            multiline: false,
        };
        // The matcher is built once a file is to be read with it (a
        // seventh of the work of a search that finds no candidate), or at
        // once, to check the pattern, unless it is a plain word or a
        // literal without a newline, which is always a good one.
        let plain = !q.pattern.is_empty()
            && q.pattern.len() <= PLAIN_MAX
            && !q.pattern.contains('\n')
            && (q.fixed || crate::plan::plain_word(&q.pattern));
        let checked = if plain {
            None
        } else {
            match pattern.matcher() {
                Ok(m) => Some(m),
                Err(e) => return Err(fail(format!("{e:#}"))),
            }
        };
        let filters = Filters {
            globs: q.globs.clone(),
            types: q.types.clone(),
            // The index keeps rg's default walk, with no hidden files.
            hidden: false,
            max_depth: None,
        };
        let filter = match FileFilter::new(&filters, &path_of(&q.cwd)) {
            Ok(Some(f)) => f,
            Ok(None) => return Err(scan(None)),
            Err(e) => return Err(fail(format!("{e:#}"))),
        };
        let asked = path_of(&q.path);
        let dir = match self
            .root_named(&asked)
            .map_or_else(|| asked.canonicalize(), Ok)
        {
            Ok(d) => d,
            Err(e) => return Err(fail(format!("{}: {e}", asked.display()))),
        };
        let Some((root, _)) = self.root_for(&dir, Make::Search) else {
            return Err(scan(None));
        };
        let display = if q.display.is_empty() {
            dir.clone()
        } else {
            path_of(&q.display)
        };
        // Filters see files as rg's walk names them; a bare name is printed.
        let bare = q.print.as_ref().is_some_and(|p| p.bare);
        let plan = pattern.plan().unwrap_or(crate::plan::Query::All);
        let choose = |snap: &Snapshot| -> Vec<(PathBuf, Option<usize>, Vec<u8>)> {
            let all = snap.candidates_with(&plan, &dir, q.hidden);
            let many = all.len() > LONG_CANDIDATES;
            let (filter, dir, display) = (&filter, &dir, &display);
            let named = move || {
                all.into_iter()
                    .filter_map(|(p, base_id)| {
                        let (shown, rel) = shown_name(&p, dir, display);
                        let allowed = filter.allows(display, Path::new(OsStr::from_bytes(&shown)));
                        let printed = match rel {
                            Some(rel) if bare => shown[shown.len() - rel..].to_vec(),
                            _ => shown,
                        };
                        allowed.then_some((p, base_id, printed))
                    })
                    .collect()
            };
            if many { long(named) } else { named() }
        };
        // Changes the watcher has reported are waited for, briefly (an edit
        // then a search is the common case); a rebuild is not. Freshness is
        // read before the snapshot is taken, so that the snapshot holds at
        // least what `fresh` vouches for. While the barrier is on its way,
        // the candidates are chosen from the snapshot there is; they are
        // kept if the snapshot is still that one afterwards.
        let (limit, builds) = match q.wait_ms {
            0 => (FRESH_WAIT, false),
            ms => (std::time::Duration::from_millis(ms), true),
        };
        let asked = root.ask_fresh(limit);
        let early = root.snapshot().filter(|s| s.covers(&dir)).map(|s| {
            let chosen = choose(&s);
            (s, chosen)
        });
        let fresh = if root.answered(&asked) {
            true
        } else {
            long(|| root.wait_asked(asked, builds))
        };
        if root.is_gone() {
            // Deleted, or made again in its place, while this search waited
            // for its changes: what is there now is scanned.
            return Err(scan(None));
        }
        let Some(snap) = root.snapshot() else {
            // Not even a first index: a scan answers now.
            let why = format!("{} is still being indexed", root.path().display());
            return Err(scan(Some(why)));
        };
        if !snap.covers(&dir) || !walks_as_indexed(q, &snap, &dir, &display, &filter) {
            return Err(scan(None));
        }
        let candidates = match early {
            Some((s, chosen)) if Arc::ptr_eq(&s, &snap) => chosen,
            _ => choose(&snap),
        };
        let test = BlockTest::new(&plan);
        // A search the index cannot narrow reads the files, as rg does:
        // reading every copy costs more than reading every file (LZ4 was a
        // fifth of `-c e`'s time, and the daemon took 10% more time for it
        // than with the files read).
        let copies = fresh && !matches!(plan, crate::plan::Query::All);
        let plan_reads = |candidates: Vec<_>| {
            if candidates.len() > LONG_CANDIDATES {
                long(|| to_read(&snap, &test, (fresh, copies), candidates))
            } else {
                to_read(&snap, &test, (fresh, copies), candidates)
            }
        };
        let matcher = match checked {
            Some(m) => m,
            None if candidates.is_empty() => {
                // Nothing to read: an output asked for is still checked.
                if let Some(print) = &q.print
                    && let Err(e) = print_options(pattern, print)
                {
                    return Err(fail(e));
                }
                let done = (0, false);
                let shown = (&*snap, &*dir, &*display, q.hidden);
                return Err(Box::new(self.done(
                    id,
                    done,
                    fresh,
                    shown,
                    &root,
                    Vec::new(),
                )));
            }
            None => match pattern.matcher() {
                Ok(m) => m,
                Err(e) => return Err(fail(format!("{e:#}"))),
            },
        };
        let (what, work) = if let Some(print) = &q.print {
            let opts = match print_options(pattern, print) {
                Ok(o) => o,
                Err(e) => return Err(fail(e)),
            };
            let mut candidates = candidates;
            candidates.sort_by(|a, b| {
                Path::new(OsStr::from_bytes(&a.2)).cmp(Path::new(OsStr::from_bytes(&b.2)))
            });
            let (reads, work) = plan_reads(candidates);
            (Reads::Print { opts, reads }, work)
        } else if q.files && q.candidates {
            // Unread, for a client that reads them itself (with the parts
            // of each that may hold a match, if asked); many of them off
            // the worker.
            let many = candidates.len() > LONG_CANDIDATES;
            let named = || {
                candidates
                    .into_iter()
                    .map(|(_, base_id, shown)| {
                        let regions = q.regions.then(|| snap.regions(base_id, &test)).flatten();
                        (shown, regions)
                    })
                    .collect()
            };
            let files = if many { long(named) } else { named() };
            (Reads::Files(files), 0)
        } else {
            let (reads, work) = plan_reads(candidates);
            (Reads::Lines(reads), work)
        };
        Ok(Reading {
            matcher,
            what,
            work,
            at: 0,
            matches: 0,
            cancelled: false,
            errors: Vec::new(),
            fresh,
            snap,
            root,
            dir,
            display,
            hidden: q.hidden,
        })
    }

    /// A search's last answer: how many matched, whether it was cancelled
    /// or fresh, and the walk's errors under `dir` with the search's own.
    fn done(
        &self,
        id: u64,
        (matches, cancelled): (u64, bool),
        fresh: bool,
        (snap, dir, display, hidden): (&Snapshot, &Path, &Path, bool),
        root: &Root,
        errors: Vec<String>,
    ) -> Response {
        // Walk errors name paths as the walk did (absolute): rename them as
        // the client names files.
        let prefix = format!("{}/", dir.display());
        let shown = format!("{}/", display.display()).replace("//", "/");
        let errors = snap
            .errors_under(dir, hidden)
            .into_iter()
            .map(|(_, m)| m.replace(&prefix, &shown))
            .chain(errors)
            .collect();
        let shown_root = root.path().display();
        let note = match root.phase() {
            _ if fresh => None,
            Phase::CatchingUp => Some(format!(
                "{shown_root}: catching up with changes made while the daemon was not \
                 running; this answer may miss some"
            )),
            Phase::Rebuilding => Some(format!(
                "{shown_root} is being reindexed; this answer may miss changes made meanwhile"
            )),
            _ => None,
        };
        Response::Done {
            id,
            matches,
            fresh,
            cancelled,
            errors,
            note,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ops::ControlFlow;

    /// A file's shown name, by bytes, is what `Path`'s own joins give.
    #[test]
    fn a_shown_name_is_the_display_joined_with_the_path_below() {
        let by_path = |p: &Path, dir: &Path, display: &Path| {
            let shown = match p.strip_prefix(dir) {
                Ok(rel) if !rel.as_os_str().is_empty() => display.join(rel),
                _ => display.to_path_buf(),
            };
            let bare = match shown.strip_prefix(display) {
                Ok(rel) if !rel.as_os_str().is_empty() => Some(rel.as_os_str().len()),
                _ => None,
            };
            (shown.into_os_string().into_vec(), bare)
        };
        let files: [&[u8]; 5] = [b"/a/b/c.rs", b"/a/b", b"/a/bc/d", b"/x/y", b"/a/b/\xff \n"];
        let dirs = ["/", "/a", "/a/b"];
        let displays = [".", "./", "src", "/a/b", "../up/", "/"];
        for f in files {
            for d in dirs {
                for shown in displays {
                    let f = Path::new(OsStr::from_bytes(f));
                    let (d, shown) = (Path::new(d), Path::new(shown));
                    if !f.starts_with(d) {
                        continue;
                    }
                    assert_eq!(
                        shown_name(f, d, shown),
                        by_path(f, d, shown),
                        "{f:?} {d:?} {shown:?}"
                    );
                }
            }
        }
    }
    use std::io::Read;

    /// In parallel, chunks come to `take` whole and in order, with each
    /// file's own result; no file is read more than [`AHEAD`] past what was
    /// handed on; a stop from `take` and a cancel both end the work.
    #[test]
    fn parallel_chunks_come_in_order_and_stop_when_asked() {
        let items: Vec<usize> = (0..1000).collect();
        let handed = std::sync::atomic::AtomicUsize::new(0);
        let furthest = std::sync::atomic::AtomicUsize::new(0);
        // Uneven work, so that helpers finish out of order.
        let expect =
            |i: usize| (0..(i % 7) * 2000).fold(i, |a, x| a.wrapping_mul(31).wrapping_add(x)) ^ i;
        let work = |_: &mut (), &i: &usize| {
            let seen = handed.load(Ordering::SeqCst);
            assert!(i < seen + AHEAD, "file {i} read with {seen} handed on");
            furthest.fetch_max(i, Ordering::SeqCst);
            expect(i)
        };
        for parallel in [false, true] {
            handed.store(0, Ordering::SeqCst);
            let mut got = Vec::new();
            let cancelled = by_chunks(
                parallel,
                &items,
                &AtomicBool::new(false),
                || (),
                work,
                |chunk, found, more| {
                    assert_eq!(chunk.len(), found.len());
                    assert!(chunk.len() == VERIFY_CHUNK || !more);
                    got.extend(chunk.iter().copied().zip(found));
                    handed.store(got.len(), Ordering::SeqCst);
                    ControlFlow::Continue(())
                },
            );
            assert_eq!(cancelled, None);
            assert_eq!(got.len(), items.len());
            for (i, r) in got {
                assert_eq!(r, expect(i), "file {i}");
            }
            // `take` stops after two chunks: nothing past the window is read.
            handed.store(0, Ordering::SeqCst);
            furthest.store(0, Ordering::SeqCst);
            let mut chunks = 0;
            let stopped = by_chunks(
                parallel,
                &items,
                &AtomicBool::new(false),
                || (),
                work,
                |_, _, _| {
                    chunks += 1;
                    handed.store(chunks * VERIFY_CHUNK, Ordering::SeqCst);
                    if chunks == 2 {
                        ControlFlow::Break(Stop::Pause)
                    } else {
                        ControlFlow::Continue(())
                    }
                },
            );
            assert_eq!(stopped, Some(Stop::Pause));
            assert_eq!(chunks, 2);
            assert!(furthest.load(Ordering::SeqCst) < 2 * VERIFY_CHUNK + AHEAD);
            // A cancel before the start hands nothing on.
            let cancel = AtomicBool::new(true);
            let cancelled = by_chunks(
                parallel,
                &items,
                &cancel,
                || (),
                work,
                |_, _, _| panic!("nothing is handed on after a cancel"),
            );
            assert_eq!(cancelled, Some(Stop::Cancelled));
        }
    }

    #[test]
    fn a_fresh_search_leaves_out_ruled_out_files_and_takes_only_large_reading_off_the_worker() {
        let dir = tempfile::tempdir().unwrap();
        let w = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        // Every trigram of the pattern, but `alpha` and `beta` blocks apart.
        let filler = "let filler = 0;\n".repeat(2_000);
        let apart = w("apart.rs", &format!("alpha\n{filler}beta\n"));
        let small = w("small.rs", "alpha beta\n");
        let many = w("many.rs", &"alpha beta\n".repeat(100_000));
        let index = crate::index::Index::build(vec![apart.clone(), small.clone(), many.clone()]);
        let snap = Snapshot {
            base: Arc::new(index),
            changes: Arc::default(),
            dirs: Arc::default(),
            errors: Arc::default(),
            links: Arc::default(),
            hidden: Arc::default(),
        };
        let plan = crate::plan::plan_pattern("alpha.*beta", false, false).unwrap();
        let test = BlockTest::new(&plan);
        let candidates = |only: &[&PathBuf]| -> Vec<(PathBuf, Option<usize>, Vec<u8>)> {
            snap.candidates(&plan, dir.path())
                .into_iter()
                .filter(|(p, _)| only.contains(&p))
                .map(|(p, id)| (p.clone(), id, p.into_os_string().into_vec()))
                .collect()
        };
        let paths = |reads: &[ToRead]| reads.iter().map(|r| r.path.clone()).collect::<Vec<_>>();
        // The index admits all three; a fresh snapshot opens two.
        assert_eq!(candidates(&[&apart, &small, &many]).len(), 3);
        let (reads, _) = to_read(
            &snap,
            &test,
            (true, true),
            candidates(&[&apart, &small, &many]),
        );
        assert_eq!(paths(&reads), [many.clone(), small.clone()]);
        assert!(reads.iter().all(|r| r.stored.is_some()));
        // Without copies (a search the index cannot narrow) the files are
        // read, the same ones.
        let (reads, _) = to_read(
            &snap,
            &test,
            (true, false),
            candidates(&[&apart, &small, &many]),
        );
        assert_eq!(paths(&reads), [many.clone(), small.clone()]);
        assert!(reads.iter().all(|r| r.stored.is_none()));
        // A stale one opens every candidate.
        let (reads, _) = to_read(
            &snap,
            &test,
            (false, false),
            candidates(&[&apart, &small, &many]),
        );
        assert_eq!(paths(&reads), [apart.clone(), many.clone(), small.clone()]);
        // A small file is read on the worker; 1 MiB of matching blocks is
        // long work (helper threads, when the search runs alone).
        assert!(to_read(&snap, &test, (true, true), candidates(&[&small])).1 < LONG_FROM);
        assert!(to_read(&snap, &test, (true, true), candidates(&[&many])).1 >= LONG_FROM);
        assert!(to_read(&snap, &test, (true, true), candidates(&[&apart])).1 < LONG_FROM);
    }

    #[test]
    fn writes_from_many_threads_arrive_whole_and_each_in_order() {
        // Threads write their own answers when nothing is queued, and queue
        // them otherwise; a reader slower than they are gets every frame
        // whole, and each thread's in the order it sent them.
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (ours, theirs) = rt.block_on(async { UnixStream::pair() }).unwrap();
        let (_rd, wr) = ours.into_split();
        let (out, writer) = Out::open(wr);
        let writer = rt.spawn(writer);
        let theirs = theirs.into_std().unwrap();
        theirs.set_nonblocking(false).unwrap();
        const THREADS: u64 = 4;
        const EACH: u64 = 2000;
        let reader = std::thread::spawn(move || {
            let mut theirs = theirs;
            let mut d = Decoder::new(1 << 20);
            let mut next = [1u64; THREADS as usize];
            let mut buf = [0u8; 1024];
            while next.iter().any(|&n| n <= EACH) {
                let n = theirs.read(&mut buf).unwrap();
                assert!(n > 0, "the stream ended early");
                d.push(&buf[..n]);
                while let Some(m) = d.decode::<Response>().unwrap() {
                    let Response::Match { id, line, text, .. } = m else {
                        panic!("{m:?}");
                    };
                    assert_eq!(line, next[id as usize], "thread {id}");
                    assert_eq!(text, vec![b'a' + id as u8; 700 + line as usize % 300]);
                    next[id as usize] += 1;
                }
            }
        });
        std::thread::scope(|s| {
            for id in 0..THREADS {
                let out = out.clone();
                s.spawn(move || {
                    for line in 1..=EACH {
                        let m = Response::Match {
                            id,
                            path: b"f".to_vec(),
                            line,
                            text: vec![b'a' + id as u8; 700 + line as usize % 300],
                        };
                        assert!(out.blocking_send(protocol::encode(&m)));
                    }
                });
            }
        });
        reader.join().unwrap();
        drop(out);
        rt.block_on(writer).unwrap();
    }
}
