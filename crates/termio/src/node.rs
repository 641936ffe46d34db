//! The Node addon (napi-rs): thin bindings over [`crate::relay`] and
//! [`crate::session`]. `node/index.js` wraps them in the package's API
//! (`createTerminalServer`, `spawn`); events reach JavaScript through
//! async calls that JavaScript makes in a loop (`nextEvent`, `read`), so
//! no callback is called from another thread. Errors become JavaScript
//! exceptions; nothing here panics into Node.

use crate::pty::{Command, Size};
use crate::relay::{Config, Handle, Relay, RelayEvent, ServerMessage, new_token};
use crate::session::{Event, Options, Session, Viewer};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};

fn err(e: impl std::fmt::Display) -> Error {
    Error::from_reason(e.to_string())
}

/// What to run, for both the server and `spawn`.
fn command(
    shell: Option<String>,
    args: Option<Vec<String>>,
    cwd: Option<String>,
    env: Option<HashMap<String, String>>,
) -> Command {
    let program = shell
        .or_else(|| std::env::var("SHELL").ok())
        .unwrap_or_else(|| "/bin/sh".into());
    let mut c = Command::new(program);
    c.args = args
        .unwrap_or_default()
        .into_iter()
        .map(Into::into)
        .collect();
    c.cwd = cwd.map(Into::into);
    c.env = env
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect();
    c
}

/// `createTerminalServer`'s options.
#[napi(object)]
#[derive(Debug)]
pub struct ServerOptions {
    /// The address to listen on: 127.0.0.1 unless told otherwise.
    pub host: Option<String>,
    /// The port (0 or none: any free one).
    pub port: Option<u32>,
    /// The token clients must send (a new random one if none); at least
    /// 32 characters (128 bits as hex digits).
    pub token: Option<String>,
    /// The program each session runs ($SHELL, else /bin/sh).
    pub shell: Option<String>,
    pub args: Option<Vec<String>>,
    pub cwd: Option<String>,
    pub env: Option<HashMap<String, String>>,
    /// Origins whose pages may connect (`http://127.0.0.1:8080`).
    pub allowed_origins: Option<Vec<String>>,
    /// Hosts clients may name (default: the address and port it listens
    /// on, and localhost with the port).
    pub allowed_hosts: Option<Vec<String>>,
    /// The path it answers on (`/`).
    pub path: Option<String>,
    /// Sessions at once, at most (16). The server has one token, so this
    /// is also the bound of sessions per token.
    pub max_sessions: Option<u32>,
    /// Seconds a session with no client lives (300).
    pub idle_timeout: Option<f64>,
}

/// A session as `sessions()` lists it.
#[napi(object)]
#[derive(Debug)]
pub struct SessionInfo {
    pub id: String,
    pub pid: u32,
    pub viewers: u32,
}

/// An event of the server's sessions.
#[napi(object)]
#[derive(Debug)]
pub struct ServerEvent {
    /// `exit` or `plan`.
    pub kind: String,
    pub session: String,
    /// `exit`: the exit code (a signal's number negated).
    pub code: Option<i32>,
    /// `plan`: the agent (`claude-code`, `codex`, `gemini-cli` or
    /// `copilot-cli`).
    pub agent: Option<String>,
    /// `plan`: `entered`, `plan` (with `text`), `planEnd`, `approved` or
    /// `exited`.
    pub marker: Option<String>,
    /// `plan` with marker `plan`: the plan's text.
    pub text: Option<String>,
}

/// A serving relay.
#[napi]
#[derive(Debug)]
pub struct NativeServer {
    handle: Handle,
    addr: SocketAddr,
    token: String,
    serving: tokio::task::JoinHandle<()>,
}

#[napi]
impl NativeServer {
    /// Binds and starts serving.
    #[napi(factory)]
    pub async fn listen(opts: ServerOptions) -> Result<NativeServer> {
        let host: IpAddr = opts
            .host
            .as_deref()
            .unwrap_or("127.0.0.1")
            .parse()
            .map_err(|e| err(format!("host: {e}")))?;
        let port = u16::try_from(opts.port.unwrap_or(0)).map_err(|_| err("port: over 65535"))?;
        let token = match opts.token {
            Some(t) => t,
            None => new_token().map_err(err)?,
        };
        let cmd = command(opts.shell, opts.args, opts.cwd, opts.env);
        let mut config = Config::new(cmd, token.clone(), opts.allowed_origins.unwrap_or_default());
        config.allowed_hosts = opts.allowed_hosts.unwrap_or_default();
        if let Some(p) = opts.path {
            config.path = p;
        }
        if let Some(n) = opts.max_sessions {
            config.max_sessions = usize::try_from(n).map_err(err)?.max(1);
        }
        if let Some(t) = opts.idle_timeout {
            config.idle = std::time::Duration::try_from_secs_f64(t)
                .map_err(|e| err(format!("idleTimeout: {e}")))?;
        }
        let relay = Relay::bind(SocketAddr::new(host, port), config)
            .await
            .map_err(err)?;
        let addr = relay.local_addr().map_err(err)?;
        let handle = relay.handle();
        let serving = tokio::spawn(relay.serve());
        Ok(NativeServer {
            handle,
            addr,
            token,
            serving,
        })
    }

