//! A trigram index over a tree: for each trigram (three bytes, ASCII lower
//! case, within a line), the files that contain it. A query's plan
//! ([`crate::plan`]) selects the candidate files; the matcher then reads
//! only those, so the answers are the scan's.
//!
//! Files the index cannot speak for are always candidates: those over
//! [`MAX_INDEXED`] bytes, and those with a NUL byte (rg's binary detection
//! decides what to report of them, as it reads them).
//!
//! The index is one byte layout, in memory after a build and memory-mapped
//! after [`Index::open`], so a restarted process answers from the file
//! without loading it. [`Index::save`] writes it atomically (a new file,
//! synced, renamed over the old), so a crash mid-write leaves the old index
//! whole. All numbers are little-endian:
//!
//! ```text
//! header   magic "GREPPYI1", then u32 version, files, trigrams, unindexed,
//!          then u64 offsets of: path ends, paths, unindexed, table, postings,
//!          and the total length
//! path ends   u64 per file: where its path ends in the path bytes
//! paths       the paths' bytes, one after another, sorted
//! unindexed   u32 file ids, sorted
//! table       per trigram, sorted: u32 trigram, u32 first posting, u32 count
//! postings    u32 file ids, sorted within each trigram
//! ```

use crate::plan::{Query, Trigram, trigram};
use anyhow::{Context, Result, bail, ensure};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Files larger than this are not indexed (they are always read).
pub const MAX_INDEXED: u64 = 2 << 20;

const MAGIC: &[u8; 8] = b"GREPPYI1";
const VERSION: u32 = 1;
const HEADER: usize = 8 + 4 * 4 + 6 * 8;

/// The bytes of an index: built here, or mapped from a file.
#[derive(Debug)]
enum Bytes {
    Owned(Vec<u8>),
    Mapped(memmap2::Mmap),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Owned(v) => v,
            Bytes::Mapped(m) => m,
        }
    }
}

/// The index of a set of files.
#[derive(Debug)]
pub struct Index {
    data: Bytes,
    files: usize,
    trigrams: usize,
    unindexed: usize,
    path_ends: usize,
    paths: usize,
    unindexed_at: usize,
    table: usize,
    postings: usize,
}

