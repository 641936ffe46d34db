//! `floor`: the physical limits of this machine, against which every system is
//! held. No peers: its subjects are the kernel's primitives themselves. The
//! workloads live in `benches/floor/`.

use super::system::{Driver, System};

pub fn system() -> System {
    System {
        name: "floor",
        peers: vec![],
        drivers: vec![Driver::Cargo {
            package: "floor",
            bin: "floor",
            also: &[],
        }],
    }
}