    #[napi(getter)]
    pub fn port(&self) -> u32 {
        u32::from(self.addr.port())
    }

    #[napi(getter)]
    pub fn host(&self) -> String {
        self.addr.ip().to_string()
    }

    #[napi(getter)]
    pub fn token(&self) -> String {
        self.token.clone()
    }

    /// The sessions it keeps.
    #[napi]
    pub fn sessions(&self) -> Vec<SessionInfo> {
        self.handle
            .sessions()
            .into_iter()
            .map(|s| SessionInfo {
                id: s.id,
                pid: s.pid,
                viewers: s.viewers as u32,
            })
            .collect()
    }

    /// The next event of its sessions (waits for one); null once it is
    /// closed.
    #[napi]
    pub async fn next_event(&self) -> Option<ServerEvent> {
        let none = |kind: &str, session: String| ServerEvent {
            kind: kind.into(),
            session,
            code: None,
            agent: None,
            marker: None,
            text: None,
        };
        Some(match self.handle.next_event().await? {
            RelayEvent::Exit { session, code } => ServerEvent {
                code: Some(code),
                ..none("exit", session)
            },
            RelayEvent::Plan { session, event } => match ServerMessage::plan(&event) {
                ServerMessage::Plan {
                    agent,
                    marker,
                    text,
                } => ServerEvent {
                    agent: Some(agent),
                    marker: Some(marker),
                    text,
                    ..none("plan", session)
                },
                _ => return None,
            },
        })
    }

    /// Also accepts `host` as a Host header (an HTTP server's address).
    #[napi]
    pub fn allow_host(&self, host: String) {
        self.handle.allow_host(host);
    }

    /// Takes over an upgrade that a Node HTTP server has read: `fd` is its
    /// socket's descriptor (duplicated here: the caller then destroys its
    /// socket), `url` and `raw_headers` (Node's `req.url` and
    /// `req.rawHeaders`) the request, `head` what was read past it.
    #[napi]
    pub fn adopt(
        &self,
        fd: i32,
        url: String,
        raw_headers: Vec<String>,
        head: Buffer,
    ) -> Result<()> {
        use rustix::fd::BorrowedFd;
        if fd < 0 {
            return Err(err("the socket has no descriptor (TLS is not handed over)"));
        }
        let mut req =
            tokio_tungstenite::tungstenite::handshake::server::Request::builder().uri(url);
        for pair in raw_headers.chunks(2) {
            if let [k, v] = pair {
                req = req.header(k.as_str(), v.as_str());
            }
        }
        let req = req.body(()).map_err(err)?;
        // SAFETY: `fd` is the caller's open socket for the length of this
        // call; only a duplicate of it is kept.
        let dup = rustix::io::fcntl_dupfd_cloexec(unsafe { BorrowedFd::borrow_raw(fd) }, 0)
            .map_err(err)?;
        let stream = std::net::TcpStream::from(dup);
        napi::bindgen_prelude::within_runtime_if_available(|| {
            self.handle.adopt(stream, req, head.to_vec())
        })
        .map_err(err)
    }

    /// Stops listening and ends every session.
    #[napi]
    pub fn close(&self) {
        self.serving.abort();
        self.handle.close();
    }
}

/// `spawn`'s options.
#[napi(object)]
#[derive(Debug, Default)]
pub struct SpawnOptions {
    pub args: Option<Vec<String>>,
    pub cwd: Option<String>,
    pub env: Option<HashMap<String, String>>,
    pub cols: Option<u32>,
    pub rows: Option<u32>,
    /// The child's environment is `env` alone (node-pty's way), not this
    /// process's with `env` over it.
    pub clear_env: Option<bool>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    /// A start that fails is the child's: it says why on the terminal and
    /// exits with code 1 (node-pty's way), instead of an error here.
    pub start_errors_exit: Option<bool>,
}

fn size(cols: Option<u32>, rows: Option<u32>) -> Size {
    let clamp = |v: Option<u32>, d: u16| v.map_or(d, |v| v.clamp(1, u32::from(u16::MAX)) as u16);
    Size::chars(clamp(cols, 80), clamp(rows, 24))
}

