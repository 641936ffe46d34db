//! The JSON record every benchmark emits.

use crate::Error;
use crate::hist::Summary;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer as _, V2DeflateSerializer};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One (system, workload, parameters, size, subject) result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The system under test: `floor`, `rush`, `greppy`, `pyloop`, `fast-rm`, `termio`.
    pub system: String,
    pub workload: String,
    /// Further dimensions of the workload, e.g. `fs = tmpfs`, `shape = nested`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, String>,
    pub subject: String,
    pub subject_version: String,
    /// The size parameter (files, bytes, connections …), if the workload scales.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// The unit of the histogram's values, `ns` for time.
    pub unit: String,
    pub summary: Summary,
    /// The histogram in the standard HdrHistogram V2 compressed encoding,
    /// base64: any HdrHistogram library (Java, Python, JS, Rust) decodes it.
    pub histogram: String,
    /// The median of the per-round ratios to the reference subject.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<Ratio>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Resources>,
}

/// `median` of (this subject / `reference`) over `pairs` interleaved rounds:
/// above 1 means slower than the reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    pub reference: String,
    pub median: f64,
    pub pairs: usize,
}

/// Resource figures of whole-process subjects, from `wait4`'s rusage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resources {
    pub user_ns_p50: Option<u64>,
    pub sys_ns_p50: Option<u64>,
    pub max_rss_kib_p50: Option<u64>,
    pub max_rss_kib_max: Option<u64>,
}

impl Record {
    /// Decodes the record's histogram.
    pub fn decode_histogram(&self) -> Result<Histogram<u64>, Error> {
        decode_histogram(&self.histogram)
    }
}

pub(crate) fn encode_histogram(h: &Histogram<u64>) -> Result<String, Error> {
    let mut buf = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut buf)
        .map_err(|e| Error::Histogram(format!("{e:?}")))?;
    Ok(STANDARD.encode(buf))
}

/// Decodes a base64 HdrHistogram V2 (compressed or not) histogram.
pub fn decode_histogram(b64: &str) -> Result<Histogram<u64>, Error> {
    let bytes = STANDARD
        .decode(b64)
        .map_err(|e| Error::Histogram(e.to_string()))?;
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| Error::Histogram(format!("{e:?}")))
}
