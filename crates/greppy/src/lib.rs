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
//! - [`mcp`]: the Model Context Protocol server (`greppy mcp`).
//! - [`cli`]: the command line, with rg's flags and defaults.

pub mod chunk;
pub mod cli;
pub mod client;
pub mod daemon;
pub mod index;
pub mod live;
pub mod mcp;
pub mod plan;
pub mod protocol;
pub mod rank;
pub mod search;
pub mod store;
