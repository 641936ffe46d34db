//! `greppy mcp`: a Model Context Protocol server on stdio (with `rmcp`, the
//! protocol's official Rust SDK), so that coding agents can search without
//! a shell. Tools:
//! - `search`: exact search, rg's semantics, answered by the daemon (or by
//!   a scan where it cannot answer), as `path:line:text` lines;
//! - `find`: ranked search for a concept or a symbol, as spans of lines
//!   with a score, definitions first, each with its first lines;
//! - `read`: a range of a file's lines, numbered.
//!
//! **Invariant:** the tools read nothing outside the client's roots (the
//! protocol's `roots`), or, when the client offers none, outside the tree
//! the server was started in. Paths are resolved (symbolic links too)
//! before the check; the walk of a search does not follow links.

use crate::client::{self, Client};
use crate::daemon;
use crate::protocol::SearchQuery;
use crate::search::{self, Filters, Pattern};
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::model::{ClientNotification, JsonRpcMessage};
use rmcp::service::{Peer, RequestContext, RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::{IntoTransport, Transport};
use rmcp::{ErrorData, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The most lines a `search` answer holds unless asked for more.
const DEFAULT_LIMIT: u64 = 200;
/// The most lines one `read` returns.
const MAX_READ: u64 = 2000;

/// The arguments of `search`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct SearchArgs {
    /// A regular expression (ripgrep's syntax), or a literal with `fixed`.
    pub pattern: String,
    /// The folder to search (default: the server's current folder).
    pub path: Option<String>,
    /// The pattern is a literal string.
    #[serde(default)]
    pub fixed: bool,
    /// Ignore case.
    #[serde(default)]
    pub ignore_case: bool,
    /// Only whole words.
    #[serde(default)]
    pub word: bool,
    /// At most this many matching lines (default 200).
    pub limit: Option<u64>,
}

/// The arguments of `find`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct FindArgs {
    /// Words, identifiers or a question ("where is the retry policy set").
    pub query: String,
    /// The folder to search (default: the server's current folder).
    pub path: Option<String>,
    /// At most this many hits (default 10).
    pub limit: Option<u64>,
    /// Lines of each span to show (default 8; 0: headings only).
    pub lines: Option<usize>,
}

/// The arguments of `read`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct ReadArgs {
    /// The file.
    pub path: String,
    /// The first line, from 1 (default 1).
    pub start: Option<u64>,
    /// The last line, included (default: start + 199).
    pub end: Option<u64>,
}

/// The server.
#[derive(Debug, Clone)]
pub struct Mcp {
    #[expect(dead_code, reason = "rmcp's tool_handler builds its own router")]
    tool_router: ToolRouter<Self>,
    cwd: PathBuf,
    roots: Arc<Mutex<KnownRoots>>,
}

/// The client's roots as far as the server knows them.
///
/// **Invariant:** a call keeps to the roots the client had when the call
/// came in. rmcp runs each message's handler as a task of its own, so a
/// `roots/list_changed` notification's handler may run after the handler
/// of a call that came after it; the notification is therefore seen where
/// messages are read, in order ([`InOrder`]), which bumps `generation`
/// before the next message is read. An answer to `roots/list` is kept
/// only if no change was said while it was asked for.
#[derive(Debug, Default)]
struct KnownRoots {
    /// How many times the client said its roots changed.
    generation: u64,
    /// The roots, resolved, once asked for in this generation.
    roots: Option<Roots>,
}

/// The stdio transport, seeing each message from the client as it is read
/// (see [`KnownRoots`]).
struct InOrder<T> {
    inner: T,
    roots: Arc<Mutex<KnownRoots>>,
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for InOrder<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(n) = &message
            && let ClientNotification::RootsListChangedNotification(_) = n.notification
        {
            let mut known = self.roots.lock().unwrap_or_else(|e| e.into_inner());
            known.generation += 1;
            known.roots = None;
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// The folders the tools may read: the first is where relative paths
/// start.
#[derive(Debug, Clone)]
pub struct Roots {
    dirs: Vec<PathBuf>,
}

impl Roots {
    /// The roots of `uris` (`file://` URIs, as the protocol gives them),
    /// resolved; `cwd` if there are none (or none that exists).
    pub fn new(uris: &[String], cwd: &Path) -> Roots {
        let mut dirs: Vec<PathBuf> = uris
            .iter()
            .filter_map(|u| u.strip_prefix("file://"))
            .map(|p| {
                let bytes: Vec<u8> = percent_encoding::percent_decode_str(p).collect();
                PathBuf::from(
                    <std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(bytes),
                )
            })
            .filter_map(|p| p.canonicalize().ok())
            .collect();
        if dirs.is_empty() {
            dirs.extend(cwd.canonicalize().ok());
        }
        Roots { dirs }
    }

    /// Where relative paths start.
    pub fn base(&self) -> &Path {
        self.dirs.first().map_or(Path::new("/"), PathBuf::as_path)
    }

    /// `given` (relative to [`Roots::base`]) resolved, if it is inside a
    /// root; else the error that says why not.
    pub fn confine(&self, given: &str) -> anyhow::Result<PathBuf> {
        let joined = self.base().join(given);
        let real = joined
            .canonicalize()
            .map_err(|e| anyhow::anyhow!("{given}: {e}"))?;
        if self.dirs.iter().any(|d| real.starts_with(d)) {
            return Ok(real);
        }
        let dirs: Vec<String> = self.dirs.iter().map(|d| d.display().to_string()).collect();
        anyhow::bail!(
            "{given}: outside the roots this server may read ({}); it resolves to {}",
            dirs.join(", "),
            real.display()
        )
    }
}

fn text(s: String) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(s)])
}

