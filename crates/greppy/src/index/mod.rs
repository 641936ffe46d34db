//! A trigram index over a tree: for each trigram (three bytes, ASCII lower
//! case, within a line), the files that contain it. A query's plan
//! ([`crate::plan`]) selects the candidate files; the matcher then reads
//! only those, so the answers are the scan's.
//!
//! Files the index cannot speak for are always candidates: those over
//! [`MAX_INDEXED`] bytes, and those with a UTF-16 byte order mark (rg
//! searches what they decode to). A file with a NUL byte in its first page
//! is never reported by rg: it has no trigrams, so no plan with a trigram
//! selects it, and it is listed as never matching, so that a plan with none
//! (a scan) skips it too. One with a NUL byte past that has its trigrams,
//! but no blocks: rg's binary detection decides what to report of it, as it
//! reads it whole.
//!
//! The index is one byte layout, in memory after a build and memory-mapped
//! after [`Index::open`], so a restarted process answers from the file
//! without loading it. [`Index::save`] writes it atomically (a new file,
//! synced, renamed over the old), so a crash mid-write leaves the old index
//! whole. [`Index::merge`] makes a new index from an old one and a set of
//! changed files without reading the unchanged ones. All numbers are
//! little-endian:
//!
//! ```text
//! header   magic "GREPPYI3", then u32 version, files, trigrams, unindexed,
//!          never, then u64 build time (ns since the epoch: files changed
//!          since then may differ from what the index says) and source
//!          bytes, then u64 offsets of: path ends, paths, sizes, unindexed,
//!          never, block starts, blocks, table, postings, masks, kept,
//!          frames, content, and the total length
//! path ends   u64 per file: where its path ends in the path bytes
//! paths       the paths' bytes, one after another, in `Path` order
//! sizes       u64 per file: its length when it was indexed
//! unindexed   u32 file ids, sorted
//! never       u32 file ids, sorted: the files rg never reports (binary)
//! block starts  u32 per file, and one more: its first block's number
//!             (files without blocks have none)
//! blocks      per block: u64 byte offset, u64 line number of its first
//!             line; then per file, the Bloom filters of its blocks'
//!             trigrams and of its trigrams with the byte after each (BLOOM
//!             bytes each) word by word: the first u64 of each of its
//!             blocks' filters, then the second, ... (a query tests a few
//!             words of every block of a file: they lie side by side)
//! table       per trigram, sorted: u32 trigram, u32 first posting, u32 count
//! postings    u32 file ids, sorted within each trigram
//! masks       u8 per posting: the bytes that follow the trigram in that
//!             file, one bit each (the low 3 bits of the lower-cased byte)
//! kept        u64 per file, and one more (the content's length): where
//!             its copy starts in the content, with the top bit set if the
//!             index keeps one
//! frames      u64 per block: where its frame starts in the content
//! content     the kept copies, LZ4 blocks ("frames"): one per block of a
//!             file with blocks, else one for the whole file
//! ```
//!
//! The index keeps a compressed copy of the text files it indexes (no
//! NUL byte, no UTF-16 byte order mark), as many as fit within `WITHIN`
//! (0.9) of the files' bytes (smallest first), so that a search in a fresh
//! snapshot reads a candidate from the mapped index (a block at a time,
//! in a large file) instead of opening it: the file is as its entry says.
//! Compressed, the copies of the benchmark corpus's text take 0.2x of its
//! bytes.
//!
//! The masks make the index nearly a 4-gram one: a literal's trigram must
//! be followed, somewhere in the file, by the literal's next byte
//! ([`Query::Next`]), as in Cursor's "instant grep" and GitHub's code
//! search.
//!
//! A large text file (from [`BLOCKED_FROM`] bytes, with no NUL byte) is
//! also cut into blocks of whole lines, about [`BLOCK`] bytes each, with a
//! small Bloom filter of each block's trigrams: a candidate file is then
//! read only where its blocks may hold a match ([`Index::regions`]), since
//! a match never spans lines.

use crate::plan::Trigram;
use std::ffi::OsStr;
use std::ops::Range;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;

mod blocks;
mod build;
mod kept;
mod layout;
mod query;

pub use blocks::*;
pub use build::*;
pub use kept::*;

/// Files larger than this are not indexed (they are always read, whole,
/// by every search). Generated sources pass 16 MiB (tree-sitter's C++
/// grammar is a 17 MB `parser.c`): left out, one such file was read by
/// every search, 3 ms of each. A file is read whole to be indexed, so this
/// bounds what indexing it holds in memory.
pub const MAX_INDEXED: u64 = 128 << 20;

/// A file with a NUL byte before this offset is never a match (see
/// [`FileEntry::read`]).
const NEVER_MATCHES_BELOW: usize = 4096;

/// Whether rg never reports a file with these bytes: a NUL byte in its
/// first page (see [`FileEntry::read`]).
pub fn never_matches(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(NEVER_MATCHES_BELOW)].contains(&0)
}

/// A file's modification time in ns since the epoch, if the system
/// gives one.
pub fn mtime_ns(meta: &std::fs::Metadata) -> Option<u64> {
    let t = meta.modified().ok()?;
    Some(t.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos() as u64)
}

/// A part of a file that may hold a match: bytes `start..end` (whole
/// lines), the first of them line number `line`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Region {
    pub start: u64,
    pub end: u64,
    pub line: u64,
}

