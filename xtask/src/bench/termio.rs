//! `termio`: the relay's pieces against the JavaScript they replace. The
//! driver is Node (`benches/termio/bench.js`); it runs against the release
//! build of the addon in `node/`. So far one workload: the plan-mode
//! detector's cost per MiB, beside faithful JavaScript versions of the
//! full-rescan and chunk-plus-overlap detectors, in the same process.

use super::{Driver, System};

pub fn system() -> System {
    System {
        name: "termio",
        // The JavaScript detectors are in the driver; node-pty and ws come
        // with the echo workloads.
        peers: vec![],
        drivers: vec![Driver::Node {
            script: "benches/termio/bench.js",
        }],
    }
}
