//! The relay: browser terminals over WebSocket, spoken from Rust, so that
//! output never crosses a JavaScript event loop. The protocol is in
//! `PROTOCOL.md`.
//!
//! Safe defaults: it listens where it is told (127.0.0.1 unless told
//! otherwise, by its callers); it checks Host and Origin against
//! allow-lists in the HTTP upgrade, refuses a token in the URL there, and
//! then wants the token in the first message, compared in constant time.
//! Only then is a PTY spawned: every refusal closes with a clear code and
//! a log line, and spawns nothing. Messages are at most 1 MiB; sessions
//! per server, and connections, are bounded; a session with no viewer is
//! closed after a while.
//!
//! Output: a frame goes at once when output is sparse. When it floods, a
//! client gets at most one frame per [`Config::interval`] unless a frame
//! is full ([`Config::frame`] bytes). For [`Config::echo_window`] after a
//! client's input, its output goes at once, flood or not, so that a
//! keystroke's echo, which comes behind the flood, waits for no interval;
//! but frames are [`Config::echo_gap`] apart at least, so that a program
//! writing tens of bytes at a time does not make thousands of frames a
//! second.

use crate::pty::{Command, Size};
use crate::session::{Event, Options, Session, Viewer};
use futures_util::{SinkExt, StreamExt};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::StatusCode;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::protocol::frame::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

/// The largest message a client may send.
pub const MAX_MESSAGE: usize = 1 << 20;

/// Close codes of the relay's own refusals (4000-4999 are the
/// application's).
pub mod close {
    /// No `hello` within [`super::Config::hello_time`].
    pub const NO_HELLO: u16 = 4408;
    /// The first message was not a `hello`, or not one that parses.
    pub const BAD_HELLO: u16 = 4400;
    /// The token is missing or wrong.
    pub const UNAUTHORIZED: u16 = 4401;
    /// The session asked for to resume is not there.
    pub const NO_SESSION: u16 = 4404;
    /// The server has as many sessions as it may.
    pub const TOO_MANY_SESSIONS: u16 = 4429;
}

/// How a relay is set up.
#[derive(Debug, Clone)]
pub struct Config {
    /// The secret a client must send in its `hello`: at least 16 bytes
    /// (128 bits); [`new_token`] makes one.
    pub token: String,
    /// `Origin` headers accepted, exactly (`http://127.0.0.1:8080`).
    pub allowed_origins: Vec<String>,
    /// `Host` headers accepted, exactly (`127.0.0.1:8080`); empty: the
    /// address the relay listens on, as `127.0.0.1:PORT` and
    /// `localhost:PORT`.
    pub allowed_hosts: Vec<String>,
    /// The path the relay answers on.
    pub path: String,
    /// What a new session runs.
    pub command: Command,
    /// Sessions at most, attached or not.
    pub max_sessions: usize,
    /// Connections at most (each waiting for its `hello` counts).
    pub max_connections: usize,
    /// How long a connection may take to send its `hello`.
    pub hello_time: Duration,
    /// How long a session with no viewer lives.
    pub idle: Duration,
    /// Bytes of output in one frame at most, with one viewer; with more,
    /// a viewer's frames are smaller ([`frame_for`]).
    pub frame: usize,
    /// One frame per client per this much while output floods.
    pub interval: Duration,
    /// For this long after a client's input, its output is not held back
    /// for the interval: the echo is somewhere in it.
    pub echo_window: Duration,
    /// Within the echo window, frames are this far apart at least. A
    /// program that writes in small pieces (a spinner, a log line at a
    /// time) would otherwise make a frame of each PTY read, tens of bytes,
    /// thousands a second, and the client's cost per frame delays the
    /// echo behind them more than this gap does. Kept by a timer of the
    /// kernel's resolution, not tokio's millisecond.
    pub echo_gap: Duration,
    /// The session's ring and reads.
    pub session: Options,
}

impl Config {
    /// A relay of `command` with `token`, for pages from `origins`.
    pub fn new(command: Command, token: String, origins: Vec<String>) -> Config {
        Config {
            token,
            allowed_origins: origins,
            allowed_hosts: Vec::new(),
            path: "/".into(),
            command,
            max_sessions: 16,
            max_connections: 256,
            hello_time: Duration::from_secs(5),
            idle: Duration::from_secs(300),
            frame: 256 << 10,
            interval: Duration::from_millis(16),
            echo_window: Duration::from_millis(50),
            echo_gap: Duration::from_micros(250),
            session: Options::default(),
        }
    }
}

