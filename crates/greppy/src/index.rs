//! A trigram index over a tree: for each trigram (three bytes, ASCII lower
//! case, within a line), the files that contain it. A query's plan
//! ([`crate::plan`]) selects the candidate files; the matcher then reads
//! only those, so the answers are the scan's.
//!
//! Files the index cannot speak for are always candidates: those over
//! [`MAX_INDEXED`] bytes, and those with a NUL byte (rg's binary detection
//! decides what to report of them, as it reads them).

use crate::plan::{Query, Trigram, trigram};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};

/// Files larger than this are not indexed (they are always read).
pub const MAX_INDEXED: u64 = 2 << 20;

/// The index of a set of files.
#[derive(Debug, Default)]
pub struct Index {
    /// The files, sorted by path; ids are positions here.
    files: Vec<PathBuf>,
    /// Files the index does not speak for: always candidates.
    unindexed: Vec<u32>,
    postings: FxHashMap<Trigram, Vec<u32>>,
}

/// The trigrams of one file's text, sorted and unique; `None` if the file
/// is not to be indexed.
fn trigrams_of(path: &Path) -> Option<Vec<Trigram>> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.len() > MAX_INDEXED {
        return None;
    }
    let text = std::fs::read(path).ok()?;
    if memchr_nul(&text) {
        return None;
    }
    let mut tris: Vec<Trigram> = text
        .windows(3)
        .filter(|w| !w.contains(&b'\n'))
        .map(|w| trigram(w[0], w[1], w[2]))
        .collect();
    tris.sort_unstable();
    tris.dedup();
    Some(tris)
}

fn memchr_nul(text: &[u8]) -> bool {
    text.contains(&0)
}

impl Index {
    /// Indexes `files` (sorted by the caller, or sorted here), in parallel.
    pub fn build(mut files: Vec<PathBuf>) -> Index {
        files.sort();
        let per_file: Vec<Option<Vec<Trigram>>> =
            files.par_iter().map(|p| trigrams_of(p)).collect();
        let mut postings: FxHashMap<Trigram, Vec<u32>> = FxHashMap::default();
        let mut unindexed = Vec::new();
        for (id, tris) in per_file.into_iter().enumerate() {
            let id = id as u32;
            match tris {
                Some(tris) => {
                    for t in tris {
                        postings.entry(t).or_default().push(id);
                    }
                }
                None => unindexed.push(id),
            }
        }
        Index {
            files,
            unindexed,
            postings,
        }
    }

    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// The number of distinct trigrams.
    pub fn trigrams(&self) -> usize {
        self.postings.len()
    }

    /// The ids of the files `q` lets through, sorted.
    fn eval(&self, q: &Query) -> Option<Vec<u32>> {
        // `None` stands for every file.
        match q {
            Query::All => None,
            Query::Tri(t) => Some(self.postings.get(t).cloned().unwrap_or_default()),
            Query::And(qs) => {
                let mut acc: Option<Vec<u32>> = None;
                for q in qs {
                    if let Some(ids) = self.eval(q) {
                        acc = Some(match acc {
                            None => ids,
                            Some(a) => intersect(&a, &ids),
                        });
                        if acc.as_ref().is_some_and(Vec::is_empty) {
                            break;
                        }
                    }
                }
                acc
            }
            Query::Or(qs) => {
                let mut acc = Vec::new();
                for q in qs {
                    acc = union(&acc, &self.eval(q)?);
                }
                Some(acc)
            }
        }
    }

    /// The files that may match `q`, in path order: what the plan lets
    /// through, and every file the index does not speak for.
    pub fn candidates(&self, q: &Query) -> Vec<&Path> {
        match self.eval(q) {
            None => self.files.iter().map(PathBuf::as_path).collect(),
            Some(ids) => union(&ids, &self.unindexed)
                .into_iter()
                .map(|i| self.files[i as usize].as_path())
                .collect(),
        }
    }
}

fn intersect(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(a.len().min(b.len()));
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out
}

fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(a.len() + b.len());
    while i < a.len() || j < b.len() {
        let next = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) if x == y => {
                i += 1;
                j += 1;
                x
            }
            (Some(&x), Some(&y)) if x < y => {
                i += 1;
                x
            }
            (Some(_), Some(&y)) => {
                j += 1;
                y
            }
            (Some(&x), None) => {
                i += 1;
                x
            }
            (None, Some(&y)) => {
                j += 1;
                y
            }
            (None, None) => break,
        };
        out.push(next);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations() {
        assert_eq!(intersect(&[1, 3, 5, 7], &[3, 4, 5]), vec![3, 5]);
        assert_eq!(union(&[1, 3, 5], &[2, 3, 6]), vec![1, 2, 3, 5, 6]);
        assert_eq!(union(&[], &[4]), vec![4]);
    }
}
