//! The interleaved runner: subjects run A B A B … after a warm-up, so that a
//! noisy machine slows every subject alike, and each round gives one ratio.

use crate::hist::{Recorder, duration_ns};
use crate::record::{Ratio, Record, Resources};
use crate::{Error, stats};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The error a subject may return.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// One measurement of one subject in one round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
    /// The measured value in the run's unit (nanoseconds for time).
    pub value: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sys_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rss_kib: Option<u64>,
}

impl Sample {
    pub fn ns(value: u64) -> Self {
        Self {
            value,
            user_ns: None,
            sys_ns: None,
            max_rss_kib: None,
        }
    }

    pub fn duration(d: Duration) -> Self {
        Self::ns(duration_ns(d))
    }

    /// Times `f` with the monotonic clock.
    pub fn time<T>(f: impl FnOnce() -> T) -> (Self, T) {
        let start = Instant::now();
        let out = f();
        (Self::duration(start.elapsed()), out)
    }
}

/// Who a subject is: its name and the version that was measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubjectInfo {
    pub name: String,
    pub version: String,
}

/// A subject to measure: a closure that does one unit of work and returns its
/// sample. Setup that must not be timed (rebuilding a tree) happens inside the
/// closure, before it starts its clock.
pub struct Subject<'a> {
    pub info: SubjectInfo,
    pub run: Box<dyn FnMut() -> Result<Sample, BoxError> + 'a>,
}

impl std::fmt::Debug for Subject<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subject")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl<'a> Subject<'a> {
    pub fn new(
        name: impl Into<String>,
        version: impl Into<String>,
        run: impl FnMut() -> Result<Sample, BoxError> + 'a,
    ) -> Self {
        Self {
            info: SubjectInfo {
                name: name.into(),
                version: version.into(),
            },
            run: Box::new(run),
        }
    }
}

/// How many rounds to run.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Rounds run first and thrown away.
    pub warmup: usize,
    /// The most rounds to keep.
    pub rounds: usize,
    /// The fewest rounds to keep, even past the time budget.
    pub min_rounds: usize,
    /// Stop after this much time once `min_rounds` are in.
    pub budget: Option<Duration>,
}

impl Options {
    pub fn rounds(rounds: usize) -> Self {
        Self {
            warmup: rounds.div_ceil(10).min(100),
            rounds,
            min_rounds: rounds,
            budget: None,
        }
    }

    pub fn with_budget(mut self, min_rounds: usize, budget: Duration) -> Self {
        self.min_rounds = min_rounds.min(self.rounds);
        self.budget = Some(budget);
        self
    }
}

/// The raw outcome of an interleaved run: `rounds[k][i]` is subject `i`'s
/// sample in round `k`. Drivers written in Python or Node emit this shape as
/// JSON and leave the statistics to [`Run::records`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub system: String,
    pub workload: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    pub unit: String,
    pub subjects: Vec<SubjectInfo>,
    /// Index of the subject the ratios are taken against.
    #[serde(default)]
    pub reference: usize,
    /// The fixed interval between requests, when the load was offered at a
    /// fixed rate: values are then corrected for coordinated omission.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_interval: Option<u64>,
    pub rounds: Vec<Vec<Sample>>,
}

impl Run {
    /// A run with no rounds yet.
    pub fn new(system: &str, workload: &str, subjects: Vec<SubjectInfo>) -> Self {
        Self {
            system: system.into(),
            workload: workload.into(),
            params: BTreeMap::new(),
            size: None,
            unit: "ns".into(),
            subjects,
            reference: 0,
            expected_interval: None,
            rounds: Vec::new(),
        }
    }

    pub fn param(mut self, key: &str, value: impl Into<String>) -> Self {
        self.params.insert(key.into(), value.into());
        self
    }

    pub fn size(mut self, size: u64) -> Self {
        self.size = Some(size);
        self
    }