fn failure(s: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(s)])
}

#[tool_router]
impl Mcp {
    pub fn new(cwd: PathBuf) -> Self {
        Mcp {
            tool_router: Self::tool_router(),
            cwd,
            roots: Arc::new(Mutex::new(KnownRoots::default())),
        }
    }

    /// The roots the tools keep to: the client's (asked for once, and
    /// again after it says they changed), or the server's folder.
    #[expect(
        deprecated,
        reason = "roots are the protocol's way (2025-06-18) for a client to say what a server may \
                  read; rmcp marks them for a later revision that replaces them"
    )]
    async fn roots(&self, peer: &Peer<RoleServer>) -> Roots {
        let generation = {
            let known = self.roots.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(r) = &known.roots {
                return r.clone();
            }
            known.generation
        };
        let offers = peer
            .peer_info()
            .is_some_and(|i| i.capabilities.roots.is_some());
        let uris: Vec<String> = if offers {
            match peer.list_roots().await {
                Ok(list) => list.roots.into_iter().map(|r| r.uri).collect(),
                Err(_) => Vec::new(),
            }
        } else {
            Vec::new()
        };
        let roots = Roots::new(&uris, &self.cwd);
        let mut known = self.roots.lock().unwrap_or_else(|e| e.into_inner());
        if known.generation == generation {
            known.roots = Some(roots.clone());
        }
        roots
    }

    #[tool(
        description = "Search file contents like ripgrep (same files, .gitignore, regex syntax), from an index kept fresh: returns path:line:text lines."
    )]
    async fn search(
        &self,
        Parameters(a): Parameters<SearchArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let roots = self.roots(&context.peer).await;
        let r = tokio::task::spawn_blocking(move || search_lines(&roots, &a)).await;
        Ok(match r {
            Ok(Ok(s)) => text(s),
            Ok(Err(e)) => failure(format!("{e:#}")),
            Err(e) => failure(format!("the search failed: {e}")),
        })
    }

    #[tool(
        description = "Ranked search for a concept or a symbol (\"where is the retry policy set\"): returns spans of lines (path:start-end kind name [score]) with their first lines, definitions first."
    )]
    async fn find(
        &self,
        Parameters(a): Parameters<FindArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let roots = self.roots(&context.peer).await;
        let r = tokio::task::spawn_blocking(move || find_spans(&roots, &a)).await;
        Ok(match r {
            Ok(Ok(s)) => text(s),
            Ok(Err(e)) => failure(format!("{e:#}")),
            Err(e) => failure(format!("the search failed: {e}")),
        })
    }

    #[tool(description = "Read a range of a file's lines (numbered from 1).")]
    async fn read(
        &self,
        Parameters(a): Parameters<ReadArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let roots = self.roots(&context.peer).await;
        let r = tokio::task::spawn_blocking(move || read_lines(&roots, &a)).await;
        Ok(match r {
            Ok(Ok(s)) => text(s),
            Ok(Err(e)) => failure(format!("{e:#}")),
            Err(e) => failure(format!("the read failed: {e}")),
        })
    }
}

#[tool_handler]
impl ServerHandler for Mcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("greppy", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "greppy: `search` finds lines as ripgrep would, from an index a daemon keeps \
                 fresh; `find` ranks definitions and spans for words or a question; `read` \
                 returns a file's lines. Each reads only inside the client's roots (or the \
                 folder the server started in).",
            )
    }

    // The client's roots changed: seen by [`InOrder`] as the message is
    // read, and asked for again at the next call.
}

