//! `cargo xtask bench`: builds the benchmark drivers in release mode, installs
//! the peers, runs each system's drivers with a progress display, and writes
//! the report.
//!
//! A system is one module here (its peers and drivers) plus its workloads
//! under `benches/<system>/`. A driver is a program that writes
//! [`latency::Event`]s as JSON lines on stdout.

mod fast_rm;
mod floor;
mod greppy;
mod pyloop;
mod run;
mod rush;
mod system;
mod termio;

pub use run::{micro, run};
pub use system::{Driver, System};

/// Every system, in report order.
pub fn systems() -> Vec<System> {
    vec![
        floor::system(),
        fast_rm::system(),
        rush::system(),
        pyloop::system(),
        greppy::system(),
        termio::system(),
    ]
}