/// The trigrams of one file's text, sorted and unique; `None` if the file
/// is not to be indexed.
fn trigrams_of(path: &Path) -> Option<Vec<Trigram>> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.len() > MAX_INDEXED {
        return None;
    }
    let text = std::fs::read(path).ok()?;
    if text.contains(&0) {
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

fn u32_at(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(d.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(d: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(d.get(at..at + 8)?.try_into().ok()?))
}

impl Index {
    /// Indexes `files`, in parallel.
    pub fn build(mut files: Vec<PathBuf>) -> Index {
        files.sort();
        files.dedup();
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
        let mut table: Vec<(Trigram, Vec<u32>)> = postings.into_iter().collect();
        table.sort_unstable_by_key(|(t, _)| *t);
        Index::from_bytes(Bytes::Owned(serialize(&files, &unindexed, &table)))
            .expect("a freshly built index is well formed")
    }

    /// Writes the index to `path` atomically: a whole new file, synced, then
    /// renamed over the old one (whose readers keep their mapping).
    pub fn save(&self, path: &Path) -> Result<()> {
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let tmp = dir.join(format!(
            ".{}.{}.tmp",
            path.file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default(),
            std::process::id()
        ));
        let write = || -> Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(&self.data)?;
            f.sync_all()?;
            std::fs::rename(&tmp, path)?;
            std::fs::File::open(dir)?.sync_all()?;
            Ok(())
        };
        let r = write();
        if r.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        r.with_context(|| format!("write the index {}", path.display()))
    }

    /// Maps the index at `path`. A file that is not a well-formed index is
    /// an error, never a crash.
    pub fn open(path: &Path) -> Result<Index> {
        let f = std::fs::File::open(path).with_context(|| format!("open {}", path.display()))?;
        // SAFETY: the file is only ever replaced by rename, never written in
        // place, so the mapped bytes do not change under us.
        let map =
            unsafe { memmap2::Mmap::map(&f) }.with_context(|| format!("map {}", path.display()))?;
        Index::from_bytes(Bytes::Mapped(map))
            .with_context(|| format!("{} is not a greppy index", path.display()))
    }

    fn from_bytes(data: Bytes) -> Result<Index> {
        let d = &*data;
        ensure!(d.len() >= HEADER && &d[..8] == MAGIC, "bad magic");
        let field32 = |i: usize| u32_at(d, 8 + 4 * i).unwrap_or(0) as usize;
        let field64 = |i: usize| {
            u64_at(d, 24 + 8 * i)
                .map(|v| v as usize)
                .unwrap_or(usize::MAX)
        };
        if field32(0) != VERSION as usize {
            bail!("index version {} (this greppy reads {VERSION})", field32(0));
        }
        let (files, trigrams, unindexed) = (field32(1), field32(2), field32(3));
        let (path_ends, paths, unindexed_at, table, postings, total) = (
            field64(0),
            field64(1),
            field64(2),
            field64(3),
            field64(4),
            field64(5),
        );
        ensure!(
            total == d.len(),
            "length {} where the header says {total}",
            d.len()
        );
        // Each section lies inside the file, in order.
        let ends = [
            (path_ends, files.checked_mul(8)),
            (unindexed_at, unindexed.checked_mul(4)),
            (table, trigrams.checked_mul(12)),
        ];
        for (start, len) in ends {
            let end = len.and_then(|l| start.checked_add(l));
            ensure!(
                end.is_some_and(|e| e <= d.len()),
                "a section runs past the end"
            );
        }
        ensure!(
            paths <= d.len() && postings <= d.len(),
            "a section runs past the end"
        );
        let idx = Index {
            data,
            files,
            trigrams,
            unindexed,
            path_ends,
            paths,
            unindexed_at,
            table,
            postings,
        };
        // The path ends must rise and stay inside the path bytes.
        let mut prev = 0;
        for i in 0..files {
            let e = u64_at(&idx.data, path_ends + 8 * i).unwrap_or(u64::MAX) as usize;
            ensure!(
                e >= prev && idx.paths.checked_add(e).is_some_and(|x| x <= postings),
                "bad path table"
            );
            prev = e;
        }
        Ok(idx)
    }

    /// The number of files.
    pub fn len(&self) -> usize {
        self.files
    }

    pub fn is_empty(&self) -> bool {
        self.files == 0
    }

    /// The number of distinct trigrams.
    pub fn trigrams(&self) -> usize {
        self.trigrams
    }

    /// The index's size in bytes.
    pub fn bytes(&self) -> usize {
        self.data.len()
    }

    /// The path of file `id`.
    pub fn file(&self, id: usize) -> &Path {
        let end = |i: usize| u64_at(&self.data, self.path_ends + 8 * i).unwrap_or(0) as usize;
        let start = if id == 0 { 0 } else { end(id - 1) };
        let bytes = self
            .data
            .get(self.paths + start..self.paths + end(id))
            .unwrap_or_default();
        Path::new(OsStr::from_bytes(bytes))
    }

    /// Every file, in path order.
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        (0..self.files).map(|i| self.file(i))
    }

    fn ids(&self, at: usize, count: usize) -> Vec<u32> {
        (0..count)
            .filter_map(|i| u32_at(&self.data, at + 4 * i))
            .filter(|&id| (id as usize) < self.files)
            .collect()
    }

    /// The files that contain trigram `t`.
    fn posting(&self, t: Trigram) -> Vec<u32> {
        let entry = |i: usize| u32_at(&self.data, self.table + 12 * i);
        let (mut lo, mut hi) = (0, self.trigrams);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match entry(mid).map(|x| x.cmp(&t)) {
                Some(std::cmp::Ordering::Less) => lo = mid + 1,
                Some(std::cmp::Ordering::Greater) => hi = mid,
                Some(std::cmp::Ordering::Equal) => {
                    let base = self.table + 12 * mid;
                    let first = u32_at(&self.data, base + 4).unwrap_or(0) as usize;
                    let count = u32_at(&self.data, base + 8).unwrap_or(0) as usize;
                    return self.ids(self.postings + 4 * first, count);
                }
                None => break,
            }
        }
        Vec::new()
    }

    /// The ids of the files `q` lets through, sorted; `None` for all.
    fn eval(&self, q: &Query) -> Option<Vec<u32>> {
        match q {
            Query::All => None,
            Query::Tri(t) => Some(self.posting(*t)),
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
            None => self.files().collect(),
            Some(ids) => union(&ids, &self.ids(self.unindexed_at, self.unindexed))
                .into_iter()
                .map(|i| self.file(i as usize))
                .collect(),
        }
    }
}