/// `search`: the daemon's answer, or a scan's.
fn search_lines(roots: &Roots, a: &SearchArgs) -> anyhow::Result<String> {
    let dir = roots.confine(a.path.as_deref().unwrap_or("."))?;
    let cwd = roots.base();
    let limit = a.limit.unwrap_or(DEFAULT_LIMIT).max(1);
    let pattern = Pattern {
        pattern: a.pattern.clone(),
        fixed: a.fixed,
        ignore_case: a.ignore_case,
        smart_case: false,
        word: a.word,
        multiline: false,
    };
    pattern.matcher()?;
    let show = |p: &[u8]| {
        let p = Path::new(std::ffi::OsStr::from_bytes(p));
        p.strip_prefix(cwd).unwrap_or(p).display().to_string()
    };
    let mut out = String::new();
    let mut n = 0u64;
    let daemon = if dir.is_dir() {
        match Client::connect(&daemon::socket_path()) {
            Ok(mut c) => c
                .search(SearchQuery {
                    pattern: a.pattern.clone(),
                    path: dir.as_os_str().as_bytes().to_vec(),
                    fixed: a.fixed,
                    ignore_case: a.ignore_case,
                    word: a.word,
                    limit: limit + 1,
                    ..SearchQuery::default()
                })
                .ok()
                .filter(|r| r.scan.is_none()),
            Err(client::Error::NoDaemon(..)) => None,
            Err(_) => None,
        }
    } else {
        None
    };
    let lines: Vec<(String, u64, Vec<u8>)> = match daemon {
        Some(answer) => answer
            .lines
            .into_iter()
            .map(|(p, l, t)| (show(&p), l, t))
            .collect(),
        None => {
            let (files, _) = search::walk(std::slice::from_ref(&dir), &Filters::default())?;
            let matcher = pattern.matcher()?;
            let mut v = Vec::new();
            for f in &files {
                for (l, t) in search::file_lines(&matcher, f, None, None) {
                    v.push((show(f.as_os_str().as_bytes()), l, t));
                    if v.len() as u64 > limit {
                        break;
                    }
                }
                if v.len() as u64 > limit {
                    break;
                }
            }
            v
        }
    };
    for (p, l, t) in &lines {
        if n == limit {
            out.push_str("(more lines match; ask with a larger limit)\n");
            break;
        }
        out.push_str(&format!("{p}:{l}:{}\n", String::from_utf8_lossy(t)));
        n += 1;
    }
    if n == 0 {
        out.push_str("no match\n");
    }
    Ok(out)
}

/// `find`: the daemon's ranked answer (or one indexed in memory), each hit
/// with its first lines.
fn find_spans(roots: &Roots, a: &FindArgs) -> anyhow::Result<String> {
    let dir = roots.confine(a.path.as_deref().unwrap_or("."))?;
    let cwd = roots.base();
    if !dir.is_dir() {
        anyhow::bail!("{}: not a folder", dir.display());
    }
    let hits = crate::ask::find(&a.query, &dir, a.limit.unwrap_or(10).max(1), false, |n| {
        eprintln!("greppy: {n}");
    })?;
    let mut out = Vec::new();
    for h in &hits {
        let shown = h.path.strip_prefix(cwd).unwrap_or(&h.path);
        crate::ask::print_hit(&mut out, shown, h, a.lines.unwrap_or(8), false)?;
    }
    if hits.is_empty() {
        out.extend_from_slice(b"nothing found\n");
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// `read`: the lines `start..=end` of a file, numbered.
fn read_lines(roots: &Roots, a: &ReadArgs) -> anyhow::Result<String> {
    let path = roots.confine(&a.path)?;
    let bytes = std::fs::read(&path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let start = a.start.unwrap_or(1).max(1);
    let end = a
        .end
        .unwrap_or(start + 199)
        .max(start)
        .min(start + MAX_READ - 1);
    let mut out = String::new();
    // A last line's newline ends it; it starts no line of its own.
    let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
    for (i, line) in body.split(|&b| b == b'\n').enumerate() {
        let n = i as u64 + 1;
        if n < start {
            continue;
        }
        if n > end {
            break;
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        out.push_str(&format!("{n}: {}\n", String::from_utf8_lossy(line)));
    }
    if out.is_empty() {
        anyhow::bail!("{}: no line {start}", path.display());
    }
    Ok(out)
}

/// Runs the server on stdin and stdout until the client closes them.
pub fn run() -> anyhow::Result<()> {
    let cwd = std::env::current_dir()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let mcp = Mcp::new(cwd);
        let transport = InOrder {
            inner: rmcp::transport::stdio().into_transport(),
            roots: mcp.roots.clone(),
        };
        let service = mcp
            .serve(transport)
            .await
            .map_err(|e| anyhow::anyhow!("the MCP handshake failed: {e}"))?;
        service
            .waiting()
            .await
            .map_err(|e| anyhow::anyhow!("the MCP server failed: {e}"))?;
        anyhow::Ok(())
    })
}