/// The shortest token accepted: 128 bits, even written as hex digits.
pub const MIN_TOKEN: usize = 32;

/// A new token: 128 random bits, as 32 hex digits.
pub fn new_token() -> std::io::Result<String> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// A client's messages in text frames.
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ClientMessage {
    /// The first message: the token, the terminal's size, and a session
    /// to resume from a sequence number (else a new session).
    Hello {
        token: String,
        #[serde(default)]
        cols: Option<u16>,
        #[serde(default)]
        rows: Option<u16>,
        #[serde(default)]
        session: Option<String>,
        #[serde(default)]
        seq: Option<u64>,
    },
    /// The terminal's new size.
    Resize { cols: u16, rows: u16 },
}

/// The relay's messages in text frames (output goes in binary frames).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ServerMessage {
    /// The answer to `hello`: the session's id, and the sequence number
    /// of the first output byte that follows.
    Hello { session: String, seq: u64 },
    /// The output from `from` to `to` left the ring before this client
    /// read it; what follows starts at `to`.
    Lost { from: u64, to: u64 },
    /// The child exited with `code` (a signal's number, negated), and all
    /// its output has been sent.
    Exit { code: i32 },
    /// The agent in the session printed a plan-mode marker: `marker` is
    /// `entered`, `planStart`, `plan` (with `text`, the plan), `planEnd`,
    /// `approved` or `exited`.
    Plan {
        agent: String,
        marker: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
}

impl ServerMessage {
    /// A plan event as the protocol sends it.
    pub fn plan(e: &crate::plan::Event) -> ServerMessage {
        use crate::plan::{Event as P, Kind};
        let (agent, marker, text) = match e {
            P::Plan { agent, text } => (agent, "plan", Some(text.clone())),
            P::Marker { agent, kind } => (
                agent,
                match kind {
                    Kind::Entered => "entered",
                    Kind::PlanStart => "planStart",
                    Kind::PlanEnd => "planEnd",
                    Kind::Approved => "approved",
                    Kind::Exited => "exited",
                },
                None,
            ),
        };
        ServerMessage::Plan {
            agent: agent.to_string(),
            marker: marker.into(),
            text,
        }
    }
}

/// A session the relay keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    pub id: String,
    pub pid: u32,
    pub viewers: usize,
}

/// A relay, bound.
#[derive(Debug)]
pub struct Relay {
    listener: TcpListener,
    shared: Arc<Shared>,
}

/// What happened to a relay's sessions, for its owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RelayEvent {
    /// Session `session` ended: its program exited with `code`.
    Exit { session: String, code: i32 },
    /// Session `session`'s agent printed a plan-mode marker, or a plan.
    Plan {
        session: String,
        event: crate::plan::Event,
    },
}

/// A session's plan events: the channel its clients subscribe to, and where
/// its agents stand, for a client that connects later.
#[derive(Debug)]
struct Plans {
    tx: tokio::sync::broadcast::Sender<ServerMessage>,
    /// Per agent: its last marker, and its last plan's text (bounded by
    /// the detector).
    state: Vec<ServerMessage>,
}

impl Plans {
    /// Keeps `m` as its agent's last marker, or last plan.
    fn keep(&mut self, m: &ServerMessage) {
        let ServerMessage::Plan { agent, text, .. } = m else {
            return;
        };
        self.state.retain(|k| {
            !matches!(k, ServerMessage::Plan { agent: a, text: t, .. }
                if a == agent && t.is_some() == text.is_some())
        });
        self.state.push(m.clone());
    }
}

/// Events kept for the owner at most; older ones go first.
const EVENTS: usize = 1024;

