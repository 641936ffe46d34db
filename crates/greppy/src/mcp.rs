//! `greppy mcp`: a Model Context Protocol server on stdio (with `rmcp`, the
//! protocol's official Rust SDK), so that coding agents can search without
//! a shell. Tools:
//! - `search`: exact search, rg's semantics, answered by the daemon (or by
//!   a scan where it cannot answer), as `path:line:text` lines;
//! - `find`: ranked search for a concept or a symbol, as spans of lines
//!   with a score, definitions first, each with its first lines;
//! - `read`: a range of a file's lines, numbered.

use crate::client::{self, Client};
use crate::daemon;
use crate::protocol::SearchQuery;
use crate::search::{self, Filters, Pattern};
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{CallToolResult, ContentBlock, ServerCapabilities, ServerConfig};
use rmcp::{ErrorData, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

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
        }
    }

    #[tool(
        description = "Search file contents like ripgrep (same files, .gitignore, regex syntax), from an index kept fresh: returns path:line:text lines."
    )]
    async fn search(
        &self,
        Parameters(a): Parameters<SearchArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let cwd = self.cwd.clone();
        let r = tokio::task::spawn_blocking(move || search_lines(&cwd, &a)).await;
        Ok(match r {
            Ok(Ok(s)) => text(s),
            Ok(Err(e)) => failure(format!("{e:#}")),
            Err(e) => failure(format!("the search failed: {e}")),
        })
    }

    #[tool(
        description = "Ranked search for a concept or a symbol (\"where is the retry policy set\"): returns spans of lines (path:start-end kind name [score]) with their first lines, definitions first."
    )]
    async fn find(&self, Parameters(a): Parameters<FindArgs>) -> Result<CallToolResult, ErrorData> {
        let cwd = self.cwd.clone();
        let r = tokio::task::spawn_blocking(move || find_spans(&cwd, &a)).await;
        Ok(match r {
            Ok(Ok(s)) => text(s),
            Ok(Err(e)) => failure(format!("{e:#}")),
            Err(e) => failure(format!("the search failed: {e}")),
        })
    }

    #[tool(description = "Read a range of a file's lines (numbered from 1).")]
    async fn read(&self, Parameters(a): Parameters<ReadArgs>) -> Result<CallToolResult, ErrorData> {
        let cwd = self.cwd.clone();
        let r = tokio::task::spawn_blocking(move || read_lines(&cwd, &a)).await;
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
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_instructions(
            "greppy: `search` finds lines as ripgrep would, from an index a daemon keeps fresh; \
             `find` ranks definitions and spans for words or a question; \
             `read` returns a file's lines.",
        )
    }
}

/// `search`: the daemon's answer, or a scan's.
fn search_lines(cwd: &Path, a: &SearchArgs) -> anyhow::Result<String> {
    let dir = cwd.join(a.path.as_deref().unwrap_or("."));
    let dir = dir
        .canonicalize()
        .map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
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
fn find_spans(cwd: &Path, a: &FindArgs) -> anyhow::Result<String> {
    let given = PathBuf::from(a.path.as_deref().unwrap_or("."));
    let dir = cwd.join(&given);
    if !dir.is_dir() {
        anyhow::bail!("{}: not a folder", dir.display());
    }
    let hits = crate::cli::find(&a.query, &dir, a.limit.unwrap_or(10).max(1), false)?;
    let mut out = Vec::new();
    for h in &hits {
        let shown = h.path.strip_prefix(cwd).unwrap_or(&h.path);
        crate::cli::print_hit(&mut out, shown, h, a.lines.unwrap_or(8), false)?;
    }
    if hits.is_empty() {
        out.extend_from_slice(b"nothing found\n");
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// `read`: the lines `start..=end` of a file, numbered.
fn read_lines(cwd: &Path, a: &ReadArgs) -> anyhow::Result<String> {
    let path = cwd.join(&a.path);
    let bytes = std::fs::read(&path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let start = a.start.unwrap_or(1).max(1);
    let end = a
        .end
        .unwrap_or(start + 199)
        .max(start)
        .min(start + MAX_READ - 1);
    let mut out = String::new();
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
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
        let service = Mcp::new(cwd)
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| anyhow::anyhow!("the MCP handshake failed: {e}"))?;
        service
            .waiting()
            .await
            .map_err(|e| anyhow::anyhow!("the MCP server failed: {e}"))?;
        anyhow::Ok(())
    })
}