    /// One record per subject: its histogram and summary, its resource
    /// figures when the samples carry them, and, for every subject but the
    /// reference, the median over rounds of (subject / reference).
    pub fn records(&self) -> Result<Vec<Record>, Error> {
        let n = self.subjects.len();
        if n == 0 {
            return Err(Error::NoSubjects);
        }
        if self.reference >= n {
            return Err(Error::BadReference(self.reference));
        }
        for (round, r) in self.rounds.iter().enumerate() {
            if r.len() != n {
                return Err(Error::RaggedRound {
                    round,
                    got: r.len(),
                    want: n,
                });
            }
        }
        let reference = &self.subjects[self.reference].name;
        let mut out = Vec::with_capacity(n);
        for (i, info) in self.subjects.iter().enumerate() {
            let mut rec = Recorder::new();
            let column = self.rounds.iter().map(|r| r[i]);
            for s in column.clone() {
                match self.expected_interval {
                    Some(iv) => rec.record_corrected_ns(s.value, iv),
                    None => rec.record_ns(s.value),
                }
            }
            let ratio = (i != self.reference && n > 1).then(|| {
                let ratios: Vec<f64> = self
                    .rounds
                    .iter()
                    .filter(|r| r[self.reference].value > 0)
                    .map(|r| r[i].value as f64 / r[self.reference].value as f64)
                    .collect();
                Ratio {
                    reference: reference.clone(),
                    median: stats::median(&ratios).unwrap_or(f64::NAN),
                    pairs: ratios.len(),
                }
            });
            let pick = |f: fn(&Sample) -> Option<u64>| -> Vec<u64> {
                column.clone().filter_map(|s| f(&s)).collect()
            };
            let (user, sys, rss) = (
                pick(|s| s.user_ns),
                pick(|s| s.sys_ns),
                pick(|s| s.max_rss_kib),
            );
            let resources = (!user.is_empty() || !rss.is_empty()).then(|| Resources {
                user_ns_p50: stats::median_u64(&user),
                sys_ns_p50: stats::median_u64(&sys),
                max_rss_kib_p50: stats::median_u64(&rss),
                max_rss_kib_max: rss.iter().copied().max(),
            });
            out.push(Record {
                system: self.system.clone(),
                workload: self.workload.clone(),
                params: self.params.clone(),
                subject: info.name.clone(),
                subject_version: info.version.clone(),
                size: self.size,
                unit: self.unit.clone(),
                summary: rec.summary(),
                histogram: crate::record::encode_histogram(rec.histogram())?,
                ratio,
                resources,
            });
        }
        Ok(out)
    }
}

