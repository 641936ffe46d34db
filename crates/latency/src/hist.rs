use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Significant figures kept by every histogram.
pub const SIGFIG: u8 = 3;
/// The highest value a histogram holds: one hour in nanoseconds. Larger values
/// saturate to it.
pub const HIGHEST_NS: u64 = 3_600_000_000_000;

/// Durations (or any non-negative integer quantity) in an HDR histogram with
/// fixed bounds, so that histograms from every benchmark can be merged.
#[derive(Debug, Clone)]
pub struct Recorder {
    hist: Histogram<u64>,
}

impl Default for Recorder {
    fn default() -> Self {
        Self::new()
    }
}

impl Recorder {
    pub fn new() -> Self {
        let hist = Histogram::new_with_bounds(1, HIGHEST_NS, SIGFIG)
            .expect("constant histogram bounds are valid");
        Self { hist }
    }

    /// Wraps an existing histogram (for example one decoded from a record).
    pub fn from_histogram(hist: Histogram<u64>) -> Self {
        Self { hist }
    }

    pub fn histogram(&self) -> &Histogram<u64> {
        &self.hist
    }

    /// Records one value; values above [`HIGHEST_NS`] saturate.
    pub fn record_ns(&mut self, ns: u64) {
        self.hist.saturating_record(ns.min(HIGHEST_NS));
    }

    pub fn record(&mut self, d: Duration) {
        self.record_ns(duration_ns(d));
    }

    /// Records a value measured under a fixed offered load of one request per
    /// `interval_ns`, back-filling the samples that a stalled sender would have
    /// taken (correction for coordinated omission).
    pub fn record_corrected_ns(&mut self, ns: u64, interval_ns: u64) {
        let ns = ns.min(HIGHEST_NS);
        if interval_ns == 0 || self.hist.record_correct(ns, interval_ns).is_err() {
            self.record_ns(ns);
        }
    }

    pub fn len(&self) -> u64 {
        self.hist.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hist.is_empty()
    }

    pub fn summary(&self) -> Summary {
        Summary::of(&self.hist)
    }
}

/// Saturating conversion of a duration to whole nanoseconds.
pub fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The summary statistics every report shows. Values are in the record's unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub count: u64,
    pub min: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
    pub mean: f64,
    pub stdev: f64,
}

impl Summary {
    pub fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Self {
                count: 0,
                min: 0,
                p50: 0,
                p90: 0,
                p99: 0,
                p999: 0,
                max: 0,
                mean: 0.0,
                stdev: 0.0,
            };
        }
        Self {
            count: h.len(),
            min: h.min(),
            p50: h.value_at_quantile(0.50),
            p90: h.value_at_quantile(0.90),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
            mean: h.mean(),
            stdev: h.stdev(),
        }
    }
}