fn serialize(files: &[PathBuf], unindexed: &[u32], table: &[(Trigram, Vec<u32>)]) -> Vec<u8> {
    let path_bytes: usize = files.iter().map(|p| p.as_os_str().len()).sum();
    let postings_len: usize = table.iter().map(|(_, ids)| ids.len()).sum();
    let path_ends = HEADER;
    let paths = path_ends + 8 * files.len();
    let unindexed_at = paths + path_bytes;
    let table_at = unindexed_at + 4 * unindexed.len();
    let postings = table_at + 12 * table.len();
    let total = postings + 4 * postings_len;
    let mut d = Vec::with_capacity(total);
    d.extend_from_slice(MAGIC);
    for v in [
        VERSION,
        files.len() as u32,
        table.len() as u32,
        unindexed.len() as u32,
    ] {
        d.extend_from_slice(&v.to_le_bytes());
    }
    for v in [path_ends, paths, unindexed_at, table_at, postings, total] {
        d.extend_from_slice(&(v as u64).to_le_bytes());
    }
    let mut end = 0u64;
    for p in files {
        end += p.as_os_str().len() as u64;
        d.extend_from_slice(&end.to_le_bytes());
    }
    for p in files {
        d.extend_from_slice(p.as_os_str().as_bytes());
    }
    for id in unindexed {
        d.extend_from_slice(&id.to_le_bytes());
    }
    let mut first = 0u32;
    for (t, ids) in table {
        for v in [*t, first, ids.len() as u32] {
            d.extend_from_slice(&v.to_le_bytes());
        }
        first += ids.len() as u32;
    }
    for (_, ids) in table {
        for id in ids {
            d.extend_from_slice(&id.to_le_bytes());
        }
    }
    debug_assert_eq!(d.len(), total);
    d
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
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
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

    #[test]
    fn saved_index_answers_as_built_and_bad_files_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.rs");
        let b = dir.path().join("b\u{e9}.rs");
        let c = dir.path().join("c.bin");
        std::fs::write(&a, "fn retry_policy() {}\n").unwrap();
        std::fs::write(&b, "struct Handler;\n").unwrap();
        std::fs::write(&c, b"retry\x00").unwrap();
        let built = Index::build(vec![b.clone(), a.clone(), c.clone()]);
        let file = dir.path().join("index");
        built.save(&file).unwrap();
        let opened = Index::open(&file).unwrap();
        assert_eq!(opened.len(), 3);
        assert_eq!(opened.bytes(), built.bytes());
        let q = crate::plan::plan_pattern("retry_policy", false, false).unwrap();
        // a.rs by its trigrams, c.bin because the index cannot speak for it.
        assert_eq!(opened.candidates(&q), vec![a.as_path(), c.as_path()]);
        assert_eq!(built.candidates(&q), opened.candidates(&q));
        let q = crate::plan::plan_pattern("handler", false, true).unwrap();
        assert_eq!(opened.candidates(&q), vec![b.as_path(), c.as_path()]);
        // Not an index, cut short, or its sections damaged: an error.
        std::fs::write(&file, b"hello").unwrap();
        assert!(Index::open(&file).is_err());
        let mut bytes = built.data.to_vec();
        bytes.truncate(bytes.len() - 3);
        std::fs::write(&file, &bytes).unwrap();
        assert!(Index::open(&file).is_err());
        let mut bytes = built.data.to_vec();
        bytes[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
        std::fs::write(&file, &bytes).unwrap();
        assert!(Index::open(&file).is_err());
        // No temporary file is left behind.
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left.len(), 4, "{left:?}");
    }
}