#[derive(Debug)]
struct Shared {
    config: Config,
    events: Mutex<std::collections::VecDeque<RelayEvent>>,
    event: Notify,
    closed: std::sync::atomic::AtomicBool,
    /// Sessions without a client, and when their last client left.
    idle: Mutex<HashMap<String, tokio::time::Instant>>,
    /// Each session's plan events, for its clients.
    plans: Mutex<HashMap<String, Plans>>,
    hosts: Mutex<Vec<String>>,
    sessions: Mutex<HashMap<String, Session>>,
    connections: Arc<Semaphore>,
    next_session: AtomicU64,
    /// Processes spawned, for tests that check a refusal spawned none.
    spawned: AtomicUsize,
    /// Refusals so far.
    refused: AtomicUsize,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Relay {
    /// Binds `addr` (say `127.0.0.1:0`).
    pub async fn bind(addr: SocketAddr, config: Config) -> std::io::Result<Relay> {
        if config.token.len() < MIN_TOKEN {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "the token must have at least {MIN_TOKEN} characters (128 bits even as hex digits)"
                ),
            ));
        }
        let listener = TcpListener::bind(addr).await?;
        let port = listener.local_addr()?.port();
        let hosts = if config.allowed_hosts.is_empty() {
            vec![format!("127.0.0.1:{port}"), format!("localhost:{port}")]
        } else {
            config.allowed_hosts.clone()
        };
        let shared = Arc::new(Shared {
            connections: Arc::new(Semaphore::new(config.max_connections)),
            config,
            hosts: Mutex::new(hosts),
            sessions: Mutex::new(HashMap::new()),
            events: Mutex::new(std::collections::VecDeque::new()),
            event: Notify::new(),
            closed: std::sync::atomic::AtomicBool::new(false),
            plans: Mutex::new(HashMap::new()),
            idle: Mutex::new(HashMap::new()),
            next_session: AtomicU64::new(1),
            spawned: AtomicUsize::new(0),
            refused: AtomicUsize::new(0),
        });
        Ok(Relay { listener, shared })
    }

    /// Where it listens.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// A handle to ask it about its sessions while it serves.
    pub fn handle(&self) -> Handle {
        Handle {
            shared: self.shared.clone(),
        }
    }

    /// Serves connections until the task is dropped.
    pub async fn serve(self) {
        loop {
            let (stream, peer) = match self.listener.accept().await {
                Ok(c) => c,
                Err(e) => {
                    // Out of descriptors, say: the error repeats at once
                    // until a connection ends, so wait a little before
                    // the next try rather than spin.
                    eprintln!("termio: accept: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let shared = self.shared.clone();
            let Ok(permit) = shared.connections.clone().try_acquire_owned() else {
                shared.refuse(peer, "too many connections");
                drop(tokio::spawn(async move {
                    // Closed with "try again later" once it is a WebSocket.
                    if let Ok(mut ws) = tokio_tungstenite::accept_async(stream).await {
                        let _ = ws.close(Some(close_frame(CloseCode::Again, "busy"))).await;
                    }
                }));
                continue;
            };
            drop(tokio::spawn(async move {
                let _permit = permit;
                connection(shared, stream, peer).await;
            }));
        }
    }
}

/// Asks a serving relay about its sessions.
#[derive(Debug, Clone)]
pub struct Handle {
    shared: Arc<Shared>,
}

impl Handle {
    /// The sessions it keeps.
    pub fn sessions(&self) -> Vec<SessionInfo> {
        let mut v: Vec<SessionInfo> = lock(&self.shared.sessions)
            .iter()
            .map(|(id, s)| SessionInfo {
                id: id.clone(),
                pid: s.pid(),
                viewers: s.viewers(),
            })
            .collect();
        v.sort_by(|a, b| a.id.cmp(&b.id));
        v
    }

    /// How many processes it has spawned.
    pub fn spawned(&self) -> usize {
        self.shared.spawned.load(Ordering::Relaxed)
    }

    /// How many connections it has refused.
    pub fn refused(&self) -> usize {
        self.shared.refused.load(Ordering::Relaxed)
    }

    /// The next event (waits for one); `None` once [`Handle::close`] was
    /// called.
    pub async fn next_event(&self) -> Option<RelayEvent> {
        loop {
            let more = self.shared.event.notified();
            tokio::pin!(more);
            more.as_mut().enable();
            if self.shared.closed.load(Ordering::Acquire) {
                return None;
            }
            if let Some(e) = lock(&self.shared.events).pop_front() {
                return Some(e);
            }
            more.await;
        }
    }

    /// Also accepts `host` as a `Host` header (the address of an HTTP
    /// server that hands upgrades over, [`Handle::adopt`]).
    pub fn allow_host(&self, host: String) {
        let mut hosts = lock(&self.shared.hosts);
        if !hosts.contains(&host) {
            hosts.push(host);
        }
    }

    /// Takes over an upgrade request that another HTTP server (Node's) has
    /// read: `stream` is its connection, `req` its request line and
    /// headers, `head` what was read past them. The same checks apply as
    /// to the relay's own connections (a refusal is answered with its
    /// HTTP status and spawns nothing); then it is served as they are.
    /// Call it on the runtime the relay runs on.
    pub fn adopt(
        &self,
        stream: std::net::TcpStream,
        req: Request,
        head: Vec<u8>,
    ) -> std::io::Result<()> {
        stream.set_nonblocking(true)?;
        let stream = TcpStream::from_std(stream)?;
        let peer = stream.peer_addr()?;
        let shared = self.shared.clone();
        let Ok(permit) = shared.connections.clone().try_acquire_owned() else {
            shared.refuse(peer, "too many connections");
            drop(tokio::spawn(answer(
                stream,
                "503 Service Unavailable",
                "busy",
            )));
            return Ok(());
        };
        drop(tokio::spawn(async move {
            let _permit = permit;
            let _ = stream.set_nodelay(true);
            if let Err((status, why)) = shared.check(&req) {
                shared.refuse(peer, why);
                let line = format!(
                    "{} {}",
                    status.as_u16(),
                    status.canonical_reason().unwrap_or("")
                );
                answer(stream, &line, why).await;
                return;
            }
            let Some(key) = req.headers().get("sec-websocket-key") else {
                answer(stream, "400 Bad Request", "not a WebSocket upgrade").await;
                return;
            };
            let accept =
                tokio_tungstenite::tungstenite::handshake::derive_accept_key(key.as_bytes());
            let reply = format!(
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
                 Connection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n"
            );
            let mut stream = stream;
            if tokio::io::AsyncWriteExt::write_all(&mut stream, reply.as_bytes())
                .await
                .is_err()
            {
                return;
            }
            let ws = tokio_tungstenite::WebSocketStream::from_partially_read(
                stream,
                head,
                tokio_tungstenite::tungstenite::protocol::Role::Server,
                Some(ws_config()),
            )
            .await;
            serve_client(shared, ws, peer).await;
        }));
        Ok(())
    }

    /// Ends every session (their process groups get SIGHUP).
    pub fn close_all(&self) {
        for (_, s) in lock(&self.shared.sessions).drain() {
            let _ = s.signal(rustix::process::Signal::HUP);
        }
    }

    /// Ends every session, and the events: a caller waiting in
    /// [`Handle::next_event`] gets `None`.
    pub fn close(&self) {
        self.close_all();
        self.shared.closed.store(true, Ordering::Release);
        self.shared.event.notify_waiters();
    }
}

impl Shared {
    fn refuse(&self, peer: SocketAddr, why: &str) {
        self.refused.fetch_add(1, Ordering::Relaxed);
        eprintln!("termio: refused {peer}: {why}");
    }

    /// The HTTP upgrade's checks: path, no token in the URL, Host, Origin.
    fn check(&self, req: &Request) -> Result<(), (StatusCode, &'static str)> {
        let uri = req.uri();
        if uri.path() != self.config.path {
            return Err((StatusCode::NOT_FOUND, "no relay on this path"));
        }
        if let Some(q) = uri.query()
            && q.split('&').any(|kv| {
                kv.split('=')
                    .next()
                    .is_some_and(|k| k.eq_ignore_ascii_case("token"))
            })
        {
            return Err((
                StatusCode::BAD_REQUEST,
                "a token in the URL is refused: send it in the hello message",
            ));
        }
        let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
        match header("host") {
            Some(h) if lock(&self.hosts).iter().any(|a| a == h) => {}
            _ => return Err((StatusCode::FORBIDDEN, "Host not allowed")),
        }
        match header("origin") {
            Some(o) if self.config.allowed_origins.iter().any(|a| a == o) => {}
            _ => return Err((StatusCode::FORBIDDEN, "Origin not allowed")),
        }
        Ok(())
    }

    fn token_ok(&self, token: &str) -> bool {
        use subtle::ConstantTimeEq;
        bool::from(token.as_bytes().ct_eq(self.config.token.as_bytes()))
    }
}

/// Answers an HTTP request with `status` and `why`, and closes.
async fn answer(mut stream: TcpStream, status: &str, why: &str) {
    let reply = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{why}",
        why.len()
    );
    let _ = tokio::io::AsyncWriteExt::write_all(&mut stream, reply.as_bytes()).await;
}

fn close_frame(code: CloseCode, reason: &str) -> CloseFrame {
    CloseFrame {
        code,
        reason: reason.to_string().into(),
    }
}

type Ws = tokio_tungstenite::WebSocketStream<TcpStream>;

/// The smallest frame a flood is cut into, however many viewers.
const MIN_FRAME: usize = 16 << 10;

/// The most output one frame carries for each of `viewers` viewers of a
/// session whose ring holds `ring` bytes: `frame`, or the ring shared out
/// among them if that is less (but not under [`MIN_FRAME`]). A frame costs
/// memory twice while it goes (the copy out of the ring, and tungstenite's
/// write buffer, which keeps the size of the largest frame it has held),
/// so the viewers of a session hold about a ring's worth in all, not 256
/// KiB each.
pub fn frame_for(frame: usize, ring: usize, viewers: usize) -> usize {
    (ring / viewers.max(1)).clamp(MIN_FRAME.min(frame), frame)
}

/// A connection's WebSocket settings. A client sends keystrokes and small
/// messages, so its read buffer is 4 KiB, not tungstenite's 128 KiB (which
/// it fills with zeros at the first read: 128 KiB of memory a viewer).
fn ws_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(4 << 10)
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE))
}

