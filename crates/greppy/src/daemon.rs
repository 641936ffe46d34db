//! The daemon's core: a Unix socket that speaks [`crate::protocol`],
//! answering searches from a trigram index per root.
//!
//! Bounds, each answered explicitly, never by a silent drop:
//! - connections past [`Limits::connections`] get `busy` and are closed;
//! - searches in flight past [`Limits::searches`] get `busy` with their id;
//! - a frame over [`Limits::frame`], or one that does not decode, gets
//!   `error` and closes that connection only;
//! - at most [`Limits::roots`] indexes are kept.
//!
//! A peer of another uid (SO_PEERCRED) is refused. A search streams its
//! matches as they are found, many may be in flight on one connection, and
//! a client that goes away cancels its searches.
//!
//! The index is a snapshot of the tree when it was built: every `done` says
//! `fresh: false` until file watching keeps it current (issue 14), which is
//! why the command line does not use the daemon yet.

use crate::index::Index;
use crate::plan::plan_pattern;
use crate::protocol::{self, Decoder, Request, Response, SearchQuery};
use crate::search::{self, Filters, Pattern};
use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

/// What the daemon bounds.
#[derive(Debug, Clone)]
pub struct Limits {
    pub connections: usize,
    pub searches: usize,
    pub frame: usize,
    pub roots: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connections: 512,
            searches: 64,
            frame: protocol::MAX_FRAME,
            roots: 16,
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

/// Binds the socket: its folder made 0700, the socket 0600. A socket file
/// that no daemon answers on is replaced; one that answers is an error.
pub fn bind(path: &Path) -> std::io::Result<UnixListener> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
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
    indexes: Mutex<FxHashMap<PathBuf, Arc<Index>>>,
}

/// Serves connections on `listener` until the listener fails.
pub async fn serve(listener: UnixListener, limits: Limits) -> std::io::Result<()> {
    let state = Arc::new(State {
        uid: rustix::process::geteuid().as_raw(),
        connections: Arc::new(Semaphore::new(limits.connections)),
        searches: Arc::new(Semaphore::new(limits.searches)),
        indexes: Mutex::new(FxHashMap::default()),
        limits,
    });
    loop {
        let (stream, _) = listener.accept().await?;
        tokio::spawn(state.clone().connection(stream));
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
        let (mut rd, mut wr) = stream.into_split();
        let (tx, mut rx) = mpsc::channel::<Response>(1024);
        let writer = tokio::spawn(async move {
            while let Some(m) = rx.recv().await {
                if wr.write_all(&protocol::encode(&m)).await.is_err() {
                    break;
                }
            }
        });
        let cancels: Arc<Mutex<FxHashMap<u64, Arc<AtomicBool>>>> = Arc::default();
        let mut decoder = Decoder::new(self.limits.frame);
        let mut greeted = false;
        let mut buf = vec![0u8; 64 << 10];
        'read: loop {
            let n = match rd.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            decoder.push(&buf[..n]);
            loop {
                let req = match decoder.decode::<Request>() {
                    Ok(Some(r)) => r,
                    Ok(None) => break,
                    Err(e) => {
                        let _ = tx
                            .send(Response::Error {
                                id: None,
                                message: e.to_string(),
                            })
                            .await;
                        break 'read;
                    }
                };
                match req {
                    Request::Hello { version, .. } if version == protocol::VERSION => {
                        greeted = true;
                        let server = format!("greppy {}", env!("CARGO_PKG_VERSION"));
                        let _ = tx.send(Response::Hello { version, server }).await;
                    }
                    Request::Hello { version, .. } => {
                        let message = format!(
                            "protocol version {version}; this daemon speaks {}",
                            protocol::VERSION
                        );
                        let _ = tx.send(Response::Error { id: None, message }).await;
                        break 'read;
                    }
                    _ if !greeted => {
                        let message = "the first message must be hello".to_string();
                        let _ = tx.send(Response::Error { id: None, message }).await;
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
                        let Ok(permit) = self.searches.clone().try_acquire_owned() else {
                            let _ = tx.send(Response::Busy { id: Some(id) }).await;
                            continue;
                        };
                        let flag = Arc::new(AtomicBool::new(false));
                        cancels
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .insert(id, flag.clone());
                        let (state, tx, cancels) = (self.clone(), tx.clone(), cancels.clone());
                        tokio::task::spawn_blocking(move || {
                            state.search(id, &query, &tx, &flag, permit);
                            cancels
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .remove(&id);
                        });
                    }
                }
            }
        }
        // The client is gone (or broke the protocol): its searches stop.
        for flag in cancels.lock().unwrap_or_else(|e| e.into_inner()).values() {
            flag.store(true, Ordering::Relaxed);
        }
        drop(tx);
        let _ = writer.await;
    }

    /// The index of `root`, built on first use.
    fn index(&self, root: &Path) -> anyhow::Result<Arc<Index>> {
        let root = root.canonicalize()?;
        if let Some(i) = self
            .indexes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&root)
        {
            return Ok(i.clone());
        }
        let (files, _) = search::walk(std::slice::from_ref(&root), &Filters::default())?;
        let index = Arc::new(Index::build(files));
        let mut all = self.indexes.lock().unwrap_or_else(|e| e.into_inner());
        if all.len() >= self.limits.roots
            && let Some(k) = all.keys().next().cloned()
        {
            all.remove(&k);
        }
        all.insert(root, index.clone());
        Ok(index)
    }

    /// Runs one search (on a blocking thread), streaming its answers.
    fn search(
        &self,
        id: u64,
        q: &SearchQuery,
        tx: &mpsc::Sender<Response>,
        cancel: &AtomicBool,
        _permit: OwnedSemaphorePermit,
    ) {
        let fail = |message: String| {
            let _ = tx.blocking_send(Response::Error {
                id: Some(id),
                message,
            });
        };
        let pattern = Pattern {
            pattern: q.pattern.clone(),
            fixed: q.fixed,
            ignore_case: q.ignore_case,
            smart_case: q.smart_case,
            word: q.word,
        };
        let matcher = match pattern.matcher() {
            Ok(m) => m,
            Err(e) => return fail(format!("{e:#}")),
        };
        let index = match self.index(Path::new(&q.root)) {
            Ok(i) => i,
            Err(e) => return fail(format!("{}: {e:#}", q.root)),
        };
        let plan =
            plan_pattern(&q.pattern, q.fixed, q.ignore_case).unwrap_or(crate::plan::Query::All);
        let mut matches = 0u64;
        let mut cancelled = false;
        'files: for path in index.candidates(&plan) {
            if cancel.load(Ordering::Relaxed) {
                cancelled = true;
                break;
            }
            for (line, text) in search::file_lines(&matcher, path) {
                let m = Response::Match {
                    id,
                    path: std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()).to_vec(),
                    line,
                    text,
                };
                if tx.blocking_send(m).is_err() {
                    cancelled = true;
                    break 'files;
                }
                matches += 1;
                if q.limit > 0 && matches >= q.limit {
                    break 'files;
                }
            }
        }
        let _ = tx.blocking_send(Response::Done {
            id,
            matches,
            fresh: false,
            cancelled,
        });
    }
}