/// The parts of a file to read, and the file's size when they were
/// measured (a file of another size has changed: read it whole).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Regions {
    pub size: u64,
    pub parts: Vec<Region>,
}

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
    never: usize,
    built_at: u64,
    source_bytes: u64,
    path_ends: usize,
    paths: usize,
    sizes: usize,
    unindexed_at: usize,
    never_at: usize,
    block_starts: usize,
    blocks: usize,
    table: usize,
    postings: usize,
    masks: usize,
    kept_at: usize,
    frames_at: usize,
    content: usize,
}

/// The mask bit of a byte that follows a trigram.
pub fn next_bit(b: u8) -> u8 {
    // Case folding changes bit 5 only: the low three bits are the folded
    // byte's.
    1 << (b & 7)
}

/// Nanoseconds since the epoch, now.
pub fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

impl Index {
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

    /// Whether the index is mapped from a file (not held in memory).
    pub fn is_mapped(&self) -> bool {
        matches!(self.data, Bytes::Mapped(_))
    }

    /// The index's size in bytes.
    pub fn bytes(&self) -> usize {
        self.data.len()
    }

    /// The bytes of the files it indexes.
    pub fn source_bytes(&self) -> u64 {
        self.source_bytes
    }

    /// When the files were read (ns since the epoch): a file changed later
    /// may differ from what the index says of it.
    pub fn built_at(&self) -> u64 {
        self.built_at
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

    /// The length of file `id` when it was indexed.
    pub fn size(&self, id: usize) -> u64 {
        u64_at(&self.data, self.sizes + 8 * id).unwrap_or(0)
    }

    /// Every file, in path order.
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        (0..self.files).map(|i| self.file(i))
    }

    /// The first file id whose path is not before `p`.
    fn lower_bound(&self, p: &Path) -> usize {
        let (mut lo, mut hi) = (0, self.files);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.file(mid) < p {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The id of the file at `p`, if the index has it.
    pub fn find(&self, p: &Path) -> Option<usize> {
        let i = self.lower_bound(p);
        (i < self.files && self.file(i) == p).then_some(i)
    }

    /// The ids of the files under the folder `dir` (contiguous, since the
    /// paths are in `Path` order).
    pub fn under(&self, dir: &Path) -> Range<usize> {
        let start = self.lower_bound(dir);
        let mut end = start;
        let is_under = under_by_bytes(dir);
        // Galloping would do fewer comparisons; the common case is the
        // whole root, where the first probe ends it.
        let (mut lo, mut hi) = (start, self.files);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if is_under(self.file(mid)) {
                lo = mid + 1;
                end = lo;
            } else {
                hi = mid;
            }
        }
        start..end
    }
}

/// Whether a path lies under `dir` (`Path::starts_with`), by its bytes
/// when `dir` is spelled plainly (absolute, no empty or `.` component, no
/// slash at the end): the bytes of `dir`, then the end or a slash. (A
/// `Path` comparison walks both paths' components: 3% of the daemon's CPU
/// under pipelined searches.)
fn under_by_bytes(dir: &Path) -> impl Fn(&Path) -> bool + '_ {
    let d = dir.as_os_str().as_bytes();
    let plain = d.starts_with(b"/")
        && !d.ends_with(b"/")
        && !d.ends_with(b"/.")
        && !d.windows(2).any(|w| w == b"//")
        && !d.windows(3).any(|w| w == b"/./");
    move |p: &Path| {
        if !plain {
            return p.starts_with(dir);
        }
        let b = p.as_os_str().as_bytes();
        b.starts_with(d) && b.get(d.len()).is_none_or(|&c| c == b'/')
    }
}

/// A trigram's entry in the table: the trigram, its first posting's
/// number, how many it has, and where its ids start (in words of 4 bytes).
pub(super) const TABLE_ENTRY: usize = 16;

/// The bit of a file's `kept` word that says the index keeps a copy.
pub(super) const KEPT: u64 = 1 << 63;

pub(super) fn u32_at(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(d.get(at..at + 4)?.try_into().ok()?))
}

pub(super) fn u64_at(d: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(d.get(at..at + 8)?.try_into().ok()?))
}

/// A file's blocks as [`Parts`] holds them: (offset, line) each, and their
/// filters laid out as the index keeps them ([`Filters`]).
pub(super) type FileBlocks<'a> = (Vec<(u64, u64)>, std::borrow::Cow<'a, [u8]>);

/// What the index keeps of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    /// Its length in bytes.
    pub size: u64,
    /// Its trigrams, sorted and unique, each with the mask of the bytes
    /// that follow it; `None` if it is not indexed (too large, binary or
    /// unreadable), so that it is always a candidate.
    pub trigrams: Option<Arc<[(Trigram, u8)]>>,
    /// Its blocks, if it is a large text file (else none).
    pub blocks: Arc<[Block]>,
    /// rg never reports it, whatever the pattern: a NUL byte in its first
    /// page ([`never_matches`]).
    pub never: bool,
    /// Its bytes, compressed, if it is a text file that is indexed.
    pub kept: Option<Kept>,
}

#[cfg(test)]
mod tests {
    use super::layout::*;
    use super::query::*;
    use super::*;
    use crate::plan::{Query, Trigram, trigram};
    use std::collections::BTreeMap;
    use std::io::Write;
    use std::path::PathBuf;