/// One client: the upgrade's checks, its hello, then its session.
async fn connection(shared: Arc<Shared>, stream: TcpStream, peer: SocketAddr) {
    let _ = stream.set_nodelay(true);
    let checks = shared.clone();
    // The error type is tungstenite's, for the callback it takes.
    #[allow(clippy::result_large_err)]
    let callback = move |req: &Request, resp: Response| -> Result<Response, ErrorResponse> {
        match checks.check(req) {
            Ok(()) => Ok(resp),
            Err((status, why)) => {
                checks.refuse(peer, why);
                let mut e = ErrorResponse::new(Some(why.to_string()));
                *e.status_mut() = status;
                Err(e)
            }
        }
    };
    let Ok(ws) =
        tokio_tungstenite::accept_hdr_async_with_config(stream, callback, Some(ws_config())).await
    else {
        return;
    };
    serve_client(shared, ws, peer).await;
}

/// A client once its upgrade is done: its hello, then its session.
async fn serve_client(shared: Arc<Shared>, mut ws: Ws, peer: SocketAddr) {
    let refuse = |code: u16, why: &str| {
        shared.refuse(peer, why);
        close_frame(CloseCode::Library(code), why)
    };
    let first = tokio::time::timeout(shared.config.hello_time, ws.next()).await;
    let hello = match first {
        Err(_) => {
            let _ = ws
                .close(Some(refuse(close::NO_HELLO, "no hello in time")))
                .await;
            return;
        }
        Ok(Some(Ok(Message::Text(t)))) => serde_json::from_str::<ClientMessage>(&t).ok(),
        Ok(Some(Ok(_))) => None,
        Ok(_) => return,
    };
    let Some(ClientMessage::Hello {
        token,
        cols,
        rows,
        session,
        seq,
    }) = hello
    else {
        let _ = ws
            .close(Some(refuse(
                close::BAD_HELLO,
                "the first message must be hello",
            )))
            .await;
        return;
    };
    if !shared.token_ok(&token) {
        let _ = ws
            .close(Some(refuse(close::UNAUTHORIZED, "wrong token")))
            .await;
        return;
    }
    let size = Size::chars(cols.unwrap_or(80).max(1), rows.unwrap_or(24).max(1));
    let (id, s, from) = match session {
        Some(id) => {
            let found = lock(&shared.sessions).get(&id).cloned();
            let Some(s) = found else {
                let _ = ws
                    .close(Some(refuse(close::NO_SESSION, "no such session")))
                    .await;
                return;
            };
            let _ = s.resize(size);
            (id, s, seq)
        }
        None => {
            if lock(&shared.sessions).len() >= shared.config.max_sessions {
                let _ = ws
                    .close(Some(refuse(close::TOO_MANY_SESSIONS, "too many sessions")))
                    .await;
                return;
            }
            let mut cmd = shared.config.command.clone();
            cmd.size = size;
            let s = match Session::spawn(&cmd, shared.config.session.clone()) {
                Ok(s) => s,
                Err(e) => {
                    let why = format!("spawn: {e}");
                    eprintln!("termio: {why}");
                    let _ = ws.close(Some(close_frame(CloseCode::Error, &why))).await;
                    return;
                }
            };
            shared.spawned.fetch_add(1, Ordering::Relaxed);
            let n = shared.next_session.fetch_add(1, Ordering::Relaxed);
            let id = format!("s{n}");
            lock(&shared.sessions).insert(id.clone(), s.clone());
            watch_end(shared.clone(), id.clone(), s.clone());
            (id, s, Some(0))
        }
    };
    let viewer = s.attach(from);
    if from.is_none() && viewer.cursor() > 0 {
        // A page that asks for all the session kept, when the ring no
        // longer holds its start: the replay begins mid-stream, so the
        // program draws its screen again too.
        let _ = s.redraw();
    }
    // Where the agents stand, then what comes next: taken together, so
    // that no event is missed or sent twice.
    let (plans, state) = match lock(&shared.plans).get(&id) {
        Some(p) => (Some(p.tx.subscribe()), p.state.clone()),
        None => (None, Vec::new()),
    };
    let hello = ServerMessage::Hello {
        session: id.clone(),
        seq: viewer.cursor(),
    };
    if ws.send(text(&hello)).await.is_err() {
        return;
    }
    for m in &state {
        if ws.send(text(m)).await.is_err() {
            return;
        }
    }
    if !relay(&shared.config, &s, viewer, plans, ws).await {
        reap_when_idle(shared.clone(), id, s);
    }
}

