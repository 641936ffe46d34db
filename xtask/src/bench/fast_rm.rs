//! `fast-rm`: deleting real trees (nested, flat, deep; 0 to 1M files; tmpfs
//! and disk) against `rm -r`, `find -delete` and rmz, with an `unlinkat`
//! loop as the floor. The workloads live in `benches/fast-rm/`.

use super::system::{Driver, System};
use crate::peers::{Install, Peer};

pub fn system() -> System {
    System {
        name: "fast-rm",
        peers: vec![
            Peer {
                name: "rm",
                program: "rm",
                install: Install::System,
                version_args: &["--version"],
            },
            Peer {
                name: "find",
                program: "find",
                install: Install::System,
                version_args: &["--version"],
            },
            Peer {
                name: "rmz",
                program: "rmz",
                install: Install::Cargo("rmz"),
                version_args: &["--version"],
            },
        ],
        drivers: vec![Driver::Cargo {
            package: "fast-rm-bench",
            bin: "fast-rm-bench",
            also: &[("fast-rm", "fast-rm")],
        }],
    }
}
