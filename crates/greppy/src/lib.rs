//! greppy: code search that answers like ripgrep.
//!
//! - [`search`]: exact search as rg does it (walk, matcher, searcher,
//!   printer from ripgrep's own crates), in parallel, in path order.
//! - [`plan`]: a regex to the trigrams its matches must contain.
//! - [`index`]: the trigram index of a tree, which turns a plan into the
//!   files that may match; the matcher reads only those.
//! - [`chunk`]: files cut into definitions (tree-sitter) and windows.
//! - [`rank`]: ranked search (`greppy find`): BM25 (Tantivy) over chunks.
//! - [`protocol`]: the frames and messages between clients and the daemon.
//! - [`daemon`]: the socket server: limits, pipelining, cancellation.
//! - [`searchers`]: the daemon's search threads; connections take turns.
//! - [`policy`]: the daemon's threads yield on waking while searches wait.
//! - [`mcp`]: the Model Context Protocol server (`greppy mcp`).
//! - [`cli`]: the command line, with rg's flags and defaults.

pub mod ask;
pub mod chunk;
pub mod cli;
pub mod client;
pub mod daemon;
pub mod flags;
pub mod full;
pub mod index;
pub mod live;
pub mod mcp;
pub mod plan;
pub mod policy;
pub mod protocol;
pub mod rank;
pub mod search;
pub mod searchers;
pub mod store;
pub mod watch;

/// Returns the heap a build freed, and the threads' trigram tables, to the
/// system: glibc keeps freed memory for reuse, and a daemon that built an
/// index once would hold its peak for good.
pub(crate) fn give_back_memory() {
    index::release_scratch();
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free heap pages; it touches no
    // memory in use and has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}