/// Tells the owner of session `id`'s plan events, and of its end, when
/// it forgets it.
fn watch_end(shared: Arc<Shared>, id: String, s: Session) {
    let (tx, _) = tokio::sync::broadcast::channel(64);
    lock(&shared.plans).insert(
        id.clone(),
        Plans {
            tx,
            state: Vec::new(),
        },
    );
    drop(tokio::spawn(async move {
        while let Some(event) = s.next_plan().await {
            let m = ServerMessage::plan(&event);
            if let Some(p) = lock(&shared.plans).get_mut(&id) {
                p.keep(&m);
                // Clients that lag lose the oldest plan events, not memory.
                let _ = p.tx.send(m);
            }
            shared.tell(RelayEvent::Plan {
                session: id.clone(),
                event,
            });
        }
        let code = s.ended().await;
        lock(&shared.plans).remove(&id);
        lock(&shared.sessions).remove(&id);
        shared.tell(RelayEvent::Exit { session: id, code });
    }));
}

impl Shared {
    /// Queues `e` for the owner (dropping the oldest past [`EVENTS`]).
    fn tell(&self, e: RelayEvent) {
        let mut events = lock(&self.events);
        if events.len() == EVENTS {
            events.pop_front();
        }
        events.push_back(e);
        drop(events);
        self.event.notify_one();
    }
}

