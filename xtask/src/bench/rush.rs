//! `rush`: whole shell processes on the workloads agents produce (`-c`, the
//! Claude Code wrapper, 1000-line scripts, sourcing, loops, pipelines)
//! against dash, bash, zsh and mksh, with posix_spawn+wait of `/bin/true` as
//! the floor. The workloads live in `benches/rush/`.

use super::system::{Driver, System};
use crate::peers::{Install, Peer};

pub fn system() -> System {
    System {
        name: "rush",
        peers: vec![
            Peer {
                name: "dash",
                program: "dash",
                install: Install::Apt("dash"),
                version_args: &[],
            },
            Peer {
                name: "bash",
                program: "bash",
                install: Install::Apt("bash"),
                version_args: &["--version"],
            },
            Peer {
                name: "zsh",
                program: "zsh",
                install: Install::Apt("zsh"),
                version_args: &["--version"],
            },
            Peer {
                name: "mksh",
                program: "mksh",
                install: Install::Apt("mksh"),
                version_args: &["-c", "echo $KSH_VERSION"],
            },
        ],
        drivers: vec![Driver::Cargo {
            package: "rush-bench",
            bin: "rush-bench",
            also: &[("rush", "rush")],
        }],
    }
}
