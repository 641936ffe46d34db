//! greppy: code search that answers like ripgrep.
//!
//! - [`search`]: exact search as rg does it (walk, matcher, searcher,
//!   printer from ripgrep's own crates), in parallel, in path order.
//! - [`cli`]: the command line, with rg's flags and defaults.

pub mod cli;
pub mod search;