    #[test]
    fn a_blocks_filter_test_by_words_is_the_querys_own() {
        // Blocks of real text, and queries that hold and miss their words.
        let text: String = (0..400)
            .map(|n| format!("fn handler_{n}(retry: u32) -> Policy {{ backoff({n}) }}\n"))
            .collect();
        let blocks = blocks_of(text.as_bytes());
        assert!(blocks.len() > 3);
        let patterns = [
            "handler_17",
            "retry",
            "Policy",
            "backoff(399)",
            "absent_word",
            "zzz",
            "handler_\\d+",
            "(retry|absent)",
            "Poli.y",
        ];
        // As the index lays them out: word by word.
        let blooms: Vec<&[u8]> = blocks.iter().map(|b| &*b.bloom).collect();
        let laid = transpose(&blooms);
        let filters = Filters {
            bytes: &laid,
            n: blocks.len(),
        };
        let mut simple = 0;
        for p in patterns {
            let q = crate::plan::plan_pattern(p, false, false).unwrap_or(Query::All);
            for (j, b) in blocks.iter().enumerate() {
                let own = q.admits(&|t, n| bloom_has(&b.bloom, t, n));
                assert_eq!(q.admits(&|t, n| filters.has(j, t, n)), own, "{p}");
                if let Some(mask) = bloom_mask(&q) {
                    assert_eq!(filters.has_all(j, &mask), own, "{p}");
                }
            }
            simple += usize::from(bloom_mask(&q).is_some());
        }
        assert!(simple >= 5, "most queries are a conjunction of trigrams");
        // One that is not simple has no mask (the query is walked instead).
        let or = Query::Or(vec![Query::Tri(trigram(b'a', b'b', b'c'))]);
        assert!(bloom_mask(&or).is_none());
    }

    /// Lines `line(1)`, `line(2)`, ... until the text is at least `len`
    /// bytes; the text and the number of its last line.
    fn lines_past(len: usize, line: impl Fn(usize) -> String) -> (String, usize) {
        let (mut text, mut n) = (String::new(), 0);
        while text.len() < len {
            n += 1;
            text.push_str(&line(n));
        }
        (text, n)
    }

