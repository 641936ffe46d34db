//! `termio`: the relay against the Node stacks it replaces, through real
//! PTYs. The driver is Node (`benches/termio/bench.js`); it runs against the
//! release build of the addon in `node/`, and its peers: node-pty and ws (the
//! baseline and the optimised Node stacks are written in the driver's folder
//! on top of them), and ttyd.

use super::system::{Driver, System};
use crate::peers::{Install, Peer};

pub fn system() -> System {
    System {
        name: "termio",
        peers: vec![
            Peer {
                name: "node-pty",
                program: "node-pty",
                install: Install::NpmLib("node-pty"),
                version_args: &[],
            },
            Peer {
                name: "ws",
                program: "ws",
                install: Install::NpmLib("ws"),
                version_args: &[],
            },
            // In Debian from 13 (trixie); on older releases, build it from
            // its source into target/peers/bin.
            Peer {
                name: "ttyd",
                program: "ttyd",
                install: Install::Apt("ttyd"),
                version_args: &["--version"],
            },
        ],
        drivers: vec![Driver::Node {
            script: "benches/termio/bench.js",
        }],
    }
}
