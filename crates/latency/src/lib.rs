//! The one latency-measurement crate that every benchmark in this repository uses.
//!
//! - [`Recorder`] keeps durations in an HDR histogram (nanoseconds, 3 significant
//!   figures, fixed bounds of 1 ns to 1 hour), with correction for coordinated
//!   omission when the offered load is fixed.
//! - [`Summary`] condenses a histogram to count, min, p50, p90, p99, p99.9, max,
//!   mean and standard deviation.
//! - [`interleave`] runs subjects A B A B … after a warm-up and returns a [`Run`]:
//!   the raw per-round samples, which [`Run::records`] turns into one [`Record`]
//!   per subject, with the median of the per-pair ratios to the reference subject.
//! - [`spread`] runs many such workloads with each one's rounds spread evenly
//!   over the whole run, so that one busy spell touches only a few of its rounds.
//! - [`process::time_command`] times a whole child process: wall time, user and
//!   system CPU and peak RSS from `wait4`.
//! - [`Event`] is the JSON-lines protocol every benchmark driver (Rust, Python or
//!   Node) writes on stdout; a [`Run`] may be sent raw, so drivers in other
//!   languages get their statistics from this crate too.

mod event;
mod hist;
pub mod machine;
pub mod process;
mod record;
mod runner;
pub mod stats;

pub use event::Event;
pub use hist::{HIGHEST_NS, Recorder, SIGFIG, Summary};
pub use record::{Ratio, Record, Resources, decode_histogram};
pub use runner::{
    BoxError, Cell, Dropped, Options, Run, Sample, Subject, SubjectInfo, interleave, spread,
    spread_order,
};

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("histogram: {0}")]
    Histogram(String),
    #[error("subject {subject:?} failed: {source}")]
    Subject {
        subject: String,
        #[source]
        source: BoxError,
    },
    #[error("a run needs at least one subject")]
    NoSubjects,
    #[error("round {round} has {got} samples for {want} subjects")]
    RaggedRound {
        round: usize,
        got: usize,
        want: usize,
    },
    #[error("reference subject {0} is out of range")]
    BadReference(usize),
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
}