/// Runs `subjects` interleaved, A B A B …: first `warmup` rounds that are
/// thrown away, then up to `rounds` kept rounds (fewer if the time budget runs
/// out after `min_rounds`). `run` names the system, workload and parameters;
/// its rounds are filled in.
pub fn interleave(mut run: Run, subjects: &mut [Subject<'_>], opts: Options) -> Result<Run, Error> {
    if subjects.is_empty() {
        return Err(Error::NoSubjects);
    }
    run.subjects = subjects.iter().map(|s| s.info.clone()).collect();
    for _ in 0..opts.warmup {
        one_round(subjects)?;
    }
    let start = Instant::now();
    run.rounds.reserve(opts.rounds.min(1 << 20));
    for k in 0..opts.rounds {
        if k >= opts.min_rounds && opts.budget.is_some_and(|b| start.elapsed() >= b) {
            break;
        }
        let r = one_round(subjects)?;
        run.rounds.push(r);
    }
    Ok(run)
}

/// Every subject once, in order.
fn one_round(subjects: &mut [Subject<'_>]) -> Result<Vec<Sample>, Error> {
    subjects
        .iter_mut()
        .map(|s| {
            (s.run)().map_err(|source| Error::Subject {
                subject: s.info.name.clone(),
                source,
            })
        })
        .collect()
}

/// One workload of a [`spread`] run: its subjects, run interleaved within
/// each round as by [`interleave`], and how many rounds it gets.
#[derive(Debug)]
pub struct Cell<'a> {
    pub run: Run,
    pub subjects: Vec<Subject<'a>>,
    /// Rounds run just before the cell's first kept round, and thrown away.
    pub warmup: usize,
    pub rounds: usize,
    /// What [`spread`] left out: each failed round (warm-up or kept), with
    /// why. A failed round is dropped whole (every subject's sample of it),
    /// so that the rest of a long run is kept.
    pub dropped: Vec<Dropped>,
}

/// A round that [`spread`] left out because a subject failed in it.
#[derive(Debug)]
pub struct Dropped {
    /// The round's index among the cell's kept rounds; `None` for a
    /// warm-up round.
    pub round: Option<usize>,
    pub error: Error,
}

impl Dropped {
    /// How a driver's note about a dropped round begins, so that `cargo
    /// xtask bench` can tell it from other notes and end the run in error
    /// (after writing what the other rounds measured).
    pub const NOTE_PREFIX: &'static str = "FAILED: ";

    /// The note a driver sends about this round of the cell `label`.
    pub fn note(&self, label: &str) -> String {
        let round = self
            .round
            .map_or_else(|| "warm-up".to_string(), |k| format!("round {}", k + 1));
        format!(
            "{}{label}, {round}: {}; that round is left out",
            Self::NOTE_PREFIX,
            self.error
        )
    }
}

/// The order in which [`spread`] runs the cells' rounds: `(cell, round)`
/// pairs, each cell's `rounds[cell]` rounds at evenly spaced points of the
/// whole run (round `k` of `r` at `(k + ½) / r`), ties in cell order.
pub fn spread_order(rounds: &[usize]) -> Vec<(usize, usize)> {
    let mut slots: Vec<(usize, usize)> = rounds
        .iter()
        .enumerate()
        .flat_map(|(cell, &r)| (0..r).map(move |k| (cell, k)))
        .collect();
    // (k + ½) / r compared exactly: (2k + 1) · r' against (2k' + 1) · r.
    slots.sort_by(|&(a, ka), &(b, kb)| {
        let left = (2 * ka as u128 + 1) * rounds[b] as u128;
        let right = (2 * kb as u128 + 1) * rounds[a] as u128;
        left.cmp(&right).then(a.cmp(&b))
    });
    slots
}

/// Runs many workloads with their rounds spread over the whole run (in
/// [`spread_order`]), so that a busy spell of a shared machine falls on a few
/// rounds of many cells, which their medians drop, rather than on every
/// round of one. `before` is called ahead of each kept round with its cell
/// and round. Returns the cells' runs, in the cells' order. A round in
/// which a subject fails is left out and recorded in its cell's
/// [`dropped`](Cell::dropped), and the run goes on: a cell may so end with
/// fewer rounds than asked for, or none.
pub fn spread(
    cells: &mut [Cell<'_>],
    mut before: impl FnMut(usize, usize) -> Result<(), Error>,
) -> Result<Vec<Run>, Error> {
    if cells.iter().any(|c| c.subjects.is_empty()) {
        return Err(Error::NoSubjects);
    }
    for c in cells.iter_mut() {
        c.run.subjects = c.subjects.iter().map(|s| s.info.clone()).collect();
        c.run.rounds.reserve(c.rounds.min(1 << 20));
    }
    let rounds: Vec<usize> = cells.iter().map(|c| c.rounds).collect();
    for (i, k) in spread_order(&rounds) {
        let cell = &mut cells[i];
        if k == 0 {
            for _ in 0..cell.warmup {
                if let Err(error) = one_round(&mut cell.subjects) {
                    cell.dropped.push(Dropped { round: None, error });
                }
            }
        }
        before(i, k)?;
        match one_round(&mut cell.subjects) {
            Ok(r) => cell.run.rounds.push(r),
            Err(error) => cell.dropped.push(Dropped {
                round: Some(k),
                error,
            }),
        }
    }
    Ok(cells.iter().map(|c| c.run.clone()).collect())
}