/// A program in a PTY, for callers who want its bytes in JavaScript.
#[napi]
#[derive(Debug)]
pub struct NativeSession {
    session: Session,
    viewer: tokio::sync::Mutex<Viewer>,
}

#[napi]
impl NativeSession {
    /// Starts `file` in a new PTY.
    #[napi(factory)]
    pub fn spawn(file: String, opts: Option<SpawnOptions>) -> Result<NativeSession> {
        let opts = opts.unwrap_or_default();
        let mut cmd = command(Some(file), opts.args, opts.cwd, opts.env);
        cmd.size = size(opts.cols, opts.rows);
        cmd.clear_env = opts.clear_env.unwrap_or(false);
        cmd.uid = opts.uid;
        cmd.gid = opts.gid;
        cmd.start_errors_exit = opts.start_errors_exit.unwrap_or(false);
        // On napi's tokio runtime, which drives the session's writes.
        let session = napi::bindgen_prelude::within_runtime_if_available(|| {
            // No plan detector: nothing here reads its events.
            let opts = Options {
                plan_markers: Vec::new(),
                ..Options::default()
            };
            Session::spawn(&cmd, opts)
        })
        .map_err(err)?;
        let viewer = tokio::sync::Mutex::new(session.attach(Some(0)));
        Ok(NativeSession { session, viewer })
    }

    #[napi(getter)]
    pub fn pid(&self) -> u32 {
        self.session.pid()
    }

    /// The path of the terminal's child side (`/dev/pts/N`).
    #[napi(getter)]
    pub fn pts_name(&self) -> Result<String> {
        self.session.pts_name().map_err(err)
    }

    /// The master side's descriptor (the session's own: for `isatty`).
    #[napi(getter)]
    pub fn fd(&self) -> i32 {
        self.session.master_fd()
    }

    /// Writes to the program's input.
    #[napi]
    pub async fn write(&self, data: Buffer) -> Result<()> {
        self.session.write(&data).await.map_err(err)
    }

    /// Sets the terminal's size, in characters and (if known) pixels.
    #[napi]
    pub fn resize(
        &self,
        cols: u32,
        rows: u32,
        width: Option<u32>,
        height: Option<u32>,
    ) -> Result<()> {
        let px = |v: Option<u32>| v.map_or(0, |v| v.min(u32::from(u16::MAX)) as u16);
        let s = Size {
            width: px(width),
            height: px(height),
            ..size(Some(cols), Some(rows))
        };
        self.session.resize(s).map_err(err)
    }

    /// Sends a signal (`SIGHUP` by default) to the program's process
    /// group.
    #[napi]
    pub fn kill(&self, signal: Option<String>) -> Result<()> {
        use rustix::process::Signal;
        let sig = match signal.as_deref().unwrap_or("SIGHUP") {
            "SIGHUP" => Signal::HUP,
            "SIGINT" => Signal::INT,
            "SIGTERM" => Signal::TERM,
            "SIGKILL" => Signal::KILL,
            "SIGQUIT" => Signal::QUIT,
            other => return Err(err(format!("unknown signal {other}"))),
        };
        self.session.signal(sig).map_err(err)
    }

    /// The next output, or null at the end (then `exitCode()` answers).
    #[napi]
    pub async fn read(&self) -> Option<Buffer> {
        let mut v = self.viewer.lock().await;
        loop {
            match v.next(256 << 10).await {
                Event::Output { bytes, .. } => return Some(bytes.into()),
                // This one viewer holds the reader back: it loses nothing.
                Event::Lost { .. } => continue,
                Event::End { .. } => return None,
            }
        }
    }

    /// Waits for the end: the exit code, or a signal's number negated.
    #[napi]
    pub async fn exit_code(&self) -> i32 {
        self.session.ended().await
    }
}

/// For the benchmark: the time, in nanoseconds, that the plan-mode
/// detector (Claude Code's markers) takes over `data` fed `chunk` bytes at
/// a time, all in Rust, as the session's reader feeds it; and how many
/// events it found (so that the work is not optimised away).
#[napi(object)]
#[derive(Debug)]
pub struct DetectorTiming {
    pub ns: f64,
    pub events: u32,
}

#[napi]
pub fn detector_timing(data: Buffer, chunk: u32) -> DetectorTiming {
    let mut d = crate::plan::Detector::with_builtin_markers();
    let chunk = (chunk as usize).max(1);
    let t = std::time::Instant::now();
    let mut events = 0usize;
    for piece in data.chunks(chunk) {
        events += d.feed(piece).len();
    }
    DetectorTiming {
        ns: t.elapsed().as_nanos() as f64,
        events: events as u32,
    }
}
