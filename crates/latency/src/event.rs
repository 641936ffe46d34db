//! The JSON-lines events a driver writes on stdout: records, or raw runs
//! for the reader to turn into records.

use crate::Error;
use crate::record::Record;
use crate::runner::Run;
use serde::{Deserialize, Serialize};
use std::io::Write;

/// One line of a benchmark driver's stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// How many steps the driver will announce, for the progress display.
    Plan { steps: u64 },
    /// A step has started.
    Step { label: String },
    /// A finished record.
    Record(Box<Record>),
    /// A raw interleaved run, for the reader to turn into records.
    Run(Box<Run>),
    /// Something the report must say, e.g. a peer that could not run.
    Note { text: String },
}

impl Event {
    /// Writes the event as one JSON line on stdout and flushes it.
    pub fn emit(&self) -> Result<(), Error> {
        let mut line = serde_json::to_vec(self)?;
        line.push(b'\n');
        let mut out = std::io::stdout().lock();
        out.write_all(&line)?;
        out.flush()?;
        Ok(())
    }

    /// Emits one `Record` event for each record of a finished run.
    pub fn emit_run(run: &Run) -> Result<Vec<Record>, Error> {
        let records = run.records()?;
        for r in &records {
            Event::Record(Box::new(r.clone())).emit()?;
        }
        Ok(records)
    }

    /// Parses one line; a raw run is returned as is.
    pub fn parse(line: &str) -> Result<Self, Error> {
        Ok(serde_json::from_str(line)?)
    }
}
