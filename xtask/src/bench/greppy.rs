//! `greppy`: the daemon on a vendored corpus (`cargo vendor` of this
//! workspace, in `target/corpus`), with thousands of distinct queries by
//! class, against rg, zoekt (its `zoekt-index` and `zoekt` commands) and GNU
//! grep -r as whole processes; the floors are
//! `/bin/true` and a Unix-socket round trip. The workloads live in
//! `benches/greppy/`.

use super::system::{Driver, System};
use crate::peers::{Install, Peer};

pub fn system() -> System {
    System {
        name: "greppy",
        peers: vec![
            Peer {
                name: "rg",
                program: "rg",
                install: Install::Cargo("ripgrep --features pcre2"),
                version_args: &["--version"],
            },
            // Its index builder; the search command `zoekt` is installed
            // beside it.
            Peer {
                name: "zoekt",
                program: "zoekt-index",
                install: Install::Go(&[
                    "github.com/sourcegraph/zoekt/cmd/zoekt-index",
                    "github.com/sourcegraph/zoekt/cmd/zoekt",
                ]),
                // It prints its version only when also given a path.
                version_args: &["-version", "."],
            },
            Peer {
                name: "grep",
                program: "grep",
                install: Install::System,
                version_args: &["--version"],
            },
        ],
        drivers: vec![Driver::Cargo {
            package: "greppy-bench",
            bin: "greppy-bench",
            also: &[("greppy", "greppy")],
        }],
    }
}