fn text(m: &ServerMessage) -> Message {
    Message::Text(serde_json::to_string(m).unwrap_or_default().into())
}

/// Closes session `id` once it has had no viewer for the idle time.
///
/// One watcher per session at a time, whatever the number of clients that
/// come and go (each leaving moves the deadline), so that reconnects cannot
/// pile up waiting tasks.
fn reap_when_idle(shared: Arc<Shared>, id: String, s: Session) {
    let now = tokio::time::Instant::now();
    if lock(&shared.idle).insert(id.clone(), now).is_some() {
        // A watcher is waiting already; it sees the new time.
        return;
    }
    drop(tokio::spawn(async move {
        let mut since = now;
        loop {
            tokio::time::sleep_until(since + shared.config.idle).await;
            let mut idle = lock(&shared.idle);
            let last = idle.get(&id).copied().unwrap_or(since);
            if s.viewers() > 0 {
                // A client is back: the next to leave starts a watcher.
                idle.remove(&id);
                return;
            }
            if last > since {
                // Another client left since: wait from then.
                since = last;
                continue;
            }
            idle.remove(&id);
            drop(idle);
            lock(&shared.sessions).remove(&id);
            let _ = s.signal(rustix::process::Signal::HUP);
            return;
        }
    }));
}

/// Relays session `s` to one client until either ends: whether the
/// session ended.
async fn relay(
    config: &Config,
    s: &Session,
    mut viewer: Viewer,
    mut plans: Option<tokio::sync::broadcast::Receiver<ServerMessage>>,
    ws: Ws,
) -> bool {
    let (mut tx, mut rx) = ws.split();
    let input = Arc::new(Notify::new());
    // When the client last typed, in nanoseconds from `start`.
    let start = tokio::time::Instant::now();
    let typed = AtomicU64::new(0);
    // Input: straight to the PTY, ahead of any output waiting to go.
    let reader = {
        let (s, input, typed) = (s.clone(), input.clone(), &typed);
        async move {
            while let Some(m) = rx.next().await {
                let m = match m {
                    Ok(m) => m,
                    Err(tokio_tungstenite::tungstenite::Error::Capacity(_)) => {
                        let why = format!("a message over {MAX_MESSAGE} bytes");
                        eprintln!("termio: closed a client: {why}");
                        return Some(close_frame(CloseCode::Size, &why));
                    }
                    Err(_) => return None,
                };
                match m {
                    Message::Binary(b) => {
                        let at = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
                        typed.store(at.max(1), Ordering::Relaxed);
                        input.notify_one();
                        if s.write(&b).await.is_err() {
                            return None;
                        }
                    }
                    Message::Text(t) => {
                        if let Ok(ClientMessage::Resize { cols, rows }) = serde_json::from_str(&t) {
                            let _ = s.resize(Size::chars(cols.max(1), rows.max(1)));
                        }
                    }
                    Message::Close(_) => break,
                    _ => {}
                }
            }
            None
        }
    };
    let writer = async {
        let mut last = tokio::time::Instant::now() - config.interval;
        // No timer of its own if the kernel gives none: tokio's then.
        let mut gap = Timer::new().ok();
        loop {
            // Output, or a plan event to pass on first.
            let plan = async {
                match plans.as_mut() {
                    Some(p) => loop {
                        match p.recv().await {
                            Ok(m) => return Some(m),
                            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                            Err(_) => return None,
                        }
                    },
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                m = plan => {
                    match m {
                        Some(m) => {
                            if tx.send(text(&m)).await.is_err() {
                                return false;
                            }
                        }
                        None => plans = None,
                    }
                    continue;
                }
                () = viewer.ready(1) => {}
            }
            // Flooding: wait for the interval, a full frame, or input;
            // within the echo window, only for the echo gap.
            let frame = frame_for(config.frame, config.session.ring, s.viewers());
            let now = tokio::time::Instant::now();
            let typed = typed.load(Ordering::Relaxed);
            let echoing =
                typed > 0 && now < start + Duration::from_nanos(typed) + config.echo_window;
            let due = last
                + if echoing {
                    config.echo_gap
                } else {
                    config.interval
                };
            if now < due {
                // tokio's timer rounds up to whole milliseconds, which
                // would make a 1 ms gap 1-2 ms: the gap has a timer of
                // its own.
                let wait = async {
                    match (echoing, gap.as_mut()) {
                        (true, Some(g)) => g.sleep(due - now).await,
                        _ => tokio::time::sleep_until(due).await,
                    }
                };
                tokio::select! {
                    () = wait => {}
                    () = viewer.ready(frame as u64) => {}
                    () = input.notified() => {}
                }
            }
            let m = match viewer.next(frame).await {
                Event::Output { bytes, .. } => Message::Binary(bytes.into()),
                Event::Lost { from, to } => {
                    // What the lost bytes drew is gone: the program draws
                    // its screen again (the client resets its terminal).
                    let _ = s.redraw();
                    text(&ServerMessage::Lost { from, to })
                }
                Event::End { code } => {
                    let _ = tx.send(text(&ServerMessage::Exit { code })).await;
                    let _ = tx.close().await;
                    return true;
                }
            };
            if tx.send(m).await.is_err() {
                return false;
            }
            last = tokio::time::Instant::now();
        }
    };
    let refused = tokio::select! {
        ended = writer => return ended,
        why = reader => why,
    };
    if let Some(frame) = refused {
        let _ = tx.send(Message::Close(Some(frame))).await;
    }
    false
}

/// A one-shot timer with the kernel's resolution (a timerfd): tokio's
/// has a millisecond's.
struct Timer {
    fd: tokio::io::unix::AsyncFd<rustix::fd::OwnedFd>,
}

impl Timer {
    fn new() -> std::io::Result<Timer> {
        use rustix::time::{TimerfdClockId, TimerfdFlags, timerfd_create};
        let fd = timerfd_create(
            TimerfdClockId::Monotonic,
            TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
        )?;
        // SAFETY: an OwnedFd's descriptor is open, and stays the same one,
        // for as long as the OwnedFd lives, which the AsyncFd owns.
        let fd = unsafe {
            tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)
        }
        .map_err(|e| e.into_parts().1)?;
        Ok(Timer { fd })
    }

    /// Waits `d` (at least a nanosecond). Arming the timer again forgets
    /// an expiry that a cancelled wait left unread.
    async fn sleep(&mut self, d: Duration) {
        use rustix::time::{Itimerspec, TimerfdTimerFlags, Timespec, timerfd_settime};
        let d = d.max(Duration::from_nanos(1));
        let spec = Itimerspec {
            it_interval: Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: Timespec {
                tv_sec: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
                tv_nsec: i64::from(d.subsec_nanos()),
            },
        };
        if timerfd_settime(self.fd.get_ref(), TimerfdTimerFlags::empty(), &spec).is_err() {
            return tokio::time::sleep(d).await;
        }
        loop {
            let Ok(mut ready) = self.fd.readable().await else {
                return tokio::time::sleep(d).await;
            };
            let mut buf = [0u8; 8];
            match rustix::io::read(self.fd.get_ref(), &mut buf) {
                Ok(_) => return,
                Err(rustix::io::Errno::AGAIN) => ready.clear_ready(),
                Err(_) => return tokio::time::sleep(d).await,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Timer, frame_for};
    use std::time::Duration;

    #[test]
    fn frames_shrink_as_viewers_share_the_ring() {
        let (frame, ring) = (256 << 10, 4 << 20);
        assert_eq!(frame_for(frame, ring, 0), 256 << 10);
        assert_eq!(frame_for(frame, ring, 1), 256 << 10);
        assert_eq!(frame_for(frame, ring, 16), 256 << 10);
        assert_eq!(frame_for(frame, ring, 64), 64 << 10);
        assert_eq!(frame_for(frame, ring, 100), (4 << 20) / 100);
        assert_eq!(frame_for(frame, ring, 1000), 16 << 10);
        // A frame set below the least is kept.
        assert_eq!(frame_for(4 << 10, ring, 1000), 4 << 10);
    }

    #[tokio::test]
    async fn the_gap_timer_keeps_time_below_a_millisecond() {
        let mut t = Timer::new().unwrap();
        // A wait cancelled before it ends leaves its expiry unread; the
        // next wait must still wait its own time.
        let cancelled =
            tokio::time::timeout(Duration::from_millis(1), t.sleep(Duration::from_millis(5)));
        assert!(cancelled.await.is_err());
        // Past its expiry, waited on another timer.
        Timer::new().unwrap().sleep(Duration::from_millis(6)).await;
        let mut took = Vec::new();
        for _ in 0..50 {
            let t0 = std::time::Instant::now();
            t.sleep(Duration::from_micros(300)).await;
            took.push(t0.elapsed());
        }
        took.sort();
        assert!(took[0] >= Duration::from_micros(300), "{took:?}");
        // tokio's own timer takes a whole millisecond at least.
        assert!(
            took[25] < Duration::from_micros(900),
            "median {:?}",
            took[25]
        );
    }
}
