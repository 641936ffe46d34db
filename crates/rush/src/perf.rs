//! `RUSH_PERF=1`: the time of each phase (parse, expand, spawn, wait),
//! recorded in `latency` histograms and printed to stderr when the shell
//! ends (or replaces itself with a command).

use latency::Recorder;
use std::time::Duration;

/// A phase of running a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Parse,
    Expand,
    Spawn,
    Wait,
}

const PHASES: [(Phase, &str); 4] = [
    (Phase::Parse, "parse"),
    (Phase::Expand, "expand"),
    (Phase::Spawn, "spawn"),
    (Phase::Wait, "wait"),
];

/// One recorder per phase.
#[derive(Debug)]
pub struct Perf {
    recorders: [Recorder; 4],
    reported: bool,
}

impl Perf {
    /// `Some` when `RUSH_PERF` is set to something other than `0`.
    pub fn from_env() -> Option<Self> {
        match std::env::var_os("RUSH_PERF") {
            Some(v) if !v.is_empty() && v != "0" => Some(Perf {
                recorders: Default::default(),
                reported: false,
            }),
            _ => None,
        }
    }

    pub fn record(&mut self, phase: Phase, d: Duration) {
        let i = PHASES.iter().position(|(p, _)| *p == phase).unwrap_or(0);
        self.recorders[i].record(d);
    }

    /// Prints one line per phase that ran: count, total, p50 and max.
    pub fn report(&mut self) {
        if self.reported {
            return;
        }
        self.reported = true;
        let mut out = String::new();
        for ((_, name), r) in PHASES.iter().zip(&self.recorders) {
            if r.is_empty() {
                continue;
            }
            let s = r.summary();
            let total = s.mean * s.count as f64;
            out.push_str(&format!(
                "rush perf: {name:<6} n={} total={:.1}us p50={:.1}us max={:.1}us\n",
                s.count,
                total / 1e3,
                s.p50 as f64 / 1e3,
                s.max as f64 / 1e3
            ));
        }
        let _ = crate::sys::write_all(2, out.as_bytes());
    }
}