    #[test]
    fn a_large_file_is_read_only_where_its_blocks_may_match() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.rs");
        let (mut text, n) = lines_past(5 * BLOCK, |n| format!("let filler_{n} = {n};\n"));
        // A word on one line only, far into the file.
        let at = n - 10;
        text = text.replace(
            &format!("let filler_{at} = {at};\n"),
            "let the_needle = 1;\n",
        );
        std::fs::write(&big, &text).unwrap();
        let small = dir.path().join("small.rs");
        std::fs::write(&small, "let the_needle = 2;\n").unwrap();
        let e = FileEntry::read(&big).unwrap();
        // Blocks are whole lines; their first lines are numbered right.
        assert!(e.blocks.len() >= 5, "{}", e.blocks.len());
        for b in e.blocks.iter().skip(1) {
            let o = b.offset as usize;
            assert_eq!(text.as_bytes()[o - 1], b'\n');
            assert_eq!(text[..o].matches('\n').count() as u64 + 1, b.line);
        }
        let index = Index::build(vec![big.clone(), small.clone()]);
        let file = dir.path().join("index");
        index.save(&file).unwrap();
        let index = Index::open(&file).unwrap();
        let q = crate::plan::plan_pattern("the_needle", false, false).unwrap();
        assert_eq!(index.candidates(&q), [big.as_path(), small.as_path()]);
        // The small file has no blocks; the big one is read in one place.
        assert_eq!(index.regions(1, &BlockTest::new(&q)), None);
        let r = index.regions(0, &BlockTest::new(&q)).unwrap();
        assert_eq!(r.size, text.len() as u64);
        assert_eq!(r.parts.len(), 1, "{r:?}");
        let part = r.parts[0];
        assert!(part.end - part.start < 2 * BLOCK as u64);
        let inside = &text[part.start as usize..part.end as usize];
        assert!(inside.contains("the_needle"));
        assert_eq!(
            text[..part.start as usize].matches('\n').count() as u64 + 1,
            part.line
        );
        // Every block may match "filler": one region, the whole file.
        let all = crate::plan::plan_pattern("filler", false, false).unwrap();
        let r = index.regions(0, &BlockTest::new(&all)).unwrap();
        assert_eq!(r.parts.len(), 1);
        assert_eq!((r.parts[0].start, r.parts[0].end), (0, text.len() as u64));
    }

    /// A block that holds every trigram of a word, but never one followed
    /// by the word's next byte, is not read: its filter holds four-byte
    /// strings too.
    #[test]
    fn a_block_with_a_words_trigrams_apart_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.rs");
        // "needle" is nee, eed, edl, dle: each here, none followed by the
        // byte that follows it in "needle".
        let (mut text, n) = lines_past(6 * BLOCK, |n| {
            format!("let neex_{n} = eedx + edlx * dlex;\n")
        });
        let at = n / 2;
        text = text.replace(&format!("let neex_{at} = "), &format!("let needle_{at} = "));
        std::fs::write(&big, &text).unwrap();
        let index = Index::build(vec![big.clone()]);
        let q = crate::plan::plan_pattern("needle", false, false).unwrap();
        assert_eq!(index.candidates(&q), [big.as_path()]);
        let r = index.regions(0, &BlockTest::new(&q)).unwrap();
        assert_eq!(r.parts.len(), 1, "{r:?}");
        let part = r.parts[0];
        assert!(part.end - part.start < 2 * BLOCK as u64, "{part:?}");
        assert!(text[part.start as usize..part.end as usize].contains("needle_"));
        // A query with only trigrams still reads every block that has them.
        let q = crate::plan::plan_pattern("dle", false, false).unwrap();
        let r = index.regions(0, &BlockTest::new(&q)).unwrap();
        assert_eq!((r.parts[0].start, r.parts[0].end), (0, text.len() as u64));
    }

    #[test]
    fn a_generated_file_past_16_mib_is_indexed_and_read_in_parts() {
        // As tree-sitter's grammars are: tens of MB of tables in one `.c`.
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("parser.c");
        let mut text = Vec::with_capacity(17 << 20);
        let mut n = 0u64;
        while text.len() < 17 << 20 {
            n += 1;
            writeln!(text, "  [{n}] = ACTIONS(sym_state_{n}),").unwrap();
        }
        text.extend_from_slice(b"static const char *grammar_name = \"cpp\";\n");
        std::fs::write(&big, &text).unwrap();
        let e = FileEntry::read(&big).unwrap();
        assert!(e.trigrams.is_some(), "not indexed");
        assert!(e.blocks.len() > 4000, "{}", e.blocks.len());
        let index = Index::build(vec![big.clone()]);
        let absent = crate::plan::plan_pattern("retry_policy", false, false).unwrap();
        assert!(index.candidates(&absent).is_empty());
        let q = crate::plan::plan_pattern("grammar_name", false, false).unwrap();
        assert_eq!(index.candidates(&q), [big.as_path()]);
        let r = index.regions(0, &BlockTest::new(&q)).unwrap();
        let read: u64 = r.parts.iter().map(|p| p.end - p.start).sum();
        assert!(read < 64 << 10, "{r:?}");
    }

    /// Posting lists laid out as bitmaps (a trigram in more than about
    /// one file in 21) answer as lists of ids do, masks and all: as the
    /// files' own trigrams say, when built, saved and opened, and merged.
    #[test]
    fn bitmap_lists_answer_as_the_files_trigrams_do() {
        let dir = tempfile::tempdir().unwrap();
        // Word k is in every kth file: from all 300 files down to 10.
        let text = |i: usize| -> String {
            (1..=30)
                .filter(|k| i.is_multiple_of(*k))
                .map(|k| format!("let wd{k}x{} = q{};\n", ["a", "b", "c"][(i / k) % 3], i))
                .collect()
        };
        let files: Vec<PathBuf> = (0..300)
            .map(|i| {
                let p = dir.path().join(format!("f{i:03}.rs"));
                std::fs::write(&p, text(i)).unwrap();
                p
            })
            .collect();
        let fresh = Index::build(files.clone());
        let saved = dir.path().join("saved.idx");
        fresh.save(&saved).unwrap();
        let opened = Index::open(&saved).unwrap();
        // The last file changes: merged, the index answers for its new text.
        std::fs::write(&files[299], "let wd1xc = wd7xa;\n").unwrap();
        let changes = BTreeMap::from([(files[299].clone(), FileEntry::read(&files[299]))]);
        let merged = opened.merge(&changes, now_ns());
        let entries: Vec<FileEntry> = files.iter().map(|p| FileEntry::read(p).unwrap()).collect();
        for k in 1..=30 {
            for c in ["", "a", "b", "c"] {
                let q = crate::plan::plan_pattern(&format!("wd{k}x{c}"), false, false).unwrap();
                let want: Vec<u32> = (0..300u32)
                    .filter(|&i| entries[i as usize].admits(&q))
                    .collect();
                assert_eq!(merged.candidate_ids(&q), want, "wd{k}x{c}");
                if k < 30 {
                    // Before the change.
                    let before: Vec<u32> = (0..299u32).filter(|&i| want.contains(&i)).collect();
                    let got: Vec<u32> = fresh
                        .candidate_ids(&q)
                        .into_iter()
                        .filter(|&i| i < 299)
                        .collect();
                    assert_eq!(got, before, "wd{k}x{c}");
                    assert_eq!(opened.candidate_ids(&q), fresh.candidate_ids(&q));
                }
            }
        }
        // Both layouts were asked.
        assert!(fresh.lookup(trigram(b'w', b'd', b'1')).dense);
        assert!(!fresh.lookup(trigram(b'2', b'9', b'x')).dense);
    }

    /// A path is under a folder by its bytes as `Path::starts_with` says,
    /// for folders spelled plainly and not.
    #[test]
    fn under_by_bytes_is_paths_own() {
        let dirs = [
            "/a/b", "/a/b/", "/a//b", "/a/./b", "/a/b/.", "/", "/a", "/a/bc", "/a/b/..",
        ];
        let paths = [
            "/a/b",
            "/a/b/c",
            "/a/bc",
            "/a/bc/d",
            "/a/b//c",
            "/a/b/./c",
            "/a",
            "/ab/c",
            "/a/b/../c",
            "/x/a/b",
            "/a/b/c/d/e",
        ];
        for d in dirs {
            let f = under_by_bytes(Path::new(d));
            for p in paths {
                assert_eq!(
                    f(Path::new(p)),
                    Path::new(p).starts_with(d),
                    "{p} under {d}"
                );
            }
        }
    }

    /// A set is intersected with a posting list, masks and all, alike by
    /// a merge and by galloping, at every ratio of lengths.
    #[test]
    fn merging_and_galloping_keep_the_same_ids() {
        let mut rng = fastrand::Rng::with_seed(7);
        for round in 0..300 {
            let universe = 1 + rng.u32(..5000);
            let pick = |rng: &mut fastrand::Rng, n: usize| {
                let mut v: Vec<u32> = (0..n).map(|_| rng.u32(..universe)).collect();
                v.sort_unstable();
                v.dedup();
                v
            };
            let (na, nl) = (rng.usize(..400), rng.usize(..2000));
            let a = pick(&mut rng, na);
            let list = pick(&mut rng, nl);
            let ids: Vec<u8> = list.iter().flat_map(|i| i.to_le_bytes()).collect();
            let masks: Vec<u8> = if round % 5 == 0 {
                Vec::new()
            } else {
                list.iter().map(|_| rng.u8(..)).collect()
            };
            let bit = [0u8, 1, 8, 128][round % 4];
            let want: Vec<u32> = a
                .iter()
                .copied()
                .filter(|x| match list.binary_search(x) {
                    Ok(k) => bit == 0 || masks.get(k).is_none_or(|m| m & bit != 0),
                    Err(_) => false,
                })
                .collect();
            let (mut merged, mut galloped) = (a.clone(), a.clone());
            retain_merging(&mut merged, &ids, &masks, bit);
            retain_galloping(&mut galloped, &ids, &masks, bit);
            assert_eq!(merged, want, "round {round}");
            assert_eq!(galloped, want, "round {round}");
        }
    }

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
        // A NUL past the first page: rg reports what its blocks before the
        // NUL hold, so its trigrams decide (those past the NUL too).
        let d = dir.path().join("d.bin");
        let mut late = vec![b'x'; NEVER_MATCHES_BELOW + 10];
        late.extend_from_slice(b"\nimpl Handler {}\n\x00tail_only_token\n");
        std::fs::write(&d, &late).unwrap();
        let built = Index::build(vec![b.clone(), a.clone(), c.clone(), d.clone()]);
        let file = dir.path().join("index");
        built.save(&file).unwrap();
        let opened = Index::open(&file).unwrap();
        assert_eq!(opened.len(), 4);
        assert_eq!(opened.bytes(), built.bytes());
        let q = crate::plan::plan_pattern("retry_policy", false, false).unwrap();
        // a.rs by its trigrams; never c.bin, which rg never reports.
        assert_eq!(opened.candidates(&q), vec![a.as_path()]);
        assert_eq!(built.candidates(&q), opened.candidates(&q));
        let q = crate::plan::plan_pattern("handler", false, true).unwrap();
        assert_eq!(opened.candidates(&q), vec![b.as_path(), d.as_path()]);
        let q = crate::plan::plan_pattern("tail_only_token", false, false).unwrap();
        assert_eq!(opened.candidates(&q), vec![d.as_path()]);
        // A pattern without trigrams reads every file but c.bin.
        let all = vec![a.as_path(), b.as_path(), d.as_path()];
        assert_eq!(opened.candidates(&Query::All), all);
        assert_eq!(built.candidates(&Query::All), all);
        // Trigrams no file has: no candidate.
        for p in ["zqxjzqxj", "retry_zqxj", "Handlerzqx"] {
            let q = crate::plan::plan_pattern(p, false, false).unwrap();
            assert!(opened.candidates(&q).is_empty(), "{p}");
        }
        // Not an index, cut short, or its sections damaged: an error.
        std::fs::write(&file, b"hello").unwrap();
        assert!(Index::open(&file).is_err());
        let mut bytes = built.data.to_vec();
        bytes.truncate(bytes.len() - 3);
        std::fs::write(&file, &bytes).unwrap();
        assert!(Index::open(&file).is_err());
        let mut bytes = built.data.to_vec();
        bytes[48..56].copy_from_slice(&u64::MAX.to_le_bytes());
        std::fs::write(&file, &bytes).unwrap();
        assert!(Index::open(&file).is_err());
        // No temporary file is left behind.
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left.len(), 5, "{left:?}");
    }

    #[test]
    fn the_kept_copies_read_as_the_files_after_a_merge_and_a_save() {
        let dir = tempfile::tempdir().unwrap();
        let w = |name: &str, bytes: &[u8]| {
            let p = dir.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            p
        };
        let large: String = (0..3000)
            .map(|n| format!("let line_{n} = compute_{}({n});\n", n % 7))
            .collect();
        let files = vec![
            w("a.rs", b"fn alpha() {}\n"),
            w("b.rs", large.as_bytes()),
            w("c.bin", b"\0\x01binary"),
            w("d.txt", b"\xff\xfea\0b\0"),
            w("e.rs", b""),
        ];
        let check = |index: &Index, label: &str| {
            for path in &files {
                let id = index.find(path).unwrap();
                let bytes = std::fs::read(path).unwrap();
                let text = !bytes.contains(&0);
                assert_eq!(index.keeps(id), text, "{label}: {}", path.display());
                let whole = index.kept(id, 0..bytes.len() as u64);
                assert_eq!(whole.as_deref(), text.then_some(&bytes[..]), "{label}");
            }
            // A large file is kept a block at a time: its regions read
            // alone, and only whole blocks do.
            let b = index.find(&files[1]).unwrap();
            let plan = crate::plan::plan_pattern("compute_3\\(2999\\)", false, false).unwrap();
            let regions = index.regions(b, &BlockTest::new(&plan)).unwrap();
            assert_eq!(regions.parts.len(), 1, "{label}");
            for r in &regions.parts {
                let got = index.kept(b, r.start..r.end).unwrap();
                assert_eq!(got, large.as_bytes()[r.start as usize..r.end as usize]);
                assert!(index.kept(b, r.start + 1..r.end).is_none(), "{label}");
            }
            // Read into a buffer kept from an earlier, longer read (stale
            // bytes past the end): each read gives what `kept` gives.
            let mut buf = vec![0xAA; 1 << 20];
            for path in &files {
                let id = index.find(path).unwrap();
                let size = index.size(id);
                for range in [0..size, size / 3..size / 2, 0..0] {
                    let want = index.kept(id, range.clone());
                    let got = index
                        .kept_into(id, range, &mut buf)
                        .map(|n| buf[..n].to_vec());
                    assert_eq!(got, want, "{label}: {}", path.display());
                }
            }
        };
        let built = Index::build(files.clone());
        check(&built, "built");
        // The large file changes; the others keep their copies.
        let mut changes = BTreeMap::new();
        let edited = format!("{large}fn added() {{}}\n");
        std::fs::write(&files[1], &edited).unwrap();
        changes.insert(files[1].clone(), FileEntry::read(&files[1]));
        let merged = built.merge(&changes, now_ns());
        let large = edited;
        let check = |index: &Index, label: &str| {
            let b = index.find(&files[1]).unwrap();
            let got = index.kept(b, 0..large.len() as u64).unwrap();
            assert_eq!(got, large.as_bytes(), "{label}");
            let a = index.find(&files[0]).unwrap();
            assert_eq!(index.kept(a, 0..14).unwrap(), b"fn alpha() {}\n", "{label}");
            assert!(!index.keeps(index.find(&files[2]).unwrap()), "{label}");
        };
        check(&merged, "merged");
        let saved = dir.path().join("index");
        merged.save(&saved).unwrap();
        check(&Index::open(&saved).unwrap(), "mapped");
        let matcher_of = |pattern: &str| {
            crate::search::Pattern {
                pattern: pattern.into(),
                ..Default::default()
            }
            .matcher()
            .unwrap()
        };
        let stored = |id| crate::search::Stored { index: &merged, id };
        // A search given the copy reads it, not the file (gone here).
        let a = merged.find(&files[0]).unwrap();
        std::fs::remove_file(&files[0]).unwrap();
        let matcher = matcher_of("alpha");
        let lines = crate::search::file_lines(&matcher, &files[0], None, Some(stored(a)));
        assert_eq!(lines, [(1, b"fn alpha() {}".to_vec())]);
        assert!(crate::search::file_lines(&matcher, &files[0], None, None).is_empty());
        // A large file's regions read from the copy (one at a time, up to
        // the first match for a match test) find what the file's do.
        let b = merged.find(&files[1]).unwrap();
        for pattern in [
            "compute_5\\(1[0-9]*\\)",
            "line_2999 ",
            "added",
            "line_77 = nothing",
        ] {
            let plan = crate::plan::plan_pattern(pattern, false, false).unwrap();
            let regions = merged.regions(b, &BlockTest::new(&plan)).unwrap();
            let m = matcher_of(pattern);
            let want = crate::search::file_lines(&m, &files[1], None, None);
            let got = crate::search::file_lines(&m, &files[1], Some(&regions), Some(stored(b)));
            assert_eq!(got, want, "{pattern}");
            let found = crate::search::file_matches(&m, &files[1], Some(&regions), Some(stored(b)));
            assert_eq!(found, !want.is_empty(), "{pattern}");
        }
        // Damaged copies read as something or nothing, never a crash.
        let mut bytes = std::fs::read(&saved).unwrap();
        let content = merged.content;
        for (i, b) in bytes[content..].iter_mut().enumerate() {
            if i % 3 == 0 {
                *b = b.wrapping_mul(31).wrapping_add(7);
            }
        }
        std::fs::write(&saved, &bytes).unwrap();
        let damaged = Index::open(&saved).unwrap();
        for id in 0..damaged.len() {
            let _ = damaged.kept(id, 0..damaged.size(id));
        }
        // So do damaged tables: sizes, where copies and frames start.
        // One table at a time, so that the others lead to it.
        merged.save(&saved).unwrap();
        let good = std::fs::read(&saved).unwrap();
        let tables = [
            (merged.sizes, merged.files),
            (merged.kept_at, merged.files + 1),
            (merged.frames_at, (merged.content - merged.frames_at) / 8),
        ];
        for (at, n) in tables {
            for garbage in [u64::MAX, u64::MAX / 2, KEPT | (1 << 40), 1 << 20] {
                let mut bytes = good.clone();
                for i in 0..n {
                    let v = garbage.wrapping_add(i as u64 % 2);
                    bytes[at + 8 * i..at + 8 * i + 8].copy_from_slice(&v.to_le_bytes());
                }
                std::fs::write(&saved, &bytes).unwrap();
                let damaged = Index::open(&saved).unwrap();
                for id in 0..damaged.len() {
                    let _ = damaged.kept(id, 0..damaged.size(id));
                    let _ = damaged.kept(id, 0..u64::MAX);
                    let _ = damaged.kept(id, 4096..8192);
                }
            }
        }
    }

    #[test]
    fn copies_keep_the_index_within_its_share_of_the_source_smallest_first() {
        // Source alone, of names seen in few files each (as real source
        // has): its posting lists take most of the share, so not every
        // copy fits; those left out are the largest files'.
        let dir = tempfile::tempdir().unwrap();
        let alnum = |mut h: u64, len: usize| -> String {
            (0..len)
                .map(|_| {
                    let c = b"abcdefghijklmnopqrstuvwxyz0123456789"[(h % 36) as usize];
                    h = (h / 36) ^ (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40);
                    char::from(c)
                })
                .collect()
        };
        let files: Vec<PathBuf> = (1..=400)
            .map(|n| {
                let text: String = (0..(n % 40 + 1) * 4u64)
                    .map(|i| {
                        let h = (n * 100_000 + i).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                        let name = |k: u64| alnum((h >> k) % 1000, 8);
                        format!(
                            "    let {} = retry_policy({}, {});\n",
                            name(3),
                            name(17),
                            name(31)
                        )
                    })
                    .collect();
                let p = dir.path().join(format!("f{n:03}.rs"));
                std::fs::write(&p, text).unwrap();
                p
            })
            .collect();
        let index = Index::build(files.clone());
        assert!(index.bytes() as f64 <= index.source_bytes() as f64 * WITHIN);
        let (kept, left): (Vec<usize>, Vec<usize>) =
            (0..index.len()).partition(|&i| index.keeps(i));
        assert!(
            !kept.is_empty() && !left.is_empty(),
            "{} kept, {} of {}",
            kept.len(),
            index.bytes(),
            index.source_bytes()
        );
        let largest_kept = kept.iter().map(|&i| index.size(i)).max().unwrap();
        let smallest_left = left.iter().map(|&i| index.size(i)).min().unwrap();
        assert!(largest_kept <= smallest_left);
        for &i in &kept {
            let got = index.kept(i, 0..index.size(i)).unwrap();
            assert_eq!(got, std::fs::read(index.file(i)).unwrap());
        }
        assert!(index.kept(left[0], 0..index.size(left[0])).is_none());
    }

    #[test]
    fn merge_equals_a_fresh_build() {
        let dir = tempfile::tempdir().unwrap();
        let w = |n: &str, t: &str| {
            let p = dir.path().join(n);
            std::fs::write(&p, t).unwrap();
            p
        };
        // Large files, with blocks: one kept as it is (its filters are
        // copied), one that changes (its filters are new).
        let big = |word: &str| -> String {
            (0..3000)
                .map(|n| format!("let v{n} = {};\n", if n % 1500 == 0 { word } else { "0" }))
                .collect()
        };
        let a = w("a.rs", "fn alpha() {}\n");
        let kept = w("a_big.rs", &big("kept_word"));
        let b = w("b.rs", "fn beta() {}\n");
        let grown = w("b_big.rs", &big("old_word"));
        let c = w("c.rs", "fn gamma() {}\n");
        // A binary file that stays as it is.
        let z = w("z.o", "\0\x01\x02 fn zeta");
        let base = Index::build(vec![
            a.clone(),
            kept.clone(),
            b.clone(),
            grown.clone(),
            c.clone(),
            z.clone(),
        ]);
        // b and b_big change, c goes, d and a binary e arrive.
        let b = w("b.rs", "fn beta_two() { alpha() }\n");
        let grown = w("b_big.rs", &(big("new_word") + &big("kept_word")));
        std::fs::remove_file(&c).unwrap();
        let d = w("d.rs", "fn delta() {}\n");
        let e = w("e.bin", "x\0y");
        let mut changes = BTreeMap::new();
        for p in [&b, &grown, &c, &d, &e] {
            changes.insert(p.clone(), FileEntry::read(p));
        }
        assert_eq!(changes[&c], None);
        let merged = base.merge(&changes, now_ns());
        let fresh = Index::build(vec![
            a.clone(),
            kept.clone(),
            b.clone(),
            grown.clone(),
            d.clone(),
            e.clone(),
            z.clone(),
        ]);
        assert_eq!(
            merged.files().collect::<Vec<_>>(),
            fresh.files().collect::<Vec<_>>()
        );
        assert_eq!(merged.trigrams(), fresh.trigrams());
        assert_eq!(merged.source_bytes(), fresh.source_bytes());
        assert_eq!(merged.built_at(), base.built_at());
        let words = ["alpha", "beta_two", "gamma", "delta", "fn ", "zzz"];
        for pat in words
            .into_iter()
            .chain(["kept_word", "old_word", "new_word"])
        {
            let q = crate::plan::plan_pattern(pat, false, false).unwrap();
            assert_eq!(merged.candidates(&q), fresh.candidates(&q), "{pat}");
            for id in 0..fresh.len() {
                assert_eq!(
                    merged.regions(id, &BlockTest::new(&q)),
                    fresh.regions(id, &BlockTest::new(&q)),
                    "{pat} {id}"
                );
            }
        }
        // A scan reads every file but the binary ones, kept or new.
        let all = vec![&a, &kept, &b, &grown, &d];
        assert_eq!(merged.candidates(&Query::All), all);
        assert_eq!(fresh.candidates(&Query::All), all);
        // The large files' blocks hold their words only where they are.
        let q = crate::plan::plan_pattern("kept_word", false, false).unwrap();
        let parts = merged.regions(1, &BlockTest::new(&q)).unwrap().parts;
        assert!(!parts.is_empty() && parts.len() < merged.block_range(1).len() / 2);
        assert_eq!(merged.find(&d), Some(4));
        assert_eq!(merged.find(&c), None);
        assert_eq!(merged.under(dir.path()), 0..7);
        assert_eq!(merged.under(&dir.path().join("nothing")).len(), 0);
    }

    #[test]
    fn a_literal_needs_its_trigrams_next_to_each_other() {
        let dir = tempfile::tempdir().unwrap();
        let w = |n: &str, t: &str| {
            let p = dir.path().join(n);
            std::fs::write(&p, t).unwrap();
            p
        };
        // Every trigram of "retry_policy", never in a row.
        let apart = w("apart.rs", "retryX try_pX y_poX policyX\n");
        let whole = w("whole.rs", "let RETRY_POLICY = 1;\n");
        let base = Index::build(vec![apart.clone(), whole.clone()]);
        let q = crate::plan::plan_pattern("retry_policy", false, true).unwrap();
        assert_eq!(base.candidates(&q), vec![whole.as_path()]);
        // The same through a merge, and for a changed file beside it.
        let other = w("other.rs", "retry_policy()\n");
        let mut changes = BTreeMap::new();
        changes.insert(other.clone(), FileEntry::read(&other));
        let merged = base.merge(&changes, now_ns());
        assert_eq!(
            merged.candidates(&q),
            vec![other.as_path(), whole.as_path()]
        );
        assert!(FileEntry::read(&other).unwrap().admits(&q));
        assert!(!FileEntry::read(&apart).unwrap().admits(&q));
    }

    #[test]
    fn a_threads_trigram_table_is_given_back() {
        // How many of the table's pages are resident.
        fn resident() -> usize {
            DENSE.with_borrow(|d| {
                let mask = &d.as_ref().unwrap().mask;
                let mut pages = vec![0u8; mask.len().div_ceil(4096)];
                // SAFETY: the range is one whole mapping of ours, and
                // `pages` has a byte for each of its pages.
                let r = unsafe {
                    libc::mincore(mask.as_ptr() as *mut _, mask.len(), pages.as_mut_ptr())
                };
                assert_eq!(r, 0);
                pages.iter().filter(|&&p| p & 1 != 0).count()
            })
        }
        let text: Vec<u8> = (0..200_000u32)
            .map(|i| b"abcdefghijklmnopqrstuvwxyz_(){} \n"[(i * 7 + i / 13) as usize % 33])
            .collect();
        let before = trigrams_with_masks(&text, true);
        assert!(resident() > 0);
        release_thread_scratch();
        assert_eq!(resident(), 0);
        // The table reads as zeros again: the same trigrams come out.
        assert_eq!(trigrams_with_masks(&text, true), before);
    }

    /// Inverted by shards, sorted or counted, the posting lists are what a
    /// map from trigram to files gives.
    #[test]
    fn posting_lists_invert_as_a_map_does() {
        let mut seed = 11u64;
        let mut rand = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            (seed >> 33) as u32
        };
        // Many files with trigrams crowded in one shard (counted), a few
        // spread thin (sorted), and empty files.
        let lists: Vec<Vec<(Trigram, u8)>> = (0..3000)
            .map(|f| {
                let mut l: Vec<(Trigram, u8)> = (0..f % 40)
                    .map(|_| {
                        let t = if rand() % 4 == 0 {
                            rand() & 0xff_ffff
                        } else {
                            0x61_0000 | (rand() & 0x3ff)
                        };
                        (t, rand() as u8)
                    })
                    .collect();
                l.sort_by_key(|e| e.0);
                l.dedup_by_key(|e| e.0);
                l
            })
            .collect();
        let refs: Vec<&[(Trigram, u8)]> = lists.iter().map(|l| &l[..]).collect();
        let p = Postings::invert(&refs);
        let mut want: BTreeMap<Trigram, Vec<(u32, u8)>> = BTreeMap::new();
        for (f, l) in lists.iter().enumerate() {
            for &(t, m) in l {
                want.entry(t).or_default().push((f as u32, m));
            }
        }
        let crowded = want
            .keys()
            .filter(|&&t| t >> LOW_BITS == 0x61_0000 >> LOW_BITS);
        let crowded: usize = crowded.map(|t| want[t].len()).sum();
        assert!(crowded > DENSE_SHARD_FROM, "{crowded}");
        assert_eq!(p.trigrams, want.keys().copied().collect::<Vec<_>>());
        for (i, files) in want.values().enumerate() {
            let (a, b) = (p.starts[i] as usize, p.starts[i + 1] as usize);
            let got: Vec<(u32, u8)> = p.ids[a..b]
                .iter()
                .copied()
                .zip(p.masks[a..b].iter().copied())
                .collect();
            assert_eq!(&got, files);
        }
        assert_eq!(p.starts.len(), want.len() + 1);
    }

    #[test]
    fn a_next_bit_is_the_folded_bytes() {
        for b in 0..=255u8 {
            assert_eq!(next_bit(b), 1 << (b.to_ascii_lowercase() & 7), "{b}");
        }
    }

    #[test]
    fn the_dense_table_gives_what_a_sort_gives_and_its_blocks_are_blocks_of() {
        let reference = trigrams_sorted;
        let mut seed = 7u64;
        let mut text = Vec::new();
        // The table's alphabet, its edges (`@`, `[`, `` ` ``, `{`, `~`),
        // bytes outside it (controls, DEL, UTF-8, 0xff), and line ends.
        let alphabet = b"abcXYZ_ \n\r\t09\xc3\xa9\xff(@[`{~\x01\x0c\x7f";
        for _ in 0..20_000 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            text.push(alphabet[(seed >> 33) as usize % alphabet.len()]);
        }
        // Every byte value.
        let every: Vec<u8> = (0..5000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let (tris, _) = trigrams_with_masks(&every, true);
        assert_eq!(tris, reference(&every));
        for cut in [0, 1, 2, 3, 4, 100, 20_000] {
            let text = &text[..cut];
            // Made in one pass with the trigrams, the blocks are what
            // `blocks_of` makes (several, for the longest text).
            let (tris, blocks) = trigrams_with_masks(text, true);
            assert_eq!(tris, reference(text), "{cut}");
            assert_eq!(blocks, blocks_of(text), "{cut}");
            assert_eq!(trigrams_with_masks(text, false), (tris, Vec::new()));
        }
        assert!(blocks_of(&text).len() >= 4);
        // More blocks than the block generations have values, twice: each
        // block's filter still has all its trigrams.
        let long = text.repeat(70);
        for _ in 0..2 {
            let (tris, blocks) = trigrams_with_masks(&long, true);
            assert!(blocks.len() > 300);
            assert_eq!(tris, reference(&long));
            assert_eq!(blocks, blocks_of(&long));
        }
        // The table is clean for the next file.
        assert_eq!(trigrams_with_masks(b"abcd", false).0, reference(b"abcd"));
    }
}
